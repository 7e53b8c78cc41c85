//! PowerShell 7 (`pwsh`) and Windows PowerShell 5.1 (`powershell.exe`), both running
//! `probes/powershell/probe.ps1` with `-NoProfile -NonInteractive`.
//!
//! PowerShell 7 installs on Linux from NuGet as a .NET tool (`.ci/install pwsh`); Windows
//! PowerShell 5.1 is Windows only and measured by the Windows CI job.

use std::path::Path;

use super::{first_line, query, with_probe_tmp, Adapter, ProbeContext, Runtime};
use crate::exec::process::Launch;

/// PowerShell 7.x.
#[derive(Debug)]
pub struct Pwsh;

/// Windows PowerShell 5.1.
#[derive(Debug)]
pub struct WindowsPowerShell;

fn ps_launch(rt: &Runtime, ctx: &ProbeContext) -> Launch {
    let script = ctx.probes_dir.join("powershell").join("probe.ps1");
    let l = Launch::new(
        rt.path.clone().unwrap_or_default(),
        [
            std::ffi::OsString::from("-NoLogo"),
            "-NoProfile".into(),
            "-NonInteractive".into(),
            "-ExecutionPolicy".into(),
            "Bypass".into(),
            "-File".into(),
            script.into(),
        ],
    )
    .with_env("POWERSHELL_TELEMETRY_OPTOUT", "1")
    .with_env("POWERSHELL_UPDATECHECK", "Off");
    with_probe_tmp(without_tiered_compilation(l), ctx).with_fresh_dir_env("XDG_CACHE_HOME", pwsh_cache(ctx))
}

/// Where each pwsh start gets its own cache folder (`XDG_CACHE_HOME`, which pwsh reads on
/// Unix), inside the scratch folder. pwsh reads its start-up profile
/// (`powershell/StartupProfileData-NonInteractive`) from that folder at start and rewrites it
/// at exit; pwsh processes sharing one folder race on that file, and a start that reads it
/// half-written dies (SIGSEGV or "Stack overflow"). Measured here: after a test run's pwsh
/// probes shared the user's `~/.cache`, every later pwsh start on the machine crashed until
/// the file was removed. Own folders keep the user's cache untouched too.
fn pwsh_cache(ctx: &ProbeContext) -> std::path::PathBuf {
    crate::runtime::probe_tmp(ctx).join("pwsh-cache")
}

/// `launch` with .NET's tiered compilation off (`DOTNET_TieredCompilation=0`, runtime
/// configuration: https://learn.microsoft.com/en-us/dotnet/core/runtime-config/compilation),
/// unless the user's environment sets it. PowerShell compiles the probe's script blocks to
/// dynamic methods, which tiered compilation first runs unoptimised and re-compiles in the
/// background; optimised at once, a race trial of three pwsh contenders costs about half as
/// much, for about 0.7 s more start-up per process. The calls a variant makes, and their system
/// calls, are the same either way: only the time between them shrinks, as on a faster machine.
fn without_tiered_compilation(l: Launch) -> Launch {
    const VAR: &str = "DOTNET_TieredCompilation";
    if std::env::var_os(VAR).is_some() {
        return l;
    }
    l.with_env(VAR, "0")
}

fn ps_version(exe: &Path) -> Result<String, String> {
    // a cache folder of its own, as every probe's (see pwsh_cache), removed after the query
    let dir = tempfile::Builder::new().prefix("conformance-pwsh-cache-").tempdir().map_err(|e| e.to_string())?;
    let cache = dir.path().to_string_lossy().into_owned();
    let out = query(
        exe,
        &["-NoLogo", "-NoProfile", "-NonInteractive", "-Command", "$PSVersionTable.PSVersion.ToString()"],
        &[("POWERSHELL_TELEMETRY_OPTOUT", "1"), ("XDG_CACHE_HOME", &cache)],
    )?;
    Ok(first_line(&out))
}

/// How to get PowerShell 7 where it is missing: NuGet serves it as a .NET tool, the package
/// `PowerShell` (https://www.nuget.org/packages/PowerShell).
const PWSH_HINT: &str = "install PowerShell 7, e.g. `dotnet tool install PowerShell --tool-path DIR` and DIR on PATH";

impl Adapter for Pwsh {
    fn name(&self) -> &'static str {
        "pwsh"
    }
    fn executables(&self) -> &'static [&'static str] {
        &["pwsh"]
    }
    fn families(&self) -> &'static [&'static str] {
        &["pwsh"]
    }
    fn version(&self, exe: &Path) -> Result<(String, String), String> {
        let v = ps_version(exe)?;
        Ok((v.clone(), format!("pwsh {v}")))
    }
    fn launch(&self, rt: &Runtime, _family: &str, ctx: &ProbeContext) -> Launch {
        ps_launch(rt, ctx)
    }
    fn timeout_multiplier(&self) -> u32 {
        2
    }
    fn amplify_by_attach(&self) -> bool {
        // Measured here (pwsh 7.6.9 on .NET 10, strace 6.1, 2 cores): started under a tracer
        // that delays every listed call by 1,000 µs, pwsh says hello after about 18 s (its
        // start-up makes thousands of them), and not within 30 s at 4,000 µs. Races delay only
        // the race's paths and start it under the tracer (0.7 s to run `exit`, 0.6 s
        // untraced); hand-offs delay every path and attach after the hello.
        true
    }
    fn absent_hint(&self) -> String {
        format!("no pwsh on PATH ({PWSH_HINT})")
    }
}

impl Adapter for WindowsPowerShell {
    fn name(&self) -> &'static str {
        "powershell"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["powershell.exe", "windows-powershell"]
    }
    fn executables(&self) -> &'static [&'static str] {
        &["powershell"]
    }
    fn families(&self) -> &'static [&'static str] {
        &["pwsh"]
    }
    fn version(&self, exe: &Path) -> Result<(String, String), String> {
        let v = ps_version(exe)?;
        Ok((v.clone(), format!("Windows PowerShell {v}")))
    }
    fn launch(&self, rt: &Runtime, _family: &str, ctx: &ProbeContext) -> Launch {
        ps_launch(rt, ctx)
    }
    fn timeout_multiplier(&self) -> u32 {
        2
    }
    fn absent_hint(&self) -> String {
        "no powershell.exe on PATH (Windows PowerShell 5.1 is Windows only; measured by the Windows CI job)".to_string()
    }
}

//! POSIX shells: dash (Debian's `/bin/sh`) and bash, both running `probes/sh/probe.sh` in
//! loop mode (one shell per contender, each attempt in a subshell with its data read from
//! stdin, [`crate::exec::shloop`]; one-shot mode, a shell per attempt with the data in its
//! environment, where the loop cannot start: `probes/PROTOCOL.md`), as a shell script runs one
//! command per step. The commands a script
//! calls (`mv`, `ln`, `mkdir`, `cp`, `install`: GNU coreutils on Debian) are part of what is
//! measured, so the row names their version too.

use std::path::Path;

use super::{first_line, query, with_probe_tmp, Adapter, ProbeContext, Runtime};
use crate::exec::contender::Mode;
use crate::exec::process::Launch;

/// dash, the Debian Almquist shell.
#[derive(Debug)]
pub struct Dash;

/// GNU bash.
#[derive(Debug)]
pub struct Bash;

/// The version of the coreutils the probe's commands come from (`mv --version` prints
/// `mv (GNU coreutils) 9.1`), as ` + coreutils 9.1`, or `` where `mv` says nothing of it.
fn coreutils_suffix() -> String {
    let Ok(mv) = which::which("mv") else { return String::new() };
    match query(&mv, &["--version"], &[("LC_ALL", "C")]) {
        Ok(out) => {
            let line = first_line(&out);
            match line.rsplit_once(' ') {
                Some((tool, v)) if tool.contains("coreutils") => format!(" + coreutils {v}"),
                _ => String::new(),
            }
        }
        Err(_) => String::new(),
    }
}

fn shell_launch(rt: &Runtime, ctx: &ProbeContext) -> Launch {
    let script = ctx.probes_dir.join("sh").join("probe.sh");
    // the tools' messages in the C locale, so that the probe reads their strerror texts
    let l = Launch::new(rt.path.clone().unwrap_or_default(), [script.into_os_string()]).with_env("LC_ALL", "C");
    with_probe_tmp(l, ctx)
}

impl Adapter for Dash {
    fn name(&self) -> &'static str {
        "dash"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["sh"]
    }
    fn executables(&self) -> &'static [&'static str] {
        &["dash"]
    }
    fn families(&self) -> &'static [&'static str] {
        &["sh"]
    }
    fn mode(&self) -> Mode {
        Mode::ShellLoop
    }
    fn starts_cheaply(&self) -> bool {
        // measured here: dash starts and exits in 2.8 ms, bash in 5.1 ms (`/bin/true` 1.8 ms)
        true
    }
    /// dash has no version option; Debian's package database knows it (`dpkg-query -W dash`
    /// prints `0.5.12-2`). Elsewhere the version is `unknown`.
    fn version(&self, exe: &Path) -> Result<(String, String), String> {
        // the shell must start: `dash -c 'exit 0'`
        query(exe, &["-c", "exit 0"], &[])?;
        let v = which::which("dpkg-query")
            .ok()
            .and_then(|q| query(&q, &["-W", "-f=${Version}", "dash"], &[]).ok())
            .map(|o| first_line(&o))
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| "unknown".to_string());
        let v = v.split('-').next().unwrap_or(&v).to_string();
        Ok((v.clone(), format!("dash {v}{}", coreutils_suffix())))
    }
    fn launch(&self, rt: &Runtime, _family: &str, ctx: &ProbeContext) -> Launch {
        shell_launch(rt, ctx)
    }
    fn versions_note(&self) -> Option<&'static str> {
        Some("Debian 12 packages one dash (0.5.12)")
    }
    fn absent_hint(&self) -> String {
        "no dash on PATH (Debian: apt-get install dash)".to_string()
    }
}

impl Adapter for Bash {
    fn name(&self) -> &'static str {
        "bash"
    }
    fn executables(&self) -> &'static [&'static str] {
        &["bash"]
    }
    fn families(&self) -> &'static [&'static str] {
        &["sh"]
    }
    fn mode(&self) -> Mode {
        Mode::ShellLoop
    }
    fn starts_cheaply(&self) -> bool {
        // measured here: dash starts and exits in 2.8 ms, bash in 5.1 ms (`/bin/true` 1.8 ms)
        true
    }
    /// `bash --version` prints `GNU bash, version 5.2.15(1)-release (x86_64-pc-linux-gnu)` first.
    fn version(&self, exe: &Path) -> Result<(String, String), String> {
        let line = first_line(&query(exe, &["--version"], &[("LC_ALL", "C")])?);
        let v = line
            .split("version ")
            .nth(1)
            .and_then(|r| r.split(['(', ' ']).next())
            .ok_or_else(|| format!("no version in `bash --version`: {line:?}"))?
            .to_string();
        Ok((v.clone(), format!("bash {v}{}", coreutils_suffix())))
    }
    fn launch(&self, rt: &Runtime, _family: &str, ctx: &ProbeContext) -> Launch {
        shell_launch(rt, ctx)
    }
    fn versions_note(&self) -> Option<&'static str> {
        Some("Debian 12 packages one bash (5.2)")
    }
}

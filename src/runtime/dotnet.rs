//! .NET: one C# probe (`probes/dotnet/Probe.cs`) run on CoreCLR (`dotnet`) and on Mono.
//!
//! The probe is built once per source content and cached: with the .NET SDK when `dotnet`
//! has one (`dotnet build probes/dotnet/Probe.csproj`), otherwise with Mono's `mcs`. An
//! mcs-built assembly runs on a bare CoreCLR host given a runtimeconfig.json
//! (`docs/RUNTIMES.md`).

use std::path::{Path, PathBuf};

use super::{first_line, query, with_probe_tmp, Adapter, ProbeContext, Runtime};
use crate::exec::process::Launch;

/// CoreCLR through the `dotnet` host.
#[derive(Debug)]
pub struct CoreClr;

/// Mono.
#[derive(Debug)]
pub struct Mono;

/// The highest `Microsoft.NETCore.App` version in `dotnet --list-runtimes` output.
pub(crate) fn highest_netcore(list: &str) -> Option<String> {
    list.lines()
        .filter_map(|l| l.strip_prefix("Microsoft.NETCore.App "))
        .filter_map(|l| l.split_whitespace().next())
        .max_by_key(|v| v.split(['.', '-']).map(|p| p.parse::<u64>().unwrap_or(0)).collect::<Vec<_>>())
        .map(str::to_string)
}

impl Adapter for CoreClr {
    fn name(&self) -> &'static str {
        "coreclr"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["dotnet", ".net"]
    }
    fn executables(&self) -> &'static [&'static str] {
        &["dotnet"]
    }
    fn families(&self) -> &'static [&'static str] {
        &["dotnet"]
    }
    fn version(&self, exe: &Path) -> Result<(String, String), String> {
        let out = query(exe, &["--list-runtimes"], &[("DOTNET_CLI_TELEMETRY_OPTOUT", "1"), ("DOTNET_NOLOGO", "1")])?;
        let v =
            highest_netcore(&out).ok_or_else(|| format!("{} lists no Microsoft.NETCore.App runtime", exe.display()))?;
        Ok((v.clone(), format!("CoreCLR {v}")))
    }
    fn prepare(&self, rt: &mut Runtime, ctx: &ProbeContext) -> Result<(), String> {
        let exe = rt.path.clone().unwrap_or_default();
        // a runtime without an SDK of its own (a version `conformance install coreclr@8` laid
        // out) runs the probe that the machine's SDK builds: net8.0 with RollForward=Major
        // runs on 8 and every later runtime, never on an earlier one (3.1, 6, 7), which runs the
        // mcs-built probe with a runtimeconfig instead
        let major = rt.version.split('.').next().and_then(|m| m.parse::<u32>().ok()).unwrap_or(0);
        let builder = if major < 8 {
            None
        } else if sdk_check(&exe).is_ok() {
            Some(exe.clone())
        } else {
            sdk_dotnet().ok()
        };
        let artifact = if let Some(sdk) = builder {
            build_sdk(&sdk, ctx)?
        } else {
            let dir = build_mcs(ctx)?;
            let rc = dir.join(format!("Probe.{}.runtimeconfig.json", rt.version));
            if !rc.exists() {
                let text = format!(
                    "{{\"runtimeOptions\":{{\"tfm\":\"netcoreapp3.1\",\"framework\":{{\"name\":\"Microsoft.NETCore.App\",\"version\":\"{}\"}}}}}}",
                    rt.version
                );
                std::fs::write(&rc, text).map_err(|e| format!("cannot write {}: {e}", rc.display()))?;
            }
            dir.join("Probe.exe")
        };
        rt.artifact = Some(artifact);
        Ok(())
    }
    fn launch(&self, rt: &Runtime, _family: &str, ctx: &ProbeContext) -> Launch {
        let exe = rt.path.clone().unwrap_or_default();
        let art = rt.artifact.clone().unwrap_or_default();
        let l = if art.extension().is_some_and(|e| e == "exe") {
            let rc = art.with_file_name(format!("Probe.{}.runtimeconfig.json", rt.version));
            Launch::new(exe, [std::ffi::OsString::from("exec"), "--runtimeconfig".into(), rc.into(), art.into()])
                .with_env("DOTNET_SYSTEM_GLOBALIZATION_INVARIANT", "1")
        } else {
            Launch::new(exe, [art])
        };
        // No debugger FIFOs (`clr-debug-pipe-*`) or diagnostic sockets (`dotnet-diagnostic-*`),
        // which a killed probe leaves in its temp folder. "Runtime configuration options for
        // debugging and profiling" (learn.microsoft.com/dotnet/core/runtime-config/debugging-
        // profiling): .NET 6 standardised the `DOTNET_` prefix, earlier runtimes need
        // `COMPlus_`. Measured with CoreCLR 3.1.23: `DOTNET_EnableDiagnostics=0` alone still
        // makes three per probe, `COMPlus_EnableDiagnostics=0` none. The temp folder is the
        // scratch's too (with_probe_tmp), should another setting let them through.
        let l = l
            .with_env("DOTNET_CLI_TELEMETRY_OPTOUT", "1")
            .with_env("DOTNET_NOLOGO", "1")
            .with_env("COMPlus_EnableDiagnostics", "0")
            .with_env("DOTNET_EnableDiagnostics", "0");
        with_probe_tmp(l, ctx)
    }
}

impl Adapter for Mono {
    fn name(&self) -> &'static str {
        "mono"
    }
    fn executables(&self) -> &'static [&'static str] {
        &["mono"]
    }
    fn families(&self) -> &'static [&'static str] {
        &["dotnet"]
    }
    fn version(&self, exe: &Path) -> Result<(String, String), String> {
        let out = query(exe, &["--version"], &[])?;
        let line = first_line(&out);
        let v = line
            .split("version ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .ok_or_else(|| format!("unexpected `mono --version` output: {line}"))?
            .to_string();
        Ok((v.clone(), format!("Mono {v}")))
    }
    fn prepare(&self, rt: &mut Runtime, ctx: &ProbeContext) -> Result<(), String> {
        rt.artifact = Some(build_mcs(ctx)?.join("Probe.exe"));
        Ok(())
    }
    fn launch(&self, rt: &Runtime, _family: &str, ctx: &ProbeContext) -> Launch {
        with_probe_tmp(Launch::new(rt.path.clone().unwrap_or_default(), [rt.artifact.clone().unwrap_or_default()]), ctx)
    }
}

/// Checks that `exe` is a `dotnet` with at least one SDK (`dotnet --list-sdks`, at most 60 s).
/// Errors: why not, as one line.
fn sdk_check(exe: &Path) -> Result<(), String> {
    let l =
        Launch::new(exe, ["--list-sdks"]).with_env("DOTNET_CLI_TELEMETRY_OPTOUT", "1").with_env("DOTNET_NOLOGO", "1");
    match crate::exec::process::run_capture(&l, &std::env::temp_dir(), std::time::Duration::from_secs(60)) {
        Ok((true, out, _)) if !out.trim().is_empty() => Ok(()),
        Ok(_) => Err(format!("{} has no .NET SDK (dotnet --list-sdks lists none)", exe.display())),
        Err(e) => Err(format!("{} does not start: {e}", exe.display())),
    }
}

/// The `dotnet` of a .NET SDK: `CONFORMANCE_DOTNET`, else `dotnet` on `PATH`, with at least
/// one SDK listed (it builds the probe for runtimes without an SDK, and its NuGet restore
/// fetches CoreCLR versions: [`super::nuget`]). Errors: why there is none, as one line.
pub(super) fn sdk_dotnet() -> Result<PathBuf, String> {
    let exe = match std::env::var_os("CONFORMANCE_DOTNET") {
        Some(p) => PathBuf::from(p),
        None => which::which("dotnet")
            .map_err(|_| "installing a CoreCLR version needs the .NET SDK's dotnet on PATH (its NuGet restore fetches the runtime pack)".to_string())?,
    };
    sdk_check(&exe).map(|()| exe)
}

/// Builds `Probe.cs` with `mcs` into `<cache>/dotnet/mcs-<hash>/` (publish by temp folder and
/// rename, so concurrent runs never see a half-built probe). Returns the folder.
fn build_mcs(ctx: &ProbeContext) -> Result<PathBuf, String> {
    let src = ctx.probes_dir.join("dotnet").join("Probe.cs");
    let dir = ctx.cache_dir.join("dotnet").join(format!("mcs-{}", super::source_hash(std::slice::from_ref(&src))?));
    if dir.join("Probe.exe").is_file() {
        return Ok(dir);
    }
    let mcs =
        which::which("mcs").map_err(|_| "no C# compiler: neither a .NET SDK nor Mono's mcs is on PATH".to_string())?;
    let tmp = super::staging_beside(&dir, ".build-")?;
    let out = tmp.path().join("Probe.exe");
    let mut arg_out = std::ffi::OsString::from("-out:");
    arg_out.push(&out);
    let l = Launch::new(mcs, [arg_out, "-nologo".into(), "-optimize+".into(), src.into_os_string()]);
    let (ok, stdout, stderr) = crate::exec::process::run_capture(&l, tmp.path(), std::time::Duration::from_secs(180))?;
    if !ok || !out.is_file() {
        return Err(format!("mcs failed to build the C# probe: {}", first_line(&format!("{stdout}\n{stderr}"))));
    }
    super::publish_staged(tmp, &dir, &dir.join("Probe.exe"))?;
    Ok(dir)
}

/// The file name of a user's compiled lock code ([`build_user_lock`]).
pub const USER_LOCK_DLL: &str = "UserLock.dll";

/// The project that builds a user's lock code with the .NET SDK where Mono's `mcs` is missing:
/// a class library of `UserLock.cs`, for .NET 8 and later.
const USER_LOCK_CSPROJ: &str = r#"<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <OutputType>Library</OutputType>
    <TargetFramework>net8.0</TargetFramework>
    <AssemblyName>UserLock</AssemblyName>
    <EnableDefaultCompileItems>false</EnableDefaultCompileItems>
    <Nullable>disable</Nullable>
  </PropertyGroup>
  <ItemGroup>
    <Compile Include="UserLock.cs" />
  </ItemGroup>
</Project>
"#;

/// Compiles a user's C# lock code (`conformance check Lock.cs`: a public type with public
/// static `Acquire(string path, string owner)` and `Release(string path, string owner)`) into
/// a library the C# probe loads (`params.module`): with Mono's `mcs -target:library` where it
/// is on PATH (the library then loads on Mono and CoreCLR alike, as the mcs-built probe
/// does), else with the .NET SDK (`dotnet build`, CoreCLR only). Built once per content into
/// `<cache>/dotnet/userlock-<hash>/`. Returns the library's path.
///
/// Errors: no compiler, or the compiler's first error line (the user's file and line).
pub fn build_user_lock(src: &Path, cache_dir: &Path) -> Result<PathBuf, String> {
    let dir = cache_dir.join("dotnet").join(format!("userlock-{}", super::source_hash(&[src.to_path_buf()])?));
    let dll = dir.join(USER_LOCK_DLL);
    if dll.is_file() {
        return Ok(dll);
    }
    let tmp = super::staging_beside(&dir, ".build-")?;
    let out = tmp.path().join(USER_LOCK_DLL);
    let (l, timeout) = if let Ok(mcs) = which::which("mcs") {
        let mut arg_out = std::ffi::OsString::from("-out:");
        arg_out.push(&out);
        (Launch::new(mcs, [arg_out, "-target:library".into(), "-nologo".into(), src.as_os_str().to_owned()]), 180)
    } else if let Ok(dotnet) = which::which("dotnet") {
        let proj = tmp.path().join("src");
        std::fs::create_dir_all(&proj).map_err(|e| format!("cannot create {}: {e}", proj.display()))?;
        std::fs::copy(src, proj.join("UserLock.cs")).map_err(|e| format!("cannot copy {}: {e}", src.display()))?;
        std::fs::write(proj.join("UserLock.csproj"), USER_LOCK_CSPROJ)
            .map_err(|e| format!("cannot write {}: {e}", proj.display()))?;
        let args = [
            std::ffi::OsString::from("build"),
            proj.join("UserLock.csproj").into(),
            "-c".into(),
            "Release".into(),
            "-o".into(),
            tmp.path().into(),
            "-nologo".into(),
        ];
        (Launch::new(dotnet, args).with_env("DOTNET_CLI_TELEMETRY_OPTOUT", "1").with_env("DOTNET_NOLOGO", "1"), 600)
    } else {
        return Err("no C# compiler: neither Mono's mcs nor a .NET SDK is on PATH".into());
    };
    let (ok, stdout, stderr) =
        crate::exec::process::run_capture(&l, tmp.path(), std::time::Duration::from_secs(timeout))?;
    if !ok || !out.is_file() {
        let msg = format!("{stdout}\n{stderr}");
        // the compiler's own error (file, line, CS code) before its summary
        let err = msg
            .lines()
            .find(|l| l.contains("error CS"))
            .or_else(|| msg.lines().find(|l| l.contains("error")))
            .unwrap_or_else(|| msg.trim());
        return Err(format!("{} did not compile: {}", src.display(), err.trim()));
    }
    super::publish_staged(tmp, &dir, &dll)?;
    Ok(dll)
}

/// Builds `Probe.csproj` with the .NET SDK into `<cache>/dotnet/sdk-<hash>/out/Probe.dll`.
fn build_sdk(dotnet: &Path, ctx: &ProbeContext) -> Result<PathBuf, String> {
    let srcdir = ctx.probes_dir.join("dotnet");
    let files = [srcdir.join("Probe.cs"), srcdir.join("Probe.csproj")];
    let dir = ctx.cache_dir.join("dotnet").join(format!("sdk-{}", super::source_hash(&files)?));
    let dll = dir.join("out").join("Probe.dll");
    if dll.is_file() {
        return Ok(dll);
    }
    std::fs::create_dir_all(dir.join("src")).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for f in &files {
        let to = dir.join("src").join(f.file_name().expect("file"));
        std::fs::copy(f, &to).map_err(|e| format!("cannot copy {}: {e}", f.display()))?;
    }
    let l = Launch::new(
        dotnet,
        [
            std::ffi::OsString::from("build"),
            dir.join("src").join("Probe.csproj").into(),
            "-c".into(),
            "Release".into(),
            "-o".into(),
            dir.join("out").into(),
            "-nologo".into(),
        ],
    )
    .with_env("DOTNET_CLI_TELEMETRY_OPTOUT", "1")
    .with_env("DOTNET_NOLOGO", "1");
    let (ok, stdout, stderr) = crate::exec::process::run_capture(&l, &dir, std::time::Duration::from_secs(600))?;
    if !ok || !dll.is_file() {
        let msg = format!("{stdout}\n{stderr}");
        let err = msg.lines().find(|l| l.contains("error")).unwrap_or_else(|| msg.trim());
        return Err(format!("dotnet build failed for the C# probe: {err}"));
    }
    Ok(dll)
}

#[cfg(test)]
mod tests {
    use super::highest_netcore;

    #[test]
    fn picks_highest_netcore_runtime() {
        let out = "Microsoft.AspNetCore.App 8.0.1 [/x]\nMicrosoft.NETCore.App 3.1.23 [/x]\nMicrosoft.NETCore.App 8.0.11 [/x]\nMicrosoft.NETCore.App 8.0.2 [/x]\n";
        assert_eq!(highest_netcore(out).as_deref(), Some("8.0.11"));
        assert_eq!(highest_netcore("nothing"), None);
    }
}

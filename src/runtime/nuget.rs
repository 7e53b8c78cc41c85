//! CoreCLR versions from NuGet (`conformance install coreclr@8`, `-r coreclr@9.0.23`).
//!
//! Microsoft publishes every .NET runtime as a *runtime pack*,
//! `Microsoft.NETCore.App.Runtime.<rid>` (the files a self-contained app carries: the managed
//! libraries under `runtimes/<rid>/lib/<tfm>/`, CoreCLR itself under `runtimes/<rid>/native/`,
//! with the framework's `Microsoft.NETCore.App.deps.json`). The harness lays one out as a
//! private .NET installation, `<store>/coreclr/<version>/`:
//!
//! ```text
//! dotnet                                   the SDK's muxer, copied (it finds frameworks beside itself)
//! host/fxr/<v>/libhostfxr.so               the SDK's host resolver, copied (it reads every older framework)
//! shared/Microsoft.NETCore.App/<version>/  the runtime pack's lib/<tfm>/ and native/ files
//! install.json                             where it came from
//! ```
//!
//! so that `<store>/coreclr/<version>/dotnet --list-runtimes` names that version alone and the
//! C# probe (built once by the machine's SDK for net8.0, `RollForward=Major`) runs on it. This
//! is the layout `dotnet-install.sh --runtime dotnet` makes (".NET install script",
//! learn.microsoft.com/dotnet/core/tools/dotnet-install-script), from the package NuGet serves.
//!
//! The SDK's own NuGet client does the network part (a `dotnet restore` of a throwaway
//! project in the staging folder), so the user's NuGet sources, proxy and credentials
//! (`NuGet.Config`) apply as they do to any restore, and the package lands in a packages folder
//! inside the staging folder (NuGet's HTTP cache and scratch folder too). NuGet writes the
//! package's `.nupkg.sha512` from the bytes it downloaded (and checks signed packages itself);
//! the harness checks the package on disk against it before laying it out, which catches a
//! package damaged after the download, not a registry that served other bytes. A partial version (`8`,
//! `9.0`, `latest`) is resolved by NuGet's floating versions (`8.*`): a `PackageReference`
//! whose restore resolves and downloads the highest stable version, then fails with NU1213
//! (a runtime pack's package type is `DotnetPlatform`, not a library's), after writing the
//! resolved version to `obj/project.assets.json`; an exact version is a `PackageDownload`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use semver::Version;

use super::install::{
    check_integrity, publish, staging, store_error, verify_version, InstallError, Installed, Manifest, Say, Store,
    VersionRequest, VersionSpec,
};
use crate::exec::process::{run_capture, Launch};

/// The registry name of the runtime these packs install.
pub const RUNTIME: &str = "coreclr";

/// The longest one restore may take (a runtime pack is 30–40 MB).
const RESTORE_TIMEOUT: Duration = Duration::from_secs(600);

/// The runtime pack's package id for this machine (`Microsoft.NETCore.App.Runtime.linux-x64`).
///
/// Errors: the platform has no runtime pack the harness knows (a .NET RID:
/// learn.microsoft.com/dotnet/core/rid-catalog).
pub fn pack_id() -> Result<String, String> {
    let os = match std::env::consts::OS {
        "linux" => "linux",
        "macos" => "osx",
        "windows" => "win",
        other => return Err(format!("no .NET runtime pack for {other}")),
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => return Err(format!("no .NET runtime pack for {other}")),
    };
    let musl = cfg!(target_env = "musl");
    let rid = if musl { format!("{os}-musl-{arch}") } else { format!("{os}-{arch}") };
    Ok(format!("Microsoft.NETCore.App.Runtime.{rid}"))
}

/// The NuGet version `spec` asks a restore for: `[8.0.34]` for an exact version, a floating
/// `8.*` / `8.0.*` / `*` for a partial version or `latest`.
///
/// Errors: a range NuGet cannot float to its highest match (`>=8 <9`, `^8`): the message says
/// what to give instead.
pub fn nuget_version(spec: &VersionSpec, text: &str) -> Result<String, String> {
    let after = text.split_once('@').map_or("", |(_, v)| v).trim();
    let after = after.strip_prefix('v').unwrap_or(after);
    match spec {
        VersionSpec::Exact(v) => Ok(format!("[{v}]")),
        VersionSpec::Latest => Ok("*".to_string()),
        VersionSpec::Range(_) => {
            let bare = after.trim_end_matches(".*");
            let parts: Vec<&str> = bare.split('.').collect();
            if parts.len() <= 2 && parts.iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())) {
                Ok(format!("{bare}.*"))
            } else {
                Err(format!(
                    "NuGet resolves a CoreCLR version from a partial one: give 8, 9.0, 9.0.23 or latest, not '{after}'"
                ))
            }
        }
    }
}

/// The project a restore of `pack` at `version` (a NuGet version, see [`nuget_version`]) reads.
fn fetch_project(pack: &str, version: &str) -> String {
    let item = if version.starts_with('[') {
        format!("<PackageDownload Include=\"{pack}\" Version=\"{version}\" />")
    } else {
        format!("<PackageReference Include=\"{pack}\" Version=\"{version}\" />")
    };
    format!(
        "<Project Sdk=\"Microsoft.NET.Sdk\">\n  <PropertyGroup><TargetFramework>netstandard2.0</TargetFramework></PropertyGroup>\n  <ItemGroup>\n    {item}\n  </ItemGroup>\n</Project>\n"
    )
}

/// The version of `pack` a restore resolved, from its `project.assets.json` text (its
/// `libraries` are keyed `Id/Version`). `None` when it names none.
pub fn resolved_version(assets: &str, pack: &str) -> Option<Version> {
    let doc: serde_json::Value = serde_json::from_str(assets).ok()?;
    doc["libraries"].as_object()?.keys().find_map(|k| {
        let (id, v) = k.split_once('/')?;
        id.eq_ignore_ascii_case(pack).then(|| Version::parse(v).ok()).flatten()
    })
}

/// Installs the CoreCLR version `req` asks for into `store` (see the module docs), saying what
/// it does through `say`. Returns it and whether it was installed now (`false`: it already was).
///
/// Errors: [`InstallError::NoSuchVersion`] when NuGet has no such version (or the spec is a
/// range NuGet cannot resolve); [`InstallError::Unavailable`] when there is no SDK, the restore
/// fails or the laid-out runtime does not report the version; [`InstallError::Store`] when
/// the store cannot be written.
pub fn install(store: &Store, req: &VersionRequest, say: Say<'_>) -> Result<(Installed, bool), InstallError> {
    if let VersionSpec::Exact(_) = req.spec {
        if let Some(i) = store.best(req) {
            return Ok((i, false));
        }
    }
    let pack = pack_id().map_err(InstallError::Unavailable)?;
    let wanted = nuget_version(&req.spec, &req.text).map_err(InstallError::NoSuchVersion)?;
    let dotnet = super::dotnet::sdk_dotnet().map_err(InstallError::Unavailable)?;
    let io = store_error;
    let (parent, staging) = staging(store, RUNTIME)?;
    let (project, packages) = (staging.path().join("fetch"), staging.path().join("packages"));
    for d in [&project, &packages] {
        std::fs::create_dir_all(d).map_err(io(d))?;
    }
    let proj = project.join("fetch.csproj");
    std::fs::write(&proj, fetch_project(&pack, &wanted)).map_err(io(&proj))?;
    let started = Instant::now();
    say(&format!("install  {}: asking NuGet for {pack} {wanted} with dotnet restore", req.text));
    let l = Launch::new(
        &dotnet,
        [
            std::ffi::OsString::from("restore"),
            proj.clone().into(),
            "--packages".into(),
            packages.clone().into(),
            "--nologo".into(),
            // the throwaway project takes nothing from the folders above the cache
            // (Directory.Build.props/.targets, central package versions)
            "-p:ImportDirectoryBuildProps=false".into(),
            "-p:ImportDirectoryBuildTargets=false".into(),
            "-p:ManagePackageVersionsCentrally=false".into(),
        ],
    )
    .with_env("DOTNET_CLI_TELEMETRY_OPTOUT", "1")
    .with_env("DOTNET_NOLOGO", "1")
    // NuGet's HTTP cache (by default in the home folder) and scratch folder (by default in
    // the system's temp folder) go with the staging folder; no MSBuild node outlives it
    .with_env("NUGET_HTTP_CACHE_PATH", staging.path().join("http-cache"))
    .with_env("NUGET_SCRATCH", staging.path().join("nuget-scratch"))
    .with_env("MSBUILDDISABLENODEREUSE", "1");
    let (ok, stdout, stderr) = run_capture(&l, &project, RESTORE_TIMEOUT).map_err(InstallError::Unavailable)?;
    let said = format!("{stdout}\n{stderr}");
    // which version: the exact one asked for, else what the floating restore resolved (it
    // fails with NU1213 after resolving and downloading: see the module docs)
    let v = match &req.spec {
        VersionSpec::Exact(v) => v.clone(),
        _ => {
            let assets = std::fs::read_to_string(project.join("obj").join("project.assets.json")).unwrap_or_default();
            resolved_version(&assets, &pack).ok_or_else(|| {
                let line = said.lines().find(|l| l.contains("error")).unwrap_or(said.trim()).trim().to_string();
                if line.contains("NU1101") || line.contains("NU1102") || line.contains("NU1103") {
                    InstallError::NoSuchVersion(format!("NuGet has no {pack} {wanted}: {line}"))
                } else {
                    InstallError::Unavailable(format!("dotnet restore of {pack} {wanted} failed: {line}"))
                }
            })?
        }
    };
    if !req.spec.matches(&v) {
        return Err(InstallError::NoSuchVersion(format!(
            "NuGet resolved {pack} {v}, which {} does not ask for",
            req.text
        )));
    }
    let exact = VersionRequest { runtime: req.runtime, spec: VersionSpec::Exact(v.clone()), text: req.text.clone() };
    if let Some(i) = store.best(&exact) {
        return Ok((i, false));
    }
    let folder = packages.join(pack.to_ascii_lowercase()).join(v.to_string());
    let nupkg = folder.join(format!("{}.{v}.nupkg", pack.to_ascii_lowercase()));
    if !nupkg.is_file() {
        let line = said.lines().find(|l| l.contains("error")).unwrap_or(said.trim()).trim().to_string();
        return Err(if ok || !(line.contains("NU1101") || line.contains("NU1102")) {
            InstallError::Unavailable(format!("dotnet restore left no {pack} {v}: {line}"))
        } else {
            InstallError::NoSuchVersion(format!("NuGet has no {pack} {v}: {line}"))
        });
    }
    // NuGet wrote the sha512 of what it downloaded beside the package: the bytes on disk
    // must still match it
    let sha = std::fs::read_to_string(folder.join(format!("{}.{v}.nupkg.sha512", pack.to_ascii_lowercase())))
        .map(|s| format!("sha512-{}", s.trim()))
        .ok();
    let checked = match &sha {
        Some(sri) => check_integrity(&nupkg, sri).map_err(InstallError::Unavailable)?,
        None => None,
    };
    let tree = staging.path().join("version");
    let muxer = lay_out(&dotnet, &folder, &v, &tree).map_err(InstallError::Unavailable)?;
    let exe = tree.join(&muxer);
    verify_version(RUNTIME, &exe, &v).map_err(InstallError::Unavailable)?;
    let manifest = Manifest {
        runtime: RUNTIME.to_string(),
        version: v.to_string(),
        package: pack.clone(),
        tarball: format!(
            "https://api.nuget.org/v3-flatcontainer/{0}/{v}/{0}.{v}.nupkg (through dotnet restore)",
            pack.to_ascii_lowercase()
        ),
        integrity: checked.and(sha),
        tarball_bytes: std::fs::metadata(&nupkg).map(|m| m.len()).unwrap_or(0),
        binary: muxer.clone(),
        installed_at: jiff::Timestamp::now().to_string(),
    };
    let installed = publish(RUNTIME, &tree, &manifest, &parent, staging)?;
    let dir = &installed.dir;
    say(&format!(
        "install  {}: CoreCLR {v} in {} ({:.1} MB runtime pack, {}, {:.1} s)",
        req.text,
        dir.display(),
        installed.manifest.tarball_bytes as f64 / 1e6,
        if checked.is_some() { "sha512 as NuGet recorded it" } else { "no sha512 beside the package: not checked" },
        started.elapsed().as_secs_f64()
    ));
    Ok((installed, true))
}

/// Lays out a private .NET installation of version `v` in `tree` from the extracted runtime
/// pack `pack_dir` and the SDK installation `dotnet` belongs to (its muxer and newest
/// `host/fxr`). Returns the muxer's file name (`dotnet`, `dotnet.exe`). Errors: a file that
/// cannot be found, read or written, as one line.
fn lay_out(dotnet: &Path, pack_dir: &Path, v: &Version, tree: &Path) -> Result<String, String> {
    let real = std::fs::canonicalize(dotnet).map_err(|e| format!("cannot resolve {}: {e}", dotnet.display()))?;
    let root = real.parent().ok_or_else(|| format!("{} has no folder", real.display()))?;
    let fxr = newest_dir(&root.join("host").join("fxr"))?;
    let rid_dir = std::fs::read_dir(pack_dir.join("runtimes"))
        .map_err(|e| format!("the runtime pack has no runtimes folder: {e}"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.is_dir())
        .ok_or_else(|| "the runtime pack's runtimes folder is empty".to_string())?;
    let lib = newest_dir(&rid_dir.join("lib"))?;
    let shared = tree.join("shared").join("Microsoft.NETCore.App").join(v.to_string());
    copy_files(&lib, &shared)?;
    copy_files(&rid_dir.join("native"), &shared)?;
    let host = tree.join("host").join("fxr").join(fxr.file_name().expect("named"));
    copy_files(&fxr, &host)?;
    let name = real.file_name().expect("named").to_string_lossy().into_owned();
    let exe = tree.join(&name);
    std::fs::copy(&real, &exe).map_err(|e| format!("cannot copy {}: {e}", real.display()))?;
    Ok(name)
}

/// The subfolder of `dir` whose name is the highest version (`8.0.34` > `8.0.4`; a name that
/// is not a version sorts first). Errors: `dir` unreadable or empty.
fn newest_dir(dir: &Path) -> Result<PathBuf, String> {
    let key = |p: &PathBuf| {
        let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        n.trim_start_matches("net").split(['.', '-']).map(|x| x.parse::<u64>().unwrap_or(0)).collect::<Vec<_>>()
    };
    std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .max_by_key(key)
        .ok_or_else(|| format!("{} holds no folder", dir.display()))
}

/// Copies the files (not folders) directly in `from` into `to`, creating `to`, keeping each
/// file's mode (the native libraries and the muxer stay executable).
fn copy_files(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("cannot create {}: {e}", to.display()))?;
    for e in std::fs::read_dir(from).map_err(|e| format!("cannot read {}: {e}", from.display()))? {
        let p = e.map_err(|e| format!("cannot read {}: {e}", from.display()))?.path();
        if p.is_file() {
            let dest = to.join(p.file_name().expect("named"));
            std::fs::copy(&p, &dest).map_err(|e| format!("cannot copy {}: {e}", p.display()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{fetch_project, nuget_version, resolved_version, Version, VersionSpec};

    #[test]
    fn a_spec_becomes_the_version_nuget_restores() {
        let spec = |t: &str| VersionSpec::parse(t.split_once('@').unwrap().1).unwrap();
        for (text, want) in [
            ("coreclr@8.0.34", "[8.0.34]"),
            ("coreclr@8", "8.*"),
            ("coreclr@9.0", "9.0.*"),
            ("coreclr@v9", "9.*"),
            ("coreclr@8.*", "8.*"),
            ("coreclr@latest", "*"),
        ] {
            assert_eq!(nuget_version(&spec(text), text).unwrap(), want, "{text}");
        }
        let e = nuget_version(&spec("coreclr@>=8 <9"), "coreclr@>=8 <9").unwrap_err();
        assert!(e.contains("give 8, 9.0, 9.0.23 or latest"), "{e}");
    }

    #[test]
    fn the_resolved_version_comes_from_the_assets_file() {
        let assets =
            r#"{"version":3,"libraries":{"Microsoft.NETCore.App.Runtime.linux-x64/9.0.23":{"type":"package"}}}"#;
        let pack = "Microsoft.NETCore.App.Runtime.linux-x64";
        assert_eq!(resolved_version(assets, pack), Some(Version::new(9, 0, 23)));
        assert_eq!(resolved_version(assets, "Other"), None);
        assert_eq!(resolved_version("not json", pack), None);
    }

    #[test]
    fn the_project_downloads_an_exact_version_and_floats_a_partial_one() {
        let p = fetch_project("P", "[8.0.34]");
        assert!(p.contains(r#"<PackageDownload Include="P" Version="[8.0.34]" />"#), "{p}");
        let p = fetch_project("P", "8.*");
        assert!(p.contains(r#"<PackageReference Include="P" Version="8.*" />"#), "{p}");
    }
}

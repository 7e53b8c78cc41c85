//! Runtime adapters: how to find, version, start and interpret each runtime.
//!
//! Like eshost's `lib/agents/<host>.js` and wptrunner's `browsers/<product>.py`, each adapter
//! overrides only what differs: the executables to look for, the version query, the probe
//! launch, and (rarely) error normalisation. The registry [`ADAPTERS`] lists them all.
//!
//! Floor: above [`crate::exec`] and [`crate::interrupt`], which start and stop its processes.

mod bun;
mod cmd;
pub mod discover;
mod dotnet;
pub use dotnet::build_user_lock;
pub mod install;
mod java;
pub mod library;
mod node;
mod normalize;
pub mod nuget;
mod pwsh;
mod python;
mod rust;
mod shell;

pub use discover::{discover, Discovery, Fetch, Located, Requested};
pub use normalize::{normalize, FS_FAILURE_CODES};

use std::path::{Path, PathBuf};

use crate::exec::contender::Mode;
use crate::exec::process::Launch;
use crate::exec::scratch::PathStyle;

/// Where probes and caches live, for adapters that must build or locate them.
#[derive(Debug, Clone)]
pub struct ProbeContext {
    /// The `probes/` folder.
    pub probes_dir: PathBuf,
    /// A cache folder for built probes (C#), created on demand.
    pub cache_dir: PathBuf,
    /// The run's scratch top folder (e.g. for `DENO_DIR`).
    pub scratch_top: PathBuf,
    /// The folder the probes run in (the scratch root: the top, or the `--path-segment`
    /// folder inside it).
    pub scratch_root: PathBuf,
}

/// Whether a runtime can be measured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Found and answered its version query.
    Found,
    /// Not found; the reason says where the harness looked.
    NotFound(String),
    /// Found, but it failed its version query or its probe could not be built.
    Broken(String),
}

/// A discovered (or missing) runtime: one row of the tables.
#[derive(Debug, Clone)]
pub struct Runtime {
    /// The adapter's name (`node`, `bun`, `deno`, `coreclr`, `mono`, `pwsh`, `powershell`, `cmd`,
    /// `python`, `java`, `rust`, `dash`, `bash`).
    pub name: &'static str,
    /// The row label, e.g. `node 20.20.2`, `CoreCLR 3.1.23`, `cmd (Wine 8.0)`.
    pub label: String,
    /// The version string as reported (e.g. `20.20.2`).
    pub version: String,
    /// The executable (for `cmd` under Wine: the Wine loader).
    pub path: Option<PathBuf>,
    /// Found, not found or broken, with the reason.
    pub status: Status,
    /// API families this runtime runs, in table order.
    pub families: Vec<&'static str>,
    /// A built probe artefact, for adapters that build one (C#).
    pub artifact: Option<PathBuf>,
    /// How `--runtime` selects this runtime: `bun` (found on `PATH`), `bun@1.3.14` (a version
    /// in the store, [`install`]) or `bun=/opt/bun` (an explicit executable).
    pub selector: String,
    pub(crate) adapter: &'static dyn Adapter,
}

impl Runtime {
    /// The adapter behind this runtime.
    pub fn adapter(&self) -> &'static dyn Adapter {
        self.adapter
    }
}

/// One runtime kind. Default methods cover the common path.
pub trait Adapter: Sync + std::fmt::Debug {
    /// Registry name, used by `--runtime`.
    fn name(&self) -> &'static str;
    /// Other names accepted by `--runtime` (eshost's `supported-hosts.js` aliases).
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }
    /// Executable names to look up on `PATH` (the `which` crate), in order.
    fn executables(&self) -> &'static [&'static str];
    /// Fixed locations tried when nothing is on `PATH` (e.g. Debian's `/usr/lib/wine/wine64`).
    fn fallback_paths(&self) -> &'static [&'static str] {
        &[]
    }
    /// API families run by this runtime, each one of [`crate::matrix::FAMILIES`].
    fn families(&self) -> &'static [&'static str];
    /// The probe mode.
    fn mode(&self) -> Mode {
        Mode::Session
    }
    /// How this runtime spells paths.
    fn path_style(&self) -> PathStyle {
        PathStyle::Native
    }
    /// Asks `exe` for its version; returns (version, label). Errors: why it failed.
    fn version(&self, exe: &Path) -> Result<(String, String), String>;
    /// Builds or checks the probe before use; may set [`Runtime::artifact`]. Errors: why it
    /// cannot be used (the runtime is then `broken`).
    fn prepare(&self, _rt: &mut Runtime, _ctx: &ProbeContext) -> Result<(), String> {
        Ok(())
    }
    /// Undoes what [`Adapter::prepare`] started (e.g. a persistent Wine server). Never fails.
    fn cleanup(&self, _rt: &Runtime, _ctx: &ProbeContext) {}
    /// Starts again what [`Adapter::cleanup`] stopped, right before the runtime is measured:
    /// `run` stops every runtime's background processes after the hello check, so that they
    /// do not share the cores with another runtime's races (issue 13: an idle Wine server
    /// and its services slowed Bun's races by 15–20% here). Errors: why it could not start
    /// (the runtime's cells then say how its probes failed).
    fn resume(&self, _rt: &Runtime, _ctx: &ProbeContext) -> Result<(), String> {
        Ok(())
    }
    /// How to start the probe for `family`.
    fn launch(&self, rt: &Runtime, family: &str, ctx: &ProbeContext) -> Launch;
    /// True when starting this runtime's probe costs little (a shell starts in a few
    /// milliseconds): a process per attempt then gets the run's `-n` like a session, not the
    /// few trials (`--oneshot-trials`) of a slow one-shot start (cmd.exe on Windows, and
    /// under Wine where its loop does not start).
    fn starts_cheaply(&self) -> bool {
        false
    }
    /// A multiplier for the per-attempt timeout (slow starters such as Wine).
    fn timeout_multiplier(&self) -> u32 {
        1
    }
    /// True when amplified probes that delay every listed call
    /// ([`crate::exec::amplify::DelayScope::All`], the hand-off scenarios) start untraced and
    /// strace attaches after their hello ([`crate::exec::attach`]): for runtimes whose
    /// start-up makes so many file-system calls that, each delayed, it would not say hello in
    /// time. Races delay only the calls naming the race's paths, which a start-up never names:
    /// there every probe starts under the tracer, where `--seccomp-bpf` stops it only on the
    /// listed calls (attached, every system call of every thread stops at the tracer).
    fn amplify_by_attach(&self) -> bool {
        false
    }
    /// Why this runtime's races cannot be amplified even where strace works (shown in the
    /// row), or `None` when they can.
    fn no_amplification(&self) -> Option<String> {
        None
    }
    /// Where other versions of this runtime come from, when no registry this tool reads serves
    /// them (shown when `NAME@VERSION` is refused); `None` for the others.
    fn versions_note(&self) -> Option<&'static str> {
        None
    }
    /// Why this runtime is not on this machine, when it is absent (shown in the skip line).
    fn absent_hint(&self) -> String {
        format!("no {} on PATH", self.executables().join(" or "))
    }
}

/// Every adapter, in table order.
pub static ADAPTERS: &[&dyn Adapter] = &[
    &node::Node,
    &bun::Bun,
    &node::Deno,
    &dotnet::CoreClr,
    &dotnet::Mono,
    &pwsh::Pwsh,
    &pwsh::WindowsPowerShell,
    &cmd::Cmd,
    &python::Python,
    &java::Java,
    &rust::Rust,
    &shell::Dash,
    &shell::Bash,
];

/// Finds an adapter by name or alias (case-insensitive).
pub fn adapter(name: &str) -> Option<&'static dyn Adapter> {
    let n = name.to_ascii_lowercase();
    ADAPTERS.iter().copied().find(|a| a.name() == n || a.aliases().contains(&n.as_str()))
}

/// Comma-separated registry names, for messages.
pub fn known_names() -> String {
    ADAPTERS.iter().map(|a| a.name()).collect::<Vec<_>>().join(", ")
}

/// The temp folder of every probe: `tmp` in the run's scratch folder
/// ([`ProbeContext::scratch_top`]), removed with it at the end of the run.
pub fn probe_tmp(ctx: &ProbeContext) -> PathBuf {
    ctx.scratch_top.join("tmp")
}

/// Points `l`'s temp folder variables — `TMPDIR` (POSIX), `TEMP` and `TMP` (Windows'
/// `GetTempPath`) — at [`probe_tmp`], creating that folder if needed (a failure is left to
/// the probe start, which then reports it). Whatever a runtime writes to its temp folder
/// then lands in the scratch folder and goes with it, even when the harness kills the probe.
///
/// Measured here without it (a run with `TMPDIR` set to a private folder): CoreCLR 3.1 put
/// `clr-debug-pipe-<pid>-<n>-in`/`-out` FIFOs and a `dotnet-diagnostic-<pid>-<n>-socket`
/// there for every probe the harness killed (its PAL takes `TMPDIR` for them), 15 entries for
/// 5 killed probes; Debian's Wine 8.0 put its server folder `wine-XXXXXX` there (Debian's
/// patch for bug #903622 makes the folder with `mkdtemp` in `$TMPDIR` and records its name
/// in `$WINEPREFIX/wineserver`; upstream Wine uses `/tmp/.wine-<uid>` whatever `TMPDIR` says,
/// `dlls/ntdll/unix/server.c`). Wine does not pass `TEMP`/`TMP` on to Windows programs: cmd
/// keeps the prefix's `C:\users\<user>\Temp` (measured).
pub fn with_probe_tmp(l: Launch, ctx: &ProbeContext) -> Launch {
    let dir = probe_tmp(ctx);
    let _ = std::fs::create_dir_all(&dir);
    l.with_env("TMPDIR", &dir).with_env("TEMP", &dir).with_env("TMP", &dir)
}

/// Runs `exe args…` with a 60 s limit and returns its stdout; errors carry stderr.
pub(crate) fn query(exe: &Path, args: &[&str], env: &[(&str, &str)]) -> Result<String, String> {
    let mut l = Launch::new(exe, args.iter().copied());
    for (k, v) in env {
        l = l.with_env(*k, *v);
    }
    let cwd = std::env::temp_dir();
    match crate::exec::process::run_capture(&l, &cwd, std::time::Duration::from_secs(60))? {
        (true, out, _) => Ok(out),
        (false, out, err) => {
            Err(format!("{} exited with an error: {}", l.display(), first_line(&format!("{err}\n{out}"))))
        }
    }
}

/// The first non-empty line of `s`, trimmed.
pub(crate) fn first_line(s: &str) -> String {
    s.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("").to_string()
}

/// A staging folder (prefix `prefix`) beside `dir`, to build or install into before
/// [`publish_staged`] renames it to `dir`, so that concurrent runs never see half of it.
/// Errors: the folder or its parent cannot be made.
pub(crate) fn staging_beside(dir: &Path, prefix: &str) -> Result<tempfile::TempDir, String> {
    let parent = dir.parent().expect("has parent");
    std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(parent)
        .map_err(|e| format!("cannot create a staging folder in {}: {e}", parent.display()))
}

/// Renames the finished staging folder `tmp` to `dir`; where another run published `dir` first
/// (`ready` exists), keeps theirs and removes `tmp`. Errors: neither worked.
pub(crate) fn publish_staged(tmp: tempfile::TempDir, dir: &Path, ready: &Path) -> Result<(), String> {
    let kept = tmp.keep();
    if std::fs::rename(&kept, dir).is_err() && !ready.exists() {
        let _ = std::fs::remove_dir_all(&kept);
        return Err(format!("cannot publish {} to {}", kept.display(), dir.display()));
    }
    let _ = std::fs::remove_dir_all(&kept);
    Ok(())
}

/// The first 8 bytes, in hex, of the SHA-256 of `files`' bytes in order: names a probe built from
/// them in the cache, so that an edited probe is built again. Errors: a file cannot be read.
pub(crate) fn source_hash(files: &[PathBuf]) -> Result<String, String> {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for f in files {
        let b = std::fs::read(f).map_err(|e| format!("cannot read {}: {e}", f.display()))?;
        h.update(&b);
    }
    Ok(h.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::{adapter, probe_tmp, Adapter, Launch, ProbeContext, Runtime, Status, ADAPTERS};

    fn runtime(a: &'static dyn Adapter) -> Runtime {
        Runtime {
            name: a.name(),
            label: a.name().into(),
            version: "3.1.23".into(),
            path: Some(PathBuf::from("/bin/true")),
            status: Status::Found,
            families: a.families().to_vec(),
            artifact: Some(PathBuf::from("/cache/Probe.exe")),
            selector: a.name().into(),
            adapter: a,
        }
    }

    fn env<'a>(l: &'a Launch, k: &str) -> Vec<&'a std::ffi::OsStr> {
        l.env.iter().filter(|(n, _)| n == k).map(|(_, v)| v.as_os_str()).collect()
    }

    /// Every probe of every adapter writes its temp files inside the scratch folder, and the
    /// folder exists before the probe starts.
    #[test]
    fn every_probe_gets_the_scratch_temp_folder() {
        let top = tempfile::tempdir().unwrap();
        let ctx = ProbeContext {
            probes_dir: PathBuf::from("probes"),
            cache_dir: top.path().join("cache"),
            scratch_top: top.path().to_path_buf(),
            scratch_root: top.path().to_path_buf(),
        };
        let tmp = probe_tmp(&ctx);
        assert!(tmp.starts_with(&ctx.scratch_top));
        for a in ADAPTERS {
            let rt = runtime(*a);
            for family in a.families() {
                let l = a.launch(&rt, family, &ctx);
                for k in ["TMPDIR", "TEMP", "TMP"] {
                    assert_eq!(env(&l, k), [tmp.as_os_str()], "{} {family}: {k}", a.name());
                }
            }
        }
        assert!(tmp.is_dir());
    }

    /// CoreCLR 3.1 reads `COMPlus_` settings only (measured: `DOTNET_EnableDiagnostics=0`
    /// alone leaves `clr-debug-pipe-*` and `dotnet-diagnostic-*` behind a killed probe).
    #[test]
    fn coreclr_probes_open_no_diagnostic_channels() {
        let top = tempfile::tempdir().unwrap();
        let ctx = ProbeContext {
            probes_dir: PathBuf::from("probes"),
            cache_dir: top.path().join("cache"),
            scratch_top: top.path().to_path_buf(),
            scratch_root: top.path().to_path_buf(),
        };
        let a = adapter("coreclr").unwrap();
        let l = a.launch(&runtime(a), "dotnet", &ctx);
        assert_eq!(env(&l, "COMPlus_EnableDiagnostics"), ["0"]);
        assert_eq!(env(&l, "DOTNET_EnableDiagnostics"), ["0"]);
    }

    /// The families matrices may name ([`crate::matrix::FAMILIES`], kept apart so that
    /// loading a matrix needs no adapter) are exactly the adapters' families, in the
    /// adapters' order, each once.
    #[test]
    fn the_matrix_families_are_the_adapters_families() {
        let mut families: Vec<&str> = Vec::new();
        for a in ADAPTERS {
            for f in a.families() {
                if !families.contains(f) {
                    families.push(f);
                }
            }
        }
        assert_eq!(families, crate::matrix::FAMILIES);
    }
}

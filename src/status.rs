//! What the commands say about themselves: discovery lines, the amplification line, the
//! runtime records of `results.json` and `runtimes --json`, and stdout that survives a closed
//! pipe. Every label a runtime supplies is escaped ([`table::escape_controls`]) before it
//! reaches the terminal. What a run's plan says of itself (the `run --dry-run` listing, the
//! progress bar) is [`crate::plan`]'s.
//!
//! Floor: below [`crate::plan`], which reads its runtime records and lines; it reads no plan.

use crate::options::Amplify;
use crate::report::model::{RuntimeInfo, RuntimeState};
use crate::report::table;
use crate::runtime::install::Installed;
use crate::runtime::{Runtime, Status};

/// The record of `rt` in `results.json` and `runtimes --json`.
pub fn runtime_info(rt: &Runtime) -> RuntimeInfo {
    let (status, reason) = match &rt.status {
        Status::Found => (RuntimeState::Found, None),
        Status::NotFound(r) => (RuntimeState::NotFound, Some(r.clone())),
        Status::Broken(r) => (RuntimeState::Broken, Some(r.clone())),
    };
    RuntimeInfo {
        name: rt.name.to_string(),
        label: rt.label.clone(),
        version: rt.version.clone(),
        path: rt.path.as_ref().map(|p| p.display().to_string()),
        status,
        reason,
        families: rt.families.iter().map(|s| s.to_string()).collect(),
    }
}

/// A runtime as `runtimes --json` lists it: its `results.json` record and how `--runtime`
/// selects it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Listed {
    /// The record ([`runtime_info`]).
    #[serde(flatten)]
    pub info: RuntimeInfo,
    /// `bun` (on `PATH`), `bun@1.3.14` (installed in the cache) or `bun=/path` (explicit).
    pub select: String,
}

/// `rt` as `runtimes --json` lists it.
pub fn listed(rt: &Runtime) -> Listed {
    Listed { info: runtime_info(rt), select: rt.selector.clone() }
}

/// A version `install` installed or found installed, as it lists it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Installation {
    /// The registry name (`bun`), or a library's npm name (`proper-lockfile`).
    pub runtime: String,
    /// The version (`1.3.14`).
    pub version: String,
    /// How `--runtime` selects it (`bun@1.3.14`).
    pub select: String,
    /// The npm package it came from.
    pub package: String,
    /// The registry's integrity string it was checked against, if it gave one.
    pub integrity: Option<String>,
    /// Its binary.
    pub path: String,
    /// Whether it was fetched now (false: it was installed already).
    pub fetched: bool,
}

impl Installation {
    /// The listing of `i`; `fetched` when it was fetched now.
    pub fn of(i: &Installed, fetched: bool) -> Installation {
        Installation {
            runtime: i.runtime.to_string(),
            version: i.version.to_string(),
            select: i.selector(),
            package: i.manifest.package.clone(),
            integrity: i.manifest.integrity.clone(),
            path: i.exe.display().to_string(),
            fetched,
        }
    }

    /// The listing of library `spec`, installed in `dir` (its `node_modules` folder); `fetched`
    /// when it was installed now.
    pub fn of_library(spec: &crate::handoff::LibrarySpec, dir: &std::path::Path, fetched: bool) -> Installation {
        Installation {
            runtime: spec.name.clone(),
            version: spec.version.to_string(),
            select: spec.to_string(),
            package: format!("npm {spec}"),
            integrity: None,
            path: dir.display().to_string(),
            fetched,
        }
    }
}

/// A runtime's discovery line (`found …`, `skip … not found: …`, `skip … broken: …`), control
/// characters escaped (a `--version` or a probe's first line must not drive the terminal).
pub fn status_line(rt: &Runtime) -> String {
    let path = rt.path.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
    let line = match &rt.status {
        Status::Found => format!("found    {:<22} {}", rt.label, path),
        Status::NotFound(r) => format!("skip     {:<22} not found: {r}", rt.name),
        Status::Broken(r) => format!("skip     {:<22} broken: {r}", rt.label),
    };
    table::escape_controls(&line).into_owned()
}

/// The status line for amplification; `None` when it is off by request.
pub fn amplify_line(amp: &Amplify) -> Option<String> {
    match amp {
        Amplify::Off => None,
        Amplify::On(a) => Some(format!(
            "amplify  {} µs after each file-system system call{} ({}, {})",
            a.delay_us(),
            match a.scope() {
                crate::exec::amplify::DelayScope::Race => " naming a race's paths",
                crate::exec::amplify::DelayScope::All => "",
            },
            a.version(),
            a.strace().display()
        )),
        Amplify::Unavailable(why) => Some(format!(
            "skip     amplified races: unavailable ({why}); verdicts rest on natural races and their bounds"
        )),
    }
}

/// Set once stdout is a closed pipe: later output is dropped.
static STDOUT_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Writes `text` to stdout. A closed pipe (`conformance variants | head -1`) is not an error
/// of the run, as in ripgrep: the rest of the output is dropped and the command ends
/// normally, so that its scratch folder and probes are still cleaned up. Never fails.
pub fn emit(text: &str) {
    use std::io::Write as _;
    use std::sync::atomic::Ordering;
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            STDOUT_CLOSED.store(true, Ordering::Relaxed);
        }
    }
}

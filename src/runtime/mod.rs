//! Runtime adapters: how to find, version, start and interpret each runtime.
//!
//! Like eshost's `lib/agents/<host>.js` and wptrunner's `browsers/<product>.py`, each adapter
//! overrides only what differs: the executables to look for, the version query, the probe
//! launch, and (rarely) error normalisation. The registry [`ADAPTERS`] lists them all.

mod bun;
mod cmd;
pub mod discover;
mod dotnet;
mod node;
mod normalize;
mod pwsh;

pub use discover::{discover, Discovery, Requested};
pub use normalize::normalize;

use std::path::{Path, PathBuf};

use serde::Serialize;

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
}

/// Whether a runtime can be measured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", content = "reason", rename_all = "kebab-case")]
pub enum Status {
    /// Found and answered its version query.
    Found,
    /// Not found; the reason says where the harness looked.
    NotFound(String),
    /// Found, but it failed its version query or its probe could not be built.
    Broken(String),
}

/// A discovered (or missing) runtime: one row of the tables.
#[derive(Debug, Clone, Serialize)]
pub struct Runtime {
    /// The adapter's name (`node`, `bun`, `deno`, `coreclr`, `mono`, `pwsh`, `powershell`, `cmd`).
    pub name: &'static str,
    /// The row label, e.g. `node 20.20.2`, `CoreCLR 3.1.23`, `cmd (Wine 8.0)`.
    pub label: String,
    /// The version string as reported (e.g. `20.20.2`).
    pub version: String,
    /// The executable (for `cmd` under Wine: the Wine loader).
    pub path: Option<PathBuf>,
    /// Found, not found or broken, with the reason.
    #[serde(flatten)]
    pub status: Status,
    /// True when given explicitly with `--runtime NAME=PATH`.
    pub explicit: bool,
    /// API families this runtime runs, in table order.
    pub families: Vec<&'static str>,
    /// A built probe artefact, for adapters that build one (C#).
    #[serde(skip)]
    pub artifact: Option<PathBuf>,
    #[serde(skip)]
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
    /// API families run by this runtime.
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
    /// How to start the probe for `family`.
    fn launch(&self, rt: &Runtime, family: &str, ctx: &ProbeContext) -> Launch;
    /// A multiplier for the per-attempt timeout (slow starters such as Wine).
    fn timeout_multiplier(&self) -> u32 {
        1
    }
    /// Why this runtime's races cannot be amplified even where strace works (shown in the
    /// row), or `None` when they can.
    fn no_amplification(&self) -> Option<String> {
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

//! Python 3 (CPython, or another implementation that runs the standard library), running
//! `probes/python/probe.py` in session mode with `-I -u`: isolated (no user site folder, no
//! `PYTHON*` variables, no script folder on `sys.path`, Python docs, "Command line and
//! environment") and unbuffered.
//!
//! Versions: Debian 12 packages one Python 3 (3.11), and PyPI is not reached here, so there is
//! no store of versions to install; another Python is measured as `-r python=/path/to/python3`.

use std::path::Path;

use super::{first_line, query, with_probe_tmp, Adapter, ProbeContext, Runtime};
use crate::exec::process::Launch;

/// Python 3 (`python3 --version` prints `Python 3.11.7`).
#[derive(Debug)]
pub struct Python;

impl Adapter for Python {
    fn name(&self) -> &'static str {
        "python"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["python3", "cpython"]
    }
    fn executables(&self) -> &'static [&'static str] {
        &["python3", "python"]
    }
    fn families(&self) -> &'static [&'static str] {
        &["python"]
    }
    fn version(&self, exe: &Path) -> Result<(String, String), String> {
        let line = first_line(&query(exe, &["--version"], &[])?);
        let v = line.strip_prefix("Python ").ok_or_else(|| format!("not a Python: `--version` printed {line:?}"))?;
        // the oldest the probe runs on (probes/PROTOCOL.md, "Oldest runtimes"); it would refuse
        // an older one itself, before its hello
        let minor = v.strip_prefix("3.").and_then(|r| r.split('.').next()).and_then(|m| m.parse::<u32>().ok());
        if minor.is_none_or(|m| m < 8) {
            return Err(format!("Python {v}: the probe needs Python 3.8 or later"));
        }
        Ok((v.to_string(), format!("python {v}")))
    }
    fn launch(&self, rt: &Runtime, _family: &str, ctx: &ProbeContext) -> Launch {
        let script = ctx.probes_dir.join("python").join("probe.py");
        let l = Launch::new(
            rt.path.clone().unwrap_or_default(),
            [std::ffi::OsString::from("-I"), "-u".into(), script.into_os_string()],
        )
        // file names as UTF-8 whatever the user's locale (PEP 540's UTF-8 mode: -I ignores
        // PYTHONUTF8, so the locale decides; C.UTF-8 is on every Debian)
        .with_env("LC_ALL", "C.UTF-8");
        with_probe_tmp(l, ctx)
    }
    fn versions_note(&self) -> Option<&'static str> {
        Some("Debian 12 packages one Python 3 (3.11), and PyPI serves no interpreters")
    }
    fn absent_hint(&self) -> String {
        "no python3 on PATH (Debian: apt-get install python3)".to_string()
    }
}

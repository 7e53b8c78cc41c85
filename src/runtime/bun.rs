//! Bun: runs the Node probe unchanged (`bun --version` prints `1.4.5`), for the `node` family
//! and for Bun's own API (`bun` family, `matrices/bun.toml`), which the probe offers on Bun.

use std::path::Path;

use super::{first_line, query, with_probe_tmp, Adapter, ProbeContext, Runtime};
use crate::exec::process::Launch;

/// Bun.
#[derive(Debug)]
pub struct Bun;

impl Adapter for Bun {
    fn name(&self) -> &'static str {
        "bun"
    }
    fn executables(&self) -> &'static [&'static str] {
        &["bun"]
    }
    fn families(&self) -> &'static [&'static str] {
        &["node", "bun"]
    }
    fn version(&self, exe: &Path) -> Result<(String, String), String> {
        let v = first_line(&query(exe, &["--version"], &[])?);
        Ok((v.clone(), format!("bun {v}")))
    }
    fn launch(&self, rt: &Runtime, _family: &str, ctx: &ProbeContext) -> Launch {
        let l = Launch::new(rt.path.clone().unwrap_or_default(), [ctx.probes_dir.join("node").join("probe.mjs")])
            .with_env("BUN_RUNTIME_TRANSPILER_CACHE_PATH", "0");
        with_probe_tmp(l, ctx)
    }
}

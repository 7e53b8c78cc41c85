//! Node.js and Deno. Node runs `probes/node/probe.mjs`; Deno runs `probes/deno/probe.ts` for
//! its own API and the same Node probe through `node:fs`.

use std::path::Path;

use super::{first_line, query, with_probe_tmp, Adapter, ProbeContext, Runtime};
use crate::exec::process::Launch;

/// Node.js (`node --version` prints `v20.20.2`).
#[derive(Debug)]
pub struct Node;

impl Adapter for Node {
    fn name(&self) -> &'static str {
        "node"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["nodejs"]
    }
    fn executables(&self) -> &'static [&'static str] {
        &["node"]
    }
    fn families(&self) -> &'static [&'static str] {
        &["node"]
    }
    fn version(&self, exe: &Path) -> Result<(String, String), String> {
        let v = first_line(&query(exe, &["--version"], &[])?);
        let v = v.trim_start_matches('v').to_string();
        Ok((v.clone(), format!("node {v}")))
    }
    fn launch(&self, rt: &Runtime, _family: &str, ctx: &ProbeContext) -> Launch {
        with_probe_tmp(
            Launch::new(rt.path.clone().unwrap_or_default(), [ctx.probes_dir.join("node").join("probe.mjs")]),
            ctx,
        )
    }
}

/// Deno (`deno --version` prints `deno 2.9.6 (stable, …)` first).
#[derive(Debug)]
pub struct Deno;

impl Adapter for Deno {
    fn name(&self) -> &'static str {
        "deno"
    }
    fn executables(&self) -> &'static [&'static str] {
        &["deno"]
    }
    fn families(&self) -> &'static [&'static str] {
        &["deno", "node"]
    }
    fn version(&self, exe: &Path) -> Result<(String, String), String> {
        let out = query(exe, &["--version"], &[("NO_COLOR", "1")])?;
        let v = first_line(&out).split_whitespace().nth(1).unwrap_or("?").to_string();
        Ok((v.clone(), format!("deno {v}")))
    }
    fn launch(&self, rt: &Runtime, family: &str, ctx: &ProbeContext) -> Launch {
        let script = if family == "deno" {
            ctx.probes_dir.join("deno").join("probe.ts")
        } else {
            ctx.probes_dir.join("node").join("probe.mjs")
        };
        let mut args: Vec<std::ffi::OsString> = vec!["run".into(), "-A".into(), "--quiet".into(), "--no-config".into()];
        // Deno 2 and later: an npm library loaded from a node_modules folder (the libraries the
        // hand-off recipes race, a user's lock module) resolves its own dependencies from
        // there, as under Node; without it, atomically@2.1.1's `import "stubborn-fs"` fails
        // with `Import "stubborn-fs" not a dependency` (Deno 2.9.6). Deno 1 has no `manual`.
        if rt.version.split('.').next().and_then(|m| m.parse::<u32>().ok()).is_some_and(|m| m >= 2) {
            args.push("--node-modules-dir=manual".into());
        }
        args.push(script.into());
        let mut l = Launch::new(rt.path.clone().unwrap_or_default(), args);
        // keep Deno's module cache inside the scratch folder: the harness writes nowhere else
        l = l.with_env("DENO_DIR", ctx.scratch_top.join("deno-dir")).with_env("NO_COLOR", "1");
        with_probe_tmp(l.with_env("DENO_NO_UPDATE_CHECK", "1"), ctx)
    }
}

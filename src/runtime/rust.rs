//! Rust's standard library: `probes/rust/` (a crate of its own, std calls only; `serde_json`
//! and `libc` for the protocol and the clock), built once per source and compiler by the
//! machine's `cargo` into the cache, and run in session mode. The crates come from where the
//! harness's come from: cargo's registry, or the source replacement its configuration names
//! (an offline mirror).

use std::path::{Path, PathBuf};

use super::{first_line, query, with_probe_tmp, Adapter, ProbeContext, Runtime};
use crate::exec::process::Launch;

/// Rust (`rustc --version` prints `rustc 1.95.0 (59807616e 2026-04-14)`), found by its `cargo`.
#[derive(Debug)]
pub struct Rust;

/// The probe crate's files, whose bytes name the build in the cache.
const PROBE_FILES: &[&str] = &["Cargo.toml", "Cargo.lock", "src/main.rs"];

/// The `rustc` that `cargo` builds with: `RUSTC` where set, else the one beside `cargo`, else
/// `rustc` on `PATH`.
fn rustc_for(cargo: &Path) -> PathBuf {
    if let Some(r) = std::env::var_os("RUSTC") {
        return PathBuf::from(r);
    }
    let beside = cargo.with_file_name("rustc");
    if beside.is_file() {
        return beside;
    }
    which::which("rustc").unwrap_or_else(|_| PathBuf::from("rustc"))
}

impl Adapter for Rust {
    fn name(&self) -> &'static str {
        "rust"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["rustc", "cargo"]
    }
    fn executables(&self) -> &'static [&'static str] {
        &["cargo"]
    }
    fn families(&self) -> &'static [&'static str] {
        &["rust"]
    }
    fn version(&self, exe: &Path) -> Result<(String, String), String> {
        let line = first_line(&query(&rustc_for(exe), &["--version"], &[])?);
        let v = line.split_whitespace().nth(1).ok_or_else(|| format!("no version in `rustc --version`: {line:?}"))?;
        Ok((v.to_string(), format!("rust {v}")))
    }
    fn prepare(&self, rt: &mut Runtime, ctx: &ProbeContext) -> Result<(), String> {
        let cargo = rt.path.clone().unwrap_or_default();
        let crate_dir = ctx.probes_dir.join("rust");
        let files: Vec<PathBuf> = PROBE_FILES.iter().map(|f| crate_dir.join(f)).collect();
        let hash = super::source_hash(&files)?;
        let dir = ctx.cache_dir.join("rust").join(format!("probe-{hash}-{}", rt.version));
        let exe = dir.join("probe");
        if !exe.is_file() {
            let tmp = super::staging_beside(&dir, ".build-")?;
            let target = ctx.cache_dir.join("rust").join("target");
            let build = |offline: bool| {
                let mut args: Vec<std::ffi::OsString> = vec![
                    "build".into(),
                    "--release".into(),
                    "--locked".into(),
                    "--quiet".into(),
                    "--manifest-path".into(),
                    crate_dir.join("Cargo.toml").into(),
                    "--target-dir".into(),
                    target.clone().into(),
                ];
                if offline {
                    args.push("--offline".into());
                }
                let l = Launch::new(&cargo, args)
                    .with_env("CARGO_TERM_COLOR", "never")
                    .with_env("RUSTC", rustc_for(&cargo));
                crate::exec::process::run_capture(&l, tmp.path(), std::time::Duration::from_secs(600))
            };
            // a machine that reaches no registry still builds from cargo's own cache
            let (ok, out, err) = match build(false)? {
                (false, _, _) => build(true)?,
                done => done,
            };
            let built = target.join("release").join("probe");
            if !ok || !built.is_file() {
                return Err(format!("cargo failed to build the Rust probe: {}", last_error(&format!("{err}\n{out}"))));
            }
            std::fs::copy(&built, tmp.path().join("probe"))
                .map_err(|e| format!("cannot copy {}: {e}", built.display()))?;
            super::publish_staged(tmp, &dir, &exe)?;
        }
        rt.artifact = Some(exe);
        Ok(())
    }
    fn launch(&self, rt: &Runtime, _family: &str, ctx: &ProbeContext) -> Launch {
        let l = Launch::new(rt.artifact.clone().unwrap_or_default(), std::iter::empty::<std::ffi::OsString>())
            .with_env("CONFORMANCE_RUSTC_VERSION", &rt.version);
        with_probe_tmp(l, ctx)
    }
    fn versions_note(&self) -> Option<&'static str> {
        Some("a Rust toolchain comes from rustup or Debian's rustc/cargo")
    }
    fn absent_hint(&self) -> String {
        "no cargo on PATH (rustup, or Debian: apt-get install cargo)".to_string()
    }
}

/// The first line of cargo's output that starts with `error`, else its first line.
fn last_error(s: &str) -> String {
    s.lines().map(str::trim).find(|l| l.starts_with("error")).map_or_else(|| first_line(s), str::to_string)
}

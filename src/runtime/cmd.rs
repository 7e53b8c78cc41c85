//! cmd.exe, in one-shot mode (`probes/cmd/probe.cmd`, one process per attempt): the real
//! `cmd.exe` on Windows, Wine's `cmd` elsewhere (row label `cmd (Wine 8.0)`).
//!
//! Under Wine the harness uses a private prefix (`WINEPREFIX`, in the cache folder, or
//! `CONFORMANCE_WINEPREFIX`) and `WINEDEBUG=-all`; the prefix's first start takes seconds, so
//! [`Adapter::prepare`] starts it once before any timed attempt (`../shared/RUNTIMES.md`).

use std::path::Path;

use super::{first_line, query, Adapter, ProbeContext, Runtime};
use crate::exec::contender::Mode;
use crate::exec::process::Launch;
use crate::exec::scratch::{spell, PathStyle};

/// cmd.exe.
#[derive(Debug)]
pub struct Cmd;

fn wine_prefix(ctx: &ProbeContext) -> std::ffi::OsString {
    std::env::var_os("CONFORMANCE_WINEPREFIX").unwrap_or_else(|| ctx.cache_dir.join("wineprefix").into_os_string())
}

impl Adapter for Cmd {
    fn name(&self) -> &'static str {
        "cmd"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["cmd.exe"]
    }
    fn executables(&self) -> &'static [&'static str] {
        if cfg!(windows) {
            &["cmd"]
        } else {
            &["wine", "wine64"]
        }
    }
    fn fallback_paths(&self) -> &'static [&'static str] {
        if cfg!(windows) {
            &[]
        } else {
            &["/usr/lib/wine/wine64", "/usr/lib/wine/wine"]
        }
    }
    fn families(&self) -> &'static [&'static str] {
        &["cmd"]
    }
    fn mode(&self) -> Mode {
        Mode::OneShot
    }
    fn path_style(&self) -> PathStyle {
        if cfg!(windows) {
            PathStyle::Native
        } else {
            PathStyle::Wine
        }
    }
    fn version(&self, exe: &Path) -> Result<(String, String), String> {
        if cfg!(windows) {
            let out = query(exe, &["/d", "/c", "ver"], &[])?;
            let line = first_line(&out);
            let v = line
                .split("Version ")
                .nth(1)
                .map(|r| r.trim_end_matches(']').to_string())
                .unwrap_or_else(|| line.clone());
            Ok((v.clone(), format!("cmd (Windows {v})")))
        } else {
            let out = query(exe, &["--version"], &[("WINEDEBUG", "-all")])?;
            let line = first_line(&out);
            let v = line.trim_start_matches("wine-").split_whitespace().next().unwrap_or("?").to_string();
            Ok((v.clone(), format!("cmd (Wine {v})")))
        }
    }
    fn prepare(&self, rt: &mut Runtime, ctx: &ProbeContext) -> Result<(), String> {
        if cfg!(windows) {
            return Ok(());
        }
        let exe = rt.path.clone().unwrap_or_default();
        let prefix = wine_prefix(ctx);
        std::fs::create_dir_all(&prefix)
            .map_err(|e| format!("cannot create the Wine prefix {}: {e}", prefix.to_string_lossy()))?;
        let l =
            Launch::new(exe, ["cmd", "/d", "/c", "ver"]).with_env("WINEDEBUG", "-all").with_env("WINEPREFIX", &prefix);
        let (ok, out, err) =
            crate::exec::process::run_capture(&l, &ctx.cache_dir, std::time::Duration::from_secs(180))?;
        if !ok {
            return Err(format!("wine cmd did not start: {}", first_line(&format!("{err}\n{out}"))));
        }
        Ok(())
    }
    fn launch(&self, rt: &Runtime, _family: &str, ctx: &ProbeContext) -> Launch {
        let script = ctx.probes_dir.join("cmd").join("probe.cmd");
        let exe = rt.path.clone().unwrap_or_default();
        if cfg!(windows) {
            Launch::new(exe, [std::ffi::OsString::from("/d"), "/c".into(), script.into()])
        } else {
            Launch::new(exe, ["cmd".to_string(), "/d".into(), "/c".into(), spell(&script, PathStyle::Wine)])
                .with_env("WINEDEBUG", "-all")
                .with_env("WINEPREFIX", wine_prefix(ctx))
        }
    }
    fn timeout_multiplier(&self) -> u32 {
        3
    }
    fn absent_hint(&self) -> String {
        if cfg!(windows) {
            "no cmd.exe on PATH".into()
        } else {
            "no wine, wine64 or /usr/lib/wine/wine64 (install Debian's wine64)".into()
        }
    }
}

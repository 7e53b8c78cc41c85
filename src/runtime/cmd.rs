//! cmd.exe, in one-shot mode (`probes/cmd/probe.cmd`, one process per attempt): the real
//! `cmd.exe` on Windows, Wine's `cmd` elsewhere (row label `cmd (Wine 8.0)`).
//!
//! Under Wine the harness uses a private prefix (`WINEPREFIX`, in the cache folder, or
//! `CONFORMANCE_WINEPREFIX`) and `WINEDEBUG=-all`; the prefix's first start takes seconds, so
//! [`Adapter::prepare`] starts it once before any timed attempt (`docs/RUNTIMES.md`).

use std::path::Path;

use super::{first_line, query, with_probe_tmp, Adapter, ProbeContext, Runtime};
use crate::exec::contender::Mode;
use std::time::Duration;

use crate::exec::process::{run_status, Launch};
use crate::exec::scratch::{spell, PathStyle};

/// cmd.exe.
#[derive(Debug)]
pub struct Cmd;

fn wine_prefix(ctx: &ProbeContext) -> std::ffi::OsString {
    std::env::var_os("CONFORMANCE_WINEPREFIX").unwrap_or_else(|| ctx.cache_dir.join("wineprefix").into_os_string())
}

/// A UTF-8 locale for Wine: without one, non-ASCII values in the environment (paths with
/// Japanese names) reach cmd damaged (measured with Wine 8.0).
fn utf8_lang() -> std::ffi::OsString {
    match std::env::var("LANG") {
        Ok(l) if l.to_ascii_lowercase().contains("utf-8") || l.to_ascii_lowercase().contains("utf8") => l.into(),
        _ => "C.UTF-8".into(),
    }
}

/// Starts a persistent Wine server for the prefix and Wine's services in it, with the Wine
/// loader `exe`. Errors: why `wine cmd /c exit` failed.
fn start_wine(exe: &Path, ctx: &ProbeContext) -> Result<(), String> {
    let server = wineserver(exe);
    // A persistent wine server for the prefix turns a 0.7 s cmd start into about 0.1 s;
    // `-p30` makes it exit by itself 30 s after its last client, should the run die.
    let start_server = || {
        if let Some(ws) = &server {
            let l = wine_env(Launch::new(ws, ["-p30"]), ctx);
            let _ = run_status(&l, &ctx.cache_dir, Duration::from_secs(30));
        }
    };
    start_server();
    if let Some(ws) = &server {
        // a second Ctrl-C exits at once: the server and Wine's services (outside the harness's
        // process groups) are stopped the way cleanup stops them
        crate::interrupt::run_on_abort(wine_env(Launch::new(ws, ["-k"]), ctx), ctx.cache_dir.clone());
    }
    // the first start of a prefix creates it (seconds); the wine services it starts keep
    // inherited pipes open, so wait for the exit, not for the end of output
    let l = wine_env(Launch::new(exe, ["cmd", "/d", "/c", "exit"]), ctx);
    if run_status(&l, &ctx.cache_dir, Duration::from_secs(180))? {
        return Ok(());
    }
    // once more, after a second and a new server: the start failed once in a CI run of the
    // tests, its cause not established (the likeliest: the previous run's cleanup had just
    // stopped the prefix's server, and `wineserver -k` can return before the server is gone)
    std::thread::sleep(Duration::from_secs(1));
    start_server();
    match run_status(&l, &ctx.cache_dir, Duration::from_secs(180))? {
        true => Ok(()),
        false => Err("`wine cmd /c exit` failed in the private prefix, twice".into()),
    }
}

/// The `wineserver` next to the Wine loader (`/usr/lib/wine/wineserver64` beside
/// `/usr/lib/wine/wine64`), or on PATH.
fn wineserver(wine: &Path) -> Option<std::path::PathBuf> {
    let dir = wine.canonicalize().ok()?.parent()?.to_path_buf();
    ["wineserver", "wineserver64"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file())
        .or_else(|| which::which("wineserver").ok())
}

/// The environment of every Wine process the harness starts: the private prefix, no debug
/// output, a UTF-8 locale, and the scratch's temp folder ([`with_probe_tmp`]). The temp
/// folder matters beyond tidiness: Debian's Wine keeps the server's socket in
/// `$TMPDIR/wine-XXXXXX` (its name recorded in `$WINEPREFIX/wineserver`), so the server
/// [`Adapter::prepare`] starts and the probes must see the same `TMPDIR`, or each probe would
/// start a server of its own.
fn wine_env(l: Launch, ctx: &ProbeContext) -> Launch {
    let l = l.with_env("WINEDEBUG", "-all").with_env("WINEPREFIX", wine_prefix(ctx)).with_env("LANG", utf8_lang());
    with_probe_tmp(l, ctx)
}

/// `path` as cmd under Wine names it from the working folder `cwd`, when both lie below
/// `top`: `..\` once per folder `cwd` is below `top`, then the rest of `path` (e.g.
/// `..\probes\cmd\probe.cmd`); `None` otherwise (e.g. `--probes DIR` elsewhere).
fn relative_below(path: &Path, top: &Path, cwd: &Path) -> Option<String> {
    let rest = path.strip_prefix(top).ok()?;
    let up = cwd.strip_prefix(top).ok()?.components().count();
    let parts: Vec<String> = std::iter::repeat_n("..".to_string(), up)
        .chain(rest.components().map(|c| c.as_os_str().to_string_lossy().into_owned()))
        .collect();
    Some(parts.join("\\"))
}

impl Adapter for Cmd {
    fn name(&self) -> &'static str {
        "cmd"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["cmd.exe", "wine"]
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
    /// Under Wine a persistent loop per contender ([`crate::exec::cmdloop`]); on Windows one
    /// process per attempt, the mode measured there (the loop is measured under Wine only).
    fn mode(&self) -> Mode {
        if cfg!(windows) {
            Mode::OneShot
        } else {
            Mode::Loop(self.path_style())
        }
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
        std::fs::create_dir_all(&ctx.cache_dir)
            .map_err(|e| format!("cannot create the cache folder {}: {e}", ctx.cache_dir.display()))?;
        let prefix = wine_prefix(ctx);
        std::fs::create_dir_all(&prefix)
            .map_err(|e| format!("cannot create the Wine prefix {}: {e}", prefix.to_string_lossy()))?;
        start_wine(&exe, ctx)
    }
    fn resume(&self, rt: &Runtime, ctx: &ProbeContext) -> Result<(), String> {
        if cfg!(windows) {
            return Ok(());
        }
        // the prefix exists (prepare made it): about 0.7 s here
        start_wine(&rt.path.clone().unwrap_or_default(), ctx)
    }
    fn cleanup(&self, rt: &Runtime, ctx: &ProbeContext) {
        if cfg!(windows) {
            return;
        }
        if let Some(ws) = rt.path.as_deref().and_then(wineserver) {
            let l = wine_env(Launch::new(ws, ["-k"]), ctx);
            let _ = run_status(&l, &ctx.cache_dir, Duration::from_secs(30));
        }
    }
    fn launch(&self, rt: &Runtime, _family: &str, ctx: &ProbeContext) -> Launch {
        let script = ctx.probes_dir.join("cmd").join("probe.cmd");
        let exe = rt.path.clone().unwrap_or_default();
        if cfg!(windows) {
            with_probe_tmp(Launch::new(exe, [std::ffi::OsString::from("/d"), "/c".into(), script.into()]), ctx)
        } else {
            // cmd parses its command line: a `&`, `^` or `%VAR%` in the scratch folder's path
            // (`--fs-root`) would split or expand the script's name, so the built-in probes
            // are named relative to the folder the probe runs in where they can be
            let name = relative_below(&script, &ctx.scratch_top, &ctx.scratch_root)
                .unwrap_or_else(|| spell(&script, PathStyle::Wine));
            wine_env(Launch::new(exe, ["cmd".to_string(), "/d".into(), "/c".into(), name]), ctx)
        }
    }
    fn timeout_multiplier(&self) -> u32 {
        3
    }
    fn no_amplification(&self) -> Option<String> {
        // Measured here (Wine 8.0, strace 6.1): one-shot, each contender's start-up makes
        // thousands of file-system calls before the command runs, about 6 s per amplified
        // trial at 500 µs. With the loop (start-up paid once per contender) an amplified race
        // of cmd.mkdir ran at about 5 trials/s at 1,000 µs (its control caught 20/20; strace
        // counted about 100 file-system calls per loop attempt, Wine resolving each path): the
        // default 4 orderings × 200 trials would take about 3 minutes per cell, 30 for the
        // family, so cmd races stay natural by default.
        Some(
            "not run for cmd: under Wine every cmd attempt makes about 100 file-system calls (Wine's path \
             lookups, the request files), each delayed: about 5 amplified trials/s with the loop driver \
             (measured), minutes per cell"
                .into(),
        )
    }
    fn absent_hint(&self) -> String {
        if cfg!(windows) {
            "no cmd.exe on PATH".into()
        } else {
            "no wine, wine64 or /usr/lib/wine/wine64 (install Debian's wine64)".into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::relative_below;
    use std::path::Path;

    /// The script's name on cmd's command line holds nothing of the scratch folder's own path
    /// (`--fs-root` may hold `&`, `%PATH%`, `^`), whether the probe runs in the top folder or
    /// in a `--path-segment` folder inside it.
    #[test]
    fn the_probe_is_named_relative_to_the_folder_it_runs_in() {
        let top = Path::new("/tmp/a&b %PATH% ^c/conformance-x");
        let script = top.join("probes").join("cmd").join("probe.cmd");
        assert_eq!(relative_below(&script, top, top).as_deref(), Some("probes\\cmd\\probe.cmd"));
        let seg = top.join("名前 & 100% ^!");
        assert_eq!(relative_below(&script, top, &seg).as_deref(), Some("..\\probes\\cmd\\probe.cmd"));
        // probes given with --probes elsewhere keep their full name
        assert_eq!(relative_below(Path::new("/src/probes/cmd/probe.cmd"), top, top), None);
    }
}

//! Java (an OpenJDK), running `probes/java/Probe.java` in session mode, compiled once per
//! source and JDK by the `javac` beside the `java` measured (class files of a newer `javac`
//! do not load on an older `java`: `UnsupportedClassVersionError`).

use std::path::{Path, PathBuf};

use super::{first_line, query, with_probe_tmp, Adapter, ProbeContext, Runtime};
use crate::exec::process::Launch;

/// Java (`java --version` prints `openjdk 17.0.15 2025-04-15` first).
#[derive(Debug)]
pub struct Java;

/// The `javac` of the JDK that `java` belongs to: beside it once symbolic links are resolved
/// (Debian's `/usr/bin/java` → `/etc/alternatives/java` → `/usr/lib/jvm/…/bin/java`), else on
/// `PATH`. Errors: neither exists (a JRE without a JDK).
fn javac_for(java: &Path) -> Result<PathBuf, String> {
    let real = std::fs::canonicalize(java).unwrap_or_else(|_| java.to_path_buf());
    let beside = real.with_file_name("javac");
    if beside.is_file() {
        return Ok(beside);
    }
    which::which("javac").map_err(|_| {
        format!(
            "no javac beside {} or on PATH: a JDK is needed to build the probe (Debian: openjdk-17-jdk-headless)",
            real.display()
        )
    })
}

impl Adapter for Java {
    fn name(&self) -> &'static str {
        "java"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["jdk", "openjdk"]
    }
    fn executables(&self) -> &'static [&'static str] {
        &["java"]
    }
    fn families(&self) -> &'static [&'static str] {
        &["java"]
    }
    fn version(&self, exe: &Path) -> Result<(String, String), String> {
        // `--version` (JDK 9 and later) prints on stdout; `-version` on stderr
        let line = first_line(&query(exe, &["--version"], &[])?);
        let mut words = line.split_whitespace();
        let vendor = words.next().unwrap_or("java").to_string();
        let v = words.next().ok_or_else(|| format!("no version in `java --version`: {line:?}"))?.to_string();
        Ok((v.clone(), format!("{vendor} {v}")))
    }
    fn prepare(&self, rt: &mut Runtime, ctx: &ProbeContext) -> Result<(), String> {
        let java = rt.path.clone().unwrap_or_default();
        let javac = javac_for(&java)?;
        let src = ctx.probes_dir.join("java").join("Probe.java");
        let hash = super::source_hash(std::slice::from_ref(&src))?;
        let dir = ctx.cache_dir.join("java").join(format!("probe-{hash}-{}", rt.version));
        if !dir.join("Probe.class").is_file() {
            let tmp = super::staging_beside(&dir, ".build-")?;
            let l = Launch::new(
                javac,
                [
                    std::ffi::OsString::from("-encoding"),
                    "UTF-8".into(),
                    "-nowarn".into(),
                    "-d".into(),
                    tmp.path().into(),
                    src.into_os_string(),
                ],
            );
            let (ok, out, err) =
                crate::exec::process::run_capture(&l, tmp.path(), std::time::Duration::from_secs(300))?;
            if !ok || !tmp.path().join("Probe.class").is_file() {
                return Err(format!("javac failed to build the Java probe: {}", first_line(&format!("{err}\n{out}"))));
            }
            super::publish_staged(tmp, &dir, &dir.join("Probe.class"))?;
        }
        rt.artifact = Some(dir);
        Ok(())
    }
    fn launch(&self, rt: &Runtime, _family: &str, ctx: &ProbeContext) -> Launch {
        let classes = rt.artifact.clone().unwrap_or_default();
        let l = Launch::new(
            rt.path.clone().unwrap_or_default(),
            [
                std::ffi::OsString::from("-Dfile.encoding=UTF-8"),
                "-Dsun.jnu.encoding=UTF-8".into(),
                // a small, quick-starting VM: the probe is one thread doing system calls
                "-XX:+UseSerialGC".into(),
                "-XX:TieredStopAtLevel=1".into(),
                "-Xshare:auto".into(),
                "-cp".into(),
                classes.into_os_string(),
                "Probe".into(),
            ],
        )
        // file names as UTF-8: the JDK takes `sun.jnu.encoding` from the locale at start
        .with_env("LC_ALL", "C.UTF-8");
        with_probe_tmp(l, ctx)
    }
    fn timeout_multiplier(&self) -> u32 {
        2
    }
    fn versions_note(&self) -> Option<&'static str> {
        Some("Debian 12 packages one JDK (OpenJDK 17)")
    }
    fn absent_hint(&self) -> String {
        "no java on PATH (Debian: apt-get install openjdk-17-jdk-headless)".to_string()
    }
}

//! Shared helpers: a command builder with the project's runtimes on PATH, fixture paths,
//! and the rule for absent runtimes (a visible skip locally, a failure in CI).

use std::path::{Path, PathBuf};

use assert_cmd::Command;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn fixtures() -> PathBuf {
    root().join("tests").join("fixtures")
}

/// The binary with a private cache folder and quiet progress.
pub fn conformance() -> Command {
    let mut c = Command::cargo_bin("conformance").expect("binary built");
    c.env("CONFORMANCE_CACHE_DIR", root().join("target").join("test-cache"));
    c
}

/// Runtimes CI must have: `CONFORMANCE_REQUIRE_RUNTIMES` (comma-separated), or on Linux CI
/// (`CI=true`) node, bun, deno, coreclr, mono, pwsh and cmd (Wine).
pub fn required_runtimes() -> Vec<String> {
    if let Ok(v) = std::env::var("CONFORMANCE_REQUIRE_RUNTIMES") {
        return v.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
    }
    if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") && cfg!(target_os = "linux") {
        return ["node", "bun", "deno", "coreclr", "mono", "pwsh", "cmd"].iter().map(|s| s.to_string()).collect();
    }
    Vec::new()
}

/// Whether runtime `name` is found and working. When it is not: panics if CI requires it,
/// otherwise prints a SKIPPED line (shown by `cargo test -- --show-output`) and returns false.
pub fn available(name: &str) -> bool {
    let out = conformance().args(["runtimes", "--json", "--runtime", name]).output().expect("runs");
    assert!(out.status.success(), "runtimes --json failed: {}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let rt = &v[0];
    if rt["status"] == "found" {
        return true;
    }
    let why = format!("{} {}: {}", name, rt["status"], rt["reason"]);
    if required_runtimes().iter().any(|r| r == name) {
        panic!("required runtime missing in CI: {why} (run `bash .ci/install`)");
    }
    eprintln!("SKIPPED: runtime {why}");
    false
}

/// Runs `run` with `args` (plus `--out`, `--fs-root` in fresh temporary folders, and `-q`),
/// asserts it succeeded, and returns (results.json, stdout).
pub fn run(args: &[&str]) -> (serde_json::Value, String) {
    let out = tempfile::tempdir().unwrap();
    let fs_root = tempfile::tempdir().unwrap();
    let a = conformance()
        .arg("run")
        .args(args)
        .arg("-q")
        .arg("--out")
        .arg(out.path())
        .arg("--fs-root")
        .arg(fs_root.path())
        .assert();
    let o = a.get_output();
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "run {args:?} failed:\n{stdout}\n{}", String::from_utf8_lossy(&o.stderr));
    (read_json(&out.path().join("results.json")), stdout)
}

pub fn read_json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).expect("results.json written")).expect("valid json")
}

/// Cells of a results.json matching a variant and target/scenario.
#[cfg_attr(not(unix), expect(dead_code, reason = "used by the Unix-only fault tests"))]
pub fn cells<'a>(r: &'a serde_json::Value, variant: &str, scenario: &str) -> Vec<&'a serde_json::Value> {
    r["cells"]
        .as_array()
        .expect("cells")
        .iter()
        .filter(|c| c["variant"] == variant && c["scenario"] == scenario)
        .collect()
}

/// Serialises the tests that race real processes: two races at once on two cores would
/// measure each other's load, and cmd tests share one Wine prefix.
pub fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Writes an executable `name` holding `script` into a new temporary folder (kept alive by the
/// returned guard): a fake runtime for one test.
#[cfg(unix)]
pub fn script(name: &str, script: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join(name);
    std::fs::write(&p, script).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    (t, p)
}

/// An old runtime installed by `bash .ci/install old` (`.runtimes/old/<name>-<version>/<exe>`),
/// or `None` with a SKIPPED line (a failure when CI requires the runtime).
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
pub fn old_runtime(name: &str, version: &str) -> Option<std::path::PathBuf> {
    let p = root().join(".runtimes").join("old").join(format!("{name}-{version}")).join(name);
    if p.is_file() {
        return Some(p);
    }
    let why = format!("{name} {version}: {} not installed (run `bash .ci/install old`)", p.display());
    if required_runtimes().iter().any(|r| r == name) {
        panic!("required old runtime missing in CI: {why}");
    }
    eprintln!("SKIPPED: old runtime {why}");
    None
}

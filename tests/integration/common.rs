//! Shared helpers: a command builder with the project's runtimes on PATH, fixture paths,
//! and the rule for absent runtimes (a visible skip locally, a failure in CI).

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use conformance::domain::{Scenario, TargetState};
use conformance::matrix::SourceKind;
use conformance::report::model::{Cell, Results};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn fixtures() -> PathBuf {
    root().join("tests").join("fixtures")
}

/// The binary with a private cache folder and quiet progress.
pub fn conformance() -> Command {
    let mut c = Command::cargo_bin("conformance").expect("binary built");
    c.env("CONFORMANCE_CACHE_DIR", test_cache_dir());
    // the full layout, without colour, whatever terminal the tests run in: tests of fitting
    // and colour set these themselves
    c.env_remove("COLUMNS").env_remove("CLICOLOR_FORCE");
    c
}

/// The cache folder (`--cache-dir`) every [`conformance`] command of the tests uses:
/// `target/test-cache`, kept between test runs as the build is.
pub fn test_cache_dir() -> std::path::PathBuf {
    root().join("target").join("test-cache")
}

/// Runtimes CI must have: `CONFORMANCE_REQUIRE_RUNTIMES` (comma-separated), or on Linux CI
/// (`CI=true`) node, bun, deno, coreclr, mono, pwsh, cmd (Wine), python, java, rust, dash and
/// bash.
pub fn required_runtimes() -> Vec<String> {
    if let Ok(v) = std::env::var("CONFORMANCE_REQUIRE_RUNTIMES") {
        return v.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
    }
    if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") && cfg!(target_os = "linux") {
        return ["node", "bun", "deno", "coreclr", "mono", "pwsh", "cmd", "python", "java", "rust", "dash", "bash"]
            .iter()
            .map(|s| s.to_string())
            .collect();
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
    let (out, stdout) = run_in_temp(args, None);
    (read_json(&out.path().join("results.json")), stdout)
}

/// [`run`]'s run, its scratch folder in `fs_root` (default: a fresh temporary folder):
/// returns the output folder (removed when dropped) and stdout.
fn run_in_temp(args: &[&str], fs_root: Option<&Path>) -> (tempfile::TempDir, String) {
    let out = tempfile::tempdir().unwrap();
    let temp_root = tempfile::tempdir().unwrap();
    let fs_root = fs_root.unwrap_or(temp_root.path());
    let a = conformance()
        .arg("run")
        .args(args)
        .arg("-q")
        .arg("--out")
        .arg(out.path())
        .arg("--fs-root")
        .arg(fs_root)
        .assert();
    let o = a.get_output();
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "run {args:?} failed:\n{stdout}\n{}", String::from_utf8_lossy(&o.stderr));
    (out, stdout)
}

pub fn read_json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).expect("results.json written")).expect("valid json")
}

/// A results file read back as the crate's own [`Results`] type (as [`Run::results`] does).
pub fn read_results(p: &Path) -> Results {
    conformance::report::json::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
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

/// A `conformance run` for a test, built flag by flag (in the manner of just's `Test`): it
/// runs quiet, in fresh temporary `--out` and `--fs-root` folders, and [`Run::results`] reads
/// `results.json` back as the crate's own [`Results`] type, so that a test reads typed fields
/// instead of JSON by string keys.
#[derive(Debug, Default, Clone)]
pub struct Run {
    args: Vec<String>,
    fs_root: Option<PathBuf>,
}

impl Run {
    /// A run with no flag yet (a bare `run` measures every runtime found: name one).
    pub fn new() -> Run {
        Run::default()
    }

    /// `-r LIST`.
    pub fn runtime(self, list: &str) -> Run {
        self.args(&["-r", list])
    }

    /// `-v LIST`.
    pub fn variants(self, list: &str) -> Run {
        self.args(&["-v", list])
    }

    /// `-n N`.
    pub fn trials(self, n: u32) -> Run {
        self.args(&["-n", &n.to_string()])
    }

    /// `--amplify off`: natural races only.
    pub fn natural_only(self) -> Run {
        self.args(&["--amplify", "off"])
    }

    /// Any other flags, in order.
    pub fn args(mut self, more: &[&str]) -> Run {
        self.args.extend(more.iter().map(|s| s.to_string()));
        self
    }

    /// `--fs-root DIR`: the scratch folder in `dir`, which the test inspects afterwards.
    pub fn fs_root(mut self, dir: &Path) -> Run {
        self.fs_root = Some(dir.to_path_buf());
        self
    }

    /// The flags given so far (without `--fs-root`).
    pub fn argv(&self) -> Vec<&str> {
        self.args.iter().map(String::as_str).collect()
    }

    /// The cells `run --dry-run --json` lists for these flags: (id, conditional).
    pub fn planned(&self) -> Vec<(String, bool)> {
        let a = conformance().arg("run").args(&self.args).args(["--dry-run", "--json"]).assert().success();
        let v: serde_json::Value = serde_json::from_slice(&a.get_output().stdout).expect("dry-run json");
        let cells = v["cells"].as_array().expect("cells");
        cells.iter().map(|c| (c["id"].as_str().expect("id").to_string(), c["conditional"] == true)).collect()
    }

    /// [`Run::results`], with what the run printed on stdout (its tables).
    pub fn output(&self) -> (Results, String) {
        let (out, stdout) = run_in_temp(&self.argv(), self.fs_root.as_deref());
        (read_results(&out.path().join("results.json")), stdout)
    }

    /// Runs it, asserts that it succeeded, and reads its results back.
    pub fn results(&self) -> Results {
        self.output().0
    }
}

/// The one cell of `r` for `variant` with source kind `source` (`None`: the variant's own),
/// `scenario` and `target`; panics naming what it looked for.
pub fn cell<'a>(
    r: &'a Results,
    variant: &str,
    source: Option<SourceKind>,
    scenario: Scenario,
    target: TargetState,
) -> &'a Cell {
    let mut found = r
        .cells
        .iter()
        .filter(|c| c.variant == variant && c.source == source && c.scenario == scenario && c.target == target);
    let c = found.next().unwrap_or_else(|| panic!("no cell {variant} {source:?} {scenario:?} {target:?}"));
    assert!(found.next().is_none(), "two cells {variant} {source:?} {scenario:?} {target:?}");
    c
}

//! Progress and scripting (issue 10, item 7): the progress bar is drawn on a terminal only
//! (cells done of the plan's total, elapsed time, the runtime, variant and scenario under way),
//! never with `--quiet` or when stderr is a pipe; `--quiet` drops the status lines; `run
//! --json` prints exactly `results.json` on stdout. The terminal is a pseudo-terminal made by
//! util-linux's `script`.

use std::path::{Path, PathBuf};

use crate::common::{conformance, fixtures, read_results};

/// The arguments of a quick run of `node.fake.wx` on the fake runtime of the fault tests.
fn quick_run(out: &Path) -> Vec<String> {
    let fake = fixtures().join("fake-runtimes").join("faults").join("node");
    [
        "--matrices",
        &fixtures().join("matrices").join("faults").display().to_string(),
        "run",
        "-r",
        &format!("node={}", fake.display()),
        "-v",
        "node.fake.wx",
        "-n",
        "3",
        "--amplify",
        "off",
        "--out",
        &out.display().to_string(),
    ]
    .map(String::from)
    .to_vec()
}

/// The number of cells `args` (a [`quick_run`]) plans, from `run --dry-run --json`.
fn planned_cells(args: &[String]) -> usize {
    let a = conformance().args(args).args(["--dry-run", "--json"]).assert().success();
    let v: serde_json::Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    let n = v["cells"].as_array().unwrap().len();
    assert!(n >= 6, "4 second comers, a race and the control at least: {v}");
    n
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Runs `conformance ARGS` with stdout and stderr on a 200-column pseudo-terminal and returns
/// what the terminal received; `None` (with a SKIPPED line) where `script` is missing, a
/// failure under CI on Linux, where it must be there.
#[cfg(target_os = "linux")]
fn on_a_terminal(args: &[String]) -> Option<String> {
    let Ok(script) = which::which("script") else {
        if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
            panic!("util-linux's script is needed in CI for the progress bar test");
        }
        eprintln!("SKIPPED: progress bar on a terminal: no `script` (util-linux) on PATH");
        return None;
    };
    let bin: PathBuf = assert_cmd::cargo::cargo_bin("conformance");
    let mut line = format!("stty cols 200 rows 50 2>/dev/null; exec {}", quote(&bin.display().to_string()));
    for a in args {
        line.push(' ');
        line.push_str(&quote(a));
    }
    let out = std::process::Command::new(script)
        .args(["-qec", &line, "/dev/null"])
        .env("CONFORMANCE_CACHE_DIR", crate::common::test_cache_dir())
        .output()
        .expect("script runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// On a terminal the bar shows cells done of the plan's total and the cell under way; with
/// `--quiet` neither the bar nor the status lines appear; through a pipe stderr holds the
/// status lines and no bar (no escape sequence, no carriage return).
#[test]
#[cfg(target_os = "linux")]
fn the_progress_bar_is_drawn_on_a_terminal_only() {
    let _one = crate::common::one_at_a_time();
    let t = tempfile::tempdir().unwrap();
    let n = planned_cells(&quick_run(&t.path().join("plan")));
    let Some(tty) = on_a_terminal(&quick_run(&t.path().join("a"))) else { return };
    assert!(tty.contains(&format!("/{n} cells")), "no bar on the terminal:\n{tty}");
    assert!(tty.contains("node 0.0.0 · node.fake.wx · second comer on "), "no cell under way:\n{tty}");
    assert!(tty.contains("found    node 0.0.0"), "{tty}");

    let mut quiet = quick_run(&t.path().join("b"));
    quiet.push("--quiet".into());
    let tty = on_a_terminal(&quiet).unwrap();
    assert!(!tty.contains("cells  "), "a bar with --quiet:\n{tty}");
    assert!(!tty.contains("found    "), "a status line with --quiet:\n{tty}");
    assert!(tty.contains(&format!("{n} cells in ")), "{tty}");

    let a = conformance().args(quick_run(&t.path().join("c"))).assert().success();
    let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
    assert!(err.contains("found    node 0.0.0"), "{err}");
    assert!(!err.contains("cells  ") && !err.contains('\u{1b}') && !err.contains('\r'), "a bar on a pipe: {err:?}");
}

/// `run --json` prints on stdout exactly what it writes to results.json, and no tables; the
/// summary line goes to stderr.
#[test]
#[cfg(unix)]
fn run_json_prints_the_results_file() {
    let _one = crate::common::one_at_a_time();
    let t = tempfile::tempdir().unwrap();
    let n = planned_cells(&quick_run(&t.path().join("plan")));
    let mut args = quick_run(&t.path().join("out"));
    args.push("--json".into());
    let a = conformance().args(&args).assert().success();
    let stdout = a.get_output().stdout.clone();
    let path = t.path().join("out").join("results.json");
    let file = std::fs::read(&path).unwrap();
    assert_eq!(String::from_utf8_lossy(&stdout), String::from_utf8_lossy(&file));
    // (stdout is the file: the file read back is what was printed)
    let r = read_results(&path);
    assert_eq!(r.cells.len(), n);
    // it ends with the answers derived from the cells: one per call, with its verdict and words;
    // they are written, never read back (not in `Results`), so they are read as JSON
    let v: serde_json::Value = serde_json::from_slice(&stdout).unwrap();
    let answers = v["answers"].as_array().unwrap();
    assert!(!answers.is_empty(), "{v}");
    for a in answers {
        let verdict = a["answer"]["verdict"].as_str().unwrap();
        assert!(["yes", "no", "undetermined"].contains(&verdict), "{a}");
        assert!(a["answer"]["how"].as_str().is_some_and(|h| !h.is_empty()), "{a}");
        assert!(r.cells.iter().any(|c| a["variant"] == c.variant.as_str()), "{a}");
    }
    assert!(v["intents"].as_array().is_some_and(|i| !i.is_empty()), "{v}");
    let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
    assert!(err.contains(&format!("{n} cells in ")) && !err.contains('┌'), "{err}");
}

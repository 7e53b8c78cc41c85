//! The real runtimes, end to end: every variant of each runtime is measured through the
//! hostile folder name (spaces, `&`, `%PATH%`, `^`, `!`, parentheses, quotes, `` ` ``, `$`,
//! Japanese) and compared with the committed baseline for this OS,
//! `reports/<os>/results.json`, which the tool itself produced (where no baseline exists for
//! the OS, only the structural checks run). Absent runtimes are skipped visibly, and fail in CI.

use std::path::Path;

use crate::common::{available, conformance, read_json, root};

const HOSTILE: &str = "sp ace&amp %PATH% ^c !b! (p) 'q' `b` $d 日本語";

/// Measures `name` and returns results.json; asserts the run matched the baseline.
fn measure(name: &str, trials: &str) -> serde_json::Value {
    let out = tempfile::tempdir().unwrap();
    let fs_root = tempfile::tempdir().unwrap();
    let baseline = root().join("reports").join(std::env::consts::OS).join("results.json");
    let mut cmd = conformance();
    cmd.args(["run", "--runtime", name, "--hostile-paths", "--trials", trials, "-q"]);
    let compared = baseline.is_file();
    if compared {
        cmd.arg("--expect").arg(&baseline);
    } else {
        eprintln!("NOTE: no baseline {}: structural checks only", baseline.display());
    }
    let assert = cmd.arg("--out").arg(out.path()).arg("--fs-root").arg(fs_root.path()).assert();
    let output = assert.get_output().clone();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{name} differs from the baseline or failed (exit {:?}):\n{stdout}\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stderr)
    );
    if compared {
        assert!(stdout.contains(" 0 changed, 0 missing"), "{stdout}");
    }
    let left: Vec<_> = std::fs::read_dir(fs_root.path()).unwrap().collect();
    assert!(left.is_empty(), "scratch folder left behind: {left:?}");
    read_json(&out.path().join("results.json"))
}

/// Every control attempt through the hostile folder acquired the name: the path reached the
/// probe unaltered (an expanded `%PATH%` or a split at `&` would leave the name free).
fn assert_paths_were_data(r: &serde_json::Value, name: &str) {
    let cells = r["cells"].as_array().unwrap();
    assert!(!cells.is_empty());
    let controls: Vec<_> =
        cells.iter().filter(|c| c["target"] == "absent" && c["scenario"] == "second-comer").collect();
    let acquired = controls.iter().filter(|c| c["outcome"] == "acquired").count();
    assert!(acquired * 10 >= controls.len() * 8, "{name}: only {acquired}/{} controls acquired", controls.len());
    for c in &controls {
        if let Some(rel) = c.get("relative") {
            assert_eq!(rel["outcome"], c["outcome"], "{name}: relative and absolute paths disagree: {c}");
        }
    }
}

/// Messages that quote the path show it byte for byte.
fn assert_message_quotes_path(r: &serde_json::Value, variant: &str) {
    let c = r["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["variant"] == variant && c["target"] == "file" && c["scenario"] == "second-comer")
        .expect("cell");
    let msg = c["error"]["raw"]["message"].as_str().unwrap_or_default();
    assert!(msg.contains(HOSTILE), "{variant}: the raw message does not quote the hostile path: {msg}");
}

fn race_stats_are_complete(r: &serde_json::Value, trials: u64) {
    for c in r["cells"].as_array().unwrap().iter().filter(|c| c["scenario"] == "race" && c["verdict"] != "unsupported")
    {
        assert_eq!(c["trials"], trials, "{c}");
        assert_eq!(c["contenders"], 3);
        let hist: u64 = c["winners"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
        assert_eq!(hist, trials, "winners histogram must cover every trial: {c}");
        assert!(c["barrier_spread_us"]["p50"].as_f64().is_some(), "{c}");
    }
}

#[test]
fn node() {
    if !available("node") {
        return;
    }
    let r = measure("node", "100");
    assert_paths_were_data(&r, "node");
    assert_message_quotes_path(&r, "node.writeFileSync.wx");
    race_stats_are_complete(&r, 100);
}

#[test]
fn bun() {
    if !available("bun") {
        return;
    }
    let r = measure("bun", "100");
    assert_paths_were_data(&r, "bun");
    assert_message_quotes_path(&r, "node.openSync.wx");
    race_stats_are_complete(&r, 100);
}

#[test]
fn deno() {
    if !available("deno") {
        return;
    }
    let r = measure("deno", "100");
    assert_paths_were_data(&r, "deno");
    assert_message_quotes_path(&r, "deno.writeFileSync.createNew");
    assert_message_quotes_path(&r, "node.writeFileSync.wx");
    race_stats_are_complete(&r, 100);
}

#[test]
fn coreclr() {
    if !available("coreclr") {
        return;
    }
    let r = measure("coreclr", "100");
    assert_paths_were_data(&r, "coreclr");
    assert_message_quotes_path(&r, "dotnet.FileMode.CreateNew");
    race_stats_are_complete(&r, 100);
}

#[test]
fn mono() {
    if !available("mono") {
        return;
    }
    let r = measure("mono", "100");
    assert_paths_were_data(&r, "mono");
    assert_message_quotes_path(&r, "dotnet.FileMode.CreateNew");
    race_stats_are_complete(&r, 100);
}

#[test]
fn pwsh() {
    if !available("pwsh") {
        return;
    }
    let r = measure("pwsh", "50");
    assert_paths_were_data(&r, "pwsh");
}

#[test]
fn cmd() {
    if !available("cmd") {
        return;
    }
    let r = measure("cmd", "1");
    assert_paths_were_data(&r, "cmd");
}

#[test]
#[cfg(target_os = "linux")]
fn baseline_is_the_tools_own_output() {
    let p = root().join("reports").join("linux").join("results.json");
    let r = read_json(Path::new(&p));
    assert_eq!(r["schema"], 1);
    assert!(r["run_info"]["harness_version"].is_string());
    assert!(r["cells"].as_array().unwrap().len() > 300);
}

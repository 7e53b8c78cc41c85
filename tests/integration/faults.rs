//! A probe that crashes, hangs or prints garbage is data for the report, not a crash of the
//! harness; its whole process tree is killed and the scratch folder is removed.

#![cfg(unix)]

use crate::common::{cells, conformance, fixtures, one_at_a_time, read_json};

fn run_fake(kind: &str, extra: &[&str]) -> (serde_json::Value, tempfile::TempDir, tempfile::TempDir) {
    let _serial = one_at_a_time();
    let out = tempfile::tempdir().unwrap();
    let fs_root = tempfile::tempdir().unwrap();
    let node = fixtures().join("fake-runtimes").join(kind).join("node");
    let mut c = conformance();
    c.arg("run")
        .arg("--runtime")
        .arg(format!("node={}", node.display()))
        .args(["--variant", "node.writeFileSync.wx", "--trials", "5", "--timeout", "1", "--no-relative", "-q"])
        .args(extra)
        .arg("--out")
        .arg(out.path())
        .arg("--fs-root")
        .arg(fs_root.path());
    c.assert().success();
    let r = read_json(&out.path().join("results.json"));
    (r, out, fs_root)
}

fn assert_scratch_removed(fs_root: &std::path::Path) {
    let left: Vec<_> = std::fs::read_dir(fs_root).unwrap().collect();
    assert!(left.is_empty(), "scratch folder left behind: {left:?}");
}

#[test]
fn crashing_probe_is_recorded_with_its_stderr() {
    let (r, _o, root) = run_fake("crash", &["--target", "absent,file"]);
    let second = cells(&r, "node.writeFileSync.wx", "second-comer");
    assert_eq!(second.len(), 2);
    for c in second {
        assert_eq!(c["outcome"], "crashed", "{c}");
        assert!(c["evidence"].as_str().unwrap().contains("boom: simulated probe crash"), "{c}");
    }
    let race = cells(&r, "node.writeFileSync.wx", "race");
    assert_eq!(race[0]["verdict"], "inconclusive");
    // the probe dies on `prepare`, before any release: those trials are discarded, not counted
    let ev = race[0]["evidence"].as_str().unwrap();
    assert!(ev.contains("failed before the release 3 times in a row") && ev.contains("boom"), "{}", race[0]);
    assert_eq!(race[0]["natural"]["discarded_trials"], 3);
    assert_eq!(race[0]["natural"]["trials"], 0);
    // the same probe under the tracer completes no trial either: amplification is then
    // unavailable for this runtime, with the reason, not a second inconclusive verdict
    if r["run_info"]["amplification"]["unavailable"].is_null() {
        let why = race[0]["amplified_unavailable"].as_str().unwrap();
        assert!(why.contains("no amplified trial completed") || why.contains("did not start"), "{}", race[0]);
    }
    assert_scratch_removed(root.path());
}

#[test]
fn hanging_probe_times_out_and_its_tree_is_killed() {
    let (r, _o, root) = run_fake("hang", &["--target", "file"]);
    let second = cells(&r, "node.writeFileSync.wx", "second-comer");
    assert_eq!(second[0]["outcome"], "timeout", "{}", second[0]);
    assert_eq!(cells(&r, "node.writeFileSync.wx", "race")[0]["verdict"], "inconclusive");
    let ps = std::process::Command::new("ps").args(["-eo", "args"]).output().unwrap();
    let orphans: Vec<String> = String::from_utf8_lossy(&ps.stdout)
        .lines()
        .filter(|l| l.contains("sleep 987654"))
        .map(str::to_string)
        .collect();
    assert!(orphans.is_empty(), "orphan grandchildren left: {orphans:?}");
    assert_scratch_removed(root.path());
}

#[test]
fn garbage_output_is_evidence_not_a_harness_crash() {
    let (r, _o, root) = run_fake("garbage", &["--target", "file", "--scenario", "second-comer"]);
    let c = cells(&r, "node.writeFileSync.wx", "second-comer")[0];
    assert_eq!(c["outcome"], "crashed");
    assert!(c["evidence"].as_str().unwrap().contains("Overwrite target? (Yes/No/All):"), "{c}");
    assert_scratch_removed(root.path());
}

//! Thread races (`--contender-kind thread`, `probes/PROTOCOL.md` "Threads"): the contenders of
//! a race are threads (workers) of one probe process, on the real runtimes. The tests assert
//! what holds on any machine — trials add up, the winners histogram covers every trial, an
//! exclusive call never has two winners, the detection control (raced as threads too) is either
//! caught or the family's exclusive verdicts say the race was weak — never a rate. Absent
//! runtimes are skipped visibly (a failure in CI).

use crate::common::{available, conformance, one_at_a_time, read_json};

/// `run --contender-kind thread` of races of `variants` on `runtime`, 20 trials, natural and
/// amplified where strace works: results.json and the tables printed, or `None` (skipped) when
/// the runtime is absent.
fn thread_run(runtime: &str, variants: &str) -> Option<(serde_json::Value, String)> {
    if !available(runtime) {
        return None;
    }
    let _one = one_at_a_time();
    let out = tempfile::tempdir().unwrap();
    let fs_root = tempfile::tempdir().unwrap();
    let assert = conformance()
        .args(["run", "--runtime", runtime, "--contender-kind", "thread", "--scenario", "race", "--trials", "20"])
        .args(["--variant", variants, "-q", "--out"])
        .arg(out.path())
        .arg("--fs-root")
        .arg(fs_root.path())
        .assert();
    let o = assert.get_output();
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        o.status.success(),
        "{runtime}: exit {:?}\n{stdout}\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    Some((read_json(&out.path().join("results.json")), stdout))
}

/// The race cells of `r`, each checked: marked as a thread cell (field, id), and in each mode
/// that ran, the trials add up (orderings, winners histogram, wins per contender).
fn thread_cells(r: &serde_json::Value) -> Vec<&serde_json::Value> {
    let cells: Vec<&serde_json::Value> =
        r["cells"].as_array().expect("cells").iter().filter(|c| c["scenario"] == "race").collect();
    assert!(!cells.is_empty(), "no race cell: {r}");
    for c in &cells {
        assert_eq!(c["contenders"], "threads", "{c}");
        assert!(c["id"].as_str().unwrap().ends_with("/contenders=threads"), "{c}");
        for mode in ["natural", "amplified"] {
            let m = &c["result"][mode];
            if m.is_null() {
                continue;
            }
            let s = &m["stats"];
            let trials = s["trials"].as_u64().unwrap();
            assert_eq!(s["contenders"], 3, "{c}");
            // an unsupported cell counted nothing: no histogram
            let Some(hist) = s["winners"].as_object() else {
                assert_eq!(trials, 0, "{c}");
                continue;
            };
            let sum: u64 = hist.values().map(|v| v.as_u64().unwrap()).sum();
            assert_eq!(sum, trials, "{mode}: the winners histogram must cover every trial: {c}");
            let wins: u64 = hist.iter().map(|(k, v)| k.parse::<u64>().unwrap() * v.as_u64().unwrap()).sum();
            let by: u64 = s["wins_by_contender"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).sum();
            assert_eq!(by, wins, "{mode}: wins per contender must add up to the histogram's winners: {c}");
            let orderings = m["orderings"].as_array().map_or(&[][..], Vec::as_slice);
            let per: u64 = orderings.iter().map(|o| o["stats"]["trials"].as_u64().unwrap()).sum();
            assert_eq!(per, trials, "{mode}: the orderings' trials must add up: {c}");
        }
    }
    cells
}

/// `exclusive` is an atomic call (it never has two winners, on any machine) and `control` the
/// family's anti-pattern: either the control was caught, and `exclusive` is `exclusive`, or
/// the race was weak, and `exclusive` is `inconclusive` with the reason.
fn exclusive_and_control(r: &serde_json::Value, exclusive: &str, control: &str) {
    let cells = thread_cells(r);
    let find = |v: &str| *cells.iter().find(|c| c["variant"] == v).unwrap_or_else(|| panic!("no cell {v}: {r}"));
    let (x, ctl) = (find(exclusive), find(control));
    assert_eq!(ctl["control"], true, "{ctl}");
    for mode in ["natural", "amplified"] {
        if !x["result"][mode].is_null() {
            assert_eq!(x["result"][mode]["stats"]["multi_winner_trials"], 0, "{exclusive} had two winners: {x}");
        }
    }
    let worked = x["result"]["detection"]["worked"].as_bool().expect("detection judged");
    if worked {
        assert_eq!(ctl["result"]["verdict"], "multiple-winners", "{ctl}");
        assert_eq!(x["result"]["verdict"], "exclusive", "{x}");
    } else {
        assert_eq!(x["result"]["verdict"], "inconclusive", "{x}");
        assert!(x["result"]["weak_race"].as_str().is_some_and(|w| w.contains("weak race")), "{x}");
        eprintln!("NOTE: {control} as threads was not caught here: {}", x["result"]["weak_race"]);
    }
}

#[test]
fn node_thread_race() {
    let Some((r, table)) = thread_run("node", "node.writeFileSync.wx") else { return };
    exclusive_and_control(&r, "node.writeFileSync.wx", "node.existsSync+writeFileSync");
    assert!(table.contains("node.writeFileSync.wx (threads)"), "{table}");
    assert!(table.contains("contenders: threads of one probe process"), "{table}");
}

#[test]
fn bun_thread_race() {
    let Some((r, _)) = thread_run("bun", "node.writeFileSync.wx") else { return };
    exclusive_and_control(&r, "node.writeFileSync.wx", "node.existsSync+writeFileSync");
}

#[test]
fn deno_thread_race_both_families() {
    let Some((r, _)) = thread_run("deno", "deno.writeTextFileSync.createNew,node.writeFileSync.wx") else { return };
    exclusive_and_control(&r, "deno.writeTextFileSync.createNew", "deno.statSync+writeFileSync");
    exclusive_and_control(&r, "node.writeFileSync.wx", "node.existsSync+writeFileSync");
}

#[test]
fn coreclr_thread_race() {
    let Some((r, _)) = thread_run("coreclr", "dotnet.FileMode.CreateNew,dotnet.FileShare.None") else { return };
    exclusive_and_control(&r, "dotnet.FileMode.CreateNew", "dotnet.File.Exists+WriteAllText");
}

#[test]
fn mono_thread_race() {
    let Some((r, _)) = thread_run("mono", "dotnet.FileMode.CreateNew,dotnet.FileShare.None") else { return };
    exclusive_and_control(&r, "dotnet.FileMode.CreateNew", "dotnet.File.Exists+WriteAllText");
    // FileShare.None is measured (whatever its verdict): a verdict from the disk, not a fault
    let fs = r["cells"].as_array().unwrap().iter().find(|c| c["variant"] == "dotnet.FileShare.None").expect("cell");
    let v = fs["result"]["verdict"].as_str().unwrap();
    assert!(["exclusive", "multiple-winners", "inconclusive"].contains(&v), "{fs}");
}

#[test]
fn cmd_has_no_threads_and_says_why() {
    if !available("cmd") {
        return;
    }
    let _one = one_at_a_time();
    let out = tempfile::tempdir().unwrap();
    conformance()
        .args(["run", "--runtime", "cmd", "--contender-kind", "thread", "--scenario", "race", "--amplify", "off"])
        .args(["--variant", "cmd.mkdir", "-q", "--out"])
        .arg(out.path())
        .assert()
        .success();
    let r = read_json(&out.path().join("results.json"));
    let cells = r["cells"].as_array().unwrap();
    assert!(!cells.is_empty());
    for c in cells {
        assert_eq!(c["result"]["verdict"], "unsupported", "{c}");
        assert!(c["evidence"].as_str().is_some_and(|e| e.contains("no threads")), "{c}");
        assert_eq!(c["contenders"], "threads", "{c}");
    }
}

#[test]
fn a_cross_race_of_threads_is_one_runtime_and_family() {
    // two runtimes cannot share one process: a usage error before anything starts
    let out = conformance()
        .args([
            "race",
            "--contender-kind",
            "thread",
            "-c",
            "node:node.writeFileSync.wx",
            "-c",
            "mono:dotnet.FileMode.CreateNew",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--contender-kind") && err.contains("same runtime"), "{err}");
    if !available("node") {
        return;
    }
    let _one = one_at_a_time();
    let o = conformance()
        .args(["race", "--contender-kind", "thread", "-n", "20", "--amplify", "off", "--json"])
        .args(["-c", "node:node.writeFileSync.wx", "-c", "node:node.writeFileSync.wx"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(r["contender_kind"], "threads", "{r}");
    let n = &r["natural"]["stats"];
    let sum: u64 = n["winners"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(sum, n["trials"].as_u64().unwrap(), "{r}");
    assert_eq!(n["multi_winner_trials"], 0, "{r}");
}

/// A session probe whose hello does not list the `threads` capability (here a protocol-1 fake,
/// as PowerShell's probe is) is never sent `prepare-threads`: its thread cells are
/// `unsupported`, with the reason, and the run succeeds.
#[test]
fn a_probe_without_the_capability_is_unsupported_with_the_reason() {
    use crate::common::fixtures;
    let _one = one_at_a_time();
    let out = tempfile::tempdir().unwrap();
    let fake = fixtures().join("fake-runtimes").join("two-step").join("node");
    conformance()
        .arg("--matrices")
        .arg(fixtures().join("matrices").join("two-step"))
        .arg("run")
        .arg("--runtime")
        .arg(format!("node={}", fake.display()))
        .args(["--contender-kind", "thread", "--scenario", "race", "-n", "5", "-q", "--amplify", "off", "--out"])
        .arg(out.path())
        .assert()
        .success();
    let r = read_json(&out.path().join("results.json"));
    let races = thread_cells(&r);
    for c in races {
        assert_eq!(c["result"]["verdict"], "unsupported", "{c}");
        let ev = c["evidence"].as_str().unwrap_or_default();
        assert!(ev.contains("protocol 1") && ev.contains("`threads` capability"), "{c}");
    }
}

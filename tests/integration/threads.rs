//! Thread races (`--contender-kind thread`, `probes/PROTOCOL.md` "Threads"): the contenders of
//! a race are threads (workers) of one probe process, on the real runtimes. The tests assert
//! what holds on any machine — trials add up, the winners histogram covers every trial, an
//! exclusive call never has two winners, the detection control (raced as threads too) is either
//! caught or the family's exclusive verdicts say the race was weak — never a rate. Absent
//! runtimes are skipped visibly (a failure in CI).

use crate::common::{available, conformance, one_at_a_time, read_results};
use conformance::domain::{ContenderKind, Scenario};
use conformance::report::model::{Cell, Results};
use conformance::verdict::RaceVerdict;

/// `run --contender-kind thread` of races of `variants` on `runtime`, 20 trials, natural and
/// amplified where strace works: results.json and the tables printed, or `None` (skipped) when
/// the runtime is absent.
fn thread_run(runtime: &str, variants: &str) -> Option<(Results, String)> {
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
    Some((read_results(&out.path().join("results.json")), stdout))
}

/// The race cells of `r`, each checked: marked as a thread cell (field, id), and in each mode
/// that ran, the trials add up (orderings, winners histogram, wins per contender).
fn thread_cells(r: &Results) -> Vec<&Cell> {
    let cells: Vec<&Cell> = r.cells.iter().filter(|c| c.scenario == Scenario::Race).collect();
    assert!(!cells.is_empty(), "no race cell: {r:?}");
    for c in &cells {
        assert_eq!(c.contenders, ContenderKind::Threads, "{c:?}");
        assert!(c.id.ends_with("/contenders=threads"), "{c:?}");
        let race = c.race();
        let modes = [
            ("natural", race.and_then(|x| x.natural.as_ref())),
            ("amplified", race.and_then(|x| x.amplified.as_ref())),
        ];
        for (mode, m) in modes {
            let Some(m) = m else { continue };
            let s = &m.stats;
            assert_eq!(s.contenders, 3, "{c:?}");
            // an unsupported cell counted nothing: an empty histogram, no trials
            let sum: usize = s.winners.values().sum();
            assert_eq!(sum, s.trials, "{mode}: the winners histogram must cover every trial: {c:?}");
            let wins: usize = s.winners.iter().map(|(k, v)| k * v).sum();
            let by: usize = s.wins_by_contender.iter().sum();
            assert_eq!(by, wins, "{mode}: wins per contender must add up to the histogram's winners: {c:?}");
            let per: usize = m.orderings.iter().map(|o| o.stats.trials).sum();
            assert_eq!(per, s.trials, "{mode}: the orderings' trials must add up: {c:?}");
        }
    }
    cells
}

/// `exclusive` is an atomic call (it never has two winners, on any machine) and `control` the
/// family's anti-pattern: either the control was caught, and `exclusive` is `exclusive`, or
/// the race was weak, and `exclusive` is `inconclusive` with the reason.
fn exclusive_and_control(r: &Results, exclusive: &str, control: &str) {
    let cells = thread_cells(r);
    let find = |v: &str| *cells.iter().find(|c| c.variant == v).unwrap_or_else(|| panic!("no cell {v}: {r:?}"));
    let (x, ctl) = (find(exclusive), find(control));
    assert!(ctl.control, "{ctl:?}");
    let xr = x.race().unwrap_or_else(|| panic!("{exclusive} is no race: {x:?}"));
    for m in [&xr.natural, &xr.amplified].into_iter().flatten() {
        assert_eq!(m.stats.multi_winner_trials, 0, "{exclusive} had two winners: {x:?}");
    }
    let worked = xr.detection.as_ref().expect("detection judged").worked;
    if worked {
        assert_eq!(ctl.verdict(), Some(RaceVerdict::MultipleWinners), "{ctl:?}");
        assert_eq!(xr.verdict, RaceVerdict::Exclusive, "{x:?}");
    } else {
        assert_eq!(xr.verdict, RaceVerdict::Inconclusive, "{x:?}");
        let weak = xr.weak_race.as_deref();
        assert!(weak.is_some_and(|w| w.contains("weak race")), "{x:?}");
        eprintln!("NOTE: {control} as threads was not caught here: {}", weak.unwrap_or_default());
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
    let fs = r.cells.iter().find(|c| c.variant == "dotnet.FileShare.None").expect("cell");
    let v = fs.verdict().unwrap_or_else(|| panic!("no verdict: {fs:?}"));
    assert!(matches!(v, RaceVerdict::Exclusive | RaceVerdict::MultipleWinners | RaceVerdict::Inconclusive), "{fs:?}");
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
    let r = read_results(&out.path().join("results.json"));
    assert!(!r.cells.is_empty());
    for c in &r.cells {
        assert_eq!(c.verdict(), Some(RaceVerdict::Unsupported), "{c:?}");
        assert!(c.evidence.as_deref().is_some_and(|e| e.contains("no threads")), "{c:?}");
        assert_eq!(c.contenders, ContenderKind::Threads, "{c:?}");
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
    let r = read_results(&out.path().join("results.json"));
    let races = thread_cells(&r);
    for c in races {
        assert_eq!(c.verdict(), Some(RaceVerdict::Unsupported), "{c:?}");
        let ev = c.evidence.as_deref().unwrap_or_default();
        assert!(ev.contains("protocol 1") && ev.contains("`threads` capability"), "{c:?}");
    }
}

//! The cell list is what a run measures: `run --dry-run --json` lists the cells
//! ([`conformance::cells::expand`]), and a real run measures exactly those, in that order,
//! less the conditional races (`--races auto`) its second comers settled.

use crate::common::{available, fixtures, Run};

/// Runs `run` for real (no amplification, 5 s timeout) and checks that its cells are the
/// planned ones, in order; returns the ids measured.
fn cells_match_a_real_run(run: Run) -> Vec<String> {
    let run = run.natural_only().args(&["--timeout", "5"]);
    let planned = run.planned();
    assert!(!planned.is_empty(), "{:?}", run.argv());
    let measured: Vec<String> = run.results().cells.into_iter().map(|c| c.id).collect();
    let kept: Vec<&String> =
        planned.iter().filter(|(id, conditional)| !conditional || measured.contains(id)).map(|(id, _)| id).collect();
    assert_eq!(kept, measured.iter().collect::<Vec<_>>(), "{:?}", run.argv());
    measured
}

/// With the fake runtime of the fault tests: its control selected or not, each scenario,
/// targets and relative repeats.
#[test]
#[cfg(unix)]
fn a_run_measures_its_planned_cells_on_the_fake_runtime() {
    let _one = crate::common::one_at_a_time();
    let fake = format!("node={}", fixtures().join("fake-runtimes").join("faults").join("node").display());
    let matrices = fixtures().join("matrices").join("faults").display().to_string();
    for selection in [
        &["-v", "node.fake.wx"][..],
        &["-v", "node.fake.wx", "--scenario", "second-comer", "--target", "file,absent", "--no-relative"],
        &["-v", "node.fake.wx,node.fake.check-then-create", "--scenario", "race"],
        &["-v", "node.fake.check-then-create", "--target", "dir"],
    ] {
        let run = Run::new().args(&["--matrices", &matrices]).runtime(&fake).trials(2).args(selection);
        let measured = cells_match_a_real_run(run);
        assert!(!measured.is_empty(), "{selection:?}");
    }
}

/// With Node: rows and their control, `--races auto` (a row whose second comer failed is not
/// raced) and `--races core` (a promise form and the other source kinds get no race cell).
#[test]
fn a_run_measures_its_planned_cells_on_node() {
    if !available("node") {
        return;
    }
    let _one = crate::common::one_at_a_time();
    let node = || Run::new().runtime("node").trials(3);
    let measured = cells_match_a_real_run(node().variants("node.writeFileSync.wx,node.mkdirSync"));
    let raced = |measured: &[String], id: &str| measured.iter().any(|m| m.contains(&format!("/{id}/race/")));
    assert!(raced(&measured, "node.existsSync+writeFileSync"), "the control: {measured:?}");
    let auto = node().variants("node.writeFileSync.wx,node.writeFileSync.w").args(&["--races", "auto"]);
    let measured = cells_match_a_real_run(auto);
    assert!(raced(&measured, "node.writeFileSync.wx") && !raced(&measured, "node.writeFileSync.w"), "{measured:?}");
    let core = node().variants("node.writeFileSync.wx,node.promises.writeFile.wx,node.renameSync").args(&[
        "--races",
        "core",
        "--scenario",
        "race",
    ]);
    let measured = cells_match_a_real_run(core);
    assert!(!raced(&measured, "node.promises.writeFile.wx"), "{measured:?}");
    assert!(!measured.iter().any(|m| m.contains("source=")), "no other source kind raced: {measured:?}");
}

//! The cell list is what a run measures: `run --dry-run --json` lists the cells
//! ([`conformance::cells::expand`]), and a real run measures exactly those, in that order,
//! less the conditional races (`--races auto`) its second comers settled.

use crate::common::{available, conformance, fixtures, run};

/// The planned cells of `run ARGS` (id, conditional) from `run --dry-run --json`.
fn planned(args: &[&str]) -> Vec<(String, bool)> {
    let a = conformance().arg("run").args(args).args(["--dry-run", "--json"]).assert().success();
    let v: serde_json::Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    let cells = v["cells"].as_array().expect("cells");
    cells.iter().map(|c| (c["id"].as_str().unwrap().to_string(), c["conditional"] == true)).collect()
}

/// Runs `args` for real (no amplification, 5 s timeout) and checks that its cells are the
/// planned ones, in order; returns the ids measured.
fn cells_match_a_real_run(args: &[&str]) -> Vec<String> {
    let args = [args, &["--amplify", "off", "--timeout", "5"]].concat();
    let planned = planned(&args);
    assert!(!planned.is_empty(), "{args:?}");
    let (results, _) = run(&args);
    let measured: Vec<String> =
        results["cells"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap().to_string()).collect();
    let kept: Vec<&String> =
        planned.iter().filter(|(id, conditional)| !conditional || measured.contains(id)).map(|(id, _)| id).collect();
    assert_eq!(kept, measured.iter().collect::<Vec<_>>(), "{args:?}");
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
        let measured =
            cells_match_a_real_run(&[&["--matrices", &matrices, "-r", &fake, "-n", "2"], selection].concat());
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
    let measured = cells_match_a_real_run(&["-r", "node", "-v", "node.writeFileSync.wx,node.mkdirSync", "-n", "3"]);
    assert!(measured.iter().any(|m| m.contains("/node.existsSync+writeFileSync/race/")), "the control: {measured:?}");
    let auto = ["-r", "node", "-v", "node.writeFileSync.wx,node.writeFileSync.w", "--races", "auto", "-n", "3"];
    let measured = cells_match_a_real_run(&auto);
    let raced = |id: &str| measured.iter().any(|m| m.contains(&format!("/{id}/race/")));
    assert!(raced("node.writeFileSync.wx") && !raced("node.writeFileSync.w"), "{measured:?}");
    let core = ["-r", "node", "-v", "node.writeFileSync.wx,node.promises.writeFile.wx,node.renameSync"];
    let measured = cells_match_a_real_run(&[&core[..], &["--races", "core", "--scenario", "race", "-n", "3"]].concat());
    assert!(!measured.iter().any(|m| m.contains("/node.promises.writeFile.wx/race/")), "{measured:?}");
}

//! cmd's recipes of the holder, ledger and update scenarios under Wine (`probes/cmd/recipes.cmd`,
//! `probes/cmd/README.md`, *Recipes*): the ones with a faithful cmd form run and count, the others
//! are `unsupported` with the loop's reason. Only what holds by construction is asserted: the
//! counters add up, every supported recipe has counts and every unsupported one says why; what a
//! recipe achieves under Wine depends on the machine's timing and is printed, not asserted.

use std::collections::BTreeMap;

use crate::common::{available, conformance, one_at_a_time, read_results};
use conformance::domain::NoAmplified;
use conformance::report::model::{Cell, CellResult, Results, Scenario};

/// The scenarios of this file, as `--scenario` takes them.
const SCENARIOS: &str = "holder,ledger,update";

/// The workers of a ledger or update trial (`--workers`).
const WORKERS: u64 = 3;

/// The recipes cmd runs (`probes/cmd/loop.cmd`, `recipes.cmd`).
const SUPPORTED: [&str; 4] =
    ["ledger.check-process-append", "update.read-modify-write", "update.temp-rename", "update.append-line"];

/// The recipes the loop lists but answers `unsupported`, with words of its reason: cmd has no
/// exclusive create of a file; a holder needs the time in ms (its taker too) and a sleep below a
/// second.
const UNSUPPORTED: [(&str, &str); 7] = [
    ("ledger.key-first", NO_EXCLUSIVE_FILE),
    ("ledger.check-process-create", NO_EXCLUSIVE_FILE),
    ("update.locked-read-modify-write", NO_EXCLUSIVE_FILE),
    ("update.locked-temp-rename", NO_EXCLUSIVE_FILE),
    ("holder.no-check", NO_HOLDER),
    ("holder.renew-blind", NO_HOLDER),
    ("holder.check-owner", NO_HOLDER),
];
const NO_EXCLUSIVE_FILE: &str = "cmd has no exclusive create of a file";
const NO_HOLDER: &str = "the holder recipes have no faithful cmd form";

/// Runs `--scenario SCENARIOS` on cmd with `extra` arguments and returns results.json.
fn run(extra: &[&str]) -> Results {
    let out = tempfile::tempdir().unwrap();
    let workers = WORKERS.to_string();
    conformance()
        .args(["run", "-r", "cmd", "--scenario", SCENARIOS, "--workers", &workers, "-q", "--out"])
        .arg(out.path())
        .args(extra)
        .assert()
        .success();
    read_results(&out.path().join("results.json"))
}

/// The natural counters of a hand-off cell.
fn counters(c: &Cell) -> &BTreeMap<String, u64> {
    match &c.result {
        CellResult::Counters(x) => &x.counters,
        other => panic!("{} is no counters cell: {other:?}", c.id),
    }
}

/// The cell of `recipe`.
fn cell<'a>(r: &'a Results, recipe: &str) -> &'a Cell {
    r.cells.iter().find(|c| c.variant == recipe).unwrap_or_else(|| panic!("no cell of {recipe}: {r:?}"))
}

/// Counter `k` of `c`'s natural counts; panics naming it when the run did not count it.
fn count(c: &Cell, k: &str) -> u64 {
    *counters(c).get(k).unwrap_or_else(|| panic!("{}: no {k} in {:?}", c.variant, counters(c)))
}

/// The update counters add up: every trial asked each worker for the same number of increments;
/// a trial lost some (lossy) exactly when increments are missing, and is lossy or unreadable, not
/// both; the reader's failed reads are among its reads.
fn check_update(c: &Cell) {
    let n = |k: &str| count(c, k);
    let trials = n("trials");
    assert!(trials >= 1, "{c:?}");
    let per = n("increments") / (trials * WORKERS);
    assert!(per >= 1 && n("increments") == trials * WORKERS * per, "{c:?}");
    assert!(n("lost_updates") <= n("increments"), "{c:?}");
    assert_eq!(n("lossy") == 0, n("lost_updates") == 0, "{c:?}");
    assert!(n("lossy") + n("unreadable") <= trials, "{c:?}");
    assert!(n("torn_reads") + n("absent_reads") + n("read_errors") <= n("reads"), "{c:?}");
    eprintln!(
        "cmd: {} lost {}/{} updates in {}/{trials} trials (+{} excess, {} unreadable); torn {}/{} reads, absent {}; \
         left behind {}; worker faults {}",
        c.variant,
        n("lost_updates"),
        n("increments"),
        n("lossy"),
        n("excess_updates"),
        n("unreadable"),
        n("torn_reads"),
        n("reads"),
        n("absent_reads"),
        n("leftover_files"),
        n("worker_faults")
    );
}

/// The ledger counters add up: a trial is duplicated (two effect files or more, at most one per
/// worker), unprocessed (none), or neither.
fn check_ledger(c: &Cell) {
    let n = |k: &str| count(c, k);
    let trials = n("trials");
    assert!(trials >= 1, "{c:?}");
    assert!(n("duplicated") + n("unprocessed") <= trials, "{c:?}");
    assert!(n("duplicated") <= n("duplicate_effects"), "{c:?}");
    assert!(n("duplicate_effects") <= n("duplicated") * (WORKERS - 1), "{c:?}");
    assert!(n("unrecorded") <= trials, "{c:?}");
    eprintln!(
        "cmd: {} duplicated {}/{trials} trials (+{} effects); unprocessed {}, unrecorded {}, worker faults {}",
        c.variant,
        n("duplicated"),
        n("duplicate_effects"),
        n("unprocessed"),
        n("unrecorded"),
        n("worker_faults")
    );
}

#[test]
fn cmd_update_and_ledger_recipes_under_wine() {
    // the loop lists every recipe of the three scenarios: those with a faithful cmd form run
    // every trial and count, the others say why at prepare
    let _serial = one_at_a_time();
    if !available("cmd") {
        return;
    }
    let r = run(&[]);
    let asked = [Scenario::Holder, Scenario::Ledger, Scenario::Update];
    let recipes: Vec<&str> =
        conformance::handoff::recipes().iter().filter(|r| asked.contains(&r.scenario)).map(|r| r.id.as_str()).collect();
    assert_eq!(r.cells.len(), recipes.len(), "one cell per recipe: {r:?}");
    assert_eq!(SUPPORTED.len() + UNSUPPORTED.len(), recipes.len(), "{recipes:?}");
    for c in &r.cells {
        assert_eq!(c.driver.as_deref(), Some("loop"), "{c:?}");
    }
    for id in SUPPORTED {
        let c = cell(&r, id);
        assert!(c.evidence.is_none(), "{id} ran every trial: {c:?}");
        // cmd is never amplified: its cells say so, not that --thorough would run them
        let why = match &c.result {
            CellResult::Counters(x) => x.amplified_unavailable.as_ref().map(NoAmplified::text),
            _ => None,
        };
        assert!(why.is_some_and(|w| w.starts_with("not run for cmd: ")), "{c:?}");
        if id.starts_with("ledger.") {
            check_ledger(c);
        } else {
            check_update(c);
        }
    }
    for (id, words) in UNSUPPORTED {
        let c = cell(&r, id);
        assert!(counters(c).is_empty(), "{c:?}");
        let why = c.evidence.as_deref().unwrap_or_else(|| panic!("no reason: {c:?}"));
        // the loop's own reason, not the harness's "has no recipe" for a recipe it does not list
        assert!(why.starts_with("unsupported: ") && why.contains(words), "{c:?}");
    }
}

#[test]
fn cmd_update_and_ledger_recipes_take_awkward_paths_or_say_why() {
    // the counter and the processed list are named to for /f by %-expansion (Wine's for /f
    // expands no !VAR! there): spaces, `&`, `^` and Japanese work; a path with `%` or `!`
    // makes the cells unsupported with the reason
    let _serial = one_at_a_time();
    if !available("cmd") {
        return;
    }
    let r = run(&["-v", "update.read-modify-write,ledger.check-process-append", "--path-segment", "sp ace & ^ 日本語"]);
    assert_eq!(r.cells.len(), 2, "{r:?}");
    let (update, ledger) = (cell(&r, "update.read-modify-write"), cell(&r, "ledger.check-process-append"));
    check_update(update);
    check_ledger(ledger);
    for c in &r.cells {
        assert!(c.evidence.is_none(), "{c:?}");
        assert_eq!(count(c, "worker_faults"), 0, "{c:?}");
    }
    // the paths reached cmd: increments reached the counter, and effect files were made
    assert!(count(update, "lost_updates") < count(update, "increments"), "{update:?}");
    assert!(count(ledger, "unprocessed") < count(ledger, "trials"), "{ledger:?}");
    let r =
        run(&["-v", "update.read-modify-write,ledger.check-process-append", "--path-segment", "pct %PATH% bang!x!"]);
    assert_eq!(r.cells.len(), 2, "{r:?}");
    for c in &r.cells {
        assert!(counters(c).is_empty(), "{c:?}");
        let why = c.evidence.as_deref().unwrap_or_else(|| panic!("no reason: {c:?}"));
        // the harness's refusal of a for /f path, or the loop's of a value Wine would damage
        let said = why.contains("holds ! or %") || why.contains("exclamation mark or a percent sign");
        assert!(why.starts_with("unsupported: ") && said, "{c:?}");
    }
}

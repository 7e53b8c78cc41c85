//! `conformance check MODULE`: the user's own lock code raced end to end on the JavaScript
//! runtimes (the mutex scenario's `mutex.module`), with lock modules wrong, right, hanging and
//! unloadable by construction (`tests/fixtures/locks/`).

use crate::common::{available, conformance, fixtures, one_at_a_time, read_results, required_runtimes};
use conformance::report::model::{Cell, CellResult, Results};
use std::collections::BTreeMap;
use std::path::Path;

type Counters = BTreeMap<String, u64>;

/// The JavaScript runtimes a check races a module on by default.
const JS_RUNTIMES: [&str; 3] = ["node", "bun", "deno"];

/// The lock module `name` of the fixtures.
fn lock(name: &str) -> std::path::PathBuf {
    fixtures().join("locks").join(name)
}

/// The available runtimes of `names` (a missing one is a visible skip locally, a failure in CI).
fn present(names: &[&str]) -> Vec<String> {
    names.iter().filter(|n| available(n)).map(|n| n.to_string()).collect()
}

/// Runs `check MODULE` on `runtimes` with `extra` flags into a fresh folder, expecting exit
/// `code`; returns the results and stdout.
fn check(module: &Path, runtimes: &[String], extra: &[&str], code: i32) -> (Results, String) {
    let out = tempfile::tempdir().expect("tempdir");
    let a = conformance()
        .arg("check")
        .arg(module)
        .args(["-r", &runtimes.join(","), "--takeover-wait", "1", "-q", "--out"])
        .arg(out.path())
        .args(extra)
        .assert()
        .code(code);
    let stdout = String::from_utf8_lossy(&a.get_output().stdout).to_string();
    // check.json beside results.json: the verdict for a CI job, with the exit code it ended with
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("check.json")).expect("check.json"))
            .expect("check.json is JSON");
    assert_eq!(report["exit_code"], code, "{report}");
    assert_eq!(report["module"], std::fs::canonicalize(module).unwrap().display().to_string(), "{report}");
    (read_results(&out.path().join("results.json")), stdout)
}

/// The `mutex.module` cell of `runtime` in `r`.
fn cell<'a>(r: &'a Results, runtime: &str) -> &'a Cell {
    r.cells
        .iter()
        .find(|c| c.variant == "mutex.module" && c.runtime_name == runtime)
        .unwrap_or_else(|| panic!("no mutex.module cell of {runtime}: {r:?}"))
}

/// The natural counters of `c` and its amplified ones where they ran (under CI, where strace
/// is installed, they must have).
fn runs(c: &Cell) -> (&Counters, Option<&Counters>) {
    let CellResult::Counters(k) = &c.result else { panic!("not a counters cell: {c:?}") };
    let amplified = k.amplified.as_ref().map(|a| &a.counters);
    if amplified.is_none() {
        let why = k.amplified_unavailable.as_ref().map(|w| w.text().to_string()).unwrap_or_default();
        assert!(required_runtimes().is_empty(), "CI checks lock code amplified too: {c:?}");
        eprintln!("SKIPPED: {} amplified: {why}", c.runtime_name);
    }
    (&k.counters, amplified)
}

/// Trials of one run of a lock that nobody takes over after a kill: the killed-holder trials
/// after the first stuck one are left out.
fn stuck_trials() -> u64 {
    (conformance::engine::MUTEX_KINDS_PER_ROUND - conformance::engine::MUTEX_KILLED_PER_ROUND + 1) as u64
}

fn n(m: &Counters, k: &str) -> u64 {
    *m.get(k).unwrap_or_else(|| panic!("{k} in {m:?}"))
}

#[test]
fn check_then_create_lock_code_is_unsafe_in_both_modes_on_every_javascript_runtime() {
    let _serial = one_at_a_time();
    let rts = present(&JS_RUNTIMES);
    if rts.is_empty() {
        return;
    }
    let (r, stdout) = check(&lock("check-then-create.mjs"), &rts, &[], 1);
    let mut natural_double = 0;
    for name in &rts {
        let c = cell(&r, name);
        let (nat, amp) = runs(c);
        for m in std::iter::once(nat).chain(amp) {
            assert_eq!(n(m, "trials"), stuck_trials(), "{name}: {m:?}");
            assert_eq!((n(m, "worker_faults"), n(m, "code_errors")), (0, 0), "{name}: {c:?}");
            // release() unlinks whatever lock is there: the releaser always gets in
            assert_eq!(n(m, "released_by_other"), n(m, "foreign_trials"), "{name}: {m:?}");
            assert_eq!(n(m, "foreign_trials"), 1, "{name}: {m:?}");
            // no takeover of a stale lock: a killed holder's lock stays, and one such trial says it
            assert_eq!((n(m, "stuck"), n(m, "killed_trials")), (1, 1), "{name}: {m:?}");
        }
        // every file-system call delayed: the check and the create of two contenders interleave
        if let Some(amp) = amp {
            assert!(n(amp, "double_ownership") > 0, "{name} amplified: {amp:?}");
        }
        natural_double += n(nat, "double_ownership");
        eprintln!(
            "{name}: double-owned natural {}/{}, amplified {:?}",
            n(nat, "double_ownership"),
            n(nat, "trials"),
            amp.map(|a| n(a, "double_ownership"))
        );
        assert!(stdout.contains(&format!("{name} {}: UNSAFE — natural: double-owned", c.runtime_version)), "{stdout}");
    }
    // natural races show it too (a few trials in 13 per runtime here): over the runtimes
    assert!(natural_double > 0, "no natural double ownership on {rts:?}: {r:?}");
    assert!(stdout.contains("verdict: UNSAFE"), "{stdout}");
    assert!(stdout.contains("repro: conformance check "), "{stdout}");
}

#[test]
fn exclusive_create_lock_code_is_stuck_but_never_double_owned_even_from_a_hostile_folder() {
    // mostly waiting (holds, takeovers, timeouts) and asserting nothing a busy machine moves
    // (a correct lock never double-owns; who takes over is laid out): not serialised
    let rts = present(&JS_RUNTIMES);
    if rts.is_empty() {
        return;
    }
    // the module's path reaches the probes as data (a file: URL built in the probe)
    let dir = tempfile::tempdir().expect("tempdir");
    let hostile = dir.path().join("ロック & 100% ^!'\"q #1");
    std::fs::create_dir(&hostile).expect("mkdir");
    let module = hostile.join("lock.mjs");
    std::fs::copy(lock("exclusive-create.mjs"), &module).expect("copy");
    // no stale-lock takeover: STUCK, which fails the check (exit 1) as it fails the answer
    let (r, stdout) = check(&module, &rts, &[], 1);
    for name in &rts {
        let c = cell(&r, name);
        let (nat, amp) = runs(c);
        for m in std::iter::once(nat).chain(amp) {
            assert_eq!(n(m, "trials"), stuck_trials(), "{name}: {m:?}");
            assert_eq!(
                (n(m, "double_ownership"), n(m, "released_by_other"), n(m, "worker_faults"), n(m, "none_acquired")),
                (0, 0, 0, 0),
                "{name}: {c:?}"
            );
            assert_eq!(n(m, "code_errors"), 0, "{name}: {c:?}");
            // every contender of a together-trial got the lock in turn
            let together =
                (conformance::engine::MUTEX_KINDS_PER_ROUND - conformance::engine::MUTEX_KILLED_PER_ROUND - 2) as u64;
            assert!(n(m, "acquisitions") >= together * 3, "{name}: {m:?}");
            assert_eq!((n(m, "stuck"), n(m, "killed_trials")), (1, 1), "{name}: {m:?}");
        }
        assert!(
            stdout.contains(&format!("{name} {}: STUCK — natural: double-owned 0/", c.runtime_version)),
            "{stdout}"
        );
    }
    assert!(stdout.contains("verdict: STUCK"), "{stdout}");
    // --allow-stuck passes it (a lock meant to wait for an operator): the same module on one
    // runtime, the report as JSON alone on stdout
    let (_, stdout) = check(&module, &rts[..1], &["--allow-stuck", "--json"], 0);
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("--json prints JSON alone");
    assert_eq!(report["verdict"], "safe-but-stuck", "{report}");
    assert_eq!(report["runtimes"][0]["verdict"], "stuck", "{report}");
    assert!(report["runtimes"][0]["line"].as_str().unwrap().contains(": STUCK — natural: double-owned 0/"), "{report}");
    assert!(
        report["repro"].as_str().unwrap().contains("--allow-stuck --thorough"),
        "the repro keeps the flag: {report}"
    );
    assert!(report["results"].as_str().unwrap().ends_with("results.json"), "{report}");
}

#[test]
fn typescript_lock_code_runs_on_deno_and_bun() {
    // mostly waiting (holds, takeovers, timeouts) and asserting nothing a busy machine moves
    // (a correct lock never double-owns; who takes over is laid out): not serialised
    let rts = present(&["deno", "bun"]);
    if rts.is_empty() {
        return;
    }
    let (r, stdout) = check(&lock("exclusive-create.ts"), &rts, &["--allow-stuck"], 0);
    for name in &rts {
        let (nat, _) = runs(cell(&r, name));
        assert_eq!((n(nat, "double_ownership"), n(nat, "worker_faults")), (0, 0), "{name}: {nat:?}");
    }
    assert!(stdout.contains("verdict: safe"), "{stdout}");
}

#[test]
fn csharp_lock_code_is_compiled_and_raced_on_coreclr_and_mono() {
    let _serial = one_at_a_time();
    let rts = present(&["coreclr", "mono"]);
    if rts.is_empty() {
        return;
    }
    let (r, stdout) = check(&lock("CheckThenCreate.cs"), &rts, &[], 1);
    let mut natural_double = 0;
    for name in &rts {
        let c = cell(&r, name);
        let (nat, amp) = runs(c);
        for m in std::iter::once(nat).chain(amp) {
            assert_eq!((n(m, "worker_faults"), n(m, "released_by_other")), (0, 1), "{name}: {c:?}");
        }
        if let Some(amp) = amp {
            assert!(n(amp, "double_ownership") > 0, "{name} amplified: {amp:?}");
        }
        natural_double += n(nat, "double_ownership");
    }
    assert!(natural_double > 0, "no natural double ownership on {rts:?}: {r:?}");
    assert!(stdout.contains("verdict: UNSAFE"), "{stdout}");
    let (r, stdout) = check(&lock("ExclusiveCreate.cs"), &rts, &["--allow-stuck"], 0);
    for name in &rts {
        let c = cell(&r, name);
        let (nat, amp) = runs(c);
        for m in std::iter::once(nat).chain(amp) {
            assert_eq!(
                (n(m, "double_ownership"), n(m, "released_by_other"), n(m, "worker_faults"), n(m, "stuck")),
                (0, 0, 0, 1),
                "{name}: {c:?}"
            );
            assert_eq!(n(m, "code_errors"), 0, "{name}: {c:?}");
        }
    }
    assert!(stdout.contains("verdict: safe"), "{stdout}");
    // code that does not compile: a usage error naming the file and line, nothing measured
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("Bad.cs");
    std::fs::write(
        &bad,
        "public static class Bad {\n  public static bool Acquire(string p, string o) { return nope; }\n}\n",
    )
    .expect("write");
    let a = conformance().arg("check").arg(&bad).assert().code(2);
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(err.contains("did not compile") && err.contains("Bad.cs(2,"), "{err}");
}

#[test]
fn hanging_or_unloadable_lock_code_is_a_fault_and_the_check_goes_on() {
    // mostly waiting (holds, takeovers, timeouts) and asserting nothing a busy machine moves
    // (a correct lock never double-owns; who takes over is laid out): not serialised
    if !available("node") {
        return;
    }
    // acquire never settles: each contender times out, is killed with its tree, and the cell
    // stops after that trial instead of paying the timeout 26 times
    let (r, stdout) = check(&lock("hangs.mjs"), &["node".into()], &["--timeout", "2"], 6);
    let c = cell(&r, "node");
    let (nat, _) = runs(c);
    assert_eq!(n(nat, "trials"), 1, "{c:?}");
    assert!(n(nat, "worker_faults") > 0, "{c:?}");
    assert!(stdout.contains("undetermined — ") && stdout.contains("timeout"), "{stdout}");
    // its console.log went to stderr (it would have broken the protocol on stdout): the
    // evidence carries it
    assert!(stdout.contains("acquire called: this line must not reach the protocol"), "{stdout}");
    assert!(stdout.contains("verdict: undetermined"), "{stdout}");
    // a module without acquire and release: said, on every runtime asked, the run going on;
    // code that loads nowhere is bad input (exit 2)
    let rts = present(&["node", "deno"]);
    let (r, stdout) = check(&lock("no-exports.mjs"), &rts, &[], 2);
    for name in &rts {
        let (nat, _) = runs(cell(&r, name));
        assert_eq!(n(nat, "trials"), 1, "{name}: {nat:?}");
    }
    assert!(stdout.contains("exports no acquire(path, owner) and release(path, owner)"), "{stdout}");
}

#[test]
fn check_refuses_a_missing_or_foreign_module_naming_it() {
    let a = conformance().args(["check", "no/such/lock.mjs"]).assert().code(2);
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(err.contains("MODULE") && err.contains("no/such/lock.mjs"), "{err}");
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, words) in
        [("lock.ps1", "PowerShell lock code cannot be checked yet"), ("lock.py", "not JavaScript, TypeScript or C#")]
    {
        let p = dir.path().join(name);
        std::fs::write(&p, "").expect("write");
        let a = conformance().arg("check").arg(&p).assert().code(2);
        let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
        assert!(err.contains(words) && err.contains(name), "{err}");
    }
}

#[test]
fn the_mutex_scenario_runs_only_when_named_and_the_user_recipe_only_under_check() {
    if !available("node") {
        return;
    }
    let planned = |args: &[&str]| -> Vec<String> {
        crate::common::Run::new().runtime("node").args(args).planned().into_iter().map(|(id, _)| id).collect()
    };
    let all = planned(&[]);
    assert!(!all.is_empty() && !all.iter().any(|id| id.contains("mutex.")), "{all:?}");
    let named = planned(&["--scenario", "mutex"]);
    assert!(named.iter().any(|id| id.contains("mutex.check-then-create")), "{named:?}");
    assert!(named.iter().any(|id| id.contains("mutex.exclusive-create")), "{named:?}");
    assert!(!named.iter().any(|id| id.contains("mutex.module")), "{named:?}");
}

#[test]
fn lock_libraries_are_installed_from_npm_and_raced_as_rows() {
    // mostly waiting (holds, takeovers, timeouts) and asserting nothing a busy machine moves
    // (a correct lock never double-owns; who takes over is laid out): not serialised
    if !available("node") {
        return;
    }
    let out = tempfile::tempdir().expect("tempdir");
    let a = conformance()
        .args(["run", "--scenario", "mutex", "-v", "mutex.proper-lockfile,mutex.lockfile,mutex.rushstack-lockfile"])
        // natural only: what is asserted is laid out (who takes over, whose release frees), and
        // the amplified pass would double the test's time
        .args(["-r", "node", "--takeover-wait", "4", "--amplify", "off", "--out"])
        .arg(out.path())
        .assert()
        .success();
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    for lib in ["proper-lockfile@4.1.2", "lockfile@1.0.4", "@rushstack/node-core-library@5.25.3"] {
        assert!(err.contains(&format!("library  {lib}")), "{lib} installed and said: {err}");
    }
    let r = read_results(&out.path().join("results.json"));
    let recipe = |id: &str| -> (&Counters, Option<&Counters>) {
        let c = r.cells.iter().find(|c| c.variant == id).unwrap_or_else(|| panic!("no {id}: {r:?}"));
        let CellResult::Counters(k) = &c.result else { panic!("not a counters cell: {c:?}") };
        (&k.counters, k.amplified.as_ref().map(|a| &a.counters))
    };
    // laid-out facts of each library, the same in both modes: who takes a killed holder's lock
    // over, who takes a paused (live) holder's, whose release frees another's lock
    for (id, from_paused, by_other) in
        [("mutex.proper-lockfile", 1, 0), ("mutex.lockfile", 1, 1), ("mutex.rushstack-lockfile", 0, 0)]
    {
        let (nat, amp) = recipe(id);
        for m in std::iter::once(nat).chain(amp) {
            assert_eq!(n(m, "trials"), conformance::engine::MUTEX_KINDS_PER_ROUND as u64, "{id}: {m:?}");
            assert_eq!(n(m, "killed_trials"), conformance::engine::MUTEX_KILLED_PER_ROUND as u64, "{id}: {m:?}");
            assert_eq!((n(m, "worker_faults"), n(m, "none_acquired")), (0, 0), "{id}: {m:?}");
            // every one takes a killed holder's lock over (staleness 2 s; rushstack: its pid is gone)
            assert_eq!(n(m, "stuck"), 0, "{id}: {m:?}");
            assert_eq!(n(m, "taken_from_paused"), from_paused, "{id}: {m:?}");
            assert_eq!(n(m, "released_by_other"), by_other, "{id}: {m:?}");
            eprintln!(
                "{id}: double-owned {}/{}, takeover {} ms",
                n(m, "double_ownership"),
                n(m, "trials"),
                n(m, "takeover_ms_max")
            );
        }
    }
    // a library that cannot be had is said, and its cells are unsupported: offline, not installed
    let cache = tempfile::tempdir().expect("tempdir");
    let out = tempfile::tempdir().expect("tempdir");
    let a = conformance()
        .env("CONFORMANCE_CACHE_DIR", cache.path())
        .args(["--offline", "run", "--scenario", "mutex", "-v", "mutex.lockfile", "-r", "node", "-q", "--out"])
        .arg(out.path())
        .assert()
        .success();
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(err.contains("skip     mutex.lockfile: lockfile@1.0.4 is not installed"), "{err}");
    let r = read_results(&out.path().join("results.json"));
    let c = r.cells.iter().find(|c| c.variant == "mutex.lockfile").expect("cell");
    assert!(
        c.evidence.as_deref().is_some_and(|e| e.starts_with("unsupported: lockfile@1.0.4 is not installed")),
        "{c:?}"
    );
}

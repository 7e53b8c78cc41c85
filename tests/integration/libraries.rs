//! The libraries the hand-off recipes race (npm, installed into the cache by the harness):
//! publish and claim through a library on the JavaScript runtimes, a library's version chosen
//! with `-r` and `install`, and `diff` of two versions of one library. The lock libraries'
//! mutex rows are in `check.rs`.

use crate::common::{available, conformance, read_results, required_runtimes};
use conformance::report::model::{Cell, CellResult, Results};
use std::collections::BTreeMap;

type Counters = BTreeMap<String, u64>;

fn n(m: &Counters, k: &str) -> u64 {
    *m.get(k).unwrap_or_else(|| panic!("{k} in {m:?}"))
}

/// The natural counters of `c`, and its amplified ones where they ran (under CI, where strace
/// is installed, they must have).
fn runs(c: &Cell) -> Vec<&Counters> {
    let CellResult::Counters(k) = &c.result else { panic!("not a counters cell: {c:?}") };
    if k.amplified.is_none() {
        assert!(required_runtimes().is_empty(), "CI races the libraries amplified too: {c:?}");
        eprintln!("SKIPPED: {} {} amplified", c.runtime, c.variant);
    }
    std::iter::once(&k.counters).chain(k.amplified.as_ref().map(|a| &a.counters)).collect()
}

/// The cell of `variant` on `runtime` in `r`.
fn cell<'a>(r: &'a Results, variant: &str, runtime: &str) -> &'a Cell {
    r.cells
        .iter()
        .find(|c| c.variant == variant && c.runtime_name == runtime)
        .unwrap_or_else(|| panic!("no {variant} cell of {runtime}: {r:?}"))
}

#[test]
fn publish_and_claim_libraries_are_raced_on_every_javascript_runtime() {
    // publish and claim count what readers and workers saw: a correct recipe shows nothing
    // torn or duplicated on a busy machine too, so this is not serialised
    let runtimes: Vec<&str> = ["node", "bun", "deno"].into_iter().filter(|r| available(r)).collect();
    if runtimes.is_empty() {
        return;
    }
    let out = tempfile::tempdir().expect("tempdir");
    let publishers = [
        ("publish.write-file-atomic", "write-file-atomic@7.0.1"),
        ("publish.steno", "steno@4.0.2"),
        ("publish.atomically", "atomically@2.1.1"),
    ];
    let a = conformance()
        .args(["run", "--scenario", "publish,claim", "--items", "10", "--amplify", "on", "-r", &runtimes.join(",")])
        .args(["-v", "publish.write-file-atomic,publish.steno,publish.atomically,claim.fs-extra-move", "--out"])
        .arg(out.path())
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&a.get_output().stdout).to_string();
    let r = read_results(&out.path().join("results.json"));
    for rt in &runtimes {
        for (id, lib) in publishers {
            let c = cell(&r, id, rt);
            assert_eq!(c.library.as_deref(), Some(lib), "{c:?}");
            for m in runs(c) {
                // every item published whole, through the library's own temp file and rename
                assert_eq!((n(m, "items"), n(m, "published")), (10, 10), "{rt} {id}: {m:?} {:?}", c.result);
                assert_eq!((n(m, "torn_reads"), n(m, "damaged_targets")), (0, 0), "{rt} {id}: {m:?}");
                assert!(n(m, "complete_reads") > 0, "{rt} {id}: the readers saw it: {m:?}");
            }
        }
        let c = cell(&r, "claim.fs-extra-move", rt);
        assert_eq!(c.library.as_deref(), Some("fs-extra@11.4.1"), "{c:?}");
        for m in runs(c) {
            assert!(n(m, "items") > 0, "{rt}: {m:?}");
            assert_eq!((n(m, "duplicate_claims"), n(m, "lost_items")), (0, 0), "{rt} fs-extra: {m:?}");
        }
    }
    // the answers name the version each recipe raced (the lists are wrapped)
    let words = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("publish.steno [steno@4.0.2] (none in "), "{stdout}");
    assert!(stdout.contains("claim.fs-extra-move (fs-extra@11.4.1)"), "the table row names it: {stdout}");
}

#[test]
fn two_versions_of_a_library_are_installed_raced_and_diffed() {
    if !available("node") {
        return;
    }
    let cache = tempfile::tempdir().expect("tempdir");
    // `install` takes a library's version beside runtimes'
    let a = conformance()
        .env("CONFORMANCE_CACHE_DIR", cache.path())
        .args(["install", "write-file-atomic@6.0.0", "--json"])
        .assert()
        .success();
    let rows: serde_json::Value = serde_json::from_slice(&a.get_output().stdout).expect("JSON");
    assert_eq!(rows[0]["select"], "write-file-atomic@6.0.0", "{rows}");
    assert_eq!(rows[0]["fetched"], true, "{rows}");
    let modules = cache.path().join("libraries").join("write-file-atomic@6.0.0").join("node_modules");
    assert!(modules.join("write-file-atomic").join("package.json").is_file(), "installed in {}", modules.display());
    // diff -r A -r B: the recipes racing that library, once per version, on node
    let runs = tempfile::tempdir().expect("tempdir");
    let a = conformance()
        .env("CONFORMANCE_CACHE_DIR", cache.path())
        .args(["diff", "-r", "write-file-atomic@6.0.0", "-r", "write-file-atomic@7.0.1", "-r", "node", "-q"])
        .arg("--runs-dir")
        .arg(runs.path())
        .assert();
    let out = a.get_output();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(stdout.contains("libraries: write-file-atomic 6.0.0 ⇒ 7.0.1"), "{stdout}");
    assert!(stdout.contains("A = write-file-atomic@6.0.0 (node "), "{stdout}");
    // both publish whole files: nothing differs, exit 0 (a changed answer would exit 1 and say it)
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    for (side, version) in [("a", "6.0.0"), ("b", "7.0.1")] {
        let r = read_results(&runs.path().join(side).join("results.json"));
        let raced: Vec<(&str, Option<&str>)> =
            r.cells.iter().map(|c| (c.variant.as_str(), c.library.as_deref())).collect();
        assert_eq!(raced, [("publish.write-file-atomic", Some(format!("write-file-atomic@{version}").as_str()))]);
    }
}

#[test]
fn library_versions_are_refused_when_inexact_unpublished_or_raced_by_nothing_selected() {
    let refused = |args: &[&str], says: &[&str]| {
        let a = conformance().args(args).assert().code(2);
        let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
        for s in says {
            assert!(err.contains(s), "{args:?}: {s} in {err}");
        }
    };
    refused(&["run", "-r", "node,proper-lockfile@4", "--dry-run"], &["--runtime", "exact (MAJOR.MINOR.PATCH)"]);
    refused(
        &["run", "-r", "proper-lockfile@4.1.1", "-v", "publish.*", "--dry-run"],
        &["no selected recipe races proper-lockfile", "mutex.proper-lockfile (--scenario mutex)"],
    );
    refused(&["diff", "-r", "lockfile@1.0.3", "-r", "steno@4.0.2"], &["two versions of one library"]);
    if available("node") {
        // the registry has no such version
        let cache = tempfile::tempdir().expect("tempdir");
        let a = conformance()
            .env("CONFORMANCE_CACHE_DIR", cache.path())
            .args(["install", "lockfile@9.9.9"])
            .assert()
            .code(2);
        let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
        assert!(err.contains("lockfile@9.9.9"), "{err}");
        // and `run -r` measures nothing with it, as with a runtime version the registry lacks
        let out = tempfile::tempdir().expect("tempdir");
        let a = conformance()
            .env("CONFORMANCE_CACHE_DIR", cache.path())
            .args(["run", "-r", "node,lockfile@9.9.9", "--scenario", "mutex", "-v", "mutex.lockfile", "-q", "--out"])
            .arg(out.path().join("r"))
            .assert()
            .code(2);
        let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
        assert!(err.contains("--runtime") && err.contains("lockfile@9.9.9"), "{err}");
        assert!(!out.path().join("r").exists(), "nothing written");
    }
}

//! `conformance docs`: marked tables in Markdown files regenerated from a results file, and
//! `--check`'s exit codes, on temp copies (nothing is measured).

use std::path::{Path, PathBuf};

use predicates::prelude::*;

use crate::common::{conformance, fixtures, root};

fn base() -> PathBuf {
    fixtures().join("results").join("base.json")
}

const DOC: &str = "# Notes\n\nBefore.\n\n<!-- conformance:table runtime=node variant=node.writeFileSync.* call=no -->\nold table\n<!-- /conformance:table -->\n\nAfter.\n";

/// A document `name` holding `text` in `dir`.
fn doc(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// `conformance docs [--check] --results base.json DOC`, run.
fn docs_over_base(check: bool, d: &Path) -> assert_cmd::assert::Assert {
    let mut cmd = conformance();
    cmd.arg("docs");
    if check {
        cmd.arg("--check");
    }
    cmd.arg("--results").arg(base()).arg(d).assert()
}

#[test]
fn check_exits_1_on_drift_and_rewrite_fixes_it() {
    let t = tempfile::tempdir().unwrap();
    let d = doc(t.path(), "notes.md", DOC);
    docs_over_base(true, &d)
        .code(1)
        .stdout(predicate::str::contains(format!("drifted: {}:5 <!-- conformance:table runtime=node", d.display())))
        .stdout(predicate::str::contains("-old table"))
        .stdout(predicate::str::contains("+| node.writeFileSync.wx | acquired | refused EEXIST |"))
        .stdout(predicate::str::contains("regenerate with `conformance docs --results"));
    assert_eq!(std::fs::read_to_string(&d).unwrap(), DOC, "--check wrote the document");

    docs_over_base(false, &d).code(0).stdout(predicate::str::contains("rewrote 1 of 1 table marker(s)"));
    let text = std::fs::read_to_string(&d).unwrap();
    assert!(text.starts_with("# Notes\n\nBefore.\n\n<!-- conformance:table"), "{text}");
    assert!(text.ends_with("<!-- /conformance:table -->\n\nAfter.\n"), "{text}");
    assert!(text
        .contains("**node 20.20.2**\n\n| variant | absent | file | empty-dir | dir | race 3×20 | safe as a lock |\n"));
    assert!(!text.contains("old table"));
    let names: Vec<_> = std::fs::read_dir(t.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 1, "a temp file was left behind: {names:?}");

    // clean now: --check passes, and a second rewrite leaves the file alone
    docs_over_base(true, &d).code(0).stdout(predicate::str::contains("1 table marker(s) up to date"));
    let before = std::fs::metadata(&d).unwrap().modified().unwrap();
    docs_over_base(false, &d).code(0);
    assert_eq!(std::fs::read_to_string(&d).unwrap(), text);
    assert_eq!(std::fs::metadata(&d).unwrap().modified().unwrap(), before, "an unchanged document was rewritten");
}

/// A figure in a sentence: a drifted value fails `--check` naming its line, with the document's
/// value and the results'; `docs` rewrites only the value, and the sentence around it stays.
#[test]
fn a_value_in_a_sentence_drifts_and_is_rewritten() {
    let t = tempfile::tempdir().unwrap();
    let marker = "<!-- conformance:value runtime=node variant=node.writeFileSync.w fact=natural -->";
    let text = format!(
        "# Notes\n\nThe default flag lost, {marker}1/100<!-- /conformance:value --> natural trials, and the\nrest.\n"
    );
    let d = doc(t.path(), "notes.md", &text);
    let results = conformance::report::json::read(&base()).unwrap();
    let cell = results.cells.iter().find(|c| c.variant == "node.writeFileSync.w" && c.race().is_some()).unwrap();
    let nat = cell.race().unwrap().natural.as_ref().unwrap();
    let want = format!("{}/{}", nat.stats.multi_winner_trials, nat.stats.trials);
    assert_ne!(want, "1/100");
    docs_over_base(true, &d)
        .code(1)
        .stdout(predicate::str::contains(format!("drifted: {}:3 {marker}\n-1/100\n+{want}\n", d.display())));
    assert_eq!(std::fs::read_to_string(&d).unwrap(), text, "--check wrote the document");
    docs_over_base(false, &d)
        .code(0)
        .stdout(predicate::str::contains("rewrote 0 of 0 table marker(s) and 1 of 1 value(s)"));
    assert_eq!(std::fs::read_to_string(&d).unwrap(), text.replace("1/100", &want));
    docs_over_base(true, &d).code(0).stdout(predicate::str::contains("0 table marker(s) and 1 value(s) up to date"));
    // a value the results cannot give: exit 2 naming the document's line and what is missing
    let bad = doc(t.path(), "bad.md", &format!("a\n\n{}", text.replace("writeFileSync.w ", "writeFileSync.q ")));
    docs_over_base(false, &bad)
        .code(2)
        .stderr(predicate::str::contains(":5:"))
        .stderr(predicate::str::contains("variant=node.writeFileSync.q: node 20.20.2 has no race cell of this row"));
}

#[cfg(unix)]
#[test]
fn a_rewrite_keeps_the_documents_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let t = tempfile::tempdir().unwrap();
    let d = doc(t.path(), "notes.md", DOC);
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o664)).unwrap();
    docs_over_base(false, &d).code(0);
    assert_eq!(std::fs::metadata(&d).unwrap().permissions().mode() & 0o777, 0o664);
}

#[test]
fn a_marker_names_its_own_results_relative_to_the_document() {
    let t = tempfile::tempdir().unwrap();
    std::fs::create_dir(t.path().join("data")).unwrap();
    std::fs::copy(base(), t.path().join("data").join("r.json")).unwrap();
    let d = doc(
        t.path(),
        "notes.md",
        "<!-- conformance:table runtime=node scenario=race results=data/r.json -->\n<!-- /conformance:table -->\n",
    );
    // --results names a file that does not exist: the marker's own is used
    conformance().current_dir(t.path()).args(["docs", "--results", "missing.json"]).arg(&d).assert().code(0);
    let text = std::fs::read_to_string(&d).unwrap();
    assert!(text.contains("| variant | call | race 3×20 |"), "{text}");
}

#[test]
fn bad_markers_exit_2_naming_file_line_and_key() {
    let t = tempfile::tempdir().unwrap();
    for (text, line, want) in [
        ("a\n\n<!-- conformance:table runtim=node -->\n<!-- /conformance:table -->\n", 3, "unknown key 'runtim'"),
        ("<!-- conformance:table scenario=races -->\n<!-- /conformance:table -->\n", 1, "key 'scenario'"),
        ("a\n<!-- conformance:table runtime=node -->\nno end\n", 2, "has no <!-- /conformance:table -->"),
        ("<!-- conformance:table runtime=cmd -->\n<!-- /conformance:table -->\n", 1, "no second-comer or race cell"),
    ] {
        let d = doc(t.path(), "bad.md", text);
        docs_over_base(true, &d)
            .code(2)
            .stderr(predicate::str::contains(format!("{}:{line}: ", d.display())))
            .stderr(predicate::str::contains(want))
            .stderr(predicate::str::contains("internal error").not());
        assert_eq!(std::fs::read_to_string(&d).unwrap(), text);
    }
}

#[test]
fn a_bad_marker_in_one_document_writes_none() {
    let t = tempfile::tempdir().unwrap();
    let good = doc(t.path(), "good.md", DOC);
    let bad = doc(t.path(), "bad.md", "<!-- conformance:table target=fifo -->\n<!-- /conformance:table -->\n");
    conformance()
        .args(["docs", "--results"])
        .arg(base())
        .arg(&good)
        .arg(&bad)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bad.md:1: key 'target': unknown target state 'fifo'"));
    assert_eq!(std::fs::read_to_string(&good).unwrap(), DOC);
}

#[test]
fn crlf_documents_stay_crlf_and_are_stable() {
    let t = tempfile::tempdir().unwrap();
    let d = doc(t.path(), "crlf.md", &DOC.replace('\n', "\r\n"));
    docs_over_base(false, &d).code(0);
    let text = std::fs::read_to_string(&d).unwrap();
    assert!(!text.replace("\r\n", "").contains('\n'), "a bare LF: {text:?}");
    docs_over_base(true, &d).code(0);
}

/// The committed documents are what the committed baseline gives (what `.ci/run` checks).
#[test]
fn the_readmes_tables_match_the_committed_baseline() {
    conformance()
        .current_dir(root())
        .args(["docs", "--check", "README.md", "docs/ANSWERS.md", "docs/GUIDE.md", "docs/MEASURING.md"])
        .arg("reports/README.md")
        .assert()
        .code(0)
        .stdout(predicate::str::starts_with(
            "README.md: 4 table marker(s) and 2 value(s) up to date\ndocs/ANSWERS.md: 5 table marker(s) up to date\n\
             docs/GUIDE.md: 13 table marker(s) and 24 value(s) up to date\ndocs/MEASURING.md: 1 table marker(s) up to date\n\
             reports/README.md: 2 table marker(s) up to date",
        ));
}

/// A race's output and the run times come from files of their own: a cross-race marker renders
/// what `race` prints from a `cross-race.json`, a timings marker the benchmark summary's table;
/// a file of the wrong kind exits 2 naming the document's line and what the file is not.
#[test]
fn cross_race_and_timings_markers_render_their_own_files() {
    let t = tempfile::tempdir().unwrap();
    std::fs::copy(root().join("docs/examples/cross-race.json"), t.path().join("race.json")).unwrap();
    std::fs::copy(root().join("benches/results/default-run.json"), t.path().join("times.json")).unwrap();
    let text =
        "# Race\n\n<!-- conformance:table scenario=cross-race results=race.json -->\n<!-- /conformance:table -->\n\n\
                <!-- conformance:table scenario=timings results=times.json -->\n<!-- /conformance:table -->\n";
    let d = doc(t.path(), "race.md", text);
    conformance().arg("docs").arg(&d).assert().code(0).stdout(predicate::str::contains("rewrote 2 of 2"));
    let out = std::fs::read_to_string(&d).unwrap();
    assert!(out.contains("│ slot │ runtime") && out.contains("verdict: exclusive"), "{out}");
    assert!(out.contains("| command | runs | mean ± σ |") && out.contains("| `conformance run` |"), "{out}");
    conformance().args(["docs", "--check"]).arg(&d).assert().code(0);
    // a results file where a benchmark summary belongs: the error names the marker's line
    let line = 1 + out.lines().position(|l| l.contains("scenario=timings")).unwrap();
    std::fs::copy(base(), t.path().join("times.json")).unwrap();
    conformance()
        .args(["docs", "--check"])
        .arg(&d)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!("race.md:{line}: file of this marker")))
        .stderr(predicate::str::contains("not a benchmark summary"));
}

/// The README is a front page (issue 31: about 25 KB, as ripgrep's and hyperfine's): the pitch,
/// install, quick start, how to read a row, CI and links, in that order; the manual lives in
/// docs/. Every link into the repository names a file that exists.
#[test]
fn the_readme_is_a_front_page_and_its_links_resolve() {
    let root = crate::common::root();
    let text = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(text.len() <= 25 * 1024, "README.md is {} bytes: move the manual's parts to docs/", text.len());
    let headings: Vec<&str> = text.lines().filter(|l| l.starts_with("## ")).collect();
    let order = [
        "## The answer",
        "## Install",
        "## Quick start",
        "## How to read a row",
        "## Use it in CI",
        "## Documentation",
    ];
    assert_eq!(headings, order, "the front page's sections");
    // relative links: `](path)` or `](path#anchor)`, not URLs
    for link in text.split("](").skip(1).filter_map(|s| s.split(')').next()) {
        if link.contains("://") || link.starts_with('#') || link.starts_with("mailto:") {
            continue;
        }
        let path = link.split('#').next().unwrap();
        assert!(root.join(path).exists(), "README.md links to {path}, which does not exist");
    }
}

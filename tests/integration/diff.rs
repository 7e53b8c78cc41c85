//! `conformance diff`: two results files (the committed fixture and a changed copy), its
//! formats and error exits, and a real diff between two versions of Node measured here (Node
//! 12.22.12 from `bash .ci/install old` against the Node on PATH).

use std::path::{Path, PathBuf};

use predicates::prelude::*;

use crate::common::{conformance, fixtures, read_results};
use conformance::report::model::{ErrorInfo, RelativeAttempt};
use conformance::verdict::Outcome;

fn base() -> PathBuf {
    fixtures().join("results").join("base.json")
}

/// A copy of the fixture where `node.writeFileSync.wx`'s second comer against a file was
/// replaced, and against a directory refused with EISDIR instead of EEXIST.
fn changed(dir: &Path) -> PathBuf {
    let mut r = read_results(&base());
    for c in &mut r.cells {
        let id = c.id.clone();
        if id == "node 20.20.2/node.writeFileSync.wx/second-comer/file" {
            let s = c.second_mut().unwrap_or_else(|| panic!("{id} is no second comer"));
            s.outcome = Outcome::Replaced;
            s.error = None;
            s.relative = Some(RelativeAttempt { outcome: Outcome::Replaced, error: None, evidence: None });
        }
        if id == "node 20.20.2/node.writeFileSync.wx/second-comer/dir" {
            // the raw error too: a reader derives the normalised code from it
            let eisdir = |e: Option<&mut ErrorInfo>| {
                let e = e.unwrap_or_else(|| panic!("{id}: no error to change"));
                e.code = "EISDIR".into();
                e.raw.code = Some("EISDIR".into());
                e.raw.errno = Some(-21);
                e.raw.message = "EISDIR: illegal operation on a directory, open".into();
            };
            let s = c.second_mut().unwrap_or_else(|| panic!("{id} is no second comer"));
            eisdir(s.error.as_mut());
            eisdir(s.relative.as_mut().and_then(|r| r.error.as_mut()));
        }
    }
    let p = dir.join("changed.json");
    std::fs::write(&p, conformance::report::json::render(&r)).unwrap();
    p
}

#[test]
fn two_files_print_only_the_changed_cells() {
    let t = tempfile::tempdir().unwrap();
    let new = changed(t.path());
    let out = conformance().arg("diff").arg(base()).arg(&new).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("node.writeFileSync.wx  fs.writeFileSync(p, data, {flag:'wx'})"), "{text}");
    assert!(text.contains("second-comer/file  outcome     refused EEXIST ⇒ replaced"), "{text}");
    assert!(text.contains("second-comer/dir   error code  refused EEXIST ⇒ refused EISDIR"), "{text}");
    assert!(text.contains("2 of 11 compared cells differ"), "{text}");
    // both raw errors, and reproductions that a shell can split
    assert!(text.contains("raw error: Error EEXIST errno -17: EEXIST: file already exists"), "{text}");
    let repro = text.lines().find_map(|l| l.trim().strip_prefix("repro: ")).expect("a repro line");
    let words = shlex::split(repro).expect("a shell line");
    assert_eq!(words[1], "-e", "{repro}");
    // unchanged cells are not printed
    assert!(!text.contains("node.writeFileSync.w "), "{text}");
    // nothing differs: exit 0
    conformance()
        .arg("diff")
        .arg(base())
        .arg(base())
        .assert()
        .code(0)
        .stdout(predicate::str::contains("no cell differs"));
    // any schema report reads, and merged files
    let schema1 = fixtures().join("results").join("schema1.json");
    conformance().arg("diff").arg(&schema1).arg(base()).assert().code(0);
    let (m1, m2) = (t.path().join("m1.json"), t.path().join("m2.json"));
    // a copy, not the same file twice (which merge refuses)
    let copy = t.path().join("base-copy.json");
    std::fs::copy(base(), &copy).unwrap();
    conformance().arg("merge").arg(base()).arg(&copy).arg("--out").arg(&m1).assert().code(0);
    conformance().arg("merge").arg(base()).arg(&new).arg("--out").arg(&m2).assert().code(0);
    conformance()
        .arg("diff")
        .arg(&m1)
        .arg(&m2)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("2 of 22 compared cells differ"));
}

#[test]
fn formats_junit_json_md_html() {
    let t = tempfile::tempdir().unwrap();
    let new = changed(t.path());
    let junit = conformance().args(["diff", "-f", "junit"]).arg(base()).arg(&new).output().unwrap();
    assert_eq!(junit.status.code(), Some(1));
    let xml = String::from_utf8(junit.stdout).unwrap();
    assert!(xml.starts_with("<?xml"), "{xml}");
    assert_eq!(xml.matches("<testcase ").count(), 11, "one test case per compared cell: {xml}");
    assert_eq!(xml.matches("<failure ").count(), 2, "{xml}");
    let json = conformance().args(["diff", "-f", "json"]).arg(base()).arg(&new).output().unwrap();
    assert_eq!(json.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["groups"][0]["variant"], "node.writeFileSync.wx");
    assert_eq!(v["groups"][0]["cells"].as_array().unwrap().len(), 2);
    let md = t.path().join("diff.md");
    conformance().args(["diff", "-f", "md", "--out"]).arg(&md).arg(base()).arg(&new).assert().code(1).stdout("");
    let md = std::fs::read_to_string(md).unwrap();
    assert!(md.contains("## `node.writeFileSync.wx`") && md.contains("```sh"), "{md}");
    // HTML: the changes, then B's heatmap with the two changed cells' row outlined once
    let html = conformance().args(["diff", "-f", "html"]).arg(base()).arg(&new).output().unwrap();
    assert_eq!(html.status.code(), Some(1));
    let page = String::from_utf8(html.stdout).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>") && !page.contains("<script"), "{page}");
    let (table, heatmap) = (page.find("id=\"changed\"").unwrap(), page.find("id=\"heatmap\"").unwrap());
    assert!(table < heatmap, "{page}");
    assert_eq!(page.matches("stroke=\"#a020f0\"").count(), 1, "{page}");
    assert!(page.contains("node.writeFileSync.wx: don't use — no: replaced"), "{page}");
}

#[test]
fn bad_input_exits_2_naming_the_file_or_flag() {
    let t = tempfile::tempdir().unwrap();
    let broken = t.path().join("broken.json");
    std::fs::write(&broken, "{\"schema\": 3, \"cells\": [").unwrap();
    conformance().arg("diff").arg(base()).arg(&broken).assert().code(2).stderr(predicate::str::contains("broken.json"));
    conformance()
        .arg("diff")
        .arg(t.path().join("absent.json"))
        .arg(base())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("absent.json"));
    conformance().arg("diff").arg(base()).assert().code(2).stderr(predicate::str::contains("two results files"));
    conformance().args(["diff", "-r", "node"]).assert().code(2).stderr(predicate::str::contains("--runtime"));
    conformance()
        .args(["diff", "-r", "node", "-r", "node"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--runtime"));
    conformance()
        .args(["diff", "-r", "nosuch", "-r", "node"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("nosuch"));
    conformance()
        .args(["diff", "-v", "node.*"])
        .arg(base())
        .arg(base())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--variant"));
    conformance().args(["diff", "-f", "csv"]).arg(base()).arg(base()).assert().code(2);
}

/// A real diff between two versions of one runtime measured here: Node 12.22.12 has no
/// `fs.cpSync` (added in 16.7), which the Node on PATH has. Second comers only, two variants
/// (by name: `node.cpSync*` also matches the recursive copies and their source kinds):
/// a few seconds.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[test]
fn two_node_versions_measured_now() {
    let _serial = crate::common::one_at_a_time();
    let Some(old) = crate::common::old_runtime("node", "12.22.12") else { return };
    if !crate::common::available("node") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let runs = t.path().join("runs");
    let out = conformance()
        .args(["diff", "--scenario", "second-comer", "-v", "node.cpSync,node.cpSync.errorOnExist", "-r"])
        .arg(format!("node={}", old.display()))
        .args(["-r", "node", "--runs-dir"])
        .arg(&runs)
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8(out.stdout).unwrap(), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("A = node="), "{stdout}");
    assert!(stdout.contains("(node 12.22.12)"), "{stdout}");
    assert!(stdout.contains("node.cpSync  fs.cpSync(src, p)"), "{stdout}");
    assert!(stdout.contains("second-comer/absent     outcome     unsupported ⇒ acquired"), "{stdout}");
    assert!(stdout.contains("evidence: fs.cpSync is not a function"), "{stdout}");
    // both runs were written, and diffing the files says the same
    let (a, b) = (runs.join("a").join("results.json"), runs.join("b").join("results.json"));
    let again = conformance().arg("diff").arg(&a).arg(&b).output().unwrap();
    assert_eq!(again.status.code(), Some(1));
    let again = String::from_utf8(again.stdout).unwrap();
    let changes = |s: &str| s.lines().filter(|l| l.contains(" ⇒ ")).map(str::to_string).collect::<Vec<_>>();
    assert_eq!(changes(&again), changes(&stdout));
    // the reproduction of B's absent cell, run, does what was measured: it acquires the name
    let repro = stdout
        .split("node.cpSync second-comer/absent")
        .nth(1)
        .and_then(|s| s.lines().filter_map(|l| l.trim().strip_prefix("repro: ")).nth(1))
        .expect("B's repro line");
    let words = shlex::split(repro).unwrap();
    let ran = std::process::Command::new(&words[0]).args(&words[1..]).output().unwrap();
    let said = String::from_utf8_lossy(&ran.stdout);
    assert!(said.contains("ok") && said.contains("name: second"), "{repro}\n{said}");
}

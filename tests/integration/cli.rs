//! Bad input gets a clear message naming the file, line or flag, and its own exit code.

use predicates::prelude::*;

use crate::common::{conformance, fixtures};

#[test]
fn help_documents_exit_codes() {
    conformance().arg("--help").assert().success().stdout(
        predicate::str::contains("Exit codes:").and(predicate::str::contains("5  a runtime named by --require")),
    );
}

#[test]
fn unknown_runtime_is_a_usage_error() {
    conformance().args(["run", "--runtime", "nodejs2"]).assert().code(2).stderr(
        predicate::str::contains("unknown runtime 'nodejs2' (in --runtime)")
            .and(predicate::str::contains("known runtimes: node, bun, deno")),
    );
}

#[test]
fn variant_glob_matching_nothing_is_a_usage_error() {
    conformance()
        .args(["run", "--variant", "node.*,nope.*"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("invalid value for --variant: 'nope.*' matches no variant"));
}

#[test]
fn bad_target_and_timeout_are_usage_errors() {
    conformance()
        .args(["run", "--target", "file,fifo"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--target: unknown target state 'fifo'"));
    conformance().args(["run", "--timeout=-1"]).assert().code(2).stderr(predicate::str::contains("--timeout"));
    conformance().args(["run", "--contenders", "1"]).assert().code(2);
}

#[test]
fn malformed_matrix_names_file_and_line() {
    let dir = fixtures().join("matrices").join("bad-field");
    conformance()
        .arg("--matrices")
        .arg(&dir)
        .arg("variants")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("node.toml:7:").and(predicate::str::contains("expected")));
}

#[test]
fn duplicate_variant_across_files_names_both() {
    let dir = fixtures().join("matrices").join("dup-id");
    conformance().arg("--matrices").arg(&dir).arg("variants").assert().code(2).stderr(
        predicate::str::contains("b.toml:4:")
            .and(predicate::str::contains("already defined in"))
            .and(predicate::str::contains("a.toml")),
    );
}

#[test]
fn unwritable_output_folder_exits_3_before_measuring() {
    let t = tempfile::tempdir().unwrap();
    let file = t.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    conformance()
        .args(["run", "--runtime", "node", "--out"])
        .arg(file.join("sub"))
        .assert()
        .code(3)
        .stderr(predicate::str::contains("cannot write").and(predicate::str::contains("a-file")));
}

#[test]
fn missing_explicit_runtime_exits_4() {
    let t = tempfile::tempdir().unwrap();
    conformance()
        .args(["run", "--runtime", "node=/nonexistent/bin/node", "--out"])
        .arg(t.path())
        .assert()
        .code(4)
        .stderr(predicate::str::contains("skip").and(predicate::str::contains("/nonexistent/bin/node does not exist")));
}

#[test]
fn required_runtime_missing_exits_5() {
    let t = tempfile::tempdir().unwrap();
    conformance()
        // an explicit path that does not exist: the project's .runtimes/bin (searched after
        // PATH) may hold a pwsh
        .args(["run", "--runtime", "pwsh=/nonexistent/bin/pwsh", "--require", "pwsh", "--out"])
        .arg(t.path())
        .assert()
        .code(5)
        .stderr(predicate::str::contains("required runtime(s) not available: pwsh"));
}

#[test]
fn variants_lists_the_matrices() {
    conformance().args(["variants", "--variant", "*.mkdirSync.recursive"]).assert().success().stdout(
        predicate::str::contains("node.mkdirSync.recursive")
            .and(predicate::str::contains("deno.mkdirSync.recursive"))
            .and(predicate::str::contains("node.writeFileSync").not()),
    );
}

#[test]
fn compare_reports_changes_and_exits_1() {
    let t = tempfile::tempdir().unwrap();
    let base = fixtures().join("results").join("base.json");
    let text = std::fs::read_to_string(&base).unwrap().replace("\"outcome\": \"refused\"", "\"outcome\": \"replaced\"");
    let new = t.path().join("new.json");
    std::fs::write(&new, text).unwrap();
    conformance()
        .args(["compare"])
        .arg(&base)
        .arg(&base)
        .assert()
        .code(0)
        .stdout(predicate::str::contains("0 changed"));
    conformance().args(["compare"]).arg(&base).arg(&new).assert().code(1).stdout(predicate::str::contains(
        "changed  node/node.writeFileSync.wx/second-comer/file: refused (node 20.20.2) -> replaced",
    ));
    let bad = t.path().join("bad.json");
    std::fs::write(&bad, "{\"schema\": 1,\n \"cells\": 3}").unwrap();
    conformance().args(["compare"]).arg(&base).arg(&bad).assert().code(2).stderr(predicate::str::contains("bad.json:"));
}

#[test]
fn report_rerenders_results() {
    let base = fixtures().join("results").join("base.json");
    conformance().args(["report", "--format", "markdown"]).arg(&base).assert().success().stdout(
        predicate::str::contains("## node 20.20.2").and(predicate::str::contains(
            "| node.writeFileSync.wx | `fs.writeFileSync(p, data, {flag:'wx'})` | acquired | refused EEXIST",
        )),
    );
}

#[test]
fn results_files_with_broken_race_counts_or_schema_are_rejected() {
    let t = tempfile::tempdir().unwrap();
    let base = fixtures().join("results").join("base.json");
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&base).unwrap()).unwrap();
    let race = v["cells"].as_array_mut().unwrap().iter_mut().find(|c| c["scenario"] == "race").unwrap();
    race["result"]["natural"]["stats"]["winners"] = serde_json::json!({"x": 3});
    let bad = t.path().join("bad-winners.json");
    std::fs::write(&bad, v.to_string()).unwrap();
    conformance().args(["report"]).arg(&bad).assert().code(2).stderr(
        predicate::str::contains("bad-winners.json:").and(predicate::str::contains("winners key 'x' is not a count")),
    );
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&base).unwrap()).unwrap();
    let race = v["cells"].as_array_mut().unwrap().iter_mut().find(|c| c["scenario"] == "race").unwrap();
    race["result"].as_object_mut().unwrap().remove("natural");
    race["result"].as_object_mut().unwrap().remove("amplified");
    let bad = t.path().join("no-runs.json");
    std::fs::write(&bad, v.to_string()).unwrap();
    conformance().args(["report"]).arg(&bad).assert().code(2).stderr(
        predicate::str::contains("no-runs.json: cell ").and(predicate::str::contains("a race cell without counts")),
    );
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&base).unwrap()).unwrap();
    v["schema"] = serde_json::json!(1);
    let old = t.path().join("old.json");
    std::fs::write(&old, v.to_string()).unwrap();
    conformance()
        .args(["report"])
        .arg(&old)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("old.json: not a conformance results file (schema 1)"));
    // a real schema 1 file (natural races only) is read: its races shown without amplification
    conformance().args(["report"]).arg(fixtures().join("results").join("schema1.json")).assert().success().stdout(
        predicate::str::contains("exclusive (nat 0/200 < 1.5%; amp unavailable)")
            .and(predicate::str::contains("not recorded (a schema 1 file: natural races only)")),
    );
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&base).unwrap()).unwrap();
    v["schema"] = serde_json::json!(99);
    let bad = t.path().join("schema.json");
    std::fs::write(&bad, v.to_string()).unwrap();
    conformance().args(["compare"]).arg(&base).arg(&bad).assert().code(2).stderr(predicate::str::contains("schema 99"));
}

#[test]
fn broken_pipe_is_not_an_error() {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("conformance"))
        .arg("variants")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader goes away, as `| head -1` does
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
}

/// A cell of a natural-only run at `-n 20`: a row counts 20 trials; the control is judged on
/// its natural run, its orderings one after another, 20 trials each at least, stopping at the
/// first that catches it.
fn natural_trials_at_n_20(c: &serde_json::Value) {
    let n = &c["result"]["natural"]["stats"]["trials"];
    if c["control"] == true {
        let caught_first = c["result"]["detection"]["worked"] == true && n == 20;
        assert!(caught_first || n == 40, "{c}");
    } else {
        assert_eq!(n, 20, "{c}");
    }
}

/// Where amplification cannot run, every race cell and the run say so, and the verdict rests
/// on the natural race: never silently.
#[test]
#[cfg(unix)]
fn unavailable_amplification_is_visible() {
    let _serial = crate::common::one_at_a_time();
    let out = tempfile::tempdir().unwrap();
    let a = conformance()
        .env("CONFORMANCE_STRACE", "/bin/false")
        .args(["run", "-r", "node", "-v", "node.writeFileSync.wx", "--scenario", "race", "-n", "20", "--out"])
        .arg(out.path())
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(stderr.contains("skip     amplified races: unavailable (strace -V failed"), "{stderr}");
    let r = crate::common::read_json(&out.path().join("results.json"));
    assert!(r["run_info"]["amplification"]["unavailable"].as_str().unwrap().contains("strace -V failed"));
    for c in r["cells"].as_array().unwrap() {
        assert!(c["result"]["amplified"].is_null(), "{c}");
        assert!(c["result"]["amplified_unavailable"].as_str().unwrap().contains("strace -V failed"), "{c}");
        assert_eq!(c["result"]["decided_by"], "natural");
        natural_trials_at_n_20(c);
    }
    let stdout = String::from_utf8_lossy(&a.get_output().stdout).to_string();
    assert!(stdout.contains("amplified races: strace -V failed"), "{stdout}");
}

#[test]
fn max_rate_adds_trials_until_the_bound_is_reached() {
    let _serial = crate::common::one_at_a_time();
    let out = tempfile::tempdir().unwrap();
    conformance()
        .args(["run", "-r", "node", "-v", "node.writeFileSync.wx", "--scenario", "race", "-n", "10", "-q"])
        .args(["--amplify", "off", "--max-rate", "2%", "--max-trials", "1000", "--out"])
        .arg(out.path())
        .assert()
        .success();
    let r = crate::common::read_json(&out.path().join("results.json"));
    // the run's steps, in order, with their wall times: together they are the run's
    let phases = r["run_info"]["phases"].as_array().unwrap();
    let steps: Vec<&str> = phases.iter().map(|p| p["phase"].as_str().unwrap()).collect();
    assert_eq!(steps, ["discover", "libraries", "start-probes", "turn", "pairs", "report"], "{phases:?}");
    assert!(phases[3]["runtime"].as_str().unwrap().starts_with("node "), "{phases:?}");
    let sum: f64 = phases.iter().map(|p| p["seconds"].as_f64().unwrap()).sum();
    let duration = r["run_info"]["duration_s"].as_f64().unwrap();
    assert!(sum > 0.0 && sum <= duration + 0.5, "steps {sum} s, run {duration} s");
    let wx = r["cells"].as_array().unwrap().iter().find(|c| c["variant"] == "node.writeFileSync.wx").unwrap();
    let m = &wx["result"]["natural"];
    // 0 multi-winner trials: stops at the first T with 1 − 0.05^(1/T) ≤ 2%, T = 149
    assert_eq!(m["verdict"], "exclusive", "{wx}");
    assert_eq!(m["stats"]["trials"], 149, "{wx}");
    assert!(m["stats"]["multi_winner_upper95"].as_f64().unwrap() <= 0.02);
    // the control, judged on its natural run, gets 20 trials per ordering whatever -n says,
    // one ordering after another: it stops after the first that catches it, or goes on to
    // the next, and where the natural race finds no window (a busy machine) it stops at the
    // bound like any other cell
    let ctl = r["cells"].as_array().unwrap().iter().find(|c| c["control"] == true).unwrap();
    let n = ctl["result"]["natural"]["stats"]["trials"].as_u64().unwrap();
    let multi = ctl["result"]["natural"]["stats"]["multi_winner_trials"].as_u64().unwrap();
    let worked = ctl["result"]["detection"]["worked"] == true;
    assert!((n == 20 && worked) || (n >= 40 && multi >= 1) || (n == 149 && multi == 0), "{ctl}");
    for (args, flag) in [
        (&["--max-rate", "5"][..], "--max-rate"),
        (&["--max-trials", "50"][..], "--max-rate"),
        (&["--max-rate", "1%", "--max-trials", "5", "-n", "20"][..], "--max-trials"),
        (&["--offsets", "-5"][..], "--offsets"),
        (&["--offsets", "0,x"][..], "--offsets"),
        (&["--amplify-delay-us", "200000"][..], "--amplify-delay-us"),
    ] {
        conformance().args(["run", "-r", "node"]).args(args).assert().code(2).stderr(predicates::str::contains(flag));
    }
}

/// `--amplify on` where this runtime's probe does not run under the tracer: the natural race
/// runs instead, and every cell says why there is no amplified one.
#[test]
#[cfg(unix)]
fn amplify_on_falls_back_to_natural_where_the_probe_breaks_under_the_tracer() {
    let _serial = crate::common::one_at_a_time();
    let out = tempfile::tempdir().unwrap();
    conformance()
        .env("CONFORMANCE_STRACE", fixtures().join("fake-strace").join("strace"))
        .args(["run", "-r", "node", "-v", "node.writeFileSync.wx", "--scenario", "race", "-n", "20", "-q"])
        .args(["--amplify", "on", "--out"])
        .arg(out.path())
        .assert()
        .success();
    let r = crate::common::read_json(&out.path().join("results.json"));
    assert!(r["run_info"]["amplification"]["unavailable"].is_null(), "the run-wide check passed");
    for c in r["cells"].as_array().unwrap() {
        assert!(c["result"]["amplified"].is_null(), "{c}");
        assert!(c["result"]["amplified_unavailable"].as_str().unwrap().contains("did not start under strace"), "{c}");
        natural_trials_at_n_20(c);
        assert_eq!(c["result"]["decided_by"], "natural", "{c}");
    }
}

/// Writes `files` (name, bytes) into a fresh folder and returns it, for `--matrices`.
fn matrices(files: &[(&str, &[u8])]) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    for (name, bytes) in files {
        std::fs::write(t.path().join(name), bytes).unwrap();
    }
    t
}

#[test]
fn every_matrix_error_names_file_and_line() {
    let ok = b"family = \"node\"\n[[variant]]\nid = \"node.x\"\ncall = \"c\"\ncreates = \"file\"\n";
    for (files, expected) in [
        (vec![("n.toml", &b"family = \"node\"\n# caf\xe9\n"[..])], "n.toml:2:6: not valid UTF-8"),
        (
            vec![("n.toml", &b"family = \"node\"\n[[variant]]\nid = \"node.x\\u001b\"\ncall = \"c\"\ncreates = \"file\"\n"[..])],
            "n.toml:3:6: variant id 'node.x\\u{1b}' has the character '\\u{1b}'",
        ),
        (
            vec![("n.toml", &b"family = \"node\"\n[[variant]]\nid = \"node.\"\ncall = \"c\"\ncreates = \"file\"\n"[..])],
            "n.toml:3:6: variant id 'node.' names no call after 'node.'",
        ),
        (
            vec![("n.toml", &b"family = \"node\"\n[[variant]]\nid = \"node.x\"\nfamily = \"deno\"\ncall = \"c\"\ncreates = \"file\"\n"[..])],
            "n.toml:4:1: unknown field `family`",
        ),
        (
            vec![("a.toml", &ok[..]), ("b.toml", &b"# node.x is here too\nfamily = \"node\"\n[[variant]]\nid = \"node.x\"\ncall = \"c\"\ncreates = \"file\"\n"[..])],
            "b.toml:4:6: variant id 'node.x' is already defined in",
        ),
    ] {
        let dir = matrices(&files);
        let out = conformance().arg("--matrices").arg(dir.path()).arg("variants").assert().code(2);
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(stderr.contains(expected), "expected {expected:?} in {stderr}");
        assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
    }
}

#[test]
fn results_files_that_contradict_themselves_are_rejected_with_the_cell() {
    let t = tempfile::tempdir().unwrap();
    let base = fixtures().join("results").join("base.json");
    let read = || -> serde_json::Value { serde_json::from_str(&std::fs::read_to_string(&base).unwrap()).unwrap() };
    let race =
        |v: &serde_json::Value| v["cells"].as_array().unwrap().iter().position(|c| c["scenario"] == "race").unwrap();
    let mut cases = Vec::new();
    let mut v = read();
    v["cells"][1]["result"].as_object_mut().unwrap().remove("outcome");
    cases.push((v, "missing field `outcome`".to_string()));
    let mut v = read();
    let i = race(&v);
    v["cells"][i]["result"]["outcome"] = "acquired".into();
    cases.push((v, "unknown field `outcome`".to_string()));
    let mut v = read();
    v["cells"][i]["result"] = v["cells"][1]["result"].clone();
    cases.push((
        v,
        format!(
            "cell {i} ('node 20.20.2/node.writeFileSync.wx/race/absent'): a race cell holding a second-comer result"
        ),
    ));
    let mut v = read();
    let dup = v["cells"][2].clone();
    v["cells"].as_array_mut().unwrap().push(dup);
    cases.push((
        v,
        "cell 11 ('node 20.20.2/node.writeFileSync.wx/second-comer/empty-dir'): repeats the id of cell 2".to_string(),
    ));
    let mut v = read();
    let i = race(&v);
    v["cells"][i]["result"]["natural"]["stats"]["trials"] = serde_json::json!(u64::MAX);
    cases.push((v, format!("cell {i} (")));
    for (n, (v, expected)) in cases.into_iter().enumerate() {
        let f = t.path().join(format!("bad{n}.json"));
        std::fs::write(&f, serde_json::to_string_pretty(&v).unwrap()).unwrap();
        for cmd in [&["report"][..], &["compare", base.to_str().unwrap()][..]] {
            conformance().args(cmd).arg(&f).assert().code(2).stderr(
                predicate::str::contains(format!("bad{n}.json:")).and(predicate::str::contains(expected.as_str())),
            );
        }
    }
    // a file too large to be a results file is refused before it is read (sparse: no disk used)
    let big = t.path().join("big.json");
    std::fs::File::create(&big).unwrap().set_len((256 << 20) + 1).unwrap();
    conformance()
        .args(["report"])
        .arg(&big)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("big.json: larger than 256 MiB"));
}

#[test]
fn a_changed_relative_outcome_fails_compare() {
    let t = tempfile::tempdir().unwrap();
    let base = fixtures().join("results").join("base.json");
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&base).unwrap()).unwrap();
    v["cells"][1]["result"]["relative"]["outcome"] = "replaced".into();
    let new = t.path().join("new.json");
    std::fs::write(&new, v.to_string()).unwrap();
    conformance().args(["compare"]).arg(&base).arg(&new).assert().code(1).stdout(predicate::str::contains(
        "changed  node/node.writeFileSync.wx/second-comer/file: refused (node 20.20.2) -> refused (rel: replaced)",
    ));
}

#[test]
fn flag_bounds_are_usage_errors() {
    for args in [&["variants", "-v", ""][..], &["variants", "-v", "node.*,"], &["run", "-v", ""]] {
        conformance()
            .args(args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("--variant").and(predicate::str::contains("empty pattern")));
    }
    for args in
        [&["run", "--hold-ms", "60001"][..], &["race", "--hold-ms", "60001", "-c", "node:node.writeFileSync.wx"]]
    {
        conformance().args(args).assert().code(2).stderr(predicate::str::contains("--hold-ms"));
    }
    let mut race = conformance();
    race.arg("race");
    for _ in 0..65 {
        race.args(["-c", "node:node.writeFileSync.wx"]);
    }
    race.assert().code(2).stderr(predicate::str::contains("--contender: 65 contenders given; a race has at most 64"));
}

#[test]
fn a_runtime_path_may_hold_a_comma() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("a,b");
    std::fs::create_dir(&dir).unwrap();
    let node = dir.join("node");
    let out =
        conformance().args(["runtimes", "--json", "-r"]).arg(format!("node={}", node.display())).assert().success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v[0]["path"], node.display().to_string());
    assert!(v[0]["reason"].as_str().unwrap().contains("a,b/node does not exist"), "{v}");
}

#[test]
fn wide_cells_are_cut_and_control_characters_escaped_in_variants() {
    let call = format!("\u{1b}[2J{}", "x".repeat(5 << 20));
    let text = format!("family = \"node\"\n[[variant]]\nid = \"node.x\"\ncall = {call:?}\ncreates = \"file\"\n")
        .replace("\\u{1b}", "\\u001b");
    let dir = matrices(&[("n.toml", text.as_bytes())]);
    let out = conformance().arg("--matrices").arg(dir.path()).arg("variants").assert().success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    // the 5 MiB call is cut: a few KiB for the whole listing (the hand-off recipes' rows, the
    // form and shows columns), every line far below the call's length
    // (a pipe gets the full layout, whose cells are cut at 400 columns, not 100)
    assert!(stdout.len() < 40 * 1024, "{} bytes", stdout.len());
    assert!(stdout.lines().all(|l| l.chars().count() < 600), "a line was not cut");
    assert!(stdout.contains("\\u{1b}[2Jxxx") && stdout.contains('…') && !stdout.contains('\u{1b}'), "{stdout}");
}

#[test]
fn control_characters_and_pipes_never_reach_tables_raw() {
    let t = tempfile::tempdir().unwrap();
    let base = fixtures().join("results").join("base.json");
    let text = std::fs::read_to_string(&base).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let label = v["cells"][0]["runtime"].as_str().unwrap().to_string();
    let hostile = "node \u{1b}]0;pwned\u{7}20\u{0}";
    for c in v["cells"].as_array_mut().unwrap() {
        c["runtime"] = hostile.into();
        c["id"] = c["id"].as_str().unwrap().replace(&label, hostile).into();
        c["call"] = "fs.a(p) | b\nc \u{9b}31m".into();
    }
    for r in v["run_info"]["runtimes"].as_array_mut().unwrap() {
        if r["label"] == label {
            r["label"] = hostile.into();
            r["path"] = "/usr/bin/no\u{1b}de".into();
        }
    }
    let f = t.path().join("hostile.json");
    std::fs::write(&f, v.to_string()).unwrap();
    for format in ["table", "markdown"] {
        let out = conformance().args(["report", "--format", format]).arg(&f).assert().success();
        let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
        assert!(!stdout.chars().any(|c| c.is_control() && c != '\n'), "{format}: {stdout:?}");
        assert!(stdout.contains("node \\u{1b}]0;pwned\\u{7}20\\u{0}"), "{format}: {stdout}");
        if format == "markdown" {
            assert!(stdout.contains("`fs.a(p) \\| b\\u{a}c \\u{9b}31m`"), "{stdout}");
            assert!(stdout.contains("`/usr/bin/no\\u{1b}de`"), "{stdout}");
            let rows = stdout.lines().filter(|l| l.starts_with("| node.writeFileSync.wx |")).count();
            assert_eq!(rows, 1, "{stdout}");
        }
    }
}

/// A runtime whose `--version` and probe print terminal escapes: discovery lines and the
/// `runtimes` table show them escaped.
#[test]
#[cfg(unix)]
fn a_runtime_s_escapes_never_reach_the_terminal_raw() {
    let (t, node) = crate::common::script("node", "#!/bin/sh\nif [ \"$1\" = --version ]; then printf 'v1.0\\033]0;pwned\\007\\033[2J\\n'; exit 0; fi\nprintf '\\033[31mnot a protocol line\\000\\n'\n");
    let out = conformance().args(["runtimes", "-r"]).arg(format!("node={}", node.display())).assert().success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(stdout.contains("node 1.0\\u{1b}]0;pwned\\u{7}\\u{1b}[2J"), "{stdout}");
    assert!(!stdout.chars().any(|c| c.is_control() && c != '\n'), "{stdout:?}");
    let out = conformance()
        .args(["run", "-v", "node.writeFileSync.wx", "--scenario", "second-comer", "-r"])
        .arg(format!("node={}", node.display()))
        .arg("--out")
        .arg(t.path().join("out"))
        .assert()
        .code(4);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("broken") && stderr.contains("\\u{1b}"), "{stderr}");
    assert!(!stderr.chars().any(|c| c.is_control() && c != '\n'), "{stderr:?}");
}

/// `run --dry-run` discovers the runtimes and starts their probes once, then lists what a run
/// would measure and races nothing: exit 0, the cells and trials listed, a missing runtime
/// with its reason, no --out folder and no scratch folder left. The fake probe's slow variant
/// sleeps 30 s after `go`: a dry run that raced it could not end within seconds.
#[test]
#[cfg(unix)]
fn dry_run_lists_the_cells_and_writes_nothing() {
    let t = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let fake = format!("node={}", fixtures().join("fake-runtimes").join("faults").join("node").display());
    let runtimes = format!("{fake},node=/nonexistent/node");
    let out = t.path().join("out");
    let dry_run = |extra: &[&str]| {
        let mut c = conformance();
        c.arg("--matrices").arg(fixtures().join("matrices").join("faults"));
        c.args(["run", "--dry-run", "-r", &runtimes, "-v", "node.fake.wx,node.fake.slow", "-n", "7"]);
        c.args(["--amplify", "off", "--timeout", "60", "--out"]).arg(&out).arg("--fs-root").arg(root.path());
        c.args(extra);
        let started = std::time::Instant::now();
        let a = c.assert().success();
        assert!(started.elapsed() < std::time::Duration::from_secs(20), "took {:?}", started.elapsed());
        assert!(!out.exists(), "a dry run made --out");
        let left: Vec<_> = std::fs::read_dir(root.path()).unwrap().collect();
        assert!(left.is_empty(), "scratch folder left: {left:?}");
        String::from_utf8(a.get_output().stdout.clone()).unwrap()
    };
    let text = dry_run(&[]);
    for expected in [
        "dry run: 11 cells on 1 runtime(s) would be measured; nothing was raced or written",
        "node 0.0.0: 11 cells",
        "second comer: one attempt per target (absent, file, empty-dir, dir); each attempt repeated with a relative path",
        "races: 3 contenders × 7 trials per mode; natural at 0 µs and the warm-up's release spread; amplified not run: off (--amplify off)",
        "node.fake.slow               second-comer ×4, race",
        "node.fake.check-then-create  race (detection control)",
        "node: skipped, not-found: /nonexistent/node does not exist",
        "11 cells; estimated attempts: 16 second-comer, 63 race",
    ] {
        assert!(text.contains(expected), "expected {expected:?} in\n{text}");
    }
    let v: serde_json::Value = serde_json::from_str(&dry_run(&["--json"])).unwrap();
    let ids: Vec<&str> = v["cells"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 11, "{v}");
    assert_eq!(ids[0], "node 0.0.0/node.fake.wx/second-comer/absent");
    assert_eq!(ids[10], "node 0.0.0/node.fake.check-then-create/race/absent");
    assert_eq!(v["attempts"]["race_min"], 63);
    assert_eq!(v["runtimes"][1]["status"], "not-found");
}

/// The probe-readiness wait before measuring takes its start-up limit from the plan
/// (max(30 s, --timeout)), not a fixed 60 s: a probe that never says hello is `broken` after
/// 31 s with `--timeout 31`.
#[test]
#[cfg(unix)]
fn probe_readiness_waits_as_long_as_the_timeout_says() {
    let (t, node) = crate::common::script(
        "node",
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo v1.0.0; exit 0; fi\nexec sleep 120\n",
    );
    let started = std::time::Instant::now();
    let out = conformance()
        .args(["run", "-v", "node.writeFileSync.wx", "--timeout", "31", "-r"])
        .arg(format!("node={}", node.display()))
        .arg("--out")
        .arg(t.path().join("out"))
        .assert()
        .code(4);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("broken: its node probe did not start: no hello within 31000 ms"), "{stderr}");
    assert!(started.elapsed() < std::time::Duration::from_secs(50), "took {:?}", started.elapsed());
}

/// A copy of the committed Linux baseline with `edit` applied, written to `dir/name`.
fn edited_baseline(dir: &std::path::Path, name: &str, edit: impl FnOnce(&mut serde_json::Value)) -> std::path::PathBuf {
    let base = crate::common::root().join("reports").join("linux").join("results.json");
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(base).unwrap()).unwrap();
    edit(&mut v);
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_string(&v).unwrap()).unwrap();
    p
}

#[test]
fn a_runtime_gone_from_the_new_run_is_missing_and_fails() {
    let t = tempfile::tempdir().unwrap();
    let base = crate::common::root().join("reports").join("linux").join("results.json");
    let is_cmd = |c: &serde_json::Value| c["runtime_name"] == "cmd";
    let cmd_cells = crate::common::read_json(&base)["cells"].as_array().unwrap().iter().filter(|c| is_cmd(c)).count();
    assert!(cmd_cells > 0);
    // the new run asked for cmd (its run_info lists it) but holds none of its cells
    let gone = edited_baseline(t.path(), "gone.json", |v| v["cells"].as_array_mut().unwrap().retain(|c| !is_cmd(c)));
    let out = conformance().arg("compare").arg(&base).arg(&gone).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains(&format!("0 changed, {cmd_cells} missing")), "{text}");
    assert!(text.contains("missing  cmd/cmd."), "{text}");
    let out = conformance().arg("diff").arg(&base).arg(&gone).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains(&format!("{cmd_cells} only in A")) && text.contains("  missing  cmd/"), "{text}");
    // a run that did not ask for cmd (`-r node,bun,…` without it) is narrower, not a regression
    let narrower = edited_baseline(t.path(), "narrower.json", |v| {
        v["cells"].as_array_mut().unwrap().retain(|c| !is_cmd(c));
        v["run_info"]["runtimes"].as_array_mut().unwrap().retain(|r| r["name"] != "cmd");
    });
    // (weak cells, such as pwsh's where its control was not caught, are listed but pass)
    conformance().arg("compare").arg(&base).arg(&narrower).assert().code(0).stdout(
        predicate::str::contains("0 changed, 0 missing, 0 new, 0 within noise, ")
            .and(predicate::str::contains(format!(" weak; {cmd_cells} not asked for"))),
    );
    conformance().arg("diff").arg(&base).arg(&narrower).assert().code(0);
    // a results file without cells compares nothing: never a pass
    let empty = edited_baseline(t.path(), "empty.json", |v| {
        v["cells"] = serde_json::json!([]);
        v["against"] = serde_json::json!([]);
        v["run_info"]["runtimes"] = serde_json::json!([]);
    });
    for (a, b) in [(&base, &empty), (&empty, &base)] {
        conformance()
            .arg("compare")
            .arg(a)
            .arg(b)
            .assert()
            .code(1)
            .stdout(predicate::str::contains("compared 0 cells").and(predicate::str::contains("nothing compared")));
        conformance().arg("diff").arg(a).arg(b).assert().code(1).stdout(predicate::str::contains("nothing compared"));
    }
}

#[test]
fn a_narrower_run_with_expect_compares_what_it_asked_for() {
    if !crate::common::available("node") {
        return;
    }
    let base = crate::common::root().join("reports").join("linux").join("results.json");
    let base = base.to_str().unwrap();
    let args = ["-r", "node", "-v", "node.writeFileSync.wx", "--scenario", "second-comer", "--target", "absent"];
    let (r, text) = crate::common::run(&[&args[..], &["--expect", base]].concat());
    assert!(text.contains("compared 1 cells: 0 changed, 0 missing"), "{text}");
    // its selection is recorded for later comparisons
    let sel = &r["run_info"]["selection"];
    assert_eq!(sel["variants"], serde_json::json!(["node.writeFileSync.wx"]), "{sel}");
    assert_eq!(sel["scenarios"], serde_json::json!(["second-comer"]), "{sel}");
    assert_eq!(sel["targets"], serde_json::json!(["absent"]), "{sel}");
}

#[test]
fn an_unwritable_cache_exits_3_naming_cache_dir() {
    // CoreCLR builds its probe in the cache: with the cache unwritable nothing can be measured,
    // and the cause is the folder (exit 3), not a missing runtime (exit 4)
    conformance()
        .args(["--cache-dir", "/proc/conformance-no-such-cache", "run", "--dry-run", "-r", "coreclr"])
        .assert()
        .code(3)
        .stderr(
            predicate::str::contains("/proc/conformance-no-such-cache").and(predicate::str::contains("--cache-dir")),
        );
}

#[test]
fn a_too_long_path_segment_names_path_segment() {
    let fs_root = tempfile::tempdir().unwrap();
    conformance()
        .args(["run", "--dry-run", "-r", "node", "--path-segment", &"a".repeat(300), "--fs-root"])
        .arg(fs_root.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--path-segment").and(predicate::str::contains("--fs-root").not()));
}

#[test]
fn merging_a_file_with_itself_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let base = fixtures().join("results").join("base.json");
    let same = t.path().join("same.json");
    std::fs::copy(&base, &same).unwrap();
    conformance()
        .arg("merge")
        .arg(&same)
        .arg(&same)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("same.json").and(predicate::str::contains("given twice")));
    // the same file by another path
    conformance()
        .current_dir(t.path())
        .arg("merge")
        .arg(&same)
        .arg("./same.json")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("given twice"));
}

#[test]
fn report_of_a_file_without_cells_is_bad_input() {
    let t = tempfile::tempdir().unwrap();
    let empty = edited_baseline(t.path(), "empty.json", |v| v["cells"] = serde_json::json!([]));
    conformance()
        .arg("report")
        .arg(&empty)
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains("empty.json").and(predicate::str::contains("holds no cells")));
}

#[test]
fn docs_markers_name_the_file_and_line_at_fault() {
    let t = tempfile::tempdir().unwrap();
    let results = crate::common::root().join("reports").join("linux").join("results.json");
    let unclosed = t.path().join("unclosed.md");
    let example = "```text\n<!-- conformance:table runtime=bun -->\n<!-- /conformance:table -->\n```\n";
    std::fs::write(&unclosed, format!("# T\n\n<!-- conformance:table runtime=node -->\nstale\n\n{example}")).unwrap();
    let unspaced = t.path().join("unspaced.md");
    std::fs::write(&unspaced, "# T\n<!--conformance:table runtime=node-->\nstale\n<!-- /conformance:table -->\n")
        .unwrap();
    for (doc, at) in [(&unclosed, "unclosed.md:3:"), (&unspaced, "unspaced.md:2:")] {
        conformance()
            .args(["docs", "--check", "--results"])
            .arg(&results)
            .arg(doc)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(at));
    }
}

/// `--out` naming one of the command's inputs, by any spelling, is refused (exit 2, naming
/// `--out` and the input) before anything is written: the input keeps its bytes.
#[test]
fn out_naming_an_input_is_refused_and_the_input_kept() {
    let d = tempfile::tempdir().unwrap();
    let b = d.path().join("B.json");
    let c = d.path().join("C.json");
    std::fs::copy(fixtures().join("results/base.json"), &b).unwrap();
    std::fs::copy(fixtures().join("results/base.json"), &c).unwrap();
    let bytes = std::fs::read(&b).unwrap();
    // another spelling of B.json: through `sub/..`
    std::fs::create_dir(d.path().join("sub")).unwrap();
    let b_again = d.path().join("sub").join("..").join("B.json");
    let (bs, cs, b2) = (b.to_str().unwrap(), c.to_str().unwrap(), b_again.to_str().unwrap());
    let cases: [&[&str]; 6] = [
        &["compare", bs, bs, "--out", bs],
        &["compare", bs, cs, "--out", b2],
        &["diff", cs, bs, "--out", bs],
        &["merge", cs, bs, "--out", b2],
        &["report", bs, "--out", bs],
        &["report", cs, "-f", "junit", "--expect", bs, "--out", bs],
    ];
    for args in cases {
        conformance()
            .args(args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("--out").and(predicate::str::contains("is also an input")));
        assert_eq!(std::fs::read(&b).unwrap(), bytes, "{args:?} changed the input");
    }
}

/// `run --out DIR` where DIR holds an earlier run's results is refused (exit 2, saying what is
/// there) and leaves them; `--force` replaces them.
#[test]
fn run_into_earlier_results_is_refused_unless_force() {
    if !crate::common::available("node") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let fs_root = tempfile::tempdir().unwrap();
    let earlier = d.path().join("results.json");
    std::fs::copy(fixtures().join("results/base.json"), &earlier).unwrap();
    let bytes = std::fs::read(&earlier).unwrap();
    let run = |force: bool| {
        let mut cmd = conformance();
        cmd.args([
            "run",
            "-r",
            "node",
            "-v",
            "node.writeFileSync.wx",
            "--scenario",
            "second-comer",
            "--target",
            "file",
        ])
        .args(["--no-relative", "-q", "--out"])
        .arg(d.path())
        .arg("--fs-root")
        .arg(fs_root.path());
        if force {
            cmd.arg("--force");
        }
        cmd.assert()
    };
    run(false).code(2).stderr(
        predicate::str::contains("--out")
            .and(predicate::str::contains("already holds an earlier run's results (results.json: ")),
    );
    assert_eq!(std::fs::read(&earlier).unwrap(), bytes, "the earlier results were changed");
    assert!(!d.path().join("summary.md").exists());
    run(true).success();
    let now = crate::common::read_json(&earlier);
    assert_eq!(now["cells"].as_array().unwrap().len(), 1, "--force replaced the results");
}

/// Commands that only read and render (here `variants` on a large matrix) end at the first
/// SIGTERM, as `timeout` and CI cancels expect: they start no process and write atomically.
#[cfg(unix)]
#[test]
fn reading_commands_end_at_the_first_signal() {
    use std::os::unix::process::ExitStatusExt;
    let d = tempfile::tempdir().unwrap();
    let mut text = String::from("family = \"node\"\n");
    for i in 0..300_000 {
        text.push_str(&format!("\n[[variant]]\nid = \"node.v{i}\"\ncall = \"c{i}(p)\"\ncreates = \"file\"\n"));
    }
    std::fs::write(d.path().join("big.toml"), text).unwrap();
    let bin = conformance().get_program().to_owned();
    let mut child = std::process::Command::new(bin)
        .arg("--matrices")
        .arg(d.path())
        .arg("variants")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    std::process::Command::new("kill").arg("-TERM").arg(child.id().to_string()).status().unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(15), "variants went on after SIGTERM: {status:?}");
}

/// `CONFORMANCE_OFFLINE` takes the usual boolean spellings, not only `true`.
#[test]
fn offline_env_takes_the_usual_boolean_spellings() {
    for v in ["1", "true", "yes", "on"] {
        conformance()
            .args(["install", "deno@1.0.0"])
            .env("CONFORMANCE_OFFLINE", v)
            .assert()
            .code(4)
            .stderr(predicate::str::contains("--offline forbids fetching it"));
    }
    conformance().args(["install", "deno@1.0.0"]).env("CONFORMANCE_OFFLINE", "maybe").assert().code(2);
}

/// Doubtful input is refused with exit 2 and a message naming the file or flag: a `*.toml`
/// that is a folder or a link loop, a 1 MB variant id, a results file with a negative
/// `elapsed_ms` or an empty `runtime_name`, a merge of runs without cells, `--offsets 1,,2`.
#[cfg(unix)]
#[test]
fn doubtful_input_is_refused_with_its_place() {
    let t = tempfile::tempdir().unwrap();
    let node = std::fs::read_to_string(crate::common::root().join("matrices/node.toml")).unwrap();
    let matrices = |name: &str, extra: &dyn Fn(&std::path::Path)| {
        let d = t.path().join(name);
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("node.toml"), &node).unwrap();
        extra(&d);
        d
    };
    let folder = matrices("folder", &|d| std::fs::create_dir(d.join("more.toml")).unwrap());
    let looped = matrices("loop", &|d| std::os::unix::fs::symlink("x.toml", d.join("x.toml")).unwrap());
    let long = "a".repeat(1 << 20);
    let long_id = matrices("long", &|d| {
        std::fs::write(
            d.join("big.toml"),
            format!("family = \"node\"\n[[variant]]\nid = \"node.{long}\"\ncall = \"c(p)\"\ncreates = \"file\"\n"),
        )
        .unwrap()
    });
    for (d, says) in
        [(&folder, "more.toml: is a folder"), (&looped, "x.toml: cannot be read"), (&long_id, "ids are at most")]
    {
        conformance().arg("--matrices").arg(d).arg("variants").assert().code(2).stderr(predicate::str::contains(says));
    }
    let negative = edited_baseline(t.path(), "negative.json", |v| v["cells"][0]["elapsed_ms"] = (-5.0).into());
    let nameless = edited_baseline(t.path(), "nameless.json", |v| v["cells"][3]["runtime_name"] = "".into());
    for (f, says) in [(&negative, "elapsed_ms is -5"), (&nameless, "runtime_name is empty")] {
        conformance().arg("report").arg(f).assert().code(2).stderr(
            predicate::str::contains(f.file_name().unwrap().to_str().unwrap()).and(predicate::str::contains(says)),
        );
    }
    let empty = |name: &str, os: &str| {
        edited_baseline(t.path(), name, |v| {
            v["cells"] = serde_json::json!([]);
            v["run_info"]["os"] = os.into();
        })
    };
    let (a, b) = (empty("a.json", "linux-a"), empty("b.json", "linux-b"));
    let out = t.path().join("merged.json");
    conformance()
        .arg("merge")
        .arg(&a)
        .arg(&b)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("hold no cells"));
    assert!(!out.exists(), "a merge of nothing was written");
    conformance()
        .args(["run", "--dry-run", "-r", "node", "--offsets", "1,,2"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--offsets").and(predicate::str::contains("empty item")));
}

/// A selection whose variants run on a found runtime but whose scenarios and target states
/// give no cell (a call without a file source has no `self` target) ends with exit 4, saying
/// so and pointing at the dry run, not that no runtime runs the variants.
#[test]
fn a_selection_that_gives_no_cell_says_so() {
    if !crate::common::available("node") {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let o = conformance()
        .args(["run", "-r", "node", "-v", "node.writeFileSync.wx", "--scenario", "second-comer", "--target", "self"])
        .arg("--out")
        .arg(out.path().join("out"))
        .assert()
        .code(4);
    let stderr = String::from_utf8_lossy(&o.get_output().stderr).to_string();
    assert!(stderr.contains("give no cell to measure") && stderr.contains("run --dry-run"), "{stderr}");
}

/// `-h` is a screen (at most 70 lines): the four flags a newcomer needs first lead, the rest are grouped under
/// headings, examples close it; `--help` keeps the long texts and the exit codes.
#[test]
fn short_help_is_grouped_and_fits_a_terminal() {
    let out = conformance().args(["run", "-h"]).env("COLUMNS", "100").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.lines().count() <= 70, "run -h is {} lines:\n{text}", text.lines().count());
    let wide: Vec<&str> = text.lines().filter(|l| l.chars().count() > 100).collect();
    assert!(wide.is_empty(), "lines over 100 columns: {wide:#?}");
    let at = |needle: &str| text.find(needle).unwrap_or_else(|| panic!("{needle} missing from run -h:\n{text}"));
    let first = at("Selection:");
    for flag in ["--runtime", "--variant", "--quick", "--out"] {
        assert!(at(flag) < first, "{flag} leads, before the groups:\n{text}");
    }
    let headings = ["Selection:", "Hand-offs:", "File system:", "Races:", "Output:", "Global:", "Examples:"];
    for h in headings {
        at(h);
    }
    // every flag under one heading only: `--out` is not repeated under a flattened group
    assert_eq!(text.matches("--out <DIR>").count(), 1, "{text}");
    let top = conformance().arg("-h").output().unwrap();
    let top = String::from_utf8(top.stdout).unwrap();
    assert!(top.lines().count() <= 50, "conformance -h is {} lines:\n{top}", top.lines().count());
    assert!(top.contains("Examples:") && !top.contains("Exit codes:"), "{top}");
    let long = String::from_utf8(conformance().args(["run", "--help"]).output().unwrap().stdout).unwrap();
    assert!(long.contains("A comma inside a PATH or range is kept"), "the long text stays in --help");
    // the flags a first run seldom needs are in --help only
    for flag in ["--oneshot-trials", "--hold-ms", "--path-segment", "--cache-dir", "--items"] {
        assert!(!text.contains(flag) && long.contains(flag), "{flag}: in --help, not in -h");
    }
}

/// `completions SHELL` prints a script for each shell clap_complete knows; bash's parses.
#[test]
fn completions_are_printed_for_every_shell() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = conformance().args(["completions", shell]).output().unwrap();
        assert!(out.status.success(), "{shell}: {}", String::from_utf8_lossy(&out.stderr));
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(script.contains("hostile-paths") && script.contains("completions"), "{shell}: {script}");
        if shell == "bash" {
            let d = tempfile::tempdir().unwrap();
            let f = d.path().join("conformance.bash");
            std::fs::write(&f, &script).unwrap();
            let parsed = std::process::Command::new("bash").arg("-n").arg(&f).output().unwrap();
            assert!(parsed.status.success(), "bash -n: {}", String::from_utf8_lossy(&parsed.stderr));
        }
    }
    conformance().args(["completions", "tcsh"]).assert().code(2).stderr(predicate::str::contains("possible values"));
}

/// `man` prints conformance(1); `man --out DIR` writes one page per command, each naming it.
#[test]
fn man_pages_are_printed_or_written_per_command() {
    let out = conformance().arg("man").output().unwrap();
    assert!(out.status.success());
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.contains(".TH conformance 1") && page.contains("SUBCOMMANDS"), "{}", &page[..page.len().min(400)]);
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("man 1");
    conformance().args(["man", "--out"]).arg(&dir).assert().success();
    let mut cli = <conformance::cli::Cli as clap::CommandFactory>::command();
    cli.build();
    let commands: Vec<String> =
        cli.get_subcommands().map(|s| s.get_name().to_string()).filter(|n| n != "help").collect();
    let mut written: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    written.sort();
    let mut expected: Vec<String> =
        commands.iter().map(|c| format!("conformance-{c}.1")).chain(["conformance.1".to_string()]).collect();
    expected.sort();
    assert_eq!(written, expected);
    let run = std::fs::read_to_string(dir.join("conformance-run.1")).unwrap();
    assert!(run.contains(".TH conformance-run 1") && run.contains("\\-\\-hostile\\-paths"), "{run}");
}

/// `--out` naming a file, or a path through a file, is refused in words (exit 3), before
/// anything is measured.
#[test]
fn out_naming_a_file_is_refused_in_words() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("results.json");
    std::fs::write(&file, "mine").unwrap();
    for (out, says) in [
        (file.clone(), "it is a file, not a folder"),
        (file.join("sub"), &*format!("{} is a file, not a folder", file.display())),
    ] {
        conformance()
            .args(["run", "-r", "node", "-v", "node.mkdirSync", "--scenario", "second-comer", "--out"])
            .arg(&out)
            .assert()
            .code(3)
            .stderr(predicate::str::contains(says).and(predicate::str::contains("name a folder")));
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
}

/// The committed baseline's report fits 80 and 120 columns (`COLUMNS`): tables narrow their
/// widest columns and wrap at spaces, a table that cannot fit becomes one card per row, notes
/// are wrapped; only a line holding an unbreakable URL may be longer. `--wide` keeps the
/// full layout.
#[test]
fn report_tables_fit_80_and_120_columns() {
    let base = crate::common::root().join("reports").join("linux").join("results.json");
    let report = |columns: &str, extra: &[&str]| {
        let out = conformance().arg("report").arg(&base).args(extra).env("COLUMNS", columns).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    for width in [80, 120] {
        let text = report(&width.to_string(), &[]);
        let over: Vec<&str> = text.lines().filter(|l| l.chars().count() > width && !l.contains("https://")).collect();
        assert!(over.is_empty(), "{} lines over {width} columns: {:#?}", over.len(), &over[..over.len().min(5)]);
        assert!(text.contains("which call to use") && text.contains("node.writeFileSync.wx"), "{width}");
    }
    // 120 columns hold node's table (box-drawn); 80 do not: its rows become cards
    let wide_enough = report("120", &[]);
    assert!(wide_enough.lines().any(|l| l.starts_with("│ node.writeFileSync.wx")), "a table row at 120");
    let narrow = report("80", &[]);
    assert!(narrow.lines().any(|l| l == "node.writeFileSync.wx"), "a card at 80");
    assert!(narrow.lines().any(|l| l.starts_with("  absent: acquired; file: refused EEXIST")), "a card's cells at 80");
    let full = report("80", &["--wide"]);
    assert!(full.lines().any(|l| l.chars().count() > 200), "--wide keeps the full layout");
}

/// `variants`, `runtimes`, `diff` and `compare` fit 80 and 120 columns as `report` does: a row
/// too wide becomes a card, whose lines are wrapped at the width (a long call on a line of its
/// own); the lines of a diff or a comparison are wrapped, their `repro:` lines left whole to be
/// pasted.
#[test]
fn listings_fit_80_and_120_columns() {
    let t = tempfile::tempdir().unwrap();
    let base = crate::common::root().join("reports").join("linux").join("results.json");
    // the baseline with one second comer changed: a diff with a changed cell and its repro lines
    let changed = edited_baseline(t.path(), "changed.json", |v| {
        let c = v["cells"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|c| {
                c["variant"] == "node.writeFileSync.wx" && c["scenario"] == "second-comer" && c["target"] == "file"
            })
            .expect("node's wx against a file");
        c["result"]["outcome"] = "replaced".into();
        c["result"].as_object_mut().unwrap().remove("error");
        c["result"]["relative"] = serde_json::json!({"outcome": "replaced"});
    });
    // `runtimes -r node`: every runtime's probe would start Wine beside the cmd tests
    let commands: [(&str, Vec<std::ffi::OsString>); 4] = [
        ("variants", vec!["variants".into()]),
        ("runtimes", vec!["runtimes".into(), "-r".into(), "node".into()]),
        ("diff", vec!["diff".into(), base.clone().into(), changed.clone().into()]),
        ("compare", vec!["compare".into(), base.into(), changed.into()]),
    ];
    for (name, args) in &commands {
        for width in [80, 120] {
            let out = conformance().args(args).env("COLUMNS", width.to_string()).output().unwrap();
            assert!(out.status.code().is_some_and(|c| c <= 1), "{name}: {}", String::from_utf8_lossy(&out.stderr));
            let text = String::from_utf8(out.stdout).unwrap();
            // a comparison with one changed cell is that line and the count line
            let least = if *name == "compare" { 2 } else { 4 };
            assert!(text.lines().count() >= least, "{name} printed something: {text}");
            let over: Vec<&str> = text
                .lines()
                .filter(|l| {
                    l.chars().count() > width && !l.contains("https://") && !l.trim_start().starts_with("repro: ")
                })
                .collect();
            assert!(
                over.is_empty(),
                "{name}: {} lines over {width} columns: {:#?}",
                over.len(),
                &over[..over.len().min(5)]
            );
            if *name == "diff" {
                assert!(text.lines().any(|l| l.trim_start().starts_with("repro: ")), "a changed cell's repro: {text}");
            }
            if *name == "compare" {
                assert!(text.contains("node.writeFileSync.wx"), "the changed cell is named: {text}");
            }
        }
    }
}

/// `run --dry-run --estimate-from FILE` says how long the run would measure, in seconds, from
/// that file's cells, naming it and how many cells it timed.
#[test]
fn dry_run_estimates_seconds_from_an_earlier_run() {
    if !crate::common::available("node") {
        return;
    }
    let base = crate::common::root().join("reports").join("linux").join("results.json");
    let out = conformance().args(["run", "--dry-run", "-r", "node", "--estimate-from"]).arg(&base).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text.lines().find(|l| l.starts_with("estimated time: ")).unwrap_or_else(|| panic!("{text}"));
    // `at least N s` where some cells had no time to go by
    let range =
        line["estimated time: ".len()..].trim_start_matches("at least ").split(" s of measuring").next().unwrap();
    let (low, high) = range.split_once('–').unwrap_or((range, range));
    let (low, high): (f64, f64) = (low.parse().unwrap(), high.parse().unwrap());
    assert!(0.0 < low && low <= high, "{line}");
    assert!(line.contains(&format!("from the cells of {}", base.display())), "{line}");
}

/// `race -n 5` races its contenders 5 times but gives the detection control the trials `run`
/// would (at least 20 in the mode it is judged in), so that a short race is not called weak
/// for want of control trials.
#[test]
fn a_short_race_gives_its_control_the_trials_run_would() {
    let _serial = crate::common::one_at_a_time();
    if !crate::common::available("node") {
        return;
    }
    let out = conformance()
        .args(["race", "-c", "node:node.writeFileSync.wx", "-c", "node:node.writeFileSync.wx"])
        .args(["-n", "5", "--amplify", "off", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["natural"]["stats"]["trials"], 5, "the contenders' race: {j}");
    let d = &j["detection"];
    assert_eq!(d["mode"], "natural", "{d}");
    assert!(d["trials"].as_u64().is_some_and(|t| t >= 20), "the control's trials: {d}");
}

/// Colour: off when stdout is not a terminal (as here) or `NO_COLOR` is set, on with `--color
/// always` or `CLICOLOR_FORCE`; a file written with `--out` is plain whatever the flag says.
#[test]
fn colour_follows_the_flag_the_environment_and_the_terminal() {
    let base = crate::common::root().join("reports").join("linux").join("results.json");
    let report = |args: &[&str], env: &[(&str, &str)]| {
        let mut c = conformance();
        c.arg("report").arg(&base).arg("--answers").args(args).env_remove("NO_COLOR").env_remove("CLICOLOR_FORCE");
        for (k, v) in env {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let green = "\u{1b}[32muse\u{1b}[0m:";
    let red = "\u{1b}[31mdon't use\u{1b}[0m:";
    assert!(!report(&[], &[]).contains('\u{1b}'), "a pipe gets no colour");
    let forced = report(&["--color", "always"], &[]);
    assert!(forced.contains(green) && forced.contains(red), "{}", &forced[..forced.len().min(400)]);
    assert!(report(&[], &[("CLICOLOR_FORCE", "1")]).contains(green), "CLICOLOR_FORCE turns it on");
    assert!(!report(&[], &[("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")]).contains('\u{1b}'), "NO_COLOR wins");
    assert!(!report(&["--color", "never"], &[("CLICOLOR_FORCE", "1")]).contains('\u{1b}'));
    // the table cells are coloured from their verdicts
    let out = conformance().arg("report").arg(&base).args(["--color", "always", "--wide"]).output().unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("\u{1b}[31mreplaced\u{1b}[0m") && table.contains("\u{1b}[32mrefused EEXIST\u{1b}[0m"));
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("report.txt");
    conformance().arg("report").arg(&base).args(["--color", "always", "--out"]).arg(&file).assert().success();
    assert!(!std::fs::read_to_string(&file).unwrap().contains('\u{1b}'), "a file is plain");
    // `runtimes` colours its status word; a runtime that is not there is yellow (a fake
    // name on PATH: no runtime is needed)
    let empty = tempfile::tempdir().unwrap();
    let out = conformance()
        .args(["runtimes", "-r", "node", "--color", "always", "--offline"])
        .env("PATH", empty.path())
        .output()
        .unwrap();
    let listed = String::from_utf8(out.stdout).unwrap();
    assert!(listed.contains("\u{1b}[33mnot found\u{1b}[0m"), "{listed}");
}

/// `report -r/-v/--scenario/--only` narrow what every format shows; a runtime the file does not
/// hold, or a selection that leaves nothing, is refused naming the flag (exit 2).
#[test]
fn report_filters_by_runtime_variant_scenario_and_answer() {
    let base = crate::common::root().join("reports").join("linux").join("results.json");
    let csv = |args: &[&str]| {
        let out = conformance().arg("report").arg(&base).args(["-f", "csv"]).args(args).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let all = csv(&[]);
    let node_race = csv(&["-r", "node", "--scenario", "race", "-v", "node.writeFileSync.*"]);
    let rows: Vec<&str> = node_race.lines().skip(1).collect();
    assert!(!rows.is_empty() && rows.len() < all.lines().count() / 10, "{node_race}");
    // `race` keeps the call rows whole (a call's answer rests on its second comers too)
    assert!(
        rows.iter()
            .all(|l| l.contains("node.writeFileSync.") && (l.contains(",race,") || l.contains(",second-comer,"))),
        "{node_race}"
    );
    assert!(rows.iter().any(|l| l.contains(",race,")), "{node_race}");
    // the answers of a filtered report are the whole file's
    let answers = |args: &[&str]| {
        let out = conformance().arg("report").arg(&base).arg("--answers").args(args).output().unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let only_node = answers(&["-r", "node", "--scenario", "second-comer"]);
    let whole = answers(&[]);
    // node's call answers, filtered (no hand-off kept) and not (its recipes follow them)
    let block = |t: &str| t.split("\n\n").find(|b| b.starts_with("node ")).unwrap_or_default().to_string();
    let (filtered, all) = (block(&only_node), block(&whole));
    assert!(filtered.contains("which call to use") && !filtered.contains("hand-off recipe"), "{filtered}");
    assert!(all.starts_with(&filtered), "node's answers, filtered:\n{filtered}\nand not:\n{all}");
    let yes = csv(&["-r", "node", "--only", "yes", "--scenario", "second-comer,race"]);
    assert!(yes.contains("node.writeFileSync.wx") && !yes.contains("node.writeFileSync.w,"), "{yes}");
    let no = csv(&["-r", "node", "--only", "no", "--scenario", "second-comer,race"]);
    assert!(no.contains("node.writeFileSync.w,") && !no.contains("node.writeFileSync.wx"), "{no}");
    conformance()
        .arg("report")
        .arg(&base)
        .args(["-r", "nodejs"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--runtime: 'nodejs' is not in the file"));
    conformance()
        .arg("report")
        .arg(&base)
        .args(["-v", "nothing.*"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--variant: it leaves no cell of the file"));
}

//! `report --format …`, `--out`, `compare --format junit`, `merge`, and their error exits,
//! on the committed fixture results (nothing is measured).

use std::path::{Path, PathBuf};

use predicates::prelude::*;

use crate::common::{conformance, fixtures};

fn base() -> PathBuf {
    fixtures().join("results").join("base.json")
}

/// A copy of the fixture measured "on tmpfs", where the second comer against an existing file
/// of `node.writeFileSync.wx` was replaced instead of refused.
fn tmpfs_run(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(base()).unwrap().replace("\"fs_type\": \"ext4\"", "\"fs_type\": \"tmpfs\"");
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    for c in v["cells"].as_array_mut().unwrap() {
        if c["id"] == "node 20.20.2/node.writeFileSync.wx/second-comer/file" {
            c["result"]["outcome"] = "replaced".into();
            c["result"].as_object_mut().unwrap().remove("error");
            c["result"]["relative"] = serde_json::json!({"outcome": "replaced"});
        }
    }
    let p = dir.join("tmpfs.json");
    std::fs::write(&p, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    p
}

#[test]
fn every_format_renders_and_markdown_is_an_alias_of_md() {
    for (format, expect) in [
        ("table", "node 20.20.2"),
        ("md", "## node 20.20.2"),
        ("markdown", "## node 20.20.2"),
        ("html", "<!DOCTYPE html>"),
        ("csv", "machine,runtime,runtime_name,version,variant"),
        ("json", "\"schema\": 3"),
    ] {
        conformance()
            .args(["report", "--format", format])
            .arg(base())
            .assert()
            .code(0)
            .stdout(predicate::str::contains(expect));
    }
    let md = conformance().args(["report", "-f", "md"]).arg(base()).output().unwrap().stdout;
    let markdown = conformance().args(["report", "-f", "markdown"]).arg(base()).output().unwrap().stdout;
    assert_eq!(md, markdown);
}

#[test]
fn out_writes_the_file_and_an_unwritable_path_exits_3() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("report.csv");
    conformance().args(["report", "-f", "csv", "--out"]).arg(&out).arg(base()).assert().code(0).stdout("");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.starts_with("machine,runtime,"), "{text}");
    let printed = conformance().args(["report", "-f", "csv"]).arg(base()).output().unwrap().stdout;
    assert_eq!(text.as_bytes(), printed);
    // no temp file is left beside it
    assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 1);
    let bad = t.path().join("no-such-folder").join("report.html");
    conformance()
        .args(["report", "-f", "html", "--out"])
        .arg(&bad)
        .arg(base())
        .assert()
        .code(3)
        .stderr(predicate::str::contains(bad.display().to_string()));
}

#[test]
fn junit_from_compare_and_from_report_expect() {
    let t = tempfile::tempdir().unwrap();
    let new = tmpfs_run(t.path());
    let out = conformance().args(["compare", "-f", "junit"]).arg(base()).arg(&new).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let xml = String::from_utf8(out.stdout).unwrap();
    assert!(xml.starts_with("<?xml"), "{xml}");
    assert_eq!(xml.matches("<failure ").count(), 1, "{xml}");
    assert!(xml.contains("refused (node 20.20.2) -&gt; replaced (node 20.20.2)"), "{xml}");
    let via_report = conformance().args(["report", "-f", "junit", "--expect"]).arg(base()).arg(&new).output().unwrap();
    assert_eq!(via_report.status.code(), Some(1));
    assert_eq!(String::from_utf8(via_report.stdout).unwrap(), xml);
    conformance()
        .args(["report", "-f", "junit", "--expect"])
        .arg(base())
        .arg(base())
        .assert()
        .code(0)
        .stdout(predicate::str::contains("failures=\"0\""));
    // junit needs a baseline; a baseline needs junit
    conformance()
        .args(["report", "-f", "junit"])
        .arg(base())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--expect"));
    conformance().args(["report", "-f", "csv", "--expect"]).arg(base()).arg(base()).assert().code(2);
}

/// The HTML report gives each cell, in its details, the command that measures it again, one
/// per measured cell, each a command line a shell can split.
#[test]
fn html_cells_carry_the_command_that_measures_them_again() {
    let out = conformance().args(["report", "-f", "html"]).arg(base()).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let html = String::from_utf8(out.stdout).unwrap();
    let again: Vec<&str> = html.match_indices("again: ").map(|(i, _)| &html[i + 7..]).collect();
    let cells = conformance::report::json::read(&base()).unwrap().cells.len();
    assert_eq!(again.len(), cells, "one again line per cell");
    let first = again[0].split(['<', '\n']).next().unwrap();
    assert_eq!(first, "conformance run -r node -v node.writeFileSync.wx --scenario second-comer --target absent");
    for line in &again {
        let escaped = line.split(['<', '\n']).next().unwrap();
        // the page escapes what HTML would read (quotes, ampersands): the line as typed
        let line = [("&quot;", "\""), ("&#39;", "'"), ("&lt;", "<"), ("&gt;", ">"), ("&amp;", "&")]
            .iter()
            .fold(escaped.to_string(), |l, (from, to)| l.replace(from, to));
        let words = shlex::split(&line).unwrap_or_else(|| panic!("not a shell line: {line}"));
        assert_eq!(&words[..2], ["conformance", "run"], "{line}");
    }
}

/// Two runs of different versions that disagree, merged: the report says the *versions*
/// disagree and names each, not the machines (the version may be what changed).
#[test]
fn merge_says_versions_disagree_where_the_versions_differ() {
    let t = tempfile::tempdir().unwrap();
    let tmpfs = tmpfs_run(t.path());
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&tmpfs).unwrap()).unwrap();
    for c in v["cells"].as_array_mut().unwrap() {
        if c["runtime"] == "node 20.20.2" {
            c["runtime"] = "node 22.1.0".into();
            c["runtime_version"] = "22.1.0".into();
            let id = c["id"].as_str().unwrap().replacen("node 20.20.2", "node 22.1.0", 1);
            c["id"] = id.into();
        }
    }
    let newer = t.path().join("newer.json");
    std::fs::write(&newer, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let merged = t.path().join("merged.json");
    conformance().arg("merge").arg(base()).arg(&newer).arg("--out").arg(&merged).assert().code(0);
    let out = conformance().args(["report", "--wide"]).arg(&merged).output().unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    let line =
        table.lines().find(|l| l.contains("node.writeFileSync.wx/second-comer/file:")).expect("a disagreement line");
    assert!(line.starts_with("versions disagree: node/"), "{line}");
    assert!(line.contains("refused [node 20.20.2; ") && line.contains("replaced [node 22.1.0; "), "{line}");
    assert!(!table.contains("machines disagree"), "{table}");
    // the page's heatmap says it as the table does
    let out = conformance().args(["report", "-f", "html"]).arg(&merged).output().unwrap();
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.contains("(the versions disagree)"), "no versions in the heatmap");
    assert!(!page.contains("the machines disagree"), "the heatmap says machines");
}

#[test]
fn merge_puts_machines_side_by_side_and_marks_disagreements() {
    let t = tempfile::tempdir().unwrap();
    let tmpfs = tmpfs_run(t.path());
    let merged = t.path().join("merged.json");
    conformance().arg("merge").arg(base()).arg(&tmpfs).arg("--out").arg(&merged).assert().code(0).stdout("");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    assert_eq!(v["schema"], 3);
    let labels: Vec<&str> =
        v["run_info"]["machines"].as_array().unwrap().iter().map(|m| m["label"].as_str().unwrap()).collect();
    assert_eq!(
        labels,
        ["linux (Debian GNU/Linux) 6.18.44-fc-v657 ext4", "linux (Debian GNU/Linux) 6.18.44-fc-v657 tmpfs"]
    );
    assert!(v["cells"].as_array().unwrap().iter().all(|c| c["machine"].is_string()));
    let table = conformance().args(["report"]).arg(&merged).output().unwrap();
    assert_eq!(table.status.code(), Some(0));
    let table = String::from_utf8(table.stdout).unwrap();
    assert!(table.contains("node 20.20.2 [linux (Debian GNU/Linux) 6.18.44-fc-v657 tmpfs]"), "{table}");
    assert!(table.contains("replaced ≠"), "{table}");
    assert!(
        table.contains("machines disagree: node/node.writeFileSync.wx/second-comer/file: refused [linux (Debian GNU/Linux) 6.18.44-fc-v657 ext4], replaced [linux (Debian GNU/Linux) 6.18.44-fc-v657 tmpfs]"),
        "{table}"
    );
    let md = conformance().args(["report", "-f", "md"]).arg(&merged).output().unwrap().stdout;
    let md = String::from_utf8(md).unwrap();
    assert!(md.contains("## Cells that disagree between machines"), "{md}");
    for f in ["md", "html", "csv", "json"] {
        conformance().args(["report", "-f", f]).arg(&merged).assert().code(0);
    }
    // merged to stdout equals the file
    let printed = conformance().arg("merge").arg(base()).arg(&tmpfs).output().unwrap().stdout;
    assert_eq!(printed, std::fs::read(&merged).unwrap());
}

#[test]
fn merge_errors_name_the_file() {
    let t = tempfile::tempdir().unwrap();
    let bad = t.path().join("broken.json");
    std::fs::write(&bad, "{\"schema\": 3, \"cells\": [").unwrap();
    conformance().arg("merge").arg(base()).arg(&bad).assert().code(2).stderr(predicate::str::contains("broken.json"));
    let missing = t.path().join("missing.json");
    conformance()
        .arg("merge")
        .arg(base())
        .arg(&missing)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("missing.json"));
    conformance().arg("merge").arg(base()).assert().code(2);
    let out = t.path().join("nowhere").join("merged.json");
    let copy = t.path().join("copy.json");
    std::fs::copy(base(), &copy).unwrap();
    conformance()
        .arg("merge")
        .arg(base())
        .arg(&copy)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(3)
        .stderr(predicate::str::contains(out.display().to_string()));
}

/// The HTML page of a merged run, rendered by headless Chromium: the screenshot must not be
/// blank (it has both the page's background and the outcome colours of the table). Skipped,
/// with a SKIPPED line where no `chromium` is installed (CI installs it and requires it).
#[test]
fn html_renders_in_headless_chromium() {
    let Ok(chromium) = which_chromium() else {
        // installed by .ci/install; CI must run this test
        assert!(
            !std::env::var("CI").is_ok_and(|v| v == "true" || v == "1"),
            "CI: no chromium (run `bash .ci/install chromium`)"
        );
        eprintln!("SKIPPED: the HTML screenshot: no chromium on PATH (bash .ci/install chromium)");
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let tmpfs = tmpfs_run(t.path());
    let merged = t.path().join("merged.json");
    conformance().arg("merge").arg(base()).arg(&tmpfs).arg("--out").arg(&merged).assert().code(0);
    let page = t.path().join("report.html");
    conformance().args(["report", "-f", "html", "--out"]).arg(&page).arg(&merged).assert().code(0);
    let shot = std::env::var_os("CONFORMANCE_SCREENSHOT").map_or_else(|| t.path().join("shot.png"), PathBuf::from);
    let colours = screenshot_colours(&chromium, &page, &shot, "1400,3000", &t.path().join("profile"));
    // the cell colours of the stylesheet: good, bad
    for (name, rgb) in [("good", [0xc8, 0xef, 0xc8]), ("bad", [0xf6, 0xc0, 0xc0])] {
        assert!(colours.contains(&rgb), "no {name} cell colour in the screenshot ({} colours)", colours.len());
    }
    assert!(colours.len() > 10, "screenshot looks blank: {} colours", colours.len());
}

/// The first screen (1400×900) of the committed baseline's page holds the answer: the grid's
/// held and failed cells and the bar chart's yes and no bars, in headless Chromium. Skipped as
/// the test above where no `chromium` is installed (CI requires it).
#[test]
fn html_first_screen_shows_the_answer_grid_and_chart() {
    let Ok(chromium) = which_chromium() else {
        assert!(!std::env::var("CI").is_ok_and(|v| v == "true" || v == "1"), "CI: no chromium");
        eprintln!("SKIPPED: the HTML first screen: no chromium on PATH (bash .ci/install chromium)");
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let page = t.path().join("report.html");
    let baseline = crate::common::root().join("reports/linux/results.json");
    conformance().args(["report", "-f", "html", "--out"]).arg(&page).arg(&baseline).assert().code(0);
    let html = std::fs::read_to_string(&page).unwrap();
    let (grid, chart, lists) =
        (html.find("class=\"grid\"").unwrap(), html.find("<svg").unwrap(), html.find("id=\"lists\"").unwrap());
    assert!(grid < lists && chart < lists, "the grid and the chart come before the lists");
    // the pictures below the answer: the answer heatmap before the runtimes' tables,
    // every race cell's charts in its details, every hand-off cell's failure-rate bar
    let heatmap = html.find("<h2 id=\"heatmap\">").expect("a heatmap section");
    assert!(lists < heatmap && heatmap < html.find("<h2 id=\"rt-0\">").unwrap());
    let results = conformance::report::json::read(&baseline).unwrap();
    let count = |f: &dyn Fn(&conformance::report::model::CellResult) -> bool| {
        results.cells.iter().filter(|c| f(&c.result)).count()
    };
    use conformance::report::model::CellResult;
    let races = count(&|r| matches!(r, CellResult::Race(x) if x.natural.is_some() || x.amplified.is_some()));
    assert_eq!(html.matches("aria-label=\"winners per trial").count(), races);
    // a recipe the probe lacks did not run: no bar
    let handoffs = results
        .cells
        .iter()
        .filter(|c| conformance::report::answers::cell_recipe_runs(c).is_some_and(|(runs, _)| !runs.is_empty()))
        .count();
    assert!(races > 100 && handoffs > 100, "{races} races, {handoffs} hand-offs");
    assert_eq!(
        html.matches("height=\"8\" role=\"img\" width=\"90\"").count(),
        handoffs,
        "a rate bar per hand-off cell"
    );
    let shot =
        std::env::var_os("CONFORMANCE_SCREENSHOT_FIRST").map_or_else(|| t.path().join("first.png"), PathBuf::from);
    // a common laptop screen: the grid and the chart side by side on the first screen
    let colours = screenshot_colours(&chromium, &page, &shot, "1280,800", &t.path().join("profile"));
    for (name, rgb) in [
        ("grid: held", [0xc8, 0xef, 0xc8]),
        ("grid: failed", [0xf6, 0xc0, 0xc0]),
        ("chart: yes", [0x2e, 0x7d, 0x32]),
        ("chart: no", [0xc6, 0x28, 0x28]),
    ] {
        assert!(colours.contains(&rgb), "{name} not on the first screen ({} colours)", colours.len());
    }
}

/// Headless Chromium's screenshot of `page` in a window of `size` (`W,H`), written to `shot`;
/// returns its distinct colours. Panics when Chromium fails.
fn screenshot_colours(
    chromium: &Path,
    page: &Path,
    shot: &Path,
    size: &str,
    profile: &Path,
) -> std::collections::BTreeSet<[u8; 3]> {
    let status = std::process::Command::new(chromium)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"])
        .arg(format!("--window-size={size}"))
        // the shot after the page settled: once, on a loaded machine (a build beside the tests),
        // a 900-pixel shot had no red cell
        .arg("--virtual-time-budget=5000")
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", page.display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "chromium: {status}");
    png_colours(&std::fs::read(shot).unwrap())
}

fn which_chromium() -> Result<PathBuf, ()> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|n| {
            std::env::var_os("PATH").and_then(|p| std::env::split_paths(&p).map(|d| d.join(n)).find(|f| f.is_file()))
        })
        .ok_or(())
}

/// The distinct RGB colours of a PNG.
fn png_colours(png: &[u8]) -> std::collections::BTreeSet<[u8; 3]> {
    let decoder = png::Decoder::new(std::io::Cursor::new(png));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let step = info.color_type.samples();
    buf[..info.buffer_size()].chunks(step).map(|p| [p[0], p[1], p[2]]).collect()
}

/// `report --answers` prints the answer lists alone (per runtime: use, don't use by intent, with
/// the first failure); the default table report opens with them; `--answers` with another
/// format is a usage error naming the flag.
#[test]
fn report_answers_prints_the_use_and_dont_use_lists() {
    let baseline = crate::common::root().join("reports/linux/results.json");
    let out = conformance().args(["report", "--answers"]).arg(&baseline).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("node ") && text.contains(": which call to use\n  use:\n    create a lock file:\n"),
        "{text}"
    );
    assert!(text.contains("node.writeFileSync.w (replaced on file)"), "{text}");
    assert!(!text.contains('┌'), "--answers prints no tables: {text}");
    for line in text.lines() {
        assert!(line.chars().count() <= 100, "wider than 100 columns: {line}");
    }
    let full = conformance().arg("report").arg(&baseline).output().unwrap();
    let full = String::from_utf8(full.stdout).unwrap();
    assert!(full.starts_with(text.lines().next().unwrap()), "{full}");
    conformance()
        .args(["report", "--answers", "-f", "md"])
        .arg(&baseline)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--answers"));
}

/// Every output file gets the user's umask as any tool's new file does (0644 under umask 022,
/// 0600 under 077), not a temp file's 0600: report, merge and a run's results.json/summary.md.
#[cfg(unix)]
#[test]
fn outputs_get_the_users_umask() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let bin = conformance().get_program().to_owned();
    let tmpfs = tmpfs_run(d.path());
    for (umask, mode) in [("022", 0o644), ("077", 0o600)] {
        let md = d.path().join(format!("r{umask}.md"));
        let merged = d.path().join(format!("m{umask}.json"));
        for args in [
            vec![
                "report".into(),
                base().into_os_string(),
                "-f".into(),
                "md".into(),
                "--out".into(),
                md.clone().into_os_string(),
            ],
            vec![
                "merge".into(),
                base().into_os_string(),
                tmpfs.clone().into_os_string(),
                "--out".into(),
                merged.clone().into_os_string(),
            ],
        ] {
            let status = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!("umask {umask} && exec \"$0\" \"$@\""))
                .arg(&bin)
                .args(&args)
                .status()
                .unwrap();
            assert!(status.success(), "{args:?}");
        }
        for f in [&md, &merged] {
            let m = std::fs::metadata(f).unwrap().permissions().mode() & 0o777;
            assert_eq!(m, mode, "{} under umask {umask}: {m:o}", f.display());
        }
    }
}

/// Text from a results file never becomes markup: a `<script>` variant id is escaped in the
/// Markdown report (and in the HTML one), and raw escape bytes never reach a CSV.
#[test]
fn markdown_and_csv_escape_what_a_results_file_holds() {
    let d = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(base())
        .unwrap()
        .replace("\"node.writeFileSync.wx\"", "\"<script>alert(1)</script>\"")
        .replace("\"node 20.20.2\"", "\"node \\u001b[31m20\"");
    let p = d.path().join("evil.json");
    std::fs::write(&p, text).unwrap();
    for (format, bad) in [("md", "<script>"), ("html", "<script>"), ("csv", "\u{1b}")] {
        let out = conformance().args(["report", "-f", format]).arg(&p).output().unwrap();
        assert!(out.status.success(), "{format}");
        let mut s = String::from_utf8(out.stdout).unwrap();
        if format == "md" {
            // what a Markdown viewer makes of it (CommonMark with GFM tables)
            let parser = pulldown_cmark::Parser::new_ext(&s, pulldown_cmark::Options::ENABLE_TABLES);
            let mut html = String::new();
            pulldown_cmark::html::push_html(&mut html, parser);
            s = html;
        }
        assert!(!s.contains(bad), "{format} passes {bad:?} through:\n{s}");
        assert!(s.contains("alert(1)"), "{format} lost the id:\n{s}");
    }
}

/// A validator of the schema the types give (`docs/results.schema.json`).
fn results_validator() -> jsonschema::Validator {
    let schema: serde_json::Value = serde_json::from_str(&conformance::report::json::schema()).unwrap();
    jsonschema::validator_for(&schema).expect("a valid schema")
}

/// `docs/results.schema.json` is the schema the types give (regenerate it with
/// `CONFORMANCE_WRITE_SCHEMA=1 cargo test --release --test integration results_schema`), and the
/// committed baseline, a fresh `report -f json` of the fixture and `run --json` output all
/// validate against it.
#[test]
fn results_schema_is_committed_and_the_baseline_validates() {
    let committed = crate::common::root().join("docs/results.schema.json");
    let generated = conformance::report::json::schema();
    if std::env::var_os("CONFORMANCE_WRITE_SCHEMA").is_some() {
        std::fs::write(&committed, &generated).unwrap();
    }
    let on_disk = std::fs::read_to_string(&committed).unwrap_or_default();
    assert!(
        on_disk == generated,
        "{} differs from the schema the types give: regenerate it with CONFORMANCE_WRITE_SCHEMA=1 cargo test --release --test integration results_schema",
        committed.display()
    );
    let validator = results_validator();
    let fixture = conformance().args(["report", "-f", "json"]).arg(base()).output().unwrap().stdout;
    for (name, text) in [
        (
            "reports/linux/results.json",
            std::fs::read(crate::common::root().join("reports/linux/results.json")).unwrap(),
        ),
        ("report -f json of the fixture", fixture),
    ] {
        let v: serde_json::Value = serde_json::from_slice(&text).unwrap();
        let errors: Vec<String> =
            validator.iter_errors(&v).take(5).map(|e| format!("{} at {}", e, e.instance_path())).collect();
        assert!(errors.is_empty(), "{name} does not validate:\n{}", errors.join("\n"));
    }
    // and the check can fail: a verdict the schema does not know
    let mut bad: serde_json::Value =
        serde_json::from_slice(&std::fs::read(crate::common::root().join("reports/linux/results.json")).unwrap())
            .unwrap();
    bad["answers"][0]["answer"]["verdict"] = "maybe".into();
    assert!(!validator.is_valid(&bad));
}

/// `run --json` ends with the answers (issue 23): each call's verdict, how, against whom,
/// whose doing a failure against another party's call was and which call won a one-sided race,
/// the use / don't-use lists per intent, and the races against other parties' calls; the
/// output validates against the committed schema. Nothing here expects a verdict: the checks
/// tie the answer to the cells and the pairs it rests on, whatever was measured.
#[test]
fn run_json_ends_with_the_answers_and_the_races_against_others() {
    if !crate::common::available("node") {
        return;
    }
    let variants = "node.writeFileSync.wx,node.writeFileSync.w,node.mkdirSync,node.existsSync+renameSync@dir";
    let (_, stdout) =
        crate::common::run(&["--json", "-r", "node", "-v", variants, "--scenario", "second-comer,race", "-n", "100"]);
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("stdout is the results");
    let errors: Vec<String> = results_validator().iter_errors(&v).take(5).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "run --json does not validate: {errors:?}");
    let answer = |id: &str| -> serde_json::Value {
        v["answers"].as_array().unwrap().iter().find(|a| a["variant"] == id).unwrap_or_else(|| panic!("{id}"))["answer"]
            .clone()
    };
    // `w` replaces a file: a second comer settles it, and the run did not race it for the answer
    let w = answer("node.writeFileSync.w");
    assert_eq!(w["verdict"], "no", "{w}");
    assert_eq!(w["failures"][0]["failure"]["kind"], "second", "{w}");
    // the two directory rows that held against themselves were raced against each other
    assert_eq!(v["run_info"]["against"], "cover");
    let pairs = v["against"].as_array().expect("races against others");
    let pair = pairs
        .iter()
        .find(|p| p["contenders"].as_array().unwrap().iter().any(|c| c["variant"] == "node.mkdirSync"))
        .expect("mkdirSync raced against another party's call");
    assert_eq!(pair["kind"], "dir");
    let mkdir = answer("node.mkdirSync");
    let failed = ["multiple-winners", "lost-update", "no-winner"].contains(&pair["race"]["verdict"].as_str().unwrap());
    let lists = v["intents"].as_array().unwrap();
    let lock_dir = lists.iter().find(|l| l["intent"] == "lock-dir").expect("a lock-dir list");
    let listed = |key: &str| lock_dir[key].as_array().is_some_and(|l| l.iter().any(|x| x == "node.mkdirSync"));
    let fault = mkdir["against"][0]["fault"].as_str();
    assert_eq!(fault.is_some(), failed, "a failed race says whose doing it was: {mkdir}");
    let own_failures = mkdir["failures"].as_array().is_some_and(|f| !f.is_empty());
    if failed && fault == Some("other-call") {
        // the other call's entry replaced mkdir's: that call fails, mkdir's answer is its own
        assert!(mkdir["how"].as_str().unwrap().contains("broken by node node.existsSync+renameSync ← dir"));
        assert!(mkdir["how"].as_str().unwrap().contains("that call's doing"), "{mkdir}");
        assert_eq!(mkdir["verdict"] == "no", own_failures, "{mkdir}");
        let mover = answer("node.existsSync+renameSync");
        assert_eq!(mover["verdict"], "no", "{mover}");
        assert_eq!(mover["against"][0]["fault"], "this-call", "{mover}");
        assert!(mover["how"].as_str().unwrap().contains("against node node.mkdirSync"), "{mover}");
    } else if failed {
        // held against itself or not, a failure of its own doing against another party's call
        // (or one whose doing cannot be told) is a `no`
        assert_eq!(mkdir["verdict"], "no", "{mkdir}");
        assert!(mkdir["how"].as_str().unwrap().contains("against node node.existsSync+renameSync ← dir"), "{mkdir}");
        if !own_failures {
            assert!(listed("use_if_every_party_does"), "{lock_dir}");
        }
    } else if mkdir["verdict"] == "yes" {
        // held, unless one call won every trial: a one-sided race vouches for nothing, and
        // says which call won
        let how = mkdir["how"].as_str().unwrap();
        match mkdir["against"][0]["won_every_trial"].as_str() {
            Some(won) => {
                let who = if won == "this-call" { "this call" } else { "that call" };
                assert!(how.contains("one-sided against node node.existsSync+renameSync ← dir: "), "{mkdir}");
                assert!(how.contains(&format!("{who} won")) && !how.contains("against itself and"), "{mkdir}");
            }
            None => assert!(how.contains("against itself and node node.existsSync+renameSync"), "{mkdir}"),
        }
        assert!(listed("use"), "{lock_dir}");
    }
    assert_eq!(mkdir["against"][0]["contender"]["variant"], "node.existsSync+renameSync", "{mkdir}");
    // an ordering a contest search found (the first call won an uncounted trial there) is one
    // of the run's orderings
    for run in ["natural", "amplified"] {
        let r = &pair["race"][run];
        if let Some(at) = r["contest"]["found-at"].as_u64() {
            let offsets: Vec<u64> =
                r["orderings"].as_array().unwrap().iter().map(|o| o["offset_us"].as_u64().unwrap()).collect();
            assert!(offsets.contains(&at), "{run}: found at {at} µs, orderings {offsets:?}");
        }
    }
}

//! Never lose a user's files: what is at an output name decides how it is written (a file is
//! replaced keeping its mode and links, a pipe or terminal is written into, anything else is
//! refused), a planted link at the lock's name is refused, and a run or race never replaces
//! its own baseline or an earlier race's file. The inputs are those of an adversarial pass
//! (issue 32); each test fails on the code before it.

use std::path::{Path, PathBuf};

use predicates::prelude::*;

use crate::common::{conformance, fixtures};

fn base() -> PathBuf {
    fixtures().join("results").join("base.json")
}

/// `report --out FIFO` writes the report into the pipe, as `> fifo` would; the pipe stays a
/// pipe (before, a rename replaced it, and `/dev/stdout` or `/dev/null` with it, by a file).
#[cfg(unix)]
#[test]
fn out_onto_a_pipe_writes_into_it_and_leaves_it_a_pipe() {
    use std::os::unix::fs::FileTypeExt;
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("pipe");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    conformance().args(["report", "-f", "csv"]).arg(base()).arg("--out").arg(&fifo).assert().success();
    let got = reader.join().unwrap();
    assert!(got.starts_with("runtime") || got.contains(",node"), "{got}");
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
}

/// A folder (or anything that is neither a file, a pipe nor a terminal) named by `--out FILE`
/// is refused with exit 3, and left as it was.
#[test]
fn out_onto_a_folder_is_refused() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("keep"), "mine").unwrap();
    conformance()
        .args(["report", "-f", "md"])
        .arg(base())
        .arg("--out")
        .arg(d.path())
        .assert()
        .code(3)
        .stderr(predicate::str::contains("not a regular file"));
    assert_eq!(std::fs::read_to_string(d.path().join("keep")).unwrap(), "mine");
}

/// Rewriting a private file keeps it private (0600 stays 0600 under umask 022), and a link
/// named by `--out` stays a link: the file it names is replaced.
#[cfg(unix)]
#[test]
fn a_rewritten_file_keeps_its_mode_and_a_link_stays_a_link() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let private = d.path().join("private.md");
    std::fs::write(&private, "secret").unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();
    let link = d.path().join("link.md");
    std::os::unix::fs::symlink(&private, &link).unwrap();
    for out in [&private, &link] {
        conformance().args(["report", "-f", "md"]).arg(base()).arg("--out").arg(out).assert().success();
    }
    assert_eq!(std::fs::metadata(&private).unwrap().permissions().mode() & 0o777, 0o600);
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert!(std::fs::read_to_string(&private).unwrap().starts_with("# conformance results"));
}

/// A symbolic link planted at `--out DIR/.conformance.lock` is refused (exit 3, saying so):
/// taking the lock through it truncated the file it named.
#[cfg(unix)]
#[test]
fn a_planted_lock_link_is_refused_and_its_target_untouched() {
    let d = tempfile::tempdir().unwrap();
    let victim = d.path().join("victim.txt");
    std::fs::write(&victim, "VICTIM DATA").unwrap();
    let out = d.path().join("shared");
    std::fs::create_dir(&out).unwrap();
    std::os::unix::fs::symlink(&victim, out.join(".conformance.lock")).unwrap();
    conformance()
        .args(["race", "-c", "node:node.mkdirSync", "-c", "node:node.writeFileSync.wx", "-n", "5", "--out"])
        .arg(&out)
        .assert()
        .code(3)
        .stderr(predicate::str::contains("is a symbolic link"));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "VICTIM DATA");
}

/// `run --expect DIR/results.json --out DIR --force` is refused (exit 2) before anything is
/// measured, whatever the spelling: the run would replace the baseline it compares with.
#[test]
fn run_never_replaces_its_own_baseline() {
    let d = tempfile::tempdir().unwrap();
    let baseline = d.path().join("results.json");
    std::fs::copy(base(), &baseline).unwrap();
    let before = std::fs::read(&baseline).unwrap();
    let other_spelling = d.path().join(".").join("results.json");
    for expect in [&baseline, &other_spelling] {
        conformance()
            .args(["run", "-r", "node", "-v", "node.mkdirSync", "--scenario", "second-comer", "-q", "--force"])
            .arg("--out")
            .arg(d.path())
            .arg("--expect")
            .arg(expect)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("--expect").and(predicate::str::contains("would replace the baseline")));
    }
    assert_eq!(std::fs::read(&baseline).unwrap(), before);
}

/// `race --out DIR` where DIR holds an earlier race's cross-race.json is refused (exit 2)
/// unless `--force`, as `run` refuses an earlier run's results.
#[test]
fn race_into_an_earlier_race_is_refused_unless_force() {
    let d = tempfile::tempdir().unwrap();
    let earlier = d.path().join("cross-race.json");
    std::fs::write(&earlier, "{\"mine\":1}").unwrap();
    conformance()
        .args(["race", "-c", "node:node.mkdirSync", "-c", "node:node.writeFileSync.wx", "-n", "5", "--out"])
        .arg(d.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already holds an earlier race's cross-race.json"));
    assert_eq!(std::fs::read_to_string(&earlier).unwrap(), "{\"mine\":1}");
}

/// The default output folder is below the working folder, as the help says
/// (`conformance-runs/TIMESTAMP/`), not below the folder the binary was built in.
#[test]
fn the_default_out_is_below_the_working_folder() {
    let d = tempfile::tempdir().unwrap();
    let out = conformance()
        .current_dir(d.path())
        .args(["run", "-r", "node", "-v", "node.mkdirSync", "--dry-run"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("results would go to conformance-runs/"), "{text}");
    assert!(!text.contains(env!("CARGO_MANIFEST_DIR")), "{text}");
    assert!(!Path::new(d.path()).join("reports").exists(), "a dry run writes nothing");
}

/// A path with terminal controls (ESC, BEL, a bidi override) in an error message is shown
/// escaped: the message must not recolour the terminal or set its title.
#[test]
fn an_error_never_prints_terminal_controls_raw() {
    let out = conformance().args(["report", "/tmp/x\u{1b}]0;TITLE\u{7}\u{202e}.json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(!err.contains('\u{1b}') && !err.contains('\u{7}') && !err.contains('\u{202e}'), "{err:?}");
    assert!(err.contains("\\u{1b}"), "{err:?}");
}

/// A byte order mark is read past: a results file that starts with one reads, and a document
/// whose first line is a marker is rewritten with its mark kept (before, `docs` said the
/// closing marker had no opening one, and `report` failed at 1:1).
#[test]
fn a_byte_order_mark_is_read_past_and_kept() {
    let d = tempfile::tempdir().unwrap();
    let results = d.path().join("bom.json");
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend(std::fs::read(base()).unwrap());
    std::fs::write(&results, bytes).unwrap();
    conformance().args(["report", "--answers"]).arg(&results).assert().success();
    let doc = d.path().join("doc.md");
    std::fs::write(
        &doc,
        "\u{feff}<!-- conformance:table runtime=node scenario=second-comer -->\n<!-- /conformance:table -->\n",
    )
    .unwrap();
    conformance().arg("docs").arg(&doc).arg("--results").arg(&results).assert().success();
    let text = std::fs::read_to_string(&doc).unwrap();
    assert!(text.starts_with("\u{feff}<!-- conformance:table runtime=node") && text.len() > 80, "{text}");
}

/// A run without `--out` says first where its results go, and writes them there: a
/// timestamped folder in `conformance-runs/` below the working folder.
#[test]
fn a_run_says_where_its_results_go_before_measuring() {
    if !crate::common::available("node") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let out = conformance()
        .current_dir(d.path())
        .args(["run", "-r", "node", "-v", "node.mkdirSync", "--scenario", "second-comer", "--target", "absent"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let first = err.lines().next().unwrap_or_default();
    let folder = first.strip_prefix("results go to ").unwrap_or_else(|| panic!("first line: {err}"));
    assert!(folder.starts_with("conformance-runs/"), "{first}");
    for file in ["results.json", "summary.md", "report.html"] {
        assert!(d.path().join(folder).join(file).is_file(), "{file}: {err}");
    }
    assert_eq!(std::fs::read_dir(d.path().join("conformance-runs")).unwrap().count(), 1);
}

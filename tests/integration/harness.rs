//! A harness fault is never a measurement (issue 7): interrupts drop the attempt in flight,
//! a failing scratch file system gives `harness-error` and exit 3, slowness is not a prompt,
//! a killed harness takes its probes with it, and outputs are written atomically under a lock.

#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{conformance, fixtures, one_at_a_time, read_json, read_results};
use conformance::domain::Scenario;
use conformance::report::model::{Cell, CellResult, RaceResult, Results};
use conformance::verdict::{Outcome, RaceVerdict};

/// The cells of `r` of `variant` and `scenario`, in file order.
fn cells<'a>(r: &'a Results, variant: &str, scenario: Scenario) -> Vec<&'a Cell> {
    r.cells.iter().filter(|c| c.variant == variant && c.scenario == scenario).collect()
}

/// A race cell's result.
fn race(c: &Cell) -> &RaceResult {
    c.race().unwrap_or_else(|| panic!("{} is no race: {c:?}", c.id))
}

fn fake(kind: &str, exe: &str) -> PathBuf {
    fixtures().join("fake-runtimes").join(kind).join(exe)
}

/// The binary as a plain child process (signals are sent to it by pid), marked with
/// `TEST_MARK=<its marker>` in its environment (see [`processes_marked`]).
fn spawn<S: AsRef<std::ffi::OsStr>>(args: &[S], env: &[(&str, &str)]) -> (Child, String) {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let mark = format!("{}-{}", std::process::id(), N.fetch_add(1, std::sync::atomic::Ordering::SeqCst));
    let bin = assert_cmd::cargo::cargo_bin("conformance");
    let mut c = Command::new(bin);
    c.env("CONFORMANCE_CACHE_DIR", crate::common::test_cache_dir());
    c.args(args).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    c.env("TEST_MARK", &mark);
    (c.spawn().expect("starts"), mark)
}

fn signal(c: &Child, sig: &str) {
    assert!(Command::new("kill").args([sig, &c.id().to_string()]).status().unwrap().success());
}

/// Waits at most `limit` for the child; returns its exit code and stderr (read on a thread
/// all along, so a chatty child never blocks on a full pipe).
fn wait(mut c: Child, limit: Duration) -> (Option<i32>, String) {
    let mut stderr = c.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        use std::io::Read;
        let mut err = String::new();
        let _ = stderr.read_to_string(&mut err);
        err
    });
    let end = Instant::now() + limit;
    loop {
        if let Some(s) = c.try_wait().unwrap() {
            return (s.code(), reader.join().unwrap());
        }
        if Instant::now() > end {
            let _ = c.kill();
            let _ = c.wait();
            panic!("conformance did not exit within {limit:?}; stderr: {}", reader.join().unwrap());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Processes whose environment holds `TEST_MARK=<mark>`: the harness started by [`spawn`]
/// with that mark and everything it started (children inherit the environment).
fn processes_marked(mark: &str) -> Vec<String> {
    let needle = format!("TEST_MARK={mark}");
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(env) = std::fs::read(e.path().join("environ")) else { continue };
        if env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes()) {
            let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            out.push(format!(
                "{}: {}",
                e.file_name().to_string_lossy(),
                String::from_utf8_lossy(&cmd).replace('\0', " ")
            ));
        }
    }
    out
}

/// Asserts that within 3 s no process carries `mark` any more.
fn no_process_left(mark: &str) {
    let end = Instant::now() + Duration::from_secs(3);
    while !processes_marked(mark).is_empty() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(processes_marked(mark).is_empty(), "orphans: {:?}", processes_marked(mark));
}

fn empty(dir: &Path) -> bool {
    std::fs::read_dir(dir).map(|mut d| d.next().is_none()).unwrap_or(true)
}

/// A `run` of the fake `node` of the fault tests, with its own --out and --fs-root.
struct FakeRun {
    out: tempfile::TempDir,
    root: tempfile::TempDir,
}

impl FakeRun {
    fn new() -> FakeRun {
        FakeRun { out: tempfile::tempdir().unwrap(), root: tempfile::tempdir().unwrap() }
    }

    /// `--matrices <faults> run --runtime node=<fake> --out OUT --fs-root ROOT -q --amplify off`
    /// and `extra`; `at` replaces (OUT, ROOT) when given.
    fn args(&self, at: Option<(&Path, &Path)>, extra: &[&str]) -> Vec<String> {
        let m = fixtures().join("matrices").join("faults");
        let node = format!("node={}", fake("faults", "node").display());
        let (out, root) = at.unwrap_or((self.out.path(), self.root.path()));
        let mut a: Vec<String> =
            vec!["--matrices".into(), m.display().to_string(), "run".into(), "--runtime".into(), node];
        a.extend(["--out".into(), out.display().to_string(), "--fs-root".into(), root.display().to_string()]);
        a.extend(["-q", "--amplify", "off"].map(String::from));
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    }
}

fn until(what: &str, limit: Duration, f: impl Fn() -> bool) {
    let end = Instant::now() + limit;
    while !f() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Item 1: Ctrl-C during a second-comer attempt drops that attempt (no `timeout` cell), keeps
/// the cells measured before, exits 130 at once, and leaves no probe and no scratch folder.
#[test]
fn an_interrupt_drops_the_attempt_in_flight() {
    let _serial = one_at_a_time();
    let run = FakeRun::new();
    let (out, root) = (&run.out, &run.root);
    let args = run.args(None, &["-v", "node.fake.wx,node.fake.slow", "--scenario", "second-comer", "--target"]);
    let args = [args, ["absent,file", "--no-relative", "--timeout", "60"].map(String::from).to_vec()].concat();
    let (c, mark) = spawn(&args, &[]);
    // the two quick cells, then the slow attempt (30 s) is in flight
    until("the partial results", Duration::from_secs(30), || out.path().join("results.json").exists());
    std::thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    signal(&c, "-INT");
    let (code, err) = wait(c, Duration::from_secs(10));
    assert_eq!(code, Some(130), "{err}");
    assert!(t.elapsed() < Duration::from_secs(3), "stopped within the poll interval, took {:?}", t.elapsed());
    let file = out.path().join("results.json");
    let r = read_results(&file);
    assert_eq!(cells(&r, "node.fake.wx", Scenario::SecondComer).len(), 2, "{r:?}");
    assert!(
        cells(&r, "node.fake.slow", Scenario::SecondComer).is_empty(),
        "the attempt in flight is not a cell: {r:?}"
    );
    // no text anywhere in the file (evidence, reasons, any field) speaks of the dropped
    // attempt: a fact of the whole file, read as JSON
    let json = read_json(&file);
    assert!(!json.to_string().contains("interrupted before"), "{json}");
    assert!(r.run_info.interrupted, "the file says the run was interrupted");
    no_process_left(&mark);
    assert!(empty(root.path()), "scratch folder left");
}

/// Item 1: a race cut by SIGTERM counts only completed trials (no 0-winner fault trial, no
/// `inconclusive`), and `race` exits 130, not 0.
#[test]
fn sigterm_during_races_counts_only_completed_trials() {
    let _serial = one_at_a_time();
    let run = FakeRun::new();
    let (out, root) = (&run.out, &run.root);
    let args = run.args(None, &["-v", "node.fake.wx", "--scenario", "race", "-n", "1000000"]);
    let (c, mark) = spawn(&args, &[]);
    std::thread::sleep(Duration::from_secs(3));
    signal(&c, "-TERM");
    let (code, err) = wait(c, Duration::from_secs(10));
    assert_eq!(code, Some(130), "{err}");
    no_process_left(&mark);
    let r = read_results(&out.path().join("results.json"));
    let ctl = cells(&r, "node.fake.check-then-create", Scenario::Race);
    assert_eq!(ctl.len(), 1, "the control was cut, not dropped: it has counted trials: {r:?}");
    let (ctl, result) = (ctl[0], race(ctl[0]));
    let n = &result.natural.as_ref().unwrap_or_else(|| panic!("no natural run: {ctl:?}")).stats;
    assert!(n.trials > 0, "{n:?}");
    assert_eq!(n.fault_trials, 0, "the cut trial is not a fault: {n:?}");
    assert_ne!(result.verdict, RaceVerdict::Inconclusive, "{ctl:?}");
    assert!(ctl.evidence.as_deref().unwrap().contains("interrupted after"), "{ctl:?}");
    // the race cut short says so, and so does the run
    assert!(result.interrupted, "{ctl:?}");
    assert!(r.run_info.interrupted);

    // the cross-runtime `race` command, found on PATH
    let m = fixtures().join("matrices").join("faults");
    let dir = fake("faults", "node").parent().unwrap().to_path_buf();
    let path = format!("{}:{}", dir.display(), std::env::var("PATH").unwrap());
    let race = [
        "--matrices",
        m.to_str().unwrap(),
        "race",
        "-c",
        "node:node.fake.wx",
        "-c",
        "node:node.fake.wx",
        "-n",
        "1000000",
        "--amplify",
        "off",
        "--fs-root",
        root.path().to_str().unwrap(),
    ];
    let (c, mark) = spawn(&race, &[("PATH", &path)]);
    std::thread::sleep(Duration::from_secs(3));
    signal(&c, "-TERM");
    let (code, err) = wait(c, Duration::from_secs(10));
    assert_eq!(code, Some(130), "race after SIGTERM: {err}");
    no_process_left(&mark);
    assert!(empty(root.path()), "scratch folder left");
}

/// Item 1: Ctrl-C during discovery does not wait for a slow `--version`; nothing is written and
/// no version query is left running.
#[test]
fn an_interrupt_during_discovery_stops_the_version_query() {
    let _serial = one_at_a_time();
    let run = FakeRun::new();
    let (out, root) = (&run.out, &run.root);
    let o = out.path().join("new");
    let args = run.args(Some((&o, root.path())), &[]);
    let (c, mark) = spawn(&args, &[("FAKE_VERSION_SLEEP", "60")]);
    std::thread::sleep(Duration::from_millis(1500));
    let t = Instant::now();
    signal(&c, "-INT");
    let (code, err) = wait(c, Duration::from_secs(10));
    assert_eq!(code, Some(130), "{err}");
    assert!(t.elapsed() < Duration::from_secs(3), "took {:?}", t.elapsed());
    assert!(!o.exists(), "no empty --out folder left");
    no_process_left(&mark);
    assert!(empty(root.path()), "scratch folder left");
}

/// Item 8 and item 6: a SIGKILLed harness takes its probes with it (PR_SET_PDEATHSIG), and the
/// cells it measured before are on disk (partial results written every few seconds).
#[test]
fn a_killed_harness_leaves_no_probe_and_keeps_what_it_measured() {
    let _serial = one_at_a_time();
    let run = FakeRun::new();
    let out = &run.out;
    let args = run.args(None, &["-v", "node.fake.wx,node.fake.slow", "--scenario", "second-comer", "--timeout", "60"]);
    let (c, mark) = spawn(&args, &[]);
    until("the partial results", Duration::from_secs(30), || out.path().join("results.json").exists());
    std::thread::sleep(Duration::from_millis(500));
    signal(&c, "-KILL");
    let _ = wait(c, Duration::from_secs(5));
    no_process_left(&mark);
    let r = read_results(&out.path().join("results.json"));
    assert_eq!(cells(&r, "node.fake.wx", Scenario::SecondComer).len(), 4, "the four quick cells: {r:?}");
}

/// Item 2: a call that fails with ENOSPC is a harness error, never a refusal or a verdict; the
/// scratch folder still works here, so the run goes on and exits 0.
#[test]
fn enospc_from_a_call_is_a_harness_error() {
    let _serial = one_at_a_time();
    let out = tempfile::tempdir().unwrap();
    let node = format!("node={}", fake("faults", "node").display());
    conformance()
        .arg("--matrices")
        .arg(fixtures().join("matrices").join("faults"))
        .args(["run", "--runtime", &node, "-v", "node.fake.enospc", "-n", "20", "--amplify", "off", "-q"])
        .arg("--out")
        .arg(out.path())
        .assert()
        .success();
    let r = read_results(&out.path().join("results.json"));
    for c in cells(&r, "node.fake.enospc", Scenario::SecondComer) {
        assert_eq!(c.outcome(), Some(Outcome::HarnessError), "{c:?}");
        let relative = c.second().and_then(|s| s.relative.as_ref());
        assert_eq!(relative.map(|a| a.outcome), Some(Outcome::HarnessError), "{c:?}");
        // item 5: a relative-repeat fault keeps its evidence too
        assert!(relative.and_then(|a| a.evidence.as_deref()).unwrap().contains("ENOSPC"), "{c:?}");
        assert!(c.evidence.as_deref().unwrap().contains("ENOSPC"), "{c:?}");
    }
    let races = cells(&r, "node.fake.enospc", Scenario::Race);
    assert_eq!(races[0].verdict(), Some(RaceVerdict::HarnessError), "{:?}", races[0]);
    let md = std::fs::read_to_string(out.path().join("summary.md")).unwrap();
    assert!(md.contains("harness-error"), "{md}");
}

/// Item 2: a scratch root whose paths would pass PATH_MAX fails before anything runs (exit 3).
#[test]
fn a_scratch_root_too_deep_fails_at_once() {
    let _serial = one_at_a_time();
    let d = tempfile::tempdir().unwrap();
    let mut deep = d.path().to_path_buf();
    while deep.as_os_str().len() < 3800 {
        deep.push("d".repeat(200));
        std::fs::create_dir(&deep).unwrap();
    }
    // the scratch folder (`conformance-XXXXXX`, 18 bytes) fits; a mark file below it does not
    let pad = 4060 - deep.as_os_str().len();
    deep.push("p".repeat(pad));
    std::fs::create_dir(&deep).unwrap();
    let out = tempfile::tempdir().unwrap();
    let node = format!("node={}", fake("faults", "node").display());
    conformance()
        .arg("--matrices")
        .arg(fixtures().join("matrices").join("faults"))
        .args(["run", "--runtime", &node, "-q", "-n", "20", "--amplify", "off", "--out"])
        .arg(out.path().join("o"))
        .arg("--fs-root")
        .arg(&deep)
        .assert()
        .code(3)
        .stderr(predicates::str::contains("File name too long"));
    assert!(!out.path().join("o").exists(), "no empty --out folder left");
}

/// Item 2: when the scratch file system fills up during a run, no cell is published as a
/// runtime's behaviour: the cells it touched are `harness-error`, measuring stops, exit 3.
/// Needs a small tmpfs, so only as root; a visible skip otherwise.
#[test]
fn a_full_scratch_file_system_is_a_harness_error_and_exit_3() {
    let _serial = one_at_a_time();
    let mnt = tempfile::tempdir().unwrap();
    // room for the built-in probes the run writes into its scratch folder (about 280 KB since
    // the thread races; the filler below takes whatever is left)
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
        .arg(mnt.path())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("SKIPPED: cannot mount a tmpfs here (not root): the full-disk test needs one");
        return;
    }
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(self.0).status();
        }
    }
    let _u = Unmount(mnt.path());
    let out = tempfile::tempdir().unwrap();
    let args = FakeRun::new().args(Some((out.path(), mnt.path())), &["-v", "node.fake.wx", "-n", "1000000"]);
    let (c, _) = spawn(&args, &[]);
    until("the scratch folder", Duration::from_secs(30), || !empty(mnt.path()));
    std::thread::sleep(Duration::from_millis(1000));
    // fill the file system while the race runs, and keep it full: every page the harness
    // frees between trials is taken again, so its next trial meets ENOSPC
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let filler = {
        let (stop, path) = (stop.clone(), mnt.path().join("filler"));
        std::thread::spawn(move || {
            use std::io::Write;
            let mut f = std::fs::File::create(path).unwrap();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                if f.write_all(&[0u8; 4096]).is_err() {
                    std::thread::yield_now();
                }
            }
        })
    };
    let (code, err) = wait(c, Duration::from_secs(60));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    filler.join().unwrap();
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("does not work") && err.contains("No space left"), "{err}");
    let r = read_results(&out.path().join("results.json"));
    assert!(!r.cells.is_empty(), "{r:?}");
    for c in &r.cells {
        // a race's verdict or a second comer's outcome (no kind has the other's words)
        let measured = match &c.result {
            CellResult::Race(x) => {
                [RaceVerdict::HarnessError, RaceVerdict::MultipleWinners, RaceVerdict::Exclusive].contains(&x.verdict)
            }
            CellResult::SecondComer(s) => {
                [Outcome::HarnessError, Outcome::Acquired, Outcome::Refused].contains(&s.outcome)
            }
            CellResult::Counters(_) => panic!("neither a verdict nor an outcome: {c:?}"),
        };
        assert!(measured, "a full disk became a measurement: {c:?}");
    }
    assert!(r.cells.iter().any(|c| c.verdict() == Some(RaceVerdict::HarnessError)), "{r:?}");
}

/// Item 3: a slow one-shot command is not a prompt. A fake `wine` refuses after 2.5 s, hangs,
/// or dies late without a prompt; only the one that prints `Overwrite …? (Yes|No)` is
/// `prompted`. Not one at a time with the races: it races nothing, its `wine` and `wineserver`
/// are the fakes beside each other (the shared Wine prefix is never touched), and it mostly
/// sleeps (2.5 s against a 6 s attempt timeout: `--timeout 2` × cmd's 3).
#[test]
fn a_slow_command_is_not_a_prompt() {
    let out = tempfile::tempdir().unwrap();
    let wine = format!("cmd={}", fake("slow-cmd", "wine").display());
    conformance()
        .args(["run", "--runtime", &wine, "-v", "cmd.mkdir,cmd.ren,cmd.move,cmd.copy.-Y"])
        .args(["--scenario", "second-comer", "--target", "file", "--timeout", "2", "--no-relative", "-q", "--out"])
        .arg(out.path())
        .assert()
        .success();
    let r = read_results(&out.path().join("results.json"));
    let outcome = |v: &str| cells(&r, v, Scenario::SecondComer)[0].outcome();
    assert_eq!(outcome("cmd.mkdir"), Some(Outcome::Refused), "slow but normal");
    assert_eq!(outcome("cmd.ren"), Some(Outcome::Timeout), "a hang");
    assert_eq!(outcome("cmd.move"), Some(Outcome::Crashed), "a late crash");
    assert_eq!(outcome("cmd.copy.-Y"), Some(Outcome::Prompted), "a real prompt");
    let ev = cells(&r, "cmd.copy.-Y", Scenario::SecondComer)[0].evidence.as_deref().unwrap();
    assert!(ev.contains("(Yes|No)"), "{ev}");
    // this fake speaks the one-shot protocol only: the loop did not start, and every cell
    // says that it was measured one process per attempt, and why
    for c in &r.cells {
        let driver = c.driver.as_deref().unwrap_or_default();
        assert!(driver.starts_with("one-shot (the cmd loop did not start: "), "{c:?}");
    }
}

/// The persistent cmd driver against a fake `wine` whose loop hangs, crashes, breaks the
/// protocol or prints garbage, one variant each (`tests/fixtures/fake-runtimes/loop-cmd`):
/// each fault is that cell's data, the next attempt gets a new loop (never the one-shot
/// fallback), and a failed call's message is its own attempt's stderr only.
#[test]
fn the_cmd_loop_restarts_after_each_fault() {
    let _serial = one_at_a_time();
    let out = tempfile::tempdir().unwrap();
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("starts");
    let wine = format!("cmd={}", fake("loop-cmd", "wine").display());
    conformance()
        .env("FAKE_LOOP_LOG", &log)
        .args(["run", "--runtime", &wine, "--scenario", "second-comer", "--target", "absent", "-k", "2"])
        .args(["--timeout", "1", "--no-relative", "-q", "--out"])
        .arg(out.path())
        .assert()
        .success();
    let r = read_results(&out.path().join("results.json"));
    let cell = |v: &str| cells(&r, v, Scenario::SecondComer)[0];
    let outcome = |v: &str| cell(v).outcome();
    assert_eq!(outcome("cmd.mkdir"), Some(Outcome::Acquired));
    assert_eq!(outcome("cmd.ren"), Some(Outcome::Timeout), "a hang");
    assert_eq!(outcome("cmd.move"), Some(Outcome::Crashed), "an exit without a result");
    assert_eq!(outcome("cmd.move.Y"), Some(Outcome::Failed), "the call failed on a free name");
    let message = cell("cmd.move.Y").error().map(|e| e.raw.message.as_str());
    assert_eq!(message, Some("Access denied."), "{:?}", cell("cmd.move.Y"));
    assert_eq!(outcome("cmd.move.-Y"), Some(Outcome::Acquired), "after noise on stderr between attempts");
    assert_eq!(outcome("cmd.copy"), Some(Outcome::Acquired), "a stray line is evidence, the result counts");
    assert!(cell("cmd.copy").evidence.as_deref().unwrap().contains("1 file(s) copied."), "{:?}", cell("cmd.copy"));
    assert_eq!(outcome("cmd.copy.-Y"), Some(Outcome::Acquired));
    assert_eq!(outcome("cmd.redirect"), Some(Outcome::Crashed), "a line that is not JSON");
    assert_eq!(outcome("cmd.if-not-exist+redirect"), Some(Outcome::Acquired), "a new loop after the break");
    for c in &r.cells {
        assert_eq!(c.driver.as_deref(), Some("loop"), "{c:?}");
    }
    // a loop per contender at the start (two; second comers use the first), and a new one
    // after each hang, crash, stray line and protocol break: once per cell of those variants,
    // whose directory source kinds are cells of their own, each faulting the same way
    let kinds = |v: &str| cells(&r, v, Scenario::SecondComer);
    for (v, fault) in [("cmd.ren", Outcome::Timeout), ("cmd.move", Outcome::Crashed)] {
        for c in kinds(v) {
            assert_eq!(c.outcome(), Some(fault), "{c:?}");
        }
    }
    let faults: usize = ["cmd.ren", "cmd.move", "cmd.copy", "cmd.redirect"].iter().map(|v| kinds(v).len()).sum();
    assert!(faults >= 4, "{faults}");
    let starts = std::fs::read_to_string(&log).unwrap().lines().count();
    assert_eq!(starts, 2 + faults, "loop starts");
}

/// Item 6: two runs cannot share an --out folder; the second is refused at once (exit 3).
#[test]
fn a_second_run_into_the_same_out_folder_is_refused() {
    let _serial = one_at_a_time();
    let run = FakeRun::new();
    let out = &run.out;
    let args = run.args(None, &["-v", "node.fake.slow", "--scenario", "second-comer", "--timeout", "60"]);
    let (first, _) = spawn(&args, &[]);
    let node = format!("node={}", fake("faults", "node").display());
    until("the lock", Duration::from_secs(30), || out.path().join(".conformance.lock").exists());
    conformance()
        .args(["run", "--runtime", &node, "-q", "--out"])
        .arg(out.path())
        .assert()
        .code(3)
        .stderr(predicates::str::contains("another conformance run"));
    signal(&first, "-INT");
    let (code, _) = wait(first, Duration::from_secs(10));
    assert_eq!(code, Some(130));
}

/// Exit codes 4 (no runtime) and 5 (a required runtime missing) leave no new, empty --out.
#[test]
fn runs_that_measure_nothing_leave_no_out_folder() {
    let d = tempfile::tempdir().unwrap();
    let missing = d.path().join("no-such-node");
    let node = format!("node={}", missing.display());
    conformance().args(["run", "--runtime", &node, "-q", "--out"]).arg(d.path().join("o4")).assert().code(4);
    assert!(!d.path().join("o4").exists());
    conformance()
        .args(["run", "--runtime", &node, "--require", "node", "-q", "--out"])
        .arg(d.path().join("o5"))
        .assert()
        .code(5);
    assert!(!d.path().join("o5").exists());
}

/// A panic is a bug: exit 70 with a message, never Rust's 101 (the hook in main.rs).
#[test]
fn a_panic_exits_70() {
    conformance()
        .args(["runtimes"])
        .env("CONFORMANCE_TEST_PANIC", "1")
        .assert()
        .code(70)
        .stderr(predicates::str::contains("internal error"));
}

/// Protocol 2: a probe whose hello does not list a selected variant is named up front, before
/// its cells come back unsupported.
#[test]
fn a_probe_that_lacks_a_selected_variant_is_named_up_front() {
    let out = tempfile::tempdir().unwrap();
    let node = format!("node={}", fake("v2-partial", "node").display());
    conformance()
        .arg("--matrices")
        .arg(fixtures().join("matrices").join("faults"))
        .args(["run", "--runtime", &node, "-v", "node.fake.wx,node.fake.enospc", "--scenario", "second-comer"])
        .args(["--target", "absent", "--no-relative", "--out"])
        .arg(out.path())
        .assert()
        .success()
        .stderr(predicates::str::contains("does not list 1 selected variant(s)"))
        .stderr(predicates::str::contains("node.fake.enospc"));
}

/// A weak amplified control is raced again with a longer delay (×4, up to 16,000 µs), and the
/// family's races use the delay that worked; the escalation is reported. A stub tracer passes
/// the delay to the fake probe, whose check-then-create is caught only from 4,000 µs.
#[test]
fn a_weak_amplified_control_is_raced_again_with_a_longer_delay() {
    let _serial = one_at_a_time();
    let run = FakeRun::new();
    let mut args =
        run.args(None, &["-v", "node.fake.check-then-create,node.fake.wx", "--scenario", "race", "-n", "40"]);
    // FakeRun turns amplification off: turn it on here, lockstep only
    let at = args.iter().position(|a| a == "--amplify").unwrap();
    args[at + 1] = "on".into();
    args.extend(["--offsets".to_string(), "0".to_string()]);
    let out = conformance()
        .args(&args)
        .env("CONFORMANCE_STRACE", fixtures().join("fake-strace-delay").join("strace"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r = read_results(&run.out.path().join("results.json"));
    let ctl = &r.run_info.controls[0];
    assert!(ctl.detection.worked, "{ctl:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    match ctl.escalations.first() {
        // weak at the default delay first (the fake's window is missed below 4,000 µs), raced
        // again longer, and said so under the table
        Some(first) => {
            assert_eq!(first[0], 1000, "weak at the default delay first: {ctl:?}");
            assert!(stdout.contains("amplified delay raised from 1000 µs"), "{stdout}");
        }
        // on a busy machine (CI's parallel tests) the fake contenders' release was looser than
        // half the delay, trial after trial: the control's own race was raised before it could be
        // judged weak (`raised_from_us`), and caught at the longer delay
        None => {
            let c = cells(&r, "node.fake.check-then-create", Scenario::Race)[0];
            let raised = race(c).amplified.as_ref().and_then(|a| a.raised_from_us);
            assert_eq!(raised, Some(1000), "neither escalated nor raised from the default delay: {ctl:?} {c:?}");
        }
    }
    let wx = cells(&r, "node.fake.wx", Scenario::Race)[0];
    let delay = race(wx).amplified.as_ref().and_then(|a| a.delay_us);
    assert_eq!(delay, Some(4000), "the family races with the delay that worked: {wx:?}");
    assert_eq!(race(wx).verdict, RaceVerdict::Exclusive, "{wx:?}");
}

/// A second Ctrl-C while cmd runs under Wine exits at once (130) and leaves no process of the
/// run behind — Wine's server and services included, which no process group of the harness
/// holds (`wineserver -k` for the run's own prefix) — and no lock file in `--out`.
#[cfg(target_os = "linux")]
#[test]
fn a_second_interrupt_leaves_no_wine_process_and_no_lock() {
    let _serial = one_at_a_time();
    if !crate::common::available("cmd") {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let o = out.path().join("o");
    let args: Vec<std::ffi::OsString> =
        vec!["run".into(), "-r".into(), "cmd".into(), "-q".into(), "--out".into(), o.clone().into()];
    let (c, mark) = spawn(&args, &[]);
    // measuring: the partial results of the first cells are on disk, Wine's server is up
    until("the partial results", Duration::from_secs(120), || o.join("results.json").exists());
    assert!(processes_marked(&mark).iter().any(|p| p.contains("wineserver")), "{:?}", processes_marked(&mark));
    // two signals 20 ms apart: the second usually lands while the first stop is under way
    // (the exit at once); where the stop was quicker, the ordinary exit path is checked, which
    // must leave nothing either
    signal(&c, "-INT");
    std::thread::sleep(Duration::from_millis(20));
    let _ = Command::new("kill").args(["-INT", &c.id().to_string()]).status();
    let (code, err) = wait(c, Duration::from_secs(30));
    assert_eq!(code, Some(130), "{err}");
    eprintln!(
        "exit path: {}",
        if err.contains("interrupted twice") { "at once (second signal)" } else { "ordinary stop" }
    );
    no_process_left(&mark);
    assert!(!o.join(".conformance.lock").exists(), "the lock file was left in --out");
}

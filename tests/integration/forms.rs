//! Issue 11 on real runtimes: the new target states (the source as its own target, symbolic
//! links at the name), the new forms of a call (numeric flags, streams, runtime-native APIs,
//! check-then-rename, returned values), old runtime versions from npm (installed by
//! `bash .ci/install old`), one clock for barrier stamps, `runtimes` agreeing with `run`, and a
//! copied binary that needs no checkout. Absent runtimes are skipped visibly (`SKIPPED:`) and
//! fail under `CI=true`.

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
use crate::common::old_runtime;
use crate::common::{available, conformance, one_at_a_time, read_results, Run};
use conformance::domain::{Scenario, TargetState};
use conformance::report::model::{Cell, Results, SecondComerResult};
use conformance::verdict::{Outcome, RaceVerdict};

/// The second-comer cell of `variant` on `target` for `runtime` (the adapter's name, or a
/// prefix of the row label such as `node 12`).
fn second<'a>(r: &'a Results, runtime: &str, variant: &str, target: TargetState) -> &'a Cell {
    r.cells
        .iter()
        .find(|c| {
            (c.runtime_name == runtime || c.runtime.starts_with(runtime))
                && c.variant == variant
                && c.target == target
                && c.scenario == Scenario::SecondComer
        })
        .unwrap_or_else(|| panic!("no cell {runtime} {variant} {target:?}"))
}

/// A second-comer cell's result.
fn result(c: &Cell) -> &SecondComerResult {
    c.second().unwrap_or_else(|| panic!("{} is no second comer: {c:?}", c.id))
}

fn outcome(c: &Cell) -> Outcome {
    result(c).outcome
}

/// The cells of `r` of `variant` and `scenario`.
fn cells<'a>(r: &'a Results, variant: &str, scenario: Scenario) -> Vec<&'a Cell> {
    r.cells.iter().filter(|c| c.variant == variant && c.scenario == scenario).collect()
}

/// The outcomes that are faults (`skipped` too, which is no second comer's outcome: a file
/// holding it does not read back, and the test fails there).
const FAULTS: [Outcome; 4] = [Outcome::Crashed, Outcome::Timeout, Outcome::HarnessError, Outcome::Unsupported];

/// Every new target state on Node, end to end: the `self` states only for variants with a file
/// source, no fault anywhere, and what the man pages say of the calls underneath: open(2) with
/// O_CREAT|O_EXCL fails with EEXIST when the name is a symbolic link, "regardless of where the
/// symbolic link points"; link(2) never overwrites; rename(2) between two hard links of one file
/// "does nothing, and returns a success status"; open(2) without O_NOFOLLOW writes through a link.
/// Unix only: creating links on Windows may need a privilege, and the man pages are POSIX's.
#[cfg(unix)]
#[test]
fn new_target_states_on_node() {
    let _serial = one_at_a_time();
    if !available("node") {
        return;
    }
    let variants = "node.writeFileSync.wx,node.writeFileSync.w,node.copyFileSync,node.renameSync,node.linkSync";
    let (r, stdout) =
        Run::new().runtime("node").variants(variants).args(&["--scenario", "second-comer", "--target", "all"]).output();
    let all = cells(&r, "node.copyFileSync", Scenario::SecondComer);
    assert_eq!(all.len(), 10, "a file-source variant meets every state");
    assert_eq!(cells(&r, "node.writeFileSync.wx", Scenario::SecondComer).len(), 7, "no self states without a source");
    for c in &r.cells {
        assert!(!FAULTS.contains(&outcome(c)), "a fault: {c:?}");
        let rel = result(c).relative.as_ref().map(|a| a.outcome);
        assert_eq!(rel, Some(outcome(c)), "absolute and relative paths disagree: {c:?}");
    }
    for t in [TargetState::SymlinkToFile, TargetState::SymlinkToDir, TargetState::DanglingSymlink] {
        let c = second(&r, "node", "node.writeFileSync.wx", t);
        let code = c.error().map(|e| e.code.as_str());
        assert_eq!((outcome(c), code), (Outcome::Refused, Some("EEXIST")), "{c:?}");
    }
    for t in [
        TargetState::File,
        TargetState::SelfSame,
        TargetState::SelfHardlink,
        TargetState::SelfSymlink,
        TargetState::SymlinkToFile,
        TargetState::DanglingSymlink,
    ] {
        let c = second(&r, "node", "node.linkSync", t);
        assert_eq!(outcome(c), Outcome::Refused, "{t:?}: {c:?}");
    }
    assert_eq!(outcome(second(&r, "node", "node.renameSync", TargetState::SelfHardlink)), Outcome::Kept);
    assert_eq!(outcome(second(&r, "node", "node.writeFileSync.w", TargetState::SymlinkToFile)), Outcome::Followed);
    assert!(stdout.contains("self-hardlink") && stdout.contains("dangling-symlink"), "{stdout}");
}

/// The new states on every other runtime here (a copy and a move each; cmd: two one-shot
/// variants on two states, under Wine): measured, never a fault. The outcomes are the
/// runtime's; the checks are that the states reach every probe and are judged. Unix only.
#[cfg(unix)]
#[test]
fn new_target_states_on_other_runtimes() {
    let _serial = one_at_a_time();
    for (name, variants, targets) in [
        ("bun", "node.copyFileSync,node.renameSync", "all"),
        ("deno", "deno.copyFileSync,deno.renameSync", "all"),
        ("coreclr", "dotnet.File.Copy.overwrite,dotnet.File.Move", "all"),
        ("mono", "dotnet.File.Copy.overwrite,dotnet.File.Move", "all"),
        ("cmd", "cmd.copy,cmd.move.Y", "self,symlink-to-file"),
    ] {
        if !available(name) {
            continue;
        }
        let run =
            Run::new().runtime(name).variants(variants).args(&["--scenario", "second-comer", "--target", targets]);
        let cs = run.results().cells;
        let expected = if targets == "all" { 20 } else { 4 };
        // the variants' own sources (files); their directory sources (`sources`) add cells
        // without the self states, which need a file
        let own = cs.iter().filter(|c| c.source.is_none()).count();
        assert_eq!(own, expected, "{name}: {cs:?}");
        let selves = cs.iter().filter(|c| c.source.is_some() && c.target.as_str().starts_with("self"));
        assert_eq!(selves.count(), 0, "{name}: a directory source met a self state");
        for c in &cs {
            assert!(!FAULTS.contains(&outcome(c)), "{name}: a fault: {c:?}");
            assert!(!result(c).after.is_empty(), "{name}: {c:?}");
        }
    }
}

/// The forms of a call on Node, Bun and Deno's node:fs: a stream's refusal says how it came
/// (a synchronous throw or an 'error' event), mkdir -p returns a value the cell keeps, the
/// numeric flags are measured; on Bun its own API (Bun.write returns the bytes written).
#[test]
fn forms_on_node_bun_and_deno() {
    let _serial = one_at_a_time();
    for name in ["node", "bun", "deno"] {
        if !available(name) {
            continue;
        }
        let variants = "node.createWriteStream.*,node.mkdirSync.recursive,node.openSync.numeric*,bun.write*";
        let (r, stdout) = Run::new()
            .runtime(name)
            .variants(variants)
            .args(&["--scenario", "second-comer", "--target", "absent,file"])
            .output();
        for v in ["node.createWriteStream.wx", "node.createWriteStream.ax"] {
            let c = second(&r, name, v, TargetState::File);
            assert_eq!(outcome(c), Outcome::Refused, "{name} {v}: {c:?}");
            let how = result(c).delivery.as_deref().unwrap_or_default();
            assert!(["throw", "error-event"].contains(&how), "{name} {v}: delivery {how:?}: {c:?}");
            assert!(stdout.contains(&format!("({how})")), "{name}: the table shows the delivery:\n{stdout}");
        }
        let c = second(&r, name, "node.mkdirSync.recursive", TargetState::Absent);
        assert_eq!(outcome(c), Outcome::Acquired, "{c:?}");
        let ret = result(c).returned.as_deref().unwrap_or_else(|| panic!("{name}: no returned value: {c:?}"));
        assert!(stdout.contains(&format!("acquired → returned {ret}")), "{name}:\n{stdout}");
        for v in ["node.openSync.numeric", "node.openSync.numeric-literal"] {
            let c = second(&r, name, v, TargetState::File);
            assert!(!FAULTS.contains(&outcome(c)), "{name} {v}: {c:?}");
        }
        if name == "bun" {
            let c = second(&r, name, "bun.write", TargetState::Absent);
            assert_eq!(outcome(c), Outcome::Acquired, "{c:?}");
            // Bun.write resolves to the bytes it wrote: the token's length, named as such
            assert_eq!(result(c).returned.as_deref(), Some(conformance::domain::Returned::BYTE_COUNT), "{c:?}");
        }
    }
}

/// Deno's own new forms and .NET's File.OpenHandle: Deno.open with createNew refuses through a
/// rejected promise; File.OpenHandle exists from .NET 6 on (learn.microsoft.com, "Applies to"):
/// unsupported with the reason, found at run time, on CoreCLR before 6 and on Mono, acquired
/// on .NET 6 and later (the Windows and macOS jobs' SDK).
#[test]
fn forms_on_deno_and_dotnet() {
    let _serial = one_at_a_time();
    if available("deno") {
        let r = Run::new()
            .runtime("deno")
            .variants("deno.open.*,deno.create")
            .args(&["--scenario", "second-comer", "--target", "file"])
            .results();
        for v in ["deno.open.createNew", "deno.open.createNew.writable"] {
            let c = second(&r, "deno", v, TargetState::File);
            let delivery = result(c).delivery.as_deref();
            assert_eq!((outcome(c), delivery), (Outcome::Refused, Some("rejected")), "{c:?}");
        }
        assert_eq!(outcome(second(&r, "deno", "deno.create", TargetState::File)), Outcome::Replaced);
    }
    for name in ["coreclr", "mono"] {
        if !available(name) {
            continue;
        }
        let v = "dotnet.File.OpenHandle.CreateNew";
        let r =
            Run::new().runtime(name).variants(v).args(&["--scenario", "second-comer", "--target", "absent"]).results();
        let c = second(&r, name, v, TargetState::Absent);
        let major: u32 = c.runtime_version.split('.').next().unwrap().parse().unwrap_or(0);
        if name == "mono" || major < 6 {
            assert_eq!(outcome(c), Outcome::Unsupported, "{c:?}");
            let evidence = c.evidence.as_deref().unwrap_or_default();
            assert!(evidence.contains("File.OpenHandle is not available"), "{c:?}");
        } else {
            assert_eq!(outcome(c), Outcome::Acquired, "{c:?}");
        }
    }
}

/// The check-then-rename anti-pattern of each family races like the check-then-create control:
/// amplified, the window between the check and the rename gives several winners.
#[test]
fn check_then_rename_is_caught_in_every_family_here() {
    let _serial = one_at_a_time();
    for (name, v) in [
        ("node", "node.existsSync+renameSync"),
        ("deno", "deno.statSync+renameSync"),
        ("coreclr", "dotnet.File.Exists+Move.overwrite"),
    ] {
        if !available(name) {
            continue;
        }
        // amplified alone: the default run's natural check, which runs first, may decide
        // the cell without an amplified race
        let r =
            Run::new().runtime(name).variants(v).args(&["--scenario", "race"]).trials(40).args(&["--amplify", "on"]);
        let r = r.results();
        let c = cells(&r, v, Scenario::Race)[0];
        if c.race().and_then(|x| x.amplified.as_ref()).is_none() {
            let why = c.race().and_then(|x| x.amplified_unavailable.as_ref());
            eprintln!(
                "SKIPPED: {name} {v}: no amplified race here: {}",
                why.map(|w| w.to_string()).unwrap_or_default()
            );
            continue;
        }
        assert_eq!(c.verdict(), Some(RaceVerdict::MultipleWinners), "{name}: {c:?}");
    }
}

/// The oldest versions the probes are tested on, fetched from npm by `.ci/install old`: the
/// probes start (`runtimes` says found), the new facts are recorded, and the findings of issue
/// 11 show: Node 12's write stream never emits 'close' after a refused open (a timeout, not a
/// hang), Bun 1.1.44's throws synchronously, Deno 2.0.0's copyFileSync(p, p) empties the file
/// and its mkdirSync(p, {recursive: true}) returns undefined. Their races stamp on one clock.
/// Linux x86-64 only: the builds `.ci/install old` fetches.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[test]
fn old_runtimes_from_npm() {
    let _serial = one_at_a_time();
    let (Some(node), Some(bun), Some(deno)) =
        (old_runtime("node", "12.22.12"), old_runtime("bun", "1.1.44"), old_runtime("deno", "2.0.0"))
    else {
        return;
    };
    let rts = format!("node={},bun={},deno={}", node.display(), bun.display(), deno.display());
    let out = conformance().args(["runtimes", "--json", "-r", &rts]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for rt in v.as_array().unwrap() {
        assert_eq!(rt["status"], "found", "{rt}");
    }
    let variants = "node.createWriteStream.wx,node.mkdirSync.recursive,node.cpSync,deno.copyFileSync";
    let (r, stdout) = Run::new()
        .runtime(&rts)
        .variants(variants)
        .args(&["--scenario", "second-comer", "--target", "absent,file,self", "--timeout", "2"])
        .output();
    let (absent, file, self_same) = (TargetState::Absent, TargetState::File, TargetState::SelfSame);
    assert_eq!(outcome(second(&r, "node 12", "node.createWriteStream.wx", file)), Outcome::Timeout);
    let c = second(&r, "node 12", "node.cpSync", absent);
    assert_eq!(outcome(c), Outcome::Unsupported);
    assert!(c.evidence.as_deref().unwrap().contains("fs.cpSync is not a function"), "{c:?}");
    assert_eq!(result(second(&r, "node 12", "node.mkdirSync.recursive", absent)).returned.as_deref(), Some("target"));
    assert_eq!(result(second(&r, "bun 1.1.44", "node.createWriteStream.wx", file)).delivery.as_deref(), Some("throw"));
    assert_eq!(outcome(second(&r, "deno 2.0.0", "deno.copyFileSync", self_same)), Outcome::Damaged, "{stdout}");
    assert_eq!(result(second(&r, "deno 2.0.0", "deno.copyFileSync", self_same)).after, "file \"\"");
    let returned = result(second(&r, "deno 2.0.0", "node.mkdirSync.recursive", absent)).returned.as_deref();
    assert_eq!(returned, Some("undefined"));
    // races: every contender's stamps on one clock, so every trial has a barrier spread
    let race = Run::new()
        .runtime(&rts)
        .variants("node.writeFileSync.wx")
        .args(&["--scenario", "race"])
        .trials(20)
        .natural_only();
    for c in &race.results().cells {
        let st = &c.race().and_then(|x| x.natural.as_ref()).unwrap_or_else(|| panic!("no natural race: {c:?}")).stats;
        assert!(st.barrier_spread_us.is_some(), "{c:?}");
        assert!(st.barrier_spread_unmeasured.is_none(), "{}: {:?}", c.runtime, st.barrier_spread_unmeasured);
    }
}

/// Stamps that cannot be right are not made into a spread: a probe whose wall clock runs 50 ms
/// late is `not measured (…)` with the reason; the same probe on CLOCK_MONOTONIC (Python's
/// time.monotonic), or on a correct wall clock, is measured.
#[cfg(unix)]
#[test]
fn barrier_spreads_come_from_one_clock() {
    let fixtures = crate::common::fixtures();
    let fake = format!("node={}", fixtures.join("fake-runtimes").join("clocks").join("node").display());
    let matrices = fixtures.join("matrices").join("faults");
    let race = |env: &[(&str, &str)]| {
        let out = tempfile::tempdir().unwrap();
        let mut c = conformance();
        c.arg("--matrices").arg(&matrices);
        c.args(["run", "-r", &fake, "-v", "node.fake.wx", "--scenario", "race", "-n", "6", "--amplify", "off", "-q"]);
        for (k, v) in env {
            c.env(k, v);
        }
        let o = c.arg("--out").arg(out.path()).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let skewed = race(&[("FAKE_CLOCK", "wall"), ("FAKE_SKEW_US", "50000")]);
    assert!(skewed.contains("barrier spread not measured (6 of 6 trials: a wall-clock stamp lies"), "{skewed}");
    for clock in ["monotonic", "wall"] {
        let ok = race(&[("FAKE_CLOCK", clock)]);
        assert!(ok.contains("barrier spread (median over cells) p50"), "{clock}: {ok}");
    }
}

/// `runtimes` starts each probe as `run` does: a Node whose probe cannot start (here, a fake
/// that prints Node 14's syntax error) is `broken` with that reason in both, never `found`.
#[cfg(unix)]
#[test]
fn runtimes_agrees_with_run() {
    let fake =
        format!("node={}", crate::common::fixtures().join("fake-runtimes").join("no-hello").join("node").display());
    let out = conformance().args(["runtimes", "--json", "-r", &fake]).output().unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["status"], "broken", "{v}");
    assert!(v[0]["reason"].as_str().unwrap().contains("Unexpected token"), "{v}");
    let o = conformance().args(["run", "--dry-run", "-r", &fake]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(err.contains("broken") && err.contains("Unexpected token"), "{err}");
}

/// A probe that exits at once while a process it started keeps its stdout open is seen to
/// exit (`probe exited before hello (exit status: 3)`, with its stderr), not waited for until
/// the start-up timeout and called silent (`no hello within 30000 ms`).
#[cfg(unix)]
#[test]
fn a_probe_that_exits_is_noticed_though_a_child_holds_its_stdout() {
    let fake = format!(
        "node={}",
        crate::common::fixtures().join("fake-runtimes").join("exits-child-holds").join("node").display()
    );
    let out = conformance().args(["runtimes", "--json", "-r", &fake]).output().unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["status"], "broken", "{v}");
    let reason = v[0]["reason"].as_str().unwrap();
    assert!(reason.contains("probe exited before hello (exit status: 3)") && reason.contains("probe gave up"), "{v}");
}

/// A copied binary runs from its own built-in probes and matrices, with the checkout hidden
/// (a bind mount over it in a private mount namespace, `unshare -rm`): `variants` lists the
/// matrices and a run measures Node, recording `built-in probes/` in run_info.
#[cfg(target_os = "linux")]
#[test]
fn a_copied_binary_needs_no_checkout() {
    if !available("node") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("conformance");
    std::fs::copy(assert_cmd::cargo::cargo_bin("conformance"), &exe).unwrap();
    let empty = dir.path().join("empty");
    let out = dir.path().join("out");
    std::fs::create_dir(&empty).unwrap();
    let script = format!(
        "mount --bind '{empty}' '{home}' && cd / && '{exe}' variants -v node.mkdirSync && \
         '{exe}' run -r node -v node.mkdirSync --scenario second-comer --target absent --no-relative -q --out '{out}'",
        empty = empty.display(),
        home = crate::common::root().display(),
        exe = exe.display(),
        out = out.display()
    );
    let o = std::process::Command::new("unshare")
        .args(["-rm", "sh", "-c", &script])
        .env("CONFORMANCE_CACHE_DIR", dir.path().join("cache"))
        .output();
    let o = match o {
        Ok(o) if o.status.success() => o,
        Ok(o) if String::from_utf8_lossy(&o.stderr).contains("unshare") => {
            eprintln!("SKIPPED: no private mount namespace here: {}", String::from_utf8_lossy(&o.stderr));
            return;
        }
        Ok(o) => panic!("{}\n{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)),
        Err(e) => {
            eprintln!("SKIPPED: unshare: {e}");
            return;
        }
    };
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("node.mkdirSync"), "{stdout}");
    let r = read_results(&out.join("results.json"));
    assert!(r.run_info.probes.as_deref().unwrap().starts_with("built-in probes/"), "{:?}", r.run_info);
    assert!(r.run_info.matrices.as_deref().unwrap().starts_with("built-in matrices/"), "{:?}", r.run_info);
    assert_eq!(r.cells.first().and_then(Cell::outcome), Some(Outcome::Acquired), "{r:?}");
}

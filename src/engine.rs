//! Measuring one runtime: second-comer attempts and races, cell by cell.
//!
//! For every attempt the harness puts the first comer's state in place, snapshots the target,
//! drives the probe, snapshots again, and classifies with [`crate::verdict`]. For races it
//! prepares each contender's source before the release, releases all contenders together
//! (`go` written to each in turn, after all are `ready`), then reads whose token the target
//! holds.

#![expect(clippy::result_large_err, reason = "the contender steps return an Attempt as data")]

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::exec::contender::{Attempt, Contender, Mode, Spec, Timeouts};
use crate::exec::scratch::{clear, make_source, set_up, spell, PathStyle, Scratch, TargetState};
use crate::matrix::{Creates, SourceKind, Variant};
use crate::report::model::{Cell, ErrorInfo, RelativeAttempt, Scenario};
use crate::runtime::{normalize, ProbeContext, Runtime};
use crate::snapshot::{self, mark_name};
use crate::verdict::{classify_second, summarize_race, Outcome, RaceSummary, RaceVerdict, Report, Trial};

/// Options of a measurement.
#[derive(Debug, Clone)]
pub struct Options {
    /// Contenders per race (K).
    pub contenders: usize,
    /// Trials per race for session-mode runtimes (T).
    pub trials: usize,
    /// Trials per race for one-shot runtimes (cmd), which start a process per attempt.
    pub oneshot_trials: usize,
    /// Per-attempt timeout (multiplied by the adapter's factor).
    pub timeout: Duration,
    /// Probe start-up timeout.
    pub startup_timeout: Duration,
    /// Run second-comer cells.
    pub second_comer: bool,
    /// Run race cells.
    pub race: bool,
    /// Target states for second-comer cells.
    pub targets: Vec<TargetState>,
    /// Also attempt each second comer with a relative path.
    pub relative: bool,
    /// Handle hold time for variants that hold a handle (ms).
    pub hold_ms: u64,
    /// Stop a race after this many consecutive faulty trials.
    pub max_consecutive_faults: usize,
}

/// Measures `variants` (already filtered to `rt`'s families) on `rt`, calling `on_cell`
/// after each cell (for progress and incremental output). Never fails: faults become cells.
pub fn measure(
    rt: &Runtime,
    variants: &[&Variant],
    opts: &Options,
    scratch: &mut Scratch,
    ctx: &ProbeContext,
    nonce: &str,
    on_cell: &mut dyn FnMut(&Cell),
) -> Vec<Cell> {
    let adapter = rt.adapter();
    let timeouts = timeouts_for(adapter, opts);
    let style = adapter.path_style();
    let mut cells = Vec::new();
    let mut next_id = 0u64;
    for family in &rt.families {
        let fam: Vec<&Variant> = variants.iter().copied().filter(|v| v.family == *family).collect();
        if fam.is_empty() {
            continue;
        }
        let launch = adapter.launch(rt, family, ctx);
        let mut pool: Vec<Contender> = (0..opts.contenders.max(1))
            .map(|_| Contender::new(adapter.mode(), launch.clone(), scratch.root().to_path_buf(), timeouts))
            .collect();
        // start every session up front so that start-up never counts in a measurement
        let start_fault = pool.iter_mut().find_map(|c| c.start().err());
        for v in fam {
            if crate::interrupt::requested() {
                break;
            }
            let base = CellBase { rt, v };
            if let Some(f) = &start_fault {
                if opts.second_comer {
                    for t in &opts.targets {
                        let c = base.fault_cell(Scenario::SecondComer, t.as_str(), f);
                        on_cell(&c);
                        cells.push(c);
                    }
                }
                if opts.race {
                    let c = base.fault_cell(Scenario::Race, "absent", f);
                    on_cell(&c);
                    cells.push(c);
                }
                continue;
            }
            if opts.second_comer {
                for &t in &opts.targets {
                    if crate::interrupt::requested() {
                        break;
                    }
                    let started = Instant::now();
                    let (abs, a_before, a_after, a) =
                        second_comer(&mut pool[0], v, t, false, style, scratch, nonce, &mut next_id);
                    let rel = if opts.relative {
                        let (o, _, _, r) = second_comer(&mut pool[0], v, t, true, style, scratch, nonce, &mut next_id);
                        Some(RelativeAttempt { outcome: o, error: error_info(&r) })
                    } else {
                        None
                    };
                    let mut c = base.cell(Scenario::SecondComer, t.as_str());
                    c.outcome = Some(abs);
                    c.error = error_info(&a);
                    c.relative = rel;
                    c.before = Some(a_before);
                    c.after = Some(a_after);
                    c.evidence = a.evidence.clone();
                    c.elapsed_ms = ms(started.elapsed());
                    on_cell(&c);
                    cells.push(c);
                }
            }
            if opts.race && !crate::interrupt::requested() {
                let trials = if adapter.mode() == Mode::OneShot { opts.oneshot_trials } else { opts.trials };
                let c = race(&base, &mut pool, trials, opts, style, scratch, nonce, &mut next_id);
                on_cell(&c);
                cells.push(c);
            }
        }
        for c in &mut pool {
            c.shutdown();
        }
    }
    cells
}

/// The contender timeouts for a runtime: the per-attempt timeout times the adapter's
/// multiplier; a one-shot prompt is answered after a quarter of it (at most 3 s).
pub fn timeouts_for(adapter: &dyn crate::runtime::Adapter, opts: &Options) -> Timeouts {
    let mult = adapter.timeout_multiplier();
    Timeouts {
        startup: opts.startup_timeout,
        attempt: opts.timeout * mult,
        prompt_after: (opts.timeout * mult / 4).min(Duration::from_secs(3)),
    }
}

struct CellBase<'a> {
    rt: &'a Runtime,
    v: &'a Variant,
}

impl CellBase<'_> {
    fn cell(&self, scenario: Scenario, target: &str) -> Cell {
        Cell::new((&self.rt.label, self.rt.name, &self.rt.version), self.v, scenario, target)
    }

    fn fault_cell(&self, scenario: Scenario, target: &str, f: &Attempt) -> Cell {
        let mut c = self.cell(scenario, target);
        let o = match f.report {
            Report::Timeout => Outcome::Timeout,
            _ => Outcome::Crashed,
        };
        match scenario {
            Scenario::SecondComer => c.outcome = Some(o),
            Scenario::Race => c.verdict = Some(RaceVerdict::Inconclusive),
        }
        c.evidence = f.evidence.clone();
        c
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

pub(crate) fn error_info(a: &Attempt) -> Option<ErrorInfo> {
    a.error.as_ref().map(|raw| ErrorInfo { code: normalize(raw).to_string(), raw: raw.clone() })
}

/// Runs begin → ready → release → finish for one contender.
fn attempt_one(c: &mut Contender, spec: &Spec) -> Attempt {
    if let Err(a) = c.begin(spec).and_then(|()| c.ready()).and_then(|()| c.release()) {
        return a;
    }
    c.finish()
}

/// The attempt's spec. `target_dir` is the folder as the probe should see it (absolute or
/// relative); `source_dir` likewise for the source. A symbolic link's text is resolved
/// against the link's own folder, not the working folder, so symlink variants always get an
/// absolute source (the caller passes it).
fn spec_for(
    v: &Variant,
    id: u64,
    target_dir: &Path,
    source_dir: &Path,
    style: PathStyle,
    k: usize,
    token: &str,
) -> Spec {
    let target = target_dir.join("target");
    let source = (v.source != SourceKind::None).then(|| spell(&source_dir.join(format!("src-{k}")), style));
    let mark = (v.creates == Creates::Dir).then(|| spell(&target.join(mark_name(token)), style));
    Spec {
        id,
        variant: v.id.clone(),
        target: spell(&target, style),
        source,
        token: token.to_string(),
        mark,
        hold_ms: 0,
    }
}

/// One second-comer attempt. Returns (outcome, before, after, attempt).
#[allow(clippy::too_many_arguments)]
fn second_comer(
    c: &mut Contender,
    v: &Variant,
    state: TargetState,
    relative: bool,
    style: PathStyle,
    scratch: &mut Scratch,
    nonce: &str,
    next_id: &mut u64,
) -> (Outcome, String, String, Attempt) {
    *next_id += 1;
    let id = *next_id;
    let first = format!("{nonce}-first-{id}");
    let token = format!("{nonce}-second-{id}");
    let (abs, rel) = match scratch.cell_dir() {
        Ok(d) => d,
        Err(e) => {
            let a = Attempt::fault(Report::Crashed, format!("harness could not create a cell folder: {e}"));
            return (Outcome::Crashed, String::new(), String::new(), a);
        }
    };
    let target_abs = abs.join("target");
    let setup = set_up(&target_abs, state, &first).and_then(|()| make_source(&abs.join("src-1"), v.source, &token));
    if let Err(e) = setup {
        let a = Attempt::fault(Report::Crashed, format!("harness could not set up {}: {e}", state.as_str()));
        return (Outcome::Crashed, String::new(), String::new(), a);
    }
    let for_probe = if relative { rel } else { abs.clone() };
    let source_dir = if v.creates == Creates::Symlink { &abs } else { &for_probe };
    let spec = spec_for(v, id, &for_probe, source_dir, style, 1, &token);
    let before = snapshot::take(&target_abs);
    let a = attempt_one(c, &spec);
    let after = snapshot::take(&target_abs);
    let outcome = classify_second(&before, a.report, &after, &token, spec.mark.is_some());
    let (b, af) = (before.describe(), after.describe());
    clear(&abs);
    (outcome, b, af, a)
}

/// What a race produced, before it becomes a cell.
#[derive(Debug, Clone)]
pub struct RaceRun {
    /// Verdict and counts.
    pub summary: RaceSummary,
    /// Normalised error codes of failed calls → count.
    pub errors: BTreeMap<String, usize>,
    /// The first failed call's error.
    pub first_error: Option<ErrorInfo>,
    /// What the harness saw of faults (or why the race stopped).
    pub evidence: Option<String>,
    /// True when a contender's probe does not have its call (then nothing was counted).
    pub unsupported: bool,
    /// Completed trials per second of measured wall time.
    pub trials_per_second: Option<f64>,
    /// Trials run again because a contender failed before the release (its process did not
    /// start or did not get ready): such a trial says nothing about the call.
    pub discarded_trials: usize,
}

/// Runs `trials` race trials (plus one uncounted warm-up) among `pool`, contender `i` making
/// the call `variants[i]` with paths spelled in `styles[i]`. The target is absent at the
/// start of each trial; sources are prepared before the release.
#[allow(clippy::too_many_arguments)]
pub fn race_core(
    pool: &mut [Contender],
    variants: &[&Variant],
    styles: &[PathStyle],
    trials: usize,
    opts: &Options,
    scratch: &mut Scratch,
    nonce: &str,
    next_id: &mut u64,
) -> RaceRun {
    let k = pool.len();
    let mut run = RaceRun {
        summary: summarize_race(k, &[]),
        errors: BTreeMap::new(),
        first_error: None,
        evidence: None,
        unsupported: false,
        trials_per_second: None,
        discarded_trials: 0,
    };
    let (dir, _) = match scratch.cell_dir() {
        Ok(d) => d,
        Err(e) => {
            run.evidence = Some(format!("harness could not create a cell folder: {e}"));
            return run;
        }
    };
    let mut observed: Vec<Trial> = Vec::with_capacity(trials);
    let mut consecutive_faults = 0;
    let mut measured_time = Duration::ZERO;
    // trial 0 is a warm-up (first calls pay JIT and lazy-loading costs); it is not counted
    let mut t = 0;
    let mut discards_in_row = 0;
    let mut folder = 0;
    while t <= trials {
        folder += 1;
        if crate::interrupt::requested() {
            run.evidence = Some(format!("interrupted after {} trials", observed.len()));
            break;
        }
        let t_start = Instant::now();
        *next_id += 1;
        let id = *next_id;
        let tdir = dir.join(format!("t{folder}"));
        if let Err(e) = std::fs::create_dir(&tdir) {
            run.evidence = Some(format!("harness could not create a trial folder: {e}"));
            break;
        }
        let tokens: Vec<String> = (0..k).map(|i| format!("{nonce}-t{folder}-k{i}")).collect();
        let mut specs = Vec::with_capacity(k);
        let mut setup_err = None;
        for (i, tok) in tokens.iter().enumerate() {
            let v = variants[i];
            if let Err(e) = make_source(&tdir.join(format!("src-{i}")), v.source, tok) {
                setup_err = Some(e);
            }
            let mut s = spec_for(v, id, &tdir, &tdir, styles[i], i, tok);
            if v.holds {
                s.hold_ms = opts.hold_ms;
            }
            specs.push(s);
        }
        if let Some(e) = setup_err {
            run.evidence = Some(format!("harness could not prepare sources: {e}"));
            break;
        }
        let mut attempts: Vec<Option<Attempt>> = vec![None; k];
        for (i, c) in pool.iter_mut().enumerate() {
            if let Err(a) = c.begin(&specs[i]) {
                attempts[i] = Some(a);
            }
        }
        for (i, c) in pool.iter_mut().enumerate() {
            if attempts[i].is_none() {
                if let Err(a) = c.ready() {
                    attempts[i] = Some(a);
                }
            }
        }
        if let Some(a) = attempts.iter().flatten().find(|a| a.report == Report::Unsupported) {
            run.unsupported = true;
            run.evidence.clone_from(&a.evidence);
            run_ready_ones(pool, &attempts);
            break;
        }
        if let Some(fault) = attempts.iter().flatten().next().cloned() {
            // a contender failed before the release: discard the trial and run it again
            run_ready_ones(pool, &attempts);
            clear(&tdir);
            run.discarded_trials += 1;
            discards_in_row += 1;
            if discards_in_row >= opts.max_consecutive_faults {
                let why = fault.evidence.unwrap_or_default();
                run.evidence = Some(format!(
                    "stopped: a contender failed before the release {discards_in_row} times in a row; {why}"
                ));
                break;
            }
            continue;
        }
        discards_in_row = 0;
        // the release: every contender is blocked reading; write `go` to each in turn
        for (i, c) in pool.iter_mut().enumerate() {
            if attempts[i].is_none() {
                if let Err(a) = c.release() {
                    attempts[i] = Some(a);
                }
            }
        }
        for (i, c) in pool.iter_mut().enumerate() {
            if attempts[i].is_none() {
                attempts[i] = Some(c.finish());
            }
        }
        let attempts: Vec<Attempt> = attempts.into_iter().map(|a| a.expect("every slot filled")).collect();
        let after = snapshot::take(&tdir.join("target"));
        clear(&tdir);
        t += 1;
        if t == 1 {
            continue;
        }
        measured_time += t_start.elapsed();
        let trial = Trial {
            reports: attempts.iter().map(|a| a.report).collect(),
            held: tokens.iter().map(|tok| after.holds(tok)).collect(),
            t0_us: attempts.iter().map(|a| a.t0_us).collect(),
        };
        let faulty = trial.reports.iter().any(|r| matches!(r, Report::Timeout | Report::Crashed | Report::Prompted));
        for a in &attempts {
            if let Some(e) = error_info(a) {
                *run.errors.entry(e.code.clone()).or_insert(0) += 1;
                if run.first_error.is_none() {
                    run.first_error = Some(e);
                }
            }
            if a.report != Report::Success && a.report != Report::Error && run.evidence.is_none() {
                run.evidence.clone_from(&a.evidence);
            }
        }
        observed.push(trial);
        consecutive_faults = if faulty { consecutive_faults + 1 } else { 0 };
        if consecutive_faults >= opts.max_consecutive_faults {
            let note = format!("stopped after {consecutive_faults} consecutive faulty trials");
            run.evidence = Some(match run.evidence.take() {
                Some(e) => format!("{note}; {e}"),
                None => note,
            });
            break;
        }
    }
    clear(&dir);
    run.summary = summarize_race(k, &observed);
    if !observed.is_empty() && measured_time > Duration::ZERO {
        run.trials_per_second = Some(observed.len() as f64 / measured_time.as_secs_f64());
    }
    run
}

/// Releases and finishes the contenders that got ready (no fault in `attempts`) in a trial that
/// will not be counted, so that session probes stay in step with the harness.
fn run_ready_ones(pool: &mut [Contender], attempts: &[Option<Attempt>]) {
    for (c, a) in pool.iter_mut().zip(attempts) {
        if a.is_none() && c.release().is_ok() {
            let _ = c.finish();
        }
    }
}

/// One race cell: every contender makes the same call.
#[allow(clippy::too_many_arguments)]
fn race(
    base: &CellBase<'_>,
    pool: &mut [Contender],
    trials: usize,
    opts: &Options,
    style: PathStyle,
    scratch: &mut Scratch,
    nonce: &str,
    next_id: &mut u64,
) -> Cell {
    let started = Instant::now();
    let variants = vec![base.v; pool.len()];
    let styles = vec![style; pool.len()];
    let run = race_core(pool, &variants, &styles, trials, opts, scratch, nonce, next_id);
    let mut cell = base.cell(Scenario::Race, "absent");
    cell.evidence = run.evidence;
    cell.elapsed_ms = ms(started.elapsed());
    if run.unsupported {
        cell.verdict = Some(RaceVerdict::Unsupported);
        return cell;
    }
    cell.verdict = Some(run.summary.verdict);
    cell.race = Some(run.summary.stats);
    cell.errors = run.errors;
    cell.error = run.first_error;
    cell.trials_per_second = run.trials_per_second;
    cell.discarded_trials = run.discarded_trials;
    cell
}

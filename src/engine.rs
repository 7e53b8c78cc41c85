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

use crate::exec::amplify::Amplifier;
use crate::exec::contender::{Attempt, Contender, Mode, Spec, Timeouts};
use crate::exec::health;
use crate::exec::process::Launch;
use crate::exec::scratch::{clear, make_source, set_up, spell, win32_name_problem, PathStyle, Scratch, TargetState};
use crate::matrix::{Creates, SourceKind, Variant};
use crate::report::model::{Cell, ControlInfo, ErrorInfo, ModeRun, OrderingRun, RelativeAttempt, Scenario};
use crate::runtime::{normalize, ProbeContext, Runtime, FS_FAILURE_CODES};
use crate::snapshot::{self, mark_name};
use crate::verdict::{
    apply_control, classify_second, decide, summarize_race, Detection, Outcome, RaceMode, RaceSummary, RaceVerdict,
    Report, Trial,
};

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
    /// Run the natural race of each race cell.
    pub natural: bool,
    /// Whether and how to run the amplified race of each race cell.
    pub amplify: Amplify,
    /// `--max-rate`: keep adding trials to a race until a multi-winner trial appears or the
    /// one-sided 95% bound on the multi-winner rate falls to this (a probability).
    pub max_rate: Option<f64>,
    /// `--max-trials`: the cap on trials per race when `max_rate` is set.
    pub max_trials: usize,
    /// `--offsets`: release offsets (µs) for every race, instead of the default sweeps
    /// ([`Sweep::NaturalAuto`] natural, [`Sweep::amplified`] amplified).
    pub offsets: Option<Vec<u64>>,
}

/// The amplified half of the races.
#[derive(Debug, Clone)]
pub enum Amplify {
    /// Not requested (`--amplify off`).
    Off,
    /// Requested, but not available on this machine: the reason.
    Unavailable(String),
    /// Requested and working.
    On(Amplifier),
}

impl Amplify {
    /// Why a cell has no amplified run under this setting (`None` when it can have one).
    pub fn why_not(&self) -> Option<String> {
        match self {
            Amplify::Off => Some("off (--amplify off)".into()),
            Amplify::Unavailable(why) => Some(why.clone()),
            Amplify::On(_) => None,
        }
    }
}

/// How many trials a race runs: at least `trials`; with `max_rate`, on until a multi-winner
/// trial appears or the bound reaches it, at most `max_trials`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    /// Trials counted at least.
    pub trials: usize,
    /// See [`Options::max_rate`].
    pub max_rate: Option<f64>,
    /// See [`Options::max_trials`].
    pub max_trials: usize,
}

impl Budget {
    /// True when a race with `done` counted trials, `clean` of them clean and `multi` with two
    /// or more winners, may stop.
    pub fn enough(&self, done: usize, clean: usize, multi: usize) -> bool {
        if done < self.trials {
            return false;
        }
        match self.max_rate {
            None => true,
            Some(r) => multi > 0 || done >= self.max_trials || crate::stats::upper95(0, clean) <= r,
        }
    }
}

/// What [`measure`] produced for one runtime.
#[derive(Debug, Clone, Default)]
pub struct Measured {
    /// The cells, in measurement order (a family's control last when it was not selected).
    pub cells: Vec<Cell>,
    /// The detection control of each family that ran races.
    pub controls: Vec<ControlInfo>,
    /// Set when the scratch file system stopped working (a harness error, then a failed
    /// [`health::check`]): measuring stopped, and the run must end with exit code 3.
    pub scratch_failed: Option<String>,
}

/// The detection control of `family` among `all` variants: the one marked `control = true`
/// in its matrix (its check-then-create anti-pattern).
pub fn control_for<'a>(all: &'a [Variant], family: &str) -> Option<&'a Variant> {
    all.iter().find(|v| v.family == family && v.control)
}

/// True when `c` is a harness error (second comer, relative repeat, or race).
fn is_harness_error(c: &Cell) -> bool {
    c.outcome == Some(Outcome::HarnessError)
        || c.relative.as_ref().is_some_and(|r| r.outcome == Outcome::HarnessError)
        || c.verdict == Some(RaceVerdict::HarnessError)
}

/// Measures `variants` (already filtered to `rt`'s families) on `rt`, calling `on_cell`
/// after each cell (for progress and incremental output). `controls` holds each family's
/// detection control (see [`control_for`]): when races run, it is raced first in every
/// family (and reported even if not selected), and a family whose control was not caught has
/// its `exclusive` verdicts made `inconclusive`. Never fails: faults become cells. An
/// interrupt stops it between attempts; the attempt in flight is dropped. After a cell with a
/// harness error the scratch folder is checked ([`health::check`]); if it no longer works,
/// measuring stops and [`Measured::scratch_failed`] says why.
#[allow(clippy::too_many_arguments)]
pub fn measure(
    rt: &Runtime,
    variants: &[&Variant],
    controls: &[&Variant],
    opts: &Options,
    scratch: &mut Scratch,
    ctx: &ProbeContext,
    nonce: &str,
    on_cell: &mut dyn FnMut(&Cell),
) -> Measured {
    let adapter = rt.adapter();
    let timeouts = timeouts_for(adapter, opts);
    let style = adapter.path_style();
    let mut out = Measured::default();
    let mut next_id = 0u64;
    // stops measuring when interrupted or when the scratch folder stopped working
    let stop = |out: &Measured| crate::interrupt::requested() || out.scratch_failed.is_some();
    // after a harness error: is the scratch folder still usable?
    let check = |c: &Cell, out: &mut Measured, root: &Path| {
        if is_harness_error(c) && out.scratch_failed.is_none() {
            if let Err(why) = health::check(root) {
                out.scratch_failed = Some(why);
            }
        }
    };
    for family in &rt.families {
        if stop(&out) {
            break;
        }
        let fam: Vec<&Variant> = variants.iter().copied().filter(|v| v.family == *family).collect();
        if fam.is_empty() {
            continue;
        }
        let launch = adapter.launch(rt, family, ctx);
        let slots = vec![(adapter.mode(), launch, timeouts); opts.contenders.max(1)];
        let mut pools = Pools::new(slots, scratch.root().to_path_buf());
        if let (Amplify::On(_), Some(why)) = (&opts.amplify, adapter.no_amplification()) {
            pools.amplified_broke(why);
        }
        // start every session up front so that start-up never counts in a measurement
        let start_fault = pools.natural.iter_mut().find_map(|c| c.start().err());
        if stop(&out) {
            break;
        }
        let trials = if adapter.mode() == Mode::OneShot { opts.oneshot_trials } else { opts.trials };
        let control = controls.iter().copied().find(|c| c.family == *family);
        let mut control_cell = None;
        let mut detection = None;
        if let (true, Some(cv)) = (opts.race, control) {
            let base = CellBase { rt, v: cv };
            let c = match &start_fault {
                Some(f) => Some(base.fault_cell(Scenario::Race, "absent", f)),
                None => base.race(&mut pools, style, trials, opts, scratch, nonce, &mut next_id),
            };
            let Some(mut c) = c else { break };
            c.control = true;
            check(&c, &mut out, scratch.root());
            // a control the harness could not measure caught nothing: the family's races are weak
            let measured = c.verdict != Some(RaceVerdict::HarnessError);
            let counts = |m: &Option<ModeRun>| m.as_ref().filter(|_| measured).map(ModeRun::control_counts);
            let d = Detection::judge(&cv.id, counts(&c.natural), counts(&c.amplified));
            out.controls.push(ControlInfo {
                runtime: rt.label.clone(),
                family: family.to_string(),
                detection: d.clone(),
            });
            detection = Some(d);
            control_cell = Some(c);
        }
        let first = out.cells.len();
        for v in fam {
            if stop(&out) {
                break;
            }
            let base = CellBase { rt, v };
            if let Some(f) = &start_fault {
                if opts.second_comer {
                    for t in &opts.targets {
                        let c = base.fault_cell(Scenario::SecondComer, t.as_str(), f);
                        on_cell(&c);
                        out.cells.push(c);
                    }
                }
                if opts.race {
                    let c = match control_cell.take_if(|c| c.variant == v.id) {
                        Some(c) => c,
                        None => base.fault_cell(Scenario::Race, "absent", f),
                    };
                    on_cell(&c);
                    out.cells.push(c);
                }
                continue;
            }
            if opts.second_comer {
                for &t in &opts.targets {
                    if stop(&out) {
                        break;
                    }
                    let c =
                        second_comer_cell(&base, &mut pools.natural[0], t, opts, style, scratch, nonce, &mut next_id);
                    let Some(c) = c else { break };
                    check(&c, &mut out, scratch.root());
                    on_cell(&c);
                    out.cells.push(c);
                }
            }
            if opts.race && !stop(&out) {
                let c = match control_cell.take_if(|c| c.variant == v.id) {
                    Some(c) => Some(c),
                    None => base.race(&mut pools, style, trials, opts, scratch, nonce, &mut next_id),
                };
                if let Some(c) = c {
                    check(&c, &mut out, scratch.root());
                    on_cell(&c);
                    out.cells.push(c);
                }
            }
        }
        // a control that was not selected is still reported: it is the run's evidence
        if let Some(c) = control_cell.take() {
            on_cell(&c);
            out.cells.push(c);
        }
        for c in out.cells[first..].iter_mut().filter(|c| c.scenario == Scenario::Race) {
            if let Some(v) = c.verdict {
                let (v, weak) = apply_control(v, detection.as_ref());
                c.verdict = Some(v);
                c.weak_race = weak;
            }
            c.detection.clone_from(&detection);
        }
        pools.shutdown();
    }
    out
}

/// One contender pool per race mode: the natural pool (started up front) and the amplified
/// pool (the same launches under strace, started on first use).
pub struct Pools {
    slots: Vec<(Mode, Launch, Timeouts)>,
    cwd: std::path::PathBuf,
    /// The natural contenders, one per slot.
    pub natural: Vec<Contender>,
    amplified: Option<Result<Vec<Contender>, String>>,
}

impl Pools {
    /// Pools for `slots` (mode, launch and timeouts of each contender), run in `cwd`. Nothing
    /// starts until used.
    pub fn new(slots: Vec<(Mode, Launch, Timeouts)>, cwd: std::path::PathBuf) -> Pools {
        let natural = slots.iter().map(|(m, l, t)| Contender::new(*m, l.clone(), cwd.clone(), *t)).collect();
        Pools { slots, cwd, natural, amplified: None }
    }

    /// The amplified pool, started on first use. Errors: why there is none (amplification
    /// off or unavailable, or a probe that does not start or run under the tracer; then it is
    /// unavailable for the rest of this pool's life).
    fn amplified(&mut self, amp: &Amplify) -> Result<&mut [Contender], String> {
        let a = match amp {
            Amplify::On(a) => a,
            other => return Err(other.why_not().unwrap_or_default()),
        };
        if self.amplified.is_none() {
            let mut pool: Vec<Contender> =
                self.slots.iter().map(|(m, l, t)| Contender::new(*m, a.wrap(l), self.cwd.clone(), *t)).collect();
            let fault = pool.iter_mut().find_map(|c| c.start().err());
            self.amplified = Some(match fault {
                None => Ok(pool),
                Some(f) => Err(format!("the probe did not start under strace: {}", f.evidence.unwrap_or_default())),
            });
        }
        match self.amplified.as_mut().expect("set above") {
            Ok(p) => Ok(p.as_mut_slice()),
            Err(why) => Err(why.clone()),
        }
    }

    /// Marks the amplified pool unusable for the rest of its life, with the reason.
    pub fn amplified_broke(&mut self, why: String) {
        if let Some(Ok(p)) = &mut self.amplified {
            for c in p {
                c.shutdown();
            }
        }
        self.amplified = Some(Err(why));
    }

    /// Stops every probe.
    pub fn shutdown(&mut self) {
        for c in &mut self.natural {
            c.shutdown();
        }
        if let Some(Ok(p)) = &mut self.amplified {
            for c in p {
                c.shutdown();
            }
        }
    }
}

/// What the races of one cell produced in both modes, before it becomes a cell.
#[derive(Debug, Clone)]
pub struct RaceResult {
    /// The verdict (before the detection control is applied).
    pub verdict: RaceVerdict,
    /// The mode that decided it.
    pub decided_by: RaceMode,
    /// The natural run, if it ran.
    pub natural: Option<ModeRun>,
    /// The amplified run, if it ran.
    pub amplified: Option<ModeRun>,
    /// Why there is no amplified run.
    pub amplified_unavailable: Option<String>,
    /// The first failed call's error (natural run first).
    pub first_error: Option<ErrorInfo>,
    /// Why the race could not run at all (unsupported), or what went wrong.
    pub evidence: Option<String>,
    /// Wall time of both runs, in milliseconds.
    pub elapsed_ms: f64,
    /// True when the run was interrupted during these races (the trial in flight was dropped;
    /// the counted trials stand).
    pub interrupted: bool,
}

impl RaceResult {
    /// The run that decided the verdict.
    pub fn deciding(&self) -> Option<&ModeRun> {
        crate::report::model::deciding_run(self.decided_by, self.natural.as_ref(), self.amplified.as_ref())
    }

    /// True when an interrupt left nothing to report: no counted trial in any mode and no
    /// other finding (unsupported, harness error). Such a race is dropped, not stored.
    pub fn cut_short(&self) -> bool {
        let counted = [&self.natural, &self.amplified].iter().filter_map(|m| m.as_ref()).any(|m| m.stats.trials > 0);
        self.interrupted && !counted && !matches!(self.verdict, RaceVerdict::Unsupported | RaceVerdict::HarnessError)
    }
}

fn mode_run(r: RaceRun) -> ModeRun {
    let strongest = crate::verdict::strongest_ordering(r.summary.verdict, &r.orderings);
    ModeRun {
        found_at_offset_us: strongest.map(|i| r.orderings[i].offset_us),
        orderings: r
            .orderings
            .into_iter()
            .map(|o| OrderingRun { offset_us: o.offset_us, verdict: o.summary.verdict, stats: o.summary.stats })
            .collect(),
        verdict: r.summary.verdict,
        stats: r.summary.stats,
        errors: r.errors,
        discarded_trials: r.discarded_trials,
        loose_trials: r.loose_trials,
        trials_per_second: r.trials_per_second,
        evidence: r.evidence,
    }
}

/// Races `variants` (one per slot of `pools`) natural and amplified, as `opts` asks, and
/// decides the verdict. An amplified race that completes no trial (the runtime does not
/// survive the tracer) makes amplification unavailable for the rest of `pools`' life, with
/// the reason.
#[allow(clippy::too_many_arguments)]
pub fn race_modes(
    pools: &mut Pools,
    variants: &[&Variant],
    styles: &[PathStyle],
    trials: usize,
    opts: &Options,
    scratch: &mut Scratch,
    nonce: &str,
    next_id: &mut u64,
) -> RaceResult {
    let started = Instant::now();
    let budget = Budget { trials, max_rate: opts.max_rate, max_trials: opts.max_trials.max(trials) };
    let (tight, amplified_sweep) = match &opts.amplify {
        Amplify::On(a) => (
            Some(a.delay_us() as f64 * crate::exec::amplify::TIGHT_FRACTION),
            opts.offsets.clone().map_or_else(|| Sweep::amplified(a.delay_us()), Sweep::Fixed),
        ),
        _ => (None, Sweep::Fixed(vec![0])),
    };
    let (mut amplified, mut unavailable) = (None, None);
    if !crate::interrupt::requested() {
        match pools.amplified(&opts.amplify) {
            Ok(pool) => {
                let r =
                    race_core(pool, variants, styles, budget, &amplified_sweep, tight, opts, scratch, nonce, next_id);
                if r.summary.stats.trials == 0 && !r.unsupported && !r.interrupted && r.harness_error.is_none() {
                    let why = format!(
                        "no amplified trial completed: {}",
                        r.evidence.clone().unwrap_or_else(|| "no evidence".into())
                    );
                    pools.amplified_broke(why.clone());
                    unavailable = Some(why);
                } else {
                    amplified = Some(r);
                }
            }
            Err(why) => unavailable = Some(why),
        }
    }
    // natural also runs where amplification was asked for alone but this pool has none
    // (unavailable here, not run for this runtime, or broken under the tracer)
    let natural_wanted = (opts.natural || amplified.is_none())
        && !amplified.as_ref().is_some_and(|r: &RaceRun| r.harness_error.is_some() || r.interrupted);
    let natural_sweep = opts.offsets.clone().map_or(Sweep::NaturalAuto, Sweep::Fixed);
    let natural = (natural_wanted && !crate::interrupt::requested()).then(|| {
        race_core(&mut pools.natural, variants, styles, budget, &natural_sweep, None, opts, scratch, nonce, next_id)
    });
    let unsupported = natural.iter().chain(amplified.iter()).find(|r| r.unsupported);
    let broken = natural.iter().chain(amplified.iter()).find(|r| r.harness_error.is_some());
    let evidence = broken.or(unsupported).and_then(|r| r.evidence.clone());
    let is_unsupported = unsupported.is_some();
    let harness_error_in = match (&natural, &amplified) {
        (Some(n), _) if n.harness_error.is_some() => Some(RaceMode::Natural),
        (_, Some(a)) if a.harness_error.is_some() => Some(RaceMode::Amplified),
        _ => None,
    };
    let interrupted = natural.iter().chain(amplified.iter()).any(|r| r.interrupted);
    let first_error = natural
        .as_ref()
        .and_then(|r| r.first_error.clone())
        .or_else(|| amplified.as_ref().and_then(|r| r.first_error.clone()));
    let natural = natural.map(mode_run);
    let amplified = amplified.map(mode_run);
    let (verdict, decided_by) = if let Some(mode) = harness_error_in {
        (RaceVerdict::HarnessError, mode)
    } else if is_unsupported {
        (RaceVerdict::Unsupported, if amplified.is_some() { RaceMode::Amplified } else { RaceMode::Natural })
    } else {
        decide(natural.as_ref().map(|m| m.verdict), amplified.as_ref().map(|m| m.verdict))
    };
    RaceResult {
        verdict,
        decided_by,
        natural,
        amplified,
        amplified_unavailable: unavailable,
        first_error,
        evidence,
        elapsed_ms: ms(started.elapsed()),
        interrupted,
    }
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
    /// The race cell of this variant: every contender of `pools` makes its call. `None` when
    /// an interrupt left nothing to report ([`RaceResult::cut_short`]).
    #[allow(clippy::too_many_arguments)]
    fn race(
        &self,
        pools: &mut Pools,
        style: PathStyle,
        trials: usize,
        opts: &Options,
        scratch: &mut Scratch,
        nonce: &str,
        next_id: &mut u64,
    ) -> Option<Cell> {
        let vs = vec![self.v; pools.natural.len()];
        let styles = vec![style; vs.len()];
        let r = race_modes(pools, &vs, &styles, trials, opts, scratch, nonce, next_id);
        (!r.cut_short()).then(|| self.race_cell(r))
    }

    fn race_cell(&self, r: RaceResult) -> Cell {
        let mut c = self.cell(Scenario::Race, "absent");
        c.verdict = Some(r.verdict);
        c.decided_by = Some(r.decided_by);
        c.evidence = r.evidence.clone().or_else(|| r.deciding().and_then(|m| m.evidence.clone()));
        c.error = r.first_error;
        c.elapsed_ms = r.elapsed_ms;
        c.natural = r.natural;
        c.amplified = r.amplified;
        c.amplified_unavailable = r.amplified_unavailable;
        c
    }

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

/// One second-comer cell: the attempt with an absolute path and, if asked, again with a
/// relative one. `None` when the run was interrupted before both were made: a cell is never
/// built from an attempt cut short.
#[allow(clippy::too_many_arguments)]
fn second_comer_cell(
    base: &CellBase<'_>,
    c: &mut Contender,
    t: TargetState,
    opts: &Options,
    style: PathStyle,
    scratch: &mut Scratch,
    nonce: &str,
    next_id: &mut u64,
) -> Option<Cell> {
    let started = Instant::now();
    let v = base.v;
    let abs = second_comer(c, v, t, false, style, scratch, nonce, next_id)?;
    let rel = match opts.relative {
        true => {
            let r = second_comer(c, v, t, true, style, scratch, nonce, next_id)?;
            Some(RelativeAttempt { outcome: r.outcome, error: error_info(&r.attempt), evidence: r.attempt.evidence })
        }
        false => None,
    };
    let mut cell = base.cell(Scenario::SecondComer, t.as_str());
    cell.outcome = Some(abs.outcome);
    cell.error = error_info(&abs.attempt);
    cell.relative = rel;
    cell.before = Some(abs.before);
    cell.after = Some(abs.after);
    cell.evidence = abs.attempt.evidence;
    cell.elapsed_ms = ms(started.elapsed());
    Some(cell)
}

/// What one second-comer attempt produced.
struct SecondComer {
    outcome: Outcome,
    /// The target before and after, described.
    before: String,
    after: String,
    attempt: Attempt,
}

impl SecondComer {
    /// An attempt the harness could not make or judge: a `harness-error`, with the reason.
    fn harness_error(why: String) -> SecondComer {
        let attempt = Attempt::fault(Report::HarnessError, format!("harness-error: {why}"));
        SecondComer { outcome: Outcome::HarnessError, before: String::new(), after: String::new(), attempt }
    }
}

/// Makes an attempt whose call failed with a file-system failure ([`FS_FAILURE_CODES`]) a
/// harness error: a full, read-only or failing scratch file system says nothing about the call.
fn fs_failure_is_harness_error(a: &mut Attempt) {
    if let Some(e) = error_info(a).filter(|e| FS_FAILURE_CODES.contains(&e.code.as_str())) {
        a.report = Report::HarnessError;
        a.evidence = Some(format!(
            "harness-error: the call failed with {} ({}): the scratch file system failed, not the call",
            e.code, e.raw.message
        ));
    }
}

/// For a runtime that names paths the Win32 way through Wine ([`PathStyle::Wine`]): why it
/// cannot name one of the attempt's paths (target, source, mark), in their absolute form
/// (a relative attempt runs in the scratch folder, so its whole path counts), or `None`.
/// Wine would act on another name (a trailing dot stripped, a `\` made a folder), so such an
/// attempt is `unsupported`, never run (see [`win32_name_problem`]).
fn inexpressible(v: &Variant, style: PathStyle, dir: &Path, k: usize, token: &str) -> Option<Attempt> {
    if style != PathStyle::Wine {
        return None;
    }
    let target = dir.join("target");
    let mut paths = vec![target.clone()];
    if v.source != SourceKind::None {
        paths.push(dir.join(format!("src-{k}")));
    }
    if v.creates == Creates::Dir {
        paths.push(target.join(mark_name(token)));
    }
    paths.iter().find_map(|p| win32_name_problem(p)).map(|why| {
        Attempt::fault(Report::Unsupported, format!("cmd under Wine cannot name this path: {why}"))
    })
}

/// One second-comer attempt; `None` when the run was interrupted before or during it.
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
) -> Option<SecondComer> {
    if crate::interrupt::requested() {
        return None;
    }
    *next_id += 1;
    let id = *next_id;
    let first = format!("{nonce}-first-{id}");
    let token = format!("{nonce}-second-{id}");
    let (abs, rel) = match scratch.cell_dir() {
        Ok(d) => d,
        Err(e) => return Some(SecondComer::harness_error(format!("could not create a cell folder: {e}"))),
    };
    let target_abs = abs.join("target");
    let setup = set_up(&target_abs, state, &first).and_then(|()| make_source(&abs.join("src-1"), v.source, &token));
    if let Err(e) = setup {
        clear(&abs);
        return Some(SecondComer::harness_error(format!("could not set up {}: {e}", state.as_str())));
    }
    let for_probe = if relative { rel } else { abs.clone() };
    let source_dir = if v.creates == Creates::Symlink { &abs } else { &for_probe };
    let spec = spec_for(v, id, &for_probe, source_dir, style, 1, &token);
    let before = match snapshot::read(&target_abs) {
        Ok(b) => b,
        Err(e) => {
            clear(&abs);
            return Some(SecondComer::harness_error(format!("could not read the target before the attempt: {e}")));
        }
    };
    let mut a = match inexpressible(v, style, &abs, 1, &token) {
        Some(unsupported) => unsupported,
        None => attempt_one(c, &spec),
    };
    if a.report == Report::Interrupted {
        clear(&abs);
        return None;
    }
    fs_failure_is_harness_error(&mut a);
    let after = match snapshot::read(&target_abs) {
        Ok(x) => x,
        Err(e) => {
            clear(&abs);
            return Some(SecondComer::harness_error(format!("could not read the target after the attempt: {e}")));
        }
    };
    let outcome = classify_second(&before, a.report, &after, &token, spec.mark.is_some());
    let (b, af) = (before.describe(), after.describe());
    clear(&abs);
    Some(SecondComer { outcome, before: b, after: af, attempt: a })
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
    /// Why the harness failed during the race (set-up, snapshot, a file-system failure of the
    /// scratch folder): then the race's verdict is `harness-error` and no trial counts.
    pub harness_error: Option<String>,
    /// True when the run was interrupted during the race (the trial in flight was dropped).
    pub interrupted: bool,
    /// Completed trials per second of measured wall time.
    pub trials_per_second: Option<f64>,
    /// Trials run again because a contender failed before the release (its process did not
    /// start or did not get ready): such a trial says nothing about the call.
    pub discarded_trials: usize,
    /// Amplified races: trials run again because the contenders entered their calls further
    /// apart than the injected delay, so the race did not overlap them.
    pub loose_trials: usize,
    /// The trials summarised per release offset.
    pub orderings: Vec<crate::verdict::OrderingSummary>,
}

/// Uncounted trials at the start of every race: first calls pay JIT and lazy-loading costs,
/// and their release spread sets the automatic offset of natural sweeps.
const WARMUP_TRIALS: usize = 3;

/// Which release offsets a race runs (trials are spread over them in turn).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sweep {
    /// These offsets in µs (contender `i` released `i × offset` after contender 0).
    Fixed(Vec<u64>),
    /// 0 and the median release spread of the warm-up trials (rounded up to 10 µs): natural
    /// races, whose contenders are then about one release spread apart. Only 0 where the
    /// probes give no µs stamps (cmd).
    NaturalAuto,
}

impl Sweep {
    /// The default sweep of amplified races with delay `d` µs: `0, d/2, d, 2d`, so that a
    /// contender can lag another by about one delayed step (the orderings issue: lockstep
    /// alone hides failures of multi-step recipes).
    pub fn amplified(d: u64) -> Sweep {
        Sweep::Fixed(vec![0, d / 2, d, 2 * d])
    }

    /// The offsets to run, given the warm-up's release spreads (µs; sorted in place).
    fn offsets(&self, warmup_spreads: &mut [f64]) -> Vec<u64> {
        match self {
            Sweep::Fixed(v) if !v.is_empty() => v.clone(),
            Sweep::Fixed(_) => vec![0],
            Sweep::NaturalAuto => match crate::verdict::spread(warmup_spreads) {
                // no µs stamps (cmd): nothing to size an offset by, so released together only
                None => vec![0],
                Some(s) => vec![0, ((s.p50 / 10.0).ceil() as u64 * 10).max(10)],
            },
        }
    }
}

/// Waits until `t`: sleeps while more than 300 µs remain, then spins on the monotonic clock
/// (a sleep alone overshoots by tens to hundreds of microseconds).
fn wait_until(t: Instant) {
    loop {
        let now = Instant::now();
        if now >= t {
            return;
        }
        let left = t - now;
        if left > Duration::from_micros(300) {
            std::thread::sleep(left - Duration::from_micros(200));
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Amplified races stop after this many loose trials in a row (the release never got tight).
const MAX_LOOSE_IN_ROW: usize = 50;

/// Runs race trials as `budget` says (after [`WARMUP_TRIALS`] uncounted ones) among `pool`, contender `i`
/// making the call `variants[i]` with paths spelled in `styles[i]`. The target is absent at
/// the start of each trial; sources are prepared before the release. With `tight_us`, a trial
/// whose contenders entered their calls more than that many microseconds apart (by their
/// probes' stamps) is run again and counted as loose: amplified races count only trials in
/// which the injected delay covered the release skew.
#[allow(clippy::too_many_arguments)]
fn race_core(
    pool: &mut [Contender],
    variants: &[&Variant],
    styles: &[PathStyle],
    budget: Budget,
    sweep: &Sweep,
    tight_us: Option<f64>,
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
        harness_error: None,
        interrupted: false,
        trials_per_second: None,
        discarded_trials: 0,
        loose_trials: 0,
        orderings: Vec::new(),
    };
    let mut loose_in_row = 0;
    let (dir, _) = match scratch.cell_dir() {
        Ok(d) => d,
        Err(e) => {
            run.harness_error = Some(format!("could not create a cell folder: {e}"));
            return finish_race(run, k, &[], Duration::ZERO);
        }
    };
    let mut observed: Vec<Trial> = Vec::with_capacity(budget.trials);
    let (mut clean, mut multi) = (0usize, 0usize);
    let mut consecutive_faults = 0;
    let mut measured_time = Duration::ZERO;
    // the first WARMUP_TRIALS are a warm-up (first calls pay JIT and lazy-loading costs) and
    // measure the release spread for an automatic offset; they are not counted
    let mut t = 0;
    let mut discards_in_row = 0;
    let mut folder = 0;
    let mut warmup_spreads = Vec::new();
    let mut offsets: Vec<u64> = vec![0];
    // t counts finished trials including the warm-up
    while t < WARMUP_TRIALS || !budget.enough(observed.len(), clean, multi) {
        let offset_us = if t < WARMUP_TRIALS { 0 } else { offsets[observed.len() % offsets.len()] };
        folder += 1;
        if crate::interrupt::requested() {
            run.interrupted = true;
            break;
        }
        let t_start = Instant::now();
        *next_id += 1;
        let id = *next_id;
        let tdir = dir.join(format!("t{folder}"));
        if let Err(e) = std::fs::create_dir(&tdir) {
            run.harness_error = Some(format!("could not create a trial folder: {e}"));
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
            run.harness_error = Some(format!("could not prepare the sources: {e}"));
            clear(&tdir);
            break;
        }
        let mut attempts: Vec<Option<Attempt>> =
            (0..k).map(|i| inexpressible(variants[i], styles[i], &tdir, i, &tokens[i])).collect();
        for (i, c) in pool.iter_mut().enumerate() {
            if attempts[i].is_some() {
                continue;
            }
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
        if attempts.iter().flatten().any(|a| a.report == Report::Interrupted) {
            run.interrupted = true;
            clear(&tdir);
            break;
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
        // the release: every contender is blocked reading; write `go` to each in turn,
        // contender i at i × offset after contender 0
        let release_at = Instant::now();
        for (i, c) in pool.iter_mut().enumerate() {
            if attempts[i].is_none() {
                if offset_us > 0 {
                    wait_until(release_at + Duration::from_micros(i as u64 * offset_us));
                }
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
        let mut attempts: Vec<Attempt> = attempts.into_iter().map(|a| a.expect("every slot filled")).collect();
        if attempts.iter().any(|a| a.report == Report::Interrupted) {
            // the trial in flight when the stop came is dropped, never counted
            run.interrupted = true;
            clear(&tdir);
            break;
        }
        attempts.iter_mut().for_each(fs_failure_is_harness_error);
        if let Some(a) = attempts.iter().find(|a| a.report == Report::HarnessError) {
            run.harness_error = a.evidence.clone().map(|e| e.trim_start_matches("harness-error: ").to_string());
            clear(&tdir);
            break;
        }
        let after = match snapshot::read(&tdir.join("target")) {
            Ok(a) => a,
            Err(e) => {
                run.harness_error = Some(format!("could not read the target after a trial: {e}"));
                clear(&tdir);
                break;
            }
        };
        clear(&tdir);
        t += 1;
        let trial = Trial {
            reports: attempts.iter().map(|a| a.report).collect(),
            held: tokens.iter().map(|tok| after.holds(tok)).collect(),
            t0_us: attempts.iter().map(|a| a.t0_us).collect(),
            offset_us,
        };
        if t <= WARMUP_TRIALS {
            warmup_spreads.extend(trial.spread_us());
            if t == WARMUP_TRIALS {
                offsets = sweep.offsets(&mut warmup_spreads);
            }
            continue;
        }
        measured_time += t_start.elapsed();
        let faulty = trial.reports.iter().any(|r| matches!(r, Report::Timeout | Report::Crashed | Report::Prompted));
        if let (Some(max), Some(spread), false) = (tight_us, trial.spread_us(), faulty) {
            if spread > max {
                run.loose_trials += 1;
                loose_in_row += 1;
                if loose_in_row >= MAX_LOOSE_IN_ROW {
                    run.evidence = Some(format!(
                        "stopped: the contenders entered their calls more than {max:.1} µs apart (net of the planned offsets) in {loose_in_row} trials in a row (last {spread:.0} µs): raise --amplify-delay-us"
                    ));
                    break;
                }
                continue;
            }
        }
        // the next ordering only after a counted trial: a loose one is run again at its offset
        loose_in_row = 0;
        clean += usize::from(!faulty);
        multi += usize::from(trial.reports.iter().filter(|r| **r == Report::Success).count() >= 2);
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
    finish_race(run, k, &observed, measured_time)
}

/// Summarises the counted trials of `run`; a harness error makes the verdict `harness-error`
/// (its trials are still reported, but none of them decides anything).
fn finish_race(mut run: RaceRun, k: usize, observed: &[Trial], measured_time: Duration) -> RaceRun {
    run.summary = summarize_race(k, observed);
    run.orderings = crate::verdict::summarize_orderings(k, observed);
    if !observed.is_empty() && measured_time > Duration::ZERO {
        run.trials_per_second = Some(observed.len() as f64 / measured_time.as_secs_f64());
    }
    if let Some(why) = &run.harness_error {
        run.summary.verdict = RaceVerdict::HarnessError;
        run.evidence = Some(format!("harness-error: {why}"));
    } else if run.interrupted {
        let note = format!("interrupted after {} counted trials", observed.len());
        run.evidence = Some(match run.evidence.take() {
            Some(e) => format!("{note}; {e}"),
            None => note,
        });
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweeps_and_budgets() {
        assert_eq!(Sweep::amplified(1000).offsets(&mut []), vec![0, 500, 1000, 2000]);
        assert_eq!(Sweep::NaturalAuto.offsets(&mut [120.0, 95.0, 301.0]), vec![0, 120]);
        assert_eq!(Sweep::NaturalAuto.offsets(&mut []), vec![0], "no stamps, no offset");
        assert_eq!(Sweep::Fixed(vec![]).offsets(&mut []), vec![0]);
        let b = Budget { trials: 10, max_rate: Some(0.02), max_trials: 500 };
        assert!(!b.enough(9, 9, 1), "at least the trials asked for");
        assert!(b.enough(10, 10, 1), "a failure ends it");
        assert!(!b.enough(148, 148, 0) && b.enough(149, 149, 0), "1 - 0.05^(1/149) <= 2%");
        assert!(b.enough(500, 400, 0), "the cap");
        assert!(Budget { trials: 10, max_rate: None, max_trials: 10 }.enough(10, 0, 0));
    }
}

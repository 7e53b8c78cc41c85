//! The trial loop of a race: set-up of each trial's sources, the barrier (every contender
//! `ready`, then `go` to each at its release offset), warm-up, discards, loose amplified
//! trials, fault stops, harness errors and interrupts, and the summary of the counted trials.

use super::attempt::error_info;
use super::attempt::fs_failure_is_harness_error;
use super::attempt::inexpressible;
use super::attempt::spec_for;
use super::Budget;
use super::Measurement;
use crate::domain::TargetState;
use crate::exec::contender::Attempt;
use crate::exec::contender::Contender;
use crate::exec::contender::Spec;
use crate::exec::driver::Control;
use crate::exec::scratch::clear;
use crate::exec::scratch::make_source;
use crate::exec::scratch::set_up;
use crate::exec::scratch::set_up_cell;
use crate::exec::scratch::source_identity;
use crate::exec::scratch::source_name;
use crate::exec::scratch::spell;
use crate::exec::scratch::PathStyle;
use crate::exec::scratch::TARGET_NAME;
use crate::matrix::Creates;
use crate::matrix::SourceKind;
use crate::matrix::Variant;
use crate::report::model::ErrorInfo;
use crate::report::model::TrialCost;
use crate::snapshot;
use crate::snapshot::{Entry, Identity};
use crate::verdict::summarize_race;
use crate::verdict::RaceSummary;
use crate::verdict::RaceVerdict;
use crate::verdict::Report;
use crate::verdict::Trial;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use std::time::Instant;

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
    /// True when the race stopped after `MAX_LOOSE_IN_ROW` loose trials in a row: the
    /// delay never covered the release skew, so the trials it counted settle nothing.
    pub stopped_loose: bool,
    /// The trials summarised per release offset.
    pub orderings: Vec<crate::verdict::OrderingSummary>,
    /// Where the time of the released trials went (`None` when none was released).
    pub cost: Option<TrialCost>,
    /// What the contest search of a pair's race found ([`Sweep::Contested`]); `None` where none
    /// ran (not a pair, or the first call won a warm-up trial).
    pub contest: Option<Contest>,
}

/// The wall time of each step of one trial ([`TrialCost`] has their meaning), or their sums over
/// several trials.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Steps {
    set_up: Duration,
    prepare: Duration,
    release: Duration,
    calls: Duration,
    read: Duration,
    clean_up: Duration,
    trials: usize,
}

impl Steps {
    /// Adds one trial's steps.
    fn add(&mut self, t: &Steps) {
        self.set_up += t.set_up;
        self.prepare += t.prepare;
        self.release += t.release;
        self.calls += t.calls;
        self.read += t.read;
        self.clean_up += t.clean_up;
        self.trials += 1;
    }

    /// The mean of each step in µs; `None` over no trial.
    fn mean(&self) -> Option<TrialCost> {
        let n = self.trials;
        let us = |d: Duration| d.as_secs_f64() * 1e6 / n as f64;
        (n > 0).then(|| TrialCost {
            trials: n,
            set_up_us: us(self.set_up),
            prepare_us: us(self.prepare),
            release_us: us(self.release),
            calls_us: us(self.calls),
            read_us: us(self.read),
            clean_up_us: us(self.clean_up),
        })
    }
}

/// Uncounted trials at the start of a race with fixed offsets (amplified races, natural races
/// with `--offsets`), or of one whose probes give no µs stamps (cmd): first calls pay JIT and
/// lazy-loading costs.
const WARMUP_TRIALS: usize = 3;

/// Uncounted trials at the start of a natural race with an automatic offset
/// ([`Sweep::NaturalAuto`]) whose probes give µs stamps: the release spread of those after the
/// first [`COLD_TRIALS`] sets the offset. The first trials' spreads are not the race's: a
/// contender's first call of a variant pays its first-call costs (a PowerShell cmdlet's
/// binding, a method's JIT), and those spreads were 2 to 12 times the later ones (CHANGELOG),
/// which made the second ordering lag by several release spreads instead of one.
pub(super) const NATURAL_AUTO_WARMUP_TRIALS: usize = 5;

/// The warm-up trials whose release spread does not size the automatic offset.
const COLD_TRIALS: usize = 2;

/// Which release offsets a race runs (trials are spread over them in turn).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sweep {
    /// These offsets in µs (contender `i` released `i × offset` after contender 0).
    Fixed(Vec<u64>),
    /// 0 and the median release spread of the warm-up trials after the cold ones (5 warm-up
    /// trials, the first 2 left out; rounded up to 10 µs): natural races, whose contenders are
    /// then about one release spread apart. Only 0 where the probes give no µs stamps (cmd).
    NaturalAuto,
    /// The sweep inside, for a race of two calls in [`crate::against::PAIR_SLOTS`] (first,
    /// second, first again), which also searches for an ordering at which the first call wins:
    /// where the second call won every warm-up trial that had a winner, uncounted trials at
    /// offsets from [`CONTEST_FIRST_US`] doubling up to [`CONTEST_MAX_US`], [`CONTEST_TRIALS`]
    /// at each, until the first call wins one, then halving the interval where it starts to
    /// win ([`CONTEST_HALVINGS`]); that offset joins the orderings ([`RaceRun::contest`]). A
    /// pair one call always wins tells nothing of the window between the other's check and its
    /// act.
    Contested(Box<Sweep>),
}

/// The first offset a contest search tries, µs.
pub const CONTEST_FIRST_US: u64 = 250;
/// The largest offset a contest search tries, µs: PowerShell's cmdlets and cmd's commands
/// under Wine reach their system call milliseconds after their release.
pub const CONTEST_MAX_US: u64 = 64_000;
/// Uncounted trials at each offset of a contest search.
pub const CONTEST_TRIALS: usize = 3;
/// How many times a contest search halves the interval in which the first call starts to win.
pub const CONTEST_HALVINGS: usize = 3;

pub use crate::domain::Contest;

impl Sweep {
    /// The default sweep of amplified races with delay `d` µs: `0, d/2, d, 2d`, so that a
    /// contender can lag another by about one delayed step (the orderings issue: lockstep
    /// alone hides failures of multi-step recipes).
    pub fn amplified(d: u64) -> Sweep {
        Sweep::Fixed(vec![0, d / 2, d, 2 * d])
    }

    /// How many uncounted trials a race with this sweep starts with.
    fn warmup_trials(&self) -> usize {
        match self {
            Sweep::NaturalAuto => NATURAL_AUTO_WARMUP_TRIALS,
            Sweep::Fixed(_) => WARMUP_TRIALS,
            Sweep::Contested(inner) => inner.warmup_trials(),
        }
    }

    /// The offsets known before any trial (µs): a fixed sweep's, else 0 alone (an automatic
    /// offset is sized by the warm-up, a contest search's found by trials).
    pub fn planned(&self) -> Vec<u64> {
        match self {
            Sweep::Fixed(v) if !v.is_empty() => v.clone(),
            Sweep::Fixed(_) | Sweep::NaturalAuto => vec![0],
            Sweep::Contested(inner) => inner.planned(),
        }
    }

    /// This sweep, searching for an ordering at which the first of a pair's calls wins too
    /// ([`Sweep::Contested`]).
    pub fn contested(self) -> Sweep {
        match self {
            c @ Sweep::Contested(_) => c,
            other => Sweep::Contested(Box::new(other)),
        }
    }

    /// The offsets to run, given each warm-up trial's release spread in order (µs; `None`
    /// where the probes gave no µs stamps). An automatic offset is sized by the trials after
    /// the first [`COLD_TRIALS`], or by the cold ones where none of those has stamps (a
    /// contender's fault).
    fn offsets(&self, warmup_spreads: &[Option<f64>]) -> Vec<u64> {
        let stamped = |skip: usize| warmup_spreads.iter().skip(skip).flatten().copied().collect::<Vec<f64>>();
        let warm = || match stamped(COLD_TRIALS) {
            none if none.is_empty() => stamped(0),
            warm => warm,
        };
        match self {
            Sweep::Contested(inner) => inner.offsets(warmup_spreads),
            Sweep::Fixed(v) if !v.is_empty() => v.clone(),
            Sweep::Fixed(_) => vec![0],
            Sweep::NaturalAuto => match crate::verdict::spread(&mut warm()) {
                // no µs stamps (cmd): nothing to size an offset by, so released together only
                None => vec![0],
                Some(s) => vec![0, ((s.p50 / 10.0).ceil() as u64 * 10).max(10)],
            },
        }
    }
}

/// A pair's contest search in progress ([`Sweep::Contested`]): the release offset being tried,
/// the uncounted trials left at it, the largest offset at which the second call won every
/// trial, the smallest at which the first call won one (once found), and the halvings left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ContestSearch {
    offset_us: u64,
    left: usize,
    low_us: u64,
    high_us: Option<u64>,
    halvings: usize,
}

impl ContestSearch {
    /// The search after warm-up trials (released together) whose winning sides
    /// (`[first, second]`) were `warm`: from [`CONTEST_FIRST_US`]; `None` where the first call
    /// won one of them, or none had a winner.
    fn start(warm: &[[bool; 2]]) -> Option<ContestSearch> {
        let one_sided = warm.iter().any(|w| w[1]) && !warm.iter().any(|w| w[0]);
        one_sided.then_some(ContestSearch {
            offset_us: CONTEST_FIRST_US,
            left: CONTEST_TRIALS,
            low_us: 0,
            high_us: None,
            halvings: CONTEST_HALVINGS,
        })
    }

    /// The search after one more trial, whose winning sides were `won`: going on (`Ok`), or how
    /// it ended (`Err`). An offset is settled by the first call's win, or by [`CONTEST_TRIALS`]
    /// trials without one. Until the first call wins, the offset doubles (up to
    /// [`CONTEST_MAX_US`], then not found); after, the interval between the largest offset the
    /// second call won alone and the smallest the first call won at is halved
    /// [`CONTEST_HALVINGS`] times, and the search ends at its upper end: about where the first
    /// call starts to win, so that both calls win some trials there.
    fn after(self, won: [bool; 2]) -> Result<ContestSearch, Contest> {
        if !won[0] && self.left > 1 {
            return Ok(ContestSearch { left: self.left - 1, ..self });
        }
        let (low, high) = if won[0] { (self.low_us, Some(self.offset_us)) } else { (self.offset_us, self.high_us) };
        let next = |offset_us, low_us, high_us, halvings| ContestSearch {
            offset_us,
            left: CONTEST_TRIALS,
            low_us,
            high_us,
            halvings,
        };
        match high {
            None if self.offset_us * 2 <= CONTEST_MAX_US => Ok(next(self.offset_us * 2, low, None, self.halvings)),
            None => Err(Contest::NotFoundUpTo(self.offset_us)),
            Some(h) if self.halvings == 0 || h.saturating_sub(low) <= 20 => Err(Contest::FoundAt(h)),
            Some(h) => Ok(next((low + h) / 20 * 10, low, Some(h), self.halvings - 1)),
        }
    }
}

/// Which sides of a pair ([`crate::against::PAIR_SLOTS`]) reported success in a trial whose
/// contenders reported `reports` (`[first, second]`).
fn sides_won(reports: &[Report]) -> [bool; 2] {
    let wins: Vec<usize> = reports.iter().map(|r| usize::from(*r == Report::Success)).collect();
    crate::against::per_side(&wins).map_or([false, false], |[first, second]| [first > 0, second > 0])
}

/// Waits until `t`: sleeps while more than 300 µs remain, then spins on the monotonic clock
/// (a sleep alone overshoots by tens to hundreds of microseconds).
pub(super) fn wait_until(t: Instant) {
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
pub(super) const MAX_LOOSE_IN_ROW: usize = 50;

/// Runs race trials as `budget` says (after the sweep's uncounted warm-up trials) among `pool`, contender `i`
/// making the call `variants[i]` with paths spelled in `styles[i]`. The target is absent at
/// the start of each trial; sources are prepared before the release. With `tight_us`, a trial
/// whose contenders entered their calls more than that many microseconds apart (by their
/// probes' stamps) is run again and counted as loose: amplified races count only trials in
/// which the injected delay covered the release skew.
pub(super) fn race_core(
    pool: &mut [Contender],
    variants: &[&Variant],
    styles: &[PathStyle],
    budget: Budget,
    sweep: &Sweep,
    tight_us: Option<f64>,
    m: &mut Measurement<'_>,
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
        stopped_loose: false,
        orderings: Vec::new(),
        cost: None,
        contest: None,
    };
    let mut steps = Steps::default();
    let mut loose_in_row = 0;
    let arena = m.scratch.race_dir();
    // where a trial's folder goes once the trial ended, to be removed during the next one's
    // prepare round trip (Linux: every trial runs in the same folder, see fresh_arena)
    let trash =
        cfg!(target_os = "linux").then(|| arena.with_file_name(format!("{}-done", crate::exec::scratch::RACE_DIR)));
    let mut observed: Vec<Trial> = Vec::with_capacity(budget.trials);
    let (mut clean, mut multi) = (0usize, 0usize);
    let mut consecutive_faults = 0;
    let mut measured_time = Duration::ZERO;
    // the first `warmup` trials are a warm-up (first calls pay JIT and lazy-loading costs) and
    // measure the release spread for an automatic offset; they are not counted
    let mut warmup = sweep.warmup_trials();
    let mut t = 0;
    let mut discards_in_row = 0;
    let mut folder = 0;
    let mut warmup_spreads = Vec::new();
    let mut offsets: Vec<u64> = vec![0];
    // a pair's contest search (Sweep::Contested): the sides that won each warm-up trial, then
    // the search in progress (ContestSearch)
    let contested = matches!(sweep, Sweep::Contested(_)) && k == crate::against::PAIR_SLOTS.len();
    let mut warmup_sides: Vec<[bool; 2]> = Vec::new();
    let mut search: Option<ContestSearch> = None;
    // a control's ordering blocks (Budget::control_blocks): the block running, its counted
    // trials, and whether a block passed (the run stops there)
    let (mut block, mut in_block, mut passed) = (0usize, 0usize, false);
    // t counts finished trials including the warm-up
    while t < warmup || !(budget.enough(observed.len(), clean, multi, offsets.len()) || passed) {
        let offset_us = match (t < warmup, budget.control_blocks) {
            (true, _) => search.map_or(0, |c| c.offset_us),
            (false, Some(_)) => offsets[block.min(offsets.len() - 1)],
            (false, None) => offsets[observed.len() % offsets.len()],
        };
        folder += 1;
        if crate::interrupt::requested() {
            run.interrupted = true;
            break;
        }
        let t_start = Instant::now();
        let id = m.next_id();
        let tdir = match fresh_arena(&arena, id) {
            Ok(d) => d,
            Err(e) => {
                run.harness_error = Some(format!("could not create the race folder {}: {e}", arena.display()));
                break;
            }
        };
        let slots: Vec<Slot<'_>> = (0..k)
            .map(|i| Slot {
                variant: variants[i],
                style: styles[i],
                index: i,
                token: format!("{}-t{folder}-k{i}", m.nonce),
                recipe: None,
            })
            .collect();
        let setup = TrialSetup {
            dir: &tdir,
            probe_dir: &tdir,
            first: (TargetState::Absent, ""),
            slots: &slots,
            plan: TrialPlan::release(k, offset_us),
            hold_ms: m.opts.hold_ms,
            snapshot_before: false,
            trash: trash.as_deref(),
            second_client: m.opts.second_client.as_ref(),
            during: None,
        };
        let end = run_trial(pool, &setup, id);
        let clean_up = Instant::now();
        set_aside(&tdir, trash.as_deref());
        if let TrialEnd::Released { steps: trial, .. } = &end {
            steps.add(&Steps { clean_up: clean_up.elapsed(), ..*trial });
        }
        let (attempts, after, sources) = match end {
            TrialEnd::Interrupted => {
                run.interrupted = true;
                break;
            }
            TrialEnd::HarnessError(why) => {
                run.harness_error = Some(why);
                break;
            }
            TrialEnd::NotReleased { fault, .. } if fault.report == Report::Unsupported => {
                run.unsupported = true;
                run.evidence = fault.evidence;
                break;
            }
            TrialEnd::NotReleased { fault, .. } => {
                // a contender failed before the release: discard the trial and run it again
                run.discarded_trials += 1;
                discards_in_row += 1;
                if discards_in_row >= m.opts.max_consecutive_faults {
                    let why = fault.evidence.unwrap_or_default();
                    run.evidence = Some(format!(
                        "stopped: a contender failed before the release {discards_in_row} times in a row; {why}"
                    ));
                    break;
                }
                continue;
            }
            TrialEnd::Released { attempts, after, sources, .. } => (attempts, after, sources),
        };
        discards_in_row = 0;
        if let Some(why) = attempts.iter().find_map(Attempt::harness_why) {
            run.harness_error = Some(why.to_string());
            break;
        }
        let tokens: Vec<&str> = slots.iter().map(|s| s.token.as_str()).collect();
        t += 1;
        let trial = Trial {
            reports: attempts.iter().map(|a| a.report).collect(),
            held: crate::verdict::held_by(&after, &tokens, &sources),
            placed: crate::verdict::placed_by(&after, &sources),
            t0_us: attempts.iter().map(|a| a.t0_us).collect(),
            offset_us,
            unstamped: attempts.iter().find_map(|a| a.unstamped.clone()),
            held_during_us: attempts
                .iter()
                .zip(variants)
                .map(|(a, v)| v.holds.then_some(a.t1_us).flatten().map(|t1| (t1, t1 + m.opts.hold_ms as f64 * 1000.0)))
                .collect(),
        };
        // adaptive trials: a prompted contender fixes the verdict (`inconclusive`), warm or
        // not, so a prompted warm-up trial is counted and ends the run below (each prompt
        // costs the cmd loops a restart)
        let prompted_early = budget.disproof_per_ordering.is_some() && trial.reports.contains(&Report::Prompted);
        if t <= warmup && !prompted_early {
            let won = sides_won(&trial.reports);
            if let Some(c) = search {
                search = match c.after(won) {
                    Ok(next) => Some(next),
                    Err(found) => {
                        if let Contest::FoundAt(o) = found {
                            // an ordering at which both calls meet
                            if !offsets.contains(&o) {
                                offsets.push(o);
                            }
                        }
                        run.contest = Some(found);
                        None
                    }
                };
                // one more uncounted trial while the search goes on
                warmup = if search.is_some() { t + 1 } else { t };
                continue;
            }
            warmup_sides.push(won);
            let spread = trial.spread_us();
            if t == 1 && spread.is_none() {
                // no µs stamps (cmd): no offset to size, so the short warm-up of fixed sweeps
                warmup = warmup.min(WARMUP_TRIALS);
            }
            warmup_spreads.push(spread);
            if t == warmup {
                offsets = sweep.offsets(&warmup_spreads);
                // judged on the warm-up after the cold trials (a runtime's first calls pay its
                // JIT and lazy loading, and lose races they would win warm)
                let warm = &warmup_sides[COLD_TRIALS.min(warmup_sides.len().saturating_sub(1))..];
                search = ContestSearch::start(warm).filter(|_| contested);
                if search.is_some() {
                    warmup = t + 1;
                }
            }
            continue;
        }
        measured_time += t_start.elapsed();
        let faulty = trial.reports.iter().any(|r| matches!(r, Report::Timeout | Report::Crashed | Report::Prompted));
        if let (Some(max), Some(spread), false) = (tight_us, trial.spread_us(), faulty) {
            if spread > max {
                run.loose_trials += 1;
                loose_in_row += 1;
                if loose_in_row >= MAX_LOOSE_IN_ROW && budget.control_blocks.is_some() && block + 1 < offsets.len() {
                    // a control is judged on its best ordering: one that never gets tight (pwsh's
                    // third contender waits for a core when all are released together) gives
                    // way to the next, instead of raising the family's delay
                    run.evidence.get_or_insert_with(|| {
                        format!(
                            "the ordering at +{offset_us} µs stayed loose ({loose_in_row} trials in a row further apart than {max:.1} µs): the next ordering ran instead"
                        )
                    });
                    (block, in_block, loose_in_row) = (block + 1, 0, 0);
                    continue;
                }
                if loose_in_row >= MAX_LOOSE_IN_ROW {
                    run.evidence = Some(format!(
                        "stopped: the contenders entered their calls more than {max:.1} µs apart (net of the planned offsets) in {loose_in_row} trials in a row (last {spread:.0} µs): raise --amplify-delay-us"
                    ));
                    run.stopped_loose = true;
                    break;
                }
                continue;
            }
        }
        // the next ordering only after a counted trial: a loose one is run again at its offset
        loose_in_row = 0;
        clean += usize::from(!faulty);
        multi += usize::from(trial.concurrent_winners() >= 2);
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
        // a prompted contender makes the verdict `inconclusive` whatever follows (it could not
        // run unattended): adaptive trials stop there
        let prompted = trial.reports.contains(&Report::Prompted);
        observed.push(trial);
        if let Some(b) = budget.control_blocks {
            in_block += 1;
            if in_block >= b.per.max(1) {
                passed = ordering_passed(&observed, b.mode);
                (block, in_block) = (block + 1, 0);
            }
        }
        if prompted && budget.disproof_per_ordering.is_some() {
            run.evidence.get_or_insert_with(|| "a contender was prompted".into());
            break;
        }
        consecutive_faults = if faulty { consecutive_faults + 1 } else { 0 };
        if consecutive_faults >= m.opts.max_consecutive_faults {
            let note = format!("stopped after {consecutive_faults} consecutive faulty trials");
            run.evidence = Some(match run.evidence.take() {
                Some(e) => format!("{note}; {e}"),
                None => note,
            });
            break;
        }
    }
    clear(&arena);
    if let Some(t) = &trash {
        clear(t);
    }
    run.cost = steps.mean();
    finish_race(run, k, &observed, measured_time)
}

/// Ends a trial's folder `dir`: renamed to `trash` (one system call; the next trial removes it
/// while its contenders prepare, [`TrialSetup::trash`]), or removed where there is no `trash`
/// or the rename fails (the trash of the trial before is still there: its removal failed).
fn set_aside(dir: &Path, trash: Option<&Path>) {
    if trash.is_none_or(|t| std::fs::rename(dir, t).is_err()) {
        clear(dir);
    }
}

/// Makes the folder of trial `id` of a race. On Linux it is `arena`
/// ([`crate::exec::scratch::RACE_DIR`]), made anew: every trial of every race runs at the same
/// paths, so that a tracer started once per pool can delay the calls that name them
/// ([`crate::exec::amplify::DelayScope::Race`]); each trial's folder is removed after it, and one
/// still there (a probe wrote after the removal) is removed again, twice at most, or the race
/// stops with the OS error. Elsewhere (nothing is amplified; a probe's open handle can keep a
/// folder from going on Windows) each trial gets a folder of its own beside it, `race-<id>`.
/// Returns the trial's folder. Errors: the OS error.
fn fresh_arena(arena: &Path, id: u64) -> std::io::Result<PathBuf> {
    if !cfg!(target_os = "linux") {
        let own = arena.with_file_name(format!("{}-{id}", crate::exec::scratch::RACE_DIR));
        return std::fs::create_dir(&own).map(|()| own);
    }
    let mut tries = 0;
    loop {
        match std::fs::create_dir(arena) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && tries < 2 => {
                tries += 1;
                let _ = std::fs::remove_dir_all(arena);
            }
            r => return r.map(|()| arena.to_path_buf()),
        }
    }
}

/// True when the control rule of `mode` accepts the multi-winner count of every trial so far
/// at the release offset of the last one (the ordering whose block just ended; see
/// [`Budget::control_blocks`]): the ordering is judged on all its trials, as the control is
/// afterwards ([`crate::report::model::ModeRun::control_counts`]), also where an ordering gets
/// more than one block (the last of the sweep, or a sweep of one).
fn ordering_passed(observed: &[Trial], mode: crate::verdict::RaceMode) -> bool {
    let Some(offset) = observed.last().map(|t| t.offset_us) else { return false };
    let ordering = observed.iter().filter(|t| t.offset_us == offset);
    let (caught, trials) = ordering.fold((0, 0), |(c, t), x| (c + usize::from(x.concurrent_winners() >= 2), t + 1));
    crate::verdict::control::caught_enough(caught, trials, mode)
}

/// One contender's part in a trial.
pub(super) struct Slot<'a> {
    /// Its call.
    pub variant: &'a Variant,
    /// How its runtime spells paths.
    pub style: PathStyle,
    /// Its number in the trial folder: its source is `src-{index}`.
    pub index: usize,
    /// Its token (written into what it creates; whose token the target holds names the winner).
    pub token: String,
    /// Protocol 2: the recipe it runs instead of the variant's call (the variant then only
    /// names its runtime's family and the paths it needs).
    pub recipe: Option<crate::exec::contender::RecipeSpec>,
}

/// Where and how one trial runs: the unit of every scenario (a second comer is a trial of one
/// slot against a target a first comer set up; a race, of K slots on an absent target).
pub(super) struct TrialSetup<'a> {
    /// The trial's folder, absolute, created by the caller (who also clears it); the target is
    /// `dir/target`.
    pub dir: &'a Path,
    /// The same folder as the probes are given it (absolute, or relative to their working
    /// folder). Symbolic-link sources are always given absolute (a link's text resolves
    /// against the link's folder).
    pub probe_dir: &'a Path,
    /// What the first comer puts at the target before any contender starts, and its token.
    pub first: (TargetState, &'a str),
    /// The contenders, slot `i` on `pool[i]`.
    pub slots: &'a [Slot<'a>],
    /// The timed steps once every contender is ready.
    pub plan: TrialPlan,
    /// Handle hold time (ms) for variants that hold a handle.
    pub hold_ms: u64,
    /// Read the target before the release too (second comers describe it).
    pub snapshot_before: bool,
    /// A folder left by an earlier trial, removed while the contenders answer `prepare` (the
    /// harness would otherwise wait for the round trip idle).
    pub trash: Option<&'a Path>,
    /// Races on a file system with two clients ([`crate::options::Options::second_client`]):
    /// the odd slots get their paths through the second client ([`client_view`]).
    pub second_client: Option<&'a (PathBuf, PathBuf)>,
    /// What the harness does itself once the calls and one-pass recipes have ended, while the
    /// loop recipes still run, given the pool (the OS-lock scenario goes at a holder's files
    /// while it holds them; the watch scenario pauses a consumer and drops a burst of files on
    /// it).
    pub during: Option<During<'a>>,
}

/// What the harness does itself during a trial, given the pool ([`TrialSetup::during`]).
pub(super) type During<'a> = &'a dyn Fn(&mut [Contender]);

/// How a trial ended.
pub(super) enum TrialEnd {
    /// Every contender was released: its attempt (file-system failures of the call already made
    /// harness errors), the target before (when asked) and after, and per slot the identity of
    /// its directory source as it stood before the release (`None` for other sources).
    Released {
        attempts: Vec<Attempt>,
        before: Option<Entry>,
        after: Entry,
        sources: Vec<Option<Identity>>,
        /// The time of each step (its clean-up is the caller's, so 0 here).
        steps: Steps,
    },
    /// A contender failed before the release (an `unsupported` one first, else the first
    /// fault); the contenders that were ready were released and finished so that session
    /// probes stay in step, but their calls are not observed.
    NotReleased { fault: Box<Attempt>, before: Option<Entry>, after: Entry },
    /// The run was interrupted during the trial: nothing of it counts.
    Interrupted,
    /// The harness could not set up or read the target: why.
    HarnessError(String),
}

/// Runs one trial on `pool` as `s` says, with attempt id `id`: the first comer's state and each
/// slot's source put in place, the target read (if asked), every contender `begin` and
/// `ready`, the plan's timed steps, every contender's result, and the target read again.
/// The folder `probe_dir` as slot `index` sees it on a file system with two clients
/// (`second_client`: the first client's root, the second's): through the second client for
/// the odd slots, `None` (the first client's path) for the even ones, for a path outside the
/// first client's root, and where there is no second client.
pub fn client_view(probe_dir: &Path, index: usize, second_client: Option<&(PathBuf, PathBuf)>) -> Option<PathBuf> {
    let (first, second) = second_client?;
    if index.is_multiple_of(2) {
        return None;
    }
    probe_dir.strip_prefix(first).ok().map(|rest| second.join(rest))
}

pub(super) fn run_trial(pool: &mut [Contender], s: &TrialSetup<'_>, id: u64) -> TrialEnd {
    let mut steps = Steps::default();
    let mut step = Instant::now();
    // ends a step: its time since the last one ended
    let mut lap = || std::mem::replace(&mut step, Instant::now()).elapsed();
    let target = s.dir.join(TARGET_NAME);
    let (state, first_token) = s.first;
    if state.is_self() {
        // the target is the one second comer's own source (slot 1): one file, two names
        let set = match s.slots {
            [slot] if slot.index == 1 => set_up_cell(s.dir, state, first_token, &slot.token, slot.variant.source),
            _ => Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "it takes one second comer (slot 1)")),
        };
        if let Err(e) = set {
            return TrialEnd::HarnessError(format!("could not set up {}: {e}", state.as_str()));
        }
    } else {
        if let Err(e) = set_up(&target, state, first_token) {
            return TrialEnd::HarnessError(format!("could not set up {}: {e}", state.as_str()));
        }
        for slot in s.slots {
            let src = s.dir.join(source_name(state, slot.index));
            if let Err(e) = make_source(&src, slot.variant.source, &slot.token) {
                return TrialEnd::HarnessError(format!("could not prepare the sources: {e}"));
            }
        }
    }
    // a directory source's identity, read from the disk before anyone is released: a moved
    // empty directory carries no token, so only its identity names its owner afterwards
    let mut sources = Vec::with_capacity(s.slots.len());
    for slot in s.slots {
        let src = s.dir.join(source_name(state, slot.index));
        match source_identity(&src, if state.is_self() { SourceKind::None } else { slot.variant.source }) {
            Ok(id) => sources.push(id),
            Err(e) => return TrialEnd::HarnessError(format!("could not read the sources: {e}")),
        }
    }
    let specs: Vec<Spec> = s
        .slots
        .iter()
        .enumerate()
        .map(|(i, slot)| {
            let v = slot.variant;
            let through = client_view(s.probe_dir, slot.index, s.second_client);
            let probe_dir = through.as_deref().unwrap_or(s.probe_dir);
            let source_dir = if v.creates == Creates::Symlink { s.dir } else { probe_dir };
            let mut spec = spec_for(v, id, probe_dir, source_dir, slot.style, slot.index, &slot.token);
            if state == TargetState::SelfSame && spec.source.is_some() {
                // the source is the target itself: the same path, spelled the same way
                spec.source = Some(spell(&source_dir.join(source_name(state, slot.index)), slot.style));
            }
            if v.holds {
                spec.hold_ms = s.hold_ms;
            }
            spec.recipe.clone_from(&slot.recipe);
            spec.delay_us = s.plan.release_at(i);
            spec
        })
        .collect();
    let read = |when: &str| snapshot::read(&target).map_err(|e| format!("could not read the target {when}: {e}"));
    let before = match s.snapshot_before.then(|| read("before the attempt")).transpose() {
        Ok(b) => b,
        Err(why) => return TrialEnd::HarnessError(why),
    };
    steps.set_up = lap();
    // loop recipes (readers, consumers) run until they are stopped
    let loops: Vec<bool> = s.slots.iter().map(|sl| sl.recipe.as_ref().is_some_and(|r| r.until_stopped)).collect();
    let mut attempts: Vec<Option<Attempt>> =
        s.slots.iter().map(|slot| inexpressible(slot.variant, slot.style, s.dir, slot.index, &slot.token)).collect();
    for (i, c) in pool.iter_mut().enumerate() {
        if attempts[i].is_none() {
            attempts[i] = c.begin(&specs[i]).err();
        }
    }
    if let Some(trash) = s.trash {
        clear(trash);
    }
    for (i, c) in pool.iter_mut().enumerate() {
        if attempts[i].is_none() {
            attempts[i] = c.ready().err();
        }
    }
    steps.prepare = lap();
    if attempts.iter().flatten().any(|a| a.report == Report::Interrupted) {
        return TrialEnd::Interrupted;
    }
    let unsupported = attempts.iter().flatten().find(|a| a.report == Report::Unsupported);
    if let Some(fault) = unsupported.or_else(|| attempts.iter().flatten().next()).cloned() {
        run_ready_ones(pool, &attempts, &loops);
        return match read("after the attempt") {
            Ok(after) => TrialEnd::NotReleased { fault: Box::new(fault), before, after },
            Err(why) => TrialEnd::HarnessError(why),
        };
    }
    s.plan.run(pool, &mut attempts);
    steps.release = lap();
    // the calls and one-pass recipes first; then the loop recipes (readers) are stopped, so that
    // they watch for as long as anything else runs
    for (i, c) in pool.iter_mut().enumerate() {
        if attempts[i].is_none() && !loops[i] {
            attempts[i] = Some(c.finish());
        }
    }
    if let Some(during) = s.during {
        during(pool);
    }
    for (i, c) in pool.iter_mut().enumerate() {
        if attempts[i].is_none() {
            attempts[i] = c.stop().err();
        }
    }
    let mut attempts: Vec<Attempt> = pool
        .iter_mut()
        .zip(attempts)
        .map(|(c, a)| match a {
            Some(a) => a,
            None => c.finish(),
        })
        .collect();
    if attempts.iter().any(|a| a.report == Report::Interrupted) {
        // the trial in flight when the stop came is dropped, never counted
        return TrialEnd::Interrupted;
    }
    steps.calls = lap();
    attempts.iter_mut().for_each(fs_failure_is_harness_error);
    let after = read("after the attempt");
    steps.read = lap();
    match after {
        Ok(after) => TrialEnd::Released { attempts, before, after, sources, steps },
        Err(why) => TrialEnd::HarnessError(why),
    }
}

/// Summarises the counted trials of `run`; a harness error makes the verdict `harness-error`
/// (its trials are still reported, but none of them decides anything).
pub(super) fn finish_race(mut run: RaceRun, k: usize, observed: &[Trial], measured_time: Duration) -> RaceRun {
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

/// One timed step of a trial, once every contender is `ready`; `at_us` counts from the
/// trial's release instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Send `go` to contender `slot`.
    Release {
        /// The contender.
        slot: usize,
        /// When, in µs after the release instant.
        at_us: u64,
    },
    /// Apply `control` to contender `slot`'s process tree (pause, resume, kill), e.g. to hold a
    /// lock holder still past its lease or kill it mid-hand-off.
    Control {
        /// The contender.
        slot: usize,
        /// When, in µs after the release instant.
        at_us: u64,
        /// What to do.
        control: Control,
    },
}

impl Phase {
    fn at_us(self) -> u64 {
        match self {
            Phase::Release { at_us, .. } | Phase::Control { at_us, .. } => at_us,
        }
    }
}

/// The timed steps of one trial, run in order of their times. The plain race is
/// [`TrialPlan::release`]; multi-step scenarios add pauses, resumes and kills.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrialPlan(Vec<Phase>);

impl TrialPlan {
    /// A plan of `phases`, sorted by time (stable: phases at the same time keep their order).
    pub fn new(mut phases: Vec<Phase>) -> TrialPlan {
        phases.sort_by_key(|p| p.at_us());
        TrialPlan(phases)
    }

    /// `k` contenders released `offset_us` apart: contender `i` at `i × offset_us`.
    pub fn release(k: usize, offset_us: u64) -> TrialPlan {
        TrialPlan::new((0..k).map(|slot| Phase::Release { slot, at_us: slot as u64 * offset_us }).collect())
    }

    /// This plan with contender `slot` released before every other phase, at 0 µs (a reader
    /// that must be reading when the workers start).
    pub fn releasing_first(self, slot: usize) -> TrialPlan {
        let mut phases = vec![Phase::Release { slot, at_us: 0 }];
        phases.extend(self.0);
        TrialPlan(phases)
    }

    /// When contender `slot` is released, in µs after the trial's release instant (its first
    /// [`Phase::Release`]; 0 when the plan has none for it). Thread races hand it to the probe
    /// ([`crate::exec::contender::Spec::delay_us`]).
    pub fn release_at(&self, slot: usize) -> u64 {
        self.0
            .iter()
            .find_map(|p| match *p {
                Phase::Release { slot: s, at_us } if s == slot => Some(at_us),
                _ => None,
            })
            .unwrap_or(0)
    }

    /// Runs the phases on `pool`, skipping contenders whose attempt already ended (`attempts`);
    /// a failed release or control ends that contender's attempt with the fault.
    pub fn run(&self, pool: &mut [Contender], attempts: &mut [Option<Attempt>]) {
        let start = Instant::now();
        for p in &self.0 {
            let (slot, at_us) = match *p {
                Phase::Release { slot, at_us } | Phase::Control { slot, at_us, .. } => (slot, at_us),
            };
            if attempts[slot].is_some() {
                continue;
            }
            if at_us > 0 {
                wait_until(start + Duration::from_micros(at_us));
            }
            let c = &mut pool[slot];
            let r = match *p {
                Phase::Release { .. } => c.release(),
                Phase::Control { control, .. } => c.control(control),
            };
            if let Err(a) = r {
                attempts[slot] = Some(a);
            }
        }
    }
}

/// Releases and finishes the contenders that got ready (no fault in `attempts`) in a trial that
/// will not be counted, so that session probes stay in step with the harness; those running a
/// loop recipe (`loops`) are stopped after the release, or they would run until the attempt
/// timeout.
pub(super) fn run_ready_ones(pool: &mut [Contender], attempts: &[Option<Attempt>], loops: &[bool]) {
    let released: Vec<bool> = pool.iter_mut().zip(attempts).map(|(c, a)| a.is_none() && c.release().is_ok()).collect();
    for ((c, released), looping) in pool.iter_mut().zip(&released).zip(loops) {
        if *released && (!*looping || c.stop().is_ok()) {
            let _ = c.finish();
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::{Budget, Sweep};

    #[test]
    fn odd_slots_see_the_folder_through_the_second_client() {
        use std::path::{Path, PathBuf};
        let clients = (PathBuf::from("/w/sshfs/client1"), PathBuf::from("/w/sshfs/client2"));
        let dir = Path::new("/w/sshfs/client1/conformance-x/race");
        assert_eq!(super::client_view(dir, 0, Some(&clients)), None);
        assert_eq!(
            super::client_view(dir, 1, Some(&clients)),
            Some(PathBuf::from("/w/sshfs/client2/conformance-x/race"))
        );
        assert_eq!(super::client_view(dir, 2, Some(&clients)), None);
        assert_eq!(super::client_view(dir, 1, None), None);
        // a folder outside the first client's root keeps its path
        assert_eq!(super::client_view(Path::new("/elsewhere/race"), 1, Some(&clients)), None);
    }

    #[test]
    fn a_contest_search_doubles_its_offset_until_the_first_call_wins() {
        use super::{Contest, ContestSearch, CONTEST_MAX_US, CONTEST_TRIALS};
        let (first, second) = ([true, false], [false, true]);
        // the first call won a warm-up trial, or none had a winner: no search
        assert_eq!(ContestSearch::start(&[second, first]), None);
        assert_eq!(ContestSearch::start(&[[false, false]]), None);
        let run = |mut c: ContestSearch, first_wins_from: u64| -> (Contest, Vec<u64>) {
            let mut tried = vec![c.offset_us];
            loop {
                let won = if c.offset_us >= first_wins_from { first } else { second };
                match c.after(won) {
                    Ok(next) => {
                        if next.offset_us != c.offset_us {
                            tried.push(next.offset_us);
                        }
                        c = next;
                    }
                    Err(end) => return (end, tried),
                }
            }
        };
        let c = ContestSearch::start(&[second, [false, false]]).unwrap();
        assert_eq!((c.offset_us, c.left), (250, CONTEST_TRIALS));
        // doubling to 2,000 µs, the first win; then halving the interval since 1,000 µs
        let (end, tried) = run(c, 1_300);
        assert_eq!(tried, [250, 500, 1_000, 2_000, 1_500, 1_250, 1_370]);
        assert_eq!(end, Contest::FoundAt(1_370));
        // the first call wins at once: the interval below 250 µs is halved
        assert_eq!(run(c, 0).0, Contest::FoundAt(30));
        // never: up to CONTEST_MAX_US, then not found, naming the last offset tried
        let (end, tried) = run(c, u64::MAX);
        assert_eq!(end, Contest::NotFoundUpTo(64_000));
        assert_eq!(*tried.last().unwrap(), CONTEST_MAX_US);
        // a trial the second call won does not settle an offset before CONTEST_TRIALS of them
        assert_eq!(c.after(second).map(|n| (n.offset_us, n.left)), Ok((250, CONTEST_TRIALS - 1)));
    }

    #[test]
    fn sweeps_and_budgets() {
        assert_eq!(Sweep::amplified(1000).offsets(&[]), vec![0, 500, 1000, 2000]);
        let plan = super::TrialPlan::release(3, 250);
        assert_eq!((plan.release_at(0), plan.release_at(2), plan.release_at(7)), (0, 500, 0));
        // the median of the warm trials, rounded up to 10 µs; the cold first two do not count
        let warm = [Some(8070.0), Some(682.0), Some(120.0), Some(95.0), Some(301.0)];
        assert_eq!(Sweep::NaturalAuto.offsets(&warm), vec![0, 120]);
        assert_eq!(Sweep::NaturalAuto.warmup_trials(), warm.len());
        assert_eq!(Sweep::amplified(1000).warmup_trials(), 3);
        assert_eq!(Sweep::NaturalAuto.offsets(&[None; 3]), vec![0], "no stamps, no offset");
        let faulty_warm = [Some(300.0), Some(300.0), None, None, None];
        assert_eq!(Sweep::NaturalAuto.offsets(&faulty_warm), vec![0, 300], "no warm stamps: the cold ones");
        assert_eq!(Sweep::NaturalAuto.offsets(&[]), vec![0]);
        assert_eq!(Sweep::Fixed(vec![]).offsets(&[]), vec![0]);
        let b = Budget {
            trials: 10,
            max_rate: Some(0.02),
            max_trials: 500,
            disproof_per_ordering: None,
            control_blocks: None,
        };
        assert!(!b.enough(9, 9, 1, 1), "at least the trials asked for");
        assert!(b.enough(10, 10, 1, 1), "a failure ends it");
        assert!(!b.enough(148, 148, 0, 1) && b.enough(149, 149, 0, 1), "1 - 0.05^(1/149) <= 2%");
        assert!(b.enough(500, 400, 0, 1), "the cap");
        assert!(Budget {
            trials: 10,
            max_rate: None,
            max_trials: 10,
            disproof_per_ordering: None,
            control_blocks: None
        }
        .enough(10, 0, 0, 1));
        // adaptive: a failure ends the run once every ordering had its trials; clean runs go on
        let a = Budget {
            trials: 100,
            max_rate: None,
            max_trials: 100,
            disproof_per_ordering: Some(5),
            control_blocks: None,
        };
        assert!(!a.enough(19, 19, 1, 4) && a.enough(20, 20, 1, 4), "4 orderings × 5");
        assert!(!a.enough(99, 99, 0, 4) && a.enough(100, 100, 0, 4), "exclusive so far: all the trials");
    }
}

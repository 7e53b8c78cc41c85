//! The race-mode policy of a cell: which modes run (natural, amplified, both), how many trials
//! each gets under adaptive trials, and the verdict the runs decide before the family's
//! detection control is applied.

use std::time::Instant;

use super::attempt::ms;
use super::trial::{race_core, RaceRun, Sweep};
use super::{Amplify, Budget, Measurement, Options, Pools};
use crate::domain::NoAmplified;
use crate::exec::scratch::PathStyle;
use crate::matrix::Variant;
use crate::options::ControlBlocks;
use crate::report::model::{ModeRun, OrderingRun, RaceResult};
use crate::verdict::{decide, RaceMode, RaceVerdict};

/// Adaptive trials ([`Options::adaptive`]): the trials every release ordering of a race run gets
/// before a multi-winner trial may end the run (so a failing cell still says which orderings
/// failed, each rate over at least this many trials).
pub const DISPROOF_TRIALS_PER_ORDERING: usize = 5;

/// Adaptive trials ([`Options::adaptive`]): the trials every release ordering of a cell's
/// natural check gets. Where the cell also has an amplified race, the check runs first: a
/// failure it shows decides the cell and the amplified race is skipped ([`NoAmplified::Skipped`]);
/// otherwise, once the amplified race found the call `exclusive` over all its trials (that run
/// decides the verdict and carries the bound), the check is the cell's natural run. Where the
/// amplified race settled nothing, a full natural race replaces the check. Measured here: the
/// natural races of exclusive cells took 0.1–0.2 s of each such cell's 0.5–0.9 s at 100
/// trials; `--thorough` runs them all.
pub const NATURAL_CHECK_TRIALS_PER_ORDERING: usize = 10;

/// Adaptive trials ([`Options::adaptive`]) of a race that runs natural only because no tracer
/// can widen it here (amplification on, but unavailable for the runtime, as for cmd under
/// Wine, or broken): an `exclusive` natural race goes on until the 95% upper bound on its
/// multi-winner rate falls to this (299 clean trials, `1 − 0.05^(1/299)`), where 100 trials
/// bound it at 3%. Measured here: Wine's `ren` replaced a name Rust's `create_new` took in 4
/// of 841 natural trials over seven default runs (1/10, 1/86, 1/96, 1/150; none in 100, 100
/// and 299): a window hit about once in 210 trials, which 100 trials miss about three runs in
/// five and 299 about one in four. More than that costs cmd's races minutes.
pub const NATURAL_ONLY_MAX_RATE: f64 = 0.01;

/// What the races of one cell produced in both modes, before the detection control is
/// applied.
#[derive(Debug, Clone)]
pub struct RaceOutput {
    /// Verdict, deciding mode, first error and the runs (no detection yet).
    pub race: RaceResult,
    /// Why the race could not run at all (unsupported), or what went wrong.
    pub evidence: Option<String>,
    /// Wall time of both runs, in milliseconds.
    pub elapsed_ms: f64,
    /// True when the run was interrupted during these races (the trial in flight was dropped;
    /// the counted trials stand).
    pub interrupted: bool,
}

impl RaceOutput {
    /// True when an interrupt left nothing to report: no counted trial in any mode and no
    /// other finding (unsupported, harness error). Such a race is dropped, not stored.
    pub fn cut_short(&self) -> bool {
        let r = &self.race;
        let counted = [&r.natural, &r.amplified].iter().filter_map(|m| m.as_ref()).any(|m| m.stats.trials > 0);
        self.interrupted && !counted && !matches!(r.verdict, RaceVerdict::Unsupported | RaceVerdict::HarnessError)
    }
}

fn mode_run(r: RaceRun, delay_us: Option<u64>) -> ModeRun {
    let strongest = crate::verdict::strongest_ordering(r.summary.verdict, &r.orderings);
    ModeRun {
        delay_us,
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
        raised_from_us: None,
        trials_per_second: r.trials_per_second,
        evidence: r.evidence,
        cost: r.cost,
        contest: r.contest,
    }
}

/// What a race is for: a row of a matrix, or a family's detection control, whose run needs
/// enough trials in each ordering to be judged on its best one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RaceRole {
    /// A variant's own race: adaptive trials apply.
    Row,
    /// A race of two calls against each other in [`crate::against::PAIR_SLOTS`] (`run
    /// --against`): a row's, whose sweeps also search for an ordering at which the first call
    /// wins where the second won every warm-up trial ([`Sweep::Contested`]).
    Pair,
    /// A detection control: all its trials run, and its amplified run counts at least
    /// `min_amplified_trials`.
    Control {
        /// Least trials of the amplified run.
        min_amplified_trials: usize,
    },
}

impl RaceRole {
    /// The control's role under `opts`: its amplified run gives every ordering of the sweep
    /// (`--offsets`, else the 4 of the amplified sweep) at least
    /// [`crate::verdict::CONTROL_MIN_TRIALS`] trials, so that each can be judged (a sweep of 4
    /// at `-n 50` would otherwise leave 12 per ordering).
    pub fn control(opts: &Options) -> RaceRole {
        let orderings = opts.offsets.as_ref().map_or(4, Vec::len).max(1);
        RaceRole::Control { min_amplified_trials: crate::verdict::CONTROL_MIN_TRIALS * orderings }
    }

    /// True for a detection control.
    pub fn is_control(self) -> bool {
        matches!(self, RaceRole::Control { .. })
    }

    /// Least trials of the amplified run: 0 for a row.
    pub fn min_amplified_trials(self) -> usize {
        match self {
            RaceRole::Row | RaceRole::Pair => 0,
            RaceRole::Control { min_amplified_trials } => min_amplified_trials,
        }
    }
}

/// Races `variants` (one per slot of `pools`) natural and amplified, as `opts` asks, and
/// decides the verdict. An amplified race that completes no trial (the runtime does not
/// survive the tracer) makes amplification unavailable for the rest of `pools`' life, with
/// the reason.
pub fn race_modes(
    pools: &mut Pools,
    variants: &[&Variant],
    styles: &[PathStyle],
    trials: usize,
    role: RaceRole,
    m: &mut Measurement<'_>,
) -> RaceOutput {
    let opts = m.opts;
    let amplify = m.amplify().clone();
    let started = Instant::now();
    // adaptive trials, except in the run a detection control is judged by (its amplified run,
    // or its natural run where there is no amplified one): that run needs all its trials
    let control = role.is_control();
    let adaptive = opts.adaptive.then_some(DISPROOF_TRIALS_PER_ORDERING);
    let budget = Budget {
        trials,
        max_rate: opts.max_rate,
        max_trials: opts.max_trials.max(trials),
        disproof_per_ordering: adaptive.filter(|_| !control),
        control_blocks: None,
    };
    // the loose-trial bound and the orderings of an amplified race at a delay
    // a pair's sweeps also look for an ordering at which both calls win
    let for_role = |s: Sweep| if role == RaceRole::Pair { s.contested() } else { s };
    let amplified_setup = |a: &crate::exec::amplify::Amplifier| {
        (
            Some(a.delay_us() as f64 * crate::exec::amplify::TIGHT_FRACTION),
            for_role(opts.offsets.clone().map_or_else(|| Sweep::amplified(a.delay_us()), Sweep::Fixed)),
        )
    };
    let natural_sweep = for_role(opts.offsets.clone().map_or(Sweep::NaturalAuto, Sweep::Fixed));
    let orderings = opts.offsets.as_ref().map_or(2, Vec::len).max(1);
    // adaptive: the natural check runs first where an amplified race would follow (see
    // NATURAL_CHECK_TRIALS_PER_ORDERING); a failure it shows decides the cell, and the
    // amplified race is skipped (NoAmplified::Skipped)
    let natural_first = adaptive.is_some()
        && !control
        && opts.natural
        && matches!(amplify, Amplify::On(_))
        && pools.unusable().is_none()
        && !crate::interrupt::requested();
    let mut natural = natural_first.then(|| {
        let check = natural_budget(budget, adaptive, Some((RaceVerdict::Exclusive, trials)), control, orderings);
        race_core(&mut pools.natural, variants, styles, check, &natural_sweep, None, m)
    });
    // a failure decides the cell; an unsupported call, a harness error or an interrupt ends it
    let natural_failed = natural.as_ref().is_some_and(|r| crate::verdict::is_disproof(r.summary.verdict));
    let natural_decided =
        natural.as_ref().is_some_and(|r| natural_failed || r.unsupported || r.harness_error.is_some() || r.interrupted);
    let (mut amplified, mut unavailable) = (None, None);
    // the delay the amplified race ran at, and the one it was raised from (None: not raised)
    let (mut used_amplify, mut raised_from_us) = (amplify.clone(), None);
    if natural_failed {
        unavailable = Some(NoAmplified::Skipped);
    } else if !natural_decided && !crate::interrupt::requested() {
        let trials = trials.max(role.min_amplified_trials());
        // a control's ordering blocks (issue 13): ordering 0 usually passes with 20/20,
        // where the three others took 60 more trials
        let blocks = (control && adaptive.is_some())
            .then_some(ControlBlocks { per: crate::verdict::CONTROL_MIN_TRIALS, mode: RaceMode::Amplified });
        let budget = Budget { trials, max_trials: budget.max_trials.max(trials), control_blocks: blocks, ..budget };
        // the run at the delay before the last raise, and that delay (µs)
        let mut last: Option<(RaceRun, u64)> = None;
        loop {
            let Amplify::On(a) = &used_amplify else {
                unavailable = Some(used_amplify.why_not().unwrap_or(NoAmplified::Off));
                break;
            };
            let (tight, sweep) = amplified_setup(a);
            let pool = match pools.amplified(&used_amplify) {
                Ok(pool) => pool,
                Err(why) => {
                    if let Some(earlier) = last.take() {
                        // the pool did not start at the raised delay: the run at the last
                        // delay stands, and the next cell takes the parked pool back
                        pools.reset_amplified();
                        used_amplify = Amplify::On(a.with_delay(earlier.1));
                        amplified = Some(earlier.0);
                    } else {
                        unavailable = Some(why);
                    }
                    break;
                }
            };
            let mut r = race_core(pool, variants, styles, budget, &sweep, tight, m);
            // the loose trials of the runs before (each run's count includes its predecessor's)
            r.loose_trials += last.as_ref().map_or(0, |(l, _)| l.loose_trials);
            // the release never got tight at this delay (a busy machine can hold a contender
            // back longer than the delay covers): this cell runs again with a longer one, as a
            // weak control raises its family's (measured: under load, Bun's and Deno's
            // createWriteStream wx stopped at 1,000 µs and were left undetermined)
            // (a detection control's too: its family's cells then start from the raised delay)
            let longer = a.delay_us() * crate::exec::amplify::ESCALATION_FACTOR;
            if r.stopped_loose
                && !r.interrupted
                && longer <= crate::exec::amplify::MAX_ESCALATED_DELAY_US
                && !crate::interrupt::requested()
            {
                raised_from_us.get_or_insert(a.delay_us());
                last = Some((r, a.delay_us()));
                used_amplify = Amplify::On(a.with_delay(longer));
                continue;
            }
            if r.summary.stats.trials == 0 && !r.unsupported && !r.interrupted && r.harness_error.is_none() {
                let why = NoAmplified::no_trial(r.evidence.as_deref().unwrap_or("no evidence"));
                pools.amplified_broke(why.clone());
                unavailable = Some(NoAmplified::from_text(&why));
                break;
            }
            amplified = Some(r);
            break;
        }
    }
    // natural also runs where amplification was asked for alone but this pool has none
    // (unavailable here, not run for this runtime, or broken under the tracer)
    let natural_wanted = (opts.natural || amplified.is_none())
        && !amplified.as_ref().is_some_and(|r: &RaceRun| r.harness_error.is_some() || r.interrupted);
    // adaptive: where the amplified race already showed multiple winners the natural race
    // cannot change the verdict, and one round of its orderings gives its rate; where it
    // found the call exclusive over all its trials, it decides the verdict and its bound (the
    // "safe as a lock" rule reads the deciding run), and the natural race is a check that
    // the undelayed call shows no second winner either, over NATURAL_CHECK_TRIALS_PER_ORDERING
    let amplified_summary = amplified.as_ref().map(|r| (r.summary.verdict, r.summary.stats.trials));
    // a race no tracer widens here (cmd under Wine, no strace, probes that broke under it)
    let natural_only = matches!(unavailable, Some(NoAmplified::Unavailable(_) | NoAmplified::Broke(_)));
    let natural_budget = natural_budget(budget, adaptive, amplified_summary, control, orderings);
    let natural_budget =
        if natural_only { widened_by_nothing(natural_budget, adaptive, control) } else { natural_budget };
    // the natural check that ran first stands unless the amplified race left more to decide
    // (it did not run, or did not settle the cell): then a natural race of that budget replaces it
    let checked = natural.as_ref().map_or(0, |r| r.summary.stats.trials);
    if !natural_decided && natural_budget.trials > checked && natural_wanted && !crate::interrupt::requested() {
        natural = Some(race_core(&mut pools.natural, variants, styles, natural_budget, &natural_sweep, None, m));
    }
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
    let natural = natural.map(|r| mode_run(r, None));
    let delay = match &used_amplify {
        Amplify::On(a) => Some(a.delay_us()),
        _ => None,
    };
    let amplified = amplified.map(|r| ModeRun { raised_from_us, ..mode_run(r, delay) });
    let (verdict, decided_by) = if let Some(mode) = harness_error_in {
        (RaceVerdict::HarnessError, mode)
    } else if is_unsupported {
        (RaceVerdict::Unsupported, if amplified.is_some() { RaceMode::Amplified } else { RaceMode::Natural })
    } else {
        decide(natural.as_ref().map(|m| m.verdict), amplified.as_ref().map(|m| m.verdict))
    };
    RaceOutput {
        race: RaceResult {
            verdict,
            decided_by,
            error: first_error,
            natural,
            amplified,
            amplified_unavailable: unavailable,
            detection: None,
            weak_race: None,
            interrupted,
        },
        evidence,
        elapsed_ms: ms(started.elapsed()),
        interrupted,
    }
}

/// The budget of the natural race of a cell that has no amplified race because no tracer
/// widens its windows here (`budget`, from [`natural_budget`]): in an adaptive run (`adaptive`
/// is `Some`), for a cell that is not a detection control and whose budget already asks for
/// the trials "safe as a lock" needs, trials go on until the 95% bound on the multi-winner
/// rate falls to [`NATURAL_ONLY_MAX_RATE`] (or a lower `--max-rate`); otherwise `budget` as it is.
pub(super) fn widened_by_nothing(budget: Budget, adaptive: Option<usize>, control: bool) -> Budget {
    if adaptive.is_none() || control || budget.trials < crate::verdict::MIN_TRIALS_FOR_SAFE {
        return budget;
    }
    let max_rate = budget.max_rate.map_or(NATURAL_ONLY_MAX_RATE, |r| r.min(NATURAL_ONLY_MAX_RATE));
    Budget { max_rate: Some(max_rate), ..budget }
}

/// The budget of a cell's natural race, given the cell's `budget`, the adaptive trials per
/// ordering (`None`: not adaptive, `--thorough`), the amplified race's verdict and counted
/// trials (`None` when it did not run), whether the cell is a detection control, and the
/// natural sweep's number of `orderings`. See [`Options::adaptive`]; a detection control
/// without an amplified run gets at least [`crate::verdict::CONTROL_MIN_TRIALS`] per ordering.
pub(super) fn natural_budget(
    budget: Budget,
    adaptive: Option<usize>,
    amplified: Option<(RaceVerdict, usize)>,
    control: bool,
    orderings: usize,
) -> Budget {
    if control && amplified.is_none() {
        // the control is judged on its natural run: every ordering gets CONTROL_MIN_TRIALS
        // (at -n 30, 15 per ordering made every natural-only control weak: cmd, issue 13),
        // and adaptive runs stop at the first ordering that passes, as amplified controls do
        let trials = budget.trials.max(crate::verdict::CONTROL_MIN_TRIALS * orderings);
        // (a block is an ordering's whole share: at the natural threshold a block of 20 passes
        // with 1 trial caught, where the ordering's share of 50 asks for 4 or more)
        let per = trials.div_ceil(orderings.max(1)).max(crate::verdict::CONTROL_MIN_TRIALS);
        let control_blocks = adaptive.map(|_| ControlBlocks { per, mode: RaceMode::Natural });
        return Budget { trials, max_trials: budget.max_trials.max(trials), control_blocks, ..budget };
    }
    let Some(per) = adaptive else { return budget };
    let disproved = amplified.is_some_and(|(v, _)| crate::verdict::is_disproof(v));
    let settled = amplified.is_some_and(|(v, n)| !control && v == RaceVerdict::Exclusive && n >= budget.trials);
    let trials = if disproved {
        per * orderings
    } else if settled {
        NATURAL_CHECK_TRIALS_PER_ORDERING * orderings
    } else if control && amplified.is_some() {
        budget.trials
    } else {
        return budget;
    };
    Budget { trials: trials.min(budget.trials), disproof_per_ordering: Some(per), ..budget }
}

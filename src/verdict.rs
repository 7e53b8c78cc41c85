//! Pure classification: from what a probe reported and what the harness saw on disk, to an
//! outcome in the vocabulary of `docs/GLOSSARY.md`.
//!
//! Nothing here knows which variant or runtime it is judging: the same rules apply to all,
//! so an outcome can only come from observation.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::snapshot::{mark_name, Entry};

/// The outcome of one attempt on a target (second-comer scenario; `absent` is the control).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Control: the call succeeded on a free name and the target holds the contender's token.
    Acquired,
    /// Control: the call failed on a free name and left it free; the variant cannot take a name.
    Failed,
    /// The call failed and the target is unchanged. Safe.
    Refused,
    /// The call succeeded and the target now holds the second comer's token: silent overwrite.
    Replaced,
    /// The call succeeded and the target is unchanged: success without taking anything.
    Kept,
    /// The call succeeded and the directory at the target now contains the second comer's item.
    Nested,
    /// The target changed, but not to the second comer's token (merged, truncated, emptied).
    Damaged,
    /// The call waited for console input.
    Prompted,
    /// The probe did not answer within the per-attempt timeout (its process tree was killed).
    Timeout,
    /// The probe exited, failed to start, or broke the protocol.
    Crashed,
    /// The runtime does not have this call (the probe said so, with a reason).
    Unsupported,
    /// Not run (runtime missing or broken); the reason is in the cell.
    Skipped,
    /// Not measured: the harness itself failed around the attempt (it could not set up the
    /// first comer's state or a source, could not read the target afterwards, or the scratch
    /// file system failed with ENOSPC, EDQUOT, EROFS or EIO). Says nothing about the call; the
    /// reason is in the cell's evidence.
    HarnessError,
}

impl Outcome {
    /// The glossary spelling, e.g. `multiple-winners`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Acquired => "acquired",
            Outcome::Failed => "failed",
            Outcome::Refused => "refused",
            Outcome::Replaced => "replaced",
            Outcome::Kept => "kept",
            Outcome::Nested => "nested",
            Outcome::Damaged => "damaged",
            Outcome::Prompted => "prompted",
            Outcome::Timeout => "timeout",
            Outcome::Crashed => "crashed",
            Outcome::Unsupported => "unsupported",
            Outcome::Skipped => "skipped",
            Outcome::HarnessError => "harness-error",
        }
    }

    /// True for outcomes that carry no verdict (timeout, crashed, unsupported, skipped,
    /// harness-error).
    pub fn is_fault(self) -> bool {
        matches!(
            self,
            Outcome::Timeout | Outcome::Crashed | Outcome::Unsupported | Outcome::Skipped | Outcome::HarnessError
        )
    }
}

/// How an attempt ended, as reported by the probe (or by the harness for faults).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Report {
    /// The call returned success.
    Success,
    /// The call returned an error.
    Error,
    /// The call finished only after the harness answered a console prompt.
    Prompted,
    /// No answer within the timeout.
    Timeout,
    /// The probe died or broke the protocol.
    Crashed,
    /// The probe does not have the call.
    Unsupported,
    /// The run was interrupted while the attempt was in flight: the engine drops the attempt
    /// (never counted, never stored).
    Interrupted,
    /// The harness failed around the attempt (set-up, snapshot, scratch file system); see
    /// [`Outcome::HarnessError`].
    HarnessError,
}

/// Classifies one second-comer attempt.
///
/// Takes the target as it stood before the attempt (the first comer's state, or `Absent` for
/// the control), the probe's report, the target afterwards, and the second comer's token.
/// `own_mark` is true when the probe was asked to write a mark file into a directory it
/// creates; that file alone is bookkeeping, not something the call took.
pub fn classify_second(before: &Entry, report: Report, after: &Entry, token: &str, own_mark: bool) -> Outcome {
    match report {
        Report::Prompted => return Outcome::Prompted,
        Report::Timeout => return Outcome::Timeout,
        Report::Crashed => return Outcome::Crashed,
        Report::Unsupported => return Outcome::Unsupported,
        Report::HarnessError => return Outcome::HarnessError,
        // the engine drops interrupted attempts before classifying; never stored
        Report::Interrupted => return Outcome::Skipped,
        Report::Success | Report::Error => {}
    }
    let ok = report == Report::Success;
    if matches!(before, Entry::Absent) {
        return match (ok, after.holds(token), matches!(after, Entry::Absent)) {
            (true, true, _) => Outcome::Acquired,
            (false, _, true) => Outcome::Failed,
            _ => Outcome::Damaged,
        };
    }
    if !ok {
        return if after == before { Outcome::Refused } else { Outcome::Damaged };
    }
    let after_without_mark = if own_mark { without_entry(after, &mark_name(token)) } else { after.clone() };
    if &after_without_mark == before {
        return Outcome::Kept;
    }
    match (before, after) {
        (Entry::Dir { id: b_id, entries: b }, Entry::Dir { id: a_id, entries: a }) if b_id == a_id => {
            let kept_all = b.iter().all(|(k, v)| a.get(k) == Some(v));
            let added: Vec<&Entry> = a
                .iter()
                .filter(|(k, _)| !b.contains_key(*k) && (!own_mark || **k != mark_name(token)))
                .map(|(_, v)| v)
                .collect();
            if kept_all && !added.is_empty() && added.iter().all(|e| e.holds(token)) {
                Outcome::Nested
            } else {
                Outcome::Damaged
            }
        }
        (Entry::Dir { .. }, _) if after.id() == before.id() => Outcome::Damaged,
        _ if after.holds(token) && !holds_other(after, token) => Outcome::Replaced,
        _ => Outcome::Damaged,
    }
}

fn without_entry(e: &Entry, name: &str) -> Entry {
    match e {
        Entry::Dir { id, entries } => {
            let mut entries = entries.clone();
            entries.remove(name);
            Entry::Dir { id: *id, entries }
        }
        other => other.clone(),
    }
}

/// True when a directory holds marks of tokens other than `token` (a merge, not a replace).
fn holds_other(e: &Entry, token: &str) -> bool {
    match e {
        Entry::Dir { entries, .. } => {
            entries.keys().any(|k| k.starts_with(crate::snapshot::MARK_PREFIX) && *k != mark_name(token))
        }
        _ => false,
    }
}

/// The verdict of a race cell (`docs/GLOSSARY.md`, "Race").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RaceVerdict {
    /// Every trial had exactly one success and the target held that contender's token.
    Exclusive,
    /// Some trial had two or more successes.
    MultipleWinners,
    /// A contender succeeded but the target held someone else's token (or no token).
    LostUpdate,
    /// Some trial had no success.
    NoWinner,
    /// Faults (timeouts, crashes) kept trials from completing.
    Inconclusive,
    /// The runtime does not have this call.
    Unsupported,
    /// Not run; the reason is in the cell.
    Skipped,
    /// Not measured: the harness failed (set-up, snapshot, scratch file system) before any
    /// trial could be counted; see [`Outcome::HarnessError`].
    HarnessError,
}

impl RaceVerdict {
    /// The glossary spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            RaceVerdict::Exclusive => "exclusive",
            RaceVerdict::MultipleWinners => "multiple-winners",
            RaceVerdict::LostUpdate => "lost-update",
            RaceVerdict::NoWinner => "no-winner",
            RaceVerdict::Inconclusive => "inconclusive",
            RaceVerdict::Unsupported => "unsupported",
            RaceVerdict::Skipped => "skipped",
            RaceVerdict::HarnessError => "harness-error",
        }
    }
}

/// What the harness observed in one race trial.
#[derive(Debug, Clone, PartialEq)]
pub struct Trial {
    /// Per contender: its report.
    pub reports: Vec<Report>,
    /// Per contender: whether the target held its token afterwards.
    pub held: Vec<bool>,
    /// Per contender: the time it entered the call, in microseconds (probe clock), if known.
    pub t0_us: Vec<Option<f64>>,
    /// The planned release offset: contender `i` was released `i × offset_us` µs after
    /// contender 0 (0 = all together).
    pub offset_us: u64,
}

impl Trial {
    /// The release spread of this trial net of the planned offsets (see [`entry_spread_us`]).
    pub fn spread_us(&self) -> Option<f64> {
        entry_spread_us(&self.t0_us, self.offset_us)
    }
}

/// The spread of one trial's release: the time between the first and the last contender
/// entering its call, in microseconds (probe stamps), after subtracting each contender's
/// planned release offset (`i × offset_us` for contender `i`); `None` when a stamp is missing
/// or there are fewer than two contenders.
pub fn entry_spread_us(t0_us: &[Option<f64>], offset_us: u64) -> Option<f64> {
    let t0s: Vec<f64> = t0_us
        .iter()
        .enumerate()
        .map(|(i, t)| t.map(|t| t - (i as u64 * offset_us) as f64))
        .collect::<Option<Vec<f64>>>()?;
    if t0s.len() < 2 {
        return None;
    }
    let lo = t0s.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = t0s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some(hi - lo)
}

/// Barrier spread percentiles, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Median spread (µs) between the first and last contender entering the call.
    pub p50: f64,
    /// 99th percentile (µs).
    pub p99: f64,
    /// Largest (µs).
    pub max: f64,
}

/// The counts behind a race verdict (`results.json` keeps them flat in the race cell).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RaceStats {
    /// Contenders per trial.
    pub contenders: usize,
    /// Trials completed (including faulty ones).
    pub trials: usize,
    /// Number of successes in a trial → number of trials with that count (keys are decimal strings in JSON).
    #[serde(with = "count_keys")]
    pub winners: BTreeMap<usize, usize>,
    /// Trials in which two or more contenders reported success.
    pub multi_winner_trials: usize,
    /// The largest number of successes in one trial.
    pub max_winners: usize,
    /// Trials in which a contender succeeded but the target did not hold its token, or held
    /// the token of a contender that did not succeed.
    pub lost_update_trials: usize,
    /// Trials with no success.
    pub no_winner_trials: usize,
    /// Trials with a timeout, crash or prompt.
    pub fault_trials: usize,
    /// Wins per contender slot (index = contender number).
    pub wins_by_contender: Vec<usize>,
    /// Barrier spread, where the probes gave timestamps.
    pub barrier_spread_us: Option<Spread>,
    /// Trials without a timeout, crash or prompt: the denominator of the rate bounds.
    #[serde(default)]
    pub clean_trials: usize,
    /// One-sided 95% upper bound on the per-trial multi-winner probability over the clean
    /// trials ([`crate::stats::upper95`]; `1 − 0.05^(1/T)` when none had two winners).
    #[serde(default = "one")]
    pub multi_winner_upper95: f64,
    /// Two-sided 95% Clopper–Pearson interval `[low, high]` for that probability, when some
    /// trial had two or more winners ([`crate::stats::interval95`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multi_winner_ci95: Option<[f64; 2]>,
}

fn one() -> f64 {
    1.0
}

impl RaceStats {
    /// The trials that show verdict `v`: multi-winner trials for `multiple-winners` (and for
    /// `exclusive`, where there are none), lost-update, no-winner or faulty trials for those.
    pub fn trials_showing(&self, v: RaceVerdict) -> usize {
        match v {
            RaceVerdict::LostUpdate => self.lost_update_trials,
            RaceVerdict::NoWinner => self.no_winner_trials,
            RaceVerdict::Inconclusive => self.fault_trials,
            _ => self.multi_winner_trials,
        }
    }
}

/// Serialises `usize` map keys as decimal strings and reads them back, also inside
/// `#[serde(flatten)]` (where serde hands integer keys over as strings).
mod count_keys {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(m: &BTreeMap<usize, usize>, s: S) -> Result<S::Ok, S::Error> {
        m.iter().map(|(k, v)| (k.to_string(), *v)).collect::<BTreeMap<String, usize>>().serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<usize, usize>, D::Error> {
        let m = BTreeMap::<String, usize>::deserialize(d)?;
        m.into_iter()
            .map(|(k, v)| {
                k.parse::<usize>()
                    .map(|k| (k, v))
                    .map_err(|_| serde::de::Error::custom(format!("winners key '{k}' is not a count")))
            })
            .collect()
    }
}

/// The summary of a race cell: verdict and counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RaceSummary {
    /// The verdict.
    pub verdict: RaceVerdict,
    /// The counts.
    pub stats: RaceStats,
}

/// Summarises race trials into a verdict. `contenders` is K.
///
/// Precedence: any trial in which a contender waited for console input → `inconclusive` (the
/// race could not run unattended, and how long the prompt waited decides the rest); else any
/// multi-winner trial → `multiple-winners`; else any lost update →
/// `lost-update`; else any fault → `inconclusive`; else any trial without a winner →
/// `no-winner`; else `exclusive`. An empty trial list is `inconclusive`.
pub fn summarize_race(contenders: usize, trials: &[Trial]) -> RaceSummary {
    let mut winners = BTreeMap::new();
    let (mut multi, mut lost, mut none, mut faults, mut max_w) = (0, 0, 0, 0, 0);
    let mut by = vec![0usize; contenders];
    let mut spreads = Vec::new();
    let mut prompted = false;
    for t in trials {
        prompted |= t.reports.contains(&Report::Prompted);
        let wins: Vec<usize> = (0..t.reports.len()).filter(|&k| t.reports[k] == Report::Success).collect();
        let faulty = t.reports.iter().any(|r| matches!(r, Report::Timeout | Report::Crashed | Report::Prompted));
        *winners.entry(wins.len()).or_insert(0) += 1;
        max_w = max_w.max(wins.len());
        for &k in &wins {
            if k < by.len() {
                by[k] += 1;
            }
        }
        if wins.len() >= 2 {
            multi += 1;
        }
        let winner_lost = wins.iter().any(|&k| !t.held.get(k).copied().unwrap_or(false));
        let foreign = (0..t.held.len()).any(|k| t.held[k] && t.reports.get(k) != Some(&Report::Success));
        if !wins.is_empty() && (winner_lost || foreign) {
            lost += 1;
        }
        if faulty {
            faults += 1;
        } else if wins.is_empty() {
            none += 1;
        }
        if let Some(s) = t.spread_us() {
            spreads.push(s);
        }
    }
    let verdict = if trials.is_empty() || prompted {
        RaceVerdict::Inconclusive
    } else if multi > 0 {
        RaceVerdict::MultipleWinners
    } else if lost > 0 {
        RaceVerdict::LostUpdate
    } else if faults > 0 {
        RaceVerdict::Inconclusive
    } else if none > 0 {
        RaceVerdict::NoWinner
    } else {
        RaceVerdict::Exclusive
    };
    let clean = trials.len() - faults;
    // a faulty trial can still show two winners; count it, but never beyond the clean trials
    let clean_multi = multi.min(clean);
    RaceSummary {
        verdict,
        stats: RaceStats {
            clean_trials: clean,
            multi_winner_upper95: crate::stats::upper95(clean_multi, clean),
            multi_winner_ci95: (multi > 0).then(|| crate::stats::interval95(clean_multi, clean)),
            contenders,
            trials: trials.len(),
            winners,
            multi_winner_trials: multi,
            max_winners: max_w,
            lost_update_trials: lost,
            no_winner_trials: none,
            fault_trials: faults,
            wins_by_contender: by,
            barrier_spread_us: spread(&mut spreads),
        },
    }
}

/// One release ordering of a race: its planned offset and the summary of its trials.
#[derive(Debug, Clone, PartialEq)]
pub struct OrderingSummary {
    /// Contender `i` was released `i × offset_us` µs after contender 0.
    pub offset_us: u64,
    /// Verdict and counts of the trials run with this offset.
    pub summary: RaceSummary,
}

/// Summarises race trials per release offset, in increasing offset order.
pub fn summarize_orderings(contenders: usize, trials: &[Trial]) -> Vec<OrderingSummary> {
    let mut offsets: Vec<u64> = trials.iter().map(|t| t.offset_us).collect();
    offsets.sort_unstable();
    offsets.dedup();
    offsets
        .into_iter()
        .map(|o| {
            let group: Vec<Trial> = trials.iter().filter(|t| t.offset_us == o).cloned().collect();
            OrderingSummary { offset_us: o, summary: summarize_race(contenders, &group) }
        })
        .collect()
}

/// The ordering that shows `verdict` most strongly: for a failing verdict, the one with the
/// highest share of trials of that kind (multi-winner, lost-update or no-winner trials); for
/// `exclusive`, none; on a tie, the smallest offset. Returns its index in `orderings`.
pub fn strongest_ordering(verdict: RaceVerdict, orderings: &[OrderingSummary]) -> Option<usize> {
    let count = |s: &RaceStats| s.trials_showing(verdict);
    if !is_disproof(verdict) {
        return None;
    }
    orderings
        .iter()
        .enumerate()
        .filter(|(_, o)| o.summary.stats.trials > 0 && count(&o.summary.stats) > 0)
        .max_by(|(_, a), (_, b)| {
            let ra = count(&a.summary.stats) as f64 / a.summary.stats.trials as f64;
            let rb = count(&b.summary.stats) as f64 / b.summary.stats.trials as f64;
            // on a tie, the smaller offset: the narrower lag that still finds the window
            ra.total_cmp(&rb).then(b.offset_us.cmp(&a.offset_us))
        })
        .map(|(i, _)| i)
}

/// Nearest-rank percentiles of `v` (sorted in place); `None` when empty.
pub fn spread(v: &mut [f64]) -> Option<Spread> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let pick = |q: f64| {
        let rank = (q * v.len() as f64).ceil() as usize;
        v[rank.clamp(1, v.len()) - 1]
    };
    Some(Spread { p50: pick(0.50), p99: pick(0.99), max: v[v.len() - 1] })
}

/// Fewest clean race trials from which `exclusive` may count towards "safe as a lock"
/// (the glossary's rule; with fewer, the bound below cannot be reached anyway).
pub const MIN_TRIALS_FOR_SAFE: usize = 100;

/// Largest one-sided 95% upper bound on the multi-winner rate with which `exclusive` counts
/// towards "safe as a lock": 3% per trial (≈ 100 clean trials).
pub const MAX_BOUND_FOR_SAFE: f64 = 0.03;

/// Smallest share of trials in which the detection control must show two winners for a race
/// to count as working: amplified races (the delay makes a check-then-create window certain)
/// and natural races (where only luck finds the window). The race-truth issue's thresholds.
pub const CONTROL_MIN_AMPLIFIED: f64 = 0.90;
/// See [`CONTROL_MIN_AMPLIFIED`].
pub const CONTROL_MIN_NATURAL: f64 = 0.20;

/// The significance level of the control's test: a control counts as weak when its count is
/// below [`CONTROL_MIN_AMPLIFIED`] (or [`CONTROL_MIN_NATURAL`]) with p < 0.05.
pub const CONTROL_ALPHA: f64 = 0.05;

/// Fewest control trials (in the ordering judged) from which a detection rate is believed: a
/// lucky 1/1 says nothing about a race's power.
pub const CONTROL_MIN_TRIALS: usize = 20;

/// The target states that must all have been measured before a variant can be called safe.
pub const ALL_TARGETS: [&str; 4] = ["absent", "file", "empty-dir", "dir"];

/// How a race was run (the glossary's "Race": natural and amplified).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RaceMode {
    /// As the calls happen.
    Natural,
    /// Every file-system system call delayed on return ([`crate::exec::amplify`]).
    Amplified,
}

impl RaceMode {
    /// `natural` or `amplified`.
    pub fn as_str(self) -> &'static str {
        match self {
            RaceMode::Natural => "natural",
            RaceMode::Amplified => "amplified",
        }
    }
}

/// True for verdicts that show a lock failing (one such trial disproves exclusivity).
pub fn is_disproof(v: RaceVerdict) -> bool {
    matches!(v, RaceVerdict::MultipleWinners | RaceVerdict::LostUpdate | RaceVerdict::NoWinner)
}

/// The verdict of a race cell from its natural and amplified runs, and the mode that decided
/// it. A failure seen in either mode decides (the amplified one first); otherwise the
/// amplified verdict decides where it ran, else the natural one. `(Inconclusive, Natural)`
/// when neither ran.
pub fn decide(natural: Option<RaceVerdict>, amplified: Option<RaceVerdict>) -> (RaceVerdict, RaceMode) {
    match (natural, amplified) {
        (_, Some(a)) if is_disproof(a) => (a, RaceMode::Amplified),
        (Some(n), _) if is_disproof(n) => (n, RaceMode::Natural),
        (_, Some(a)) => (a, RaceMode::Amplified),
        (Some(n), None) => (n, RaceMode::Natural),
        (None, None) => (RaceVerdict::Inconclusive, RaceMode::Natural),
    }
}

/// How well the detection control (the family's check-then-create anti-pattern, raced like
/// any variant) was caught in one run: the evidence that the race machinery finds windows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Detection {
    /// The control variant's id.
    pub variant: String,
    /// The mode judged (amplified where it ran, else natural).
    pub mode: RaceMode,
    /// Trials with two or more winners in that mode (in its ordering that caught the most).
    pub caught: usize,
    /// Trials run in that mode (in that ordering).
    pub trials: usize,
    /// That ordering's release offset, µs (0 = released together).
    #[serde(default)]
    pub offset_us: u64,
    /// Natural trials with two or more winners and natural trials, where the natural race ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub natural: Option<[usize; 2]>,
    /// Likewise for the amplified race.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amplified: Option<[usize; 2]>,
    /// True when at least [`CONTROL_MIN_TRIALS`] trials ran and `caught / trials` is not
    /// significantly below [`CONTROL_MIN_AMPLIFIED`] (amplified) or [`CONTROL_MIN_NATURAL`]
    /// (natural only): one-sided exact binomial test, p ≥ [`CONTROL_ALPHA`].
    pub worked: bool,
}

impl Detection {
    /// Judges a control from its natural and amplified counts, each `(multi-winner trials,
    /// trials, release offset µs)` of the ordering that caught the most; `None` for a mode
    /// that did not run. A control that ran in neither mode (unsupported, crashed) did not work.
    pub fn judge(
        variant: &str,
        natural: Option<(usize, usize, u64)>,
        amplified: Option<(usize, usize, u64)>,
    ) -> Detection {
        let (mode, (caught, trials, offset_us), min) = match (natural, amplified) {
            (_, Some(a)) => (RaceMode::Amplified, a, CONTROL_MIN_AMPLIFIED),
            (Some(n), None) => (RaceMode::Natural, n, CONTROL_MIN_NATURAL),
            (None, None) => (RaceMode::Natural, (0, 0, 0), CONTROL_MIN_NATURAL),
        };
        Detection {
            variant: variant.to_string(),
            mode,
            caught,
            trials,
            offset_us,
            natural: natural.map(|(a, b, _)| [a, b]),
            amplified: amplified.map(|(a, b, _)| [a, b]),
            // weak only when the count is significantly below the threshold (a one-sided exact
            // binomial test): a hard cut at the threshold flips with sampling noise for a
            // runtime whose true rate sits near it (CoreCLR under load: about 93%)
            worked: trials >= CONTROL_MIN_TRIALS && crate::stats::below_p(caught, trials, min) >= CONTROL_ALPHA,
        }
    }

    /// `control caught 12/100 (amplified)`, with `, +500 µs` for a staggered ordering and a
    /// note when it ran fewer than [`CONTROL_MIN_TRIALS`] trials.
    pub fn describe(&self) -> String {
        let at = if self.offset_us > 0 { format!(", +{} µs", self.offset_us) } else { String::new() };
        let few = if self.trials < CONTROL_MIN_TRIALS {
            format!(", fewer than {CONTROL_MIN_TRIALS} trials: raise --trials")
        } else {
            String::new()
        };
        format!("control caught {}/{} ({}{at}{few})", self.caught, self.trials, self.mode.as_str())
    }
}

/// Applies the detection control to a race verdict: an `exclusive` verdict from a race whose
/// control was not caught becomes `inconclusive`, with the reason (`weak race: control caught
/// n/T`). Other verdicts stand: a failure seen is a failure whatever the control did.
pub fn apply_control(verdict: RaceVerdict, control: Option<&Detection>) -> (RaceVerdict, Option<String>) {
    match control {
        Some(d) if !d.worked && verdict == RaceVerdict::Exclusive => {
            (RaceVerdict::Inconclusive, Some(format!("weak race: {}", d.describe())))
        }
        _ => (verdict, None),
    }
}

/// The race evidence that "safe as a lock" weighs: the cell's verdict (after the control),
/// the deciding run's clean trials and bound, and whether the control worked (`None` when no
/// control ran).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RaceEvidence {
    /// The cell's verdict.
    pub verdict: RaceVerdict,
    /// Clean trials of the deciding run.
    pub clean_trials: usize,
    /// Its one-sided 95% upper bound on the multi-winner rate.
    pub upper95: f64,
    /// Whether the detection control worked in this run.
    pub control_worked: Option<bool>,
}

/// "Safe as a lock" (the glossary): the control acquired, every other target state refused
/// with absolute and relative paths alike, and the race (amplified where it ran) `exclusive`
/// with its bound ≤ [`MAX_BOUND_FOR_SAFE`] over ≥ [`MIN_TRIALS_FOR_SAFE`] clean trials, in a
/// run whose detection control worked.
///
/// Takes one `(target, absolute outcome, relative outcome)` per second-comer cell (`None`
/// where the relative attempt was not made, e.g. `--no-relative`) and the race evidence.
/// Returns `Some(false)` as soon as any observation rules the variant out, `Some(true)` only
/// when every target state of [`ALL_TARGETS`] was attempted both ways and a strong enough race
/// was observed, all agreeing, and `None` otherwise (incomplete, faulty, weak race).
pub fn safe_as_lock(second: &[(String, Outcome, Option<Outcome>)], race: Option<RaceEvidence>) -> Option<bool> {
    let wrong = |target: &str, o: Outcome| {
        !o.is_fault() && if target == "absent" { o != Outcome::Acquired } else { o != Outcome::Refused }
    };
    let bad_second = second.iter().any(|(t, a, r)| wrong(t, *a) || r.is_some_and(|r| wrong(t, r)));
    let bad_race = race.is_some_and(|r| is_disproof(r.verdict));
    if bad_second || bad_race {
        return Some(false);
    }
    let strong = race.is_some_and(|r| {
        r.verdict == RaceVerdict::Exclusive
            && r.clean_trials >= MIN_TRIALS_FOR_SAFE
            && r.upper95 <= MAX_BOUND_FOR_SAFE
            && r.control_worked == Some(true)
    });
    let complete = ALL_TARGETS.iter().all(|t| second.iter().any(|(s, _, r)| s == t && r.is_some()))
        && second.iter().all(|(_, a, r)| !a.is_fault() && r.is_some_and(|r| !r.is_fault()))
        && strong;
    complete.then_some(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::Identity;

    fn file(id: u64, s: &str) -> Entry {
        Entry::File { id: Some(Identity(1, id)), bytes: s.as_bytes().to_vec() }
    }
    fn dir(id: u64, items: &[(&str, Entry)]) -> Entry {
        Entry::Dir {
            id: Some(Identity(1, id)),
            entries: items.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
        }
    }

    #[test]
    fn control_outcomes() {
        let a = Entry::Absent;
        assert_eq!(classify_second(&a, Report::Success, &file(2, "B"), "B", false), Outcome::Acquired);
        assert_eq!(classify_second(&a, Report::Error, &a, "B", false), Outcome::Failed);
        assert_eq!(classify_second(&a, Report::Success, &a, "B", false), Outcome::Damaged);
        assert_eq!(classify_second(&a, Report::Error, &file(2, ""), "B", false), Outcome::Damaged);
    }

    #[test]
    fn file_target_outcomes() {
        let before = file(1, "A");
        assert_eq!(classify_second(&before, Report::Error, &before, "B", false), Outcome::Refused);
        assert_eq!(classify_second(&before, Report::Success, &file(1, "B"), "B", false), Outcome::Replaced);
        assert_eq!(classify_second(&before, Report::Success, &file(9, "B"), "B", false), Outcome::Replaced);
        assert_eq!(classify_second(&before, Report::Success, &before, "B", false), Outcome::Kept);
        assert_eq!(classify_second(&before, Report::Success, &file(1, "AB"), "B", false), Outcome::Damaged);
        assert_eq!(classify_second(&before, Report::Error, &file(1, ""), "B", false), Outcome::Damaged);
    }

    #[test]
    fn dir_target_outcomes() {
        let before = dir(5, &[("owner.A", file(6, "A"))]);
        // mkdir -p: success, only the probe's own mark was added
        let with_mark = dir(5, &[("owner.A", file(6, "A")), ("owner.B", file(7, "B"))]);
        assert_eq!(classify_second(&before, Report::Success, &with_mark, "B", true), Outcome::Kept);
        // the same picture without a mark request: the second comer's item went inside
        assert_eq!(classify_second(&before, Report::Success, &with_mark, "B", false), Outcome::Nested);
        // move into the directory
        let nested = dir(5, &[("owner.A", file(6, "A")), ("src-1", file(8, "B"))]);
        assert_eq!(classify_second(&before, Report::Success, &nested, "B", false), Outcome::Nested);
        // an empty dir replaced by a renamed dir
        let empty = dir(5, &[]);
        let replaced = dir(9, &[("owner.B", file(10, "B"))]);
        assert_eq!(classify_second(&empty, Report::Success, &replaced, "B", false), Outcome::Replaced);
        // an empty dir kept by mkdir -p
        let kept = dir(5, &[("owner.B", file(10, "B"))]);
        assert_eq!(classify_second(&empty, Report::Success, &kept, "B", true), Outcome::Kept);
        // directory emptied in place
        assert_eq!(classify_second(&before, Report::Success, &empty, "B", false), Outcome::Damaged);
    }

    #[test]
    fn faults_pass_through() {
        let a = file(1, "A");
        assert_eq!(classify_second(&a, Report::Timeout, &a, "B", false), Outcome::Timeout);
        assert_eq!(classify_second(&a, Report::Crashed, &a, "B", false), Outcome::Crashed);
        assert_eq!(classify_second(&a, Report::Prompted, &a, "B", false), Outcome::Prompted);
        assert_eq!(classify_second(&a, Report::Unsupported, &a, "B", false), Outcome::Unsupported);
    }

    fn trial(reports: &[Report], held: &[bool], t0: &[f64]) -> Trial {
        Trial {
            reports: reports.to_vec(),
            held: held.to_vec(),
            t0_us: t0.iter().map(|&x| Some(x)).collect(),
            offset_us: 0,
        }
    }
    use Report::{Error as E, Success as S};

    #[test]
    fn race_verdicts() {
        let ex = vec![trial(&[S, E, E], &[true, false, false], &[0.0, 5.0, 10.0]); 4];
        let s = summarize_race(3, &ex);
        assert_eq!(s.verdict, RaceVerdict::Exclusive);
        assert_eq!(s.stats.winners.get(&1), Some(&4));
        assert_eq!(s.stats.barrier_spread_us.unwrap().p50, 10.0);
        assert_eq!(s.stats.wins_by_contender, vec![4, 0, 0]);

        let mut mw = ex.clone();
        mw.push(trial(&[S, S, E], &[false, true, false], &[0.0, 1.0, 2.0]));
        let s = summarize_race(3, &mw);
        assert_eq!(s.verdict, RaceVerdict::MultipleWinners);
        assert_eq!((s.stats.multi_winner_trials, s.stats.max_winners, s.stats.lost_update_trials), (1, 2, 1));

        let lost = vec![trial(&[S, E, E], &[false, true, false], &[0.0, 1.0, 2.0])];
        assert_eq!(summarize_race(3, &lost).verdict, RaceVerdict::LostUpdate);
        let none = vec![trial(&[E, E, E], &[false, false, false], &[0.0, 1.0, 2.0])];
        assert_eq!(summarize_race(3, &none).verdict, RaceVerdict::NoWinner);
        let fault = vec![trial(&[S, Report::Timeout, E], &[true, false, false], &[0.0, 1.0, 2.0])];
        assert_eq!(summarize_race(3, &fault).verdict, RaceVerdict::Inconclusive);
        let prompted = vec![trial(&[S, S, Report::Prompted], &[false, true, false], &[0.0, 1.0, 2.0])];
        assert_eq!(summarize_race(3, &prompted).verdict, RaceVerdict::Inconclusive);
        assert_eq!(summarize_race(3, &[]).verdict, RaceVerdict::Inconclusive);
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let mut v: Vec<f64> = (1..=100).map(f64::from).collect();
        let s = spread(&mut v).unwrap();
        assert_eq!((s.p50, s.p99, s.max), (50.0, 99.0, 100.0));
        assert!(spread(&mut []).is_none());
    }

    fn ev(verdict: RaceVerdict, clean: usize, control: Option<bool>) -> Option<RaceEvidence> {
        Some(RaceEvidence {
            verdict,
            clean_trials: clean,
            upper95: crate::stats::upper95(0, clean),
            control_worked: control,
        })
    }

    #[test]
    fn safe_as_lock_needs_everything() {
        let all = |o: Outcome| -> Vec<(String, Outcome, Option<Outcome>)> {
            ALL_TARGETS
                .iter()
                .map(|t| {
                    let x = if *t == "absent" { Outcome::Acquired } else { o };
                    (t.to_string(), x, Some(x))
                })
                .collect()
        };
        let good = all(Outcome::Refused);
        let ex = |n| ev(RaceVerdict::Exclusive, n, Some(true));
        assert_eq!(safe_as_lock(&good, ex(200)), Some(true));
        assert_eq!(safe_as_lock(&good, ex(100)), Some(true), "0/100 bounds the rate at 2.95%");
        assert_eq!(safe_as_lock(&good, ex(99)), None, "too few trials: bound above 3%");
        assert_eq!(safe_as_lock(&good, ev(RaceVerdict::Exclusive, 200, Some(false))), None, "weak race");
        assert_eq!(safe_as_lock(&good, ev(RaceVerdict::Exclusive, 200, None)), None, "no control");
        assert_eq!(safe_as_lock(&good, ev(RaceVerdict::MultipleWinners, 200, Some(true))), Some(false));
        assert_eq!(safe_as_lock(&good, ev(RaceVerdict::MultipleWinners, 200, Some(false))), Some(false));
        assert_eq!(safe_as_lock(&good, None), None);
        assert_eq!(safe_as_lock(&good[..2], ex(200)), None, "targets missing");
        assert_eq!(safe_as_lock(&all(Outcome::Replaced), ex(200)), Some(false));
        let mut rel = good.clone();
        rel[3].2 = Some(Outcome::Kept);
        assert_eq!(safe_as_lock(&rel, ex(200)), Some(false), "relative disagrees");
        let mut faulty = good.clone();
        faulty[1].1 = Outcome::Timeout;
        assert_eq!(safe_as_lock(&faulty, ex(200)), None);
        let no_relative: Vec<_> = good.iter().map(|(t, a, _)| (t.clone(), *a, None)).collect();
        assert_eq!(safe_as_lock(&no_relative, ex(200)), None, "--no-relative: relative paths not measured");
    }

    #[test]
    fn a_failure_in_either_mode_decides() {
        use RaceVerdict::{Exclusive as X, Inconclusive as I, MultipleWinners as M};
        assert_eq!(decide(Some(X), Some(M)), (M, RaceMode::Amplified));
        assert_eq!(decide(Some(M), Some(X)), (M, RaceMode::Natural));
        assert_eq!(decide(Some(X), Some(X)), (X, RaceMode::Amplified));
        assert_eq!(decide(Some(X), Some(I)), (I, RaceMode::Amplified), "a broken amplified race is not a pass");
        assert_eq!(decide(Some(X), None), (X, RaceMode::Natural));
        assert_eq!(decide(None, None).0, I);
    }

    #[test]
    fn a_weak_control_makes_exclusive_inconclusive() {
        let weak = Detection::judge("c", Some((50, 100, 0)), Some((84, 100, 0)));
        assert!(!weak.worked, "84/100 is significantly below 90%");
        assert_eq!(weak.mode, RaceMode::Amplified);
        let (v, why) = apply_control(RaceVerdict::Exclusive, Some(&weak));
        assert_eq!(v, RaceVerdict::Inconclusive);
        assert_eq!(why.unwrap(), "weak race: control caught 84/100 (amplified)");
        assert_eq!(apply_control(RaceVerdict::MultipleWinners, Some(&weak)).0, RaceVerdict::MultipleWinners);
        assert!(Detection::judge("c", Some((0, 100, 0)), Some((86, 100, 0))).worked, "86/100: noise around 90%");
        assert!(Detection::judge("c", None, Some((17, 20, 0))).worked, "17/20 is not significantly below 90%");
        assert!(!Detection::judge("c", None, Some((15, 20, 0))).worked);
        assert!(Detection::judge("c", Some((14, 100, 150)), None).worked, "natural: 14/100 vs 20%, p = 0.08");
        assert!(!Detection::judge("c", Some((12, 100, 0)), None).worked);
        assert!(!Detection::judge("c", None, None).worked);
        let lucky = Detection::judge("c", None, Some((1, 1, 0)));
        assert!(!lucky.worked, "1/1 is luck, not power");
        assert!(lucky.describe().contains("fewer than 20 trials"), "{}", lucky.describe());
        let ok = Detection::judge("c", None, Some((100, 100, 500)));
        assert_eq!(ok.describe(), "control caught 100/100 (amplified, +500 µs)");
        assert_eq!(apply_control(RaceVerdict::Exclusive, Some(&ok)), (RaceVerdict::Exclusive, None));
    }

    #[test]
    fn race_stats_carry_their_bounds() {
        let ex = vec![trial(&[S, E, E], &[true, false, false], &[0.0, 5.0, 10.0]); 200];
        let s = summarize_race(3, &ex).stats;
        assert_eq!(s.clean_trials, 200);
        assert!((s.multi_winner_upper95 - 0.014_866).abs() < 1e-5);
        assert!(s.multi_winner_ci95.is_none());
        let mut mw = ex.clone();
        mw.truncate(95);
        mw.extend(vec![trial(&[S, S, E], &[false, true, false], &[0.0, 1.0, 2.0]); 5]);
        let s = summarize_race(3, &mw).stats;
        let [lo, hi] = s.multi_winner_ci95.unwrap();
        assert!((lo - 0.016_431).abs() < 1e-5 && (hi - 0.112_835).abs() < 1e-5, "{lo} {hi}");
    }

    #[test]
    fn orderings_are_summarised_apart_and_spreads_net_of_offsets() {
        let mut lockstep = vec![trial(&[S, E, E], &[true, false, false], &[0.0, 5.0, 10.0]); 4];
        let mut staggered = trial(&[S, S, E], &[false, true, false], &[0.0, 1005.0, 2010.0]);
        staggered.offset_us = 1000;
        assert_eq!(staggered.spread_us(), Some(10.0), "the planned 1000 µs steps are not spread");
        lockstep.push(staggered.clone());
        lockstep.push(staggered);
        let o = summarize_orderings(3, &lockstep);
        assert_eq!(o.iter().map(|x| x.offset_us).collect::<Vec<_>>(), vec![0, 1000]);
        assert_eq!(o[0].summary.verdict, RaceVerdict::Exclusive);
        assert_eq!(o[1].summary.verdict, RaceVerdict::MultipleWinners);
        assert_eq!(strongest_ordering(RaceVerdict::MultipleWinners, &o), Some(1));
        assert_eq!(strongest_ordering(RaceVerdict::Exclusive, &o), None);
        // the whole run: one failing ordering decides, and every trial counts towards the bound
        let all = summarize_race(3, &lockstep);
        assert_eq!(all.verdict, RaceVerdict::MultipleWinners);
        assert_eq!(all.stats.barrier_spread_us.unwrap().max, 10.0);
    }
}

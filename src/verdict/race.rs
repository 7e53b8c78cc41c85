//! The race judge: trials (who reported success, whose token the target holds, when each
//! contender entered its call) → a verdict with its counts, bounds and release orderings; and
//! a cell's verdict from its natural and amplified runs.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{RaceMode, RaceVerdict, Report};
use crate::snapshot::{Entry, Identity};

/// What the harness observed in one race trial.
#[derive(Debug, Clone, PartialEq)]
pub struct Trial {
    /// Per contender: its report.
    pub reports: Vec<Report>,
    /// Per contender: whether the target held its token afterwards.
    pub held: Vec<bool>,
    /// Per contender: the time it entered the call, in microseconds on the harness's timeline
    /// (the probes' stamps placed on one clock, [`crate::exec::clock`]), if known.
    pub t0_us: Vec<Option<f64>>,
    /// The planned release offset: contender `i` was released `i × offset_us` µs after
    /// contender 0 (0 = all together).
    pub offset_us: u64,
    /// Per contender whose call takes something only while it holds a handle (a `holds`
    /// variant, e.g. `FileShare.None`): when it held it, `[t1, t1 + hold]` in µs (probe clock:
    /// from its call's return through the hold). `None` for calls whose effect stays (a created
    /// name), or where a stamp is missing.
    pub held_during_us: Vec<Option<(f64, f64)>>,
    /// Why a contender's stamp is missing from `t0_us`, when one is (the first such reason).
    pub unstamped: Option<String>,
    /// Per contender: whether the entry at the name afterwards is the very object the
    /// contender was given as its source ([`placed_by`]: a moved directory keeps its
    /// identity). Empty where no source's identity was read (then no contender counts as
    /// having placed its source).
    pub placed: Vec<bool>,
}

impl Trial {
    /// The number of winners that held at the same time: the successes, except that two
    /// successes of handle-holding calls whose holds did not overlap are one after the other
    /// (the second took the handle after the first let it go), not two winners. Where any
    /// success has no hold interval, every success counts.
    pub fn concurrent_winners(&self) -> usize {
        let wins: Vec<usize> = (0..self.reports.len()).filter(|&k| self.reports[k] == Report::Success).collect();
        let spans: Option<Vec<(f64, f64)>> =
            wins.iter().map(|&k| self.held_during_us.get(k).copied().flatten()).collect();
        let Some(mut spans) = spans.filter(|s| !s.is_empty()) else { return wins.len() };
        // most intervals open at one instant: sweep starts in order, closing those ended before
        spans.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (mut best, mut open): (usize, Vec<f64>) = (0, Vec::new());
        for (start, end) in spans {
            open.retain(|&e| e > start);
            open.push(end);
            best = best.max(open.len());
        }
        best
    }

    /// The winner whose effect should stand among `wins` (the successes), given the trial's
    /// [`Trial::concurrent_winners`]: for handle-holding calls whose holds did not overlap, the
    /// last to take the handle (by its call's return); `None` otherwise.
    fn last_sequential_winner(&self, wins: &[usize], concurrent: usize) -> Option<usize> {
        if wins.len() < 2 || concurrent > 1 {
            return None;
        }
        wins.iter().copied().max_by(|&a, &b| {
            let at = |k: usize| self.held_during_us.get(k).copied().flatten().map_or(0.0, |s| s.0);
            at(a).total_cmp(&at(b))
        })
    }

    /// The release spread of this trial net of the planned offsets (see [`entry_spread_us`]).
    pub fn spread_us(&self) -> Option<f64> {
        entry_spread_us(&self.t0_us, self.offset_us)
    }

    /// The contenders whose doing a failed trial was, from what they reported and what stands
    /// at the name: `wins` are the successes, `failed` whether the trial failed (two winners at
    /// once, a lost update, or no winner). Empty when it did not fail.
    ///
    /// Where two or more contenders reported success and the name holds one winner's own
    /// entry — the very source it was given (its identity), else its token alone among the
    /// winners' — that winner replaced what another had already taken: a call that refuses a
    /// taken name (every call raced against another party's refused one as a second comer,
    /// [`crate::against`]) cannot have succeeded after that entry was in place. Otherwise
    /// (no winner, one winner whose effect was lost, or no single winner's entry standing)
    /// every winner and every contender whose token stands without a success is counted.
    pub fn to_blame(&self, wins: &[usize], failed: bool) -> Vec<usize> {
        if !failed {
            return Vec::new();
        }
        if wins.is_empty() {
            return (0..self.reports.len()).collect();
        }
        if wins.len() >= 2 {
            let flag = |v: &[bool], k: usize| v.get(k).copied().unwrap_or(false);
            let placed: Vec<usize> = wins.iter().copied().filter(|&k| flag(&self.placed, k)).collect();
            let holding: Vec<usize> = wins.iter().copied().filter(|&k| flag(&self.held, k)).collect();
            for standing in [placed, holding] {
                if let [one] = standing[..] {
                    return vec![one];
                }
            }
        }
        let foreign = (0..self.held.len()).filter(|&k| self.held[k] && self.reports.get(k) != Some(&Report::Success));
        let mut out: Vec<usize> = wins.iter().copied().chain(foreign).collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// Per contender, whether `after` (the entry at the name after a trial) is the very object
/// the contender was given as its source (`sources[i]`, its identity read before the release;
/// `None` where the source has none recorded: [`crate::exec::scratch::source_identity`]).
pub fn placed_by(after: &Entry, sources: &[Option<Identity>]) -> Vec<bool> {
    sources.iter().map(|s| s.is_some_and(|id| after.is_object(id))).collect()
}

/// Per contender, whether the target `after` a trial is its ([`Entry::owned_by`]): it holds
/// the contender's token (a file's content, a directory's mark), or it is the very directory
/// the contender was given as its source (`sources[i]`, its identity read from the disk before
/// the release). An empty directory carries no token: without its identity, a contender that
/// moved one would look like a winner whose effect was lost.
pub fn held_by(after: &Entry, tokens: &[&str], sources: &[Option<Identity>]) -> Vec<bool> {
    tokens.iter().enumerate().map(|(i, tok)| after.owned_by(tok, sources.get(i).copied().flatten())).collect()
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
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Spread {
    /// Median spread (µs) between the first and last contender entering the call.
    pub p50: f64,
    /// 99th percentile (µs).
    pub p99: f64,
    /// Largest (µs).
    pub max: f64,
}

/// The counts behind a race verdict (`results.json` keeps them flat in the race cell).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RaceStats {
    /// Contenders per trial.
    pub contenders: usize,
    /// Trials completed (including faulty ones).
    pub trials: usize,
    /// Number of successes in a trial → number of trials with that count (keys are decimal strings in JSON).
    #[serde(with = "count_keys")]
    #[schemars(with = "BTreeMap<String, usize>")]
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
    /// Per contender slot, the failed trials (two winners, a lost update, no winner) that were
    /// its doing ([`Trial::to_blame`]): a winner whose own entry replaced another winner's is
    /// counted alone. Empty when no trial failed, and in files written before it existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures_by_contender: Vec<usize>,
    /// Barrier spread, over the trials whose stamps are sound (see `barrier_spread_unmeasured`).
    pub barrier_spread_us: Option<Spread>,
    /// Why some trials without a fault have no barrier spread, `"<n> of <T> trials: <reason>"`
    /// with the first reason met (a probe without stamps, or stamps that cannot be right:
    /// [`crate::exec::clock::place`]); `None` when every such trial has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub barrier_spread_unmeasured: Option<String>,
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
    /// True when some trial failed: two winners at once, a lost update, or no winner.
    pub fn failed(&self) -> bool {
        self.multi_winner_trials + self.lost_update_trials + self.no_winner_trials > 0
    }

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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    let (mut blamed, mut any_failed) = (vec![0usize; contenders], false);
    let mut spreads = Vec::new();
    let (mut unmeasured, mut why) = (0usize, None::<String>);
    let mut prompted = false;
    for t in trials {
        prompted |= t.reports.contains(&Report::Prompted);
        let wins: Vec<usize> = (0..t.reports.len()).filter(|&k| t.reports[k] == Report::Success).collect();
        let faulty = t.reports.iter().any(|r| matches!(r, Report::Timeout | Report::Crashed | Report::Prompted));
        let concurrent = t.concurrent_winners();
        *winners.entry(concurrent).or_insert(0) += 1;
        max_w = max_w.max(concurrent);
        for &k in &wins {
            if k < by.len() {
                by[k] += 1;
            }
        }
        if concurrent >= 2 {
            multi += 1;
        }
        // handle holders one after the other: only the last one's effect is expected to stand
        let standing: Vec<usize> =
            t.last_sequential_winner(&wins, concurrent).map_or_else(|| wins.clone(), |k| vec![k]);
        let winner_lost = standing.iter().any(|&k| !t.held.get(k).copied().unwrap_or(false));
        let foreign = (0..t.held.len()).any(|k| t.held[k] && t.reports.get(k) != Some(&Report::Success));
        let lost_here = !wins.is_empty() && (winner_lost || foreign);
        if lost_here {
            lost += 1;
        }
        let clean_none = wins.is_empty() && !faulty;
        for k in t.to_blame(&wins, concurrent >= 2 || lost_here || clean_none) {
            if k < blamed.len() {
                blamed[k] += 1;
                any_failed = true;
            }
        }
        if faulty {
            faults += 1;
        } else if wins.is_empty() {
            none += 1;
        }
        match t.spread_us() {
            Some(s) => spreads.push(s),
            // a faulty trial has no spread to speak of (a contender never answered)
            None if faulty => {}
            None => {
                unmeasured += 1;
                if why.is_none() {
                    why.clone_from(&t.unstamped);
                }
            }
        }
    }
    let barrier_spread_unmeasured = (unmeasured > 0).then(|| {
        let why = why.unwrap_or_else(|| "fewer than two contenders gave stamps".into());
        format!("{unmeasured} of {} trials: {why}", trials.len())
    });
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
            failures_by_contender: if any_failed { blamed } else { Vec::new() },
            barrier_spread_us: spread(&mut spreads),
            barrier_spread_unmeasured,
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

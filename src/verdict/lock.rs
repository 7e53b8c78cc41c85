//! The "safe as a lock" judge: a variant's second-comer outcomes and race evidence together.

use super::{is_disproof, Outcome, RaceVerdict};
use crate::domain::TargetState;

/// Fewest clean race trials from which `exclusive` may count towards "safe as a lock"
/// (the glossary's rule; with fewer, the bound below cannot be reached anyway).
pub const MIN_TRIALS_FOR_SAFE: usize = 100;

/// Largest one-sided 95% upper bound on the multi-winner rate with which `exclusive` counts
/// towards "safe as a lock": 3% per trial (≈ 100 clean trials).
pub const MAX_BOUND_FOR_SAFE: f64 = 0.03;

/// The target states that must all have been measured, with absolute and relative paths,
/// before a variant can be called safe: the control and the three a first comer can leave.
pub const LOCK_TARGETS: [TargetState; 4] =
    [TargetState::Absent, TargetState::File, TargetState::EmptyDir, TargetState::Dir];

/// One second comer as "safe as a lock" weighs it: the target state, the outcome with an
/// absolute path and the outcome with a relative one (`None` where it was not attempted).
pub type SecondComer = (TargetState, Outcome, Option<Outcome>);

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
    /// True when the race was asked to run amplified where amplification works, but the
    /// family's probes broke under the tracer ([`crate::domain::NoAmplified::Broke`]): its
    /// natural race alone cannot make the row safe (PowerShell's `Rename-Item -Force` raced
    /// two winners in 9 of 20 amplified trials in one baseline and none in 100 natural ones
    /// in the next, where its probes did not start under strace).
    pub amplified_broke: bool,
}

/// "Safe as a lock" (the glossary): the control acquired, every other target state refused
/// with absolute and relative paths alike, and the race (amplified where it ran) `exclusive`
/// with its bound ≤ [`MAX_BOUND_FOR_SAFE`] over ≥ [`MIN_TRIALS_FOR_SAFE`] clean trials, in a
/// run whose detection control worked, and not left natural by probes that broke under the
/// tracer ([`RaceEvidence::amplified_broke`]).
///
/// Takes one `(target, absolute outcome, relative outcome)` per second-comer cell (`None`
/// where the relative attempt was not made, e.g. `--no-relative`) and the race evidence.
/// Returns `Some(false)` as soon as any observation rules the variant out, `Some(true)` only
/// when every target state of [`LOCK_TARGETS`] was attempted both ways and a strong enough race
/// was observed, all agreeing, and `None` otherwise (incomplete, faulty, weak race).
pub fn safe_as_lock(second: &[SecondComer], race: Option<RaceEvidence>) -> Option<bool> {
    let bad_second = second_rules_out(second);
    let bad_race = race.is_some_and(|r| is_disproof(r.verdict));
    if bad_second || bad_race {
        return Some(false);
    }
    let strong = race.is_some_and(|r| exclusive_with_control(r) && bound_reached(r));
    let complete = LOCK_TARGETS.iter().all(|t| second.iter().any(|(s, _, r)| s == t && r.is_some()))
        && second.iter().all(|(_, a, r)| !a.is_fault() && r.is_some_and(|r| !r.is_fault()))
        && strong;
    complete.then_some(true)
}

/// True when any second comer of `second`, with an absolute or a relative path, rules the
/// variant out ([`wrong_second`]): [`safe_as_lock`] is then `Some(false)` whatever a race shows.
pub fn second_rules_out(second: &[SecondComer]) -> bool {
    second.iter().any(|(t, a, r)| wrong_second(*t, *a) || r.is_some_and(|r| wrong_second(*t, r)))
}

/// Under [`RaceScope::Auto`](crate::domain::RaceScope::Auto): whether a row whose second comers gave `second` (target,
/// absolute outcome, relative outcome) still needs its race. False once one of them rules the
/// row out as a lock ([`second_rules_out`]: the row's answer is `no` whatever a race shows);
/// true otherwise, also when no second comer ran or they faulted.
pub fn needs_race(second: &[SecondComer]) -> bool {
    !second_rules_out(second)
}

/// True when a second comer's `outcome` against `target` rules a variant out of "safe as a
/// lock": anything but `acquired` on `absent`, anything but `refused` on a taken name; faults
/// (timeout, crashed, unsupported, harness error) rule nothing out.
pub fn wrong_second(target: TargetState, outcome: Outcome) -> bool {
    !outcome.is_fault()
        && if target == TargetState::Absent { outcome != Outcome::Acquired } else { outcome != Outcome::Refused }
}

/// An `exclusive` race in a run whose detection control worked, amplified where it was asked
/// to be (its probes did not break under the tracer).
fn exclusive_with_control(r: RaceEvidence) -> bool {
    r.verdict == RaceVerdict::Exclusive && r.control_worked == Some(true) && !r.amplified_broke
}

/// Enough clean trials, and a bound low enough, for "safe as a lock".
fn bound_reached(r: RaceEvidence) -> bool {
    r.clean_trials >= MIN_TRIALS_FOR_SAFE && r.upper95 <= MAX_BOUND_FOR_SAFE
}

/// The measurement a run left out that keeps [`safe_as_lock`] undetermined.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum LeftOut {
    /// A target state of [`LOCK_TARGETS`] was not attempted (`--target`).
    Targets,
    /// A second comer was not repeated with a relative path (`--no-relative`).
    Relative,
    /// The variant was not raced.
    Race,
    /// The race was `exclusive` with a working control, but over too few clean trials for the
    /// bound (`-n`).
    Trials,
}

/// Why [`safe_as_lock`] (same inputs) is `None` when the cause is a measurement the run left
/// out, checked in the order of [`LeftOut`]'s variants; `None` when the verdict is determined
/// or undetermined for another reason (a fault, a weak race).
pub fn left_out_for_lock(second: &[SecondComer], race: Option<RaceEvidence>) -> Option<LeftOut> {
    if safe_as_lock(second, race).is_some() {
        return None;
    }
    if !LOCK_TARGETS.iter().all(|t| second.iter().any(|(s, _, _)| s == t)) {
        return Some(LeftOut::Targets);
    }
    // an attempt that faulted (a probe that never said hello, a timeout) was not repeated
    // with a relative path because it failed, not because the run left the repeat out
    if second.iter().any(|(_, a, r)| r.is_none() && !a.is_fault()) {
        return Some(LeftOut::Relative);
    }
    match race {
        None => Some(LeftOut::Race),
        Some(r) if exclusive_with_control(r) && !bound_reached(r) => Some(LeftOut::Trials),
        Some(_) => None,
    }
}

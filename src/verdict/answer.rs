//! The answer per call: may a person use this call (variant) to take a name exclusively?
//!
//! A call is measured in one row per source kind it takes (`sources` in its matrix); each row
//! is judged "safe as a lock" by [`safe_as_lock`]. The answer combines them
//! (`docs/GLOSSARY.md`, "answer"):
//!
//! - `yes`: every row the run measured is safe as a lock;
//! - `no`: at least one row fails (a second comer that was not refused, a race that was not
//!   exclusive), with the first failure of each failing row; where other rows are safe, the
//!   source kinds with which the call held are its *condition* (`no`, yet safe with a `dir`
//!   source): never a bare `yes`;
//! - `undetermined`: no row fails but at least one is not settled, with why
//!   ([`Unsettled`]): a measurement the run left out (and so the flag that makes it), a fault,
//!   a call the runtime does not have, or a race too weak to tell.
//!
//! A row whose control *failed* (the call could not take a free name with that source kind:
//! `File.Move` given a directory) is *not applicable*: the call fails loudly there and cannot be
//! misused that way, so the answer rests on the other rows and names the kinds it is limited
//! to. When every row is so, the call cannot take a name at all: `no`.
//!
//! Thresholds live in [`super::lock`] only; this module adds none.

use serde::{Deserialize, Serialize};

use super::lock::{left_out_for_lock, safe_as_lock, wrong_second, LeftOut, RaceEvidence, SecondComer};
use super::{is_disproof, Outcome, RaceVerdict};
use crate::domain::TargetState;
use crate::matrix::SourceKind;

/// One row of a call: the source kind it was measured with (`None`: the call's own, first,
/// kind) and the inputs of [`safe_as_lock`].
#[derive(Debug, Clone, PartialEq)]
pub struct RowInput {
    /// The source kind, `None` for the call's own.
    pub source: Option<SourceKind>,
    /// Second comers: target, absolute outcome, relative outcome.
    pub second: Vec<SecondComer>,
    /// The race evidence, `None` where the row was not raced.
    pub race: Option<RaceEvidence>,
}

/// The verdict of an [`Answer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AnswerVerdict {
    /// Safe as a lock in every measured row.
    Yes,
    /// Fails in at least one measured row.
    No,
    /// Neither: see [`Unsettled`].
    Undetermined,
}

impl AnswerVerdict {
    /// The word: `yes`, `no`, `undetermined`.
    pub fn as_str(self) -> &'static str {
        match self {
            AnswerVerdict::Yes => "yes",
            AnswerVerdict::No => "no",
            AnswerVerdict::Undetermined => "undetermined",
        }
    }
}

/// The first observation that rules a row out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Failure {
    /// A second comer's outcome: anything but `acquired` on `absent`, anything but `refused`
    /// on a taken name.
    Second {
        /// The target state the second comer met.
        target: TargetState,
        /// Its outcome.
        outcome: Outcome,
        /// True when only the relative-path attempt showed it.
        relative: bool,
    },
    /// The race: `multiple-winners`, `lost-update` or `no-winner`.
    Race {
        /// The race verdict.
        verdict: RaceVerdict,
    },
}

/// Why an answer (or a row) is undetermined, most actionable first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Unsettled {
    /// The run left out a measurement that would settle it ([`LeftOut`]: a flag names it).
    LeftOut(LeftOut),
    /// The runtime does not have the call (its control was `unsupported`).
    Unsupported,
    /// A second comer timed out, crashed, or the harness failed around it.
    Fault,
    /// The race was inconclusive, or exclusive in a run whose detection control was weak.
    WeakRace,
    /// The race was exclusive natural, but its amplified run, asked for where amplification
    /// works, could not run: the family's probes did not start under the tracer, or completed
    /// no trial there ([`crate::verdict::RaceEvidence::amplified_broke`]).
    AmplifiedBroke,
    /// A hand-off recipe that lost nothing where its scenario's anti-patterns, measured on the
    /// same runtime in the same run, lost nothing either: the run did not reach the window the
    /// recipe guards ([`crate::verdict::recipe::controlled`]).
    WeakControl,
    /// An anti-pattern recipe that lost nothing in this run: never a recipe to use, and not
    /// shown to fail here ([`crate::verdict::recipe::controlled`]).
    AntiPatternHeld,
}

/// The answer for one call.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// yes, no or undetermined.
    pub verdict: AnswerVerdict,
    /// For `no`: each failing row's source kind and first failure, in row order.
    pub failures: Vec<(Option<SourceKind>, Failure)>,
    /// For `no`: the source kinds of the rows that were safe as a lock (the condition under
    /// which the call held); empty when none was.
    pub holds_with: Vec<Option<SourceKind>>,
    /// For `undetermined`: why, each reason once, most actionable first (every unsettled
    /// row's; a user who wants the answer must settle them all). Empty otherwise.
    pub unsettled: Vec<Unsettled>,
    /// The source kinds with which the call could not take a free name (its control
    /// `failed`), left out of the answer because other kinds could; empty when none were, or
    /// when every kind failed (then the answer is `no` with those failures).
    pub not_applicable: Vec<Option<SourceKind>>,
    /// Races against other parties' calls ([`with_against`]) that were `exclusive`: indices
    /// into the verdicts given there.
    pub holds_against: Vec<usize>,
    /// Races against other parties' calls that failed (two winners, a lost update, no
    /// winner) by this call's doing or where whose could not be told ([`Fault`]): indices
    /// into the verdicts given to [`with_against`]. A call that held against itself but fails
    /// here is `no`, with no failure of its own ([`Answer::only_against`]).
    pub fails_against: Vec<usize>,
    /// Races against other parties' calls that failed by the other call's doing alone
    /// ([`Fault::OtherCall`]: its entry replaced the one this call had taken): indices into
    /// the verdicts given to [`with_against`]. They leave the answer as it was.
    pub broken_by: Vec<usize>,
    /// Races against other parties' calls that were `exclusive` but one-sided ([`one_sided`]:
    /// one call won every trial of the deciding run), with the call that won: indices into the
    /// verdicts given to [`with_against`]. They leave the answer as it was and are not counted
    /// as held.
    pub one_sided: Vec<(usize, Winner)>,
}

impl Answer {
    /// True for a `no` that rests only on races against other parties' calls: every row of
    /// the call held against copies of itself (safe when every party uses it, or a call it
    /// held against).
    pub fn only_against(&self) -> bool {
        self.verdict == AnswerVerdict::No
            && self.failures.is_empty()
            && self.unsettled.is_empty()
            && !self.fails_against.is_empty()
    }
}

/// What the measurement says of a documented promise about a taken name (the matrix's
/// `promise`, a cited claim such as "IOException: destDirName already exists"): read from the
/// answer alone, never from the promise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PromiseCheck {
    /// The call was safe as a lock against copies of itself in every measured way: the
    /// promise held.
    Held,
    /// Every second comer on a taken name was refused, but the call's race against copies of
    /// itself was not exclusive: the promise holds one caller at a time only. (A race against
    /// another party's call does not count: there the other call may be the one that broke
    /// its own promise.)
    BrokenInARace,
    /// A second comer on a taken name was not refused (replaced, kept, nested…): the promise
    /// did not hold even without a race.
    Broken,
    /// The answer is undetermined, or rests only on source kinds the call cannot use.
    Open,
}

impl PromiseCheck {
    /// The check of answer `a`: [`PromiseCheck::Broken`] when a second comer on a taken name
    /// failed, [`PromiseCheck::BrokenInARace`] when only its own races did,
    /// [`PromiseCheck::Held`] for `yes` and for a `no` only against other parties' calls,
    /// [`PromiseCheck::Open`] otherwise (a control that could not take a free name
    /// says nothing of a taken one).
    pub fn of(a: &Answer) -> PromiseCheck {
        let taken = |f: &Failure| matches!(f, Failure::Second { target, .. } if *target != TargetState::Absent);
        if a.failures.iter().any(|(_, f)| taken(f)) {
            PromiseCheck::Broken
        } else if a.failures.iter().any(|(_, f)| matches!(f, Failure::Race { .. })) {
            PromiseCheck::BrokenInARace
        } else if a.verdict == AnswerVerdict::Yes || a.only_against() {
            PromiseCheck::Held
        } else {
            PromiseCheck::Open
        }
    }

    /// `held`, `broken in a race`, `broken`, `open`.
    pub fn words(self) -> &'static str {
        match self {
            PromiseCheck::Held => "held",
            PromiseCheck::BrokenInARace => "broken in a race",
            PromiseCheck::Broken => "broken",
            PromiseCheck::Open => "open",
        }
    }
}

/// Whose doing a failed race of a call against another party's call was, as the call sees
/// it: read from the trials' observed state ([`crate::verdict::race::Trial::to_blame`],
/// [`at_fault`]), never from what the calls are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Fault {
    /// This call's: its own entry replaced the one the other call had taken (or it won where
    /// its effect was lost).
    ThisCall,
    /// The other call's alone: its entry replaced the one this call had taken.
    OtherCall,
    /// Both calls', or whose could not be told (no winner, a file written before the counts
    /// existed).
    Both,
}

impl Fault {
    /// The fault as the call on side `me` (0 or 1) of a pair sees it, from
    /// [`at_fault`]'s per-side flags; `None` when neither side failed.
    pub fn of_side(at_fault: [bool; 2], me: usize) -> Option<Fault> {
        match (at_fault[me], at_fault[1 - me]) {
            (false, false) => None,
            (true, false) => Some(Fault::ThisCall),
            (false, true) => Some(Fault::OtherCall),
            (true, true) => Some(Fault::Both),
        }
    }

    /// `this-call`, `other-call`, `both`.
    pub fn as_str(self) -> &'static str {
        match self {
            Fault::ThisCall => "this-call",
            Fault::OtherCall => "other-call",
            Fault::Both => "both",
        }
    }
}

/// Per side of a pair (`[first, second]`), whether the race's failed trials were that side's
/// doing, from each run's [`super::RaceStats::failures_by_contender`] (`runs`: the natural and the
/// amplified run's counts, where they ran), its slots mapped to sides by [`crate::against::PAIR_SLOTS`]. A run
/// that failed without that attribution (a file written before it, or counts of another
/// shape) blames both sides; so does a failure attributed to neither. `[false, false]` when
/// no run failed.
pub fn at_fault(runs: &[&super::RaceStats]) -> [bool; 2] {
    let (mut out, mut failed) = ([false, false], false);
    for r in runs.iter().filter(|r| r.failed()) {
        failed = true;
        let Some(sides) = crate::against::per_side(&r.failures_by_contender) else { return [true, true] };
        out[0] |= sides[0] > 0;
        out[1] |= sides[1] > 0;
    }
    if failed && out == [false, false] {
        return [true, true];
    }
    out
}

/// The side of a pair (`0` first, `1` second) that won every trial of run `stats` that had a
/// winner, its slots mapped to sides by [`crate::against::PAIR_SLOTS`]: `Some((side, wins))`
/// when the other side won none, `None` when both won some, none won, or the counts are not a
/// pair's. An `exclusive` pair race in which one call won every trial never saw the other call
/// take the name first, so it cannot say that the first call's window (a check before a
/// rename) was ever entered: the other call always acted after the winner had finished (a
/// rename whose check and move run in a wineserver after several milliseconds of a cmd's own
/// work, against an `O_EXCL` create that takes 100 µs). Such a race vouches for nothing.
pub fn one_sided(stats: &super::RaceStats) -> Option<(usize, usize)> {
    match crate::against::per_side(&stats.wins_by_contender)? {
        [0, 0] => None,
        [n, 0] => Some((0, n)),
        [0, n] => Some((1, n)),
        _ => None,
    }
}

/// Which call of a pair won every trial of a one-sided race ([`one_sided`]), as the call
/// whose answer it is sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Winner {
    /// The call whose answer it is.
    ThisCall,
    /// The other party's call.
    OtherCall,
}

/// One race of a call against another party's call, as [`with_against`] takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgainstInput {
    /// The pair race's verdict.
    pub verdict: RaceVerdict,
    /// For a failure, whose doing it was (`None` reads as [`Fault::Both`]).
    pub fault: Option<Fault>,
    /// For an `exclusive` race whose deciding run one side won alone ([`one_sided`]): which.
    pub one_sided: Option<Winner>,
}

/// `a` with the races of the call against other parties' calls ([`crate::against`]), each
/// its verdict and, for a failure, whose doing it was (`None` reads as [`Fault::Both`]), in a
/// fixed order: `exclusive` ones go to [`Answer::holds_against`]; failures
/// (`multiple-winners`, `lost-update`, `no-winner`) by the other call alone to
/// [`Answer::broken_by`], leaving the answer as it was (the call took the name and the other
/// party's call replaced it: that call is the one to avoid); other failures to
/// [`Answer::fails_against`], and they make the answer `no` (a lock is only as good as the
/// call the other party uses; an undetermined call keeps what left it open in
/// [`Answer::unsettled`]). An `exclusive` race one side won alone ([`one_sided`]) goes to
/// [`Answer::one_sided`], not to `holds_against`: it vouches for nothing. Inconclusive races,
/// faults and unsupported ones change nothing.
pub fn with_against(mut a: Answer, races: &[AgainstInput]) -> Answer {
    for (i, r) in races.iter().enumerate() {
        match (r.verdict, r.one_sided) {
            (RaceVerdict::Exclusive, Some(mine)) => a.one_sided.push((i, mine)),
            (RaceVerdict::Exclusive, None) => a.holds_against.push(i),
            (v, _) if is_disproof(v) && r.fault == Some(Fault::OtherCall) => a.broken_by.push(i),
            (v, _) if is_disproof(v) => a.fails_against.push(i),
            _ => {}
        }
    }
    if !a.fails_against.is_empty() {
        a.verdict = AnswerVerdict::No;
    }
    a
}

/// The first observation in `second` (target order, absolute before relative) or `race` that
/// rules the row out, `None` when none does. Agrees with [`safe_as_lock`]: `Some` exactly when
/// it returns `Some(false)`.
pub fn first_failure(second: &[SecondComer], race: Option<RaceEvidence>) -> Option<Failure> {
    let mut sorted: Vec<&SecondComer> = second.iter().collect();
    sorted.sort_by_key(|(t, _, _)| *t);
    for (t, a, r) in sorted {
        if wrong_second(*t, *a) {
            return Some(Failure::Second { target: *t, outcome: *a, relative: false });
        }
        if let Some(r) = r.filter(|r| wrong_second(*t, *r)) {
            return Some(Failure::Second { target: *t, outcome: r, relative: true });
        }
    }
    race.filter(|r| is_disproof(r.verdict)).map(|r| Failure::Race { verdict: r.verdict })
}

/// Why a row that is neither safe nor failing is undetermined.
/// A call the runtime does not have is that, whatever else the run left out.
fn unsettled(row: &RowInput) -> Unsettled {
    let control = row.second.iter().find(|(t, _, _)| *t == TargetState::Absent);
    if control.is_some_and(|(_, a, _)| *a == Outcome::Unsupported) {
        return Unsettled::Unsupported;
    }
    if let Some(l) = left_out_for_lock(&row.second, row.race) {
        return Unsettled::LeftOut(l);
    }
    if row.second.iter().any(|(_, a, r)| a.is_fault() || r.is_some_and(|r| r.is_fault())) {
        return Unsettled::Fault;
    }
    if row.race.is_some_and(|r| r.amplified_broke && r.verdict == RaceVerdict::Exclusive) {
        return Unsettled::AmplifiedBroke;
    }
    Unsettled::WeakRace
}

/// The answer for a call measured in `rows` (one per source kind, in the matrix's order).
/// No rows at all is `undetermined` (the call was not measured: [`LeftOut::Race`]).
pub fn answer(rows: &[RowInput]) -> Answer {
    let mut failures = Vec::new();
    let mut holds_with = Vec::new();
    let mut open: Vec<Unsettled> = Vec::new();
    let control_failed =
        |row: &&RowInput| row.second.iter().any(|(t, a, _)| *t == TargetState::Absent && *a == Outcome::Failed);
    let not_applicable: Vec<Option<SourceKind>> = if rows.iter().all(|r| control_failed(&r)) {
        Vec::new()
    } else {
        rows.iter().filter(control_failed).map(|r| r.source).collect()
    };
    for row in rows.iter().filter(|r| !not_applicable.contains(&r.source)) {
        match safe_as_lock(&row.second, row.race) {
            Some(true) => holds_with.push(row.source),
            Some(false) => {
                let f = first_failure(&row.second, row.race).expect("safe_as_lock(..) == Some(false) has a failure");
                failures.push((row.source, f));
            }
            None => open.push(unsettled(row)),
        }
    }
    if !failures.is_empty() {
        return Answer {
            verdict: AnswerVerdict::No,
            failures,
            holds_with,
            unsettled: Vec::new(),
            not_applicable,
            holds_against: Vec::new(),
            fails_against: Vec::new(),
            broken_by: Vec::new(),
            one_sided: Vec::new(),
        };
    }
    if rows.is_empty() {
        return Answer {
            verdict: AnswerVerdict::Undetermined,
            failures,
            holds_with,
            unsettled: vec![Unsettled::LeftOut(LeftOut::Race)],
            not_applicable,
            holds_against: Vec::new(),
            fails_against: Vec::new(),
            broken_by: Vec::new(),
            one_sided: Vec::new(),
        };
    }
    open.sort();
    open.dedup();
    let verdict = if open.is_empty() { AnswerVerdict::Yes } else { AnswerVerdict::Undetermined };
    Answer {
        verdict,
        failures,
        holds_with,
        unsettled: open,
        not_applicable,
        holds_against: Vec::new(),
        fails_against: Vec::new(),
        broken_by: Vec::new(),
        one_sided: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::{
        answer, at_fault, first_failure, safe_as_lock, with_against, AgainstInput, AnswerVerdict, Failure, Fault,
        LeftOut, Outcome, PromiseCheck, RaceEvidence, RaceVerdict, RowInput, SecondComer, SourceKind, TargetState,
        Unsettled, Winner,
    };
    use crate::verdict::lock::LOCK_TARGETS;
    use Outcome::*;
    use TargetState as T;

    fn clean() -> Vec<SecondComer> {
        LOCK_TARGETS
            .iter()
            .map(|&t| if t == T::Absent { (t, Acquired, Some(Acquired)) } else { (t, Refused, Some(Refused)) })
            .collect()
    }
    fn race(verdict: RaceVerdict, trials: usize, control: bool) -> Option<RaceEvidence> {
        Some(RaceEvidence {
            verdict,
            clean_trials: trials,
            upper95: 3.0 / trials as f64,
            control_worked: Some(control),
            amplified_broke: false,
        })
    }
    fn row(source: Option<SourceKind>, second: Vec<SecondComer>, race: Option<RaceEvidence>) -> RowInput {
        RowInput { source, second, race }
    }
    fn with(target: T, a: Outcome, r: Option<Outcome>) -> Vec<SecondComer> {
        clean().into_iter().map(|(t, x, y)| if t == target { (t, a, r) } else { (t, x, y) }).collect()
    }

    #[test]
    fn yes_only_when_every_row_is_safe() {
        let a = answer(&[row(None, clean(), race(RaceVerdict::Exclusive, 100, true))]);
        assert_eq!((a.verdict, a.unsettled), (AnswerVerdict::Yes, vec![]));
        assert_eq!(a.holds_with, vec![None]);
        let two = [
            row(None, clean(), race(RaceVerdict::Exclusive, 100, true)),
            row(Some(SourceKind::Dir), clean(), race(RaceVerdict::Exclusive, 200, true)),
        ];
        assert_eq!(answer(&two).verdict, AnswerVerdict::Yes);
    }

    #[test]
    fn a_failing_source_kind_makes_no_and_the_safe_ones_are_the_condition() {
        let rows = [
            row(None, clean(), race(RaceVerdict::MultipleWinners, 10, true)),
            row(Some(SourceKind::Dir), clean(), race(RaceVerdict::Exclusive, 100, true)),
        ];
        let a = answer(&rows);
        assert_eq!(a.verdict, AnswerVerdict::No);
        assert_eq!(a.failures, vec![(None, Failure::Race { verdict: RaceVerdict::MultipleWinners })]);
        assert_eq!(a.holds_with, vec![Some(SourceKind::Dir)]);
    }

    #[test]
    fn second_comer_failures_come_first_in_target_order_absolute_before_relative() {
        let s = with(T::File, Replaced, Some(Replaced));
        let a = answer(&[row(None, s, race(RaceVerdict::MultipleWinners, 10, true))]);
        assert_eq!(a.failures[0].1, Failure::Second { target: T::File, outcome: Replaced, relative: false });
        let s = with(T::Dir, Refused, Some(Nested));
        let a = answer(&[row(None, s, None)]);
        assert_eq!(a.failures, vec![(None, Failure::Second { target: T::Dir, outcome: Nested, relative: true })]);
        // the control failing to take a free name rules the call out too
        let s = with(T::Absent, Failed, Some(Failed));
        assert_eq!(
            answer(&[row(None, s, None)]).failures[0].1,
            Failure::Second { target: T::Absent, outcome: Failed, relative: false }
        );
    }

    #[test]
    fn a_failure_wins_over_an_unsettled_row() {
        let rows = [
            row(None, clean(), race(RaceVerdict::Exclusive, 30, true)),
            row(Some(SourceKind::EmptyDir), with(T::File, Kept, Some(Kept)), None),
        ];
        let a = answer(&rows);
        assert_eq!(a.verdict, AnswerVerdict::No);
        assert_eq!(a.failures.len(), 1);
        assert!(a.holds_with.is_empty(), "the exclusive row had too few trials to be safe");
    }

    #[test]
    fn undetermined_names_what_was_left_out_most_actionable_first() {
        // too few trials on one row, not raced on another: both named, in LeftOut's order
        // (targets, relative, race, trials)
        let rows = [
            row(None, clean(), race(RaceVerdict::Exclusive, 30, true)),
            row(Some(SourceKind::Dir), clean(), None),
            row(Some(SourceKind::Tree), clean(), None),
        ];
        let a = answer(&rows);
        assert_eq!(a.verdict, AnswerVerdict::Undetermined);
        assert_eq!(a.unsettled, vec![Unsettled::LeftOut(LeftOut::Race), Unsettled::LeftOut(LeftOut::Trials)]);
        let a = answer(&rows[..1]);
        assert_eq!(a.unsettled, vec![Unsettled::LeftOut(LeftOut::Trials)]);
        let no_relative: Vec<SecondComer> = clean().into_iter().map(|(t, a, _)| (t, a, None)).collect();
        let a = answer(&[row(None, no_relative, race(RaceVerdict::Exclusive, 100, true))]);
        assert_eq!(a.unsettled, vec![Unsettled::LeftOut(LeftOut::Relative)]);
        let targets: Vec<SecondComer> = clean().into_iter().filter(|(t, _, _)| *t != T::Dir).collect();
        let a = answer(&[row(None, targets, race(RaceVerdict::Exclusive, 100, true))]);
        assert_eq!(a.unsettled, vec![Unsettled::LeftOut(LeftOut::Targets)]);
        assert_eq!(answer(&[]).unsettled, vec![Unsettled::LeftOut(LeftOut::Race)]);
    }

    #[test]
    fn unsupported_faults_and_weak_races_are_undetermined_with_their_reason() {
        let unsupported: Vec<SecondComer> = LOCK_TARGETS.iter().map(|&t| (t, Unsupported, Some(Unsupported))).collect();
        let a = answer(&[row(None, unsupported, None)]);
        assert_eq!((a.verdict, a.unsettled), (AnswerVerdict::Undetermined, vec![Unsettled::Unsupported]));
        let a = answer(&[row(None, with(T::Dir, Timeout, Some(Refused)), race(RaceVerdict::Exclusive, 100, true))]);
        assert_eq!(a.unsettled, vec![Unsettled::Fault]);
        // a probe that never started: every attempt timed out and none was repeated with a
        // relative path, which is the fault's doing, not a left-out `--no-relative`
        let never: Vec<SecondComer> = LOCK_TARGETS.iter().map(|&t| (t, Timeout, None)).collect();
        let a = answer(&[row(None, never, race(RaceVerdict::Inconclusive, 0, false))]);
        assert_eq!(a.unsettled, vec![Unsettled::Fault]);
        let a = answer(&[row(None, clean(), race(RaceVerdict::Exclusive, 100, false))]);
        assert_eq!(a.unsettled, vec![Unsettled::WeakRace]);
        let a = answer(&[row(None, clean(), race(RaceVerdict::Inconclusive, 100, true))]);
        assert_eq!(a.unsettled, vec![Unsettled::WeakRace]);
    }

    #[test]
    fn a_source_kind_the_call_cannot_take_a_name_with_is_left_out_unless_all_are() {
        let failed = with(T::Absent, Failed, Some(Failed));
        let rows = [
            row(None, clean(), race(RaceVerdict::Exclusive, 100, true)),
            row(Some(SourceKind::Dir), failed.clone(), None),
        ];
        let a = answer(&rows);
        assert_eq!(a.verdict, AnswerVerdict::Yes);
        assert_eq!(a.not_applicable, vec![Some(SourceKind::Dir)]);
        let a = answer(&[row(None, failed.clone(), None), row(Some(SourceKind::Dir), failed, None)]);
        assert_eq!(a.verdict, AnswerVerdict::No);
        assert!(a.not_applicable.is_empty());
        assert_eq!(a.failures.len(), 2);
    }

    /// A race against another party's call with no fault given (a failure reads as both
    /// calls' doing).
    fn v(verdicts: &[RaceVerdict]) -> Vec<AgainstInput> {
        verdicts.iter().map(|&v| AgainstInput { verdict: v, fault: None, one_sided: None }).collect()
    }

    /// A race against another party's call whose failure was `fault`'s doing.
    fn by(verdict: RaceVerdict, fault: Fault) -> AgainstInput {
        AgainstInput { verdict, fault: Some(fault), one_sided: None }
    }

    #[test]
    fn a_failure_against_another_partys_call_turns_yes_into_no() {
        let yes = answer(&[row(None, clean(), race(RaceVerdict::Exclusive, 100, true))]);
        let races = v(&[RaceVerdict::Exclusive, RaceVerdict::MultipleWinners, RaceVerdict::Inconclusive]);
        let a = with_against(yes.clone(), &races);
        assert_eq!(a.verdict, AnswerVerdict::No);
        assert_eq!((a.holds_against.clone(), a.fails_against.clone()), (vec![0], vec![1]));
        assert!(a.only_against() && a.failures.is_empty());
        // held against every other party: still yes, with whom it held
        let a = with_against(yes.clone(), &v(&[RaceVerdict::Exclusive, RaceVerdict::Inconclusive]));
        assert_eq!((a.verdict, a.holds_against.clone()), (AnswerVerdict::Yes, vec![0]));
        assert!(!a.only_against());
        // a call that fails on its own stays `no` for its own reasons
        let no = answer(&[row(None, with(T::File, Replaced, Some(Replaced)), None)]);
        let a = with_against(no, &v(&[RaceVerdict::LostUpdate]));
        assert_eq!((a.verdict, a.fails_against.clone()), (AnswerVerdict::No, vec![0]));
        assert!(!a.only_against());
        // no race against others: the answer is the call's own
        assert_eq!(with_against(yes.clone(), &[]), yes);
        // an undetermined call that fails against another is `no`, and says what else is open
        let open = answer(&[row(None, clean(), race(RaceVerdict::Exclusive, 30, true))]);
        let a = with_against(open, &v(&[RaceVerdict::NoWinner]));
        assert_eq!((a.verdict, a.unsettled.len()), (AnswerVerdict::No, 1));
        assert!(!a.only_against(), "not all its rows held against themselves");
    }

    /// A pair race's counts over 10 trials: `multi` with two winners, the failures and wins
    /// per slot.
    fn pair_stats(multi: usize, failures: &[usize], wins: &[usize]) -> crate::verdict::RaceStats {
        crate::verdict::RaceStats {
            contenders: 3,
            trials: 10,
            winners: Default::default(),
            multi_winner_trials: multi,
            max_winners: 2,
            lost_update_trials: 0,
            no_winner_trials: 0,
            fault_trials: 0,
            wins_by_contender: wins.to_vec(),
            failures_by_contender: failures.to_vec(),
            barrier_spread_us: None,
            barrier_spread_unmeasured: None,
            clean_trials: 10,
            multi_winner_ci95: None,
            multi_winner_upper95: 0.3,
        }
    }

    /// A pair race one side won alone is one-sided ([`one_sided`]: the three slots map to two
    /// sides, first, second, first); an `exclusive` one goes apart and is not counted as held,
    /// whichever side won; a failure is a failure however lopsided the wins.
    #[test]
    fn a_one_sided_exclusive_race_against_another_call_vouches_for_nothing() {
        use super::one_sided;
        let stats = |wins: &[usize]| pair_stats(0, &[], wins);
        assert_eq!(one_sided(&stats(&[60, 0, 40])), Some((0, 100)));
        assert_eq!(one_sided(&stats(&[0, 100, 0])), Some((1, 100)));
        assert_eq!(one_sided(&stats(&[59, 1, 40])), None, "the second call won once: contested");
        assert_eq!(one_sided(&stats(&[0, 0, 0])), None, "no winner: nothing to say");
        assert_eq!(one_sided(&stats(&[3, 2])), None, "not a pair's three slots");
        let yes = answer(&[row(None, clean(), race(RaceVerdict::Exclusive, 100, true))]);
        let lopsided = |verdict, won| AgainstInput { verdict, fault: None, one_sided: Some(won) };
        let a = with_against(
            yes.clone(),
            &[
                lopsided(RaceVerdict::Exclusive, Winner::ThisCall),
                v(&[RaceVerdict::Exclusive])[0],
                lopsided(RaceVerdict::Exclusive, Winner::OtherCall),
            ],
        );
        assert_eq!(a.verdict, AnswerVerdict::Yes);
        assert_eq!(a.holds_against, vec![1]);
        assert_eq!(a.one_sided, vec![(0, Winner::ThisCall), (2, Winner::OtherCall)]);
        let a = with_against(yes, &[lopsided(RaceVerdict::MultipleWinners, Winner::ThisCall)]);
        assert_eq!((a.verdict, a.fails_against.clone(), a.one_sided.len()), (AnswerVerdict::No, vec![0], 0));
    }

    /// A failure that was the other call's doing alone (its entry replaced this call's) leaves
    /// the answer as it was and is listed apart; this call's own doing, or both calls', makes
    /// it `no`.
    #[test]
    fn a_failure_by_the_other_calls_doing_alone_leaves_the_answer() {
        let yes = answer(&[row(None, clean(), race(RaceVerdict::Exclusive, 100, true))]);
        let mw = RaceVerdict::MultipleWinners;
        let a = with_against(yes.clone(), &[v(&[RaceVerdict::Exclusive])[0], by(mw, Fault::OtherCall)]);
        assert_eq!(a.verdict, AnswerVerdict::Yes);
        assert_eq!((a.holds_against.clone(), a.broken_by.clone()), (vec![0], vec![1]));
        assert!(a.fails_against.is_empty());
        for fault in [Fault::ThisCall, Fault::Both] {
            let a = with_against(yes.clone(), &[by(mw, fault)]);
            assert_eq!((a.verdict, a.fails_against.clone()), (AnswerVerdict::No, vec![0]), "{fault:?}");
            assert!(a.broken_by.is_empty() && a.only_against());
        }
        // an `exclusive` race has no fault to read, whatever is given
        let a = with_against(yes, &[by(RaceVerdict::Exclusive, Fault::OtherCall)]);
        assert_eq!((a.verdict, a.holds_against.clone()), (AnswerVerdict::Yes, vec![0]));
        // whose fault, as each side of a pair sees it
        assert_eq!(Fault::of_side([true, false], 0), Some(Fault::ThisCall));
        assert_eq!(Fault::of_side([true, false], 1), Some(Fault::OtherCall));
        assert_eq!(Fault::of_side([true, true], 1), Some(Fault::Both));
        assert_eq!(Fault::of_side([false, false], 0), None);
    }

    /// A natural-only `exclusive` whose amplified run broke (probes that did not start under
    /// the tracer) is undetermined, not `yes`; a failure it showed still answers `no`.
    #[test]
    fn a_race_left_natural_by_a_broken_tracer_is_not_a_yes() {
        let broke = |verdict| Some(RaceEvidence { amplified_broke: true, ..race(verdict, 100, true).unwrap() });
        let a = answer(&[row(None, clean(), broke(RaceVerdict::Exclusive))]);
        assert_eq!((a.verdict, a.unsettled.clone()), (AnswerVerdict::Undetermined, vec![Unsettled::AmplifiedBroke]));
        assert_eq!(answer(&[row(None, clean(), broke(RaceVerdict::MultipleWinners))]).verdict, AnswerVerdict::No);
        assert_eq!(answer(&[row(None, clean(), race(RaceVerdict::Exclusive, 100, true))]).verdict, AnswerVerdict::Yes);
    }

    /// Whose doing a pair's failure was, per side: slots 0 and 2 are the first side, slot 1
    /// the second; a failed run without per-slot counts, or counts that blame no one, blame
    /// both; runs that did not fail say nothing.
    #[test]
    fn a_failure_is_read_per_side_from_the_slots_counts() {
        let stats = |multi: usize, by: &[usize]| pair_stats(multi, by, &[0; 3]);
        assert_eq!(at_fault(&[&stats(2, &[0, 2, 0])]), [false, true]);
        assert_eq!(at_fault(&[&stats(2, &[1, 0, 1])]), [true, false]);
        assert_eq!(at_fault(&[&stats(0, &[]), &stats(1, &[0, 0, 1])]), [true, false], "the natural run held");
        assert_eq!(at_fault(&[&stats(1, &[0, 1, 0]), &stats(1, &[1, 0, 0])]), [true, true]);
        assert_eq!(at_fault(&[&stats(1, &[])]), [true, true], "a file from before the counts");
        assert_eq!(at_fault(&[&stats(1, &[0, 0, 0])]), [true, true]);
        assert_eq!(at_fault(&[&stats(0, &[])]), [false, false]);
    }

    #[test]
    fn a_promise_is_checked_from_the_answer_alone() {
        let yes = answer(&[row(None, clean(), race(RaceVerdict::Exclusive, 100, true))]);
        assert_eq!(PromiseCheck::of(&yes), PromiseCheck::Held);
        let raced = answer(&[row(None, clean(), race(RaceVerdict::MultipleWinners, 10, true))]);
        assert_eq!(PromiseCheck::of(&raced), PromiseCheck::BrokenInARace);
        // a failure against another party's call is not this call's broken promise
        assert_eq!(PromiseCheck::of(&with_against(yes, &v(&[RaceVerdict::MultipleWinners]))), PromiseCheck::Held);
        let replaced = answer(&[row(None, with(T::File, Replaced, Some(Replaced)), None)]);
        assert_eq!(PromiseCheck::of(&replaced), PromiseCheck::Broken);
        // a call that cannot take a free name says nothing about a taken one
        let failed = answer(&[row(None, with(T::Absent, Failed, Some(Failed)), None)]);
        assert_eq!(PromiseCheck::of(&failed), PromiseCheck::Open);
        let open = answer(&[row(None, clean(), race(RaceVerdict::Exclusive, 30, true))]);
        assert_eq!(PromiseCheck::of(&open), PromiseCheck::Open);
    }

    #[test]
    fn first_failure_agrees_with_safe_as_lock() {
        let cases = [
            (clean(), race(RaceVerdict::Exclusive, 100, true)),
            (clean(), race(RaceVerdict::LostUpdate, 10, true)),
            (clean(), race(RaceVerdict::NoWinner, 10, true)),
            (with(T::EmptyDir, Damaged, Some(Damaged)), None),
            (with(T::File, Crashed, Some(Refused)), None),
            (with(T::File, Prompted, Some(Prompted)), None),
        ];
        for (s, r) in cases {
            assert_eq!(first_failure(&s, r).is_some(), safe_as_lock(&s, r) == Some(false), "{s:?} {r:?}");
        }
    }
}

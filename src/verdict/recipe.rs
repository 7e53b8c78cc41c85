//! The answer per hand-off recipe: may a person use this recipe for its hand-off?
//!
//! A recipe's cell holds one run of counters per mode (natural, and amplified where it ran);
//! its scenario names the counters that count failures, each with the counter it is out of
//! (`torn_reads` of `reads`, `duplicated` of `trials`), and those that count the probes'
//! faults. The answer (`docs/GLOSSARY.md`, "answer"):
//!
//! - `no`: some run counted a failure; every such count is kept, with its mode;
//! - `yes`: no run counted a failure, every run had something to fail (a failure counter's
//!   denominator above 0) and no probe faulted; the answer carries how many of each it held
//!   over (the bound is the reader's: 0 of *n* bounds the rate below 3/*n* at 95%);
//! - `undetermined`: nothing ran (the probe lacks the recipe: `unsupported`), or the harness
//!   failed, a probe faulted, or a run had nothing to fail (no trial, no read): `fault`.
//!
//! No count is expected: a recipe is judged only by what its runs counted.
//!
//! The lists then judge that answer against the scenario's detection control, as a race's
//! `exclusive` is judged against its family's ([`controlled`]): a scenario's anti-pattern
//! recipes (matrix data) are its control. A `yes` where the scenario's anti-patterns on the
//! same runtime lost nothing in the same run is `undetermined` (`weak-control`: the run did
//! not reach the window the recipe guards; with both cores busy, anti-patterns and right
//! recipes alike lost nothing in some runs and something in others), and an anti-pattern's
//! own `yes` is `undetermined` (`anti-pattern-held`): a trap is never called safe.

use std::collections::BTreeMap;

use super::answer::{AnswerVerdict, Unsettled};
use super::RaceMode;

/// One run of a recipe's cell: its mode, its counters, and whether the harness failed in it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecipeRun<'a> {
    /// Natural or amplified.
    pub mode: RaceMode,
    /// Counter name → count.
    pub counters: &'a BTreeMap<String, u64>,
    /// True when the harness failed during the run (its counts cover the items before).
    pub harness_error: bool,
}

/// A failure a run counted: `count` of `counter` out of `of` (the count of `out_of`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct RecipeFailure {
    /// The run that counted it.
    pub mode: RaceMode,
    /// The failure counter (`duplicated`).
    pub counter: String,
    /// Its count, above 0.
    pub count: u64,
    /// The counter it is out of (`trials`).
    pub out_of: String,
    /// That counter's count in the same run.
    pub of: u64,
}

/// The answer for one recipe on one runtime.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct RecipeAnswer {
    /// `yes`, `no` or `undetermined`.
    pub verdict: AnswerVerdict,
    /// `no`: every failure counted, in run order then the scenario's counter order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<RecipeFailure>,
    /// `yes`: what it held over, summed over its runs: the denominator of the scenario's first
    /// failure counter (`trials`, `reads`, `items`) and its total.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_over: Option<(String, u64)>,
    /// `undetermined`: why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsettled: Option<Unsettled>,
}

/// True when one of `runs` counted one of the `faults` counters above 0, or the harness failed
/// in it: what the answer (and `check`'s verdict) does not vouch for.
pub fn faulted(runs: &[RecipeRun<'_>], faults: &[&str]) -> bool {
    runs.iter().any(|r| r.harness_error || faults.iter().any(|k| r.counters.get(*k).is_some_and(|n| *n > 0)))
}

/// The answer for a recipe whose cell ran `runs` (none: the probe lacks it, or the cell
/// stopped before its first item), given its scenario's `failures` (counter, the counter it is
/// out of) and `faults` counters (see the module documentation).
pub fn answer_recipe(runs: &[RecipeRun<'_>], failures: &[(&str, &str)], faults: &[&str]) -> RecipeAnswer {
    let n = |r: &RecipeRun<'_>, k: &str| r.counters.get(k).copied().unwrap_or(0);
    let counted: Vec<RecipeFailure> = runs
        .iter()
        .flat_map(|r| {
            failures.iter().filter(|(k, _)| n(r, k) > 0).map(move |(k, of)| RecipeFailure {
                mode: r.mode,
                counter: (*k).to_string(),
                count: n(r, k),
                out_of: (*of).to_string(),
                of: n(r, of),
            })
        })
        .collect();
    let answer = |verdict, unsettled| RecipeAnswer { verdict, failures: Vec::new(), held_over: None, unsettled };
    if !counted.is_empty() {
        return RecipeAnswer { failures: counted, ..answer(AnswerVerdict::No, None) };
    }
    if runs.is_empty() {
        return answer(AnswerVerdict::Undetermined, Some(Unsettled::Unsupported));
    }
    if faulted(runs, faults) {
        return answer(AnswerVerdict::Undetermined, Some(Unsettled::Fault));
    }
    let exercised = runs.iter().all(|r| failures.iter().any(|(_, of)| n(r, of) > 0));
    let (Some((_, of)), true) = (failures.first(), exercised) else {
        return answer(AnswerVerdict::Undetermined, Some(Unsettled::Fault));
    };
    let total = runs.iter().map(|r| n(r, of)).sum();
    RecipeAnswer { held_over: Some(((*of).to_string(), total)), ..answer(AnswerVerdict::Yes, None) }
}

/// `answer` (a recipe's own, [`answer_recipe`]) judged against its scenario's detection
/// control: `control` is whether the scenario's anti-pattern recipes measured on the same
/// runtime in the same run lost anything (`None`: none ran). A `yes` becomes `undetermined`
/// for an `anti_pattern` recipe ([`Unsettled::AntiPatternHeld`]) and where the control lost
/// nothing ([`Unsettled::WeakControl`]); `no` and `undetermined` stay.
pub fn controlled(answer: RecipeAnswer, anti_pattern: bool, control: Option<bool>) -> RecipeAnswer {
    if answer.verdict != AnswerVerdict::Yes {
        return answer;
    }
    let why = if anti_pattern {
        Unsettled::AntiPatternHeld
    } else if control == Some(false) {
        Unsettled::WeakControl
    } else {
        return answer;
    };
    RecipeAnswer { verdict: AnswerVerdict::Undetermined, held_over: None, unsettled: Some(why), ..answer }
}

#[cfg(test)]
mod tests {
    use super::{answer_recipe, controlled, RecipeRun};
    use crate::verdict::answer::{AnswerVerdict, Unsettled};
    use crate::verdict::RaceMode;
    use std::collections::BTreeMap;

    const FAILURES: [(&str, &str); 2] = [("duplicated", "trials"), ("unrecorded", "trials")];
    const FAULTS: [&str; 1] = ["worker_faults"];

    fn counts(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
        pairs.iter().map(|(k, n)| (k.to_string(), *n)).collect()
    }

    fn run(mode: RaceMode, c: &BTreeMap<String, u64>) -> RecipeRun<'_> {
        RecipeRun { mode, counters: c, harness_error: false }
    }

    #[test]
    fn a_failure_in_any_run_is_no_with_every_count_and_its_mode() {
        let clean = counts(&[("trials", 20), ("duplicated", 0), ("unrecorded", 0)]);
        let bad = counts(&[("trials", 10), ("duplicated", 6), ("unrecorded", 1)]);
        let a = answer_recipe(&[run(RaceMode::Natural, &clean), run(RaceMode::Amplified, &bad)], &FAILURES, &FAULTS);
        assert_eq!(a.verdict, AnswerVerdict::No);
        let got: Vec<_> = a.failures.iter().map(|f| (f.mode, f.counter.as_str(), f.count, f.of)).collect();
        assert_eq!(got, [(RaceMode::Amplified, "duplicated", 6, 10), (RaceMode::Amplified, "unrecorded", 1, 10)]);
        assert_eq!(a.held_over, None);
    }

    #[test]
    fn no_failure_over_runs_that_could_fail_is_yes_with_what_it_held_over() {
        let nat = counts(&[("trials", 20), ("duplicated", 0)]);
        let amp = counts(&[("trials", 20), ("duplicated", 0)]);
        let a = answer_recipe(&[run(RaceMode::Natural, &nat), run(RaceMode::Amplified, &amp)], &FAILURES, &FAULTS);
        assert_eq!((a.verdict, a.held_over), (AnswerVerdict::Yes, Some(("trials".to_string(), 40))));
        assert!(a.failures.is_empty() && a.unsettled.is_none());
    }

    #[test]
    fn a_fault_a_harness_error_or_nothing_to_fail_leaves_it_undetermined() {
        let faulted = counts(&[("trials", 20), ("worker_faults", 1)]);
        let a = answer_recipe(&[run(RaceMode::Natural, &faulted)], &FAILURES, &FAULTS);
        assert_eq!((a.verdict, a.unsettled), (AnswerVerdict::Undetermined, Some(Unsettled::Fault)));
        let clean = counts(&[("trials", 20)]);
        let broken = RecipeRun { harness_error: true, ..run(RaceMode::Natural, &clean) };
        assert_eq!(answer_recipe(&[broken], &FAILURES, &FAULTS).unsettled, Some(Unsettled::Fault));
        let empty = counts(&[("trials", 0)]);
        let a = answer_recipe(&[run(RaceMode::Natural, &empty)], &FAILURES, &FAULTS);
        assert_eq!((a.verdict, a.unsettled), (AnswerVerdict::Undetermined, Some(Unsettled::Fault)));
    }

    #[test]
    fn a_recipe_that_never_ran_is_undetermined_as_not_in_this_runtime() {
        let a = answer_recipe(&[], &FAILURES, &FAULTS);
        assert_eq!((a.verdict, a.unsettled), (AnswerVerdict::Undetermined, Some(Unsettled::Unsupported)));
    }

    #[test]
    fn a_yes_needs_the_scenarios_anti_patterns_to_have_lost_something() {
        let clean = counts(&[("trials", 20), ("duplicated", 0)]);
        let yes = answer_recipe(&[run(RaceMode::Natural, &clean)], &FAILURES, &FAULTS);
        assert_eq!(yes.verdict, AnswerVerdict::Yes);
        // the control lost something, or there is none: the answer stands
        assert_eq!(controlled(yes.clone(), false, Some(true)), yes);
        assert_eq!(controlled(yes.clone(), false, None), yes);
        // the control lost nothing: too weak to tell
        let weak = controlled(yes.clone(), false, Some(false));
        assert_eq!(
            (weak.verdict, weak.unsettled, weak.held_over),
            (AnswerVerdict::Undetermined, Some(Unsettled::WeakControl), None)
        );
        // an anti-pattern is never a yes, whatever the others lost
        for control in [Some(true), Some(false), None] {
            let a = controlled(yes.clone(), true, control);
            assert_eq!((a.verdict, a.unsettled), (AnswerVerdict::Undetermined, Some(Unsettled::AntiPatternHeld)));
        }
        // a no and an undetermined stay as they are
        let bad = counts(&[("trials", 10), ("duplicated", 2)]);
        let no = answer_recipe(&[run(RaceMode::Natural, &bad)], &FAILURES, &FAULTS);
        assert_eq!(controlled(no.clone(), true, Some(false)), no);
        let none = answer_recipe(&[], &FAILURES, &FAULTS);
        assert_eq!(controlled(none.clone(), false, Some(false)), none);
    }

    #[test]
    fn a_failure_outweighs_a_fault() {
        let c = counts(&[("trials", 10), ("duplicated", 2), ("worker_faults", 3)]);
        assert_eq!(answer_recipe(&[run(RaceMode::Natural, &c)], &FAILURES, &FAULTS).verdict, AnswerVerdict::No);
    }
}

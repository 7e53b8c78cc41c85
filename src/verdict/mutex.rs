//! The mutex judge: contenders took one lock by a lock implementation's `acquire`/`release`
//! (built-in lock code, a library, the user's module) and, while they believed they held it,
//! appended `enter <token> <ms>` and `leave <token> <ms>` lines to one log (O_APPEND, one write
//! per line); every contender ended with `done <token> <ms>` (`docs/HANDOFF.md`, "mutex").
//!
//! The log's order is the order of the writes, so two contenders inside at once show as an
//! `enter` while another's `enter` has no `leave` yet: no clock is compared. Counters, each
//! summed over the trials except [`counter::TAKEOVER_MS_MAX`]:
//! - `trials`; `double_ownership`: trials with two contenders inside at once (a killed
//!   holder's own lines left out, a paused or foreign-released holder's counted apart);
//! - `none_acquired`: trials in which the free lock was not taken: nobody took it in a
//!   together-trial, or the holder did not in the others (which then count nothing else);
//! - `killed_trials`, `stuck` (killed trials in which nobody took the lock within the wait),
//!   `takeover_ms_max` (kill to the first taker's `enter`, the wall clocks of the harness and
//!   the log);
//! - `paused_trials`, `taken_from_paused` (another entered while the paused holder was inside);
//! - `foreign_trials`, `released_by_other` (the releaser entered while the holder was inside);
//! - `acquisitions` (`enter` lines), `garbled_lines`, `worker_faults`, `code_errors` (contenders
//!   whose lock code threw), `not_loaded` (contenders that could not load it).

use super::counter;
use std::collections::BTreeMap;

/// How the contenders of one mutex trial were set on the lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrialKind {
    /// All released together (by one of the lease scenario's orderings): each acquires,
    /// holds a while, releases.
    Together,
    /// A holder took the lock and was killed (`SIGKILL`); then the others tried.
    Killed,
    /// A holder took the lock and was paused (`SIGSTOP`) while the others tried; then resumed.
    Paused,
    /// A holder took the lock; another released it with its own owner id, then tried.
    Foreign,
}

/// What a log line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// The contender took the lock and is inside.
    Enter,
    /// The contender is leaving (its release follows).
    Leave,
    /// The contender is done (whether or not it took the lock).
    Done,
}

impl Mark {
    /// The mark spelled `s` in the log.
    fn parse(s: &str) -> Option<Mark> {
        match s {
            "enter" => Some(Mark::Enter),
            "leave" => Some(Mark::Leave),
            "done" => Some(Mark::Done),
            _ => None,
        }
    }
}

/// One line of a mutex log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    /// What it says.
    pub mark: Mark,
    /// The contender's token.
    pub token: String,
    /// When, ms since the Unix epoch (the probe's wall clock).
    pub ms: u64,
}

/// The lines of a mutex log (`text`), in order, and how many lines did not read as one
/// (`<mark> <token> <ms>`; an empty last line is not counted).
pub fn parse_log(text: &str) -> (Vec<LogLine>, usize) {
    let mut lines = Vec::new();
    let mut garbled = 0;
    for l in text.split('\n').filter(|l| !l.is_empty()) {
        let mut parts = l.split(' ');
        let line = match (parts.next().and_then(Mark::parse), parts.next(), parts.next().map(str::parse), parts.next())
        {
            (Some(mark), Some(token), Some(Ok(ms)), None) if !token.is_empty() => {
                Some(LogLine { mark, token: token.to_string(), ms })
            }
            _ => None,
        };
        match line {
            Some(l) => lines.push(l),
            None => garbled += 1,
        }
    }
    (lines, garbled)
}

/// What the harness observed of one mutex trial.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MutexTrial {
    /// How it was laid out.
    pub kind: TrialKind,
    /// The log's lines, in order ([`parse_log`]).
    pub lines: Vec<LogLine>,
    /// The log's lines that did not parse.
    pub garbled: usize,
    /// The holder's token (killed, paused, foreign trials).
    pub holder: Option<String>,
    /// The holder took the lock before the harness went on (killed, paused, foreign trials;
    /// always true for together-trials): a trial whose holder did not measured no takeover.
    pub holder_in: bool,
    /// When the harness killed or paused the holder, ms since the Unix epoch.
    pub stopped_ms: Option<u64>,
    /// Per contender: `true` when it crashed, timed out or reported no counts (a holder the
    /// harness killed is left out).
    pub faults: Vec<bool>,
    /// Contenders whose lock code threw ([`counter::CODE_ERRORS`]).
    pub code_errors: usize,
    /// Contenders that could not load the lock code ([`counter::NOT_LOADED`]).
    pub not_loaded: usize,
}

/// The counters of a mutex cell over `trials` (see the module documentation).
pub fn judge_mutex(trials: &[MutexTrial]) -> BTreeMap<String, u64> {
    let mut c = super::zeroed(&[
        counter::TRIALS,
        counter::DOUBLE_OWNERSHIP,
        counter::NONE_ACQUIRED,
        counter::KILLED_TRIALS,
        counter::STUCK,
        counter::TAKEOVER_MS_MAX,
        counter::PAUSED_TRIALS,
        counter::TAKEN_FROM_PAUSED,
        counter::FOREIGN_TRIALS,
        counter::RELEASED_BY_OTHER,
        counter::ACQUISITIONS,
        counter::GARBLED_LINES,
        counter::WORKER_FAULTS,
        counter::CODE_ERRORS,
        counter::NOT_LOADED,
    ]);
    for t in trials {
        let mut add = |k: &str, n: u64| *c.get_mut(k).expect("every counter is listed") += n;
        add(counter::TRIALS, 1);
        add(counter::GARBLED_LINES, t.garbled as u64);
        add(counter::WORKER_FAULTS, t.faults.iter().filter(|f| **f).count() as u64);
        add(counter::CODE_ERRORS, t.code_errors as u64);
        add(counter::NOT_LOADED, t.not_loaded as u64);
        let holder = t.holder.as_deref();
        // a killed holder is gone before the others try: its lines are not anyone inside
        let lines: Vec<&LogLine> =
            t.lines.iter().filter(|l| !(t.kind == TrialKind::Killed && Some(l.token.as_str()) == holder)).collect();
        let enters: Vec<&&LogLine> = lines.iter().filter(|l| l.mark == Mark::Enter).collect();
        add(counter::ACQUISITIONS, enters.len() as u64);
        let (mut double, mut from_paused, mut by_other) = (false, false, false);
        let mut inside: Vec<&str> = Vec::new();
        for l in &lines {
            match l.mark {
                Mark::Enter => {
                    for o in &inside {
                        match (t.kind, Some(*o) == holder) {
                            (TrialKind::Paused, true) => from_paused = true,
                            (TrialKind::Foreign, true) => by_other = true,
                            _ => double = true,
                        }
                    }
                    inside.push(&l.token);
                }
                Mark::Leave => inside.retain(|o| *o != l.token),
                Mark::Done => {}
            }
        }
        add(counter::DOUBLE_OWNERSHIP, u64::from(double));
        match t.kind {
            TrialKind::Together => add(counter::NONE_ACQUIRED, u64::from(enters.is_empty())),
            _ if !t.holder_in => add(counter::NONE_ACQUIRED, 1),
            TrialKind::Killed => {
                add(counter::KILLED_TRIALS, 1);
                add(counter::STUCK, u64::from(enters.is_empty()));
            }
            TrialKind::Paused => {
                add(counter::PAUSED_TRIALS, 1);
                add(counter::TAKEN_FROM_PAUSED, u64::from(from_paused));
            }
            TrialKind::Foreign => {
                add(counter::FOREIGN_TRIALS, 1);
                add(counter::RELEASED_BY_OTHER, u64::from(by_other));
            }
        }
        if let (TrialKind::Killed, true, Some(first), Some(at)) = (t.kind, t.holder_in, enters.first(), t.stopped_ms) {
            let ms = first.ms.saturating_sub(at);
            let max = c.get_mut(counter::TAKEOVER_MS_MAX).expect("listed");
            *max = (*max).max(ms);
        }
    }
    c
}

/// What `conformance check` says of one runtime's cell of the user's lock code (in JSON:
/// `unsafe`, `stuck`, `safe`, `undetermined`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckVerdict {
    /// Two holders at once ([`counter::DOUBLE_OWNERSHIP`]) or a release by someone else that
    /// freed the holder's lock ([`counter::RELEASED_BY_OTHER`]), in some run.
    Unsafe,
    /// No ownership failure and no fault, but nobody took a killed holder's lock within the
    /// wait ([`counter::STUCK`]): the lock stays after a crash.
    Stuck,
    /// Every run had trials and counted no failure and no fault.
    Safe,
    /// No ownership failure, but the code faulted (hung, crashed, threw, did not load) or the
    /// probe lacks it: what did not run is not vouched for.
    Undetermined,
}

impl CheckVerdict {
    /// The verdict of a cell whose recipe answer is `a` (the mutex scenario's failures and
    /// faults, [`crate::verdict::recipe::answer_recipe`]) and whose runs counted a fault
    /// (`faulted`: one of the scenario's fault counters above 0, or a harness error). Two
    /// holders seen are unsafe whatever else happened; a fault otherwise leaves it
    /// undetermined, also where the answer counted `stuck` (a crashed taker takes nothing over).
    pub fn of(a: &super::recipe::RecipeAnswer, faulted: bool) -> CheckVerdict {
        use super::answer::AnswerVerdict;
        let ownership = |f: &super::recipe::RecipeFailure| f.counter != counter::STUCK;
        match a.verdict {
            AnswerVerdict::No if a.failures.iter().any(ownership) => CheckVerdict::Unsafe,
            _ if faulted => CheckVerdict::Undetermined,
            AnswerVerdict::No => CheckVerdict::Stuck,
            AnswerVerdict::Yes => CheckVerdict::Safe,
            AnswerVerdict::Undetermined => CheckVerdict::Undetermined,
        }
    }

    /// `UNSAFE`, `STUCK`, `safe`, `undetermined`: the word a verdict line starts with.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckVerdict::Unsafe => "UNSAFE",
            CheckVerdict::Stuck => "STUCK",
            CheckVerdict::Safe => "safe",
            CheckVerdict::Undetermined => "undetermined",
        }
    }

    /// The exit code of a check whose runtimes gave `verdicts`: [`crate::exit_code::DIFFERENCES`]
    /// when any is unsafe or stuck (unless `allow_stuck`: a lock meant to wait for an operator
    /// after a crash), else [`crate::exit_code::UNDETERMINED`] when any is undetermined or there
    /// is none, else [`crate::exit_code::OK`]. The same rule as the answer's, where `stuck` is a
    /// failure.
    pub fn exit_code(verdicts: &[CheckVerdict], allow_stuck: bool) -> i32 {
        let any = |v: CheckVerdict| verdicts.contains(&v);
        if any(CheckVerdict::Unsafe) || (!allow_stuck && any(CheckVerdict::Stuck)) {
            crate::exit_code::DIFFERENCES
        } else if verdicts.is_empty() || any(CheckVerdict::Undetermined) {
            crate::exit_code::UNDETERMINED
        } else {
            crate::exit_code::OK
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{judge_mutex, parse_log, MutexTrial, TrialKind};

    fn trial(kind: TrialKind, log: &str) -> MutexTrial {
        let (lines, garbled) = parse_log(log);
        let holder = (kind != TrialKind::Together).then(|| "h".to_string());
        MutexTrial {
            kind,
            lines,
            garbled,
            holder,
            holder_in: true,
            stopped_ms: Some(1000),
            faults: vec![false; 3],
            code_errors: 0,
            not_loaded: 0,
        }
    }

    #[test]
    fn one_after_the_other_is_no_double_ownership() {
        let c = judge_mutex(&[trial(
            TrialKind::Together,
            "enter a 1\nleave a 2\nenter b 3\nleave b 4\ndone a 5\ndone b 6\ndone c 6\n",
        )]);
        assert_eq!((c["trials"], c["double_ownership"], c["acquisitions"], c["none_acquired"]), (1, 0, 2, 0));
    }

    #[test]
    fn an_enter_while_another_is_inside_is_double_ownership() {
        let c = judge_mutex(&[
            trial(TrialKind::Together, "enter a 1\nenter b 2\nleave a 3\nleave b 4\n"),
            trial(TrialKind::Together, "done a 1\ndone b 1\n"),
        ]);
        assert_eq!((c["trials"], c["double_ownership"], c["none_acquired"]), (2, 1, 1));
    }

    #[test]
    fn a_killed_holder_is_not_inside_and_nobody_taking_over_is_stuck() {
        let c = judge_mutex(&[
            trial(TrialKind::Killed, "enter h 900\nenter a 1250\nleave a 1260\nenter b 1270\n"),
            trial(TrialKind::Killed, "enter h 900\ndone a 2000\ndone b 2000\n"),
            trial(TrialKind::Killed, "enter h 900\nenter a 1100\nenter b 1101\n"),
        ]);
        assert_eq!((c["killed_trials"], c["stuck"], c["double_ownership"], c["takeover_ms_max"]), (3, 1, 1, 250));
    }

    #[test]
    fn entering_while_a_paused_or_foreign_released_holder_is_inside_is_counted_apart() {
        let c = judge_mutex(&[
            trial(TrialKind::Paused, "enter h 1\nenter a 2\nleave a 3\nleave h 4\n"),
            trial(TrialKind::Paused, "enter h 1\ndone a 2\nleave h 4\n"),
            trial(TrialKind::Foreign, "enter h 1\nenter r 2\nleave r 3\nleave h 4\n"),
        ]);
        assert_eq!(
            (
                c["paused_trials"],
                c["taken_from_paused"],
                c["foreign_trials"],
                c["released_by_other"],
                c["double_ownership"]
            ),
            (2, 1, 1, 1, 0)
        );
    }

    #[test]
    fn a_check_is_unsafe_on_an_ownership_failure_and_only_stuck_without_one() {
        use super::CheckVerdict;
        use crate::verdict::recipe::answer_recipe;
        use crate::verdict::RaceMode;
        let failures =
            [("double_ownership", "trials"), ("released_by_other", "foreign_trials"), ("stuck", "killed_trials")];
        let verdict = |pairs: &[(&str, u64)]| {
            let c: std::collections::BTreeMap<String, u64> = pairs.iter().map(|(k, n)| (k.to_string(), *n)).collect();
            let runs =
                [crate::verdict::recipe::RecipeRun { mode: RaceMode::Natural, counters: &c, harness_error: false }];
            let faulted = c.get("worker_faults").is_some_and(|n| *n > 0);
            CheckVerdict::of(&answer_recipe(&runs, &failures, &["worker_faults"]), faulted)
        };
        let base = [("trials", 13), ("foreign_trials", 1), ("killed_trials", 1)];
        assert_eq!(verdict(&base), CheckVerdict::Safe);
        assert_eq!(verdict(&[base[0], base[1], base[2], ("stuck", 1)]), CheckVerdict::Stuck);
        assert_eq!(verdict(&[base[0], base[1], base[2], ("stuck", 1), ("released_by_other", 1)]), CheckVerdict::Unsafe);
        assert_eq!(verdict(&[base[0], base[1], base[2], ("worker_faults", 2)]), CheckVerdict::Undetermined);
        // a crashed taker takes nothing over: stuck with a fault is undetermined, not stuck
        assert_eq!(
            verdict(&[base[0], base[1], base[2], ("stuck", 1), ("worker_faults", 2)]),
            CheckVerdict::Undetermined
        );
        // two holders seen are unsafe whatever else happened
        assert_eq!(
            verdict(&[base[0], base[1], base[2], ("double_ownership", 1), ("worker_faults", 2)]),
            CheckVerdict::Unsafe
        );
        let code = |v: &[CheckVerdict], allow_stuck| CheckVerdict::exit_code(v, allow_stuck);
        assert_eq!(code(&[CheckVerdict::Safe, CheckVerdict::Stuck], true), crate::exit_code::OK);
        assert_eq!(code(&[CheckVerdict::Safe, CheckVerdict::Stuck], false), crate::exit_code::DIFFERENCES);
        assert_eq!(code(&[CheckVerdict::Undetermined, CheckVerdict::Unsafe], false), crate::exit_code::DIFFERENCES);
        assert_eq!(code(&[CheckVerdict::Undetermined, CheckVerdict::Safe], false), crate::exit_code::UNDETERMINED);
        assert_eq!(code(&[], false), crate::exit_code::UNDETERMINED);
    }

    #[test]
    fn lines_that_do_not_parse_are_counted_not_judged() {
        let (lines, garbled) = parse_log("enter a 1\nente\nenter b x\nleave a 2 3\n\n");
        assert_eq!((lines.len(), garbled), (1, 3));
        let c = judge_mutex(&[trial(TrialKind::Together, "enter a 1\nenter\n")]);
        assert_eq!((c["garbled_lines"], c["double_ownership"]), (1, 0));
    }
}

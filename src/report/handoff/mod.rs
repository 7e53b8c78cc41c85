//! The hand-off scenarios' words in the reports, one file per scenario: the paragraph above
//! its table (`summary.md`), the text of a run's counts (every table, `diff`), and the
//! counters that count its failures with the count each is out of (`diff` and `compare` weigh
//! them with Fisher's test). A new hand-off scenario adds its file and one line in [`WORDS`].

mod claim;
mod done;
mod holder;
mod lease;
mod ledger;
mod mutex;
mod os_lock;
mod publish;
mod update;
mod watch;

use crate::report::model::{CountersResult, Scenario};

/// How the reports speak of one hand-off scenario.
#[derive(Debug, Clone, Copy)]
pub struct Words {
    /// The scenario.
    pub scenario: Scenario,
    /// The paragraph above its table in `summary.md`: what one item does and what each count
    /// means.
    pub intro: &'static str,
    /// The text of one run's counts (natural or amplified), as the tables show it.
    pub counts: fn(&CountersResult) -> String,
    /// Its failure counters, each with the counter it is out of (`torn_reads` of `reads`).
    pub failures: &'static [(&'static str, &'static str)],
    /// Its counters of the probes' faults (a reader that crashed, a worker that hung): a
    /// recipe whose run counted one is not answered ([`crate::verdict::recipe`]).
    pub faults: &'static [&'static str],
    /// What a person wants of its recipes, in words: the heading of its answer list
    /// (`take over a stale lease`).
    pub intent: &'static str,
    /// Its trials are laid out by the harness (a pause, a wait for a marker), not raced: the
    /// same recipe on the same runtime does the same every time, so `compare` takes a changed
    /// answer as a change, however few the trials (a raced scenario's counts are rates that
    /// move from run to run, which `diff` weighs).
    pub laid_out: bool,
}

/// Every hand-off scenario's words, in [`Scenario::HANDOFFS`] order (a unit test checks it).
pub const WORDS: [Words; 10] = [
    publish::WORDS,
    done::WORDS,
    claim::WORDS,
    lease::WORDS,
    holder::WORDS,
    ledger::WORDS,
    update::WORDS,
    os_lock::WORDS,
    watch::WORDS,
    mutex::WORDS,
];

/// Appends `; <label> <count>` to `s` for each of `extras` (counter, label) whose count in `r`
/// is not 0: the counts a table shows only when something happened.
fn push_nonzero(s: &mut String, r: &CountersResult, extras: &[(&str, &str)]) {
    for (k, label) in extras {
        let n = r.counters.get(*k).copied().unwrap_or(0);
        if n > 0 {
            s.push_str(&format!("; {label} {n}"));
        }
    }
}

/// The words of `scenario`; `None` for a scenario that is not a hand-off.
pub fn words(scenario: Scenario) -> Option<&'static Words> {
    WORDS.iter().find(|w| w.scenario == scenario)
}

#[cfg(test)]
mod tests {
    use super::{words, WORDS};
    use crate::report::model::{CountersResult, Scenario};

    /// A run's counters from `(name, count)` pairs.
    fn run(counts: &[(&str, u64)]) -> CountersResult {
        CountersResult { counters: counts.iter().map(|(k, n)| (k.to_string(), *n)).collect(), ..Default::default() }
    }

    #[test]
    fn a_lease_run_shows_its_failures_and_what_else_happened_only_when_it_did() {
        let text = |counts: &[(&str, u64)]| (words(Scenario::Lease).unwrap().counts)(&run(counts));
        let clean = [("trials", 20), ("double_ownership", 0), ("extra_holders", 0), ("stuck", 0), ("lost_leases", 0)];
        assert_eq!(text(&clean), "double-owned 0/20 trials; stuck 0");
        let broken = [
            ("trials", 10),
            ("double_ownership", 2),
            ("extra_holders", 3),
            ("stuck", 1),
            ("lost_leases", 3),
            ("leftover_files", 1),
        ];
        assert_eq!(text(&broken), "double-owned 2/10 trials (+3 holders); stuck 1; lost 3; left behind 1");
    }

    #[test]
    fn every_hand_off_has_words_in_table_order() {
        let order: Vec<Scenario> = WORDS.iter().map(|w| w.scenario).collect();
        assert_eq!(order, Scenario::HANDOFFS.to_vec());
        for s in Scenario::ALL {
            assert_eq!(words(s).is_some(), s.is_handoff(), "{s:?}");
        }
        for w in &WORDS {
            assert!(!w.failures.is_empty(), "{:?} names no failure counter", w.scenario);
        }
    }

    /// A recipe that did not do its job fails it even where nothing it did was wrong: every
    /// publish write failed (Node's rename across file systems, EXDEV) with no torn read, or a
    /// claim left items in `incoming/`.
    #[test]
    fn a_recipe_that_did_not_do_its_job_is_answered_no() {
        use crate::verdict::answer::AnswerVerdict;
        use crate::verdict::recipe::{answer_recipe, RecipeRun};
        let answer = |scenario: Scenario, counts: &[(&str, u64)]| {
            let w = words(scenario).unwrap();
            let c = run(counts).counters;
            let runs = [RecipeRun { mode: crate::verdict::RaceMode::Natural, counters: &c, harness_error: false }];
            answer_recipe(&runs, w.failures, w.faults)
        };
        let publish = [("reads", 19789), ("torn_reads", 0), ("items", 40), ("published", 0), ("write_failed", 40)];
        let a = answer(Scenario::Publish, &publish);
        assert_eq!(a.verdict, AnswerVerdict::No, "{a:?}");
        assert_eq!((a.failures[0].counter.as_str(), a.failures[0].count, a.failures[0].of), ("write_failed", 40, 40));
        let claim = [("items", 200), ("duplicate_claims", 0), ("lost_items", 0), ("left_unclaimed", 3)];
        assert_eq!(answer(Scenario::Claim, &claim).verdict, AnswerVerdict::No);
    }
}

//! The hand-off scenarios' words in the reports, one file per scenario: the paragraph above
//! its table (`summary.md`), the text of a run's counts (every table, `diff`), and the
//! counters that count its failures with the count each is out of (`diff` and `compare` weigh
//! them with Fisher's test). A new hand-off scenario adds its file and one line in [`WORDS`].

mod claim;
mod done;
mod lease;
mod publish;

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
}

/// Every hand-off scenario's words, in [`Scenario::HANDOFFS`] order (a unit test checks it).
pub const WORDS: [Words; 4] = [publish::WORDS, done::WORDS, claim::WORDS, lease::WORDS];

/// The words of `scenario`; `None` for a scenario that is not a hand-off.
pub fn words(scenario: Scenario) -> Option<&'static Words> {
    WORDS.iter().find(|w| w.scenario == scenario)
}

#[cfg(test)]
mod tests {
    use super::{words, WORDS};
    use crate::report::model::Scenario;

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
}

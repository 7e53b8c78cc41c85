//! The ledger judge: one input item with one idempotency key was delivered to W workers
//! released together, and each that decided to process it made its side effect — its own
//! effect file, holding its token — and recorded the key by the recipe → counted failures
//! (`docs/HANDOFF.md`, "ledger").
//!
//! The item must be processed exactly once: a second effect file in a trial is a duplicate
//! side effect, none is an item nobody processed, and a key the ledger does not hold
//! afterwards is one the next delivery processes again. Counters, each summed over the trials:
//! - `trials`: trials judged;
//! - `duplicated`: trials with two effects or more;
//! - `duplicate_effects`: effects beyond the first;
//! - `unprocessed`: trials with no effect;
//! - `unrecorded`: trials after which the ledger does not hold the key;
//! - `worker_faults`: workers that crashed, timed out or reported no counts.

use super::counter;
use std::collections::BTreeMap;

/// What the harness observed of one ledger trial.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerTrial {
    /// Effect files that hold their own worker's token afterwards.
    pub effects: usize,
    /// Whether the ledger holds the key afterwards (its file, or a line of the processed list).
    pub recorded: bool,
    /// Per worker: `true` when it crashed, timed out or reported no counts.
    pub faults: Vec<bool>,
}

/// The counters of a ledger cell over `trials` (see the module documentation).
pub fn judge_ledger(trials: &[LedgerTrial]) -> BTreeMap<String, u64> {
    let mut c = super::zeroed(&[
        counter::TRIALS,
        counter::DUPLICATED,
        counter::DUPLICATE_EFFECTS,
        counter::UNPROCESSED,
        counter::UNRECORDED,
        counter::WORKER_FAULTS,
    ]);
    let mut add = |k: &str, n: u64| *c.get_mut(k).expect("every counter is listed") += n;
    for t in trials {
        let effects = t.effects as u64;
        add(counter::TRIALS, 1);
        add(counter::DUPLICATED, u64::from(effects > 1));
        add(counter::DUPLICATE_EFFECTS, effects.saturating_sub(1));
        add(counter::UNPROCESSED, u64::from(effects == 0));
        add(counter::UNRECORDED, u64::from(!t.recorded));
        add(counter::WORKER_FAULTS, t.faults.iter().filter(|f| **f).count() as u64);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::{judge_ledger, LedgerTrial};

    fn trial(effects: usize, recorded: bool) -> LedgerTrial {
        LedgerTrial { effects, recorded, faults: vec![false; 3] }
    }

    #[test]
    fn one_recorded_effect_is_a_clean_trial() {
        let c = judge_ledger(&[trial(1, true)]);
        assert_eq!(
            (c["trials"], c["duplicated"], c["duplicate_effects"], c["unprocessed"], c["unrecorded"]),
            (1, 0, 0, 0, 0)
        );
    }

    #[test]
    fn effects_beyond_the_first_are_duplicates() {
        let c = judge_ledger(&[trial(2, true), trial(3, true), trial(1, true)]);
        assert_eq!((c["trials"], c["duplicated"], c["duplicate_effects"]), (3, 2, 3));
    }

    #[test]
    fn no_effect_is_unprocessed_and_a_missing_key_unrecorded() {
        let c = judge_ledger(&[trial(0, true), trial(1, false), trial(0, false)]);
        assert_eq!((c["unprocessed"], c["unrecorded"], c["duplicated"]), (2, 2, 0));
    }

    #[test]
    fn faults_are_summed() {
        let mut t = trial(1, true);
        t.faults = vec![true, false, true];
        assert_eq!(judge_ledger(&[t.clone(), t])["worker_faults"], 4);
    }

    #[test]
    fn no_trials_count_nothing() {
        assert!(judge_ledger(&[]).values().all(|n| *n == 0));
    }
}

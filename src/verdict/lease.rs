//! The lease judge: a stale lease was left behind, K contenders released together each tried to
//! take it over by a recipe, and each that believed it did wrote its own `held` marker and
//! kept the lease → counted failures (`docs/HANDOFF.md`, "lease").
//!
//! Nobody releases a lease within a trial, so two markers in one trial are two contenders that
//! held the lease at the same time: no clock is read to tell. Counters, each summed over the
//! trials:
//! - `trials`: trials judged;
//! - `taken_over`: trials with at least one holder;
//! - `double_ownership`: trials with two holders or more;
//! - `extra_holders`: holders beyond the first;
//! - `stuck`: trials with no holder (the stale lease was never taken over);
//! - `lost_leases`: holders whose record the lock does not hold afterwards (it holds another
//!   holder's record, the stale one, or none): each believes it holds a lease it lost;
//! - `leftover_files`: names other than the lease and the markers left in the trial's folder;
//! - `taker_faults`: contenders that crashed, timed out or reported no counts.

use super::counter;
use std::collections::BTreeMap;

/// What the harness observed of one lease trial.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseTrial {
    /// The tokens of the contenders whose `held` marker holds their own token afterwards.
    pub holders: Vec<String>,
    /// The `ownerId` of the lease record the lock holds afterwards; `None` when there is no
    /// lock or its record cannot be read as one.
    pub owner: Option<String>,
    /// Names in the trial's folder other than the lock and the markers' folder.
    pub leftovers: usize,
    /// Per contender: `true` when it crashed, timed out or reported no counts.
    pub faults: Vec<bool>,
}

/// The counters of a lease cell over `trials` (see the module documentation).
pub fn judge_lease(trials: &[LeaseTrial]) -> BTreeMap<String, u64> {
    let mut c = super::zeroed(&[
        counter::TRIALS,
        counter::TAKEN_OVER,
        counter::DOUBLE_OWNERSHIP,
        counter::EXTRA_HOLDERS,
        counter::STUCK,
        counter::LOST_LEASES,
        counter::LEFTOVER_FILES,
        counter::TAKER_FAULTS,
    ]);
    let mut add = |k: &str, n: u64| *c.get_mut(k).expect("every counter is listed") += n;
    for t in trials {
        let holders = t.holders.len() as u64;
        add(counter::TRIALS, 1);
        add(counter::TAKEN_OVER, u64::from(holders > 0));
        add(counter::DOUBLE_OWNERSHIP, u64::from(holders > 1));
        add(counter::EXTRA_HOLDERS, holders.saturating_sub(1));
        add(counter::STUCK, u64::from(holders == 0));
        let lost = t.holders.iter().filter(|h| t.owner.as_deref() != Some(h.as_str())).count();
        add(counter::LOST_LEASES, lost as u64);
        add(counter::LEFTOVER_FILES, t.leftovers as u64);
        add(counter::TAKER_FAULTS, t.faults.iter().filter(|f| **f).count() as u64);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::{judge_lease, LeaseTrial};

    fn trial(holders: &[&str], owner: Option<&str>) -> LeaseTrial {
        LeaseTrial {
            holders: holders.iter().map(|h| h.to_string()).collect(),
            owner: owner.map(str::to_string),
            leftovers: 0,
            faults: vec![false; 3],
        }
    }

    #[test]
    fn one_holder_whose_record_the_lock_holds_is_a_clean_takeover() {
        let c = judge_lease(&[trial(&["a"], Some("a"))]);
        assert_eq!(
            (c["trials"], c["taken_over"], c["double_ownership"], c["stuck"], c["lost_leases"]),
            (1, 1, 0, 0, 0)
        );
    }

    #[test]
    fn two_holders_are_double_ownership_and_the_one_not_named_lost_its_lease() {
        let c = judge_lease(&[trial(&["a", "b"], Some("b")), trial(&["a", "b", "c"], Some("c"))]);
        assert_eq!((c["double_ownership"], c["extra_holders"], c["lost_leases"], c["taken_over"]), (2, 3, 3, 2));
    }

    #[test]
    fn no_holder_is_stuck_and_a_holder_of_a_gone_or_stale_lock_lost_it() {
        let c = judge_lease(&[trial(&[], Some("stale")), trial(&["a"], None), trial(&["a"], Some("stale"))]);
        assert_eq!((c["stuck"], c["taken_over"], c["lost_leases"], c["double_ownership"]), (1, 2, 2, 0));
    }

    #[test]
    fn leftovers_and_faults_are_summed() {
        let mut t = trial(&["a"], Some("a"));
        t.leftovers = 2;
        t.faults = vec![true, false, true];
        let c = judge_lease(&[t.clone(), t]);
        assert_eq!((c["leftover_files"], c["taker_faults"]), (4, 4));
    }

    #[test]
    fn no_trials_count_nothing() {
        assert!(judge_lease(&[]).values().all(|n| *n == 0));
    }
}

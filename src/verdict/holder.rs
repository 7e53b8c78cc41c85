//! The lease-holder judge: a holder was stopped past its lease, a taker took the lease over
//! meanwhile, and the holder, resumed, went on by its recipe — renewed, made its side effect,
//! released → counted failures (`docs/HANDOFF.md`, "holder").
//!
//! Once the lease is another's, the old holder must do nothing in its name: a side effect it
//! makes is one made without the lock, a record it writes over the lease takes the new holder's
//! lease away, a lease it deletes frees a lock someone holds. Counters, each summed over the
//! trials:
//! - `trials`: trials judged;
//! - `taken_over`: trials in which the taker holds the lease (its marker holds its token);
//! - `effects_after_loss`: taken-over trials in which the old holder made its side effect;
//! - `leases_overwritten`: taken-over trials after which the lease holds the old holder's record;
//! - `leases_deleted`: taken-over trials after which there is no lease;
//! - `worker_faults`: holders and takers that crashed, timed out or reported no counts.

use super::counter;
use std::collections::BTreeMap;

/// Whose record the lease holds after a trial.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseOwner {
    /// The old holder's (its token as `ownerId`).
    Holder,
    /// The taker's.
    Taker,
    /// Another record, or one that does not read as a record.
    Other,
    /// No lease at all.
    Absent,
}

/// What the harness observed of one lease-holder trial.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HolderTrial {
    /// The taker's marker holds its token: it took the lease over.
    pub taken_over: bool,
    /// The old holder's effect file holds its token.
    pub holder_effect: bool,
    /// Whose record the lease holds afterwards.
    pub owner: LeaseOwner,
    /// Per contender (holder, taker): `true` when it crashed, timed out or reported no counts.
    pub faults: Vec<bool>,
}

/// The counters of a lease-holder cell over `trials` (see the module documentation).
pub fn judge_holder(trials: &[HolderTrial]) -> BTreeMap<String, u64> {
    let mut c = super::zeroed(&[
        counter::TRIALS,
        counter::TAKEN_OVER,
        counter::EFFECTS_AFTER_LOSS,
        counter::LEASES_OVERWRITTEN,
        counter::LEASES_DELETED,
        counter::WORKER_FAULTS,
    ]);
    let mut add = |k: &str, n: u64| *c.get_mut(k).expect("every counter is listed") += n;
    for t in trials {
        add(counter::TRIALS, 1);
        if t.taken_over {
            add(counter::TAKEN_OVER, 1);
            add(counter::EFFECTS_AFTER_LOSS, u64::from(t.holder_effect));
            add(counter::LEASES_OVERWRITTEN, u64::from(t.owner == LeaseOwner::Holder));
            add(counter::LEASES_DELETED, u64::from(t.owner == LeaseOwner::Absent));
        }
        add(counter::WORKER_FAULTS, t.faults.iter().filter(|f| **f).count() as u64);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::{judge_holder, HolderTrial, LeaseOwner};

    fn trial(taken_over: bool, holder_effect: bool, owner: LeaseOwner) -> HolderTrial {
        HolderTrial { taken_over, holder_effect, owner, faults: vec![false, false] }
    }

    #[test]
    fn a_holder_that_stops_once_the_lease_is_lost_is_a_clean_trial() {
        let c = judge_holder(&[trial(true, false, LeaseOwner::Taker)]);
        assert_eq!(
            (c["trials"], c["taken_over"], c["effects_after_loss"], c["leases_overwritten"], c["leases_deleted"]),
            (1, 1, 0, 0, 0)
        );
    }

    #[test]
    fn what_the_old_holder_did_after_the_takeover_is_counted() {
        let c = judge_holder(&[
            trial(true, true, LeaseOwner::Taker),
            trial(true, true, LeaseOwner::Holder),
            trial(true, false, LeaseOwner::Absent),
        ]);
        assert_eq!((c["effects_after_loss"], c["leases_overwritten"], c["leases_deleted"]), (2, 1, 1));
    }

    #[test]
    fn without_a_takeover_nothing_was_lost() {
        let c = judge_holder(&[trial(false, true, LeaseOwner::Holder), trial(false, true, LeaseOwner::Absent)]);
        assert_eq!((c["trials"], c["taken_over"], c["effects_after_loss"], c["leases_deleted"]), (2, 0, 0, 0));
    }

    #[test]
    fn another_record_is_neither_overwritten_by_the_holder_nor_deleted() {
        let c = judge_holder(&[trial(true, false, LeaseOwner::Other)]);
        assert_eq!((c["leases_overwritten"], c["leases_deleted"]), (0, 0));
    }

    #[test]
    fn faults_are_summed() {
        let mut t = trial(true, false, LeaseOwner::Taker);
        t.faults = vec![true, true];
        assert_eq!(judge_holder(&[t.clone(), t])["worker_faults"], 4);
    }
}

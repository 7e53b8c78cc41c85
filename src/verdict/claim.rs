//! The claim judge: W workers took the items of one folder by a recipe, each appending what
//! it processed to its own output file → counted failures (`docs/HANDOFF.md`, "claim").
//!
//! Counters, each summed over the trials:
//! - `items`: items put in `incoming/`;
//! - `processed`: lines in all output files (one per processing);
//! - `duplicate_claims`: processings beyond the first of an item (an item processed by two
//!   workers, or twice by one, counts once per extra processing);
//! - `duplicated_items`: items processed more than once (at most `items`);
//! - `lost_items`: items processed by no worker and no longer in `incoming/`;
//! - `left_unclaimed`: items still in `incoming/` afterwards;
//! - `claim_failed`, `delete_failed`: failed claim and delete steps the workers counted;
//! - `worker_faults`: workers that crashed, timed out, gave up or reported no counts.

use super::counter;
use std::collections::BTreeMap;

/// What the harness observed of one claim trial.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimTrial {
    /// The items' contents, as put in `incoming/`.
    pub items: Vec<String>,
    /// Per worker: the lines of its output file (`None` when the file could not be read).
    pub outputs: Vec<Option<Vec<String>>>,
    /// Items (by content) still in `incoming/` afterwards.
    pub remaining: Vec<String>,
    /// Per worker: its counters, `None` when it faulted or gave up.
    pub workers: Vec<Option<BTreeMap<String, i64>>>,
}

/// The counters of a claim cell over `trials` (see the module documentation).
pub fn judge_claim(trials: &[ClaimTrial]) -> BTreeMap<String, u64> {
    let mut c = super::zeroed(&[
        counter::ITEMS,
        counter::PROCESSED,
        counter::DUPLICATE_CLAIMS,
        counter::DUPLICATED_ITEMS,
        counter::LOST_ITEMS,
        counter::LEFT_UNCLAIMED,
        counter::CLAIM_FAILED,
        counter::DELETE_FAILED,
        counter::WORKER_FAULTS,
    ]);
    let mut add = |k: &str, n: u64| *c.get_mut(k).expect("every counter is listed") += n;
    for t in trials {
        add(counter::ITEMS, t.items.len() as u64);
        let mut seen: BTreeMap<&str, u64> = BTreeMap::new();
        for line in t.outputs.iter().flatten().flatten() {
            *seen.entry(line.as_str()).or_insert(0) += 1;
        }
        add(counter::PROCESSED, seen.values().sum());
        for item in &t.items {
            let n = seen.get(item.as_str()).copied().unwrap_or(0);
            add(counter::DUPLICATE_CLAIMS, n.saturating_sub(1));
            add(counter::DUPLICATED_ITEMS, u64::from(n > 1));
            if n == 0 && !t.remaining.contains(item) {
                add(counter::LOST_ITEMS, 1);
            }
        }
        add(counter::LEFT_UNCLAIMED, t.remaining.len() as u64);
        for w in &t.workers {
            match w {
                Some(w) => {
                    add(counter::CLAIM_FAILED, w.get("claim_failed").copied().unwrap_or(0).max(0) as u64);
                    add(counter::DELETE_FAILED, w.get("delete_failed").copied().unwrap_or(0).max(0) as u64);
                }
                None => add(counter::WORKER_FAULTS, 1),
            }
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::{judge_claim, ClaimTrial};

    #[test]
    fn duplicates_and_losses_come_from_the_output_files() {
        let items: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
        let lines = |v: &[&str]| Some(v.iter().map(|s| s.to_string()).collect());
        let counts = |failed: i64| Some([("claim_failed".to_string(), failed)].into_iter().collect());
        let t = ClaimTrial {
            items,
            // a by both, b twice by one, c by none (gone), d still waiting
            outputs: vec![lines(&["a", "b", "b"]), lines(&["a"]), None],
            remaining: vec!["d".into()],
            workers: vec![counts(2), counts(1), None],
        };
        let c = judge_claim(&[t]);
        assert_eq!((c["items"], c["processed"]), (4, 4));
        assert_eq!(c["duplicate_claims"], 2);
        assert_eq!(c["duplicated_items"], 2, "a and b");
        assert_eq!((c["lost_items"], c["left_unclaimed"]), (1, 1));
        assert_eq!((c["claim_failed"], c["worker_faults"]), (3, 1));
    }
}

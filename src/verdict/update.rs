//! The shared-file update judge: W workers each added 1 to one counter file M times by a
//! recipe while a reader read the file until they were done → counted failures
//! (`docs/HANDOFF.md`, "update").
//!
//! The counter's total is read from the file afterwards: the sum of the whole numbers on its
//! lines (`17` for a recipe that rewrites the value, `0\n1\n1\n…` for one that appends a line
//! per increment). Every increment must be in it, once, and a reader must never see anything
//! but a whole value. Counters, each summed over the trials:
//! - `trials`: trials judged;
//! - `increments`: the increments asked of the workers, W × M per trial;
//! - `lossy`: trials whose total is below what was owed: W × M, less M for each worker that
//!   crashed or was killed at its timeout (it made an unknown share of its increments: that
//!   shortfall is not a lost update, and the fault is counted instead);
//! - `lost_updates`: increments missing from the totals (owed − total, where below);
//! - `excess_updates`: increments beyond W × M in the totals (a total above what was asked);
//! - `unreadable`: trials after which the counter file is absent or not whole numbers;
//! - `reads`, `torn_reads`, `absent_reads`, `read_errors`: the reader's reads, of any result,
//!   then those that saw an empty or partial value, no file, or an error;
//! - `leftover_files`: names other than the counter left in a trial's folder (a lock never
//!   released, a temp file never renamed);
//! - `worker_faults`: workers and readers that crashed, timed out or reported no counts.

use super::counter;
use super::publish::{ReaderCounts, Reads};
use std::collections::BTreeMap;

/// What the harness observed of one shared-file update trial.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpdateTrial {
    /// The increments asked: workers × increments each.
    pub asked: u64,
    /// The counter's total afterwards ([`total`] of the file's text); `None` when the file was
    /// absent or held something else.
    pub total: Option<u64>,
    /// The reader's counters (`read.poll`: reads, complete, empty, torn, absent, errors);
    /// `None`, or counters without `reads`, when it faulted.
    pub reader: ReaderCounts,
    /// Names other than the counter in the trial's folder afterwards.
    pub leftovers: usize,
    /// Per worker: `true` when it crashed, timed out or reported no counts.
    pub faults: Vec<bool>,
}

/// The counter's total in `text`: the sum of the whole numbers on its lines (empty lines
/// skipped; `\r\n` allowed). `None` when a line is anything else, when the sum overflows, or
/// when there is no number at all (an empty file: the start value was lost too).
pub fn total(text: &str) -> Option<u64> {
    let mut sum: Option<u64> = None;
    for line in text.lines().map(|l| l.trim_end_matches('\r')).filter(|l| !l.is_empty()) {
        if !line.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        sum = Some(sum.unwrap_or(0).checked_add(line.parse().ok()?)?);
    }
    sum
}

/// The increments a trial's counter must hold for sure: `asked` (W × M) less each faulted
/// worker's share M, since a worker that crashed or was killed at its timeout made an unknown
/// share of its increments (none to all). `faults` has one entry per worker.
pub fn owed(asked: u64, faults: &[bool]) -> u64 {
    let faulted = faults.iter().filter(|f| **f).count() as u64;
    let each = asked.checked_div(faults.len() as u64).unwrap_or(0);
    asked.saturating_sub(faulted * each)
}

/// The counters of a shared-file update cell over `trials` (see the module documentation).
pub fn judge_update(trials: &[UpdateTrial]) -> BTreeMap<String, u64> {
    let mut c = super::zeroed(&[
        counter::TRIALS,
        counter::INCREMENTS,
        counter::LOSSY,
        counter::LOST_UPDATES,
        counter::EXCESS_UPDATES,
        counter::UNREADABLE,
        counter::READS,
        counter::TORN_READS,
        counter::ABSENT_READS,
        counter::READ_ERRORS,
        counter::LEFTOVER_FILES,
        counter::WORKER_FAULTS,
    ]);
    let mut add = |k: &str, n: u64| *c.get_mut(k).expect("every counter is listed") += n;
    for t in trials {
        add(counter::TRIALS, 1);
        add(counter::INCREMENTS, t.asked);
        // a total below what was owed is lost updates; one above what was asked still counts
        let owed = owed(t.asked, &t.faults);
        match t.total {
            Some(total) => {
                add(counter::LOSSY, u64::from(total < owed));
                add(counter::LOST_UPDATES, owed.saturating_sub(total));
                add(counter::EXCESS_UPDATES, total.saturating_sub(t.asked));
            }
            None => add(counter::UNREADABLE, 1),
        }
        match t.reader.as_ref().filter(|r| r.contains_key("reads")) {
            Some(r) => {
                let reads = Reads::of(r);
                add(counter::READS, reads.all);
                add(counter::TORN_READS, reads.torn);
                add(counter::ABSENT_READS, reads.absent);
                add(counter::READ_ERRORS, reads.errors);
            }
            None => add(counter::WORKER_FAULTS, 1),
        }
        add(counter::LEFTOVER_FILES, t.leftovers as u64);
        add(counter::WORKER_FAULTS, t.faults.iter().filter(|f| **f).count() as u64);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::{judge_update, total, UpdateTrial};
    use std::collections::BTreeMap;

    fn reader(complete: i64, torn: i64, empty: i64) -> Option<BTreeMap<String, i64>> {
        Some(
            [("reads", complete + torn + empty), ("complete", complete), ("torn", torn), ("empty", empty)]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    }

    fn trial(total: Option<u64>) -> UpdateTrial {
        UpdateTrial { asked: 30, total, reader: reader(10, 0, 0), leftovers: 0, faults: vec![false; 3] }
    }

    #[test]
    fn the_total_sums_whole_numbers_on_lines() {
        assert_eq!(total("17"), Some(17));
        assert_eq!(total("0\n1\n1\n1\n"), Some(3));
        assert_eq!(total("0\r\n1\r\n"), Some(1));
        assert_eq!(total("0"), Some(0));
    }

    #[test]
    fn the_total_of_anything_else_is_unreadable() {
        for text in ["", "\n", "1x", "-1", "1\n2a\n", " 1", "99999999999999999999"] {
            assert_eq!(total(text), None, "{text:?}");
        }
    }

    #[test]
    fn every_increment_kept_is_a_clean_trial() {
        let c = judge_update(&[trial(Some(30))]);
        assert_eq!(
            (c["trials"], c["increments"], c["lossy"], c["lost_updates"], c["excess_updates"], c["unreadable"]),
            (1, 30, 0, 0, 0, 0)
        );
        assert_eq!((c["reads"], c["torn_reads"], c["worker_faults"]), (10, 0, 0));
    }

    #[test]
    fn a_total_below_the_asked_loses_updates_and_above_it_counts_excess() {
        let c = judge_update(&[trial(Some(21)), trial(Some(30)), trial(Some(12)), trial(Some(31))]);
        assert_eq!(
            (c["trials"], c["increments"], c["lossy"], c["lost_updates"], c["excess_updates"]),
            (4, 120, 2, 27, 1)
        );
    }

    #[test]
    fn an_unreadable_counter_is_counted_apart_from_lost_updates() {
        let c = judge_update(&[trial(None)]);
        assert_eq!((c["unreadable"], c["lossy"], c["lost_updates"]), (1, 0, 0));
    }

    #[test]
    fn the_readers_torn_and_empty_reads_are_torn_reads() {
        let mut t = trial(Some(30));
        t.reader = reader(5, 2, 3);
        let c = judge_update(&[t]);
        assert_eq!((c["reads"], c["torn_reads"]), (10, 5));
    }

    /// A worker killed at its timeout made fewer increments than asked: its trial's shortfall
    /// is a fault, not lost updates (a bash worker starved past 10 s by the other lane's
    /// shells made a locked recipe look lossy).
    #[test]
    fn a_faulted_workers_shortfall_is_no_lost_update() {
        let mut t =
            UpdateTrial { asked: 30, total: Some(20), reader: reader(10, 0, 0), leftovers: 0, faults: vec![false; 3] };
        t.faults[1] = true;
        let c = judge_update(&[t.clone()]);
        assert_eq!((c["lossy"], c["lost_updates"], c["worker_faults"]), (0, 0, 1));
        // below what the two others made for sure: lost, whatever the faulted one did
        t.total = Some(15);
        let c = judge_update(&[t.clone()]);
        assert_eq!((c["lossy"], c["lost_updates"]), (1, 5));
        t.total = Some(31);
        assert_eq!(judge_update(&[t.clone()])["excess_updates"], 1, "a total above what was asked still counts");
        t.faults[1] = false;
        t.total = Some(20);
        assert_eq!(judge_update(&[t])["lost_updates"], 10);
    }

    #[test]
    fn faults_and_leftovers_are_summed() {
        let mut t = trial(Some(30));
        t.faults = vec![true, false, true];
        t.reader = None;
        t.leftovers = 2;
        let c = judge_update(&[t.clone(), t]);
        assert_eq!((c["worker_faults"], c["leftover_files"], c["reads"]), (6, 4, 0));
    }

    #[test]
    fn no_trials_count_nothing() {
        assert!(judge_update(&[]).values().all(|n| *n == 0));
    }
}

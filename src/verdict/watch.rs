//! The folder-watch judge: a consumer watched a folder, was paused while a burst of new files
//! larger than the kernel's notification queue landed in it, and was resumed → the files it
//! never recorded, and how long it took to record the last one (`docs/HANDOFF.md`, "watch").
//!
//! The consumer records every file it sees as a line (the file's name) of its record file; the
//! harness reads that file, never the consumer's word. Counters, each summed over the trials
//! (but `ms_to_all_max`):
//! - `trials`: trials judged;
//! - `watching`: trials in which the consumer said it was watching (its marker) before the
//!   burst; every other count is over these; `not_watching` the others;
//! - `items`: files of the bursts;
//! - `missed_items`: files of the bursts that the consumer's record never named;
//! - `lossy`: trials that missed at least one;
//! - `duplicate_sightings`: lines naming a file already named (a consumer that lists must
//!   remember what it saw);
//! - `strays`: lines naming no file of the burst;
//! - `complete`: trials in which the record named every file before the harness's deadline;
//! - `ms_to_all_max`: the longest time, over the complete trials, from the consumer's resume to
//!   the record naming every file (ms, as the harness saw the record grow);
//! - `worker_faults`: consumers that crashed, timed out or reported no counts.

use super::counter;
use std::collections::{BTreeMap, HashSet};

/// What the harness observed of one watch trial.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WatchTrial {
    /// The consumer's marker was there before the burst.
    pub watching: bool,
    /// Files in the burst.
    pub items: u64,
    /// Distinct files of the burst the record names.
    pub seen: u64,
    /// Lines naming a file already named.
    pub duplicates: u64,
    /// Lines naming no file of the burst.
    pub strays: u64,
    /// Time from the resume to the record naming every file, when it did before the deadline
    /// (ms).
    pub ms_to_all: Option<u64>,
    /// Per contender: `true` when it crashed, timed out or reported no counts.
    pub faults: Vec<bool>,
}

/// What the record file's text `record` says of a burst of `names`: the distinct names of the
/// burst it holds, the lines repeating one, and the lines naming none.
pub fn read_record(record: &str, names: &HashSet<String>) -> (u64, u64, u64) {
    let mut seen = HashSet::new();
    let (mut duplicates, mut strays) = (0, 0);
    for line in record.lines().filter(|l| !l.is_empty()) {
        if !names.contains(line) {
            strays += 1;
        } else if !seen.insert(line) {
            duplicates += 1;
        }
    }
    (seen.len() as u64, duplicates, strays)
}

/// The counters of a watch cell over `trials` (see the module documentation).
pub fn judge_watch(trials: &[WatchTrial]) -> BTreeMap<String, u64> {
    let mut c = super::zeroed(&[
        counter::TRIALS,
        counter::WATCHING,
        counter::NOT_WATCHING,
        counter::ITEMS,
        counter::MISSED_ITEMS,
        counter::LOSSY,
        counter::DUPLICATE_SIGHTINGS,
        counter::STRAYS,
        counter::COMPLETE,
        counter::MS_TO_ALL_MAX,
        counter::WORKER_FAULTS,
    ]);
    for t in trials {
        let mut add = |k: &str, n: u64| *c.get_mut(k).expect("every counter is listed") += n;
        add(counter::TRIALS, 1);
        add(counter::WORKER_FAULTS, t.faults.iter().filter(|f| **f).count() as u64);
        if !t.watching {
            add(counter::NOT_WATCHING, 1);
            continue;
        }
        add(counter::WATCHING, 1);
        add(counter::ITEMS, t.items);
        let missed = t.items.saturating_sub(t.seen);
        add(counter::MISSED_ITEMS, missed);
        add(counter::LOSSY, u64::from(missed > 0));
        add(counter::DUPLICATE_SIGHTINGS, t.duplicates);
        add(counter::STRAYS, t.strays);
        if let Some(ms) = t.ms_to_all.filter(|_| missed == 0) {
            add(counter::COMPLETE, 1);
            let max = c.get_mut(counter::MS_TO_ALL_MAX).expect("listed");
            *max = (*max).max(ms);
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::{judge_watch, read_record, WatchTrial};
    use std::collections::HashSet;

    fn names(n: usize) -> HashSet<String> {
        (0..n).map(|i| format!("item-{i}")).collect()
    }

    #[test]
    fn the_record_is_read_as_distinct_names_of_the_burst() {
        let text = "item-0\nitem-1\nitem-0\n\nother\nitem-2\n";
        assert_eq!(read_record(text, &names(3)), (3, 1, 1));
        assert_eq!(read_record("", &names(3)), (0, 0, 0));
    }

    #[test]
    fn missed_files_and_the_slowest_complete_trial_are_counted() {
        let t = |seen, ms| WatchTrial {
            watching: true,
            items: 10,
            seen,
            ms_to_all: ms,
            faults: vec![false],
            ..Default::default()
        };
        let c = judge_watch(&[t(10, Some(40)), t(4, None), t(10, Some(70)), WatchTrial::default()]);
        assert_eq!((c["trials"], c["watching"], c["not_watching"], c["items"]), (4, 3, 1, 30));
        assert_eq!((c["missed_items"], c["lossy"], c["complete"], c["ms_to_all_max"]), (6, 1, 2, 70));
    }
}

//! The folder-watch scenario's words in the reports: the paragraph above its table, the text of
//! a run's counts, and the counters that count failures.

use super::Words;
use crate::report::model::{CountersResult, Scenario};
use crate::verdict::counter;

/// The watch scenario's words.
pub const WORDS: Words = Words {
    scenario: Scenario::Watch,
    intro: "A consumer watches an empty folder by the recipe and records each file it sees once, as a line of its record file. Once it says it is watching, the harness stops it (`SIGSTOP`: a consumer busy elsewhere), creates a quarter more empty files in the folder than the kernel queues notifications for (`/proc/sys/fs/inotify/max_queued_events`; 20,480 files with the default 16,384), resumes it, and reads the record until it names every file or 2 s have passed. `missed`: files the record never named, out of those created, with the trials that missed any; `all seen in`: the longest time from the resume to the record naming every file; counted from the record file.",
    counts,
    failures: &[(counter::LOSSY, counter::WATCHING), (counter::MISSED_ITEMS, counter::ITEMS)],
    faults: &[counter::WORKER_FAULTS, counter::NOT_WATCHING],
    intent: "watch a folder for new files",
    laid_out: true,
};

/// The text of one run (natural or amplified) of a watch cell: files missed over those created,
/// with the trials that missed any, then how long the slowest complete trial took to see them
/// all, and the rest only when it happened: `missed 4096/20480 files in 1/1 trials` or
/// `missed 0/20480 files in 0/1 trials; all seen in 212 ms`.
fn counts(r: &CountersResult) -> String {
    let n = |k: &str| r.counters.get(k).copied().unwrap_or(0);
    let mut s = format!(
        "missed {}/{} files in {}/{} trials",
        n(counter::MISSED_ITEMS),
        n(counter::ITEMS),
        n(counter::LOSSY),
        n(counter::WATCHING)
    );
    if n(counter::COMPLETE) > 0 {
        s.push_str(&format!("; all seen in {} ms", n(counter::MS_TO_ALL_MAX)));
    }
    let extras = [
        (counter::DUPLICATE_SIGHTINGS, "recorded twice"),
        (counter::STRAYS, "strays"),
        (counter::NOT_WATCHING, "not watching"),
        (counter::WORKER_FAULTS, "worker faults"),
    ];
    super::push_nonzero(&mut s, r, &extras);
    s
}

#[cfg(test)]
mod tests {
    use crate::report::model::CountersResult;

    #[test]
    fn a_run_says_what_was_missed_and_how_long_seeing_everything_took() {
        let run = |counts: &[(&str, u64)]| {
            let r = CountersResult {
                counters: counts.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
                ..Default::default()
            };
            (super::WORDS.counts)(&r)
        };
        assert_eq!(
            run(&[("items", 20480), ("missed_items", 4096), ("lossy", 1), ("watching", 1)]),
            "missed 4096/20480 files in 1/1 trials"
        );
        assert_eq!(
            run(&[("items", 20480), ("watching", 1), ("complete", 1), ("ms_to_all_max", 212), ("strays", 2)]),
            "missed 0/20480 files in 0/1 trials; all seen in 212 ms; strays 2"
        );
    }
}

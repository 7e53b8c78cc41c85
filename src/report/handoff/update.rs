//! The shared-file update scenario's words in the reports: the paragraph above its table, the
//! text of a run's counts, and the counters that count failures.

use super::Words;
use crate::report::model::{CountersResult, Scenario};
use crate::verdict::counter;

/// The update scenario's words.
pub const WORDS: Words = Words {
    scenario: Scenario::Update,
    intro: "Every worker adds 1 to one counter file (`0` at the start) 10 times by the recipe, the workers released together, a few hundred µs to 2 ms apart, or with the last one paused (`SIGSTOP`, 5 ms) early in its steps, by turns, while a reader reads the file until they are done. `lost`: increments missing from the counter afterwards (the sum of the whole numbers on its lines), out of those asked, with the trials that lost any; `torn`: reads that saw an empty or partial value; counted from the counter file and the folder afterwards and from what the reader read (compared byte for byte with every whole value).",
    counts,
    failures: &[
        (counter::LOSSY, counter::TRIALS),
        (counter::EXCESS_UPDATES, counter::INCREMENTS),
        (counter::UNREADABLE, counter::TRIALS),
        (counter::TORN_READS, counter::READS),
        (counter::ABSENT_READS, counter::READS),
        (counter::LEFTOVER_FILES, counter::TRIALS),
    ],
    faults: &[counter::WORKER_FAULTS],
    intent: "update a shared file",
    laid_out: false,
};

/// The text of one run (natural or amplified) of an update cell: increments lost over those
/// asked, with the trials that lost any, then torn reads over reads, and whatever else went
/// wrong only when it did: `lost 57/600 updates in 7/10 trials; torn 0/812 reads`.
fn counts(r: &CountersResult) -> String {
    let n = |k: &str| r.counters.get(k).copied().unwrap_or(0);
    let mut s = format!(
        "lost {}/{} updates in {}/{} trials; torn {}/{} reads",
        n(counter::LOST_UPDATES),
        n(counter::INCREMENTS),
        n(counter::LOSSY),
        n(counter::TRIALS),
        n(counter::TORN_READS),
        n(counter::READS)
    );
    let extras = [
        (counter::EXCESS_UPDATES, "excess"),
        (counter::UNREADABLE, "unreadable"),
        (counter::ABSENT_READS, "absent reads"),
        (counter::READ_ERRORS, "read errors"),
        (counter::LEFTOVER_FILES, "left behind"),
        (counter::WORKER_FAULTS, "worker faults"),
    ];
    super::push_nonzero(&mut s, r, &extras);
    s
}

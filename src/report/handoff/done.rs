//! The done-marker scenario's words in the reports: the paragraph above its table, the text of a
//! run's counts, and the counters that count failures.

use super::Words;
use crate::report::model::{CountersResult, Scenario};
use crate::verdict::counter;

/// The done-marker scenario's words.
pub const WORDS: Words = Words {
    scenario: Scenario::DoneMarker,
    intro: "A writer writes a data file in 4 KiB writes (with a manifest after it, before it, or none) and is paused mid-write by the harness (SIGSTOP, longer than the stability window); a consumer takes the file when the recipe's rule says it is complete (the manifest exists; its size or mtime stopped changing) and reads it once. `premature`: consumes of a file that was not whole; `never`: files the rule never released.",
    counts,
    failures: &[(counter::PREMATURE_CONSUMES, counter::CONSUMED), (counter::NEVER_CONSUMED, counter::ITEMS)],
    faults: &[counter::CONSUMER_FAULTS],
    intent: "tell a consumer a file is complete",
    laid_out: false,
};

/// The text of one run (natural or amplified) of a done-marker cell: premature consumes over
/// consumes, items never consumed, and whatever else happened only when it did: `premature
/// 10/10 consumed; never 0`.
fn counts(r: &CountersResult) -> String {
    let n = |k: &str| r.counters.get(k).copied().unwrap_or(0);
    let mut s = format!(
        "premature {}/{} consumed; never {}",
        n(counter::PREMATURE_CONSUMES),
        n(counter::CONSUMED),
        n(counter::NEVER_CONSUMED)
    );
    let extras = [
        (counter::WRITE_FAILED, "write failed"),
        (counter::DAMAGED_TARGETS, "damaged"),
        (counter::CONSUMER_FAULTS, "consumer faults"),
    ];
    super::push_nonzero(&mut s, r, &extras);
    s
}

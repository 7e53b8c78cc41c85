//! The ledger scenario's words in the reports: the paragraph above its table, the text of a
//! run's counts, and the counters that count failures.

use super::Words;
use crate::report::model::{CountersResult, Scenario};
use crate::verdict::counter;

/// The ledger scenario's words.
pub const WORDS: Words = Words {
    scenario: Scenario::Ledger,
    intro: "One item with one idempotency key is delivered to every worker; the workers, released together, a few hundred µs to 2 ms apart, or with the last one paused (`SIGSTOP`, 5 ms) early in its steps, by turns, each decide by the recipe whether to process it, and one that does makes the side effect (its own effect file) and records the key. `duplicated`: trials in which the side effect was made twice or more (`+N`: effects beyond the first); `unprocessed`: trials in which nobody made it; `unrecorded`: trials after which the ledger does not hold the key; counted from the effect files and the ledger afterwards.",
    counts,
    failures: &[(counter::DUPLICATED, counter::TRIALS), (counter::UNPROCESSED, counter::TRIALS), (counter::UNRECORDED, counter::TRIALS)],
    faults: &[counter::WORKER_FAULTS],
    intent: "process an item once (idempotency)",
    laid_out: false,
};

/// The text of one run (natural or amplified) of a ledger cell: trials with a duplicate side
/// effect over the trials (with the effects beyond the first), then trials nobody processed
/// the item in, trials the key was left unrecorded after and worker faults, only when there
/// were any: `duplicated 7/20 trials (+9 effects)`.
fn counts(r: &CountersResult) -> String {
    let n = |k: &str| r.counters.get(k).copied().unwrap_or(0);
    let mut s = format!("duplicated {}/{} trials", n(counter::DUPLICATED), n(counter::TRIALS));
    if n(counter::DUPLICATE_EFFECTS) > 0 {
        s.push_str(&format!(" (+{} effects)", n(counter::DUPLICATE_EFFECTS)));
    }
    let extras = [
        (counter::UNPROCESSED, "unprocessed"),
        (counter::UNRECORDED, "unrecorded"),
        (counter::WORKER_FAULTS, "worker faults"),
    ];
    super::push_nonzero(&mut s, r, &extras);
    s
}

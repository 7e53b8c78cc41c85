//! The claim scenario's words in the reports: the paragraph above its table, the text of a
//! run's counts, and the counters that count failures.

use super::Words;
use crate::report::model::{CountersResult, Scenario};
use crate::verdict::counter;

/// The claim scenario's words.
pub const WORDS: Words = Words {
    scenario: Scenario::Claim,
    intro: "Workers, released together, take the files of one `incoming/` folder by the recipe; each appends what it processed to its own output file. `duplicates`: processings beyond the first of an item; `lost`: items no worker processed and no longer in `incoming/`; counted from the output files and the folder afterwards.",
    counts,
    // an item left in incoming/ was never processed: the workers gave up on it
    failures: &[
        (counter::DUPLICATE_CLAIMS, counter::ITEMS),
        (counter::LOST_ITEMS, counter::ITEMS),
        (counter::LEFT_UNCLAIMED, counter::ITEMS),
    ],
    faults: &[counter::WORKER_FAULTS],
    intent: "claim files from a shared folder",
    laid_out: false,
};

/// The text of one run (natural or amplified) of a claim cell: items processed more than once
/// over the items (with the processings beyond the first), items lost, and whatever else
/// happened (items left unclaimed, worker faults) only when it did: `duplicated 9/200 items
/// (+12 processings); lost 0`.
fn counts(r: &CountersResult) -> String {
    let n = |k: &str| r.counters.get(k).copied().unwrap_or(0);
    // results from before `duplicated_items` have only the processings beyond the first
    let mut s = match r.counters.get(counter::DUPLICATED_ITEMS) {
        Some(d) if n(counter::DUPLICATE_CLAIMS) > 0 => {
            format!("duplicated {d}/{} items (+{} processings)", n(counter::ITEMS), n(counter::DUPLICATE_CLAIMS))
        }
        Some(d) => format!("duplicated {d}/{} items", n(counter::ITEMS)),
        None => format!("duplicates {}/{} items", n(counter::DUPLICATE_CLAIMS), n(counter::ITEMS)),
    };
    s.push_str(&format!("; lost {}", n(counter::LOST_ITEMS)));
    super::push_nonzero(
        &mut s,
        r,
        &[(counter::LEFT_UNCLAIMED, "left unclaimed"), (counter::WORKER_FAULTS, "worker faults")],
    );
    s
}

//! The publish scenario's words in the reports: the paragraph above its table, the text of a
//! run's counts, and the counters that count failures.

use super::Words;
use crate::report::model::{CountersResult, Scenario};
use crate::verdict::counter;

/// The publish scenario's words.
pub const WORDS: Words = Words {
    scenario: Scenario::Publish,
    intro: "A writer publishes each file (a header, the payload in 4 KiB writes, a trailer) by the recipe while readers read the final name until the writer is done, then once more. `torn`: reads that found the name but not the whole content; `missing`: readers that never read the file whole; `damaged`: final names not holding the whole content afterwards; counted from what the readers read (compared byte for byte) and from the folder afterwards.",
    counts,
    // a write that failed published nothing: the readers' counts cannot show it (Node's rename
    // across file systems, EXDEV, failed every item while no read was torn)
    failures: &[
        (counter::TORN_READS, counter::READS),
        (counter::MISSING, counter::READER_ITEMS),
        (counter::DAMAGED_TARGETS, counter::PUBLISHED),
        (counter::WRITE_FAILED, counter::ITEMS),
    ],
    faults: &[counter::READER_FAULTS],
    intent: "publish a file for readers",
    laid_out: false,
};

/// The text of one run (natural or amplified) of a publish cell: torn reads over reads,
/// readers that never saw the file whole over reader-items, damaged targets over items
/// published, and whatever else went wrong (failed writes, files left behind, reader faults)
/// only when it happened: `torn 4/4888 reads; missing 0/80; damaged 0/40`.
fn counts(r: &CountersResult) -> String {
    let n = |k: &str| r.counters.get(k).copied().unwrap_or(0);
    let mut s = format!(
        "torn {}/{} reads; missing {}/{}; damaged {}/{}",
        n(counter::TORN_READS),
        n(counter::READS),
        n(counter::MISSING),
        n(counter::READER_ITEMS),
        n(counter::DAMAGED_TARGETS),
        n(counter::PUBLISHED)
    );
    for (k, label) in [
        (counter::WRITE_FAILED, "write failed"),
        (counter::LEFTOVER_FILES, "left behind"),
        (counter::READER_FAULTS, "reader faults"),
    ] {
        if n(k) > 0 {
            s.push_str(&format!("; {label} {}", n(k)));
        }
        if k == counter::WRITE_FAILED && n(k) > 0 && !r.errors.is_empty() {
            let codes: Vec<&str> = r.errors.keys().map(String::as_str).collect();
            s.push_str(&format!(" ({})", codes.join(", ")));
        }
    }
    s
}

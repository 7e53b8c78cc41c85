//! The publish judge: what the readers of one published file saw and what the file system
//! held afterwards → counted failures (`docs/HANDOFF.md`, "publish").
//!
//! One item is one trial: a writer publishes one file by its recipe while R readers read the
//! final name again and again until the writer is done, then once more. Counters, each summed
//! over the items:
//!
//! - `items`; `published` (the writer's recipe reported success); `write_failed`;
//! - `reads` = `complete_reads` + `torn_reads` + `absent_reads` + `read_errors` over every
//!   reader that reported its counters (`torn_reads` counts empty reads too: the name was
//!   there, the content was not);
//! - `missing`: of the `reader_items` (a reader that reported its counts, in an item whose
//!   writer succeeded), those in which the reader never read the whole content (its last read
//!   starts after the writer's result, so this is a file the reader could not see complete);
//! - `damaged_targets`: items whose writer succeeded but whose final name did not hold the
//!   whole content afterwards;
//! - `leftover_files`: names other than the final one left in the item's folder afterwards
//!   (temp files not cleaned up);
//! - `reader_faults`: reader-items that crashed, timed out or reported no counters.

use super::counter;
use std::collections::BTreeMap;

use super::Report;

/// What one reader reported for one item: its counters (`read.poll`: `reads`, `complete`,
/// `torn`, `empty`, `absent`, `errors`), or `None` when it faulted.
pub type ReaderCounts = Option<BTreeMap<String, i64>>;

/// What one reader's counters (`read.poll`: complete, torn, empty, absent, errors) say of its
/// reads, as the publish and update judges count them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reads {
    /// Reads of any result.
    pub all: u64,
    /// Reads that saw a whole content.
    pub complete: u64,
    /// Reads that saw an empty or partial file (a torn read).
    pub torn: u64,
    /// Reads that found no file.
    pub absent: u64,
    /// Reads that failed otherwise.
    pub errors: u64,
}

impl Reads {
    /// The reads of reader counters `r` (a missing counter is 0, a negative one too).
    pub fn of(r: &BTreeMap<String, i64>) -> Reads {
        let n = |k: &str| r.get(k).copied().unwrap_or(0).max(0) as u64;
        let (complete, torn, empty, absent, errors) = (n("complete"), n("torn"), n("empty"), n("absent"), n("errors"));
        Reads { all: complete + torn + empty + absent + errors, complete, torn: torn + empty, absent, errors }
    }
}

/// What the harness observed of one publish item.
#[derive(Debug, Clone, PartialEq)]
pub struct PublishItem {
    /// How the writer's recipe ended.
    pub writer: Report,
    /// The writer's normalised error code, when it failed.
    pub writer_error: Option<String>,
    /// Each reader's counters.
    pub readers: Vec<ReaderCounts>,
    /// True when the final name held exactly the published content afterwards.
    pub target_whole: bool,
    /// Names other than the final one in the item's folder afterwards.
    pub leftovers: usize,
}

/// The counters of a publish cell over `items` (see the module documentation), and the
/// writer's error codes → count.
pub fn judge_publish(items: &[PublishItem]) -> (BTreeMap<String, u64>, BTreeMap<String, usize>) {
    let mut c = super::zeroed(&[
        counter::ITEMS,
        counter::PUBLISHED,
        counter::WRITE_FAILED,
        counter::READS,
        counter::COMPLETE_READS,
        counter::TORN_READS,
        counter::ABSENT_READS,
        counter::READ_ERRORS,
        counter::MISSING,
        counter::READER_ITEMS,
        counter::DAMAGED_TARGETS,
        counter::LEFTOVER_FILES,
        counter::READER_FAULTS,
    ]);
    let mut errors = BTreeMap::new();
    let mut add = |k: &str, n: u64| *c.get_mut(k).expect("every counter is listed") += n;
    for it in items {
        add(counter::ITEMS, 1);
        let ok = it.writer == Report::Success;
        add(if ok { counter::PUBLISHED } else { counter::WRITE_FAILED }, 1);
        if let Some(code) = &it.writer_error {
            *errors.entry(code.clone()).or_insert(0) += 1;
        }
        if ok && !it.target_whole {
            add(counter::DAMAGED_TARGETS, 1);
        }
        add(counter::LEFTOVER_FILES, it.leftovers as u64);
        for r in &it.readers {
            let Some(r) = r.as_ref().filter(|r| r.contains_key("reads")) else {
                add(counter::READER_FAULTS, 1);
                continue;
            };
            let reads = Reads::of(r);
            add(counter::READS, reads.all);
            add(counter::COMPLETE_READS, reads.complete);
            add(counter::TORN_READS, reads.torn);
            add(counter::ABSENT_READS, reads.absent);
            add(counter::READ_ERRORS, reads.errors);
            if ok {
                add(counter::READER_ITEMS, 1);
                if reads.complete == 0 {
                    add(counter::MISSING, 1);
                }
            }
        }
    }
    (c, errors)
}

#[cfg(test)]
mod tests {
    use super::{judge_publish, PublishItem, ReaderCounts, Report};

    fn reader(complete: i64, torn: i64, empty: i64, absent: i64) -> ReaderCounts {
        let reads = complete + torn + empty + absent;
        Some(
            [
                ("reads", reads),
                ("complete", complete),
                ("torn", torn),
                ("empty", empty),
                ("absent", absent),
                ("errors", 0),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        )
    }

    #[test]
    fn counts_add_up_and_failures_are_counted_from_what_was_seen() {
        let items = [
            // a torn read and an empty one, then the whole file
            PublishItem {
                writer: Report::Success,
                writer_error: None,
                readers: vec![reader(3, 1, 1, 4), reader(1, 0, 0, 9)],
                target_whole: true,
                leftovers: 0,
            },
            // the reader never saw it whole; a temp file left behind
            PublishItem {
                writer: Report::Success,
                writer_error: None,
                readers: vec![reader(0, 2, 0, 5), None],
                target_whole: false,
                leftovers: 1,
            },
            PublishItem {
                writer: Report::Error,
                writer_error: Some("EXDEV".into()),
                readers: vec![reader(0, 0, 0, 7), reader(0, 0, 0, 3)],
                target_whole: false,
                leftovers: 0,
            },
        ];
        let (c, errors) = judge_publish(&items);
        assert_eq!((c["items"], c["published"], c["write_failed"]), (3, 2, 1));
        assert_eq!(c["reads"], c["complete_reads"] + c["torn_reads"] + c["absent_reads"] + c["read_errors"]);
        assert_eq!((c["torn_reads"], c["complete_reads"]), (4, 4));
        assert_eq!((c["missing"], c["reader_items"]), (1, 3), "only where the writer succeeded");
        assert_eq!((c["damaged_targets"], c["leftover_files"], c["reader_faults"]), (1, 1, 1));
        assert_eq!(errors.get("EXDEV"), Some(&1));
    }
}

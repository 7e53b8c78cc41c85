//! The done-marker judge: did the consumer act on a data file before it was complete?
//! (`docs/HANDOFF.md`, "done-marker").
//!
//! Counters, each summed over the items: `items`; `written` / `write_failed` (the writer's
//! recipe); `consumed` (the consumer's rule held and it read the file), of which
//! `premature_consumes` (what it read was not the whole file) and `whole_consumes`;
//! `never_consumed` (items whose writer succeeded but whose rule never held before the
//! consumer gave up); `damaged_targets` (written items whose data file did not hold the
//! whole content afterwards); `consumer_faults`.

use super::counter;
use std::collections::BTreeMap;

use super::Report;

/// What the harness observed of one done-marker item.
#[derive(Debug, Clone, PartialEq)]
pub struct DoneItem {
    /// How the writer's recipe ended.
    pub writer: Report,
    /// The consumer's counters (`consumed`, `whole`, `partial`), `None` when it faulted.
    pub consumer: Option<BTreeMap<String, i64>>,
    /// True when the data file held exactly the whole content afterwards.
    pub target_whole: bool,
}

impl DoneItem {
    /// True when the consumer read the file before it was whole (a `premature_consumes` item).
    pub fn premature(&self) -> bool {
        let n = |k: &BTreeMap<String, i64>, key: &str| k.get(key).copied().unwrap_or(0).max(0);
        self.consumer.as_ref().is_some_and(|k| n(k, "consumed") > 0 && n(k, "whole") == 0)
    }
}

/// The counters of a done-marker cell over `items` (see the module documentation).
pub fn judge_done(items: &[DoneItem]) -> BTreeMap<String, u64> {
    let mut c = super::zeroed(&[
        counter::ITEMS,
        counter::WRITTEN,
        counter::WRITE_FAILED,
        counter::CONSUMED,
        counter::PREMATURE_CONSUMES,
        counter::WHOLE_CONSUMES,
        counter::NEVER_CONSUMED,
        counter::DAMAGED_TARGETS,
        counter::CONSUMER_FAULTS,
    ]);
    let mut add = |k: &str, n: u64| *c.get_mut(k).expect("every counter is listed") += n;
    for it in items {
        add(counter::ITEMS, 1);
        let ok = it.writer == Report::Success;
        add(if ok { counter::WRITTEN } else { counter::WRITE_FAILED }, 1);
        if ok && !it.target_whole {
            add(counter::DAMAGED_TARGETS, 1);
        }
        let Some(k) = it.consumer.as_ref().filter(|k| k.contains_key("consumed")) else {
            add(counter::CONSUMER_FAULTS, 1);
            continue;
        };
        let n = |key: &str| k.get(key).copied().unwrap_or(0).max(0) as u64;
        if n("consumed") > 0 {
            add(counter::CONSUMED, 1);
            add(if it.premature() { counter::PREMATURE_CONSUMES } else { counter::WHOLE_CONSUMES }, 1);
        } else if ok {
            add(counter::NEVER_CONSUMED, 1);
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::{judge_done, DoneItem, Report};

    fn consumer(consumed: i64, whole: i64) -> Option<BTreeMap<String, i64>> {
        let partial = consumed - whole;
        Some([("consumed", consumed), ("whole", whole), ("partial", partial)].map(|(k, v)| (k.to_string(), v)).into())
    }

    #[test]
    fn premature_consumes_are_what_the_consumer_read_short() {
        let item = |consumer, target_whole| DoneItem { writer: Report::Success, consumer, target_whole };
        let c = judge_done(&[
            item(consumer(1, 1), true),
            item(consumer(1, 0), true),
            item(consumer(0, 0), true),
            item(None, false),
        ]);
        assert_eq!((c["items"], c["written"], c["consumed"]), (4, 4, 2));
        assert_eq!((c["premature_consumes"], c["whole_consumes"], c["never_consumed"]), (1, 1, 1));
        assert_eq!((c["consumer_faults"], c["damaged_targets"]), (1, 1));
    }
}

//! The OS-lock scenario's words in the reports: the paragraph above its table, the text of a
//! run's counts, and the counters that count failures.

use super::Words;
use crate::report::model::{CountersResult, Scenario};
use crate::verdict::counter;
use crate::verdict::os_lock::{Intrusion, LockSeen};

/// The OS-lock scenario's words.
pub const WORDS: Words = Words {
    scenario: Scenario::OsLock,
    intro: "The harness puts one small file per intrusion in a folder; a holder locks every one by the recipe and holds them. Meanwhile another process of the same runtime goes at its own files without asking: writes (the runtime's usual write), appends, renames, deletes, writes through a memory map, and takes the holder's own kind of lock again (`2nd lock`, out of the trials in which the holder had locked everything); then the harness itself (plain POSIX calls, as any other program would) writes, appends, renames, deletes, `flock`s and `fcntl`-locks its own files. Each count is the trials in which it got through, read from the files afterwards (a file that no longer holds what the harness wrote, a name that is gone, the intruder's marker made while it held the lock). `in /proc/locks`: the kinds of lock the kernel listed on the holder's files while it held them (`flock`, `fcntl`, `OFD`; `none`: the call took no OS lock).",
    counts,
    failures: &[(counter::SECOND_LOCK_THROUGH, counter::LOCKED)],
    faults: &[counter::WORKER_FAULTS, counter::NOT_LOCKED],
    intent: "lock a file with the OS (against a second holder)",
    laid_out: true,
};

/// The text of one run (natural or amplified) of an OS-lock cell: second locks over the locked
/// trials, then what else got through from the same runtime and from the harness, and the
/// kinds of OS lock seen: `2nd lock 0/2; same runtime: write 2, append 2, rename 2, delete 2,
/// mmap –; harness: write 2, append 2, rename 2, delete 2, flock 0, fcntl 2; in /proc/locks: flock`.
fn counts(r: &CountersResult) -> String {
    let n = |k: &str| r.counters.get(k).copied().unwrap_or(0);
    let list = |foreign: bool| {
        Intrusion::ALL
            .into_iter()
            .filter(|i| i.foreign() == foreign && *i != Intrusion::SecondLock)
            .map(|i| match i {
                Intrusion::Mmap if n(counter::MMAP_TRIED) == 0 => format!("{} –", i.label()),
                _ => format!("{} {}", i.label(), n(i.counter())),
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let seen: Vec<&str> = LockSeen::ALL.into_iter().filter(|k| n(k.counter()) > 0).map(LockSeen::label).collect();
    let mut s = format!(
        "2nd lock {}/{}; same runtime: {}; harness: {}; in /proc/locks: {}",
        n(counter::SECOND_LOCK_THROUGH),
        n(counter::LOCKED),
        list(false),
        list(true),
        if seen.is_empty() { "none".to_string() } else { seen.join(" + ") }
    );
    super::push_nonzero(&mut s, r, &[(counter::NOT_LOCKED, "not locked"), (counter::WORKER_FAULTS, "worker faults")]);
    s
}

#[cfg(test)]
mod tests {
    use crate::report::model::CountersResult;

    #[test]
    fn a_run_lists_what_got_through_by_whom_and_the_locks_seen() {
        let mut r = CountersResult::default();
        for (k, v) in [("locked", 2), ("write_through", 2), ("foreign_fcntl_through", 1), ("flock_seen", 2)] {
            r.counters.insert(k.to_string(), v);
        }
        assert_eq!(
            (super::WORDS.counts)(&r),
            "2nd lock 0/2; same runtime: write 2, append 0, rename 0, delete 0, mmap –; harness: write 0, append 0, rename 0, delete 0, flock 0, fcntl 1; in /proc/locks: flock"
        );
        r.counters.insert("mmap_tried".into(), 2);
        r.counters.insert("not_locked".into(), 1);
        let t = (super::WORDS.counts)(&r);
        assert!(t.contains("mmap 0;") && t.ends_with("; not locked 1"), "{t}");
    }
}

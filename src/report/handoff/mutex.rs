//! The mutex scenario's words in the reports: the paragraph above its table, the text of a
//! run's counts, and the counters that count failures.

use super::Words;
use crate::report::model::{CountersResult, Scenario};
use crate::verdict::counter;

/// The mutex scenario's words.
pub const WORDS: Words = Words {
    scenario: Scenario::Mutex,
    intro: "Lock code raced around a critical section: each contender calls the recipe's `acquire(path, owner)` (again every 5 ms while it returns false) and, while it believes it holds the lock, appends `enter` and `leave` lines to one log, holding 20 ms between them, then calls `release(path, owner)`. Trials: all released together (thirty, three in each of ten orderings: a few hundred µs to 2 ms apart, or the last one paused early), a holder killed (`SIGKILL`) once it holds the lock before the others try, a holder paused (`SIGSTOP`) while the others try (resumed afterwards), and another contender calling `release` with its own owner id while the holder holds, then trying to acquire. `double-owned`: trials in which a contender entered while another was inside (the log's order, no clock; a killed holder is not inside); `stuck`: killed-holder trials nobody took the lock in within `--takeover-wait`; `taken from a paused holder`: another entered while the paused holder, alive, believed it held the lock (what any lock with stale takeover does without fencing: shown, not judged); `released by another`: the foreign release freed the holder's lock.",
    counts,
    failures: &[
        (counter::DOUBLE_OWNERSHIP, counter::TRIALS),
        (counter::RELEASED_BY_OTHER, counter::FOREIGN_TRIALS),
        (counter::STUCK, counter::KILLED_TRIALS),
    ],
    faults: &[counter::WORKER_FAULTS, counter::NONE_ACQUIRED, counter::CODE_ERRORS, counter::NOT_LOADED],
    intent: "lock around a critical section (lock code, libraries, your own)",
    laid_out: false,
};

/// The text of one run (natural or amplified) of a mutex cell: double ownership over the
/// trials, then the killed holder's, the paused holder's and the foreign release's trials, and
/// whatever else happened only when it did: `double-owned 0/33 trials; killed holder: stuck
/// 1/1; paused holder: taken 0/1; released by another 0/1`.
fn counts(r: &CountersResult) -> String {
    let n = |k: &str| r.counters.get(k).copied().unwrap_or(0);
    let mut s = format!("double-owned {}/{} trials", n(counter::DOUBLE_OWNERSHIP), n(counter::TRIALS));
    s.push_str(&format!("; killed holder: stuck {}/{}", n(counter::STUCK), n(counter::KILLED_TRIALS)));
    if n(counter::KILLED_TRIALS) > n(counter::STUCK) {
        s.push_str(&format!(" (taken over within {} ms)", n(counter::TAKEOVER_MS_MAX)));
    }
    s.push_str(&format!(
        "; paused holder: taken {}/{}; released by another {}/{}",
        n(counter::TAKEN_FROM_PAUSED),
        n(counter::PAUSED_TRIALS),
        n(counter::RELEASED_BY_OTHER),
        n(counter::FOREIGN_TRIALS)
    ));
    let extras = [
        (counter::NONE_ACQUIRED, "lock not taken when free"),
        (counter::GARBLED_LINES, "garbled log lines"),
        (counter::WORKER_FAULTS, "worker faults"),
        (counter::CODE_ERRORS, "lock code threw"),
        (counter::NOT_LOADED, "not loaded"),
    ];
    super::push_nonzero(&mut s, r, &extras);
    s
}

#[cfg(test)]
mod tests {
    use crate::report::model::CountersResult;

    #[test]
    fn a_run_gives_each_kind_of_trial_and_faults_only_when_there_are() {
        let mut r = CountersResult::default();
        for (k, v) in [
            ("trials", 13),
            ("double_ownership", 4),
            ("killed_trials", 1),
            ("paused_trials", 1),
            ("foreign_trials", 1),
            ("released_by_other", 1),
        ] {
            r.counters.insert(k.to_string(), v);
        }
        assert_eq!(
            (super::WORDS.counts)(&r),
            "double-owned 4/13 trials; killed holder: stuck 0/1 (taken over within 0 ms); paused holder: taken 0/1; released by another 1/1"
        );
        r.counters.insert("stuck".into(), 1);
        r.counters.insert("worker_faults".into(), 2);
        let t = (super::WORDS.counts)(&r);
        assert!(t.contains("stuck 1/1;") && t.ends_with("; worker faults 2"), "{t}");
    }
}

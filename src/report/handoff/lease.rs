//! The lease scenario's words in the reports: the paragraph above its table, the text of a
//! run's counts, and the counters that count failures.

use super::Words;
use crate::report::model::{CountersResult, Scenario};
use crate::verdict::counter;

/// The lease scenario's words.
pub const WORDS: Words = Words {
    scenario: Scenario::Lease,
    intro: "The harness leaves a stale lease behind (its holder gone: a record whose `expiresAt` and mtime lie an hour back); the contenders, released together, a few hundred µs to 2 ms apart, or with the last one paused (`SIGSTOP`, 5 ms) early in its takeover, by turns, each try to take it over by the recipe, and one that believes it did writes its own `held` marker and keeps the lease. `double-owned`: trials in which two or more contenders held the lease at once (two markers; nobody releases within a trial, so no clock is read); `stuck`: trials in which nobody took it over; `lost`: holders whose record the lock no longer holds afterwards; counted from the markers and the lock afterwards.",
    counts,
    failures: &[(counter::DOUBLE_OWNERSHIP, counter::TRIALS), (counter::STUCK, counter::TRIALS)],
    faults: &[counter::TAKER_FAULTS],
    intent: "take over a stale lease",
    laid_out: false,
};

/// The text of one run (natural or amplified) of a lease cell: trials with two holders or
/// more over the trials (with the holders beyond the first), trials nobody took the lease
/// over in, and whatever else happened (leases lost, files left behind, taker faults) only
/// when it did: `double-owned 7/20 trials (+9 holders); stuck 0; lost 9`.
fn counts(r: &CountersResult) -> String {
    let n = |k: &str| r.counters.get(k).copied().unwrap_or(0);
    let mut s = format!("double-owned {}/{} trials", n(counter::DOUBLE_OWNERSHIP), n(counter::TRIALS));
    if n(counter::EXTRA_HOLDERS) > 0 {
        s.push_str(&format!(" (+{} holders)", n(counter::EXTRA_HOLDERS)));
    }
    s.push_str(&format!("; stuck {}", n(counter::STUCK)));
    let extras = [
        (counter::LOST_LEASES, "lost"),
        (counter::LEFTOVER_FILES, "left behind"),
        (counter::TAKER_FAULTS, "taker faults"),
    ];
    super::push_nonzero(&mut s, r, &extras);
    s
}

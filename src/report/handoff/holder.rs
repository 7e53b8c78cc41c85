//! The lease-holder scenario's words in the reports: the paragraph above its table, the text
//! of a run's counts, and the counters that count failures.

use super::Words;
use crate::report::model::{CountersResult, Scenario};
use crate::verdict::counter;

/// The holder scenario's words.
pub const WORDS: Words = Words {
    scenario: Scenario::Holder,
    intro: "The harness gives a holder a live lease (expiring 20 ms later); the holder starts its 60 ms of work and is stopped at once (`SIGSTOP`); once the lease has expired a taker takes it over (by its `expiresAt`: delete, create `'wx'`) and writes its marker; the holder is resumed (`SIGCONT`, 200 ms after its start) and goes on by the recipe: renews, makes its side effect, releases. `after loss`: taken-over trials in which the old holder made its side effect; `overwritten`: after which the lease holds the old holder's record; `deleted`: after which there is no lease; counted from the effect file, the taker's marker and the lease afterwards.",
    counts,
    failures: &[
        (counter::EFFECTS_AFTER_LOSS, counter::TAKEN_OVER),
        (counter::LEASES_OVERWRITTEN, counter::TAKEN_OVER),
        (counter::LEASES_DELETED, counter::TAKEN_OVER),
    ],
    faults: &[counter::WORKER_FAULTS],
    intent: "keep a lease while working",
    laid_out: true,
};

/// The text of one run (natural or amplified) of a holder cell: side effects after the loss
/// over the taken-over trials, then leases overwritten and deleted, and trials nobody took
/// over and worker faults only when there were any: `after loss 3/3; overwritten 0; deleted 3`.
fn counts(r: &CountersResult) -> String {
    let n = |k: &str| r.counters.get(k).copied().unwrap_or(0);
    let mut s = format!(
        "after loss {}/{}; overwritten {}; deleted {}",
        n(counter::EFFECTS_AFTER_LOSS),
        n(counter::TAKEN_OVER),
        n(counter::LEASES_OVERWRITTEN),
        n(counter::LEASES_DELETED)
    );
    let not_taken = n(counter::TRIALS).saturating_sub(n(counter::TAKEN_OVER));
    if not_taken > 0 {
        s.push_str(&format!("; not taken over {not_taken}"));
    }
    super::push_nonzero(&mut s, r, &[(counter::WORKER_FAULTS, "worker faults")]);
    s
}

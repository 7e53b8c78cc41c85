//! The names of the counters the harness derives for hand-off cells (`results.json`'s
//! `counters`; `docs/GLOSSARY.md`): one spelling, used by the verdicts that count them, the
//! tables that show them and the comparisons that weigh them. A renamed constant changes how
//! older results files read, so these strings never change.

/// Items handed off (publish, done-marker) or put in the incoming folder (claim), or files of
/// the bursts a watching consumer was to see (watch).
pub const ITEMS: &str = "items";
/// Publish: items whose writer succeeded.
pub const PUBLISHED: &str = "published";
/// Publish, done-marker: items whose writer failed.
pub const WRITE_FAILED: &str = "write_failed";
/// Publish, update: reads the readers made, of any result.
pub const READS: &str = "reads";
/// Publish: reads that saw a whole published content.
pub const COMPLETE_READS: &str = "complete_reads";
/// Publish, update: reads that saw an empty or partial file (a torn read).
pub const TORN_READS: &str = "torn_reads";
/// Publish, update: reads that found no file.
pub const ABSENT_READS: &str = "absent_reads";
/// Publish, update: reads that failed otherwise.
pub const READ_ERRORS: &str = "read_errors";
/// Publish: (reader, item) pairs in which the reader never saw the whole content.
pub const MISSING: &str = "missing";
/// Publish: (reader, item) pairs of published items: what `missing` is out of.
pub const READER_ITEMS: &str = "reader_items";
/// Publish, done-marker: published items whose final file is not whole afterwards.
pub const DAMAGED_TARGETS: &str = "damaged_targets";
/// Publish: names other than the final one left in an item's folder; lease: names other than
/// the lease and the `held` markers left in a trial's folder (a renamed-aside record, a breaker
/// never removed); update: names other than the counter (a lock never released, a temp file).
pub const LEFTOVER_FILES: &str = "leftover_files";
/// Publish: readers that crashed, hung or reported no counts.
pub const READER_FAULTS: &str = "reader_faults";
/// Done-marker: items whose writer succeeded.
pub const WRITTEN: &str = "written";
/// Done-marker: items the consumer took.
pub const CONSUMED: &str = "consumed";
/// Done-marker: items taken before they were whole.
pub const PREMATURE_CONSUMES: &str = "premature_consumes";
/// Done-marker: items taken whole.
pub const WHOLE_CONSUMES: &str = "whole_consumes";
/// Done-marker: written items the consumer never took.
pub const NEVER_CONSUMED: &str = "never_consumed";
/// Done-marker: consumers that crashed, hung or reported no counts.
pub const CONSUMER_FAULTS: &str = "consumer_faults";
/// Claim: processings, over all workers.
pub const PROCESSED: &str = "processed";
/// Claim: processings beyond the first of an item.
pub const DUPLICATE_CLAIMS: &str = "duplicate_claims";
/// Claim: items processed more than once.
pub const DUPLICATED_ITEMS: &str = "duplicated_items";
/// Claim: items neither processed nor left in the incoming folder.
pub const LOST_ITEMS: &str = "lost_items";
/// Claim: items left in the incoming folder.
pub const LEFT_UNCLAIMED: &str = "left_unclaimed";
/// Claim: claims that failed (the workers' count).
pub const CLAIM_FAILED: &str = "claim_failed";
/// Claim: deletes that failed (the workers' count).
pub const DELETE_FAILED: &str = "delete_failed";
/// Claim, ledger, update: workers (and update's reader) that crashed, hung or reported no
/// counts.
pub const WORKER_FAULTS: &str = "worker_faults";
/// Lease, ledger, update: trials (lease: each a stale lease left behind, then the
/// contenders released together).
pub const TRIALS: &str = "trials";
/// Lease: trials in which at least one contender took the lease over; holder: trials in which
/// the taker took the paused holder's lease over.
pub const TAKEN_OVER: &str = "taken_over";
/// Lease: trials in which two or more contenders each held the lease at once (each wrote its
/// `held` marker; nobody releases within a trial).
pub const DOUBLE_OWNERSHIP: &str = "double_ownership";
/// Lease: holders beyond the first, over all trials.
pub const EXTRA_HOLDERS: &str = "extra_holders";
/// Lease: trials in which nobody took the stale lease over.
pub const STUCK: &str = "stuck";
/// Lease: holders whose lease the lock no longer holds afterwards (another's record, the stale
/// one, or none): each believes it holds a lease it lost.
pub const LOST_LEASES: &str = "lost_leases";
/// Lease: contenders that crashed, hung or reported no counts.
pub const TAKER_FAULTS: &str = "taker_faults";
/// Ledger: trials in which the item's side effect was made twice or more.
pub const DUPLICATED: &str = "duplicated";
/// Ledger: side effects beyond the first, over all trials.
pub const DUPLICATE_EFFECTS: &str = "duplicate_effects";
/// Ledger: trials in which nobody made the item's side effect.
pub const UNPROCESSED: &str = "unprocessed";
/// Ledger: trials after which the ledger does not hold the item's key (the next delivery
/// processes it again).
pub const UNRECORDED: &str = "unrecorded";
/// Update: increments asked of the workers (workers × increments each, per trial).
pub const INCREMENTS: &str = "increments";
/// Update: trials whose counter total afterwards is below the increments asked; watch: trials
/// in which the consumer missed a file.
pub const LOSSY: &str = "lossy";
/// Update: increments missing from the counter totals (asked − total, where below), over all
/// trials.
pub const LOST_UPDATES: &str = "lost_updates";
/// Update: increments beyond those asked in the counter totals, over all trials.
pub const EXCESS_UPDATES: &str = "excess_updates";
/// Update: trials after which the counter file is absent or holds something other than whole
/// numbers.
pub const UNREADABLE: &str = "unreadable";
/// Holder: taken-over trials in which the old holder, resumed, made its side effect.
pub const EFFECTS_AFTER_LOSS: &str = "effects_after_loss";
/// Holder: taken-over trials after which the lease holds the old holder's record (a renewal
/// written over the new holder's lease).
pub const LEASES_OVERWRITTEN: &str = "leases_overwritten";
/// Holder: taken-over trials after which there is no lease (the old holder deleted the new
/// holder's).
pub const LEASES_DELETED: &str = "leases_deleted";
/// OS lock: trials in which the holder had locked every file when the harness went at them.
pub const LOCKED: &str = "locked";
/// OS lock: trials in which the holder had not locked every file when the harness went at
/// them (its lock call failed, or it was too slow): nothing of them says what the lock does.
pub const NOT_LOCKED: &str = "not_locked";
/// OS lock: locked trials in which the intruder of the holder's runtime took the holder's own
/// kind of lock too (two holders at once).
pub const SECOND_LOCK_THROUGH: &str = "second_lock_through";
/// OS lock: locked trials in which the intruder could map its file into memory at all.
pub const MMAP_TRIED: &str = "mmap_tried";
/// Watch: trials in which the consumer said it was watching (its marker) before the burst.
pub const WATCHING: &str = "watching";
/// Watch: trials in which it did not (it could not watch, or was too slow to start).
pub const NOT_WATCHING: &str = "not_watching";
/// Watch: files of the bursts the consumer's record never named.
pub const MISSED_ITEMS: &str = "missed_items";
/// Watch: record lines naming a file already named.
pub const DUPLICATE_SIGHTINGS: &str = "duplicate_sightings";
/// Watch: record lines naming no file of the burst.
pub const STRAYS: &str = "strays";
/// Watch: trials in which the record named every file before the harness's deadline.
pub const COMPLETE: &str = "complete";
/// Watch: the longest time (ms), over the complete trials, from the consumer's resume to its
/// record naming every file: a maximum, not a sum.
pub const MS_TO_ALL_MAX: &str = "ms_to_all_max";
/// Mutex: trials in which a holder was killed (`SIGKILL`) before the others tried.
pub const KILLED_TRIALS: &str = "killed_trials";
/// Mutex: the longest time (ms), over the killed trials someone took the lock in, from the
/// kill to the first taker's `enter` line: a maximum, not a sum.
pub const TAKEOVER_MS_MAX: &str = "takeover_ms_max";
/// Mutex: trials in which a holder was paused (`SIGSTOP`) while the others tried.
pub const PAUSED_TRIALS: &str = "paused_trials";
/// Mutex: paused trials in which another contender entered while the paused holder, alive,
/// still believed it held the lock (a takeover of a live holder's lock).
pub const TAKEN_FROM_PAUSED: &str = "taken_from_paused";
/// Mutex: trials in which someone released the lock with its own owner id while a holder held it.
pub const FOREIGN_TRIALS: &str = "foreign_trials";
/// Mutex: foreign trials in which that release freed the holder's lock: the releaser entered
/// while the holder was inside.
pub const RELEASED_BY_OTHER: &str = "released_by_other";
/// Mutex: `enter` lines (times a contender believed it took the lock).
pub const ACQUISITIONS: &str = "acquisitions";
/// Mutex: trials in which the free lock was not taken (nobody took it in a together-trial, or
/// the holder did not in the others).
pub const NONE_ACQUIRED: &str = "none_acquired";
/// Mutex: contenders whose lock code threw (a failed step other than waiting for the holder; a
/// refused release of someone else's lock is the lock doing its job, not counted).
pub const CODE_ERRORS: &str = "code_errors";
/// Mutex: contenders that could not load the lock code (the step `load`: a module that does not
/// parse or exports no `acquire` and `release`).
pub const NOT_LOADED: &str = "not_loaded";
/// Mutex: lines of the log that do not read as `enter|leave|done <token> <ms>`.
pub const GARBLED_LINES: &str = "garbled_lines";

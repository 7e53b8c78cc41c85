//! The lease scenario (`docs/HANDOFF.md`, "lease"): per recipe, [`LEASE_TRIALS`] trials
//! ([`LEASE_TRIALS_THOROUGH`] with `--thorough`) in which the harness leaves a stale lease
//! behind — a record whose `expiresAt` lies [`STALE_AGE_MS`] back, its mtime set as far back —
//! and `workers` contenders, released by the [`ORDERINGS`] in turn, each try to take it over.
//! A contender that believes it took the lease writes its own `held/<slot>` marker (its
//! token) and keeps the lease; the markers and the lock are read afterwards and
//! [`crate::verdict::lease`] counts double ownership, stuck trials and lost leases.

use super::handoff;
use super::trial::{Phase, Slot, TrialPlan};

use super::Measurement;
use crate::domain::Scenario;
use crate::exec::contender::Contender;
use crate::exec::driver::Control;
use crate::exec::scratch::spell;
use crate::exec::scratch::PathStyle;
use crate::handoff::{LockKind, Recipe};
use crate::report::model::CountersResult;
use crate::report::model::Finding;
use crate::verdict::lease::{judge_lease, LeaseTrial};
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Trials per lease recipe in the default run: two in each of the release orderings
/// (`ORDERINGS` of `src/engine/lease.rs`).
pub const LEASE_TRIALS: usize = 2 * ORDERINGS.len();
/// Trials per lease recipe with `--thorough`: fifteen in each ordering.
pub const LEASE_TRIALS_THOROUGH: usize = 15 * ORDERINGS.len();
/// Adaptive trials (the default run): a recipe stops once this many trials ran, every
/// ordering once, and one of them had two holders (more trials cannot make the recipe
/// exclusive).
pub const LEASE_DISPROOF_TRIALS: usize = ORDERINGS.len();
/// How long a paused contender stays stopped, µs ([`Ordering::Pause`]): five times the
/// injected delay of an amplified run, time for another contender's whole takeover (its
/// delete, create, write and close, each delayed).
pub const PAUSE_US: u64 = 5_000;

/// How the contenders of one trial are released.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ordering {
    /// Contender `i` released `i ×` this many µs after the first.
    Offset(u64),
    /// All released together; the last one stopped (`SIGSTOP` to its process group) this many
    /// µs later and resumed [`PAUSE_US`] after that. Uniform delays keep a check-then-act
    /// takeover in lockstep, where one taker's check never falls between another's delete
    /// and create; a taker paused between its check and its act does (a holder descheduled
    /// at the wrong moment, which the first article's recipe assumes away).
    Pause(u64),
    /// A slow taker among fast ones: the last contender, released first, waits `stall_us`
    /// before each step after its check (`params.stall_us`, as a taker descheduled between its
    /// steps; `probes/PROTOCOL.md`); the fast ones follow [`FAST_AFTER_STALL`] of that wait
    /// later, when the slow one has checked, and take the lease over while it waits; the
    /// second-to-last comes `late_us` after the slow one, while the slow one acts on what it
    /// checked before — the three-party interleaving of a takeover that moves the lease aside
    /// to look at it, which leaves the name empty until it puts back a lease it should not have
    /// moved. With fewer than three contenders none is released late.
    Slow {
        /// The slow taker's wait before each step, µs.
        stall_us: u64,
        /// When the late taker is released, µs after the others.
        late_us: u64,
    },
}

/// The timed orderings, taken by turns by the ledger and mutex scenarios and by update's
/// `--thorough` trials (trial `n` runs `PAUSES[n % 10]`): lockstep, offsets of about one natural release spread and of one to two
/// delayed steps of an amplified run, then the last contender paused early in its takeover
/// (about its first step natural; inside its first, second or third delayed call amplified,
/// at the default delay of 1,000 µs per call).
pub const PAUSES: [Ordering; 10] = [
    Ordering::Offset(0),
    Ordering::Offset(100),
    Ordering::Offset(300),
    Ordering::Offset(1_000),
    Ordering::Offset(2_000),
    Ordering::Pause(20),
    Ordering::Pause(100),
    Ordering::Pause(500),
    Ordering::Pause(1_500),
    Ordering::Pause(2_500),
];

/// The lease scenario's orderings, taken by turns (trial `n` runs `ORDERINGS[n % 12]`): the
/// [`PAUSES`], then a slow taker ([`Ordering::Slow`]) waiting 5 and 20 ms before each step —
/// long enough for a fast taker's whole takeover before the slow one acts, natural or
/// amplified — the late one released twice that wait after the slow one: in the middle of the
/// two waits between the slow one's moving the lease aside and its putting it back, the time a
/// `lease.rename-aside` takeover leaves the name empty. Where the recipe's trials take longer
/// (PowerShell, a loaded machine), the waits grow with them ([`Ordering::scaled`]).
pub const ORDERINGS: [Ordering; 12] = [
    PAUSES[0],
    PAUSES[1],
    PAUSES[2],
    PAUSES[3],
    PAUSES[4],
    PAUSES[5],
    PAUSES[6],
    PAUSES[7],
    PAUSES[8],
    PAUSES[9],
    Ordering::Slow { stall_us: 5_000, late_us: 10_000 },
    Ordering::Slow { stall_us: 20_000, late_us: 40_000 },
];

/// The fast takers of an [`Ordering::Slow`] trial are released this fraction (1/n) of the slow
/// one's wait after it: once it has checked, and early enough to have their takeover done before
/// its first step (half a wait either way for a taker descheduled before it starts). Released together with it, on a loaded machine the fast taker's whole
/// takeover sometimes came before the slow one's check (which then found a live lease): in a
/// loaded run Bun's `lease.rename-aside` held over its 24 natural trials.
pub const FAST_AFTER_STALL: u64 = 2;

/// How many of a recipe's typical trial times a slow taker waits at least before each step
/// ([`Ordering::scaled`]): a fast taker's takeover is at most one trial's time, and the late
/// taker's check and create another.
pub const STALL_TRIALS: u64 = 2;

impl Ordering {
    /// The timed plan of a trial of `k` contenders.
    pub(super) fn plan(self, k: usize) -> TrialPlan {
        match self {
            Ordering::Offset(us) => TrialPlan::release(k, us),
            Ordering::Slow { stall_us, late_us } => {
                let fast_us = stall_us / FAST_AFTER_STALL;
                TrialPlan::new(
                    (0..k)
                        .map(|slot| Phase::Release {
                            slot,
                            at_us: match slot {
                                s if s + 1 == k => 0,
                                s if k >= 3 && s + 2 == k => late_us,
                                _ => fast_us,
                            },
                        })
                        .collect(),
                )
            }
            Ordering::Pause(at_us) => {
                let last = k.saturating_sub(1);
                let mut phases: Vec<Phase> = (0..k).map(|slot| Phase::Release { slot, at_us: 0 }).collect();
                phases.push(Phase::Control { slot: last, at_us, control: Control::Pause });
                phases.push(Phase::Control { slot: last, at_us: at_us + PAUSE_US, control: Control::Resume });
                TrialPlan::new(phases)
            }
        }
    }

    /// This ordering for a recipe whose trials took `typical_us` here (the median wall time of
    /// its earlier trials in this mode): a [`Ordering::Slow`] taker waits at least
    /// [`STALL_TRIALS`] of them before each step, and the late one comes twice that wait after
    /// the slow one; every other ordering as it is. In a loaded run PowerShell's slow taker,
    /// waiting 20 ms, acted before the fast one had made its lease, and `lease.rename-aside`
    /// held over 24 trials.
    pub fn scaled(self, typical_us: u64) -> Ordering {
        match self {
            Ordering::Slow { stall_us, late_us } => {
                let stall = stall_us.max(STALL_TRIALS.saturating_mul(typical_us));
                let late = late_us.max(stall.saturating_mul(2));
                Ordering::Slow { stall_us: stall.min(MAX_STALL_US), late_us: late.min(MAX_STALL_US * 2) }
            }
            other => other,
        }
    }

    /// The wait before each step after its check of contender `slot` of `k`, µs: the
    /// [`Ordering::Slow`] taker's (the last); `None` for every other contender and ordering.
    pub fn stall_us(self, slot: usize, k: usize) -> Option<u64> {
        match self {
            Ordering::Slow { stall_us, .. } if slot + 1 == k => Some(stall_us),
            _ => None,
        }
    }
}

/// How old the stale lease is, ms: its `expiresAt`, its `heartbeatAt` and its mtime lie this
/// far back.
pub const STALE_AGE_MS: u64 = 3_600_000;
/// The staleness threshold the recipes are given (`params.stale_ms`), and the lifetime of the
/// leases they write (`params.ttl_ms`), ms: a minute, far from both the stale lease's age and
/// a fresh lease's.
pub const STALE_MS: u64 = 60_000;
/// The longest wait of a slow taker before a step, µs: the probes take at most a second
/// (`probes/PROTOCOL.md`, `stall_us`).
pub const MAX_STALL_US: u64 = 1_000_000;
/// The request parameter of a slow taker's wait before each step, µs ([`Ordering::Slow`];
/// `probes/PROTOCOL.md`).
pub const STALL_PARAM: &str = "stall_us";
/// The lock's name in a trial's folder.
pub const LOCK: &str = "lease";
/// The folder of the holders' markers in a trial's folder.
pub const HELD: &str = "held";

/// The lease scenario for the engine: `--workers` contenders per trial.
pub(super) const RUNNER: handoff::Runner = handoff::Runner {
    scenario: Scenario::Lease,
    slots: |o| o.sizes.workers,
    observers: handoff::no_observers,
    measure: |b, p, m, f| handoff::measure_workers(b, p, m, f, handoff::AmplifiedRun::Always, lease_recipe, None),
};

/// A lease record the harness writes: JSON with the fields of the second article's lease
/// (`ownerId`, `host`, `pid`, `acquiredAt`, `expiresAt`, `heartbeatAt`; times in ms since the
/// Unix epoch), `owner` as `ownerId`, acquired and last heartbeat at `acquired_ms` and
/// `heartbeat_ms`, expiring at `expires_ms`.
pub(super) fn record(owner: &str, acquired_ms: u64, heartbeat_ms: u64, expires_ms: u64) -> String {
    serde_json::json!({
        "ownerId": owner,
        "host": "conformance-harness",
        "pid": 0,
        "acquiredAt": acquired_ms,
        "expiresAt": expires_ms,
        "heartbeatAt": heartbeat_ms,
    })
    .to_string()
}

/// The stale lease record of a trial ([`record`]), every time [`STALE_AGE_MS`] or more before
/// `now_ms`.
fn stale_record(owner: &str, now_ms: u64) -> String {
    let past = now_ms.saturating_sub(STALE_AGE_MS);
    record(owner, past.saturating_sub(STALE_AGE_MS), past, past)
}

/// `t` in ms since the Unix epoch (0 before it).
pub(super) fn epoch_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// Puts the stale lease of `kind` at `lock` with `record`, its mtime [`STALE_AGE_MS`] back.
/// Errors: the OS error, as the harness's.
fn leave_stale(lock: &Path, kind: LockKind, record: &str, now: SystemTime) -> std::io::Result<()> {
    let file = match kind {
        LockKind::File => lock.to_path_buf(),
        LockKind::Dir => {
            std::fs::create_dir(lock)?;
            lock.join("owner")
        }
    };
    std::fs::write(&file, record)?;
    let old = now - Duration::from_millis(STALE_AGE_MS);
    // the record's file, then (for a directory lock) the directory, whose mtime the write moved
    std::fs::File::options().write(true).open(&file)?.set_modified(old)?;
    if kind == LockKind::Dir {
        std::fs::File::open(lock)?.set_modified(old)?;
    }
    Ok(())
}

/// The `ownerId` of the record the lock of `kind` at `lock` holds; `None` when there is none or
/// it does not read as a record.
pub(super) fn owner_of(lock: &Path, kind: LockKind) -> Option<String> {
    let file = match kind {
        LockKind::File => lock.to_path_buf(),
        LockKind::Dir => lock.join("owner"),
    };
    let text = std::fs::read_to_string(file).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v.get("ownerId")?.as_str().map(str::to_string)
}

/// The typical wall time of a recipe's earlier trials `took` (µs each): their median, 0 before
/// the first.
fn typical_us(took: &[f64]) -> u64 {
    if took.is_empty() {
        0
    } else {
        crate::stats::median(took) as u64
    }
}

/// One recipe's finding; `None` when the run was interrupted.
fn lease_recipe(
    pool: &mut [Contender],
    recipe: &Recipe,
    style: PathStyle,
    workers: usize,
    m: &mut Measurement<'_>,
) -> Option<Finding> {
    let started = Instant::now();
    let v = recipe.as_variant();
    let adaptive = m.opts.adaptive;
    let trials = if adaptive { LEASE_TRIALS } else { LEASE_TRIALS_THOROUGH };
    let kind = recipe.lock;
    // each trial's wall time, µs: what a slow taker must outwait (Ordering::scaled)
    let mut took: Vec<f64> = Vec::new();
    let (done, evidence) = handoff::run_items(
        m,
        trials,
        &mut |n, tdir, m| {
            let id = m.next_id();
            let lock = tdir.join(LOCK);
            let held = tdir.join(HELD);
            let marker = |w: usize| held.join(format!("w{w}"));
            let now = SystemTime::now();
            let now_ms = epoch_ms(now);
            let stale = format!("{}-l{n}-stale", m.nonce);
            std::fs::create_dir(&held)
                .and_then(|()| leave_stale(&lock, kind, &stale_record(&stale, now_ms), now))
                .map_err(|e| format!("could not leave the stale lease behind: {e}"))?;
            let ordering = ORDERINGS[n % ORDERINGS.len()].scaled(typical_us(&took));
            let tokens: Vec<String> = (0..workers).map(|w| format!("{}-l{n}-w{w}", m.nonce)).collect();
            let slots: Vec<Slot<'_>> = tokens
                .iter()
                .enumerate()
                .map(|(w, token)| {
                    let mut params = serde_json::json!({
                        "lease": spell(&lock, style),
                        "held": spell(&marker(w), style),
                        "stale_ms": STALE_MS,
                        "ttl_ms": STALE_MS,
                    });
                    if let Some(us) = ordering.stall_us(w, workers) {
                        params[STALL_PARAM] = us.into();
                    }
                    let recipe = handoff::recipe_spec(Scenario::Lease, &recipe.id, "taker", params, false);
                    Slot { variant: &v, style, index: w, token: token.clone(), recipe }
                })
                .collect();
            let plan = ordering.plan(workers);
            let began = Instant::now();
            let end = handoff::run_item(pool, tdir, &slots, plan, id);
            took.push(began.elapsed().as_micros() as f64);
            // a marker counts only with its own contender's token in it: the harness reads
            // what is on disk, not what a taker said
            let holders: Vec<String> = tokens
                .iter()
                .enumerate()
                .filter(|(w, token)| std::fs::read_to_string(marker(*w)).is_ok_and(|t| t == **token))
                .map(|(_, t)| t.clone())
                .collect();
            let owner = owner_of(&lock, kind);
            let leftovers = std::fs::read_dir(tdir)
                .map(|d| d.filter_map(Result::ok).filter(|e| e.file_name() != LOCK && e.file_name() != HELD).count())
                .unwrap_or(0);
            Ok((end, (holders, owner, leftovers)))
        },
        &|done| adaptive && done.len() >= LEASE_DISPROOF_TRIALS && done.iter().any(|(_, (h, _, _))| h.len() > 1),
    )?;
    let mut result = CountersResult::default();
    let mut judged = Vec::with_capacity(done.len());
    for (attempts, (holders, owner, leftovers)) in done {
        handoff::count_errors(&mut result, &attempts);
        judged.push(LeaseTrial { holders, owner, leftovers, faults: attempts.iter().map(handoff::faulted).collect() });
    }
    if !judged.is_empty() {
        result.counters = judge_lease(&judged);
    }
    Some(handoff::finding(recipe, result, evidence, started))
}

#[cfg(test)]
mod tests {
    use crate::engine::lease::{Ordering, ORDERINGS, PAUSES, PAUSE_US};
    use crate::engine::trial::{Phase, TrialPlan};
    use crate::exec::driver::Control;

    #[test]
    fn a_slow_taker_checks_first_and_the_late_one_comes_while_it_acts() {
        let slow = Ordering::Slow { stall_us: 6_000, late_us: 12_000 };
        let plan = slow.plan(3);
        // the slow one first, the fast one half its wait later, the late one at twice
        // its wait; nobody paused
        assert_eq!((plan.release_at(0), plan.release_at(1), plan.release_at(2)), (3_000, 12_000, 0));
        assert_eq!(
            plan,
            TrialPlan::new((0..3).map(|slot| Phase::Release { slot, at_us: [3_000, 12_000, 0][slot] }).collect())
        );
        // only the last one is slow
        assert_eq!((slow.stall_us(0, 3), slow.stall_us(1, 3), slow.stall_us(2, 3)), (None, None, Some(6_000)));
        // two takers: the slow one first, the fast one after it; no late one
        assert_eq!((slow.plan(2).release_at(0), slow.plan(2).release_at(1)), (3_000, 0));
        assert_eq!(slow.stall_us(1, 2), Some(6_000));
        // four: two fast ones
        let four = slow.plan(4);
        assert_eq!((0..4).map(|s| four.release_at(s)).collect::<Vec<_>>(), [3_000, 3_000, 12_000, 0]);
        // the waits grow with the recipe's trials, never shrink, and stay within a second
        assert_eq!(slow.scaled(1_000), slow, "trials of 1 ms: the waits as they are");
        assert_eq!(slow.scaled(40_000), Ordering::Slow { stall_us: 80_000, late_us: 160_000 });
        assert_eq!(slow.scaled(u64::MAX), Ordering::Slow { stall_us: 1_000_000, late_us: 2_000_000 });
        assert!(ORDERINGS.iter().all(|o| o.scaled(0) == *o), "the built-in waits are already in proportion");
        assert_eq!(Ordering::Pause(500).scaled(40_000), Ordering::Pause(500));
        assert_eq!(super::typical_us(&[9.0, 1.0, 5.0]), 5);
        assert_eq!(super::typical_us(&[]), 0, "no trial yet: the waits as they are");
        // a timed ordering has no slow taker
        assert!(PAUSES.iter().all(|o| (0..3).all(|s| o.stall_us(s, 3).is_none())));
        // the lease scenario takes the timed orderings, then the slow ones
        assert_eq!(&ORDERINGS[..PAUSES.len()], &PAUSES[..]);
        assert!(ORDERINGS[PAUSES.len()..].iter().all(|o| matches!(o, Ordering::Slow { .. })));
        // a pause stops the last one and resumes it PAUSE_US later
        let paused = Ordering::Pause(500).plan(3);
        let want = vec![
            Phase::Release { slot: 0, at_us: 0 },
            Phase::Release { slot: 1, at_us: 0 },
            Phase::Release { slot: 2, at_us: 0 },
            Phase::Control { slot: 2, at_us: 500, control: Control::Pause },
            Phase::Control { slot: 2, at_us: 500 + PAUSE_US, control: Control::Resume },
        ];
        assert_eq!(paused, TrialPlan::new(want));
    }
}

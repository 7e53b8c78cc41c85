//! The lease-holder scenario (`docs/HANDOFF.md`, "holder"): per recipe, [`HOLDER_TRIALS`]
//! trials ([`HOLDER_TRIALS_THOROUGH`] with `--thorough`), each of two contenders. The harness
//! puts a live lease in place for the holder (its token as `ownerId`, expiring
//! [`TTL_MS`] later); the holder is released into its work ([`WORK_MS`]) and stopped
//! (`SIGSTOP`) at once; once the lease has expired a taker is released, which takes it over by
//! `lease.expires-delete-create` and writes its marker; the holder is resumed after that and
//! goes on by the recipe (renew, side effect, release). The lease and the two files are read
//! afterwards, and [`crate::verdict::holder`] counts what the old holder did after its loss.

use super::handoff;
use super::trial::{Phase, Slot, TrialPlan};

use super::Measurement;
use super::Pools;
use crate::domain::Scenario;
use crate::exec::contender::Contender;
use crate::exec::driver::Control;
use crate::exec::scratch::spell;
use crate::exec::scratch::PathStyle;
use crate::handoff::{LockKind, Recipe};
use crate::report::model::CountersResult;
use crate::report::model::Finding;
use crate::verdict::holder::{judge_holder, HolderTrial, LeaseOwner};
use std::path::Path;
use std::time::{Instant, SystemTime};

/// Trials per holder recipe in the default run: the trial is laid out, not raced, so two show
/// what the recipe does.
pub const HOLDER_TRIALS: usize = 2;
/// Trials per holder recipe with `--thorough`.
pub const HOLDER_TRIALS_THOROUGH: usize = 10;
/// The lease's lifetime from the harness's record, ms (`expiresAt` − `acquiredAt`; the renewals
/// the recipes write live as long: `params.ttl_ms`).
pub const TTL_MS: u64 = 20;
/// How long the holder works before it goes on (`params.work_ms`), ms: it is stopped inside
/// this and resumed after it has elapsed.
pub const WORK_MS: u64 = 60;
/// When the holder is stopped, µs after its release: inside its work.
pub const PAUSE_AT_US: u64 = 1_000;
/// When the taker is released, µs after the holder: the lease expired [`TTL_MS`] after the
/// harness wrote it, well before.
pub const TAKER_AT_US: u64 = 50_000;
/// When the holder is resumed, µs after its release: time for the taker's whole takeover, even
/// PowerShell's on a busy machine.
pub const RESUME_AT_US: u64 = 200_000;
/// The taker's recipe: a takeover by the record's `expiresAt` (`docs/HANDOFF.md`, "lease").
pub const TAKER: &str = "lease.expires-delete-create";
/// The lease's name in a trial's folder.
pub const LEASE: &str = "lease";
/// The holder's effect file in a trial's folder.
pub const EFFECT: &str = "effect-holder";
/// The taker's marker in a trial's folder.
pub const TAKEN: &str = "held-taker";

/// The holder scenario for the engine: a holder and a taker per trial.
pub(super) const RUNNER: handoff::Runner = handoff::Runner {
    scenario: Scenario::Holder,
    slots: |_| 2,
    observers: handoff::no_observers,
    measure: measure_holder,
};

/// Measures a batch of holder recipes ([`handoff::measure_recipes`]), amplified only where the
/// run asks for it: the trial is laid out by the harness's pause, so natural trials already
/// show what the recipe does once the lease is lost.
fn measure_holder(
    batch: &handoff::Batch<'_>,
    pools: &mut Pools,
    m: &mut Measurement<'_>,
    on_finding: &mut dyn FnMut(&Finding),
) -> Vec<Finding> {
    handoff::measure_recipes(batch, pools, m, on_finding, handoff::AmplifiedRun::WhenAsked, &mut holder_recipe, None)
}

/// The live lease record the harness writes for the holder: the lease scenario's fields, with
/// `owner` as `ownerId`, acquired now and expiring [`TTL_MS`] later (ms since the Unix epoch).
fn live_record(owner: &str, now_ms: u64) -> String {
    super::lease::record(owner, now_ms, now_ms, now_ms + TTL_MS)
}

/// Whose record the lease at `lease` holds, given the two tokens (read as the lease scenario
/// reads its lock: [`super::lease::owner_of`]).
fn owner(lease: &Path, holder: &str, taker: &str) -> LeaseOwner {
    match super::lease::owner_of(lease, LockKind::File).as_deref() {
        Some(x) if x == holder => LeaseOwner::Holder,
        Some(x) if x == taker => LeaseOwner::Taker,
        Some(_) => LeaseOwner::Other,
        // no record: no lease at all, or one that does not read as a record
        None if !lease.exists() => LeaseOwner::Absent,
        None => LeaseOwner::Other,
    }
}

/// The timed plan of a trial: the holder released and stopped, the taker released, the holder
/// resumed.
fn plan() -> TrialPlan {
    TrialPlan::new(vec![
        Phase::Release { slot: 0, at_us: 0 },
        Phase::Control { slot: 0, at_us: PAUSE_AT_US, control: Control::Pause },
        Phase::Release { slot: 1, at_us: TAKER_AT_US },
        Phase::Control { slot: 0, at_us: RESUME_AT_US, control: Control::Resume },
    ])
}

/// One recipe's finding; `None` when the run was interrupted.
fn holder_recipe(
    pool: &mut [Contender],
    recipe: &Recipe,
    style: PathStyle,
    m: &mut Measurement<'_>,
) -> Option<Finding> {
    let started = Instant::now();
    let v = recipe.as_variant();
    let trials = if m.opts.adaptive { HOLDER_TRIALS } else { HOLDER_TRIALS_THOROUGH };
    let (done, evidence) = handoff::run_items(
        m,
        trials,
        &mut |n, tdir, m| {
            let id = m.next_id();
            let (lease, effect, taken) = (tdir.join(LEASE), tdir.join(EFFECT), tdir.join(TAKEN));
            let holder = format!("{}-h{n}-holder", m.nonce);
            let taker = format!("{}-h{n}-taker", m.nonce);
            let now_ms = super::lease::epoch_ms(SystemTime::now());
            std::fs::write(&lease, live_record(&holder, now_ms))
                .map_err(|e| format!("could not write the holder's lease: {e}"))?;
            let slots = [
                Slot {
                    variant: &v,
                    style,
                    index: 0,
                    token: holder.clone(),
                    recipe: handoff::recipe_spec(
                        Scenario::Holder,
                        &recipe.id,
                        "holder",
                        serde_json::json!({
                            "lease": spell(&lease, style),
                            "effect": spell(&effect, style),
                            "ttl_ms": TTL_MS,
                            "work_ms": WORK_MS,
                        }),
                        false,
                    ),
                },
                Slot {
                    variant: &v,
                    style,
                    index: 1,
                    token: taker.clone(),
                    recipe: handoff::recipe_spec(
                        Scenario::Holder,
                        TAKER,
                        "taker",
                        serde_json::json!({
                            "lease": spell(&lease, style),
                            "held": spell(&taken, style),
                            "stale_ms": super::lease::STALE_MS,
                            "ttl_ms": super::lease::STALE_MS,
                        }),
                        false,
                    ),
                },
            ];
            let end = handoff::run_item(pool, tdir, &slots, plan(), id);
            // the harness reads the files, not what either said
            let seen = HolderTrial {
                taken_over: std::fs::read_to_string(&taken).is_ok_and(|t| t == taker),
                holder_effect: std::fs::read_to_string(&effect).is_ok_and(|t| t == holder),
                owner: owner(&lease, &holder, &taker),
                faults: Vec::new(),
            };
            Ok((end, seen))
        },
        &|_| false,
    )?;
    let mut result = CountersResult::default();
    let mut judged = Vec::with_capacity(done.len());
    for (attempts, mut seen) in done {
        seen.faults = handoff::errors_and_faults(&mut result, &attempts);
        judged.push(seen);
    }
    if !judged.is_empty() {
        result.counters = judge_holder(&judged);
    }
    Some(handoff::finding(recipe, result, evidence, started))
}

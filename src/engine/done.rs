//! The done-marker scenario (`docs/HANDOFF.md`): per recipe, [`DONE_ITEMS`] trials
//! ([`DONE_ITEMS_THOROUGH`] with `--thorough`) in which a
//! writer writes a framed data file in 4 KiB writes [`CHUNK_MS`] ms apart (with, by the
//! recipe, a manifest after it, before it, or none) while a consumer waits for the file to be
//! complete by the recipe's rule (the manifest exists; or the size, or mtime, has not changed
//! for [`STABLE_MS`] ms) and then reads it once. Every writer is paused mid-write (`SIGSTOP`
//! to its process group [`PAUSE_AT_US`] µs after the release, `SIGCONT` [`PAUSE_US`] µs
//! later): a writer can always be descheduled, and the pause is longer than the stability
//! window. [`crate::verdict::done`] counts premature consumes.

use super::attempt::error_info;
use super::handoff;
use super::trial::{Phase, Slot, TrialPlan};

use super::Measurement;
use super::Pools;
use crate::domain::Scenario;
use crate::exec::contender::Attempt;
use crate::exec::contender::Contender;
use crate::exec::driver::Control;
use crate::exec::scratch::spell;
use crate::exec::scratch::PathStyle;
use crate::handoff::{framed, Recipe, CONSUMER};
use crate::report::model::CountersResult;
use crate::report::model::Finding;
use crate::verdict::done::{judge_done, DoneItem};
use crate::verdict::Report;
use std::time::Instant;

/// Items (trials) per done-marker recipe in the default run. Every item pauses its writer for
/// `PAUSE_US`, so each costs about 80 ms; measured here, every wrong recipe consumed early
/// in 10 of 10 items on all five session runtimes (the pause is forced, not left to chance),
/// so 5 show the failure at a quarter of the cost of 20 (issue 13's budget).
pub const DONE_ITEMS: usize = 5;
/// Adaptive trials (the default run): a recipe stops after this many items once one of them
/// was consumed prematurely; every wrong recipe here failed on its first item (issue 13).
pub const DONE_DISPROOF_ITEMS: usize = 2;
/// Probes per done-marker item: the writer and the consumer.
pub(super) const DONE_SLOTS: usize = 2;
/// Items per done-marker recipe with `--thorough` (no adaptive trials).
pub const DONE_ITEMS_THOROUGH: usize = 20;
/// Milliseconds between the writer's 4 KiB writes.
pub const CHUNK_MS: u64 = 2;
/// How long (ms) a size or mtime must stay unchanged for the stability rules (40 ms until
/// issue 13 halved it with [`PAUSE_US`]: the wrong recipes still failed on every item).
pub const STABLE_MS: u64 = 20;
/// When the writer is paused, µs after the release (mid-write: its 8 writes take ≥ 14 ms).
pub const PAUSE_AT_US: u64 = 5_000;
/// How long the writer stays paused, µs (3 × [`STABLE_MS`]).
pub const PAUSE_US: u64 = 60_000;

/// The done-marker scenario for the engine: a writer and a consumer per item.
pub(super) const RUNNER: handoff::Runner = handoff::Runner {
    scenario: Scenario::DoneMarker,
    slots: |_| DONE_SLOTS,
    observers: handoff::no_observers,
    measure: measure_done,
};

/// Measures a batch of done-marker recipes ([`handoff::measure_recipes`]) with the run's
/// data size (`--size`).
fn measure_done(
    batch: &handoff::Batch<'_>,
    pools: &mut Pools,
    m: &mut Measurement<'_>,
    on_finding: &mut dyn FnMut(&Finding),
) -> Vec<Finding> {
    let size = m.opts.sizes.size;
    handoff::measure_recipes(
        batch,
        pools,
        m,
        on_finding,
        handoff::AmplifiedRun::WhenAsked,
        &mut |pool, recipe, style, m| done_recipe(pool, recipe, style, size, m),
        None,
    )
}

/// One recipe's finding; `None` when the run was interrupted.
fn done_recipe(
    pool: &mut [Contender],
    recipe: &Recipe,
    style: PathStyle,
    size: usize,
    m: &mut Measurement<'_>,
) -> Option<Finding> {
    let started = Instant::now();
    let v = recipe.as_variant();
    let m_adaptive = m.opts.adaptive;
    let items = if m_adaptive { DONE_ITEMS } else { DONE_ITEMS_THOROUGH };
    let (done, evidence) = handoff::run_items(
        m,
        items,
        &mut |n, tdir, m| {
            let id = m.next_id();
            let token = format!("{}-d{n}", m.nonce);
            let content = framed(&token, size);
            let marker = spell(&tdir.join("target.done"), style);
            let spec = |recipe: &str, role: &str, params, until_stopped| {
                handoff::recipe_spec(Scenario::DoneMarker, recipe, role, params, until_stopped)
            };
            let writer = serde_json::json!({ "size": size, "chunk_ms": CHUNK_MS, "marker": marker });
            let consumer = serde_json::json!({
                "rule": recipe.consumer.as_str(),
                "marker": marker,
                "stable_ms": STABLE_MS,
                "expect": [String::from_utf8_lossy(&content)],
            });
            let slots = [
                Slot {
                    variant: &v,
                    style,
                    index: 0,
                    token: token.clone(),
                    recipe: spec(&recipe.id, "writer", writer, false),
                },
                Slot {
                    variant: &v,
                    style,
                    index: 1,
                    token: format!("{token}-c"),
                    recipe: spec(CONSUMER, "consumer", consumer, true),
                },
            ];
            let plan = TrialPlan::new(vec![
                Phase::Release { slot: 1, at_us: 0 },
                Phase::Release { slot: 0, at_us: 0 },
                Phase::Control { slot: 0, at_us: PAUSE_AT_US, control: Control::Pause },
                Phase::Control { slot: 0, at_us: PAUSE_AT_US + PAUSE_US, control: Control::Resume },
            ]);
            let end = handoff::run_item(pool, tdir, &slots, plan, id);
            Ok((end, std::fs::read(tdir.join("target")).is_ok_and(|b| b == content)))
        },
        &|done| m_adaptive && disproved(done),
    )?;
    let mut result = CountersResult::default();
    let mut items = Vec::with_capacity(done.len());
    for (attempts, whole) in &done {
        if let Some(code) = error_info(&attempts[0]).map(|e| e.code) {
            *result.errors.entry(code).or_insert(0) += 1;
        }
        items.push(done_item(attempts, *whole));
    }
    if !items.is_empty() {
        result.counters = judge_done(&items);
    }
    Some(handoff::finding(recipe, result, evidence, started))
}

/// What the harness observed of one item: the writer's and the consumer's attempts, and whether
/// the data file was whole afterwards.
fn done_item(attempts: &[Attempt], whole: bool) -> DoneItem {
    let c = &attempts[1];
    DoneItem {
        writer: attempts[0].report,
        consumer: c.recipe.as_ref().filter(|_| c.report == Report::Success).map(|r| r.counters.clone()),
        target_whole: whole,
    }
}

/// Adaptive trials: the items so far settle a recipe once [`DONE_DISPROOF_ITEMS`] have run and
/// one of them was consumed before it was whole (more items cannot make the recipe correct).
fn disproved(done: &[(Vec<Attempt>, bool)]) -> bool {
    done.len() >= DONE_DISPROOF_ITEMS && done.iter().any(|(a, whole)| done_item(a, *whole).premature())
}

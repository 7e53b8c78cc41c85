//! The done-marker scenario (`docs/HANDOFF.md`): per recipe, [`DONE_ITEMS`] trials in which a
//! writer writes a framed data file in 4 KiB writes [`CHUNK_MS`] ms apart (with, by the
//! recipe, a manifest after it, before it, or none) while a consumer waits for the file to be
//! complete by the recipe's rule (the manifest exists; or the size, or mtime, has not changed
//! for [`STABLE_MS`] ms) and then reads it once. Every writer is paused mid-write (`SIGSTOP`
//! to its process group [`PAUSE_AT_US`] µs after the release, `SIGCONT` [`PAUSE_US`] µs
//! later): a writer can always be descheduled, and the pause is longer than the stability
//! window. [`crate::verdict::done`] counts premature consumes.

use super::attempt::{error_info, ms};
use super::trial::{run_trial, Phase, Slot, TrialEnd, TrialPlan, TrialSetup};
use super::*;
use crate::exec::contender::RecipeSpec;
use crate::exec::driver::Control;
use crate::handoff::{framed, Recipe, CONSUMER};
use crate::verdict::done::{judge_done, DoneItem};

/// Items (trials) per done-marker recipe.
pub const DONE_ITEMS: usize = 10;
/// Milliseconds between the writer's 4 KiB writes.
pub const CHUNK_MS: u64 = 2;
/// How long (ms) a size or mtime must stay unchanged for the stability rules.
pub const STABLE_MS: u64 = 40;
/// When the writer is paused, µs after the release (mid-write: its 8 writes take ≥ 14 ms).
pub const PAUSE_AT_US: u64 = 5_000;
/// How long the writer stays paused, µs (3 × [`STABLE_MS`]).
pub const PAUSE_US: u64 = 120_000;

/// Measures every selected done-marker recipe on `rt` with probes of its first family, one
/// finding per recipe, with `size` payload bytes per data file; `on_finding` is called after
/// each. A recipe the probe does not have is one finding with the reason; an interrupt drops
/// the recipe in flight.
pub(super) fn measure_done(
    rt: &Runtime,
    size: usize,
    m: &mut Measurement<'_>,
    ctx: &ProbeContext,
    on_finding: &mut dyn FnMut(&Finding),
) -> Vec<Finding> {
    let adapter = rt.adapter();
    let Some(family) = rt.families.first() else { return Vec::new() };
    let launch = adapter.launch(rt, family, ctx);
    let slots = vec![(adapter.mode(), launch, timeouts_for(adapter, m.opts)); 2];
    let mut pools = Pools::new(slots, m.scratch.root().to_path_buf());
    let mut out = Vec::new();
    for recipe in Recipe::of(Scenario::DoneMarker).filter(|r| m.opts.recipes.iter().any(|id| id == r.id)) {
        if crate::interrupt::requested() {
            break;
        }
        let Some(f) = done_recipe(&mut pools.natural, recipe, adapter.path_style(), size, m) else { break };
        on_finding(&f);
        out.push(f);
    }
    pools.shutdown();
    out
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
    let mut items = Vec::with_capacity(DONE_ITEMS);
    let mut result = CountersResult::default();
    let mut evidence = None;
    let (dir, _) = match m.scratch.cell_dir() {
        Ok(d) => d,
        Err(e) => {
            evidence = Some(format!("harness-error: could not create a cell folder: {e}"));
            return Some(finding(&v, result, evidence, started));
        }
    };
    for n in 0..DONE_ITEMS {
        if crate::interrupt::requested() {
            clear(&dir);
            return None;
        }
        let id = m.next_id();
        let tdir = dir.join(format!("d{n}"));
        if let Err(e) = std::fs::create_dir(&tdir) {
            evidence = Some(format!("harness-error: could not create an item folder: {e}"));
            break;
        }
        let token = format!("{}-d{n}", m.nonce);
        let content = framed(&token, size);
        let marker = spell(&tdir.join("target.done"), style);
        let spec = |recipe: &str, role: &str, params: serde_json::Value, until_stopped| RecipeSpec {
            scenario: Scenario::DoneMarker.as_str().into(),
            recipe: recipe.into(),
            role: role.into(),
            params,
            until_stopped,
        };
        let writer = serde_json::json!({ "size": size, "chunk_ms": CHUNK_MS, "marker": marker });
        let consumer = serde_json::json!({
            "rule": recipe.consumer_rule(),
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
                recipe: Some(spec(recipe.id, "writer", writer, false)),
            },
            Slot {
                variant: &v,
                style,
                index: 1,
                token: format!("{token}-c"),
                recipe: Some(spec(CONSUMER, "consumer", consumer, true)),
            },
        ];
        let plan = TrialPlan::new(vec![
            Phase::Release { slot: 1, at_us: 0 },
            Phase::Release { slot: 0, at_us: 0 },
            Phase::Control { slot: 0, at_us: PAUSE_AT_US, control: Control::Pause },
            Phase::Control { slot: 0, at_us: PAUSE_AT_US + PAUSE_US, control: Control::Resume },
        ]);
        let setup = TrialSetup {
            dir: &tdir,
            probe_dir: &tdir,
            first: (TargetState::Absent, ""),
            slots: &slots,
            plan,
            hold_ms: 0,
            snapshot_before: false,
        };
        let end = run_trial(pool, &setup, id);
        let whole = std::fs::read(tdir.join("target")).is_ok_and(|b| b == content);
        clear(&tdir);
        let attempts = match end {
            TrialEnd::Interrupted => {
                clear(&dir);
                return None;
            }
            TrialEnd::HarnessError(why) => {
                evidence = Some(format!("harness-error: {why}"));
                break;
            }
            TrialEnd::NotReleased { fault, .. } => {
                evidence = Some(match fault.report {
                    Report::Unsupported => format!("unsupported: {}", fault.evidence.unwrap_or_default()),
                    r => format!("{}: {}", format!("{r:?}").to_lowercase(), fault.evidence.unwrap_or_default()),
                });
                break;
            }
            TrialEnd::Released { attempts, .. } => attempts,
        };
        if let Some(code) = error_info(&attempts[0]).map(|e| e.code) {
            *result.errors.entry(code).or_insert(0) += 1;
        }
        let c = &attempts[1];
        items.push(DoneItem {
            writer: attempts[0].report,
            consumer: c.recipe.as_ref().filter(|_| c.report == Report::Success).map(|r| r.counters.clone()),
            target_whole: whole,
        });
    }
    clear(&dir);
    if !items.is_empty() {
        result.counters = judge_done(&items);
    }
    Some(finding(&v, result, evidence, started))
}

fn finding(v: &Variant, result: CountersResult, evidence: Option<String>, started: Instant) -> Finding {
    Finding {
        variant: v.id.clone(),
        scenario: Scenario::DoneMarker,
        target: TargetState::Absent,
        control: false,
        evidence,
        elapsed_ms: ms(started.elapsed()),
        result: CellResult::Counters(result),
    }
}

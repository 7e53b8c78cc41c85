//! The claim scenario (`docs/HANDOFF.md`): per recipe, [`CLAIM_TRIALS`] trials in which
//! `workers` workers, released together, take the `items` files of one `incoming/` folder,
//! each appending what it processed to its own output file; the folder and the output files
//! are read afterwards and [`crate::verdict::claim`] counts duplicates and losses.

use super::handoff;
use super::trial::{Slot, TrialPlan};
use crate::options::HandoffSizes;

use super::ItemsRun;
use super::Measurement;
use super::Pools;
use crate::domain::Scenario;
use crate::exec::contender::Contender;
use crate::exec::scratch::spell;
use crate::exec::scratch::PathStyle;
use crate::handoff::Recipe;
use crate::report::model::CountersResult;
use crate::report::model::Finding;
use crate::runtime::normalize;
use crate::verdict::claim::{judge_claim, ClaimTrial};
use crate::verdict::Report;
use std::path::Path;
use std::time::Instant;

/// Trials per claim recipe (natural; amplified too where asked for: `--thorough`,
/// `--amplify on`).
pub const CLAIM_TRIALS: usize = 5;
/// Amplified trials per claim recipe in a default run: one trial of `items` items. A claim that
/// is not one `rename(2)` (Mono's `File.Move` links, then unlinks) duplicated about one item in
/// three amplified here, and none in one loaded natural run of 200 items.
pub const CLAIM_AMPLIFIED_TRIALS: usize = 1;

/// The claim scenario for the engine: `--workers` workers per item.
pub(super) const RUNNER: handoff::Runner = handoff::Runner {
    scenario: Scenario::Claim,
    slots: |o| o.sizes.workers,
    observers: handoff::no_observers,
    measure: measure_claim,
};

/// Measures a batch of claim recipes ([`handoff::measure_recipes`]) with the run's
/// [`HandoffSizes`].
fn measure_claim(
    batch: &handoff::Batch<'_>,
    pools: &mut Pools,
    m: &mut Measurement<'_>,
    on_finding: &mut dyn FnMut(&Finding),
) -> Vec<Finding> {
    let o = m.opts.sizes;
    handoff::measure_recipes(
        batch,
        pools,
        m,
        on_finding,
        handoff::AmplifiedRun::Always,
        &mut |pool, recipe, style, m| claim_recipe(pool, recipe, style, o, m),
        None,
    )
}

/// The lines of a worker's output file.
fn lines(p: &Path) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(p).ok()?;
    Some(text.lines().map(str::to_string).collect())
}

/// One recipe's finding; `None` when the run was interrupted.
fn claim_recipe(
    pool: &mut [Contender],
    recipe: &Recipe,
    style: PathStyle,
    o: HandoffSizes,
    m: &mut Measurement<'_>,
) -> Option<Finding> {
    let started = Instant::now();
    let v = recipe.as_variant();
    // a library recipe's workers load the library installed before the run
    let library = match handoff::library_dir(recipe, m, started) {
        Ok(dir) => dir,
        Err(unsupported) => return Some(*unsupported),
    };
    let amplified = m.items == ItemsRun::Amplified;
    let trials = if amplified && !m.opts.handoff_amplified { CLAIM_AMPLIFIED_TRIALS } else { CLAIM_TRIALS };
    let (done, evidence) = handoff::run_items(
        m,
        trials,
        &mut |n, tdir, m| {
            let id = m.next_id();
            let incoming = tdir.join("incoming");
            let items: Vec<String> = (0..o.items).map(|i| format!("{}-b{n}-item{i}", m.nonce)).collect();
            let processing = |w: usize| tdir.join("processing").join(format!("w{w}"));
            std::fs::create_dir_all(&incoming)
                .and_then(|()| {
                    for (i, item) in items.iter().enumerate() {
                        std::fs::write(incoming.join(format!("item-{i:05}")), item)?;
                    }
                    (0..o.workers).try_for_each(|w| std::fs::create_dir_all(processing(w)))
                })
                .map_err(|e| format!("could not set up incoming/: {e}"))?;
            let output = |w: usize| tdir.join(format!("out-{w}.txt"));
            let slots: Vec<Slot<'_>> = (0..o.workers)
                .map(|w| {
                    let mut params = serde_json::json!({
                        "incoming": spell(&incoming, style),
                        "processing": spell(&processing(w), style),
                        "output": spell(&output(w), style),
                    });
                    if let Some(dir) = &library {
                        params["library"] = dir.clone().into();
                    }
                    let token = format!("{}-b{n}-w{w}", m.nonce);
                    let recipe = handoff::recipe_spec(Scenario::Claim, &recipe.id, "worker", params, false);
                    Slot { variant: &v, style, index: w, token, recipe }
                })
                .collect();
            let end = handoff::run_item(pool, tdir, &slots, TrialPlan::release(o.workers, 0), id);
            let outputs: Vec<Option<Vec<String>>> = (0..o.workers).map(|w| lines(&output(w))).collect();
            let remaining: Vec<String> = std::fs::read_dir(&incoming)
                .map(|d| {
                    d.filter_map(|e| e.ok())
                        .filter(|e| !e.file_name().to_string_lossy().ends_with(".claim"))
                        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
                        .collect()
                })
                .unwrap_or_default();
            Ok((end, (items, outputs, remaining)))
        },
        &|_| false,
    )?;
    let mut result = CountersResult::default();
    let mut trials = Vec::with_capacity(done.len());
    for (attempts, (items, outputs, remaining)) in done {
        for r in attempts.iter().filter_map(|a| a.recipe.as_ref()) {
            handoff::keep_sample(&mut result, &r.errors_sample);
            for e in &r.errors_sample {
                *result.errors.entry(normalize(e).to_string()).or_insert(0) += 1;
            }
        }
        let workers = attempts
            .iter()
            .map(|a| a.recipe.as_ref().filter(|_| a.report == Report::Success).map(|r| r.counters.clone()))
            .collect();
        trials.push(ClaimTrial { items, outputs, remaining, workers });
    }
    if !trials.is_empty() {
        result.counters = judge_claim(&trials);
    }
    Some(handoff::finding(recipe, result, evidence, started))
}

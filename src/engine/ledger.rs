//! The ledger scenario (`docs/HANDOFF.md`, "ledger"): per recipe, [`LEDGER_TRIALS`] trials
//! ([`LEDGER_TRIALS_THOROUGH`] with `--thorough`) in which one item with one idempotency key
//! ([`KEY`]) is delivered to `workers` contenders, released by the lease scenario's timed
//! orderings ([`super::lease::PAUSES`]) in turn. A worker that decides to process the item makes its
//! side effect, its own effect file `effects/w<N>` holding its token, and records the key in
//! the ledger (`ledger/<key>`, or the processed list [`LIST`]); the effect files and the
//! ledger are read afterwards and [`crate::verdict::ledger`] counts duplicate side effects.

use super::handoff;
use super::lease::PAUSES;
use super::trial::Slot;

use super::Measurement;
use crate::domain::Scenario;
use crate::exec::contender::Contender;
use crate::exec::scratch::spell;
use crate::exec::scratch::PathStyle;
use crate::handoff::Recipe;
use crate::report::model::CountersResult;
use crate::report::model::Finding;
use crate::verdict::ledger::{judge_ledger, LedgerTrial};
use std::path::Path;
use std::time::Instant;

/// Trials per ledger recipe in the default run: two in each of the release orderings.
pub const LEDGER_TRIALS: usize = 2 * PAUSES.len();
/// Trials per ledger recipe with `--thorough`: fifteen in each ordering.
pub const LEDGER_TRIALS_THOROUGH: usize = 15 * PAUSES.len();
/// Adaptive trials (the default run): a recipe stops once this many trials ran, every
/// ordering once, and one of them made the side effect twice.
pub const LEDGER_DISPROOF_TRIALS: usize = PAUSES.len();
/// The item's idempotency key, a file name in the ledger folder.
pub const KEY: &str = "order-42";
/// The ledger folder in a trial's folder: the key-file recipes record `<key>` in it.
pub const LEDGER: &str = "ledger";
/// The processed list in a trial's folder: one key per line (`ledger.check-process-append`).
pub const LIST: &str = "processed.txt";
/// The folder of the workers' effect files in a trial's folder.
pub const EFFECTS: &str = "effects";

/// The ledger scenario for the engine: `--workers` contenders per trial.
pub(super) const RUNNER: handoff::Runner = handoff::Runner {
    scenario: Scenario::Ledger,
    slots: |o| o.sizes.workers,
    observers: handoff::no_observers,
    measure: |b, p, m, f| handoff::measure_workers(b, p, m, f, handoff::AmplifiedRun::Always, ledger_recipe, None),
};

/// Whether the ledger in `dir` holds [`KEY`]: its key file, or a line of the processed list.
fn recorded(dir: &Path) -> bool {
    dir.join(LEDGER).join(KEY).exists()
        || std::fs::read_to_string(dir.join(LIST)).is_ok_and(|t| t.lines().any(|l| l == KEY))
}

/// One recipe's finding; `None` when the run was interrupted.
fn ledger_recipe(
    pool: &mut [Contender],
    recipe: &Recipe,
    style: PathStyle,
    workers: usize,
    m: &mut Measurement<'_>,
) -> Option<Finding> {
    let started = Instant::now();
    let v = recipe.as_variant();
    let adaptive = m.opts.adaptive;
    let trials = if adaptive { LEDGER_TRIALS } else { LEDGER_TRIALS_THOROUGH };
    let (done, evidence) = handoff::run_items(
        m,
        trials,
        &mut |n, tdir, m| {
            let id = m.next_id();
            let (ledger, effects) = (tdir.join(LEDGER), tdir.join(EFFECTS));
            let effect = |w: usize| effects.join(format!("w{w}"));
            std::fs::create_dir(&ledger)
                .and_then(|()| std::fs::create_dir(&effects))
                .map_err(|e| format!("could not make the ledger's folders: {e}"))?;
            let tokens: Vec<String> = (0..workers).map(|w| format!("{}-d{n}-w{w}", m.nonce)).collect();
            let slots: Vec<Slot<'_>> = tokens
                .iter()
                .enumerate()
                .map(|(w, token)| {
                    let params = serde_json::json!({
                        "key": KEY,
                        "effect": spell(&effect(w), style),
                        "ledger": spell(&ledger, style),
                        "list": spell(&tdir.join(LIST), style),
                    });
                    let recipe = handoff::recipe_spec(Scenario::Ledger, &recipe.id, "worker", params, false);
                    Slot { variant: &v, style, index: w, token: token.clone(), recipe }
                })
                .collect();
            let plan = PAUSES[n % PAUSES.len()].plan(workers);
            let end = handoff::run_item(pool, tdir, &slots, plan, id);
            // an effect counts only with its own worker's token in it: the harness reads what
            // is on disk, not what a worker said
            let made =
                tokens.iter().enumerate().filter(|(w, t)| std::fs::read_to_string(effect(*w)).is_ok_and(|x| x == **t));
            Ok((end, (made.count(), recorded(tdir))))
        },
        &|done| adaptive && done.len() >= LEDGER_DISPROOF_TRIALS && done.iter().any(|(_, (effects, _))| *effects > 1),
    )?;
    let mut result = CountersResult::default();
    let mut judged = Vec::with_capacity(done.len());
    for (attempts, (effects, recorded)) in done {
        handoff::count_errors(&mut result, &attempts);
        judged.push(LedgerTrial { effects, recorded, faults: attempts.iter().map(handoff::faulted).collect() });
    }
    if !judged.is_empty() {
        result.counters = judge_ledger(&judged);
    }
    Some(handoff::finding(recipe, result, evidence, started))
}

//! The shared-file update scenario (`docs/HANDOFF.md`, "update"): per recipe,
//! [`UPDATE_TRIALS`] trials ([`UPDATE_TRIALS_THOROUGH`] with `--thorough`) in which `workers`
//! contenders, released by five of the lease scenario's orderings in turn (`--thorough`: all
//! of [`super::lease::PAUSES`]), each add 1 to one counter file [`INCREMENTS`] times by the recipe, while one more
//! contender reads the file until they are done ([`crate::handoff::READER`]). The counter's
//! total and the trial's folder are read afterwards, and [`crate::verdict::update`] counts lost
//! updates and torn reads.

use super::handoff;
use super::lease::{Ordering, PAUSES};
use super::trial::Slot;

use super::ItemsRun;
use super::Measurement;
use crate::domain::Scenario;
use crate::exec::contender::Contender;
use crate::exec::scratch::spell;
use crate::exec::scratch::PathStyle;
use crate::exec::scratch::TARGET_NAME;
use crate::handoff::{Recipe, READER};
use crate::report::model::CountersResult;
use crate::report::model::Finding;
use crate::verdict::update::{judge_update, owed, total, UpdateTrial};
use crate::verdict::Report;
use std::time::Instant;

/// Natural trials per update recipe in the default run: two in each of five release orderings
/// (`SPREAD`). A lost update of an append that is not `O_APPEND` (.NET's `File.AppendAllText`
/// seeks to the end, then writes) fell in about one trial of four here: with one trial per
/// ordering in each mode, CoreCLR 9's `update.append-line` lost nothing in one default run of
/// six.
pub const UPDATE_TRIALS: usize = 2 * SPREAD.len();
/// Amplified trials per update recipe in the default run: one in each ordering. A locked
/// recipe's amplified trial takes every worker's every delayed call in turn (about 200 ms).
pub const UPDATE_AMPLIFIED_TRIALS: usize = SPREAD.len();
/// Natural trials per update recipe in the default run on a runtime that gets no amplified
/// run (PowerShell, whose tracer is attached only when asked; cmd): six in each ordering.
/// PowerShell's `update.append-line` (.NET's append: `fstat`, then `pwrite`) lost an update in
/// 4 of 27 natural trials over five default runs here (about one in seven; the adaptive stop
/// ends a run at its first) and in none of 10 in one of them, which then answered `use`; at
/// that rate none in 10 happens about one run in 5, none in 30 about one in 120.
pub const UPDATE_NATURAL_ONLY_TRIALS: usize = 6 * SPREAD.len();
/// Trials per update recipe with `--thorough`: five in each ordering.
pub const UPDATE_TRIALS_THOROUGH: usize = 5 * PAUSES.len();
/// Adaptive trials (the default run): a recipe stops once this many trials ran and one of them
/// lost an update or left a counter that is not whole numbers.
pub const UPDATE_DISPROOF_TRIALS: usize = 3;
/// The increments each worker makes in a trial: enough for three read-modify-write cycles to
/// overlap, few enough for PowerShell (a cmdlet's read and write take about a millisecond
/// each; 20 increments made its five recipes take 12.6 s of a default run).
pub const INCREMENTS: u64 = 10;
/// The release orderings of a default run's trials, one each: lockstep, offsets of a natural
/// and of two amplified release spreads, and the last worker paused early and late in its
/// steps — every other one of the lease scenario's timed ones (`PAUSES` of `src/engine/lease.rs`).
/// `--thorough` takes all of those in turn.
const SPREAD: [Ordering; 5] =
    [Ordering::Offset(0), Ordering::Offset(300), Ordering::Offset(2_000), Ordering::Pause(100), Ordering::Pause(1_500)];
/// The counter file's name in a trial's folder: the trial's target, which the reader reads.
pub const COUNTER: &str = TARGET_NAME;
/// The lock's name in a trial's folder (the locked recipes): the counter's, then `.lock`.
pub const LOCK: &str = "target.lock";
/// What the counter file holds when the workers start.
pub const START: &str = "0\n";

/// The update scenario for the engine: `--workers` workers and a reader per trial, amplified
/// in a default run too ([`handoff::AmplifiedRun::Always`]): with both cores busy, Bun's
/// workers made their increments one after another, so the unlocked read-modify-write lost no
/// update in its natural trials in two of three runs (and was answered `use`), while its
/// amplified trials, whose delayed calls interleave the workers, lost updates in every run.
pub(super) const RUNNER: handoff::Runner = handoff::Runner {
    scenario: Scenario::Update,
    slots: |o| o.sizes.workers + 1,
    // the reader, last
    observers: |o| o.sizes.workers..o.sizes.workers + 1,
    measure: |b, p, m, f| {
        handoff::measure_workers(b, p, m, f, handoff::AmplifiedRun::Always, update_recipe, Some(item_paths))
    },
};

/// Every path an amplified run's items name in the cell folder `cell` ([`handoff::ItemPaths`]):
/// each item's folder, its counter, lock and the workers' temp files.
fn item_paths(opts: &crate::options::Options, cell: &std::path::Path) -> Vec<std::path::PathBuf> {
    (0..trials(opts.adaptive, ItemsRun::Amplified))
        .flat_map(|n| {
            let dir = handoff::item_dir(cell, n);
            let files =
                [COUNTER.to_string(), LOCK.to_string()].into_iter().chain((0..opts.sizes.workers).map(temp_name));
            std::iter::once(dir.clone()).chain(files.map(move |f| dir.join(f)))
        })
        .collect()
}

/// The trials (items) of one recipe's run of kind `items`, adaptive (the default run) or not
/// (`--thorough`).
fn trials(adaptive: bool, items: ItemsRun) -> usize {
    match (adaptive, items) {
        (false, _) => UPDATE_TRIALS_THOROUGH,
        (true, ItemsRun::Natural) => UPDATE_TRIALS,
        (true, ItemsRun::NaturalOnly) => UPDATE_NATURAL_ONLY_TRIALS,
        (true, ItemsRun::Amplified) => UPDATE_AMPLIFIED_TRIALS,
    }
}

/// Worker `w`'s temp file in an item's folder (the temp-rename recipes).
fn temp_name(w: usize) -> String {
    format!("{COUNTER}.w{w}.tmp")
}

/// Every content the counter file may hold between two whole steps of a recipe, for the
/// reader (`params.expect`): a value recipe's `<n>\n` for n in 0..=`asked`, and an append
/// recipe's [`START`] followed by `1\n` up to `asked` times; and each of them with the line
/// ends cmd's `echo` writes, CR LF, after the harness's [`START`] (`probes/cmd/README.md`).
fn whole_contents(asked: u64) -> Vec<String> {
    let mut out = Vec::new();
    for eol in ["\n", "\r\n"] {
        out.extend((0..=asked).map(|n| format!("{n}{eol}")));
        out.extend((1..=asked).map(|k| format!("{START}{}", format!("1{eol}").repeat(k as usize))));
    }
    out
}

/// One recipe's finding; `None` when the run was interrupted.
fn update_recipe(
    pool: &mut [Contender],
    recipe: &Recipe,
    style: PathStyle,
    workers: usize,
    m: &mut Measurement<'_>,
) -> Option<Finding> {
    let started = Instant::now();
    let v = recipe.as_variant();
    let adaptive = m.opts.adaptive;
    let trials = trials(adaptive, m.items);
    let asked = workers as u64 * INCREMENTS;
    let expect = serde_json::json!(whole_contents(asked));
    let (done, evidence) = handoff::run_items(
        m,
        trials,
        &mut |n, tdir, m| {
            let id = m.next_id();
            let counter = tdir.join(COUNTER);
            std::fs::write(&counter, START).map_err(|e| format!("could not write the counter file: {e}"))?;
            let spec = |recipe: &str, role: &str, params, until_stopped| {
                handoff::recipe_spec(Scenario::Update, recipe, role, params, until_stopped)
            };
            let mut slots: Vec<Slot<'_>> = (0..workers)
                .map(|w| Slot {
                    variant: &v,
                    style,
                    index: w,
                    token: format!("{}-u{n}-w{w}", m.nonce),
                    recipe: spec(
                        &recipe.id,
                        "worker",
                        serde_json::json!({
                            "counter": spell(&counter, style),
                            "lock": spell(&tdir.join(LOCK), style),
                            "temp": spell(&tdir.join(temp_name(w)), style),
                            "increments": INCREMENTS,
                        }),
                        false,
                    ),
                })
                .collect();
            slots.push(Slot {
                variant: &v,
                style,
                index: workers,
                token: format!("{}-u{n}-r", m.nonce),
                recipe: spec(READER, "reader", serde_json::json!({ "expect": expect }), true),
            });
            // the reader first, so that it is reading when the workers start
            let ordering = if adaptive { SPREAD[n % SPREAD.len()] } else { PAUSES[n % PAUSES.len()] };
            let plan = ordering.plan(workers).releasing_first(workers);
            let end = handoff::run_item(pool, tdir, &slots, plan, id);
            // what the folder holds afterwards: the harness reads the total, not the workers' word
            let total = std::fs::read_to_string(&counter).ok().and_then(|t| total(&t));
            let leftovers = std::fs::read_dir(tdir)
                .map(|d| d.filter_map(Result::ok).filter(|e| e.file_name() != COUNTER).count())
                .unwrap_or(0);
            Ok((end, (total, leftovers)))
        },
        &|done| {
            // a sure failure: not whole numbers, more than asked, or less than the workers that
            // did not fault made for sure (a faulted worker's shortfall proves nothing)
            adaptive
                && done.len() >= UPDATE_DISPROOF_TRIALS
                && done.iter().any(|(attempts, (total, _))| {
                    let faults: Vec<bool> = attempts.iter().take(workers).map(handoff::faulted).collect();
                    total.is_none_or(|t| t < owed(asked, &faults) || t > asked)
                })
        },
    )?;
    let mut result = CountersResult::default();
    let mut judged = Vec::with_capacity(done.len());
    for (attempts, (total, leftovers)) in done {
        let (worker_attempts, reader) = attempts.split_at(workers.min(attempts.len()));
        handoff::count_errors(&mut result, worker_attempts);
        // what the reader's failed reads said, beside the workers' failed steps
        for r in reader.iter().filter_map(|a| a.recipe.as_ref()) {
            handoff::keep_sample(&mut result, &r.errors_sample);
        }
        let reader = reader
            .first()
            .filter(|a| a.report == Report::Success)
            .and_then(|a| a.recipe.as_ref())
            .map(|r| r.counters.clone());
        judged.push(UpdateTrial {
            asked,
            total,
            reader,
            leftovers,
            faults: worker_attempts.iter().map(handoff::faulted).collect(),
        });
    }
    if !judged.is_empty() {
        result.counters = judge_update(&judged);
    }
    Some(handoff::finding(recipe, result, evidence, started))
}

#[cfg(test)]
mod tests {
    use super::{whole_contents, START};

    /// The paths an amplified run's tracer delays are the ones its items are given: each
    /// item's folder, counter, lock and every worker's temp file, for every item it runs.
    #[test]
    fn an_amplified_run_lists_every_path_its_items_name() {
        let mut opts = crate::engine::tests::options(10);
        opts.adaptive = true;
        opts.sizes.workers = 2;
        let cell = std::path::Path::new("/s/c3");
        let paths = super::item_paths(&opts, cell);
        let last = super::UPDATE_AMPLIFIED_TRIALS - 1;
        for n in [0, last] {
            let dir = crate::engine::handoff::item_dir(cell, n);
            for name in ["", super::COUNTER, super::LOCK, "target.w0.tmp", "target.w1.tmp"] {
                let p = if name.is_empty() { dir.clone() } else { dir.join(name) };
                assert!(paths.contains(&p), "{} missing from {paths:?}", p.display());
            }
        }
        assert_eq!(paths.len(), super::UPDATE_AMPLIFIED_TRIALS * 5, "nothing else: {paths:?}");
        assert_eq!(super::temp_name(1), "target.w1.tmp");
    }

    #[test]
    fn the_reader_accepts_every_value_and_every_appended_length() {
        let w = whole_contents(3);
        assert_eq!(&w[..7], ["0\n", "1\n", "2\n", "3\n", "0\n1\n", "0\n1\n1\n", "0\n1\n1\n1\n"]);
        // cmd's echo ends its lines CR LF; the harness's start stays LF
        assert_eq!(&w[7..], ["0\r\n", "1\r\n", "2\r\n", "3\r\n", "0\n1\r\n", "0\n1\r\n1\r\n", "0\n1\r\n1\r\n1\r\n"]);
        assert!(w.contains(&START.to_string()));
    }
}

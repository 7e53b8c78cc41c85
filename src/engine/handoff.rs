//! What the hand-off scenarios (publish, done-marker, claim, lease, holder, ledger, update, os-lock, watch, mutex) share: probes of the runtime's
//! first family in one pool, one finding per selected recipe, and the way a recipe's items
//! (trials) end.

use super::attempt::ms;
use super::trial::{run_trial, Slot, TrialEnd, TrialPlan, TrialSetup};

use super::timeouts_for;
use super::Amplify;
use super::ItemsRun;
use super::Measurement;
use super::Pools;
use crate::domain::ContenderKind;
use crate::domain::NoAmplified;
use crate::domain::Scenario;
use crate::domain::TargetState;
use crate::exec::contender::Attempt;
use crate::exec::contender::Contender;
use crate::exec::contender::{RecipeSpec, HARNESS_ERROR_PREFIX};
use crate::exec::scratch::clear;
use crate::exec::scratch::PathStyle;
use crate::handoff::Recipe;
use crate::options::Options;
use crate::report::model::CellResult;
use crate::report::model::CountersResult;
use crate::report::model::Finding;
use crate::runtime::ProbeContext;
use crate::runtime::Runtime;
use std::ops::Range;
use std::path::Path;
use std::time::Instant;

/// A hand-off scenario as the engine runs it: each scenario's file defines one
/// (`publish::RUNNER`…), and [`RUNNERS`] lists them.
pub(super) struct Runner {
    /// The scenario.
    pub scenario: Scenario,
    /// The probes one of its items needs under `opts` (writer and readers, workers…). Asked
    /// only of scenarios that run: the cell list holds no recipe of any other.
    pub slots: fn(&Options) -> usize,
    /// The slots of an item that watch the others' work instead of doing it (the readers of
    /// publish and update) under `opts`: in an amplified run they run untraced, from the
    /// natural pool ([`Pools::swap_natural`]), so that they read at full speed while the
    /// recipe's every file-system call is delayed. Traced, a reader's own `openat` waited the
    /// delay before each read: bash's update reader read 394 times in 5 amplified trials
    /// against 802 in 10 natural ones, and a torn state shorter than the delay went unseen.
    pub observers: fn(&Options) -> Range<usize>,
    /// Measures a batch of its recipes ([`measure_recipes`] with the scenario's own recipe
    /// runner).
    pub measure: MeasureBatch,
}

/// How a [`Runner`] measures a batch of recipes with the hand-off pool, calling back after
/// each finding; returns the findings in order.
pub(super) type MeasureBatch =
    fn(&Batch<'_>, &mut Pools, &mut Measurement<'_>, &mut dyn FnMut(&Finding)) -> Vec<Finding>;

/// Every hand-off scenario the engine runs.
pub(super) const RUNNERS: [Runner; 10] = [
    super::publish::RUNNER,
    super::done::RUNNER,
    super::claim::RUNNER,
    super::lease::RUNNER,
    super::holder::RUNNER,
    super::ledger::RUNNER,
    super::update::RUNNER,
    super::os_lock::RUNNER,
    super::watch::RUNNER,
    super::mutex::RUNNER,
];

/// The runner of `scenario`, if it is a hand-off scenario.
pub(super) fn runner(scenario: Scenario) -> Option<&'static Runner> {
    RUNNERS.iter().find(|r| r.scenario == scenario)
}

/// The recipes of one scenario to measure on a runtime (the cell list's, in order), with the
/// probes each of its items uses.
pub(super) struct Batch<'a> {
    /// The runtime.
    pub rt: &'a Runtime,
    /// The recipes.
    pub recipes: &'a [&'static Recipe],
    /// The probes of an item (the first of the hand-off pool).
    pub slots: usize,
    /// Which of them are observers ([`Runner::observers`]).
    pub observers: Range<usize>,
}

/// [`Runner::observers`] of a scenario whose every slot does the recipe's work.
pub(super) fn no_observers(_: &Options) -> Range<usize> {
    0..0
}

/// Makes one recipe's finding with a pool, in a runtime's path style; `None` when the run was
/// interrupted.
pub(super) type RecipeRunner<'a> =
    dyn FnMut(&mut [Contender], &Recipe, PathStyle, &mut Measurement<'_>) -> Option<Finding> + 'a;

/// The probes every hand-off scenario of `rt` shares: `slots` probes of its first family, not
/// started yet; `None` when it has no family. One pool per runtime instead of one per scenario
/// saves two start-ups of every runtime (issue 13).
pub(super) fn pools(rt: &Runtime, slots: usize, m: &Measurement<'_>, ctx: &ProbeContext) -> Option<Pools> {
    let adapter = rt.adapter();
    let family = rt.families.first()?;
    let launch = adapter.launch(rt, family, ctx);
    Some(Pools::of_adapter(adapter, launch, timeouts_for(adapter, m.opts), slots, ContenderKind::Processes, m))
}

/// About how long one recipe of `scenario` takes in a default run, ms: for dealing a runtime's
/// scenarios to two lanes ([`super::Handoffs::split`]) only, never for a verdict. The mean
/// cell time per scenario of a default run of every runtime here (cmd and cells under 50 ms,
/// which are refusals, left out); a scenario not listed counts as a second.
pub(super) fn schedule_weight(scenario: Scenario) -> u64 {
    match scenario {
        Scenario::Update => 2_060,
        Scenario::Watch => 1_190,
        Scenario::Claim => 940,
        Scenario::Lease => 590,
        Scenario::Ledger => 460,
        Scenario::Publish => 460,
        Scenario::Holder => 410,
        Scenario::OsLock => 280,
        Scenario::DoneMarker => 230,
        _ => 1_000,
    }
}

/// When a hand-off scenario runs its items a second time amplified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AmplifiedRun {
    /// Where the run asks for it ([`Options::handoff_amplified`]: `--thorough`, `--amplify on`),
    /// and for a scenario's anti-pattern whose natural items lost nothing ([`control_held`]).
    WhenAsked,
    /// Wherever amplification is on and the runtime's probes run under a tracer started with
    /// them: the scenario's failures need the delayed steps to show in a default run's few
    /// trials (a lease taker paused inside a delayed call). A runtime whose tracer is attached
    /// after the start ([`crate::runtime::Adapter::amplify_by_attach`]: PowerShell), which stops
    /// every system call of every thread, is amplified only when asked: its five lease recipes
    /// took 24 s amplified against 3 s natural.
    Always,
    /// Never: the harness lays the trial out and nothing in it is a race to widen; the reason,
    /// which the cell gives instead of an amplified run (watch: Deno's watcher took over 10 s to
    /// start under the tracer).
    Never(&'static str),
}

/// One recipe of a scenario whose items take `workers` contenders each (lease, ledger, update, mutex): its
/// finding, `None` when the run was interrupted.
pub(super) type WorkerRecipe = fn(&mut [Contender], &Recipe, PathStyle, usize, &mut Measurement<'_>) -> Option<Finding>;

/// [`measure_recipes`] for a scenario whose items take `--workers` contenders, amplified as
/// `amplified` says (lease, ledger, update and mutex: [`AmplifiedRun::Always`], a contender
/// paused inside a delayed call is what shows their failures in a default run's few trials),
/// on the paths `item_paths` lists where given ([`measure_recipes`]).
pub(super) fn measure_workers(
    batch: &Batch<'_>,
    pools: &mut Pools,
    m: &mut Measurement<'_>,
    on_finding: &mut dyn FnMut(&Finding),
    amplified: AmplifiedRun,
    recipe: WorkerRecipe,
    item_paths: Option<ItemPaths>,
) -> Vec<Finding> {
    let workers = m.opts.sizes.workers;
    let mut run =
        |pool: &mut [Contender], r: &Recipe, style, m: &mut Measurement<'_>| recipe(pool, r, style, workers, m);
    measure_recipes(batch, pools, m, on_finding, amplified, &mut run, item_paths)
}

/// Every path the items of one recipe's amplified run name, given the run's options and the
/// cell folder the items will run in ([`item_dir`] of each): each item's folder and the files
/// the harness names in it, absolute. A scenario that lists them lets a runtime that starts a
/// process per step be amplified on those paths alone ([`measure_recipes`]).
pub(super) type ItemPaths = fn(&Options, &Path) -> Vec<std::path::PathBuf>;

/// The folder of item `n` of a cell whose folder is `cell` ([`run_items`]).
pub(super) fn item_dir(cell: &Path, n: usize) -> std::path::PathBuf {
    cell.join(format!("i{n}"))
}

/// Measures the recipes of `batch` on its runtime with the first `batch.slots` probes of
/// `pools` ([`pools`]): `run` makes one recipe's finding (`None` when the run was
/// interrupted), natural, then amplified as `amplified` says; `on_finding` is called after
/// each. Returns the findings in order.
///
/// Where `item_paths` lists the paths of the scenario's items, on a runtime whose probes start a process per step
/// ([`crate::exec::contender::Mode::starts_a_process_per_step`]: the shells), the amplified run
/// delays only the calls that name them, so that each `mv`, `rm` or `sleep` starts at full
/// speed (the loader's two dozen opens and stats were delayed 1 ms each before), the run's
/// scope of delays (`--amplify-paths`) permitting. Every other runtime keeps one amplified
/// pool for all its hand-offs, delaying every listed call: a pool under another tracer per
/// recipe would start its probes again.
pub(super) fn measure_recipes(
    batch: &Batch<'_>,
    pools: &mut Pools,
    m: &mut Measurement<'_>,
    on_finding: &mut dyn FnMut(&Finding),
    amplified: AmplifiedRun,
    run: &mut RecipeRunner<'_>,
    item_paths: Option<ItemPaths>,
) -> Vec<Finding> {
    let asked =
        m.opts.handoff_amplified || (amplified == AmplifiedRun::Always && !batch.rt.adapter().amplify_by_attach());
    let adapter = batch.rt.adapter();
    let slots = batch.slots.min(pools.natural.len());
    // every path delayed: a hand-off's files have many names, not a race's few
    let amplify = m.opts.amplify.every_path();
    let mut out = Vec::new();
    for &recipe in batch.recipes {
        if crate::interrupt::requested() {
            break;
        }
        let started = Instant::now();
        // a scenario amplified by default whose amplified run this runtime does not get
        let no_amplified_run = amplified == AmplifiedRun::Always
            && matches!(amplify, Amplify::On(_))
            && (!asked || pools.unusable().is_some());
        m.items = if no_amplified_run { ItemsRun::NaturalOnly } else { ItemsRun::Natural };
        let natural = run(&mut pools.natural[..slots], recipe, adapter.path_style(), m);
        m.items = ItemsRun::Natural;
        let Some(mut f) = natural else { break };
        // how the probes were driven (the cmd loop, or one-shot after it did not start)
        f.driver = pools.natural[..slots].iter().find_map(Contender::note);
        // the library version raced, for the tables and `diff`
        f.library = m.opts.libraries.get(&recipe.id).map(|u| u.spec.to_string());
        // the same items again with every file-system call delayed, reported beside them;
        // not when the natural run could not start (its evidence already says why)
        let natural_ran = matches!(&f.result, CellResult::Counters(k) if !k.counters.is_empty());
        if natural_ran {
            let asked = asked || control_held(recipe, &f.result);
            let amplified = match (pools.unusable(), &amplify, asked, amplified) {
                // a scenario with nothing to amplify says why, not that a flag would run it
                (_, Amplify::On(_), _, AmplifiedRun::Never(why)) => Err(NoAmplified::Unavailable(why.to_string())),
                // a runtime that is never amplified (cmd) says so, likewise
                (Some(why), _, _, _) => Err(NoAmplified::Unavailable(why.to_string())),
                (None, Amplify::On(_), false, _) => Err(NoAmplified::NotRequested),
                _ => {
                    m.items = ItemsRun::Amplified;
                    let amplify = match item_paths {
                        Some(paths) if adapter.mode().starts_a_process_per_step() => {
                            m.opts.amplify.for_paths(paths(m.opts, &m.scratch.next_cell_dir()))
                        }
                        _ => amplify.clone(),
                    };
                    // the observers (readers) from the natural pool: untraced, at full speed
                    let a = pools.with_amplified(&amplify, batch.observers.clone(), |pool| {
                        run(&mut pool[..slots], recipe, adapter.path_style(), m)
                    });
                    m.items = ItemsRun::Natural;
                    match a {
                        Ok(Some(a)) => Ok(a),
                        Ok(None) => break,
                        Err(why) => Err(why),
                    }
                }
            };
            if let CellResult::Counters(k) = &mut f.result {
                match amplified {
                    Ok(a) => {
                        if let CellResult::Counters(ak) = a.result {
                            k.amplified = Some(Box::new(ak));
                        }
                        k.amplified_unavailable = a.evidence.map(NoAmplified::Unavailable);
                    }
                    Err(why) => k.amplified_unavailable = Some(why),
                }
            }
            f.elapsed_ms = ms(started.elapsed());
        }
        on_finding(&f);
        out.push(f);
    }
    out
}

/// True when `recipe` is one of its scenario's anti-patterns — the scenario's detection
/// control ([`crate::verdict::recipe::controlled`]) — and its natural items (`natural`, the
/// cell's counters) lost nothing, with nothing faulted: such a recipe runs its items again
/// amplified wherever amplification is on, asked for or not, so that the few trials of a
/// default run do not leave the control, and with it every right recipe of the scenario on
/// the runtime, undetermined (with both cores busy, `publish.direct` on Deno and Mono and
/// `claim.list-then-open` on Java and Rust lost nothing in one run of three).
pub(super) fn control_held(recipe: &Recipe, natural: &CellResult) -> bool {
    let (true, CellResult::Counters(k), Some(words)) =
        (recipe.anti_pattern, natural, crate::report::handoff::words(recipe.scenario))
    else {
        return false;
    };
    let run = crate::verdict::recipe::RecipeRun {
        mode: crate::verdict::RaceMode::Natural,
        counters: &k.counters,
        harness_error: k.harness_error,
    };
    crate::verdict::recipe::answer_recipe(&[run], words.failures, words.faults).verdict
        == crate::verdict::answer::AnswerVerdict::Yes
}

/// Runs one item's trial with attempt id `id` in its folder `dir` (given to the probes
/// absolute): the target starts absent, nothing holds a handle, the target is read only
/// afterwards — the hand-offs read what they need of the folder themselves.
pub(super) fn run_item(pool: &mut [Contender], dir: &Path, slots: &[Slot<'_>], plan: TrialPlan, id: u64) -> TrialEnd {
    run_item_during(pool, dir, slots, plan, id, None)
}

/// [`run_item`] with what the harness does itself once the one-pass recipes have ended, while
/// the loop recipes still run ([`TrialSetup::during`]).
pub(super) fn run_item_during(
    pool: &mut [Contender],
    dir: &Path,
    slots: &[Slot<'_>],
    plan: TrialPlan,
    id: u64,
    during: Option<super::trial::During<'_>>,
) -> TrialEnd {
    let setup = TrialSetup {
        dir,
        probe_dir: dir,
        first: (TargetState::Absent, ""),
        slots,
        plan,
        hold_ms: 0,
        snapshot_before: false,
        trash: None,
        second_client: None,
        during,
    };
    run_trial(pool, &setup, id)
}

/// Waits (1 ms steps) until `ready()`, for `ms` milliseconds at most, or until the run is
/// interrupted: how the harness waits for a marker a probe makes during a trial. True when it
/// was ready.
pub(super) fn wait_for(ms: u64, ready: impl Fn() -> bool) -> bool {
    let until = Instant::now() + std::time::Duration::from_millis(ms);
    loop {
        if ready() {
            return true;
        }
        if Instant::now() > until || crate::interrupt::requested() {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// A recipe to run in a slot of a `scenario` trial.
pub(super) fn recipe_spec(
    scenario: Scenario,
    recipe: &str,
    role: &str,
    params: serde_json::Value,
    until_stopped: bool,
) -> Option<RecipeSpec> {
    Some(RecipeSpec {
        scenario: scenario.as_str().into(),
        recipe: recipe.into(),
        role: role.into(),
        params,
        until_stopped,
    })
}

/// The `node_modules` folder of the library `recipe` races, for its probes' `params.library`:
/// `Ok(None)` for a recipe that races none, `Err` with the recipe's finding (`unsupported`,
/// with the reason) when the library could not be installed before the run.
pub(super) fn library_dir(
    recipe: &Recipe,
    m: &Measurement<'_>,
    started: Instant,
) -> Result<Option<String>, Box<Finding>> {
    match m.opts.libraries.get(&recipe.id).map(|u| &u.dir) {
        Some(Ok(dir)) => Ok(Some(dir.clone())),
        Some(Err(why)) => {
            let stopped = Stopped { why: format!("unsupported: {why}"), harness: false };
            Err(Box::new(finding(recipe, CountersResult::default(), Some(stopped), started)))
        }
        None => Ok(None),
    }
}

/// How one item of a recipe ended, for the recipe's loop.
pub(super) enum ItemEnd {
    /// Every contender was released: their attempts.
    Done(Vec<Attempt>),
    /// The recipe cannot go on (a probe without the recipe, a fault before the release, a
    /// harness error).
    Stop(Stopped),
    /// The run was interrupted: the recipe's finding is dropped.
    Interrupted,
}

impl From<TrialEnd> for ItemEnd {
    fn from(end: TrialEnd) -> ItemEnd {
        match end {
            TrialEnd::Interrupted => ItemEnd::Interrupted,
            TrialEnd::HarnessError(why) => ItemEnd::Stop(Stopped::harness(why)),
            TrialEnd::NotReleased { fault, .. } => ItemEnd::Stop(Stopped {
                why: format!("{}: {}", fault.report.as_str(), fault.evidence.unwrap_or_default()),
                harness: false,
            }),
            // a call that failed because the scratch file system did (ENOSPC, EIO, …) says
            // nothing about the recipe: the harness failed, not the runtime
            TrialEnd::Released { attempts, .. } => match attempts.iter().find_map(Attempt::harness_why) {
                Some(why) => ItemEnd::Stop(Stopped::harness(why.to_string())),
                None => ItemEnd::Done(attempts),
            },
        }
    }
}

/// Runs item `n` of a recipe in its folder ([`run_items`]).
pub(super) type ItemRunner<'a, T> = dyn FnMut(usize, &Path, &mut Measurement<'_>) -> Result<(TrialEnd, T), String> + 'a;

/// What the items of one recipe produced: each item's attempts with what the harness read of
/// its folder, and the evidence of why the items stopped early, if they did.
pub(super) type Items<T> = (Vec<Item<T>>, Option<Stopped>);

/// One item's attempts, with what the harness read of its folder.
pub(super) type Item<T> = (Vec<Attempt>, T);

/// Why a recipe's items stopped before their count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Stopped {
    /// The cell's evidence (`unsupported: …`, `harness-error: …`, `crashed: …`).
    pub why: String,
    /// The harness failed (set-up, snapshot, the scratch file system), not the runtime.
    pub harness: bool,
}

impl Stopped {
    /// A harness error, with its reason.
    pub fn harness(why: String) -> Stopped {
        Stopped { why: format!("{HARNESS_ERROR_PREFIX}{why}"), harness: true }
    }
}

/// The raw errors a hand-off cell keeps (`errors_sample`): the first this many.
const ERRORS_SAMPLE: usize = 8;

/// Adds `raw` to `result`'s sample of raw errors while it has room ([`ERRORS_SAMPLE`]), so
/// that the cell says what failed.
pub(super) fn keep_sample(result: &mut CountersResult, raw: &[crate::domain::RawError]) {
    let room = ERRORS_SAMPLE.saturating_sub(result.errors_sample.len());
    result.errors_sample.extend(raw.iter().take(room).cloned());
}

/// Counts the failed steps of `attempts` in `result`: each one's normalised code, and its raw
/// error in the cell's sample ([`keep_sample`]). A contender that crashed, timed out or hung
/// ([`faulted`]) has no raw error of its own: what the harness saw of it (its evidence: the
/// timeout, the stderr tail) goes in the sample instead, typed by how it ended, so that a
/// cell's `worker_faults` says why.
pub(super) fn count_errors(result: &mut CountersResult, attempts: &[Attempt]) {
    for a in attempts {
        if let Some(e) = super::attempt::error_info(a) {
            *result.errors.entry(e.code).or_insert(0) += 1;
            keep_sample(result, std::slice::from_ref(&e.raw));
        } else if let (true, Some(why)) = (faulted(a), &a.evidence) {
            let raw = crate::domain::RawError {
                kind: a.report.as_str().to_string(),
                message: why.clone(),
                ..Default::default()
            };
            keep_sample(result, std::slice::from_ref(&raw));
        }
    }
}

/// Counts the errors of one item's `attempts` in `result` ([`count_errors`], and the raw
/// errors each probe sampled itself), and returns per contender whether it faulted
/// ([`faulted`]).
pub(super) fn errors_and_faults(result: &mut CountersResult, attempts: &[Attempt]) -> Vec<bool> {
    count_errors(result, attempts);
    for r in attempts.iter().filter_map(|a| a.recipe.as_ref()) {
        keep_sample(result, &r.errors_sample);
    }
    attempts.iter().map(faulted).collect()
}

/// True when a contender crashed, timed out or reported no counts (a recipe that ran and failed
/// a step reported its counts: that is an outcome, not a fault).
pub(super) fn faulted(a: &Attempt) -> bool {
    !matches!(a.report, crate::verdict::Report::Success | crate::verdict::Report::Error) || a.recipe.is_none()
}

/// Runs up to `count` items of a recipe in a new cell folder: `item(n, folder, m)` sets up item
/// `n` in its own empty folder, runs its trial and reads the folder (which is removed
/// afterwards); it returns the trial's end and what it read, or the evidence of a harness error.
/// The items stop at the first that cannot go on ([`ItemEnd::Stop`]), or once `enough` says
/// the items done so far settle the cell (adaptive trials); `None` when the run was
/// interrupted (the recipe's finding is dropped).
pub(super) fn run_items<T>(
    m: &mut Measurement<'_>,
    count: usize,
    item: &mut ItemRunner<'_, T>,
    enough: &dyn Fn(&[Item<T>]) -> bool,
) -> Option<Items<T>> {
    let dir = match m.scratch.cell_dir() {
        Ok((abs, _)) => abs,
        Err(e) => return Some((Vec::new(), Some(Stopped::harness(format!("could not create a cell folder: {e}"))))),
    };
    let mut done = Vec::with_capacity(count);
    let mut evidence = None;
    for n in 0..count {
        if crate::interrupt::requested() {
            clear(&dir);
            return None;
        }
        let folder = item_dir(&dir, n);
        let r = std::fs::create_dir(&folder)
            .map_err(|e| format!("could not create an item folder: {e}"))
            .and_then(|()| item(n, &folder, m));
        clear(&folder);
        match r.map(|(end, seen)| (ItemEnd::from(end), seen)) {
            Ok((ItemEnd::Interrupted, _)) => {
                clear(&dir);
                return None;
            }
            Ok((ItemEnd::Done(attempts), seen)) => {
                done.push((attempts, seen));
                if enough(&done) {
                    break;
                }
            }
            Ok((ItemEnd::Stop(why), _)) => {
                evidence = Some(why);
                break;
            }
            Err(why) => {
                evidence = Some(Stopped::harness(why));
                break;
            }
        }
    }
    clear(&dir);
    Some((done, evidence))
}

/// The finding of `recipe` in its scenario: its counters, why its items stopped early (a
/// harness error marks the counters so), and the wall time since `started`.
pub(super) fn finding(
    recipe: &Recipe,
    mut result: CountersResult,
    stopped: Option<Stopped>,
    started: Instant,
) -> Finding {
    result.harness_error = stopped.as_ref().is_some_and(|s| s.harness);
    Finding {
        variant: recipe.id.to_string(),
        scenario: recipe.scenario,
        target: TargetState::Absent,
        source: None,
        control: false,
        evidence: stopped.map(|s| s.why),
        driver: None,
        contenders: ContenderKind::Processes,
        library: None,
        elapsed_ms: ms(started.elapsed()),
        result: CellResult::Counters(result),
    }
}

#[cfg(test)]
mod tests {
    use super::control_held;
    use crate::handoff::Recipe;
    use crate::report::model::{CellResult, CountersResult};

    /// A scenario's anti-pattern runs amplified when its natural items lost nothing and
    /// nothing faulted; not when they lost something, a probe faulted or nothing was read, and
    /// never for a right recipe.
    #[test]
    fn an_anti_pattern_that_lost_nothing_natural_is_amplified() {
        let counters = |pairs: &[(&str, u64)]| CountersResult {
            counters: pairs.iter().map(|(k, n)| (k.to_string(), *n)).collect(),
            ..Default::default()
        };
        let run = |pairs: &[(&str, u64)]| CellResult::Counters(counters(pairs));
        let direct = Recipe::find("publish.direct").expect("publish.direct");
        let right = Recipe::find("publish.temp-rename").expect("publish.temp-rename");
        assert!(direct.anti_pattern && !right.anti_pattern);
        let clean = run(&[("reads", 400), ("torn_reads", 0)]);
        assert!(control_held(direct, &clean));
        assert!(!control_held(right, &clean), "a right recipe waits for the flag");
        assert!(!control_held(direct, &run(&[("reads", 400), ("torn_reads", 3)])), "it lost something");
        assert!(!control_held(direct, &run(&[("reads", 0)])), "nothing to lose");
        let broken = CellResult::Counters(CountersResult { harness_error: true, ..counters(&[("reads", 400)]) });
        assert!(!control_held(direct, &broken), "the harness failed");
    }
}

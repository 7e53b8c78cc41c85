//! Measuring one runtime: second-comer attempts and races, cell by cell.
//!
//! This module walks a runtime's cell list ([`measure_with`], with the pools [`RuntimePools`]
//! made and [`start_runtimes`] started); `pools` holds the contenders of
//! each family (natural, and the same launches under the tracer), `policy` decides which race
//! modes a cell runs and with how many trials, [`trial`] runs one trial, and the hand-off
//! scenarios have a file each (`publish`, `done`, `claim`, `lease`, sharing `handoff`).
//!
//! For every attempt the harness puts the first comer's state in place, snapshots the target,
//! drives the probe, snapshots again, and classifies with [`crate::verdict`]. For races it
//! prepares each contender's source before the release, releases all contenders together
//! (`go` written to each in turn, after all are `ready`), then reads whose token the target
//! holds.
//!
//! Floor: above [`crate::report`] (whose findings it fills) and [`crate::cells`]; below the
//! command line and the plan, which it never reads.

use std::path::Path;

pub mod against;
mod attempt;
mod claim;
mod done;
pub use done::{DONE_DISPROOF_ITEMS, DONE_ITEMS, DONE_ITEMS_THOROUGH};
mod handoff;
mod holder;
pub use holder::{HOLDER_TRIALS, HOLDER_TRIALS_THOROUGH};
mod os_lock;
pub use os_lock::{OS_LOCK_TRIALS, OS_LOCK_TRIALS_THOROUGH};
mod mutex;
mod watch;
pub use mutex::{
    KILLED_PER_ROUND as MUTEX_KILLED_PER_ROUND, KINDS_PER_ROUND as MUTEX_KINDS_PER_ROUND, MUTEX_ROUNDS,
    MUTEX_ROUNDS_THOROUGH,
};
pub use watch::{burst_size, DEADLINE_MS as WATCH_DEADLINE_MS, WATCH_TRIALS, WATCH_TRIALS_THOROUGH};
mod lease;
mod ledger;
pub use lease::{LEASE_DISPROOF_TRIALS, LEASE_TRIALS, LEASE_TRIALS_THOROUGH};
pub use ledger::{LEDGER_DISPROOF_TRIALS, LEDGER_TRIALS, LEDGER_TRIALS_THOROUGH};
mod policy;
mod pools;
mod publish;
mod second;
pub mod trial;
mod update;
pub use update::{
    INCREMENTS as UPDATE_INCREMENTS, UPDATE_AMPLIFIED_TRIALS, UPDATE_DISPROOF_TRIALS, UPDATE_NATURAL_ONLY_TRIALS,
    UPDATE_TRIALS, UPDATE_TRIALS_THOROUGH,
};

pub use policy::{race_modes, RaceOutput, RaceRole, DISPROOF_TRIALS_PER_ORDERING, NATURAL_CHECK_TRIALS_PER_ORDERING};
pub use pools::{start_together, Pools, NO_THREADS};

pub use crate::options::{Amplify, Budget, HandoffSizes, Options};
pub use crate::verdict::needs_race;
pub use claim::{CLAIM_AMPLIFIED_TRIALS, CLAIM_TRIALS};
use second::second_comer_cell;
pub use trial::{RaceRun, Sweep};

use crate::cells::Planned;
use crate::domain::ContenderKind;
use crate::exec::contender::{Attempt, Timeouts};
use crate::exec::health;
use crate::exec::scratch::{PathStyle, Scratch, TargetState};
use crate::matrix::Variant;
use crate::report::model::{
    CellResult, ControlInfo, CountersResult, Finding, ModeRun, RaceResult, Scenario, SecondComerResult,
};
use crate::runtime::{ProbeContext, Runtime};
use crate::verdict::{apply_control, Detection, Outcome, RaceMode, RaceVerdict, Report};

/// What every attempt of one measurement shares: the options, the scratch folder (every path
/// a probe is given lies inside it), the run's nonce (part of every token, so a token from
/// another run can never match) and the attempt counter (each attempt's id in the protocol).
#[derive(Debug)]
pub struct Measurement<'a> {
    /// The options.
    pub opts: &'a Options,
    /// The scratch folder.
    pub scratch: &'a mut Scratch,
    /// The run's nonce.
    pub nonce: &'a str,
    last_id: u64,
    /// The amplification of the family being measured, where its control needed a longer
    /// delay than `opts.amplify`.
    amplify: Option<Amplify>,
    /// Where [`Measurement::keep_for_pairs`] asked for it: the probes of every runtime measured
    /// so far, idle, for the pairs of `run --against` ([`against::race_pair`] takes them).
    kept: Option<against::KeptPools>,
    /// Set by [`Measurement::defer_handoffs`].
    defer_handoffs: bool,
    /// Which run of a hand-off recipe's items is going on (`handoff::measure_recipes`), for
    /// the scenarios whose trials depend on it.
    items: ItemsRun,
}

/// Which run of a hand-off recipe's items is going on ([`Measurement::items`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ItemsRun {
    /// The natural run; an amplified one follows, or the run asked for none (`--amplify off`,
    /// or a scenario amplified only with `--thorough` or `--amplify on`).
    Natural,
    /// The natural run of a scenario amplified by default, with no amplified run to follow on
    /// this runtime (amplification is on, but PowerShell's tracer is attached only when asked,
    /// and cmd is never amplified): its natural trials are all the evidence there is.
    NaturalOnly,
    /// The amplified run: every file-system call of the recipe's probes delayed.
    Amplified,
}

impl<'a> Measurement<'a> {
    /// A measurement with `opts` in `scratch`, tokens made from `nonce`; attempt ids from 1.
    pub fn new(opts: &'a Options, scratch: &'a mut Scratch, nonce: &'a str) -> Measurement<'a> {
        Measurement {
            opts,
            scratch,
            nonce,
            last_id: 0,
            amplify: None,
            kept: None,
            defer_handoffs: false,
            items: ItemsRun::Natural,
        }
    }

    /// From now on, [`measure_with`] keeps each family's session probes when it is done with them
    /// (idle, blocked on their input: natural ones and those under the run's tracer) instead of
    /// stopping them, for the pairs of `run --against`, which would otherwise start them again
    /// (a PowerShell probe costs about a second of CPU to start). The pairs take the bank
    /// ([`Measurement::take_kept`]) and stop what they do not use.
    pub fn keep_for_pairs(&mut self) {
        self.kept.get_or_insert_with(against::KeptPools::default);
    }

    /// From now on, [`measure_with`] leaves a runtime's hand-off scenarios for later
    /// ([`Measured::handoffs`]) where its probes are session processes, for the run to measure
    /// them two runtimes at a time ([`Handoffs::measure`]); a loop driver's (cmd) are measured
    /// in its turn, while its Wine server runs.
    pub fn defer_handoffs(&mut self) {
        self.defer_handoffs = true;
    }

    /// A measurement with the options and nonce of this one in `scratch` (another lane of the
    /// run: [`Scratch::lane`]), its attempt ids from `first_id` on, nothing kept, nothing
    /// deferred.
    pub fn lane<'b>(&self, scratch: &'b mut Scratch, first_id: u64) -> Measurement<'b>
    where
        'a: 'b,
    {
        Measurement { last_id: first_id, ..Measurement::new(self.opts, scratch, self.nonce) }
    }

    /// Takes back the pool of hand-offs measured (in any lane): kept for the pairs where
    /// [`Measurement::keep_for_pairs`] asked for it and its probes may wait, else stopped.
    pub fn retire_handoffs(&mut self, h: Handoffs) {
        self.retire(h.side, h.pools, h.keep);
    }

    /// The probes kept for the pairs so far ([`Measurement::keep_for_pairs`]); an empty bank
    /// when none were kept. The bank's owner stops them ([`against::KeptPools::shutdown`]).
    pub fn take_kept(&mut self) -> against::KeptPools {
        self.kept.take().unwrap_or_default()
    }

    /// Stops a family's pools, or, where [`Measurement::keep_for_pairs`] asked for it and the
    /// family's probes are session processes, keeps them for the pairs as `side`.
    fn retire(&mut self, side: against::SideKey, mut pools: Pools, keep: bool) {
        match (&mut self.kept, keep) {
            (Some(bank), true) => {
                let tracer = pools.tracer_for(&self.opts.amplify);
                bank.adopt(side, &mut pools, tracer.as_ref());
            }
            _ => pools.shutdown(),
        }
    }

    /// The amplification in force: the family's raised one, else `opts.amplify`.
    fn amplify(&self) -> &Amplify {
        self.amplify.as_ref().unwrap_or(&self.opts.amplify)
    }

    /// The next attempt id.
    fn next_id(&mut self) -> u64 {
        self.last_id += 1;
        self.last_id
    }
}

/// What [`measure_with`] produced for one runtime.
#[derive(Default)]
pub struct Measured {
    /// What was found, cell by cell, in the order of the cell list (a family's control, raced
    /// first, at its place in the list); the report layer makes them cells ([`crate::report::model::Cell::from_finding`]).
    pub findings: Vec<Finding>,
    /// The detection control of each family that ran races.
    pub controls: Vec<ControlInfo>,
    /// Set when the scratch file system stopped working (a harness error, then a failed
    /// [`health::check`]): measuring stopped, and the run must end with exit code 3.
    pub scratch_failed: Option<String>,
    /// The hand-offs left for later ([`Measurement::defer_handoffs`]), where the runtime has any.
    pub handoffs: Option<Handoffs>,
}

/// The detection control of `family` among `all` variants: the one marked `control = true`
/// in its matrix (its check-then-create anti-pattern).
pub fn control_for<'a>(all: &'a [Variant], family: &str) -> Option<&'a Variant> {
    all.iter().find(|v| v.family == family && v.control)
}

/// The probes one runtime's measurement uses, made before it is measured
/// ([`RuntimePools::new`]): each family's race pools (the amplified one too where the family
/// races) and the hand-off pool, as large as the largest hand-off scenario needs. A run makes
/// every runtime's first and starts all of their session probes at once ([`start_runtimes`]),
/// while nothing is measured: they then wait idle, blocked on their input, until their
/// runtime's turn, and no start-up falls between two runtimes' measurements (a PowerShell
/// probe costs about 1.8 s of CPU to start, and a runtime's own start-ups kept one core idle).
pub struct RuntimePools {
    /// Per family of the cell list ([`crate::cells::by_family`]), in its order: its pools,
    /// and whether it races.
    families: Vec<(Pools, bool)>,
    /// The hand-off pool, where it is not the first family's.
    handoff: Option<Pools>,
    /// True when the hand-offs run in the first family's natural pool.
    share_first: bool,
    /// The probes a hand-off item needs (the largest of the scenarios that run); `None`: no
    /// hand-off runs.
    slots: Option<usize>,
    /// Per family, once its pools were started with the others: the first fault of its
    /// natural pool (`Some(None)`: it started). `None`: not started yet (started when used).
    started: Vec<Option<Option<Attempt>>>,
    /// True once [`start_runtimes`] started the hand-off pool.
    handoff_started: bool,
}

impl RuntimePools {
    /// The pools of `rt` for `cells` ([`crate::cells::expand`] for `rt`), in the scratch root
    /// of `m`, none started.
    pub fn new(rt: &Runtime, cells: &[Planned<'_>], m: &Measurement<'_>, ctx: &ProbeContext) -> RuntimePools {
        let opts = m.opts;
        let adapter = rt.adapter();
        let timeouts = timeouts_for(adapter, opts);
        let by_family = crate::cells::by_family(cells);
        let mut families = Vec::new();
        for (family, fam) in &by_family {
            let launch = adapter.launch(rt, family, ctx);
            let pools = Pools::of_adapter(adapter, launch, timeouts, opts.contenders.max(1), opts.contender_kind, m);
            let races = fam.iter().any(|c| c.scenario == Scenario::Race);
            families.push((pools, races));
        }
        let recipes = crate::cells::recipes_by_scenario(cells);
        let slots = recipes.iter().filter_map(|(s, _)| handoff::runner(*s).map(|r| (r.slots)(opts))).max();
        // the hand-offs run in probes of the runtime's first family: where that family's race
        // pools are processes, as many as the hand-offs need, they are kept for them instead of
        // starting as many probes again (a PowerShell start costs about a second of CPU here)
        let share_first = slots.is_some_and(|n| n <= opts.contenders.max(1))
            && opts.contender_kind == ContenderKind::Processes
            && by_family.first().is_some_and(|(family, _)| rt.families.first() == Some(family));
        let handoff = slots.filter(|_| !share_first).and_then(|n| handoff::pools(rt, n, m, ctx));
        let started = vec![None; families.len()];
        RuntimePools { families, handoff, share_first, slots, started, handoff_started: false }
    }

    /// How many probes [`start_runtimes`] would start for these pools under `amplify`: each
    /// family's natural ones, its amplified ones where it races, and the hand-off pool's.
    pub fn probes(&self, amplify: &Amplify) -> usize {
        let on = matches!(amplify, Amplify::On(_));
        let families: usize =
            self.families.iter().map(|(p, races)| p.natural.len() * if *races && on { 2 } else { 1 }).sum();
        families + self.handoff.as_ref().map_or(0, |p| p.natural.len())
    }

    /// Stops every probe of these pools.
    pub fn shutdown(self) {
        RuntimePools::shutdown_all([self]);
    }

    /// Stops every probe of `all` at once ([`crate::exec::contender::shutdown_all`]): one after
    /// another, each probe could take up to 300 ms to exit.
    pub fn shutdown_all(all: impl IntoIterator<Item = RuntimePools>) {
        let mut contenders = Vec::new();
        for rp in all {
            for mut p in rp.families.into_iter().map(|(p, _)| p).chain(rp.handoff) {
                contenders.extend(p.take_back().into_iter().flat_map(|(_, c)| c));
            }
        }
        crate::exec::contender::shutdown_all(&mut contenders);
    }
}

/// Starts the session probes of every runtime in `runtimes` at once (natural, and amplified
/// under `amplify` where the family races, and the hand-off pools), so that start-up never
/// counts in a measurement; a runtime whose probes do not wait idle
/// ([`crate::exec::contender::Mode::waits_idle`]: cmd's loop driver polls while it waits) is left alone, its pools started when used. Each
/// family's natural fault is kept for [`measure_with`], which reports it as data.
pub fn start_runtimes(runtimes: &mut [(&Runtime, &mut RuntimePools)], amplify: &Amplify) {
    let mut all: Vec<(&mut Pools, Option<&Amplify>)> = Vec::new();
    let mut sizes = Vec::new();
    for (rt, rp) in runtimes.iter_mut() {
        if !rt.adapter().mode().waits_idle() || rp.started.iter().any(Option::is_some) || rp.handoff_started {
            sizes.push(None);
            continue;
        }
        sizes.push(Some(rp.families.len()));
        all.extend(rp.families.iter_mut().map(|(p, races)| (p, races.then_some(amplify))));
        all.extend(rp.handoff.as_mut().map(|p| (p, None)));
    }
    let mut faults = start_together(&mut all).into_iter();
    for ((_, rp), size) in runtimes.iter_mut().zip(sizes) {
        let Some(n) = size else { continue };
        rp.started = faults.by_ref().take(n).map(Some).collect();
        // the hand-off pool's fault shows again, as data, in its first item
        if rp.handoff.is_some() {
            faults.next();
            rp.handoff_started = true;
        }
    }
}

/// Measures `cells` ([`crate::cells::expand`] for `rt`) on `rt` with `pools` (made by
/// [`RuntimePools::new`] for the same cells; those not started yet start when used), in their
/// order, calling `on_finding` after each cell (for progress and incremental output). A family's detection
/// control (its race cell marked [`Planned::is_control_race`]) is raced before the family's
/// other cells and reported at its place in the list (last of its family when the run stopped
/// before that place); a family whose control was not caught
/// has its `exclusive` verdicts made `inconclusive`. A conditional race
/// ([`Planned::conditional`]) is measured only when its row's second comers leave the answer
/// open ([`needs_race`]), so the findings are the cells in order, some of those left out.
/// Never fails: faults become cells. An interrupt stops it between attempts; the attempt in
/// flight is dropped. After a cell with a harness error the scratch folder is checked
/// ([`health::check`]); if it no longer works, measuring stops and
/// [`Measured::scratch_failed`] says why.
pub fn measure_with(
    rt: &Runtime,
    cells: &[Planned<'_>],
    pools: RuntimePools,
    m: &mut Measurement<'_>,
    ctx: &ProbeContext,
    on_finding: &mut dyn FnMut(&Finding),
) -> Measured {
    let opts = m.opts;
    let adapter = rt.adapter();
    let style = adapter.path_style();
    let mut out = Measured::default();
    // stops measuring when interrupted or when the scratch folder stopped working
    let stop = |out: &Measured| crate::interrupt::requested() || out.scratch_failed.is_some();
    // after a harness error: is the scratch folder still usable?
    let check = |c: &Finding, out: &mut Measured, root: &Path| {
        if c.result.is_harness_error() && out.scratch_failed.is_none() {
            if let Err(why) = health::check(root) {
                out.scratch_failed = Some(why);
            }
        }
    };
    let RuntimePools { families: made, handoff: mut handoff_pools, share_first, slots, started, handoff_started } =
        pools;
    let recipes = crate::cells::recipes_by_scenario(cells);
    let families: Vec<_> = crate::cells::by_family(cells)
        .into_iter()
        .zip(made)
        .map(|((family, fam), (pools, races))| (family, fam, pools, races))
        .collect();
    let amplify = m.amplify().clone();
    // session probes and shell loops wait idle, blocked on their input: their hand-offs may
    // run later (Measurement::defer_handoffs); cmd's loop driver polls while it waits, and its
    // pools start one at a time, when used
    let session = adapter.mode().waits_idle();
    let keep = adapter.mode().waits_idle() && opts.contender_kind == ContenderKind::Processes;
    for (index, ((family, fam, mut pools, races), pre)) in families.into_iter().zip(started).enumerate() {
        if stop(&out) {
            break;
        }
        let start_fault = match pre {
            Some(None) => None,
            // started with every runtime's probes at once (start_runtimes): on a busy machine
            // that flood of start-ups can outlast the start-up timeout of a slow starter (in a
            // default run with both cores loaded, every PowerShell probe said no hello within
            // 30 s and all 190 of its cells were faults), so a family whose start failed is
            // started again, alone, before its fault counts; the probes that did start are kept
            Some(Some(_)) | None => pools.start(races.then_some(&amplify)),
        };
        if stop(&out) {
            break;
        }
        // one process per attempt (one-shot mode, also a cmd loop that did not start) costs a
        // process start per attempt: such races get --oneshot-trials, unless the runtime starts
        // cheaply (a shell)
        let cheap = adapter.starts_cheaply();
        let mut trials = opts.trials_for(pools.natural.iter().map(|c| (c.process_per_attempt(), cheap)));
        let control = fam.iter().find(|c| c.is_control_race()).and_then(Planned::variant);
        let mut control_cell = None;
        let mut detection = None;
        if let Some(cv) = control {
            let base = CellBase { v: cv, kind: opts.contender_kind };
            let c = match &start_fault {
                Some(f) => {
                    let mut c = base.fault(Scenario::Race, TargetState::Absent, f);
                    c.driver = pools.note();
                    Some(c)
                }
                None => base.race(&mut pools, style, trials, RaceRole::control(opts), m),
            };
            let Some(mut c) = c else { break };
            // a control the harness could not measure caught nothing: the family's races are weak
            let judge = |c: &Finding| {
                let race = match &c.result {
                    CellResult::Race(r) if r.verdict != RaceVerdict::HarnessError => Some(&**r),
                    _ => None,
                };
                let counts = |m: fn(&RaceResult) -> &Option<ModeRun>| {
                    race.and_then(|r| m(r).as_ref()).map(ModeRun::control_counts)
                };
                Detection::judge(&cv.id, counts(|r| &r.natural), counts(|r| &r.amplified))
            };
            let mut d = judge(&c);
            raise_to_control(m, &c);
            // weak at this delay: the machine's scheduling noise may outgrow it; race the
            // control again with a longer one, and race the family with the delay that worked
            let mut escalations = Vec::new();
            // contenders that never answered (every amplified trial a fault: a hang, a crash)
            // answer no better with a longer delay: each raise would only pay their timeouts again
            let answered = |c: &Finding| match &c.result {
                CellResult::Race(r) => r.amplified.as_ref().is_some_and(|a| a.stats.trials > a.stats.fault_trials),
                _ => false,
            };
            while let (false, RaceMode::Amplified, Amplify::On(a), true) =
                (d.worked, d.mode, m.amplify().clone(), answered(&c))
            {
                let longer = a.delay_us() * crate::exec::amplify::ESCALATION_FACTOR;
                if longer > crate::exec::amplify::MAX_ESCALATED_DELAY_US || stop(&out) {
                    break;
                }
                escalations.push([a.delay_us(), d.caught as u64, d.trials as u64]);
                m.amplify = Some(Amplify::On(a.with_delay(longer)));
                pools.reset_amplified();
                let Some(again) = base.race(&mut pools, style, trials, RaceRole::control(opts), m) else { break };
                c = again;
                d = judge(&c);
                raise_to_control(m, &c);
            }
            c.control = true;
            check(&c, &mut out, m.scratch.root());
            out.controls.push(ControlInfo {
                runtime: rt.label.clone(),
                family: cv.family.clone(),
                detection: d.clone(),
                escalations,
            });
            // a weak control makes every `exclusive` of the family `inconclusive`, whatever its
            // trials: with adaptive trials the family's races look for a failure only, with the
            // quick run's trials
            if opts.adaptive && !d.worked {
                trials = trials.min(crate::options::QUICK_RUN_TRIALS as usize);
            }
            detection = Some(d);
            control_cell = Some(c);
        }
        let first = out.findings.len();
        // the row whose second comers `seconds` holds (one source kind of a variant), for
        // `--races auto`
        let mut seconds_of: Option<&Variant> = None;
        let mut seconds = Vec::new();
        for cell in &fam {
            if stop(&out) {
                break;
            }
            let Some(v) = cell.variant() else { continue };
            if !seconds_of.is_some_and(|s| std::ptr::eq(s, v)) {
                (seconds_of, seconds) = (Some(v), Vec::new());
            }
            let base = CellBase { v, kind: opts.contender_kind };
            let c = match (&start_fault, cell.scenario) {
                // the control, raced first, takes its place in the list
                (_, Scenario::Race) if cell.is_control_race() && control_cell.is_some() => control_cell.take(),
                (Some(f), scenario) => {
                    let mut c = base.fault(scenario, cell.target, f);
                    c.driver = pools.note();
                    Some(c)
                }
                (None, Scenario::SecondComer) => {
                    let c = second_comer_cell(&base, &mut pools.natural[0], cell.target, style, m);
                    let Some(mut c) = c else { break };
                    c.driver = pools.natural[0].note();
                    if let CellResult::SecondComer(s) = &c.result {
                        seconds.push((cell.target, s.outcome, s.relative.as_ref().map(|r| r.outcome)));
                    }
                    Some(c)
                }
                (None, _) if cell.conditional && !needs_race(&seconds) => None,
                (None, _) => base.race(&mut pools, style, trials, RaceRole::Row, m),
            };
            if let Some(c) = c {
                check(&c, &mut out, m.scratch.root());
                on_finding(&c);
                out.findings.push(c);
            }
        }
        // a run stopped before the control's place still reports it: it is the evidence the
        // family's races were judged with (and may be what stopped the run)
        if let Some(c) = control_cell.take() {
            on_finding(&c);
            out.findings.push(c);
        }
        for c in &mut out.findings[first..] {
            if let CellResult::Race(r) = &mut c.result {
                (r.verdict, r.weak_race) = apply_control(r.verdict, detection.as_ref());
                r.detection.clone_from(&detection);
            }
        }
        m.amplify = None;
        if share_first && index == 0 && start_fault.is_none() {
            handoff_pools = Some(pools);
        } else {
            m.retire(against::side_key_of(rt, family), pools, keep);
        }
    }
    // the hand-off pool is started where it is the first family's or start_runtimes started it
    let mut handoff_started = share_first || handoff_started;
    // hand-offs whose pool was to be the first family's, which did not start or ran no cell
    if let (true, None, Some(n), false) = (share_first, &handoff_pools, slots, stop(&out)) {
        handoff_pools = handoff::pools(rt, n, m, ctx);
        handoff_started = false;
    }
    // one pool for every hand-off scenario, started above or now (a loop driver's, once); a
    // fault shows again, as data, in the first item
    let Some(mut pools) = handoff_pools else { return out };
    // the first family's pools when the hand-offs shared them
    let family = rt.families.first().copied().unwrap_or_default();
    let (side, keep) = (against::side_key_of(rt, family), keep && share_first);
    if stop(&out) {
        m.retire(side, pools, keep);
        return out;
    }
    if !handoff_started {
        let _ = crate::exec::contender::start_all(&mut pools.natural);
    }
    let mut h = Handoffs { pools, recipes, side, keep };
    if m.defer_handoffs && session {
        out.handoffs = Some(h);
    } else {
        let done = h.measure(rt, m, on_finding);
        m.retire_handoffs(h);
        out.findings.extend(done.findings);
        out.scratch_failed = out.scratch_failed.or(done.scratch_failed);
    }
    out
}

/// A runtime's hand-off scenarios, left for later by [`measure_with`] where the measurement
/// defers them ([`Measurement::defer_handoffs`]): their started pool and recipes. A run
/// measures the deferred hand-offs of two runtimes at once, one per core ([`Handoffs::measure`]
/// in two lanes), while the races keep the machine to themselves.
pub struct Handoffs {
    /// Its one pool for every hand-off scenario, started.
    pools: Pools,
    /// The recipes of each scenario to measure, in the cell list's order.
    recipes: Vec<(Scenario, Vec<&'static crate::handoff::Recipe>)>,
    /// The side the pool is kept as for the pairs.
    side: against::SideKey,
    /// Whether the pool may be kept for the pairs ([`Measurement::keep_for_pairs`]).
    keep: bool,
}

impl Handoffs {
    /// Measures the recipes on `rt` (the runtime whose pool this is) with the measurement `m`
    /// (any lane's), in order, calling `on_finding` after each. The pool stays here, for the
    /// run's measurement to take back ([`Measurement::retire_handoffs`]). After a finding with a
    /// harness error the scratch folder is checked, and a folder that no longer works stops
    /// the hand-offs ([`Measured::scratch_failed`]).
    pub fn measure(&mut self, rt: &Runtime, m: &mut Measurement<'_>, on_finding: &mut dyn FnMut(&Finding)) -> Measured {
        let mut out = Measured::default();
        for (scenario, recipes) in &self.recipes {
            if crate::interrupt::requested() || out.scratch_failed.is_some() {
                break;
            }
            let Some(runner) = handoff::runner(*scenario) else { break };
            let slots = (runner.slots)(m.opts);
            let observers = (runner.observers)(m.opts);
            let batch = handoff::Batch { rt, recipes, slots, observers };
            let found = (runner.measure)(&batch, &mut self.pools, m, on_finding);
            for f in found {
                if f.result.is_harness_error() && out.scratch_failed.is_none() {
                    out.scratch_failed = health::check(m.scratch.root()).err();
                }
                out.findings.push(f);
            }
        }
        out
    }

    /// Stops the pool without measuring.
    pub fn shutdown(mut self) {
        self.pools.shutdown();
    }

    /// These hand-offs as two, for the two lanes of a run of one runtime (whose hand-offs
    /// would leave a lane idle): the recipes dealt heaviest first, each to the lighter half by
    /// its scenario's usual cell time (`schedule_weight` in `engine/handoff.rs`; a watch
    /// recipe's burst alone is a few seconds), each half in the cell list's order; the second
    /// half measured by a pool of its own, started now for `rt` with `m`'s options and `ctx`
    /// (its start-up faults, if any, show in its cells as data, as the first pool's do). One, unchanged, where there is a single
    /// recipe or no pool can be made for `rt`. Recipes share no name with one another: measuring
    /// them at once changes which core they run on, not what they measure.
    pub fn split(mut self, rt: &Runtime, m: &Measurement<'_>, ctx: &ProbeContext) -> Vec<Handoffs> {
        type Item = (Scenario, &'static crate::handoff::Recipe);
        let items: Vec<Item> = self.recipes.iter().flat_map(|(s, rs)| rs.iter().map(move |r| (*s, *r))).collect();
        if items.len() < 2 {
            return vec![self];
        }
        let Some(mut pools) = handoff::pools(rt, self.pools.natural.len(), m, ctx) else { return vec![self] };
        let weights: Vec<u64> = items.iter().map(|(s, _)| handoff::schedule_weight(*s)).collect();
        let mut order: Vec<usize> = (0..items.len()).collect();
        order.sort_by_key(|i| std::cmp::Reverse(weights[*i]));
        let (mut load, mut second) = ([0u64; 2], vec![false; items.len()]);
        for i in order {
            let half = usize::from(load[1] < load[0]);
            load[half] += weights[i];
            second[i] = half == 1;
        }
        // a half's recipes grouped by scenario again, in the cell list's order
        let group = |half: bool| {
            let mut out: Vec<(Scenario, Vec<&'static crate::handoff::Recipe>)> = Vec::new();
            for ((s, r), _) in items.iter().zip(&second).filter(|(_, second)| **second == half) {
                match out.last_mut() {
                    Some((last, rs)) if last == s => rs.push(r),
                    _ => out.push((*s, vec![*r])),
                }
            }
            out
        };
        self.recipes = group(false);
        let recipes = group(true);
        let _ = crate::exec::contender::start_all(&mut pools.natural);
        let other = Handoffs { pools, recipes, side: self.side.clone(), keep: false };
        vec![self, other]
    }
}

/// Where the control's release never got tight at the delay and its race was raised to a
/// longer one (race_modes), the family's cells start from the delay it was judged at.
fn raise_to_control(m: &mut Measurement<'_>, control: &Finding) {
    if let (Amplify::On(a), Some(delay)) = (m.amplify().clone(), raised_delay(control)) {
        if delay > a.delay_us() {
            m.amplify = Some(Amplify::On(a.with_delay(delay)));
        }
    }
}

/// The delay (µs) a race cell's amplified run was raised to because its release was loose at
/// the delay it started from ([`ModeRun::raised_from_us`]), if it was.
fn raised_delay(c: &Finding) -> Option<u64> {
    match &c.result {
        CellResult::Race(r) => r.amplified.as_ref().filter(|a| a.raised_from_us.is_some()).and_then(|a| a.delay_us),
        _ => None,
    }
}

/// The contender timeouts for a runtime: the start-up timeout, and the per-attempt timeout
/// times the adapter's multiplier.
pub fn timeouts_for(adapter: &dyn crate::runtime::Adapter, opts: &Options) -> Timeouts {
    Timeouts { startup: opts.startup_timeout, attempt: opts.timeout * adapter.timeout_multiplier() }
}

/// The variant whose cells are being measured.
struct CellBase<'a> {
    v: &'a Variant,
    /// What its contenders are (`--contender-kind`).
    kind: ContenderKind,
}

impl CellBase<'_> {
    /// The race finding of this variant: every contender of `pools` makes its call. `None` when
    /// an interrupt left nothing to report ([`RaceOutput::cut_short`]).
    fn race(
        &self,
        pools: &mut Pools,
        style: PathStyle,
        trials: usize,
        role: RaceRole,
        m: &mut Measurement<'_>,
    ) -> Option<Finding> {
        let vs = vec![self.v; pools.natural.len()];
        let styles = vec![style; vs.len()];
        let r = race_modes(pools, &vs, &styles, trials, role, m);
        if r.cut_short() {
            return None;
        }
        let evidence = r.evidence.clone().or_else(|| r.race.deciding().and_then(|m| m.evidence.clone()));
        let mut f = self.finding(Scenario::Race, TargetState::Absent, CellResult::Race(Box::new(r.race)));
        f.evidence = evidence;
        f.elapsed_ms = r.elapsed_ms;
        f.driver = pools.note();
        Some(f)
    }

    fn finding(&self, scenario: Scenario, target: TargetState, result: CellResult) -> Finding {
        Finding {
            variant: self.v.id.clone(),
            scenario,
            target,
            source: self.v.cell_source(),
            control: false,
            evidence: None,
            driver: None,
            contenders: self.kind,
            library: None,
            elapsed_ms: 0.0,
            result,
        }
    }

    /// The finding of a cell whose probe could not start (`f` says how it failed): a second
    /// comer that crashed or timed out, a race that is inconclusive; a harness error (the
    /// harness failed to start it) in either, never the runtime's outcome.
    fn fault(&self, scenario: Scenario, target: TargetState, f: &Attempt) -> Finding {
        let result = match scenario {
            Scenario::SecondComer => CellResult::SecondComer(Box::new(SecondComerResult {
                outcome: match f.report {
                    Report::Timeout => Outcome::Timeout,
                    // the harness failed to start it (a start-up thread panicked): never the runtime's
                    Report::HarnessError => Outcome::HarnessError,
                    _ => Outcome::Crashed,
                },
                error: None,
                relative: None,
                before: String::new(),
                after: String::new(),
                delivery: None,
                returned: None,
            })),
            Scenario::Race => CellResult::Race(Box::new(RaceResult {
                verdict: if f.report == Report::HarnessError {
                    RaceVerdict::HarnessError
                } else {
                    RaceVerdict::Inconclusive
                },
                decided_by: RaceMode::Natural,
                error: None,
                natural: None,
                amplified: None,
                amplified_unavailable: None,
                detection: None,
                weak_race: None,
                interrupted: false,
            })),
            _ => CellResult::Counters(CountersResult::default()),
        };
        let mut c = self.finding(scenario, target, result);
        c.evidence = f.evidence.clone();
        c
    }
}

#[cfg(test)]
mod tests;

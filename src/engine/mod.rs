//! Measuring one runtime: second-comer attempts and races, cell by cell.
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
use std::time::Instant;

pub mod against;
mod attempt;
mod claim;
mod done;
pub use done::{DONE_DISPROOF_ITEMS, DONE_ITEMS, DONE_ITEMS_THOROUGH};
mod handoff;
mod publish;
mod second;
pub mod trial;

pub use crate::options::{Amplify, Budget, ClaimOptions, Options, PublishOptions};
pub use crate::verdict::needs_race;
use attempt::ms;
pub use claim::CLAIM_TRIALS;
use second::second_comer_cell;
use trial::race_core;
pub use trial::{RaceRun, Sweep};

use crate::cells::Planned;
use crate::domain::{ContenderKind, NoAmplified};
use crate::exec::contender::{Attempt, Contender, Mode, Timeouts};
use crate::exec::health;
use crate::exec::process::Launch;
use crate::exec::scratch::{PathStyle, Scratch, TargetState};
use crate::matrix::Variant;
use crate::report::model::{
    CellResult, ControlInfo, CountersResult, Finding, ModeRun, OrderingRun, RaceResult, Scenario, SecondComerResult,
};
use crate::runtime::{ProbeContext, Runtime};
use crate::verdict::{apply_control, decide, Detection, Outcome, RaceMode, RaceVerdict, Report};

/// Why a runtime without session probes (cmd) has no thread races: every attempt of such a
/// contender is `unsupported` with this reason.
pub const NO_THREADS: &str =
    "no threads: cmd.exe runs one command at a time (a thread race needs a session probe that answers prepare-threads)";

/// Adaptive trials ([`Options::adaptive`]): the trials every release ordering of a race run gets
/// before a multi-winner trial may end the run (so a failing cell still says which orderings
/// failed, each rate over at least this many trials).
pub const DISPROOF_TRIALS_PER_ORDERING: usize = 5;

/// Adaptive trials ([`Options::adaptive`]): the trials every release ordering of a cell's
/// natural check gets. Where the cell also has an amplified race, the check runs first: a
/// failure it shows decides the cell and the amplified race is skipped ([`NoAmplified::Skipped`]);
/// otherwise, once the amplified race found the call `exclusive` over all its trials (that run
/// decides the verdict and carries the bound), the check is the cell's natural run. Where the
/// amplified race settled nothing, a full natural race replaces the check. Measured here: the
/// natural races of exclusive cells took 0.1–0.2 s of each such cell's 0.5–0.9 s at 100
/// trials; `--thorough` runs them all.
pub const NATURAL_CHECK_TRIALS_PER_ORDERING: usize = 10;

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
}

impl<'a> Measurement<'a> {
    /// A measurement with `opts` in `scratch`, tokens made from `nonce`; attempt ids from 1.
    pub fn new(opts: &'a Options, scratch: &'a mut Scratch, nonce: &'a str) -> Measurement<'a> {
        Measurement { opts, scratch, nonce, last_id: 0, amplify: None }
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

/// What [`measure`] produced for one runtime.
#[derive(Debug, Clone, Default)]
pub struct Measured {
    /// What was found, cell by cell, in measurement order (a family's control last when it
    /// was not selected); the report layer makes them cells ([`crate::report::model::Cell::from_finding`]).
    pub findings: Vec<Finding>,
    /// The detection control of each family that ran races.
    pub controls: Vec<ControlInfo>,
    /// Set when the scratch file system stopped working (a harness error, then a failed
    /// [`health::check`]): measuring stopped, and the run must end with exit code 3.
    pub scratch_failed: Option<String>,
}

/// The detection control of `family` among `all` variants: the one marked `control = true`
/// in its matrix (its check-then-create anti-pattern).
pub fn control_for<'a>(all: &'a [Variant], family: &str) -> Option<&'a Variant> {
    all.iter().find(|v| v.family == family && v.control)
}

/// Measures `cells` ([`crate::cells::expand`] for `rt`) on `rt`, in their order, calling
/// `on_finding` after each cell (for progress and incremental output). A family's detection
/// control (its race cell marked [`Planned::is_control_race`]) is raced before the family's
/// other cells and reported at its place in the list; a family whose control was not caught
/// has its `exclusive` verdicts made `inconclusive`. A conditional race
/// ([`Planned::conditional`]) is measured only when its row's second comers leave the answer
/// open ([`needs_race`]), so the findings are the cells in order, some of those left out.
/// Never fails: faults become cells. An interrupt stops it between attempts; the attempt in
/// flight is dropped. After a cell with a harness error the scratch folder is checked
/// ([`health::check`]); if it no longer works, measuring stops and
/// [`Measured::scratch_failed`] says why.
pub fn measure(
    rt: &Runtime,
    cells: &[Planned<'_>],
    m: &mut Measurement<'_>,
    ctx: &ProbeContext,
    on_finding: &mut dyn FnMut(&Finding),
) -> Measured {
    let opts = m.opts;
    let adapter = rt.adapter();
    let timeouts = timeouts_for(adapter, opts);
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
    // every pool of the runtime, made first: each family's race pools (the amplified one too
    // where the family races) and the hand-off pool, as large as the largest hand-off
    // scenario needs
    let mut families = Vec::new();
    for (family, fam) in crate::cells::by_family(cells) {
        let launch = adapter.launch(rt, family, ctx);
        let pools = Pools::of_adapter(adapter, launch, timeouts, opts.contenders.max(1), opts.contender_kind, m);
        let races = fam.iter().any(|c| c.scenario == Scenario::Race);
        families.push((fam, pools, races));
    }
    let recipes = crate::cells::recipes_by_scenario(cells);
    let slots = recipes.iter().filter_map(|(s, _)| match s {
        Scenario::Publish => opts.publish.map(|p| 1 + p.readers),
        Scenario::Claim => opts.claim.map(|c| c.workers),
        Scenario::DoneMarker => Some(done::DONE_SLOTS),
        Scenario::SecondComer | Scenario::Race => None,
    });
    let mut handoff_pools = slots.max().and_then(|n| handoff::pools(rt, n, m, ctx));
    // start every session up front so that start-up never counts in a measurement, all of the
    // runtime's at once (they then wait idle, blocked on their input); a loop driver (cmd)
    // polls while it waits, so its pools start one at a time, when used
    let amplify = m.amplify().clone();
    let mut started: Vec<Option<Option<Attempt>>> = vec![None; families.len()];
    let together = adapter.mode() == Mode::Session && !stop(&out);
    if together {
        let mut all: Vec<(&mut Pools, Option<&Amplify>)> =
            families.iter_mut().map(|(_, p, races)| (p, races.then_some(&amplify))).collect();
        all.extend(handoff_pools.as_mut().map(|p| (p, None)));
        let faults = start_together(&mut all);
        started = faults.into_iter().take(families.len()).map(Some).collect();
    }
    for ((fam, mut pools, races), pre) in families.into_iter().zip(started) {
        if stop(&out) {
            break;
        }
        let start_fault = match pre {
            Some(f) => f,
            None => pools.start(races.then_some(&amplify)),
        };
        if stop(&out) {
            break;
        }
        // one process per attempt (one-shot mode, also a cmd loop that did not start) costs a
        // process start per attempt: such races get --oneshot-trials
        let mut trials = opts.trials_for(pools.natural.iter().any(Contender::process_per_attempt));
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
            while let (false, RaceMode::Amplified, Amplify::On(a)) = (d.worked, d.mode, m.amplify().clone()) {
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
        for c in &mut out.findings[first..] {
            if let CellResult::Race(r) = &mut c.result {
                (r.verdict, r.weak_race) = apply_control(r.verdict, detection.as_ref());
                r.detection.clone_from(&detection);
            }
        }
        pools.shutdown();
        m.amplify = None;
    }
    // one pool for every hand-off scenario, started above (a loop driver's now, once); a
    // fault shows again, as data, in the first item
    if let (Some(pools), false) = (&mut handoff_pools, stop(&out)) {
        if !together {
            let _ = crate::exec::contender::start_all(&mut pools.natural);
        }
        for (scenario, recipes) in &recipes {
            if stop(&out) {
                break;
            }
            let found = match scenario {
                Scenario::Publish => {
                    opts.publish.map(|p| publish::measure_publish(rt, recipes, p, m, pools, on_finding))
                }
                Scenario::Claim => opts.claim.map(|c| claim::measure_claim(rt, recipes, c, m, pools, on_finding)),
                Scenario::DoneMarker => {
                    opts.done_marker.map(|size| done::measure_done(rt, recipes, size, m, pools, on_finding))
                }
                Scenario::SecondComer | Scenario::Race => None,
            };
            for f in found.unwrap_or_default() {
                check(&f, &mut out, m.scratch.root());
                out.findings.push(f);
            }
        }
        pools.shutdown();
    }
    out
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

/// One contender pool per race mode: the natural pool and the amplified pool (the same
/// launches under strace), started together up front ([`Pools::start`]) or, the amplified
/// one, on first use.
pub struct Pools {
    slots: Vec<(Mode, Launch, Timeouts)>,
    /// Processes, or threads of one probe ([`Pools::threads`]).
    kind: ContenderKind,
    cwd: std::path::PathBuf,
    /// The natural contenders, one per slot.
    pub natural: Vec<Contender>,
    amplified: Option<Result<Vec<Contender>, String>>,
    /// The tracer the started amplified pool runs under (its delay and the paths it delays):
    /// a request for another restarts the pool. `None` for ready-made contenders
    /// ([`Pools::of`], tests), which are never restarted.
    amplified_with: Option<crate::exec::amplify::Amplifier>,
    /// The slots whose amplified contender is traced from its hello on instead of from its
    /// start ([`crate::exec::attach`]; [`crate::runtime::Adapter::amplify_by_attach`]).
    attach: Vec<bool>,
}

impl Pools {
    /// Pools for `slots` (mode, launch and timeouts of each contender), run in `cwd`. Nothing
    /// starts until used.
    pub fn new(slots: Vec<(Mode, Launch, Timeouts)>, cwd: std::path::PathBuf) -> Pools {
        let natural = slots.iter().map(|(m, l, t)| Contender::new(*m, l.clone(), cwd.clone(), *t)).collect();
        let attach = vec![false; slots.len()];
        Pools { slots, kind: ContenderKind::Processes, cwd, natural, amplified: None, amplified_with: None, attach }
    }

    /// Pools whose contenders are threads of one probe per pool (`--contender-kind threads`):
    /// one slot per contender, all with `mode`, `launch` and `timeouts`; a runtime whose probes
    /// are not session probes (cmd) gets contenders whose every attempt is `unsupported`, with
    /// the reason ([`NO_THREADS`]). Nothing starts until used.
    pub fn threads(n: usize, mode: Mode, launch: Launch, timeouts: Timeouts, cwd: std::path::PathBuf) -> Pools {
        let slots = vec![(mode, launch, timeouts); n];
        let natural = Pools::thread_pool(&slots, &cwd, None);
        let attach = vec![false; slots.len()];
        Pools { slots, kind: ContenderKind::Threads, cwd, natural, amplified: None, amplified_with: None, attach }
    }

    /// The contenders of a thread pool over `slots` (launches wrapped by `amp`, if given).
    fn thread_pool(
        slots: &[(Mode, Launch, Timeouts)],
        cwd: &std::path::Path,
        amp: Option<&crate::exec::amplify::Amplifier>,
    ) -> Vec<Contender> {
        let Some((mode, launch, timeouts)) = slots.first() else { return Vec::new() };
        if *mode != Mode::Session {
            return crate::exec::threads::no_thread_contenders(NO_THREADS, slots.len());
        }
        let launch = amp.map_or_else(|| launch.clone(), |a| a.wrap(launch));
        crate::exec::threads::thread_contenders(launch, cwd.to_path_buf(), *timeouts, slots.len())
    }

    /// Pools of `n` contenders of `adapter` started by `launch`, run in the scratch root of
    /// `m`; where `m`'s amplification is on but the adapter cannot be amplified
    /// ([`crate::runtime::Adapter::no_amplification`]), the amplified pool is unusable from the
    /// start, with the adapter's reason.
    fn of_adapter(
        adapter: &dyn crate::runtime::Adapter,
        launch: Launch,
        timeouts: Timeouts,
        n: usize,
        kind: ContenderKind,
        m: &Measurement<'_>,
    ) -> Pools {
        let cwd = m.scratch.root().to_path_buf();
        let mut pools = match kind {
            ContenderKind::Processes => Pools::new(vec![(adapter.mode(), launch, timeouts); n], cwd),
            ContenderKind::Threads => Pools::threads(n, adapter.mode(), launch, timeouts, cwd),
        };
        if let (Amplify::On(_), Some(why)) = (&m.opts.amplify, adapter.no_amplification()) {
            pools.amplified_broke(why);
        }
        if adapter.amplify_by_attach() {
            (0..n).for_each(|i| pools.attach_after_start(i));
        }
        pools
    }

    /// Pools over ready-made contenders (e.g. [`Contender::fake`]), run in `cwd`, with no
    /// amplified pool (races under them are natural only).
    pub fn of(natural: Vec<Contender>, cwd: std::path::PathBuf) -> Pools {
        let none = "no amplified pool for these contenders".to_string();
        Pools {
            slots: Vec::new(),
            kind: ContenderKind::Processes,
            cwd,
            natural,
            amplified: Some(Err(none)),
            amplified_with: None,
            attach: Vec::new(),
        }
    }

    /// The tracer this pool's amplified contenders run under for `a`: limited to the race
    /// folder in its scratch root ([`crate::exec::amplify::Amplifier::for_race`]) unless `a`
    /// delays every path.
    fn tracer(&self, a: &crate::exec::amplify::Amplifier) -> crate::exec::amplify::Amplifier {
        a.for_race(&self.cwd.join(crate::exec::scratch::RACE_DIR))
    }

    /// The contenders of the amplified pool under `a`, not started.
    fn amplified_pool(&self, a: &crate::exec::amplify::Amplifier) -> Vec<Contender> {
        match self.kind {
            ContenderKind::Processes => self
                .slots
                .iter()
                .zip(&self.attach)
                .map(|((m, l, t), attach)| match (m, attach) {
                    (Mode::Session, true) => {
                        let session = crate::exec::session::Session::new(l.clone(), self.cwd.clone(), *t);
                        Contender::with_driver(Box::new(crate::exec::attach::Attached::new(
                            Box::new(session),
                            a.clone(),
                        )))
                    }
                    _ => Contender::new(*m, a.wrap(l), self.cwd.clone(), *t),
                })
                .collect(),
            ContenderKind::Threads => Pools::thread_pool(&self.slots, &self.cwd, Some(a)),
        }
    }

    /// Traces the amplified contender of `slot` from its hello on, not from its start (a
    /// session probe whose runtime's start-up is too slow under the tracer).
    pub fn attach_after_start(&mut self, slot: usize) {
        if let Some(a) = self.attach.get_mut(slot) {
            *a = true;
        }
    }

    /// The amplified pool's state once its start-up ended with `fault` (`None`: it started).
    fn amplified_started(pool: Vec<Contender>, fault: Option<Attempt>) -> Result<Vec<Contender>, String> {
        match fault {
            None => Ok(pool),
            Some(f) => Err(format!("the probe did not start under strace: {}", f.evidence.unwrap_or_default())),
        }
    }

    /// Starts the natural pool and, with `amplified` on (races will run amplified) and no
    /// amplified pool yet, the amplified one, all at the same time: the amplified start-up
    /// (strace attaching, then the runtime loading) no longer waits for the first race cell
    /// (0.2–0.3 s per family here, issue 13). Returns the natural pool's first fault, as
    /// [`crate::exec::contender::start_all`] does; the amplified pool's fault makes it
    /// unusable, with the reason, as on first use.
    pub fn start(&mut self, amplified: Option<&Amplify>) -> Option<Attempt> {
        start_together(&mut [(self, amplified)]).pop().flatten()
    }

    /// The amplified pool, started on first use if [`Pools::start`] did not start it. Errors: why there is none (amplification
    /// off or unavailable, or a probe that does not start or run under the tracer; then it is
    /// unavailable for the rest of this pool's life).
    fn amplified(&mut self, amp: &Amplify) -> Result<&mut [Contender], NoAmplified> {
        let a = match amp {
            Amplify::On(a) => self.tracer(a),
            other => return Err(other.why_not().unwrap_or(NoAmplified::Off)),
        };
        // started at another delay (a cell's race was raised, see race_modes) or for other
        // paths (hand-offs delay every path): start it again
        if matches!(self.amplified, Some(Ok(_))) && self.amplified_with.as_ref().is_some_and(|w| *w != a) {
            self.reset_amplified();
        }
        if self.amplified.is_none() {
            let mut pool = self.amplified_pool(&a);
            self.amplified_with = Some(a);
            let fault = crate::exec::contender::start_all(&mut pool);
            self.amplified = Some(Pools::amplified_started(pool, fault));
        }
        match self.amplified.as_mut().expect("set above") {
            Ok(p) => Ok(p.as_mut_slice()),
            Err(why) => Err(NoAmplified::Unavailable(why.clone())),
        }
    }

    /// Why the amplified pool cannot be used, when that is known before it is asked for (the
    /// adapter is never amplified, see [`Pools::of_adapter`], or the pool broke); `None`
    /// while it may still start.
    fn unusable(&self) -> Option<&str> {
        match &self.amplified {
            Some(Err(why)) => Some(why),
            _ => None,
        }
    }

    /// Stops the amplified pool so that its next use starts it again (with another delay).
    fn reset_amplified(&mut self) {
        if let Some(Ok(p)) = &mut self.amplified {
            for c in p {
                c.shutdown();
            }
        }
        self.amplified = None;
    }

    /// Marks the amplified pool unusable for the rest of its life, with the reason.
    pub fn amplified_broke(&mut self, why: String) {
        if let Some(Ok(p)) = &mut self.amplified {
            for c in p {
                c.shutdown();
            }
        }
        self.amplified = Some(Err(why));
    }

    /// How the natural contenders make their attempts ([`Contender::note`]): their distinct
    /// notes joined with `; `, or `None` when none has one (session probes).
    pub fn note(&self) -> Option<String> {
        let mut notes: Vec<String> = Vec::new();
        for n in self.natural.iter().filter_map(Contender::note) {
            if !notes.contains(&n) {
                notes.push(n);
            }
        }
        (!notes.is_empty()).then(|| notes.join("; "))
    }

    /// Stops every probe.
    pub fn shutdown(&mut self) {
        // each probe gets up to 300 ms to exit after `quit`: waited for all at once (25-65 ms
        // per pool here, one after another)
        let amplified = match &mut self.amplified {
            Some(Ok(p)) => p.as_mut_slice(),
            _ => &mut [],
        };
        std::thread::scope(|s| {
            for c in self.natural.iter_mut().chain(amplified.iter_mut()) {
                s.spawn(move || c.shutdown());
            }
        });
    }
}

/// Starts every pool of `pools` as [`Pools::start`] does (each with its amplification, or
/// `None` for its natural contenders only), all of them at the same time: a runtime's start-ups
/// overlap instead of following each other (issue 13). Returns each pool's natural fault.
pub fn start_together(pools: &mut [(&mut Pools, Option<&Amplify>)]) -> Vec<Option<Attempt>> {
    let mut all = Vec::new();
    // per pool: its natural contenders' count, and its amplified ones' (0: none started here)
    let mut sizes = Vec::with_capacity(pools.len());
    for (p, amp) in pools.iter_mut() {
        let natural = std::mem::take(&mut p.natural);
        let n = natural.len();
        all.extend(natural);
        let amplified = match (amp, &p.amplified) {
            (Some(Amplify::On(a)), None) => {
                let a = p.tracer(a);
                let pool = p.amplified_pool(&a);
                p.amplified_with = Some(a);
                pool
            }
            _ => Vec::new(),
        };
        sizes.push((n, amplified.len()));
        all.extend(amplified);
    }
    let faults = crate::exec::contender::start_each(&mut all);
    let mut contenders = all.into_iter();
    let mut faults = faults.into_iter();
    let mut natural_faults = Vec::with_capacity(pools.len());
    for ((p, _), (n, a)) in pools.iter_mut().zip(sizes) {
        // each segment taken whole (collected) so that the next pool's starts where it should
        let mut first_fault = |k: usize| faults.by_ref().take(k).collect::<Vec<_>>().into_iter().flatten().next();
        p.natural = contenders.by_ref().take(n).collect();
        natural_faults.push(first_fault(n));
        if a > 0 {
            let amp_pool: Vec<Contender> = contenders.by_ref().take(a).collect();
            let amp_fault = first_fault(a);
            p.amplified = Some(Pools::amplified_started(amp_pool, amp_fault));
        }
    }
    natural_faults
}

/// What the races of one cell produced in both modes, before the detection control is
/// applied.
#[derive(Debug, Clone)]
pub struct RaceOutput {
    /// Verdict, deciding mode, first error and the runs (no detection yet).
    pub race: RaceResult,
    /// Why the race could not run at all (unsupported), or what went wrong.
    pub evidence: Option<String>,
    /// Wall time of both runs, in milliseconds.
    pub elapsed_ms: f64,
    /// True when the run was interrupted during these races (the trial in flight was dropped;
    /// the counted trials stand).
    pub interrupted: bool,
}

impl RaceOutput {
    /// True when an interrupt left nothing to report: no counted trial in any mode and no
    /// other finding (unsupported, harness error). Such a race is dropped, not stored.
    pub fn cut_short(&self) -> bool {
        let r = &self.race;
        let counted = [&r.natural, &r.amplified].iter().filter_map(|m| m.as_ref()).any(|m| m.stats.trials > 0);
        self.interrupted && !counted && !matches!(r.verdict, RaceVerdict::Unsupported | RaceVerdict::HarnessError)
    }
}

fn mode_run(r: RaceRun, delay_us: Option<u64>) -> ModeRun {
    let strongest = crate::verdict::strongest_ordering(r.summary.verdict, &r.orderings);
    ModeRun {
        delay_us,
        found_at_offset_us: strongest.map(|i| r.orderings[i].offset_us),
        orderings: r
            .orderings
            .into_iter()
            .map(|o| OrderingRun { offset_us: o.offset_us, verdict: o.summary.verdict, stats: o.summary.stats })
            .collect(),
        verdict: r.summary.verdict,
        stats: r.summary.stats,
        errors: r.errors,
        discarded_trials: r.discarded_trials,
        loose_trials: r.loose_trials,
        raised_from_us: None,
        trials_per_second: r.trials_per_second,
        evidence: r.evidence,
    }
}

/// What a race is for: a row of a matrix, or a family's detection control, whose run needs
/// enough trials in each ordering to be judged on its best one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RaceRole {
    /// A variant's own race (or a pair's): adaptive trials apply.
    Row,
    /// A detection control: all its trials run, and its amplified run counts at least
    /// `min_amplified_trials`.
    Control {
        /// Least trials of the amplified run.
        min_amplified_trials: usize,
    },
}

impl RaceRole {
    /// The control's role under `opts`: its amplified run gives every ordering of the sweep
    /// (`--offsets`, else the 4 of the amplified sweep) at least
    /// [`crate::verdict::CONTROL_MIN_TRIALS`] trials, so that each can be judged (a sweep of 4
    /// at `-n 50` would otherwise leave 12 per ordering).
    pub fn control(opts: &Options) -> RaceRole {
        let orderings = opts.offsets.as_ref().map_or(4, Vec::len).max(1);
        RaceRole::Control { min_amplified_trials: crate::verdict::CONTROL_MIN_TRIALS * orderings }
    }

    /// True for a detection control.
    pub fn is_control(self) -> bool {
        matches!(self, RaceRole::Control { .. })
    }

    /// Least trials of the amplified run: 0 for a row.
    pub fn min_amplified_trials(self) -> usize {
        match self {
            RaceRole::Row => 0,
            RaceRole::Control { min_amplified_trials } => min_amplified_trials,
        }
    }
}

/// Races `variants` (one per slot of `pools`) natural and amplified, as `opts` asks, and
/// decides the verdict. An amplified race that completes no trial (the runtime does not
/// survive the tracer) makes amplification unavailable for the rest of `pools`' life, with
/// the reason.
pub fn race_modes(
    pools: &mut Pools,
    variants: &[&Variant],
    styles: &[PathStyle],
    trials: usize,
    role: RaceRole,
    m: &mut Measurement<'_>,
) -> RaceOutput {
    let opts = m.opts;
    let amplify = m.amplify().clone();
    let started = Instant::now();
    // adaptive trials, except in the run a detection control is judged by (its amplified run,
    // or its natural run where there is no amplified one): that run needs all its trials
    let control = role.is_control();
    let adaptive = opts.adaptive.then_some(DISPROOF_TRIALS_PER_ORDERING);
    let budget = Budget {
        trials,
        max_rate: opts.max_rate,
        max_trials: opts.max_trials.max(trials),
        disproof_per_ordering: adaptive.filter(|_| !control),
        control_blocks: None,
    };
    // the loose-trial bound and the orderings of an amplified race at a delay
    let amplified_setup = |a: &crate::exec::amplify::Amplifier| {
        (
            Some(a.delay_us() as f64 * crate::exec::amplify::TIGHT_FRACTION),
            opts.offsets.clone().map_or_else(|| Sweep::amplified(a.delay_us()), Sweep::Fixed),
        )
    };
    let natural_sweep = opts.offsets.clone().map_or(Sweep::NaturalAuto, Sweep::Fixed);
    let orderings = opts.offsets.as_ref().map_or(2, Vec::len).max(1);
    // adaptive: the natural check runs first where an amplified race would follow (see
    // NATURAL_CHECK_TRIALS_PER_ORDERING); a failure it shows decides the cell, and the
    // amplified race is skipped (NoAmplified::Skipped)
    let natural_first = adaptive.is_some()
        && !control
        && opts.natural
        && matches!(amplify, Amplify::On(_))
        && pools.unusable().is_none()
        && !crate::interrupt::requested();
    let mut natural = natural_first.then(|| {
        let check = natural_budget(budget, adaptive, Some((RaceVerdict::Exclusive, trials)), control, orderings);
        race_core(&mut pools.natural, variants, styles, check, &natural_sweep, None, m)
    });
    // a failure decides the cell; an unsupported call, a harness error or an interrupt ends it
    let natural_failed = natural.as_ref().is_some_and(|r| crate::verdict::is_disproof(r.summary.verdict));
    let natural_decided =
        natural.as_ref().is_some_and(|r| natural_failed || r.unsupported || r.harness_error.is_some() || r.interrupted);
    let (mut amplified, mut unavailable) = (None, None);
    // the delay the amplified race ran at, and the one it was raised from (None: not raised)
    let (mut used_amplify, mut raised_from_us) = (amplify.clone(), None);
    if natural_failed {
        unavailable = Some(NoAmplified::Skipped);
    } else if !natural_decided && !crate::interrupt::requested() {
        let trials = trials.max(role.min_amplified_trials());
        // a control's ordering blocks (issue 13): ordering 0 usually passes with 20/20,
        // where the three others took 60 more trials
        let blocks = (control && adaptive.is_some()).then_some(crate::verdict::CONTROL_MIN_TRIALS);
        let budget = Budget { trials, max_trials: budget.max_trials.max(trials), control_blocks: blocks, ..budget };
        // the run at the delay before the last raise, and that delay (µs)
        let mut last: Option<(RaceRun, u64)> = None;
        loop {
            let Amplify::On(a) = &used_amplify else {
                unavailable = Some(used_amplify.why_not().unwrap_or(NoAmplified::Off));
                break;
            };
            let (tight, sweep) = amplified_setup(a);
            let pool = match pools.amplified(&used_amplify) {
                Ok(pool) => pool,
                Err(why) => {
                    if let Some(earlier) = last.take() {
                        // the pool did not restart at the raised delay: the run at the last
                        // delay stands, and the next cell starts the pool again at its own
                        pools.reset_amplified();
                        used_amplify = Amplify::On(a.with_delay(earlier.1));
                        amplified = Some(earlier.0);
                    } else {
                        unavailable = Some(why);
                    }
                    break;
                }
            };
            let mut r = race_core(pool, variants, styles, budget, &sweep, tight, m);
            // the loose trials of the runs before (each run's count includes its predecessor's)
            r.loose_trials += last.as_ref().map_or(0, |(l, _)| l.loose_trials);
            // the release never got tight at this delay (a busy machine can hold a contender
            // back longer than the delay covers): this cell runs again with a longer one, as a
            // weak control raises its family's (measured: under load, Bun's and Deno's
            // createWriteStream wx stopped at 1,000 µs and were left undetermined)
            // (a detection control's too: its family's cells then start from the raised delay)
            let longer = a.delay_us() * crate::exec::amplify::ESCALATION_FACTOR;
            if r.stopped_loose
                && !r.interrupted
                && longer <= crate::exec::amplify::MAX_ESCALATED_DELAY_US
                && !crate::interrupt::requested()
            {
                raised_from_us.get_or_insert(a.delay_us());
                last = Some((r, a.delay_us()));
                used_amplify = Amplify::On(a.with_delay(longer));
                continue;
            }
            if r.summary.stats.trials == 0 && !r.unsupported && !r.interrupted && r.harness_error.is_none() {
                let why = format!(
                    "no amplified trial completed: {}",
                    r.evidence.clone().unwrap_or_else(|| "no evidence".into())
                );
                pools.amplified_broke(why.clone());
                unavailable = Some(NoAmplified::Unavailable(why));
                break;
            }
            amplified = Some(r);
            break;
        }
    }
    // natural also runs where amplification was asked for alone but this pool has none
    // (unavailable here, not run for this runtime, or broken under the tracer)
    let natural_wanted = (opts.natural || amplified.is_none())
        && !amplified.as_ref().is_some_and(|r: &RaceRun| r.harness_error.is_some() || r.interrupted);
    // adaptive: where the amplified race already showed multiple winners the natural race
    // cannot change the verdict, and one round of its orderings gives its rate; where it
    // found the call exclusive over all its trials, it decides the verdict and its bound (the
    // "safe as a lock" rule reads the deciding run), and the natural race is a check that
    // the undelayed call shows no second winner either, over NATURAL_CHECK_TRIALS_PER_ORDERING
    let amplified_summary = amplified.as_ref().map(|r| (r.summary.verdict, r.summary.stats.trials));
    let natural_budget = natural_budget(budget, adaptive, amplified_summary, control, orderings);
    // the natural check that ran first stands unless the amplified race left more to decide
    // (it did not run, or did not settle the cell): then a natural race of that budget replaces it
    let checked = natural.as_ref().map_or(0, |r| r.summary.stats.trials);
    if !natural_decided && natural_budget.trials > checked && natural_wanted && !crate::interrupt::requested() {
        natural = Some(race_core(&mut pools.natural, variants, styles, natural_budget, &natural_sweep, None, m));
    }
    let unsupported = natural.iter().chain(amplified.iter()).find(|r| r.unsupported);
    let broken = natural.iter().chain(amplified.iter()).find(|r| r.harness_error.is_some());
    let evidence = broken.or(unsupported).and_then(|r| r.evidence.clone());
    let is_unsupported = unsupported.is_some();
    let harness_error_in = match (&natural, &amplified) {
        (Some(n), _) if n.harness_error.is_some() => Some(RaceMode::Natural),
        (_, Some(a)) if a.harness_error.is_some() => Some(RaceMode::Amplified),
        _ => None,
    };
    let interrupted = natural.iter().chain(amplified.iter()).any(|r| r.interrupted);
    let first_error = natural
        .as_ref()
        .and_then(|r| r.first_error.clone())
        .or_else(|| amplified.as_ref().and_then(|r| r.first_error.clone()));
    let natural = natural.map(|r| mode_run(r, None));
    let delay = match &used_amplify {
        Amplify::On(a) => Some(a.delay_us()),
        _ => None,
    };
    let amplified = amplified.map(|r| ModeRun { raised_from_us, ..mode_run(r, delay) });
    let (verdict, decided_by) = if let Some(mode) = harness_error_in {
        (RaceVerdict::HarnessError, mode)
    } else if is_unsupported {
        (RaceVerdict::Unsupported, if amplified.is_some() { RaceMode::Amplified } else { RaceMode::Natural })
    } else {
        decide(natural.as_ref().map(|m| m.verdict), amplified.as_ref().map(|m| m.verdict))
    };
    RaceOutput {
        race: RaceResult {
            verdict,
            decided_by,
            error: first_error,
            natural,
            amplified,
            amplified_unavailable: unavailable,
            detection: None,
            weak_race: None,
            interrupted,
        },
        evidence,
        elapsed_ms: ms(started.elapsed()),
        interrupted,
    }
}

/// The budget of a cell's natural race, given the cell's `budget`, the adaptive trials per
/// ordering (`None`: not adaptive, `--thorough`), the amplified race's verdict and counted
/// trials (`None` when it did not run), whether the cell is a detection control, and the
/// natural sweep's number of `orderings`. See [`Options::adaptive`]; a detection control
/// without an amplified run gets at least [`crate::verdict::CONTROL_MIN_TRIALS`] per ordering.
fn natural_budget(
    budget: Budget,
    adaptive: Option<usize>,
    amplified: Option<(RaceVerdict, usize)>,
    control: bool,
    orderings: usize,
) -> Budget {
    if control && amplified.is_none() {
        // the control is judged on its natural run: every ordering gets CONTROL_MIN_TRIALS
        // (at -n 30, 15 per ordering made every natural-only control weak: cmd, issue 13)
        let trials = budget.trials.max(crate::verdict::CONTROL_MIN_TRIALS * orderings);
        return Budget { trials, max_trials: budget.max_trials.max(trials), ..budget };
    }
    let Some(per) = adaptive else { return budget };
    let disproved = amplified.is_some_and(|(v, _)| crate::verdict::is_disproof(v));
    let settled = amplified.is_some_and(|(v, n)| !control && v == RaceVerdict::Exclusive && n >= budget.trials);
    let trials = if disproved {
        per * orderings
    } else if settled {
        NATURAL_CHECK_TRIALS_PER_ORDERING * orderings
    } else if control && amplified.is_some() {
        budget.trials
    } else {
        return budget;
    };
    Budget { trials: trials.min(budget.trials), disproof_per_ordering: Some(per), ..budget }
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
            Scenario::Publish | Scenario::Claim | Scenario::DoneMarker => {
                CellResult::Counters(CountersResult::default())
            }
        };
        let mut c = self.finding(scenario, target, result);
        c.evidence = f.evidence.clone();
        c
    }
}

#[cfg(test)]
mod tests;

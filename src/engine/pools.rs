//! The contender pools of a family: the natural contenders and the same launches under the
//! tracer (amplified), started together up front or on first use; a pool under another
//! tracer is parked for the next cell that asks for it.

use super::{Amplify, Measurement};
use crate::domain::{ContenderKind, NoAmplified};
use crate::exec::contender::{shutdown_all, Attempt, Contender, Mode, Timeouts};
use crate::exec::process::Launch;

/// Why a runtime without session probes (cmd) has no thread races: every attempt of such a
/// contender is `unsupported` with this reason.
pub const NO_THREADS: &str =
    "no threads: cmd.exe runs one command at a time (a thread race needs a session probe that answers prepare-threads)";

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
    /// a request for another parks the pool and takes the parked one back, or starts one. `None` for ready-made contenders
    /// ([`Pools::of`], tests), which are never restarted.
    amplified_with: Option<crate::exec::amplify::Amplifier>,
    /// The amplified pool that ran before the current one, under another tracer, kept running
    /// and idle: a cell whose race was raised to a longer delay, and hand-offs (which delay
    /// every path), go back to the pool before them without starting it again (pwsh: about 5 s
    /// for three probes on 2 cores here, twice per raised cell before).
    parked: Option<(crate::exec::amplify::Amplifier, Vec<Contender>)>,
    /// The slots whose amplified contender is traced from its hello on instead of from its
    /// start ([`crate::exec::attach`]; [`crate::runtime::Adapter::amplify_by_attach`]).
    attach: Vec<bool>,
}

impl Pools {
    /// Pools over ready-made natural and amplified contenders (the engine's tests), run in
    /// `cwd`; the amplified ones are used as they are, never traced or restarted.
    #[cfg(test)]
    pub(super) fn ready(natural: Vec<Contender>, amplified: Vec<Contender>, cwd: std::path::PathBuf) -> Pools {
        Pools {
            slots: Vec::new(),
            kind: ContenderKind::Processes,
            cwd,
            natural,
            amplified: Some(Ok(amplified)),
            amplified_with: None,
            parked: None,
            attach: Vec::new(),
        }
    }

    /// Replaces the amplified contenders by ready-made ones (the engine's tests).
    /// Ready-made pools (tests) with an amplified pool under `with` and, if given, a parked
    /// one under its tracer.
    #[cfg(test)]
    pub(super) fn ready_traced(
        natural: Vec<Contender>,
        (with, amplified): (crate::exec::amplify::Amplifier, Vec<Contender>),
        parked: Option<(crate::exec::amplify::Amplifier, Vec<Contender>)>,
    ) -> Pools {
        let mut p = Pools::ready(natural, amplified, std::path::PathBuf::from("."));
        p.amplified_with = Some(with);
        p.parked = parked;
        p
    }

    #[cfg(test)]
    pub(super) fn set_amplified(&mut self, amplified: Vec<Contender>) {
        self.amplified = Some(Ok(amplified));
    }

    /// Pools for `slots` (mode, launch and timeouts of each contender), run in `cwd`. Nothing
    /// starts until used.
    pub fn new(slots: Vec<(Mode, Launch, Timeouts)>, cwd: std::path::PathBuf) -> Pools {
        let natural = slots.iter().map(|(m, l, t)| Contender::new(*m, l.clone(), cwd.clone(), *t)).collect();
        Pools::unstarted(slots, ContenderKind::Processes, cwd, natural)
    }

    /// Pools of `kind` over `slots` with their `natural` contenders, nothing amplified yet.
    fn unstarted(
        slots: Vec<(Mode, Launch, Timeouts)>,
        kind: ContenderKind,
        cwd: std::path::PathBuf,
        natural: Vec<Contender>,
    ) -> Pools {
        let attach = vec![false; slots.len()];
        Pools { slots, kind, cwd, natural, amplified: None, amplified_with: None, parked: None, attach }
    }

    /// Pools whose contenders are threads of one probe per pool (`--contender-kind threads`):
    /// one slot per contender, all with `mode`, `launch` and `timeouts`; a runtime whose probes
    /// are not session probes (cmd) gets contenders whose every attempt is `unsupported`, with
    /// the reason ([`NO_THREADS`]). Nothing starts until used.
    pub fn threads(n: usize, mode: Mode, launch: Launch, timeouts: Timeouts, cwd: std::path::PathBuf) -> Pools {
        let slots = vec![(mode, launch, timeouts); n];
        let natural = Pools::thread_pool(&slots, &cwd, None);
        Pools::unstarted(slots, ContenderKind::Threads, cwd, natural)
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
    pub(super) fn of_adapter(
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

    /// The tracer this pool's amplified contenders run under for `amp` (`None`: not on).
    pub(super) fn tracer_for(&self, amp: &Amplify) -> Option<crate::exec::amplify::Amplifier> {
        match amp {
            Amplify::On(a) => Some(self.tracer(a)),
            _ => None,
        }
    }

    /// Started contenders handed over for some slots (the pairs' kept probes, in slot order;
    /// `None`: that slot keeps its own, not started): natural ones, and amplified ones under
    /// the tracer given, which then is the amplified pool's (the slots without one get a new
    /// contender under it). [`Pools::start`] starts the rest.
    pub(super) fn hand_over(
        &mut self,
        natural: Vec<Option<Contender>>,
        amplified: Option<(crate::exec::amplify::Amplifier, Vec<Option<Contender>>)>,
    ) {
        for (own, given) in self.natural.iter_mut().zip(natural) {
            if let Some(c) = given {
                *own = c;
            }
        }
        let Some((tracer, given)) = amplified else { return };
        if self.amplified.is_some() || !given.iter().any(Option::is_some) {
            // unusable already, or nothing to hand over: started as usual
            shutdown_all(&mut given.into_iter().flatten().collect::<Vec<_>>());
            return;
        }
        let pool =
            self.amplified_pool(&tracer).into_iter().zip(given).map(|(new, given)| given.unwrap_or(new)).collect();
        self.amplified = Some(Ok(pool));
        self.amplified_with = Some(tracer);
    }

    /// Every contender, for use elsewhere (the pairs' kept probes): the natural ones (tracer
    /// `None`), the amplified pool's and the parked one's, each with its tracer, in slot order.
    /// The pools are left empty.
    pub(super) fn take_back(&mut self) -> Vec<(Option<crate::exec::amplify::Amplifier>, Vec<Contender>)> {
        let mut all = vec![(None, std::mem::take(&mut self.natural))];
        if let (Some(Ok(p)), Some(with)) = (self.amplified.take(), self.amplified_with.take()) {
            all.push((Some(with), p));
        }
        if let Some((with, p)) = self.parked.take() {
            all.push((Some(with), p));
        }
        all
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
            parked: None,
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
                    // a start-up under the tracer names none of the race's paths, so only a
                    // tracer that delays every path has to wait for the hello
                    (Mode::Session, true) if a.scope() == crate::exec::amplify::DelayScope::All => {
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
            Some(f) => Err(NoAmplified::did_not_start(&f.evidence.unwrap_or_default())),
        }
    }

    /// [`Pools::amplified_started`], after starting a pool whose start failed (`fault`) once
    /// more, alone, under the same tracer: a probe under strace slow to say hello while every
    /// pool started at once (PowerShell in a baseline run: "no hello within 30000 ms", and its
    /// races then natural only) gets a second start before the pool is unusable.
    fn amplified_or_again(&self, mut pool: Vec<Contender>, fault: Option<Attempt>) -> Result<Vec<Contender>, String> {
        let (Some(_), Some(a)) = (&fault, &self.amplified_with) else { return Pools::amplified_started(pool, fault) };
        shutdown_all(&mut pool);
        let mut again = self.amplified_pool(a);
        let fault = crate::exec::contender::start_all(&mut again);
        Pools::amplified_started(again, fault)
    }

    /// Starts the natural pool and, with `amplified` on (races will run amplified) and no
    /// amplified pool yet, the amplified one (or the contenders of one handed over not
    /// started yet, by `Pools::hand_over`), all at the same time: the amplified start-up
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
    pub(super) fn amplified(&mut self, amp: &Amplify) -> Result<&mut [Contender], NoAmplified> {
        let a = match amp {
            Amplify::On(a) => self.tracer(a),
            other => return Err(other.why_not().unwrap_or(NoAmplified::Off)),
        };
        // started at another delay (a cell's race was raised, see race_modes) or for other
        // paths (hand-offs delay every path): parked, and the parked pool taken back if it
        // runs under the tracer asked for, else a new one started
        if matches!(self.amplified, Some(Ok(_))) && self.amplified_with.as_ref().is_some_and(|w| *w != a) {
            if let (Some(Ok(pool)), Some(with)) = (self.amplified.take(), self.amplified_with.take()) {
                // the parked pool is the one asked for: the two change places; else the
                // current one is parked and the one parked before stopped
                let back = self.parked.take_if(|(w, _)| *w == a);
                if let Some((_, mut old)) = self.parked.replace((with, pool)) {
                    shutdown_all(&mut old);
                }
                if let Some((w, p)) = back {
                    self.amplified_with = Some(w);
                    self.amplified = Some(Ok(p));
                }
            }
        }
        if self.amplified.is_none() && self.parked.as_ref().is_some_and(|(w, _)| *w == a) {
            let (with, pool) = self.parked.take().expect("checked above");
            self.amplified_with = Some(with);
            self.amplified = Some(Ok(pool));
        }
        if self.amplified.is_none() {
            let mut pool = self.amplified_pool(&a);
            self.amplified_with = Some(a);
            let fault = crate::exec::contender::start_all(&mut pool);
            self.amplified = Some(self.amplified_or_again(pool, fault));
        }
        match self.amplified.as_mut().expect("set above") {
            Ok(p) => Ok(p.as_mut_slice()),
            Err(why) => Err(NoAmplified::from_text(why)),
        }
    }

    /// Swaps the natural and the amplified contender of each slot in `slots` that both pools
    /// have, where the amplified pool is started: before an amplified run whose observers
    /// must run untraced ([`super::handoff::Runner::observers`]), and again after it, which
    /// puts them back. Does nothing without a started amplified pool.
    pub(super) fn swap_natural(&mut self, slots: std::ops::Range<usize>) {
        if let Some(Ok(amplified)) = self.amplified.as_mut() {
            for i in slots {
                if let (Some(n), Some(a)) = (self.natural.get_mut(i), amplified.get_mut(i)) {
                    std::mem::swap(n, a);
                }
            }
        }
    }

    /// Runs `f` on the amplified pool under `amp` ([`Pools::amplified`], started on first use)
    /// with the slots `untraced` taken from the natural pool for the time of `f`
    /// ([`Pools::swap_natural`] before and after). Returns what `f` returned, or why there is
    /// no amplified pool.
    pub(super) fn with_amplified<R>(
        &mut self,
        amp: &Amplify,
        untraced: std::ops::Range<usize>,
        f: impl FnOnce(&mut [Contender]) -> R,
    ) -> Result<R, NoAmplified> {
        self.amplified(amp)?;
        self.swap_natural(untraced.clone());
        // the pool started above, holding the natural observers now
        let r = self.amplified(amp).map(f);
        self.swap_natural(untraced);
        r
    }

    /// Why the amplified pool cannot be used, when that is known before it is asked for (the
    /// adapter is never amplified, see [`Pools::of_adapter`], or the pool broke); `None`
    /// while it may still start.
    pub(super) fn unusable(&self) -> Option<&str> {
        match &self.amplified {
            Some(Err(why)) => Some(why),
            _ => None,
        }
    }

    /// Stops the amplified pool so that its next use starts it again (with another delay).
    pub(super) fn reset_amplified(&mut self) {
        if let Some(Ok(p)) = &mut self.amplified {
            shutdown_all(p);
        }
        self.amplified = None;
    }

    /// Marks the amplified pool unusable for the rest of its life, with the reason.
    pub fn amplified_broke(&mut self, why: String) {
        let mut stop = self.parked.take().map(|(_, p)| p).unwrap_or_default();
        if let Some(Ok(p)) = &mut self.amplified {
            stop.append(p);
        }
        shutdown_all(&mut stop);
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
        // all at once (25-65 ms per pool here, one after another)
        let amplified = match &mut self.amplified {
            Some(Ok(p)) => p.as_mut_slice(),
            _ => &mut [],
        };
        let parked = self.parked.as_mut().map_or(&mut [][..], |(_, p)| p.as_mut_slice());
        shutdown_all(self.natural.iter_mut().chain(amplified.iter_mut()).chain(parked.iter_mut()));
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
        let amplified = match (amp, &mut p.amplified) {
            (Some(Amplify::On(a)), None) => {
                let a = p.tracer(a);
                let pool = p.amplified_pool(&a);
                p.amplified_with = Some(a);
                pool
            }
            // handed over with some contenders started ([`Pools::hand_over`]): the rest start
            // here (a started one answers at once)
            (Some(Amplify::On(_)), Some(Ok(pool))) => std::mem::take(pool),
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
            p.amplified = Some(p.amplified_or_again(amp_pool, amp_fault));
        }
    }
    natural_faults
}

//! A contender: one slot of a race (or the one second comer), made of a [`Driver`] — a session
//! probe, a one-shot process per attempt, or the in-process fake — and the data its steps
//! exchange: the attempt's [`Spec`] and what came of it, an [`Attempt`].
//!
//! A probe that fails to start, exits, hangs or prints something outside the protocol is
//! turned into an [`Attempt`] with a fault [`Report`]; its process tree is killed and a
//! session is restarted on the next attempt.

// A fault travels as the `Err` of the contender's steps; it is the data of the cell, not an
// exceptional path, and a race makes about a thousand attempts a second: boxing buys nothing.
#![expect(clippy::result_large_err, reason = "an Attempt is data, see above")]

use std::path::PathBuf;
use std::time::Duration;

use super::cmdloop::CmdLoop;
use super::driver::Driver;
use super::fake::{Fake, FakeCall};
use super::oneshot::OneShot;
use super::process::Launch;
use super::session::Session;
use crate::domain::Report;
use crate::domain::{RawError, Returned};

pub use super::oneshot::shows_prompt;

/// How the evidence of a [`Report::HarnessError`] attempt begins ([`Attempt::harness_error`]).
pub const HARNESS_ERROR_PREFIX: &str = "harness-error: ";

/// Longest excerpt of evidence (stderr, a stray line) kept per attempt, in characters.
pub(crate) const EVIDENCE_CHARS: usize = 600;

/// How a runtime's probe is driven.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One long-lived process, JSON lines both ways.
    Session,
    /// One process per attempt, data in environment variables (cmd.exe on Windows).
    OneShot,
    /// cmd.exe kept running per contender, data in request files (cmd under Wine, see
    /// [`super::cmdloop`]), paths spelled in this style; one-shot where the loop cannot start.
    Loop(crate::domain::PathStyle),
    /// A shell kept running per contender, each attempt's data as lines on its stdin and run
    /// in a subshell (dash, bash: see [`super::shloop`]); one-shot where the loop cannot start.
    ShellLoop,
}

impl Mode {
    /// True when the probe's process waits blocked on its input between attempts (a session
    /// probe, a shell loop), so that it can be started ahead of the cells, kept from cell to
    /// cell and left waiting while other runtimes measure. cmd's loop polls its files while
    /// it waits, and a one-shot probe has no process between attempts.
    pub fn waits_idle(self) -> bool {
        matches!(self, Mode::Session | Mode::ShellLoop)
    }

    /// True when each attempt or hand-off step runs in a new process: a one-shot probe, or a
    /// shell (its loop runs each attempt in a subshell, and its recipes start `mv`, `rm` and
    /// `cat`); such a runtime's hand-off recipes take the longest.
    pub fn starts_a_process_per_step(self) -> bool {
        matches!(self, Mode::OneShot | Mode::ShellLoop)
    }
}

/// One attempt's parameters, paths already spelled for the runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// Attempt id.
    pub id: u64,
    /// Variant id.
    pub variant: String,
    /// Target as the probe should see it.
    pub target: String,
    /// Source, if any.
    pub source: Option<String>,
    /// Token.
    pub token: String,
    /// Mark path, if any.
    pub mark: Option<String>,
    /// Handle hold time (ms).
    pub hold_ms: u64,
    /// Protocol 2: run this recipe instead of the variant's call.
    pub recipe: Option<RecipeSpec>,
    /// When this contender is released after the trial's release instant, µs (its slot's
    /// [`crate::engine::trial::Phase::Release`]). Process drivers ignore it (the harness times
    /// their `go`); thread races hand it to the probe, which releases its workers itself.
    pub delay_us: u64,
}

impl Spec {
    /// The variant call this spec asks for, as `prepare` and `prepare-threads` send it.
    pub fn call(&self) -> super::protocol::Call<'_> {
        super::protocol::Call {
            variant: &self.variant,
            target: &self.target,
            source: self.source.as_deref(),
            token: &self.token,
            mark: self.mark.as_deref(),
            hold_ms: self.hold_ms,
        }
    }
}

/// A recipe to run in an attempt (protocol 2, `probes/PROTOCOL.md`): a named multi-step
/// routine of the probe, with its scenario, role and parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecipeSpec {
    /// The scenario (`publish`, …).
    pub scenario: String,
    /// The recipe name (`publish.temp-rename`, `read.poll`, …).
    pub recipe: String,
    /// The contender's role (`writer`, `reader`, …).
    pub role: String,
    /// The recipe's parameters (a JSON object).
    pub params: serde_json::Value,
    /// A loop recipe (`read.poll`): it runs until [`crate::exec::driver::Driver::stop`].
    pub until_stopped: bool,
}

/// What a recipe reported beside its outcome (protocol 2 `result`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RecipeOutput {
    /// The step that failed (`open`, `write`, `rename`, …), `None` on success.
    pub step: Option<String>,
    /// Named counters the recipe kept (`read.poll`: `reads`, `complete`, `torn`, …).
    pub counters: std::collections::BTreeMap<String, i64>,
    /// Up to 8 raw errors the recipe met along the way.
    pub errors_sample: Vec<RawError>,
}

/// What came of one attempt, from the probe's side.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    /// How it ended.
    pub report: Report,
    /// When the call started, in µs on the harness's timeline ([`super::clock`]); `None` when
    /// the probe gave no stamp or one that cannot be right (see `unstamped`).
    pub t0_us: Option<f64>,
    /// When the call ended, likewise.
    pub t1_us: Option<f64>,
    /// The raw error of a failed call.
    pub error: Option<RawError>,
    /// For faults and prompts: what the harness saw (stderr tail, a stray line, the reason).
    pub evidence: Option<String>,
    /// Recipes (protocol 2): the failed step, counters and sampled errors.
    pub recipe: Option<Box<RecipeOutput>>,
    /// Protocol 2, a failed variant: how the failure reached the caller (`throw`, `rejected`,
    /// `callback`, `error-event`), as the probe reported it.
    pub delivery: Option<String>,
    /// Protocol 2: the value the call returned, where the probe reports one (boxed: rare).
    pub returned: Option<Box<Returned>>,
    /// Why the stamps are missing, when they are (see [`super::clock::place`]).
    pub unstamped: Option<String>,
}

impl Attempt {
    /// An attempt that ended in a fault, with what the harness saw (cut to 600 characters).
    pub fn fault(report: Report, evidence: impl Into<String>) -> Attempt {
        let mut e: String = evidence.into();
        if e.chars().count() > EVIDENCE_CHARS {
            e = e.chars().take(EVIDENCE_CHARS).collect::<String>() + "…";
        }
        Attempt { evidence: Some(e), ..Attempt::new(report) }
    }

    /// An attempt the harness failed around ([`Report::HarnessError`]), with why; its evidence
    /// reads `harness-error: why`.
    pub fn harness_error(why: impl std::fmt::Display) -> Attempt {
        Attempt::fault(Report::HarnessError, format!("{HARNESS_ERROR_PREFIX}{why}"))
    }

    /// Why the harness failed around this attempt (its evidence without the
    /// `harness-error: ` prefix), for a [`Report::HarnessError`]; `None` otherwise.
    pub fn harness_why(&self) -> Option<&str> {
        (self.report == Report::HarnessError).then(|| {
            let e = self.evidence.as_deref().unwrap_or_default();
            e.strip_prefix(HARNESS_ERROR_PREFIX).unwrap_or(e)
        })
    }

    /// An attempt that ended with `report` and nothing else known (no stamps, error or evidence).
    pub fn new(report: Report) -> Attempt {
        Attempt {
            report,
            t0_us: None,
            t1_us: None,
            error: None,
            evidence: None,
            recipe: None,
            delivery: None,
            returned: None,
            unstamped: None,
        }
    }
}

/// Timeouts for one contender.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    /// From start to `hello` (session) or `ready` (one-shot).
    pub startup: Duration,
    /// From `go` to `result`, and from `prepare` to `ready`.
    pub attempt: Duration,
}

/// A contender slot: its driver.
#[derive(Debug)]
pub struct Contender(Box<dyn Driver>);

impl Contender {
    /// A contender that will run `launch` in `cwd`, as a session probe, one process per
    /// attempt, a shell loop or a cmd loop (`mode`; the loop reads the harness's file clock,
    /// [`super::fileclock::file_clock`]). Nothing starts until [`Contender::start`] or
    /// [`Contender::begin`].
    pub fn new(mode: Mode, launch: Launch, cwd: PathBuf, timeouts: Timeouts) -> Contender {
        match mode {
            Mode::Session => Contender(Box::new(Session::new(launch, cwd, timeouts))),
            Mode::OneShot => Contender(Box::new(OneShot::new(launch, cwd, timeouts))),
            Mode::ShellLoop => Contender(Box::new(super::shloop::ShLoop::new(launch, cwd, timeouts))),
            Mode::Loop(style) => {
                let clock = super::fileclock::file_clock();
                Contender(Box::new(CmdLoop::new(launch, cwd, timeouts, style, clock)))
            }
        }
    }

    /// An in-process contender making `call` (see [`super::fake`]): for tests of the engine.
    pub fn fake(call: FakeCall, cwd: PathBuf) -> Contender {
        Contender(Box::new(Fake::new(call, cwd)))
    }

    /// A contender over any driver.
    pub fn with_driver(driver: Box<dyn Driver>) -> Contender {
        Contender(driver)
    }

    /// See [`Driver::start`].
    pub fn start(&mut self) -> Result<(), Attempt> {
        self.0.start()
    }
    /// See [`Driver::begin`].
    pub fn begin(&mut self, spec: &Spec) -> Result<(), Attempt> {
        self.0.begin(spec)
    }
    /// See [`Driver::ready`].
    pub fn ready(&mut self) -> Result<(), Attempt> {
        self.0.ready()
    }
    /// See [`Driver::release`].
    pub fn release(&mut self) -> Result<(), Attempt> {
        self.0.release()
    }
    /// See [`Driver::stop`].
    pub fn stop(&mut self) -> Result<(), Attempt> {
        self.0.stop()
    }

    /// See [`Driver::finish`].
    pub fn finish(&mut self) -> Attempt {
        self.0.finish()
    }
    /// See [`Driver::control`].
    pub fn control(&mut self, control: super::driver::Control) -> Result<(), Attempt> {
        self.0.control(control)
    }
    /// See [`Driver::hello`].
    pub fn hello(&self) -> Option<&super::protocol::FromProbe> {
        self.0.hello()
    }
    /// See [`Driver::note`].
    pub fn note(&self) -> Option<String> {
        self.0.note()
    }
    /// See [`Driver::process_group`].
    pub fn process_group(&self) -> Option<u32> {
        self.0.process_group()
    }
    /// See [`Driver::process_per_attempt`].
    pub fn process_per_attempt(&self) -> bool {
        self.0.process_per_attempt()
    }
    /// See [`Driver::shutdown`].
    pub fn shutdown(&mut self) {
        self.0.shutdown();
    }
}

/// Starts every contender of `pool` at once, one thread each, so that their start-ups
/// overlap (a probe's start is mostly waiting: a runtime loading, Wine, strace attaching);
/// contenders that are already running are left as they are. Returns the first fault in
/// pool order (see [`Driver::start`]), `None` when all started.
pub fn start_all(pool: &mut [Contender]) -> Option<Attempt> {
    start_each(pool).into_iter().flatten().next()
}

/// Stops `contenders` at once, each in a thread of its own: a probe gets up to 300 ms to exit
/// after `quit` ([`Driver::shutdown`]), so one after another a pool of them waits as long as
/// all of those added up.
pub fn shutdown_all<'a>(contenders: impl IntoIterator<Item = &'a mut Contender>) {
    std::thread::scope(|s| {
        for c in contenders {
            s.spawn(move || c.shutdown());
        }
    });
}

/// [`start_all`], returning each contender's fault (`None`: it started), in pool order. The
/// processes are spawned from the calling thread ([`Driver::spawn`]); only the waits for
/// their hellos run in threads of their own.
pub fn start_each(pool: &mut [Contender]) -> Vec<Option<Attempt>> {
    let spawned: Vec<Option<Attempt>> = pool.iter_mut().map(|c| c.0.spawn().err()).collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = pool
            .iter_mut()
            .zip(spawned)
            .map(|(c, fault)| match fault {
                Some(f) => Err(f),
                None => Ok(s.spawn(move || c.start().err())),
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h {
                Err(f) => Some(f),
                Ok(h) => {
                    h.join().unwrap_or_else(|_| Some(Attempt::harness_error("a probe's start-up thread panicked")))
                }
            })
            .collect()
    })
}

impl Drop for Contender {
    fn drop(&mut self) {
        self.0.shutdown();
    }
}

/// `a`, then `; stderr: <stderr>` when there is any.
pub(crate) fn join(a: &str, stderr: &str) -> String {
    if stderr.is_empty() {
        a.to_string()
    } else {
        format!("{a}; stderr: {stderr}")
    }
}

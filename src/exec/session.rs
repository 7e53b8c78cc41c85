//! The session driver: one long-lived probe process, JSON lines both ways
//! (`probes/PROTOCOL.md`, session mode).

#![expect(clippy::result_large_err, reason = "an Attempt is data (see driver.rs)")]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::clock::{self, Now, ProbeClock};
use super::contender::{join, Attempt, RecipeOutput, Spec, Timeouts};
use super::driver::{control_child, fail_child, Control, Driver};
use super::process::{Child, Launch, ReadError};
use super::protocol::{accepts, parse_line, FromProbe, Go, Prepare, PrepareRecipe, Stop, OLDEST_PROTOCOL, PROTOCOL};
use crate::domain::Report;

/// A session probe: started once, answering many attempts.
#[derive(Debug)]
pub struct Session {
    launch: Launch,
    cwd: PathBuf,
    timeouts: Timeouts,
    child: Option<Child>,
    /// The process [`Driver::spawn`] started, until [`Driver::start`] has its hello.
    spawned: Option<Child>,
    pending: Option<u64>,
    hello: Option<FromProbe>,
    /// What the probe's stamps count (from its hello).
    clock: ProbeClock,
    /// When `go` of the pending attempt was written (harness clocks).
    released: Option<Now>,
}

impl Session {
    /// A driver that will run `launch` in `cwd`; nothing starts until [`Driver::start`] or the
    /// first [`Driver::begin`].
    pub fn new(launch: Launch, cwd: PathBuf, timeouts: Timeouts) -> Session {
        Session {
            launch,
            cwd,
            timeouts,
            child: None,
            spawned: None,
            pending: None,
            hello: None,
            clock: ProbeClock::Wall,
            released: None,
        }
    }

    /// Starts the probe process. Errors: a `crashed` fault naming the launch.
    fn spawn_child(&self) -> Result<Child, Attempt> {
        Child::spawn(&self.launch, &self.cwd)
            .map_err(|e| Attempt::fault(Report::Crashed, format!("cannot start {}: {e}", self.launch.display())))
    }

    /// The next line before `deadline`; a timeout or the end of output is a fault described by
    /// `late` or `gone`.
    fn next_line(&mut self, deadline: Instant, late: String, gone: &str) -> Result<String, Attempt> {
        let Some(child) = self.child.as_mut() else {
            return Err(Attempt::fault(Report::Crashed, "no probe process"));
        };
        match child.read_line_or_stop(deadline) {
            Ok(l) => Ok(l),
            Err(ReadError::Interrupted) => {
                Err(self.fail(Report::Interrupted, "interrupted before the probe answered".into()))
            }
            Err(ReadError::Timeout) => Err(self.fail(Report::Timeout, late)),
            Err(ReadError::Closed) => Err(self.fail(Report::Crashed, gone.into())),
        }
    }

    /// Kills the process tree and builds a fault attempt with the stderr tail as evidence.
    pub(super) fn fail(&mut self, report: Report, why: String) -> Attempt {
        fail_child(&mut self.child, report, &why)
    }

    /// Writes one protocol line to the running probe (`what` names it in a fault). Errors: no
    /// process, or the write failed (the tree is then killed).
    pub(super) fn send_line(&mut self, line: &str, what: &str) -> Result<(), Attempt> {
        let Some(child) = self.child.as_mut() else {
            return Err(Attempt::fault(Report::Crashed, "no probe process"));
        };
        if let Err(e) = child.write_line(line) {
            return Err(self.fail(Report::Crashed, format!("cannot write {what} to probe: {e}")));
        }
        Ok(())
    }

    /// The next line of the probe within the per-attempt timeout; a timeout (`late`) or the end
    /// of output (`gone`) is a fault, and the tree is killed.
    pub(super) fn attempt_line(&mut self, late: &str, gone: &str) -> Result<String, Attempt> {
        self.next_line(Instant::now() + self.timeouts.attempt, late.to_string(), gone)
    }

    /// What the probe's stamps count (from its hello; `wall` until it said hello).
    pub(super) fn probe_clock(&self) -> ProbeClock {
        self.clock
    }
}

impl Driver for Session {
    fn spawn(&mut self) -> Result<(), Attempt> {
        if self.child.is_none() && self.spawned.is_none() {
            self.spawned = Some(self.spawn_child()?);
        }
        Ok(())
    }

    fn start(&mut self) -> Result<(), Attempt> {
        if self.child.is_some() {
            return Ok(());
        }
        let mut child = match self.spawned.take() {
            Some(c) => c,
            None => self.spawn_child()?,
        };
        let deadline = Instant::now() + self.timeouts.startup;
        let fault = |child: &mut Child, report, why: String| {
            let tail = child.stderr_tail();
            child.kill();
            Err(Attempt::fault(report, join(&why, &tail)))
        };
        match child.read_line_or_stop(deadline) {
            Err(ReadError::Interrupted) => {
                child.kill();
                Err(Attempt::fault(Report::Interrupted, "interrupted before the probe said hello"))
            }
            Ok(line) => match parse_line(&line) {
                Ok(hello @ FromProbe::Hello { protocol, .. }) if accepts(protocol) => {
                    let FromProbe::Hello { clock, .. } = &hello else { unreachable!("matched a hello") };
                    match ProbeClock::parse(clock.as_deref()) {
                        Ok(c) => self.clock = c,
                        Err(why) => return fault(&mut child, Report::Crashed, why),
                    }
                    self.hello = Some(hello);
                    self.child = Some(child);
                    Ok(())
                }
                Ok(FromProbe::Hello { protocol, .. }) => fault(
                    &mut child,
                    Report::Crashed,
                    format!("probe speaks protocol {protocol}, harness speaks {OLDEST_PROTOCOL} to {PROTOCOL}"),
                ),
                Ok(other) => fault(&mut child, Report::Crashed, format!("expected hello, got {other:?}")),
                Err(e) => fault(&mut child, Report::Crashed, e),
            },
            Err(ReadError::Timeout) => {
                fault(&mut child, Report::Timeout, format!("no hello within {} ms", self.timeouts.startup.as_millis()))
            }
            Err(ReadError::Closed) => {
                let status = child.exit_status(Duration::from_millis(500));
                std::thread::sleep(Duration::from_millis(20));
                let status = status.map_or_else(|| "still running".to_string(), |s| s.to_string());
                fault(&mut child, Report::Crashed, format!("probe exited before hello ({status})"))
            }
        }
    }

    fn begin(&mut self, spec: &Spec) -> Result<(), Attempt> {
        self.pending = Some(spec.id);
        self.start()?;
        let line = match &spec.recipe {
            None => {
                let msg = Prepare::new(spec.id, spec.call());
                serde_json::to_string(&msg).expect("prepare serialises")
            }
            Some(r) => {
                // a probe that does not list the recipe in its hello (protocol 1, or an older
                // probe) is not asked: the attempt is unsupported, with the reason
                let known =
                    matches!(&self.hello, Some(FromProbe::Hello { recipes, .. }) if recipes.contains(&r.recipe));
                if !known {
                    let (protocol, listed) = match &self.hello {
                        Some(FromProbe::Hello { protocol, recipes, .. }) => (*protocol, recipes.join(", ")),
                        _ => (0, String::new()),
                    };
                    return Err(Attempt::fault(
                        Report::Unsupported,
                        format!("the probe (protocol {protocol}) has no recipe {}; it lists: [{listed}]", r.recipe),
                    ));
                }
                let mut msg = PrepareRecipe::new(spec.id, &r.recipe, &spec.target, &spec.token)
                    .scenario(&r.scenario)
                    .role(&r.role)
                    .params(r.params.clone());
                if let Some(s) = spec.source.as_deref() {
                    msg = msg.source(s);
                }
                if let Some(m) = spec.mark.as_deref() {
                    msg = msg.mark(m);
                }
                serde_json::to_string(&msg).expect("prepare serialises")
            }
        };
        let child = self.child.as_mut().expect("started");
        if let Err(e) = child.write_line(&line) {
            return Err(self.fail(Report::Crashed, format!("cannot write to probe: {e}")));
        }
        Ok(())
    }

    fn ready(&mut self) -> Result<(), Attempt> {
        let line = self.next_line(
            Instant::now() + self.timeouts.attempt,
            "no ready in time".into(),
            "probe exited before ready",
        )?;
        match parse_line(&line) {
            Ok(FromProbe::Ready { id, .. }) if id != self.pending => {
                Err(self.fail(Report::Crashed, format!("ready for attempt {id:?}, expected {:?}", self.pending)))
            }
            Ok(FromProbe::Ready { supported: true, .. }) => Ok(()),
            Ok(FromProbe::Ready { reason, .. }) => {
                Err(Attempt::fault(Report::Unsupported, reason.unwrap_or_else(|| "unsupported".into())))
            }
            Ok(other) => Err(self.fail(Report::Crashed, format!("expected ready, got {other:?}"))),
            Err(e) => Err(self.fail(Report::Crashed, e)),
        }
    }

    fn release(&mut self) -> Result<(), Attempt> {
        let line = serde_json::to_string(&Go::new(self.pending.unwrap_or(0))).expect("go serialises");
        let Some(child) = self.child.as_mut() else {
            return Err(Attempt::fault(Report::Crashed, "no probe process"));
        };
        self.released = Some(clock::now());
        if let Err(e) = child.write_line(&line) {
            return Err(self.fail(Report::Crashed, format!("cannot release probe: {e}")));
        }
        Ok(())
    }

    fn finish(&mut self) -> Attempt {
        let late = format!("no result within {} ms", self.timeouts.attempt.as_millis());
        let line = match self.next_line(Instant::now() + self.timeouts.attempt, late, "probe exited without a result") {
            Ok(l) => l,
            Err(a) => return a,
        };
        match parse_line(&line) {
            Ok(FromProbe::Result { id, .. }) if id != self.pending => {
                self.fail(Report::Crashed, format!("result for attempt {id:?}, expected {:?}", self.pending))
            }
            Ok(FromProbe::Result {
                ok,
                t0_us,
                t1_us,
                error,
                step,
                counters,
                errors_sample,
                delivery,
                returned,
                ..
            }) => {
                let received = clock::now();
                let sent = self.released.take().unwrap_or(received);
                let (t0_us, t1_us, unstamped) = match clock::place(t0_us, t1_us, self.clock, sent, received) {
                    Ok((a, b)) => (Some(a), Some(b), None),
                    Err(why) => (None, None, Some(why)),
                };
                Attempt {
                    t0_us,
                    t1_us,
                    error: if ok { None } else { Some(error.unwrap_or_default()) },
                    recipe: (step.is_some() || !counters.is_empty() || !errors_sample.is_empty())
                        .then(|| Box::new(RecipeOutput { step, counters, errors_sample })),
                    delivery,
                    returned,
                    unstamped,
                    ..Attempt::new(if ok { Report::Success } else { Report::Error })
                }
            }
            Ok(other) => self.fail(Report::Crashed, format!("expected result, got {other:?}")),
            Err(e) => self.fail(Report::Crashed, e),
        }
    }

    fn stop(&mut self) -> Result<(), Attempt> {
        let line = serde_json::to_string(&Stop::new(self.pending.unwrap_or(0))).expect("stop serialises");
        let Some(child) = self.child.as_mut() else {
            return Err(Attempt::fault(Report::Crashed, "no probe process"));
        };
        if let Err(e) = child.write_line(&line) {
            return Err(self.fail(Report::Crashed, format!("cannot stop the probe's loop: {e}")));
        }
        Ok(())
    }

    fn control(&mut self, control: Control) -> Result<(), Attempt> {
        let r = control_child(self.child.as_mut(), control);
        if control == Control::Kill {
            // a killed probe is gone: the next attempt starts a new one
            self.child = None;
        }
        r
    }

    fn hello(&self) -> Option<&FromProbe> {
        self.hello.as_ref()
    }

    fn process_group(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    fn shutdown(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.write_line("{\"type\":\"quit\"}");
            c.close_stdin();
            let _ = c.exit_status(Duration::from_millis(300));
            // whatever the probe left in its process group goes too
            c.kill();
        }
        if let Some(mut c) = self.spawned.take() {
            c.kill();
        }
    }
}

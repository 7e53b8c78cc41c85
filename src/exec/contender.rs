//! A contender: one probe process (session mode) or one process per attempt (one-shot mode),
//! driven through the same four steps so that races treat both alike:
//! [`Contender::begin`] (send `prepare`, or start the one-shot process),
//! [`Contender::ready`] (wait for `ready`), [`Contender::release`] (send `go`), and
//! [`Contender::finish`] (wait for `result`).
//!
//! A probe that fails to start, exits, hangs or prints something outside the protocol is
//! turned into an [`Attempt`] with a fault [`Report`]; its process tree is killed and a
//! session is restarted on the next attempt.

// A fault travels as the `Err` of the contender's steps; it is the data of the cell, not an
// exceptional path, and a race makes about a thousand attempts a second: boxing buys nothing.
#![expect(clippy::result_large_err, reason = "an Attempt is data, see above")]

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::process::{Child, Launch, ReadError};
use super::protocol::{parse_line, time_of_day_us, FromProbe, Prepare, RawError, PROTOCOL};
use crate::verdict::Report;

/// Longest excerpt of evidence (stderr, a stray line) kept per attempt, in characters.
const EVIDENCE_CHARS: usize = 600;

/// How a runtime's probe is driven.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One long-lived process, JSON lines both ways.
    Session,
    /// One process per attempt, data in environment variables (cmd.exe).
    OneShot,
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
}

/// What came of one attempt, from the probe's side.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    /// How it ended.
    pub report: Report,
    /// Probe clock before the call (µs).
    pub t0_us: Option<f64>,
    /// Probe clock after the call (µs).
    pub t1_us: Option<f64>,
    /// The raw error of a failed call.
    pub error: Option<RawError>,
    /// For faults and prompts: what the harness saw (stderr tail, a stray line, the reason).
    pub evidence: Option<String>,
}

impl Attempt {
    /// An attempt that ended in a fault, with what the harness saw (cut to 600 characters).
    pub fn fault(report: Report, evidence: impl Into<String>) -> Attempt {
        let mut e: String = evidence.into();
        if e.chars().count() > EVIDENCE_CHARS {
            e = e.chars().take(EVIDENCE_CHARS).collect::<String>() + "…";
        }
        Attempt { report, t0_us: None, t1_us: None, error: None, evidence: Some(e) }
    }
}

/// Timeouts for one contender.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    /// From start to `hello` (session) or `ready` (one-shot).
    pub startup: Duration,
    /// From `go` to `result`, and from `prepare` to `ready`.
    pub attempt: Duration,
    /// One-shot only: after this long without a result, answer a possible prompt with `N`.
    pub prompt_after: Duration,
}

/// A contender slot.
#[derive(Debug)]
pub struct Contender {
    mode: Mode,
    launch: Launch,
    cwd: PathBuf,
    timeouts: Timeouts,
    child: Option<Child>,
    pending: Option<u64>,
    hello: Option<(String, String)>,
}

impl Contender {
    /// A contender that will run `launch` in `cwd`. Nothing starts until [`Contender::begin`]
    /// or [`Contender::start`].
    pub fn new(mode: Mode, launch: Launch, cwd: PathBuf, timeouts: Timeouts) -> Contender {
        Contender { mode, launch, cwd, timeouts, child: None, pending: None, hello: None }
    }

    /// The probe's own (runtime, version) from its last `hello`, if any.
    pub fn hello(&self) -> Option<&(String, String)> {
        self.hello.as_ref()
    }

    /// Session mode: starts the probe if it is not running and waits for `hello`.
    /// One-shot mode: nothing to do. Errors: the fault as an [`Attempt`].
    pub fn start(&mut self) -> Result<(), Attempt> {
        if self.mode == Mode::OneShot || self.child.is_some() {
            return Ok(());
        }
        let mut child = Child::spawn(&self.launch, &self.cwd)
            .map_err(|e| Attempt::fault(Report::Crashed, format!("cannot start {}: {e}", self.launch.display())))?;
        let deadline = Instant::now() + self.timeouts.startup;
        match child.read_line_or_stop(deadline) {
            Err(ReadError::Interrupted) => {
                child.kill();
                Err(Attempt::fault(Report::Interrupted, "interrupted before the probe said hello"))
            }
            Ok(line) => match parse_line(&line) {
                Ok(FromProbe::Hello { protocol, runtime, version, .. }) if protocol == PROTOCOL => {
                    self.hello = Some((runtime, version));
                    self.child = Some(child);
                    Ok(())
                }
                Ok(FromProbe::Hello { protocol, .. }) => {
                    child.kill();
                    Err(Attempt::fault(
                        Report::Crashed,
                        format!("probe speaks protocol {protocol}, harness speaks {PROTOCOL}"),
                    ))
                }
                Ok(other) => {
                    child.kill();
                    Err(Attempt::fault(Report::Crashed, format!("expected hello, got {other:?}")))
                }
                Err(e) => {
                    let tail = child.stderr_tail();
                    child.kill();
                    Err(Attempt::fault(Report::Crashed, join(&e, &tail)))
                }
            },
            Err(ReadError::Timeout) => {
                let tail = child.stderr_tail();
                child.kill();
                Err(Attempt::fault(
                    Report::Timeout,
                    join(&format!("no hello within {} ms", self.timeouts.startup.as_millis()), &tail),
                ))
            }
            Err(ReadError::Closed) => {
                let status = child.exit_status(Duration::from_millis(500));
                std::thread::sleep(Duration::from_millis(20));
                let tail = child.stderr_tail();
                child.kill();
                let status = status.map_or_else(|| "still running".to_string(), |s| s.to_string());
                Err(Attempt::fault(Report::Crashed, join(&format!("probe exited before hello ({status})"), &tail)))
            }
        }
    }

    /// Sends `prepare` (session) or starts the one-shot process with the data in its
    /// environment. Errors: the fault.
    pub fn begin(&mut self, spec: &Spec) -> Result<(), Attempt> {
        self.pending = Some(spec.id);
        match self.mode {
            Mode::Session => {
                self.start()?;
                let msg = Prepare::new(
                    spec.id,
                    &spec.variant,
                    &spec.target,
                    spec.source.as_deref(),
                    &spec.token,
                    spec.mark.as_deref(),
                    spec.hold_ms,
                );
                let line = serde_json::to_string(&msg).expect("prepare serialises");
                let child = self.child.as_mut().expect("started");
                if let Err(e) = child.write_line(&line) {
                    return Err(self.fail(Report::Crashed, format!("cannot write to probe: {e}")));
                }
                Ok(())
            }
            Mode::OneShot => {
                let mut launch = self.launch.clone();
                let env = [
                    ("CONFORMANCE_VARIANT", spec.variant.clone()),
                    ("CONFORMANCE_TARGET", spec.target.clone()),
                    ("CONFORMANCE_SOURCE", spec.source.clone().unwrap_or_default()),
                    ("CONFORMANCE_TOKEN", spec.token.clone()),
                    ("CONFORMANCE_MARK", spec.mark.clone().unwrap_or_default()),
                ];
                for (k, v) in env {
                    launch.env.push((OsString::from(k), OsString::from(v)));
                }
                let child = Child::spawn(&launch, &self.cwd)
                    .map_err(|e| Attempt::fault(Report::Crashed, format!("cannot start {}: {e}", launch.display())))?;
                self.child = Some(child);
                Ok(())
            }
        }
    }

    /// Waits for `ready`. Errors: `Unsupported` with the probe's reason, or a fault.
    pub fn ready(&mut self) -> Result<(), Attempt> {
        let wait = match self.mode {
            Mode::Session => self.timeouts.attempt,
            Mode::OneShot => self.timeouts.startup,
        };
        let line = self.next_line(Instant::now() + wait, "ready")?;
        match parse_line(&line) {
            Ok(FromProbe::Ready { id, supported, reason }) => {
                if self.mode == Mode::Session && id != self.pending {
                    return Err(
                        self.fail(Report::Crashed, format!("ready for attempt {id:?}, expected {:?}", self.pending))
                    );
                }
                if supported {
                    Ok(())
                } else {
                    if self.mode == Mode::OneShot {
                        self.discard();
                    }
                    Err(Attempt::fault(Report::Unsupported, reason.unwrap_or_else(|| "unsupported".into())))
                }
            }
            Ok(other) => Err(self.fail(Report::Crashed, format!("expected ready, got {other:?}"))),
            Err(e) => Err(self.fail(Report::Crashed, e)),
        }
    }

    /// Releases the contender (`go`). Errors: the fault.
    pub fn release(&mut self) -> Result<(), Attempt> {
        let line = match self.mode {
            Mode::Session => format!("{{\"type\":\"go\",\"id\":{}}}", self.pending.unwrap_or(0)),
            Mode::OneShot => "go".to_string(),
        };
        let Some(child) = self.child.as_mut() else {
            return Err(Attempt::fault(Report::Crashed, "no probe process"));
        };
        if let Err(e) = child.write_line(&line) {
            return Err(self.fail(Report::Crashed, format!("cannot release probe: {e}")));
        }
        Ok(())
    }

    /// Waits for the `result` and turns it into an [`Attempt`]. One-shot mode answers a
    /// console prompt with `N` lines once the command has printed one (see [`shows_prompt`])
    /// and no result came within [`Timeouts::prompt_after`], and then reports
    /// [`Report::Prompted`]. A slow command that printed no prompt keeps its real ending
    /// (its result, a timeout, or a crash): slowness alone is not a prompt.
    pub fn finish(&mut self) -> Attempt {
        let started = Instant::now();
        let deadline = started + self.timeouts.attempt;
        let prompt_at = started + self.timeouts.prompt_after;
        let mut answered = false;
        let mut stray = String::new();
        loop {
            let now = Instant::now();
            if now >= deadline {
                let report = if answered { Report::Prompted } else { Report::Timeout };
                let ev = format!("no result within {} ms", self.timeouts.attempt.as_millis());
                return self.fail(report, join(&ev, &stray));
            }
            if crate::interrupt::requested() {
                return self.fail(Report::Interrupted, "interrupted before the probe answered".into());
            }
            if self.mode == Mode::OneShot && !answered && now >= prompt_at {
                // no result yet: answer only a confirmation prompt the command has printed
                let tail = self.child.as_ref().map(Child::stderr_tail).unwrap_or_default();
                if shows_prompt(&tail) || shows_prompt(&stray) {
                    answered = true;
                    if let Some(c) = self.child.as_mut() {
                        let _ = c.write_line("N");
                        let _ = c.write_line("N");
                    }
                }
            }
            let mut wake = deadline.min(now + Duration::from_millis(200));
            if self.mode == Mode::OneShot && !answered && now < prompt_at {
                wake = wake.min(prompt_at);
            }
            let line = match self.child.as_mut().map(|c| c.read_line(wake)) {
                None => return Attempt::fault(Report::Crashed, "no probe process"),
                Some(Ok(l)) => l,
                Some(Err(ReadError::Timeout)) => continue,
                Some(Err(ReadError::Interrupted)) => {
                    return self.fail(Report::Interrupted, "interrupted before the probe answered".into())
                }
                Some(Err(ReadError::Closed)) => {
                    let report = if answered { Report::Prompted } else { Report::Crashed };
                    let printed = if stray.is_empty() { String::new() } else { format!("; printed: {stray}") };
                    return self.fail(report, format!("probe exited without a result{printed}"));
                }
            };
            // One-shot probes share stdout with the command they run: a prompt printed
            // without a newline lands in front of the result line. Keep it as evidence.
            let (prefix, json) = match (self.mode, line.find("{\"type\":\"result\"")) {
                (Mode::OneShot, Some(i)) => (line[..i].trim().to_string(), line[i..].to_string()),
                _ => (String::new(), line.clone()),
            };
            if !prefix.is_empty() {
                stray.push_str(&prefix);
            }
            match parse_line(&json) {
                Ok(FromProbe::Result { id, ok, t0_us, t1_us, errorlevel, error, t0, t1 }) => {
                    let t0_us = t0_us.or_else(|| t0.as_deref().and_then(time_of_day_us));
                    let t1_us = t1_us.or_else(|| t1.as_deref().and_then(time_of_day_us));
                    if self.mode == Mode::Session && id != self.pending {
                        return self
                            .fail(Report::Crashed, format!("result for attempt {id:?}, expected {:?}", self.pending));
                    }
                    let mut error = if ok { None } else { Some(error.unwrap_or_default()) };
                    if self.mode == Mode::OneShot {
                        let tail = self.child.as_ref().map(Child::stderr_tail).unwrap_or_default();
                        if answered && !tail.is_empty() {
                            // cmd prints its confirmation prompt on stderr: keep it as evidence
                            if !stray.is_empty() {
                                stray.push_str(" | ");
                            }
                            stray.push_str(&tail);
                        }
                        if let Some(e) = error.as_mut() {
                            e.errorlevel = errorlevel;
                            if e.kind.is_empty() {
                                e.kind = "errorlevel".into();
                            }
                            if e.message.is_empty() {
                                e.message = tail;
                            }
                        }
                        self.discard();
                    }
                    let report = if answered {
                        Report::Prompted
                    } else if ok {
                        Report::Success
                    } else {
                        Report::Error
                    };
                    let evidence = (!stray.is_empty()).then(|| stray.clone());
                    return Attempt { report, t0_us, t1_us, error, evidence };
                }
                Ok(_) | Err(_) if self.mode == Mode::OneShot => {
                    // the command's own console output (e.g. "1 file(s) moved."): evidence, not protocol
                    if stray.len() < EVIDENCE_CHARS * 4 {
                        if !stray.is_empty() {
                            stray.push_str(" | ");
                        }
                        stray.push_str(&line);
                    }
                }
                Ok(other) => return self.fail(Report::Crashed, format!("expected result, got {other:?}")),
                Err(e) => return self.fail(Report::Crashed, e),
            }
        }
    }

    /// Stops the probe (session: `quit`, then kill if needed).
    pub fn shutdown(&mut self) {
        if let Some(mut c) = self.child.take() {
            if self.mode == Mode::Session {
                let _ = c.write_line("{\"type\":\"quit\"}");
                c.close_stdin();
                let _ = c.exit_status(Duration::from_millis(300));
                // whatever the probe left in its process group goes too
                c.kill();
            } else {
                c.kill();
            }
        }
    }

    fn next_line(&mut self, deadline: Instant, what: &str) -> Result<String, Attempt> {
        let Some(child) = self.child.as_mut() else {
            return Err(Attempt::fault(Report::Crashed, "no probe process"));
        };
        match child.read_line_or_stop(deadline) {
            Ok(l) => Ok(l),
            Err(ReadError::Interrupted) => Err(self.fail(Report::Interrupted, format!("interrupted before {what}"))),
            Err(ReadError::Timeout) => Err(self.fail(Report::Timeout, format!("no {what} in time"))),
            Err(ReadError::Closed) => Err(self.fail(Report::Crashed, format!("probe exited before {what}"))),
        }
    }

    /// Kills the process tree and builds a fault attempt with the stderr tail as evidence.
    fn fail(&mut self, report: Report, why: String) -> Attempt {
        let tail = match self.child.as_mut() {
            Some(c) => {
                c.kill();
                std::thread::sleep(Duration::from_millis(10));
                c.stderr_tail()
            }
            None => String::new(),
        };
        self.child = None;
        Attempt::fault(report, join(&why, &tail))
    }

    fn discard(&mut self) {
        if let Some(mut c) = self.child.take() {
            if c.exit_status(Duration::from_millis(2000)).is_none() {
                c.kill();
            }
        }
    }
}

impl Drop for Contender {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// True when `text` (a one-shot command's console output) ends in, or holds, a confirmation
/// prompt: cmd.exe's `Overwrite NAME? (Yes/No/All):` (Windows, `move`/`copy` help: "/-Y
/// Causes prompting to confirm you want to overwrite") or Wine's `Overwrite NAME? (Yes|No)`
/// (seen in Wine 8.0's `cmd`, `programs/cmd/builtins.c`). Localised Windows builds keep the
/// `(Yes/No/All)` answer list.
pub fn shows_prompt(text: &str) -> bool {
    let t = text.to_ascii_lowercase();
    ["(yes/no", "(yes|no", "(y/n)", "[y/n]"].iter().any(|p| t.contains(p))
}

fn join(a: &str, stderr: &str) -> String {
    if stderr.is_empty() {
        a.to_string()
    } else {
        format!("{a}; stderr: {stderr}")
    }
}

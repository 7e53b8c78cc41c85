//! How a contender's attempts reach a runtime: one trait, three drivers.
//!
//! [`Driver`] is the four steps every attempt goes through — [`Driver::begin`] (prepare),
//! [`Driver::ready`], [`Driver::release`] (`go`) and [`Driver::finish`] (the result) — so that
//! second comers and races treat every runtime alike. [`session::Session`] drives one
//! long-lived probe over JSON lines (Node, Bun, Deno, .NET, PowerShell),
//! [`cmdloop::CmdLoop`] keeps one cmd.exe per contender answering attempts whose data it reads
//! from request files (cmd under Wine), [`oneshot::OneShot`] starts one process per attempt
//! with the data in its environment (cmd.exe on Windows, and where the loop cannot start), and
//! [`fake::Fake`] makes the call in-process with `std::fs`, so the engine's
//! success paths (warm-up, discards, relative paths, counting) are tested without any runtime.
//!
//! [`session::Session`]: super::session::Session
//! [`cmdloop::CmdLoop`]: super::cmdloop::CmdLoop
//! [`oneshot::OneShot`]: super::oneshot::OneShot
//! [`fake::Fake`]: super::fake::Fake

// A fault travels as the `Err` of the steps; it is the data of the cell, not an exceptional
// path, and a race makes about a thousand attempts a second: boxing buys nothing.
#![expect(clippy::result_large_err, reason = "an Attempt is data, see above")]

use super::contender::{Attempt, Spec};

/// One contender's way of making attempts. A fault is returned as an [`Attempt`] whose report
/// says what went wrong (crashed, timeout, unsupported, interrupted), with evidence; the
/// driver has then killed its process tree and restarts on the next attempt.
pub trait Driver: std::fmt::Debug + Send {
    /// Starts the probe's process, if it has one to keep, without waiting for it; [`Driver::start`]
    /// then waits for its `hello`. Called on the thread that will own the process: Linux ties
    /// a child's parent-death signal to the thread that spawned it
    /// ([`super::process::Child::spawn`]), so [`super::contender::start_all`] spawns every
    /// probe from its caller and only waits in other threads. Drivers without a long-lived
    /// process do nothing. Errors: the fault.
    fn spawn(&mut self) -> Result<(), Attempt> {
        Ok(())
    }
    /// Gets ready for attempts (a session probe is started, unless [`Driver::spawn`] did, and
    /// says `hello`). Errors: the fault.
    fn start(&mut self) -> Result<(), Attempt>;
    /// Hands the attempt's data to the probe (`prepare`, or a new one-shot process).
    /// Errors: the fault.
    fn begin(&mut self, spec: &Spec) -> Result<(), Attempt>;
    /// Waits until the probe has resolved everything ahead of the call (`ready`). Errors:
    /// `Unsupported` with the probe's reason, or a fault.
    fn ready(&mut self) -> Result<(), Attempt>;
    /// Lets the call go (`go`). Errors: the fault.
    fn release(&mut self) -> Result<(), Attempt>;
    /// Waits for the call's result (or a fault) and returns it.
    fn finish(&mut self) -> Attempt;

    /// Ends a loop recipe released with [`Driver::release`] (`stop`); its result then comes
    /// through [`Driver::finish`]. Drivers without recipes have nothing to stop. Errors: the
    /// fault.
    fn stop(&mut self) -> Result<(), Attempt> {
        Ok(())
    }
    /// Stops the probe and its process tree. Never fails.
    fn shutdown(&mut self);
    /// Pauses, resumes or kills the probe's process tree during an attempt (a trial's
    /// [`crate::engine::trial::Phase::Control`]). A kill ends the attempt: the next
    /// [`Driver::finish`] reports it `crashed`. Errors: the fault (no process, or the OS
    /// refused the signal).
    fn control(&mut self, control: Control) -> Result<(), Attempt>;
    /// The probe's `hello` (session probes, once started), for checking what it says it knows
    /// against the matrices ([`super::protocol::check_hello`]); `None` for other drivers.
    fn hello(&self) -> Option<&super::protocol::FromProbe> {
        None
    }
    /// How this driver makes its attempts, for runtimes that have more than one way: the cmd
    /// loop says `loop`, or `one-shot (why the loop is not used)` once it fell back (see
    /// [`super::cmdloop`]); `None` for drivers with a single way. The engine copies it into
    /// every cell it measures with this driver.
    fn note(&self) -> Option<String> {
        None
    }
    /// The process group of the probe's process tree (its leader's pid), while it runs;
    /// `None` for drivers without a long-lived process.
    fn process_group(&self) -> Option<u32> {
        None
    }
    /// True when every attempt starts a new process (one-shot mode): such races get
    /// `--oneshot-trials` instead of `--trials`.
    fn process_per_attempt(&self) -> bool {
        false
    }
}

/// What a trial may do to a contender's process tree between its release and its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// Stop every process of the tree (`SIGSTOP` to the process group, `kill(2)`).
    Pause,
    /// Continue a paused tree (`SIGCONT`).
    Resume,
    /// Kill the tree (`SIGKILL`); the attempt ends as `crashed`.
    Kill,
}

/// [`Driver::control`] for drivers with a probe process: pause or resume its process group,
/// or kill its tree. Errors: no process, or the OS refused the signal.
pub(crate) fn control_child(child: Option<&mut super::process::Child>, control: Control) -> Result<(), Attempt> {
    let Some(child) = child else {
        return Err(Attempt::fault(crate::domain::Report::Crashed, "no probe process"));
    };
    let r = match control {
        Control::Pause => child.pause(true),
        Control::Resume => child.pause(false),
        Control::Kill => {
            child.kill();
            return Ok(());
        }
    };
    r.map_err(|e| Attempt::fault(crate::domain::Report::Crashed, format!("cannot {control:?} the probe: {e}")))
}

/// Kills `child`'s process tree (if any), forgets it, and builds a fault attempt of `report`
/// with `why` and the stderr tail as evidence: how the process drivers end an attempt that
/// went wrong.
pub(crate) fn fail_child(
    child: &mut Option<super::process::Child>,
    report: crate::domain::Report,
    why: &str,
) -> Attempt {
    let tail = match child.as_mut() {
        Some(c) => {
            c.kill();
            std::thread::sleep(std::time::Duration::from_millis(10));
            c.stderr_tail()
        }
        None => String::new(),
    };
    *child = None;
    Attempt::fault(report, super::contender::join(why, &tail))
}

/// Why a loop process's hello did not come when reading it failed with `e`: a timeout after
/// `startup`, or the process's exit (with its status, waiting up to 500 ms for it). An
/// interrupt is the caller's to handle; it is worded as one here.
pub(crate) fn missing_hello(
    child: &mut super::process::Child,
    e: &super::process::ReadError,
    startup: std::time::Duration,
) -> String {
    use super::process::ReadError;
    match e {
        ReadError::Timeout => format!("no hello within {} ms", startup.as_millis()),
        ReadError::Closed => {
            let status = child.exit_status(std::time::Duration::from_millis(500));
            format!("it exited before its hello ({})", status.map_or("still running".into(), |s| s.to_string()))
        }
        ReadError::Interrupted => "interrupted before its hello".into(),
    }
}

/// Kills a loop process that did not start and returns `why` joined with its stderr tail (read
/// after 10 ms, so that its last words are in).
pub(crate) fn abandon_start(mut child: super::process::Child, why: &str) -> String {
    std::thread::sleep(std::time::Duration::from_millis(10));
    let tail = child.stderr_tail();
    child.kill();
    super::contender::join(why, &tail)
}

/// The ready line of a loop probe (`who`: `shell loop`, `cmd loop`), read before `deadline`;
/// on failure the attempt's report and why (an interrupt, no ready in time, the loop's exit),
/// for the caller to kill the tree with.
pub(crate) fn ready_line(
    child: &mut super::process::Child,
    deadline: std::time::Instant,
    who: &str,
) -> Result<String, (crate::domain::Report, String)> {
    use super::process::ReadError;
    use crate::domain::Report;
    child.read_line_or_stop(deadline).map_err(|e| match e {
        ReadError::Interrupted => (Report::Interrupted, "interrupted before the probe answered".to_string()),
        ReadError::Timeout => (Report::Timeout, "no ready in time".to_string()),
        ReadError::Closed => (Report::Crashed, format!("the {who} exited before ready")),
    })
}

//! The shell loop driver: one shell per contender, kept for a whole family, answering
//! request after request (`probes/PROTOCOL.md`, *Loop mode (POSIX shells)*).
//!
//! The one-shot driver starts a shell per attempt, and that start was most of a shell's
//! race: 17–24 ms of `prepare` per trial of three contenders under dash, 40–48 ms amplified
//! (strace started with each shell). A loop shell reads each attempt's data as lines on its
//! stdin (`prepare`, `NAME=value` per variable of one-shot mode, `end`), runs the attempt in
//! a subshell (a fork, before the release), and answers with one-shot mode's `ready` and
//! `result` lines; the call itself is made by the same script text as in one-shot mode. A
//! value holding a line break (or NUL) cannot be one line: that attempt is made in one-shot
//! mode. A loop that does not say hello makes the driver one-shot for good, as the cmd loop
//! does ([`super::cmdloop`]); every cell says which (`driver`).

#![expect(clippy::result_large_err, reason = "an Attempt is data (see driver.rs)")]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::contender::{Attempt, Spec, Timeouts};
use super::driver::{abandon_start, control_child, fail_child, missing_hello, Control, Driver};
use super::oneshot::{await_result, OneShot};
use super::process::{Child, Launch, ReadError};
use super::protocol::{parse_line, FromProbe};
use crate::domain::Report;

/// The environment variable that puts `probes/sh/probe.sh` in loop mode (value `1`).
pub const LOOP_ENV: &str = "CONFORMANCE_LOOP";

/// What [`Driver::note`] says of a cell whose attempts went one-shot for their values.
pub const ONE_SHOT_LINE_BREAK: &str =
    "one-shot (a path or value held a line break, which the shell loop's request lines cannot carry)";

/// The persistent shell driver (see the module documentation).
#[derive(Debug)]
pub struct ShLoop {
    /// The one-shot launch of the probe; the loop's adds [`LOOP_ENV`].
    launch: Launch,
    cwd: PathBuf,
    timeouts: Timeouts,
    child: Option<Child>,
    /// A loop spawned by [`Driver::spawn`], until [`Driver::start`] has its hello.
    spawned: Option<Child>,
    /// Where the attempt in flight's stderr starts (a [`Child::stderr_mark`]).
    stderr_from: u64,
    /// The one-shot driver: the recipe folder and data of every request, and the driver of
    /// attempts a loop cannot take.
    oneshot: OneShot,
    /// Set when the loop could not start: every attempt is then one-shot, and why.
    fallback: Option<String>,
    /// True while the attempt in flight goes through [`ShLoop::oneshot`].
    via_oneshot: bool,
    /// How many loop processes this driver started.
    starts: u64,
}

impl ShLoop {
    /// A driver that will run the shell probe of `launch` (its one-shot launch) in loop mode
    /// in `cwd`. Nothing starts until [`Driver::spawn`], [`Driver::start`] or the first
    /// [`Driver::begin`].
    pub fn new(launch: Launch, cwd: PathBuf, timeouts: Timeouts) -> ShLoop {
        ShLoop {
            oneshot: OneShot::new(launch.clone(), cwd.clone(), timeouts),
            launch,
            cwd,
            timeouts,
            child: None,
            spawned: None,
            stderr_from: 0,
            fallback: None,
            via_oneshot: false,
            starts: 0,
        }
    }

    /// Starts a loop process without waiting for it. Errors: why it could not be started.
    fn spawn_loop(&mut self) -> Result<Child, String> {
        let launch = self.launch.clone().with_env(LOOP_ENV, "1");
        self.starts += 1;
        Child::spawn(&launch, &self.cwd).map_err(|e| format!("cannot start {}: {e}", launch.display()))
    }

    /// Waits for the hello of `child`. Errors: why it is not a loop (its tree is then killed),
    /// or `None` for an interrupt.
    fn hello_of(&self, mut child: Child) -> Result<Child, Option<String>> {
        let why = match child.read_line_or_stop(Instant::now() + self.timeouts.startup) {
            Err(ReadError::Interrupted) => {
                child.kill();
                return Err(None);
            }
            Ok(line) => match parse_line(&line) {
                Ok(FromProbe::Hello { .. }) if line.contains("\"mode\":\"loop\"") => return Ok(child),
                Ok(other) => format!("expected the loop's hello, got {other:?}"),
                Err(e) => e,
            },
            Err(e) => missing_hello(&mut child, &e, self.timeouts.startup),
        };
        Err(Some(abandon_start(child, &why)))
    }

    /// Makes sure a loop runs (the one [`Driver::spawn`] started, or a new one, as after a
    /// fault killed the last); if it cannot start, switches this driver to one-shot mode for
    /// good (said in [`Driver::note`]). Errors: only an interrupt.
    fn ensure(&mut self) -> Result<(), Attempt> {
        if self.fallback.is_some() || self.child.is_some() {
            return Ok(());
        }
        let spawned = match self.spawned.take() {
            Some(c) => Ok(c),
            None => self.spawn_loop(),
        };
        let started = spawned.map_err(Some).and_then(|c| self.hello_of(c));
        match started {
            Ok(c) => {
                self.child = Some(c);
                Ok(())
            }
            Err(None) => Err(Attempt::fault(Report::Interrupted, "interrupted before the shell loop said hello")),
            Err(Some(why)) => {
                let when = if self.starts > 1 { "did not restart" } else { "did not start" };
                self.fallback = Some(format!("the shell loop {when}: {why}"));
                Ok(())
            }
        }
    }

    /// The request lines of `vars`: `prepare`, `NAME=value` each, `end` (no final newline:
    /// [`Child::write_line`] adds it). `None` when a value holds a line break or NUL, which a
    /// line cannot carry.
    fn request_text(vars: &[(&str, String)]) -> Option<String> {
        if vars.iter().any(|(_, v)| v.contains(['\n', '\r', '\0'])) {
            return None;
        }
        let mut text = String::from("prepare\n");
        for (k, v) in vars {
            text.push_str(k);
            text.push('=');
            text.push_str(v);
            text.push('\n');
        }
        text.push_str("end");
        Some(text)
    }

    /// Kills the loop's process tree and builds a fault attempt with its stderr as evidence.
    fn fail(&mut self, report: Report, why: &str) -> Attempt {
        fail_child(&mut self.child, report, why)
    }
}

impl Driver for ShLoop {
    fn spawn(&mut self) -> Result<(), Attempt> {
        if self.fallback.is_none() && self.child.is_none() && self.spawned.is_none() {
            match self.spawn_loop() {
                Ok(c) => self.spawned = Some(c),
                Err(why) => self.fallback = Some(format!("the shell loop did not start: {why}")),
            }
        }
        Ok(())
    }

    fn start(&mut self) -> Result<(), Attempt> {
        self.ensure()
    }

    fn begin(&mut self, spec: &Spec) -> Result<(), Attempt> {
        self.ensure()?;
        self.via_oneshot = false;
        let vars = self.oneshot.request(spec)?;
        let text = match (&self.fallback, Self::request_text(&vars)) {
            (None, Some(text)) => text,
            _ => {
                self.via_oneshot = true;
                return self.oneshot.begin(spec);
            }
        };
        let Some(child) = self.child.as_mut() else {
            return Err(Attempt::fault(Report::Crashed, "no shell loop process"));
        };
        self.stderr_from = child.stderr_mark();
        if let Err(e) = child.write_line(&text) {
            return Err(self.fail(Report::Crashed, &format!("cannot write the request to the shell loop: {e}")));
        }
        Ok(())
    }

    fn ready(&mut self) -> Result<(), Attempt> {
        if self.via_oneshot {
            return self.oneshot.ready();
        }
        let Some(child) = self.child.as_mut() else {
            return Err(Attempt::fault(Report::Crashed, "no shell loop process"));
        };
        let line = match super::driver::ready_line(child, Instant::now() + self.timeouts.attempt, "shell loop") {
            Ok(l) => l,
            Err((report, why)) => return Err(self.fail(report, &why)),
        };
        match parse_line(&line) {
            Ok(FromProbe::Ready { supported: true, .. }) => Ok(()),
            // the attempt's subshell has exited; the loop waits for the next request
            Ok(FromProbe::Ready { reason, .. }) => {
                Err(Attempt::fault(Report::Unsupported, reason.unwrap_or_else(|| "unsupported".into())))
            }
            Ok(other) => Err(self.fail(Report::Crashed, &format!("expected ready, got {other:?}"))),
            Err(e) => Err(self.fail(Report::Crashed, &e)),
        }
    }

    fn release(&mut self) -> Result<(), Attempt> {
        if self.via_oneshot {
            return self.oneshot.release();
        }
        let Some(child) = self.child.as_mut() else {
            return Err(Attempt::fault(Report::Crashed, "no shell loop process"));
        };
        if let Err(e) = child.write_line("go") {
            return Err(self.fail(Report::Crashed, &format!("cannot release the shell loop: {e}")));
        }
        Ok(())
    }

    /// Waits for the `result` (`await_result`, with the loop's stderr since the request as
    /// the attempt's console); the loop then waits for the next request.
    fn finish(&mut self) -> Attempt {
        if self.via_oneshot {
            return self.oneshot.finish();
        }
        let from = self.stderr_from;
        let awaited = match await_result(&mut self.child, &self.timeouts, &|c: &Child| c.stderr_since(from)) {
            Ok(w) => w,
            Err(fault) => return fault,
        };
        let console = self.child.as_ref().map(|c| c.stderr_since(from)).unwrap_or_default();
        let mut attempt = awaited.attempt(console, None);
        self.oneshot.add_reader_counters(&mut attempt);
        attempt
    }

    /// Ends a loop recipe (`read.poll`): the `stop` file in the recipe folder, as in one-shot
    /// mode. Errors: a harness error when it cannot be written.
    fn stop(&mut self) -> Result<(), Attempt> {
        self.oneshot.stop()
    }

    fn control(&mut self, control: Control) -> Result<(), Attempt> {
        if self.via_oneshot {
            return self.oneshot.control(control);
        }
        control_child(self.child.as_mut(), control)
    }

    /// `loop`; `one-shot (why)` once the loop could not start, or when the last attempt went
    /// one-shot because a value held a line break (a cell's attempts share their paths, so
    /// the last one speaks for the cell the engine copies this into).
    fn note(&self) -> Option<String> {
        Some(match &self.fallback {
            Some(why) => format!("one-shot ({why})"),
            None if self.via_oneshot => ONE_SHOT_LINE_BREAK.to_string(),
            None => crate::domain::LOOP_DRIVER.to_string(),
        })
    }

    fn process_group(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    fn process_per_attempt(&self) -> bool {
        self.fallback.is_some()
    }

    fn shutdown(&mut self) {
        for mut c in self.child.take().into_iter().chain(self.spawned.take()) {
            let _ = c.write_line("quit");
            c.close_stdin();
            let _ = c.exit_status(Duration::from_millis(300));
            c.kill();
        }
        self.oneshot.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use super::ShLoop;

    /// A request is `prepare`, one `NAME=value` line per variable in order, `end`; values
    /// keep every character a line can hold (spaces, quotes, `&`, `%`, `!`, `=`, Japanese),
    /// and a value with a line break or NUL is refused (that attempt goes one-shot).
    #[test]
    fn a_request_is_one_line_per_variable() {
        let vars = vec![
            ("CONFORMANCE_VARIANT", "sh.mv".to_string()),
            ("CONFORMANCE_TARGET", "sp ace&%^!\"q'=日本/target".to_string()),
            ("CONFORMANCE_SOURCE", String::new()),
        ];
        let text = ShLoop::request_text(&vars).expect("one line each");
        assert_eq!(
            text,
            "prepare\nCONFORMANCE_VARIANT=sh.mv\nCONFORMANCE_TARGET=sp ace&%^!\"q'=日本/target\nCONFORMANCE_SOURCE=\nend"
        );
        for bad in ["a\nb", "a\rb", "a\0b"] {
            assert!(ShLoop::request_text(&[("CONFORMANCE_TARGET", bad.to_string())]).is_none(), "{bad:?}");
        }
    }
}

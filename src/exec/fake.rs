//! The fake driver: makes the call in-process with `std::fs`, no probe process, so that the
//! engine's success paths — warm-up, discards, relative paths, release offsets, counting and
//! verdicts — are tested without any runtime installed.
//!
//! A check-then-create is split across the steps the way a real race overlaps them: the check
//! happens at [`Driver::release`] and the create at [`Driver::finish`], and the engine releases
//! every contender before it finishes any, so every contender sees the name free and all of
//! them win, every trial — a deterministic double win.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::contender::{Attempt, Spec};
use super::driver::{Control, Driver};
use crate::domain::RawError;
use crate::domain::Report;

/// What the fake does with the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FakeCall {
    /// An exclusive create (`O_CREAT|O_EXCL`) that writes the token: exclusive by construction.
    CreateNew,
    /// `exists()` at the release, create/truncate with the token at the finish.
    CheckThenCreate,
}

/// An in-process contender.
#[derive(Debug)]
pub struct Fake {
    call: FakeCall,
    cwd: PathBuf,
    spec: Option<Spec>,
    checked_free: bool,
    t0_us: Option<f64>,
    /// Fail `begin` of attempts whose id is divisible by this (a probe dying before the
    /// release: the engine must discard such trials).
    pub fail_begin_every: Option<u64>,
    /// Added to the stamp of the call's entry, in µs: a contender that reports entering its
    /// call this much later than it did (a release skew the delay must cover).
    pub stamp_lag_us: f64,
    /// Only in trials that release every contender together (its planned release offset,
    /// [`Spec::delay_us`], is 0): a contender that waits for a core only then.
    pub lag_only_together: bool,
}

impl Fake {
    /// A fake making `call`, resolving relative paths against `cwd` (the probe's working folder).
    pub fn new(call: FakeCall, cwd: PathBuf) -> Fake {
        Fake {
            call,
            cwd,
            spec: None,
            checked_free: false,
            t0_us: None,
            fail_begin_every: None,
            stamp_lag_us: 0.0,
            lag_only_together: false,
        }
    }

    fn path(&self, p: &str) -> PathBuf {
        let p = Path::new(p);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.cwd.join(p)
        }
    }
}

/// Now on the harness's timeline (the fake stamps with the harness's own clock).
fn now_us() -> f64 {
    super::clock::now().timeline_us()
}

fn raw(e: &std::io::Error) -> RawError {
    let code = match e.kind() {
        std::io::ErrorKind::AlreadyExists => Some("EEXIST".to_string()),
        _ => None,
    };
    RawError {
        kind: "Error".into(),
        code,
        errno: e.raw_os_error().map(i64::from),
        message: e.to_string(),
        ..RawError::default()
    }
}

impl Driver for Fake {
    fn start(&mut self) -> Result<(), Attempt> {
        Ok(())
    }

    fn begin(&mut self, spec: &Spec) -> Result<(), Attempt> {
        if self.fail_begin_every.is_some_and(|n| n > 0 && spec.id.is_multiple_of(n)) {
            return Err(Attempt::fault(Report::Crashed, "fake: died before ready"));
        }
        if let Some(r) = &spec.recipe {
            return Err(Attempt::fault(Report::Unsupported, format!("fake: no recipes (asked for {})", r.recipe)));
        }
        self.spec = Some(spec.clone());
        Ok(())
    }

    fn ready(&mut self) -> Result<(), Attempt> {
        Ok(())
    }

    fn release(&mut self) -> Result<(), Attempt> {
        let Some(spec) = &self.spec else {
            return Err(Attempt::fault(Report::Crashed, "fake: released without prepare"));
        };
        let lag = if self.lag_only_together && spec.delay_us > 0 { 0.0 } else { self.stamp_lag_us };
        self.t0_us = Some(now_us() + lag);
        self.checked_free = !self.path(&spec.target).exists();
        Ok(())
    }

    fn finish(&mut self) -> Attempt {
        let Some(spec) = self.spec.take() else {
            return Attempt::fault(Report::Crashed, "fake: no attempt in flight");
        };
        let target = self.path(&spec.target);
        let res = match self.call {
            FakeCall::CreateNew => std::fs::OpenOptions::new().write(true).create_new(true).open(&target),
            FakeCall::CheckThenCreate if self.checked_free => std::fs::File::create(&target),
            FakeCall::CheckThenCreate => Err(std::io::Error::from(std::io::ErrorKind::AlreadyExists)),
        }
        .and_then(|mut f| f.write_all(spec.token.as_bytes()));
        let (t0_us, t1_us) = (self.t0_us.take(), Some(now_us()));
        match res {
            Ok(()) => Attempt { t0_us, t1_us, ..Attempt::new(Report::Success) },
            Err(e) => Attempt { t0_us, t1_us, error: Some(raw(&e)), ..Attempt::new(Report::Error) },
        }
    }

    fn shutdown(&mut self) {}

    /// Pause and resume do nothing in-process; a kill ends the attempt as `crashed`.
    fn control(&mut self, control: Control) -> Result<(), Attempt> {
        if control == Control::Kill {
            self.spec = None;
        }
        Ok(())
    }
}

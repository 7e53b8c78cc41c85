//! Thread races (`--contender-kind threads`): the K contenders of a race are K threads
//! (workers) of ONE session probe, released by the probe itself through shared memory
//! (`probes/PROTOCOL.md`, "Threads").
//!
//! The engine still sees K [`Contender`]s, so trials, judging and reports are those of process
//! races; each is a [`ThreadSlot`] driver over one shared `Group`. The group gathers the
//! slots' [`Spec`]s at `begin`, sends one `prepare-threads` at the first `ready` (each
//! contender with its release delay, [`Spec::delay_us`]), one `go` at the first `release`, and
//! reads one `results` line at the first `finish`, handing each slot its own result. A probe
//! whose hello does not list the `threads` capability, and a runtime without session probes
//! (cmd), gets `unsupported` attempts with the reason, never an error.

#![expect(clippy::result_large_err, reason = "an Attempt is data (see driver.rs)")]

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use super::clock::{self, Now};
use super::contender::{Attempt, Contender, Spec, Timeouts};
use super::driver::{Control, Driver};
use super::process::Launch;
use super::protocol::{parse_line, FromProbe, Go, PrepareThreads, ThreadContender, ThreadResult, THREADS_CAPABILITY};
use super::session::Session;
use crate::domain::Report;

/// `k` contenders that run as threads of one session probe started by `launch` in `cwd`
/// (nothing starts until the first of them is started or begins an attempt).
pub fn thread_contenders(launch: Launch, cwd: PathBuf, timeouts: Timeouts, k: usize) -> Vec<Contender> {
    let group = Arc::new(Mutex::new(Group::new(Session::new(launch, cwd, timeouts), k)));
    (0..k)
        .map(|slot| Contender::with_driver(Box::new(ThreadSlot { group: Arc::clone(&group), slot, hello: None })))
        .collect()
}

/// `k` contenders of a runtime whose probe cannot run threads (`why`): every attempt is
/// `unsupported` with that reason.
pub fn no_thread_contenders(why: &str, k: usize) -> Vec<Contender> {
    (0..k).map(|_| Contender::with_driver(Box::new(NoThreads(why.to_string())))).collect()
}

/// The one probe process of a thread race and the attempt in flight.
#[derive(Debug)]
struct Group {
    session: Session,
    /// The attempt id in flight.
    id: Option<u64>,
    /// Each slot's spec of the attempt in flight (`None`: the slot did not begin).
    specs: Vec<Option<Spec>>,
    /// After the first `ready`: the slots the probe prepared, or the fault every slot gets.
    prepared: Option<Result<Vec<usize>, Attempt>>,
    /// When `go` was written.
    released: Option<Now>,
    /// After the first `finish`: each slot's attempt.
    results: Option<Vec<Option<Attempt>>>,
}

impl Group {
    fn new(session: Session, k: usize) -> Group {
        Group { session, id: None, specs: vec![None; k], prepared: None, released: None, results: None }
    }

    /// Forgets the attempt in flight and starts attempt `id`.
    fn reset(&mut self, id: u64) {
        self.id = Some(id);
        self.specs.iter_mut().for_each(|s| *s = None);
        self.prepared = None;
        self.released = None;
        self.results = None;
    }

    /// Sends `prepare-threads` for the slots that began and reads the `ready`. Errors:
    /// `unsupported` (no `threads` capability, a recipe, or the probe's reason), or a fault.
    fn prepare(&mut self) -> Result<Vec<usize>, Attempt> {
        let caps = match self.session.hello() {
            Some(FromProbe::Hello { protocol, capabilities, .. }) => (*protocol, capabilities.clone()),
            _ => return Err(Attempt::fault(Report::Crashed, "the probe did not say hello")),
        };
        if !caps.1.iter().any(|c| c == THREADS_CAPABILITY) {
            return Err(Attempt::fault(
                Report::Unsupported,
                format!(
                    "the probe (protocol {}) does not list the `{THREADS_CAPABILITY}` capability in its hello: it cannot run contenders as threads",
                    caps.0
                ),
            ));
        }
        let slots: Vec<usize> = (0..self.specs.len()).filter(|&i| self.specs[i].is_some()).collect();
        if slots.is_empty() {
            return Err(Attempt::fault(Report::Crashed, "no contender began the attempt"));
        }
        if self.specs.iter().flatten().any(|s| s.recipe.is_some()) {
            return Err(Attempt::fault(
                Report::Unsupported,
                "recipes do not run as threads (hand-offs race processes)",
            ));
        }
        let id = self.id.unwrap_or(0);
        let contenders = self.specs.iter().flatten().map(thread_contender).collect();
        let line = serde_json::to_string(&PrepareThreads::new(id, contenders)).expect("prepare-threads serialises");
        self.session.send_line(&line, "prepare-threads")?;
        let line = self.session.attempt_line("no ready in time", "probe exited before ready")?;
        match parse_line(&line) {
            Ok(FromProbe::Ready { id: got, .. }) if got != Some(id) => {
                Err(self.session.fail(Report::Crashed, format!("ready for attempt {got:?}, expected {id}")))
            }
            Ok(FromProbe::Ready { supported: true, .. }) => Ok(slots),
            Ok(FromProbe::Ready { reason, .. }) => {
                Err(Attempt::fault(Report::Unsupported, reason.unwrap_or_else(|| "unsupported".into())))
            }
            Ok(other) => Err(self.session.fail(Report::Crashed, format!("expected ready, got {other:?}"))),
            Err(e) => Err(self.session.fail(Report::Crashed, e)),
        }
    }

    /// Writes `go` once.
    fn release(&mut self) -> Result<(), Attempt> {
        if self.released.is_some() {
            return Ok(());
        }
        self.released = Some(clock::now());
        let line = serde_json::to_string(&Go::new(self.id.unwrap_or(0))).expect("go serialises");
        self.session.send_line(&line, "go")
    }

    /// Reads the `results` line: each prepared slot's attempt (a fault: the same for all).
    fn collect(&mut self) -> Vec<Option<Attempt>> {
        let k = self.specs.len();
        let slots = match &self.prepared {
            Some(Ok(s)) => s.clone(),
            Some(Err(a)) => return vec![Some(a.clone()); k],
            None => return vec![Some(Attempt::fault(Report::Crashed, "finish before ready")); k],
        };
        let all = |a: Attempt| vec![Some(a); k];
        let line = match self.session.attempt_line("no results in time", "probe exited without results") {
            Ok(l) => l,
            Err(a) => return all(a),
        };
        let received = clock::now();
        let results = match parse_line(&line) {
            Ok(FromProbe::Results { id, .. }) if id != self.id => {
                return all(self
                    .session
                    .fail(Report::Crashed, format!("results for attempt {id:?}, expected {:?}", self.id)))
            }
            Ok(FromProbe::Results { results, .. }) if results.len() == slots.len() => results,
            Ok(FromProbe::Results { results, .. }) => {
                let why = format!("{} results for {} contenders", results.len(), slots.len());
                return all(self.session.fail(Report::Crashed, why));
            }
            Ok(other) => return all(self.session.fail(Report::Crashed, format!("expected results, got {other:?}"))),
            Err(e) => return all(self.session.fail(Report::Crashed, e)),
        };
        let sent = self.released.unwrap_or(received);
        let probe_clock = self.session.probe_clock();
        let mut out = vec![None; k];
        for (slot, r) in slots.into_iter().zip(results) {
            out[slot] = Some(attempt_of(r, probe_clock, sent, received));
        }
        out
    }
}

/// The `prepare-threads` entry of one spec.
fn thread_contender(s: &Spec) -> ThreadContender<'_> {
    ThreadContender { call: s.call(), delay_us: s.delay_us }
}

/// One contender's [`Attempt`] from its entry of `results`: its stamps placed on the harness's
/// timeline between `sent` (`go`) and `received` (`results`) as for a session's `result`
/// ([`clock::place`]).
pub fn attempt_of(r: ThreadResult, probe_clock: clock::ProbeClock, sent: Now, received: Now) -> Attempt {
    let (t0_us, t1_us, unstamped) = match clock::place(r.t0_us, r.t1_us, probe_clock, sent, received) {
        Ok((a, b)) => (Some(a), Some(b), None),
        Err(why) => (None, None, Some(why)),
    };
    Attempt {
        t0_us,
        t1_us,
        error: if r.ok { None } else { Some(r.error.unwrap_or_default()) },
        delivery: r.delivery,
        returned: r.returned,
        unstamped,
        ..Attempt::new(if r.ok { Report::Success } else { Report::Error })
    }
}

/// One contender of a thread race: slot `slot` of the shared `Group`.
#[derive(Debug)]
pub struct ThreadSlot {
    group: Arc<Mutex<Group>>,
    slot: usize,
    /// The probe's hello, copied once started ([`Driver::hello`] returns a reference).
    hello: Option<FromProbe>,
}

impl ThreadSlot {
    fn group(&self) -> MutexGuard<'_, Group> {
        // a slot that panicked while holding the lock left plain data behind: go on with it
        self.group.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn start_group(&mut self) -> Result<(), Attempt> {
        let hello = {
            let mut g = self.group();
            g.session.start()?;
            g.session.hello().cloned()
        };
        self.hello = hello;
        Ok(())
    }
}

impl Driver for ThreadSlot {
    fn spawn(&mut self) -> Result<(), Attempt> {
        self.group().session.spawn()
    }

    fn start(&mut self) -> Result<(), Attempt> {
        self.start_group()
    }

    fn begin(&mut self, spec: &Spec) -> Result<(), Attempt> {
        {
            let mut g = self.group();
            if g.id != Some(spec.id) {
                g.reset(spec.id);
            }
        }
        self.start_group()?;
        self.group().specs[self.slot] = Some(spec.clone());
        Ok(())
    }

    fn ready(&mut self) -> Result<(), Attempt> {
        let mut g = self.group();
        if g.prepared.is_none() {
            let p = g.prepare();
            g.prepared = Some(p);
        }
        match g.prepared.as_ref().expect("set above") {
            Ok(slots) if slots.contains(&self.slot) => Ok(()),
            Ok(_) => Err(Attempt::fault(Report::Crashed, "this contender was not prepared")),
            Err(a) => Err(a.clone()),
        }
    }

    fn release(&mut self) -> Result<(), Attempt> {
        self.group().release()
    }

    fn finish(&mut self) -> Attempt {
        let mut g = self.group();
        if g.results.is_none() {
            let r = g.collect();
            g.results = Some(r);
        }
        let slot = self.slot;
        g.results
            .as_mut()
            .and_then(|r| r[slot].take())
            .unwrap_or_else(|| Attempt::fault(Report::Crashed, "no result for this contender in the probe's results"))
    }

    fn shutdown(&mut self) {
        self.group().session.shutdown();
    }

    fn control(&mut self, control: Control) -> Result<(), Attempt> {
        // one process: pausing, resuming or killing it does so to every thread
        self.group().session.control(control)
    }

    fn hello(&self) -> Option<&FromProbe> {
        self.hello.as_ref()
    }

    fn note(&self) -> Option<String> {
        None
    }
}

/// A contender of a runtime that cannot run threads: every attempt is `unsupported`.
#[derive(Debug)]
struct NoThreads(String);

impl Driver for NoThreads {
    fn start(&mut self) -> Result<(), Attempt> {
        Ok(())
    }
    fn begin(&mut self, _: &Spec) -> Result<(), Attempt> {
        Err(Attempt::fault(Report::Unsupported, self.0.clone()))
    }
    fn ready(&mut self) -> Result<(), Attempt> {
        Err(Attempt::fault(Report::Unsupported, self.0.clone()))
    }
    fn release(&mut self) -> Result<(), Attempt> {
        Ok(())
    }
    fn finish(&mut self) -> Attempt {
        Attempt::fault(Report::Unsupported, self.0.clone())
    }
    fn shutdown(&mut self) {}
    fn control(&mut self, _: Control) -> Result<(), Attempt> {
        Err(Attempt::fault(Report::Unsupported, self.0.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::{
        attempt_of, no_thread_contenders, parse_line, thread_contender, Attempt, FromProbe, Now, PrepareThreads,
        Report, Spec, ThreadResult,
    };
    use crate::exec::clock::ProbeClock;

    fn result(line: &str) -> Vec<ThreadResult> {
        match parse_line(line).unwrap() {
            FromProbe::Results { results, .. } => results,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn results_become_one_attempt_per_contender() {
        let rs = result(
            r#"{"type":"results","id":4,"results":[{"ok":true,"t0_us":10.0,"t1_us":20.0,"error":null},{"ok":false,"t0_us":12.0,"t1_us":30.0,"error":{"type":"Error","code":"EEXIST","errno":-17,"hresult":null,"message":"m"},"delivery":"throw"}]}"#,
        );
        assert_eq!(rs.len(), 2);
        let sent = Now { mono_us: Some(5.0), wall_us: 1e15 };
        let received = Now { mono_us: Some(40.0), wall_us: 1e15 + 35.0 };
        let a: Vec<Attempt> = rs.into_iter().map(|r| attempt_of(r, ProbeClock::Monotonic, sent, received)).collect();
        assert_eq!((a[0].report, a[0].t0_us, a[0].error.is_none()), (Report::Success, Some(10.0), true));
        assert_eq!(a[1].report, Report::Error);
        assert_eq!(a[1].error.as_ref().and_then(|e| e.code.as_deref()), Some("EEXIST"));
        assert_eq!(a[1].delivery.as_deref(), Some("throw"));
        // a stamp before the release cannot be right: no spread for it, and why
        let late = result(r#"{"type":"results","id":4,"results":[{"ok":true,"t0_us":1.0,"t1_us":2.0,"error":null}]}"#);
        let b = attempt_of(late.into_iter().next().unwrap(), ProbeClock::Monotonic, sent, received);
        assert!(b.t0_us.is_none() && b.unstamped.is_some(), "{b:?}");
    }

    #[test]
    fn prepare_threads_carries_each_contenders_delay() {
        let spec = Spec {
            id: 9,
            variant: "node.writeFileSync.wx".into(),
            target: "t9/target".into(),
            source: None,
            token: "c1-t9".into(),
            mark: None,
            hold_ms: 0,
            recipe: None,
            delay_us: 250,
        };
        let line = serde_json::to_string(&PrepareThreads::new(9, vec![thread_contender(&spec)])).unwrap();
        assert_eq!(
            line,
            r#"{"type":"prepare-threads","id":9,"contenders":[{"variant":"node.writeFileSync.wx","target":"t9/target","source":null,"token":"c1-t9","mark":null,"hold_ms":0,"delay_us":250}]}"#
        );
    }

    #[test]
    fn a_runtime_without_threads_is_unsupported_with_its_reason() {
        let mut c = no_thread_contenders("cmd.exe has no threads", 2);
        assert!(c[0].start().is_ok());
        let e = c[1].begin(&Spec {
            id: 1,
            variant: "cmd.mkdir".into(),
            target: "t".into(),
            source: None,
            token: "x".into(),
            mark: None,
            hold_ms: 0,
            recipe: None,
            delay_us: 0,
        });
        let e = e.unwrap_err();
        assert_eq!(e.report, Report::Unsupported);
        assert_eq!(e.evidence.as_deref(), Some("cmd.exe has no threads"));
    }
}

//! Amplification attached after start-up, for runtimes that cannot start under the tracer in
//! time: the probe starts untraced, says hello, and then `strace -f -p` attaches to the
//! process its hello names ([`Amplifier::attach`]). The contender is traced once every thread
//! of that process has the tracer (`TracerPid` in `/proc/PID/task/TID/status`, proc(5)).
//!
//! The tracer is started from the thread that runs the trials, when the probe is ready for its
//! first attempt, not from the thread that waited for the hello: a child gets SIGKILL when the
//! thread that spawned it ends ([`super::process`], `PR_SET_PDEATHSIG`), and the start-up
//! threads end once the probes have said hello. A probe that was started again (after a
//! crash or a timeout) is attached to again, as is one whose tracer exited.

use std::time::{Duration, Instant};

use super::amplify::Amplifier;
use super::contender::{Attempt, Spec};
use super::driver::{Control, Driver};
use super::process::Child;
use super::protocol::FromProbe;

/// Linux's "no such process" (errno(3)), which a read of an ending thread's status can give.
const ESRCH: i32 = 3;

/// How long strace may take to attach to every thread of a probe.
const ATTACH_TIMEOUT: Duration = Duration::from_secs(20);

/// A driver whose probe is traced from its first attempt on.
#[derive(Debug)]
pub struct Attached {
    inner: Box<dyn Driver>,
    amplifier: Amplifier,
    /// The tracer and the process group of the probe it traces.
    tracer: Option<(Child, u32)>,
}

impl Attached {
    /// `inner` (a session driver), traced by `amplifier` once it is ready for an attempt.
    pub fn new(inner: Box<dyn Driver>, amplifier: Amplifier) -> Attached {
        Attached { inner, amplifier, tracer: None }
    }

    /// Attaches the tracer unless it already traces the running probe. Errors: why it could
    /// not (no pid in the hello, a pid outside the probe's process group, strace exiting or too
    /// slow).
    fn ensure_traced(&mut self) -> Result<(), String> {
        let group = self.inner.process_group().ok_or("the probe has no process")?;
        if let Some((t, g)) = &mut self.tracer {
            if *g == group && t.exit_status(Duration::ZERO).is_none() {
                return Ok(());
            }
        }
        self.stop_tracer();
        let pid = match self.inner.hello() {
            Some(FromProbe::Hello { pid: Some(pid), .. }) => *pid,
            _ => return Err("its hello names no pid to attach to".into()),
        };
        // only a process of the probe's own tree is traced, whatever its hello says
        if process_group_of(pid) != Some(group) {
            return Err(format!("its hello names pid {pid}, which is not in its process group {group}"));
        }
        let mut tracer = Child::spawn(&self.amplifier.attach(pid), &std::env::temp_dir())
            .map_err(|e| format!("could not start strace: {e}"))?;
        let deadline = Instant::now() + ATTACH_TIMEOUT;
        loop {
            if let Some(status) = tracer.exit_status(Duration::ZERO) {
                // e.g. ptrace refused (Yama's ptrace_scope): strace says why on stderr
                return Err(format!("strace exited ({status}): {}", tracer.stderr_tail()));
            }
            match all_traced_by(pid, tracer.id()) {
                Ok(true) => break,
                Ok(false) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
                Ok(false) => {
                    let tail = tracer.stderr_tail();
                    tracer.kill();
                    return Err(format!("strace did not attach within {} s: {tail}", ATTACH_TIMEOUT.as_secs()));
                }
                Err(e) => {
                    tracer.kill();
                    return Err(format!("could not read the probe's threads: {e}"));
                }
            }
        }
        self.tracer = Some((tracer, group));
        Ok(())
    }

    fn stop_tracer(&mut self) {
        if let Some((mut t, _)) = self.tracer.take() {
            t.kill();
        }
    }
}

/// The process group of `pid` (field 5 of `/proc/PID/stat`, proc(5)), if it runs.
fn process_group_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // the command name (field 2) is in parentheses and may hold spaces: count after its end
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(2)?.parse().ok()
}

/// Whether every thread of `pid` is traced by `tracer` (`TracerPid:` in each task's status).
fn all_traced_by(pid: u32, tracer: u32) -> std::io::Result<bool> {
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        let status = match std::fs::read_to_string(task?.path().join("status")) {
            Ok(s) => s,
            // a thread that ended meanwhile (ENOENT, or ESRCH mid-read)
            Err(e) if e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(ESRCH) => continue,
            Err(e) => return Err(e),
        };
        let traced = status
            .lines()
            .find_map(|l| l.strip_prefix("TracerPid:"))
            .and_then(|v| v.trim().parse::<u32>().ok())
            .is_some_and(|t| t == tracer);
        if !traced {
            return Ok(false);
        }
    }
    Ok(true)
}

impl Driver for Attached {
    fn spawn(&mut self) -> Result<(), Attempt> {
        self.inner.spawn()
    }
    fn start(&mut self) -> Result<(), Attempt> {
        self.inner.start()
    }
    fn begin(&mut self, spec: &Spec) -> Result<(), Attempt> {
        self.inner.begin(spec)
    }
    fn ready(&mut self) -> Result<(), Attempt> {
        self.inner.ready()?;
        // traced before the release, from the thread that runs the trials
        self.ensure_traced().map_err(|why| {
            self.shutdown();
            Attempt::harness_error(format!("could not attach strace to the probe: {why}"))
        })
    }
    fn release(&mut self) -> Result<(), Attempt> {
        self.inner.release()
    }
    fn finish(&mut self) -> Attempt {
        self.inner.finish()
    }
    fn stop(&mut self) -> Result<(), Attempt> {
        self.inner.stop()
    }
    fn shutdown(&mut self) {
        self.inner.shutdown();
        self.stop_tracer();
    }
    fn control(&mut self, control: Control) -> Result<(), Attempt> {
        self.inner.control(control)
    }
    fn hello(&self) -> Option<&FromProbe> {
        self.inner.hello()
    }
    fn note(&self) -> Option<String> {
        self.inner.note()
    }
    fn process_group(&self) -> Option<u32> {
        self.inner.process_group()
    }
    fn process_per_attempt(&self) -> bool {
        self.inner.process_per_attempt()
    }
}

#[cfg(test)]
mod tests {
    use super::{all_traced_by, process_group_of};

    /// The harness's own process: its group is read from /proc, and every thread of it is
    /// untraced (no tracer has pid 1 here).
    #[cfg(target_os = "linux")]
    #[test]
    fn proc_is_read_for_group_and_tracer() {
        let me = std::process::id();
        let group = process_group_of(me).expect("our own stat");
        assert_eq!(i64::from(group), i64::from(nix::unistd::getpgid(None).unwrap().as_raw()));
        assert!(!all_traced_by(me, 1).unwrap());
        assert!(process_group_of(u32::MAX).is_none());
    }
}

//! Amplification attached after start-up, for runtimes that cannot start under the tracer in
//! time: the probe starts untraced, says hello, and then `strace -f -p` attaches to the
//! process its hello names ([`Amplifier::attach`]). The contender is ready once every thread
//! of that process has the tracer (`TracerPid` in `/proc/PID/task/TID/status`, proc(5)).

use std::time::{Duration, Instant};

use super::amplify::Amplifier;
use super::contender::{Attempt, Spec};
use super::driver::{Control, Driver};
use super::process::Child;
use super::protocol::FromProbe;

/// How long strace may take to attach to every thread of a probe.
const ATTACH_TIMEOUT: Duration = Duration::from_secs(20);

/// A driver whose probe is traced from its hello on.
#[derive(Debug)]
pub struct Attached {
    inner: Box<dyn Driver>,
    amplifier: Amplifier,
    tracer: Option<Child>,
}

impl Attached {
    /// `inner` (a session driver), traced by `amplifier` once it has started.
    pub fn new(inner: Box<dyn Driver>, amplifier: Amplifier) -> Attached {
        Attached { inner, amplifier, tracer: None }
    }

    /// Attaches the tracer to the process the hello names. Errors: why it could not (no pid
    /// in the hello, a pid outside the probe's process group, strace failing or too slow).
    fn attach(&mut self) -> Result<(), String> {
        let pid = match self.inner.hello() {
            Some(FromProbe::Hello { pid: Some(pid), .. }) => *pid,
            _ => return Err("its hello names no pid to attach to".into()),
        };
        let group = self.inner.process_group().ok_or("the probe has no process")?;
        // only a process of the probe's own tree is traced, whatever its hello says
        if process_group_of(pid) != Some(group) {
            return Err(format!("its hello names pid {pid}, which is not in its process group {group}"));
        }
        let tracer = Child::spawn(&self.amplifier.attach(pid), &std::env::temp_dir())
            .map_err(|e| format!("could not start strace: {e}"))?;
        let tracer_pid = tracer.id();
        self.tracer = Some(tracer);
        let deadline = Instant::now() + ATTACH_TIMEOUT;
        loop {
            match all_traced_by(pid, tracer_pid) {
                Ok(true) => return Ok(()),
                Ok(false) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
                Ok(false) => {
                    let tail = self.tracer.as_ref().map(Child::stderr_tail).unwrap_or_default();
                    return Err(format!("strace did not attach within {} s: {tail}", ATTACH_TIMEOUT.as_secs()));
                }
                Err(e) => return Err(format!("could not read the probe's threads: {e}")),
            }
        }
    }

    fn stop_tracer(&mut self) {
        if let Some(mut t) = self.tracer.take() {
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
            // a thread that ended meanwhile
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
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
        if self.tracer.is_some() {
            return self.inner.start();
        }
        self.inner.start()?;
        self.attach().map_err(|why| {
            self.shutdown();
            Attempt::harness_error(format!("could not attach strace to the probe: {why}"))
        })
    }
    fn begin(&mut self, spec: &Spec) -> Result<(), Attempt> {
        self.inner.begin(spec)
    }
    fn ready(&mut self) -> Result<(), Attempt> {
        self.inner.ready()
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
    use super::*;

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

//! A child process in its own process group (Unix) or job object (Windows), with stdout read
//! line by line on a thread, stderr kept on another, and a whole-tree kill.
//!
//! Reading both streams on their own threads follows ripgrep's `crates/cli/src/process.rs`: a
//! noisy child can never block the harness. Killing the group follows nextest's
//! `runner/unix.rs`: probes such as `wine cmd` or `pwsh` start grandchildren.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use process_wrap::std::{ChildWrapper, CommandWrap};

/// Largest amount of stderr kept per process, in bytes (the tail is kept).
const STDERR_KEEP: usize = 16 * 1024;
/// Longest stdout line accepted, in bytes; longer lines are cut (and then fail to parse).
const MAX_LINE: usize = 1024 * 1024;

/// How to start a program: executable, arguments and extra environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// The executable.
    pub program: PathBuf,
    /// Its arguments, passed as an argument vector (never through a shell).
    pub args: Vec<OsString>,
    /// Environment variables to add.
    pub env: Vec<(OsString, OsString)>,
    /// Environment variables whose value is a new, empty folder made inside the given one at
    /// each start ([`Launch::with_fresh_dir_env`]).
    pub fresh_dirs: Vec<(OsString, PathBuf)>,
}

impl Launch {
    /// A launch of `program` with `args` and no extra environment.
    pub fn new(program: impl Into<PathBuf>, args: impl IntoIterator<Item = impl Into<OsString>>) -> Launch {
        Launch {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: Vec::new(),
            fresh_dirs: Vec::new(),
        }
    }

    /// Adds an environment variable that names a new, empty folder inside `base` (created with
    /// it if needed) each time the program starts: state a program keeps in that folder is its
    /// own process's, never shared with a concurrent start of the same launch, nor read back
    /// by a restart (PowerShell's start-up profile: `src/runtime/pwsh.rs`).
    #[must_use]
    pub fn with_fresh_dir_env(mut self, k: impl Into<OsString>, base: impl Into<PathBuf>) -> Launch {
        self.fresh_dirs.push((k.into(), base.into()));
        self
    }

    /// Adds an environment variable.
    #[must_use]
    pub fn with_env(mut self, k: impl Into<OsString>, v: impl Into<OsString>) -> Launch {
        self.env.push((k.into(), v.into()));
        self
    }

    /// The command line for messages, with arguments quoted for reading (never executed).
    pub fn display(&self) -> String {
        let mut s = format!("{:?}", self.program.display().to_string());
        for a in &self.args {
            s.push(' ');
            s.push_str(&format!("{:?}", a.to_string_lossy()));
        }
        s
    }
}

/// Spawns `launch` in `cwd` as the leader of a new process group (Unix) or in a job object
/// (Windows), so that killing it kills its whole tree; `stdio` makes each standard stream.
/// On Linux the child also gets SIGKILL when the harness dies (see [`die_with_parent`]).
/// The group is recorded in [`LIVE_GROUPS`] until it is killed or reaped.
fn spawn_tree(launch: &Launch, cwd: &Path, stdio: fn() -> Stdio) -> std::io::Result<Box<dyn ChildWrapper>> {
    let mut cmd = Command::new(&launch.program);
    cmd.args(&launch.args).current_dir(cwd).stdin(stdio()).stdout(stdio()).stderr(stdio());
    for (k, v) in &launch.env {
        cmd.env(k, v);
    }
    for (k, base) in &launch.fresh_dirs {
        std::fs::create_dir_all(base)?;
        cmd.env(k, tempfile::Builder::new().prefix("start-").tempdir_in(base)?.keep());
    }
    #[cfg(target_os = "linux")]
    die_with_parent(&mut cmd);
    let mut wrap = CommandWrap::from(cmd);
    #[cfg(unix)]
    wrap.wrap(process_wrap::std::ProcessGroup::leader());
    #[cfg(windows)]
    wrap.wrap(process_wrap::std::JobObject);
    let child = wrap.spawn()?;
    live_groups().push(child.id());
    Ok(child)
}

/// Process groups (leader pids) started by the harness and not yet killed or reaped: what a
/// second Ctrl-C kills before the harness exits at once ([`kill_live_groups`]).
static LIVE_GROUPS: Mutex<Vec<u32>> = Mutex::new(Vec::new());

fn live_groups() -> std::sync::MutexGuard<'static, Vec<u32>> {
    LIVE_GROUPS.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn forget_group(pid: u32) {
    live_groups().retain(|p| *p != pid);
}

/// Sends SIGKILL to every process group the harness started and has not reaped (Unix; on
/// Windows the job objects close with the harness). For the immediate exit of a second
/// Ctrl-C, where no destructor runs. Never fails.
pub fn kill_live_groups() {
    #[cfg(unix)]
    for pid in live_groups().drain(..) {
        if let Ok(p) = i32::try_from(pid) {
            let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(p), nix::sys::signal::Signal::SIGKILL);
        }
    }
}

/// Set once a stop was requested (the first Ctrl-C or SIGTERM, [`crate::interrupt`]). It lives
/// here, beside the process groups a second one kills, so that waits on probes
/// ([`Child::read_line_or_stop`]) honour it without reading the signal handler's module.
static STOP: AtomicBool = AtomicBool::new(false);

/// Records a stop request; returns true if one had been recorded before (a second signal).
pub fn request_stop() -> bool {
    STOP.swap(true, Ordering::SeqCst)
}

/// True once a stop was requested ([`request_stop`]); [`crate::interrupt::requested`] reads it.
pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// Makes the child receive SIGKILL when the harness dies, even by SIGKILL (Linux
/// `PR_SET_PDEATHSIG`, `prctl(2)`), so that a killed harness leaves no probe waiting on a pipe.
/// The signal follows the thread that spawned the child (`PR_SET_PDEATHSIG(2const)`): the
/// harness spawns probes from its main thread, and version queries finish before their thread
/// ends. If the harness died between `fork` and the `prctl`, the child exits at once.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub(crate) fn die_with_parent(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    let parent = nix::unistd::getpid();
    // SAFETY: the hook runs in the forked child before exec and calls only prctl(2) and
    // getppid(2), which are async-signal-safe; it allocates nothing (an errno-only io::Error).
    // An error makes the child exit before exec and the spawn fail.
    unsafe {
        cmd.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)?;
            if nix::unistd::getppid() != parent {
                return Err(nix::errno::Errno::ESRCH.into());
            }
            Ok(())
        });
    }
}

/// One event from the child's stdout.
#[derive(Debug)]
enum Line {
    Text(String),
    Eof,
}

/// Why reading from a child stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// Nothing arrived before the deadline.
    Timeout,
    /// The child closed stdout (it exited or is exiting).
    Closed,
    /// The run was interrupted (Ctrl-C, SIGTERM) while waiting ([`Child::read_line_or_stop`]).
    Interrupted,
}

/// How often a wait for a child's output looks at the interrupt flag and whether the child
/// has exited.
const STOP_POLL: Duration = Duration::from_millis(100);

/// How long a line an exited child wrote may take to arrive from the reader thread.
const EXITED_LINE_GRACE: Duration = Duration::from_millis(50);

/// A running child with line-oriented stdout.
pub struct Child {
    child: Box<dyn ChildWrapper>,
    stdin: Option<ChildStdin>,
    lines: Receiver<Line>,
    stderr: Arc<Mutex<Stderr>>,
    stdout_closed: bool,
}

/// What the harness keeps of a child's stderr: the last [`STDERR_KEEP`] bytes, and how many
/// bytes the child has written in all (so that a part of the stream can be found again).
#[derive(Debug, Default)]
struct Stderr {
    kept: Vec<u8>,
    total: u64,
}

impl std::fmt::Debug for Child {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Child").field("pid", &self.child.id()).finish()
    }
}

impl Child {
    /// Starts `launch` in `cwd` with piped stdin/stdout/stderr, in a new process group (Unix)
    /// or job object (Windows). Errors: the OS error from spawning (e.g. not found).
    pub fn spawn(launch: &Launch, cwd: &Path) -> std::io::Result<Child> {
        let mut child = spawn_tree(launch, cwd, Stdio::piped)?;
        let stdin = child.stdin().take();
        let stdout = child.stdout().take().expect("stdout is piped");
        let stderr = child.stderr().take().expect("stderr is piped");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut buf = Vec::new();
                match (&mut r).take(MAX_LINE as u64).read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => {
                        let _ = tx.send(Line::Eof);
                        return;
                    }
                    Ok(_) => {
                        while buf.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                            buf.pop();
                        }
                        if tx.send(Line::Text(String::from_utf8_lossy(&buf).into_owned())).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let keep = Arc::new(Mutex::new(Stderr::default()));
        let keep2 = Arc::clone(&keep);
        std::thread::spawn(move || {
            let mut r = stderr;
            let mut chunk = [0u8; 4096];
            while let Ok(n) = r.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                let mut k = keep2.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                k.kept.extend_from_slice(&chunk[..n]);
                k.total += n as u64;
                if k.kept.len() > STDERR_KEEP {
                    let cut = k.kept.len() - STDERR_KEEP;
                    k.kept.drain(..cut);
                }
            }
        });
        Ok(Child { child, stdin, lines: rx, stderr: keep, stdout_closed: false })
    }

    /// Writes `line` plus `\n` to stdin and flushes. Errors: the pipe is closed.
    pub fn write_line(&mut self, line: &str) -> std::io::Result<()> {
        let stdin = self.stdin.as_mut().ok_or_else(|| std::io::Error::other("stdin closed"))?;
        let mut buf = Vec::with_capacity(line.len() + 1);
        buf.extend_from_slice(line.as_bytes());
        buf.push(b'\n');
        stdin.write_all(&buf)?;
        stdin.flush()
    }

    /// Closes stdin (the child sees end of input).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The next stdout line, waiting until `deadline`.
    pub fn read_line(&mut self, deadline: Instant) -> Result<String, ReadError> {
        if self.stdout_closed {
            return Err(ReadError::Closed);
        }
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(wait) {
            Ok(Line::Text(s)) => Ok(s),
            Ok(Line::Eof) | Err(RecvTimeoutError::Disconnected) => {
                self.stdout_closed = true;
                Err(ReadError::Closed)
            }
            Err(RecvTimeoutError::Timeout) => Err(ReadError::Timeout),
        }
    }

    /// Like [`Child::read_line`], but gives up with [`ReadError::Interrupted`] within 100 ms of
    /// a stop request ([`stop_requested`]), and with [`ReadError::Closed`] within
    /// 100 ms of the child's exit, even where a process it started keeps its stdout open.
    pub fn read_line_or_stop(&mut self, deadline: Instant) -> Result<String, ReadError> {
        loop {
            if stop_requested() {
                return Err(ReadError::Interrupted);
            }
            let step = deadline.min(Instant::now() + STOP_POLL);
            match self.read_line(step) {
                Err(ReadError::Timeout) if Instant::now() < deadline => {
                    // a child that exited while a process it started still holds its stdout
                    // never closes the pipe: notice the exit itself (a line it wrote just
                    // before may still be on its way from the reader thread)
                    if matches!(self.child.try_wait(), Ok(Some(_))) {
                        return match self.lines.recv_timeout(EXITED_LINE_GRACE) {
                            Ok(Line::Text(s)) => Ok(s),
                            _ => {
                                self.stdout_closed = true;
                                Err(ReadError::Closed)
                            }
                        };
                    }
                }
                other => return other,
            }
        }
    }

    /// The exit status if the child has exited, waiting at most `grace` for it.
    pub fn exit_status(&mut self, grace: Duration) -> Option<std::process::ExitStatus> {
        let end = Instant::now() + grace;
        loop {
            if let Ok(Some(s)) = self.child.try_wait() {
                return Some(s);
            }
            if Instant::now() >= end {
                return None;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// The last kilobytes of stderr, lossily decoded and trimmed.
    pub fn stderr_tail(&self) -> String {
        let k = self.stderr.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        String::from_utf8_lossy(&k.kept).trim().to_string()
    }

    /// How many bytes of stderr the harness has read from the child so far: a mark for
    /// [`Child::stderr_since`].
    pub fn stderr_mark(&self) -> u64 {
        self.stderr.lock().unwrap_or_else(std::sync::PoisonError::into_inner).total
    }

    /// The stderr bytes read after `mark` (a [`Child::stderr_mark`]), as far as they are still
    /// kept (the last 16 KiB), lossily decoded, untrimmed: what a long-lived child wrote during
    /// one attempt.
    pub fn stderr_since(&self, mark: u64) -> String {
        let k = self.stderr.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let new = usize::try_from(k.total.saturating_sub(mark)).unwrap_or(usize::MAX).min(k.kept.len());
        String::from_utf8_lossy(&k.kept[k.kept.len() - new..]).into_owned()
    }

    /// Pauses (`SIGSTOP`) or resumes (`SIGCONT`) the child's whole process group (Unix).
    /// Errors: the OS error; on other platforms, "not supported".
    pub fn pause(&mut self, pause: bool) -> std::io::Result<()> {
        #[cfg(unix)]
        {
            use nix::sys::signal::{killpg, Signal};
            let pid = i32::try_from(self.child.id()).map_err(std::io::Error::other)?;
            let sig = if pause { Signal::SIGSTOP } else { Signal::SIGCONT };
            killpg(nix::unistd::Pid::from_raw(pid), sig).map_err(std::io::Error::from)
        }
        #[cfg(not(unix))]
        {
            let _ = pause;
            Err(std::io::Error::other("pausing a process tree is not supported on this platform"))
        }
    }

    /// The child's pid, which is also its process group's id (it leads a group of its own).
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Kills the whole process tree and reaps the child. Never fails.
    pub fn kill(&mut self) {
        self.stdin = None;
        let _ = self.child.kill();
        let _ = self.child.wait();
        forget_group(self.child.id());
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        // Kill the group even when the leader has exited on its own: a probe may leave
        // children behind in its process group (a setsid() child escapes; see the README).
        self.kill();
    }
}

/// How long [`run_capture`] reads a child's output after it exited, unless the pipe closes
/// first (it does at once, unless a grandchild holds it).
pub const AFTER_EXIT_DRAIN: Duration = Duration::from_secs(2);

/// Runs `launch` to completion with stdin closed and returns (status ok, stdout, stderr),
/// killing its tree after `timeout`. Used for version queries and probe builds. It waits for
/// the process to exit and its output to end, but at most [`AFTER_EXIT_DRAIN`] after the exit:
/// a child that exits but leaves a grandchild holding stdout (a daemon) does not keep the
/// harness waiting long; the output read by then is what counts.
///
/// Errors: the spawn error's text, "timed out after N s", or "interrupted" (Ctrl-C, SIGTERM;
/// the tree is killed within 100 ms).
pub fn run_capture(launch: &Launch, cwd: &Path, timeout: Duration) -> Result<(bool, String, String), String> {
    let mut c = Child::spawn(launch, cwd).map_err(|e| format!("cannot start {}: {e}", launch.program.display()))?;
    c.close_stdin();
    let deadline = Instant::now() + timeout;
    let mut out = String::new();
    let mut status = None;
    // once the child has exited: how long its output may still take to arrive
    let mut drain_until = None;
    loop {
        if Instant::now() >= deadline {
            c.kill();
            return Err(format!("timed out after {} s: {}", timeout.as_secs(), launch.display()));
        }
        // after the exit, read on until the pipe closes, for a bounded time: a grandchild may
        // hold the pipe open, while the reader may not yet have passed on the last lines (with
        // both cores busy, 20 ms after the exit lost `node --version`'s only line 1 time in 5)
        let wait_until = drain_until.unwrap_or(deadline);
        match c.read_line_or_stop(wait_until.min(Instant::now() + Duration::from_millis(50))) {
            Ok(l) => {
                // keep the head: version lines come first; a child that never stops printing
                // must not grow the harness without bound
                if out.len() < 64 * 1024 {
                    out.push_str(&l);
                    out.push('\n');
                }
                continue;
            }
            Err(ReadError::Closed) => break,
            Err(ReadError::Interrupted) => {
                c.kill();
                return Err(format!("interrupted: {}", launch.display()));
            }
            Err(ReadError::Timeout) if drain_until.is_some_and(|d| Instant::now() >= d) => break,
            Err(ReadError::Timeout) => {}
        }
        if status.is_none() {
            status = c.exit_status(Duration::ZERO);
            if status.is_some() {
                drain_until = Some((Instant::now() + AFTER_EXIT_DRAIN).min(deadline));
            }
        }
    }
    let status = match status {
        Some(s) => s,
        None => match c.exit_status(deadline.saturating_duration_since(Instant::now())) {
            Some(s) => s,
            None => {
                c.kill();
                return Err(format!("timed out after {} s: {}", timeout.as_secs(), launch.display()));
            }
        },
    };
    // give the stderr thread a moment to drain
    std::thread::sleep(Duration::from_millis(5));
    let err = c.stderr_tail();
    // whatever the process left behind in its group goes too
    c.kill();
    Ok((status.success(), out, err))
}

/// Runs `launch` with every standard stream on the null device and waits at most `timeout`
/// for it to exit; returns whether it exited with success. For programs that leave daemons
/// behind holding inherited pipes (Wine's server and services), where waiting for the end of
/// output would wait for the daemon. Errors: the spawn error's text, or a timeout (the
/// process tree is then killed).
pub fn run_status(launch: &Launch, cwd: &Path, timeout: Duration) -> Result<bool, String> {
    let mut child =
        spawn_tree(launch, cwd, Stdio::null).map_err(|e| format!("cannot start {}: {e}", launch.program.display()))?;
    let end = Instant::now() + timeout;
    let pid = child.id();
    loop {
        if let Ok(Some(s)) = child.try_wait() {
            // the group may live on (Wine's server and services): no longer ours to kill
            forget_group(pid);
            return Ok(s.success());
        }
        if Instant::now() >= end {
            let _ = child.kill();
            let _ = child.wait();
            forget_group(pid);
            return Err(format!("timed out after {} s: {}", timeout.as_secs(), launch.display()));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::{run_capture, Launch};
    use std::time::Duration;

    /// Each start of one launch gets its own new, empty folder inside the base, and the
    /// variable names it.
    #[test]
    fn every_start_gets_a_fresh_folder() {
        let base = tempfile::tempdir().unwrap();
        let l = Launch::new("/bin/sh", ["-c", "ls -A \"$STATE\"; printf %s \"$STATE\""])
            .with_fresh_dir_env("STATE", base.path().join("cache"));
        let start = || {
            let (ok, out, err) = run_capture(&l, base.path(), Duration::from_secs(10)).unwrap();
            assert!(ok, "{err}");
            out.trim_end().to_string()
        };
        let (a, b) = (start(), start());
        assert_ne!(a, b, "two starts shared a folder");
        for dir in [&a, &b] {
            let dir = std::path::Path::new(dir);
            assert!(dir.is_dir() && dir.starts_with(base.path().join("cache")), "{}", dir.display());
        }
    }
}

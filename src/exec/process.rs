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
}

impl Launch {
    /// A launch of `program` with `args` and no extra environment.
    pub fn new(program: impl Into<PathBuf>, args: impl IntoIterator<Item = impl Into<OsString>>) -> Launch {
        Launch { program: program.into(), args: args.into_iter().map(Into::into).collect(), env: Vec::new() }
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
fn spawn_tree(launch: &Launch, cwd: &Path, stdio: fn() -> Stdio) -> std::io::Result<Box<dyn ChildWrapper>> {
    let mut cmd = Command::new(&launch.program);
    cmd.args(&launch.args).current_dir(cwd).stdin(stdio()).stdout(stdio()).stderr(stdio());
    for (k, v) in &launch.env {
        cmd.env(k, v);
    }
    let mut wrap = CommandWrap::from(cmd);
    #[cfg(unix)]
    wrap.wrap(process_wrap::std::ProcessGroup::leader());
    #[cfg(windows)]
    wrap.wrap(process_wrap::std::JobObject);
    wrap.spawn()
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
}

/// A running child with line-oriented stdout.
pub struct Child {
    child: Box<dyn ChildWrapper>,
    stdin: Option<ChildStdin>,
    lines: Receiver<Line>,
    stderr: Arc<Mutex<Vec<u8>>>,
    stdout_closed: bool,
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
        let keep = Arc::new(Mutex::new(Vec::new()));
        let keep2 = Arc::clone(&keep);
        std::thread::spawn(move || {
            let mut r = stderr;
            let mut chunk = [0u8; 4096];
            while let Ok(n) = r.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                let mut k = keep2.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                k.extend_from_slice(&chunk[..n]);
                if k.len() > STDERR_KEEP {
                    let cut = k.len() - STDERR_KEEP;
                    k.drain(..cut);
                }
            }
        });
        Ok(Child { child, stdin, lines: rx, stderr: keep, stdout_closed: false })
    }

    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
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
        String::from_utf8_lossy(&k).trim().to_string()
    }

    /// Kills the whole process tree and reaps the child. Never fails.
    pub fn kill(&mut self) {
        self.stdin = None;
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        // Kill the group even when the leader has exited on its own: a probe may leave
        // children behind in its process group (a setsid() child escapes; see the README).
        self.kill();
    }
}

/// Runs `launch` to completion with stdin closed and returns (status ok, stdout, stderr),
/// killing its tree after `timeout`. Used for version queries and probe builds.
///
/// Errors: the spawn error's text, or "timed out after N s".
pub fn run_capture(launch: &Launch, cwd: &Path, timeout: Duration) -> Result<(bool, String, String), String> {
    let mut c = Child::spawn(launch, cwd).map_err(|e| format!("cannot start {}: {e}", launch.program.display()))?;
    c.close_stdin();
    let deadline = Instant::now() + timeout;
    let mut out = String::new();
    loop {
        if Instant::now() >= deadline {
            c.kill();
            return Err(format!("timed out after {} s: {}", timeout.as_secs(), launch.display()));
        }
        match c.read_line(deadline) {
            Ok(l) => {
                // keep the head: version lines come first; a child that never stops printing
                // must not grow the harness without bound
                if out.len() < 64 * 1024 {
                    out.push_str(&l);
                    out.push('\n');
                }
            }
            Err(ReadError::Closed) => break,
            Err(ReadError::Timeout) => {
                c.kill();
                return Err(format!("timed out after {} s: {}", timeout.as_secs(), launch.display()));
            }
        }
    }
    let status = c.exit_status(deadline.saturating_duration_since(Instant::now()));
    let Some(status) = status else {
        c.kill();
        return Err(format!("timed out after {} s: {}", timeout.as_secs(), launch.display()));
    };
    // give the stderr thread a moment to drain
    std::thread::sleep(Duration::from_millis(5));
    Ok((status.success(), out, c.stderr_tail()))
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
    loop {
        if let Ok(Some(s)) = child.try_wait() {
            return Ok(s.success());
        }
        if Instant::now() >= end {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("timed out after {} s: {}", timeout.as_secs(), launch.display()));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

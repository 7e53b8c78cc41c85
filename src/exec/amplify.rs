//! Amplified races: each contender runs under `strace`, which delays the *return* of every
//! file-system system call by a fixed time. A check-then-act implementation has a window
//! between two system calls, and the delay stretches it past the barrier spread, so every
//! contender passes the check; an atomic call decides inside one system call, so a delay after
//! it cannot make a second winner.
//!
//! Mechanism: `strace -f --seccomp-bpf -qq -o /dev/null -e trace=SET -e
//! inject=SET:delay_exit=US` (strace(1): `--seccomp-bpf` stops the tracee only on the listed
//! calls, so the probe's pipe I/O is not slowed; `delay_exit` is in microseconds). Names
//! prefixed with `?` are skipped where the architecture lacks them (`open` on arm64). Linux
//! only; elsewhere, or where ptrace is refused, amplification is unavailable with a reason.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::process::{run_capture, Launch};

/// The file-system system calls whose return is delayed: checks (`access`, `stat` family),
/// creates and opens, renames, links, directory calls, removals, truncation and in-kernel
/// copies. Reads and writes of data (and so the probe's protocol pipes) are not in it.
pub const SYSCALLS: &[&str] = &[
    "access",
    "faccessat",
    "faccessat2",
    "stat",
    "lstat",
    "newfstatat",
    "statx",
    "open",
    "openat",
    "openat2",
    "creat",
    "rename",
    "renameat",
    "renameat2",
    "link",
    "linkat",
    "symlink",
    "symlinkat",
    "mkdir",
    "mkdirat",
    "unlink",
    "unlinkat",
    "rmdir",
    "truncate",
    "ftruncate",
    "copy_file_range",
    "sendfile",
];

/// The default delay after each listed system call, in microseconds. Measured here on a
/// 2-core machine with both cores kept busy by two CPU loops: at 500 µs the .NET
/// check-then-create control was caught in 81–94 of 100 amplified trials (CoreCLR), at
/// 1,000 µs (with [`TIGHT_FRACTION`]) in 95–96; Node's and Mono's in 98–100 either way.
pub const DEFAULT_DELAY_US: u64 = 1000;

/// An amplified trial counts only when every contender entered its call within this share of
/// the delay after the first one (by the probes' µs stamps): the rest of the delay is the
/// margin for a contender preempted between its stamp and its first system call. Looser
/// trials are run again and reported as `loose_trials`.
pub const TIGHT_FRACTION: f64 = 0.5;

/// By how much the delay grows when a family's amplified control was weak: on a busy machine a
/// contender can lose its CPU for longer than the delay (measured here with both cores loaded:
/// CoreCLR's amplified control caught 60–80% of the trials of its best ordering at 1,000 µs
/// against 100% on a quiet machine), so the window must outgrow the scheduling noise.
pub const ESCALATION_FACTOR: u64 = 4;

/// The longest delay an escalation goes to, in microseconds (two steps from the default).
pub const MAX_ESCALATED_DELAY_US: u64 = 16_000;

/// A working `strace` and the delay it injects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Amplifier {
    strace: PathBuf,
    delay_us: u64,
    version: String,
}

impl Amplifier {
    /// Finds `strace` (`CONFORMANCE_STRACE` if set, else on `PATH`) and checks that it can trace and delay a child here (ptrace
    /// may be refused in containers). `delay_us` is the delay in microseconds.
    ///
    /// Errors: why amplification is unavailable (not Linux, no strace, strace too old for
    /// `--seccomp-bpf`, ptrace refused), as one line for the report.
    pub fn detect(delay_us: u64) -> Result<Amplifier, String> {
        if !cfg!(target_os = "linux") {
            return Err(format!("needs Linux strace; this is {}", std::env::consts::OS));
        }
        let strace = match std::env::var_os("CONFORMANCE_STRACE") {
            Some(p) => PathBuf::from(p),
            None => {
                which::which("strace").map_err(|_| "strace not found on PATH (Debian package strace)".to_string())?
            }
        };
        let version = match run_capture(&Launch::new(&strace, ["-V"]), &std::env::temp_dir(), Duration::from_secs(10)) {
            Ok((true, out, _)) => out.lines().next().unwrap_or("strace").trim().to_string(),
            Ok((false, out, err)) => return Err(format!("strace -V failed: {}", first(&err, &out))),
            Err(e) => return Err(format!("strace -V failed: {e}")),
        };
        let amp = Amplifier { strace, delay_us, version };
        // a real traced child: proves ptrace is allowed and the flags are understood
        let t = amp.wrap(&Launch::new("/bin/sh", ["-c", "test -e /"]));
        match run_capture(&t, &std::env::temp_dir(), Duration::from_secs(20)) {
            Ok((true, _, _)) => Ok(amp),
            Ok((false, out, err)) => Err(format!("strace cannot trace here: {}", first(&err, &out))),
            Err(e) => Err(format!("strace cannot trace here: {e}")),
        }
    }

    /// The delay after each listed system call, in microseconds.
    pub fn delay_us(&self) -> u64 {
        self.delay_us
    }

    /// The same tracer with another delay, in microseconds (a family whose amplified control
    /// was weak is raced again with a longer one; see [`ESCALATION_FACTOR`]).
    pub fn with_delay(&self, delay_us: u64) -> Amplifier {
        Amplifier { delay_us, ..self.clone() }
    }

    /// An amplifier that is never started (unit tests drive fake pools with it).
    #[cfg(test)]
    pub(crate) fn for_tests(delay_us: u64) -> Amplifier {
        Amplifier { strace: PathBuf::from("strace"), delay_us, version: "test".into() }
    }

    /// `strace -V`'s first line, e.g. `strace -- version 6.1`.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The strace executable.
    pub fn strace(&self) -> &Path {
        &self.strace
    }

    /// strace attached to the running process `pid` and all of its threads (`-f -p`), with
    /// the same delay as [`Amplifier::wrap`]. `--seccomp-bpf` needs the tracer from the
    /// start (strace(1)), so every system call of the process stops at the tracer, though only
    /// the listed ones are delayed. For runtimes whose start-up makes thousands of listed
    /// calls (pwsh: about 18 s at 1,000 µs).
    pub fn attach(&self, pid: u32) -> Launch {
        let mut args = self.delay_args();
        args.extend(["-p".into(), pid.to_string().into()]);
        Launch::new(self.strace.clone(), args)
    }

    /// strace's arguments that delay the return of every listed call by the delay, in every
    /// thread and child, quietly: `-f -qq -o /dev/null -e trace=SET -e inject=SET:delay_exit=US`.
    fn delay_args(&self) -> Vec<std::ffi::OsString> {
        let set = SYSCALLS.iter().map(|s| format!("?{s}")).collect::<Vec<_>>().join(",");
        ["-f".to_string(), "-qq".into(), "-o".into(), "/dev/null".into(), "-e".into(), format!("trace={set}")]
            .into_iter()
            .chain(["-e".to_string(), format!("inject={set}:delay_exit={}", self.delay_us)])
            .map(Into::into)
            .collect()
    }

    /// `launch` run under strace with the delay: program and arguments become strace's
    /// arguments after `--` (an argument vector, never a shell line); the environment is kept.
    pub fn wrap(&self, launch: &Launch) -> Launch {
        let mut args = self.delay_args();
        // stops the tracee only on the listed calls (strace(1)); needs the tracer from the start
        args.insert(1, "--seccomp-bpf".into());
        args.push("--".into());
        args.push(launch.program.clone().into_os_string());
        args.extend(launch.args.iter().cloned());
        Launch {
            env: launch.env.clone(),
            fresh_dirs: launch.fresh_dirs.clone(),
            ..Launch::new(self.strace.clone(), args)
        }
    }
}

fn first(err: &str, out: &str) -> String {
    let s = format!("{err}\n{out}");
    s.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("no output").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_keeps_the_argument_vector() {
        let amp = Amplifier { strace: "/usr/bin/strace".into(), delay_us: 500, version: String::new() };
        let l = Launch::new("/opt/node", ["probe.mjs", "a b&c %PATH%"]).with_env("K", "V");
        let w = amp.wrap(&l);
        assert_eq!(w.program, PathBuf::from("/usr/bin/strace"));
        let args: Vec<String> = w.args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        let dash = args.iter().position(|a| a == "--").unwrap();
        assert_eq!(&args[dash + 1..], ["/opt/node", "probe.mjs", "a b&c %PATH%"]);
        assert!(args.contains(&"--seccomp-bpf".to_string()));
        assert!(args.iter().any(|a| a.starts_with("inject=") && a.ends_with(":delay_exit=500")));
        assert!(args.iter().any(|a| a.starts_with("trace=?access,")));
        assert_eq!(w.env, l.env);
    }

    /// Attached: the same delay on the same calls, following every thread, ending with the
    /// pid; no `--seccomp-bpf` (strace cannot install it into a running process).
    #[test]
    fn attach_traces_a_pid_with_the_same_delay() {
        let amp = Amplifier { strace: "/usr/bin/strace".into(), delay_us: 4000, version: String::new() };
        let a = amp.attach(4242);
        let args: Vec<String> = a.args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        assert_eq!(&args[args.len() - 2..], ["-p", "4242"]);
        assert_eq!(args[0], "-f");
        assert!(!args.contains(&"--seccomp-bpf".to_string()) && !args.contains(&"--".to_string()));
        assert!(args.iter().any(|a| a.starts_with("inject=?access,") && a.ends_with(":delay_exit=4000")));
    }
}

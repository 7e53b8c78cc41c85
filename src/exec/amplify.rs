//! Amplified races: each contender runs under `strace`, which delays the *return* of every
//! file-system system call naming the race's paths (see below) by a fixed time. A
//! check-then-act implementation has a window between two system calls, and the delay
//! stretches it past the barrier spread, so every contender passes the check; an atomic call
//! decides inside one system call, so a delay after it cannot make a second winner.
//!
//! Mechanism: `strace -f --seccomp-bpf -qq -o /dev/null -e trace=SET -e
//! inject=SET:delay_exit=US` (strace(1): `--seccomp-bpf` stops the tracee only on the listed
//! calls, so the probe's pipe I/O is not slowed; `delay_exit` is in microseconds). Names
//! prefixed with `?` are skipped where the architecture lacks them (`open` on arm64). Linux
//! only; elsewhere, or where ptrace is refused, amplification is unavailable with a reason.
//!
//! Only the race's own paths are delayed by default ([`DelayScope::Race`]): strace's `-P`
//! (strace(1): "Trace only system calls accessing path"; an injection applies only to the calls
//! it traces) limits the delay to calls that name the race folder, its target or a
//! contender's source, by path or by a descriptor open on one. A runtime's own file-system
//! calls (PowerShell reads `/proc/self/mountinfo` a dozen times per cmdlet, `mkdir` the
//! program loads its libraries) then run at full speed, and the window between a call's
//! check and its act on the target is what is stretched. `--amplify-paths all` delays every
//! listed call, as before (hand-off scenarios always do: their files have many names).

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::process::{run_capture, Launch};

/// The file-system system calls whose return is delayed: checks (`access`, `stat` family),
/// creates and opens, renames, links, directory calls, removals, truncation and in-kernel
/// copies. Reads and writes of data (and so the probe's protocol pipes) are not in it.
/// `fstat` is a check too: .NET's `File.AppendAllText` opens without `O_APPEND`, reads the
/// file's length by `fstat`, then `pwrite`s at that offset (seen with `strace` under CoreCLR
/// 10 and pwsh 7.6), and only a delay after the `fstat` stretches that window (glibc's own
/// `fstat` is a `newfstatat` with `AT_EMPTY_PATH`, already listed).
pub const SYSCALLS: &[&str] = &[
    "access",
    "faccessat",
    "faccessat2",
    "stat",
    "lstat",
    "fstat",
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

/// Which calls of the listed kinds an amplified race delays (`--amplify-paths`; results.json's
/// `run_info.amplification.paths`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DelayScope {
    /// Only calls that name the race's own paths (its folder, target and sources): see
    /// [`crate::exec::scratch::race_paths`].
    #[default]
    Race,
    /// Every listed call, whatever it names.
    All,
}

/// A working `strace` and the delay it injects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Amplifier {
    strace: PathBuf,
    delay_us: u64,
    version: String,
    scope: DelayScope,
    /// With [`DelayScope::Race`], once given ([`Amplifier::for_race`]): the only paths whose
    /// calls are delayed (`-P`); empty: every listed call.
    paths: Vec<PathBuf>,
}

impl Amplifier {
    /// Finds `strace` (`CONFORMANCE_STRACE` if set, else on `PATH`) and checks that it can trace and delay a child here (ptrace
    /// may be refused in containers). `delay_us` is the delay in microseconds.
    ///
    /// Errors: why amplification is unavailable (not Linux, no strace, strace too old for
    /// `--seccomp-bpf`, ptrace refused), as one line for the report.
    pub fn detect(delay_us: u64, scope: DelayScope) -> Result<Amplifier, String> {
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
        let amp = Amplifier { strace, delay_us, version, scope, paths: Vec::new() };
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
        Amplifier {
            strace: PathBuf::from("strace"),
            delay_us,
            version: "test".into(),
            scope: DelayScope::Race,
            paths: Vec::new(),
        }
    }

    /// The same amplifier run by `strace` at `path` (unit tests check argument vectors).
    #[cfg(test)]
    pub(crate) fn with_strace(self, path: &str) -> Amplifier {
        Amplifier { strace: PathBuf::from(path), ..self }
    }

    /// Which calls it delays in races.
    pub fn scope(&self) -> DelayScope {
        self.scope
    }

    /// The same tracer delaying every listed call, whatever it names (hand-off scenarios,
    /// whose files have many names).
    pub fn every_path(&self) -> Amplifier {
        Amplifier { scope: DelayScope::All, paths: Vec::new(), ..self.clone() }
    }

    /// The tracer for races whose trials run in `arena`: with [`DelayScope::Race`], delaying
    /// only the calls that name the paths of [`crate::exec::scratch::race_paths`]; with
    /// [`DelayScope::All`], unchanged.
    ///
    /// A tracer whose paths are given already ([`Amplifier::for_paths`]) keeps them.
    pub fn for_race(&self, arena: &Path) -> Amplifier {
        if self.paths.is_empty() {
            self.for_paths(crate::exec::scratch::race_paths(arena))
        } else {
            self.clone()
        }
    }

    /// The tracer for hand-off items that name exactly `paths` (absolute; each trial folder and
    /// the files the harness names in it): with [`DelayScope::Race`], delaying only the calls
    /// that name one of them, by path or by a descriptor open on one (`-P`); with
    /// [`DelayScope::All`], every listed call. strace(1) matches a path argument as written,
    /// so the recipe must be given the paths spelled absolute, as here.
    pub fn for_paths(&self, paths: Vec<PathBuf>) -> Amplifier {
        match self.scope {
            DelayScope::All => self.clone(),
            DelayScope::Race => Amplifier { paths, ..self.clone() },
        }
    }

    /// The only paths whose calls it delays; empty: every listed call.
    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
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
    /// thread and child, quietly: `-f -qq -o /dev/null -e trace=SET -e inject=SET:delay_exit=US`,
    /// then `-P PATH` for each of [`Amplifier::paths`] (a path is an argument of its own, never
    /// shell text).
    fn delay_args(&self) -> Vec<std::ffi::OsString> {
        let set = SYSCALLS.iter().map(|s| format!("?{s}")).collect::<Vec<_>>().join(",");
        let mut args: Vec<std::ffi::OsString> =
            ["-f".to_string(), "-qq".into(), "-o".into(), "/dev/null".into(), "-e".into(), format!("trace={set}")]
                .into_iter()
                .chain(["-e".to_string(), format!("inject={set}:delay_exit={}", self.delay_us)])
                .map(Into::into)
                .collect();
        for p in &self.paths {
            args.push("-P".into());
            args.push(p.clone().into_os_string());
        }
        args
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
    use std::path::Path;
    use std::path::PathBuf;

    use super::{Amplifier, DelayScope, Launch};

    /// A launch's arguments as text.
    fn args_of(l: &Launch) -> Vec<String> {
        l.args.iter().map(|a| a.to_string_lossy().into_owned()).collect()
    }

    /// The paths strace is told to trace (each argument after a `-P`).
    fn named_paths(args: &[String]) -> Vec<&str> {
        args.windows(2).filter(|w| w[0] == "-P").map(|w| w[1].as_str()).collect()
    }

    #[test]
    fn wrap_keeps_the_argument_vector() {
        let amp = Amplifier::for_tests(500).with_strace("/usr/bin/strace");
        let l = Launch::new("/opt/node", ["probe.mjs", "a b&c %PATH%"]).with_env("K", "V");
        let w = amp.wrap(&l);
        assert_eq!(w.program, PathBuf::from("/usr/bin/strace"));
        let args = args_of(&w);
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
        let amp = Amplifier::for_tests(4000).with_strace("/usr/bin/strace");
        let a = amp.attach(4242);
        let args = args_of(&a);
        assert_eq!(&args[args.len() - 2..], ["-p", "4242"]);
        assert_eq!(args[0], "-f");
        assert!(!args.contains(&"--seccomp-bpf".to_string()) && !args.contains(&"--".to_string()));
        assert!(args.iter().any(|a| a.starts_with("inject=?access,") && a.ends_with(":delay_exit=4000")));
    }

    /// A race's amplifier names the race's paths, each as an argument of its own after `-P`
    /// (a hostile folder name stays one argument); `every_path` and `--amplify-paths all`
    /// name none, so strace delays every listed call.
    #[test]
    fn a_race_delays_only_its_own_paths() {
        let arena = Path::new("/tmp/sp ace&amp %PATH% 日本語/race");
        let amp = Amplifier::for_tests(1000).for_race(arena);
        let args = args_of(&amp.wrap(&Launch::new("/opt/node", ["p.mjs"])));
        let named = named_paths(&args);
        assert!(named.contains(&"/tmp/sp ace&amp %PATH% 日本語/race"), "{named:?}");
        assert!(named.contains(&"/tmp/sp ace&amp %PATH% 日本語/race/target"), "{named:?}");
        assert!(named.contains(&"/tmp/sp ace&amp %PATH% 日本語/race/src-0"), "{named:?}");
        let dash = args.iter().position(|a| a == "--").unwrap();
        assert!(args[..dash].iter().filter(|a| *a == "-P").count() == named.len());
        let attached = args_of(&amp.attach(7));
        assert_eq!(attached.iter().filter(|a| *a == "-P").count(), named.len());
        for every in
            [amp.every_path(), Amplifier { scope: DelayScope::All, ..Amplifier::for_tests(1000) }.for_race(arena)]
        {
            assert!(every.paths().is_empty());
            assert!(!every.wrap(&Launch::new("/opt/node", ["p.mjs"])).args.iter().any(|a| a == "-P"));
        }
    }

    /// A hand-off's tracer names the paths given, and keeps them where a pool would limit it
    /// to its race folder; delaying every path (`--amplify-paths all`) it names none.
    #[test]
    fn a_hand_off_delays_the_paths_it_lists() {
        let items = vec![PathBuf::from("/s/c7/i0"), PathBuf::from("/s/c7/i0/target.lock")];
        let amp = Amplifier::for_tests(1000).for_paths(items.clone());
        assert_eq!(amp.paths(), items.as_slice());
        assert_eq!(amp.for_race(Path::new("/s/race")).paths(), items.as_slice(), "not the race folder's");
        let args = args_of(&amp.wrap(&Launch::new("/bin/sh", ["probe.sh"])));
        let named = named_paths(&args);
        assert_eq!(named, ["/s/c7/i0", "/s/c7/i0/target.lock"]);
        let all = Amplifier { scope: DelayScope::All, ..Amplifier::for_tests(1000) }.for_paths(items);
        assert!(all.paths().is_empty());
    }
}

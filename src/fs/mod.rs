//! The file-system axis (`run --fs LIST`): file systems the harness makes itself — a tmpfs,
//! loop images made by the Debian tools (ext4, xfs, btrfs, exFAT), an overlay mount, an sshfs
//! share of an `sshd` started for the run — inside a private mount namespace
//! ([`namespace::enter_private`]), so that every mount vanishes with the harness, also when it
//! is killed. One file per kind of preparation: [`tmpfs`], [`image`], [`overlay`], [`sshfs`].
//! `docs/FILESYSTEMS.md` says how each is made and what this kernel lacks.

#[cfg(target_os = "linux")]
pub mod image;
pub mod namespace;
#[cfg(target_os = "linux")]
pub mod overlay;
#[cfg(target_os = "linux")]
pub mod sshfs;
#[cfg(target_os = "linux")]
pub mod tmpfs;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub use crate::domain::FsKind;

/// `--fs LIST`: comma-separated names, each once, or `all` ([`FsKind::ALL`]). Errors: the
/// message for an unknown or repeated name, listing the known ones.
pub fn parse_list(list: &str) -> Result<Vec<FsKind>, String> {
    let mut out = Vec::new();
    for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if name == "all" {
            for k in FsKind::ALL {
                if !out.contains(&k) {
                    out.push(k);
                }
            }
            continue;
        }
        let Some(k) = FsKind::parse(name) else {
            let known: Vec<&str> = FsKind::ALL.iter().map(|k| k.as_str()).collect();
            return Err(format!("unknown file system {name:?}; known: {}, or all", known.join(", ")));
        };
        if out.contains(&k) {
            return Err(format!("{name} is named twice"));
        }
        out.push(k);
    }
    if out.is_empty() {
        return Err("names no file system".into());
    }
    Ok(out)
}

/// One step that undoes a preparation, run in reverse order by [`Mounted`]'s `Drop`.
#[derive(Debug)]
enum Undo {
    /// `umount` this mount point (lazily, if it is busy).
    Unmount(PathBuf),
    /// Kill this process (a daemon: `sshd`, an `sshfs` client) and reap it.
    Kill(std::process::Child),
    /// Kill this server once the processes it forked have ended (up to 3 s): `sshd`, whose
    /// per-connection processes end when their `sshfs` client is gone. Killed earlier, they
    /// would outlive it as orphans.
    KillAfterChildren(std::process::Child),
}

/// A file system made for the run, mounted until dropped.
#[derive(Debug)]
pub struct Mounted {
    /// What it is.
    pub kind: FsKind,
    /// The folder to measure in (`--fs-root` of the run on it).
    pub root: PathBuf,
    /// A second client's view of the same folder (sshfs: a second mount of the same export),
    /// if the file system has one.
    pub second_client: Option<PathBuf>,
    /// How it was made, for the results (`mkfs.xfs 6.1.0, a 320 MiB sparse loop image`).
    pub how: String,
    /// The FUSE daemon and its version, for FUSE file systems (`sshfs 3.7.3, OpenSSH_9.2p1`).
    pub daemon: Option<String>,
    undo: Vec<Undo>,
}

impl Mounted {
    /// A file system mounted at `root` (nothing to undo yet).
    fn new(kind: FsKind, root: PathBuf, how: String) -> Mounted {
        Mounted { kind, root, second_client: None, how, daemon: None, undo: Vec::new() }
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        while let Some(u) = self.undo.pop() {
            match u {
                Undo::Unmount(p) => unmount(&p),
                Undo::Kill(mut c) => {
                    let _ = c.kill();
                    let _ = c.wait();
                }
                Undo::KillAfterChildren(mut c) => {
                    let until = std::time::Instant::now() + std::time::Duration::from_secs(3);
                    while children_of(c.id()) > 0 && std::time::Instant::now() < until {
                        std::thread::sleep(std::time::Duration::from_millis(20));
                    }
                    let _ = c.kill();
                    let _ = c.wait();
                }
            }
        }
    }
}

/// How many processes have `pid` as their parent (`/proc/PID/stat`'s fourth field, `proc(5)`).
fn children_of(pid: u32) -> usize {
    let Ok(dir) = std::fs::read_dir("/proc") else { return 0 };
    dir.flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter(|stat| {
            // the command name is in parentheses and may hold spaces: the fields follow the last ')'
            let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
            rest.split_whitespace().nth(1).and_then(|p| p.parse::<u32>().ok()) == Some(pid)
        })
        .count()
}

/// Unmounts `p`; a busy mount is detached lazily (`umount -l`), so that teardown never hangs
/// on a probe the run left behind. Errors are ignored: the private mount namespace drops
/// whatever is left when the harness exits.
fn unmount(p: &Path) {
    let ok = Command::new("umount").arg(p).stdout(Stdio::null()).stderr(Stdio::null()).status();
    if !ok.is_ok_and(|s| s.success()) {
        let _ = Command::new("umount").arg("-l").arg(p).stdout(Stdio::null()).stderr(Stdio::null()).status();
    }
}

/// Makes file system `kind` in `work` (an empty folder of the run's own, on any file system)
/// and mounts it. Errors: why it cannot be made here (a tool missing, with the Debian package
/// that has it; no kernel support; a command that failed, with its message) — the run skips
/// it with that reason.
#[cfg(target_os = "linux")]
pub fn prepare(kind: FsKind, work: &Path) -> Result<Mounted, String> {
    let dir = work.join(kind.as_str());
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    match kind {
        FsKind::Tmpfs => tmpfs::prepare(&dir),
        FsKind::Ext4 | FsKind::Xfs | FsKind::Btrfs | FsKind::Exfat => image::prepare(kind, &dir),
        FsKind::Overlay => overlay::prepare(&dir),
        FsKind::Sshfs => sshfs::prepare(&dir),
    }
}

/// Elsewhere nothing is made: `--fs` is Linux's.
#[cfg(not(target_os = "linux"))]
pub fn prepare(kind: FsKind, _work: &Path) -> Result<Mounted, String> {
    Err(format!("{kind}: --fs makes file systems on Linux only"))
}

/// Runs `program args` to completion. Returns its stdout and stderr, joined. Errors: the
/// program's absence (naming `package`, the Debian package that has it) or its failure, with
/// the first line of its output.
fn tool(program: &str, args: &[&std::ffi::OsStr], package: &str) -> Result<String, String> {
    let exe =
        which::which(program).map_err(|_| format!("{program} is not installed (Debian: apt-get install {package})"))?;
    let out = Command::new(&exe)
        .args(args)
        .stdin(Stdio::null())
        .env("LC_ALL", "C")
        .output()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if !out.status.success() {
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("no output");
        return Err(format!("{program} failed ({}): {first}", out.status));
    }
    Ok(text)
}

/// [`tool`] with string arguments.
fn tool_s(program: &str, args: &[&str], package: &str) -> Result<String, String> {
    let args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    tool(program, &args, package)
}

/// `mount -t TYPE -o OPTIONS SOURCE TARGET`, recorded in `m` for undoing. Errors: `mount`'s
/// message.
fn mount(m: &mut Mounted, fstype: &str, options: &str, source: &Path, target: &Path) -> Result<(), String> {
    use std::ffi::OsStr;
    let mut args: Vec<&OsStr> = vec![OsStr::new("-t"), OsStr::new(fstype)];
    if !options.is_empty() {
        args.extend([OsStr::new("-o"), OsStr::new(options)]);
    }
    args.extend([source.as_os_str(), target.as_os_str()]);
    tool("mount", &args, "mount")?;
    m.undo.push(Undo::Unmount(target.to_path_buf()));
    Ok(())
}

/// True when the running kernel lists `fstype` in `/proc/filesystems` (`proc(5)`); a module
/// not yet loaded is not listed, so `false` means "not known to be there".
fn kernel_has(fstype: &str) -> bool {
    std::fs::read_to_string("/proc/filesystems")
        .is_ok_and(|t| t.lines().any(|l| l.split_whitespace().last() == Some(fstype)))
}

/// The first line of `program`'s version output (`args`), or `unknown`.
fn version_line(program: &str, args: &[&str]) -> String {
    version_with(program, args, "")
}

/// The first line of `program`'s version output (`args`; stdout, then stderr) that starts with
/// `prefix` (sshfs prints fusermount's version first on one stream and its own on the other),
/// else its first non-empty line, or `unknown`.
fn version_with(program: &str, args: &[&str], prefix: &str) -> String {
    let Ok(exe) = which::which(program) else { return "unknown".into() };
    let Ok(out) = Command::new(exe).args(args).stdin(Stdio::null()).env("LC_ALL", "C").output() else {
        return "unknown".into();
    };
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.clone().next();
    lines.find(|l| l.starts_with(prefix)).or(first).unwrap_or("unknown").to_string()
}

/// Waits up to `seconds` for a mount at `target` to appear in `/proc/self/mountinfo` (a FUSE
/// daemon mounts after it has started). Errors: the time ran out.
fn wait_for_mount(target: &Path, seconds: u64) -> Result<String, String> {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    let canon = std::fs::canonicalize(target).unwrap_or_else(|_| target.to_path_buf());
    loop {
        if let Ok(text) = std::fs::read_to_string("/proc/self/mountinfo") {
            if let Some((mp, fstype, _)) = crate::runinfo::best_mount(&text, &canon) {
                if Path::new(&mp) == canon {
                    return Ok(fstype);
                }
            }
        }
        if std::time::Instant::now() > until {
            return Err(format!("nothing was mounted at {} within {seconds} s", target.display()));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[cfg(test)]
mod tests {
    use super::{parse_list, FsKind};

    #[test]
    fn the_list_takes_names_and_all_once_each() {
        assert_eq!(parse_list("tmpfs,xfs").unwrap(), vec![FsKind::Tmpfs, FsKind::Xfs]);
        assert_eq!(parse_list("all").unwrap(), FsKind::ALL.to_vec());
        // `all` after a name keeps the name's place and adds the rest once
        assert_eq!(parse_list("sshfs,all").unwrap()[0], FsKind::Sshfs);
        assert_eq!(parse_list("sshfs,all").unwrap().len(), FsKind::ALL.len());
        assert!(parse_list("ntfs").unwrap_err().contains("known: tmpfs, ext4"));
        assert!(parse_list("xfs,xfs").unwrap_err().contains("twice"));
        assert!(parse_list(",").is_err());
    }

    #[test]
    fn names_round_trip() {
        for k in FsKind::ALL {
            assert_eq!(FsKind::parse(k.as_str()), Some(k));
            assert_eq!(serde_json::to_string(&k).unwrap(), format!("\"{k}\""));
        }
    }
}

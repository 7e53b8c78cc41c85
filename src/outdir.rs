//! The output folder (`--out`): taken by one run at a time, written the way the product tells
//! its users to publish files (temp file in the same folder → flush → sync → rename), so a
//! reader never sees a half-written `results.json`, and a full disk leaves the previous file
//! instead of a truncated one.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::report::model::{Cell, Results};

/// Name of the lock file inside the output folder.
pub const LOCK_NAME: &str = ".conformance.lock";

/// An output folder held by this run until dropped.
#[derive(Debug)]
pub struct OutDir {
    path: PathBuf,
    lock: Option<File>,
    /// The folders this run created for `path`, deepest first (`path` itself and the parents
    /// that did not exist): an abandoned run removes the empty ones.
    created: Vec<PathBuf>,
}

impl OutDir {
    /// Creates `path` if needed and takes its lock: an exclusive OS lock on `path/.conformance.lock`
    /// (`flock(2)` on Unix, `LockFileEx` on Windows, through `File::try_lock`), released by the OS
    /// even when the harness is killed, so no stale lock can outlive a run. The file holds the
    /// pid for the message a second run prints.
    ///
    /// Errors: [`Error::Output`] when the folder cannot be created or written, or another run
    /// holds it (`--out` named in the message; exit code 3).
    pub fn open(path: &Path) -> Result<OutDir> {
        // the folders create_dir_all is about to make, deepest first
        let created: Vec<PathBuf> =
            path.ancestors().take_while(|a| !a.as_os_str().is_empty() && !a.exists()).map(Path::to_path_buf).collect();
        // a file (or a file on the way) at the name: say so, not `File exists (os error 17)`
        if let Some(file) = path.ancestors().find(|a| std::fs::metadata(a).is_ok_and(|m| !m.is_dir())) {
            let what = if file == path {
                "it is a file, not a folder".to_string()
            } else {
                format!("{} is a file, not a folder", file.display())
            };
            return Err(Error::Output {
                path: path.to_path_buf(),
                source: std::io::Error::other(format!("{what}; name a folder (made if missing) for the results")),
            });
        }
        std::fs::create_dir_all(path).map_err(|source| Error::Output { path: path.to_path_buf(), source })?;
        let mut out = OutDir { path: path.to_path_buf(), lock: None, created };
        let lock_path = path.join(LOCK_NAME);
        let err = |source| Error::Output { path: lock_path.clone(), source };
        // the same inode must stay at the name while we lock it: a run that removes its lock
        // file while another opens it would otherwise let two runs hold two files
        for _ in 0..10 {
            // never through a symbolic link planted at the name: truncating the lock file would
            // truncate whatever the link names (open(2), O_NOFOLLOW: ELOOP on a link)
            let mut o = std::fs::OpenOptions::new();
            o.read(true).write(true).create(true).truncate(false);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::custom_flags(&mut o, nix::fcntl::OFlag::O_NOFOLLOW.bits());
            let f = o.open(&lock_path).map_err(|e| {
                if std::fs::symlink_metadata(&lock_path).is_ok_and(|m| m.file_type().is_symlink()) {
                    std::io::Error::other(format!(
                        "{LOCK_NAME} is a symbolic link; remove it (a run's lock is a plain file)"
                    ))
                } else {
                    e
                }
            });
            let mut f = match f {
                Ok(f) => f,
                Err(source) => {
                    out.abandon();
                    return Err(err(source));
                }
            };
            match f.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    let holder = std::fs::read_to_string(&lock_path).unwrap_or_default();
                    let holder = holder.trim();
                    return Err(err(std::io::Error::other(format!(
                        "another conformance run ({}) is writing to this --out folder; wait for it or choose another --out",
                        if holder.is_empty() { "pid unknown".to_string() } else { holder.to_string() }
                    ))));
                }
                Err(std::fs::TryLockError::Error(source)) => {
                    out.abandon();
                    return Err(err(source));
                }
            }
            let same = same_file::Handle::from_file(f.try_clone().map_err(err)?)
                .ok()
                .zip(same_file::Handle::from_path(&lock_path).ok())
                .is_some_and(|(a, b)| a == b);
            if !same {
                continue;
            }
            f.set_len(0).and_then(|()| writeln!(f, "pid {}", std::process::id())).map_err(|source| {
                out.lock = None;
                err(source)
            })?;
            out.lock = Some(f);
            // a second Ctrl-C exits without destructors: the lock file must not stay behind
            crate::interrupt::remove_on_abort(lock_path.clone());
            return Ok(out);
        }
        Err(err(std::io::Error::other("the lock file kept changing; is another run starting?")))
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `text` to `name` in the folder atomically: a temp file beside it, flushed and
    /// synced, then renamed over `name`. Errors: [`Error::Output`] naming the file; the
    /// previous `name`, if any, is left intact.
    pub fn write(&self, name: &str, text: &str) -> Result<()> {
        write_atomic(&self.path, name, text)
    }

    /// Starts a thread that keeps `dir/results.json` up to date while a run measures: it
    /// holds `base` (the run's results so far), appends each cell sent to it, and rewrites the
    /// file atomically at most every `every`, and also once `every` has passed since the last
    /// change, so that a run killed (even by SIGKILL) during a long attempt keeps every cell
    /// measured before it.
    pub fn partial(&self, base: Results, every: Duration) -> PartialWriter {
        let (tx, rx) = mpsc::channel::<Cell>();
        let dir = self.path.clone();
        let thread = std::thread::spawn(move || {
            let mut results = base;
            let mut dirty = false;
            let mut last = Instant::now();
            loop {
                let wait = if dirty { every.saturating_sub(last.elapsed()) } else { Duration::from_secs(3600) };
                match rx.recv_timeout(wait) {
                    Ok(c) => {
                        results.cells.push(c);
                        dirty = true;
                    }
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    Err(mpsc::RecvTimeoutError::Disconnected) => return None,
                }
                if dirty && last.elapsed() >= every {
                    if let Err(e) = write_atomic(&dir, "results.json", &crate::report::json::render(&results)) {
                        return Some(e);
                    }
                    dirty = false;
                    last = Instant::now();
                }
            }
        });
        PartialWriter { tx: Some(tx), thread: Some(thread) }
    }

    /// Gives the folder up without results: removes it, and the parents this run made for it,
    /// when this run created them and nothing but the lock is in them (exit codes 4 and 5, and
    /// a run refused at start, leave no empty folder behind; `remove_dir` never removes a
    /// folder that holds anything).
    pub fn abandon(&mut self) {
        self.release();
        for dir in &self.created {
            if std::fs::remove_dir(dir).is_err() {
                break;
            }
        }
    }

    fn release(&mut self) {
        if self.lock.take().is_some() {
            let _ = std::fs::remove_file(self.path.join(LOCK_NAME));
        }
    }
}

/// Writes `text` to the file `path` atomically (a temp file beside it, flushed, synced, renamed
/// over it), for `--out FILE`. Errors: [`Error::Output`] naming `path` when its folder does not
/// exist or cannot be written, or `path` has no file name; a previous file is left intact.
pub fn write_file(path: &Path, text: &str) -> Result<()> {
    let err = |source| Error::Output { path: path.to_path_buf(), source };
    // what is at the name decides how it is written (the link followed): a file is replaced
    // keeping its mode (and a link to it stays a link); a terminal, `/dev/null` or a pipe
    // (`/dev/stdout`, `>(cmd)`) is written into, as any tool does, since a rename would
    // replace the device with a file; anything else is refused
    if let Ok(m) = std::fs::metadata(path) {
        if m.is_file() {
            return replace_file(path, text);
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if m.file_type().is_char_device() || m.file_type().is_fifo() {
                return std::fs::OpenOptions::new()
                    .write(true)
                    .open(path)
                    .and_then(|mut f| f.write_all(text.as_bytes()).and_then(|()| f.flush()))
                    .map_err(err);
            }
        }
        return Err(err(std::io::Error::other(
            "is not a regular file (a folder, socket or block device); name a file",
        )));
    }
    let name = path.file_name().and_then(|n| n.to_str()).ok_or_else(|| Error::Output {
        path: path.to_path_buf(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name"),
    })?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    write_atomic(dir, name, text).map_err(|e| match e {
        Error::Output { source, .. } => Error::Output { path: path.to_path_buf(), source },
        e => e,
    })
}

/// Replaces the existing file `path` with `text` atomically, as [`write_file`] does, keeping
/// its permissions (a temp file is made private; a document rewritten by `docs` must stay as
/// readable as it was). A symbolic link at `path` is followed: the file it names is replaced.
///
/// Errors: [`Error::Output`] naming `path` when it cannot be read, its folder cannot be
/// written, or the rename fails; the previous file is then left intact.
pub fn replace_file(path: &Path, text: &str) -> Result<()> {
    let err = |source| Error::Output { path: path.to_path_buf(), source };
    let real = std::fs::canonicalize(path).map_err(err)?;
    let perms = std::fs::metadata(&real).map_err(err)?.permissions();
    let (Some(dir), Some(name)) = (real.parent(), real.file_name().and_then(|n| n.to_str())) else {
        return Err(err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name")));
    };
    write_atomic_with(dir, name, text, Some(perms)).map_err(|e| match e {
        Error::Output { source, .. } => err(source),
        e => e,
    })
}

/// Refuses a baseline (`run --expect`, `expect`) that is one of the files this run writes into `out` (by identity,
/// whatever the spelling), even with `--force`: the run would replace its own baseline.
///
/// Errors: [`Error::Usage`] naming `--expect` (exit 2).
pub fn refuse_baseline_in(expect: Option<&Path>, out: &Path) -> Result<()> {
    let Some(expect) = expect else { return Ok(()) };
    for name in ["results.json", "summary.md"] {
        if crate::outdir::is_same_file(&out.join(name), expect) {
            return Err(Error::Usage {
                flag: "--expect".into(),
                message: format!(
                    "{} is the {name} this run writes into {}: it would replace the baseline it compares with; copy it elsewhere or choose another --out",
                    expect.display(),
                    out.display()
                ),
            });
        }
    }
    Ok(())
}

/// True when `a` and `b` name the same file (links followed, any spelling), false when either
/// is absent. On Unix it compares device and inode from `stat(2)` and never opens either name:
/// opening a named pipe to compare it would block until a writer comes (the `same_file` crate
/// opens both, which is how other platforms compare).
pub fn is_same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        same_file::is_same_file(a, b).unwrap_or(false)
    }
}

/// The permissions of the regular file at `path` (not through a link), to keep when it is
/// rewritten; `None` when there is none.
fn existing_mode(path: &Path) -> Option<std::fs::Permissions> {
    std::fs::symlink_metadata(path).ok().filter(std::fs::Metadata::is_file).map(|m| m.permissions())
}

/// Writes `text` to `dir/name` atomically (temp file in `dir`, flush, sync, rename), keeping
/// the mode of a regular file already there (a private results file stays private).
/// Errors: [`Error::Output`] naming the file.
fn write_atomic(dir: &Path, name: &str, text: &str) -> Result<()> {
    write_atomic_with(dir, name, text, existing_mode(&dir.join(name)))
}

/// [`write_atomic`], giving the file `perms` when given; otherwise the file gets the mode any
/// tool's new file gets, `0666` less the user's umask (a temp file alone would be `0600`): the
/// mode is asked for when the temp file is created, and the kernel applies the umask (open(2)).
fn write_atomic_with(dir: &Path, name: &str, text: &str, perms: Option<std::fs::Permissions>) -> Result<()> {
    let target = dir.join(name);
    let err = |source| Error::Output { path: target.clone(), source };
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix);
    #[cfg(unix)]
    if perms.is_none() {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir).map_err(err)?;
    // an exit at once (a second Ctrl-C) while the file is written removes the hidden temp file
    let temp_path = tmp.path().to_path_buf();
    crate::interrupt::remove_on_abort(temp_path.clone());
    let written = (|| {
        tmp.write_all(text.as_bytes()).and_then(|()| tmp.flush()).map_err(err)?;
        if let Some(p) = perms {
            tmp.as_file().set_permissions(p).map_err(err)?;
        }
        tmp.as_file().sync_all().map_err(err)?;
        tmp.persist(&target).map_err(|e| err(e.error))?;
        Ok(())
    })();
    crate::interrupt::forget_on_abort(&temp_path);
    written
}

/// The thread of [`OutDir::partial`]; send it cells with [`PartialWriter::send`].
#[derive(Debug)]
pub struct PartialWriter {
    tx: Option<mpsc::Sender<Cell>>,
    thread: Option<std::thread::JoinHandle<Option<Error>>>,
}

impl PartialWriter {
    /// Adds a measured cell to the partial results.
    pub fn send(&self, c: &Cell) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(c.clone());
        }
    }

    /// Stops the thread. Errors: the first write that failed ([`Error::Output`]).
    pub fn finish(mut self) -> Result<()> {
        self.tx = None;
        match self.thread.take().map(std::thread::JoinHandle::join) {
            Some(Ok(Some(e))) => Err(e),
            _ => Ok(()),
        }
    }
}

impl Drop for OutDir {
    fn drop(&mut self) {
        self.release();
    }
}

#[cfg(test)]
mod tests {
    use super::OutDir;

    #[test]
    fn a_second_run_is_refused_while_the_first_holds_the_folder() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("o");
        let first = OutDir::open(&out).unwrap();
        let e = OutDir::open(&out).expect_err("held").to_string();
        assert!(e.contains("another conformance run (pid") && e.contains(".conformance.lock"), "{e}");
        drop(first);
        let again = OutDir::open(&out).expect("free after the first run ends");
        again.write("results.json", "{}").unwrap();
        assert_eq!(std::fs::read_to_string(out.join("results.json")).unwrap(), "{}");
    }

    #[test]
    fn writes_replace_whole_files_and_leave_no_temp_files() {
        let d = tempfile::tempdir().unwrap();
        let o = OutDir::open(d.path()).unwrap();
        o.write("a.json", "first").unwrap();
        o.write("a.json", "second").unwrap();
        drop(o);
        let names: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["a.json"]);
        assert_eq!(std::fs::read_to_string(d.path().join("a.json")).unwrap(), "second");
    }

    #[test]
    fn an_abandoned_new_folder_is_removed_an_old_one_kept() {
        let d = tempfile::tempdir().unwrap();
        let mut o = OutDir::open(&d.path().join("new")).unwrap();
        o.abandon();
        assert!(!d.path().join("new").exists());
        let mut o = OutDir::open(d.path()).unwrap();
        o.abandon();
        assert!(d.path().exists());
        // a nested --out: the parents this run made go too, those that were there stay
        std::fs::create_dir(d.path().join("a")).unwrap();
        let mut o = OutDir::open(&d.path().join("a/b/c")).unwrap();
        o.abandon();
        assert!(!d.path().join("a/b").exists(), "an empty parent made for --out was left");
        assert!(d.path().join("a").exists(), "a folder that was there is kept");
        // a parent that came to hold something else is kept
        let mut o = OutDir::open(&d.path().join("a/b/c")).unwrap();
        std::fs::write(d.path().join("a/b/other"), "x").unwrap();
        o.abandon();
        assert!(!d.path().join("a/b/c").exists() && d.path().join("a/b/other").exists());
    }
}

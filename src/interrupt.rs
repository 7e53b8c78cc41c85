//! Ctrl-C and SIGTERM: the first one asks the run to stop; waits on probes give up within
//! 100 ms, the attempt in flight is dropped (never counted), probes are killed with their
//! process trees, the scratch folder is removed and partial results are written (exit code
//! 130). A second one exits at once, after killing every process group the harness started and
//! removing the scratch folder (no destructor runs then).
//!
//! Floor: just above [`crate::exec`], whose process groups it kills and whose stop flag
//! ([`process::stop_requested`]) it raises; the probe waits below read that flag, not this
//! module.

use std::path::PathBuf;
use std::sync::Mutex;

use crate::exec::process::{self, Launch};

/// The scratch folders (and the output folder's lock file) to remove on an immediate exit (see
/// [`remove_on_abort`]).
static SCRATCH: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Commands to run on an immediate exit, with their working folders (see [`run_on_abort`]).
static ON_ABORT: Mutex<Vec<(Launch, PathBuf)>> = Mutex::new(Vec::new());

/// Installs the handler (once; later calls are no-ops).
pub fn install() {
    let _ = ctrlc::set_handler(|| {
        if process::request_stop() {
            abort_now();
        }
        eprintln!("interrupted: stopping now, dropping the attempt in flight (press again to exit at once)");
    });
}

/// The second signal: kill every live probe tree, remove the scratch folders, exit 130.
fn abort_now() -> ! {
    process::kill_live_groups();
    // daemons the run started outside its process groups (Wine's server and services): their
    // own way down, a few seconds at most each
    let commands = ON_ABORT.lock().map(|c| c.clone()).unwrap_or_default();
    for (l, cwd) in commands {
        let _ = process::run_status(&l, &cwd, std::time::Duration::from_secs(5));
    }
    let dirs = SCRATCH.lock().map(|d| d.clone()).unwrap_or_default();
    for d in dirs {
        if d.is_dir() {
            let _ = std::fs::remove_dir_all(d);
        } else {
            let _ = std::fs::remove_file(d);
        }
    }
    eprintln!("interrupted twice: exiting at once; results written so far are kept");
    std::process::exit(crate::exit_code::INTERRUPTED);
}

/// Records a command to run if the run must exit at once (second Ctrl-C), such as stopping the
/// Wine server of the run's own prefix (`wineserver -k`), which no process group holds.
pub fn run_on_abort(launch: Launch, cwd: PathBuf) {
    if let Ok(mut c) = ON_ABORT.lock() {
        if !c.iter().any(|(l, d)| *l == launch && *d == cwd) {
            c.push((launch, cwd));
        }
    }
}

/// Records a scratch folder (or a file) to remove if the run must exit at once (second
/// Ctrl-C).
pub fn remove_on_abort(dir: PathBuf) {
    if let Ok(mut d) = SCRATCH.lock() {
        d.push(dir);
    }
}

/// Forgets a path given to [`remove_on_abort`] (a temp file that was renamed into place or
/// removed): an exit at once must not remove what now stands at that name.
pub fn forget_on_abort(path: &std::path::Path) {
    if let Ok(mut d) = SCRATCH.lock() {
        d.retain(|p| p != path);
    }
}

/// True once a stop was requested (the flag is [`process::stop_requested`]'s).
pub fn requested() -> bool {
    process::stop_requested()
}

#[cfg(test)]
mod tests {
    use super::{forget_on_abort, remove_on_abort, SCRATCH};

    /// An atomic write registers its hidden temp file for removal by an exit at once, and
    /// forgets it once the file is renamed into place: nothing of it is left in either case.
    #[test]
    fn a_written_files_temp_is_forgotten_after_the_rename() {
        let d = tempfile::tempdir().unwrap();
        crate::outdir::write_file(&d.path().join("results.json"), "{}").unwrap();
        let listed = SCRATCH.lock().unwrap().iter().any(|p| p.starts_with(d.path()));
        assert!(!listed, "the temp file is still listed for removal after the rename");
        let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(names, ["results.json"]);
        let p = d.path().join(".x.tmp");
        remove_on_abort(p.clone());
        assert!(SCRATCH.lock().unwrap().contains(&p));
        forget_on_abort(&p);
        assert!(!SCRATCH.lock().unwrap().contains(&p));
    }
}

//! Ctrl-C and SIGTERM: the first one asks the run to stop; waits on probes give up within
//! 100 ms, the attempt in flight is dropped (never counted), probes are killed with their
//! process trees, the scratch folder is removed and partial results are written (exit code
//! 130). A second one exits at once, after killing every process group the harness started and
//! removing the scratch folder (no destructor runs then).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

static STOP: AtomicBool = AtomicBool::new(false);

/// The scratch folders to remove on an immediate exit (see [`remove_on_abort`]).
static SCRATCH: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Installs the handler (once; later calls are no-ops).
pub fn install() {
    let _ = ctrlc::set_handler(|| {
        if STOP.swap(true, Ordering::SeqCst) {
            abort_now();
        }
        eprintln!("interrupted: stopping now, dropping the attempt in flight (press again to exit at once)");
    });
}

/// The second signal: kill every live probe tree, remove the scratch folders, exit 130.
fn abort_now() -> ! {
    crate::exec::process::kill_live_groups();
    let dirs = SCRATCH.lock().map(|d| d.clone()).unwrap_or_default();
    for d in dirs {
        let _ = std::fs::remove_dir_all(d);
    }
    eprintln!("interrupted twice: exiting at once; results written so far are kept");
    std::process::exit(crate::exit_code::INTERRUPTED);
}

/// Records a scratch folder to remove if the run must exit at once (second Ctrl-C).
pub fn remove_on_abort(dir: PathBuf) {
    if let Ok(mut d) = SCRATCH.lock() {
        d.push(dir);
    }
}

/// True once a stop was requested.
pub fn requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

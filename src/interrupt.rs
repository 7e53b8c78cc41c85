//! Ctrl-C and SIGTERM: the first one asks the run to stop between attempts, so that probes are
//! killed with their process trees, the scratch folder is removed and partial results are
//! written (exit code 130); a second one exits at once.

use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);

/// Installs the handler (once; later calls are no-ops).
pub fn install() {
    let _ = ctrlc::set_handler(|| {
        if STOP.swap(true, Ordering::SeqCst) {
            std::process::exit(crate::exit_code::INTERRUPTED);
        }
        eprintln!("interrupted: stopping after the current attempt (press again to exit at once)");
    });
}

/// True once a stop was requested.
pub fn requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

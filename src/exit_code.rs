//! Exit codes of the `conformance` binary, in one place.
//!
//! The scheme follows nextest's `exit_codes.rs` and ripgrep's `main.rs`: success, "ran but found
//! something", and distinct codes for each class of harness error, so that CI scripts can tell
//! a regression from a broken invocation.

/// The command completed; for `run` with `--expect`, and for `compare` and `diff`, nothing differed.
pub const OK: i32 = 0;
/// The command completed, but a measured outcome differs from the expectation (`run --expect`)
/// or from the baseline (`compare`), or a cell differs between the two runs of `diff`; or a
/// cell the new run asked for is missing from it, or the two runs share no cell; or (`check`)
/// the lock code let two holders in (or, with `--require-takeover`, nobody took a killed
/// holder's lock over).
pub const DIFFERENCES: i32 = 1;
/// Bad input: an unknown flag or value, an unknown runtime name, a variant pattern that selects
/// nothing, a malformed matrix, expectation or results file. The message names the file, line or flag.
pub const USAGE: i32 = 2;
/// The output folder (`--out`), the scratch root (`--fs-root`) or the cache (`--cache-dir`)
/// cannot be created or written.
pub const OUTPUT: i32 = 3;
/// None of the selected runtimes could be found or started, so nothing was measured; or
/// (`install`) a runtime version cannot be installed: `--offline`, npm missing, the registry
/// unreachable, a tarball failing its integrity check, a binary that does not start.
pub const NO_RUNTIME: i32 = 4;
/// `--require` named a runtime that is missing or broken (used by CI so that an absent
/// runtime fails the run instead of being skipped).
pub const REQUIRED_MISSING: i32 = 5;
/// `check`: the lock code could not be judged on some runtime (it faulted, hung, did not load,
/// or the probe lacks it) and was unsafe on none.
pub const UNDETERMINED: i32 = 6;
/// `run --fs`: none of the file systems asked for could be made here (no root or
/// `CAP_SYS_ADMIN` for the private mount namespace, a tool or kernel support missing); the
/// message gives each reason. A run where some were made measures those and says which were
/// skipped.
pub const NO_FILE_SYSTEM: i32 = 7;
/// The run was interrupted (Ctrl-C, SIGTERM); partial results were written.
pub const INTERRUPTED: i32 = 130;
/// An unexpected internal failure (a bug): the message says what failed.
pub const INTERNAL: i32 = 70;

//! Harness errors: problems with the invocation, the input files or the output folder.
//!
//! A probe that crashes, hangs or prints garbage is *not* an error here: it is data, recorded
//! in its cells (see [`crate::verdict::Outcome`]). Every variant maps to one exit code in
//! [`Error::exit_code`] (constants in [`crate::exit_code`]).

use std::path::PathBuf;

use crate::exit_code;

/// Every way the harness itself can fail. Messages are lowercase fragments with context,
/// naming the file, line or flag at fault.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A flag's value is invalid (e.g. `--runtime node=` with no path, `--variant` matching nothing).
    #[error("invalid value for {flag}: {message}")]
    Usage {
        /// The flag, e.g. `--variant`.
        flag: String,
        /// What is wrong with it.
        message: String,
    },
    /// A runtime name that the registry does not know.
    #[error("unknown runtime '{name}' (in {flag}); known runtimes: {known}")]
    UnknownRuntime {
        /// The name given.
        name: String,
        /// The flag it came from.
        flag: String,
        /// Comma-separated known names.
        known: String,
    },
    /// A matrix, expectation or results file that cannot be read or parsed.
    #[error("{}{}: {message}", path.display(), location(*line, *column))]
    Input {
        /// The file.
        path: PathBuf,
        /// 1-based line (0 when unknown).
        line: usize,
        /// 1-based column (0 when unknown).
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// The output folder or a file in it cannot be created or written.
    #[error("cannot write {path}: {source}")]
    Output {
        /// The path that failed.
        path: PathBuf,
        /// The underlying I/O error.
        source: std::io::Error,
    },
    /// The cache folder (`--cache-dir`) cannot be created or written.
    #[error("cannot write the cache folder {path} (--cache-dir, CONFORMANCE_CACHE_DIR): {source}")]
    Cache {
        /// The cache folder.
        path: PathBuf,
        /// The underlying I/O error.
        source: std::io::Error,
    },
    /// The scratch folder cannot be created under its root.
    #[error("cannot create the scratch folder under {path} ({origin}): {source}")]
    Scratch {
        /// The root.
        path: PathBuf,
        /// Where the root came from ([`scratch_origin`]).
        origin: &'static str,
        /// The underlying I/O error.
        source: std::io::Error,
    },
    /// The scratch folder stopped working during the run (full, read-only, failing), or paths
    /// below it would be too long: what was measured before is kept, nothing after is trusted.
    #[error("the scratch folder under {path} ({origin}) does not work: {why}")]
    ScratchBroken {
        /// The root.
        path: PathBuf,
        /// Where the root came from ([`scratch_origin`]).
        origin: &'static str,
        /// What failed.
        why: String,
    },
    /// No selected runtime was found; nothing could be measured. See [`Error::no_runtime`].
    #[error("no runtime to measure: {0}")]
    NoRuntime(String),
    /// A runtime version to install cannot be had: `--offline`, npm missing, the registry
    /// unreachable, a tarball failing its integrity check, a binary that does not start.
    #[error("cannot install {what}: {why}")]
    RuntimeUnavailable {
        /// The version as asked for (`bun@1.3.14`).
        what: String,
        /// Why.
        why: String,
    },
    /// Runtimes named by `--require` are missing or broken.
    #[error("required runtime(s) not available: {0}")]
    RequiredMissing(String),
    /// `run --fs`: none of the file systems asked for could be made or measured here (each
    /// reason given), or the private mount namespace they are made in could not be.
    #[error("no file system to measure on: {0}")]
    NoFileSystem(String),
    /// A bug or an unexpected system failure.
    #[error("internal error: {0}")]
    Internal(String),
}

impl Error {
    /// The error for "no selected runtime can be measured" (`why`: the skip lines): an
    /// [`Error::Cache`] when the cache folder `cache` cannot be created or written (runtimes
    /// that build or install into it are broken then, and the cause is the folder, exit 3),
    /// else [`Error::NoRuntime`].
    pub fn no_runtime(why: String, cache: &std::path::Path) -> Error {
        let writable = std::fs::create_dir_all(cache).and_then(|()| tempfile::tempfile_in(cache).map(drop));
        match writable {
            Err(source) => Error::Cache { path: cache.to_path_buf(), source },
            Ok(()) => Error::NoRuntime(why),
        }
    }

    /// The process exit code for this error (see [`crate::exit_code`]).
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage { .. } | Error::UnknownRuntime { .. } | Error::Input { .. } => exit_code::USAGE,
            Error::Output { .. } | Error::Cache { .. } | Error::Scratch { .. } | Error::ScratchBroken { .. } => {
                exit_code::OUTPUT
            }
            Error::NoRuntime(_) | Error::RuntimeUnavailable { .. } => exit_code::NO_RUNTIME,
            Error::RequiredMissing(_) => exit_code::REQUIRED_MISSING,
            Error::NoFileSystem(_) => exit_code::NO_FILE_SYSTEM,
            Error::Internal(_) => exit_code::INTERNAL,
        }
    }

    /// An [`Error::Input`] about a whole file or folder (no line or column).
    pub fn input(path: &std::path::Path, message: String) -> Error {
        Error::Input { path: path.to_path_buf(), line: 0, column: 0, message }
    }

    /// Builds an [`Error::Input`] from a byte offset into `text` (1-based line and column).
    pub fn input_at(path: &std::path::Path, text: &str, offset: Option<usize>, message: String) -> Error {
        let (line, column) = match offset {
            Some(off) => line_col(text, off),
            None => (0, 0),
        };
        Error::Input { path: path.to_path_buf(), line, column, message }
    }
}

/// `:line:column`, or nothing when the position is unknown (0).
fn location(line: usize, column: usize) -> String {
    match (line, column) {
        (0, _) => String::new(),
        (l, 0) => format!(":{l}"),
        (l, c) => format!(":{l}:{c}"),
    }
}

/// 1-based (line, column) of byte `offset` in `text`; column counts characters.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..text.floor_char_boundary(offset)];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// Shorthand for results whose error is [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

/// Where a scratch root came from, as the errors about it say: `--fs-root` when the user gave
/// it, else the system's temporary folder (`TMPDIR`), with the flag that picks another.
pub fn scratch_origin(given: bool) -> &'static str {
    if given {
        "--fs-root"
    } else {
        "the system temp folder, TMPDIR; choose another with --fs-root"
    }
}

#[cfg(test)]
mod tests {
    use super::{exit_code, line_col, Error};

    #[test]
    fn line_col_counts_from_one() {
        let t = "ab\ncdé\nf";
        assert_eq!(line_col(t, 0), (1, 1));
        assert_eq!(line_col(t, 3), (2, 1));
        assert_eq!(line_col(t, 7), (2, 4));
        assert_eq!(line_col(t, 100), (3, 2));
    }

    #[test]
    fn exit_codes_are_distinct_per_class() {
        let usage = Error::Usage { flag: "--x".into(), message: "m".into() };
        let out = Error::Output { path: "p".into(), source: std::io::Error::other("e") };
        assert_eq!(usage.exit_code(), exit_code::USAGE);
        assert_eq!(out.exit_code(), exit_code::OUTPUT);
        assert_eq!(Error::NoRuntime("x".into()).exit_code(), exit_code::NO_RUNTIME);
        let unavailable = Error::RuntimeUnavailable { what: "bun@1.3.14".into(), why: "--offline".into() };
        assert_eq!(unavailable.exit_code(), exit_code::NO_RUNTIME);
        assert_eq!(Error::RequiredMissing("x".into()).exit_code(), exit_code::REQUIRED_MISSING);
    }
}

//! The scratch folder: the only place the harness (and its probes) write to.
//!
//! It is created under `--fs-root` (default: the system temp folder), removed at the end of
//! the run (also on error, through `TempDir`'s drop), and holds one sub-folder per cell.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::matrix::SourceKind;
use crate::snapshot::mark_name;

/// A folder name made of the characters that shells and cmd/PowerShell interpret: spaces,
/// `&`, `%`, `^`, `!`, `(`, `)`, `'`, `` ` ``, `$`, and Japanese. Every path given to probes
/// passes through it when `--hostile-paths` is on, to prove that paths reach probes as data.
pub const HOSTILE_SEGMENT: &str = "sp ace&amp %PATH% ^c !b! (p) 'q' `b` $d 日本語";

/// What stands at the target before a second comer's attempt
/// (`docs/GLOSSARY.md`, "target state").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TargetState {
    /// Nothing: the control.
    Absent,
    /// A file holding the first comer's token.
    File,
    /// An empty directory.
    EmptyDir,
    /// A directory holding the first comer's mark file.
    Dir,
}

impl TargetState {
    /// All states, in table order.
    pub const ALL: [TargetState; 4] = [TargetState::Absent, TargetState::File, TargetState::EmptyDir, TargetState::Dir];

    /// The glossary spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TargetState::Absent => "absent",
            TargetState::File => "file",
            TargetState::EmptyDir => "empty-dir",
            TargetState::Dir => "dir",
        }
    }

    /// Parses the glossary spelling.
    pub fn parse(s: &str) -> Option<TargetState> {
        TargetState::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

/// The run's scratch folder.
#[derive(Debug)]
pub struct Scratch {
    dir: tempfile::TempDir,
    root: PathBuf,
    next: u64,
}

impl Scratch {
    /// Creates `conformance-XXXXXX` under `fs_root`, and inside it a folder named `segment`
    /// when given (e.g. [`HOSTILE_SEGMENT`]); probes then work below that folder.
    /// Errors: [`Error::Scratch`] naming `fs_root`.
    pub fn new(fs_root: &Path, segment: Option<&str>) -> Result<Scratch> {
        let err = |source| Error::Scratch { path: fs_root.to_path_buf(), source };
        let dir = tempfile::Builder::new().prefix("conformance-").tempdir_in(fs_root).map_err(err)?;
        let mut root = dir.path().to_path_buf();
        if let Some(seg) = segment {
            root.push(seg);
            std::fs::create_dir(&root).map_err(err)?;
        }
        Ok(Scratch { dir, root, next: 0 })
    }

    /// The folder probes run in; relative targets are relative to it.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The top of the scratch folder (removed when the run ends).
    pub fn top(&self) -> &Path {
        self.dir.path()
    }

    /// A new, empty folder for one cell, `c<N>`, returned as (absolute, relative to root).
    /// Errors: the OS error.
    pub fn cell_dir(&mut self) -> std::io::Result<(PathBuf, PathBuf)> {
        self.next += 1;
        let rel = PathBuf::from(format!("c{}", self.next));
        let abs = self.root.join(&rel);
        std::fs::create_dir(&abs)?;
        Ok((abs, rel))
    }
}

/// Puts the first comer's `state` at `target` with `token`. Errors: the OS error.
pub fn set_up(target: &Path, state: TargetState, token: &str) -> std::io::Result<()> {
    match state {
        TargetState::Absent => Ok(()),
        TargetState::File => std::fs::write(target, token),
        TargetState::EmptyDir => std::fs::create_dir(target),
        TargetState::Dir => {
            std::fs::create_dir(target)?;
            std::fs::write(target.join(mark_name(token)), token)
        }
    }
}

/// Prepares a contender's source: a file holding `token`, or a directory holding its mark.
/// Errors: the OS error.
pub fn make_source(path: &Path, kind: SourceKind, token: &str) -> std::io::Result<()> {
    match kind {
        SourceKind::None => Ok(()),
        SourceKind::File => std::fs::write(path, token),
        SourceKind::Dir => {
            std::fs::create_dir(path)?;
            std::fs::write(path.join(mark_name(token)), token)
        }
    }
}

/// Removes a folder and everything in it, ignoring errors (a probe may still hold a handle
/// on Windows; the whole scratch folder goes at the end anyway).
pub fn clear(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
}

/// How a runtime spells paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathStyle {
    /// The host's own paths.
    Native,
    /// Wine's view of the Unix file system: `/a/b` → `Z:\a\b`, relative `a/b` → `a\b`.
    Wine,
}

/// Spells `p` for a runtime with `style`.
pub fn spell(p: &Path, style: PathStyle) -> String {
    let s = p.to_string_lossy();
    match style {
        PathStyle::Native => s.into_owned(),
        PathStyle::Wine => {
            let back = s.replace('/', "\\");
            if p.is_absolute() {
                format!("Z:{back}")
            } else {
                back
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::{take, Entry};

    #[test]
    fn states_and_sources_hold_tokens() {
        let mut s = Scratch::new(&std::env::temp_dir(), Some(HOSTILE_SEGMENT)).unwrap();
        assert!(s.root().ends_with(HOSTILE_SEGMENT));
        let (abs, rel) = s.cell_dir().unwrap();
        assert!(rel.is_relative() && abs.is_dir());
        for st in TargetState::ALL {
            let t = abs.join(st.as_str());
            set_up(&t, st, "A").unwrap();
            let e = take(&t);
            match st {
                TargetState::Absent => assert_eq!(e, Entry::Absent),
                TargetState::EmptyDir => assert!(matches!(&e, Entry::Dir { entries, .. } if entries.is_empty())),
                _ => assert!(e.holds("A"), "{st:?}"),
            }
        }
        make_source(&abs.join("src"), SourceKind::Dir, "B").unwrap();
        assert!(take(&abs.join("src")).holds("B"));
        let top = s.top().to_path_buf();
        drop(s);
        assert!(!top.exists());
    }

    #[test]
    fn wine_spelling() {
        assert_eq!(spell(Path::new("/tmp/a b/c"), PathStyle::Wine), "Z:\\tmp\\a b\\c");
        assert_eq!(spell(Path::new("c1/target"), PathStyle::Wine), "c1\\target");
        assert_eq!(TargetState::parse("empty-dir"), Some(TargetState::EmptyDir));
    }
}

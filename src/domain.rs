//! The vocabulary every layer shares: what stands at a target, how a runtime spells paths,
//! which scenario a cell measured, and the raw error a probe reports. It lives here, not in
//! the I/O layer, so that the report schema (`results.json`) depends on no process code.
//! Spellings are those of `docs/GLOSSARY.md`.

use serde::{Deserialize, Serialize};

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

/// The driver note ([`crate::report::model::Cell::driver`]) of cmd's persistent loop: one
/// cmd process per contender for a whole API family (`src/exec/cmdloop.rs`).
pub const LOOP_DRIVER: &str = "loop";

/// How a runtime spells paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathStyle {
    /// The host's own paths.
    Native,
    /// Wine's view of the Unix file system: `/a/b` → `Z:\a\b`, relative `a/b` → `a\b`.
    Wine,
}

/// Which scenario a cell measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scenario {
    /// One attempt against a target state put in place by a first comer.
    SecondComer,
    /// K contenders released together on an absent target, T times.
    Race,
    /// A writer publishes files by a recipe while readers read them (`docs/HANDOFF.md`).
    Publish,
    /// Workers take the files of one folder by a recipe (`docs/HANDOFF.md`).
    Claim,
    /// A consumer waits for a data file to be complete, by a marker or by stability
    /// (`docs/HANDOFF.md`).
    DoneMarker,
}

impl Scenario {
    /// The spelling used in ids and flags.
    pub fn as_str(self) -> &'static str {
        match self {
            Scenario::SecondComer => "second-comer",
            Scenario::Race => "race",
            Scenario::Publish => "publish",
            Scenario::Claim => "claim",
            Scenario::DoneMarker => "done-marker",
        }
    }
}

/// The raw error a probe reports, exactly as the runtime gave it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct RawError {
    /// Exception class or error name (`Error`, `AlreadyExists`, `System.IO.IOException`).
    #[serde(rename = "type", default)]
    pub kind: String,
    /// The runtime's own string code (Node's `err.code`), if any.
    #[serde(default)]
    pub code: Option<String>,
    /// errno, if any.
    #[serde(default)]
    pub errno: Option<i64>,
    /// HResult (.NET, PowerShell), if any.
    #[serde(default)]
    pub hresult: Option<i64>,
    /// cmd's ERRORLEVEL, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errorlevel: Option<i64>,
    /// The message.
    #[serde(default)]
    pub message: String,
}

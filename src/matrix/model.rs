//! Serde model of a matrix file.

use serde::{Deserialize, Serialize};

/// What the harness must prepare, before the release, for a variant that moves, links or
/// copies something onto the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SourceKind {
    /// Nothing: the variant writes its token itself.
    #[default]
    None,
    /// A file whose content is the contender's token.
    File,
    /// A directory holding the contender's mark file (`owner.<token>`).
    Dir,
}

/// What a successful call leaves at the target name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Creates {
    /// A regular file holding the token.
    File,
    /// A directory; the probe writes the contender's mark file into it after success, so the
    /// harness can see who holds it.
    Dir,
    /// A symbolic link to the contender's source file.
    Symlink,
}

/// How a call hands back its result (`docs/GLOSSARY.md`, "call form"): what a caller waits on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Form {
    /// Returns or throws before the caller continues (the default).
    #[default]
    Sync,
    /// Calls back with an error-first callback.
    Callback,
    /// Returns a promise (or a task) that resolves or rejects.
    Promise,
    /// Returns a stream whose events (`error`, `close`) say how it ended.
    Stream,
}

impl Form {
    /// True for the default form, `sync` (results.json leaves it out).
    pub fn is_sync(&self) -> bool {
        *self == Form::Sync
    }
}

/// A fact of the probe's result that the tables show beside the outcome (`show` in a matrix):
/// results.json keeps every fact a probe reports; the tables show only these, to stay short.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fact {
    /// The value the call returned (protocol 2 `returned`), e.g. `returned target`.
    Returned,
    /// How a failure reached the caller (protocol 2 `delivery`): `throw`, `rejected`,
    /// `callback` or `error-event`.
    Delivery,
}

/// One way of trying to take a name, in one API family (`docs/GLOSSARY.md`, "variant").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    /// Stable id, `<family>.<call>[.<option>]`, e.g. `node.writeFileSync.wx`.
    pub id: String,
    /// The API family; filled from the file's `family` key. Never read from a `[[variant]]`
    /// table: there, `family` is an unknown key.
    #[serde(default, skip_deserializing)]
    pub family: String,
    /// The exact call as shown in tables.
    pub call: String,
    /// What the harness prepares as the source (default `none`).
    #[serde(default)]
    pub source: SourceKind,
    /// What a success leaves at the target.
    pub creates: Creates,
    /// A known anti-pattern (check-then-create), measured so that its failure is visible.
    #[serde(default)]
    pub anti_pattern: bool,
    /// The family's detection control: a check-then-create raced in every run to show that
    /// the race finds windows (at most one per family). It says what the variant is for, not
    /// what it will do: its counts are measured like any other's.
    #[serde(default)]
    pub control: bool,
    /// The variant keeps a handle open after the call (`hold_ms` in the protocol).
    #[serde(default)]
    pub holds: bool,
    /// How the call hands back its result (default `sync`).
    #[serde(default)]
    pub form: Form,
    /// Facts of the result the tables show beside the outcome (default none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub show: Vec<Fact>,
    /// Where the documented behaviour comes from; free text.
    #[serde(default)]
    pub note: String,
}

/// One matrix file: a family and its variants.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MatrixFile {
    pub family: String,
    #[serde(default)]
    pub variant: Vec<Variant>,
}

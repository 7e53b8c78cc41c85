//! Serde model of a matrix file.

use serde::{Deserialize, Serialize};

/// What the harness must prepare, before the release, for a variant that moves, links or
/// copies something onto the target.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum SourceKind {
    /// Nothing: the variant writes its token itself.
    #[default]
    None,
    /// A file whose content is the contender's token.
    File,
    /// An empty directory: it carries no token, so the harness records its identity (device
    /// and inode) before the release and finds its owner by that identity afterwards (a copy
    /// of it, `copies = true`, has its own identity: the probe writes the mark after the call).
    EmptyDir,
    /// A directory holding the contender's mark file (`owner.<token>`).
    Dir,
    /// A directory tree: the mark file at the top, and `sub/deeper/data` holding the token.
    Tree,
}

/// Splits a `--variant` pattern into its id glob and the source-kind name after its last `@`
/// (`node.renameSync@empty-dir` → `("node.renameSync", Some("empty-dir"))`); the kind is not
/// checked here.
pub fn split_source_pattern(pattern: &str) -> (&str, Option<&str>) {
    match pattern.rsplit_once('@') {
        Some((glob, kind)) => (glob.trim(), Some(kind.trim())),
        None => (pattern, None),
    }
}

impl SourceKind {
    /// Every kind, in the order `sources` lists are usually written.
    pub const ALL: [SourceKind; 5] =
        [SourceKind::None, SourceKind::File, SourceKind::EmptyDir, SourceKind::Dir, SourceKind::Tree];

    /// The kind as the matrix spells it (`empty-dir`).
    pub fn as_str(&self) -> &'static str {
        match self {
            SourceKind::None => "none",
            SourceKind::File => "file",
            SourceKind::EmptyDir => "empty-dir",
            SourceKind::Dir => "dir",
            SourceKind::Tree => "tree",
        }
    }

    /// The kind spelled `s` (as in a matrix or a cell key), if any.
    pub fn parse(s: &str) -> Option<SourceKind> {
        SourceKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// True for the directory kinds (`empty-dir`, `dir`, `tree`): their identity is recorded
    /// before the release and names their owner afterwards.
    pub fn is_dir(&self) -> bool {
        matches!(self, SourceKind::EmptyDir | SourceKind::Dir | SourceKind::Tree)
    }
}

/// What a successful call leaves at the target name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Fact {
    /// The value the call returned (protocol 2 `returned`), e.g. `returned target`.
    Returned,
    /// How a failure reached the caller (protocol 2 `delivery`): `throw`, `rejected`,
    /// `callback` or `error-event`.
    Delivery,
}

/// The job a call is used for in file hand-offs: what a person reaching for it wants. The
/// answer lists ("use" and "don't use" per runtime) are grouped by it. Matrix data: it says what
/// the call is *for*, never what it will do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Intent {
    /// Create a lock file: a new file at a name nobody holds (`O_EXCL`, `CREATE_NEW`).
    LockFile,
    /// Create a lock directory (`mkdir` as a lock).
    LockDir,
    /// Take the name with a link to a file of one's own (`link(2)`, `symlink(2)`).
    LockLink,
    /// Publish a file (a copy or a write of finished data) without replacing what is there.
    Publish,
    /// Claim an item by renaming it, or move a file to a name, without replacing another's.
    ClaimByRename,
    /// Move or copy a directory into place without merging into or replacing another's.
    PlaceDir,
}

impl Intent {
    /// Every intent, in the order the answer lists show them.
    pub const ALL: [Intent; 6] =
        [Intent::LockFile, Intent::LockDir, Intent::LockLink, Intent::Publish, Intent::ClaimByRename, Intent::PlaceDir];
    /// The matrix spelling (`lock-file`).
    pub fn as_str(self) -> &'static str {
        match self {
            Intent::LockFile => "lock-file",
            Intent::LockDir => "lock-dir",
            Intent::LockLink => "lock-link",
            Intent::Publish => "publish",
            Intent::ClaimByRename => "claim-by-rename",
            Intent::PlaceDir => "place-dir",
        }
    }
    /// What a person wants, in words (`create a lock file`).
    pub fn describe(self) -> &'static str {
        match self {
            Intent::LockFile => "create a lock file",
            Intent::LockDir => "create a lock directory",
            Intent::LockLink => "take a name with a link",
            Intent::Publish => "publish a file without replacing",
            Intent::ClaimByRename => "claim by rename (move a file to a name)",
            Intent::PlaceDir => "move or copy a directory into place",
        }
    }
}

/// One way of trying to take a name, in one API family (`docs/GLOSSARY.md`, "variant").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// What the harness prepares as the source (default `none`). With `sources`, the first of
    /// them as the matrix says it; in a variant of [`Variant::per_source`], the kind this copy
    /// is measured with.
    #[serde(default)]
    pub source: SourceKind,
    /// Every kind of source the call is measured with (`["file", "empty-dir", "dir"]`), the
    /// first one the variant's own (its cells keep the ids they had with a single `source`);
    /// empty when the matrix gives only `source` (a shorthand for a list of one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<SourceKind>,
    /// The call copies its source (the target is a new object, not the source moved): with an
    /// `empty-dir` source, whose copy carries neither token nor identity, the probe writes the
    /// mark file after a successful call, as for `creates = "dir"`. Moves never get a mark
    /// there: written after the call, it would fill the directory a rival's `rename(2)` could
    /// otherwise have replaced.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub copies: bool,
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
    /// The job a person uses the call for ([`Intent`]); the answer lists group by it. Every
    /// built-in variant has one; a variant without is listed under "other".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent: Option<Intent>,
    /// Facts of the result the tables show beside the outcome (default none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub show: Vec<Fact>,
    /// Where the documented behaviour comes from; free text.
    #[serde(default)]
    pub note: String,
    /// What the runtime's own documentation says the call does when the name is taken, quoted
    /// with its address: a cited claim, shown beside the measurement (and marked where the
    /// measurement contradicts it), never an expected outcome: nothing is judged from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub promise: Option<Promise>,
}

/// A runtime documentation's words about a call meeting a taken name ([`Variant::promise`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Promise {
    /// The documentation's words, quoted as written (at most [`Promise::MAX_QUOTE`] bytes).
    pub quote: String,
    /// Where they are: an `https://` address.
    pub url: String,
}

impl Promise {
    /// The longest quote a matrix may carry, in bytes: a sentence or two, not a page.
    pub const MAX_QUOTE: usize = 300;

    /// Why this promise cannot be shown as given (an empty or overlong quote, an address that
    /// is not `https://`), `None` when it is fine.
    pub fn problem(&self) -> Option<String> {
        if self.quote.trim().is_empty() {
            return Some("promise.quote is empty".into());
        }
        if self.quote.len() > Promise::MAX_QUOTE {
            return Some(format!("promise.quote is {} bytes; at most {}", self.quote.len(), Promise::MAX_QUOTE));
        }
        if let Some(c) = self.quote.chars().find(|c| c.is_control()) {
            return Some(format!("promise.quote holds the control character {c:?}; quote the words on one line"));
        }
        let host = self.url.strip_prefix("https://").and_then(|r| r.split('/').next()).unwrap_or("");
        if host.is_empty() || self.url.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Some(format!("promise.url {:?} is not an https:// address", self.url));
        }
        None
    }
}

impl Variant {
    /// The source kind its cells are keyed by: `None` for the variant's own (first) source,
    /// whose cells keep the ids they had before `sources` existed; the kind otherwise.
    pub fn cell_source(&self) -> Option<SourceKind> {
        (self.sources.len() > 1 && self.sources.first() != Some(&self.source)).then_some(self.source)
    }

    /// True for the call's plain form, the one `run --races core` (the default) races: the
    /// synchronous form (`form = "sync"`) with the variant's first source kind. Its other
    /// forms and source kinds are measured as second comers only, unless `--races all`.
    pub fn is_core(&self) -> bool {
        self.form == Form::Sync && self.sources.first().is_none_or(|k| *k == self.source)
    }

    /// One variant per source kind it is measured with (`sources`), each with `source` set to
    /// that kind, in the matrix's order; the variant itself when it has one kind or none.
    pub fn per_source(&self) -> Vec<Variant> {
        if self.sources.len() <= 1 {
            return vec![self.clone()];
        }
        self.sources.iter().map(|&k| Variant { source: k, ..self.clone() }).collect()
    }

    /// True when the probe is asked to write the contender's mark file into the target after a
    /// successful call: variants that create a directory (`creates = "dir"`) from nothing or
    /// by moving a directory holding a mark, and copies of an empty directory (`copies`). A moved
    /// empty directory is found by its identity instead (see [`Variant::copies`]), and a file
    /// source (of a variant that also takes directories) leaves a file, which holds no mark.
    pub fn writes_mark(&self) -> bool {
        match self.source {
            SourceKind::EmptyDir => self.copies,
            SourceKind::File => false,
            // a copied directory carries its mark already; one written after the call would hide
            // a copy merged into a directory that was there (the mark looks like bookkeeping)
            SourceKind::Dir | SourceKind::Tree => self.creates == Creates::Dir && !self.copies,
            SourceKind::None => self.creates == Creates::Dir,
        }
    }

    /// The variant's label in tables: its id, and for a source other than its own, the kind
    /// (`node.renameSync ← empty-dir`).
    pub fn label(id: &str, source: Option<SourceKind>) -> String {
        match source {
            Some(k) => format!("{id} ← {}", k.as_str()),
            None => id.to_string(),
        }
    }
}

/// One matrix file: a family and its variants.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MatrixFile {
    pub family: String,
    #[serde(default)]
    pub variant: Vec<Variant>,
}

//! The vocabulary every layer shares: what stands at a target, how a runtime spells paths,
//! which scenario a cell measured, how an attempt ended, the raw error a probe reports, and
//! the limits of a race ([`MAX_TRIALS`], [`MAX_CONTENDERS`]). It lives here, not in the I/O
//! layer or the command line, so that the report schema (`results.json`) depends on no process
//! code. Spellings are those of `docs/GLOSSARY.md`.
//!
//! Floor: the bottom one; it reads no other module of the crate.

use serde::{Deserialize, Serialize};

/// What a race's contenders are (`--contender-kind`; `docs/GLOSSARY.md`, "contender kind"):
/// separate processes, one probe per contender (the default), or threads (workers) of one
/// probe process, released by the probe through shared memory (`probes/PROTOCOL.md`,
/// "Threads").
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum ContenderKind {
    /// One process per contender.
    #[default]
    Processes,
    /// One thread (worker) per contender, all in one probe process.
    Threads,
}

impl ContenderKind {
    /// True for [`ContenderKind::Processes`] (results.json leaves the field out then, so
    /// process cells read as they did before the field existed).
    pub fn is_processes(&self) -> bool {
        *self == ContenderKind::Processes
    }

    /// The spelling of results.json and of cell ids: `processes`, `threads`.
    pub fn as_str(self) -> &'static str {
        match self {
            ContenderKind::Processes => "processes",
            ContenderKind::Threads => "threads",
        }
    }
}

/// What stands at the target before a second comer's attempt
/// (`docs/GLOSSARY.md`, "target state").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// The target is the source itself: the call is given the same path twice, and the file
    /// there holds the second comer's token (its own source). For variants with a file source.
    #[serde(rename = "self")]
    SelfSame,
    /// The target and the source are two hard links of one file holding the second comer's
    /// token. For variants with a file source.
    SelfHardlink,
    /// The target is a symbolic link to the source (link text `src-1`), a file holding the
    /// second comer's token. For variants with a file source.
    SelfSymlink,
    /// A symbolic link (text `link-dest`) to a file holding the first comer's token.
    SymlinkToFile,
    /// A symbolic link (text `link-dest`) to a directory holding the first comer's mark file.
    SymlinkToDir,
    /// A symbolic link (text `link-dest`) to nothing.
    DanglingSymlink,
}

impl TargetState {
    /// All states, in table order.
    pub const ALL: [TargetState; 10] = [
        TargetState::Absent,
        TargetState::File,
        TargetState::EmptyDir,
        TargetState::Dir,
        TargetState::SelfSame,
        TargetState::SelfHardlink,
        TargetState::SelfSymlink,
        TargetState::SymlinkToFile,
        TargetState::SymlinkToDir,
        TargetState::DanglingSymlink,
    ];

    /// The states of a default run (`run --target`'s default): the control and the three
    /// first-comer states every variant meets. The others are measured on request
    /// (`--target all` or by name): with them, cmd under Wine alone (one process per
    /// attempt) would add about a minute to every run (issue 13 asks for a short default).
    pub const DEFAULT: [TargetState; 4] =
        [TargetState::Absent, TargetState::File, TargetState::EmptyDir, TargetState::Dir];

    /// The glossary spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TargetState::Absent => "absent",
            TargetState::File => "file",
            TargetState::EmptyDir => "empty-dir",
            TargetState::Dir => "dir",
            TargetState::SelfSame => "self",
            TargetState::SelfHardlink => "self-hardlink",
            TargetState::SelfSymlink => "self-symlink",
            TargetState::SymlinkToFile => "symlink-to-file",
            TargetState::SymlinkToDir => "symlink-to-dir",
            TargetState::DanglingSymlink => "dangling-symlink",
        }
    }

    /// Parses the glossary spelling.
    pub fn parse(s: &str) -> Option<TargetState> {
        TargetState::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// True for the states whose target is the variant's own source (`self`, `self-hardlink`,
    /// `self-symlink`).
    pub fn is_self(self) -> bool {
        matches!(self, TargetState::SelfSame | TargetState::SelfHardlink | TargetState::SelfSymlink)
    }

    /// Whether a variant whose source is a file (`has_file_source`) can meet this state: the
    /// `self` states need a file source (the target is that file); every other state applies
    /// to every variant.
    pub fn applies(self, has_file_source: bool) -> bool {
        !self.is_self() || has_file_source
    }
}

/// Why a race or hand-off cell has no amplified run (results.json and cross-race.json
/// `amplified_unavailable`). The file holds its words ([`NoAmplified::text`]); the program
/// reads back the kind, so a reworded reason never changes how a baseline compares. Reading
/// maps the words of every earlier version: the three fixed texts, any text starting with
/// `off` (`--amplify off`), a broken tracer's two reasons by how they begin, and everything
/// else as the reason it gives.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum NoAmplified {
    /// Not requested: `--amplify off`.
    Off,
    /// The cell's natural check, which runs first, already showed the failure: an amplified
    /// race cannot make it `exclusive` (adaptive trials; `--thorough` runs them all).
    Skipped,
    /// A hand-off of the default run: its amplified pass runs with `--thorough` or
    /// `--amplify on`.
    NotRequested,
    /// Requested but not run: amplification is unavailable here, not run for this runtime, or
    /// stopped; the reason, as one line.
    Unavailable(String),
    /// Requested and available, but this family's probes broke under the tracer: they did not
    /// start under it (twice) or completed no amplified trial; the reason, as one line, which
    /// starts with [`NoAmplified::DID_NOT_START`] or [`NoAmplified::NO_TRIAL`]. A race left
    /// natural by a fault vouches for nothing a working tracer would have shown
    /// ([`crate::verdict::RaceEvidence::amplified_broke`]).
    Broke(String),
}

impl NoAmplified {
    /// The words written for [`NoAmplified::Off`].
    pub const OFF_TEXT: &'static str = "off (--amplify off)";
    /// The words written for [`NoAmplified::Skipped`].
    pub const SKIPPED_TEXT: &'static str =
        "skipped where the natural race already showed the failure (--thorough runs them all)";
    /// The words written for [`NoAmplified::NotRequested`].
    pub const NOT_REQUESTED_TEXT: &'static str = "not run (--thorough or --amplify on runs it)";

    /// How the reason of a family whose probes did not start under the tracer begins.
    pub const DID_NOT_START: &'static str = "the probe did not start under strace: ";
    /// How the reason of a family whose probes completed no amplified trial begins.
    pub const NO_TRIAL: &'static str = "no amplified trial completed: ";

    /// The reason of [`NoAmplified::Broke`] for probes that did not start under the tracer,
    /// with the start's `evidence`.
    pub fn did_not_start(evidence: &str) -> String {
        format!("{}{evidence}", Self::DID_NOT_START)
    }

    /// The reason of [`NoAmplified::Broke`] for probes that completed no amplified trial, with
    /// the run's `evidence`.
    pub fn no_trial(evidence: &str) -> String {
        format!("{}{evidence}", Self::NO_TRIAL)
    }

    /// The words shown and written (`off (--amplify off)`, the reason).
    pub fn text(&self) -> &str {
        match self {
            NoAmplified::Off => Self::OFF_TEXT,
            NoAmplified::Skipped => Self::SKIPPED_TEXT,
            NoAmplified::NotRequested => Self::NOT_REQUESTED_TEXT,
            NoAmplified::Unavailable(why) | NoAmplified::Broke(why) => why,
        }
    }

    /// The kind that `text` (from a file) names.
    pub fn from_text(text: &str) -> NoAmplified {
        match text {
            Self::SKIPPED_TEXT => NoAmplified::Skipped,
            Self::NOT_REQUESTED_TEXT => NoAmplified::NotRequested,
            t if t.starts_with("off") => NoAmplified::Off,
            t if t.starts_with(Self::DID_NOT_START) || t.starts_with(Self::NO_TRIAL) => {
                NoAmplified::Broke(t.to_string())
            }
            t => NoAmplified::Unavailable(t.to_string()),
        }
    }

    /// True when the run could not be made (not by request, nor because it was not needed).
    pub fn is_unavailable(&self) -> bool {
        matches!(self, NoAmplified::Unavailable(_) | NoAmplified::Broke(_))
    }
}

impl std::fmt::Display for NoAmplified {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.text())
    }
}

impl Serialize for NoAmplified {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.text())
    }
}

impl<'de> Deserialize<'de> for NoAmplified {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<NoAmplified, D::Error> {
        String::deserialize(d).map(|t| NoAmplified::from_text(&t))
    }
}

impl schemars::JsonSchema for NoAmplified {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "NoAmplified".into()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        String::json_schema(g)
    }
}

/// The most trials a race runs (`--trials`, `--max-trials`); results files with more are rejected.
pub const MAX_TRIALS: u32 = 1_000_000;

/// The most contenders a race has (`run --contenders`, `race --contender`).
pub const MAX_CONTENDERS: u32 = 64;

/// The driver note ([`crate::report::model::Cell::driver`]) of a persistent loop: one process
/// per contender for a whole API family answering attempt after attempt (cmd's,
/// `src/exec/cmdloop.rs`; the shells', `src/exec/shloop.rs`).
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// Contenders find a stale lease (its holder gone) and take it over by a recipe
    /// (`docs/HANDOFF.md`).
    Lease,
    /// Workers each get the same item, with one idempotency key, and process it by a recipe
    /// that records the key (`docs/HANDOFF.md`).
    Ledger,
    /// A lease holder stopped past its lease is resumed after a taker took the lease over, and
    /// goes on by a recipe: renews, makes its side effect, releases (`docs/HANDOFF.md`).
    Holder,
    /// Workers each add 1 to one shared counter file a number of times by a recipe while a
    /// reader reads it (`docs/HANDOFF.md`).
    Update,
    /// A holder keeps files locked by a runtime's OS lock while an intruder of the same runtime
    /// and the harness write, rename, delete, map and lock them without asking
    /// (`docs/HANDOFF.md`).
    OsLock,
    /// A consumer watches a folder by a recipe (change notifications, a listing, both) and is
    /// paused while a burst of new files larger than the kernel's notification queue lands
    /// (`docs/HANDOFF.md`).
    Watch,
    /// Contenders take one lock by a lock implementation's `acquire`/`release` (built-in lock
    /// code, a library, or the user's own module under `conformance check`), around a critical
    /// section, with holders killed, paused and released by someone else (`docs/HANDOFF.md`).
    Mutex,
}

impl Scenario {
    /// The hand-off scenarios, in the order a run measures them and the reports show them.
    pub const HANDOFFS: [Scenario; 10] = [
        Scenario::Publish,
        Scenario::DoneMarker,
        Scenario::Claim,
        Scenario::Lease,
        Scenario::Holder,
        Scenario::Ledger,
        Scenario::Update,
        Scenario::OsLock,
        Scenario::Watch,
        Scenario::Mutex,
    ];

    /// Every scenario: the two of a matrix row, then [`Scenario::HANDOFFS`].
    pub const ALL: [Scenario; 12] = [
        Scenario::SecondComer,
        Scenario::Race,
        Scenario::Publish,
        Scenario::DoneMarker,
        Scenario::Claim,
        Scenario::Lease,
        Scenario::Holder,
        Scenario::Ledger,
        Scenario::Update,
        Scenario::OsLock,
        Scenario::Watch,
        Scenario::Mutex,
    ];

    /// True for a hand-off scenario ([`Scenario::HANDOFFS`]): its cells measure recipes and
    /// hold counters, not a row's outcomes.
    pub fn is_handoff(self) -> bool {
        Scenario::HANDOFFS.contains(&self)
    }

    /// The scenario spelled `s` ([`Scenario::as_str`]), if any.
    pub fn parse(s: &str) -> Option<Scenario> {
        Scenario::ALL.into_iter().find(|x| x.as_str() == s)
    }

    /// The spelling used in ids and flags.
    pub fn as_str(self) -> &'static str {
        match self {
            Scenario::SecondComer => "second-comer",
            Scenario::Race => "race",
            Scenario::Publish => "publish",
            Scenario::Claim => "claim",
            Scenario::DoneMarker => "done-marker",
            Scenario::Lease => "lease",
            Scenario::Holder => "holder",
            Scenario::Ledger => "ledger",
            Scenario::Update => "update",
            Scenario::OsLock => "os-lock",
            Scenario::Watch => "watch",
            Scenario::Mutex => "mutex",
        }
    }

    /// The id prefix of the scenario's recipes (`matrices/handoff/recipes.toml`): its name,
    /// `done` for done-marker (ids stay short); `None` for a scenario without recipes.
    pub fn recipe_prefix(self) -> Option<&'static str> {
        match self {
            Scenario::Publish => Some("publish"),
            Scenario::Claim => Some("claim"),
            Scenario::DoneMarker => Some("done"),
            Scenario::Lease => Some("lease"),
            Scenario::Holder => Some("holder"),
            Scenario::Ledger => Some("ledger"),
            Scenario::Update => Some("update"),
            Scenario::OsLock => Some("os-lock"),
            Scenario::Watch => Some("watch"),
            Scenario::Mutex => Some("mutex"),
            Scenario::SecondComer | Scenario::Race => None,
        }
    }

    /// What the scenario measures, in a line (the help of `--scenario`).
    pub fn about(self) -> &'static str {
        match self {
            Scenario::SecondComer => "Second comer against each target state",
            Scenario::Race => "Races among contenders",
            Scenario::Publish => "A writer publishes files by each recipe while readers read them (hand-off)",
            Scenario::Claim => "Workers take the files of one folder by each recipe (hand-off)",
            Scenario::DoneMarker => {
                "A consumer waits for a data file to be complete, by a marker or by stability (hand-off)"
            }
            Scenario::Lease => "Contenders take over a stale lease by each recipe (hand-off)",
            Scenario::Holder => {
                "A lease holder paused past its lease goes on after a takeover by each recipe (hand-off)"
            }
            Scenario::Ledger => {
                "Workers each get one item with one idempotency key and process it by each recipe (hand-off)"
            }
            Scenario::Update => "Workers each add 1 to one shared counter file by each recipe (hand-off)",
            Scenario::OsLock => {
                "A holder keeps files locked by each OS lock while others write, rename, delete and lock them (hand-off)"
            }
            Scenario::Watch => {
                "A consumer watches a folder by each recipe while a burst larger than the notification queue lands (hand-off)"
            }
            Scenario::Mutex => {
                "Contenders take one lock by each lock implementation's acquire/release, with holders killed, paused and released by others (hand-off; not in `all`)"
            }
        }
    }
}

/// Which rows a run races (`run --races`), as `run_info.races` records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RaceScope {
    /// Each call's plain form only (its synchronous form with its first source kind); the
    /// other rows have second-comer cells only (`--races core`, `run --quick`).
    Core,
    /// Every row, except one whose second comer already rules it out as a lock (a name it
    /// replaced, kept, or went inside): a race cannot change that row's answer, and its race
    /// column says so (`--races auto`, the default run).
    Auto,
    /// Every row, in every form and with every source kind (`--races all`, `--thorough`).
    All,
}

impl RaceScope {
    /// `core`, `auto` or `all`: the `--races` value.
    pub fn as_str(self) -> &'static str {
        match self {
            RaceScope::Core => "core",
            RaceScope::Auto => "auto",
            RaceScope::All => "all",
        }
    }
}

/// How an attempt ended, as reported by the probe (or by the harness for faults).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Report {
    /// The call returned success.
    Success,
    /// The call returned an error.
    Error,
    /// The call finished only after the harness answered a console prompt.
    Prompted,
    /// No answer within the timeout.
    Timeout,
    /// The probe died or broke the protocol.
    Crashed,
    /// The probe does not have the call.
    Unsupported,
    /// The run was interrupted while the attempt was in flight: the engine drops the attempt
    /// (never counted, never stored).
    Interrupted,
    /// The harness failed around the attempt (set-up, snapshot, scratch file system); see
    /// [`crate::verdict::Outcome::HarnessError`].
    HarnessError,
}

impl Report {
    /// The word for a report in evidence and reasons (`crashed`, `harness-error`), spelled as
    /// the outcomes of [`crate::verdict::Outcome`] are.
    pub fn as_str(self) -> &'static str {
        match self {
            Report::Success => "success",
            Report::Error => "error",
            Report::Prompted => "prompted",
            Report::Timeout => "timeout",
            Report::Crashed => "crashed",
            Report::Unsupported => "unsupported",
            Report::Interrupted => "interrupted",
            Report::HarnessError => "harness-error",
        }
    }
}

/// The raw error a probe reports, exactly as the runtime gave it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
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

/// A value a call returned, as a probe reports it (protocol 2 `returned`): its JavaScript
/// `typeof` (or `null`), and the value itself for strings, numbers and booleans, or the class
/// of an object. Never the object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Returned {
    /// `undefined`, `null`, `string`, `number`, `boolean`, `bigint`, `object`, `function`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The value, for strings, numbers and booleans (a big integer as its decimal string).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<serde_json::Value>,
    /// The constructor's name, for objects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
}

impl Returned {
    /// The description of a number equal to the length in bytes of the data the call was given
    /// to write (Bun's `write` returns the bytes it wrote): the data is the attempt's token,
    /// whose length depends on a run's message numbering, so the number itself is not a fact
    /// of the call.
    pub const BYTE_COUNT: &'static str = "byte count";

    /// A short description for tables and cells: `undefined`, `null`, `target` (a string that
    /// is the attempt's target path, as given or as any of `target_forms`, e.g. its absolute
    /// form), `source` (likewise for the source), `'<string>'` otherwise, [`Self::BYTE_COUNT`]
    /// for a number equal to the length of `data` in UTF-8 bytes (the token the call was given
    /// to write), another number as written, `<class>` for an object. Strings are cut to 40
    /// characters.
    pub fn describe(&self, target_forms: &[&str], source_forms: &[&str], data: &str) -> String {
        match (&self.value, self.kind.as_str()) {
            (Some(serde_json::Value::Number(n)), _) if n.as_u64() == Some(data.len() as u64) => Self::BYTE_COUNT.into(),
            (Some(serde_json::Value::String(s)), _) => {
                if target_forms.contains(&s.as_str()) {
                    "target".into()
                } else if source_forms.contains(&s.as_str()) {
                    "source".into()
                } else {
                    let cut: String = s.chars().take(40).collect();
                    format!("'{cut}{}'", if cut.len() < s.len() { "…" } else { "" })
                }
            }
            (Some(v), _) => v.to_string(),
            (None, "object" | "function") => self.class.clone().unwrap_or_else(|| self.kind.clone()),
            (None, kind) => kind.to_string(),
        }
    }
}

/// A file system `run --fs` can make (made by [`crate::fs`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FsKind {
    /// A tmpfs mount (memory).
    Tmpfs,
    /// ext4 on a loop image (`mkfs.ext4`).
    Ext4,
    /// XFS on a loop image (`mkfs.xfs`).
    Xfs,
    /// btrfs on a loop image (`mkfs.btrfs`) with two subvolumes, measured in the first.
    Btrfs,
    /// An overlay mount (lower, upper and work folders on a tmpfs), measured in a folder that
    /// comes from the lower layer.
    Overlay,
    /// exFAT on a loop image (`mkfs.exfat`), mounted by the kernel's driver or `exfat-fuse`.
    Exfat,
    /// sshfs (FUSE) mounts of a folder exported by an `sshd` started on 127.0.0.1 for the run:
    /// two clients of one share.
    Sshfs,
}

impl FsKind {
    /// Every kind, in the order `--fs all` measures them.
    pub const ALL: [FsKind; 7] =
        [FsKind::Tmpfs, FsKind::Ext4, FsKind::Xfs, FsKind::Btrfs, FsKind::Overlay, FsKind::Exfat, FsKind::Sshfs];

    /// The name `--fs` takes and results carry (`xfs`).
    pub fn as_str(self) -> &'static str {
        match self {
            FsKind::Tmpfs => "tmpfs",
            FsKind::Ext4 => "ext4",
            FsKind::Xfs => "xfs",
            FsKind::Btrfs => "btrfs",
            FsKind::Overlay => "overlay",
            FsKind::Exfat => "exfat",
            FsKind::Sshfs => "sshfs",
        }
    }

    /// The kind named `name` (as [`FsKind::as_str`] spells it).
    pub fn parse(name: &str) -> Option<FsKind> {
        FsKind::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

impl std::fmt::Display for FsKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::NoAmplified;

    /// The words of every earlier version read back as their kind, and each kind writes the
    /// words it is read from (a results file round-trips byte for byte).
    #[test]
    fn no_amplified_reads_the_words_of_every_version() {
        for (text, kind) in [
            ("off (--amplify off)", NoAmplified::Off),
            ("off", NoAmplified::Off),
            (NoAmplified::SKIPPED_TEXT, NoAmplified::Skipped),
            (NoAmplified::NOT_REQUESTED_TEXT, NoAmplified::NotRequested),
            (
                "not recorded (a schema 1 file: natural races only)",
                NoAmplified::Unavailable("not recorded (a schema 1 file: natural races only)".into()),
            ),
        ] {
            assert_eq!(NoAmplified::from_text(text), kind, "{text}");
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(serde_json::from_str::<NoAmplified>(&json).unwrap(), kind);
        }
        for k in [NoAmplified::Off, NoAmplified::Skipped, NoAmplified::NotRequested] {
            assert_eq!(NoAmplified::from_text(k.text()), k);
            assert!(!k.is_unavailable());
        }
        assert!(NoAmplified::Unavailable("strace not found".into()).is_unavailable());
        // a broken tracer's two reasons, as earlier files wrote them, read as Broke
        let start = "the probe did not start under strace: no hello within 30000 ms";
        assert_eq!(NoAmplified::did_not_start("no hello within 30000 ms"), start);
        for why in [start.to_string(), NoAmplified::no_trial("stopped: 3 faults")] {
            let k = NoAmplified::from_text(&why);
            assert_eq!(k, NoAmplified::Broke(why.clone()));
            assert!(k.is_unavailable() && k.text() == why);
        }
        let cmd = "not run for cmd: under Wine every cmd attempt makes about 100 file-system calls";
        assert_eq!(NoAmplified::from_text(cmd), NoAmplified::Unavailable(cmd.into()), "by design, not broken");
    }
}

/// What the contest search of a pair's race found (`crate::engine::Sweep::Contested`; a race
/// run's `contest` in results.json): where the second call had won every warm-up trial, the
/// release offset at which the first call won a trial too, which then joined the orderings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Contest {
    /// The first call won at this offset (µs).
    FoundAt(u64),
    /// The first call won no trial at any offset tried, up to this one (µs).
    NotFoundUpTo(u64),
}

//! The results model, serialised as `results.json` (schema 1).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::exec::protocol::RawError;
use crate::verdict::{safe_as_lock, Outcome, RaceStats, RaceVerdict};

/// Which scenario a cell measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scenario {
    /// One attempt against a target state put in place by a first comer.
    SecondComer,
    /// K contenders released together on an absent target, T times.
    Race,
}

impl Scenario {
    /// The spelling used in ids and flags.
    pub fn as_str(self) -> &'static str {
        match self {
            Scenario::SecondComer => "second-comer",
            Scenario::Race => "race",
        }
    }
}

/// A normalised error code with the raw error beside it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorInfo {
    /// `EEXIST`, `ENOENT`, … or `OTHER` (`../shared/GLOSSARY.md`).
    pub code: String,
    /// The error exactly as the probe reported it.
    pub raw: RawError,
}

/// The same second-comer attempt made with a path relative to the probe's working folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RelativeAttempt {
    /// Its outcome.
    pub outcome: Outcome,
    /// Its error, if the call failed.
    pub error: Option<ErrorInfo>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One measured cell: (runtime, variant, scenario, target).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// Stable id `<runtime label>/<variant>/<scenario>/<target>`, for diffs.
    pub id: String,
    /// The runtime row label (`node 20.20.2`).
    pub runtime: String,
    /// The adapter name (`node`), stable across versions.
    pub runtime_name: String,
    /// The runtime version.
    pub runtime_version: String,
    /// Variant id.
    pub variant: String,
    /// API family.
    pub family: String,
    /// The call as shown in tables.
    pub call: String,
    /// Marked as an anti-pattern in the matrix.
    #[serde(default)]
    pub anti_pattern: bool,
    /// `second-comer` or `race`.
    pub scenario: Scenario,
    /// Target state before the attempt (`absent` for races).
    pub target: String,
    /// Second comer: the outcome (absolute path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// Race: the verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<RaceVerdict>,
    /// Second comer: the call's error, if it failed; race: the first loser's error.
    pub error: Option<ErrorInfo>,
    /// Second comer: the same attempt with a relative path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relative: Option<RelativeAttempt>,
    /// Second comer: the target before and after, described.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
    /// See `before`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    /// Race: counts (contenders, trials, winners histogram, spread, …), flat in the JSON.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub race: Option<RaceStats>,
    /// Race: normalised error codes of failed calls → count.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errors: BTreeMap<String, usize>,
    /// Race: trials run again because a contender failed before the release.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub discarded_trials: usize,
    /// Race: completed trials per second of wall time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trials_per_second: Option<f64>,
    /// Faults and prompts: what the harness saw (stderr excerpt, stray output, reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    /// Wall time of the cell, in milliseconds.
    pub elapsed_ms: f64,
}

impl Cell {
    /// An empty cell of `runtime` (label, adapter name, version) for `variant` in `scenario`
    /// on `target`, with its stable id; outcome, verdict and counts are filled in by the caller.
    pub fn new(
        runtime: (&str, &str, &str),
        variant: &crate::matrix::Variant,
        scenario: Scenario,
        target: &str,
    ) -> Cell {
        let (label, name, version) = runtime;
        Cell {
            id: format!("{label}/{}/{}/{target}", variant.id, scenario.as_str()),
            runtime: label.to_string(),
            runtime_name: name.to_string(),
            runtime_version: version.to_string(),
            variant: variant.id.clone(),
            family: variant.family.clone(),
            call: variant.call.clone(),
            anti_pattern: variant.anti_pattern,
            scenario,
            target: target.to_string(),
            outcome: None,
            verdict: None,
            error: None,
            relative: None,
            before: None,
            after: None,
            race: None,
            errors: BTreeMap::new(),
            trials_per_second: None,
            discarded_trials: 0,
            evidence: None,
            elapsed_ms: 0.0,
        }
    }

    /// The outcome or verdict as its glossary word.
    pub fn word(&self) -> &'static str {
        match (self.outcome, self.verdict) {
            (Some(o), _) => o.as_str(),
            (None, Some(v)) => v.as_str(),
            (None, None) => "?",
        }
    }

    /// The key used to compare runs: adapter name instead of label (ignores versions).
    pub fn key(&self) -> String {
        format!("{}/{}/{}/{}", self.runtime_name, self.variant, self.scenario.as_str(), self.target)
    }
}

/// A file system as the harness found it under the scratch folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct FsInfo {
    /// The scratch folder's parent (`--fs-root`).
    pub root: String,
    /// File-system type (`ext4`, `tmpfs`, `overlay`, …), `unknown` where not found.
    pub fs_type: String,
    /// Mount point.
    pub mount_point: String,
    /// Mount options (`rw,relatime`).
    pub mount_options: String,
}

/// What the run measured on, and with which options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// `conformance` version.
    pub harness_version: String,
    /// OS name (`linux`, `windows`, `macos`) and distribution.
    pub os: String,
    /// OS version.
    pub os_version: String,
    /// Kernel version.
    pub kernel: String,
    /// CPU architecture.
    pub arch: String,
    /// The scratch file system.
    pub fs: FsInfo,
    /// Start time, RFC 3339 UTC.
    pub date: String,
    /// Wall time of the whole run, seconds.
    pub duration_s: f64,
    /// Contenders per race.
    pub contenders: usize,
    /// Trials per race (session-mode runtimes).
    pub trials: usize,
    /// Trials per race for one-shot runtimes (cmd).
    pub oneshot_trials: usize,
    /// Per-attempt timeout, ms.
    pub timeout_ms: u64,
    /// The folder name every path passed through (`--hostile-paths`, `--path-segment`), if any.
    #[serde(default)]
    pub path_segment: Option<String>,
    /// Every selected runtime (name, version, path), measured or not, with the reason when not.
    pub runtimes: Vec<RuntimeInfo>,
}

/// A runtime as discovered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuntimeInfo {
    /// Adapter name.
    pub name: String,
    /// Row label.
    pub label: String,
    /// Version.
    pub version: String,
    /// Executable path.
    pub path: Option<String>,
    /// `found`, `not-found` or `broken`.
    pub status: String,
    /// Why not found or broken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Families run.
    pub families: Vec<String>,
}

/// Everything a run produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Results {
    /// Schema version of this file.
    pub schema: u32,
    /// Run information.
    pub run_info: RunInfo,
    /// The cells.
    pub cells: Vec<Cell>,
}

/// One row of a runtime's table: a variant with its cells.
#[derive(Debug, Clone)]
pub struct Row<'a> {
    /// Variant id.
    pub variant: &'a str,
    /// Call text.
    pub call: &'a str,
    /// Anti-pattern flag.
    pub anti_pattern: bool,
    /// Second-comer cells by target.
    pub second: BTreeMap<&'a str, &'a Cell>,
    /// The race cell.
    pub race: Option<&'a Cell>,
}

impl Row<'_> {
    /// Safe as a lock, derived from the cells (`None` = undetermined).
    pub fn safe(&self) -> Option<bool> {
        let mut second: Vec<(String, Outcome)> =
            self.second.iter().filter_map(|(t, c)| c.outcome.map(|o| (t.to_string(), o))).collect();
        second.extend(self.second.iter().filter_map(|(t, c)| c.relative.as_ref().map(|r| (t.to_string(), r.outcome))));
        let race = self.race.and_then(|c| Some((c.verdict?, c.race.as_ref().map_or(0, |s| s.trials))));
        safe_as_lock(&second, race)
    }
}

impl Results {
    /// Runtime labels that have cells, in order of first appearance.
    pub fn measured_runtimes(&self) -> Vec<&str> {
        let mut v: Vec<&str> = Vec::new();
        for c in &self.cells {
            if !v.contains(&c.runtime.as_str()) {
                v.push(&c.runtime);
            }
        }
        v
    }

    /// The rows of one runtime's table, in cell order.
    pub fn rows(&self, runtime: &str) -> Vec<Row<'_>> {
        let mut rows: Vec<Row<'_>> = Vec::new();
        for c in self.cells.iter().filter(|c| c.runtime == runtime) {
            let idx = match rows.iter().position(|r| r.variant == c.variant) {
                Some(i) => i,
                None => {
                    rows.push(Row {
                        variant: &c.variant,
                        call: &c.call,
                        anti_pattern: c.anti_pattern,
                        second: BTreeMap::new(),
                        race: None,
                    });
                    rows.len() - 1
                }
            };
            match c.scenario {
                Scenario::SecondComer => {
                    rows[idx].second.insert(&c.target, c);
                }
                Scenario::Race => rows[idx].race = Some(c),
            }
        }
        rows
    }

    /// Target states present in the cells, in glossary order.
    pub fn targets(&self) -> Vec<&'static str> {
        crate::exec::scratch::TargetState::ALL
            .iter()
            .map(|t| t.as_str())
            .filter(|t| self.cells.iter().any(|c| c.scenario == Scenario::SecondComer && c.target == *t))
            .collect()
    }

    /// Whether any race cell exists.
    pub fn has_races(&self) -> bool {
        self.cells.iter().any(|c| c.scenario == Scenario::Race)
    }
}

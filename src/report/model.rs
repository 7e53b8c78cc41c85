//! The results model, serialised as `results.json` (schema [`SCHEMA`]).

/// The schema version written: 2 added natural and amplified race runs, bounds and the
/// detection control; 3 holds a cell's findings in a `result` tagged by `kind` and nests every
/// group of counts (no flattened fields). Schemas 1 and 2 are read too
/// (`report/legacy.rs`).
pub const SCHEMA: u32 = 3;

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::domain::RawError;
pub use crate::domain::{Scenario, TargetState};
use crate::verdict::{safe_as_lock, Detection, Outcome, RaceEvidence, RaceMode, RaceStats, RaceVerdict};

/// A normalised error code with the raw error beside it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ErrorInfo {
    /// `EEXIST`, `ENOENT`, … or `OTHER` (`docs/GLOSSARY.md`).
    pub code: String,
    /// The error exactly as the probe reported it.
    pub raw: RawError,
}

/// The same second-comer attempt made with a path relative to the probe's working folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RelativeAttempt {
    /// Its outcome.
    pub outcome: Outcome,
    /// Its error, if the call failed.
    pub error: Option<ErrorInfo>,
    /// For faults, prompts and harness errors: what the harness saw (as [`Cell::evidence`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Of a race's natural and amplified runs, the one of the mode `decided_by`.
pub fn deciding_run<'a>(
    decided_by: RaceMode,
    natural: Option<&'a ModeRun>,
    amplified: Option<&'a ModeRun>,
) -> Option<&'a ModeRun> {
    match decided_by {
        RaceMode::Amplified => amplified,
        RaceMode::Natural => natural,
    }
}

/// One way a race cell was run (natural or amplified): its verdict and counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ModeRun {
    /// The verdict of this run alone.
    pub verdict: RaceVerdict,
    /// Amplified runs: the delay injected after each file-system system call, in µs (the run's
    /// `--amplify-delay-us`, or a longer one where the family's control needed it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_us: Option<u64>,
    /// Counts (contenders, trials, winners histogram, multi-winner trials, bounds, barrier
    /// spread in µs, …).
    pub stats: RaceStats,
    /// Normalised error codes of failed calls → count.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errors: BTreeMap<String, usize>,
    /// Trials run again because a contender failed before the release.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub discarded_trials: usize,
    /// Amplified runs: trials run again because the contenders entered their calls further
    /// apart (by their probes' µs stamps) than the injected delay, so the delay could not
    /// overlap them; only trials within it are counted.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub loose_trials: usize,
    /// Amplified runs raised for this cell alone: the first delay (µs), at which the race
    /// stopped after 50 loose trials in a row; it then ran again at four times the delay, as
    /// often as it stopped so (up to 16 ms), and `delay_us` is the delay of the run reported.
    /// The loose trials of every run are in `loose_trials`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raised_from_us: Option<u64>,
    /// Completed trials per second of measured wall time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trials_per_second: Option<f64>,
    /// What the harness saw of faults in this run, or why it stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    /// For a failing verdict: the release offset (µs) whose trials showed it at the highest rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found_at_offset_us: Option<u64>,
    /// The run per release offset (trials are spread over the offsets in turn; the counts
    /// above are their sum).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub orderings: Vec<OrderingRun>,
    /// Where the run's time went per trial (absent in results written before it was measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<TrialCost>,
    /// A pair's race (`run --against`) whose second call won every warm-up trial: what the
    /// search for an ordering at which the first call wins too found (absent where none ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contest: Option<crate::domain::Contest>,
}

/// Where a race run's wall time went: the mean of each step of a trial, in µs by the harness's
/// monotonic clock, over every trial whose contenders were released (warm-up and loose trials
/// too: they cost the same). `trials_per_second` counts only counted trials over the time they
/// took, so the steps here add up to somewhat less than its inverse on a run with many loose
/// trials. `benches/race.sh` prints them.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TrialCost {
    /// The trials measured.
    pub trials: usize,
    /// Making the first comer's state and the sources, and reading the sources' identities (and
    /// the target, where a scenario reads it before the release). The trial folder is made
    /// before this step starts: [`TrialCost::clean_up_us`] holds its removal.
    pub set_up_us: f64,
    /// `prepare` to every contender and each one's `ready`: one round trip through the pipes.
    pub prepare_us: f64,
    /// The release plan: `go` to each contender at its offset, so the sweep's waits (contender
    /// `i` at `i` × offset) are here.
    pub release_us: f64,
    /// From the last `go` to every contender's `result`: the calls, with any injected delay,
    /// and the results' way back.
    pub calls_us: f64,
    /// Reading the target afterwards.
    pub read_us: f64,
    /// Removing the trial folder.
    pub clean_up_us: f64,
}

/// One release ordering of a race run: contender `i` released `i × offset_us` µs after
/// contender 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OrderingRun {
    /// The offset, µs.
    pub offset_us: u64,
    /// The verdict of this ordering's trials alone.
    pub verdict: RaceVerdict,
    /// Their counts and bounds; the barrier spread is net of the planned offsets.
    pub stats: RaceStats,
}

impl ModeRun {
    /// The counts that show this run's verdict most strongly: `(offending trials, trials,
    /// offset)` of the ordering that found a failure at the highest rate, or the whole run's
    /// `(offending, trials, None)` when there is no such ordering.
    pub fn strongest(&self) -> (usize, usize, Option<u64>) {
        if let Some(o) = self.found_at_offset_us.and_then(|at| self.orderings.iter().find(|o| o.offset_us == at)) {
            return (o.stats.trials_showing(self.verdict), o.stats.trials, Some(o.offset_us));
        }
        (self.offending(), self.stats.trials, None)
    }

    /// The detection-control counts of this run: multi-winner trials and trials of the
    /// ordering that caught the most among those with at least
    /// [`crate::verdict::CONTROL_MIN_TRIALS`] trials (among all orderings when none has that
    /// many: never a sum of orderings, so the counts are one ordering's, as its table cell
    /// shows them), and its offset in µs; the whole run, offset 0, when it has no orderings.
    pub fn control_counts(&self) -> (usize, usize, u64) {
        let min = crate::verdict::CONTROL_MIN_TRIALS;
        let best_of = |enough: bool| {
            self.orderings.iter().filter(|o| o.stats.trials > 0 && (!enough || o.stats.trials >= min)).max_by(|a, b| {
                let ra = a.stats.multi_winner_trials as f64 / a.stats.trials as f64;
                let rb = b.stats.multi_winner_trials as f64 / b.stats.trials as f64;
                ra.total_cmp(&rb).then(b.offset_us.cmp(&a.offset_us))
            })
        };
        match best_of(true).or_else(|| best_of(false)) {
            Some(o) => (o.stats.multi_winner_trials, o.stats.trials, o.offset_us),
            None => (self.stats.multi_winner_trials, self.stats.trials, 0),
        }
    }
    /// The trials that show this run's verdict: multi-winner trials for `multiple-winners`,
    /// lost-update, no-winner or faulty trials for those verdicts, 0 otherwise.
    pub fn offending(&self) -> usize {
        self.stats.trials_showing(self.verdict)
    }
}

/// One measured cell: (runtime, variant, scenario, target) and what was found there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Cell {
    /// Stable id `<runtime label>/<variant>/<scenario>/<target>`, for diffs; with
    /// `/source=<kind>` after it for a source kind other than the variant's own ([`Cell::source`]).
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
    /// How the call hands back its result (the matrix's `form`; absent: `sync`).
    #[serde(default, skip_serializing_if = "crate::matrix::Form::is_sync")]
    pub form: crate::matrix::Form,
    /// The job the call is used for (the matrix's `intent`); absent in files written before
    /// intents existed, and for hand-off recipes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent: Option<crate::matrix::Intent>,
    /// The facts of a second comer's result the tables show beside its outcome (the matrix's
    /// `show`: `returned`, `delivery`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub show: Vec<crate::matrix::Fact>,
    /// What the runtime's documentation says the call does when the name is taken (the
    /// matrix's `promise`): a cited claim shown beside the answer, never judged from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub promise: Option<crate::matrix::Promise>,
    /// `second-comer` or `race`.
    pub scenario: Scenario,
    /// Target state before the attempt (`absent` for races).
    pub target: TargetState,
    /// The kind of source the call was given, when the variant takes several (`sources` in its
    /// matrix) and this is not the first of them; absent for the variant's own source, whose
    /// cells keep the ids and keys they had before source kinds existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<crate::matrix::SourceKind>,
    /// This cell is its family's detection control (races).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub control: bool,
    /// Faults, prompts and harness errors: what the harness saw (stderr excerpt, stray output,
    /// reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    /// How the probe was driven, for runtimes with more than one way (cmd): `loop` (one cmd
    /// process per contender, kept for the family) or `one-shot (why the loop was not used)`
    /// (one process per attempt); from the contenders' [`crate::exec::driver::Driver::note`].
    /// `None` for session probes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// What the contenders were (`--contender-kind`): `threads` (K threads of one probe
    /// process) or, left out, `processes`. A thread cell's id and key end in
    /// `/contenders=threads` and its table row in ` (threads)`, so that `compare` and `--expect`
    /// never match it with a process cell.
    #[serde(default, skip_serializing_if = "crate::domain::ContenderKind::is_processes")]
    pub contenders: crate::domain::ContenderKind,
    /// A hand-off recipe that races a library: the version raced, `NAME@VERSION`
    /// (`proper-lockfile@4.1.2`; the recipe's pin, or the one `-r` chose). Not part of the
    /// cell's id, so that `diff` matches two versions' cells and shows what changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    /// Wall time of the cell, in milliseconds.
    pub elapsed_ms: f64,
    /// What the cell found, by kind (`"kind": "second-comer" | "race" | "counters"`).
    pub result: CellResult,
    /// In a merged file (`conformance merge`): the label of the machine and file system the
    /// cell was measured on (one of [`RunInfo::machines`]); absent in a single run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
}

/// What the engine found for one (variant, scenario, target) of a runtime: a [`Cell`] without
/// the runtime's and the variant's names, which the report layer adds
/// ([`Cell::from_finding`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The variant's id.
    pub variant: String,
    /// The scenario.
    pub scenario: Scenario,
    /// The target state before the attempt (`absent` for races).
    pub target: TargetState,
    /// The source kind, when not the variant's own ([`Cell::source`]).
    pub source: Option<crate::matrix::SourceKind>,
    /// The family's detection control.
    pub control: bool,
    /// Faults, prompts and harness errors: what the harness saw.
    pub evidence: Option<String>,
    /// How the probe was driven, for runtimes with more than one way ([`Cell::driver`]).
    pub driver: Option<String>,
    /// What the contenders were ([`Cell::contenders`]).
    pub contenders: crate::domain::ContenderKind,
    /// The library version a hand-off recipe raced ([`Cell::library`]).
    pub library: Option<String>,
    /// Wall time, in milliseconds.
    pub elapsed_ms: f64,
    /// What was found.
    pub result: CellResult,
}

/// What a cell found: one shape per kind of scenario, tagged with `kind` in the JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum CellResult {
    /// A second comer's attempt (boxed, as the race: both are large beside counters).
    SecondComer(Box<SecondComerResult>),
    /// A race's verdict and counts.
    Race(Box<RaceResult>),
    /// A multi-step scenario's counted failures (hand-off protocols).
    Counters(CountersResult),
}

/// A second comer's attempt against a target state put in place by a first comer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SecondComerResult {
    /// The outcome (absolute path), judged from the probe's report and the target before and
    /// after.
    pub outcome: Outcome,
    /// The call's error, if it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorInfo>,
    /// The same attempt with a relative path, when it was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relative: Option<RelativeAttempt>,
    /// The target before the attempt, described (`file token=…`; empty for a harness error).
    pub before: String,
    /// The target after the attempt, described.
    pub after: String,
    /// A failed call: how the failure reached the caller (`throw`, `rejected`, `callback`,
    /// `error-event`), where the probe reports it (protocol 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery: Option<String>,
    /// A successful call whose value the probe reports: that value, described (`target` when it
    /// is the target's path, `undefined`, a number, …; [`crate::domain::Returned::describe`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub returned: Option<String>,
}

/// A race's verdict: its natural and amplified runs, the mode that decided, and the family's
/// detection control.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RaceResult {
    /// The verdict, after the detection control was applied.
    pub verdict: RaceVerdict,
    /// The mode whose run decided the verdict (a failure in either mode decides; otherwise the
    /// amplified run where it ran).
    pub decided_by: RaceMode,
    /// The first failed call's error (natural run first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorInfo>,
    /// The natural run (as the calls happen), when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub natural: Option<ModeRun>,
    /// The amplified run (file-system calls delayed on return), when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amplified: Option<ModeRun>,
    /// Why no amplified run was made (`off` by request, or why it is unavailable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amplified_unavailable: Option<crate::domain::NoAmplified>,
    /// How well this run's detection control (the family's check-then-create anti-pattern)
    /// was caught; `None` when no control ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detection: Option<Detection>,
    /// Why an `exclusive` run became `inconclusive` (`weak race: control caught n/T`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weak_race: Option<String>,
    /// An interrupt (Ctrl-C, SIGTERM) stopped the race before its planned trials: the counts
    /// are the trials completed before it, and the bound says how little they show.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

impl RaceResult {
    /// The counts of its runs: the natural one's, then the amplified one's, where they ran.
    pub fn run_stats(&self) -> Vec<&crate::verdict::RaceStats> {
        self.natural.iter().chain(self.amplified.iter()).map(|m| &m.stats).collect()
    }
}

impl CellResult {
    /// True when the harness could not measure this result (a `harness-error` outcome,
    /// relative repeat or verdict).
    pub fn is_harness_error(&self) -> bool {
        match self {
            CellResult::SecondComer(s) => {
                s.outcome == Outcome::HarnessError
                    || s.relative.as_ref().is_some_and(|r| r.outcome == Outcome::HarnessError)
            }
            CellResult::Race(r) => r.verdict == RaceVerdict::HarnessError,
            CellResult::Counters(c) => c.harness_error,
        }
    }

    /// The `kind` tag: `second-comer`, `race` or `counters`.
    pub fn kind(&self) -> &'static str {
        match self {
            CellResult::SecondComer(_) => "second-comer",
            CellResult::Race(_) => "race",
            CellResult::Counters(_) => "counters",
        }
    }
}

impl RaceResult {
    /// The run that decided the verdict (amplified or natural), if it ran.
    pub fn deciding(&self) -> Option<&ModeRun> {
        deciding_run(self.decided_by, self.natural.as_ref(), self.amplified.as_ref())
    }
}

/// A multi-step scenario's counted failures: counters read from the file system after the
/// run (`torn_reads`, `duplicate_claims`, …) beside the counts they are out of (`reads`,
/// `items`, …). Which counters exist is the scenario's; none is expected to be zero here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CountersResult {
    /// Counter name → count.
    pub counters: BTreeMap<String, u64>,
    /// Normalised error codes of failed calls → count.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errors: BTreeMap<String, usize>,
    /// A few raw errors as the probes reported them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors_sample: Vec<RawError>,
    /// The items stopped early because the harness failed (set-up, snapshot, the scratch file
    /// system; the reason is in the cell's evidence): the counters cover the items before.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub harness_error: bool,
    /// The same items run again amplified (every file-system call of the probes delayed on
    /// return, as for the races: `run_info.amplification`), counted the same way; reported
    /// beside the natural counts, never added to them. Absent when it did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amplified: Option<Box<CountersResult>>,
    /// Why the amplified run is absent (`off (--amplify off)`, a probe that does not start
    /// under strace) or stopped before its items were done (its evidence).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amplified_unavailable: Option<crate::domain::NoAmplified>,
}

impl Cell {
    /// The cell of `runtime` (label, adapter name, version) for what the engine found of
    /// `variant` ([`Finding`]): its stable id, the variant's family and call as shown in tables,
    /// and the finding itself.
    pub fn from_finding(runtime: (&str, &str, &str), variant: &crate::matrix::Variant, f: Finding) -> Cell {
        let (label, name, version) = runtime;
        Cell {
            id: Cell::id_of(label, &variant.id, f.scenario, f.target, f.source, f.contenders),
            runtime: label.to_string(),
            runtime_name: name.to_string(),
            runtime_version: version.to_string(),
            variant: variant.id.clone(),
            family: variant.family.clone(),
            call: variant.call.clone(),
            anti_pattern: variant.anti_pattern,
            form: variant.form,
            intent: variant.intent,
            show: variant.show.clone(),
            promise: variant.promise.clone(),
            scenario: f.scenario,
            target: f.target,
            source: f.source,
            control: f.control,
            evidence: f.evidence,
            driver: f.driver,
            contenders: f.contenders,
            library: f.library,
            elapsed_ms: f.elapsed_ms,
            result: f.result,
            machine: None,
        }
    }

    /// The stable id of a cell: `<runtime label>/<variant>/<scenario>/<target>`, then
    /// `/source=<kind>` for a source other than the variant's own (`source`), and
    /// `/contenders=threads` for a cell measured with threads (`contenders`).
    pub fn id_of(
        runtime_label: &str,
        variant: &str,
        scenario: Scenario,
        target: TargetState,
        source: Option<crate::matrix::SourceKind>,
        contenders: crate::domain::ContenderKind,
    ) -> String {
        let mut id = format!("{runtime_label}/{variant}/{}/{}", scenario.as_str(), target.as_str());
        if let Some(k) = source {
            id = format!("{id}/source={}", k.as_str());
        }
        if !contenders.is_processes() {
            id = format!("{id}/contenders={}", contenders.as_str());
        }
        id
    }

    /// The variant as tables label its row: the id, and the source kind when it is not the
    /// variant's own (`node.renameSync ← empty-dir`).
    pub fn variant_label(&self) -> String {
        let label = crate::matrix::Variant::label(&self.variant, self.source);
        if self.contenders.is_processes() {
            label
        } else {
            format!("{label} ({})", self.contenders.as_str())
        }
    }

    /// The second comer's result, for a second-comer cell.
    pub fn second(&self) -> Option<&SecondComerResult> {
        match &self.result {
            CellResult::SecondComer(s) => Some(s),
            _ => None,
        }
    }

    /// The second comer's result, mutable, for a second-comer cell.
    pub fn second_mut(&mut self) -> Option<&mut SecondComerResult> {
        match &mut self.result {
            CellResult::SecondComer(s) => Some(s),
            _ => None,
        }
    }

    /// The race's result, for a race cell.
    pub fn race(&self) -> Option<&RaceResult> {
        match &self.result {
            CellResult::Race(r) => Some(r),
            _ => None,
        }
    }

    /// The race's result, mutable, for a race cell.
    pub fn race_mut(&mut self) -> Option<&mut RaceResult> {
        match &mut self.result {
            CellResult::Race(r) => Some(r),
            _ => None,
        }
    }

    /// The second comer's outcome, for a second-comer cell.
    pub fn outcome(&self) -> Option<Outcome> {
        self.second().map(|s| s.outcome)
    }

    /// The race verdict, for a race cell.
    pub fn verdict(&self) -> Option<RaceVerdict> {
        self.race().map(|r| r.verdict)
    }

    /// The error shown with the cell: the second comer's, or a race's first loser's.
    pub fn error(&self) -> Option<&ErrorInfo> {
        match &self.result {
            CellResult::SecondComer(s) => s.error.as_ref(),
            CellResult::Race(r) => r.error.as_ref(),
            CellResult::Counters(_) => None,
        }
    }

    /// The outcome or verdict as its glossary word (`counters` for a counters cell).
    pub fn word(&self) -> &'static str {
        match &self.result {
            CellResult::SecondComer(s) => s.outcome.as_str(),
            CellResult::Race(r) => r.verdict.as_str(),
            CellResult::Counters(_) => "counters",
        }
    }

    /// The run that decided a race cell's verdict (amplified or natural), if any ran.
    pub fn deciding(&self) -> Option<&ModeRun> {
        self.race()?.deciding()
    }

    /// True for a hand-off cell the runtime has no recipe for: no counters, no harness error,
    /// and evidence saying `unsupported: …` (a probe that crashed before its first item also
    /// has no counters, but says `crashed`).
    pub fn is_unsupported_handoff(&self) -> bool {
        matches!(&self.result, CellResult::Counters(r) if !r.harness_error && r.counters.is_empty())
            && self.evidence.as_deref().is_some_and(|e| e.starts_with("unsupported"))
    }

    /// The race evidence for "safe as a lock", when this is a race cell.
    pub fn race_evidence(&self) -> Option<RaceEvidence> {
        let r = self.race()?;
        let (clean, upper) = r.deciding().map_or((0, 1.0), |m| (m.stats.clean_trials, m.stats.multi_winner_upper95));
        Some(RaceEvidence {
            verdict: r.verdict,
            clean_trials: clean,
            upper95: upper,
            control_worked: r.detection.as_ref().map(|d| d.worked),
            amplified_broke: matches!(r.amplified_unavailable, Some(crate::domain::NoAmplified::Broke(_))),
        })
    }

    /// The key used to compare runs: adapter name instead of label (ignores versions).
    pub fn key(&self) -> String {
        Cell::id_of(&self.runtime_name, &self.variant, self.scenario, self.target, self.source, self.contenders)
    }
}

/// A file system as the harness found it under the scratch folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
pub struct FsInfo {
    /// The scratch folder's parent (`--fs-root`).
    pub root: String,
    /// File-system type (`ext4`, `tmpfs`, `overlay`, …), `unknown` where not found.
    pub fs_type: String,
    /// Mount point.
    pub mount_point: String,
    /// Mount options (`rw,relatime`).
    pub mount_options: String,
    /// A file system the harness made for the run (`run --fs`): which, and how; absent for a
    /// folder the user gave or the system temp folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub made: Option<MadeFs>,
    /// Two clients of one share (`--second-client`, or the second sshfs mount of `run --fs`):
    /// the second client's view of [`FsInfo::root`]. Each race's odd contenders (k1, k3, …;
    /// `wins_by_contender` counts their wins) used it, the even ones `root`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub second_client: Option<String>,
}

/// A file system `run --fs` made ([`crate::fs`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MadeFs {
    /// Which (`xfs`).
    pub kind: crate::domain::FsKind,
    /// How it was made (`mkfs.xfs version 6.1.0; a 320 MiB sparse image, mounted -o loop`).
    pub how: String,
    /// The FUSE daemon and its version, for a FUSE file system (`SSHFS version 3.7.3; OpenSSH_9.2p1 …`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daemon: Option<String>,
}

/// A file system `run --fs` asked for and could not make or measure, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FsSkipped {
    /// Which.
    pub kind: crate::domain::FsKind,
    /// Why (`mkfs.xfs is not installed (Debian: apt-get install xfsprogs)`).
    pub why: String,
}

/// What the run measured on, and with which options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// Trials per race (session-mode runtimes and the cmd loop).
    pub trials: usize,
    /// Trials per race for one-shot runtimes (one process per attempt: cmd on Windows, or where its loop did not start).
    pub oneshot_trials: usize,
    /// Per-attempt timeout, ms.
    pub timeout_ms: u64,
    /// The folder name every path passed through (`--hostile-paths`, `--path-segment`), if any.
    #[serde(default)]
    pub path_segment: Option<String>,
    /// Where the probes came from: `built-in probes/ (conformance <version>)`, or the
    /// `--probes` folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probes: Option<String>,
    /// Where the matrices came from: `built-in matrices/ (…)`, or the `--matrices` folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matrices: Option<String>,
    /// Which variants were raced (`--races`): `core` (each call's synchronous form with its
    /// first source kind; the other rows have second-comer cells only), `auto` (every row
    /// whose second comer did not already rule it out) or `all`. Absent in files written
    /// before `--races` existed, which raced every variant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub races: Option<crate::domain::RaceScope>,
    /// The run was interrupted (Ctrl-C, SIGTERM): the cells are those measured before the stop,
    /// and races cut short say so (`interrupted` in their result).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// Which pairs of rows were raced against each other (`--against`: `none`, `cover`,
    /// `all`). Absent in files written before `--against` existed, and where no race ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub against: Option<crate::against::AgainstScope>,
    /// Every selected runtime (name, version, path), measured or not, with the reason when not.
    pub runtimes: Vec<RuntimeInfo>,
    /// How races were amplified (or why not).
    pub amplification: AmplificationInfo,
    /// Each measured runtime's detection control, per API family.
    #[serde(default)]
    pub controls: Vec<ControlInfo>,
    /// In a merged file (`conformance merge`): the machines and file systems merged, one per
    /// input run, in order; empty in a single run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub machines: Vec<MachineInfo>,
    /// What the run was asked to measure besides its runtimes (`--variant`, `--scenario`,
    /// `--target`), so that a comparison tells a cell the run did not ask for from one that
    /// is gone; `None` in files written before it was recorded and in merged files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selection: Option<Selection>,
    /// `run --fs`: the file systems asked for that were not measured, each with the reason
    /// (those measured are in [`RunInfo::machines`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fs_skipped: Vec<FsSkipped>,
    /// Where the run's wall time went, step by step in the order they ran (a runtime's turn
    /// once per runtime): the profile `benches/default-run.sh` prints. Empty in files written
    /// before it was recorded, in merged files and for `run --fs`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<PhaseTime>,
}

/// A step of `run` whose wall time [`RunInfo::phases`] records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// Finding the runtimes, their hello checks, building what their probes need.
    Discover,
    /// Installing (or finding in the cache) the libraries the recipes race.
    Libraries,
    /// Starting every runtime's session probes at once, before the first turn.
    StartProbes,
    /// One runtime's turn: its second comers, its races with their detection controls, and its
    /// hand-offs unless they were deferred to the lanes.
    Turn,
    /// The deferred hand-offs of every runtime, in two lanes.
    Handoffs,
    /// The races of pairs of rows against each other (`--against`).
    Pairs,
    /// Printing the tables and rendering the reports.
    Report,
}

/// The wall time of one step of a run ([`RunInfo::phases`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PhaseTime {
    /// Which step.
    pub phase: Phase,
    /// The runtime's label, for a [`Phase::Turn`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
    /// Its wall time, seconds.
    pub seconds: f64,
}

/// The selection of a run ([`RunInfo::selection`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Selection {
    /// The `--variant` patterns (globs over variant and recipe ids) as given, one per item;
    /// empty for every variant.
    pub variants: Vec<String>,
    /// The scenarios measured.
    pub scenarios: Vec<Scenario>,
    /// The second comers' target states.
    pub targets: Vec<TargetState>,
}

impl Selection {
    /// Whether a cell of `scenario`, `target`, variant id `variant` and source kind `source`
    /// ([`Cell::source`]: `None` for the variant's own, first kind) lies inside this
    /// selection. A pattern `GLOB@KIND` selects the cells of that kind only; it never selects a
    /// variant's first kind, whose cells do not name it (such a cell is then not asked for,
    /// never wrongly missing). A pattern that is not a valid glob (a hand-edited file) selects
    /// nothing.
    pub fn includes(
        &self,
        variant: &str,
        source: Option<crate::matrix::SourceKind>,
        scenario: Scenario,
        target: TargetState,
    ) -> bool {
        let matches = |p: &str| {
            let (glob, kind) = crate::matrix::split_source_pattern(p);
            kind.is_none_or(|k| source.is_some_and(|s| s.as_str() == k))
                && globset::Glob::new(glob).is_ok_and(|g| g.compile_matcher().is_match(variant))
        };
        let variant_ok = self.variants.is_empty() || self.variants.iter().any(|p| matches(p));
        variant_ok
            && self.scenarios.contains(&scenario)
            && (scenario != Scenario::SecondComer || self.targets.contains(&target))
    }
}

/// One run merged into a results file (`conformance merge`): where it was measured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MachineInfo {
    /// The label its cells carry in [`Cell::machine`] and in their runtime labels
    /// (`linux 6.1.0 ext4`: OS, kernel, file-system type).
    pub label: String,
    /// The file it was read from, as given to `merge`.
    pub source: String,
    /// OS name and distribution.
    pub os: String,
    /// OS version.
    pub os_version: String,
    /// Kernel version.
    pub kernel: String,
    /// CPU architecture.
    pub arch: String,
    /// The scratch file system.
    pub fs: FsInfo,
    /// Start time of the run, RFC 3339 UTC.
    pub date: String,
}

/// How races were amplified in a run (`--amplify`, `--amplify-delay-us`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AmplificationInfo {
    /// `both`, `on` (amplified only) or `off` (natural only), as requested.
    pub requested: String,
    /// The delay after each listed system call, in microseconds.
    pub delay_us: u64,
    /// The system calls delayed on return.
    pub syscalls: Vec<String>,
    /// Which of those calls races delayed (`--amplify-paths`): `race`, those naming the race's
    /// folder, target or a source; `all`, every one. Absent in results written before the
    /// flag existed, whose races delayed every one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paths: Option<crate::exec::amplify::DelayScope>,
    /// `--offsets` as given (µs), when it replaced the default sweeps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offsets_us: Option<Vec<u64>>,
    /// `--max-rate` (a probability), when races added trials up to a bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rate: Option<f64>,
    /// `--max-trials`, with `--max-rate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_trials: Option<usize>,
    /// The tracer, e.g. `strace -- version 6.1`, when amplification was available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Why amplification was unavailable on this machine, if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
}

/// One runtime's detection control for one API family.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ControlInfo {
    /// Runtime row label.
    pub runtime: String,
    /// API family.
    pub family: String,
    /// The judgement (variant, counts per mode, worked or not).
    pub detection: Detection,
    /// Where the control was weak at the run's amplification delay and was raced again with
    /// longer ones: each (delay µs, caught, trials) tried before the one judged, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub escalations: Vec<[u64; 3]>,
}

/// Where a runtime stands after discovery, as `results.json` and `runtimes --json` record it
/// ([`crate::runtime::Status`] without its reason).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RuntimeState {
    /// Found, and its probes start and say hello.
    Found,
    /// Not found (not on `PATH`, not installed, a path that does not exist).
    NotFound,
    /// Found, but its version query or its probes fail.
    Broken,
}

impl RuntimeState {
    /// The word `results.json` holds: `found`, `not-found` or `broken`.
    pub fn as_str(self) -> &'static str {
        match self {
            RuntimeState::Found => "found",
            RuntimeState::NotFound => "not-found",
            RuntimeState::Broken => "broken",
        }
    }
}

/// A runtime as discovered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RuntimeInfo {
    /// Adapter name.
    pub name: String,
    /// Row label.
    pub label: String,
    /// Version.
    pub version: String,
    /// Executable path.
    pub path: Option<String>,
    /// Whether it was found and works.
    pub status: RuntimeState,
    /// Why not found or broken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Families run.
    pub families: Vec<String>,
}

/// Everything a run produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Results {
    /// Schema version of this file.
    pub schema: u32,
    /// Run information.
    pub run_info: RunInfo,
    /// The cells.
    pub cells: Vec<Cell>,
    /// Races between two rows that each held against themselves (`run --against`): against
    /// whom a call holds. Absent in files written before they existed, and where none ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub against: Vec<AgainstRace>,
}

/// One contender of an [`AgainstRace`]: a row of the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgainstSide {
    /// The runtime's row label (`node 20.20.2`).
    pub runtime: String,
    /// The adapter name (`node`).
    pub runtime_name: String,
    /// The variant id.
    pub variant: String,
    /// The source kind, when not the variant's own (as [`Cell::source`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<crate::matrix::SourceKind>,
}

impl AgainstSide {
    /// `mono dotnet.Directory.Move`, `node node.renameSync ← dir`.
    pub fn label(&self) -> String {
        format!("{} {}", self.runtime_name, crate::matrix::Variant::label(&self.variant, self.source))
    }

    /// [`AgainstSide::label`], or with the row label in place of the runtime's name
    /// (`CoreCLR 8.0.34 dotnet.Directory.Move`) where its kind is one of `several` (kinds with
    /// more than one row in the run, [`Results::kinds_with_several_rows`]).
    pub fn label_among(&self, several: &std::collections::BTreeSet<String>) -> String {
        if several.contains(&self.runtime_name) {
            format!("{} {}", self.runtime, crate::matrix::Variant::label(&self.variant, self.source))
        } else {
            self.label()
        }
    }

    /// True when this side is row (`runtime`, `variant`, `source`).
    pub fn is(&self, runtime: &str, variant: &str, source: Option<crate::matrix::SourceKind>) -> bool {
        self.runtime == runtime && self.variant == variant && self.source == source
    }
}

/// A race between two rows of a run, one contender each, released together on one absent
/// name, natural and amplified as a race cell is (`crate::against` picks the pairs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgainstRace {
    /// The two contenders, slot 0 then slot 1.
    pub contenders: Vec<AgainstSide>,
    /// What both leave at the name.
    pub kind: crate::against::NameKind,
    /// Wall time of the race, milliseconds.
    pub elapsed_ms: f64,
    /// Why the race could not run, or what went wrong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    /// The race: verdict (after the weaker of the two families' detection controls), runs,
    /// wins per slot (`wins_by_contender`; the slots run the first contender, the second, the
    /// first again: [`crate::against::PAIR_SLOTS`]).
    pub race: RaceResult,
}

/// The flag that makes the measurement a run left out ([`crate::verdict::LeftOut`]):
/// `--target default`, `without --no-relative`, `--races all`, `-n 100`.
pub fn left_out_flag(l: crate::verdict::LeftOut) -> &'static str {
    use crate::verdict::LeftOut;
    match l {
        LeftOut::Targets => "--target default",
        LeftOut::Relative => "without --no-relative",
        LeftOut::Race => "--races all",
        LeftOut::Trials => "-n 100",
    }
}

/// One row of a runtime's table: a variant with its cells.
#[derive(Debug, Clone)]
pub struct Row<'a> {
    /// Variant id.
    pub variant: &'a str,
    /// The source kind, when not the variant's own ([`Cell::source`]): a row of its own.
    pub source: Option<crate::matrix::SourceKind>,
    /// Call text.
    pub call: &'a str,
    /// Anti-pattern flag.
    pub anti_pattern: bool,
    /// Second-comer cells by target.
    pub second: BTreeMap<TargetState, &'a Cell>,
    /// The race cell.
    pub race: Option<&'a Cell>,
    /// What the contenders of its cells were ([`Cell::contenders`]): a row of its own.
    pub contenders: crate::domain::ContenderKind,
}

impl Row<'_> {
    /// The row's label: the variant, its source kind when not its own, and ` (threads)` for
    /// cells measured with threads ([`Cell::variant_label`]).
    pub fn label(&self) -> String {
        let label = crate::matrix::Variant::label(self.variant, self.source);
        if self.contenders.is_processes() {
            label
        } else {
            format!("{label} ({})", self.contenders.as_str())
        }
    }

    /// Safe as a lock, derived from the cells (`None` = undetermined).
    pub fn safe(&self) -> Option<bool> {
        let (second, race) = self.lock_inputs();
        safe_as_lock(&second, race)
    }

    /// Where [`Row::safe`] is undetermined for want of a measurement this run chose to skip
    /// ([`crate::verdict::left_out_for_lock`]), the flag that would make it (issue 13: the
    /// default run names what would settle a `?`): `--target default`, `without
    /// --no-relative`, `--races all` for a row the run did not race (only where `races_core`:
    /// its `run_info.races` is `core`), `-n 100` for an `exclusive` race with too few clean
    /// trials for the bound. `None` when the row is determined, or undetermined for another
    /// reason (a fault, a weak race).
    pub fn settled_by(&self, races_core: bool) -> Option<&'static str> {
        let (second, race) = self.lock_inputs();
        match crate::verdict::left_out_for_lock(&second, race)? {
            crate::verdict::LeftOut::Race if !races_core => None,
            l => Some(left_out_flag(l)),
        }
    }

    /// The inputs of [`safe_as_lock`]: each second comer's target, outcome and relative
    /// outcome, and the race evidence.
    pub(crate) fn lock_inputs(&self) -> (Vec<crate::verdict::SecondComer>, Option<RaceEvidence>) {
        let second = self
            .second
            .iter()
            .filter_map(|(t, c)| {
                let s = c.second()?;
                Some((*t, s.outcome, s.relative.as_ref().map(|r| r.outcome)))
            })
            .collect();
        (second, self.race.and_then(Cell::race_evidence))
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

    /// The runtime kinds (`coreclr`) of which the run holds cells of more than one row (CoreCLR
    /// 8, 9 and 10): text naming a party of a pair must name its row, not only its kind.
    pub fn kinds_with_several_rows(&self) -> std::collections::BTreeSet<String> {
        let mut labels: BTreeMap<&str, std::collections::BTreeSet<&str>> = BTreeMap::new();
        for c in &self.cells {
            labels.entry(&c.runtime_name).or_default().insert(&c.runtime);
        }
        labels.into_iter().filter(|(_, l)| l.len() > 1).map(|(n, _)| n.to_string()).collect()
    }

    /// The rows of one runtime's table, in cell order.
    pub fn rows(&self, runtime: &str) -> Vec<Row<'_>> {
        let mut rows: Vec<Row<'_>> = Vec::new();
        // each row's index by its key: a linear walk, not a search of the rows per cell
        let mut index: HashMap<(&str, Option<crate::matrix::SourceKind>, crate::domain::ContenderKind), usize> =
            HashMap::new();
        // the hand-off scenarios have tables of their own (recipes × runtimes)
        let cells = self
            .cells
            .iter()
            .filter(|c| c.runtime == runtime && matches!(c.scenario, Scenario::SecondComer | Scenario::Race));
        for c in cells {
            let idx = match index.get(&(c.variant.as_str(), c.source, c.contenders)) {
                Some(&i) => i,
                None => {
                    index.insert((c.variant.as_str(), c.source, c.contenders), rows.len());
                    rows.push(Row {
                        variant: &c.variant,
                        source: c.source,
                        call: &c.call,
                        anti_pattern: c.anti_pattern,
                        second: BTreeMap::new(),
                        race: None,
                        contenders: c.contenders,
                    });
                    rows.len() - 1
                }
            };
            match c.scenario {
                Scenario::SecondComer => {
                    rows[idx].second.insert(c.target, c);
                }
                Scenario::Race => rows[idx].race = Some(c),
                _ => {}
            }
        }
        rows
    }

    /// Target states present in the cells, in glossary order.
    pub fn targets(&self) -> Vec<TargetState> {
        TargetState::ALL
            .into_iter()
            .filter(|t| self.cells.iter().any(|c| c.scenario == Scenario::SecondComer && c.target == *t))
            .collect()
    }

    /// Cells that disagree between machines in a merged file: groups of cells with the same
    /// runtime name, variant, scenario and target, measured on different machines
    /// ([`Cell::machine`]), whose words ([`Cell::word`]) differ. Returns their ids; empty for
    /// a single run.
    pub fn disagreements(&self) -> std::collections::BTreeSet<&str> {
        let mut groups: BTreeMap<String, Vec<&Cell>> = BTreeMap::new();
        for c in self.cells.iter().filter(|c| c.machine.is_some()) {
            groups.entry(c.key()).or_default().push(c);
        }
        groups
            .into_values()
            .filter(|g| g.iter().any(|c| c.word() != g[0].word()))
            .flatten()
            .map(|c| c.id.as_str())
            .collect()
    }

    /// Whether any race cell exists.
    pub fn has_races(&self) -> bool {
        self.cells.iter().any(|c| c.scenario == Scenario::Race)
    }
}

#[cfg(test)]
mod tests {
    use super::{AgainstSide, Cell, ModeRun, OrderingRun, Row, Scenario, TargetState};
    use crate::domain::ContenderKind;
    use std::collections::BTreeMap;

    /// A party of a pair is named by its kind (`node node.mkdirSync`) unless the run holds two
    /// rows of that kind; then by its row (`node 12.22.12 node.mkdirSync`).
    #[test]
    fn a_party_is_named_by_its_row_where_its_kind_has_two() {
        let mut r = crate::report::fixture("base.json");
        let side = AgainstSide {
            runtime: "node 20.20.2".into(),
            runtime_name: "node".into(),
            variant: "node.mkdirSync".into(),
            source: None,
        };
        assert!(r.kinds_with_several_rows().is_empty());
        assert_eq!(side.label_among(&r.kinds_with_several_rows()), "node node.mkdirSync");
        let mut old = r.cells[0].clone();
        old.runtime = "node 12.22.12".into();
        r.cells.push(old);
        assert_eq!(r.kinds_with_several_rows().into_iter().collect::<Vec<_>>(), ["node"]);
        assert_eq!(side.label_among(&r.kinds_with_several_rows()), "node 20.20.2 node.mkdirSync");
    }

    /// A natural run of the fixture with two orderings of `counts` (multi-winner trials,
    /// trials, offset).
    fn run_with(counts: &[(usize, usize, u64)]) -> ModeRun {
        let r = crate::report::fixture("base.json");
        let mut m = r.cells.iter().find_map(|c| c.race()?.natural.clone()).unwrap();
        m.orderings = counts
            .iter()
            .map(|&(multi, trials, offset_us)| {
                let mut stats = m.stats.clone();
                (stats.multi_winner_trials, stats.trials, stats.clean_trials) = (multi, trials, trials);
                OrderingRun { offset_us, verdict: m.verdict, stats }
            })
            .collect();
        m.stats.multi_winner_trials = counts.iter().map(|c| c.0).sum();
        m.stats.trials = counts.iter().map(|c| c.1).sum();
        m
    }

    #[test]
    fn control_counts_are_one_orderings_never_a_sum() {
        // orderings too short to judge: the best one's own count over its own trials, as its
        // table cell shows it (not 3/10 summed over both)
        assert_eq!(run_with(&[(3, 5, 0), (0, 5, 150)]).control_counts(), (3, 5, 0));
        assert_eq!(run_with(&[(1, 5, 0), (2, 5, 150)]).control_counts(), (2, 5, 150));
        // orderings long enough: the best of those
        assert_eq!(run_with(&[(3, 5, 0), (10, 40, 150)]).control_counts(), (10, 40, 150));
        // no orderings: the whole run
        assert_eq!(run_with(&[]).control_counts(), (0, 0, 0));
    }

    #[test]
    fn thread_cells_never_share_an_id_key_or_row_with_process_cells() {
        let race = Scenario::Race;
        let p = Cell::id_of("node 20", "node.x", race, TargetState::Absent, None, ContenderKind::Processes);
        let t = Cell::id_of("node 20", "node.x", race, TargetState::Absent, None, ContenderKind::Threads);
        assert_eq!(p, "node 20/node.x/race/absent", "process ids are those before threads existed");
        assert_eq!(t, "node 20/node.x/race/absent/contenders=threads");
        let s = Cell::id_of(
            "n",
            "v",
            race,
            TargetState::Absent,
            Some(crate::matrix::SourceKind::EmptyDir),
            ContenderKind::Threads,
        );
        assert_eq!(s, "n/v/race/absent/source=empty-dir/contenders=threads");
        let row = |contenders| Row {
            variant: "node.x",
            source: None,
            call: "",
            anti_pattern: false,
            second: BTreeMap::new(),
            race: None,
            contenders,
        };
        assert_eq!(row(ContenderKind::Processes).label(), "node.x");
        assert_eq!(row(ContenderKind::Threads).label(), "node.x (threads)");
        // results.json: the field is left out for processes, so process cells read as before
        assert!(ContenderKind::Processes.is_processes() && !ContenderKind::Threads.is_processes());
        assert_eq!(serde_json::to_string(&ContenderKind::Threads).unwrap(), "\"threads\"");
    }
}

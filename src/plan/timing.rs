//! How long a planned run would measure, in seconds, from the cells of an earlier run
//! (`run --dry-run`): each planned cell takes the time the same cell took there, or the same
//! call (another runtime or version), or the median of its scenario there. Pure: the caller
//! reads the earlier `results.json`. Where there is none, the committed baseline's call times
//! ([`BASELINE_TIMINGS`], built into the binary) stand in.

use std::collections::HashMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::run::CellPlan;
use crate::domain::{Scenario, TargetState};
use crate::matrix::SourceKind;
use crate::report::model::Cell;
use crate::stats::median;

/// Where the committed baseline's call times come from, relative to the repository.
pub const BASELINE_RESULTS: &str = "reports/linux/results.json";

/// The committed baseline's call times ([`baseline_csv`] of [`BASELINE_RESULTS`]'s cells, one
/// CSV row per call: `variant,scenario,target,source,ms`), built into the binary for the
/// estimate of a `--dry-run` on a machine with no earlier run. A unit test keeps it equal to
/// what the committed results give.
pub const BASELINE_TIMINGS: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/reports/linux/timings.csv"));

/// One call's time in an earlier run: the median `elapsed_ms` of its cells (every runtime and
/// version that measured it). A row of [`BASELINE_TIMINGS`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallTime {
    /// The variant or recipe id.
    pub variant: String,
    /// The scenario.
    pub scenario: Scenario,
    /// The target state met.
    pub target: TargetState,
    /// The source kind, where the call places one.
    pub source: Option<SourceKind>,
    /// The median of its cells' `elapsed_ms`, ms ([`BASELINE_TIMINGS`] rounds it to 0.1 ms).
    pub ms: f64,
}

/// The call times of `cells` (an earlier run's), one per (variant, scenario, target, source),
/// sorted by those.
pub fn call_times(cells: &[Cell]) -> Vec<CallTime> {
    let mut by_call: HashMap<CallKey<'_>, Vec<f64>> = HashMap::new();
    for c in cells {
        by_call.entry((c.variant.as_str(), c.scenario, c.target, c.source)).or_default().push(c.elapsed_ms);
    }
    let mut out: Vec<CallTime> = by_call
        .into_iter()
        .map(|((variant, scenario, target, source), ms)| CallTime {
            variant: variant.to_string(),
            scenario,
            target,
            source,
            ms: median(&ms),
        })
        .collect();
    out.sort_by(|a, b| (&a.variant, a.scenario, a.target, a.source).cmp(&(&b.variant, b.scenario, b.target, b.source)));
    out
}

/// `times` as [`BASELINE_TIMINGS`] holds them: CSV with a header row (the unit test that
/// keeps that file equal to the committed baseline writes it).
#[cfg(test)]
fn baseline_csv(times: &[CallTime]) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    for t in times {
        let ms = (t.ms * 10.0).round() / 10.0;
        w.serialize(CallTime { ms, ..t.clone() }).expect("a call time serialises");
    }
    String::from_utf8(w.into_inner().expect("written to memory")).expect("CSV of UTF-8 strings")
}

/// The built-in baseline's call times ([`BASELINE_TIMINGS`]). A row that does not parse (a
/// scenario or state this build does not know) is left out.
pub fn baseline_times() -> Vec<CallTime> {
    csv::Reader::from_reader(BASELINE_TIMINGS.as_bytes()).deserialize().filter_map(Result::ok).collect()
}

/// The earlier cells an estimate is made from: a run's own cells, or only its call times.
#[derive(Debug, Clone, Copy)]
pub enum Earlier<'a> {
    /// An earlier run's cells (same cells are matched by id first).
    Cells(&'a [Cell]),
    /// Call times only (the built-in baseline's).
    Calls(&'a [CallTime]),
}

/// A `--dry-run`'s estimate of the time its cells would take, in seconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SecondsEstimate {
    /// The `results.json` whose cells' times were used.
    pub from: PathBuf,
    /// True when they are the committed baseline's call times built into this binary
    /// (`reports/linux/timings.csv`, measured on the project's machine), for want of an earlier run here.
    pub built_in: bool,
    /// The cells' time at least: conditional races (`--races auto`) left out, s.
    pub min_s: f64,
    /// The cells' time at most: every planned cell, s.
    pub max_s: f64,
    /// Planned cells timed by the same cell (its id) in the earlier run.
    pub same_cell: usize,
    /// Planned cells timed by the same call, scenario, target and source kind of another
    /// runtime or version there (their median).
    pub same_call: usize,
    /// Planned cells timed by the median of their scenario there.
    pub same_scenario: usize,
    /// Planned cells whose scenario the earlier run did not measure: not counted.
    pub untimed: usize,
}

/// A call's cells, whatever the runtime: variant, scenario, target, source kind.
type CallKey<'a> = (&'a str, Scenario, TargetState, Option<crate::matrix::SourceKind>);

/// The estimate for `planned` from `earlier` (an earlier run's `results.json`, read from
/// `from`, or the built-in baseline's call times): per planned cell the `elapsed_ms` of the cell with the same id, else the
/// median over the same call (variant, scenario, target, source kind) there, else the median
/// of the scenario there, else nothing (counted in [`SecondsEstimate::untimed`]). A hand-off cell's time there includes
/// waiting on its workers; a run measures session runtimes' hand-offs two runtimes at a time,
/// so the estimate is of the cells' own time, not of the run's wall time.
pub fn estimate_seconds(planned: &[CellPlan], earlier: Earlier<'_>, from: PathBuf) -> SecondsEstimate {
    // a scenario's median over a run's own cells, or over the calls where only they are known
    let mut by_scenario: HashMap<Scenario, Vec<f64>> = HashMap::new();
    let (by_id, calls, built_in): (HashMap<&str, f64>, Vec<CallTime>, bool) = match earlier {
        Earlier::Cells(cells) => {
            cells.iter().for_each(|c| by_scenario.entry(c.scenario).or_default().push(c.elapsed_ms));
            (cells.iter().map(|c| (c.id.as_str(), c.elapsed_ms)).collect(), call_times(cells), false)
        }
        Earlier::Calls(times) => {
            times.iter().for_each(|t| by_scenario.entry(t.scenario).or_default().push(t.ms));
            (HashMap::new(), times.to_vec(), true)
        }
    };
    let by_call: HashMap<CallKey<'_>, f64> =
        calls.iter().map(|t| ((t.variant.as_str(), t.scenario, t.target, t.source), t.ms)).collect();
    let by_scenario: HashMap<Scenario, f64> = by_scenario.into_iter().map(|(k, v)| (k, median(&v))).collect();
    let mut e = SecondsEstimate {
        from,
        built_in,
        min_s: 0.0,
        max_s: 0.0,
        same_cell: 0,
        same_call: 0,
        same_scenario: 0,
        untimed: 0,
    };
    for p in planned {
        let ms = if let Some(ms) = by_id.get(p.id.as_str()) {
            e.same_cell += 1;
            *ms
        } else if let Some(ms) = by_call.get(&(p.variant.as_str(), p.scenario, p.target, p.source)) {
            e.same_call += 1;
            *ms
        } else if let Some(ms) = by_scenario.get(&p.scenario) {
            e.same_scenario += 1;
            *ms
        } else {
            e.untimed += 1;
            continue;
        };
        e.max_s += ms / 1000.0;
        if !p.conditional {
            e.min_s += ms / 1000.0;
        }
    }
    e
}

#[cfg(test)]
mod tests {
    use super::{baseline_csv, baseline_times, call_times, estimate_seconds, CellPlan, Earlier, Scenario, TargetState};

    fn plan(id: &str, variant: &str, scenario: Scenario, conditional: bool) -> CellPlan {
        CellPlan {
            id: id.into(),
            runtime: id.split('/').next().unwrap_or_default().into(),
            variant: variant.into(),
            scenario,
            target: TargetState::Absent,
            source: None,
            control: false,
            relative: false,
            race: None,
            conditional,
        }
    }

    /// Each planned cell takes its own time from the earlier run, else its call's (another
    /// version's), else its scenario's median; a scenario the earlier run lacks is untimed; a
    /// conditional race counts only in the upper figure.
    #[test]
    fn cells_take_their_own_time_then_their_calls_then_their_scenarios() {
        let mut earlier = crate::report::fixture("base.json").cells;
        earlier.retain(|c| c.variant == "node.writeFileSync.wx" && c.target == TargetState::Absent);
        assert_eq!(earlier.len(), 2, "the fixture's second comer and race on an absent name");
        earlier[0].elapsed_ms = 100.0;
        earlier[1].elapsed_ms = 3000.0;
        let (own, race) = (earlier[0].id.clone(), earlier[1].id.clone());
        assert!(own.ends_with("/second-comer/absent") && race.ends_with("/race/absent"), "{own} {race}");
        let planned = [
            plan(&own, "node.writeFileSync.wx", Scenario::SecondComer, false),
            plan("bun 1/node.writeFileSync.wx/race/absent", "node.writeFileSync.wx", Scenario::Race, true),
            plan("bun 1/node.renameSync/second-comer/absent", "node.renameSync", Scenario::SecondComer, false),
            plan("bun 1/publish.direct/publish/absent", "publish.direct", Scenario::Publish, false),
        ];
        let e = estimate_seconds(&planned, super::Earlier::Cells(&earlier), "r.json".into());
        assert_eq!((e.same_cell, e.same_call, e.same_scenario, e.untimed), (1, 1, 1, 1), "{e:?}");
        assert!((e.max_s - 3.2).abs() < 1e-9, "{e:?}");
        assert!((e.min_s - 0.2).abs() < 1e-9, "{e:?}");
    }

    /// The built-in call times are the committed baseline's: regenerate them with
    /// `CONFORMANCE_WRITE_TIMINGS=1 cargo test --release --lib built_in_timings` after the
    /// baseline changes. A planned cell takes its call's time there, else its scenario's median.
    #[test]
    fn built_in_timings_are_the_committed_baselines() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let results = crate::report::json::read(&root.join(super::BASELINE_RESULTS)).expect("the committed baseline");
        let csv = baseline_csv(&call_times(&results.cells));
        let path = root.join("reports/linux/timings.csv");
        if std::env::var_os("CONFORMANCE_WRITE_TIMINGS").is_some() {
            std::fs::write(&path, &csv).unwrap();
        }
        assert!(
            csv == super::BASELINE_TIMINGS,
            "{} differs from the committed baseline's call times: regenerate it with CONFORMANCE_WRITE_TIMINGS=1 \
             cargo test --release --lib built_in_timings",
            path.display()
        );
        let times = baseline_times();
        assert_eq!(times.len(), csv.lines().count() - 1, "every row parses");
        let wx = times
            .iter()
            .find(|t| t.variant == "node.writeFileSync.wx" && t.scenario == Scenario::Race)
            .expect("a race call of the baseline");
        let planned = [
            plan("x/node.writeFileSync.wx/race/absent", "node.writeFileSync.wx", Scenario::Race, false),
            plan("x/no.such.call/race/absent", "no.such.call", Scenario::Race, false),
        ];
        let e = estimate_seconds(&planned, Earlier::Calls(&times), "built-in".into());
        assert!(e.built_in && (e.same_cell, e.same_call, e.same_scenario, e.untimed) == (0, 1, 1, 0), "{e:?}");
        assert!(e.max_s > wx.ms / 1000.0, "{e:?}");
        assert_eq!(TargetState::Absent, wx.target);
    }
}

//! How long a planned run would measure, in seconds, from the cells of an earlier run
//! (`run --dry-run`): each planned cell takes the time the same cell took there, or the same
//! call (another runtime or version), or the median of its scenario there. Pure: the caller
//! reads the earlier `results.json`.

use std::collections::HashMap;
use std::path::PathBuf;

use serde::Serialize;

use super::run::CellPlan;
use crate::domain::{Scenario, TargetState};
use crate::report::model::Cell;
use crate::stats::median;

/// A `--dry-run`'s estimate of the time its cells would take, in seconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SecondsEstimate {
    /// The `results.json` whose cells' times were used.
    pub from: PathBuf,
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

/// The estimate for `planned` from `earlier`'s cells (an earlier run's `results.json`, read
/// from `from`): per planned cell the `elapsed_ms` of the cell with the same id, else the
/// median over the same call (variant, scenario, target, source kind) there, else the median
/// of the scenario there, else nothing (counted in [`SecondsEstimate::untimed`]). A hand-off cell's time there includes
/// waiting on its workers; a run measures session runtimes' hand-offs two runtimes at a time,
/// so the estimate is of the cells' own time, not of the run's wall time.
pub fn estimate_seconds(planned: &[CellPlan], earlier: &[Cell], from: PathBuf) -> SecondsEstimate {
    let by_id: HashMap<&str, f64> = earlier.iter().map(|c| (c.id.as_str(), c.elapsed_ms)).collect();
    let mut by_call: HashMap<CallKey<'_>, Vec<f64>> = HashMap::new();
    let mut by_scenario: HashMap<Scenario, Vec<f64>> = HashMap::new();
    for c in earlier {
        by_call.entry((c.variant.as_str(), c.scenario, c.target, c.source)).or_default().push(c.elapsed_ms);
        by_scenario.entry(c.scenario).or_default().push(c.elapsed_ms);
    }
    let by_call: HashMap<CallKey<'_>, f64> = by_call.into_iter().map(|(k, v)| (k, median(&v))).collect();
    let by_scenario: HashMap<Scenario, f64> = by_scenario.into_iter().map(|(k, v)| (k, median(&v))).collect();
    let mut e =
        SecondsEstimate { from, min_s: 0.0, max_s: 0.0, same_cell: 0, same_call: 0, same_scenario: 0, untimed: 0 };
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
    use super::{estimate_seconds, CellPlan, Scenario, TargetState};

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
        let e = estimate_seconds(&planned, &earlier, "r.json".into());
        assert_eq!((e.same_cell, e.same_call, e.same_scenario, e.untimed), (1, 1, 1, 1), "{e:?}");
        assert!((e.max_s - 3.2).abs() < 1e-9, "{e:?}");
        assert!((e.min_s - 0.2).abs() < 1e-9, "{e:?}");
    }
}

//! The cells a run measures on one runtime, expanded once from the options: the one list the
//! engine walks ([`crate::engine::measure_with`]), the progress bar counts and `run --dry-run`
//! prints ([`crate::plan::CellPlan`]). Pure: nothing here starts a process or reads a file.
//!
//! The order is the order of `results.json`: per family of the runtime (in the adapter's
//! order) each selected variant's second-comer cells, one per target state, then its race
//! cell; then the family's detection control race when the control's own row is not raced;
//! then one cell per selected hand-off recipe, scenario by scenario
//! ([`Scenario::HANDOFFS`]).

use crate::domain::{RaceScope, Scenario};
use crate::exec::scratch::TargetState;
use crate::handoff::Recipe;
use crate::matrix::{SourceKind, Variant};
use crate::options::Options;

/// What a cell measures: a row of a matrix, or a hand-off recipe.
#[derive(Debug, Clone, Copy)]
pub enum Subject<'a> {
    /// A matrix row (one source kind of it, [`Variant::per_source`]).
    Variant(&'a Variant),
    /// A hand-off recipe ([`crate::handoff::recipes`]).
    Recipe(&'static Recipe),
}

/// One cell to measure.
#[derive(Debug, Clone, Copy)]
pub struct Planned<'a> {
    /// The row or recipe measured.
    pub subject: Subject<'a>,
    /// Which scenario.
    pub scenario: Scenario,
    /// The first comer's target state (second comers); [`TargetState::Absent`] otherwise.
    pub target: TargetState,
    /// A race under [`RaceScope::Auto`]: measured only when the row's second comers, measured
    /// just before it, leave its answer open ([`crate::engine::needs_race`]).
    pub conditional: bool,
}

impl<'a> Planned<'a> {
    /// The matrix row, for a second-comer or race cell.
    pub fn variant(&self) -> Option<&'a Variant> {
        match self.subject {
            Subject::Variant(v) => Some(v),
            Subject::Recipe(_) => None,
        }
    }

    /// The recipe, for a hand-off cell.
    pub fn recipe(&self) -> Option<&'static Recipe> {
        match self.subject {
            Subject::Recipe(r) => Some(r),
            Subject::Variant(_) => None,
        }
    }

    /// The variant id or recipe id, as the cell's id in `results.json` spells it.
    pub fn id(&self) -> &str {
        match self.subject {
            Subject::Variant(v) => &v.id,
            Subject::Recipe(r) => &r.id,
        }
    }

    /// The source kind, when not the variant's own ([`Variant::cell_source`]).
    pub fn source(&self) -> Option<SourceKind> {
        self.variant().and_then(Variant::cell_source)
    }

    /// True for the race of a family's detection control (its variant's own source kind), which
    /// the engine races before the family's other cells (its verdict weighs on theirs) and
    /// reports at this place.
    pub fn is_control_race(&self) -> bool {
        // a control measured with several source kinds is judged on its own source only
        self.scenario == Scenario::Race && self.variant().is_some_and(|v| v.control && v.cell_source().is_none())
    }
}

/// The cells `o` measures on a runtime with `families` (in its adapter's order), given the
/// selected `variants` of those families (in matrix order, one per source kind) and every
/// family's detection control in `controls` (see [`crate::engine::control_for`]). A family
/// with no selected variant gets no cell, not even its control's. Hand-off recipes are those
/// of `o.recipes` whose scenario runs.
pub fn expand<'a>(
    o: &Options,
    families: &[&str],
    variants: &[&'a Variant],
    controls: &[&'a Variant],
) -> Vec<Planned<'a>> {
    let mut out = Vec::new();
    let row = |v: &'a Variant, scenario, target| Planned {
        subject: Subject::Variant(v),
        scenario,
        target,
        conditional: scenario == Scenario::Race && o.races == RaceScope::Auto && o.second_comer && !v.control,
    };
    for family in families {
        let fam: Vec<&Variant> = variants.iter().copied().filter(|v| v.family == *family).collect();
        for &v in &fam {
            if o.second_comer {
                let has_file_source = v.source == SourceKind::File;
                let targets = o.targets.iter().filter(|t| t.applies(has_file_source));
                out.extend(targets.map(|&t| row(v, Scenario::SecondComer, t)));
            }
            if o.races(v) {
                out.push(row(v, Scenario::Race, TargetState::Absent));
            }
        }
        // a control that is not selected, or whose row is not raced (`--races core` leaves
        // out a promise form), is still raced where its family's rows are: after the rows
        let control = controls.iter().copied().find(|c| c.family == *family);
        if let (true, false, Some(c)) = (o.race, fam.is_empty(), control) {
            if !fam.iter().any(|v| v.id == c.id && v.cell_source().is_none() && o.races(v)) {
                out.push(row(c, Scenario::Race, TargetState::Absent));
            }
        }
    }
    for scenario in Scenario::HANDOFFS.into_iter().filter(|s| o.runs(*s)) {
        let recipes = Recipe::of(scenario).filter(|r| o.recipes.contains(&r.id));
        out.extend(recipes.map(|r| Planned {
            subject: Subject::Recipe(r),
            scenario,
            target: TargetState::Absent,
            conditional: false,
        }));
    }
    out
}

/// `cells` split by family, in order: each family's second-comer and race cells (the
/// expansion keeps a family's cells together). Hand-off cells are left out.
pub fn by_family<'a>(cells: &[Planned<'a>]) -> Vec<(&'a str, Vec<Planned<'a>>)> {
    runs(cells.iter().filter_map(|c| c.variant().map(|v| (v.family.as_str(), *c))))
}

/// The hand-off recipes of `cells`, by scenario, in order.
pub fn recipes_by_scenario(cells: &[Planned<'_>]) -> Vec<(Scenario, Vec<&'static Recipe>)> {
    runs(cells.iter().filter_map(|c| c.recipe().map(|r| (c.scenario, r))))
}

/// `items` (key, item) grouped into runs of one key, in order.
fn runs<K: PartialEq, T>(items: impl Iterator<Item = (K, T)>) -> Vec<(K, Vec<T>)> {
    let mut out: Vec<(K, Vec<T>)> = Vec::new();
    for (k, item) in items {
        match out.last_mut() {
            Some((last, list)) if *last == k => list.push(item),
            _ => out.push((k, vec![item])),
        }
    }
    out
}

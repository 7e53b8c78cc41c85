//! `report`'s selection (`-r`, `-v`, `--scenario`, `--only`): a results file narrowed to the
//! cells a reader asked for, before any format renders it. Pure: it takes the results and
//! returns a smaller copy. A call's row is kept or dropped whole (its second comers and races
//! together, with the races against other parties' calls it took part in), so the answers of
//! what is kept are the answers the whole file gives: `--only yes` keeps the calls the
//! unfiltered report calls `yes`, and they still say `yes`.

use globset::{Glob, GlobSet, GlobSetBuilder};

use super::model::{Cell, Results, Scenario};
use crate::verdict::answer::AnswerVerdict;

/// What to keep. Empty lists keep everything.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Runtime adapter names (`node`, `coreclr`), as `run -r` names them.
    pub runtimes: Vec<String>,
    /// Variant or recipe id globs (`node.*.wx`).
    pub variants: Option<GlobSet>,
    /// Scenarios.
    pub scenarios: Vec<Scenario>,
    /// Calls and recipes whose answer is this.
    pub only: Option<AnswerVerdict>,
}

impl Filter {
    /// The variant globs of `patterns` (each comma-separated or repeated); `None` when empty.
    ///
    /// Errors: the first pattern that is not a glob, with globset's reason.
    pub fn globs(patterns: &[String]) -> Result<Option<GlobSet>, String> {
        let mut b = GlobSetBuilder::new();
        let mut any = false;
        for p in patterns.iter().flat_map(|p| p.split(',')).map(str::trim).filter(|p| !p.is_empty()) {
            b.add(Glob::new(p).map_err(|e| format!("'{p}': {e}"))?);
            any = true;
        }
        Ok(if any { Some(b.build().map_err(|e| e.to_string())?) } else { None })
    }

    /// Whether nothing is filtered.
    pub fn is_empty(&self) -> bool {
        self.runtimes.is_empty() && self.variants.is_none() && self.scenarios.is_empty() && self.only.is_none()
    }
}

/// The answer of the call or recipe that `c` measures, as the whole file judges it; `None`
/// for a cell that answers nothing (a thread row's, a detection control's).
fn answer_of(results: &Results, c: &Cell) -> Option<AnswerVerdict> {
    if c.scenario.is_handoff() {
        return super::answers::recipe_answer(results, c).map(|a| a.verdict);
    }
    super::answers::call_answers(results, &c.runtime)
        .into_iter()
        .find(|a| a.variant == c.variant)
        .map(|a| a.answer.verdict)
}

/// `results` with only the cells `f` keeps, and the races of two calls against each other
/// where one of the kept calls takes part. The run's information is kept as it is.
pub fn apply(results: &Results, f: &Filter) -> Results {
    if f.is_empty() {
        return results.clone();
    }
    // answers are judged once per runtime, from the whole file
    let mut answers: std::collections::HashMap<(String, String), Option<AnswerVerdict>> =
        std::collections::HashMap::new();
    let mut keep = |c: &Cell| {
        // a call's row is kept whole: its answer rests on its second comers and its races
        // alike, so `second-comer` and `race` each select the call tables
        let calls = |s: Scenario| matches!(s, Scenario::SecondComer | Scenario::Race);
        let scenario =
            f.scenarios.is_empty() || f.scenarios.iter().any(|s| *s == c.scenario || (calls(*s) && calls(c.scenario)));
        let kept = (f.runtimes.is_empty() || f.runtimes.contains(&c.runtime_name))
            && f.variants.as_ref().is_none_or(|g| g.is_match(&c.variant))
            && scenario;
        kept && f.only.is_none_or(|only| {
            let key = (c.runtime.clone(), c.variant.clone());
            let a = if c.scenario.is_handoff() {
                answer_of(results, c)
            } else {
                *answers.entry(key).or_insert_with(|| answer_of(results, c))
            };
            a == Some(only)
        })
    };
    let cells: Vec<Cell> = results.cells.iter().filter(|c| keep(c)).cloned().collect();
    let calls: std::collections::HashSet<(&str, &str)> =
        cells.iter().map(|c| (c.runtime.as_str(), c.variant.as_str())).collect();
    let against = results
        .against
        .iter()
        .filter(|a| a.contenders.iter().any(|s| calls.contains(&(s.runtime.as_str(), s.variant.as_str()))))
        .cloned()
        .collect();
    Results { schema: results.schema, run_info: results.run_info.clone(), cells, against }
}

#[cfg(test)]
mod tests {
    use super::{apply, Filter};
    use crate::report::model::Scenario;
    use crate::verdict::answer::AnswerVerdict;

    fn baseline() -> crate::report::Results {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/linux/results.json");
        crate::report::json::read(&path).unwrap()
    }

    /// Runtime, variant and scenario narrow the cells; nothing asked keeps everything.
    #[test]
    fn runtime_variant_and_scenario_narrow_the_cells() {
        let r = baseline();
        assert_eq!(apply(&r, &Filter::default()).cells.len(), r.cells.len());
        let f = Filter {
            runtimes: vec!["node".into()],
            variants: Filter::globs(&["node.writeFileSync.*,node.mkdirSync".into()]).unwrap(),
            scenarios: vec![Scenario::Race],
            only: None,
        };
        let kept = apply(&r, &f);
        assert!(!kept.cells.is_empty());
        // `race` keeps the rows whole: their second comers too, no hand-off
        assert!(kept.cells.iter().all(|c| c.runtime_name == "node"
            && matches!(c.scenario, Scenario::Race | Scenario::SecondComer)
            && (c.variant.starts_with("node.writeFileSync.") || c.variant == "node.mkdirSync")));
        assert!(kept.cells.iter().any(|c| c.scenario == Scenario::SecondComer));
        // the answers of the kept rows are the whole file's
        let whole = crate::report::answers::records(&r);
        for a in crate::report::answers::records(&kept) {
            let w = whole.iter().find(|w| w.runtime == a.runtime && w.variant == a.variant).unwrap();
            assert_eq!(a.answer.verdict, w.answer.verdict, "{}", a.variant);
        }
        assert!(Filter::globs(&["node.[".into()]).is_err());
    }

    /// `--only` keeps the calls the whole file answers that way: every kept call's answer in
    /// the filtered file is the same.
    #[test]
    fn only_keeps_the_calls_with_that_answer() {
        let r = baseline();
        for only in [AnswerVerdict::Yes, AnswerVerdict::No] {
            let f = Filter { runtimes: vec!["node".into()], only: Some(only), ..Filter::default() };
            let kept = apply(&r, &f);
            assert!(!kept.cells.is_empty(), "{only:?}");
            for c in &kept.cells {
                assert_eq!(super::answer_of(&r, c), Some(only), "{} {}", c.runtime, c.variant);
            }
        }
        let yes =
            apply(&r, &Filter { runtimes: vec!["node".into()], only: Some(AnswerVerdict::Yes), ..Filter::default() });
        assert!(yes.cells.iter().any(|c| c.variant == "node.writeFileSync.wx"));
        assert!(!yes.cells.iter().any(|c| c.variant == "node.writeFileSync.w"));
    }
}

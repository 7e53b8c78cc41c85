//! Comparing two runs cell by cell: the regression check for a new runtime version.
//!
//! Cells are matched by [`Cell::key`] (adapter name, variant, scenario, target), so versions
//! may differ; what is compared is the outcome or verdict word.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::report::model::{Cell, Results};

/// One changed cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The cell key.
    pub key: String,
    /// Baseline word and runtime label.
    pub before: (String, String),
    /// New word and runtime label.
    pub after: (String, String),
}

/// The differences between a baseline and a new run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diff {
    /// Cells in both whose word changed.
    pub changed: Vec<Change>,
    /// Keys only in the baseline, for (runtime, variant, scenario) groups that the new run measured.
    pub missing: Vec<String>,
    /// Keys only in the new run.
    pub added: Vec<String>,
    /// Cells compared.
    pub compared: usize,
}

impl Diff {
    /// True when an outcome or verdict changed. Missing and new cells are listed but do not
    /// count: they come from a narrower or wider selection, not from a runtime's behaviour.
    pub fn differs(&self) -> bool {
        !self.changed.is_empty()
    }

    /// A human report, one line per difference, then a count line.
    pub fn render(&self) -> String {
        let mut s = String::new();
        for c in &self.changed {
            let _ = writeln!(s, "changed  {}: {} ({}) -> {} ({})", c.key, c.before.0, c.before.1, c.after.0, c.after.1);
        }
        for k in &self.missing {
            let _ = writeln!(s, "missing  {k}");
        }
        for k in &self.added {
            let _ = writeln!(s, "new      {k}");
        }
        let _ = writeln!(
            s,
            "compared {} cells: {} changed, {} missing, {} new",
            self.compared,
            self.changed.len(),
            self.missing.len(),
            self.added.len()
        );
        s
    }
}

/// Compares `new` against `base`. Only what the new run measured is compared: a baseline cell
/// counts as missing when the new run measured its runtime, variant and scenario but not its
/// target; runtimes, variants and scenarios left out of the new run are ignored.
pub fn compare(base: &Results, new: &Results) -> Diff {
    // Two rows of one runtime kind (`-r node,node=/opt/node22/bin/node`) must not collapse into
    // one key: for such kinds, cells are matched by row label (name and version) instead.
    let mut ambiguous = std::collections::BTreeSet::new();
    for r in [base, new] {
        let mut labels: BTreeMap<&str, std::collections::BTreeSet<&str>> = BTreeMap::new();
        for c in &r.cells {
            labels.entry(c.runtime_name.as_str()).or_default().insert(c.runtime.as_str());
        }
        ambiguous.extend(labels.into_iter().filter(|(_, l)| l.len() > 1).map(|(n, _)| n.to_string()));
    }
    let key = |c: &Cell| {
        if ambiguous.contains(&c.runtime_name) {
            format!("{}/{}/{}/{}", c.runtime, c.variant, c.scenario.as_str(), c.target)
        } else {
            c.key()
        }
    };
    let index = |r: &Results| -> BTreeMap<String, Cell> { r.cells.iter().map(|c| (key(c), c.clone())).collect() };
    let (b, n) = (index(base), index(new));
    let group = |c: &Cell| (c.runtime_name.clone(), c.variant.clone(), c.scenario);
    let measured: std::collections::BTreeSet<_> = new.cells.iter().map(group).collect();
    let mut d = Diff::default();
    for (k, bc) in &b {
        match n.get(k) {
            Some(nc) => {
                d.compared += 1;
                if bc.word() != nc.word() {
                    d.changed.push(Change {
                        key: k.clone(),
                        before: (bc.word().into(), bc.runtime.clone()),
                        after: (nc.word().into(), nc.runtime.clone()),
                    });
                }
            }
            None if measured.contains(&group(bc)) => d.missing.push(k.clone()),
            None => {}
        }
    }
    d.added = n.keys().filter(|k| !b.contains_key(*k)).cloned().collect();
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results() -> Results {
        let text =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/results/base.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn identical_runs_do_not_differ() {
        let r = results();
        let d = compare(&r, &r);
        assert!(!d.differs());
        assert_eq!(d.compared, r.cells.len());
    }

    #[test]
    fn narrower_runs_compare_only_what_they_measured() {
        let base = results();
        let mut new = base.clone();
        new.cells.retain(|c| c.variant == "node.writeFileSync.wx" && c.target != "dir");
        let d = compare(&base, &new);
        assert_eq!(d.missing, vec!["node/node.writeFileSync.wx/second-comer/dir".to_string()]);
        assert!(!d.differs(), "a narrower selection is not a regression");
        new.cells.retain(|c| c.scenario == crate::report::Scenario::Race);
        assert!(!compare(&base, &new).differs());
    }

    #[test]
    fn two_rows_of_one_kind_stay_apart() {
        let base = results();
        let mut second = base.clone();
        for c in &mut second.cells {
            c.runtime = "node 22.0.0".into();
        }
        let mut both = base.clone();
        both.cells.extend(second.cells.clone());
        let mut regressed = both.clone();
        let c = regressed
            .cells
            .iter_mut()
            .find(|c| c.runtime == "node 22.0.0" && c.target == "file" && c.variant == "node.writeFileSync.wx")
            .unwrap();
        c.outcome = Some(crate::verdict::Outcome::Replaced);
        let d = compare(&both, &regressed);
        assert_eq!(d.compared, both.cells.len());
        assert_eq!(d.changed.len(), 1);
        assert!(d.changed[0].key.starts_with("node 22.0.0/"));
    }

    #[test]
    fn a_changed_word_is_a_difference() {
        let base = results();
        let mut new = base.clone();
        let c = new.cells.iter_mut().find(|c| c.target == "file" && c.variant == "node.writeFileSync.wx").unwrap();
        c.outcome = Some(crate::verdict::Outcome::Replaced);
        let d = compare(&base, &new);
        assert_eq!(d.changed.len(), 1);
        assert_eq!(d.changed[0].before.0, "refused");
    }
}

//! JUnit XML of a comparison (`compare BASE NEW --format junit`, `report NEW --expect BASE
//! --format junit`), for CI test reports.
//!
//! One test suite, `conformance`, named after both files; one test case per compared cell
//! (named by its key, classname the runtime name): a changed cell is a failure whose message
//! gives the words before and after, a cell changed within noise passes with the counts in its
//! system-out (so does a hand-off answer flipped by its rate), and a baseline cell the new run did not measure is skipped. Written with the
//! `quick-junit` crate, which escapes the text.

use std::path::Path;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use super::Diff;

/// The classname of a key: its first segment (the runtime name).
fn class(key: &str) -> &str {
    key.split('/').next().unwrap_or(key)
}

/// The JUnit XML of `diff`, the comparison of `new` against `base` (paths shown in the suite's
/// name).
pub fn render(diff: &Diff, base: &Path, new: &Path) -> String {
    let mut report = Report::new("conformance");
    let mut suite = TestSuite::new(format!("{} vs {}", new.display(), base.display()));
    let mut cases: Vec<TestCase> = Vec::new();
    for (k, word) in &diff.same {
        let mut t = TestCase::new(k.as_str(), TestCaseStatus::success());
        t.set_classname(class(k));
        // a hand-off answer flipped by its rate passes, with both answers in its output
        match diff.rates.iter().find(|n| &n.key == k) {
            Some(n) => t.set_system_out(format!("{} -> {} ({})", n.before, n.after, n.rate_reason())),
            None => t.set_system_out(word.as_str()),
        };
        cases.push(t);
    }
    for c in &diff.changed {
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
        status.set_message(format!("{} ({}) -> {} ({})", c.before.0, c.before.1, c.after.0, c.after.1));
        status.set_type("changed");
        let mut t = TestCase::new(c.key.as_str(), status);
        t.set_classname(class(&c.key));
        cases.push(t);
    }
    for n in &diff.within_noise {
        let mut t = TestCase::new(n.key.as_str(), TestCaseStatus::success());
        t.set_classname(class(&n.key));
        t.set_system_out(format!("{} -> {} (natural race only; Fisher p = {:.3})", n.before, n.after, n.p));
        cases.push(t);
    }
    for k in &diff.missing {
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
        status.set_message("in the baseline and asked for by the new run, but not in it");
        status.set_type("missing");
        let mut t = TestCase::new(k.as_str(), status);
        t.set_classname(class(k));
        cases.push(t);
    }
    if diff.compared == 0 {
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
        status.set_message("nothing compared: the runs share no cell");
        status.set_type("empty");
        cases.push(TestCase::new("nothing compared", status));
    }
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    suite.add_test_cases(cases);
    report.add_test_suite(suite);
    let mut s = report.to_string().expect("serialises to memory");
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::render;
    use crate::report::model::Results;
    use crate::verdict::Outcome;
    use std::path::Path;

    fn base() -> Results {
        crate::report::fixture("base.json")
    }

    #[test]
    fn junit_one_case_per_compared_cell_changed_fails() {
        let b = base();
        let mut n = base();
        let i = n.cells.iter().position(|c| c.second().is_some()).unwrap();
        let was = n.cells[i].outcome().unwrap();
        n.cells[i].second_mut().unwrap().outcome =
            if was == Outcome::Replaced { Outcome::Refused } else { Outcome::Replaced };
        let d = crate::compare::compare(&b, &n);
        let xml = render(&d, Path::new("base.json"), Path::new("new.json"));
        assert_eq!(xml.matches("<testcase ").count(), d.compared, "{xml}");
        assert_eq!(xml.matches("<failure ").count(), 1, "{xml}");
        insta::assert_snapshot!(xml);
    }
}

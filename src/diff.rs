//! `conformance diff`: the cells of two runs that differ, grouped by variant, with each side's
//! text, raw error and a one-line reproduction ([`crate::repro`]). Pure: it takes two results
//! and returns a [`Report`]; reading files and measuring are the caller's ([`crate::app`]).
//!
//! Which cells differ is decided by [`crate::compare::compare`] (outcomes and the relative-path
//! repeat, the error codes, delivery and returned value, amplified verdicts, natural verdicts
//! by Fisher's exact test, hand-off states and laid-out answers), plus the one thing a
//! regression gate leaves out: a rate-counted recipe whose answer went between `yes` and `no`
//! with failures that differ significantly (Fisher's exact test, p <
//! [`crate::stats::SIGNIFICANT_P`]; within noise otherwise). `diff` also shows each side's
//! text, raw error and reproduction, and lists apart the hand-off cells whose answer stayed
//! while a failure rate moved significantly ([`Report::rates`], e.g. an anti-pattern's torn
//! reads 258/15,979 against 899/9,821), which are not a difference.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;

use crate::compare::{self, Matched};
use crate::matrix::SourceKind;
use crate::report::model::{Cell, CellResult, Results, Scenario};
use crate::report::table::{self, escape_controls};

/// What changed in a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum What {
    /// A second comer's outcome (or its relative-path repeat's), or the kind of the cell.
    Outcome,
    /// A race verdict (amplified, or natural by Fisher's test).
    Verdict,
    /// A second comer's normalised error code, with the same outcome.
    ErrorCode,
    /// How a second comer's failure reached the caller, with the same outcome.
    Delivery,
    /// The value a second comer's call returned, with the same outcome.
    Returned,
    /// A hand-off cell's failure counters.
    Counters,
    /// A hand-off recipe's answer (use, don't use).
    Answer,
}

impl What {
    /// `outcome`, `verdict`, `error code`, `delivery`, `returned value` or `counters`.
    pub fn as_str(self) -> &'static str {
        match self {
            What::Outcome => "outcome",
            What::Verdict => "verdict",
            What::ErrorCode => "error code",
            What::Delivery => "delivery",
            What::Returned => "returned value",
            What::Counters => "counters",
            What::Answer => "answer",
        }
    }
}

/// One side of a changed cell.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CellSide {
    /// The runtime row label (`bun 1.1.44`).
    pub runtime: String,
    /// The cell as the tables show it (`refused EEXIST`, `exclusive (amp 0/200 < 1.5%; …)`).
    pub text: String,
    /// The raw error shown with the cell (the second comer's, or a race's first loser's).
    pub raw_error: Option<crate::domain::RawError>,
    /// What the harness saw of faults, prompts and harness errors.
    pub evidence: Option<String>,
    /// A command line that shows the behaviour again ([`crate::repro::line`]).
    pub repro: String,
}

/// A cell whose outcome, verdict, error code or counters differ between the two runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Changed {
    /// The key both cells were matched on (`bun/node.cpSync.excl/second-comer/file`).
    pub key: String,
    /// `second-comer`, `race`, …
    pub scenario: Scenario,
    /// The target state, and `(source <kind>)` for a source other than the variant's own.
    pub target: String,
    /// What changed.
    pub what: What,
    /// The compared word in A (`refused`, `exclusive (amplified)`).
    pub before: String,
    /// The compared word in B.
    pub after: String,
    /// Run A's cell.
    pub a: CellSide,
    /// Run B's cell.
    pub b: CellSide,
    /// Run B's cell's id, as measured (before any matching by kind): where the HTML page
    /// outlines it.
    #[serde(skip)]
    pub b_id: String,
}

/// The changed cells of one variant.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    /// The variant id.
    pub variant: String,
    /// The call as the matrix shows it.
    pub call: String,
    /// Its changed cells, in key order.
    pub cells: Vec<Changed>,
}

/// The result of `diff`: what differs between run A and run B.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// How run A was named (a file, or a `-r` item).
    pub a: String,
    /// How run B was named.
    pub b: String,
    /// Cells compared (in both runs).
    pub compared: usize,
    /// The changed cells, grouped by variant in the order of run A's cells.
    pub groups: Vec<Group>,
    /// Compared cells that did not change: key and B's word.
    pub unchanged: Vec<(String, String)>,
    /// Natural races whose verdict changed, and hand-off recipes whose answer changed, within
    /// noise (Fisher's exact test, p ≥ [`crate::stats::SIGNIFICANT_P`]): not a difference.
    pub within_noise: Vec<compare::Noise>,
    /// Hand-off cells whose answer stayed while a failure rate moved significantly
    /// ([`counters_differ`]: an anti-pattern failing on both sides, at another rate): shown,
    /// not a difference (they are among [`Report::unchanged`] too).
    pub rates: Vec<Changed>,
    /// Cells only in A that B asked for (its runtimes and selection, see
    /// [`compare::compare`]): gone from B.
    pub missing: Vec<String>,
    /// Cells of A that B did not ask for: not compared.
    pub not_asked: usize,
    /// Cells only in B.
    pub added: Vec<String>,
    /// B's races whose detection control was not caught.
    pub weak: Vec<String>,
    /// Races of two rows against each other (`run --against`) whose verdict changed, keyed by
    /// [`compare::pair_key`]: before and after, with the pair's label.
    pub pairs: Vec<compare::Change>,
    /// The libraries whose raced version differs between A and B ([`Cell::library`]).
    pub libraries: Vec<LibraryChange>,
}

/// A library raced at different versions in A and B.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LibraryChange {
    /// Its npm name (`proper-lockfile`).
    pub name: String,
    /// The version A raced, if A raced it.
    pub a: Option<String>,
    /// The version B raced, if B raced it.
    pub b: Option<String>,
}

/// The libraries raced at different versions by the cells of `a` and `b`, by name.
fn library_changes(a: &Results, b: &Results) -> Vec<LibraryChange> {
    let versions = |r: &Results| -> BTreeMap<String, String> {
        r.cells
            .iter()
            .filter_map(|c| crate::handoff::LibrarySpec::parse(c.library.as_deref()?).ok())
            .map(|l| (l.name, l.version.to_string()))
            .collect()
    };
    let (va, vb) = (versions(a), versions(b));
    let names: std::collections::BTreeSet<&String> = va.keys().chain(vb.keys()).collect();
    names
        .into_iter()
        .filter(|n| va.get(*n) != vb.get(*n))
        .map(|n| LibraryChange { name: n.clone(), a: va.get(n).cloned(), b: vb.get(n).cloned() })
        .collect()
}

/// `libraries: proper-lockfile 4.1.1 ⇒ 4.1.2, …` (`-` for a side that raced none), or `None`.
fn libraries_line(r: &Report) -> Option<String> {
    let side = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    let items: Vec<String> =
        r.libraries.iter().map(|l| format!("{} {} ⇒ {}", l.name, side(&l.a), side(&l.b))).collect();
    (!items.is_empty()).then(|| format!("libraries: {}", items.join(", ")))
}

impl Report {
    /// True when a cell differs, a cell B asked for is only in A, or no cell was compared
    /// (the exit code 1 of `diff`).
    pub fn differs(&self) -> bool {
        self.groups.iter().any(|g| !g.cells.is_empty())
            || !self.pairs.is_empty()
            || !self.missing.is_empty()
            || self.compared == 0
    }

    /// The number of changed cells and pairs.
    pub fn changed(&self) -> usize {
        self.groups.iter().map(|g| g.cells.len()).sum::<usize>() + self.pairs.len()
    }

    /// The same comparison as [`compare::Diff`], for the JUnit exporter
    /// ([`crate::compare::junit::render`]): every changed cell of this report a change.
    pub fn as_compare_diff(&self) -> compare::Diff {
        let changed = self
            .groups
            .iter()
            .flat_map(|g| &g.cells)
            .map(|c| compare::Change {
                key: c.key.clone(),
                before: (format!("{}: {}", c.what.as_str(), c.a.text), c.a.runtime.clone()),
                after: (c.b.text.clone(), c.b.runtime.clone()),
            })
            .chain(self.pairs.iter().cloned())
            .collect();
        compare::Diff {
            changed,
            missing: self.missing.clone(),
            not_asked: self.not_asked,
            added: self.added.clone(),
            within_noise: self.within_noise.clone(),
            // diff weighs the flipped answers itself: changed or within noise
            rates: Vec::new(),
            weak: self.weak.clone(),
            compared: self.compared,
            same: self.unchanged.clone(),
        }
    }
}

/// The failure counters of two hand-off cells that differ materially (Fisher's exact test,
/// p < [`crate::stats::SIGNIFICANT_P`]; in a laid-out scenario, whose recipe does the same
/// every time ([`crate::report::handoff::Words::laid_out`]), any failure found in one and not
/// the other), as `torn_reads 0/4888 → 120/4890`; empty when none does or a cell has no
/// counts.
pub fn counters_differ(a: &Cell, b: &Cell) -> Vec<String> {
    let (CellResult::Counters(x), CellResult::Counters(y)) = (&a.result, &b.result) else { return Vec::new() };
    if x.harness_error || y.harness_error {
        return Vec::new();
    }
    let mut out = Vec::new();
    let words = crate::report::handoff::words(a.scenario);
    let laid_out = words.is_some_and(|w| w.laid_out);
    let failures = words.map_or(&[][..], |w| w.failures);
    for &(fail, of) in failures {
        let (Some(&fa), Some(&fb)) = (x.counters.get(fail), y.counters.get(fail)) else { continue };
        let (ta, tb) = (x.counters.get(of).copied().unwrap_or(0), y.counters.get(of).copied().unwrap_or(0));
        if ta == 0 || tb == 0 || fa == fb {
            continue;
        }
        let p = crate::stats::fisher_p(fa as usize, ta.max(fa) as usize, fb as usize, tb.max(fb) as usize);
        if p < crate::stats::SIGNIFICANT_P || (laid_out && (fa == 0) != (fb == 0)) {
            out.push(format!("{fail} {fa}/{ta} → {fb}/{tb}"));
        }
    }
    out
}

/// The normalised error codes of a second comer: the call's and its relative repeat's.
fn codes(c: &Cell) -> Option<(Option<&str>, Option<&str>)> {
    let s = c.second()?;
    let rel = s.relative.as_ref().and_then(|r| r.error.as_ref()).map(|e| e.code.as_str());
    Some((s.error.as_ref().map(|e| e.code.as_str()), rel))
}

/// The error codes of two second comers with the same outcome, when they differ:
/// `(A's, B's)` as `EEXIST` or `EEXIST (rel: EPERM)`.
fn codes_differ(a: &Cell, b: &Cell) -> Option<(String, String)> {
    let ((aa, ar), (ba, br)) = (codes(a)?, codes(b)?);
    // a run without the relative repeat (--no-relative) measured less; it did not change
    let rel_both = a.second()?.relative.is_some() && b.second()?.relative.is_some();
    if aa == ba && (!rel_both || ar == br) {
        return None;
    }
    let show = |abs: Option<&str>, rel: Option<&str>| {
        let mut s = abs.unwrap_or("no error").to_string();
        if rel_both && rel != abs {
            s.push_str(&format!(" (rel: {})", rel.unwrap_or("no error")));
        }
        s
    };
    Some((show(aa, ar), show(ba, br)))
}

/// The cell as the tables show it.
pub fn cell_text(c: &Cell) -> String {
    match c.scenario {
        Scenario::SecondComer => table::second_text(c),
        Scenario::Race => table::race_text(c),
        _ => table::handoff_text(c),
    }
}

/// `run`'s single runtime name, when all its cells are of one.
fn single_runtime(r: &Results) -> Option<&str> {
    let first = r.cells.first()?.runtime_name.as_str();
    r.cells.iter().all(|c| c.runtime_name == first).then_some(first)
}

/// Compares run `b` against run `a` (named `a_name`, `b_name` in the report). `sources` gives
/// each variant's source kind (from the matrices), for the reproductions. When each run holds
/// one runtime kind and the kinds differ (`-r node -r deno`), cells are matched by variant,
/// scenario and target alone. Never fails: an empty comparison is a report without groups.
pub fn diff(
    a: &Results,
    b: &Results,
    a_name: &str,
    b_name: &str,
    sources: &BTreeMap<String, SourceKind>,
    ignore: &[compare::Fact],
) -> Report {
    // one runtime on each side, of different kinds: match them as one
    let renamed;
    let b_cmp = match (single_runtime(a), single_runtime(b)) {
        (Some(x), Some(y)) if x != y => {
            let mut r = b.clone();
            r.cells.iter_mut().for_each(|c| c.runtime_name = x.to_string());
            r.run_info.runtimes.iter_mut().filter(|i| i.name == y).for_each(|i| i.name = x.to_string());
            renamed = r;
            &renamed
        }
        _ => b,
    };
    let d = compare::compare_ignoring(a, b_cmp, ignore);
    let m = Matched::of(a, b_cmp);
    // the cells as measured (before any renaming), by id
    let by_id: BTreeMap<&str, &Cell> = b.cells.iter().map(|c| (c.id.as_str(), c)).collect();
    let original = |c: &Cell| -> Cell { by_id.get(c.id.as_str()).map_or_else(|| c.clone(), |x| (*x).clone()) };
    let side = |c: &Cell, r: &Results| {
        let exe = r.run_info.runtimes.iter().find(|i| i.label == c.runtime).and_then(|i| i.path.as_deref());
        // the cell's own kind of source where it has one (`sources`), else the variant's
        let ctx = crate::repro::Context { exe, source: c.source.or_else(|| sources.get(&c.variant).copied()) };
        CellSide {
            runtime: c.runtime.clone(),
            text: cell_text(c),
            raw_error: c.error().map(|e| e.raw.clone()),
            evidence: c.evidence.clone(),
            repro: crate::repro::line(c, ctx),
        }
    };
    let make = |key: &str, what: What, before: String, after: String| -> Option<Changed> {
        let (x, y) = (*m.base.get(key)?, original(m.new.get(key)?));
        Some(Changed {
            key: key.to_string(),
            scenario: x.scenario,
            // a source kind other than the variant's own is part of what the cell is
            target: match x.source {
                Some(k) => format!("{} (source {})", x.target.as_str(), k.as_str()),
                None => x.target.as_str().to_string(),
            },
            what,
            before,
            after,
            a: side(x, a),
            b: side(&y, b),
            b_id: y.id.clone(),
        })
    };
    let mut changed: Vec<Changed> = Vec::new();
    let pairs: Vec<compare::Change> = d.changed.iter().filter(|c| c.key.starts_with("against/")).cloned().collect();
    for c in &d.changed {
        let (Some(x), Some(y)) = (m.base.get(&c.key), m.new.get(&c.key)) else { continue };
        // a race shows compare's words (`exclusive (amplified)`); a second comer its text
        // with the error code (`refused EEXIST`)
        let (what, before, after) = match (x.scenario, x.result.kind() == y.result.kind()) {
            (Scenario::Race, true) => (What::Verdict, c.before.0.clone(), c.after.0.clone()),
            (Scenario::SecondComer, true) => {
                let what = match compare::second_change(x, y, ignore) {
                    Some(Some(compare::Fact::ErrorCode)) => What::ErrorCode,
                    Some(Some(compare::Fact::Delivery)) => What::Delivery,
                    Some(Some(compare::Fact::Returned)) => What::Returned,
                    _ => What::Outcome,
                };
                // an error code is shown with the relative repeat's where that differs
                match codes_differ(x, y).filter(|_| what == What::ErrorCode) {
                    Some((ca, cb)) => (what, format!("{} {ca}", x.word()), format!("{} {cb}", y.word())),
                    None => (what, cell_text(x), cell_text(y)),
                }
            }
            (s, true) if s.is_handoff() => (What::Answer, c.before.0.clone(), c.after.0.clone()),
            _ => (What::Outcome, c.before.0.clone(), c.after.0.clone()),
        };
        changed.extend(make(&c.key, what, before, after));
    }
    // what differs is compare's rule (one rule for both commands); failure rates of a
    // hand-off that moved while its answer stayed are listed apart, not counted
    let mut unchanged = Vec::new();
    let mut rates = Vec::new();
    let mut within_noise = d.within_noise.clone();
    for (k, word) in &d.same {
        let (Some(x), Some(y)) = (m.base.get(k), m.new.get(k)) else { continue };
        if let Some((before, after, p)) = compare::answer_flip(x, y) {
            // a rate-counted recipe's answer between use and don't use: a change where the
            // failures differ significantly, else a rare failure that one run happened to see
            if p < crate::stats::SIGNIFICANT_P {
                changed.extend(make(k, What::Answer, before, after));
                continue;
            }
            within_noise.push(compare::Noise { key: k.clone(), before, after, p });
        } else if !counters_differ(x, y).is_empty() {
            rates.extend(make(k, What::Counters, table::handoff_text(x), table::handoff_text(y)));
        }
        unchanged.push((k.clone(), word.clone()));
    }
    // grouped by variant, in the order of A's cells
    let mut order: Vec<&str> = Vec::new();
    for c in &a.cells {
        if !order.contains(&c.variant.as_str()) {
            order.push(&c.variant);
        }
    }
    let pos = |v: &str| order.iter().position(|o| *o == v).unwrap_or(usize::MAX);
    let mut groups: Vec<Group> = Vec::new();
    changed.sort_by(|x, y| x.key.cmp(&y.key));
    for c in changed {
        let (variant, call) = m.base.get(&c.key).map(|x| (x.variant.clone(), x.call.clone())).unwrap_or_default();
        match groups.iter_mut().find(|g| g.variant == variant) {
            Some(g) => g.cells.push(c),
            None => groups.push(Group { variant, call, cells: vec![c] }),
        }
    }
    groups.sort_by_key(|g| pos(&g.variant));
    Report {
        a: a_name.to_string(),
        b: b_name.to_string(),
        compared: d.compared,
        groups,
        unchanged,
        within_noise,
        rates,
        missing: d.missing,
        not_asked: d.not_asked,
        added: d.added,
        weak: d.weak,
        pairs,
        libraries: library_changes(a, b),
    }
}

/// A raw error on one line: `Error EEXIST errno -17: EEXIST: file already exists, open '…'`.
pub fn raw_text(e: &crate::domain::RawError) -> String {
    let mut s = e.kind.clone();
    let mut add = |part: String| {
        if !s.is_empty() {
            s.push(' ');
        }
        s.push_str(&part);
    };
    if let Some(c) = &e.code {
        add(c.clone());
    }
    if let Some(n) = e.errno {
        add(format!("errno {n}"));
    }
    if let Some(h) = e.hresult {
        add(format!("HResult 0x{:08X}", h as u32));
    }
    if let Some(l) = e.errorlevel {
        add(format!("ERRORLEVEL {l}"));
    }
    let msg = e.message.replace(['\r', '\n'], " ");
    if s.is_empty() {
        msg
    } else {
        format!("{s}: {msg}")
    }
}

/// The runtimes a report's side shows: the distinct labels of its changed cells.
fn labels(r: &Report, pick: impl Fn(&Changed) -> &CellSide) -> String {
    let mut v: Vec<&str> = Vec::new();
    for c in r.groups.iter().flat_map(|g| &g.cells) {
        let l = pick(c).runtime.as_str();
        if !v.contains(&l) {
            v.push(l);
        }
    }
    v.join(", ")
}

/// The count line: `3 of 24 compared cells differ; 1 only in A, 0 only in B, 2 within noise
/// (natural races), 0 weak races; 0 of A not asked for by B`, then `nothing compared` when
/// the runs share no cell.
fn count_line(r: &Report) -> String {
    let mut s = format!(
        "{} of {} compared cells differ; {} only in A, {} only in B, {} within noise, {} weak races; {} of A not asked for by B",
        r.changed(),
        r.compared,
        r.missing.len(),
        r.added.len(),
        r.within_noise.len(),
        r.weak.len(),
        r.not_asked
    );
    if r.compared == 0 {
        s.push_str("\nnothing compared: the runs share no cell");
    }
    s
}

/// The terminal text: a heading naming A and B; per variant its changed cells, one line each
/// (`second-comer/file  outcome  refused EEXIST ⇒ replaced`: `⇒`, as tables use `→` in a cell), so that the changes fit one
/// screen; the count line; then the details of each cell: both sides' text, raw error,
/// evidence and reproduction. Control characters from the files are escaped.
pub fn render_text(r: &Report) -> String {
    let e = escape_controls;
    let mut s = String::new();
    let _ = writeln!(s, "A = {}", e(&r.a));
    let _ = writeln!(s, "B = {}", e(&r.b));
    if let Some(line) = libraries_line(r) {
        let _ = writeln!(s, "{}", e(&line));
    }
    let width = r.groups.iter().flat_map(|g| &g.cells).map(|c| c.scenario.as_str().len() + 1 + c.target.len()).max();
    for g in &r.groups {
        let _ = writeln!(s, "\n{}  {}", e(&g.variant), e(&g.call));
        for c in &g.cells {
            let cell = format!("{}/{}", c.scenario.as_str(), c.target);
            let w = width.unwrap_or(0);
            let what = c.what.as_str();
            let _ = writeln!(s, "  {cell:w$}  {what:10}  {} ⇒ {}", e(&c.before), e(&c.after));
        }
    }
    if !r.pairs.is_empty() {
        let _ = writeln!(s, "\nraces against other parties' calls:");
        for c in &r.pairs {
            let _ = writeln!(s, "  {}  {} ⇒ {}", e(&c.before.1), e(&c.before.0), e(&c.after.0));
        }
    }
    if !r.within_noise.is_empty() {
        let _ =
            writeln!(s, "\nwithin noise (not a difference: Fisher's exact test, p ≥ {}):", crate::stats::SIGNIFICANT_P);
        for n in &r.within_noise {
            let _ = writeln!(s, "  {}  {} ⇒ {} (p = {:.3})", e(&n.key), e(&n.before), e(&n.after), n.p);
        }
    }
    if !r.rates.is_empty() {
        let _ = writeln!(s, "\nfailure rates that moved, same answer (not a difference):");
        for c in &r.rates {
            let _ = writeln!(s, "  {}  {} ⇒ {}", e(&c.key), e(&c.before), e(&c.after));
        }
    }
    if !r.missing.is_empty() {
        let _ = writeln!(s, "\nonly in A (B asked for them):");
        for k in &r.missing {
            let _ = writeln!(s, "  missing  {}", e(k));
        }
    }
    if !r.differs() {
        let _ = writeln!(s, "\nno cell differs");
    }
    let _ = writeln!(s, "\n{}", count_line(r));
    if r.changed() > 0 {
        let _ = writeln!(s, "\ndetails (raw errors; reproductions to paste into a POSIX shell):");
    }
    for g in &r.groups {
        for c in &g.cells {
            let _ = writeln!(s, "\n{} {}/{}", e(&g.variant), c.scenario.as_str(), c.target);
            for (name, x) in [("A", &c.a), ("B", &c.b)] {
                let _ = writeln!(s, "  {name} {}: {}", e(&x.runtime), e(&x.text));
                if let Some(raw) = &x.raw_error {
                    let _ = writeln!(s, "    raw error: {}", e(&raw_text(raw)));
                }
                if let Some(ev) = &x.evidence {
                    let _ = writeln!(s, "    evidence: {}", e(&ev.replace(['\r', '\n'], " ")));
                }
                let _ = writeln!(s, "    repro: {}", e(&x.repro));
            }
        }
    }
    s
}

/// Markdown: a heading, per variant a table of its changed cells (A and B side by side, raw
/// errors), then the reproductions as code blocks; the count line last.
pub fn render_markdown(r: &Report) -> String {
    let cell = |t: &str| crate::report::markdown::md_cell(t);
    let mut s = String::new();
    let _ = writeln!(s, "# conformance diff\n");
    let _ = writeln!(s, "- A: {}", cell(&r.a));
    let _ = writeln!(s, "- B: {}", cell(&r.b));
    if let Some(line) = libraries_line(r) {
        let _ = writeln!(s, "- {}", cell(&line));
    }
    if r.changed() > 0 {
        let _ = writeln!(s, "- runtimes: {} → {}", cell(&labels(r, |c| &c.a)), cell(&labels(r, |c| &c.b)));
    }
    for g in &r.groups {
        let code = |t: &str| crate::report::markdown::code_span(&crate::report::markdown::code_text(t));
        let _ = writeln!(s, "\n## {}\n\n{}\n", code(&g.variant), code(&g.call));
        let _ = writeln!(s, "| cell | changed | A | B | A raw error | B raw error |");
        let _ = writeln!(s, "|---|---|---|---|---|---|");
        let raw = |x: &CellSide| x.raw_error.as_ref().map(raw_text).unwrap_or_default();
        for c in &g.cells {
            let _ = writeln!(
                s,
                "| {}/{} | {} | {} | {} | {} | {} |",
                c.scenario.as_str(),
                c.target,
                c.what.as_str(),
                cell(&c.a.text),
                cell(&c.b.text),
                cell(&raw(&c.a)),
                cell(&raw(&c.b))
            );
        }
        for c in &g.cells {
            let _ = writeln!(s, "\n{}/{}:\n\n```sh", c.scenario.as_str(), c.target);
            for (name, x) in [("A", &c.a), ("B", &c.b)] {
                let _ = writeln!(s, "# {name} {}\n{}", escape_controls(&x.runtime), escape_controls(&x.repro));
            }
            let _ = writeln!(s, "```");
        }
    }
    if !r.pairs.is_empty() {
        let _ = writeln!(s, "\n## Races against other parties' calls\n\n| pair | A | B |\n|---|---|---|");
        for c in &r.pairs {
            let cell = |t: &str| crate::report::markdown::md_cell(t);
            let _ = writeln!(s, "| {} | {} | {} |", cell(&c.before.1), cell(&c.before.0), cell(&c.after.0));
        }
    }
    if !r.rates.is_empty() {
        let _ = writeln!(
            s,
            "\n## Failure rates that moved, same answer (not a difference)\n\n| cell | A | B |\n|---|---|---|"
        );
        for c in &r.rates {
            let cell = |t: &str| crate::report::markdown::md_cell(t);
            let _ = writeln!(s, "| {} | {} | {} |", cell(&c.key), cell(&c.before), cell(&c.after));
        }
    }
    if !r.missing.is_empty() {
        let _ = writeln!(s, "\n## Only in A (B asked for them)\n");
        for k in &r.missing {
            let _ =
                writeln!(s, "- missing {}", crate::report::markdown::code_span(&crate::report::markdown::code_text(k)));
        }
    }
    if !r.differs() {
        let _ = writeln!(s, "\nNo cell differs.");
    }
    let _ = writeln!(s, "\n{}", count_line(r).replace('\n', "\n\n"));
    s
}

/// HTML: one self-contained page (the report's style, no script, no network): the names and
/// counts, the changed cells as a table (A and B side by side, raw errors, the commands that
/// measure them again), B's answer heatmap ([`crate::report::charts::answer_heatmap`])
/// with each changed cell's square outlined and its change in the square's title, then the
/// pairs, the failure rates that moved with the same answer, and the cells only in A. `b` is
/// run B's results (the heatmap's squares). Every text is escaped.
pub fn render_html(r: &Report, b: &Results) -> String {
    use crate::report::html::escape;
    let mut h = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>conformance diff</title>\n<style>{}</style></head><body>\n<h1>conformance diff</h1>\n",
        crate::report::html::STYLE
    );
    let _ = writeln!(h, "<p>A: <code>{}</code><br>B: <code>{}</code></p>", escape(&r.a), escape(&r.b));
    if let Some(line) = libraries_line(r) {
        let _ = writeln!(h, "<p>{}</p>", escape(&line));
    }
    let _ = writeln!(h, "<p>{}</p>", escape(&count_line(r)).replace('\n', "<br>"));
    if r.changed() > 0 {
        h += "<h2 id=\"changed\">Changed cells</h2>\n<table><tr><th>call</th><th>cell</th><th>changed</th><th>A</th><th>B</th></tr>\n";
        let side = |x: &CellSide| {
            let mut t = format!("<b>{}</b>: {}", escape(&x.runtime), escape(&x.text));
            if let Some(e) = &x.raw_error {
                let _ = write!(t, "<br><small>raw: {}</small>", escape(&raw_text(e)));
            }
            if let Some(e) = &x.evidence {
                let _ = write!(t, "<br><small>{}</small>", escape(e));
            }
            let _ = write!(t, "<br><code>{}</code>", escape(&x.repro));
            t
        };
        for g in &r.groups {
            for c in &g.cells {
                let _ = writeln!(
                    h,
                    "<tr><th><code>{}</code></th><td>{} · {}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    escape(&g.variant),
                    escape(c.scenario.as_str()),
                    escape(&c.target),
                    escape(c.what.as_str()),
                    side(&c.a),
                    side(&c.b)
                );
            }
        }
        h += "</table>\n";
    }
    let changes: BTreeMap<&str, &Changed> =
        r.groups.iter().flat_map(|g| &g.cells).map(|c| (c.b_id.as_str(), c)).collect();
    let heatmap = crate::report::charts::answer_heatmap(b, &crate::report::answers::records(b), &|c: &Cell| {
        changes.get(c.id.as_str()).map(|x| format!("{} changed: {} → {}", x.what.as_str(), x.before, x.after))
    });
    if !heatmap.is_empty() {
        h += "<h2 id=\"heatmap\">The answer in B, changed cells outlined</h2>\n";
        h += "<p class=\"legend\">Green use, olive use only if every party does, red don\u{2019}t use, amber undetermined, \
no square where B\u{2019}s runtime lacks the call; \
a square outlined in purple holds a cell that changed from A (hover over it for the change).</p>\n";
        h += &heatmap;
        h += "\n";
    }
    let list = |h: &mut String, title: &str, items: Vec<String>| {
        if !items.is_empty() {
            let _ = writeln!(h, "<h2>{}</h2>\n<ul>", escape(title));
            for i in items {
                let _ = writeln!(h, "<li>{}</li>", escape(&i));
            }
            h.push_str("</ul>\n");
        }
    };
    list(
        &mut h,
        "Races against other parties' calls",
        r.pairs.iter().map(|c| format!("{}: {} → {}", c.before.1, c.before.0, c.after.0)).collect(),
    );
    list(
        &mut h,
        "Failure rates that moved, same answer (not a difference)",
        r.rates.iter().map(|c| format!("{}: {} → {}", c.key, c.before, c.after)).collect(),
    );
    list(&mut h, "Only in A (B asked for them)", r.missing.clone());
    if !r.differs() {
        h += "<p>No cell differs.</p>\n";
    }
    h += "</body></html>\n";
    h
}

#[cfg(test)]
mod tests {
    use super::{
        counters_differ, diff, raw_text, render_html, render_markdown, render_text, Cell, CellResult, Results,
        Scenario, SourceKind, What,
    };
    use crate::report::model::TargetState;
    use crate::verdict::Outcome;
    use std::collections::BTreeMap;

    fn base() -> Results {
        crate::report::fixture("base.json")
    }

    fn sources() -> BTreeMap<String, SourceKind> {
        crate::matrix::load(None).unwrap().into_iter().map(|v| (v.id, v.source)).collect()
    }

    fn second<'a>(r: &'a mut Results, variant: &str, target: TargetState) -> &'a mut Cell {
        r.cells
            .iter_mut()
            .find(|c| c.variant == variant && c.scenario == Scenario::SecondComer && c.target == target)
            .expect("cell")
    }

    /// The versions of a library raced on each side are said where they differ, whether or not
    /// a cell's counts changed.
    #[test]
    fn library_versions_that_differ_are_named() {
        let mut a = base();
        let mut b = base();
        a.cells[0].library = Some("proper-lockfile@4.1.1".into());
        b.cells[0].library = Some("proper-lockfile@4.1.2".into());
        a.cells[1].library = Some("lockfile@1.0.4".into());
        b.cells[1].library = Some("lockfile@1.0.4".into());
        let d = diff(&a, &b, "a.json", "b.json", &sources(), &[]);
        let libs: Vec<(&str, Option<&str>, Option<&str>)> =
            d.libraries.iter().map(|l| (l.name.as_str(), l.a.as_deref(), l.b.as_deref())).collect();
        assert_eq!(libs, [("proper-lockfile", Some("4.1.1"), Some("4.1.2"))]);
        assert!(render_text(&d).contains("libraries: proper-lockfile 4.1.1 ⇒ 4.1.2\n"), "{}", render_text(&d));
        assert!(render_markdown(&d).contains("- libraries: proper-lockfile 4.1.1 ⇒ 4.1.2"), "{}", render_markdown(&d));
        assert!(!d.differs(), "a version alone is not a changed cell");
    }

    #[test]
    fn identical_runs_have_no_groups() {
        let r = base();
        let d = diff(&r, &r, "a.json", "b.json", &sources(), &[]);
        assert!(!d.differs());
        assert_eq!(d.unchanged.len(), d.compared);
        assert!(render_text(&d).contains("no cell differs"), "{}", render_text(&d));
    }

    #[test]
    fn changed_outcomes_and_codes_are_grouped_by_variant() {
        let a = base();
        let mut b = base();
        second(&mut b, "node.writeFileSync.wx", TargetState::File).second_mut().unwrap().outcome = Outcome::Replaced;
        let c = second(&mut b, "node.writeFileSync.wx", TargetState::Dir);
        c.second_mut().unwrap().error.as_mut().unwrap().code = "EISDIR".into();
        let d = diff(&a, &b, "a.json", "b.json", &sources(), &[]);
        assert!(d.differs());
        assert_eq!(d.groups.len(), 1, "{d:#?}");
        let g = &d.groups[0];
        assert_eq!(g.variant, "node.writeFileSync.wx");
        let whats: Vec<(What, &str)> = g.cells.iter().map(|c| (c.what, c.target.as_str())).collect();
        assert_eq!(whats, [(What::ErrorCode, "dir"), (What::Outcome, "file")]);
        assert_eq!(g.cells[0].before, "refused EEXIST");
        assert_eq!(g.cells[0].after, "refused EISDIR (rel: EEXIST)");
        assert_eq!(g.cells[1].before, "refused EEXIST");
        assert_eq!(g.cells[1].after, "replaced (rel: refused)");
        assert!(g.cells[1].a.raw_error.is_some(), "A refused with an error");
        assert_eq!(d.changed() + d.unchanged.len(), d.compared);
        let text = render_text(&d);
        assert!(text.contains("second-comer/file  outcome     refused EEXIST ⇒ replaced (rel: refused)"), "{text}");
        assert!(text.contains("raw error: "), "{text}");
        assert!(text.contains("repro: "), "{text}");
        // JUnit: one case per compared cell, the two changed ones failures
        let xml = crate::compare::junit::render(
            &d.as_compare_diff(),
            std::path::Path::new("a.json"),
            std::path::Path::new("b.json"),
        );
        assert_eq!(xml.matches("<testcase ").count(), d.compared, "{xml}");
        assert_eq!(xml.matches("<failure ").count(), 2, "{xml}");
        let md = render_markdown(&d);
        assert!(md.contains("## `node.writeFileSync.wx`") && md.contains("```sh"), "{md}");
    }

    /// The HTML page outlines exactly the changed cells' squares in B's heatmap, each titled
    /// with its change, lists them with both sides, and escapes what the runs hold.
    #[test]
    fn the_html_page_outlines_the_changed_squares_and_lists_the_changes() {
        let a = base();
        let mut b = base();
        second(&mut b, "node.writeFileSync.wx", TargetState::File).second_mut().unwrap().outcome = Outcome::Replaced;
        let d = diff(&a, &b, "a<b>.json", "b.json", &sources(), &[]);
        let page = render_html(&d, &b);
        assert_eq!(page.matches("stroke=\"#a020f0\"").count(), 1, "{page}");
        assert!(
            page.contains(
                "node.writeFileSync.wx: don't use — no: replaced on file (outcome changed: refused EEXIST → replaced"
            ),
            "{page}"
        );
        assert!(page.contains("<h2 id=\"changed\">Changed cells</h2>"), "{page}");
        assert!(page.contains("a&lt;b&gt;.json") && !page.contains("<b>.json"), "{page}");
        assert!(!page.contains("<script") && !page.contains("http"), "{page}");
        let same = diff(&a, &a, "a.json", "b.json", &sources(), &[]);
        let page = render_html(&same, &a);
        assert!(page.contains("No cell differs.") && !page.contains("stroke=\"#a020f0\""), "{page}");
    }

    #[test]
    fn different_runtime_kinds_match_by_variant() {
        let a = base();
        let mut b = base();
        for c in &mut b.cells {
            c.runtime_name = "bun".into();
            c.runtime = "bun 1.1.44".into();
            c.id = Cell::id_of(&c.runtime, &c.variant, c.scenario, c.target, c.source, c.contenders);
        }
        second(&mut b, "node.writeFileSync.wx", TargetState::File).second_mut().unwrap().outcome = Outcome::Replaced;
        let d = diff(&a, &b, "node", "bun", &sources(), &[]);
        assert_eq!(d.changed(), 1, "{d:#?}");
        let c = &d.groups[0].cells[0];
        assert_eq!(c.b.runtime, "bun 1.1.44");
        // B's reproduction runs B's runtime, not A's
        assert!(c.b.repro.starts_with("bun "), "{}", c.b.repro);
    }

    #[test]
    fn counters_differ_only_materially() {
        use crate::report::model::CountersResult;
        let mut a = base().cells.remove(0);
        let mk = |torn: u64| {
            CellResult::Counters(CountersResult {
                counters: [("torn_reads".to_string(), torn), ("reads".to_string(), 1000)].into(),
                ..Default::default()
            })
        };
        a.scenario = Scenario::Publish;
        a.result = mk(0);
        let mut b = a.clone();
        b.result = mk(2);
        assert!(counters_differ(&a, &b).is_empty(), "2/1000 against 0/1000 is noise");
        b.result = mk(200);
        assert_eq!(counters_differ(&a, &b), ["torn_reads 0/1000 → 200/1000"]);
    }

    /// An anti-pattern that fails on both sides at another rate (torn reads 20/1000 against
    /// 200/1000, `no` both times) is not a difference for `compare` or `diff`; `diff` lists it
    /// under the rates that moved. The same cell going from 0 to 200 (`yes` to `no`) is a
    /// difference for `diff` (Fisher's exact test), which `compare` leaves to it.
    #[test]
    fn a_rate_that_moves_under_the_same_answer_is_shown_not_counted() {
        use crate::report::model::CountersResult;
        let mut a = base();
        let mut cell = a.cells.remove(0);
        cell.scenario = Scenario::Publish;
        cell.variant = "publish.direct".into();
        let mk = |torn: u64| {
            CellResult::Counters(CountersResult {
                counters: [("torn_reads".to_string(), torn), ("reads".to_string(), 1000), ("items".to_string(), 10)]
                    .into(),
                ..Default::default()
            })
        };
        cell.result = mk(20);
        a.cells = vec![cell];
        let mut b = a.clone();
        b.cells[0].result = mk(200);
        let d = crate::compare::compare(&a, &b);
        assert!(!d.differs(), "{}", d.render());
        let r = diff(&a, &b, "a", "b", &sources(), &[]);
        assert!(!r.differs() && r.groups.is_empty(), "{r:#?}");
        assert_eq!(r.rates.len(), 1, "{r:#?}");
        let text = render_text(&r);
        assert!(text.contains("failure rates that moved, same answer (not a difference)"), "{text}");
        assert!(render_markdown(&r).contains("Failure rates that moved"), "{}", render_markdown(&r));

        a.cells[0].result = mk(0);
        let d = crate::compare::compare(&a, &b);
        assert!(!d.differs(), "a regression gate leaves rates to diff: {}", d.render());
        let r = diff(&a, &b, "a", "b", &sources(), &[]);
        assert!(r.differs() && r.rates.is_empty(), "{r:#?}");
        assert_eq!(r.groups[0].cells[0].what, What::Answer, "{r:#?}");
    }

    #[test]
    fn raw_errors_fit_one_line() {
        let e = crate::domain::RawError {
            kind: "Error".into(),
            code: Some("EEXIST".into()),
            errno: Some(-17),
            message: "EEXIST: file\nalready exists".into(),
            ..Default::default()
        };
        assert_eq!(raw_text(&e), "Error EEXIST errno -17: EEXIST: file already exists");
    }
}

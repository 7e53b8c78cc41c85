//! Comparing two runs cell by cell: the regression check for a new runtime version.
//!
//! Cells are matched by [`Cell::key`] (adapter name, variant, scenario, target), so versions
//! may differ. Second-comer cells compare what the tables show: their outcome word and, where
//! both runs made it, the outcome of the relative-path repeat; then, where both cells show
//! them, the normalised error code (the relative repeat's too, where both runs made it), how a
//! failure was delivered and the returned value ([`Fact`]; each may be ignored, `--ignore`). Race cells compare their
//! amplified verdicts where both runs have one (amplification makes a window certain, so its
//! verdict does not depend on how busy the machine was). Their natural races are compared only
//! where no amplified verdicts exist on both sides, or where the amplified verdicts agree but
//! the cells' verdicts differ (a failure seen only in the natural race); a cell whose amplified
//! race one run skipped ([`crate::domain::NoAmplified::Skipped`]) is the same where both runs
//! found a failure (of any kind). Natural verdicts that
//! differ between `exclusive` and `multiple-winners` count as changed only when Fisher's exact
//! test says the multi-winner counts differ (p < [`crate::stats::SIGNIFICANT_P`]), and are
//! listed as within noise otherwise. A new race whose detection control was not caught (a weak
//! race) and that found no failure measured nothing: it is listed as weak, not compared.
//! Hand-off cells (counters) compare their state: `measured`, `unsupported` (no counters, the
//! probe's reason in the evidence) or `harness-error`, then their answer: in the scenarios
//! whose trials the harness lays out instead of racing (holder, os-lock, watch) a recipe's
//! answer (`yes`, `no`, `undetermined`) that changed is a change, however few the trials;
//! elsewhere the counts are natural rates that move from run to run (e.g. Deno's torn reads of
//! `publish.direct`, 58/6,911 and 303/1,836 in two runs here), which `diff` weighs: a
//! regression gate (`compare`, `run --expect`) does not fail on them. The rule of each command
//! is written once in `docs/GUIDE.md`, *What counts as a change*.
//! The races of rows against each other (`run --against`) are compared as race cells, pair by
//! pair ([`pair_key`]). [`junit`] writes a comparison as JUnit XML.
//!
//! Floor: above [`crate::report`], whose results it reads; nothing in `report` reads it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use crate::report::model::{AgainstSide, Cell, CellResult, Results};
use crate::verdict::Outcome;

pub mod junit;

/// One changed cell (or pair of rows raced against each other).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Change {
    /// The cell key.
    pub key: String,
    /// Baseline word and runtime label.
    pub before: (String, String),
    /// New word and runtime label.
    pub after: (String, String),
}

/// A natural race whose verdict word changed by no more than chance.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Noise {
    /// The cell key.
    pub key: String,
    /// Baseline verdict with its count (`exclusive 0/200`).
    pub before: String,
    /// New verdict with its count.
    pub after: String,
    /// Fisher's exact two-tailed p-value of the multi-winner counts.
    pub p: f64,
}

impl Noise {
    /// Why a hand-off answer that flipped by its rate ([`Diff::rates`]) is not counted, as
    /// `compare` and its JUnit XML say it.
    pub fn rate_reason(&self) -> String {
        format!("a hand-off's failure rate, not counted here; Fisher p = {:.1e}; `conformance diff` weighs it", self.p)
    }
}

/// The differences between a baseline and a new run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Diff {
    /// Cells in both whose word changed.
    pub changed: Vec<Change>,
    /// Keys only in the baseline, of cells the new run asked for (its runtimes and selection):
    /// gone from it.
    pub missing: Vec<String>,
    /// Baseline cells the new run did not ask for (runtimes, variants, scenarios or target
    /// states it did not select): not compared.
    pub not_asked: usize,
    /// Keys only in the new run.
    pub added: Vec<String>,
    /// Natural races whose verdict changed within noise (not counted as a difference).
    pub within_noise: Vec<Noise>,
    /// Race cells of the new run whose detection control was not caught (their `exclusive`
    /// verdicts are `inconclusive`); listed, not counted: a weak race measured nothing.
    pub weak: Vec<String>,
    /// Hand-off cells whose rate-counted answer flipped between `yes` and `no`
    /// ([`answer_flip`]): listed with Fisher's p of their failure counts, not counted (their
    /// counts are rates that move from run to run); `diff` calls the significant ones a
    /// change. Their keys are in [`Diff::same`] too.
    pub rates: Vec<Noise>,
    /// Cells compared.
    pub compared: usize,
    /// Keys of the compared cells that did not change (neither in `changed` nor in
    /// `within_noise`), with their word in the new run, in key order.
    pub same: Vec<(String, String)>,
}

impl Diff {
    /// True when an outcome or verdict changed, when a cell the new run asked for is missing
    /// from it, or when no cell was compared (an empty comparison checks nothing). New cells
    /// and baseline cells the new run did not ask for do not count.
    pub fn differs(&self) -> bool {
        !self.changed.is_empty() || !self.missing.is_empty() || self.compared == 0
    }

    /// A human report, one line per difference, then a count line. Control characters in
    /// labels and keys (from the files compared) are escaped.
    pub fn render(&self) -> String {
        let e = crate::report::table::escape_controls;
        let mut s = String::new();
        for c in &self.changed {
            let (b, a) = (&c.before, &c.after);
            let _ = writeln!(s, "changed  {}: {} ({}) -> {} ({})", e(&c.key), e(&b.0), e(&b.1), e(&a.0), e(&a.1));
        }
        for k in &self.missing {
            let _ = writeln!(s, "missing  {}", e(k));
        }
        for k in &self.added {
            let _ = writeln!(s, "new      {}", e(k));
        }
        // a change that is not counted: both words, and why not
        let uncounted = |s: &mut String, tag: &str, n: &Noise, why: String| {
            let _ = writeln!(s, "{tag} {}: {} -> {} ({why})", e(&n.key), e(&n.before), e(&n.after));
        };
        for n in &self.within_noise {
            uncounted(&mut s, "noise   ", n, format!("natural race only; Fisher p = {:.3}", n.p));
        }
        for w in &self.weak {
            let _ = writeln!(s, "weak     {}", e(w));
        }
        for n in &self.rates {
            uncounted(&mut s, "rate    ", n, n.rate_reason());
        }
        let _ = writeln!(
            s,
            "compared {} cells: {} changed, {} missing, {} new, {} within noise, {} weak; {} not asked for by the new run{}",
            self.compared,
            self.changed.len(),
            self.missing.len(),
            self.added.len(),
            self.within_noise.len(),
            self.weak.len(),
            self.not_asked,
            match self.rates.len() {
                0 => String::new(),
                n => format!("; {n} hand-off answer(s) flipped by their rates, not counted (above)"),
            }
        );
        if self.compared == 0 {
            let _ = writeln!(s, "nothing compared: the runs share no cell");
        }
        s
    }
}

/// Compares `new` against `base`. Only what the new run asked for is compared
/// (`Asked`): baseline cells of runtimes, variants, scenarios and target states the new run
/// did not select are left out (counted in [`Diff::not_asked`]), and so are the race cells of
/// the rows a `--races core` run did not race; a baseline cell the new run asked for but does
/// not hold is missing, and fails the comparison.
pub fn compare(base: &Results, new: &Results) -> Diff {
    compare_ignoring(base, new, &[])
}

/// [`compare`], leaving out the second-comer facts in `ignore` (`--ignore`).
pub fn compare_ignoring(base: &Results, new: &Results, ignore: &[Fact]) -> Diff {
    let m = Matched::of(base, new);
    let (b, n) = (&m.base, &m.new);
    let rows = Rows::of(base, new);
    let asked = Asked::of(new, &rows);
    let mut d = Diff::default();
    for (k, bc) in b {
        match n.get(k) {
            Some(nc) => {
                d.compared += 1;
                match judge(bc, nc, ignore) {
                    Judged::Same => {
                        // a rate-counted recipe's flipped answer is not counted, but said
                        if let Some((before, after, p)) = answer_flip(bc, nc) {
                            d.rates.push(Noise { key: k.clone(), before, after, p });
                        }
                        d.same.push((k.clone(), nc.word().to_string()))
                    }
                    Judged::Changed(before, after) => d.changed.push(Change {
                        key: k.clone(),
                        before: (before, bc.runtime.clone()),
                        after: (after, nc.runtime.clone()),
                    }),
                    Judged::Noise(before, after, p) => d.within_noise.push(Noise { key: k.clone(), before, after, p }),
                }
            }
            None if asked.includes(bc) => d.missing.push(k.clone()),
            None => d.not_asked += 1,
        }
    }
    d.added = n.keys().filter(|k| !b.contains_key(*k)).cloned().collect();
    compare_pairs(base, new, ignore, &mut d);
    d.weak = n.iter().filter_map(|(k, c)| c.race()?.weak_race.as_ref().map(|w| format!("{k}: {w}"))).collect();
    d
}

/// The key of a race of two rows against each other: `against/<side>|<side>`, each side
/// `adapter/variant[/source=kind]`, in sorted order (the pair's slot order may differ between
/// runs).
pub fn pair_key(a: &crate::report::model::AgainstRace) -> String {
    pair_key_by(a, |s| s.runtime_name.clone())
}

/// [`pair_key`] with each side's row named by `row` (see [`Rows`]).
fn pair_key_by(a: &crate::report::model::AgainstRace, row: impl Fn(&AgainstSide) -> String) -> String {
    let mut sides: Vec<String> = a
        .contenders
        .iter()
        .map(|s| match s.source {
            Some(k) => format!("{}/{}/source={}", row(s), s.variant, k.as_str()),
            None => format!("{}/{}", row(s), s.variant),
        })
        .collect();
    sides.sort();
    format!("against/{}", sides.join("|"))
}

/// The row of `side`, a contender of a pair of run `r`, as [`Rows::row`] names it (its version
/// from the run's runtimes, by label).
fn side_row(rows: &Rows, r: &Results, side: &AgainstSide) -> String {
    let version = r.run_info.runtimes.iter().find(|i| i.label == side.runtime).map_or("", |i| i.version.as_str());
    rows.row(&side.runtime_name, version, &side.runtime)
}

/// Compares the races of rows against each other (`run --against`) that both runs hold, by
/// [`pair_key`] (sides told apart as [`Rows`] says), as race cells are; a pair only in the
/// baseline is missing where the new run raced every pair (`--against all`) and holds both its
/// rows, and not asked for otherwise (`cover` picks pairs from what held, which may differ).
fn compare_pairs(base: &Results, new: &Results, ignore: &[Fact], d: &mut Diff) {
    let rows = Rows::of(base, new);
    fn by_key<'r>(rows: &Rows, r: &'r Results) -> BTreeMap<String, &'r crate::report::model::AgainstRace> {
        r.against.iter().map(|a| (pair_key_by(a, |s| side_row(rows, r, s)), a)).collect()
    }
    let (b, n) = (by_key(&rows, base), by_key(&rows, new));
    let mut several = base.kinds_with_several_rows();
    several.extend(new.kinds_with_several_rows());
    let sides = |a: &crate::report::model::AgainstRace| -> Vec<String> {
        a.contenders.iter().map(|s| s.label_among(&several)).collect()
    };
    let label = |a: &crate::report::model::AgainstRace| sides(a).join(" vs ");
    let all = new.run_info.against == Some(crate::against::AgainstScope::All);
    let new_rows: BTreeSet<String> =
        new.cells.iter().map(|c| rows.row(&c.runtime_name, &c.runtime_version, &c.runtime)).collect();
    for (k, bp) in &b {
        match n.get(k) {
            Some(np) => {
                d.compared += 1;
                let judged = match judge_race(&bp.race, &np.race) {
                    Judged::Same if !ignore.contains(&Fact::Fault) => judge_fault(bp, np, &sides),
                    j => j,
                };
                match judged {
                    Judged::Same => d.same.push((k.clone(), np.race.verdict.as_str().to_string())),
                    Judged::Changed(before, after) => d.changed.push(Change {
                        key: k.clone(),
                        before: (before, label(bp)),
                        after: (after, label(np)),
                    }),
                    Judged::Noise(before, after, p) => d.within_noise.push(Noise { key: k.clone(), before, after, p }),
                }
            }
            None if all && bp.contenders.iter().all(|s| new_rows.contains(&side_row(&rows, base, s))) => {
                d.missing.push(k.clone())
            }
            None => d.not_asked += 1,
        }
    }
    d.added.extend(n.keys().filter(|k| !b.contains_key(*k)).cloned());
    d.weak.extend(n.iter().filter_map(|(k, a)| a.race.weak_race.as_ref().map(|w| format!("{k}: {w}"))));
}

/// Whose doing pair `a`'s failure was, per side ([`crate::verdict::answer::at_fault`]), where every
/// failed run of it counted that per slot; `None` where no run failed or one did not count it
/// (a file written before the counts).
fn fault_of(a: &crate::report::model::AgainstRace) -> Option<[bool; 2]> {
    let runs = a.race.run_stats();
    let failed: Vec<&&crate::verdict::RaceStats> = runs.iter().filter(|r| r.failed()).collect();
    let counted = failed.iter().all(|r| r.failures_by_contender.len() == crate::against::PAIR_SLOTS.len());
    (!failed.is_empty() && counted).then(|| crate::verdict::answer::at_fault(&runs))
}

/// Two runs of one pair whose verdicts agree, judged by whose doing the failure was
/// ([`Fact::Fault`]): changed where both runs tell and they differ (`multiple-winners (node
/// node.existsSync+renameSync's doing)` → `(both calls' doing)`), the same otherwise. `sides`
/// names a pair's two sides.
fn judge_fault(
    b: &crate::report::model::AgainstRace,
    n: &crate::report::model::AgainstRace,
    sides: &dyn Fn(&crate::report::model::AgainstRace) -> Vec<String>,
) -> Judged {
    let (Some(bf), Some(nf)) = (fault_of(b), fault_of(n)) else { return Judged::Same };
    if bf == nf {
        return Judged::Same;
    }
    let words = |a: &crate::report::model::AgainstRace, f: [bool; 2]| {
        let names = sides(a);
        let whose = match f {
            [true, false] => format!("{}'s doing", names.first().map_or("", String::as_str)),
            [false, true] => format!("{}'s doing", names.get(1).map_or("", String::as_str)),
            _ => "both calls' doing".to_string(),
        };
        format!("{} ({whose})", a.race.verdict.as_str())
    };
    Judged::Changed(words(b, bf), words(n, nf))
}

/// What a run asked for, as its file records it: the runtimes of its `run_info` (selected,
/// found or not) and of its cells, and its [`crate::report::model::Selection`]. A file
/// without a selection (older files, merged files) is judged by its cells: a runtime it
/// selected but holds no cell of asked for everything; one it holds cells of asked for the
/// (variant, scenario) pairs it holds of that runtime, at the (scenario, target) pairs the
/// file holds.
struct Asked<'a> {
    /// The rows as [`Rows::row`] names them.
    rows: &'a Rows,
    runtimes: BTreeSet<String>,
    selection: Option<&'a crate::report::model::Selection>,
    measured: BTreeSet<String>,
    groups: BTreeSet<(String, &'a str, crate::report::Scenario)>,
    targets: BTreeSet<(crate::report::Scenario, crate::report::model::TargetState)>,
    /// In a `--races core` or `auto` run, the rows that were raced (runtime, variant, source
    /// kind): the others' race cells were not asked for (not the plain form, or a second comer
    /// had already settled the row).
    raced_only: Option<BTreeSet<(String, &'a str, Option<crate::matrix::SourceKind>)>>,
    /// The contender kinds of the run's cells: a thread run did not ask for process cells.
    kinds: BTreeSet<crate::domain::ContenderKind>,
}

impl<'a> Asked<'a> {
    fn of(r: &'a Results, rows: &'a Rows) -> Asked<'a> {
        let row = |c: &Cell| rows.row(&c.runtime_name, &c.runtime_version, &c.runtime);
        let measured: BTreeSet<String> = r.cells.iter().map(row).collect();
        let mut runtimes: BTreeSet<String> =
            r.run_info.runtimes.iter().map(|i| rows.row(&i.name, &i.version, &i.label)).collect();
        runtimes.extend(measured.iter().cloned());
        Asked {
            rows,
            runtimes,
            selection: r.run_info.selection.as_ref(),
            measured,
            groups: r.cells.iter().map(|c| (row(c), c.variant.as_str(), c.scenario)).collect(),
            targets: r.cells.iter().map(|c| (c.scenario, c.target)).collect(),
            kinds: r.cells.iter().map(|c| c.contenders).collect(),
            raced_only: matches!(
                r.run_info.races,
                Some(crate::domain::RaceScope::Core | crate::domain::RaceScope::Auto)
            )
            .then(|| {
                r.cells
                    .iter()
                    .filter(|c| c.scenario == crate::report::Scenario::Race)
                    .map(|c| (row(c), c.variant.as_str(), c.source))
                    .collect()
            }),
        }
    }

    /// Whether the run asked for cell `c` (of another run).
    fn includes(&self, c: &Cell) -> bool {
        let rt = self.rows.row(&c.runtime_name, &c.runtime_version, &c.runtime);
        if !self.kinds.is_empty() && !self.kinds.contains(&c.contenders) {
            return false;
        }
        if let (Some(raced), crate::report::Scenario::Race) = (&self.raced_only, c.scenario) {
            if !raced.contains(&(rt.clone(), c.variant.as_str(), c.source)) {
                return false;
            }
        }
        self.runtimes.contains(&rt)
            && match self.selection {
                Some(s) => s.includes(&c.variant, c.source, c.scenario, c.target),
                None if !self.measured.contains(&rt) => true,
                None => {
                    self.groups.contains(&(rt, c.variant.as_str(), c.scenario))
                        && self.targets.contains(&(c.scenario, c.target))
                }
            }
    }
}

/// The cells of two runs by the key [`compare`] matches them on.
#[derive(Debug)]
pub struct Matched<'a> {
    /// The baseline's cells by key.
    pub base: BTreeMap<String, &'a Cell>,
    /// The new run's cells by key.
    pub new: BTreeMap<String, &'a Cell>,
}

impl<'a> Matched<'a> {
    /// Indexes both runs' cells by [`Cell::key`] (runtime name, variant, scenario, target),
    /// except for runtime kinds that have two rows in one run: those are keyed by
    /// [`Rows::row`] so that they do not collapse into one.
    pub fn of(base: &'a Results, new: &'a Results) -> Matched<'a> {
        let rows = Rows::of(base, new);
        let key = |c: &Cell| {
            Cell::id_of(
                &rows.row(&c.runtime_name, &c.runtime_version, &c.runtime),
                &c.variant,
                c.scenario,
                c.target,
                c.source,
                c.contenders,
            )
        };
        let index = |r: &'a Results| -> BTreeMap<String, &'a Cell> { r.cells.iter().map(|c| (key(c), c)).collect() };
        Matched { base: index(base), new: index(new) }
    }
}

/// How the rows of two runs are told apart when matching them. A runtime kind with one row in
/// each run is that kind (`coreclr`), whatever its version, so a new version is compared with
/// the old. A kind with two rows in one run (the baseline's `coreclr` 10 beside
/// `coreclr@8.0.34` and `coreclr@9.0.23`) is told apart by major version (`coreclr@8`), so a
/// patch release still meets its row; where two rows share a major version too
/// (`-r node,node=/opt/node20/bin/node`), by row label.
#[derive(Debug, Default)]
pub struct Rows {
    by_major: BTreeSet<String>,
    by_label: BTreeSet<String>,
}

impl Rows {
    /// The kinds of `base` and `new` that need more than their name, from their cells.
    pub fn of(base: &Results, new: &Results) -> Rows {
        let mut rows = Rows::default();
        for r in [base, new] {
            let mut labels: BTreeMap<&str, BTreeSet<(&str, &str)>> = BTreeMap::new();
            for c in &r.cells {
                labels.entry(&c.runtime_name).or_default().insert((&c.runtime, &c.runtime_version));
            }
            for (name, rows_of) in labels.into_iter().filter(|(_, l)| l.len() > 1) {
                rows.by_major.insert(name.to_string());
                let majors: BTreeSet<&str> = rows_of.iter().map(|(_, v)| major(v)).collect();
                if majors.len() < rows_of.len() {
                    rows.by_label.insert(name.to_string());
                }
            }
        }
        rows
    }

    /// The row a cell or runtime belongs to: its kind `name`, `name@MAJOR` (the `version`'s
    /// text before its first dot) or its `label`, as [`Rows`] says.
    pub fn row(&self, name: &str, version: &str, label: &str) -> String {
        if self.by_label.contains(name) {
            label.to_string()
        } else if self.by_major.contains(name) {
            format!("{name}@{}", major(version))
        } else {
            name.to_string()
        }
    }
}

/// A version's major part: its text before the first dot (`8` of `8.0.34`), all of it where
/// it has no dot.
fn major(version: &str) -> &str {
    version.split('.').next().unwrap_or(version)
}

/// A fact of a second-comer cell that the tables show besides its outcome
/// ([`crate::report::table::second_text`]); comparisons check each one unless told to ignore
/// it (`--ignore`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fact {
    /// The normalised error code of a `refused`, `failed` or `damaged` call (`EEXIST`).
    ErrorCode,
    /// How a failure reached the caller (`throw`, `rejected`, `callback`, `error-event`),
    /// where the matrix shows it (`show = ["delivery"]`).
    Delivery,
    /// The value the call returned (`returned target`), where the matrix shows it.
    Returned,
    /// Whose doing a failed race of two rows against each other was (`— X's doing` in the
    /// pairs' lines; [`crate::verdict::answer::at_fault`]), where both runs counted it per slot.
    Fault,
}

impl Fact {
    /// Every fact, in the order they are checked.
    pub const ALL: [Fact; 4] = [Fact::ErrorCode, Fact::Delivery, Fact::Returned, Fact::Fault];

    /// `error code`, `delivery`, `returned value`, `fault`.
    pub fn words(self) -> &'static str {
        match self {
            Fact::ErrorCode => "error code",
            Fact::Delivery => "delivery",
            Fact::Returned => "returned value",
            Fact::Fault => "fault",
        }
    }

    /// The fact as cell `c` shows it; `None` where the tables do not show it for `c` (another
    /// outcome, a matrix that does not ask for it, a file written before it was recorded).
    fn of(self, c: &Cell) -> Option<String> {
        use crate::matrix::Fact as Show;
        let s = c.second()?;
        match self {
            Fact::ErrorCode => matches!(s.outcome, Outcome::Refused | Outcome::Failed | Outcome::Damaged)
                .then(|| s.error.as_ref().map_or_else(|| "no error".to_string(), |e| e.code.clone())),
            Fact::Delivery => c.show.contains(&Show::Delivery).then(|| s.delivery.clone().unwrap_or_default()),
            Fact::Returned => c.show.contains(&Show::Returned).then(|| s.returned.clone().unwrap_or_default()),
            // a pair's fact, not a cell's (compare_pairs)
            Fact::Fault => None,
        }
    }
}

/// What differs between two second comers matched by key: `Some(None)` when the outcome or
/// the relative-path repeat's outcome does (the repeat counts where both runs made it: a run
/// without it, `--no-relative`, measured less, it did not change), `Some(Some(fact))` for the
/// first other fact both cells show that differs and `ignore` does not list, `None` when
/// nothing does.
pub fn second_change(b: &Cell, n: &Cell, ignore: &[Fact]) -> Option<Option<Fact>> {
    let rel = |c: &Cell| c.second().and_then(|s| s.relative.as_ref()).map(|r| r.outcome);
    let both = rel(b).is_some() && rel(n).is_some();
    if b.word() != n.word() || (both && rel(b) != rel(n)) {
        return Some(None);
    }
    let shown = Fact::ALL
        .into_iter()
        .filter(|f| !ignore.contains(f))
        .find(|f| matches!((f.of(b), f.of(n)), (Some(x), Some(y)) if x != y));
    // the relative repeat's error code, where both runs made the repeat: the tables show it
    // only where it differs from the call's, but it is a fact of the cell all the same
    let rel_code =
        |c: &Cell| c.second().and_then(|s| s.relative.as_ref()).and_then(|r| r.error.as_ref()).map(|e| e.code.clone());
    let rel_changed = both && !ignore.contains(&Fact::ErrorCode) && rel_code(b) != rel_code(n);
    shown.or(rel_changed.then_some(Fact::ErrorCode)).map(Some)
}

/// Compares two second-comer (or counters) cells ([`second_change`]), worded as the tables
/// word them.
fn judge_second(b: &Cell, n: &Cell, ignore: &[Fact]) -> Judged {
    let rel = |c: &Cell| c.second().and_then(|s| s.relative.as_ref()).map(|r| r.outcome);
    // as in the tables: the relative outcome is shown where it differs from the absolute one
    let word = |c: &Cell| match (c.outcome(), rel(c)) {
        (Some(o), Some(r)) if o != r => format!("{} (rel: {})", c.word(), r.as_str()),
        _ => c.word().to_string(),
    };
    match second_change(b, n, ignore) {
        None => Judged::Same,
        Some(None) => Judged::Changed(word(b), word(n)),
        Some(Some(f)) => Judged::Changed(
            format!("{} ({})", crate::report::table::second_text(b), f.words()),
            crate::report::table::second_text(n),
        ),
    }
}

enum Judged {
    Same,
    Changed(String, String),
    Noise(String, String, f64),
}

/// The state of a hand-off cell: `harness-error`, `unsupported` (no counters, its evidence
/// `unsupported: …`), `faulted` (no counters: a probe crashed or hung before the first item,
/// its evidence says how) or `measured`; `""` for other cells.
fn counters_state(c: &Cell) -> &'static str {
    match &c.result {
        CellResult::Counters(r) if r.harness_error => "harness-error",
        CellResult::Counters(_) if c.is_unsupported_handoff() => "unsupported",
        // stopped before its first item by a crash or a hang: its evidence says which
        CellResult::Counters(r) if r.counters.is_empty() => "faulted",
        CellResult::Counters(_) => "measured",
        _ => "",
    }
}

/// Compares the answers of two measured hand-off cells. In a laid-out scenario
/// ([`crate::report::handoff::Words::laid_out`]: holder, os-lock, watch), whose recipe does the
/// same every time, a changed answer is a change, however few the trials. Elsewhere the
/// counts are rates (a recipe that fails once in 40 trials says `yes` in one run and `no` in
/// the next): `compare` leaves them to `diff`, which calls an answer between `yes` and `no` a
/// change where the failures differ significantly ([`answer_flip`]) and lists counts that
/// moved under the same answer apart ([`crate::diff::counters_differ`]).
fn judge_handoff(b: &Cell, n: &Cell) -> Judged {
    if crate::report::handoff::words(b.scenario).is_some_and(|w| w.laid_out) {
        return match answer_change(b, n) {
            Some((before, after)) => Judged::Changed(before, after),
            None => Judged::Same,
        };
    }
    // a rate-counted recipe's answer is left to `diff`, which tests it ([`answer_flip`]): a
    // regression gate must not fail on a rate that comes and goes (CoreCLR 10's
    // publish.temp-rename-cross-volume tore 0/5,409 reads in the baseline, 354/7,228 in a CI run)
    Judged::Same
}

/// Two hand-off cells whose recipe answers are `yes` in one and `no` in the other: both
/// answers as the lists show them (`no (double ownership 4/35 trials (nat))`) and Fisher's
/// exact two-tailed p of the failure that differs most — each failure counter of the scenario
/// over its trials, natural and amplified runs pooled ([`crate::report::handoff::Words`]).
/// `None` for any other pair (the same answer, an undetermined one, not a hand-off's).
pub fn answer_flip(a: &Cell, b: &Cell) -> Option<(String, String, f64)> {
    use crate::verdict::answer::AnswerVerdict::{No, Yes};
    let (x, y) = (crate::report::answers::cell_recipe_answer(a)?, crate::report::answers::cell_recipe_answer(b)?);
    if !matches!((x.verdict, y.verdict), (Yes, No) | (No, Yes)) {
        return None;
    }
    let (ra, words) = crate::report::answers::cell_recipe_runs(a)?;
    let (rb, _) = crate::report::answers::cell_recipe_runs(b)?;
    let pooled = |runs: &[crate::verdict::recipe::RecipeRun<'_>], k: &str| -> usize {
        runs.iter().map(|r| r.counters.get(k).copied().unwrap_or(0) as usize).sum()
    };
    let p = words
        .failures
        .iter()
        .map(|&(fail, of)| {
            let (fa, fb) = (pooled(&ra, fail), pooled(&rb, fail));
            crate::stats::fisher_p(fa, pooled(&ra, of).max(fa), fb, pooled(&rb, of).max(fb))
        })
        .fold(1.0, f64::min);
    Some((answer_words(&x), answer_words(&y), p))
}

/// The answers of hand-off cells `b` then `n` as `yes (none in 70 trials)` and `no (double
/// ownership 4/35 trials (nat))` when their verdicts differ; `None` otherwise, and for cells
/// that are not a hand-off's.
pub fn answer_change(b: &Cell, n: &Cell) -> Option<(String, String)> {
    use crate::report::answers::cell_recipe_answer;
    let (x, y) = (cell_recipe_answer(b)?, cell_recipe_answer(n)?);
    (x.verdict != y.verdict).then(|| (answer_words(&x), answer_words(&y)))
}

/// A recipe answer as `compare` and `diff` show it: `no (double ownership 4/35 trials (nat))`.
pub fn answer_words(a: &crate::verdict::recipe::RecipeAnswer) -> String {
    format!("{} ({})", a.verdict.as_str(), crate::report::answers::recipe_text(a))
}

/// Compares one cell of both runs (see the module documentation).
fn judge(b: &Cell, n: &Cell, ignore: &[Fact]) -> Judged {
    match (b.race(), n.race()) {
        (Some(x), Some(y)) => judge_race(x, y),
        _ if b.result.kind() != n.result.kind() => {
            Judged::Changed(b.result.kind().to_string(), n.result.kind().to_string())
        }
        _ if matches!(b.result, CellResult::Counters(_)) => {
            let (bs, ns) = (counters_state(b), counters_state(n));
            if bs != ns {
                return Judged::Changed(bs.into(), ns.into());
            }
            judge_handoff(b, n)
        }
        _ => judge_second(b, n, ignore),
    }
}

/// Compares two race results (a race cell's, or a pair's against each other): amplified
/// verdicts where both have one, natural ones by Fisher's exact test otherwise (see the module
/// documentation).
fn judge_race(b_race: &crate::report::model::RaceResult, n_race: &crate::report::model::RaceResult) -> Judged {
    use crate::verdict::RaceVerdict::{Exclusive, MultipleWinners};
    // a new race whose detection control was not caught measured nothing: finding no failure
    // there is no evidence that one went away (it is listed as `weak`, not compared); pwsh's
    // natural races found New-Item's two winners 5/10 on a quiet machine and none in 30 with
    // both cores busy, its control caught 0/25
    if n_race.weak_race.is_some() && !crate::verdict::is_disproof(n_race.verdict) {
        return Judged::Same;
    }
    let word = |m: Option<&crate::report::model::ModeRun>, r: &crate::report::model::RaceResult| {
        m.map_or(r.verdict, |m| m.verdict).as_str().to_string()
    };
    if let (Some(ba), Some(na)) = (&b_race.amplified, &n_race.amplified) {
        if ba.verdict != na.verdict {
            return Judged::Changed(
                format!("{} (amplified)", word(Some(ba), b_race)),
                format!("{} (amplified)", word(Some(na), n_race)),
            );
        }
        // The amplified verdicts agree. A natural rate depends on how busy the machine was, so
        // it matters only where it changed the cell's verdict (a failure seen only in the
        // natural race decides a cell): then the natural races are compared below, with the
        // significance rule; otherwise the cell is the same.
        if b_race.verdict == n_race.verdict {
            return Judged::Same;
        }
    }
    // a cell whose amplified race one run skipped (its natural check failed first, issue 13)
    // has no amplified verdict to compare: where both cells failed, the finding is the same
    let skipped = |r: &crate::report::model::RaceResult| {
        r.amplified.is_none() && r.amplified_unavailable == Some(crate::domain::NoAmplified::Skipped)
    };
    if (skipped(b_race) || skipped(n_race))
        && crate::verdict::is_disproof(b_race.verdict)
        && crate::verdict::is_disproof(n_race.verdict)
    {
        return Judged::Same;
    }
    let (bn, nn) = (b_race.natural.as_ref(), n_race.natural.as_ref());
    let (bw, nw) = (word(bn, b_race), word(nn, n_race));
    if bw == nw {
        return Judged::Same;
    }
    match (bn, nn) {
        (Some(x), Some(y))
            if matches!((x.verdict, y.verdict), (Exclusive, MultipleWinners) | (MultipleWinners, Exclusive)) =>
        {
            let (xs, ys) = (&x.stats, &y.stats);
            let p = crate::stats::fisher_p(
                xs.multi_winner_trials,
                xs.clean_trials,
                ys.multi_winner_trials,
                ys.clean_trials,
            );
            let before = format!("{bw} {}/{}", xs.multi_winner_trials, xs.trials);
            let after = format!("{nw} {}/{}", ys.multi_winner_trials, ys.trials);
            if p < crate::stats::SIGNIFICANT_P {
                Judged::Changed(format!("{before} (natural, Fisher p = {p:.1e})"), after)
            } else {
                Judged::Noise(before, after, p)
            }
        }
        _ => Judged::Changed(bw, nw),
    }
}

#[cfg(test)]
mod tests {
    use super::{compare, compare_ignoring, pair_key, second_change, Cell, CellResult, Fact, Results};
    use crate::report::model::TargetState;

    fn results() -> Results {
        let text =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/results/base.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn a_hand_off_cell_changes_with_its_state_not_its_counts() {
        use crate::report::model::CountersResult;
        let mut base = results();
        let mut cell = base.cells[0].clone();
        cell.scenario = crate::report::Scenario::Publish;
        cell.variant = "publish.direct".into();
        let counts = |torn: u64| {
            CellResult::Counters(CountersResult {
                counters: [("torn_reads".to_string(), torn), ("reads".to_string(), 1000)].into(),
                ..Default::default()
            })
        };
        cell.result = counts(58);
        base.cells = vec![cell.clone()];
        let mut new = base.clone();
        // natural counts move from run to run: the same cell
        new.cells[0].result = counts(303);
        let d = compare(&base, &new);
        assert!(!d.differs(), "{}", d.render());
        assert_eq!(d.compared, 1);
        // a recipe that the new run could not measure is a change, and so is a harness error:
        // one the probe lacks is `unsupported`, one whose probe crashed before its first item
        // `faulted`
        new.cells[0].result = CellResult::Counters(CountersResult::default());
        new.cells[0].evidence = Some("unsupported: no such recipe".into());
        let d = compare(&base, &new);
        assert_eq!(d.changed.len(), 1, "{}", d.render());
        assert_eq!((d.changed[0].before.0.as_str(), d.changed[0].after.0.as_str()), ("measured", "unsupported"));
        new.cells[0].evidence = Some("crashed: the probe exited before its hello".into());
        assert_eq!(compare(&base, &new).changed[0].after.0, "faulted");
        new.cells[0].result = CellResult::Counters(CountersResult { harness_error: true, ..Default::default() });
        assert_eq!(compare(&base, &new).changed[0].after.0, "harness-error");
    }

    /// A laid-out scenario's recipe does the same every time: with its two trials, a second
    /// holder let in where none got in before is a change (Fisher's test could never say so).
    #[test]
    fn a_laid_out_hand_off_cell_changes_with_its_answer() {
        use crate::report::model::CountersResult;
        let mut base = results();
        let mut cell = base.cells[0].clone();
        cell.scenario = crate::report::Scenario::OsLock;
        cell.variant = "os-lock.flock".into();
        let counts = |second: u64, foreign: u64| {
            CellResult::Counters(CountersResult {
                counters: [
                    ("trials".to_string(), 2),
                    ("locked".to_string(), 2),
                    ("second_lock_through".to_string(), second),
                    ("foreign_write_through".to_string(), foreign),
                ]
                .into(),
                ..Default::default()
            })
        };
        cell.result = counts(0, 2);
        base.cells = vec![cell];
        let mut new = base.clone();
        // what the lock does not stop is shown, not judged: the same answer
        new.cells[0].result = counts(0, 1);
        assert!(!compare(&base, &new).differs());
        new.cells[0].result = counts(2, 2);
        let d = compare(&base, &new);
        assert_eq!(d.changed.len(), 1, "{}", d.render());
        assert!(
            d.changed[0].before.0.starts_with("yes") && d.changed[0].after.0.starts_with("no"),
            "{:?}",
            d.changed[0]
        );
        assert!(!crate::diff::counters_differ(&base.cells[0], &new.cells[0]).is_empty());
    }

    /// A rate-counted recipe (mutex) whose answer flipped is not a regression for `compare` (a
    /// rare failure comes and goes); `diff` shows it where the failures' difference is
    /// significant (Fisher's exact test over both modes' trials), and within noise where not.
    #[test]
    fn a_rate_counted_recipes_flipped_answer_is_left_to_diffs_test() {
        use crate::report::model::CountersResult;
        let mut base = results();
        let mut cell = base.cells[0].clone();
        cell.scenario = crate::report::Scenario::Mutex;
        cell.variant = "mutex.rushstack-lockfile".into();
        let counts = |double: u64| {
            CellResult::Counters(CountersResult {
                counters: [
                    ("trials".to_string(), 35),
                    ("double_ownership".to_string(), double),
                    ("foreign_trials".to_string(), 1),
                    ("released_by_other".to_string(), 0),
                    ("killed_trials".to_string(), 3),
                    ("stuck".to_string(), 0),
                ]
                .into(),
                ..Default::default()
            })
        };
        cell.result = counts(0);
        base.cells = vec![cell];
        let mut few = base.clone();
        few.cells[0].result = counts(4);
        assert!(!compare(&base, &few).differs(), "{}", compare(&base, &few).render());
        assert_eq!(compare(&base, &few).rates.len(), 1);
        assert!(compare(&base, &base).rates.is_empty());
        let r = crate::diff::diff(&few, &base, "a", "b", &Default::default(), &[]);
        assert!(r.groups.is_empty(), "4/35 against 0/35 is within noise: {r:#?}");
        assert_eq!(r.within_noise.len(), 1, "{r:#?}");
        assert!(r.within_noise[0].before.starts_with("no (double ownership 4/35"), "{r:#?}");
        let mut many = base.clone();
        many.cells[0].result = counts(20);
        let d = compare(&base, &many);
        assert!(!d.differs(), "{}", d.render());
        // not counted, but said: both answers and the test's p, on a line of their own
        assert_eq!(d.rates.len(), 1, "{d:?}");
        let text = d.render();
        assert!(
            text.contains("rate     ") && text.contains("yes (") && text.contains("-> no (double ownership 20/35"),
            "{text}"
        );
        assert!(text.contains("1 hand-off answer(s) flipped by their rates, not counted"), "{text}");
        let r = crate::diff::diff(&base, &many, "a", "b", &Default::default(), &[]);
        assert_eq!(r.groups.len(), 1, "{r:#?}");
        let c = &r.groups[0].cells[0];
        assert_eq!(c.what, crate::diff::What::Answer);
        assert!(c.before.starts_with("yes (") && c.after.starts_with("no (double ownership 20/35"), "{c:?}");
    }

    #[test]
    fn identical_runs_do_not_differ() {
        let r = results();
        let d = compare(&r, &r);
        assert!(!d.differs());
        assert_eq!(d.compared, r.cells.len());
    }

    #[test]
    fn narrower_runs_compare_only_what_they_asked_for() {
        use crate::report::model::Selection;
        let base = results();
        // a file without a selection (older files): what its cells hold of any runtime
        let mut new = base.clone();
        new.cells.retain(|c| c.variant == "node.writeFileSync.wx" && c.target != TargetState::Dir);
        let d = compare(&base, &new);
        assert!(d.missing.is_empty(), "{}", d.render());
        assert!(!d.differs(), "a narrower selection is not a regression: {}", d.render());
        assert_eq!(d.not_asked, base.cells.len() - new.cells.len());
        // a run that records its selection (`-v node.writeFileSync.wx --target absent,file,empty-dir`)
        let mut asked = new.clone();
        asked.run_info.selection = Some(Selection {
            variants: vec!["node.writeFileSync.wx".into()],
            scenarios: vec![crate::report::Scenario::SecondComer, crate::report::Scenario::Race],
            targets: vec![TargetState::Absent, TargetState::File, TargetState::EmptyDir],
        });
        assert!(!compare(&base, &asked).differs(), "{}", compare(&base, &asked).render());
        // it asked for the dir target too, and that cell is gone: missing, a difference
        asked.run_info.selection.as_mut().unwrap().targets.push(TargetState::Dir);
        let d = compare(&base, &asked);
        assert_eq!(d.missing, vec!["node/node.writeFileSync.wx/second-comer/dir".to_string()]);
        assert!(d.differs());
        assert!(d.render().contains("missing  node/node.writeFileSync.wx/second-comer/dir"), "{}", d.render());
        new.cells.retain(|c| c.scenario == crate::report::Scenario::Race);
        assert!(!compare(&base, &new).differs());
    }

    #[test]
    fn a_runtime_gone_from_the_new_run_is_missing() {
        let mut base = results();
        let mut other = base.clone();
        for c in &mut other.cells {
            c.runtime_name = "bun".into();
            c.runtime = "bun 1.1.0".into();
            c.id = Cell::id_of(&c.runtime, &c.variant, c.scenario, c.target, c.source, c.contenders);
        }
        let mut bun = base.run_info.runtimes[0].clone();
        bun.name = "bun".into();
        bun.label = "bun 1.1.0".into();
        base.run_info.runtimes.push(bun);
        base.cells.extend(other.cells.clone());
        // the new run asked for both runtimes (its run_info), but bun's cells are gone
        let mut new = base.clone();
        new.cells.retain(|c| c.runtime_name == "node");
        let d = compare(&base, &new);
        assert_eq!(d.missing.len(), other.cells.len(), "{}", d.render());
        assert!(d.differs());
        assert!(d.render().contains(&format!("{} missing", other.cells.len())), "{}", d.render());
        // a run of node alone (`-r node`) did not ask for bun: not a difference
        new.run_info.runtimes.retain(|r| r.name == "node");
        let d = compare(&base, &new);
        assert!(d.missing.is_empty() && !d.differs(), "{}", d.render());
        assert_eq!(d.not_asked, other.cells.len());
    }

    #[test]
    fn an_empty_comparison_is_not_a_pass() {
        let base = results();
        let mut empty = base.clone();
        empty.cells.clear();
        let d = compare(&base, &empty);
        assert_eq!(d.compared, 0);
        assert_eq!(d.missing.len(), base.cells.len(), "its runtimes were asked for");
        assert!(d.differs());
        // nothing asked for and nothing compared: still not a pass
        empty.run_info.runtimes.clear();
        let d = compare(&base, &empty);
        assert!(d.missing.is_empty() && d.differs(), "{}", d.render());
        assert!(d.render().contains("nothing compared"), "{}", d.render());
        assert!(compare(&empty, &base).differs(), "an empty baseline compares nothing");
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
            .find(|c| {
                c.runtime == "node 22.0.0" && c.target == TargetState::File && c.variant == "node.writeFileSync.wx"
            })
            .unwrap();
        c.second_mut().unwrap().outcome = crate::verdict::Outcome::Replaced;
        let d = compare(&both, &regressed);
        assert_eq!(d.compared, both.cells.len());
        assert_eq!(d.changed.len(), 1);
        assert!(d.changed[0].key.starts_with("node 22.0.0/"));
    }

    /// A baseline holding two versions of one kind (`node` 20 and `node@12`) meets a run of the
    /// same majors at other patch releases row by row, and a run of one of them compares that
    /// row only: the other version was not asked for.
    #[test]
    fn two_versions_of_one_kind_meet_their_rows_across_patch_releases() {
        let with_version = |r: &Results, label: &str, version: &str| -> Results {
            let mut r = r.clone();
            for c in &mut r.cells {
                c.runtime = label.into();
                c.runtime_version = version.into();
            }
            for i in &mut r.run_info.runtimes {
                i.label = label.into();
                i.version = version.into();
            }
            r
        };
        let join = |a: &Results, b: &Results| -> Results {
            let mut r = a.clone();
            r.cells.extend(b.cells.clone());
            r.run_info.runtimes.extend(b.run_info.runtimes.clone());
            r
        };
        let one = results();
        let (n20, n12) =
            (with_version(&one, "node 20.20.2", "20.20.2"), with_version(&one, "node 12.22.12", "12.22.12"));
        let base = join(&n20, &n12);
        let later =
            join(&with_version(&one, "node 20.21.0", "20.21.0"), &with_version(&one, "node 12.22.13", "12.22.13"));
        let d = compare(&base, &later);
        assert_eq!(d.compared, base.cells.len(), "{}", d.render());
        assert!(!d.differs(), "{}", d.render());
        // a regression in one version is that version's row
        let mut regressed = later.clone();
        let c = regressed
            .cells
            .iter_mut()
            .find(|c| {
                c.runtime_version == "12.22.13" && c.target == TargetState::File && c.variant == "node.writeFileSync.wx"
            })
            .unwrap();
        c.second_mut().unwrap().outcome = crate::verdict::Outcome::Replaced;
        let d = compare(&base, &regressed);
        assert_eq!(d.changed.len(), 1, "{}", d.render());
        assert!(d.changed[0].key.starts_with("node@12/"), "{}", d.changed[0].key);
        // a default run of node 20 alone: node 12's rows were not asked for
        let alone = with_version(&one, "node 20.21.0", "20.21.0");
        let d = compare(&base, &alone);
        assert_eq!(d.compared, one.cells.len(), "{}", d.render());
        assert!(d.missing.is_empty() && !d.differs(), "{}", d.render());
        assert_eq!(d.not_asked, one.cells.len());
    }

    #[test]
    fn a_changed_word_is_a_difference() {
        let base = results();
        let mut new = base.clone();
        let c = new
            .cells
            .iter_mut()
            .find(|c| c.target == TargetState::File && c.variant == "node.writeFileSync.wx")
            .unwrap();
        c.second_mut().unwrap().outcome = crate::verdict::Outcome::Replaced;
        let d = compare(&base, &new);
        assert_eq!(d.changed.len(), 1);
        assert_eq!(d.changed[0].before.0, "refused");
    }

    /// Every fact the tables show is compared (issue 23: Deno 2.0.0 returned `undefined` where
    /// 2.9.6 returns the target; Bun 1.1.44 threw EEXIST where 1.4.5 emits an error event),
    /// unless ignored; a fact a matrix does not show is not compared.
    #[test]
    fn error_codes_deliveries_and_returned_values_are_compared_unless_ignored() {
        use crate::matrix::Fact as Show;
        let base = results();
        let pick = |r: &mut Results| -> usize {
            r.cells.iter().position(|c| c.target == TargetState::File && c.variant == "node.writeFileSync.wx").unwrap()
        };
        let (mut b, mut n) = (base.clone(), base.clone());
        let (i, j) = (pick(&mut b), pick(&mut n));
        for (r, k, code, delivery, returned) in
            [(&mut b, i, "EEXIST", "throw", "undefined"), (&mut n, j, "EPERM", "error-event", "target")]
        {
            let c = &mut r.cells[k];
            c.show = vec![Show::Delivery, Show::Returned];
            let s = c.second_mut().unwrap();
            s.error.as_mut().unwrap().code = code.into();
            s.delivery = Some(delivery.into());
            s.returned = Some(returned.into());
        }
        let d = compare(&b, &n);
        assert_eq!(d.changed.len(), 1);
        assert!(d.changed[0].before.0.ends_with("(error code)"), "{:?}", d.changed[0]);
        assert_eq!(second_change(&b.cells[i], &n.cells[j], &[]), Some(Some(Fact::ErrorCode)));
        assert_eq!(second_change(&b.cells[i], &n.cells[j], &[Fact::ErrorCode]), Some(Some(Fact::Delivery)));
        let no_code_or_delivery = [Fact::ErrorCode, Fact::Delivery];
        assert_eq!(second_change(&b.cells[i], &n.cells[j], &no_code_or_delivery), Some(Some(Fact::Returned)));
        assert!(compare_ignoring(&b, &n, &Fact::ALL).changed.is_empty(), "everything but the outcome ignored");
        // a matrix that does not show delivery and returned value: only the code counts
        n.cells[j].show.clear();
        assert!(compare_ignoring(&b, &n, &[Fact::ErrorCode]).changed.is_empty());
    }

    /// A race of two rows against each other whose verdict changed fails the comparison, as a
    /// race cell does (the answer rests on it); pairs only in one run are new or not asked for.
    #[test]
    fn a_pair_whose_verdict_changed_is_a_difference() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/linux/results.json");
        let base = crate::report::json::read(&path).unwrap();
        assert!(!base.against.is_empty(), "the baseline races pairs");
        let same = compare(&base, &base);
        assert!(same.changed.is_empty() && same.same.iter().any(|(k, _)| k.starts_with("against/")));
        let mut new = base.clone();
        let i = new.against.iter().position(|a| a.race.amplified.is_some()).expect("a pair raced amplified");
        use crate::verdict::RaceVerdict;
        let flip = |v| if v == RaceVerdict::Exclusive { RaceVerdict::MultipleWinners } else { RaceVerdict::Exclusive };
        let amp = new.against[i].race.amplified.as_mut().unwrap();
        amp.verdict = flip(amp.verdict);
        let d = compare(&base, &new);
        assert_eq!(d.changed.len(), 1, "{:?}", d.changed);
        assert_eq!(d.changed[0].key, pair_key(&base.against[i]));
        assert!(d.changed[0].before.1.contains(" vs "), "{:?}", d.changed[0]);
        // a pair the new run did not race: not asked for (`cover` picks pairs from what held)
        let mut fewer = base.clone();
        fewer.against.remove(i);
        fewer.run_info.against = Some(crate::against::AgainstScope::Cover);
        let d = compare(&base, &fewer);
        assert!(d.changed.is_empty() && d.missing.is_empty() && d.not_asked >= 1);
        fewer.run_info.against = Some(crate::against::AgainstScope::All);
        assert_eq!(compare(&base, &fewer).missing, vec![pair_key(&base.against[i])]);
    }

    /// A failed pair whose failure changed hands (the other call's doing in one run, both
    /// calls' in the next) is a difference unless `fault` is ignored; a file without the
    /// per-slot counts (one written before them) compares verdicts only.
    #[test]
    fn a_pair_whose_failure_changed_hands_is_a_difference_unless_ignored() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/linux/results.json");
        let mut base = crate::report::json::read(&path).unwrap();
        let i = base
            .against
            .iter()
            .position(|a| a.race.natural.as_ref().is_some_and(|m| m.stats.multi_winner_trials > 0))
            .expect("a pair that failed natural");
        let raced = base.against[i].race.clone();
        let counts = |by: &[usize]| {
            let mut r = raced.clone();
            for m in r.natural.iter_mut().chain(r.amplified.iter_mut()) {
                let failed = m.stats.failed();
                m.stats.failures_by_contender = if failed { by.to_vec() } else { Vec::new() };
            }
            r
        };
        base.against[i].race = counts(&[]);
        let mut new = base.clone();
        new.against[i].race = counts(&[1, 1, 0]);
        assert!(compare(&base, &new).changed.is_empty(), "a file from before the counts: verdicts only");
        base.against[i].race = counts(&[0, 2, 0]);
        let d = compare(&base, &new);
        assert_eq!(d.changed.len(), 1, "{:?}", d.changed);
        assert!(d.changed[0].before.0.ends_with("'s doing)"), "{:?}", d.changed[0]);
        assert!(d.changed[0].after.0.ends_with("(both calls' doing)"), "{:?}", d.changed[0]);
        assert!(compare_ignoring(&base, &new, &[Fact::Fault]).changed.is_empty());
        new.against[i].race = counts(&[0, 3, 0]);
        assert!(compare(&base, &new).changed.is_empty(), "same hands, other counts");
    }

    #[test]
    fn a_changed_relative_outcome_is_a_difference() {
        let base = results();
        let mut new = base.clone();
        let c = new
            .cells
            .iter_mut()
            .find(|c| c.target == TargetState::File && c.variant == "node.writeFileSync.wx")
            .unwrap();
        c.second_mut().unwrap().relative.as_mut().unwrap().outcome = crate::verdict::Outcome::Replaced;
        let d = compare(&base, &new);
        assert!(d.differs(), "{}", d.render());
        assert_eq!(d.changed.len(), 1);
        assert_eq!(d.changed[0].before.0, "refused");
        assert_eq!(d.changed[0].after.0, "refused (rel: replaced)");
        // labels from the files are shown escaped
        let mut hostile = new.clone();
        for c in &mut hostile.cells {
            c.runtime = "node \u{1b}[2J".into();
        }
        let text = compare(&base, &hostile).render();
        assert!(text.contains("(node \\u{1b}[2J)") && !text.contains('\u{1b}'), "{text}");
        // a run without the relative repeat (--no-relative) measured less; it did not change
        let mut narrower = base.clone();
        for s in narrower.cells.iter_mut().filter_map(Cell::second_mut) {
            s.relative = None;
        }
        assert!(!compare(&base, &narrower).differs());
        assert!(!compare(&narrower, &base).differs());
    }

    fn race_cell<'a>(r: &'a mut Results, variant: &str) -> &'a mut Cell {
        r.cells.iter_mut().find(|c| c.variant == variant && c.scenario == crate::report::Scenario::Race).unwrap()
    }

    #[test]
    fn amplified_verdicts_decide_where_both_runs_have_them() {
        let base = results();
        let mut new = base.clone();
        // the natural race found nothing on a busy machine, the amplified verdict held: the
        // cell's verdict is the same, and the natural rate is the machine's, not a change
        let c = race_cell(&mut new, "node.existsSync+writeFileSync");
        let nat = c.race_mut().unwrap().natural.as_mut().unwrap();
        nat.verdict = crate::verdict::RaceVerdict::Exclusive;
        nat.stats.multi_winner_trials = 0;
        assert!(!compare(&base, &new).differs(), "{}", compare(&base, &new).render());
        // a natural-only failure with amplified verdicts equal still counts, when significant
        let mut nat_fail = base.clone();
        let c = race_cell(&mut nat_fail, "node.writeFileSync.wx");
        let r = c.race_mut().unwrap();
        let m = r.natural.as_mut().unwrap();
        m.verdict = crate::verdict::RaceVerdict::MultipleWinners;
        m.stats.multi_winner_trials = m.stats.trials;
        r.verdict = crate::verdict::RaceVerdict::MultipleWinners;
        let d = compare(&base, &nat_fail);
        assert_eq!(d.changed.len(), 1, "{}", d.render());
        assert!(d.changed[0].before.0.contains("natural"), "{:?}", d.changed[0]);
        // the amplified verdict changed: a change
        let c = race_cell(&mut new, "node.writeFileSync.wx");
        c.race_mut().unwrap().amplified.as_mut().unwrap().verdict = crate::verdict::RaceVerdict::MultipleWinners;
        let d = compare(&base, &new);
        assert_eq!(d.changed.len(), 1, "{}", d.render());
        assert_eq!(d.changed[0].before.0, "exclusive (amplified)");
    }

    /// A run whose natural check decided a failing cell (amplified race skipped) against one
    /// whose amplified race decided it: the same failure, not a change; a failure against
    /// `exclusive` still is one.
    #[test]
    fn a_skipped_amplified_race_is_no_change_where_both_runs_failed() {
        let base = results();
        let mut new = base.clone();
        let c = race_cell(&mut new, "node.existsSync+writeFileSync");
        let r = c.race_mut().unwrap();
        r.amplified = None;
        r.amplified_unavailable = Some(crate::domain::NoAmplified::Skipped);
        let m = r.natural.as_mut().unwrap();
        (m.verdict, m.stats.multi_winner_trials, m.stats.lost_update_trials) =
            (crate::verdict::RaceVerdict::LostUpdate, 0, m.stats.trials);
        r.verdict = crate::verdict::RaceVerdict::LostUpdate;
        assert!(!compare(&base, &new).differs(), "{}", compare(&base, &new).render());
        assert!(!compare(&new, &base).differs(), "{}", compare(&new, &base).render());
        let c = race_cell(&mut new, "node.existsSync+writeFileSync");
        c.race_mut().unwrap().verdict = crate::verdict::RaceVerdict::Exclusive;
        c.race_mut().unwrap().natural.as_mut().unwrap().verdict = crate::verdict::RaceVerdict::Exclusive;
        // compared as natural races again (here within noise: 3/20 against 0/20), not the same
        let text = compare(&base, &new).render();
        assert!(text.contains("node/node.existsSync+writeFileSync/race/absent: multiple-winners"), "{text}");
    }

    #[test]
    fn natural_only_counts_change_only_when_significant() {
        let mut base = results();
        for r in base.cells.iter_mut().filter_map(Cell::race_mut) {
            r.amplified = None;
        }
        let set = |r: &mut Results, multi: usize, trials: usize| {
            let c = race_cell(r, "node.writeFileSync.wx");
            let m = c.race_mut().unwrap().natural.as_mut().unwrap();
            m.verdict = if multi > 0 {
                crate::verdict::RaceVerdict::MultipleWinners
            } else {
                crate::verdict::RaceVerdict::Exclusive
            };
            m.stats.multi_winner_trials = multi;
            m.stats.trials = trials;
            m.stats.clean_trials = trials;
        };
        set(&mut base, 0, 200);
        let mut noisy = base.clone();
        set(&mut noisy, 2, 200);
        let d = compare(&base, &noisy);
        assert!(!d.differs(), "{}", d.render());
        assert_eq!(d.within_noise.len(), 1);
        assert!(d
            .render()
            .contains("noise    node/node.writeFileSync.wx/race/absent: exclusive 0/200 -> multiple-winners 2/200"));
        let mut real = base.clone();
        set(&mut real, 60, 200);
        let d = compare(&base, &real);
        assert_eq!(d.changed.len(), 1, "{}", d.render());
        assert!(d.within_noise.is_empty());
        // a weak new race (its control not caught) that found nothing measured nothing: not a
        // change from the baseline's failure, and listed as weak; a failure it found still is one
        let mut weak = base.clone();
        set(&mut weak, 0, 200);
        let r = race_cell(&mut weak, "node.writeFileSync.wx").race_mut().unwrap();
        r.verdict = crate::verdict::RaceVerdict::Inconclusive;
        r.weak_race = Some("weak race: control caught 0/25 (natural)".into());
        let d = compare(&real, &weak);
        assert!(d.changed.is_empty() && d.weak.len() == 1, "{}", d.render());
        let d = compare(&weak, &real);
        assert_eq!(d.changed.len(), 1, "a failure found where the baseline was weak is new: {}", d.render());
    }
}

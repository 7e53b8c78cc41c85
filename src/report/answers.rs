//! The answer per call and the use / don't-use lists by intent: what a person reads first.
//!
//! The rule is [`crate::verdict::answer`] (pure); this module gathers a runtime's rows into
//! calls, hands them to the rule, and words the result: `yes`, `no: replaced on file`,
//! `no: multiple-winners 5/5 (nat) with an empty-dir source; holds with a dir source`,
//! `? (-n 100)`.

use std::fmt::Write as _;

use serde::Serialize;

use super::model::{AgainstRace, AgainstSide, Results, Row};
use super::style::{TermStyle, Tone};
use crate::matrix::{Intent, SourceKind};
use crate::verdict::answer::{
    answer, one_sided, with_against, AgainstInput, Answer, AnswerVerdict, Failure, Fault, PromiseCheck, RowInput,
    Unsettled, Winner,
};

/// Width the answer block is wrapped to on a terminal (columns).
pub const ANSWER_WIDTH: usize = 100;

/// One call's answer, with the rows it rests on.
#[derive(Debug, Clone)]
pub struct CallAnswer<'a> {
    /// The variant id.
    pub variant: &'a str,
    /// Marked as an anti-pattern in the matrix.
    pub anti_pattern: bool,
    /// The job it is used for; `None` in files written before intents existed.
    pub intent: Option<Intent>,
    /// The rows (one per source kind), in the table's order.
    pub rows: Vec<Row<'a>>,
    /// The races of this call against other parties' calls (`run --against`), each with the
    /// slot of the other party, in the file's order; [`Answer::holds_against`] and
    /// [`Answer::fails_against`] index into it.
    pub against: Vec<(&'a AgainstRace, usize)>,
    /// The answer.
    pub answer: Answer,
    /// [`Results::kinds_with_several_rows`] of the run, for naming the other parties.
    several: std::rc::Rc<std::collections::BTreeSet<String>>,
    /// Which rows the run raced (`run_info.races`; `None`: no race scenario), for naming what
    /// would measure a race it left out ([`unsettled_words`]).
    races: Option<crate::domain::RaceScope>,
}

impl<'a> CallAnswer<'a> {
    /// The documentation's promise about a taken name (the matrix's), if the call has one.
    pub fn promise(&self) -> Option<&'a crate::matrix::Promise> {
        self.rows.iter().flat_map(|r| r.second.values().chain(r.race.iter())).find_map(|c| c.promise.as_ref())
    }

    /// `mono dotnet.Directory.Move` for the other party of race `i` of [`CallAnswer::against`].
    pub fn other(&self, i: usize) -> String {
        let (r, slot) = self.against[i];
        r.contenders.get(slot).map(|s| s.label_among(&self.several)).unwrap_or_default()
    }
}

/// Whose doing race `r` failed by, as the party that is not in slot `other` sees it
/// ([`Fault::of_side`] over [`crate::verdict::answer::at_fault`] of its natural and amplified runs);
/// `None` when no run failed.
pub fn against_fault(r: &AgainstRace, other: usize) -> Option<Fault> {
    let runs = r.race.run_stats();
    Fault::of_side(crate::verdict::answer::at_fault(&runs), 1 - other.min(1))
}

/// The answers of one runtime, a call each, in table order. Only rows raced by processes count
/// (thread rows answer another question: `--contender-kind thread`).
pub fn call_answers<'a>(results: &'a Results, runtime: &str) -> Vec<CallAnswer<'a>> {
    let mut out: Vec<CallAnswer<'a>> = Vec::new();
    let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let several = std::rc::Rc::new(results.kinds_with_several_rows());
    for row in results.rows(runtime).into_iter().filter(|r| r.contenders.is_processes()) {
        match index.get(row.variant).map(|&i| &mut out[i]) {
            Some(c) => c.rows.push(row),
            None => {
                index.insert(row.variant, out.len());
                let intent = row.second.values().chain(row.race.iter()).find_map(|c| c.intent);
                out.push(CallAnswer {
                    variant: row.variant,
                    anti_pattern: row.anti_pattern,
                    intent,
                    rows: vec![row],
                    against: Vec::new(),
                    answer: answer(&[]),
                    several: several.clone(),
                    races: results.run_info.races,
                })
            }
        }
    }
    for c in &mut out {
        let inputs: Vec<RowInput> = c
            .rows
            .iter()
            .map(|r| {
                let (second, race) = r.lock_inputs();
                RowInput { source: r.source, second, race }
            })
            .collect();
        // the races against other parties' calls in which one of this call's rows took part
        c.against = results
            .against
            .iter()
            .filter_map(|r| {
                let mine = r.contenders.iter().position(|s| {
                    s.runtime == runtime && s.variant == c.variant && c.rows.iter().any(|row| row.source == s.source)
                })?;
                Some((r, if mine == 0 { 1 } else { 0 }))
            })
            .collect();
        // a race cut short by an interrupt shows a failure it saw, never that the call held
        let verdicts: Vec<AgainstInput> = c
            .against
            .iter()
            .map(|&(r, other)| match r.race.verdict {
                crate::verdict::RaceVerdict::Exclusive if r.race.interrupted => {
                    AgainstInput { verdict: crate::verdict::RaceVerdict::Inconclusive, fault: None, one_sided: None }
                }
                v => AgainstInput {
                    verdict: v,
                    fault: against_fault(r, other),
                    one_sided: r.race.deciding().and_then(|m| one_sided(&m.stats)).map(|(side, _)| {
                        if side == other {
                            Winner::OtherCall
                        } else {
                            Winner::ThisCall
                        }
                    }),
                },
            })
            .collect();
        c.answer = with_against(answer(&inputs), &verdicts);
    }
    out
}

/// ` with a dir source` for a source kind, nothing for the call's own.
fn source_words(source: Option<SourceKind>) -> String {
    match source {
        Some(k @ SourceKind::EmptyDir) => format!(" with an {} source", k.as_str()),
        Some(k) => format!(" with a {} source", k.as_str()),
        None => String::new(),
    }
}

/// `not for dir sources: the call fails there` where some source kinds could not take a free
/// name (see [`Answer::not_applicable`]).
fn limited_phrase(a: &Answer) -> Option<String> {
    if a.not_applicable.is_empty() {
        return None;
    }
    let kinds: Vec<String> = a.not_applicable.iter().map(|s| s.map_or("its own", |k| k.as_str()).to_string()).collect();
    Some(format!("not for {} sources: the call fails there", kinds.join(" or ")))
}

/// `holds only with a dir source` where some rows held (the condition of a `no`).
fn holds_phrase(a: &Answer) -> Option<String> {
    if a.holds_with.is_empty() {
        return None;
    }
    let with: Vec<String> =
        a.holds_with.iter().map(|s| source_words(*s).trim_start().to_string()).filter(|s| !s.is_empty()).collect();
    let with = if with.is_empty() { "with its own source".to_string() } else { with.join(", ") };
    Some(format!("holds only {with}"))
}

/// [`limited_phrase`] in parentheses after a `yes`, or nothing.
fn limited_text(a: &Answer) -> String {
    limited_phrase(a).map(|p| format!(" ({p})")).unwrap_or_default()
}

/// [`holds_phrase`] after a `no`'s failures, or nothing.
fn holds_text(a: &Answer) -> String {
    holds_phrase(a).map(|p| format!("; {p}")).unwrap_or_default()
}

/// How a failure showed: `replaced on file`, `kept on empty-dir (relative path)`,
/// `multiple-winners 5/5 (nat)`.
fn failure_text(c: &CallAnswer<'_>, source: Option<SourceKind>, f: Failure) -> String {
    match f {
        Failure::Second { target, outcome, relative } => {
            let rel = if relative { " (relative path)" } else { "" };
            let on = if target == crate::domain::TargetState::Absent { "a free name" } else { target.as_str() };
            format!("{} on {on}{rel}", outcome.as_str())
        }
        Failure::Race { verdict } => {
            let race = c.rows.iter().find(|r| r.source == source).and_then(|r| r.race).and_then(|cell| cell.race());
            match race.and_then(|r| deciding_counts(r, verdict)) {
                Some((n, t, mode)) => format!("{} {n}/{t} ({mode})", verdict.as_str()),
                None => verdict.as_str().to_string(),
            }
        }
    }
}

/// The deciding run of race `r` as the answers cite it: its trials showing `verdict`, its
/// trials, and `amp` or `nat`; `None` where no run decided (a fault).
fn deciding_counts(
    r: &crate::report::model::RaceResult,
    verdict: crate::verdict::RaceVerdict,
) -> Option<(usize, usize, &'static str)> {
    let m = r.deciding()?;
    let mode = if r.decided_by == crate::verdict::RaceMode::Amplified { "amp" } else { "nat" };
    Some((m.stats.trials_showing(verdict), m.stats.trials, mode))
}

/// The flag or reason of an [`Unsettled`], as the `?` says it.
pub fn unsettled_text(u: Unsettled) -> &'static str {
    match u {
        Unsettled::LeftOut(l) => super::model::left_out_flag(l),
        Unsettled::Unsupported => "not in this runtime",
        Unsettled::Fault => "a probe or the harness failed: see the cells",
        Unsettled::WeakRace => "race too weak to tell",
        Unsettled::AmplifiedBroke => "its probes broke under the tracer: natural race only",
        Unsettled::WeakControl => "its scenario's anti-patterns lost nothing either: too weak to tell",
        Unsettled::AntiPatternHeld => "an anti-pattern that lost nothing in this run",
    }
}

/// [`unsettled_text`] in a run that raced `races` (`run_info.races`): a race left out is
/// `--races all` only where the run raced each call's plain form (`--quick`); in a run without
/// the race scenario it names that scenario; otherwise the row was not raced (an interrupted
/// run).
pub fn unsettled_words(u: Unsettled, races: Option<crate::domain::RaceScope>) -> &'static str {
    use crate::domain::RaceScope;
    use crate::verdict::LeftOut;
    match (u, races) {
        (Unsettled::LeftOut(LeftOut::Race), None) => "no race: add race to --scenario",
        (Unsettled::LeftOut(LeftOut::Race), Some(RaceScope::Core)) => "--races all",
        (Unsettled::LeftOut(LeftOut::Race), Some(_)) => "not raced in this run",
        _ => unsettled_text(u),
    }
}

/// The answer in a few words, for the lists: the first failure only, with the condition it
/// held under (`replaced on file`, `multiple-winners 2/10 (nat); holds only with a dir
/// source`); `yes`, or the `?` of [`answer_text`], otherwise.
pub fn short_text(c: &CallAnswer<'_>) -> String {
    match c.answer.failures.first() {
        Some((s, f)) if c.answer.verdict == AnswerVerdict::No => {
            let more = c.answer.failures.len() - 1;
            let more = if more > 0 { format!(" (+{more} more)") } else { String::new() };
            format!("{}{}{more}{}", failure_text(c, *s, *f), source_words(*s), holds_text(&c.answer))
        }
        _ => answer_text(c),
    }
}

/// The answer in words: `yes`; `no: replaced on file`; `no: multiple-winners 5/5 (nat) with
/// an empty-dir source; holds with a dir source`; `? (--races all, -n 100)`.
pub fn answer_text(c: &CallAnswer<'_>) -> String {
    let a = &c.answer;
    match a.verdict {
        AnswerVerdict::Yes => {
            format!("yes{}{}{}{}", limited_text(a), partial_text(c), held_against_text(c), broken_by_text(c))
        }
        AnswerVerdict::No if a.only_against() => {
            format!("no against {}; holds against itself{}{}", fails_against_text(c), also_held(c), one_sided_text(c))
        }
        AnswerVerdict::No => {
            let mut how: Vec<String> =
                a.failures.iter().map(|(s, f)| format!("{}{}", failure_text(c, *s, *f), source_words(*s))).collect();
            if !a.fails_against.is_empty() {
                how.push(format!("against {}", fails_against_text(c)));
            }
            format!("no: {}{}", how.join("; "), holds_text(a))
        }
        AnswerVerdict::Undetermined => {
            let why: Vec<&str> = a.unsettled.iter().map(|u| unsettled_words(*u, c.races)).collect();
            format!("? ({})", why.join(", "))
        }
    }
}

/// `mono dotnet.Directory.Move (multiple-winners 3/30, amp)` for each race against another
/// party's call that failed, joined with `, `.
fn fails_against_text(c: &CallAnswer<'_>) -> String {
    against_races_text(c, &c.answer.fails_against)
}

/// `mono dotnet.Directory.Move (multiple-winners 3/30, amp)` for races `races` of
/// [`CallAnswer::against`], joined with `, `.
fn against_races_text(c: &CallAnswer<'_>, races: &[usize]) -> String {
    let parts: Vec<String> = races
        .iter()
        .map(|&i| {
            let r = &c.against[i].0.race;
            let counts = deciding_counts(r, r.verdict).map(|(n, t, mode)| format!(" {n}/{t}, {mode}"));
            format!("{} ({}{})", c.other(i), r.verdict.as_str(), counts.unwrap_or_default())
        })
        .collect();
    parts.join(", ")
}

/// `; broken by bun node.renameSync (multiple-winners 2/40, amp): that call's doing`
/// for the races against other parties' calls that failed by the other call's doing alone
/// ([`Answer::broken_by`]), or nothing.
fn broken_by_text(c: &CallAnswer<'_>) -> String {
    if c.answer.broken_by.is_empty() {
        return String::new();
    }
    let whose = if c.answer.broken_by.len() == 1 { "that call's doing" } else { "those calls' doing" };
    format!("; broken by {}: {whose}", against_races_text(c, &c.answer.broken_by))
}

/// The source kinds the run measured the call with, in words, where it did not measure the
/// call's own (first) kind (`-v 'node.renameSync@dir'`): `only a dir source measured`.
fn partial_phrase(c: &CallAnswer<'_>) -> Option<String> {
    if c.rows.is_empty() || c.rows.iter().any(|r| r.source.is_none()) {
        return None;
    }
    let kinds: Vec<&str> = c.rows.iter().filter_map(|r| r.source.map(|k| k.as_str())).collect();
    Some(format!("only {} measured", source_words_list(&kinds)))
}

/// `a dir source`, `empty-dir and dir sources`.
fn source_words_list(kinds: &[&str]) -> String {
    match kinds {
        [one] => format!("a{} {one} source", if one.starts_with('e') { "n" } else { "" }),
        many => format!("{} sources", many.join(" and ")),
    }
}

/// [`partial_phrase`] in parentheses, or nothing.
fn partial_text(c: &CallAnswer<'_>) -> String {
    partial_phrase(c).map(|p| format!(" ({p})")).unwrap_or_default()
}

/// ` and node node.mkdirSync` for the races against others that held, or nothing.
fn also_held(c: &CallAnswer<'_>) -> String {
    let names: Vec<String> = c.answer.holds_against.iter().map(|&i| c.other(i)).collect();
    if names.is_empty() {
        String::new()
    } else {
        format!(" and {}", names.join(", "))
    }
}

/// ` (against itself and mono dotnet.Directory.Move)` after a `yes` that was raced against
/// other parties' calls (` (against itself)` where each of those races failed by the other
/// call's doing alone or was one-sided), with [`one_sided_text`] inside, or nothing.
fn held_against_text(c: &CallAnswer<'_>) -> String {
    let a = &c.answer;
    if a.holds_against.is_empty() && a.broken_by.is_empty() && a.one_sided.is_empty() {
        String::new()
    } else {
        format!(" (against itself{}{})", also_held(c), one_sided_text(c))
    }
}

/// `; one-sided against pwsh pwsh.mkdir: this call won 100/100 (amp)` for each `exclusive`
/// race against another party's call that one call won alone ([`Answer::one_sided`]: it
/// vouches for nothing), joined with `, `; nothing when there is none.
fn one_sided_text(c: &CallAnswer<'_>) -> String {
    let parts: Vec<String> = c
        .answer
        .one_sided
        .iter()
        .map(|&(i, won)| {
            let r = &c.against[i].0.race;
            let who = match won {
                Winner::ThisCall => "this call",
                Winner::OtherCall => "that call",
            };
            let counts = r.deciding().map(|m| {
                let mode = if r.decided_by == crate::verdict::RaceMode::Amplified { "amp" } else { "nat" };
                format!(" {}/{} ({mode})", one_sided(&m.stats).map_or(0, |(_, n)| n), m.stats.trials)
            });
            format!("{}: {who} won{}", c.other(i), counts.unwrap_or_default())
        })
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!("; one-sided against {}", parts.join(", "))
    }
}

/// The heading of the calls that hold only where every party uses them (or a call they held
/// against).
const USE_IF_HEAD: &str = "use only if every party does";

/// The list of a runtime's intent a call goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum List {
    /// `yes`.
    Use,
    /// `no` only against other parties' calls ([`Answer::only_against`]).
    UseIfEveryPartyDoes,
    /// Any other `no`.
    DontUse,
}

impl List {
    /// The list of `a`; `None` for an undetermined answer.
    fn of(a: &Answer) -> Option<List> {
        match a.verdict {
            AnswerVerdict::Yes => Some(List::Use),
            AnswerVerdict::No if a.only_against() => Some(List::UseIfEveryPartyDoes),
            AnswerVerdict::No => Some(List::DontUse),
            AnswerVerdict::Undetermined => None,
        }
    }
}

/// The heading of an intent's group: its words, or `other` for calls without an intent.
fn intent_words(i: Option<Intent>) -> &'static str {
    i.map_or("other", Intent::describe)
}

/// `items` as one wrapped paragraph at `indent`, each item kept whole where it fits.
fn wrapped(items: &[String], indent: usize, width: usize) -> String {
    let pad = " ".repeat(indent);
    let text = items.join(", ");
    let opts = textwrap::Options::new(width.max(indent + 20))
        .initial_indent(&pad)
        .subsequent_indent(&pad)
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
    textwrap::fill(&text, opts)
}

/// One hand-off recipe's answer on one runtime ([`crate::verdict::recipe`]).
#[derive(Debug, Clone, PartialEq)]
pub struct RecipeAnswerOf<'a> {
    /// The hand-off scenario, whose words name the intent.
    pub scenario: crate::domain::Scenario,
    /// The recipe id.
    pub recipe: &'a str,
    /// The library version it raced ([`super::model::Cell::library`]).
    pub library: Option<&'a str>,
    /// The answer.
    pub answer: crate::verdict::recipe::RecipeAnswer,
}

impl RecipeAnswerOf<'_> {
    /// The recipe as the lists name it: its id, then the library version it raced
    /// (`mutex.proper-lockfile [proper-lockfile@4.1.2]`).
    pub fn name(&self) -> String {
        match self.library {
            Some(lib) => format!("{} [{lib}]", self.recipe),
            None => self.recipe.to_string(),
        }
    }
}

/// The answers of one runtime's hand-off recipes, a recipe each, in the file's order.
pub fn recipe_answers<'a>(results: &'a Results, runtime: &str) -> Vec<RecipeAnswerOf<'a>> {
    // each scenario's control once, not once per recipe of it
    let mut controls = std::collections::BTreeMap::new();
    results
        .cells
        .iter()
        .filter(|c| c.runtime == runtime)
        .filter_map(|c| {
            let own = cell_recipe_answer(c)?;
            let control = *controls.entry(c.scenario).or_insert_with(|| recipe_control(results, runtime, c.scenario));
            Some(RecipeAnswerOf {
                scenario: c.scenario,
                recipe: &c.variant,
                library: c.library.as_deref(),
                answer: crate::verdict::recipe::controlled(own, c.anti_pattern, control),
            })
        })
        .collect()
}

/// The answer of hand-off cell `c` of `results` for its recipe, as the lists give it: the
/// cell's own answer ([`cell_recipe_answer`]) judged against its scenario's detection control
/// on the same runtime ([`recipe_control`], [`crate::verdict::recipe::controlled`]); `None`
/// for a cell that is not a hand-off's.
pub fn recipe_answer(results: &Results, c: &super::model::Cell) -> Option<crate::verdict::recipe::RecipeAnswer> {
    let own = cell_recipe_answer(c)?;
    Some(crate::verdict::recipe::controlled(own, c.anti_pattern, recipe_control(results, &c.runtime, c.scenario)))
}

/// Whether the anti-pattern recipes of `scenario` measured on `runtime` in `results` (matrix
/// data: `anti_pattern`) lost anything, by their own answers: `Some(true)` when one of them
/// answered `no`, `Some(false)` when some ran and none did, `None` when none ran (no control).
pub fn recipe_control(results: &Results, runtime: &str, scenario: crate::domain::Scenario) -> Option<bool> {
    let verdicts: Vec<AnswerVerdict> = results
        .cells
        .iter()
        .filter(|c| c.runtime == runtime && c.scenario == scenario && c.anti_pattern)
        // an anti-pattern with no run (the probe lacks it, or crashed before its first item)
        // is no control either way
        .filter(|c| cell_recipe_runs(c).is_some_and(|(runs, _)| !runs.is_empty()))
        .filter_map(cell_recipe_answer)
        .map(|a| a.verdict)
        .collect();
    (!verdicts.is_empty()).then(|| verdicts.contains(&AnswerVerdict::No))
}

/// The answer of hand-off cell `c` for its recipe, from its natural and amplified runs and
/// its scenario's failure and fault counters alone (the counts' own answer, which `compare`
/// and `diff` compare); `None` for a cell that is not a hand-off's.
pub fn cell_recipe_answer(c: &super::model::Cell) -> Option<crate::verdict::recipe::RecipeAnswer> {
    let (runs, words) = cell_recipe_runs(c)?;
    let a = crate::verdict::recipe::answer_recipe(&runs, words.failures, words.faults);
    // no run: `not in this runtime` only where the cell says so; a probe that crashed or hung
    // before its first item is a fault, never a recipe the runtime lacks
    Some(if runs.is_empty() && !c.is_unsupported_handoff() {
        crate::verdict::recipe::RecipeAnswer { unsettled: Some(Unsettled::Fault), ..a }
    } else {
        a
    })
}

/// The runs of hand-off cell `c` its answer is made from (natural, then amplified; a run
/// without counters and without a harness error is none), with its scenario's words; `None`
/// for a cell that is not a hand-off's.
pub fn cell_recipe_runs(
    c: &super::model::Cell,
) -> Option<(Vec<crate::verdict::recipe::RecipeRun<'_>>, &'static super::handoff::Words)> {
    use crate::verdict::recipe::RecipeRun;
    use crate::verdict::RaceMode;
    let (Some(words), super::model::CellResult::Counters(r)) = (super::handoff::words(c.scenario), &c.result) else {
        return None;
    };
    // a cell whose recipe the probe lacks, or that stopped before its first item, has no
    // counters: no run
    let runs = [(RaceMode::Natural, Some(r)), (RaceMode::Amplified, r.amplified.as_deref())]
        .into_iter()
        .filter_map(|(mode, run)| run.filter(|x| !x.counters.is_empty() || x.harness_error).map(|x| (mode, x)))
        .map(|(mode, x)| RecipeRun { mode, counters: &x.counters, harness_error: x.harness_error })
        .collect();
    Some((runs, words))
}

/// A recipe's answer in a few words, for the lists: `held over 40 trials`, `duplicated 6/10
/// (amp)` (the first failure, `+N more` for the others), or the `?` of an undetermined one.
pub fn recipe_text(a: &crate::verdict::recipe::RecipeAnswer) -> String {
    match (a.verdict, a.failures.first(), &a.held_over) {
        (AnswerVerdict::No, Some(f), _) => {
            let mode = if f.mode == crate::verdict::RaceMode::Amplified { "amp" } else { "nat" };
            let more = a.failures.len() - 1;
            let more = if more > 0 { format!(" (+{more} more)") } else { String::new() };
            format!(
                "{} {}/{} {} ({mode}){more}",
                f.counter.replace('_', " "),
                f.count,
                f.of,
                f.out_of.replace('_', " ")
            )
        }
        (AnswerVerdict::Yes, _, Some((of, n))) => format!("none in {n} {}", of.replace('_', " ")),
        _ => format!("? ({})", a.unsettled.map_or("", unsettled_text)),
    }
}

/// The hand-off block of one runtime, wrapped to `width` columns: per intent, the recipes to
/// use and not to use, then the undetermined ones. Empty when the runtime has no hand-off cell.
fn render_recipes(results: &Results, runtime: &str, width: usize, style: TermStyle) -> String {
    let recipes = recipe_answers(results, runtime);
    if recipes.is_empty() {
        return String::new();
    }
    let mut s = format!("{}: which hand-off recipe to use\n", super::table::escape_controls(runtime));
    for (verdict, head) in [(AnswerVerdict::Yes, "use"), (AnswerVerdict::No, "don't use")] {
        let mut block = String::new();
        for scenario in crate::domain::Scenario::HANDOFFS {
            let items: Vec<String> = recipes
                .iter()
                .filter(|r| r.scenario == scenario && r.answer.verdict == verdict)
                .map(|r| format!("{} ({})", r.name(), recipe_text(&r.answer)))
                .collect();
            if let (false, Some(words)) = (items.is_empty(), super::handoff::words(scenario)) {
                let _ = writeln!(block, "    {}:", words.intent);
                let _ = writeln!(block, "{}", wrapped(&items, 6, width));
            }
        }
        if block.is_empty() {
            let _ = writeln!(s, "  {}: none", style.paint(Some(head_tone(head)), head));
        } else {
            let _ = write!(s, "  {}:\n{block}", style.paint(Some(head_tone(head)), head));
        }
    }
    let undetermined = |missing: bool| -> Vec<String> {
        recipes
            .iter()
            .filter(|r| r.answer.verdict == AnswerVerdict::Undetermined)
            .filter(|r| (r.answer.unsettled == Some(Unsettled::Unsupported)) == missing)
            .map(|r| if missing { r.name() } else { format!("{} {}", r.name(), recipe_text(&r.answer)) })
            .collect()
    };
    for (missing, head) in [(false, "undetermined"), (true, "not in this runtime")] {
        let items = undetermined(missing);
        if !items.is_empty() {
            let _ = writeln!(s, "  {}:", style.paint(Some(head_tone(head)), head));
            let _ = writeln!(s, "{}", wrapped(&items, 6, width));
        }
    }
    s
}

/// The answer block of one runtime, wrapped to `width` columns: the calls to use and not to
/// use, by intent, then the undetermined ones with what would settle them; then its hand-off
/// recipes the same way. Empty when the runtime has no second-comer, race or hand-off cell.
pub fn render_runtime(results: &Results, runtime: &str, width: usize) -> String {
    styled_runtime(results, runtime, width, TermStyle::PLAIN)
}

/// [`render_runtime`] with its list heads (`use`, `don't use`, …) coloured as `style` says.
fn styled_runtime(results: &Results, runtime: &str, width: usize, style: TermStyle) -> String {
    format!("{}{}", render_calls(results, runtime, width, style), render_recipes(results, runtime, width, style))
}

/// The colour of a list head: `use` green, `don't use` red, the others yellow.
fn head_tone(head: &str) -> Tone {
    match head {
        "use" => Tone::Good,
        "don't use" => Tone::Bad,
        _ => Tone::Unsure,
    }
}

/// The call block of one runtime (see [`render_runtime`]); empty when it has no second-comer
/// or race rows.
fn render_calls(results: &Results, runtime: &str, width: usize, style: TermStyle) -> String {
    let calls = call_answers(results, runtime);
    if calls.is_empty() {
        return String::new();
    }
    let mut s = format!("{}: which call to use\n", super::table::escape_controls(runtime));
    let mut intents: Vec<Option<Intent>> = Intent::ALL.iter().map(|i| Some(*i)).collect();
    intents.push(None);
    for (list, head) in [(List::Use, "use"), (List::UseIfEveryPartyDoes, USE_IF_HEAD), (List::DontUse, "don't use")] {
        let mut block = String::new();
        for i in &intents {
            let items: Vec<String> = calls
                .iter()
                .filter(|c| c.intent == *i && List::of(&c.answer) == Some(list))
                .map(|c| match list {
                    List::Use if c.answer.not_applicable.is_empty() => c.variant.to_string(),
                    List::Use => format!("{}{}", c.variant, limited_text(&c.answer)),
                    List::UseIfEveryPartyDoes => format!("{} (not against {})", c.variant, fails_against_text(c)),
                    List::DontUse => format!("{} ({})", c.variant, short_text(c)),
                })
                .collect();
            if !items.is_empty() {
                let _ = writeln!(block, "    {}:", intent_words(*i));
                let _ = writeln!(block, "{}", wrapped(&items, 6, width));
            }
        }
        match (block.is_empty(), list) {
            // said only where some call is in it
            (true, List::UseIfEveryPartyDoes) => {}
            (true, _) => {
                let _ = writeln!(s, "  {}: none", style.paint(Some(head_tone(head)), head));
            }
            (false, _) => {
                let _ = write!(s, "  {}:\n{block}", style.paint(Some(head_tone(head)), head));
            }
        }
    }
    let undetermined = |c: &&CallAnswer<'_>| c.answer.verdict == AnswerVerdict::Undetermined;
    let missing: Vec<String> = calls
        .iter()
        .filter(undetermined)
        .filter(|c| c.answer.unsettled == [Unsettled::Unsupported])
        .map(|c| c.variant.to_string())
        .collect();
    let open: Vec<String> = calls
        .iter()
        .filter(undetermined)
        .filter(|c| c.answer.unsettled != [Unsettled::Unsupported])
        .map(|c| format!("{} {}", c.variant, answer_text(c)))
        .collect();
    if !open.is_empty() {
        let _ = writeln!(s, "  {}:", style.paint(Some(Tone::Unsure), "undetermined"));
        let _ = writeln!(s, "{}", wrapped(&open, 6, width));
    }
    if !missing.is_empty() {
        let _ = writeln!(s, "  not in this runtime:");
        let _ = writeln!(s, "{}", wrapped(&missing, 6, width));
    }
    let contradicted: Vec<String> = calls.iter().filter_map(contradiction).collect();
    if !contradicted.is_empty() {
        let _ = writeln!(s, "  contradicts its documentation:");
        for c in contradicted {
            let _ = writeln!(s, "{}", wrapped(&[c], 6, width));
        }
    }
    s
}

/// `dotnet.Directory.Move, broken in a race: "… destDirName already exists." (https://…)` for a
/// call whose measurement contradicts its documentation's promise; `None` otherwise.
pub fn contradiction(c: &CallAnswer<'_>) -> Option<String> {
    let p = c.promise()?;
    let check = PromiseCheck::of(&c.answer);
    matches!(check, PromiseCheck::Broken | PromiseCheck::BrokenInARace).then(|| {
        let line = format!("{}, {}: \"{}\" ({})", c.variant, check.words(), p.quote, p.url);
        super::table::escape_controls(&line).into_owned()
    })
}

/// One call's answer in `results.json` (`answers`): derived from the cells each time the
/// file is written, never read back (a reader derives them again).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct AnswerRecord {
    /// The runtime row label (`node 20.20.2`).
    pub runtime: String,
    /// The adapter name (`node`).
    pub runtime_name: String,
    /// The variant id.
    pub variant: String,
    /// The job it is used for (absent for cells written before intents existed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intent: Option<Intent>,
    /// Marked as an anti-pattern in the matrix.
    pub anti_pattern: bool,
    /// The answer.
    pub answer: AnswerData,
}

/// The answer of an [`AnswerRecord`]: the verdict, its words, and the facts behind them.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct AnswerData {
    /// `yes`, `no` or `undetermined`.
    pub verdict: AnswerVerdict,
    /// The answer in words ([`answer_text`]): `no: replaced on file`, `? (-n 100)`.
    pub how: String,
    /// For `no`: each failing source kind (`null`: the call's own) and its first failure.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<FailureRecord>,
    /// The condition the answer carries, in words: `holds only with a dir source` (a `no`
    /// whose other source kinds held) or `not for dir sources: the call fails there`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    /// For `undetermined`: what would settle it (`{"left-out": "trials"}`, `unsupported`,
    /// `fault`, `weak-race`), most actionable first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub needs: Vec<Unsettled>,
    /// The races of the call against other parties' calls (`run --against`), in the file's
    /// order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub against: Vec<AgainstRecord>,
    /// The documentation's promise about a taken name, where the matrix cites one, with what
    /// the measurement says of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub promise: Option<PromiseRecord>,
}

/// A documented promise and the measurement beside it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct PromiseRecord {
    /// The documentation's words.
    pub quote: String,
    /// Where they are.
    pub url: String,
    /// What the measurement says of them ([`PromiseCheck`]).
    pub measured: PromiseCheck,
}

/// One race of a call against another party's call, as its answer weighs it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct AgainstRecord {
    /// The other party's row.
    pub contender: AgainstSide,
    /// The race's verdict (`exclusive`: held).
    pub verdict: crate::verdict::RaceVerdict,
    /// For a failed race, whose doing it was, from the trials' observed state
    /// ([`against_fault`]): `other-call` leaves the answer as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<Fault>,
    /// For an `exclusive` race one call won alone in every trial of its deciding run
    /// ([`crate::verdict::answer::one_sided`]): which (`this-call`, `other-call`). Such a race
    /// vouches for nothing: the answer does not count it as held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub won_every_trial: Option<Winner>,
}

/// A failing source kind and how it failed.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct FailureRecord {
    /// The source kind (`null`: the call's own).
    pub source: Option<SourceKind>,
    /// The first observation that ruled it out.
    pub failure: Failure,
    /// That failure in words (`multiple-winners 5/10 (nat)`).
    pub text: String,
}

/// One runtime's lists for one intent in `results.json` (`intents`): the calls to use, not to
/// use, and the undetermined ones.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct IntentRecord {
    /// The runtime row label.
    pub runtime: String,
    /// The intent (`null`: calls without one).
    pub intent: Option<Intent>,
    /// Variant ids answered `yes`.
    #[serde(rename = "use")]
    pub use_: Vec<String>,
    /// Variant ids answered `no` only because they failed against other parties' calls: each
    /// held against copies of itself (safe where every party uses it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub use_if_every_party_does: Vec<String>,
    /// Variant ids answered `no` for their own failures.
    pub dont_use: Vec<String>,
    /// Variant ids answered `undetermined`.
    pub undetermined: Vec<String>,
}

/// The condition of a call's answer in words, if it has one.
fn condition(c: &CallAnswer<'_>) -> Option<String> {
    let a = &c.answer;
    match a.verdict {
        AnswerVerdict::No if a.only_against() => Some("holds against itself".into()),
        AnswerVerdict::No => holds_phrase(a).or_else(|| limited_phrase(a)),
        _ => limited_phrase(a).or_else(|| partial_phrase(c)),
    }
}

/// A hand-off recipe's answer as results.json holds it (`recipes`).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RecipeAnswerRecord {
    /// The runtime's label (`node 20.20.2`).
    pub runtime: String,
    /// Its adapter name (`node`).
    pub runtime_name: String,
    /// The hand-off scenario.
    pub scenario: crate::domain::Scenario,
    /// What a person wants of the scenario's recipes, in words (`take over a stale lease`).
    pub intent: String,
    /// The recipe id.
    pub recipe: String,
    /// The library version it raced (`proper-lockfile@4.1.2`), for a recipe that races one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    /// The answer in a few words, as the lists show it (`duplicated 6/10 trials (amp)`).
    pub how: String,
    /// The answer.
    pub answer: crate::verdict::recipe::RecipeAnswer,
}

/// Every runtime's hand-off recipe answers, a record per recipe, in runtime and file order.
pub fn recipe_records(results: &Results) -> Vec<RecipeAnswerRecord> {
    let mut out = Vec::new();
    for rt in results.measured_runtimes() {
        let name = results.cells.iter().find(|c| c.runtime == rt).map(|c| c.runtime_name.clone()).unwrap_or_default();
        for r in recipe_answers(results, rt) {
            out.push(RecipeAnswerRecord {
                runtime: rt.to_string(),
                runtime_name: name.clone(),
                scenario: r.scenario,
                intent: super::handoff::words(r.scenario).map_or("", |w| w.intent).to_string(),
                recipe: r.recipe.to_string(),
                library: r.library.map(str::to_string),
                how: recipe_text(&r.answer),
                answer: r.answer,
            });
        }
    }
    out
}

/// Every runtime's answers, a record per call, in runtime and table order.
pub fn records(results: &Results) -> Vec<AnswerRecord> {
    let mut out = Vec::new();
    for rt in results.measured_runtimes() {
        let name = results.cells.iter().find(|c| c.runtime == rt).map(|c| c.runtime_name.clone()).unwrap_or_default();
        for c in call_answers(results, rt) {
            let failures = c
                .answer
                .failures
                .iter()
                .map(|(s, f)| FailureRecord { source: *s, failure: *f, text: failure_text(&c, *s, *f) })
                .collect();
            out.push(AnswerRecord {
                runtime: rt.to_string(),
                runtime_name: name.clone(),
                variant: c.variant.to_string(),
                intent: c.intent,
                anti_pattern: c.anti_pattern,
                answer: AnswerData {
                    verdict: c.answer.verdict,
                    how: answer_text(&c),
                    failures,
                    condition: condition(&c),
                    needs: c.answer.unsettled.clone(),
                    against: c
                        .against
                        .iter()
                        .enumerate()
                        .filter_map(|(i, (r, slot))| {
                            Some(AgainstRecord {
                                contender: r.contenders.get(*slot)?.clone(),
                                verdict: r.race.verdict,
                                fault: against_fault(r, *slot),
                                won_every_trial: c.answer.one_sided.iter().find(|(j, _)| *j == i).map(|(_, w)| *w),
                            })
                        })
                        .collect(),
                    promise: c.promise().map(|p| PromiseRecord {
                        quote: p.quote.clone(),
                        url: p.url.clone(),
                        measured: PromiseCheck::of(&c.answer),
                    }),
                },
            });
        }
    }
    out
}

/// The list of the article's a call's answer puts it on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerList {
    /// `yes`: use it.
    Use,
    /// `no` only against other parties' calls (it held against copies of itself): use it only
    /// if every party does.
    UseIfEveryPartyDoes,
    /// `no`: don't use it.
    DontUse,
    /// Undetermined.
    Undetermined,
}

impl AnswerList {
    /// The list of answer `a`.
    pub fn of(a: &AnswerData) -> AnswerList {
        let only_against = a.failures.is_empty() && a.needs.is_empty() && !a.against.is_empty();
        match a.verdict {
            AnswerVerdict::Yes => AnswerList::Use,
            AnswerVerdict::No if only_against => AnswerList::UseIfEveryPartyDoes,
            AnswerVerdict::No => AnswerList::DontUse,
            AnswerVerdict::Undetermined => AnswerList::Undetermined,
        }
    }

    /// `use`, `use if every party does`, `don't use`, `undetermined`.
    pub fn as_str(self) -> &'static str {
        match self {
            AnswerList::Use => "use",
            AnswerList::UseIfEveryPartyDoes => "use if every party does",
            AnswerList::DontUse => "don't use",
            AnswerList::Undetermined => "undetermined",
        }
    }
}

/// Every runtime's use / don't-use lists per intent (intents with no call left out).
pub fn intent_records(answers: &[AnswerRecord]) -> Vec<IntentRecord> {
    let mut out: Vec<IntentRecord> = Vec::new();
    for a in answers {
        let i = match out.iter().position(|r| r.runtime == a.runtime && r.intent == a.intent) {
            Some(i) => i,
            None => {
                out.push(IntentRecord {
                    runtime: a.runtime.clone(),
                    intent: a.intent,
                    use_: Vec::new(),
                    use_if_every_party_does: Vec::new(),
                    dont_use: Vec::new(),
                    undetermined: Vec::new(),
                });
                out.len() - 1
            }
        };
        let list = match AnswerList::of(&a.answer) {
            AnswerList::Use => &mut out[i].use_,
            AnswerList::UseIfEveryPartyDoes => &mut out[i].use_if_every_party_does,
            AnswerList::DontUse => &mut out[i].dont_use,
            AnswerList::Undetermined => &mut out[i].undetermined,
        };
        list.push(a.variant.clone());
    }
    out
}

/// The intent × runtime grid as a Markdown table: per intent (rows) and runtime (columns), the
/// variant ids to use, `none` where the runtime has calls for the intent but none held, `—` where it has none.
/// Empty when no call has an intent.
pub fn grid_markdown(results: &Results) -> String {
    let answers = records(results);
    let intents = intent_records(&answers);
    let runtimes: Vec<&str> =
        results.measured_runtimes().into_iter().filter(|rt| intents.iter().any(|i| i.runtime == *rt)).collect();
    let rows: Vec<Intent> = Intent::ALL.into_iter().filter(|i| intents.iter().any(|r| r.intent == Some(*i))).collect();
    if rows.is_empty() {
        return String::new();
    }
    let cell = |s: &str| super::markdown::md_cell(s);
    let mut t = format!("| intent | {} |\n", runtimes.iter().map(|r| cell(r)).collect::<Vec<_>>().join(" | "));
    t.push_str(&format!("|{}\n", "---|".repeat(runtimes.len() + 1)));
    for i in rows {
        let line: Vec<String> = runtimes
            .iter()
            .map(|rt| match intents.iter().find(|r| r.runtime == *rt && r.intent == Some(i)) {
                None => "—".to_string(),
                Some(r) if r.use_.is_empty() && r.use_if_every_party_does.is_empty() => "none".to_string(),
                Some(r) => {
                    let mut names = r.use_.clone();
                    names.extend(r.use_if_every_party_does.iter().map(|v| format!("{v} (if every party does)")));
                    cell(&names.join(", "))
                }
            })
            .collect();
        t.push_str(&format!("| {} | {} |\n", i.describe(), line.join(" | ")));
    }
    t
}

/// One cell of the page's answer grid ([`grid_by_runtime`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GridCell {
    /// The first call to use, its runtime prefix dropped (`writeFileSync.wx`); `None` for
    /// `none` and `—`.
    pub call: Option<String>,
    /// What follows the call (` +12`, ` (if every party does)`), or the whole text without one
    /// (`none`: calls measured, none held; `—`: no call for the intent).
    pub rest: String,
    /// Held (a call to use), held only if every party does, failed (`none`), or no tone (`—`).
    pub tone: Option<Tone>,
}

/// The answer grid turned for a page: one row per runtime (its label and a cell per intent),
/// the intents that any runtime has as columns. A cell names the first call to use, `+N` for
/// the other calls that held, `(if every party does)` where only such calls held, `? (n
/// undetermined)` where none held and some are undetermined, `none` where the runtime has
/// calls for the intent and every one failed, `—` where it has none; `answers`
/// are `results`' [`records`]. Empty when no call has an intent.
pub fn grid_by_runtime(results: &Results, answers: &[AnswerRecord]) -> (Vec<Intent>, Vec<(String, Vec<GridCell>)>) {
    let intents = intent_records(answers);
    let runtimes: Vec<&str> =
        results.measured_runtimes().into_iter().filter(|rt| intents.iter().any(|i| i.runtime == *rt)).collect();
    let columns: Vec<Intent> =
        Intent::ALL.into_iter().filter(|i| intents.iter().any(|r| r.intent == Some(*i))).collect();
    if columns.is_empty() {
        return (columns, Vec::new());
    }
    // `node.writeFileSync.wx` → `writeFileSync.wx`: the row names the runtime already
    let call = |v: &str| Some(v.split_once('.').map_or(v, |(_, rest)| rest).to_string());
    let more = |n: usize| if n > 0 { format!(" +{n}") } else { String::new() };
    let rows = runtimes
        .into_iter()
        .map(|rt| {
            let cells = columns
                .iter()
                .map(|i| match intents.iter().find(|r| r.runtime == rt && r.intent == Some(*i)) {
                    None => GridCell { call: None, rest: "—".into(), tone: None },
                    Some(r) => match (r.use_.split_first(), r.use_if_every_party_does.split_first()) {
                        (Some((first, others)), _) => GridCell {
                            call: call(first),
                            rest: more(others.len() + r.use_if_every_party_does.len()),
                            tone: Some(Tone::Good),
                        },
                        (None, Some((first, others))) => GridCell {
                            call: call(first),
                            rest: format!("{} (if every party does)", more(others.len())),
                            tone: Some(Tone::Unsure),
                        },
                        // nothing held, but not everything failed either: the answer is open
                        (None, None) if !r.undetermined.is_empty() => GridCell {
                            call: None,
                            rest: format!("? ({} undetermined)", r.undetermined.len()),
                            tone: Some(Tone::Unsure),
                        },
                        (None, None) => GridCell { call: None, rest: "none".into(), tone: Some(Tone::Bad) },
                    },
                })
                .collect();
            (rt.to_string(), cells)
        })
        .collect();
    (columns, rows)
}

/// [`grid_by_runtime`] as a Markdown table, the calls as code spans; empty when no call has an
/// intent (`conformance docs`'s `scenario=answer-grid`).
pub fn grid_by_runtime_markdown(results: &Results) -> String {
    let (columns, rows) = grid_by_runtime(results, &records(results));
    if columns.is_empty() {
        return String::new();
    }
    let cell = |s: &str| super::markdown::md_cell(s);
    let head: Vec<&str> = columns.iter().map(|i| i.describe()).collect();
    let mut t = format!("| runtime | {} |\n|{}\n", head.join(" | "), "---|".repeat(columns.len() + 1));
    for (rt, cells) in rows {
        let line: Vec<String> = cells
            .iter()
            .map(|c| match &c.call {
                Some(call) => format!("`{call}`{}", cell(&c.rest)),
                None => cell(&c.rest),
            })
            .collect();
        t.push_str(&format!("| {} | {} |\n", cell(&rt), line.join(" | ")));
    }
    t
}

/// The calls of every runtime whose measurement contradicts their documentation's promise, as
/// a Markdown table (runtime, call, what was measured, the quote with its address); empty when
/// none does.
pub fn contradictions_markdown(results: &Results) -> String {
    let cell = |s: &str| super::markdown::md_cell(s);
    let mut rows = Vec::new();
    for rt in results.measured_runtimes() {
        for c in call_answers(results, rt) {
            let check = PromiseCheck::of(&c.answer);
            if let (Some(p), PromiseCheck::Broken | PromiseCheck::BrokenInARace) = (c.promise(), check) {
                rows.push(format!(
                    "| {} | `{}` | {}: {} | \"{}\" ({}) |\n",
                    cell(rt),
                    c.variant,
                    check.words(),
                    cell(&short_text(&c)),
                    cell(&p.quote),
                    cell(&p.url)
                ));
            }
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    format!("| runtime | call | measured | the documentation says |\n|---|---|---|---|\n{}", rows.concat())
}

/// Every measured runtime's hand-off recipe answers (the end of its [`render_runtime`] block),
/// one runtime after another, wrapped to `width` columns; empty when no runtime has a hand-off
/// cell (`conformance docs`'s `scenario=recipe-answers`).
pub fn render_recipe_answers(results: &Results, width: usize) -> String {
    results
        .measured_runtimes()
        .into_iter()
        .map(|rt| render_recipes(results, rt, width, TermStyle::PLAIN))
        .filter(|b| !b.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every measured runtime's answer block, one after another (`width` as [`render_runtime`]).
pub fn render(results: &Results, width: usize) -> String {
    render_with(results, width, TermStyle::PLAIN)
}

/// [`render`] for the terminal: wrapped to its width (at most [`ANSWER_WIDTH`]) and with the
/// list heads coloured, as `style` says.
pub fn render_styled(results: &Results, style: TermStyle) -> String {
    render_with(results, style.text_width(ANSWER_WIDTH), style)
}

fn render_with(results: &Results, width: usize, style: TermStyle) -> String {
    let blocks = results
        .measured_runtimes()
        .into_iter()
        .map(|rt| styled_runtime(results, rt, width, style))
        .filter(|b| !b.is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    if results.run_info.interrupted && !blocks.is_empty() {
        // a stopped run left rows and pairs unmeasured: its answers rest on less than it planned
        return format!("{INTERRUPTED_NOTE}\n\n{blocks}");
    }
    blocks
}

/// The answers that differ between the machines or file systems of a merged file (`run --fs`,
/// `merge`): one line per runtime and call whose verdict (yes, no, `?`) is not the same on
/// every machine that measured it, each answer ([`short_text`], the machine labels of other
/// parties taken out) followed by where it was given — the file system's name for one `run
/// --fs` made, else the machine label: `node 20.20.2 node.linkSync: yes on tmpfs, ext4; no:
/// failed on a free name on exfat`. Counts that differ under one verdict (`multiple-winners
/// 3/10` here, `5/10` there) do not make a line. Wrapped to `width`; empty when every verdict
/// agrees, or the file holds one machine.
pub fn render_by_machine(results: &Results, width: usize) -> String {
    let machines = &results.run_info.machines;
    if machines.len() < 2 {
        return String::new();
    }
    let place = |m: &super::model::MachineInfo| m.fs.made.as_ref().map_or(m.label.clone(), |f| f.kind.to_string());
    // the other parties of pairs are named with their machine: the same on every machine
    let unlabel = |text: String| machines.iter().fold(text, |t, m| t.replace(&format!(" [{}]", m.label), ""));
    // (runtime without the machine, call) → [(verdict, answer, place)], in the file's order
    type Given = (AnswerVerdict, String, String);
    let mut groups: Vec<((String, String), Vec<Given>)> = Vec::new();
    for rt in results.measured_runtimes() {
        let Some(m) = machines.iter().find(|m| rt.ends_with(&format!(" [{}]", m.label))) else { continue };
        let base = rt[..rt.len() - m.label.len() - 3].to_string();
        for c in call_answers(results, rt) {
            let key = (base.clone(), c.variant.to_string());
            let entry = (c.answer.verdict, unlabel(short_text(&c)), place(m));
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, v)) => v.push(entry),
                None => groups.push((key, vec![entry])),
            }
        }
    }
    let mut lines = Vec::new();
    for ((base, variant), given) in groups {
        if given.iter().all(|(v, _, _)| *v == given[0].0) {
            continue;
        }
        let answers: Vec<(String, String)> = given.into_iter().map(|(_, a, p)| (a, p)).collect();
        let mut by_answer: Vec<(String, Vec<String>)> = Vec::new();
        for (a, p) in answers {
            match by_answer.iter_mut().find(|(x, _)| *x == a) {
                Some((_, ps)) => ps.push(p),
                None => by_answer.push((a, vec![p])),
            }
        }
        let parts: Vec<String> = by_answer.iter().map(|(a, ps)| format!("{a} on {}", ps.join(", "))).collect();
        let line = format!("{base} {variant}: {}", parts.join("; "));
        let opts = textwrap::Options::new(width.max(40)).subsequent_indent("    ");
        lines.push(textwrap::fill(&super::table::escape_controls(&line), opts));
    }
    if lines.is_empty() {
        return String::new();
    }
    format!("where the answer depends on the file system or machine:\n{}\n", lines.join("\n"))
}

/// The line above the answers of an interrupted run.
pub const INTERRUPTED_NOTE: &str =
    "the run was interrupted: these answers rest only on what it measured before the stop (rows and pairs it did not reach are missing)";

#[cfg(test)]
mod tests {
    use super::{
        answer_text, call_answers, condition, grid_markdown, render, Results, SourceKind, ANSWER_WIDTH,
        INTERRUPTED_NOTE,
    };

    /// A race the run left out is named by what would measure it: `--races all` after a run
    /// that raced plain forms only, the race scenario after a run without it, `not raced`
    /// otherwise; other reasons keep their words.
    #[test]
    fn a_race_left_out_is_named_by_what_would_measure_it() {
        use super::{unsettled_text, unsettled_words};
        use crate::domain::RaceScope;
        use crate::verdict::answer::Unsettled;
        use crate::verdict::LeftOut;
        let race = Unsettled::LeftOut(LeftOut::Race);
        assert_eq!(unsettled_words(race, Some(RaceScope::Core)), "--races all");
        assert_eq!(unsettled_words(race, None), "no race: add race to --scenario");
        assert_eq!(unsettled_words(race, Some(RaceScope::Auto)), "not raced in this run");
        let trials = Unsettled::LeftOut(LeftOut::Trials);
        assert_eq!(unsettled_words(trials, None), unsettled_text(trials));
    }

    /// A runtime's hand-off recipes are answered after its calls, by the scenario's intent:
    /// `yes` with what it held over, `no` with its first failure and mode, a recipe the probe
    /// lacks as not in this runtime, one whose probe crashed before its first item as a fault;
    /// results.json's records say the same.
    #[test]
    fn hand_off_recipes_are_answered_by_intent_after_the_calls() {
        use crate::report::model::{CellResult, CountersResult, Scenario};
        let mut r = crate::report::fixture("base.json");
        let rt = r.measured_runtimes()[0].to_string();
        let base = r.cells.iter().find(|c| c.runtime == rt).unwrap().clone();
        let run = |pairs: &[(&str, u64)]| CountersResult {
            counters: pairs.iter().map(|(k, n)| (k.to_string(), *n)).collect(),
            ..Default::default()
        };
        let clean = [("trials", 20), ("duplicated", 0), ("unprocessed", 0), ("unrecorded", 0), ("worker_faults", 0)];
        let dup = [("trials", 10), ("duplicated", 6), ("unprocessed", 0), ("unrecorded", 0), ("worker_faults", 0)];
        let cells = [
            (
                "ledger.key-first",
                Scenario::Ledger,
                CountersResult { amplified: Some(Box::new(run(&clean))), ..run(&clean) },
            ),
            (
                "ledger.check-process-append",
                Scenario::Ledger,
                CountersResult { amplified: Some(Box::new(run(&dup))), ..run(&clean) },
            ),
            ("lease.dir-mtime", Scenario::Lease, CountersResult::default()),
            ("lease.rename-aside", Scenario::Lease, CountersResult::default()),
        ];
        for (recipe, scenario, result) in cells {
            let mut c = base.clone();
            (c.id, c.variant, c.scenario, c.result) =
                (format!("{rt}/{recipe}"), recipe.into(), scenario, CellResult::Counters(result));
            // no run in either: one the probe lacks, one whose probe crashed before its first item
            c.evidence = match recipe {
                "lease.dir-mtime" => Some("unsupported: no such recipe".into()),
                "lease.rename-aside" => Some("crashed: the probe exited before its hello".into()),
                _ => None,
            };
            r.cells.push(c);
        }
        let text = super::render_runtime(&r, &rt, ANSWER_WIDTH);
        let calls = text.find("which call to use").expect("the calls first");
        let recipes = text.find("which hand-off recipe to use").expect("then the recipes");
        assert!(calls < recipes, "{text}");
        let tail = &text[recipes..];
        assert!(
            tail.contains(
                "  use:\n    process an item once (idempotency):\n      ledger.key-first (none in 40 trials)"
            ),
            "{tail}"
        );
        assert!(tail.contains("  don't use:\n    process an item once (idempotency):\n      ledger.check-process-append (duplicated 6/10 trials (amp))"), "{tail}");
        assert!(tail.contains("  not in this runtime:\n      lease.dir-mtime\n"), "{tail}");
        assert!(
            tail.contains("  undetermined:\n      lease.rename-aside ? (a probe or the harness failed: see the cells)"),
            "a crash before the first item is a fault, not a recipe the runtime lacks: {tail}"
        );
        assert!(text.lines().all(|l| unicode_width(l) <= ANSWER_WIDTH), "{text}");
        let records = super::recipe_records(&r);
        let got: Vec<_> =
            records.iter().map(|x| (x.recipe.as_str(), x.answer.verdict.as_str(), x.how.as_str())).collect();
        assert_eq!(
            got,
            [
                ("ledger.key-first", "yes", "none in 40 trials"),
                ("ledger.check-process-append", "no", "duplicated 6/10 trials (amp)"),
                ("lease.dir-mtime", "undetermined", "? (not in this runtime)"),
                ("lease.rename-aside", "undetermined", "? (a probe or the harness failed: see the cells)"),
            ]
        );
    }

    /// An `exclusive` race against another party's call that one call won in every trial of
    /// its deciding run is not counted as held by either call: each answer names it apart and
    /// says which call won; with a win on each side it is held again.
    #[test]
    fn a_one_sided_race_against_another_call_is_not_counted_as_held() {
        use crate::verdict::answer::{AnswerVerdict, Winner};
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/linux/results.json");
        let mut r = crate::report::json::read(&path).unwrap();
        let i = r
            .against
            .iter()
            .position(|a| a.race.verdict == crate::verdict::RaceVerdict::Exclusive)
            .expect("an exclusive pair in the baseline");
        let set_wins = |r: &mut Results, wins: [usize; 3]| {
            let race = &mut r.against[i].race;
            let deciding = match race.decided_by {
                crate::verdict::RaceMode::Amplified => race.amplified.as_mut(),
                crate::verdict::RaceMode::Natural => race.natural.as_mut(),
            };
            deciding.expect("a deciding run").stats.wins_by_contender = wins.to_vec();
        };
        let sides = r.against[i].contenders.clone();
        // the call's answer in words, and how it weighs this pair: one-sided (who won), or not
        let answer_of = |r: &Results, side: usize| -> (String, Option<Winner>, AnswerVerdict) {
            let s = &sides[side];
            let c =
                call_answers(r, &s.runtime).into_iter().find(|c| c.variant == s.variant).expect("the call's answer");
            let j = c.against.iter().position(|(a, _)| std::ptr::eq(*a, &r.against[i])).expect("the pair");
            let won = c.answer.one_sided.iter().find(|(k, _)| *k == j).map(|(_, w)| *w);
            (answer_text(&c), won, c.answer.verdict)
        };
        set_wins(&mut r, [60, 0, 40]);
        let (first, won, _) = answer_of(&r, 0);
        assert_eq!(won, Some(Winner::ThisCall), "{first}");
        assert!(first.contains("one-sided against") && first.contains("this call won 100/"), "{first}");
        let (second, won, _) = answer_of(&r, 1);
        assert_eq!(won, Some(Winner::OtherCall), "{second}");
        assert!(second.contains("that call won 100/"), "{second}");
        let line =
            super::super::table::against_lines(&r).into_iter().find(|l| l.contains("one-sided")).expect("a line");
        assert!(line.contains(" won all 100"), "{line}");
        // a win each: contested, held by both
        set_wins(&mut r, [59, 1, 40]);
        for side in [0, 1] {
            let (text, won, verdict) = answer_of(&r, side);
            assert_eq!(won, None, "{text}");
            if verdict == AnswerVerdict::Yes {
                assert!(text.contains("(against itself and "), "{text}");
            }
        }
    }

    #[test]
    fn the_fixture_answers_every_call_and_wraps_to_the_width() {
        let r = crate::report::fixture("base.json");
        let text = render(&r, ANSWER_WIDTH);
        assert!(!text.is_empty());
        for line in text.lines() {
            assert!(unicode_width(line) <= ANSWER_WIDTH, "too wide: {line}");
        }
        for rt in r.measured_runtimes() {
            for c in call_answers(&r, rt) {
                let t = answer_text(&c);
                assert!(t == "yes" || t.starts_with("no: ") || t.starts_with("? ("), "{t}");
            }
        }
    }

    #[test]
    fn the_grid_has_a_row_per_intent_and_a_column_per_runtime() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/linux/results.json");
        let r = crate::report::json::read(&path).unwrap();
        let grid = grid_markdown(&r);
        let lines: Vec<&str> = grid.lines().collect();
        let runtimes = r.measured_runtimes().len();
        assert!(lines[0].starts_with("| intent | node "), "{grid}");
        // every line has the intent column and one per runtime: runtimes + 2 pipes outside cells
        for l in &lines {
            assert_eq!(l.replace("\\|", "").matches('|').count(), runtimes + 2, "{l}");
        }
        let lock_file = lines.iter().find(|l| l.starts_with("| create a lock file |")).expect("a lock-file row");
        assert!(
            lock_file.contains("node.writeFileSync.wx") && !lock_file.contains("node.writeFileSync.w,"),
            "{lock_file}"
        );
        // the fixture predates intents: no grid
        assert!(grid_markdown(&crate::report::fixture("base.json")).is_empty());
    }

    /// The page's grid: a row per runtime, a column per intent; a cell's first call held and
    /// counts the others that held, without the runtime's prefix; `none` where none held.
    #[test]
    fn the_page_grid_has_a_row_per_runtime_and_names_one_call_per_cell() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/linux/results.json");
        let r = crate::report::json::read(&path).unwrap();
        let grid = super::grid_by_runtime_markdown(&r);
        let lines: Vec<&str> = grid.lines().collect();
        assert!(lines[0].starts_with("| runtime | create a lock file | create a lock directory |"), "{grid}");
        assert_eq!(lines.len(), r.measured_runtimes().len() + 2, "{grid}");
        let node = lines.iter().find(|l| l.starts_with("| node ")).expect("a node row");
        let lock_file = node.split(" | ").nth(1).unwrap();
        // the first call held, the count is of the others that held (from the same records)
        let records = super::intent_records(&super::records(&r));
        let held = records
            .iter()
            .find(|i| i.runtime.starts_with("node ") && i.intent == Some(super::Intent::LockFile))
            .unwrap();
        let first = held.use_[0].trim_start_matches("node.");
        let others = held.use_.len() - 1 + held.use_if_every_party_does.len();
        assert_eq!(lock_file, format!("`{first}` +{others}"), "{node}");
        assert!(!node.contains("node.writeFileSync"), "no runtime prefix: {node}");
        assert!(grid.contains("| none |") || grid.contains("| none"), "some intent has no call that held: {grid}");
        assert!(super::grid_by_runtime_markdown(&crate::report::fixture("base.json")).is_empty());
    }

    /// A race against another party's call that an interrupt cut short shows a failure it saw,
    /// never that the call held; an interrupted run says so above its answers.
    #[test]
    fn an_interrupted_pair_does_not_count_as_held() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/linux/results.json");
        let mut r = crate::report::json::read(&path).unwrap();
        let rt = r.measured_runtimes()[0].to_string();
        let held = |r: &Results| {
            let calls = call_answers(r, &rt);
            let c = calls.iter().find(|c| c.variant == "node.writeFileSync.wx").unwrap();
            c.answer.holds_against.len()
        };
        let before = held(&r);
        assert!(before > 0, "the baseline raced node.writeFileSync.wx against others");
        for a in r.against.iter_mut().filter(|a| a.contenders.iter().any(|s| s.variant == "node.writeFileSync.wx")) {
            a.race.interrupted = true;
        }
        assert_eq!(held(&r), 0);
        assert!(!render(&r, ANSWER_WIDTH).starts_with(INTERRUPTED_NOTE));
        r.run_info.interrupted = true;
        assert!(render(&r, ANSWER_WIDTH).starts_with(INTERRUPTED_NOTE));
    }

    /// A call measured only with another source kind than its own says so beside its `yes`.
    #[test]
    fn a_call_measured_with_another_source_kind_only_says_so() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/linux/results.json");
        let mut r = crate::report::json::read(&path).unwrap();
        // node.existsSync+renameSync held only with a dir source: keep only that row
        let rt = r.measured_runtimes()[0].to_string();
        r.cells.retain(|c| !(c.runtime == rt && c.variant == "node.existsSync+renameSync" && c.source.is_none()));
        r.cells.retain(|c| {
            !(c.runtime == rt && c.variant == "node.existsSync+renameSync" && c.source == Some(SourceKind::EmptyDir))
        });
        r.against.clear();
        let calls = call_answers(&r, &rt);
        let c = calls.iter().find(|c| c.variant == "node.existsSync+renameSync").unwrap();
        assert_eq!(answer_text(c), "yes (only a dir source measured)");
        assert_eq!(condition(c).as_deref(), Some("only a dir source measured"));
    }

    fn unicode_width(s: &str) -> usize {
        s.chars().count()
    }
}

//! `conformance docs`: tables in Markdown documents that regenerate from a results file.
//!
//! A document marks each generated table with a pair of HTML comments, each on a line of its
//! own:
//!
//! ```text
//! <!-- conformance:table runtime=node,bun scenario=second-comer variant=node.writeFileSync.* -->
//! (generated: replaced on every run)
//! <!-- /conformance:table -->
//! ```
//!
//! A figure inside a sentence is marked inline, on one line ([`value`]):
//! `<!-- conformance:value runtime=node variant=node.cpSync.errorOnExist fact=natural -->4/10<!-- /conformance:value -->`.
//!
//! This module is pure: it finds the markers ([`parse`], [`parse_all`]), renders a marker's tables from a
//! [`Results`] with the Markdown renderer of `summary.md` ([`render`]), and puts them between
//! the markers ([`splice`]). Reading and writing files is the caller's (`app::docs::cmd_docs`).

pub mod value;

use std::ops::Range;

use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::report::markdown::{self, Columns};
use crate::report::model::{Results, Scenario, TargetState};

/// The start of an opening marker, up to its keys.
pub const OPEN: &str = "<!-- conformance:table";

/// The closing marker, alone on its line.
pub const CLOSE: &str = "<!-- /conformance:table -->";

/// The keys an opening marker may hold, as `KEY=VALUE` separated by spaces.
pub const KEYS: [&str; 6] = ["runtime", "scenario", "variant", "target", "call", "results"];

/// The results file a marker without `results=` and a `docs` call without `--results` use:
/// the committed baseline of this project, relative to the working folder.
pub const DEFAULT_RESULTS: &str = "reports/linux/results.json";

/// A problem with a document's markers: the 1-based line it is on and what is wrong (naming
/// the key at fault, where there is one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkerError {
    /// 1-based line of the document.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for MarkerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// Which scenarios a marker's tables show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scenarios {
    /// One table per runtime (variant × target, race): the second comer's columns, the race
    /// column, or both (then with *safe as a lock*).
    Runtime {
        /// The second-comer target columns.
        second_comer: bool,
        /// The race column.
        race: bool,
    },
    /// One hand-off table (recipe × runtime): `publish`, `done-marker` or `claim`.
    Handoff(Scenario),
    /// `scenario=answers`: the answer lists (use / don't use by intent) of the selected
    /// runtimes, as `report --answers` prints them, in a text block.
    Answers,
    /// `scenario=recipe-answers`: the hand-off recipe answer lists (use / don't use by the
    /// scenario's intent) of the selected runtimes, as the end of each runtime's block in
    /// `report --answers`, in a text block.
    RecipeAnswers,
    /// `scenario=answer-grid`: one row per runtime, one column per intent, the first call to
    /// use in each (a Markdown table).
    AnswerGrid,
    /// `scenario=terminal`: what `conformance report FILE` prints for the selected runtimes in
    /// a terminal [`TERMINAL_WIDTH`] columns wide, without colour (the answer lists, then the
    /// tables with their race lines and notes), in a text block: a run's console output,
    /// regenerated from its results file.
    Terminal,
    /// `scenario=cross-race`: what `conformance race` prints on stdout (its contenders' table,
    /// the verdict of each mode and the control), from the `cross-race.json` that `race --out`
    /// wrote, in a text block.
    CrossRace,
    /// `scenario=timings`: how long whole runs take, from the summary
    /// `benches/default-run.sh` writes ([`crate::report::timings`]): a Markdown table and where
    /// the time went.
    Timings,
    /// `scenario=race-speed`: one race cell run by a C floor, a plain driver and the product,
    /// natural and amplified, side by side, from the summary `benches/floor.sh` writes
    /// ([`crate::report::race_speed`]).
    RaceSpeed,
}

/// What a marker's file holds: a results file for most kinds, a `cross-race.json` for
/// `scenario=cross-race`, a benchmark summary for `scenario=timings` and `scenario=race-speed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FileKind {
    /// `results.json` ([`Results`]).
    Results,
    /// `cross-race.json` ([`crate::cross::CrossRace`]).
    CrossRace,
    /// A benchmark summary ([`crate::report::timings::Timings`]).
    Timings,
    /// A race-speed summary ([`crate::report::race_speed::RaceSpeed`]).
    RaceSpeed,
}

/// A marker's file, read as its [`FileKind`] says.
#[derive(Debug, Clone)]
pub enum Loaded {
    /// A results file.
    Results(Box<Results>),
    /// A cross-runtime race.
    CrossRace(Box<crate::cross::CrossRace>),
    /// A benchmark summary.
    Timings(crate::report::timings::Timings),
    /// A race-speed summary.
    RaceSpeed(crate::report::race_speed::RaceSpeed),
}

impl Scenarios {
    /// The kind of file this marker's tables come from.
    pub fn file_kind(&self) -> FileKind {
        match self {
            Scenarios::CrossRace => FileKind::CrossRace,
            Scenarios::Timings => FileKind::Timings,
            Scenarios::RaceSpeed => FileKind::RaceSpeed,
            _ => FileKind::Results,
        }
    }
}

/// The terminal width, in columns, `scenario=terminal` and `scenario=cross-race` render at: a
/// README's console example as a 120-column terminal shows it.
pub const TERMINAL_WIDTH: usize = 120;

/// How the console examples are rendered: [`TERMINAL_WIDTH`] columns, no colour.
const CONSOLE: crate::report::style::TermStyle =
    crate::report::style::TermStyle { width: Some(TERMINAL_WIDTH), colour: false };

/// What one marker selects from a results file, parsed from its keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selector {
    /// `runtime=`: adapter names (`node`, `coreclr`, …); empty for every runtime measured.
    pub runtimes: Vec<String>,
    /// `scenario=`: default `second-comer,race`.
    pub scenarios: Scenarios,
    /// `variant=`: variant (or recipe) id globs; empty for every variant.
    pub variants: Vec<String>,
    /// `target=`: the target-state columns; empty for every state the results hold.
    pub targets: Vec<TargetState>,
    /// `call=yes|no`: whether tables show the call column, or a hand-off table the recipe's
    /// steps (default yes).
    pub call: bool,
    /// `results=`: a results file for this marker, relative to the document.
    pub results: Option<String>,
}

/// One generated region of a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    /// 1-based line of the opening marker.
    pub line: usize,
    /// The opening marker as written (trimmed), for messages.
    pub open: String,
    /// What it selects.
    pub selector: Selector,
    /// Byte range of the text between the opening marker's line and the closing marker's
    /// line (what [`splice`] replaces).
    pub content: Range<usize>,
    /// The line ending of the opening marker's line (`\n` or `\r\n`); generated text uses it.
    pub eol: &'static str,
}

/// Finds the markers of a Markdown document, in order. Lines inside fenced code blocks
/// (```` ``` ```` or `~~~`) and indented code blocks are not markers, so a document can show
/// the syntax.
///
/// Errors ([`MarkerError`], naming the line): an opening marker that is not closed before the
/// end or before the next opening one (markers do not nest; the opening marker's line is
/// named), a closing marker without an opening one, another `<!-- conformance:…` comment, a
/// marker written without its spaces (`<!--conformance:table …-->`), an opening marker that
/// does not end with `-->` on its line, or a key that [`Selector::parse`] refuses.
pub fn parse(text: &str) -> Result<Vec<Marker>, MarkerError> {
    parse_all(text).map(|(tables, _)| tables)
}

/// [`parse`], and the inline value markers of the document's prose ([`value`]), each in
/// document order. A line outside fences, indented code and table markers is scanned for value
/// markers ([`value::scan_line`]).
///
/// Errors: those of [`parse`], and those of [`value::scan_line`] with the line.
pub fn parse_all(text: &str) -> Result<(Vec<Marker>, Vec<value::ValueMarker>), MarkerError> {
    let mut markers = Vec::new();
    let mut values = Vec::new();
    // whether the line before was blank, and whether this line continues an indented code block
    let (mut blank_before, mut in_indented_code) = (true, false);
    // (line, open text, selector, content start, eol) of the marker not closed yet
    let mut open: Option<(usize, String, Selector, usize, &'static str)> = None;
    let mut fence: Option<(char, usize)> = None;
    let mut offset = 0;
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        let line_no = i + 1;
        let start = offset;
        offset += raw.len();
        let eol = if raw.ends_with("\r\n") { "\r\n" } else { "\n" };
        let line = raw.trim_end_matches(['\n', '\r']);
        // between a marker pair everything is generated: a fence there (in a stale table) must
        // not hide the closing marker
        if let Some(f) = fence_of(line).filter(|_| open.is_none()) {
            match fence {
                None => fence = Some(f),
                Some((c, n)) if f.0 == c && f.1 >= n && line.trim_start().trim_start_matches(c).trim().is_empty() => {
                    fence = None
                }
                Some(_) => {}
            }
            (blank_before, in_indented_code) = (false, false);
            continue;
        }
        if fence.is_some() {
            (blank_before, in_indented_code) = (line.trim().is_empty(), false);
            continue;
        }
        // outside a marker pair, an indented code block (four spaces or a tab, CommonMark
        // 4.4) shows text, so a marker there is an example (a marker inside an HTML comment
        // cannot be one: its own `-->` ends the comment)
        let indented = line.starts_with('\t') || line.starts_with("    ");
        let after_blank = std::mem::replace(&mut blank_before, line.trim().is_empty());
        // an indented code block cannot interrupt a paragraph (CommonMark 4.4): an indented
        // line right after text (a paragraph's or a list item's continuation) is prose, whose
        // values are read
        in_indented_code = indented && (after_blank || in_indented_code);
        if open.is_none() && indented {
            if !in_indented_code {
                let found =
                    value::scan_line(line, start, line_no).map_err(|message| MarkerError { line: line_no, message })?;
                values.extend(found);
            }
            continue;
        }
        if open.is_none() {
            let found =
                value::scan_line(line, start, line_no).map_err(|message| MarkerError { line: line_no, message })?;
            if !found.is_empty() {
                values.extend(found);
                continue;
            }
        }
        let t = line.trim();
        if t == CLOSE {
            let Some((l, o, selector, content_start, eol)) = open.take() else {
                return Err(MarkerError {
                    line: line_no,
                    message: format!("{CLOSE} without an opening {OPEN} … --> before it"),
                });
            };
            markers.push(Marker { line: l, open: o, selector, content: content_start..start, eol });
        } else if let Some(rest) = t.strip_prefix(OPEN).filter(|r| r.is_empty() || r.starts_with(char::is_whitespace)) {
            // the fault is the unclosed marker (the next one may be an example in a fence,
            // which is not skipped between a marker pair): name its line
            if let Some((l, ..)) = &open {
                return Err(MarkerError {
                    line: *l,
                    message: format!(
                        "this table marker has no {CLOSE} before the next one opens at line {line_no} (markers do not nest)"
                    ),
                });
            }
            let Some(keys) = rest.trim_end().strip_suffix("-->") else {
                return Err(MarkerError {
                    line: line_no,
                    message: format!("the table marker must end with --> on its line: {t}"),
                });
            };
            let selector = Selector::parse(keys).map_err(|message| MarkerError { line: line_no, message })?;
            open = Some((line_no, t.to_string(), selector, offset, eol));
        } else if let Some(body) = t.strip_prefix("<!--").map(str::trim_start) {
            if body.strip_prefix('/').unwrap_or(body).starts_with("conformance:") {
                // `<!-- conformance:… -->` with its spaces is a marker of another name
                let spaced = t.starts_with("<!-- ") && !t.starts_with("<!--  ") && t.ends_with(" -->");
                let what = if spaced {
                    "unknown conformance marker"
                } else {
                    "malformed conformance marker (one space after <!-- and before -->)"
                };
                return Err(MarkerError {
                    line: line_no,
                    message: format!(
                        "{what} (known: {OPEN} KEY=VALUE … --> and {CLOSE}; {} KEY=VALUE … -->VALUE{} on one line): {t}",
                        value::OPEN,
                        value::CLOSE
                    ),
                });
            }
        }
    }
    if let Some((l, ..)) = open {
        return Err(MarkerError { line: l, message: format!("this table marker has no {CLOSE} after it") });
    }
    Ok((markers, values))
}

/// A fence line's character and length (three or more backticks or tildes after at most three
/// spaces), else `None`.
fn fence_of(line: &str) -> Option<(char, usize)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let t = &line[indent..];
    let c = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = t.chars().take_while(|x| *x == c).count();
    (n >= 3).then_some((c, n))
}

impl Selector {
    /// Parses an opening marker's keys (`runtime=node,bun scenario=race …`, the text between
    /// `conformance:table` and `-->`).
    ///
    /// Errors: a message naming the key for an unknown or repeated key, a token without `=`, an
    /// empty value, an unknown runtime name, scenario, target state or `call` value, an invalid
    /// glob, hand-off scenarios mixed with others, or `target=` without the second comer.
    pub fn parse(keys: &str) -> Result<Selector, String> {
        let mut sel = Selector {
            runtimes: Vec::new(),
            scenarios: Scenarios::Runtime { second_comer: true, race: true },
            variants: Vec::new(),
            targets: Vec::new(),
            call: true,
            results: None,
        };
        let mut seen: Vec<&str> = Vec::new();
        for token in keys.split_whitespace() {
            let Some((key, value)) = token.split_once('=') else {
                return Err(format!("'{token}' is not KEY=VALUE (keys: {})", KEYS.join(", ")));
            };
            if !KEYS.contains(&key) {
                return Err(format!("unknown key '{key}' (known: {})", KEYS.join(", ")));
            }
            if seen.contains(&key) {
                return Err(format!("key '{key}' is given twice"));
            }
            seen.push(key);
            if value.is_empty() {
                return Err(format!("key '{key}' has an empty value"));
            }
            let items = || value.split(',').map(str::trim);
            if items().any(str::is_empty) {
                return Err(format!("key '{key}': '{value}' has an empty item"));
            }
            match key {
                "runtime" => {
                    for name in items() {
                        let a = crate::runtime::adapter(name).ok_or_else(|| {
                            format!(
                                "key 'runtime': unknown runtime '{name}' (known: {})",
                                crate::runtime::known_names()
                            )
                        })?;
                        sel.runtimes.push(a.name().to_string());
                    }
                }
                "scenario" => sel.scenarios = parse_scenarios(value)?,
                "variant" => {
                    for g in items() {
                        Glob::new(g).map_err(|e| format!("key 'variant': '{g}' is not a valid glob: {e}"))?;
                        sel.variants.push(g.to_string());
                    }
                }
                "target" => {
                    for t in items() {
                        let state = TargetState::parse(t).ok_or_else(|| {
                            let known: Vec<&str> = TargetState::ALL.iter().map(|t| t.as_str()).collect();
                            format!("key 'target': unknown target state '{t}' (known: {})", known.join(", "))
                        })?;
                        if !sel.targets.contains(&state) {
                            sel.targets.push(state);
                        }
                    }
                }
                "call" => {
                    sel.call = match value {
                        "yes" => true,
                        "no" => false,
                        _ => return Err(format!("key 'call': '{value}' is not yes or no")),
                    }
                }
                _ => sel.results = Some(value.to_string()),
            }
        }
        if sel.scenarios.file_kind() != FileKind::Results {
            let kind = scenario_words(&sel.scenarios);
            if let Some(key) = seen.iter().find(|k| !matches!(**k, "scenario" | "results")) {
                return Err(format!("key '{key}' does not apply to scenario={kind}: its file holds one table"));
            }
            if sel.results.is_none() {
                return Err(format!("scenario={kind} needs results=FILE (a file of its own, not a results.json)"));
            }
        }
        if !sel.targets.is_empty() && !matches!(sel.scenarios, Scenarios::Runtime { second_comer: true, .. }) {
            return Err("key 'target' selects second-comer columns: the scenario must include second-comer".into());
        }
        Ok(sel)
    }

    fn variant_set(&self) -> Option<GlobSet> {
        if self.variants.is_empty() {
            return None;
        }
        let mut b = GlobSetBuilder::new();
        for g in &self.variants {
            b.add(Glob::new(g).expect("checked when parsed"));
        }
        Some(b.build().expect("valid globs build"))
    }
}

/// `scenario=`'s value: `second-comer`, `race` or both, or exactly one hand-off scenario.
fn parse_scenarios(value: &str) -> Result<Scenarios, String> {
    let known = || {
        Scenario::ALL.map(Scenario::as_str).join(", ")
            + ", answers, recipe-answers, answer-grid, terminal, cross-race, timings, race-speed"
    };
    let (mut second_comer, mut race, mut handoff) = (false, false, Vec::new());
    for s in value.split(',').map(str::trim) {
        match s {
            "second-comer" => second_comer = true,
            "race" => race = true,
            s if Scenario::parse(s).is_some_and(Scenario::is_handoff) => handoff.extend(Scenario::parse(s)),
            "answers" if value.trim() == "answers" => return Ok(Scenarios::Answers),
            "answers" => return Err("key 'scenario': answers is a table kind of its own: give it alone".into()),
            "recipe-answers" if value.trim() == "recipe-answers" => return Ok(Scenarios::RecipeAnswers),
            "answer-grid" if value.trim() == "answer-grid" => return Ok(Scenarios::AnswerGrid),
            "terminal" if value.trim() == "terminal" => return Ok(Scenarios::Terminal),
            "cross-race" if value.trim() == "cross-race" => return Ok(Scenarios::CrossRace),
            "timings" if value.trim() == "timings" => return Ok(Scenarios::Timings),
            "race-speed" if value.trim() == "race-speed" => return Ok(Scenarios::RaceSpeed),
            "cross-race" | "timings" | "race-speed" => {
                return Err(format!("key 'scenario': {s} is a table kind of its own: give it alone"))
            }
            "terminal" => return Err("key 'scenario': terminal is a table kind of its own: give it alone".into()),
            "answer-grid" => return Err("key 'scenario': answer-grid is a table kind of its own: give it alone".into()),
            "recipe-answers" => {
                return Err("key 'scenario': recipe-answers is a table kind of its own: give it alone".into())
            }
            _ => return Err(format!("key 'scenario': unknown scenario '{s}' (known: {})", known())),
        }
    }
    match handoff.as_slice() {
        [] => Ok(Scenarios::Runtime { second_comer, race }),
        [one] if !second_comer && !race => Ok(Scenarios::Handoff(*one)),
        _ => Err(format!(
            "key 'scenario': '{value}' mixes table kinds; give second-comer and/or race, or one hand-off scenario (one marker per table kind)"
        )),
    }
}

/// The tables `sel` selects from `results`, as Markdown ending in a newline: for runtime
/// scenarios one table per runtime row label, each under a bold line naming it (`**node
/// 20.20.2**`); for a hand-off scenario its recipe × runtime table. The rows, columns and
/// words are those of `summary.md` ([`markdown::runtime_table`], [`markdown::handoff_table`]).
///
/// Errors: a message naming the key when the selection holds no cell (a runtime, variant glob
/// or scenario the results do not have), or a target state or race column the selected cells
/// do not have.
pub fn render(results: &Results, sel: &Selector) -> Result<String, String> {
    let globs = sel.variant_set();
    let wanted = |s: Scenario| match sel.scenarios {
        // both kinds of cell make a runtime's rows: safe as a lock is judged from all of them
        Scenarios::Runtime { .. } | Scenarios::Answers | Scenarios::AnswerGrid => {
            matches!(s, Scenario::SecondComer | Scenario::Race)
        }
        Scenarios::Handoff(h) => s == h,
        Scenarios::RecipeAnswers => s.is_handoff(),
        Scenarios::Terminal => true,
        Scenarios::CrossRace | Scenarios::Timings | Scenarios::RaceSpeed => false,
    };
    if sel.scenarios.file_kind() != FileKind::Results {
        return Err(format!("scenario={} is not rendered from a results file", scenario_words(&sel.scenarios)));
    }
    let mut sub = Results {
        schema: results.schema,
        run_info: results.run_info.clone(),
        cells: Vec::new(),
        // a pair is kept where a selected runtime takes part
        against: results
            .against
            .iter()
            .filter(|a| sel.runtimes.is_empty() || a.contenders.iter().any(|s| sel.runtimes.contains(&s.runtime_name)))
            .cloned()
            .collect(),
    };
    let by_runtime: Vec<_> = results
        .cells
        .iter()
        .filter(|c| sel.runtimes.is_empty() || sel.runtimes.contains(&c.runtime_name))
        .filter(|c| wanted(c.scenario))
        .collect();
    if by_runtime.is_empty() {
        return Err(format!(
            "the results hold no {} cell{}",
            scenario_words(&sel.scenarios),
            if sel.runtimes.is_empty() { String::new() } else { format!(" of runtime={}", sel.runtimes.join(",")) }
        ));
    }
    // every runtime and glob named must select something: a table must not vanish quietly
    if let Some(rt) = sel.runtimes.iter().find(|rt| !by_runtime.iter().any(|c| &c.runtime_name == *rt)) {
        return Err(format!("runtime={rt}: the results hold no {} cell of it", scenario_words(&sel.scenarios)));
    }
    for g in &sel.variants {
        let m = Glob::new(g).expect("checked when parsed").compile_matcher();
        if !by_runtime.iter().any(|c| m.is_match(&c.variant)) {
            return Err(format!(
                "variant={g} matches no variant of the selected {} cells",
                scenario_words(&sel.scenarios)
            ));
        }
    }
    sub.cells =
        by_runtime.into_iter().filter(|c| globs.as_ref().is_none_or(|g| g.is_match(&c.variant))).cloned().collect();
    let (second_comer, race) = match sel.scenarios {
        Scenarios::Handoff(h) => {
            return Ok(markdown::handoff_table(&sub, h, sel.call).expect("the selection holds cells of the scenario"));
        }
        Scenarios::Answers => {
            let text = crate::report::answers::render(&sub, crate::report::answers::ANSWER_WIDTH);
            return Ok(format!("```text\n{text}```\n"));
        }
        Scenarios::RecipeAnswers => {
            let text = crate::report::answers::render_recipe_answers(&sub, crate::report::answers::ANSWER_WIDTH);
            return Ok(format!("```text\n{text}```\n"));
        }
        Scenarios::AnswerGrid => return Ok(crate::report::answers::grid_by_runtime_markdown(&sub)),
        Scenarios::Terminal => {
            // as `report` prints it, at a fixed width and without colour
            let text = crate::report::table::render_with_answers(&sub, CONSOLE);
            return Ok(format!("```text\n{}\n```\n", text.trim_end()));
        }
        Scenarios::Runtime { second_comer, race } => (second_comer, race),
        Scenarios::CrossRace | Scenarios::Timings | Scenarios::RaceSpeed => {
            unreachable!("refused above: not from a results file")
        }
    };
    let have = sub.targets();
    if let Some(t) = sel.targets.iter().find(|t| !have.contains(t)) {
        let have: Vec<&str> = have.iter().map(|t| t.as_str()).collect();
        return Err(format!(
            "target={}: the selected cells have no second comer against it (they have: {})",
            t.as_str(),
            if have.is_empty() { "none".to_string() } else { have.join(", ") }
        ));
    }
    if second_comer && have.is_empty() {
        return Err("scenario=second-comer: the selected cells have no second comer".into());
    }
    if race && !sub.has_races() {
        return Err("scenario=race: the selected cells have no race".into());
    }
    let columns = Columns {
        call: sel.call,
        targets: second_comer.then(|| sel.targets.clone()),
        race,
        safe: second_comer && race,
    };
    let tables: Vec<String> = sub
        .measured_runtimes()
        .into_iter()
        .filter(|rt| !sub.rows(rt).is_empty())
        .map(|rt| format!("**{}**\n\n{}", markdown::md_escape(rt), markdown::runtime_table(&sub, rt, &columns)))
        .collect();
    Ok(tables.join("\n"))
}

fn scenario_words(s: &Scenarios) -> String {
    match s {
        Scenarios::Runtime { .. } | Scenarios::Answers | Scenarios::AnswerGrid => "second-comer or race".into(),
        Scenarios::RecipeAnswers => "hand-off".into(),
        Scenarios::Handoff(h) => h.as_str().into(),
        Scenarios::Terminal => "measured".into(),
        Scenarios::CrossRace => "cross-race".into(),
        Scenarios::Timings => "timings".into(),
        Scenarios::RaceSpeed => "race-speed".into(),
    }
}

/// The tables `sel` selects from `loaded`, as Markdown ending in a newline: [`render`] for a
/// results file; for `scenario=cross-race` what `conformance race` prints on stdout in a
/// terminal [`TERMINAL_WIDTH`] columns wide, without colour
/// ([`crate::cross::CrossRace::render_styled`]), in a text block; for `scenario=timings`
/// [`crate::report::timings::markdown`]; for `scenario=race-speed`
/// [`crate::report::race_speed::markdown`].
///
/// Errors: those of [`render`]; a file of another kind than the marker's (the caller reads
/// each file as [`Scenarios::file_kind`] says, so this is a caller's mistake, reported).
pub fn render_loaded(loaded: &Loaded, sel: &Selector) -> Result<String, String> {
    match (loaded, &sel.scenarios) {
        (Loaded::Results(r), s) if s.file_kind() == FileKind::Results => render(r, sel),
        (Loaded::CrossRace(c), Scenarios::CrossRace) => {
            // as `race` prints it in a terminal of the README's width, without colour
            Ok(format!("```text\n{}\n```\n", c.render_styled(CONSOLE).trim_end()))
        }
        (Loaded::Timings(t), Scenarios::Timings) => Ok(crate::report::timings::markdown(t)),
        (Loaded::RaceSpeed(r), Scenarios::RaceSpeed) => Ok(crate::report::race_speed::markdown(r)),
        _ => Err(format!("scenario={}: the file is of another kind", scenario_words(&sel.scenarios))),
    }
}

/// The text that goes between a marker pair: a blank line, `tables` (which end in a newline),
/// a blank line — so that the comments and the tables are separate Markdown blocks — with
/// every line ending in `eol`.
pub fn block(tables: &str, eol: &str) -> String {
    let body = if eol == "\n" { tables.to_string() } else { tables.replace('\n', eol) };
    format!("{eol}{body}{eol}")
}

/// `text` with each marker's content replaced by its new text (`(content range, new text)`,
/// in document order, as [`parse`] returns the ranges).
pub fn splice(text: &str, blocks: &[(Range<usize>, String)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (range, new) in blocks {
        out.push_str(&text[at..range.start]);
        out.push_str(new);
        at = range.end;
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::{block, parse, render, splice, Results, Scenario, Selector};

    fn base() -> Results {
        crate::report::fixture("base.json")
    }

    /// Regenerates every marker of `text` from `r` (what `docs` does, without files).
    fn regenerate(text: &str, r: &Results) -> Result<String, String> {
        let markers = parse(text).map_err(|e| e.to_string())?;
        let blocks = markers
            .iter()
            .map(|m| Ok((m.content.clone(), block(&render(r, &m.selector)?, m.eol))))
            .collect::<Result<Vec<_>, String>>()?;
        Ok(splice(text, &blocks))
    }

    const DOC: &str = "# Title\n\nIntro.\n\n<!-- conformance:table runtime=node variant=node.writeFileSync.* -->\nstale\n<!-- /conformance:table -->\n\nAfter.\n";

    #[test]
    fn replaces_the_content_between_markers_and_nothing_else() {
        let out = regenerate(DOC, &base()).unwrap();
        assert!(out.starts_with("# Title\n\nIntro.\n\n<!-- conformance:table runtime=node variant=node.writeFileSync.* -->\n\n**node 20"), "{out}");
        assert!(out.ends_with("\n\n<!-- /conformance:table -->\n\nAfter.\n"), "{out}");
        assert!(!out.contains("stale"));
        assert!(
            out.contains(
                "| node.writeFileSync.wx | `fs.writeFileSync(p, data, {flag:'wx'})` | acquired | refused EEXIST |"
            ),
            "{out}"
        );
        insta::assert_snapshot!(out);
    }

    #[test]
    fn an_answers_marker_holds_the_answer_lists_of_its_runtimes() {
        let doc = "<!-- conformance:table runtime=node scenario=answers -->\nstale\n<!-- /conformance:table -->\n";
        let out = regenerate(doc, &base()).unwrap();
        assert!(out.contains("```text\nnode 20"), "{out}");
        assert!(out.contains("which call to use") && out.contains("  use:"), "{out}");
        assert!(!out.contains("stale"));
        let e = Selector::parse("scenario=answers,race").unwrap_err();
        assert!(e.contains("answers is a table kind of its own"), "{e}");
    }

    #[test]
    fn running_twice_changes_nothing() {
        let once = regenerate(DOC, &base()).unwrap();
        assert_eq!(regenerate(&once, &base()).unwrap(), once);
        let crlf = DOC.replace('\n', "\r\n");
        let once = regenerate(&crlf, &base()).unwrap();
        assert_eq!(regenerate(&once, &base()).unwrap(), once);
    }

    #[test]
    fn crlf_documents_keep_crlf() {
        let crlf = DOC.replace('\n', "\r\n");
        let out = regenerate(&crlf, &base()).unwrap();
        assert!(!out.replace("\r\n", "").contains('\n'), "a bare LF in {out:?}");
        assert_eq!(out.replace("\r\n", "\n"), regenerate(DOC, &base()).unwrap());
    }

    #[test]
    fn a_marker_without_its_end_is_refused_with_its_line() {
        let e = parse("a\n<!-- conformance:table runtime=node -->\nb\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("no <!-- /conformance:table --> after it"), "{e}");
        let e = parse("a\n\n<!-- /conformance:table -->\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("without an opening"), "{e}");
        let e = parse("<!-- conformance:table runtime=node\n").unwrap_err();
        assert!(e.message.contains("must end with -->"), "{e}");
    }

    #[test]
    fn nested_markers_are_refused() {
        let text = "<!-- conformance:table runtime=node -->\n<!-- conformance:table runtime=bun -->\n<!-- /conformance:table -->\n<!-- /conformance:table -->\n";
        let e = parse(text).unwrap_err();
        assert_eq!(e.line, 1, "the unclosed marker's line");
        assert!(e.message.contains("before the next one opens at line 2"), "{e}");
        // the next opening one is an example in a fence below an unclosed marker: the
        // unclosed marker is the fault, not the example
        let text = "# T\n\n<!-- conformance:table runtime=node -->\nstale\n\n```text\n<!-- conformance:table runtime=bun -->\n<!-- /conformance:table -->\n```\n";
        let e = parse(text).unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        assert!(e.message.contains("no <!-- /conformance:table -->"), "{e}");
    }

    #[test]
    fn values_in_sentences_are_found_outside_fences_tables_and_code() {
        let v = |x: &str| {
            format!("<!-- conformance:value runtime=node variant=node.writeFileSync.w fact=race -->{x}<!-- /conformance:value -->")
        };
        let text = format!(
            "# T\n\nSaid {}.\n\n```text\n{}\n```\n\n    {}\n\n<!-- conformance:table runtime=node -->\nx {}\n<!-- /conformance:table -->\n{} and {}\n",
            v("a"),
            v("fenced"),
            v("indented"),
            v("generated"),
            v("b"),
            v("c")
        );
        let (tables, values) = crate::docs::parse_all(&text).unwrap();
        assert_eq!(tables.len(), 1);
        let got: Vec<(usize, &str)> = values.iter().map(|m| (m.line, &text[m.content.clone()])).collect();
        assert_eq!(got, [(3, "a"), (14, "b"), (14, "c")]);
        // an indented line right after text continues it (a paragraph, a nested list item):
        // prose, not code
        let text = format!(
            "- item\n    - nested {}\n\n    code {}\n    {}\nPara\n    more {}\n",
            v("n"),
            v("x"),
            v("y"),
            v("m")
        );
        let (_, values) = crate::docs::parse_all(&text).unwrap();
        let got: Vec<(usize, &str)> = values.iter().map(|m| (m.line, &text[m.content.clone()])).collect();
        assert_eq!(got, [(2, "n"), (7, "m")]);
        // a bad value marker is refused with its line
        let e = crate::docs::parse_all("x\n<!-- conformance:value runtime=node -->1\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("needs variant="), "{e}");
        // a value marker written without its spaces is a malformed marker, naming both kinds
        let e = parse("<!--conformance:value runtime=node-->\n").unwrap_err();
        assert!(e.message.contains("malformed conformance marker") && e.message.contains("conformance:value"), "{e}");
    }

    #[test]
    fn markers_without_their_spaces_are_refused_with_their_line() {
        for (text, line) in [
            ("a\n<!--conformance:table runtime=node-->\nb\n<!-- /conformance:table -->\n", 2),
            ("<!--conformance:table runtime=node -->\n", 1),
            ("<!-- conformance:table runtime=node -->\nx\n<!--/conformance:table-->\n", 3),
            ("<!-- conformance:table runtime=node -->\nx\n<!-- /conformance:table-->\n", 3),
        ] {
            let e = parse(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
            assert!(e.message.contains("malformed conformance marker"), "{text:?}: {e}");
        }
        let e = parse("<!-- conformance:tables -->\n").unwrap_err();
        assert!(e.message.contains("unknown conformance marker"), "{e}");
        // other comments are not markers
        assert!(parse("<!-- a comment -->\n<!--conformance-ish-->\n").unwrap().is_empty());
    }

    #[test]
    fn unknown_keys_and_values_name_the_key() {
        let cases = [
            ("runtim=node", "unknown key 'runtim'"),
            ("runtime=nod", "key 'runtime': unknown runtime 'nod'"),
            ("scenario=races", "key 'scenario': unknown scenario 'races'"),
            ("scenario=race,claim", "key 'scenario': 'race,claim' mixes"),
            ("target=files", "key 'target': unknown target state 'files'"),
            ("scenario=race target=file", "key 'target' selects second-comer columns"),
            ("call=maybe", "key 'call': 'maybe' is not yes or no"),
            ("variant=[x", "key 'variant': '[x' is not a valid glob"),
            ("runtime=node runtime=bun", "key 'runtime' is given twice"),
            ("runtime=", "key 'runtime' has an empty value"),
            ("runtime=node,", "key 'runtime': 'node,' has an empty item"),
            ("node", "'node' is not KEY=VALUE"),
        ];
        for (keys, want) in cases {
            let text = format!("x\n\n<!-- conformance:table {keys} -->\n<!-- /conformance:table -->\n");
            let e = parse(&text).unwrap_err();
            assert_eq!(e.line, 3, "{keys}");
            assert!(e.message.contains(want), "{keys}: {e}");
        }
        let e = parse("<!-- conformance:tables runtime=node -->\n").unwrap_err();
        assert!(e.message.contains("unknown conformance marker"), "{e}");
    }

    #[test]
    fn a_fence_between_markers_does_not_hide_the_end() {
        let text = "<!-- conformance:table runtime=node -->\n```\n<!-- /conformance:table -->\n";
        let m = parse(text).unwrap();
        assert_eq!(m.len(), 1);
        assert_eq!(&text[m[0].content.clone()], "```\n");
    }

    #[test]
    fn markers_inside_code_fences_are_text() {
        let text =
            "```text\n<!-- conformance:table runtime=node -->\n```\n~~~~\n<!-- /conformance:table -->\n~~~\n~~~~\n";
        assert_eq!(parse(text).unwrap(), Vec::new());
    }

    /// The adversarial pass's document: a marker pair in an indented code block (spaces or a
    /// tab) is an example, left alone (its text was replaced); a real pair after it is found.
    #[test]
    fn markers_in_indented_code_are_text() {
        let text = "Usage:\n\n    <!-- conformance:table runtime=node -->\n    my example\n    <!-- /conformance:table -->\n\n\
                    \t<!-- conformance:table runtime=node -->\n\
                    <!-- conformance:table runtime=bun -->\nold\n<!-- /conformance:table -->\n";
        let m = parse(text).unwrap();
        assert_eq!(m.len(), 1, "{m:?}");
        assert_eq!(&text[m[0].content.clone()], "old\n");
    }

    #[test]
    fn selections_that_hold_nothing_are_refused() {
        let r = base();
        let sel = |keys: &str| Selector::parse(keys).unwrap();
        let e = render(&r, &sel("runtime=cmd")).unwrap_err();
        assert!(e.contains("no second-comer or race cell of runtime=cmd"), "{e}");
        let e = render(&r, &sel("runtime=node variant=deno.*")).unwrap_err();
        assert!(e.contains("variant=deno.* matches no variant"), "{e}");
        let e = render(&r, &sel("scenario=claim")).unwrap_err();
        assert!(e.contains("no claim cell"), "{e}");
        let e = render(&r, &sel("runtime=node,bun")).unwrap_err();
        assert!(e.contains("runtime=bun: the results hold no second-comer or race cell of it"), "{e}");
        let e = render(&r, &sel("variant=node.writeFileSync.*,node.nope")).unwrap_err();
        assert!(e.contains("variant=node.nope matches no variant"), "{e}");
        let e = render(&r, &sel("target=self")).unwrap_err();
        assert!(e.contains("target=self: the selected cells have no second comer against it"), "{e}");
    }

    /// `scenario=answer-grid` is a table kind of its own, rendered as the page's grid.
    #[test]
    fn an_answer_grid_marker_is_the_runtime_by_intent_grid() {
        assert_eq!(Selector::parse("scenario=answer-grid").unwrap().scenarios, super::Scenarios::AnswerGrid);
        let e = Selector::parse("scenario=answer-grid,race").unwrap_err();
        assert!(e.contains("answer-grid is a table kind of its own"), "{e}");
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/linux/results.json");
        let r = crate::report::json::read(&path).unwrap();
        let t = render(&r, &Selector::parse("scenario=answer-grid runtime=node,python").unwrap()).unwrap();
        assert_eq!(t.lines().count(), 4, "a header, its rule and two runtimes: {t}");
        assert!(t.lines().nth(2).unwrap().starts_with("| node ") && t.contains("| python 3"), "{t}");
    }

    /// `scenario=terminal` is what `report` prints at 120 columns without colour, in a text
    /// block: the answer lists first, then each runtime's table fitted to the width.
    #[test]
    fn a_terminal_marker_is_reports_text_at_120_columns() {
        assert_eq!(Selector::parse("scenario=terminal").unwrap().scenarios, super::Scenarios::Terminal);
        assert!(Selector::parse("scenario=terminal,race").unwrap_err().contains("terminal is a table kind of its own"));
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/linux/results.json");
        let r = crate::report::json::read(&path).unwrap();
        let t = render(&r, &Selector::parse("scenario=terminal runtime=node").unwrap()).unwrap();
        assert!(t.starts_with("```text\n") && t.ends_with("\n```\n"), "{t}");
        assert!(t.contains(": which call to use") && t.contains("│ node.writeFileSync.wx"), "{t}");
        assert!(t.find("which call to use") < t.find("│ node.writeFileSync.wx"), "the answer lists first");
        let over: Vec<&str> = t.lines().filter(|l| l.chars().count() > super::TERMINAL_WIDTH).collect();
        assert!(over.is_empty(), "{over:#?}");
        assert!(!t.contains('\u{1b}'), "no colour");
        // python's calls may appear in node's races against other parties, not as a table
        assert!(!t.lines().any(|l| l.starts_with("python 3")), "only the selected runtime's tables");
    }

    /// The kinds read from a file of their own need `results=`, take no selection keys, and
    /// are rendered only from a file of their kind.
    #[test]
    fn cross_race_and_timings_markers_take_a_file_of_their_own() {
        use super::{render_loaded, FileKind, Loaded, Scenarios};
        let t = Selector::parse("scenario=timings results=benches/results/default-run.json").unwrap();
        assert_eq!((t.scenarios.clone(), t.scenarios.file_kind()), (Scenarios::Timings, FileKind::Timings));
        let c = Selector::parse("scenario=cross-race results=race.json").unwrap();
        assert_eq!(c.scenarios.file_kind(), FileKind::CrossRace);
        assert_eq!(Selector::parse("scenario=terminal").unwrap().scenarios.file_kind(), FileKind::Results);
        let e = Selector::parse("scenario=timings").unwrap_err();
        assert!(e.contains("scenario=timings needs results=FILE"), "{e}");
        let e = Selector::parse("scenario=cross-race runtime=node results=r.json").unwrap_err();
        assert!(e.contains("key 'runtime' does not apply to scenario=cross-race"), "{e}");
        let e = Selector::parse("scenario=timings,race results=r.json").unwrap_err();
        assert!(e.contains("timings is a table kind of its own"), "{e}");
        let summary = crate::report::timings::Timings {
            machine: "m".into(),
            conformance: "c".into(),
            date: "d".into(),
            commands: vec![],
        };
        let md = render_loaded(&Loaded::Timings(summary.clone()), &t).unwrap();
        assert!(md.starts_with("| command | runs |"), "{md}");
        let e = render_loaded(&Loaded::Timings(summary), &c).unwrap_err();
        assert!(e.contains("another kind"), "{e}");
        let e = render(&base(), &t).unwrap_err();
        assert!(e.contains("not rendered from a results file"), "{e}");
        let rs = Selector::parse("scenario=race-speed results=benches/results/race-speed.json").unwrap();
        assert_eq!(rs.scenarios.file_kind(), FileKind::RaceSpeed);
        let e = Selector::parse("scenario=race-speed variant=node.* results=r.json").unwrap_err();
        assert!(e.contains("key 'variant' does not apply to scenario=race-speed"), "{e}");
        let speed = crate::report::race_speed::RaceSpeed {
            machine: "m".into(),
            conformance: "c".into(),
            date: "d".into(),
            runtime: "node".into(),
            call: "node.writeFileSync.wx".into(),
            contenders: 3,
            trials: 10,
            ways: vec![],
        };
        let md = render_loaded(&Loaded::RaceSpeed(speed.clone()), &rs).unwrap();
        assert!(md.starts_with("| way | trials/s |"), "{md}");
        assert!(render_loaded(&Loaded::RaceSpeed(speed), &t).unwrap_err().contains("another kind"));
    }

    #[test]
    fn a_recipe_answers_marker_holds_the_recipe_answer_lists_and_no_call() {
        use crate::report::model::{CellResult, CountersResult};
        let mut r = base();
        let mut c = r.cells[0].clone();
        c.scenario = Scenario::Update;
        c.variant = "update.read-modify-write".into();
        let counters = [("trials", 5), ("increments", 300), ("lossy", 4), ("lost_updates", 90), ("reads", 10)];
        c.result = CellResult::Counters(CountersResult {
            counters: counters.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            ..CountersResult::default()
        });
        r.cells.push(c);
        let t = render(&r, &Selector::parse("scenario=recipe-answers runtime=node").unwrap()).unwrap();
        assert!(t.starts_with("```text\nnode 20.20.2: which hand-off recipe to use\n"), "{t}");
        assert!(t.contains("update a shared file:\n      update.read-modify-write (lossy 4/5 trials (nat))"), "{t}");
        assert!(!t.contains("which call to use"), "{t}");
        let e = Selector::parse("scenario=recipe-answers,update").unwrap_err();
        assert!(e.contains("recipe-answers is a table kind of its own"), "{e}");
    }

    #[test]
    fn a_handoff_scenario_gives_its_recipe_by_runtime_table() {
        use crate::report::model::{CellResult, CountersResult};
        let mut r = base();
        let mut c = r.cells[0].clone();
        c.scenario = Scenario::Publish;
        c.variant = "publish.temp-rename".into();
        c.call = "write temp; close; rename".into();
        let counters = [
            ("torn_reads", 0),
            ("reads", 100),
            ("missing", 0),
            ("reader_items", 8),
            ("damaged_targets", 0),
            ("published", 4),
        ];
        c.result = CellResult::Counters(CountersResult {
            counters: counters.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            ..CountersResult::default()
        });
        r.cells.push(c);
        let t = render(&r, &Selector::parse("scenario=publish runtime=node").unwrap()).unwrap();
        assert_eq!(
            t,
            "| recipe | steps | node 20.20.2 |\n|---|---|---|\n| publish.temp-rename | write temp; close; rename | torn 0/100 reads; missing 0/8; damaged 0/4 |\n"
        );
        let t = render(&r, &Selector::parse("scenario=publish call=no").unwrap()).unwrap();
        assert!(t.starts_with("| recipe | node 20.20.2 |\n"), "{t}");
        let e = render(&r, &Selector::parse("scenario=publish variant=claim.*").unwrap()).unwrap_err();
        assert!(e.contains("variant=claim.* matches no variant of the selected publish cells"), "{e}");
    }

    #[test]
    fn columns_follow_the_scenario_and_targets() {
        let r = base();
        let header = |keys: &str| {
            let t = render(&r, &Selector::parse(keys).unwrap()).unwrap();
            t.lines().find(|l| l.starts_with("| variant")).unwrap().to_string()
        };
        assert_eq!(header("runtime=node scenario=race call=no"), "| variant | race 3×20 |");
        assert_eq!(header("runtime=node scenario=second-comer target=dir,file call=no"), "| variant | file | dir |");
        assert_eq!(
            header("runtime=node"),
            "| variant | call | absent | file | empty-dir | dir | race 3×20 | safe as a lock |"
        );
    }
}

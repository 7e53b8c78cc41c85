//! `report --format html`: one self-contained page (inline CSS, no script, no network).
//!
//! First the answer: a runtime × intent grid of the calls to use, coloured, beside a bar chart
//! of each runtime's calls to use, to use if every party does, not to use and undetermined
//! (inline SVG), a legend and the
//! answer lists; a table of contents links every section. Then for each runtime row label (each machine's, in a merged file) a variant × target matrix
//! with the race column, each cell coloured by its outcome or verdict and expandable
//! (`<details>`) to the call, the raw error, natural and amplified rates and the bound, and
//! the race's pictures ([`super::charts::race`]: winners histogram, orderings, barrier
//! spread); before those tables a *safe as a lock* heatmap of call × runtime
//! ([`super::charts::answer_heatmap`]); then the hand-off tables (recipe × runtime, counters,
//! each cell's failure rate as a bar), and in a merged
//! file the machines and the cells that disagree between them (marked `≠`). Every text from
//! the results file is escaped ([`escape`]).

use std::fmt::Write;

use super::answers::{AnswerList, AnswerRecord};
use super::model::{Cell, CellResult, ModeRun, Results, Scenario};
use super::style::Tone;
use super::table;

/// `text` with `&`, `<`, `>`, `"` and `'` replaced by character references, for element
/// content and quoted attribute values; control characters (but line breaks and tabs) and
/// bidi overrides are written as `\u{1b}`.
pub fn escape(text: &str) -> String {
    // control characters and bidi overrides shown as `\u{1b}`, as in every other format: a
    // page read with `cat` must not drive the terminal, nor a browser reorder the text
    let text = super::table::escape_controls_but(text, &['\n', '\t']);
    let mut s = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            '\'' => s.push_str("&#39;"),
            c => s.push(c),
        }
    }
    s
}

pub(crate) const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:0 1.5em 1.5em;color:#222;background:#fff}
h1{margin:.4em 0 .2em}nav{font-size:13px;margin:.3em 0 .8em}nav a{margin-right:.8em;white-space:nowrap}
table{border-collapse:collapse;margin:.5em 0 1.5em}th,td{border:1px solid #bbb;padding:3px 6px;vertical-align:top;text-align:left}
th{background:#eee}tr:first-child th{position:sticky;top:0;z-index:1;box-shadow:0 1px 0 #bbb}
summary{cursor:pointer;font-weight:600}details div{font-weight:normal;font-size:12px;max-width:36em;white-space:pre-wrap;overflow-wrap:anywhere}
code{font-size:12px}.good{background:#c8efc8}.bad{background:#f6c0c0}.warn{background:#fbe6a6}.none{background:#ddd}
pre{white-space:pre-wrap;overflow-wrap:anywhere}.differ{outline:3px solid #a020f0;outline-offset:-3px}
.answer{display:flex;flex-wrap:wrap;gap:1.5em;align-items:flex-start}.answer table{margin:0}.grid th,.grid td{max-width:8em;font-size:13px}.grid code{overflow-wrap:break-word;font-size:11px}
.heat-head{position:sticky;top:0;z-index:2;background:#fff}.heat-head svg,.heatmap>svg{display:block}
.legend{font-size:12px;color:#444;max-width:60em}.legend span{padding:0 .4em;margin-right:.3em}.note{font-size:12px;color:#444;margin:.1em 0}";

/// The answer lists as HTML lists, the article's *ways to use* and *ways not to use*: per
/// runtime, per intent, the calls answered yes (`use`), no only against other parties' calls
/// (`use if every party does`), no, and undetermined, each with its answer in words; then the
/// runtime's hand-off recipes by scenario. Each item is coloured by its typed verdict. Empty
/// when the file answers nothing.
fn answer_lists(r: &Results, calls: &[AnswerRecord]) -> String {
    let recipes = super::answers::recipe_records(r);
    let intents = super::answers::intent_records(calls);
    if calls.is_empty() && recipes.is_empty() {
        return String::new();
    }
    let mut h = String::from("<h2 id=\"lists\">Which call to use</h2>\n");
    if r.run_info.interrupted {
        let _ = writeln!(h, "<p class=\"note\">{}</p>", escape(super::answers::INTERRUPTED_NOTE));
    }
    let item = |tone: Tone, name: &str, how: &str| {
        format!("<li><span class=\"{}\"><code>{}</code></span> {}</li>\n", class(Some(tone)), escape(name), escape(how))
    };
    for rt in r.measured_runtimes() {
        let mine: Vec<_> = calls.iter().filter(|a| a.runtime == rt).collect();
        let theirs: Vec<_> = recipes.iter().filter(|a| a.runtime == rt).collect();
        if mine.is_empty() && theirs.is_empty() {
            continue;
        }
        let _ = writeln!(h, "<details open><summary>{}</summary>", escape(rt));
        for intent in intents.iter().filter(|i| i.runtime == rt) {
            let words = intent.intent.map_or("other calls", |i| i.describe());
            let _ = writeln!(h, "<h4>{}</h4>", escape(words));
            if intent.use_.is_empty() && intent.use_if_every_party_does.is_empty() {
                // as the article's lists: say that nothing measured here is safe to use
                h += "<p class=\"note\">use: none</p>\n";
            }
            let lists = [
                ("use", &intent.use_, Tone::Good),
                ("use if every party does", &intent.use_if_every_party_does, Tone::Unsure),
                ("don't use", &intent.dont_use, Tone::Bad),
                ("undetermined", &intent.undetermined, Tone::Unsure),
            ];
            for (head, ids, tone) in lists {
                if ids.is_empty() {
                    continue;
                }
                let _ = writeln!(h, "<p class=\"note\">{head}</p><ul>");
                for id in ids.iter() {
                    let how = mine
                        .iter()
                        .find(|a| &a.variant == id && a.intent == intent.intent)
                        .map_or("", |a| &a.answer.how);
                    h += &item(tone, id, how);
                }
                h += "</ul>\n";
            }
        }
        if !theirs.is_empty() {
            let _ = writeln!(h, "<h4>hand-off recipes</h4><ul>");
            for a in theirs {
                let tone = Tone::of_verdict(a.answer.verdict);
                let name = match &a.library {
                    Some(l) => format!("{} [{l}]", a.recipe),
                    None => a.recipe.clone(),
                };
                h += &item(tone, &name, &format!("{}: {} ({})", a.answer.verdict.as_str(), a.how, a.intent));
            }
            h += "</ul>\n";
        }
        h += "</details>\n";
    }
    h
}

/// The colour class of a tone: `good` (held), `bad` (failed), `warn` (undetermined), `none`
/// (no verdict: unsupported, not measured).
fn class(tone: Option<Tone>) -> &'static str {
    match tone {
        Some(Tone::Good) => "good",
        Some(Tone::Bad) => "bad",
        Some(Tone::Unsure) => "warn",
        None => "none",
    }
}

/// The tone of cell `c` from its typed verdict: a second comer's outcome, a race's verdict, a
/// hand-off recipe's answer over its runs.
fn tone(c: &Cell) -> Option<Tone> {
    match &c.result {
        CellResult::SecondComer(_) => c.outcome().and_then(Tone::of_outcome),
        CellResult::Race(r) => Tone::of_race(r.verdict),
        CellResult::Counters(_) => super::answers::cell_recipe_answer(c).map(|a| Tone::of_verdict(a.verdict)),
    }
}

/// The rate line of one race mode: `natural: exclusive, 0/200 multi-winner, bound 1.5%`.
fn mode_text(name: &str, m: &ModeRun) -> String {
    let s = &m.stats;
    let winners: Vec<String> = s.winners.iter().map(|(w, n)| format!("{w}:{n}")).collect();
    format!(
        "{name}: {} — {}/{} multi-winner trials, bound {} (95% upper), winners histogram {{{}}}{}",
        m.verdict.as_str(),
        s.multi_winner_trials,
        s.trials,
        table::pct(s.multi_winner_upper95),
        winners.join(", "),
        match (m.delay_us, m.raised_from_us) {
            (Some(d), Some(from)) =>
                format!(", delay {d} µs (raised from {from} µs after {} loose trials)", m.loose_trials),
            (Some(d), None) => format!(", delay {d} µs"),
            _ => String::new(),
        }
    )
}

/// The expanded detail of a cell: call, error (code and raw), race modes, counters, evidence.
fn detail(c: &Cell, again: Again<'_>) -> String {
    let mut d = format!("call: {}\n", c.call);
    if let Some(e) = c.error() {
        let raw = serde_json::to_string(&e.raw).unwrap_or_default();
        let _ = writeln!(d, "error: {} — raw {raw}", e.code);
    }
    match &c.result {
        CellResult::SecondComer(s) => {
            let _ = writeln!(d, "before: {}\nafter: {}", s.before, s.after);
            if let Some(r) = &s.relative {
                let _ = writeln!(d, "relative path: {}", r.outcome.as_str());
            }
        }
        CellResult::Race(r) => {
            let _ = writeln!(d, "decided by: {}", r.decided_by.as_str());
            for (name, m) in [("natural", &r.natural), ("amplified", &r.amplified)] {
                if let Some(m) = m {
                    let _ = writeln!(d, "{}", mode_text(name, m));
                }
            }
            if let Some(u) = &r.amplified_unavailable {
                let _ = writeln!(d, "amplified: not run ({u})");
            }
            if let Some(w) = &r.weak_race {
                let _ = writeln!(d, "{w}");
            }
        }
        CellResult::Counters(k) => {
            for (n, v) in &k.counters {
                let _ = writeln!(d, "{n} = {v}");
            }
            for e in &k.errors_sample {
                let _ = writeln!(d, "raw error: {}", serde_json::to_string(e).unwrap_or_default());
            }
            if let Some(a) = &k.amplified {
                for (n, v) in &a.counters {
                    let _ = writeln!(d, "amplified {n} = {v}");
                }
            }
            if let Some(u) = &k.amplified_unavailable {
                let _ = writeln!(d, "amplified: {u}");
            }
        }
    }
    if let Some(e) = &c.evidence {
        let _ = writeln!(d, "evidence: {e}");
    }
    if let Some(m) = &c.machine {
        let _ = writeln!(d, "machine: {m}");
    }
    if let Some(line) = again(c) {
        let _ = writeln!(d, "again: {line}");
    }
    d
}

/// The classes of cell `c`'s `<td>`: its tone's colour, and `differ` (outlined) where the
/// merged machines disagree on it.
fn cell_class(c: &Cell, differ: bool) -> String {
    classes(tone(c), differ)
}

/// The classes of a `<td>` of `tone`, and `differ` (outlined) where the merged machines
/// disagree on it.
fn classes(tone: Option<Tone>, differ: bool) -> String {
    let colour = class(tone);
    if differ {
        format!("{colour} differ")
    } else {
        colour.to_string()
    }
}

/// One `<td>`: the summary text coloured by the cell's word, expanding to [`detail`].
fn td(c: &Cell, summary: &str, differ: bool, again: Again<'_>) -> String {
    let mark = if differ { " ≠" } else { "" };
    let cls = cell_class(c, differ);
    // a race's pictures under its words ([`super::charts::race`])
    let pictures = match &c.result {
        CellResult::Race(r) => super::charts::race(r),
        _ => String::new(),
    };
    format!(
        "<td class=\"{cls}\"><details><summary>{}{mark}</summary><div>{}{pictures}</div></details></td>",
        escape(summary),
        escape(&detail(c, again))
    )
}

/// What the colours and words mean, once, under the answer.
const LEGEND: &str = "<p class=\"legend\"><span class=\"good\">held</span><span class=\"bad\">failed</span>\
<span class=\"warn\">undetermined, or only if every party uses the call</span><span class=\"none\">not measured</span> \
A second comer is one process calling the variant at a name already taken by another\u{2019}s file or directory \
(<i>refused</i> keeps it; <i>replaced</i>, <i>kept</i>, <i>nested</i>, <i>damaged</i> fail); a race releases \
contenders together on a free name, naturally (<i>nat</i>) and with every file-system call delayed (<i>amp</i>); \
<i>exclusive 0/100 &lt; 3.0%</i> is no trial with two winners and its 95% upper bound. Each cell opens to its \
call, raw error, rates and the command that measures it again.</p>\n";

/// The table of contents: the answer, the lists, the heatmap (where the page has one), each
/// runtime, each hand-off scenario.
fn nav(r: &Results, heatmap: bool) -> String {
    let mut links = vec![("answer".to_string(), "The answer".to_string()), ("lists".into(), "Lists".into())];
    if !table::against_lines(r).is_empty() {
        links.push(("against".into(), "Against others".into()));
    }
    if heatmap {
        links.push(("heatmap".into(), "Heatmap".into()));
    }
    for (i, rt) in r.measured_runtimes().into_iter().enumerate() {
        if !r.rows(rt).is_empty() {
            links.push((format!("rt-{i}"), rt.to_string()));
        }
    }
    for scenario in Scenario::HANDOFFS {
        if r.cells.iter().any(|c| c.scenario == scenario) {
            links.push((scenario.as_str().to_string(), scenario.as_str().to_string()));
        }
    }
    let items: Vec<String> = links.iter().map(|(id, text)| format!("<a href=\"#{id}\">{}</a>", escape(text))).collect();
    format!("<nav>{}</nav>\n", items.join(" "))
}

/// The answer: the runtime × intent grid ([`super::answers::grid_by_runtime`]), each cell
/// coloured, beside a bar per runtime of its calls in the answer lists' categories
/// ([`answers_chart`]). Empty when no call has an intent.
fn answer_section(r: &Results, records: &[AnswerRecord]) -> String {
    let (columns, rows) = super::answers::grid_by_runtime(r, records);
    if columns.is_empty() {
        return String::new();
    }
    let mut h = String::from("<h2 id=\"answer\">The answer: which call to use</h2>\n<div class=\"answer\"><table class=\"grid\"><tr><th>runtime</th>");
    for i in &columns {
        let _ = write!(h, "<th>{}</th>", escape(i.describe()));
    }
    h += "</tr>\n";
    for (rt, cells) in &rows {
        let _ = write!(h, "<tr><th>{}</th>", escape(rt));
        for c in cells {
            let call = c.call.as_deref().map(|x| format!("<code>{}</code>", breakable(x))).unwrap_or_default();
            let _ = write!(h, "<td class=\"{}\">{call}{}</td>", class(c.tone), escape(&c.rest));
        }
        h += "</tr>\n";
    }
    h += "</table>\n";
    h += &answers_chart(records);
    h += "</div>\n";
    h
}

/// `name` escaped, with a line-break opportunity (`<wbr>`) after each `.` and `_`: a call in a
/// narrow grid cell wraps between its parts (`FileMode.` / `CreateNew`), not inside a word.
fn breakable(name: &str) -> String {
    escape(name).replace('.', ".<wbr>").replace('_', "_<wbr>")
}

/// The segments of [`answers_chart`]'s bars, in order, with the words of its key: the calls to
/// use, those to use only if every party does (`if all do`), those not to use, the undetermined
/// ones (the grid's and the lists' categories, coloured as the heatmap colours them).
const BAR: [(&str, AnswerList); 4] = [
    ("use", AnswerList::Use),
    ("if all do", AnswerList::UseIfEveryPartyDoes),
    ("don't use", AnswerList::DontUse),
    ("undetermined", AnswerList::Undetermined),
];

/// An inline SVG: per runtime, a bar of its calls (second comers and races) in the answer
/// lists' four categories ([`super::answers::intent_records`]), to one scale; a title per
/// segment gives the count. Empty without answers.
fn answers_chart(records: &[AnswerRecord]) -> String {
    let mut rows: Vec<(String, [usize; 4])> = Vec::new();
    for i in super::answers::intent_records(records) {
        let n = [i.use_.len(), i.use_if_every_party_does.len(), i.dont_use.len(), i.undetermined.len()];
        match rows.iter_mut().find(|(rt, _)| *rt == i.runtime) {
            Some((_, m)) => m.iter_mut().zip(n).for_each(|(a, b)| *a += b),
            None => rows.push((i.runtime.clone(), n)),
        }
    }
    let most = rows.iter().map(|(_, n)| n.iter().sum::<usize>()).max().unwrap_or(0);
    if most == 0 {
        return String::new();
    }
    let (label_w, bar_w, row_h) = (160.0, 180.0, 18.0);
    let height = row_h * (rows.len() as f64 + 2.5);
    let mut svg = format!(
        "<svg width=\"{}\" height=\"{height}\" role=\"img\" \
         aria-label=\"calls to use, to use if every party does, not to use and undetermined, per runtime\" font-size=\"11\">\n",
        label_w + bar_w + 10.0
    );
    for (j, (rt, n)) in rows.iter().enumerate() {
        let y = row_h * j as f64;
        let _ =
            writeln!(svg, "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", label_w - 6.0, y + 14.0, escape(rt));
        let mut x = label_w;
        for (k, (word, list)) in BAR.iter().enumerate() {
            let colour = super::charts::list_colour(*list);
            let w = bar_w * n[k] as f64 / most as f64;
            if n[k] > 0 {
                let _ = writeln!(
                    svg,
                    "<rect x=\"{x:.1}\" y=\"{}\" width=\"{w:.1}\" height=\"{}\" fill=\"{colour}\"><title>{}: {} {word}</title></rect>",
                    y + 3.0,
                    row_h - 6.0,
                    escape(rt),
                    n[k]
                );
            }
            x += w;
        }
    }
    // the key, two entries a line under the bars
    for (k, (word, list)) in BAR.iter().enumerate() {
        let colour = super::charts::list_colour(*list);
        let y = row_h * (rows.len() + k / 2) as f64 + 14.0;
        let x = label_w + if k % 2 == 0 { 0.0 } else { 80.0 };
        let _ = writeln!(
            svg,
            "<rect x=\"{x}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{colour}\"/><text x=\"{}\" y=\"{y}\">{}</text>",
            y - 9.0,
            x + 14.0,
            escape(word)
        );
    }
    svg += "</svg>\n";
    svg
}

/// The command that measures a cell again (the commands' [`crate::repro`] line, given by the
/// caller: the reports sit below it), or `None` to leave it out.
pub type Again<'a> = &'a dyn Fn(&Cell) -> Option<String>;

/// The page for `r`, without the commands that measure a cell again.
pub fn render(r: &Results) -> String {
    render_with(r, &|_| None)
}

/// The page for `r`; each cell's details end with `again(cell)` where it gives a line.
pub fn render_with(r: &Results, again: Again<'_>) -> String {
    let differ = r.disagreements();
    let ri = &r.run_info;
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>conformance report</title>\n<style>{STYLE}</style></head><body>\n<h1>conformance report</h1>\n"
    );
    if !ri.machines.is_empty() {
        let _ = writeln!(h, "<p>{} runs merged; conformance {}.</p>", ri.machines.len(), escape(&ri.harness_version));
    } else {
        let _ = writeln!(
            h,
            "<p>{} {} ({}), kernel {}, file system {} at {}; {}; conformance {}.</p>",
            escape(&ri.os),
            escape(&ri.os_version),
            escape(&ri.arch),
            escape(&ri.kernel),
            escape(&ri.fs.fs_type),
            escape(&ri.fs.root),
            escape(&ri.date),
            escape(&ri.harness_version)
        );
    }
    if !ri.machines.is_empty() {
        h += "<h2>Machines</h2>\n<table><tr><th>label</th><th>OS</th><th>kernel</th><th>file system</th><th>date</th><th>from</th></tr>\n";
        for m in &ri.machines {
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td>{} {}</td><td>{}</td><td>{} ({})</td><td>{}</td><td>{}</td></tr>",
                escape(&m.label),
                escape(&m.os),
                escape(&m.os_version),
                escape(&m.kernel),
                escape(&m.fs.fs_type),
                escape(&m.fs.root),
                escape(&m.date),
                escape(&m.source)
            );
        }
        h += "</table>\n";
    }
    // every call's answer, once for the page: the grid, its chart, the lists and the heatmap
    let records = super::answers::records(r);
    let groups = table::disagreeing_groups(r);
    let heatmap = super::charts::answer_heatmap(r, &records, &|c| {
        if !differ.contains(c.id.as_str()) {
            return None;
        }
        groups.get(&c.key()).map(|(how, _)| format!("the {}", how.as_str()))
    });
    h += &nav(r, !heatmap.is_empty());
    // the answer first, as in every report: the grid and its picture, the legend, the lists
    h += &answer_section(r, &records);
    h += LEGEND;
    h += &answer_lists(r, &records);
    let against = table::against_lines(r);
    if !against.is_empty() {
        h += "<h2 id=\"against\">Against other parties' calls</h2>\n<ul>\n";
        for l in &against {
            let _ = writeln!(h, "<li>{}</li>", escape(l));
        }
        h += "</ul>\n";
    }
    if !heatmap.is_empty() {
        h += "<h2 id=\"heatmap\">The answer per call and runtime</h2>\n";
        h += "<p class=\"legend\">Each call\u{2019}s answer at a glance: green use, olive use only if every party does, \
red don\u{2019}t use, amber undetermined, no square where the runtime lacks the call; an outlined square holds a cell \
on which the merged runs disagree (their machines, or the runtime's versions). Hover over a square for the call and its answer in words.</p>\n";
        h += &heatmap;
        h += "\n";
    }
    let targets = r.targets();
    for (i, rt) in r.measured_runtimes().into_iter().enumerate() {
        let rows = r.rows(rt);
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(h, "<h2 id=\"rt-{i}\">{}</h2>", escape(rt));
        h += "<table><tr><th>variant</th>";
        for t in &targets {
            let _ = write!(h, "<th>{}</th>", escape(t.as_str()));
        }
        if r.has_races() {
            let _ = write!(h, "<th>{}</th>", escape(&table::race_header(&rows)));
        }
        h += "<th>safe as a lock</th></tr>\n";
        for row in &rows {
            let ap = if row.anti_pattern { " (anti-pattern)" } else { "" };
            let label = row.label();
            let _ = write!(h, "<tr><th><code>{}</code>{ap}</th>", escape(&label));
            for t in &targets {
                match row.second.get(t) {
                    Some(c) => h += &td(c, &table::second_text(c), differ.contains(c.id.as_str()), again),
                    None => h += "<td class=\"none\">-</td>",
                }
            }
            if r.has_races() {
                match row.race {
                    Some(c) => h += &td(c, &table::race_text(c), differ.contains(c.id.as_str()), again),
                    None => {
                        let _ = write!(h, "<td class=\"none\">{}</td>", escape(table::unraced_text(r, row)));
                    }
                }
            }
            let safe = table::safe_text(r, row);
            let _ =
                writeln!(h, "<td class=\"{}\">{}</td></tr>", class(Some(Tone::of_answer(row.safe()))), escape(&safe));
        }
        h += "</table>\n";
        // the race notes: spreads, rates, the detection controls, why amplified races did not run
        for l in table::race_lines(r, rt) {
            let _ = writeln!(h, "<p class=\"note\">{}</p>", escape(&l));
        }
    }
    for scenario in Scenario::HANDOFFS {
        let cells: Vec<&Cell> = r.cells.iter().filter(|c| c.scenario == scenario).collect();
        if cells.is_empty() {
            continue;
        }
        let mut runtimes: Vec<&str> = Vec::new();
        let mut variants: Vec<(&str, bool)> = Vec::new();
        for c in &cells {
            if !runtimes.contains(&c.runtime.as_str()) {
                runtimes.push(&c.runtime);
            }
            if !variants.iter().any(|(v, _)| *v == c.variant) {
                variants.push((&c.variant, c.anti_pattern));
            }
        }
        let _ = writeln!(
            h,
            "<h2 id=\"{}\">{} (hand-off: counted from the files)</h2>",
            scenario.as_str(),
            escape(scenario.as_str())
        );
        h += "<table><tr><th>recipe</th>";
        for rt in &runtimes {
            let _ = write!(h, "<th>{}</th>", escape(rt));
        }
        h += "</tr>\n";
        for (v, anti) in &variants {
            let ap = if *anti { " (anti-pattern)" } else { "" };
            let _ = write!(h, "<tr><th><code>{}</code>{ap}</th>", escape(v));
            for rt in &runtimes {
                match cells.iter().find(|c| c.variant == *v && c.runtime == *rt) {
                    Some(c) => {
                        let mut text = table::handoff_text(c);
                        // without an amplified run the note under the table says why, once
                        let amplified = matches!(&c.result, CellResult::Counters(k) if k.amplified.is_some());
                        if let Some(a) = table::amplified_handoff_text(c).filter(|_| amplified) {
                            text.push_str(&format!(" · amplified: {a}"));
                        }
                        // coloured by the recipe's answer as the lists give it (an anti-pattern
                        // that lost nothing is undetermined, not safe), outlined where the
                        // merged machines disagree, as the matrices' cells
                        // (a recipe the runtime lacks is grey: not measured)
                        let tone = super::answers::recipe_answer(r, c)
                            .filter(|_| !c.is_unsupported_handoff())
                            .map(|a| Tone::of_verdict(a.verdict));
                        let bad = classes(tone, differ.contains(c.id.as_str()));
                        // the failure rate as a bar, seen without opening the cell (none for a
                        // recipe that did not run: the probe lacks it)
                        let ran = super::answers::cell_recipe_runs(c).is_some_and(|(runs, _)| !runs.is_empty());
                        let rate = super::answers::cell_recipe_answer(c)
                            .filter(|_| ran)
                            .map(|a| super::charts::handoff_rate(&a))
                            .unwrap_or_default();
                        let _ = write!(
                            h,
                            "<td class=\"{bad}\">{rate}<details><summary>{}</summary><div>{}</div></details></td>",
                            escape(&text),
                            escape(&detail(c, again))
                        );
                    }
                    None => h += "<td class=\"none\">-</td>",
                }
            }
            h += "</tr>\n";
        }
        h += "</table>\n";
        if let Some(note) = table::handoff_footnote(r, scenario) {
            let _ = writeln!(h, "<p class=\"note\">{}</p>", escape(&note));
        }
    }
    let dis = table::disagreement_text(r);
    if !dis.is_empty() {
        let _ = writeln!(h, "<h2 id=\"differ\">Cells that disagree between machines</h2>\n<pre>{}</pre>", escape(&dis));
    }
    h += "</body></html>\n";
    h
}

#[cfg(test)]
mod tests {
    use super::{render, render_with, Results};
    use crate::report::model::{CellResult, CountersResult};

    fn base() -> Results {
        crate::report::fixture("base.json")
    }

    /// A call in the grid may wrap after a dot or an underscore, never inside a word.
    #[test]
    fn grid_calls_break_between_their_parts() {
        assert_eq!(super::breakable("FileMode.CreateNew"), "FileMode.<wbr>CreateNew");
        assert_eq!(super::breakable("OpenOptions.write.create_new"), "OpenOptions.<wbr>write.<wbr>create_<wbr>new");
        assert_eq!(super::breakable("a<b.c"), "a&lt;b.<wbr>c", "escaped first");
    }

    #[test]
    fn html_page_snapshot() {
        let page = render(&base());
        assert!(!page.contains("http://") && !page.contains("https://") && !page.contains("<script"));
        insta::assert_snapshot!(page);
    }

    /// The answer lists are HTML lists, not preformatted text: per runtime a section, per
    /// intent its heading, each call an item coloured by its verdict with its answer in words.
    #[test]
    fn the_answer_lists_are_lists_coloured_by_verdict() {
        let page = render(&base());
        let lists = &page[page.find("<h2 id=\"lists\">").expect("the lists")..];
        assert!(!page.contains("<pre class=\"answers\">"), "{lists}");
        assert!(lists.contains("<details open><summary>node 20.20.2</summary>"), "{lists}");
        // the fixture was written before calls carried intents: one heading for them all
        assert!(lists.contains("<h4>other calls</h4>"), "{lists}");
        // the fixture's wx row has 30 trials, too few for the bound: undetermined, in yellow
        let item = "<li><span class=\"warn\"><code>node.writeFileSync.wx</code></span> ? (-n 100)</li>";
        assert!(lists.contains(item), "{lists}");
        assert!(lists.contains("<li><span class=\"bad\"><code>"), "{lists}");
    }

    /// The fixture's first cell made publish recipe `variant` with `result` (and `evidence`),
    /// added to the fixture: the start of its `<td>` in the page's publish table.
    fn publish_td(variant: &str, result: CellResult, evidence: Option<&str>, anti_pattern: bool) -> String {
        let mut r = base();
        let mut c = r.cells[0].clone();
        c.id = format!("node/{variant}/publish/absent");
        c.scenario = crate::domain::Scenario::Publish;
        c.variant = variant.into();
        c.anti_pattern = anti_pattern;
        c.result = result;
        c.evidence = evidence.map(str::to_string);
        r.cells.push(c);
        let page = render(&r);
        let table = &page[page.find("<h2 id=\"publish\">").expect("the publish table")..];
        let td = &table[table.find("<td class=").expect("its cell")..];
        td[..td.len().min(200)].to_string()
    }

    /// A hand-off cell is coloured by the recipe's answer as the lists give it: an anti-pattern
    /// that lost nothing is undetermined (yellow), not safe (green), as its counts alone say.
    #[test]
    fn an_anti_pattern_that_lost_nothing_is_not_green() {
        let counts = [("items", 40), ("published", 40), ("reads", 500), ("reader_items", 80), ("torn_reads", 0)];
        let counters = counts.into_iter().map(|(k, n)| (k.to_string(), n)).collect();
        let result = CellResult::Counters(CountersResult { counters, ..CountersResult::default() });
        let mut c = base().cells[0].clone();
        (c.scenario, c.result) = (crate::domain::Scenario::Publish, result.clone());
        let own = crate::report::answers::cell_recipe_answer(&c).expect("a hand-off answer");
        assert_eq!(own.verdict, crate::verdict::answer::AnswerVerdict::Yes, "its counts alone: {own:?}");
        let td = publish_td("publish.direct", result, None, true);
        assert!(td.starts_with("<td class=\"warn\">"), "{td}");
    }

    /// A cell's details give its evidence (what the harness saw of a fault), escaped, and the
    /// command that measures it again where the caller gives one.
    #[test]
    fn a_cells_details_carry_its_evidence_and_its_command() {
        let mut r = base();
        r.cells[0].evidence = Some("crashed: <stderr> & exit 3".into());
        let page = render_with(&r, &|_| Some("conformance run -r node -v x".into()));
        assert!(page.contains("evidence: crashed: &lt;stderr&gt; &amp; exit 3"), "no evidence line");
        assert!(page.contains("again: conformance run -r node -v x"), "no command");
    }

    /// A hand-off cell the runtime has no recipe for is grey (not measured), not yellow.
    #[test]
    fn a_recipe_the_runtime_lacks_is_grey() {
        let why = "unsupported: the library is a JavaScript package";
        let mut c = base().cells[0].clone();
        (c.result, c.evidence) = (CellResult::Counters(CountersResult::default()), Some(why.into()));
        assert!(c.is_unsupported_handoff());
        let td = publish_td("publish.atomically", CellResult::Counters(CountersResult::default()), Some(why), false);
        assert!(td.starts_with("<td class=\"none\">"), "{td}");
    }

    #[test]
    fn html_escapes_probe_text() {
        let mut r = base();
        r.cells[0].runtime = "<script>alert(1)</script>".into();
        r.cells[0].call = "a & b \"<img>\"".into();
        let page = render(&r);
        assert!(!page.contains("<script>"), "label unescaped");
        assert!(!page.contains("<img>"), "call unescaped");
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    }

    #[test]
    fn html_escapes_controls_and_bidi_overrides() {
        let mut r = base();
        r.cells[0].call = "a\u{1b}[31m\u{7}b\u{202e}c".into();
        let page = render(&r);
        assert!(!page.contains('\u{1b}') && !page.contains('\u{7}') && !page.contains('\u{202e}'));
        assert!(page.contains("a\\u{1b}[31m\\u{7}b\\u{202e}c"));
    }
}

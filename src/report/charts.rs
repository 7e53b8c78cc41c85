//! The HTML report's pictures, as inline SVG built with the `svg` crate (element building and
//! escaping of text and attributes): no script, no network, nothing outside the page.
//!
//! - [`race`]: per race mode of a cell, the winners histogram (trials by number of winners),
//!   the failing share of each release ordering, and the barrier spread (p50 to p99, and the
//!   largest) on a µs scale shared by the cell's modes.
//! - [`handoff_rate`]: a hand-off cell's failure rate as a bar (the failing share of the first
//!   failure its answer counts; all green when it held).
//! - [`answer_heatmap`]: call × runtime, each square coloured by the call's answer (use, use if
//!   every party does, don't use, undetermined); squares whose cells disagree between merged
//!   machines, or changed in a `diff`, are outlined.
//!
//! Every chart carries a `<title>` per mark with the exact counts, so the numbers behind a
//! picture can be read by hovering over it (and by screen readers).

use svg::node::element::{Circle, Group, Line, Rectangle, Text, Title};
use svg::Document;

use std::collections::BTreeMap;

use super::answers::{AnswerList, AnswerRecord};
use super::model::{Cell, ModeRun, RaceResult, Results};
use crate::verdict::answer::AnswerVerdict;
use crate::verdict::recipe::RecipeAnswer;

/// Green: held (`exclusive`, `yes`, one winner, a hand-off without failure).
const GOOD: &str = "#2e7d32";
/// Red: failed (two or more winners, `no`, a failing share).
const BAD: &str = "#c62828";
/// Amber: says nothing either way (no winner, undetermined).
const UNSURE: &str = "#f9a825";
/// Olive: use only if every party does (the answer chart's colour for it).
const IF_ALL: &str = "#9e9d24";
/// Grey: the trials of an ordering that did not fail, or an empty scale.
const REST: &str = "#cfcfcf";
/// The outline of a square whose cells disagree between machines (the tables' `≠` colour).
const DIFFER: &str = "#a020f0";

/// `text` with control characters and bidi overrides written as `\u{…}` (as every format
/// does): the `svg` crate escapes markup, not those.
fn plain(text: &str) -> String {
    super::table::escape_controls(text).into_owned()
}

/// An `<svg>` for inline use in the page: without the `xmlns` the `svg` crate sets (HTML
/// gives inline SVG its namespace, and the page names no address).
fn document() -> Document {
    let mut doc = Document::new();
    if let Some(a) = svg::Node::get_attributes_mut(&mut doc) {
        a.remove("xmlns");
    }
    doc
}

/// A `<text>` at (`x`, `y`) of `size` px.
fn label(x: f64, y: f64, size: u32, text: &str) -> Text {
    Text::new(plain(text)).set("x", format!("{x:.1}")).set("y", format!("{y:.1}")).set("font-size", size)
}

/// A filled rectangle.
fn rect(x: f64, y: f64, w: f64, h: f64, fill: &str) -> Rectangle {
    Rectangle::new()
        .set("x", format!("{x:.1}"))
        .set("y", format!("{y:.1}"))
        .set("width", format!("{w:.1}"))
        .set("height", format!("{h:.1}"))
        .set("fill", fill)
}

/// A filled rectangle with a hover title.
fn bar(x: f64, y: f64, w: f64, h: f64, fill: &str, title: &str) -> Rectangle {
    rect(x, y, w, h, fill).add(Title::new(plain(title)))
}

/// Height of one mode's row in [`race`], px.
const MODE_H: f64 = 62.0;
/// Height of the tallest bar of a histogram or ordering column, px.
const BAR_H: f64 = 34.0;
/// Width of the spread scale, px.
const SPREAD_W: f64 = 150.0;

/// The pictures of race cell `r`: one row per mode that ran (natural, then amplified), each
/// with the winners histogram (a bar per number of winners, 0 to the contenders, height ∝
/// trials; one winner green, two or more red, none amber), the orderings (per release offset
/// in µs, a column whose red part is the share of its trials showing the mode's verdict, when
/// the mode ran more than one ordering) and the barrier spread (a line from p50 to p99 with a
/// dot at p50 and a tick at the largest, on one µs scale for both modes). Returns the `<svg>`
/// element as text, or an empty string when no mode ran.
pub fn race(r: &RaceResult) -> String {
    let modes: Vec<(&str, &ModeRun)> = [("natural", &r.natural), ("amplified", &r.amplified)]
        .into_iter()
        .filter_map(|(name, m)| m.as_ref().map(|m| (name, m)))
        .collect();
    if modes.is_empty() {
        return String::new();
    }
    // one spread scale for the cell: the modes can be compared by eye
    let widest =
        modes.iter().filter_map(|(_, m)| m.stats.barrier_spread_us.map(|s| s.max)).fold(0.0_f64, f64::max).max(1.0);
    // the same places in every mode's row: the spread scales line up
    let contenders = modes.iter().map(|(_, m)| m.stats.contenders).max().unwrap_or(0);
    let orderings = modes.iter().map(|(_, m)| m.orderings.len()).max().unwrap_or(0);
    let digits = modes.iter().flat_map(|(_, m)| &m.orderings).map(|o| o.offset_us.to_string().len()).max().unwrap_or(0);
    let layout = Layout::new(contenders, orderings, digits);
    let width = layout.spread + SPREAD_W + 10.0;
    let mut doc = document()
        .set("width", width)
        .set("height", MODE_H * modes.len() as f64)
        .set("role", "img")
        .set("aria-label", "winners per trial, failing share per release ordering and barrier spread, per race mode")
        .set("font-size", 10);
    for (row, (name, m)) in modes.iter().enumerate() {
        doc = doc
            .add(mode_row(name, m, widest, &layout).set("transform", format!("translate(0,{})", MODE_H * row as f64)));
    }
    doc.to_string()
}

/// Where a race picture's parts start (px from the left), the same for each mode's row.
struct Layout {
    /// The first ordering column.
    orderings: f64,
    /// From one ordering column to the next: wide enough for the longest offset's label.
    step: f64,
    /// The spread scale.
    spread: f64,
}

/// Least width of an ordering column and its gap, px.
const ORDERING_W: f64 = 30.0;

impl Layout {
    /// For a cell whose modes have at most `contenders` contenders and `orderings` orderings,
    /// whose longest offset label (µs) has `digits` digits (8 px digits are about 5 px wide).
    fn new(contenders: usize, orderings: usize, digits: usize) -> Layout {
        let hist_end = 4.0 + 15.0 * (contenders + 1) as f64;
        let first = hist_end + 48.0;
        let step = ORDERING_W.max(5.0 * digits as f64 + 8.0);
        Layout { orderings: first, step, spread: first + step * orderings as f64 + 56.0 }
    }
}

/// One mode's row of [`race`]: its name, histogram, orderings and spread, in a group whose top
/// is at 0, laid out by `layout`; `widest` is the spread scale's end (µs).
fn mode_row(name: &str, m: &ModeRun, widest: f64, layout: &Layout) -> Group {
    let s = &m.stats;
    let base = 12.0 + BAR_H;
    let mut g = Group::new().add(label(0.0, 10.0, 10, &format!("{name}: {}", m.verdict.as_str())));
    // the winners histogram
    let most = s.winners.values().copied().max().unwrap_or(0).max(1) as f64;
    for k in 0..=s.contenders {
        let n = s.winners.get(&k).copied().unwrap_or(0);
        let x = 4.0 + 15.0 * k as f64;
        let h = if n == 0 { 0.0 } else { (BAR_H * n as f64 / most).max(1.5) };
        let fill = match k {
            0 => UNSURE,
            1 => GOOD,
            _ => BAD,
        };
        let plural = if k == 1 { "winner" } else { "winners" };
        g = g.add(bar(x, base - h, 12.0, h, fill, &format!("{k} {plural}: {n} of {} trials", s.trials)));
        g = g.add(label(x + 3.0, base + 11.0, 9, &k.to_string()));
    }
    let hist_end = 4.0 + 15.0 * (s.contenders + 1) as f64;
    g = g.add(label(hist_end + 2.0, base, 9, "winners"));
    // the orderings: the failing share of each (an ordering without trials: an empty frame)
    let mut x = layout.orderings;
    for o in &m.orderings {
        let bad = o.stats.trials_showing(m.verdict);
        let t = o.stats.trials.max(1) as f64;
        let title = format!("offset {} µs: {bad} of {} trials {}", o.offset_us, o.stats.trials, m.verdict.as_str());
        let ground = if o.stats.trials == 0 { "none" } else { REST };
        // one title for the frame and its red share
        let mut column = Group::new()
            .add(Title::new(plain(&title)))
            .add(rect(x, base - BAR_H, 12.0, BAR_H, ground).set("stroke", REST));
        if bad > 0 && crate::verdict::is_disproof(m.verdict) {
            let h = (BAR_H * bad as f64 / t).max(1.5);
            column = column.add(rect(x, base - h, 12.0, h, BAD));
        }
        g = g.add(column);
        g = g.add(label(x, base + 11.0, 8, &o.offset_us.to_string()));
        x += layout.step;
    }
    if !m.orderings.is_empty() {
        g = g.add(label(x - 4.0, base, 9, "µs offsets"));
    }
    let x = layout.spread;
    // the barrier spread: p50 to p99, the largest as a tick
    let y = base - BAR_H / 2.0;
    let at = |us: f64| x + SPREAD_W * (us / widest).min(1.0);
    g = g.add(Line::new().set("x1", x).set("y1", y).set("x2", x + SPREAD_W).set("y2", y).set("stroke", REST));
    match s.barrier_spread_us {
        Some(sp) => {
            let title = format!("barrier spread: p50 {:.0} µs, p99 {:.0} µs, largest {:.0} µs", sp.p50, sp.p99, sp.max);
            let (p50, p99, max) =
                (format!("{:.1}", at(sp.p50)), format!("{:.1}", at(sp.p99)), format!("{:.1}", at(sp.max)));
            // one title for the three marks
            let marks = Group::new()
                .set("stroke", "#333")
                .add(Title::new(title))
                .add(Line::new().set("x1", p50.clone()).set("y1", y).set("x2", p99).set("y2", y).set("stroke-width", 3))
                .add(Line::new().set("x1", max.clone()).set("y1", y - 6.0).set("x2", max).set("y2", y + 6.0))
                .add(Circle::new().set("cx", p50).set("cy", y).set("r", 3.5).set("fill", "#333"));
            g = g.add(marks);
            g = g.add(label(x, base + 11.0, 9, &format!("spread p50 {:.0} µs, largest {:.0} µs", sp.p50, sp.max)));
        }
        None => g = g.add(label(x, base + 11.0, 9, "spread not measured")),
    }
    g
}

/// Width of a hand-off cell's rate bar, px.
const RATE_W: f64 = 90.0;

/// The failure rate of a hand-off cell as a bar 90 px wide: for `no`, the red share
/// of the first failure its answer counts (at least 2 px, so that 1 in 10,000 shows), on
/// grey; for `yes`, all green; for `undetermined`, all amber. Returns the `<svg>` element as
/// text.
pub fn handoff_rate(a: &RecipeAnswer) -> String {
    let (mark, title) = match (a.verdict, a.failures.first()) {
        (AnswerVerdict::No, Some(f)) => {
            let share = if f.of == 0 { 1.0 } else { (f.count as f64 / f.of as f64).min(1.0) };
            let words =
                format!("{} {} of {} {}", f.counter.replace('_', " "), f.count, f.of, f.out_of.replace('_', " "));
            (Some((RATE_W * share).max(2.0)), words)
        }
        (AnswerVerdict::Yes, _) => {
            let over = a
                .held_over
                .as_ref()
                .map(|(what, n)| format!(" over {n} {}", what.replace('_', " ")))
                .unwrap_or_default();
            (None, format!("no failure{over}"))
        }
        _ => (None, "undetermined".to_string()),
    };
    let ground = match a.verdict {
        AnswerVerdict::Yes => GOOD,
        AnswerVerdict::No => REST,
        AnswerVerdict::Undetermined => UNSURE,
    };
    let mut doc = document()
        .set("width", RATE_W)
        .set("height", 8)
        .set("role", "img")
        .set("aria-label", plain(&title))
        .add(bar(0.0, 0.0, RATE_W, 8.0, ground, &title));
    if let Some(w) = mark {
        doc = doc.add(bar(0.0, 0.0, w, 8.0, BAD, &title));
    }
    doc.to_string()
}

/// The longest call label the heatmap shows whole, characters.
const MAX_CALL_CHARS: usize = 60;
/// The longest runtime label the heatmap shows whole, characters.
const MAX_RUNTIME_CHARS: usize = 64;

/// `text` cut to `max` characters, the last one `…`, where it is longer.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    text.chars().take(max.saturating_sub(1)).chain(std::iter::once('…')).collect()
}

/// The colour of an answer list: green use, olive use if every party does, red don't use,
/// amber undetermined (the heatmap's squares and the answer chart's bars).
pub fn list_colour(list: AnswerList) -> &'static str {
    match list {
        AnswerList::Use => GOOD,
        AnswerList::UseIfEveryPartyDoes => IF_ALL,
        AnswerList::DontUse => BAD,
        AnswerList::Undetermined => UNSURE,
    }
}

/// Side of a heatmap square, px.
const SQUARE: f64 = 12.0;

/// The answer heatmap of `r`: a row per call (variant, in the order the runtimes first show
/// them), a column per runtime row label, each square coloured by that runtime's answer for the
/// call ([`super::answers::records`], the lists' categories, [`super::answers::AnswerList`]):
/// green use, olive use if every party does, red don't use, amber undetermined; no square where
/// the runtime lacks the call. `records` are `r`'s ([`super::answers::records`], computed once
/// by the caller). Its title gives the answer in words. A call the matrix marks as an
/// anti-pattern has its label in italics, and says so in its titles. A square is outlined where
/// `mark` gives a note for one of the call's cells on that runtime (cells that disagree between
/// merged machines, [`Results::disagreements`]; cells a `diff` found changed), the note added
/// to its title. Returns an HTML fragment, or an empty string when `r` answers no call: a
/// `<div class="heatmap">` holding the column labels' `<svg>` in a `<div class="heat-head">`
/// (kept in view while the rows scroll under it, by the page's style) and the squares' `<svg>`.
pub fn answer_heatmap(r: &Results, records: &[AnswerRecord], mark: &dyn Fn(&Cell) -> Option<String>) -> String {
    let mut runtimes: Vec<&str> = Vec::new();
    let mut calls: Vec<&str> = Vec::new();
    for a in records {
        if !runtimes.contains(&a.runtime.as_str()) {
            runtimes.push(&a.runtime);
        }
        if !calls.contains(&a.variant.as_str()) {
            calls.push(&a.variant);
        }
    }
    // the first note of each (runtime, call), from one pass over the cells
    let mut notes: BTreeMap<(&str, &str), String> = BTreeMap::new();
    for c in &r.cells {
        if let Some(n) = mark(c) {
            notes.entry((c.runtime.as_str(), c.variant.as_str())).or_insert(n);
        }
    }
    let squares: BTreeMap<(&str, &str), &AnswerRecord> =
        records.iter().map(|a| ((a.runtime.as_str(), a.variant.as_str()), a)).collect();
    if calls.is_empty() {
        return String::new();
    }
    // labels longer than these are cut with `…` (the squares' titles hold them whole)
    let calls_shown: Vec<String> = calls.iter().map(|c| cut(c, MAX_CALL_CHARS)).collect();
    let runtimes_shown: Vec<String> = runtimes.iter().map(|rt| cut(rt, MAX_RUNTIME_CHARS)).collect();
    let longest = |v: &[String]| v.iter().map(|t| t.chars().count()).max().unwrap_or(0) as f64;
    // monospace call names, 6.2 px a character at 10 px; runtime names at most 6 px, turned
    // 50° up: they reach cos 50° of their length to the right and sin 50° up
    let label_w = longest(&calls_shown) * 6.2 + 8.0;
    let column_label = longest(&runtimes_shown) * 6.0;
    let head_h = column_label * 0.766 + 12.0;
    let width = label_w + SQUARE * runtimes.len() as f64 + column_label * 0.643 + 10.0;
    let height = SQUARE * calls.len() as f64 + 4.0;
    // the column labels in a picture of their own, which the page keeps in view while the rows
    // scroll under it (`.heat-head` in the page's style); the squares' titles name the runtime
    let mut head = document()
        .set("width", format!("{width:.0}"))
        .set("height", format!("{head_h:.0}"))
        .set("aria-hidden", "true")
        .set("font-size", 10);
    for (j, shown) in runtimes_shown.iter().enumerate() {
        let x = label_w + SQUARE * j as f64 + SQUARE / 2.0 + 3.0;
        let y = head_h - 4.0;
        head = head.add(label(x, y, 10, shown).set("transform", format!("rotate(-50 {x:.1} {y:.1})")));
    }
    let mut doc = document()
        .set("width", format!("{width:.0}"))
        .set("height", format!("{height:.0}"))
        .set("role", "img")
        .set("aria-label", "each call's answer, per runtime")
        .set("font-size", 10);
    // a call the matrix marks as an anti-pattern (check-then-create…): its label in italics,
    // said in its title and in each of its squares'
    let anti: std::collections::BTreeSet<&str> =
        records.iter().filter(|a| a.anti_pattern).map(|a| a.variant.as_str()).collect();
    for (i, call) in calls.iter().enumerate() {
        let y = SQUARE * i as f64;
        let mut text = label(label_w - 4.0, y + SQUARE - 2.0, 10, &calls_shown[i])
            .set("text-anchor", "end")
            .set("font-family", "monospace");
        if anti.contains(call) {
            text = text.set("font-style", "italic").add(Title::new(plain(&format!("{call} (anti-pattern)"))));
        }
        doc = doc.add(text);
        for (j, rt) in runtimes.iter().enumerate() {
            let Some(a) = squares.get(&(*rt, *call)) else { continue };
            let list = AnswerList::of(&a.answer);
            let note = notes.get(&(*rt, *call));
            let said = note.map(|n| format!(" ({n})")).unwrap_or_default();
            let tag = if a.anti_pattern { " (anti-pattern)" } else { "" };
            let title = format!("{rt} {call}{tag}: {} — {}{said}", list.as_str(), a.answer.how);
            let mut square = bar(label_w + SQUARE * j as f64, y, SQUARE - 1.0, SQUARE - 1.0, list_colour(list), &title);
            if note.is_some() {
                square = square.set("stroke", DIFFER).set("stroke-width", 2);
            }
            doc = doc.add(square);
        }
    }
    format!("<div class=\"heatmap\"><div class=\"heat-head\">{head}</div>\n{doc}</div>")
}

#[cfg(test)]
mod tests {
    use super::{
        answer_heatmap, handoff_rate, AnswerVerdict, Cell, RaceResult, RecipeAnswer, Results, BAD, DIFFER, GOOD,
    };

    fn none(_: &Cell) -> Option<String> {
        None
    }

    fn base() -> Results {
        crate::report::fixture("base.json")
    }

    fn a_race(r: &Results) -> &RaceResult {
        r.cells
            .iter()
            .find_map(|c| match &c.result {
                super::super::model::CellResult::Race(x) if x.natural.is_some() => Some(x),
                _ => None,
            })
            .expect("the fixture has a race")
    }

    /// Every number of winners from 0 to the contenders gets a bar titled with its count, and
    /// the tallest bar is the most frequent count.
    #[test]
    fn the_winners_histogram_has_a_bar_per_count_titled_with_its_trials() {
        let r = base();
        let race = a_race(&r);
        let svg = super::race(race);
        let m = race.natural.as_ref().unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"), "{svg}");
        for k in 0..=m.stats.contenders {
            let n = m.stats.winners.get(&k).copied().unwrap_or(0);
            let plural = if k == 1 { "winner" } else { "winners" };
            assert!(svg.contains(&format!("{k} {plural}: {n} of {} trials", m.stats.trials)), "{k}: {svg}");
        }
        assert!(svg.contains("natural: "), "{svg}");
    }

    /// A mode with a failing ordering shows that ordering's share in red, and a spread line
    /// titled with its percentiles.
    #[test]
    fn orderings_show_their_failing_share_and_the_spread_its_percentiles() {
        let mut r = base();
        let race = r
            .cells
            .iter_mut()
            .find_map(|c| match &mut c.result {
                super::super::model::CellResult::Race(x) if x.natural.is_some() => Some(x),
                _ => None,
            })
            .unwrap();
        let m = race.natural.as_mut().unwrap();
        m.verdict = crate::verdict::RaceVerdict::MultipleWinners;
        let mut o = super::super::model::OrderingRun { offset_us: 0, verdict: m.verdict, stats: m.stats.clone() };
        o.stats.trials = 10;
        o.stats.multi_winner_trials = 5;
        let mut p = o.clone();
        p.offset_us = 500;
        p.stats.multi_winner_trials = 0;
        m.orderings = vec![o, p];
        m.stats.barrier_spread_us = Some(crate::verdict::race::Spread { p50: 40.0, p99: 300.0, max: 400.0 });
        let svg = super::race(race);
        assert!(svg.contains("offset 0 µs: 5 of 10 trials multiple-winners"), "{svg}");
        assert!(svg.contains("offset 500 µs: 0 of 10 trials multiple-winners"), "{svg}");
        // the red part of offset 0 is half of the column: 17 of 34 px
        assert!(svg.contains(&format!("fill=\"{BAD}\" height=\"17.0\" width=\"12.0\"")), "{svg}");
        assert!(svg.contains("barrier spread: p50 40 µs, p99 300 µs, largest 400 µs"), "{svg}");
        // one title per ordering, over its frame and its red share
        assert_eq!(svg.matches("offset 0 µs: 5 of 10").count(), 1, "{svg}");
        // offsets of 7 digits get columns wide enough for their labels: 43 px apart, not 30
        let m = race.natural.as_mut().unwrap();
        m.orderings[0].offset_us = 1_000_000;
        m.orderings[1].offset_us = 2_000_000;
        let svg = super::race(race);
        let x_of = |text: &str| -> f64 {
            let at = svg.find(&format!(">\n{text}\n</text>")).unwrap_or_else(|| panic!("{text}: {svg}"));
            let open = svg[..at].rfind("<text").unwrap();
            let x = &svg[open..at];
            let x = &x[x.find("x=\"").unwrap() + 3..];
            x[..x.find('"').unwrap()].parse().unwrap()
        };
        assert!(x_of("2000000") - x_of("1000000") >= 43.0, "{svg}");
    }

    #[test]
    fn a_handoff_rate_bar_is_red_in_proportion_and_green_when_it_held() {
        use crate::verdict::recipe::RecipeFailure;
        let no = RecipeAnswer {
            verdict: AnswerVerdict::No,
            failures: vec![RecipeFailure {
                mode: crate::verdict::RaceMode::Natural,
                counter: "torn_reads".into(),
                count: 1,
                out_of: "reads".into(),
                of: 10_000,
            }],
            held_over: None,
            unsettled: None,
        };
        let svg = handoff_rate(&no);
        assert!(svg.contains("torn reads 1 of 10000 reads"), "{svg}");
        // 1 in 10,000 is still seen: 2 px of red
        assert!(svg.contains(&format!("fill=\"{BAD}\" height=\"8.0\" width=\"2.0\"")), "{svg}");
        let yes = RecipeAnswer {
            verdict: AnswerVerdict::Yes,
            failures: vec![],
            held_over: Some(("reads".into(), 40)),
            unsettled: None,
        };
        let svg = handoff_rate(&yes);
        assert!(svg.contains("no failure over 40 reads") && svg.contains(GOOD) && !svg.contains(BAD), "{svg}");
    }

    /// A square per runtime × call, titled and coloured by the call's answer list; a call a
    /// runtime lacks has no square; labels are escaped.
    #[test]
    fn the_heatmap_has_a_square_per_runtime_and_call_coloured_by_its_answer() {
        use crate::report::answers::{records, AnswerList};
        let mut r = base();
        let svg = answer_heatmap(&r, &records(&r), &none);
        let all = records(&r);
        assert!(!all.is_empty());
        for a in &all {
            let tag = if a.anti_pattern { " (anti-pattern)" } else { "" };
            let list = AnswerList::of(&a.answer).as_str();
            let title = format!("{} {}{tag}: {list} — {}", a.runtime, a.variant, a.answer.how);
            assert!(svg.contains(&plain_escaped(&title)), "{title}: {svg}");
        }
        assert_eq!(svg.matches("<rect").count(), all.len(), "{svg}");
        assert!(!svg.contains(DIFFER));
        r.cells[0].runtime = "<b>&".into();
        let svg = answer_heatmap(&r, &records(&r), &none);
        assert!(svg.contains("&lt;b&gt;&amp;") && !svg.contains("<b>"), "{svg}");
    }

    /// The runtime labels sit in a picture of their own, in the `heat-head` block the page's
    /// style keeps in view; the squares follow in the second picture.
    #[test]
    fn the_heatmap_column_labels_are_a_sticky_head_of_their_own() {
        let r = base();
        let html = answer_heatmap(&r, &crate::report::answers::records(&r), &none);
        assert!(html.starts_with("<div class=\"heatmap\"><div class=\"heat-head\"><svg"), "{html}");
        let (head, body) = html.split_once("</div>").unwrap();
        assert!(head.contains(&r.cells[0].runtime) && !head.contains("<rect"), "{head}");
        assert!(body.contains("<rect") && body.contains("role=\"img\""), "{body}");
        assert!(crate::report::html::STYLE.contains(".heat-head{position:sticky;top:0"));
    }

    /// `text` as the svg crate writes it in element content.
    fn plain_escaped(text: &str) -> String {
        text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
    }

    /// An anti-pattern's row label is in italics and titled so, and so are its squares; other
    /// rows' are not.
    #[test]
    fn anti_patterns_are_marked_in_the_heatmap() {
        let mut r = base();
        let check = |r: &Results| -> usize {
            let records = crate::report::answers::records(r);
            let svg = answer_heatmap(r, &records, &none);
            let anti: std::collections::BTreeSet<&str> =
                records.iter().filter(|a| a.anti_pattern).map(|a| a.variant.as_str()).collect();
            assert_eq!(svg.matches("font-style=\"italic\"").count(), anti.len(), "{svg}");
            for v in &anti {
                assert!(svg.contains(&format!("<title>{v} (anti-pattern)</title>")), "{v}: {svg}");
                let squares = records.iter().filter(|a| a.variant == *v).count();
                assert_eq!(svg.matches(&format!("{v} (anti-pattern): ")).count(), squares, "{v}: {svg}");
            }
            anti.len()
        };
        let before = check(&r);
        assert!(before > 0, "the fixture has an anti-pattern");
        // marking one more call marks one more row
        let variant = r.cells.iter().find(|c| !c.anti_pattern).unwrap().variant.clone();
        for c in r.cells.iter_mut().filter(|c| c.variant == variant) {
            c.anti_pattern = true;
        }
        assert_eq!(check(&r), before + 1);
    }

    #[test]
    fn squares_of_marked_cells_are_outlined_and_say_why() {
        let r = base();
        let id =
            r.cells.iter().find(|c| matches!(c.result, super::super::model::CellResult::Race(_))).unwrap().id.clone();
        let svg = answer_heatmap(&r, &crate::report::answers::records(&r), &|c: &Cell| {
            (c.id == id).then(|| "the machines disagree".to_string())
        });
        assert_eq!(svg.matches(&format!("stroke=\"{DIFFER}\"")).count(), 1, "{svg}");
        assert!(svg.contains("(the machines disagree)"), "{svg}");
    }

    #[test]
    fn nothing_to_draw_draws_nothing() {
        let mut r = base();
        r.cells.clear();
        assert_eq!(answer_heatmap(&r, &crate::report::answers::records(&r), &none), "");
        let race = RaceResult { natural: None, amplified: None, ..a_race(&base()).clone() };
        assert_eq!(super::race(&race), "");
    }
}

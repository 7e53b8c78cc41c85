//! `report --format html`: one self-contained page (inline CSS, no script, no network).
//!
//! For each runtime row label (each machine's, in a merged file) a variant × target matrix
//! with the race column, each cell coloured by its outcome or verdict and expandable
//! (`<details>`) to the call, the raw error, the winners histogram, natural and amplified
//! rates and the bound; then the hand-off tables (recipe × runtime, counters), and in a merged
//! file the machines and the cells that disagree between them (marked `≠`). Every text from
//! the results file is escaped ([`escape`]).

use std::fmt::Write;

use super::model::{Cell, CellResult, ModeRun, Results, Scenario};
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

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;background:#fff}
table{border-collapse:collapse;margin:.5em 0 1.5em}th,td{border:1px solid #bbb;padding:3px 6px;vertical-align:top;text-align:left}
th{background:#eee}summary{cursor:pointer;font-weight:600}details div{font-weight:normal;font-size:12px;max-width:32em;white-space:pre-wrap}
code{font-size:12px}.good{background:#c8efc8}.bad{background:#f6c0c0}.warn{background:#fbe6a6}.none{background:#ddd}
pre{white-space:pre-wrap}.differ{outline:3px solid #a020f0;outline-offset:-3px}";

/// The colour class of a word: `good` (safe), `bad` (unsafe), `warn` (inconclusive, faults),
/// `none` (not measured).
fn class(word: &str) -> &'static str {
    match word {
        "refused" | "exclusive" | "acquired" => "good",
        "replaced" | "damaged" | "nested" | "kept" | "multiple-winners" | "lost-update" => "bad",
        "unsupported" | "harness-error" | "failed" => "none",
        _ => "warn",
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
fn detail(c: &Cell) -> String {
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
    d
}

/// One `<td>`: the summary text coloured by the cell's word, expanding to [`detail`].
fn td(c: &Cell, summary: &str, differ: bool) -> String {
    let mark = if differ { " ≠" } else { "" };
    let cls = if differ { format!("{} differ", class(c.word())) } else { class(c.word()).to_string() };
    format!(
        "<td class=\"{cls}\"><details><summary>{}{mark}</summary><div>{}</div></details></td>",
        escape(summary),
        escape(&detail(c))
    )
}

/// The page for `r`.
pub fn render(r: &Results) -> String {
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
    // the answer first, as in every report: which call to use, then the races against others
    let answers = super::answers::render(r, super::answers::ANSWER_WIDTH);
    if !answers.is_empty() {
        let _ = writeln!(h, "<h2>Which call to use</h2>\n<pre class=\"answers\">{}</pre>", escape(&answers));
    }
    let against = table::against_lines(r);
    if !against.is_empty() {
        h += "<h2>Against other parties' calls</h2>\n<ul>\n";
        for l in &against {
            let _ = writeln!(h, "<li>{}</li>", escape(l));
        }
        h += "</ul>\n";
    }
    let targets = r.targets();
    for rt in r.measured_runtimes() {
        let rows = r.rows(rt);
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(h, "<h2>{}</h2>", escape(rt));
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
                    Some(c) => h += &td(c, &table::second_text(c), differ.contains(c.id.as_str())),
                    None => h += "<td class=\"none\">-</td>",
                }
            }
            if r.has_races() {
                match row.race {
                    Some(c) => h += &td(c, &table::race_text(c), differ.contains(c.id.as_str())),
                    None => {
                        let _ = write!(h, "<td class=\"none\">{}</td>", escape(table::unraced_text(r, row)));
                    }
                }
            }
            let safe = table::safe_text(r, row);
            let cls = match row.safe() {
                Some(true) => "good",
                Some(false) => "bad",
                None => "warn",
            };
            let _ = writeln!(h, "<td class=\"{cls}\">{}</td></tr>", escape(&safe));
        }
        h += "</table>\n";
    }
    for scenario in Scenario::HANDOFFS {
        let cells: Vec<&Cell> = r.cells.iter().filter(|c| c.scenario == scenario).collect();
        if cells.is_empty() {
            continue;
        }
        let mut runtimes: Vec<&str> = Vec::new();
        let mut variants: Vec<&str> = Vec::new();
        for c in &cells {
            if !runtimes.contains(&c.runtime.as_str()) {
                runtimes.push(&c.runtime);
            }
            if !variants.contains(&c.variant.as_str()) {
                variants.push(&c.variant);
            }
        }
        let _ = writeln!(h, "<h2>{} (hand-off: counted from the files)</h2>", escape(scenario.as_str()));
        h += "<table><tr><th>recipe</th>";
        for rt in &runtimes {
            let _ = write!(h, "<th>{}</th>", escape(rt));
        }
        h += "</tr>\n";
        for v in &variants {
            let _ = write!(h, "<tr><th><code>{}</code></th>", escape(v));
            for rt in &runtimes {
                match cells.iter().find(|c| c.variant == *v && c.runtime == *rt) {
                    Some(c) => {
                        let mut text = table::handoff_text(c);
                        if let Some(a) = table::amplified_handoff_text(c) {
                            text.push_str(&format!(" · amplified: {a}"));
                        }
                        let bad = match &c.result {
                            CellResult::Counters(k) => {
                                if k.counters.is_empty() {
                                    "none"
                                } else {
                                    "warn"
                                }
                            }
                            _ => "none",
                        };
                        let _ = write!(
                            h,
                            "<td class=\"{bad}\"><details><summary>{}</summary><div>{}</div></details></td>",
                            escape(&text),
                            escape(&detail(c))
                        );
                    }
                    None => h += "<td class=\"none\">-</td>",
                }
            }
            h += "</tr>\n";
        }
        h += "</table>\n";
    }
    let dis = table::disagreement_text(r);
    if !dis.is_empty() {
        let _ = writeln!(h, "<h2>Cells that disagree between machines</h2>\n<pre>{}</pre>", escape(&dis));
    }
    h += "</body></html>\n";
    h
}

#[cfg(test)]
mod tests {
    use super::{render, Results};

    fn base() -> Results {
        crate::report::fixture("base.json")
    }

    #[test]
    fn html_page_snapshot() {
        let page = render(&base());
        assert!(!page.contains("http://") && !page.contains("https://") && !page.contains("<script"));
        insta::assert_snapshot!(page);
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

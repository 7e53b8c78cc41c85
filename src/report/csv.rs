//! `report --format csv`: tidy CSV, one row per cell, for spreadsheets and data frames.
//!
//! Columns ([`HEADER`]): the machine (merged files only, else empty), the runtime row label,
//! adapter name and version, variant, family, scenario, target, the outcome or verdict word
//! ([`Cell::word`]), the error code; for races the deciding mode, the natural and amplified
//! verdicts, and the deciding run's trials, multi-winner trials and 95% upper bound on the
//! multi-winner rate; for hand-off cells the counters as `name=value;…`; the source kind
//! when it is not the variant's own (`empty-dir`, [`Cell::source`]); last, the answer for the
//! cell's call on its runtime (`yes`, `no: replaced on file`, `? (-n 100)`; empty for hand-off
//! and thread cells). Fields are quoted by the
//! `csv` crate wherever needed (labels and errors come from probes).

use super::model::{Cell, CellResult, Results};

/// The header row.
pub const HEADER: [&str; 19] = [
    "machine",
    "runtime",
    "runtime_name",
    "version",
    "variant",
    "family",
    "scenario",
    "target",
    "word",
    "error_code",
    "decided_by",
    "natural_verdict",
    "amplified_verdict",
    "trials",
    "multi_winner_trials",
    "multi_winner_upper95",
    "counters",
    "source",
    "answer",
];

/// The fields of one cell, in [`HEADER`] order; empty where the column does not apply.
/// `answer` is the answer text of the cell's call, given by the caller.
pub fn record(c: &Cell, answer: &str) -> [String; 19] {
    let mut f: [String; 19] = Default::default();
    f[18] = answer.to_string();
    f[17] = c.source.map(|k| k.as_str().to_string()).unwrap_or_default();
    f[0] = c.machine.clone().unwrap_or_default();
    f[1] = c.runtime.clone();
    f[2] = c.runtime_name.clone();
    f[3] = c.runtime_version.clone();
    f[4] = c.variant.clone();
    f[5] = c.family.clone();
    f[6] = c.scenario.as_str().into();
    f[7] = c.target.as_str().into();
    f[8] = c.word().into();
    f[9] = c.error().map(|e| e.code.clone()).unwrap_or_default();
    match &c.result {
        CellResult::Race(r) => {
            f[10] = r.decided_by.as_str().into();
            f[11] = r.natural.as_ref().map(|m| m.verdict.as_str().to_string()).unwrap_or_default();
            f[12] = r.amplified.as_ref().map(|m| m.verdict.as_str().to_string()).unwrap_or_default();
            if let Some(m) = r.deciding() {
                f[13] = m.stats.trials.to_string();
                f[14] = m.stats.multi_winner_trials.to_string();
                f[15] = format!("{:.6}", m.stats.multi_winner_upper95);
            }
        }
        CellResult::Counters(k) => {
            f[16] = k.counters.iter().map(|(n, v)| format!("{n}={v}")).collect::<Vec<_>>().join(";");
            // the amplified run's counters beside the natural ones, prefixed
            if let Some(a) = &k.amplified {
                for (n, v) in &a.counters {
                    f[16].push_str(&format!(";amplified_{n}={v}"));
                }
            }
        }
        CellResult::SecondComer(_) => {}
    }
    f
}

/// A field's text: control characters escaped (`\u{1b}`) as in every other format, since a CSV
/// is also read with `cat` and an escape sequence from a probe's error text would drive the
/// terminal; line breaks and tabs are kept, as CSV quoting carries them (RFC 4180).
///
/// A field that a spreadsheet would run as a formula (it starts with `=`, `+`, `-` or `@` and is
/// not a number, e.g. `=HYPERLINK(…)` as a runtime label) gets a leading `'`, as OWASP's "CSV
/// Injection" page advises (https://owasp.org/www-community/attacks/CSV_Injection); numbers such
/// as an HResult (`-2147024816`) stay as they are.
fn csv_text(s: &str) -> String {
    let text = super::table::escape_controls_but(s, &['\n', '\r', '\t']).into_owned();
    let formula = text.starts_with(['=', '+', '-', '@']) && text.trim().parse::<f64>().is_err();
    if formula {
        format!("'{text}")
    } else {
        text
    }
}

/// The CSV of every cell of `r`, in cell order, with [`HEADER`] first (RFC 4180 quoting,
/// `\n` line ends).
pub fn render(r: &Results) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(HEADER).expect("writes to memory");
    let answers = super::answers::records(r);
    for c in &r.cells {
        let answer = answers
            .iter()
            .find(|a| a.runtime == c.runtime && a.variant == c.variant && c.contenders.is_processes())
            .filter(|_| matches!(c.scenario, super::model::Scenario::SecondComer | super::model::Scenario::Race));
        let fields = record(c, answer.map_or("", |a| a.answer.how.as_str()));
        w.write_record(fields.iter().map(|f| csv_text(f))).expect("writes to memory");
    }
    String::from_utf8(w.into_inner().expect("flushes to memory")).expect("fields are UTF-8")
}

#[cfg(test)]
mod tests {
    use super::{csv_text, render, CellResult, Results, HEADER};

    fn base() -> Results {
        crate::report::fixture("base.json")
    }

    #[test]
    fn csv_one_row_per_cell() {
        let r = base();
        let text = render(&r);
        let mut rd = csv::Reader::from_reader(text.as_bytes());
        assert_eq!(rd.headers().unwrap().iter().collect::<Vec<_>>(), HEADER.to_vec());
        assert_eq!(rd.records().count(), r.cells.len());
        insta::assert_snapshot!(text);
    }

    #[test]
    fn csv_hand_off_counters_as_name_value_pairs() {
        let mut r = base();
        r.cells.truncate(1);
        r.cells[0].scenario = crate::report::model::Scenario::Publish;
        let mut k = crate::report::model::CountersResult::default();
        k.counters.insert("reads".into(), 4888);
        k.counters.insert("torn_reads".into(), 4);
        r.cells[0].result = CellResult::Counters(k);
        let text = render(&r);
        let line = text.lines().nth(1).unwrap();
        assert!(line.contains(",publish,") && line.ends_with(",counters,,,,,,,,reads=4888;torn_reads=4,,"), "{line}");
        let page = crate::report::html::render(&r);
        assert!(
            page.contains("publish (hand-off: counted from the files)") && page.contains("torn_reads = 4"),
            "{page}"
        );
    }

    #[test]
    fn csv_quotes_probe_text() {
        let mut r = base();
        r.cells.truncate(1);
        r.cells[0].runtime = "node, \"evil\"\nrow".into();
        let text = render(&r);
        let mut rd = csv::Reader::from_reader(text.as_bytes());
        let rec = rd.records().next().unwrap().unwrap();
        assert_eq!(&rec[1], "node, \"evil\"\nrow");
    }

    #[test]
    fn csv_neutralises_formulas_but_not_numbers() {
        assert_eq!(csv_text("=HYPERLINK(\"http://evil/\",\"x\")"), "'=HYPERLINK(\"http://evil/\",\"x\")");
        assert_eq!(csv_text("+cmd|calc"), "'+cmd|calc");
        assert_eq!(csv_text("@SUM(1+1)"), "'@SUM(1+1)");
        assert_eq!(csv_text("-2+3"), "'-2+3");
        assert_eq!(csv_text("-2147024816"), "-2147024816");
        assert_eq!(csv_text("EEXIST"), "EEXIST");
        assert_eq!(csv_text("a\u{202e}b"), "a\\u{202e}b");
    }

    #[test]
    fn csv_escapes_terminal_control_bytes() {
        let mut r = base();
        r.cells.truncate(1);
        r.cells[0].runtime = "node\u{1b}[31mred\u{7}".into();
        let text = render(&r);
        assert!(!text.contains('\u{1b}') && !text.contains('\u{7}'), "{text:?}");
        assert!(text.contains("node\\u{1b}[31mred\\u{7}"), "{text}");
    }
}

//! The comparison table (runtime × variant), built once as text rows and rendered for the
//! terminal (tabled) and for Markdown ([`super::markdown`]).

use tabled::builder::Builder;
use tabled::settings::Style;

use super::model::{Cell, Results, Row};
use crate::verdict::{Outcome, RaceVerdict};

/// Text of a second-comer cell: the outcome, the normalised error code when the call failed,
/// and the relative-path outcome when it differs (`refused EEXIST`, `kept (rel: refused)`).
pub fn second_text(c: &Cell) -> String {
    let mut s = c.word().to_string();
    if let (Some(o), Some(e)) = (c.outcome, &c.error) {
        if matches!(o, Outcome::Refused | Outcome::Failed | Outcome::Damaged) {
            s.push(' ');
            s.push_str(&e.code);
        }
    }
    if let (Some(o), Some(r)) = (c.outcome, &c.relative) {
        if r.outcome != o {
            s.push_str(&format!(" (rel: {})", r.outcome.as_str()));
        }
    }
    s
}

/// Text of a race cell: `exclusive`, or the verdict with the number of offending trials
/// (`multiple-winners 187/200`).
pub fn race_text(c: &Cell) -> String {
    let Some(v) = c.verdict else { return "?".into() };
    let Some(st) = &c.race else { return v.as_str().into() };
    let n = match v {
        RaceVerdict::MultipleWinners => Some(st.multi_winner_trials),
        RaceVerdict::LostUpdate => Some(st.lost_update_trials),
        RaceVerdict::NoWinner => Some(st.no_winner_trials),
        RaceVerdict::Inconclusive => Some(st.fault_trials),
        _ => None,
    };
    match n {
        Some(n) => format!("{} {n}/{}", v.as_str(), st.trials),
        None => v.as_str().into(),
    }
}

/// "yes", "no" or "?".
pub fn safe_text(r: &Row<'_>) -> &'static str {
    match r.safe() {
        Some(true) => "yes",
        Some(false) => "no",
        None => "?",
    }
}

/// The race column header for a runtime: `race 3×200` when every race cell agrees.
pub fn race_header(rows: &[Row<'_>]) -> String {
    let shapes: Vec<(usize, usize)> =
        rows.iter().filter_map(|r| r.race.and_then(|c| c.race.as_ref())).map(|s| (s.contenders, s.trials)).collect();
    match shapes.first() {
        Some(&(k, t)) if shapes.iter().all(|s| *s == (k, t)) => format!("race {k}×{t}"),
        _ => "race".into(),
    }
}

/// Header and rows of one runtime's table, as text. `with_call` adds the call column.
pub fn text_rows(results: &Results, runtime: &str, with_call: bool) -> (Vec<String>, Vec<Vec<String>>) {
    let targets = results.targets();
    let rows = results.rows(runtime);
    let mut header = vec!["variant".to_string()];
    if with_call {
        header.push("call".into());
    }
    header.extend(targets.iter().map(|t| t.to_string()));
    let races = results.has_races();
    if races {
        header.push(race_header(&rows));
    }
    header.push("safe as a lock".into());
    let mut out = Vec::new();
    for r in &rows {
        let mut line =
            vec![if r.anti_pattern { format!("{} (anti-pattern)", r.variant) } else { r.variant.to_string() }];
        if with_call {
            line.push(r.call.to_string());
        }
        for t in &targets {
            line.push(r.second.get(t).map_or_else(|| "-".into(), |c| second_text(c)));
        }
        if races {
            line.push(r.race.map_or_else(|| "-".into(), race_text));
        }
        line.push(safe_text(r).into());
        out.push(line);
    }
    (header, out)
}

/// One runtime's table for the terminal.
pub fn render_terminal(results: &Results, runtime: &str) -> String {
    let (header, rows) = text_rows(results, runtime, false);
    let mut b = Builder::default();
    b.push_record(header);
    for r in rows {
        b.push_record(r);
    }
    let mut t = b.build();
    t.with(Style::sharp());
    t.to_string()
}

/// A one-line race summary for a runtime: median barrier spread and trials per second.
pub fn race_line(results: &Results, runtime: &str) -> Option<String> {
    let cells: Vec<&Cell> = results.cells.iter().filter(|c| c.runtime == runtime && c.race.is_some()).collect();
    if cells.is_empty() {
        return None;
    }
    let mut p50: Vec<f64> = cells.iter().filter_map(|c| c.race.as_ref()?.barrier_spread_us.map(|s| s.p50)).collect();
    let mut p99: Vec<f64> = cells.iter().filter_map(|c| c.race.as_ref()?.barrier_spread_us.map(|s| s.p99)).collect();
    let mut tps: Vec<f64> = cells.iter().filter_map(|c| c.trials_per_second).collect();
    let med = |v: &mut Vec<f64>| crate::verdict::spread(v).map(|s| s.p50);
    let trials: usize = cells.iter().filter_map(|c| c.race.as_ref().map(|s| s.trials)).sum();
    let spread = match (med(&mut p50), med(&mut p99)) {
        (Some(a), Some(b)) => format!("barrier spread (median over cells) p50 {a:.0} µs, p99 {b:.0} µs"),
        _ => "barrier spread not measured (the probe has no microsecond clock)".to_string(),
    };
    Some(format!(
        "races: {} cells, {} trials; {spread}; {} trials/s per cell (median)",
        cells.len(),
        trials,
        med(&mut tps).map_or("?".into(), |x| format!("{x:.0}")),
    ))
}

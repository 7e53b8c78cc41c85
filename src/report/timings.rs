//! How long whole runs take: the summary `benches/default-run.sh` writes from hyperfine's
//! measurements and the last run's cells (committed as `benches/results/default-run.json`),
//! and its Markdown, which `conformance docs` puts in the README (`scenario=timings`).
//!
//! The figures are measured, never typed: the script writes the file, the marker renders it,
//! and `docs --check` fails when the document and the file disagree.

use crate::report::model::{Phase, PhaseTime};
use serde::{Deserialize, Serialize};

/// The summary of one benchmark round: the machine, the build and one entry per timed command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timings {
    /// The machine, as the script describes it (`x86_64, 2 cores, Linux 6.18.44 (Debian 12)`).
    pub machine: String,
    /// The commit of the binary measured (`git rev-parse --short HEAD`), with `-dirty` when the
    /// checkout had changes.
    pub conformance: String,
    /// When the round ended (RFC 3339 date).
    pub date: String,
    /// The commands timed, in the script's order.
    pub commands: Vec<TimedCommand>,
}

/// One command hyperfine timed, and where the time of its last run went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimedCommand {
    /// The command as a user types it (`conformance run -r node,bun,deno`).
    pub command: String,
    /// Hyperfine's wall time of each run, seconds.
    pub times_s: Vec<f64>,
    /// Hyperfine's mean, seconds.
    pub mean_s: f64,
    /// Hyperfine's standard deviation, seconds (`null` for one run).
    pub stddev_s: Option<f64>,
    /// The shortest run, seconds.
    pub min_s: f64,
    /// The longest run, seconds.
    pub max_s: f64,
    /// Cells of the last run.
    pub cells: usize,
    /// The last run's cell time per runtime row label, seconds (the sum of its cells'
    /// `elapsed_ms`; hand-off cells of two runtimes run at once, so the sum exceeds the wall
    /// time).
    pub cell_s_by_runtime: Vec<Share>,
    /// The last run's cell time per scenario, seconds.
    pub cell_s_by_scenario: Vec<Share>,
    /// The last run's wall time step by step (its `run_info.phases`); empty in summaries
    /// written before runs recorded them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<PhaseTime>,
}

/// A part of a run's cell time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Share {
    /// A runtime row label (`node 20.20.2`) or a scenario (`race`).
    pub name: String,
    /// Seconds.
    pub s: f64,
}

impl TimedCommand {
    /// The cell seconds summed over every runtime.
    pub fn cell_s(&self) -> f64 {
        self.cell_s_by_runtime.iter().map(|s| s.s).sum()
    }
}

/// Seconds as the tables show them: one decimal.
fn secs(s: f64) -> String {
    format!("{s:.1} s")
}

/// `shares`, largest first, as `name 12.3 s (9%)` joined by commas, each share of `total`.
fn share_line(shares: &[Share], total: f64) -> String {
    let mut v: Vec<&Share> = shares.iter().collect();
    v.sort_by(|a, b| b.s.total_cmp(&a.s).then_with(|| a.name.cmp(&b.name)));
    v.iter()
        .map(|s| {
            let pct = if total > 0.0 { (s.s / total * 100.0).round() } else { 0.0 };
            format!("{} {} ({pct:.0}%)", crate::report::markdown::md_escape(&s.name), secs(s.s))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// How many runtimes' turns [`phase_line`] names.
const TURNS_NAMED: usize = 3;

/// `phases` as one line: each step's wall time in the order they ran, the runtimes' turns
/// summed where the first one ran and the longest [`TURNS_NAMED`] of them named
/// (`discover 8.8 s, runtimes' turns 245.6 s (pwsh 7.6.9 68.1 s, …), hand-offs 270.5 s`); empty
/// for no steps.
fn phase_line(phases: &[PhaseTime]) -> String {
    let mut parts = Vec::new();
    let mut turns: Vec<&PhaseTime> = phases.iter().filter(|p| p.phase == Phase::Turn).collect();
    turns.sort_by(|a, b| b.seconds.total_cmp(&a.seconds));
    let first_turn = phases.iter().position(|p| p.phase == Phase::Turn);
    for (i, p) in phases.iter().enumerate() {
        let name = match p.phase {
            Phase::Turn if first_turn != Some(i) => continue,
            Phase::Turn => {
                let named: Vec<String> = turns
                    .iter()
                    .take(TURNS_NAMED)
                    .map(|t| format!("{} {}", t.runtime.as_deref().unwrap_or("?"), secs(t.seconds)))
                    .collect();
                let more = if turns.len() > TURNS_NAMED { ", …" } else { "" };
                let sum = turns.iter().map(|t| t.seconds).sum();
                let line = format!("{} runtimes' turns {} ({}{more})", turns.len(), secs(sum), named.join(", "));
                parts.push(crate::report::markdown::md_escape(&line));
                continue;
            }
            Phase::Discover => "discover",
            Phase::Libraries => "libraries",
            Phase::StartProbes => "start the probes",
            Phase::Handoffs => "hand-offs",
            Phase::Pairs => "pairs",
            Phase::Report => "report",
        };
        parts.push(format!("{name} {}", secs(p.seconds)));
    }
    parts.join(", ")
}

/// The Markdown of `t`, ending in a newline: a table of the commands (runs, mean ± σ,
/// min … max, cells), a line naming the machine and build, then for each command where its
/// last run's cell time went, by scenario and by runtime.
pub fn markdown(t: &Timings) -> String {
    let mut out = String::from("| command | runs | mean ± σ | min … max | cells |\n|---|---:|---:|---:|---:|\n");
    for c in &t.commands {
        let sd = c.stddev_s.map_or(String::new(), |sd| format!(" ± {}", secs(sd)));
        out += &format!(
            "| `{}` | {} | {}{sd} | {} … {} | {} |\n",
            c.command.replace('|', "\\|"),
            c.times_s.len(),
            secs(c.mean_s),
            secs(c.min_s),
            secs(c.max_s),
            c.cells
        );
    }
    out += &format!(
        "\nMeasured with hyperfine on {} (conformance {}, {}).\n",
        crate::report::markdown::md_escape(&t.machine),
        crate::report::markdown::md_escape(&t.conformance),
        crate::report::markdown::md_escape(&t.date)
    );
    for c in &t.commands {
        let total = c.cell_s();
        out += &format!(
            "\n`{}`, cell time of the last run ({}, {} runtime rows): by scenario {}; by runtime {}.\n",
            c.command.replace('`', "'"),
            secs(total),
            c.cell_s_by_runtime.len(),
            share_line(&c.cell_s_by_scenario, total),
            share_line(&c.cell_s_by_runtime, total)
        );
        if !c.phases.is_empty() {
            out += &format!("Its wall time by step: {}.\n", phase_line(&c.phases));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{markdown, Share, TimedCommand, Timings};
    use crate::report::model::{Phase, PhaseTime};

    fn sample() -> Timings {
        Timings {
            machine: "x86_64, 2 cores".into(),
            conformance: "abc1234".into(),
            date: "2026-12-06".into(),
            commands: vec![TimedCommand {
                command: "conformance run -r node,bun".into(),
                times_s: vec![10.0, 12.0, 11.0],
                mean_s: 11.0,
                stddev_s: Some(1.0),
                min_s: 10.0,
                max_s: 12.0,
                cells: 40,
                cell_s_by_runtime: vec![
                    Share { name: "node 20".into(), s: 3.0 },
                    Share { name: "bun 1".into(), s: 9.0 },
                ],
                cell_s_by_scenario: vec![Share { name: "race".into(), s: 12.0 }],
                phases: Vec::new(),
            }],
        }
    }

    #[test]
    fn the_table_gives_each_command_and_the_shares_largest_first() {
        let md = markdown(&sample());
        assert!(md.contains("| `conformance run -r node,bun` | 3 | 11.0 s ± 1.0 s | 10.0 s … 12.0 s | 40 |"), "{md}");
        assert!(md.contains("by runtime bun 1 9.0 s (75%), node 20 3.0 s (25%)."), "{md}");
        assert!(md.contains("(12.0 s, 2 runtime rows): by scenario race 12.0 s (100%)"), "{md}");
        assert!(md.contains("on x86_64, 2 cores (conformance abc1234, 2026-12-06)"), "{md}");
    }

    #[test]
    fn the_steps_are_in_their_order_with_the_turns_summed_and_the_longest_named() {
        let step =
            |phase, runtime: Option<&str>, seconds| PhaseTime { phase, runtime: runtime.map(Into::into), seconds };
        let mut t = sample();
        assert!(!markdown(&t).contains("by step"), "no steps, no line");
        t.commands[0].phases = vec![
            step(Phase::Discover, None, 8.84),
            step(Phase::Turn, Some("node 20"), 11.7),
            step(Phase::Turn, Some("pwsh 7"), 68.1),
            step(Phase::Turn, Some("bash 5"), 32.6),
            step(Phase::Turn, Some("rust 1"), 5.1),
            step(Phase::Handoffs, None, 270.5),
            step(Phase::Pairs, None, 44.6),
        ];
        let md = markdown(&t);
        let want = "Its wall time by step: discover 8.8 s, 4 runtimes' turns 117.5 s (pwsh 7 68.1 s, bash 5 32.6 s, \
                    node 20 11.7 s, …), hand-offs 270.5 s, pairs 44.6 s.";
        assert!(md.contains(want), "{md}");
    }

    #[test]
    fn one_run_has_no_deviation_and_the_file_round_trips() {
        let mut t = sample();
        t.commands[0].stddev_s = None;
        assert!(markdown(&t).contains("| 11.0 s | 10.0 s … 12.0 s |"));
        let text = serde_json::to_string(&t).unwrap();
        assert_eq!(serde_json::from_str::<Timings>(&text).unwrap(), t);
        let extra = text.replacen("{", "{\"surprise\":1,", 1);
        assert!(serde_json::from_str::<Timings>(&extra).is_err(), "unknown fields are refused");
    }
}

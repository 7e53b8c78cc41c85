//! `summary.md`: run information, one table per runtime, race details, skipped runtimes.

use std::fmt::Write;

use super::model::Results;
use super::table::{race_line, text_rows};

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn md_table(header: &[String], rows: &[Vec<String>]) -> String {
    let mut s = String::new();
    let line =
        |cells: &[String]| format!("| {} |\n", cells.iter().map(|c| md_escape(c)).collect::<Vec<_>>().join(" | "));
    s.push_str(&line(header));
    s.push_str(&format!("|{}\n", "---|".repeat(header.len())));
    for r in rows {
        let quoted: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, c)| if i == 1 && header.get(1).is_some_and(|h| h == "call") { code_span(c) } else { c.clone() })
            .collect();
        s.push_str(&line(&quoted));
    }
    s
}

/// A Markdown code span that survives backticks inside (CommonMark: a longer fence).
fn code_span(s: &str) -> String {
    if s.contains('`') {
        format!("`` {s} ``")
    } else {
        format!("`{s}`")
    }
}

/// Renders the whole summary as Markdown.
pub fn render(r: &Results) -> String {
    let mut s = String::new();
    let i = &r.run_info;
    let _ = writeln!(s, "# conformance results\n");
    let _ = writeln!(
        s,
        "Measured {} on {} {} (kernel {}, {}), scratch on `{}` ({}; {}), conformance {}; {} contenders × {} trials per race ({} for one-shot runtimes); run took {:.1} s.\n",
        i.date, i.os, i.os_version, i.kernel, i.arch, i.fs.fs_type, i.fs.mount_point, i.fs.mount_options, i.harness_version, i.contenders, i.trials, i.oneshot_trials, i.duration_s
    );
    let _ = writeln!(
        s,
        "Outcomes (second comer: a first comer's token stands at the target, the runtime attempts with its own): `acquired` (control, free name taken), `failed` (control: the call cannot take a free name), `refused` (failed, target unchanged: safe), `replaced` (silent overwrite), `kept` (success without taking anything), `nested` (went inside the directory), `damaged`. Race verdicts: `exclusive`, `multiple-winners n/T`, `lost-update n/T`, `no-winner n/T`, `inconclusive`. *Safe as a lock* is `yes` only when the control acquired, all four target states refused (with absolute and relative paths) and the race was exclusive over at least 50 trials; `?` when something needed is missing or faulty. Every outcome is classified from the probe's report and the file system afterwards.\n"
    );
    for rt in r.measured_runtimes() {
        let info = r.run_info.runtimes.iter().find(|x| x.label == rt);
        let _ = writeln!(s, "## {rt}\n");
        if let Some(p) = info.and_then(|x| x.path.as_ref()) {
            let _ = writeln!(s, "`{p}`\n");
        }
        let (h, rows) = text_rows(r, rt, true);
        s.push_str(&md_table(&h, &rows));
        if let Some(l) = race_line(r, rt) {
            let _ = writeln!(s, "\n{l}");
        }
        s.push('\n');
    }
    if r.has_races() {
        let _ = writeln!(s, "## Race details\n");
        let header: Vec<String> = [
            "runtime",
            "variant",
            "verdict",
            "trials",
            "winners (n: trials)",
            "spread p50 µs",
            "spread p99 µs",
            "trials/s",
        ]
        .iter()
        .map(|x| x.to_string())
        .collect();
        let mut rows = Vec::new();
        for c in r.cells.iter().filter(|c| c.race.is_some()) {
            let st = c.race.as_ref().expect("filtered");
            let hist = st.winners.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>().join(", ");
            let sp = st.barrier_spread_us;
            rows.push(vec![
                c.runtime.clone(),
                c.variant.clone(),
                c.word().to_string(),
                format!("{}×{}", st.contenders, st.trials),
                hist,
                sp.map_or("-".into(), |x| format!("{:.0}", x.p50)),
                sp.map_or("-".into(), |x| format!("{:.0}", x.p99)),
                c.trials_per_second.map_or("-".into(), |x| format!("{x:.0}")),
            ]);
        }
        s.push_str(&md_table(&header, &rows));
        s.push('\n');
    }
    let skipped: Vec<_> = r.run_info.runtimes.iter().filter(|x| x.status != "found").collect();
    if !skipped.is_empty() {
        let _ = writeln!(s, "## Not measured\n");
        for x in skipped {
            let _ = writeln!(s, "- **{}**: {} — {}", x.label, x.status, x.reason.as_deref().unwrap_or(""));
        }
        s.push('\n');
    }
    let faults: Vec<_> = r.cells.iter().filter(|c| c.evidence.is_some()).collect();
    if !faults.is_empty() {
        let _ = writeln!(s, "## Evidence (faults, prompts, stray output)\n");
        for c in faults {
            let _ = writeln!(s, "- `{}` {}: {}", c.id, c.word(), md_escape(c.evidence.as_deref().unwrap_or("")));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::render;
    use crate::exec::protocol::RawError;
    use crate::report::model::{Cell, ErrorInfo, FsInfo, RelativeAttempt, Results, RunInfo, RuntimeInfo, Scenario};
    use crate::verdict::{Outcome, RaceStats, RaceVerdict, Spread};

    fn cell(variant: &str, scenario: Scenario, target: &str) -> Cell {
        let v = crate::matrix::Variant {
            id: variant.into(),
            family: "node".into(),
            call: "fs.call(p)".into(),
            source: crate::matrix::SourceKind::None,
            creates: crate::matrix::Creates::File,
            anti_pattern: false,
            holds: false,
            note: String::new(),
        };
        let mut c = Cell::new(("node 20.0.0", "node", "20.0.0"), &v, scenario, target);
        c.elapsed_ms = 1.0;
        c
    }

    /// A hand-built model: one safe and one unsafe variant, a relative-path disagreement, a
    /// fault with evidence, and a skipped runtime.
    fn model() -> Results {
        let eexist = ErrorInfo {
            code: "EEXIST".into(),
            raw: RawError {
                kind: "Error".into(),
                code: Some("EEXIST".into()),
                errno: Some(-17),
                message: "EEXIST: file already exists".into(),
                ..RawError::default()
            },
        };
        let mut cells = Vec::new();
        let mut c = cell("node.a.wx", Scenario::SecondComer, "absent");
        c.outcome = Some(Outcome::Acquired);
        cells.push(c);
        let mut c = cell("node.a.wx", Scenario::SecondComer, "file");
        c.outcome = Some(Outcome::Refused);
        c.error = Some(eexist.clone());
        cells.push(c);
        let mut c = cell("node.a.wx", Scenario::Race, "absent");
        c.verdict = Some(RaceVerdict::Exclusive);
        c.race = Some(RaceStats {
            contenders: 3,
            trials: 10,
            winners: [(1, 10)].into(),
            multi_winner_trials: 0,
            max_winners: 1,
            lost_update_trials: 0,
            no_winner_trials: 0,
            fault_trials: 0,
            wins_by_contender: vec![4, 3, 3],
            barrier_spread_us: Some(Spread { p50: 90.0, p99: 300.0, max: 310.0 }),
        });
        c.trials_per_second = Some(1200.0);
        cells.push(c);
        let mut c = cell("node.b", Scenario::SecondComer, "absent");
        c.outcome = Some(Outcome::Acquired);
        c.relative = Some(RelativeAttempt { outcome: Outcome::Damaged, error: None });
        cells.push(c);
        let mut c = cell("node.b", Scenario::SecondComer, "file");
        c.outcome = Some(Outcome::Timeout);
        c.evidence = Some("no result within 1000 ms".into());
        cells.push(c);
        let mut c = cell("node.b", Scenario::Race, "absent");
        c.verdict = Some(RaceVerdict::MultipleWinners);
        c.race = Some(RaceStats {
            contenders: 3,
            trials: 10,
            winners: [(2, 4), (3, 6)].into(),
            multi_winner_trials: 10,
            max_winners: 3,
            lost_update_trials: 10,
            no_winner_trials: 0,
            fault_trials: 0,
            wins_by_contender: vec![10, 10, 6],
            barrier_spread_us: Some(Spread { p50: 80.0, p99: 200.0, max: 200.0 }),
        });
        cells.push(c);
        Results {
            schema: 1,
            run_info: RunInfo {
                harness_version: "0.0.0".into(),
                os: "linux".into(),
                os_version: "12".into(),
                kernel: "6.1".into(),
                arch: "x86_64".into(),
                fs: FsInfo {
                    root: "/tmp".into(),
                    fs_type: "ext4".into(),
                    mount_point: "/".into(),
                    mount_options: "rw".into(),
                },
                date: "2026-11-29T00:00:00Z".into(),
                duration_s: 1.0,
                contenders: 3,
                trials: 10,
                oneshot_trials: 2,
                timeout_ms: 1000,
                path_segment: None,
                runtimes: vec![
                    RuntimeInfo {
                        name: "node".into(),
                        label: "node 20.0.0".into(),
                        version: "20.0.0".into(),
                        path: Some("/usr/bin/node".into()),
                        status: "found".into(),
                        reason: None,
                        families: vec!["node".into()],
                    },
                    RuntimeInfo {
                        name: "pwsh".into(),
                        label: "pwsh".into(),
                        version: String::new(),
                        path: None,
                        status: "not-found".into(),
                        reason: Some("no pwsh on PATH".into()),
                        families: vec!["pwsh".into()],
                    },
                ],
            },
            cells,
        }
    }

    #[test]
    fn markdown_summary() {
        insta::assert_snapshot!(render(&model()));
    }

    #[test]
    fn terminal_table() {
        insta::assert_snapshot!(crate::report::table::render_terminal(&model(), "node 20.0.0"));
    }

    #[test]
    fn json_round_trips() {
        let m = model();
        let text = crate::report::json::render(&m);
        let back: Results = serde_json::from_str(&text).unwrap();
        assert_eq!(back, m);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let race = &v["cells"][2];
        assert_eq!(race["winners"]["1"], 10);
        assert_eq!(race["barrier_spread_us"]["p99"], 300.0);
        assert_eq!(v["cells"][1]["error"]["code"], "EEXIST");
    }
}

//! `summary.md`: run information, one table per runtime, race details, skipped runtimes.

use std::fmt::Write;

use super::model::{Results, Scenario, TargetState};
use super::table::{counts_text, escape_controls, orderings_text, race_lines, text_rows};

/// Text for a Markdown line: `s` with its control characters (newlines too) escaped, so no
/// value can end its line, start a block or drive a terminal showing the file, and `<`, `>` and
/// `&` backslash-escaped, so that no value (a variant id or an error text from a results file)
/// becomes raw HTML or an entity (CommonMark 0.31, "Backslash escapes": any ASCII punctuation).
/// Not for code spans, where a backslash is shown as written: use [`code_text`] there.
pub fn md_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in escape_controls(s).chars() {
        if matches!(c, '<' | '>' | '&') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Text for a code span: control characters escaped as in [`md_escape`]; nothing else, since
/// a code span shows its content as written (raw HTML and entities included, harmlessly).
pub fn code_text(s: &str) -> String {
    escape_controls(s).into_owned()
}

/// Text for a Markdown table cell: as [`md_escape`], and `|` escaped (GFM reads `\|` as a
/// pipe inside a cell, also inside a code span).
pub fn md_cell(s: &str) -> String {
    md_escape(s).replace('|', "\\|")
}

/// A table cell holding `s` as a code span ([`code_span`] of [`code_text`], with `|` escaped,
/// which GFM requires inside a table's code spans too).
fn md_code_cell(s: &str) -> String {
    code_span(&code_text(s)).replace('|', "\\|")
}

fn md_table(header: &[String], rows: &[Vec<String>]) -> String {
    let mut s = String::new();
    let line = |cells: &[String]| format!("| {} |\n", cells.join(" | "));
    s.push_str(&line(&header.iter().map(|c| md_cell(c)).collect::<Vec<_>>()));
    s.push_str(&format!("|{}\n", "---|".repeat(header.len())));
    let call = header.get(1).is_some_and(|h| h == "call");
    for r in rows {
        let cells: Vec<String> =
            r.iter().enumerate().map(|(i, c)| if i == 1 && call { md_code_cell(c) } else { md_cell(c) }).collect();
        s.push_str(&line(&cells));
    }
    s
}

/// A Markdown code span that survives backticks inside (CommonMark: a fence longer than the
/// longest run of backticks in it, and spaces inside when it starts or ends with one).
pub fn code_span(s: &str) -> String {
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    if longest > 0 {
        format!("{fence} {s} {fence}")
    } else {
        format!("{fence}{s}{fence}")
    }
}

/// Which columns of a runtime's table [`runtime_table`] shows. The rows, and the words in
/// them, are the same whatever is shown: *safe as a lock* is judged from the whole row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Columns {
    /// The call column.
    pub call: bool,
    /// The second-comer target columns: `None` for none, `Some` of an empty list for every
    /// target state the results hold, otherwise these states (those the results hold, in
    /// table order).
    pub targets: Option<Vec<TargetState>>,
    /// The race column (when the results hold races).
    pub race: bool,
    /// The *safe as a lock* column.
    pub safe: bool,
}

impl Columns {
    /// Every column, as `summary.md` shows them.
    pub fn all() -> Columns {
        Columns { call: true, targets: Some(Vec::new()), race: true, safe: true }
    }
}

/// One runtime's table as Markdown (the table of `summary.md`, restricted to `columns`):
/// a header line, the delimiter line and one line per variant of `runtime` (a row label of
/// `r`), each ending in `\n`. A runtime without rows gives a header alone.
pub fn runtime_table(r: &Results, runtime: &str, columns: &Columns) -> String {
    let (header, rows) = text_rows(r, runtime, true);
    let targets = r.targets();
    // text_rows' layout: variant, call, one column per target, race (with races), safe
    let mut keep = vec![true, columns.call];
    keep.extend(targets.iter().map(|t| match &columns.targets {
        None => false,
        Some(only) => only.is_empty() || only.contains(t),
    }));
    if r.has_races() {
        keep.push(columns.race);
    }
    keep.push(columns.safe);
    debug_assert_eq!(keep.len(), header.len());
    let pick = |cells: &[String]| -> Vec<String> {
        cells.iter().zip(&keep).filter(|(_, k)| **k).map(|(c, _)| c.clone()).collect()
    };
    let rows: Vec<Vec<String>> = rows.iter().map(|r| pick(r)).collect();
    md_table(&pick(&header), &rows)
}

/// A hand-off scenario's table as Markdown (recipe, its steps when `with_steps`, × runtime, as
/// in `summary.md`), each line ending in `\n`; `None` when `r` has no cell of `scenario`.
pub fn handoff_table(r: &Results, scenario: Scenario, with_steps: bool) -> Option<String> {
    let (h, rows) = super::table::scenario_rows(r, scenario, with_steps)?;
    let table = md_table(&h, &rows);
    // the amplified runs that did not happen, said once under the table
    Some(match super::table::handoff_footnote(r, scenario) {
        Some(note) => format!("{table}\n*{}*\n", md_escape(&note)),
        None => table,
    })
}

/// Renders the whole summary as Markdown.
pub fn render(r: &Results) -> String {
    let mut s = String::new();
    let i = &r.run_info;
    let _ = writeln!(s, "# conformance results\n");
    let e = md_escape;
    if i.machines.is_empty() {
        let _ = writeln!(
            s,
            "Measured {} on {} {} (kernel {}, {}), scratch on {} ({}; {}), conformance {}; {} contenders × {} trials per race ({} for one-shot runtimes); run took {:.1} s.\n",
            e(&i.date), e(&i.os), e(&i.os_version), e(&i.kernel), e(&i.arch), code_span(&code_text(&i.fs.fs_type)), e(&i.fs.mount_point), e(&i.fs.mount_options), e(&i.harness_version), i.contenders, i.trials, i.oneshot_trials, i.duration_s
        );
    } else {
        // a merged file: its run_info's machine fields are the first run's; name every machine
        let _ = writeln!(s, "Merged from {} runs (conformance {}):\n", i.machines.len(), e(&i.harness_version));
        for m in &i.machines {
            let _ = writeln!(
                s,
                "- {}: measured {} on {} {} (kernel {}, {}), scratch on {} ({}; {}), from {}",
                e(&m.label),
                e(&m.date),
                e(&m.os),
                e(&m.os_version),
                e(&m.kernel),
                e(&m.arch),
                code_span(&code_text(&m.fs.fs_type)),
                e(&m.fs.mount_point),
                e(&m.fs.mount_options),
                code_span(&code_text(&m.source))
            );
        }
        let _ = writeln!(
            s,
            "\n{} contenders × {} trials per race ({} for one-shot runtimes) in the first run; the runs took {:.1} s together.\n",
            i.contenders, i.trials, i.oneshot_trials, i.duration_s
        );
    }
    let _ = writeln!(
        s,
        "Outcomes (second comer: a first comer's token stands at the target, the runtime attempts with its own): `acquired` (control, free name taken), `failed` (control: the call cannot take a free name), `refused` (failed, target unchanged: safe), `replaced` (silent overwrite), `kept` (success without taking anything), `nested` (went inside the directory), `damaged`. Race verdicts: `exclusive`, `multiple-winners n/T`, `lost-update n/T`, `no-winner n/T`, `inconclusive`. Races run *natural* (as the calls happen) and *amplified* (each file-system system call of every contender delayed on return, which widens any check-then-act window; where amplification ran, it decides unless the natural race found a failure; without `--thorough`, the natural race runs first and a failure it shows decides without an amplified race). A race cell shows each run's count of trials with that verdict (`amp`, `nat`); `exclusive` carries the one-sided 95% upper bound on the multi-winner rate (`0/200 < 1.5%`). Each family's check-then-create anti-pattern is the *detection control*: where it was caught significantly less often than 90% of the trials of its best ordering amplified (20% natural-only; one-sided binomial test, p < 0.05, at least 20 trials), `exclusive` verdicts become `inconclusive` (weak race). *Safe as a lock* is `yes` only when the control acquired, all four target states refused (with absolute and relative paths) and the deciding race was exclusive with its bound ≤ 3% (at least 100 clean trials) in a run whose detection control worked; `?` when something needed is missing, faulty or weak, with the flag that would measure what this run left out (`? (--races all)`: the run raced each call's plain form only, `run --quick`, and the row says `not raced (--races all)`; `? (-n 100)`: too few trials for the bound); a row whose second comer already failed is not raced by the default run (`not raced (second comer failed)`: no race can change its answer). Every outcome is classified from the probe's report and the file system afterwards.\n"
    );
    let answers = super::answers::render(r, super::answers::ANSWER_WIDTH);
    if !answers.is_empty() {
        let _ = writeln!(
            s,
            "## Which call to use\n\nPer runtime, the calls that held as a lock in every way this run measured them (*use*), those that held against themselves but failed against another party's call of the same kind (*use only if every party does*), those that failed in at least one way (*don't use*, with the first failure), by the job they are used for; `?` names what would settle an undetermined call.\n\n```text\n{answers}```\n"
        );
        let grid = super::answers::grid_markdown(r);
        if !grid.is_empty() {
            let _ = writeln!(s, "The calls to use, by job and runtime (`none`: the runtime has calls for the job, and none held; `—`: it has none):\n\n{grid}");
        }
        let by_machine = super::answers::render_by_machine(r, super::answers::ANSWER_WIDTH);
        if !by_machine.is_empty() {
            let _ = writeln!(s, "### Where the answer depends on the file system\n\nThe calls whose verdict is not the same on every file system (or machine) of this file, each answer with where it was given.\n\n```text\n{by_machine}```\n");
        }
        let promises = super::answers::contradictions_markdown(r);
        if !promises.is_empty() {
            let _ = writeln!(s, "### Where the measurement contradicts the documentation\n\nCalls whose runtime documentation says what they do when the name is taken (quoted), and which this run saw fail anyway: *broken* (a second comer on a taken name was not refused) or *broken in a race* (refused one at a time, not in a race).\n\n{promises}");
        }
    }
    for rt in r.measured_runtimes().into_iter().filter(|rt| !r.rows(rt).is_empty()) {
        let info = r.run_info.runtimes.iter().find(|x| x.label == rt);
        let _ = writeln!(s, "## {}\n", md_escape(rt));
        if let Some(p) = info.and_then(|x| x.path.as_ref()) {
            let _ = writeln!(s, "{}\n", code_span(&code_text(p)));
        }
        s.push_str(&runtime_table(r, rt, &Columns::all()));
        let lines = race_lines(r, rt);
        if !lines.is_empty() {
            s.push('\n');
        }
        for l in lines {
            let _ = writeln!(s, "- {}", md_escape(&l));
        }
        s.push('\n');
    }
    let against = super::table::against_lines(r);
    if !against.is_empty() {
        let _ = writeln!(
            s,
            "## Against other parties' calls\n\nThe rows that held against themselves, raced in pairs of two different calls that leave the same kind of entry at the name (one contender each; `--against`), failures first:\n"
        );
        for l in against {
            let _ = writeln!(s, "- {}", md_escape(&l));
        }
        s.push('\n');
    }
    for words in &super::handoff::WORDS {
        if let Some(table) = handoff_table(r, words.scenario, true) {
            let _ = writeln!(s, "## Hand-off: {}\n\n{}\n", words.scenario.as_str(), words.intro);
            s.push_str(&table);
            s.push('\n');
        }
    }
    if r.has_races() {
        let _ = writeln!(s, "## Race details\n");
        let header: Vec<String> = [
            "runtime",
            "variant",
            "mode",
            "verdict",
            "trials",
            "count, bound",
            "multi-winner trials per offset µs",
            "winners (n: trials)",
            "spread p50 µs",
            "spread p99 µs",
            "trials/s",
        ]
        .iter()
        .map(|x| x.to_string())
        .collect();
        let mut rows = Vec::new();
        for (c, race) in r.cells.iter().filter_map(|c| Some((c, c.race()?))) {
            for (mode, m) in [("natural", &race.natural), ("amplified", &race.amplified)] {
                let Some(m) = m else { continue };
                let st = &m.stats;
                let hist = st.winners.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>().join(", ");
                let sp = st.barrier_spread_us;
                rows.push(vec![
                    c.runtime.clone(),
                    if c.control { format!("{} (control)", c.variant_label()) } else { c.variant_label() },
                    match (m.raised_from_us, m.delay_us) {
                        (Some(from), Some(d)) => format!("{mode} (delay raised {from} → {d} µs: loose)"),
                        _ => mode.to_string(),
                    },
                    m.verdict.as_str().to_string(),
                    format!("{}×{}", st.contenders, st.trials),
                    counts_text(m),
                    orderings_text(m),
                    hist,
                    sp.map_or("-".into(), |x| format!("{:.0}", x.p50)),
                    sp.map_or("-".into(), |x| format!("{:.0}", x.p99)),
                    m.trials_per_second.map_or("-".into(), |x| format!("{x:.0}")),
                ]);
            }
        }
        s.push_str(&md_table(&header, &rows));
        s.push('\n');
    }
    let skipped: Vec<_> =
        r.run_info.runtimes.iter().filter(|x| x.status != crate::report::model::RuntimeState::Found).collect();
    if !skipped.is_empty() {
        let _ = writeln!(s, "## Not measured\n");
        for x in skipped {
            let reason = x.reason.as_deref().unwrap_or("");
            let _ =
                writeln!(s, "- **{}**: {} — {}", md_escape(&x.label), md_escape(x.status.as_str()), md_escape(reason));
        }
        s.push('\n');
    }
    let faults: Vec<_> = r.cells.iter().filter(|c| c.evidence.is_some()).collect();
    if !faults.is_empty() {
        let _ = writeln!(s, "## Evidence (faults, prompts, stray output)\n");
        for c in faults {
            let evidence = md_escape(c.evidence.as_deref().unwrap_or(""));
            let _ = writeln!(s, "- {} {}: {evidence}", code_span(&code_text(&c.id)), c.word());
        }
    }
    let dis = super::table::disagreement_text(r);
    if !dis.is_empty() {
        let _ = writeln!(s, "\n## Cells that disagree between machines\n");
        for line in dis.lines() {
            let _ = writeln!(s, "- {}", md_escape(line));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::render;
    use crate::domain::RawError;
    use crate::report::model::{
        AmplificationInfo, Cell, CellResult, ControlInfo, ErrorInfo, Finding, FsInfo, ModeRun, RaceResult,
        RelativeAttempt, Results, RunInfo, RuntimeInfo, Scenario, SecondComerResult, TargetState,
    };
    use crate::verdict::{summarize_race, Detection, Outcome, RaceMode, RaceVerdict, Report, Trial};
    use Report::{Error as E, Success as S};

    fn run(trials: Vec<Trial>, tps: f64) -> ModeRun {
        let s = summarize_race(3, &trials);
        ModeRun {
            delay_us: None,
            verdict: s.verdict,
            stats: s.stats,
            errors: [("EEXIST".to_string(), 2 * trials.len())].into(),
            discarded_trials: 0,
            loose_trials: 0,
            raised_from_us: None,
            trials_per_second: Some(tps),
            evidence: None,
            found_at_offset_us: None,
            orderings: Vec::new(),
            cost: None,
            contest: None,
        }
    }

    fn cell(variant: &str, scenario: Scenario, target: TargetState, result: CellResult) -> Cell {
        let v = crate::matrix::Variant {
            id: variant.into(),
            family: "node".into(),
            call: "fs.call(p)".into(),
            source: crate::matrix::SourceKind::None,
            sources: Vec::new(),
            copies: false,
            creates: crate::matrix::Creates::File,
            anti_pattern: false,
            control: false,
            holds: false,
            form: Default::default(),
            intent: None,
            show: Vec::new(),
            note: String::new(),
            promise: None,
        };
        let f = Finding {
            variant: variant.into(),
            scenario,
            target,
            source: None,
            control: false,
            evidence: None,
            driver: None,
            contenders: Default::default(),
            library: None,
            elapsed_ms: 1.0,
            result,
        };
        Cell::from_finding(("node 20.0.0", "node", "20.0.0"), &v, f)
    }

    fn second(variant: &str, target: TargetState, outcome: Outcome, error: Option<ErrorInfo>) -> Cell {
        let r = SecondComerResult {
            outcome,
            error,
            relative: None,
            before: String::new(),
            after: String::new(),
            delivery: None,
            returned: None,
        };
        cell(variant, Scenario::SecondComer, target, CellResult::SecondComer(Box::new(r)))
    }

    fn race(variant: &str, verdict: RaceVerdict, natural: ModeRun, amplified: ModeRun, detection: &Detection) -> Cell {
        let r = RaceResult {
            verdict,
            decided_by: RaceMode::Amplified,
            error: None,
            natural: Some(natural),
            amplified: Some(amplified),
            amplified_unavailable: None,
            detection: Some(detection.clone()),
            weak_race: None,
            interrupted: false,
        };
        cell(variant, Scenario::Race, TargetState::Absent, CellResult::Race(Box::new(r)))
    }

    /// A hand-built model: one safe and one unsafe variant, a relative-path disagreement, a
    /// fault with evidence, and a skipped runtime.
    fn model() -> Results {
        let control = Detection::judge("node.b", Some((8, 20, 0)), Some((20, 20, 0)));
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
        cells.push(second("node.a.wx", TargetState::Absent, Outcome::Acquired, None));
        cells.push(second("node.a.wx", TargetState::File, Outcome::Refused, Some(eexist.clone())));
        let one = Trial {
            reports: vec![S, E, E],
            held: vec![true, false, false],
            t0_us: vec![Some(0.0), Some(90.0), Some(300.0)],
            offset_us: 0,
            held_during_us: vec![None; 3],
            unstamped: None,
            placed: Vec::new(),
        };
        let (nat, amp) = (run(vec![one.clone(); 100], 1200.0), run(vec![one.clone(); 100], 600.0));
        cells.push(race("node.a.wx", RaceVerdict::Exclusive, nat, amp, &control));
        let mut c = second("node.b", TargetState::Absent, Outcome::Acquired, None);
        if let CellResult::SecondComer(s) = &mut c.result {
            s.relative = Some(RelativeAttempt { outcome: Outcome::Damaged, error: None, evidence: None });
        }
        cells.push(c);
        let mut c = second("node.b", TargetState::File, Outcome::Timeout, None);
        c.evidence = Some("no result within 1000 ms".into());
        cells.push(c);
        let two = Trial {
            reports: vec![S, S, E],
            held: vec![false, true, false],
            t0_us: vec![Some(0.0), Some(80.0), Some(200.0)],
            offset_us: 0,
            held_during_us: vec![None; 3],
            unstamped: None,
            placed: Vec::new(),
        };
        let mut nat = vec![one.clone(); 12];
        nat.extend(vec![two.clone(); 8]);
        let mut c = race("node.b", RaceVerdict::MultipleWinners, run(nat, 1100.0), run(vec![two; 20], 500.0), &control);
        c.control = true;
        cells.push(c);
        Results {
            schema: crate::report::model::SCHEMA,
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
                    made: None,
                    second_client: None,
                },
                date: "2026-11-29T00:00:00Z".into(),
                duration_s: 1.0,
                contenders: 3,
                trials: 10,
                oneshot_trials: 2,
                timeout_ms: 1000,
                path_segment: None,
                probes: None,
                matrices: None,
                races: None,
                against: None,
                interrupted: false,
                fs_skipped: Vec::new(),
                phases: Vec::new(),
                runtimes: vec![
                    RuntimeInfo {
                        name: "node".into(),
                        label: "node 20.0.0".into(),
                        version: "20.0.0".into(),
                        path: Some("/usr/bin/node".into()),
                        status: crate::report::model::RuntimeState::Found,
                        reason: None,
                        families: vec!["node".into()],
                    },
                    RuntimeInfo {
                        name: "pwsh".into(),
                        label: "pwsh".into(),
                        version: String::new(),
                        path: None,
                        status: crate::report::model::RuntimeState::NotFound,
                        reason: Some("no pwsh on PATH".into()),
                        families: vec!["pwsh".into()],
                    },
                ],
                amplification: AmplificationInfo {
                    requested: "both".into(),
                    delay_us: 500,
                    offsets_us: None,
                    max_rate: None,
                    max_trials: None,
                    syscalls: vec!["openat".into()],
                    paths: None,
                    tool: Some("strace -- version 6.1".into()),
                    unavailable: None,
                },
                controls: vec![ControlInfo {
                    runtime: "node 20.0.0".into(),
                    family: "node".into(),
                    detection: control,
                    escalations: Vec::new(),
                }],
                machines: Vec::new(),
                selection: None,
            },
            cells,
            against: Vec::new(),
        }
    }

    #[test]
    fn a_merged_report_names_its_machines() {
        let mut a = crate::report::fixture("base.json");
        a.run_info.os_version = "12".into();
        let mut b = a.clone();
        b.run_info.fs.fs_type = "tmpfs".into();
        let m = crate::merge::merge(vec![("a.json".into(), a), ("b.json".into(), b)]).unwrap();
        let text = crate::report::markdown::render(&m);
        let head: String = text.lines().take(8).collect::<Vec<_>>().join("\n");
        assert!(!head.contains("merged 12"), "{head}");
        assert!(head.contains("Merged from 2 runs"), "{head}");
        for machine in &m.run_info.machines {
            assert!(
                head.contains(&format!("- {}: measured", crate::report::markdown::md_escape(&machine.label))),
                "{head}"
            );
        }
        assert!(head.contains("`a.json`") && head.contains("`b.json`") && head.contains("`tmpfs`"), "{head}");
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
    fn control_characters_pipes_and_newlines_are_escaped() {
        let mut m = model();
        let hostile = "node \u{1b}[2J20\0";
        for c in &mut m.cells {
            c.runtime = hostile.into();
            c.call = "a | b\nc\u{1b}]0;x\u{7}".into();
        }
        m.cells[4].evidence = Some("first\nsecond\u{9b}".into());
        m.run_info.runtimes[0].label = hostile.into();
        m.run_info.runtimes[0].path = Some("/bin/no\u{1b}de".into());
        m.run_info.runtimes[1].reason = Some("--version said \u{1b}[31mno".into());
        let md = render(&m);
        assert!(!md.chars().any(|c| c.is_control() && c != '\n'), "{md:?}");
        assert!(md.contains("## node \\u{1b}[2J20\\u{0}\n"), "{md}");
        assert!(md.contains("| node.a.wx | `a \\| b\\u{a}c\\u{1b}]0;x\\u{7}` |"), "{md}");
        assert!(md.contains("`/bin/no\\u{1b}de`"), "{md}");
        assert!(md.contains("first\\u{a}second\\u{9b}"), "{md}");
        assert!(md.contains("--version said \\u{1b}[31mno"), "{md}");
        let table = render_table_lines(&md);
        let columns = |l: &str| l.replace("\\|", "").matches('|').count();
        assert!(table.len() == 4 && table.iter().all(|l| columns(l) == columns(table[0])), "{table:?}");
        let term = crate::report::table::render_terminal(&m, hostile);
        assert!(!term.chars().any(|c| c.is_control() && c != '\n'), "{term:?}");
    }

    /// The lines of the first runtime table in `md`.
    fn render_table_lines(md: &str) -> Vec<&str> {
        md.lines().skip_while(|l| !l.starts_with("| variant")).take_while(|l| l.starts_with('|')).collect()
    }

    #[test]
    fn code_spans_fence_past_backticks() {
        assert_eq!(super::code_span("a"), "`a`");
        assert_eq!(super::code_span("a`b"), "`` a`b ``");
        assert_eq!(super::code_span("``x"), "``` ``x ```");
    }

    #[test]
    fn json_round_trips() {
        let m = model();
        let text = crate::report::json::render(&m);
        let back: Results = serde_json::from_str(&text).unwrap();
        assert_eq!(back, m);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let race = &v["cells"][2]["result"];
        assert_eq!(race["kind"], "race");
        assert_eq!(race["natural"]["stats"]["winners"]["1"], 100);
        assert_eq!(race["amplified"]["stats"]["barrier_spread_us"]["p99"], 300.0);
        assert_eq!(race["decided_by"], "amplified");
        assert!((race["amplified"]["stats"]["multi_winner_upper95"].as_f64().unwrap() - 0.0295).abs() < 1e-3);
        assert_eq!(v["cells"][1]["result"]["kind"], "second-comer");
        assert_eq!(v["cells"][1]["result"]["error"]["code"], "EEXIST");
    }
}

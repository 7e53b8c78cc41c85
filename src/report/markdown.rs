//! `summary.md`: run information, one table per runtime, race details, skipped runtimes.

use std::fmt::Write;

use super::model::Results;
use super::table::{race_line, text_rows};

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn md_table(header: &[String], rows: &[Vec<String>]) -> String {
    let mut s = String::new();
    let line = |cells: &[String]| format!("| {} |\n", cells.iter().map(|c| md_escape(c)).collect::<Vec<_>>().join(" | "));
    s.push_str(&line(header));
    s.push_str(&format!("|{}\n", "---|".repeat(header.len())));
    for r in rows {
        let quoted: Vec<String> = r.iter().enumerate().map(|(i, c)| if i == 1 && header.get(1).is_some_and(|h| h == "call") { format!("`{c}`") } else { c.clone() }).collect();
        s.push_str(&line(&quoted));
    }
    s
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
        "Outcomes (second comer: a first comer's token stands at the target, the runtime attempts with its own): `acquired` (control, free name taken), `failed` (control: the call cannot take a free name), `refused` (failed, target unchanged: safe), `replaced` (silent overwrite), `kept` (success without taking anything), `nested` (went inside the directory), `damaged`. Race verdicts: `exclusive`, `multiple-winners n/T`, `lost-update n/T`, `no-winner n/T`, `inconclusive`. Every outcome is classified from the probe's report and the file system afterwards.\n"
    );
    for rt in r.measured_runtimes() {
        let info = r.runtimes.iter().find(|x| x.label == rt);
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
        let header: Vec<String> = ["runtime", "variant", "verdict", "trials", "winners (n: trials)", "spread p50 µs", "spread p99 µs", "trials/s"].iter().map(|x| x.to_string()).collect();
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
    let skipped: Vec<_> = r.runtimes.iter().filter(|x| x.status != "found").collect();
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

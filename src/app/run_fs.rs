//! `conformance run --fs LIST`: the same run on file systems the harness makes itself
//! ([`crate::fs`]), one after the other, each measured as a run with `--fs-root` on it would
//! be (its own results in `OUT/fs/NAME/`), then merged into one results file whose cells carry
//! the file system ([`crate::merge::merge_labelled`]: a table per runtime and file system) and
//! whose answers say where a call holds on some file systems only.

use std::io::Write;

use super::run::measure_run;
use super::{open_out, refuse_earlier_results};
use crate::cli::RunArgs;
use crate::error::{Error, Result};
use crate::exit_code;
use crate::plan::{Paths, RunPlan};
use crate::report::model::{FsSkipped, MadeFs, Results};
use crate::report::{answers, json, markdown, table};
use crate::status::emit;

/// The folder under `--out` that holds each file system's own results (`fs/xfs/`).
pub const FS_RESULTS_DIR: &str = "fs";

/// Runs `a` (whose `--fs` is `list`) on each file system of the list. Returns the exit code:
/// that of `--expect` on the merged results, or [`exit_code::INTERRUPTED`].
///
/// Errors: [`Error::Usage`] for a bad `--fs` list (or any error [`RunPlan::new`] finds in the
/// other flags, before anything is made); [`Error::NoFileSystem`] when no private mount
/// namespace can be made or none of the file systems could be measured; the errors of
/// [`measure_run`] on one of them (the file systems made so far are removed first).
pub(super) fn cmd_run_fs(a: &RunArgs, list: &str, paths: &Paths) -> Result<i32> {
    let started = std::time::Instant::now();
    let kinds = crate::fs::parse_list(list).map_err(|message| Error::Usage { flag: "--fs".into(), message })?;
    // every other flag is checked once, before anything is mounted
    let plan = RunPlan::new(a, paths)?;
    if plan.dry_run {
        let names: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
        eprintln!("--fs: each of {} would be made and measured as follows", names.join(", "));
        return measure_run(&RunArgs { fs: None, ..a.clone() }, paths, true).map(|(code, _)| code);
    }
    let out = plan.out.clone();
    let mut outdir = open_out(&out)?;
    if let Err(e) = refuse_earlier_results(&out, a.force, "--out") {
        outdir.abandon();
        return Err(e);
    }
    let per_fs = out.join(FS_RESULTS_DIR);
    if per_fs.exists() {
        // an earlier --fs run's per-file-system results (also one interrupted before it wrote
        // the merged file) are replaced only when asked
        if !a.force {
            outdir.abandon();
            return Err(Error::Usage {
                flag: "--out".into(),
                message: format!(
                    "{} already holds an earlier --fs run's results; choose another folder, or give --force to replace them",
                    per_fs.display()
                ),
            });
        }
        std::fs::remove_dir_all(&per_fs).map_err(|source| Error::Output { path: per_fs.clone(), source })?;
    }
    // before any thread that starts processes: see namespace::enter_private
    if let Err(why) = crate::fs::namespace::enter_private() {
        outdir.abandon();
        return Err(Error::NoFileSystem(why));
    }
    let work = tempfile::Builder::new().prefix("conformance-fs-").tempdir().map_err(|source| Error::Scratch {
        path: std::env::temp_dir(),
        origin: "the system temp folder",
        source,
    })?;
    let mut runs: Vec<(String, Results)> = Vec::new();
    let mut skipped: Vec<FsSkipped> = Vec::new();
    let mut code = exit_code::OK;
    // the file system whose run an interrupt cut short (its partial results are in its folder)
    let mut cut_short = None;
    for kind in kinds {
        if crate::interrupt::requested() {
            break;
        }
        let mounted = match crate::fs::prepare(kind, work.path()) {
            Ok(m) => m,
            Err(why) => {
                eprintln!("skip     {kind}: {}", table::escape_controls(&why));
                skipped.push(FsSkipped { kind, why });
                continue;
            }
        };
        if !plan.quiet {
            eprintln!("fs       {kind}: {}", table::escape_controls(&mounted.how));
        }
        let mut sub = a.clone();
        sub.fs = None;
        sub.expect = None;
        sub.force = true;
        sub.out = Some(per_fs.join(kind.as_str()));
        sub.scratch.fs_root = Some(mounted.root.clone());
        sub.scratch.second_client.clone_from(&mounted.second_client);
        let measured = measure_run(&sub, paths, false);
        let made = MadeFs { kind, how: mounted.how.clone(), daemon: mounted.daemon.clone() };
        // unmounted (and its daemons stopped) before the next one is made
        drop(mounted);
        match measured {
            Ok((_, Some(mut r))) => {
                r.run_info.fs.made = Some(made);
                // the merged file's runtime labels name the file system; its own file too
                let file = per_fs.join(kind.as_str()).join("results.json");
                crate::outdir::write_file(&file, &json::render(&r))?;
                runs.push((format!("{FS_RESULTS_DIR}/{kind}/results.json"), r));
            }
            Ok((c, None)) => {
                code = c;
                cut_short = Some(kind);
            }
            Err(Error::NoRuntime(why)) => {
                eprintln!("skip     {kind}: nothing measured: {}", table::escape_controls(&why));
                skipped.push(FsSkipped { kind, why: format!("nothing measured: {why}") });
            }
            Err(e) => {
                outdir.abandon();
                return Err(e);
            }
        }
    }
    drop(work);
    if runs.is_empty() {
        outdir.abandon();
        if code == exit_code::INTERRUPTED || crate::interrupt::requested() {
            match cut_short {
                Some(kind) => eprintln!(
                    "interrupted while measuring on {kind}: what it measured is in {}",
                    table::escape_controls(&per_fs.join(kind.as_str()).display().to_string())
                ),
                None => eprintln!("interrupted before a file system was measured: nothing written"),
            }
            return Ok(exit_code::INTERRUPTED);
        }
        let why: Vec<String> = skipped.iter().map(|s| format!("{}: {}", s.kind, s.why)).collect();
        return Err(Error::NoFileSystem(why.join("; ")));
    }
    let mut results = crate::merge::merge_labelled(runs)?;
    results.run_info.fs_skipped = skipped;
    results.run_info.interrupted = crate::interrupt::requested();
    results.run_info.duration_s = started.elapsed().as_secs_f64();
    let text = json::render(&results);
    outdir.write("results.json", &text)?;
    outdir.write("summary.md", &markdown::render(&results))?;
    outdir.write(super::run::REPORT_HTML, &crate::report::html::render_with(&results, &super::again(&results)))?;
    let mut stdout = std::io::stdout().lock();
    if plan.json {
        emit(&text);
    } else {
        let _ = write!(stdout, "{}", fs_view(&results));
        let answers = answers::render_styled(&results, crate::report::style::current());
        if !answers.is_empty() {
            let _ = write!(stdout, "\n{answers}");
        }
    }
    let measured: Vec<String> =
        results.run_info.machines.iter().filter_map(|m| m.fs.made.as_ref().map(|f| f.kind.to_string())).collect();
    let done = format!(
        "{} cells on {} in {:.1} s; wrote {}, {} and {} (each file system's own results in {})",
        results.cells.len(),
        measured.join(", "),
        results.run_info.duration_s,
        out.join("results.json").display(),
        out.join("summary.md").display(),
        out.join(super::run::REPORT_HTML).display(),
        per_fs.display()
    );
    if plan.json {
        eprintln!("{}", table::escape_controls(&done));
    } else {
        let _ = writeln!(stdout, "\n{}", table::escape_controls(&done));
    }
    if crate::interrupt::requested() || code == exit_code::INTERRUPTED {
        return Ok(exit_code::INTERRUPTED);
    }
    Ok(super::run::expect_baseline(&plan, &results, &mut stdout))
}

/// For the races on a file system with two clients that a contender of each client won in one
/// trial or more: the wins by client (even contenders through the first, odd through the
/// second), one line per race cell, under a heading; empty when there are none.
fn two_client_wins(r: &Results) -> String {
    let mut lines = String::new();
    for m in r.run_info.machines.iter().filter(|m| m.fs.second_client.is_some()) {
        for c in r.cells.iter().filter(|c| c.machine.as_deref() == Some(m.label.as_str())) {
            let Some(race) = c.race() else { continue };
            for (mode, run) in [("natural", race.natural.as_ref()), ("amplified", race.amplified.as_ref())] {
                let Some(run) = run else { continue };
                let st = &run.stats;
                let by = |parity: usize| -> usize {
                    st.wins_by_contender.iter().enumerate().filter(|(i, _)| i % 2 == parity).map(|(_, w)| w).sum()
                };
                if by(0) > 0 && by(1) > 0 {
                    lines += &format!(
                        "  {} {} ({mode}): first client won {}, second client {}; multiple winners in {}/{} trials\n",
                        table::escape_controls(&c.runtime),
                        table::escape_controls(&c.variant_label()),
                        by(0),
                        by(1),
                        st.multi_winner_trials,
                        st.trials
                    );
                }
            }
        }
    }
    if lines.is_empty() {
        return lines;
    }
    format!("\nraces that both clients of one share won (wins by client):\n{lines}")
}

/// The file-system view on the terminal: what each file system is, which were skipped and
/// why, the answers that depend on the file system ([`answers::render_by_machine`]) and the
/// cells that differ between file systems ([`table::disagreement_text`]).
pub fn fs_view(r: &Results) -> String {
    let mut s = String::from("file systems\n");
    for m in &r.run_info.machines {
        let Some(made) = &m.fs.made else { continue };
        let daemon = made.daemon.as_deref().map(|d| format!("; {d}")).unwrap_or_default();
        let line = format!("{} ({}){daemon}", made.how, m.fs.mount_options);
        s += &format!("  {:<8} {}\n", made.kind.as_str(), table::escape_controls(&line));
    }
    for k in &r.run_info.fs_skipped {
        s += &format!("  {:<8} skipped: {}\n", k.kind.as_str(), table::escape_controls(&k.why));
    }
    let by = answers::render_by_machine(r, answers::ANSWER_WIDTH);
    s += &if by.is_empty() {
        "\nevery answer is the same on every file system measured\n".to_string()
    } else {
        format!("\n{by}")
    };
    let cells = table::disagreement_text(r);
    if !cells.is_empty() {
        s += &format!("\ncells that differ between file systems:\n{cells}");
    }
    s += &two_client_wins(r);
    s
}

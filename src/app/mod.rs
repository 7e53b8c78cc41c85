//! The commands, one file each: each validates its flags into a plan ([`crate::plan`]), then
//! measures and prints. Everything here returns an exit code or an [`Error`]; `main` only maps
//! them. This file holds the dispatch and what several commands share (the output folder, the
//! progress bar, refusing an output that names an input).

mod against;
mod check;
mod compare;
mod completions;
mod diff;
mod docs;
mod install;
mod man;
mod merge;
mod race;
mod report;
mod run;
mod run_fs;
mod runtimes;
mod variants;

use std::path::Path;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::cli::{Cli, Command};
use crate::error::{Error, Result};
use crate::outdir::OutDir;
use crate::plan::{cleanup_runtimes, Paths};
use crate::report::{json, table};
use crate::runtime::{ProbeContext, Requested, Runtime};
use crate::status::emit;

/// Runs the parsed command line; returns the exit code (see [`crate::exit_code`]).
///
/// Errors: see [`Error`]; each maps to its own exit code.
pub fn run(cli: Cli) -> Result<i32> {
    // Only commands that start processes or measure take over Ctrl-C and SIGTERM (to stop
    // probes and keep what was measured); the others write their outputs atomically and have
    // nothing to clean up, so the signal's default action ends them at once, as `timeout`, a
    // CI cancel or systemd expect.
    let measures = match &cli.command {
        Command::Run(_) | Command::Check(_) | Command::Race(_) | Command::Runtimes(_) | Command::Install(_) => true,
        Command::Diff(a) => !a.runtime.is_empty(),
        Command::Variants(_)
        | Command::Compare(_)
        | Command::Report(_)
        | Command::Merge(_)
        | Command::Docs(_)
        | Command::Completions(_)
        | Command::Man(_) => false,
    };
    if measures {
        crate::interrupt::install();
    }
    crate::report::style::configure(cli.wide, cli.color.choice());
    let paths = Paths::of(&cli);
    match cli.command {
        Command::Run(a) => run::cmd_run(&a, &paths),
        Command::Check(a) => check::cmd_check(&a, &paths),
        Command::Race(a) => race::cmd_race(&a, &paths),
        Command::Runtimes(a) => runtimes::cmd_runtimes(&a, &paths),
        Command::Install(a) => install::cmd_install(&a, &paths),
        Command::Variants(a) => variants::cmd_variants(&a, paths.matrices.as_deref()),
        Command::Compare(a) => compare::cmd_compare(&a),
        Command::Diff(a) => diff::cmd_diff(&a, &paths),
        Command::Report(a) => report::cmd_report(&a),
        Command::Merge(a) => merge::cmd_merge(&a),
        Command::Docs(a) => docs::cmd_docs(&a),
        Command::Completions(a) => completions::cmd_completions(&a),
        Command::Man(a) => man::cmd_man(&a),
    }
}

/// The command that measures a cell of `r` again with the same probe (`conformance run -r …
/// -v …`), for the HTML page's cell details: a runtime the run took from the cache of
/// installed versions (its path in `…/runtimes/<name>/<version>/`, as `run -r name@version`
/// installs it) is named with its version (`-r coreclr@8.0.34`: plain `-r coreclr` would
/// measure the one on PATH); one found on PATH by its name. A hand-off cell the runtime has no
/// recipe for (unsupported) gets none.
fn again(r: &crate::report::Results) -> impl Fn(&crate::report::Cell) -> Option<String> {
    let cached: std::collections::BTreeSet<(String, String)> = r
        .run_info
        .runtimes
        .iter()
        .filter(|rt| {
            let dir = format!("/runtimes/{}/{}/", rt.name, rt.version);
            rt.path.as_deref().is_some_and(|p| p.replace('\\', "/").contains(&dir))
        })
        .map(|rt| (rt.name.clone(), rt.version.clone()))
        .collect();
    move |c| {
        if c.is_unsupported_handoff() {
            return None;
        }
        Some(if cached.contains(&(c.runtime_name.clone(), c.runtime_version.clone())) {
            crate::repro::harness_as(c, &format!("{}@{}", c.runtime_name, c.runtime_version))
        } else {
            crate::repro::harness(c, &c.runtime_name)
        })
    }
}

/// How often `run` rewrites the partial `results.json` while a runtime is measured.
const PARTIAL_EVERY: Duration = Duration::from_secs(2);

/// Takes the output folder `out` (an OS lock) and checks that a file can be made in it.
/// Errors: [`Error::Output`] (exit code 3).
fn open_out(out: &Path) -> Result<OutDir> {
    let o = OutDir::open(out)?;
    tempfile::NamedTempFile::new_in(out).map_err(|source| Error::Output { path: out.to_path_buf(), source })?;
    Ok(o)
}

/// What an output folder already holds of an earlier run, described for the refusal
/// (`results.json: 234 cells measured 2026-12-01T10:00:00Z`, `summary.md`); `None` when it holds
/// neither file.
fn earlier_results(dir: &Path) -> Option<String> {
    let results = dir.join("results.json");
    let summary = dir.join("summary.md");
    if results.exists() {
        return Some(match json::read(&results) {
            Ok(r) => format!("results.json: {} cells measured {}", r.cells.len(), r.run_info.date),
            Err(_) => "results.json".to_string(),
        });
    }
    if summary.exists() {
        return Some("summary.md".to_string());
    }
    dir.join(check::CHECK_JSON).exists().then(|| check::CHECK_JSON.to_string())
}

/// Refuses to measure into `dir` when it holds an earlier run's results, unless `force`:
/// a run would replace them. `flag` is the flag that named the folder.
///
/// Errors: [`Error::Usage`] naming `flag`, the folder and what it holds (exit 2).
fn refuse_earlier_results(dir: &Path, force: bool, flag: &str) -> Result<()> {
    match earlier_results(dir).filter(|_| !force) {
        Some(what) => Err(Error::Usage {
            flag: flag.into(),
            message: format!(
                "{} already holds an earlier run's results ({what}); choose another folder, or give --force to replace them",
                dir.display()
            ),
        }),
        None => Ok(()),
    }
}

/// On an early return: undoes the runtimes' preparation and removes a new, empty `--out`.
fn give_up(found: &[Runtime], ctx: &ProbeContext, outdir: &mut Option<OutDir>) {
    cleanup_runtimes(found, ctx);
    outdir.iter_mut().for_each(OutDir::abandon);
}

/// A spinner on stderr while versions are fetched (drawn only on a terminal), and the lines
/// said meanwhile, printed above it (always, also where it is not drawn).
struct Spinner(ProgressBar);

impl Spinner {
    fn new() -> Spinner {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(ProgressStyle::with_template("{spinner} [{elapsed}] {msg}").expect("template"));
        Spinner(bar)
    }

    /// Prints `line` (control characters escaped) and shows it beside the spinner.
    fn say(&self, line: &str) {
        let line = table::escape_controls(line).into_owned();
        self.0.suspend(|| eprintln!("{line}"));
        self.0.set_message(line);
        self.0.enable_steady_tick(Duration::from_millis(120));
    }

    fn done(&self) {
        self.0.finish_and_clear();
    }
}

/// Finds `req`'s `NAME@VERSION` items in the cache and installs the missing ones (not with
/// `--offline`), saying each download on stderr. Errors: see [`Requested::locate_versions`];
/// `flag` names where the items came from.
fn locate_versions(req: &mut Requested, paths: &Paths, flag: &str) -> Result<()> {
    if req.versions.is_empty() {
        return Ok(());
    }
    let spinner = Spinner::new();
    let r = req.locate_versions(&paths.store(), paths.fetch(), flag, &mut |l| spinner.say(l));
    spinner.done();
    r
}

/// The progress bar of `run` ([`crate::plan::PROGRESS_TEMPLATE`], or
/// [`crate::plan::PROGRESS_TEMPLATE_ETA`] when it shows the time left), with [`Progress::say`],
/// which fits its message to the terminal; everything else is indicatif's [`ProgressBar`].
pub(crate) struct Progress {
    bar: ProgressBar,
    eta: bool,
}

impl std::ops::Deref for Progress {
    type Target = ProgressBar;
    fn deref(&self) -> &ProgressBar {
        &self.bar
    }
}

impl Progress {
    /// Shows `message` beside the bar, cut at a word with ` …` where the line would pass the
    /// edge of stderr's terminal ([`crate::plan::fit_message`]; the bar's own `{wide_msg}` cuts
    /// mid-word); as it is where stderr is no terminal (nothing is drawn there).
    pub(crate) fn say(&self, message: String) {
        let message = match terminal_size::terminal_size_of(std::io::stderr()) {
            Some((w, _)) => {
                let prefix = crate::plan::progress_prefix_width(self.bar.length().unwrap_or(0), self.eta);
                crate::plan::fit_message(&message, usize::from(w.0).saturating_sub(prefix))
            }
            None => message,
        };
        self.bar.set_message(message);
    }
}

/// The progress bar of `run`: cells done of `total`, elapsed time, and the cell under way. It
/// draws on stderr only when stderr is a terminal (indicatif's `ProgressDrawTarget::stderr`
/// hides itself otherwise), and never with `--quiet`; with `eta`, also the time left.
fn progress_bar(total: usize, quiet: bool, eta: bool) -> Progress {
    let target = if quiet { ProgressDrawTarget::hidden() } else { ProgressDrawTarget::stderr() };
    let bar = ProgressBar::with_draw_target(Some(total as u64), target);
    let template = if eta { crate::plan::PROGRESS_TEMPLATE_ETA } else { crate::plan::PROGRESS_TEMPLATE };
    bar.set_style(ProgressStyle::with_template(template).expect("template"));
    Progress { bar, eta }
}

/// Refuses an `--out FILE` that is one of the command's `inputs` (the same file by identity:
/// another spelling, a link or `..` path included), before anything is read or written:
/// writing the output would replace the input.
///
/// Errors: [`Error::Usage`] naming `--out` and the input (exit 2).
fn refuse_out_onto_input(out: Option<&Path>, inputs: &[&Path]) -> Result<()> {
    let Some(out) = out else { return Ok(()) };
    match inputs.iter().find(|i| crate::outdir::is_same_file(out, i)) {
        Some(input) => Err(Error::Usage {
            flag: "--out".into(),
            message: format!(
                "{} is also an input of this command (given as {}): writing would replace it; choose another file",
                out.display(),
                input.display()
            ),
        }),
        None => Ok(()),
    }
}

/// Prints `text`, or writes it to `out` (see [`crate::outdir::write_file`]).
fn output(out: Option<&Path>, text: &str) -> Result<()> {
    match out {
        Some(p) => crate::outdir::write_file(p, text),
        None => {
            emit(text);
            Ok(())
        }
    }
}

/// The terminal text of a diff or a comparison, each line wrapped to the terminal's width (at
/// least [`crate::report::style::MIN_WIDTH`]) at spaces, its indent kept and a continuation two
/// spaces further in, when it goes to a terminal (`on_terminal`: no `--out`) that has a width.
/// A word is never broken (a path stays whole, to be copied), and a `repro:` line stays whole,
/// to be pasted.
pub(super) fn fit_to_terminal(text: &str, on_terminal: bool) -> String {
    let Some(width) = crate::report::style::current().width.filter(|_| on_terminal) else {
        return text.to_string();
    };
    let width = width.max(crate::report::style::MIN_WIDTH);
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let body = line.trim_start_matches(' ');
        if body.starts_with("repro: ") {
            out.push_str(line);
        } else {
            let pad = &line[..line.len() - body.len()];
            let more = format!("{pad}  ");
            let opts = textwrap::Options::new(width)
                .initial_indent(pad)
                .subsequent_indent(&more)
                .break_words(false)
                .word_splitter(textwrap::WordSplitter::NoHyphenation);
            out.push_str(&textwrap::fill(body, opts));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::report::model::{CellResult, CountersResult};

    /// A runtime taken from the cache of installed versions is named with its version in the
    /// command that measures a cell again; one found on PATH by its name; a recipe the runtime
    /// lacks gets no command.
    #[test]
    fn the_command_again_names_the_version_of_a_cached_runtime() {
        let mut r = crate::report::fixture("base.json");
        let first = r.cells[0].clone();
        let plain = super::again(&r)(&first).expect("a command");
        assert!(plain.contains(&format!("-r {} ", first.runtime_name)), "{plain}");
        let mut other = first.clone();
        other.runtime_version = "0.0.1-other".into();
        r.cells.push(other.clone());
        let mut info = r.run_info.runtimes[0].clone();
        info.name = other.runtime_name.clone();
        info.version = other.runtime_version.clone();
        info.path = Some(format!("/home/u/.cache/conformance/runtimes/{}/0.0.1-other/bin/x", info.name));
        r.run_info.runtimes.push(info);
        let again = super::again(&r);
        let line = again(&other).expect("a command");
        assert!(line.contains(&format!("-r {}@0.0.1-other ", other.runtime_name)), "{line}");
        assert!(again(&first).unwrap().contains(&format!("-r {} ", first.runtime_name)), "PATH's by its name");
        let mut lacking = first;
        lacking.result = CellResult::Counters(CountersResult::default());
        lacking.evidence = Some("unsupported: no such recipe".into());
        assert_eq!(again(&lacking), None);
    }
}

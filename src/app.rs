//! The commands: each validates its flags into a plan ([`crate::plan`]), then measures and
//! prints. Everything here returns an exit code or an [`Error`]; `main` only maps them.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::cli::{
    Cli, Command, CompareArgs, CompareFormat, DiffArgs, DiffFormat, DocsArgs, Format, InstallArgs, MergeArgs, RaceArgs,
    ReportArgs, RunArgs, RuntimesArgs, VariantsArgs,
};
use crate::cross::{CrossContender, CrossRace};
use crate::engine::{self, Amplify};
use crate::error::{Error, Result};
use crate::exec::scratch::Scratch;
use crate::exit_code;
use crate::matrix::Variant;
use crate::outdir::OutDir;
use crate::plan::{cleanup_runtimes, ready_runtimes, Paths, RacePlan, RunPlan};
use crate::report::model::{Cell, Finding, ModeRun, Results, Scenario, SCHEMA};
use crate::report::{csv, html, json, junit, markdown, table};
use crate::runtime::install::{self, VersionRequest};
use crate::runtime::{discover, Fetch, ProbeContext, Requested, Runtime, Status};
use crate::status::{self, amplify_line, emit, status_line};

/// Runs the parsed command line; returns the exit code (see [`crate::exit_code`]).
///
/// Errors: see [`Error`]; each maps to its own exit code.
pub fn run(cli: Cli) -> Result<i32> {
    // Only commands that start processes or measure take over Ctrl-C and SIGTERM (to stop
    // probes and keep what was measured); the others write their outputs atomically and have
    // nothing to clean up, so the signal's default action ends them at once, as `timeout`, a
    // CI cancel or systemd expect.
    let measures = match &cli.command {
        Command::Run(_) | Command::Race(_) | Command::Runtimes(_) | Command::Install(_) => true,
        Command::Diff(a) => !a.runtime.is_empty(),
        Command::Variants(_) | Command::Compare(_) | Command::Report(_) | Command::Merge(_) | Command::Docs(_) => false,
    };
    if measures {
        crate::interrupt::install();
    }
    let paths = Paths::of(&cli);
    match cli.command {
        Command::Run(a) => cmd_run(&a, &paths),
        Command::Race(a) => cmd_race(&a, &paths),
        Command::Runtimes(a) => cmd_runtimes(&a, &paths),
        Command::Install(a) => cmd_install(&a, &paths),
        Command::Variants(a) => cmd_variants(&a, paths.matrices.as_deref()),
        Command::Compare(a) => cmd_compare(&a),
        Command::Diff(a) => cmd_diff(&a, &paths),
        Command::Report(a) => cmd_report(&a),
        Command::Merge(a) => cmd_merge(&a),
        Command::Docs(a) => cmd_docs(&a),
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
    summary.exists().then(|| "summary.md".to_string())
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

fn cmd_run(a: &RunArgs, paths: &Paths) -> Result<i32> {
    measure_run(a, paths, true).map(|(code, _)| code)
}

/// `run`: measures what `a` selects and writes `results.json` and `summary.md` to its output
/// folder. With `show`, prints the tables (or the JSON) on stdout as `run` does; without,
/// stdout is left alone (for `diff`) and the closing line goes to stderr. Returns the exit
/// code and the results when the run was completed (not for `--dry-run` or an interrupt).
///
/// Errors: see [`RunPlan::new`], [`Requested::locate_versions`]; [`Error::Output`] for
/// `--out`, [`Error::RequiredMissing`], [`Error::NoRuntime`], [`Error::ScratchBroken`].
fn measure_run(a: &RunArgs, paths: &Paths, show: bool) -> Result<(i32, Option<Results>)> {
    let started = Instant::now();
    let mut plan = RunPlan::new(a, paths)?;
    // NAME@VERSION items: found in the cache or installed now, before anything is made
    locate_versions(&mut plan.requested, paths, "--runtime")?;
    if crate::interrupt::requested() {
        eprintln!("interrupted before measuring: nothing measured, nothing written");
        return Ok((exit_code::INTERRUPTED, None));
    }
    // a dry run writes nothing, so it takes no output folder
    let mut outdir = if plan.dry_run { None } else { Some(open_out(&plan.out)?) };
    // after the lock: a folder another run is writing to is named as such
    if let Err(e) = outdir.as_ref().map_or(Ok(()), |_| refuse_earlier_results(&plan.out, a.force, "--out")) {
        outdir.iter_mut().for_each(OutDir::abandon);
        return Err(e);
    }
    let (mut scratch, ctx) = match plan.common.workspace() {
        Ok(w) => w,
        Err(e) => {
            outdir.iter_mut().for_each(OutDir::abandon);
            return Err(e);
        }
    };
    let say = |s: &str| {
        if !plan.quiet {
            eprintln!("{s}");
        }
    };
    let mut found = discover(&plan.requested).runtimes;
    let selected: Vec<&Variant> = plan.variants.iter().collect();
    for w in ready_runtimes(&mut found, &ctx, &plan.options, &selected) {
        eprintln!("{w}");
    }
    // nothing of one runtime may run while another is measured (an idle Wine server and its
    // services slowed Bun's races by 15-20% here): each is started again when its turn comes
    cleanup_runtimes(&found, &ctx);
    if crate::interrupt::requested() {
        give_up(&found, &ctx, &mut outdir);
        eprintln!("interrupted before measuring: nothing measured, nothing written");
        return Ok((exit_code::INTERRUPTED, None));
    }
    match (&plan.options.amplify, amplify_line(&plan.options.amplify)) {
        (Amplify::Unavailable(_), Some(l)) => eprintln!("{l}"),
        (_, Some(l)) => say(&l),
        _ => {}
    }
    for rt in &found {
        // a skipped runtime is always said, even with --quiet: absence must be visible
        if rt.status == Status::Found {
            say(&status_line(rt));
        } else {
            eprintln!("{}", status_line(rt));
        }
    }
    let missing = plan.missing_required(&found);
    if !missing.is_empty() {
        give_up(&found, &ctx, &mut outdir);
        return Err(Error::RequiredMissing(missing.join("; ")));
    }
    if plan.measurable(&found).is_empty() {
        give_up(&found, &ctx, &mut outdir);
        return Err(Error::no_runtime(plan.nothing_measurable(&found), &plan.common.cache));
    }
    let Some(outdir) = outdir else {
        cleanup_runtimes(&found, &ctx);
        let d = plan.dry_run_report(&found);
        emit(&if plan.json {
            serde_json::to_string_pretty(&d).expect("serialises") + "\n"
        } else {
            status::dry_run_text(&d)
        });
        return Ok((exit_code::OK, None));
    };

    let cells = plan.cells(&found);
    // --thorough (no adaptive trials) may take long: its bar says about how long is left
    let bar = progress_bar(cells.len(), plan.quiet, !plan.options.adaptive);
    bar.set_message(status::progress_message(&cells, 0));
    let mut results =
        Results { schema: SCHEMA, run_info: plan.run_info(&found), cells: Vec::new(), against: Vec::new() };
    let controls = plan.control_refs();
    let mut stdout = std::io::stdout().lock();
    let mut scratch_failed = None;
    let mut measurement = engine::Measurement::new(&plan.options, &mut scratch, &plan.nonce);
    for rt in plan.measurable(&found) {
        if crate::interrupt::requested() || scratch_failed.is_some() {
            break;
        }
        // partial results on disk every few seconds, so that even a SIGKILLed run keeps what
        // it measured (each write is atomic)
        let partial = outdir.partial(results.clone(), PARTIAL_EVERY);
        let vs = plan.variants_of(rt);
        // the report layer names the findings: runtime label and the variant's family and call
        let recipes: Vec<Variant> = crate::handoff::RECIPES.iter().map(|r| r.as_variant()).collect();
        let cell = |f: Finding| {
            let known = vs.iter().copied().chain(controls.iter().copied()).chain(&recipes);
            let v = known.into_iter().find(|v| v.id == f.variant).expect("a finding of a planned variant or recipe");
            Cell::from_finding((&rt.label, rt.name, &rt.version), v, f)
        };
        // the hello check's background processes were stopped (see below): start them again
        if let Err(why) = rt.adapter().resume(rt, &ctx) {
            bar.suspend(|| eprintln!("warn     {}: could not start again after the hello check: {why}", rt.label));
        }
        let m = engine::measure(rt, &vs, &controls, &mut measurement, &ctx, &mut |f| {
            // the cells are measured in the plan's order, some conditional races left out
            // (`--races auto`): the bar goes to this cell's place, and names the next one
            let id = Cell::id_of(&rt.label, &f.variant, f.scenario, f.target, f.source, f.contenders);
            let done = cells.iter().position(|c| c.id == id).map_or(bar.position() + 1, |i| i as u64 + 1);
            bar.set_position(done);
            bar.set_message(status::progress_message(&cells, done as usize));
            partial.send(&cell(f.clone()));
        });
        rt.adapter().cleanup(rt, &ctx);
        partial.finish()?;
        scratch_failed = m.scratch_failed;
        results.cells.extend(m.findings.into_iter().map(cell));
        results.run_info.controls.extend(m.controls);
        if show && !plan.json {
            bar.suspend(|| {
                if !results.rows(&rt.label).is_empty() {
                    let _ = writeln!(stdout, "\n{}", table::escape_controls(&rt.label));
                    let _ = writeln!(stdout, "{}", table::render_terminal(&results, &rt.label));
                    for l in table::race_lines(&results, &rt.label) {
                        let _ = writeln!(stdout, "{l}");
                    }
                }
                let _ = stdout.flush();
            });
        }
        // keep partial results on disk after each runtime, so a crash keeps the data
        results.run_info.duration_s = started.elapsed().as_secs_f64();
        outdir.write("results.json", &json::render(&results))?;
    }
    if plan.against != crate::against::AgainstScope::None && scratch_failed.is_none() {
        race_against(&plan, &found, &mut results, &mut measurement, &ctx, &bar);
        results.run_info.duration_s = started.elapsed().as_secs_f64();
        outdir.write("results.json", &json::render(&results))?;
    }
    bar.finish_and_clear();
    for scenario in
        [Scenario::Publish, Scenario::DoneMarker, Scenario::Claim].into_iter().filter(|_| show && !plan.json)
    {
        if let Some(t) = table::render_scenario(&results, scenario) {
            let _ = writeln!(stdout, "\n{} (hand-off: counted from the files)\n{t}", scenario.as_str());
        }
    }
    if show && !plan.json {
        let _ = write!(stdout, "{}", table::against_block(&results));
        let answers = crate::report::answers::render(&results, crate::report::answers::ANSWER_WIDTH);
        if !answers.is_empty() {
            let _ = write!(stdout, "\n{answers}");
        }
    }
    results.run_info.duration_s = started.elapsed().as_secs_f64();
    results.run_info.interrupted = crate::interrupt::requested();
    let results_json = json::render(&results);
    outdir.write("results.json", &results_json)?;
    outdir.write("summary.md", &markdown::render(&results))?;
    let done = format!(
        "{} cells in {:.1} s; wrote {} and {}",
        results.cells.len(),
        results.run_info.duration_s,
        plan.out.join("results.json").display(),
        plan.out.join("summary.md").display()
    );
    if !show {
        say(&done);
    } else if plan.json {
        // stdout holds the results alone; the rest goes to stderr
        emit(&results_json);
        say(&done);
    } else {
        let _ = writeln!(stdout, "\n{done}");
    }
    drop(scratch);
    if let Some(why) = scratch_failed {
        return Err(Error::ScratchBroken {
            path: plan.common.fs_root.clone(),
            origin: crate::error::scratch_origin(plan.common.fs_root_given),
            why: format!("{why}; measuring stopped, the cells measured before are in {}", plan.out.display()),
        });
    }
    if crate::interrupt::requested() {
        return Ok((exit_code::INTERRUPTED, None));
    }
    let mut code = exit_code::OK;
    if let Some(base) = &plan.baseline {
        let diff = crate::compare::compare_ignoring(base, &results, &plan.ignore);
        if plan.json {
            eprint!("{}", diff.render());
        } else {
            let _ = write!(stdout, "{}", diff.render());
        }
        if diff.differs() {
            code = exit_code::DIFFERENCES;
        }
    }
    Ok((code, Some(results)))
}

fn cmd_race(a: &RaceArgs, paths: &Paths) -> Result<i32> {
    let plan = RacePlan::new(a, paths)?;
    let mut requested = plan.requested();
    locate_versions(&mut requested, paths, "--contender")?;
    if crate::interrupt::requested() {
        eprintln!("interrupted before racing: nothing measured, nothing written");
        return Ok(exit_code::INTERRUPTED);
    }
    let mut outdir = plan.out.as_deref().map(open_out).transpose()?;
    let mut found = discover(&requested).runtimes;
    let (mut scratch, ctx) = match plan.common.workspace() {
        Ok(w) => w,
        Err(e) => {
            outdir.iter_mut().for_each(OutDir::abandon);
            return Err(e);
        }
    };
    let selected: Vec<&Variant> = plan.slots.iter().map(|s| &s.variant).collect();
    for w in ready_runtimes(&mut found, &ctx, &plan.options, &selected) {
        eprintln!("{w}");
    }
    if crate::interrupt::requested() {
        give_up(&found, &ctx, &mut outdir);
        eprintln!("interrupted before racing: nothing measured, nothing written");
        return Ok(exit_code::INTERRUPTED);
    }
    let missing: Vec<String> = found.iter().filter(|r| r.status != Status::Found).map(status_line).collect();
    if !missing.is_empty() {
        give_up(&found, &ctx, &mut outdir);
        return Err(Error::no_runtime(missing.join("; "), &plan.common.cache));
    }
    if let Some(l) = amplify_line(&plan.options.amplify) {
        eprintln!("{l}");
    }
    let Some(rts) =
        plan.slots.iter().map(|s| plan.runtime_of(s, &requested, &found)).collect::<Option<Vec<&Runtime>>>()
    else {
        give_up(&found, &ctx, &mut outdir);
        return Err(Error::Internal("a contender's runtime was not discovered".into()));
    };
    let result = cross_race(&plan, &rts, &ctx, &mut scratch);
    for rt in &rts {
        rt.adapter().cleanup(rt, &ctx);
    }
    let text = serde_json::to_string_pretty(&result).expect("serialises") + "\n";
    if let Some(out) = &outdir {
        out.write("cross-race.json", &text)?;
        eprintln!("wrote {}", out.path().join("cross-race.json").display());
    }
    if plan.json {
        emit(&text);
    } else {
        emit(&result.render());
    }
    drop(scratch);
    if crate::interrupt::requested() {
        eprintln!("interrupted: the race above counts only the trials completed before the stop");
        return Ok(exit_code::INTERRUPTED);
    }
    Ok(exit_code::OK)
}

/// Races `plan`'s slots (slot `i` on `rts[i]`) in one pool: first the detection control,
/// every slot making its own family's check-then-create, then the contenders' calls.
fn cross_race(plan: &RacePlan, rts: &[&Runtime], ctx: &ProbeContext, scratch: &mut Scratch) -> CrossRace {
    let opts = &plan.options;
    let slots: Vec<_> = plan
        .slots
        .iter()
        .zip(rts)
        .map(|(s, rt)| {
            let ad = rt.adapter();
            (ad.mode(), ad.launch(rt, &s.variant.family, ctx), engine::timeouts_for(ad, opts))
        })
        .collect();
    let mut pools = match opts.contender_kind {
        crate::domain::ContenderKind::Processes => engine::Pools::new(slots, scratch.root().to_path_buf()),
        // one runtime and family (checked by the plan): one launch for every thread
        crate::domain::ContenderKind::Threads => {
            let (mode, launch, timeouts) = slots[0].clone();
            engine::Pools::threads(slots.len(), mode, launch, timeouts, scratch.root().to_path_buf())
        }
    };
    if let Some(why) = rts.iter().find_map(|r| r.adapter().no_amplification()) {
        if matches!(opts.amplify, Amplify::On(_)) {
            pools.amplified_broke(why);
        }
    }
    for c in &mut pools.natural {
        let _ = c.start();
    }
    let variants: Vec<&Variant> = plan.slots.iter().map(|s| &s.variant).collect();
    let styles: Vec<_> = rts.iter().map(|r| r.adapter().path_style()).collect();
    let trials = plan.trials;
    let mut m = engine::Measurement::new(opts, scratch, &plan.nonce);
    let detection = plan.controls.as_ref().map(|cs| {
        let cs: Vec<&Variant> = cs.iter().collect();
        let r = engine::race_modes(&mut pools, &cs, &styles, trials, &mut m);
        let counts = |m: &Option<ModeRun>| m.as_ref().map(|m| m.control_counts());
        let mut ids: Vec<&str> = Vec::new();
        for v in &cs {
            if !ids.contains(&v.id.as_str()) {
                ids.push(&v.id);
            }
        }
        crate::verdict::Detection::judge(&ids.join(" + "), counts(&r.race.natural), counts(&r.race.amplified))
    });
    let run = engine::race_modes(&mut pools, &variants, &styles, trials, &mut m);
    pools.shutdown();
    drop(pools);
    let (verdict, weak_race) = crate::verdict::apply_control(run.race.verdict, detection.as_ref());
    let mut wins_by_runtime = std::collections::BTreeMap::new();
    let deciding = run.race.deciding();
    for (slot, rt) in rts.iter().enumerate() {
        *wins_by_runtime.entry(rt.label.clone()).or_insert(0) +=
            deciding.and_then(|m| m.stats.wins_by_contender.get(slot).copied()).unwrap_or(0);
    }
    CrossRace {
        contender_kind: opts.contender_kind,
        contenders: plan
            .slots
            .iter()
            .zip(rts)
            .enumerate()
            .map(|(slot, (s, rt))| CrossContender {
                slot,
                runtime: rt.label.clone(),
                runtime_name: rt.name.to_string(),
                variant: s.variant.id.clone(),
                source: s.variant.cell_source(),
                call: s.variant.call.clone(),
            })
            .collect(),
        verdict,
        decided_by: run.race.decided_by,
        natural: run.race.natural,
        amplified: run.race.amplified,
        amplified_unavailable: run.race.amplified_unavailable,
        detection,
        weak_race,
        wins_by_runtime,
        first_error: run.race.error,
        evidence: run.evidence,
        amplification: plan.common.amplification_info(&opts.amplify),
    }
}

fn cmd_runtimes(a: &RuntimesArgs, paths: &Paths) -> Result<i32> {
    let mut req = Requested::parse(&a.runtime)?;
    let store = paths.store();
    if a.runtime.is_empty() {
        req.add_installed(&store);
    } else {
        // a listing never downloads
        req.locate_versions(&store, Fetch::Never, "--runtime", &mut |_| {})?;
    }
    let mut d = discover(&req);
    // what `run` checks before measuring: the probe is built, starts and says hello
    let plan = crate::plan::RuntimesPlan::new(paths)?;
    let (scratch, ctx) = plan.common.workspace()?;
    let selected: Vec<&Variant> = plan.variants.iter().collect();
    let warnings = ready_runtimes(&mut d.runtimes, &ctx, &plan.options, &selected);
    cleanup_runtimes(&d.runtimes, &ctx);
    drop(scratch);
    for w in warnings {
        eprintln!("{w}");
    }
    if crate::interrupt::requested() {
        return Ok(exit_code::INTERRUPTED);
    }
    if a.json {
        let infos: Vec<status::Listed> = d.runtimes.iter().map(status::listed).collect();
        emit(&(serde_json::to_string_pretty(&infos).expect("serialises") + "\n"));
    } else {
        let header = ["runtime", "version", "select with", "status", "path / reason"].map(String::from);
        let rows = d.runtimes.iter().map(|rt| {
            let (st, detail) = match &rt.status {
                Status::Found => ("found", rt.path.as_ref().map(|p| p.display().to_string()).unwrap_or_default()),
                Status::NotFound(r) => ("not found", r.clone()),
                Status::Broken(r) => ("broken", r.clone()),
            };
            [rt.label.clone(), rt.version.clone(), rt.selector.clone(), st.to_string(), detail]
        });
        emit(&format!("{}\n", table::terminal_table(std::iter::once(header).chain(rows))));
    }
    Ok(exit_code::OK)
}

/// `install NAME@VERSION…`: each version found in the cache or fetched, checked and started
/// once ([`install::install`]); a line per version on stderr, the list on stdout.
///
/// Errors: the first version that cannot be had: [`Error::Usage`] naming the item for a
/// version the registry does not have (exit 2), [`Error::RuntimeUnavailable`] (exit 4: with
/// `--offline`, npm or the registry unreachable, a failed check), [`Error::Output`] when the
/// cache cannot be written (exit 3). Versions installed before it stay installed. Ctrl-C stops
/// the download (exit 130) and leaves no half-made version.
fn cmd_install(a: &InstallArgs, paths: &Paths) -> Result<i32> {
    let flag = "NAME@VERSION";
    let requests = a
        .versions
        .iter()
        .flat_map(|v| v.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect::<Vec<_>>())
        .map(|item| {
            if item.contains('@') {
                VersionRequest::parse(&item, flag)
            } else {
                Err(Error::Usage {
                    flag: flag.into(),
                    message: format!("'{item}' is not NAME@VERSION (e.g. bun@1.3.14, node@22, deno@latest)"),
                })
            }
        })
        .collect::<Result<Vec<_>>>()?;
    let store = paths.store();
    let spinner = Spinner::new();
    let mut rows = Vec::new();
    for r in &requests {
        // a range or `latest` asks the registry for its newest version; --offline takes the
        // newest installed one
        let (i, fetched) = if paths.offline {
            let i = store.best(r).ok_or_else(|| Error::RuntimeUnavailable {
                what: r.text.clone(),
                why: format!("not installed in {}, and --offline forbids fetching it", store.root().display()),
            })?;
            (i, false)
        } else {
            match install::install(&store, r, &mut |l| spinner.say(l)) {
                Ok(x) => x,
                Err(_) if crate::interrupt::requested() => {
                    spinner.done();
                    eprintln!("interrupted: {} was not installed; the versions before it were", r.text);
                    return Ok(exit_code::INTERRUPTED);
                }
                Err(e) => return Err(e.into_error(flag, &r.text)),
            }
        };
        if !fetched {
            // installed before: it must still start and report its version
            install::verify_version(i.runtime, &i.exe, &i.version)
                .map_err(|why| Error::RuntimeUnavailable { what: r.text.clone(), why })?;
            spinner.say(&format!("install  {}: {} already installed in {}", r.text, i.selector(), i.dir.display()));
        }
        rows.push(status::Installation::of(&i, fetched));
    }
    spinner.done();
    if a.json {
        emit(&(serde_json::to_string_pretty(&rows).expect("serialises") + "\n"));
    } else {
        let header = ["runtime", "select with", "package", "path"].map(String::from);
        let body = rows
            .iter()
            .map(|r| [format!("{} {}", r.runtime, r.version), r.select.clone(), r.package.clone(), r.path.clone()]);
        emit(&format!("{}\n", table::terminal_table(std::iter::once(header).chain(body))));
    }
    Ok(exit_code::OK)
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

/// The progress bar of `run`: cells done of `total`, elapsed time, and the cell under way. It
/// draws on stderr only when stderr is a terminal (indicatif's `ProgressDrawTarget::stderr`
/// hides itself otherwise), and never with `--quiet`; with `eta`, also the time left.
/// Races the pairs `plan.against` picks ([`crate::against::pairs`]) among the rows of
/// `results` that held against copies of themselves, one contender each, and appends them to
/// `results.against`; the bar grows by the pairs. Stops between pairs on an interrupt.
fn race_against(
    plan: &RunPlan,
    found: &[Runtime],
    results: &mut Results,
    m: &mut engine::Measurement<'_>,
    ctx: &ProbeContext,
    bar: &ProgressBar,
) {
    use crate::against::Candidate;
    let mut rows: Vec<(Candidate, &Runtime, Variant)> = Vec::new();
    for rt in plan.measurable(found) {
        let vs = plan.variants_of(rt);
        let safe =
            results.rows(&rt.label).into_iter().filter(|r| r.contenders.is_processes() && r.safe() == Some(true));
        for row in safe {
            if let Some(v) = vs.iter().find(|v| v.id == row.variant && v.cell_source() == row.source) {
                rows.push((Candidate::of(&rt.label, v), rt, (*v).clone()));
            }
        }
    }
    let cands: Vec<Candidate> = rows.iter().map(|r| r.0.clone()).collect();
    let pairs = crate::against::pairs(&cands, plan.against);
    if pairs.is_empty() {
        return;
    }
    bar.inc_length(pairs.len() as u64);
    let detection = |label: &str, family: &str| {
        results.run_info.controls.iter().find(|c| c.runtime == label && c.family == family).map(|c| c.detection.clone())
    };
    let detections: Vec<Option<crate::verdict::Detection>> =
        rows.iter().map(|(_, rt, v)| detection(&rt.label, &v.family)).collect();
    // the runtimes' background processes were stopped after each was measured (cmd's Wine
    // server): started again for the pairs, stopped after
    let mut used: Vec<&Runtime> = Vec::new();
    for &(a, b) in &pairs {
        for rt in [rows[a].1, rows[b].1] {
            if !used.iter().any(|u| u.label == rt.label) {
                used.push(rt);
            }
        }
    }
    for rt in &used {
        if let Err(why) = rt.adapter().resume(rt, ctx) {
            bar.suspend(|| eprintln!("warn     {}: could not start again for the pairs: {why}", rt.label));
        }
    }
    for (a, b) in pairs {
        if crate::interrupt::requested() {
            break;
        }
        let side = |i: usize| engine::against::Side { rt: rows[i].1, v: &rows[i].2, detection: detections[i].as_ref() };
        let label = |i: usize| format!("{} {}", rows[i].1.name, Variant::label(&rows[i].2.id, rows[i].2.cell_source()));
        bar.set_message(table::escape_controls(&format!("against · {} vs {}", label(a), label(b))).into_owned());
        if let Some(r) = engine::against::race_pair([side(a), side(b)], m, ctx) {
            results.against.push(r);
        }
        bar.inc(1);
    }
    for rt in used {
        rt.adapter().cleanup(rt, ctx);
    }
}

fn progress_bar(total: usize, quiet: bool, eta: bool) -> ProgressBar {
    let target = if quiet { ProgressDrawTarget::hidden() } else { ProgressDrawTarget::stderr() };
    let bar = ProgressBar::with_draw_target(Some(total as u64), target);
    let template = if eta { status::PROGRESS_TEMPLATE_ETA } else { status::PROGRESS_TEMPLATE };
    bar.set_style(ProgressStyle::with_template(template).expect("template"));
    bar
}

fn cmd_variants(a: &VariantsArgs, matrices: Option<&Path>) -> Result<i32> {
    // the hand-off recipes are selected by the same globs in `run`: listed with them
    let recipes = crate::handoff::RECIPES.iter().map(|r| r.as_variant());
    let vs =
        crate::plan::select_variants(crate::matrix::load(matrices)?.into_iter().chain(recipes).collect(), &a.variant)?;
    if a.json {
        emit(&(serde_json::to_string_pretty(&vs).expect("serialises") + "\n"));
    } else {
        // a wide call is cut and control characters escaped, as in every terminal table
        let header = ["variant", "call", "sources", "creates", "form", "shows"].map(String::from);
        let rows = vs.iter().map(|v| {
            let id = if v.anti_pattern { format!("{} (anti-pattern)", v.id) } else { v.id.clone() };
            let kind = |k: &dyn std::fmt::Debug| format!("{k:?}").to_lowercase();
            let shows: Vec<String> = v.show.iter().map(|f| kind(f)).collect();
            // every kind of source the variant is measured with, its own first
            let sources = match v.sources.is_empty() {
                true => v.source.as_str().to_string(),
                false => v.sources.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(", "),
            };
            [id, v.call.clone(), sources, kind(&v.creates), kind(&v.form), shows.join(", ")]
        });
        emit(&format!("{}\n", table::terminal_table(std::iter::once(header).chain(rows))));
    }
    Ok(exit_code::OK)
}

fn cmd_compare(a: &CompareArgs) -> Result<i32> {
    refuse_out_onto_input(a.out.as_deref(), &[&a.base, &a.new])?;
    let base = json::read(&a.base)?;
    let new = json::read(&a.new)?;
    let diff = crate::compare::compare_ignoring(&base, &new, &a.ignore);
    let text = match a.format {
        CompareFormat::Text => diff.render(),
        CompareFormat::Junit => junit::render(&diff, &a.base, &a.new),
    };
    output(a.out.as_deref(), &text)?;
    Ok(if diff.differs() { exit_code::DIFFERENCES } else { exit_code::OK })
}

/// `diff`: the cells that differ between two results files, or between two runtimes measured
/// now (`-r A -r B`), in `--format`; exit 1 when a cell differs.
///
/// Errors: [`Error::Usage`] (not two files or two runtimes, a `run` flag's value),
/// [`Error::Input`] naming a results file that cannot be read, and with `-r` those of
/// [`measure_run`] (a runtime not found or not installable: exit 4 or 5).
fn cmd_diff(a: &DiffArgs, paths: &Paths) -> Result<i32> {
    refuse_out_onto_input(a.out.as_deref(), &a.files.iter().map(PathBuf::as_path).collect::<Vec<_>>())?;
    let sources: std::collections::BTreeMap<String, crate::matrix::SourceKind> =
        crate::matrix::load(paths.matrices.as_deref())?.into_iter().map(|v| (v.id, v.source)).collect();
    let (ra, rb, na, nb) = if a.runtime.is_empty() {
        if let Some(flag) = [(!a.variant.is_empty(), "--variant"), (a.runs_dir.is_some(), "--runs-dir")]
            .into_iter()
            .find_map(|(given, flag)| given.then_some(flag))
        {
            return Err(Error::Usage {
                flag: flag.into(),
                message: "measures runtimes: give -r A -r B, not files".into(),
            });
        }
        let [fa, fb] = a.files.as_slice() else {
            return Err(Error::Usage {
                flag: "FILE".into(),
                message: format!(
                    "diff takes two results files (A B) or two runtimes (-r A -r B); got {} file(s)",
                    a.files.len()
                ),
            });
        };
        (json::read(fa)?, json::read(fb)?, fa.display().to_string(), fb.display().to_string())
    } else {
        match diff_measure(a, paths)? {
            Some(x) => x,
            None => {
                eprintln!("interrupted: nothing compared");
                return Ok(exit_code::INTERRUPTED);
            }
        }
    };
    let report = crate::diff::diff(&ra, &rb, &na, &nb, &sources, &a.ignore);
    let text = match a.format {
        DiffFormat::Table => crate::diff::render_text(&report),
        DiffFormat::Md => crate::diff::render_markdown(&report),
        DiffFormat::Json => serde_json::to_string_pretty(&report).expect("serialises") + "\n",
        DiffFormat::Junit => junit::render(&report.as_compare_diff(), Path::new(&na), Path::new(&nb)),
    };
    output(a.out.as_deref(), &text)?;
    Ok(if report.differs() { exit_code::DIFFERENCES } else { exit_code::OK })
}

/// `diff -r A -r B`: checks that both runtimes can be had (installing `NAME@VERSION` items on
/// first use) and are found, then measures A into `RUNS/a/` and B into `RUNS/b/` as `run`
/// would, printing nothing on stdout. Returns both results and how each is named in the
/// report, or `None` when interrupted.
///
/// Errors: [`Error::Usage`] unless exactly two different items are given, those of
/// [`Requested::parse`] and [`Requested::locate_versions`], [`Error::NoRuntime`] naming a
/// runtime that is not found or broken, and those of [`measure_run`].
fn diff_measure(a: &DiffArgs, paths: &Paths) -> Result<Option<(Results, Results, String, String)>> {
    let items: Vec<String> = a
        .runtime
        .iter()
        .flat_map(|v| crate::runtime::discover::split_items(v))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    let usage = |message: String| Error::Usage { flag: "--runtime".into(), message };
    if items.len() != 2 {
        return Err(usage(format!(
            "diff measures two runtimes, A then B (e.g. -r bun@1.1.44 -r bun@1.4.5); got {}: {}",
            items.len(),
            items.join(", ")
        )));
    }
    if items[0] == items[1] || items.iter().any(|i| i == "all") {
        return Err(usage(format!("A and B must be two different runtimes; got {} and {}", items[0], items[1])));
    }
    // both can be had before anything is measured: a missing B must not cost A's run
    let mut both = Requested::parse(&items)?;
    locate_versions(&mut both, paths, "--runtime")?;
    if crate::interrupt::requested() {
        return Ok(None);
    }
    let missing: Vec<String> =
        discover(&both).runtimes.iter().filter(|r| r.status != Status::Found).map(status_line).collect();
    if !missing.is_empty() {
        return Err(Error::no_runtime(missing.join("; "), &paths.cache));
    }
    let runs = a.runs_dir.clone().unwrap_or_else(|| {
        let stamp = jiff::Timestamp::now().strftime("%Y%m%dT%H%M%SZ").to_string();
        paths.home.join("reports").join("runs").join(format!("{stamp}-diff"))
    });
    for sub in ["a", "b"] {
        refuse_earlier_results(&runs.join(sub), false, "--runs-dir")?;
    }
    let mut measured = Vec::new();
    for (item, sub) in items.iter().zip(["a", "b"]) {
        // a NAME=PATH item is required by its name, NAME and NAME@VERSION as given
        let require = item.split_once('=').map_or(item.as_str(), |(n, _)| n).to_string();
        let args = RunArgs {
            runtime: vec![item.clone()],
            variant: a.variant.clone(),
            scenario: a.scenario.clone(),
            workers: crate::cli::DEFAULT_WORKERS,
            items: crate::cli::DEFAULT_ITEMS,
            readers: crate::cli::DEFAULT_READERS,
            size: crate::cli::DEFAULT_SIZE,
            target: a.target.clone(),
            scratch: a.scratch.clone(),
            trials: a.trials,
            oneshot_trials: crate::cli::DEFAULT_ONESHOT_TRIALS,
            power: a.power.clone(),
            contenders: a.contenders,
            contender_kind: Default::default(),
            attempt: a.attempt.clone(),
            out: Some(runs.join(sub)),
            thorough: a.thorough,
            quick: a.quick,
            races: None,
            against: None,
            ignore: Vec::new(),
            no_relative: a.no_relative,
            require: vec![require],
            expect: None,
            quiet: a.quiet,
            dry_run: false,
            json: false,
            force: false,
        };
        if !a.quiet {
            eprintln!("diff: measuring {} {item} into {}", sub.to_uppercase(), runs.join(sub).display());
        }
        let (_, Some(results)) = measure_run(&args, paths, false)? else { return Ok(None) };
        let labels = results.measured_runtimes().join(", ");
        let file = runs.join(sub).join("results.json");
        measured.push((results, format!("{item} ({labels}), {}", file.display())));
    }
    let (b, nb) = measured.pop().expect("two runs");
    let (a, na) = measured.pop().expect("two runs");
    Ok(Some((a, b, na, nb)))
}

/// Prints `text`, or writes it atomically to `out`.
/// Refuses an `--out FILE` that is one of the command's `inputs` (the same file by identity:
/// another spelling, a link or `..` path included), before anything is read or written:
/// writing the output would replace the input.
///
/// Errors: [`Error::Usage`] naming `--out` and the input (exit 2).
fn refuse_out_onto_input(out: Option<&Path>, inputs: &[&Path]) -> Result<()> {
    let Some(out) = out else { return Ok(()) };
    match inputs.iter().find(|i| same_file::is_same_file(out, i).unwrap_or(false)) {
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

fn output(out: Option<&Path>, text: &str) -> Result<()> {
    match out {
        Some(p) => crate::outdir::write_file(p, text),
        None => {
            emit(text);
            Ok(())
        }
    }
}

fn cmd_merge(a: &MergeArgs) -> Result<i32> {
    refuse_out_onto_input(a.out.as_deref(), &a.results.iter().map(PathBuf::as_path).collect::<Vec<_>>())?;
    // the same file twice would compare a machine with itself
    for (i, p) in a.results.iter().enumerate() {
        if let Some(q) = a.results[..i].iter().find(|q| same_file::is_same_file(q, p).unwrap_or(*q == p)) {
            return Err(Error::input(
                p,
                format!(
                    "given twice to merge (also as {}): merge combines runs of different machines or file systems",
                    q.display()
                ),
            ));
        }
    }
    let runs = a.results.iter().map(|p| Ok((p.display().to_string(), json::read(p)?))).collect::<Result<Vec<_>>>()?;
    let merged = crate::merge::merge(runs)?;
    // a merge of runs that measured nothing is a file `report` refuses: refuse it here
    if merged.cells.is_empty() {
        return Err(Error::input(&a.results[0], "the runs given hold no cells: nothing to merge".into()));
    }
    output(a.out.as_deref(), &json::render(&merged))?;
    Ok(exit_code::OK)
}

fn cmd_report(a: &ReportArgs) -> Result<i32> {
    let usage = |message: &str| Error::Usage { flag: "--expect".into(), message: message.into() };
    match (a.format, &a.expect) {
        (Format::Junit, None) => return Err(usage("--format junit compares against a baseline: give --expect BASE")),
        (Format::Junit, Some(_)) => {}
        (_, Some(_)) => return Err(usage("only --format junit uses a baseline")),
        _ => {}
    }
    if a.answers && a.format != Format::Table {
        return Err(Error::Usage {
            flag: "--answers".into(),
            message: "prints the answer lists as text: use it with --format table (the default)".into(),
        });
    }
    refuse_out_onto_input(
        a.out.as_deref(),
        &[Some(a.results.as_path()), a.expect.as_deref()].into_iter().flatten().collect::<Vec<_>>(),
    )?;
    let r = json::read(&a.results)?;
    if r.cells.is_empty() {
        return Err(Error::input(&a.results, "holds no cells: nothing to report (the run measured nothing)".into()));
    }
    let mut code = exit_code::OK;
    let text = match a.format {
        Format::Json => json::render(&r),
        Format::Md => markdown::render(&r),
        Format::Csv => csv::render(&r),
        Format::Html => html::render(&r),
        Format::Junit => {
            let base_path = a.expect.as_deref().expect("checked above");
            let diff = crate::compare::compare_ignoring(&json::read(base_path)?, &r, &a.ignore);
            if diff.differs() {
                code = exit_code::DIFFERENCES;
            }
            junit::render(&diff, base_path, &a.results)
        }
        Format::Table if a.answers => crate::report::answers::render(&r, crate::report::answers::ANSWER_WIDTH),
        Format::Table => {
            let answers = crate::report::answers::render(&r, crate::report::answers::ANSWER_WIDTH);
            format!("{answers}{}", table::render_report(&r))
        }
    };
    output(a.out.as_deref(), &text)?;
    Ok(code)
}

/// The most lines of a drifted marker's diff `docs --check` prints.
const DOCS_DIFF_LINES: usize = 40;

/// `docs FILE… [--results FILE] [--check]`: regenerates each document's marked tables
/// ([`crate::docs`]) from its results file; writes a document (atomically, keeping its
/// permissions) only when it changes. With `--check` writes nothing, prints each drifted
/// marker (`FILE:LINE`) with a short unified diff, and returns 1 when any drifted.
///
/// Errors: [`Error::Input`] (exit 2) naming the document, its line and the key for a bad
/// marker or a selection holding no cell, a document that cannot be read, or a results file
/// that cannot be read ([`json::read`]) — then nothing is written; [`Error::Output`] (exit 3)
/// when a document cannot be rewritten (the documents before it have been).
fn cmd_docs(a: &DocsArgs) -> Result<i32> {
    let mut loaded: std::collections::BTreeMap<std::path::PathBuf, Results> = Default::default();
    let mut drifted = 0usize;
    let mut writes = Vec::new();
    for file in &a.files {
        let text =
            std::fs::read_to_string(file).map_err(|e| Error::input(file, format!("cannot read the document: {e}")))?;
        let at = |line: usize, message: String| Error::Input { path: file.clone(), line, column: 0, message };
        let markers = crate::docs::parse(&text).map_err(|e| at(e.line, e.message))?;
        if markers.is_empty() {
            eprintln!("{}: no {} markers; left alone", file.display(), crate::docs::OPEN.trim_start_matches("<!-- "));
            continue;
        }
        let mut blocks = Vec::new();
        for m in &markers {
            let source = match &m.selector.results {
                Some(p) => file.parent().unwrap_or(Path::new("")).join(p),
                None => a.results.clone(),
            };
            if !loaded.contains_key(&source) {
                let r = json::read(&source).map_err(|e| at(m.line, format!("results file of this marker: {e}")))?;
                loaded.insert(source.clone(), r);
            }
            let tables = crate::docs::render(&loaded[&source], &m.selector).map_err(|e| at(m.line, e))?;
            blocks.push((m, source, crate::docs::block(&tables, m.eol)));
        }
        let stale: Vec<_> = blocks.iter().filter(|(m, _, new)| text[m.content.clone()] != **new).collect();
        let name = file.display();
        if stale.is_empty() {
            emit(&format!("{name}: {} table marker(s) up to date\n", markers.len()));
            continue;
        }
        drifted += 1;
        if a.check {
            let mut out = String::new();
            for (m, source, new) in &stale {
                // the document up to the marker's end against the same with the new tables: the
                // hunks then carry the document's own line numbers and context
                let old = &text[..m.content.end];
                let new = format!("{}{new}", &text[..m.content.start]);
                let diff = similar::TextDiff::from_lines(old, new.as_str());
                let unified = diff
                    .unified_diff()
                    .context_radius(1)
                    .header(&format!("{name} (in the document)"), &format!("{name} (from {})", source.display()))
                    .to_string();
                let lines: Vec<&str> = unified.lines().collect();
                out += &format!("drifted: {name}:{} {}\n", m.line, m.open);
                for l in lines.iter().take(DOCS_DIFF_LINES) {
                    out += &format!("{}\n", table::escape_controls(l));
                }
                if lines.len() > DOCS_DIFF_LINES {
                    out += &format!("… {} more diff lines\n", lines.len() - DOCS_DIFF_LINES);
                }
            }
            emit(&out);
        } else {
            let spliced: Vec<_> = blocks.iter().map(|(m, _, new)| (m.content.clone(), new.clone())).collect();
            let said = format!("{name}: rewrote {} of {} table marker(s)\n", stale.len(), markers.len());
            writes.push((file, crate::docs::splice(&text, &spliced), said));
        }
    }
    // every document is rendered before any is written: a bad marker anywhere writes nothing
    for (file, text, said) in writes {
        crate::outdir::replace_file(file, &text)?;
        emit(&said);
    }
    if a.check && drifted > 0 {
        let results = if a.results == Path::new(crate::docs::DEFAULT_RESULTS) {
            String::new()
        } else {
            format!(" --results {}", a.results.display())
        };
        let files: Vec<String> = a.files.iter().map(|f| f.display().to_string()).collect();
        emit(&format!(
            "{drifted} document(s) drifted from their results; regenerate with `conformance docs{results} {}`\n",
            files.join(" ")
        ));
        return Ok(exit_code::DIFFERENCES);
    }
    Ok(exit_code::OK)
}

//! `conformance run`: discover, measure every cell, race the pairs, write and print the results.

use std::io::Write;
use std::time::Instant;

use super::against::race_against;
use super::{give_up, locate_versions, open_out, progress_bar, refuse_earlier_results, PARTIAL_EVERY};
use crate::cells::Planned;
use crate::cli::RunArgs;
use crate::engine;
use crate::error::{Error, Result};
use crate::exit_code;
use crate::matrix::Variant;
use crate::options::Amplify;
use crate::outdir::OutDir;
use crate::plan::{cleanup_runtimes, ready_runtimes, Paths, RunPlan};
use crate::report::model::{Cell, Finding, Phase, PhaseTime, Results, Scenario, SCHEMA};
use crate::report::{json, markdown, table};
use crate::runtime::{discover, Requested, Runtime, Status};
use crate::status::{amplify_line, emit, status_line};

pub(super) fn cmd_run(a: &RunArgs, paths: &Paths) -> Result<i32> {
    if let Some(list) = &a.fs {
        return super::run_fs::cmd_run_fs(a, list, paths);
    }
    measure_run(a, paths, true).map(|(code, _)| code)
}

/// The steps of a run as they end ([`crate::report::model::RunInfo::phases`]).
struct Laps {
    /// When the run began.
    started: Instant,
    /// When the step under way began.
    since: Instant,
    /// The steps that ended, in order.
    phases: Vec<PhaseTime>,
}

impl Laps {
    fn new(started: Instant) -> Self {
        Laps { started, since: started, phases: Vec::new() }
    }

    /// Ends the step under way as [`Laps::lap`] does and writes `results` so far to `outdir`
    /// with the steps and the run's duration up to now, so that a crash keeps them. Errors:
    /// `results.json` could not be written.
    fn checkpoint(
        &mut self,
        phase: Phase,
        runtime: Option<&str>,
        results: &mut crate::report::model::Results,
        outdir: &crate::outdir::OutDir,
    ) -> Result<()> {
        self.lap(phase, runtime);
        results.run_info.phases.clone_from(&self.phases);
        results.run_info.duration_s = self.started.elapsed().as_secs_f64();
        outdir.write("results.json", &json::render(results))
    }

    /// Ends the step under way as `phase` (of `runtime`, for a turn) and begins the next.
    fn lap(&mut self, phase: Phase, runtime: Option<&str>) {
        let now = Instant::now();
        let seconds = now.duration_since(self.since).as_secs_f64();
        self.phases.push(PhaseTime { phase, runtime: runtime.map(str::to_owned), seconds });
        self.since = now;
    }
}

/// The page `run` writes beside `summary.md` (`report -f html` of its results).
pub(super) const REPORT_HTML: &str = "report.html";

/// `run`: measures what `a` selects and writes `results.json`, `summary.md` and `report.html` to its output
/// folder. With `show`, prints the tables (or the JSON) on stdout as `run` does; without,
/// stdout is left alone (for `diff`) and the closing line goes to stderr. Returns the exit
/// code and the results when the run was completed (not for `--dry-run` or an interrupt).
///
/// Errors: see [`RunPlan::new`], [`Requested::locate_versions`]; [`Error::Output`] for
/// `--out`, [`Error::RequiredMissing`], [`Error::NoRuntime`], [`Error::ScratchBroken`].
pub(super) fn measure_run(a: &RunArgs, paths: &Paths, show: bool) -> Result<(i32, Option<Results>)> {
    let mut laps = Laps::new(Instant::now());
    let mut plan = RunPlan::new(a, paths)?;
    // without --runtime: what is on PATH and every version the user installed
    if plan.requested == Requested::default() {
        plan.requested.add_installed(&paths.store());
    }
    // NAME@VERSION items: found in the cache or installed now, before anything is made
    locate_versions(&mut plan.requested, paths, "--runtime")?;
    if crate::interrupt::requested() {
        eprintln!("interrupted before measuring: nothing measured, nothing written");
        return Ok((exit_code::INTERRUPTED, None));
    }
    // a dry run writes nothing, so it takes no output folder
    let mut outdir = if plan.dry_run { None } else { Some(open_out(&plan.out)?) };
    // after the lock: a folder another run is writing to is named as such
    let refused = outdir.as_ref().map_or(Ok(()), |_| {
        refuse_earlier_results(&plan.out, a.force, "--out")
            .and_then(|()| crate::outdir::refuse_baseline_in(a.expect.as_deref(), &plan.out))
    });
    if let Err(e) = refused {
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
    // said first, so that a user who stops the run knows where its partial results are
    if outdir.is_some() {
        say(&format!("results go to {}", table::escape_controls(&plan.out.display().to_string())));
    }
    let mut found = discover(&plan.requested).runtimes;
    let selected: Vec<&Variant> = plan.variants.iter().collect();
    for w in ready_runtimes(&mut found, &ctx, &plan.options, &selected) {
        eprintln!("{w}");
    }
    // no runtime's background services may run while another is measured (an idle Wine server
    // and its services slowed Bun's races by 15-20% here): each is started again when its turn
    // comes. (Idle probes, blocked on their input, may wait: see engine::RuntimePools.)
    cleanup_runtimes(&found, &ctx);
    laps.lap(Phase::Discover, None);
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
        if plan.estimate_from.is_none() {
            plan.estimate_from = newest_run(&paths.home.join(crate::plan::RUNS_DIR));
        }
        let d = plan.dry_run_report(&found);
        emit(&if plan.json {
            serde_json::to_string_pretty(&d).expect("serialises") + "\n"
        } else {
            crate::plan::dry_run_text(&d)
        });
        return Ok((exit_code::OK, None));
    };

    let mut outdir = outdir;
    if let Err(e) = install_libraries(&mut plan.options, plan.quiet, paths) {
        cleanup_runtimes(&found, &ctx);
        outdir.abandon();
        return Err(e);
    }
    laps.lap(Phase::Libraries, None);
    let cells = plan.cells(&found);
    // --thorough (no adaptive trials) may take long: its bar says about how long is left
    let bar = progress_bar(cells.len(), plan.quiet, !plan.options.adaptive);
    bar.say(crate::plan::progress_message(&cells, 0));
    let mut results =
        Results { schema: SCHEMA, run_info: plan.run_info(&found), cells: Vec::new(), against: Vec::new() };
    let mut stdout = std::io::stdout().lock();
    let mut scratch_failed = None;
    // the second lane of the hand-offs (see handoff_lanes); without it they run one at a time
    let mut lane_scratch = scratch.lane(1).ok();
    let mut measurement = engine::Measurement::new(&plan.options, &mut scratch, &plan.nonce);
    if plan.against != crate::against::AgainstScope::None {
        measurement.keep_for_pairs();
    }
    if lane_scratch.is_some() {
        measurement.defer_handoffs();
    }
    let mut deferred = Vec::new();
    let measurable = plan.measurable(&found);
    let planned_of: Vec<_> = measurable.iter().map(|rt| plan.planned(rt)).collect();
    // every runtime's session probes start now, all at once, and wait idle for their turn:
    // no start-up falls between two runtimes' measurements
    let mut pools: Vec<_> = measurable
        .iter()
        .zip(&planned_of)
        .map(|(rt, p)| engine::RuntimePools::new(rt, p, &measurement, &ctx))
        .collect();
    let amplify = plan.options.amplify.clone();
    let up_front = pools.iter().map(|p| p.probes(&amplify)).sum::<usize>() <= MAX_PROBES_UP_FRONT;
    if up_front && !crate::interrupt::requested() {
        bar.say(format!("starting the probes of {} runtime(s)", measurable.len()));
        let mut all: Vec<_> = measurable.iter().copied().zip(pools.iter_mut()).collect();
        engine::start_runtimes(&mut all, &amplify);
        bar.say(crate::plan::progress_message(&cells, 0));
        laps.lap(Phase::StartProbes, None);
    }
    let mut turns = measurable.into_iter().zip(&planned_of).zip(pools);
    for ((rt, planned), mut pools) in turns.by_ref() {
        if crate::interrupt::requested() || scratch_failed.is_some() {
            pools.shutdown();
            break;
        }
        if !up_front {
            engine::start_runtimes(&mut [(rt, &mut pools)], &amplify);
        }
        // partial results on disk every few seconds, so that even a SIGKILLed run keeps what
        // it measured (each write is atomic)
        let partial = outdir.partial(results.clone(), PARTIAL_EVERY);
        let cell = |f: Finding| cell_of(rt, planned, f);
        // the hello check's background processes were stopped (see below): start them again
        if let Err(why) = rt.adapter().resume(rt, &ctx) {
            bar.suspend(|| eprintln!("warn     {}: could not start again after the hello check: {why}", rt.label));
        }
        let m = engine::measure_with(rt, planned, pools, &mut measurement, &ctx, &mut |f| {
            // the cells are measured in the plan's order, some conditional races left out
            // (`--races auto`): the bar goes to this cell's place, and names the next one
            let id = Cell::id_of(&rt.label, &f.variant, f.scenario, f.target, f.source, f.contenders);
            let done = cells.iter().position(|c| c.id == id).map_or(bar.position() + 1, |i| i as u64 + 1);
            bar.set_position(done);
            bar.say(crate::plan::progress_message(&cells, done as usize));
            partial.send(&cell(f.clone()));
        });
        rt.adapter().cleanup(rt, &ctx);
        partial.finish()?;
        scratch_failed = m.scratch_failed;
        deferred.extend(m.handoffs.map(|h| (rt, planned.as_slice(), h)));
        results.cells.extend(m.findings.into_iter().map(cell));
        results.run_info.controls.extend(m.controls);
        if show && !plan.json {
            bar.suspend(|| {
                if !results.rows(&rt.label).is_empty() {
                    let _ = writeln!(stdout, "\n{}", table::escape_controls(&rt.label));
                    let _ = writeln!(stdout, "{}", table::render_terminal(&results, &rt.label));
                    for l in table::race_lines(&results, &rt.label) {
                        let _ = writeln!(stdout, "{}", crate::report::style::current().note(&l));
                    }
                }
                let _ = stdout.flush();
            });
        }
        // keep partial results on disk after each runtime, so a crash keeps the data
        laps.checkpoint(Phase::Turn, Some(&rt.label), &mut results, &outdir)?;
    }
    // the probes of runtimes the run did not reach (interrupted, the scratch folder failed)
    engine::RuntimePools::shutdown_all(turns.map(|(_, pools)| pools));
    if !deferred.is_empty() {
        if crate::interrupt::requested() || scratch_failed.is_some() {
            deferred.into_iter().for_each(|(_, _, h)| h.shutdown());
        } else {
            // a run of one runtime deals its hand-off recipes to two work items, so that the
            // second lane is not left idle
            if lane_scratch.is_some() && deferred.len() < SPLIT_BELOW {
                deferred = deferred
                    .into_iter()
                    .flat_map(|(rt, p, h)| h.split(rt, &measurement, &ctx).into_iter().map(move |h| (rt, p, h)))
                    .collect();
            }
            // the longest first, so that no lane is left working alone at the end: a shell's
            // recipes start a process for each worker's every step (a quiet default run here:
            // bash 122 s and dash 78 s of the 501 s of hand-off cells, every other runtime
            // 14-44 s; taken last, bash kept one lane busy for 20 s after the other was done)
            deferred.sort_by_key(|(rt, _, _)| !rt.adapter().mode().starts_a_process_per_step());
            let mut lane = lane_scratch.as_mut().map(|s| measurement.lane(s, LANE_FIRST_ID));
            // partial results on disk every few seconds, as during the runtimes' turns
            let partial = outdir.partial(results.clone(), PARTIAL_EVERY);
            // the runtimes' turns passed over their deferred hand-offs' places in the cell list:
            // the bar goes to a hand-off's place where that is further on, and names it
            let on_finding = |rt: &Runtime, planned: &[Planned<'_>], f: &Finding| {
                let id = Cell::id_of(&rt.label, &f.variant, f.scenario, f.target, f.source, f.contenders);
                if let Some(i) = cells.iter().position(|c| c.id == id) {
                    bar.set_position(bar.position().max(i as u64 + 1));
                }
                bar.say(format!("hand-offs: {} · {}", table::escape_controls(&rt.label), f.variant));
                partial.send(&cell_of(rt, planned, f.clone()));
            };
            let done = handoff_lanes(deferred, &mut measurement, lane.as_mut(), &on_finding);
            partial.finish()?;
            for (rt, planned, h, m) in done {
                measurement.retire_handoffs(h);
                scratch_failed = scratch_failed.or(m.scratch_failed);
                results.cells.extend(m.findings.into_iter().map(|f| cell_of(rt, planned, f)));
            }
            // each runtime's cells together, in the runtimes' order, the hand-offs last and in
            // the plan's order (split hand-offs come back in the order their halves finished)
            let order: Vec<&str> = plan.measurable(&found).iter().map(|rt| rt.label.as_str()).collect();
            let place: std::collections::HashMap<&str, usize> =
                cells.iter().enumerate().map(|(i, c)| (c.id.as_str(), i)).collect();
            results.cells.sort_by_cached_key(|c| {
                let handoff = c.scenario.is_handoff().then(|| place.get(c.id.as_str()).copied().unwrap_or(usize::MAX));
                (order.iter().position(|l| *l == c.runtime), handoff)
            });
            laps.checkpoint(Phase::Handoffs, None, &mut results, &outdir)?;
        }
    }
    if plan.against != crate::against::AgainstScope::None && scratch_failed.is_none() {
        race_against(&plan, &found, &mut results, &mut measurement, &ctx, &bar);
        laps.checkpoint(Phase::Pairs, None, &mut results, &outdir)?;
    }
    // probes kept for pairs that did not run (interrupted, the scratch folder failed)
    measurement.take_kept().shutdown();
    bar.finish_and_clear();
    for scenario in Scenario::HANDOFFS.into_iter().filter(|_| show && !plan.json) {
        if let Some(t) = table::render_scenario(&results, scenario, crate::report::style::current()) {
            let _ = writeln!(stdout, "\n{} (hand-off: counted from the files)\n{t}", scenario.as_str());
        }
    }
    if show && !plan.json {
        let _ = write!(stdout, "{}", table::against_block(&results, crate::report::style::current()));
        let answers = crate::report::answers::render_styled(&results, crate::report::style::current());
        if !answers.is_empty() {
            let _ = write!(stdout, "\n{answers}");
        }
    }
    results.run_info.duration_s = laps.started.elapsed().as_secs_f64();
    results.run_info.interrupted = crate::interrupt::requested();
    // the reports show neither the steps nor their times: rendered first, they are timed too
    let summary = markdown::render(&results);
    let page = crate::report::html::render_with(&results, &super::again(&results));
    laps.lap(Phase::Report, None);
    results.run_info.phases = laps.phases;
    let results_json = json::render(&results);
    outdir.write("results.json", &results_json)?;
    outdir.write("summary.md", &summary)?;
    outdir.write(REPORT_HTML, &page)?;
    let shown = |name: &str| table::escape_controls(&plan.out.join(name).display().to_string()).into_owned();
    let done = format!(
        "{} cells in {:.1} s; wrote {}, {} and {}",
        results.cells.len(),
        results.run_info.duration_s,
        shown("results.json"),
        shown("summary.md"),
        shown(REPORT_HTML)
    );
    if !show {
        say(&done);
    } else if plan.json {
        // stdout holds the results alone; the rest goes to stderr
        emit(&results_json);
        say(&done);
    } else {
        let _ = writeln!(stdout, "\n{}", crate::report::style::current().note(&done));
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
    let code = expect_baseline(&plan, &results, &mut stdout);
    Ok((code, Some(results)))
}

/// `--expect`: compares `results` with the baseline `plan` holds, prints the comparison (on
/// stderr with `--json`, whose stdout is the results alone), and returns
/// [`exit_code::DIFFERENCES`] when they differ, [`exit_code::OK`] otherwise or without a
/// baseline.
pub(super) fn expect_baseline(plan: &RunPlan, results: &Results, stdout: &mut impl Write) -> i32 {
    let Some(base) = &plan.baseline else { return exit_code::OK };
    let diff = crate::compare::compare_ignoring(base, results, &plan.ignore);
    if plan.json {
        eprint!("{}", diff.render());
    } else {
        let _ = write!(stdout, "{}", diff.render());
    }
    if diff.differs() {
        exit_code::DIFFERENCES
    } else {
        exit_code::OK
    }
}

/// The most probes a run starts up front, all runtimes' at once (each holds three descriptors
/// and two reader threads in the harness, idle until its runtime's turn: the default run starts
/// about 60); a run that would start more (many contenders, `-k`) starts each runtime's in its
/// turn, within the usual limit of 1,024 open files.
const MAX_PROBES_UP_FRONT: usize = 128;

/// Below this many runtimes with deferred hand-offs, each one's are split in two
/// ([`engine::Handoffs::split`]): a run of one runtime would leave the second lane idle. With
/// two or more, both lanes have work already: splitting them too only started more probes
/// (`-r node,bun,deno`: 79.5 s unsplit, 84.0 s split, one run each).
const SPLIT_BELOW: usize = 2;

/// The first attempt id of the hand-offs' second lane: far above any the first lane reaches,
/// so that no two attempts of a run share an id.
const LANE_FIRST_ID: u64 = 1 << 40;

/// The cell of finding `f` of runtime `rt`, whose planned cells are `planned`: the report layer
/// names it by the runtime's label and the variant's (or recipe's) family and call.
fn cell_of(rt: &Runtime, planned: &[Planned<'_>], f: Finding) -> Cell {
    let p = planned.iter().find(|p| p.id() == f.variant && p.source() == f.source);
    let p = p.expect("a finding of a planned cell");
    let recipe;
    let v = match p.variant() {
        Some(v) => v,
        None => {
            recipe = p.recipe().map(crate::handoff::Recipe::as_variant).expect("a recipe");
            &recipe
        }
    };
    Cell::from_finding((&rt.label, rt.name, &rt.version), v, f)
}

/// A runtime's deferred hand-offs ([`engine::Handoffs`]) with its planned cells, and what
/// measuring them found.
type LaneWork<'r, 'p> = (&'r Runtime, &'r [Planned<'p>], engine::Handoffs);

/// Measures the deferred hand-offs of every runtime in `work` two runtimes at a time, one per
/// core: `main` (the run's measurement) in one lane and `lane` (a measurement in a scratch
/// folder of its own, [`crate::exec::scratch::Scratch::lane`]) in the other, each taking the
/// next runtime when it is done (one lane when `lane` is `None`). Hand-offs share no name
/// with one another, and the races are over by then: they keep the machine to themselves.
/// Calls `on_finding` after each finding (from either lane). Once a lane's scratch folder stops
/// working ([`engine::Measured::scratch_failed`]) no lane takes another runtime. Returns, per
/// runtime, its work back (the pool, for the run's measurement to take) and what it found
/// (nothing for a runtime no lane took), in no set order.
fn handoff_lanes<'r, 'p, 'm>(
    work: Vec<LaneWork<'r, 'p>>,
    main: &mut engine::Measurement<'m>,
    lane: Option<&mut engine::Measurement<'m>>,
    on_finding: &(dyn Fn(&Runtime, &[Planned<'p>], &Finding) + Sync),
) -> Vec<(&'r Runtime, &'r [Planned<'p>], engine::Handoffs, engine::Measured)> {
    let queue = std::sync::Mutex::new(work.into_iter());
    // set when a lane's scratch folder stopped working: the other lane takes no more runtimes
    let failed = std::sync::atomic::AtomicBool::new(false);
    let lanes: Vec<&mut engine::Measurement<'m>> = std::iter::once(main).chain(lane).collect();
    let done = std::thread::scope(|s| {
        let handles: Vec<_> = lanes
            .into_iter()
            .map(|m| {
                let (queue, failed) = (&queue, &failed);
                s.spawn(move || {
                    let mut done = Vec::new();
                    while !failed.load(std::sync::atomic::Ordering::SeqCst) {
                        let next = queue.lock().unwrap_or_else(std::sync::PoisonError::into_inner).next();
                        let Some((rt, planned, mut h)) = next else { break };
                        let measured = h.measure(rt, m, &mut |f| on_finding(rt, planned, f));
                        if measured.scratch_failed.is_some() {
                            failed.store(true, std::sync::atomic::Ordering::SeqCst);
                        }
                        done.push((rt, planned, h, measured));
                    }
                    done
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("a hand-off lane panicked")).collect::<Vec<_>>()
    });
    // the runtimes no lane took (a scratch folder failed): their pools go back unmeasured
    let left = queue.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    done.into_iter().chain(left.map(|(rt, planned, h)| (rt, planned, h, engine::Measured::default()))).collect()
}

/// Installs the libraries the selected recipes race (`library` in the recipes' data, or the
/// version `-r NAME@VERSION` chose) into the cache, once, before anything is measured; a
/// library that cannot be had is said (its cells say why) and the run goes on.
///
/// Errors: [`Error::Usage`] naming `--runtime` when a version `-r` chose is not published (as
/// for a runtime's version): nothing is measured.
fn install_libraries(options: &mut crate::options::Options, quiet: bool, paths: &Paths) -> Result<()> {
    use crate::runtime::library::{ensure, LibraryError};
    for id in options.recipes.clone() {
        let Some(r) = crate::handoff::Recipe::find(&id) else { continue };
        let (Some(pinned), true) = (&r.library, options.runs(r.scenario)) else { continue };
        let chosen = options.library_versions.iter().find(|l| l.name == pinned.name);
        let spec = chosen.unwrap_or(pinned).clone();
        let dir = match ensure(&spec, &paths.cache, paths.offline) {
            Ok(dir) => Ok(dir.display().to_string()),
            Err(LibraryError::NotPublished(message)) if chosen.is_some() => {
                return Err(Error::Usage { flag: "--runtime".into(), message })
            }
            Err(e) => Err(e.to_string()),
        };
        match &dir {
            Ok(dir) if !quiet => eprintln!("library  {:<22} {}", spec.to_string(), table::escape_controls(dir)),
            Ok(_) => {}
            Err(why) => eprintln!("skip     {id}: {}", table::escape_controls(why)),
        }
        options.libraries.insert(id, crate::options::LibraryUse { spec, dir });
    }
    Ok(())
}

/// The newest `results.json` one folder below `runs` (the default output folders,
/// `conformance-runs/<timestamp>/`), by modification time, read; `None` when there is none or
/// none reads (a `--dry-run` then says the time is unknown).
fn newest_run(runs: &std::path::Path) -> Option<(std::path::PathBuf, Results)> {
    let mut found: Vec<(std::time::SystemTime, std::path::PathBuf)> = std::fs::read_dir(runs)
        .ok()?
        .flatten()
        .map(|e| e.path().join("results.json"))
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .collect();
    found.sort();
    found.into_iter().rev().find_map(|(_, p)| json::read(&p).ok().map(|r| (p, r)))
}

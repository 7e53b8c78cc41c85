//! The commands: validated plans built from flags, then measurement and output.
//!
//! Everything here returns an exit code or an [`Error`]; `main` only maps them.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use globset::{Glob, GlobSetBuilder};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::cli::{
    AmplifyArg, Cli, Command, CompareArgs, Format, PowerArgs, RaceArgs, ReportArgs, RunArgs, RuntimesArgs, ScenarioArg,
    VariantsArgs,
};
use crate::engine::{self, Amplify, Options};
use crate::error::{Error, Result};
use crate::exec::scratch::{Scratch, TargetState};
use crate::exit_code;
use crate::matrix::{load_dir, Variant};
use crate::outdir::OutDir;
use crate::report::model::{AmplificationInfo, Results, RunInfo, RuntimeInfo, SCHEMA};
use crate::report::{json, markdown, table};
use crate::runtime::{discover, ProbeContext, Requested, Runtime, Status};

/// The project folder baked in at build time; probes/ and matrices/ are found below it
/// unless `--probes`/`--matrices` say otherwise.
const HOME: &str = env!("CARGO_MANIFEST_DIR");

/// Runs the parsed command line; returns the exit code (see [`crate::exit_code`]).
///
/// Errors: see [`Error`]; each maps to its own exit code.
pub fn run(cli: Cli) -> Result<i32> {
    crate::interrupt::install();
    let home = PathBuf::from(HOME);
    let probes = cli.probes.clone().unwrap_or_else(|| home.join("probes"));
    let matrices = cli.matrices.clone().unwrap_or_else(|| home.join("matrices"));
    match cli.command {
        Command::Run(a) => cmd_run(&a, &home, &probes, &matrices),
        Command::Race(a) => cmd_race(&a, &probes, &matrices),
        Command::Runtimes(a) => cmd_runtimes(&a),
        Command::Variants(a) => cmd_variants(&a, &matrices),
        Command::Compare(a) => cmd_compare(&a),
        Command::Report(a) => cmd_report(&a),
    }
}

/// Keeps the variants whose id matches any of the glob patterns (comma-separated or repeated).
/// No `--variant` at all keeps everything.
///
/// Errors: [`Error::Usage`] naming `--variant` for an empty pattern (`-v ''`, `-v 'a,,b'`), an
/// invalid pattern, or one that matches nothing.
pub fn select_variants(all: Vec<Variant>, patterns: &[String]) -> Result<Vec<Variant>> {
    if patterns.is_empty() {
        return Ok(all);
    }
    let pats: Vec<&str> = patterns.iter().flat_map(|p| p.split(',')).map(str::trim).collect();
    if let Some(given) = pats.iter().position(|p| p.is_empty()).map(|_| patterns.join(",")) {
        return Err(Error::Usage {
            flag: "--variant".into(),
            message: format!("'{}' has an empty pattern (use '*' for every variant)", given.escape_debug()),
        });
    }
    let mut b = GlobSetBuilder::new();
    for p in &pats {
        let g = Glob::new(p).map_err(|e| Error::Usage {
            flag: "--variant".into(),
            message: format!("'{}' is not a valid glob: {e}", p.escape_debug()),
        })?;
        b.add(g);
        let single = Glob::new(p).expect("checked").compile_matcher();
        if !all.iter().any(|v| single.is_match(&v.id)) {
            return Err(Error::Usage {
                flag: "--variant".into(),
                message: format!("'{}' matches no variant (see `conformance variants`)", p.escape_debug()),
            });
        }
    }
    let set = b.build().map_err(|e| Error::Usage { flag: "--variant".into(), message: e.to_string() })?;
    Ok(all.into_iter().filter(|v| set.is_match(&v.id)).collect())
}

fn parse_targets(s: &str) -> Result<Vec<TargetState>> {
    let mut out = Vec::new();
    for t in s.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let st = TargetState::parse(t).ok_or_else(|| Error::Usage {
            flag: "--target".into(),
            message: format!("unknown target state '{t}' (known: absent, file, empty-dir, dir)"),
        })?;
        if !out.contains(&st) {
            out.push(st);
        }
    }
    if out.is_empty() {
        return Err(Error::Usage { flag: "--target".into(), message: "no target state given".into() });
    }
    Ok(out)
}

fn runtime_info(rt: &Runtime) -> RuntimeInfo {
    let (status, reason) = match &rt.status {
        Status::Found => ("found", None),
        Status::NotFound(r) => ("not-found", Some(r.clone())),
        Status::Broken(r) => ("broken", Some(r.clone())),
    };
    RuntimeInfo {
        name: rt.name.to_string(),
        label: rt.label.clone(),
        version: rt.version.clone(),
        path: rt.path.as_ref().map(|p| p.display().to_string()),
        status: status.into(),
        reason,
        families: rt.families.iter().map(|s| s.to_string()).collect(),
    }
}

/// A runtime's discovery line, control characters escaped (a `--version` or a probe's first
/// line must not drive the terminal).
fn status_line(rt: &Runtime) -> String {
    let path = rt.path.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
    let line = match &rt.status {
        Status::Found => format!("found    {:<22} {}", rt.label, path),
        Status::NotFound(r) => format!("skip     {:<22} not found: {r}", rt.name),
        Status::Broken(r) => format!("skip     {:<22} broken: {r}", rt.label),
    };
    table::escape_controls(&line).into_owned()
}

fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("CONFORMANCE_CACHE_DIR") {
        return PathBuf::from(d);
    }
    dirs::cache_dir().unwrap_or_else(std::env::temp_dir).join("conformance")
}

/// Creates the scratch folder (under `fs_root`, through `segment` if given) and the probe
/// context. Errors: [`Error::Scratch`].
/// Before anything runs, the deepest paths the harness will make below the scratch folder are
/// made once ([`crate::exec::health::self_test`]), so a root or segment too long for the file
/// system fails here with exit code 3 instead of turning cells into harness errors.
fn workspace(fs_root: &Path, segment: Option<&str>, probes: &Path) -> Result<(Scratch, ProbeContext)> {
    let scratch = Scratch::new(fs_root, segment)?;
    crate::interrupt::remove_on_abort(scratch.top().to_path_buf());
    // tokens are `<nonce>-second-<id>` or `<nonce>-t<folder>-k<i>`: 40 bytes is ample
    crate::exec::health::self_test(scratch.root(), 40)
        .map_err(|why| Error::ScratchBroken { path: fs_root.to_path_buf(), why })?;
    let ctx = ProbeContext {
        probes_dir: probes.to_path_buf(),
        cache_dir: cache_dir(),
        scratch_top: scratch.top().to_path_buf(),
    };
    Ok((scratch, ctx))
}

/// Builds or checks each found runtime's probe, then starts each session-mode probe once and
/// waits for its `hello`: a runtime counts as found only when its probe speaks the protocol
/// (a `--runtime node=/bin/true` is `broken`, not measured as all-crashed). A runtime whose
/// preparation fails becomes `broken` with the reason.
fn prepare_all(found: &mut [Runtime], ctx: &ProbeContext) {
    use crate::exec::contender::{Contender, Mode, Timeouts};
    for rt in found.iter_mut().filter(|r| r.status == Status::Found) {
        if let Err(why) = rt.adapter().prepare(rt, ctx) {
            rt.status = Status::Broken(why);
            continue;
        }
        if rt.adapter().mode() != Mode::Session {
            continue;
        }
        let t = Timeouts {
            startup: Duration::from_secs(60),
            attempt: Duration::from_secs(10),
            prompt_after: Duration::from_secs(3),
        };
        for family in rt.families.clone() {
            let launch = rt.adapter().launch(rt, family, ctx);
            let mut c = Contender::new(Mode::Session, launch, ctx.scratch_top.clone(), t);
            if let Err(a) = c.start() {
                let why = a.evidence.unwrap_or_default();
                rt.status = Status::Broken(format!("its {family} probe did not start: {why}"));
                break;
            }
        }
    }
}

/// Undoes every found runtime's preparation (a persistent Wine server) on an early return.
fn cleanup_all(found: &[Runtime], ctx: &ProbeContext) {
    for rt in found.iter().filter(|r| r.status == Status::Found) {
        rt.adapter().cleanup(rt, ctx);
    }
}

/// How often `run` rewrites the partial `results.json` while a runtime is measured.
const PARTIAL_EVERY: Duration = Duration::from_secs(2);

/// Checks that `--probes` names a folder. Errors: [`Error::Usage`].
fn check_probes(probes: &Path) -> Result<()> {
    if probes.join("PROTOCOL.md").is_file() {
        Ok(())
    } else {
        Err(Error::Usage {
            flag: "--probes".into(),
            message: format!("{} is not a probes folder (no PROTOCOL.md in it)", probes.display()),
        })
    }
}

/// Set once stdout is a closed pipe: later output is dropped.
static STDOUT_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Writes `text` to stdout. A closed pipe (`conformance variants | head -1`) is not an error
/// of the run, as in ripgrep: the rest of the output is dropped and the command ends
/// normally, so that its scratch folder and probes are still cleaned up.
fn emit(text: &str) {
    use std::io::Write as _;
    use std::sync::atomic::Ordering;
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            STDOUT_CLOSED.store(true, Ordering::Relaxed);
        }
    }
}

/// The race modes `power` asks for: whether natural races run, and the amplifier (found and
/// checked once per run, only when races run and amplification is wanted).
fn amplify_plan(power: &PowerArgs, races: bool) -> (bool, Amplify) {
    let natural = power.amplify != AmplifyArg::On;
    if !races || power.amplify == AmplifyArg::Off {
        return (natural, Amplify::Off);
    }
    match crate::exec::amplify::Amplifier::detect(power.amplify_delay_us) {
        Ok(a) => (natural, Amplify::On(a)),
        Err(why) => (natural, Amplify::Unavailable(why)),
    }
}

/// The race settings of `run_info`: amplification, offsets, adaptive trials. Errors: as
/// [`PowerArgs::offsets`] and [`PowerArgs::max_rate`] (already checked by the callers).
fn amplification_info(power: &PowerArgs, amp: &Amplify) -> Result<AmplificationInfo> {
    let max_rate = power.max_rate()?;
    Ok(AmplificationInfo {
        requested: power.amplify.as_str().to_string(),
        delay_us: power.amplify_delay_us,
        offsets_us: power.offsets()?,
        max_rate,
        max_trials: max_rate.map(|_| power.max_trials as usize),
        syscalls: crate::exec::amplify::SYSCALLS.iter().map(|s| s.to_string()).collect(),
        tool: match amp {
            Amplify::On(a) => Some(a.version().to_string()),
            _ => None,
        },
        unavailable: match amp {
            Amplify::Unavailable(why) => Some(why.clone()),
            _ => None,
        },
    })
}

/// `--max-trials` must not be below `--trials` (it would be ignored). Errors:
/// [`Error::Usage`] naming `--max-trials`.
fn check_max_trials(power: &PowerArgs, trials: u32) -> Result<()> {
    if power.max_rate.is_some() && power.max_trials < trials {
        return Err(Error::Usage {
            flag: "--max-trials".into(),
            message: format!("{} is below --trials {trials}; races run at least --trials", power.max_trials),
        });
    }
    Ok(())
}

/// The status line for amplification; `None` when it is off by request.
fn amplify_line(amp: &Amplify) -> Option<String> {
    match amp {
        Amplify::Off => None,
        Amplify::On(a) => Some(format!(
            "amplify  {} µs after each file-system system call ({}, {})",
            a.delay_us(),
            a.version(),
            a.strace().display()
        )),
        Amplify::Unavailable(why) => Some(format!(
            "skip     amplified races: unavailable ({why}); verdicts rest on natural races and their bounds"
        )),
    }
}

fn cmd_run(a: &RunArgs, home: &Path, probes: &Path, matrices: &Path) -> Result<i32> {
    let started = Instant::now();
    let date = jiff::Timestamp::now();
    // validate everything before any work
    let all = load_dir(matrices)?;
    let variants = select_variants(all.clone(), &a.variant)?;
    let targets = parse_targets(&a.target)?;
    let max_rate = a.power.max_rate()?;
    let offsets = a.power.offsets()?;
    check_max_trials(&a.power, a.trials)?;
    let requested = Requested::parse(&a.runtime)?;
    let required = Requested::parse(&a.require).map_err(|e| match e {
        Error::UnknownRuntime { name, known, .. } => Error::UnknownRuntime { name, flag: "--require".into(), known },
        other => other,
    })?;
    let timeout = check_timeout(a.timeout)?;
    let baseline = a.expect.as_deref().map(json::read).transpose()?;
    check_probes(probes)?;
    let segment = a.scratch.segment()?;
    let out = a.out.clone().unwrap_or_else(|| {
        let stamp = date.strftime("%Y%m%dT%H%M%SZ").to_string();
        home.join("reports").join("runs").join(stamp)
    });
    let mut outdir = OutDir::open(&out)?;
    tempfile::NamedTempFile::new_in(&out).map_err(|source| Error::Output { path: out.clone(), source })?;
    let fs_root = a.scratch.root();
    let (mut scratch, ctx) = match workspace(&fs_root, segment.as_deref(), probes) {
        Ok(w) => w,
        Err(e) => {
            outdir.abandon();
            return Err(e);
        }
    };

    let say = |s: &str| {
        if !a.quiet {
            eprintln!("{s}");
        }
    };
    let races = a.scenario != ScenarioArg::SecondComer;
    let (natural, amplify) = amplify_plan(&a.power, races);
    let mut found = discover(&requested).runtimes;
    prepare_all(&mut found, &ctx);
    if crate::interrupt::requested() {
        cleanup_all(&found, &ctx);
        outdir.abandon();
        eprintln!("interrupted before measuring: nothing measured, nothing written");
        return Ok(exit_code::INTERRUPTED);
    }
    match (&amplify, amplify_line(&amplify)) {
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
    if let Some(names) = &required.names {
        let missing: Vec<String> = names
            .iter()
            .filter(|n| !found.iter().any(|r| r.name == **n && r.status == Status::Found))
            .map(|n| match found.iter().find(|r| r.name == *n) {
                Some(r) => format!("{n} ({})", status_line(r).split_whitespace().skip(2).collect::<Vec<_>>().join(" ")),
                None => format!("{n} (not selected by --runtime)"),
            })
            .collect();
        if !missing.is_empty() {
            cleanup_all(&found, &ctx);
            outdir.abandon();
            return Err(Error::RequiredMissing(missing.join("; ")));
        }
    }
    let measurable: Vec<&Runtime> = found
        .iter()
        .filter(|r| r.status == Status::Found && variants.iter().any(|v| r.families.contains(&v.family.as_str())))
        .collect();
    if measurable.is_empty() {
        let why = if found.iter().any(|r| r.status == Status::Found) {
            "no found runtime runs the selected variants".to_string()
        } else {
            "none of the selected runtimes was found (see the skip lines above)".to_string()
        };
        cleanup_all(&found, &ctx);
        outdir.abandon();
        return Err(Error::NoRuntime(why));
    }

    let opts = Options {
        contenders: a.contenders as usize,
        trials: a.trials as usize,
        oneshot_trials: a.oneshot_trials as usize,
        timeout,
        startup_timeout: timeout.max(Duration::from_secs(30)),
        second_comer: a.scenario != ScenarioArg::Race,
        race: a.scenario != ScenarioArg::SecondComer,
        targets,
        relative: !a.no_relative,
        hold_ms: a.hold_ms,
        max_consecutive_faults: 3,
        natural,
        amplify: amplify.clone(),
        max_rate,
        max_trials: a.power.max_trials as usize,
        offsets: offsets.clone(),
    };
    let controls: Vec<&Variant> = all.iter().filter(|v| v.control).collect();
    let per_variant = if opts.second_comer { opts.targets.len() } else { 0 } + usize::from(opts.race);
    let total: usize = measurable
        .iter()
        .map(|r| {
            let vs = variants.iter().filter(|v| r.families.contains(&v.family.as_str()));
            // a family's control is raced even when it was not selected
            let extra = if opts.race {
                r.families
                    .iter()
                    .filter(|f| {
                        variants.iter().any(|v| v.family == **f)
                            && controls.iter().any(|c| c.family == **f && !variants.iter().any(|v| v.id == c.id))
                    })
                    .count()
            } else {
                0
            };
            vs.count() * per_variant + extra
        })
        .sum();
    let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}").expect("template"),
    );
    if a.quiet {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    let nonce = format!("{:x}", date.as_nanosecond() as u64 & 0xFFFF_FFFF);
    let (os, os_version, kernel, arch) = crate::runinfo::os();
    let mut results = Results {
        schema: SCHEMA,
        run_info: RunInfo {
            harness_version: env!("CARGO_PKG_VERSION").to_string(),
            os,
            os_version,
            kernel,
            arch,
            fs: crate::runinfo::fs_info(&fs_root),
            date: date.to_string(),
            duration_s: 0.0,
            contenders: opts.contenders,
            trials: opts.trials,
            oneshot_trials: opts.oneshot_trials,
            timeout_ms: opts.timeout.as_millis() as u64,
            path_segment: segment,
            runtimes: found.iter().map(runtime_info).collect(),
            amplification: amplification_info(&a.power, &amplify)?,
            controls: Vec::new(),
        },
        cells: Vec::new(),
    };
    let mut stdout = std::io::stdout().lock();
    let mut scratch_failed = None;
    for rt in measurable {
        if crate::interrupt::requested() || scratch_failed.is_some() {
            break;
        }
        let vs: Vec<&Variant> = variants.iter().filter(|v| rt.families.contains(&v.family.as_str())).collect();
        bar.set_message(rt.label.clone());
        // partial results on disk every few seconds, so that even a SIGKILLed run keeps what
        // it measured (each write is atomic)
        let partial = outdir.partial(results.clone(), PARTIAL_EVERY);
        let m = engine::measure(rt, &vs, &controls, &opts, &mut scratch, &ctx, &nonce, &mut |c| {
            bar.set_message(format!("{} {}", rt.label, c.variant));
            bar.inc(1);
            partial.send(c);
        });
        rt.adapter().cleanup(rt, &ctx);
        partial.finish()?;
        scratch_failed = m.scratch_failed;
        results.cells.extend(m.cells);
        results.run_info.controls.extend(m.controls);
        bar.suspend(|| {
            let _ = writeln!(stdout, "\n{}", table::escape_controls(&rt.label));
            let _ = writeln!(stdout, "{}", table::render_terminal(&results, &rt.label));
            for l in table::race_lines(&results, &rt.label) {
                let _ = writeln!(stdout, "{l}");
            }
            let _ = stdout.flush();
        });
        // keep partial results on disk after each runtime, so a crash keeps the data
        results.run_info.duration_s = started.elapsed().as_secs_f64();
        outdir.write("results.json", &json::render(&results))?;
    }
    bar.finish_and_clear();
    results.run_info.duration_s = started.elapsed().as_secs_f64();
    outdir.write("results.json", &json::render(&results))?;
    outdir.write("summary.md", &markdown::render(&results))?;
    let _ = writeln!(
        stdout,
        "\n{} cells in {:.1} s; wrote {} and {}",
        results.cells.len(),
        results.run_info.duration_s,
        out.join("results.json").display(),
        out.join("summary.md").display()
    );
    drop(scratch);
    if let Some(why) = scratch_failed {
        return Err(Error::ScratchBroken {
            path: fs_root,
            why: format!("{why}; measuring stopped, the cells measured before are in {}", out.display()),
        });
    }
    if crate::interrupt::requested() {
        return Ok(exit_code::INTERRUPTED);
    }
    if let Some(base) = baseline {
        let diff = crate::compare::compare(&base, &results);
        let _ = write!(stdout, "{}", diff.render());
        return Ok(if diff.differs() { exit_code::DIFFERENCES } else { exit_code::OK });
    }
    Ok(exit_code::OK)
}

fn check_timeout(t: f64) -> Result<Duration> {
    if t.is_finite() && t > 0.0 && t <= 3600.0 {
        Ok(Duration::from_secs_f64(t))
    } else {
        Err(Error::Usage { flag: "--timeout".into(), message: format!("{t} is not a number of seconds in (0, 3600]") })
    }
}

fn cmd_race(a: &RaceArgs, probes: &Path, matrices: &Path) -> Result<i32> {
    a.check_contenders()?;
    let timeout = check_timeout(a.timeout)?;
    a.power.max_rate()?;
    let offsets = a.power.offsets()?;
    check_max_trials(&a.power, a.trials.unwrap_or(0))?;
    let all = load_dir(matrices)?;
    let mut wanted: Vec<(&'static str, Variant)> = Vec::new();
    for item in &a.contenders {
        let (rt, var) = item.split_once(':').ok_or_else(|| Error::Usage {
            flag: "--contender".into(),
            message: format!("'{item}' is not RUNTIME:VARIANT (e.g. node:node.writeFileSync.wx)"),
        })?;
        let adapter = crate::runtime::adapter(rt.trim()).ok_or_else(|| Error::UnknownRuntime {
            name: rt.trim().to_string(),
            flag: "--contender".into(),
            known: crate::runtime::known_names(),
        })?;
        let v = all.iter().find(|v| v.id == var.trim()).ok_or_else(|| Error::Usage {
            flag: "--contender".into(),
            message: format!("'{}' is not a variant (see `conformance variants`)", var.trim()),
        })?;
        if !adapter.families().contains(&v.family.as_str()) {
            return Err(Error::Usage {
                flag: "--contender".into(),
                message: format!(
                    "{} does not run the {} family (it runs: {})",
                    adapter.name(),
                    v.family,
                    adapter.families().join(", ")
                ),
            });
        }
        wanted.push((adapter.name(), v.clone()));
    }
    if wanted.len() < 2 {
        return Err(Error::Usage {
            flag: "--contender".into(),
            message: "a race needs at least two contenders".into(),
        });
    }
    check_probes(probes)?;
    let segment = a.scratch.segment()?;
    let mut outdir = match &a.out {
        Some(out) => {
            let o = OutDir::open(out)?;
            tempfile::NamedTempFile::new_in(out).map_err(|source| Error::Output { path: out.clone(), source })?;
            Some(o)
        }
        None => None,
    };
    let abandon = |o: &mut Option<OutDir>| o.iter_mut().for_each(OutDir::abandon);
    let names: Vec<&'static str> = wanted.iter().map(|(n, _)| *n).collect();
    let mut found = discover(&Requested { names: Some(names), explicit: Vec::new() }).runtimes;
    let fs_root = a.scratch.root();
    let (mut scratch, ctx) = match workspace(&fs_root, segment.as_deref(), probes) {
        Ok(w) => w,
        Err(e) => {
            abandon(&mut outdir);
            return Err(e);
        }
    };
    prepare_all(&mut found, &ctx);
    if crate::interrupt::requested() {
        cleanup_all(&found, &ctx);
        abandon(&mut outdir);
        eprintln!("interrupted before racing: nothing measured, nothing written");
        return Ok(exit_code::INTERRUPTED);
    }
    let missing: Vec<String> = found.iter().filter(|r| r.status != Status::Found).map(status_line).collect();
    if !missing.is_empty() {
        cleanup_all(&found, &ctx);
        abandon(&mut outdir);
        return Err(Error::NoRuntime(missing.join("; ")));
    }
    let max_rate = a.power.max_rate()?;
    let (natural, amplify) = amplify_plan(&a.power, true);
    if let Some(l) = amplify_line(&amplify) {
        eprintln!("{l}");
    }
    let opts = Options {
        contenders: wanted.len(),
        trials: 200,
        oneshot_trials: 50,
        timeout,
        startup_timeout: timeout.max(Duration::from_secs(30)),
        second_comer: false,
        race: true,
        targets: Vec::new(),
        relative: false,
        hold_ms: a.hold_ms,
        max_consecutive_faults: 3,
        natural,
        amplify,
        max_rate,
        max_trials: a.power.max_trials as usize,
        offsets: offsets.clone(),
    };
    let rts: Vec<&Runtime> =
        wanted.iter().map(|(n, _)| found.iter().find(|r| r.name == *n).expect("discovered")).collect();
    let any_oneshot = rts.iter().any(|r| r.adapter().mode() == crate::exec::contender::Mode::OneShot);
    let trials = a.trials.map_or(if any_oneshot { opts.oneshot_trials } else { opts.trials }, |t| t as usize);
    let slots = wanted
        .iter()
        .zip(&rts)
        .map(|((_, v), rt)| {
            let ad = rt.adapter();
            (ad.mode(), ad.launch(rt, &v.family, &ctx), engine::timeouts_for(ad, &opts))
        })
        .collect();
    let mut pools = engine::Pools::new(slots, scratch.root().to_path_buf());
    if let Some(why) = rts.iter().find_map(|r| r.adapter().no_amplification()) {
        if matches!(opts.amplify, Amplify::On(_)) {
            pools.amplified_broke(why);
        }
    }
    for c in &mut pools.natural {
        let _ = c.start();
    }
    let variants: Vec<&Variant> = wanted.iter().map(|(_, v)| v).collect();
    let styles: Vec<_> = rts.iter().map(|r| r.adapter().path_style()).collect();
    let nonce = format!("{:x}", jiff::Timestamp::now().as_nanosecond() as u64 & 0xFFFF_FFFF);
    let mut next_id = 0;
    // the control: every slot makes its own family's check-then-create, in the same pools
    let controls: Option<Vec<&Variant>> = variants.iter().map(|v| engine::control_for(&all, &v.family)).collect();
    let detection = controls.map(|cs| {
        let r = engine::race_modes(&mut pools, &cs, &styles, trials, &opts, &mut scratch, &nonce, &mut next_id);
        let counts = |m: &Option<crate::report::model::ModeRun>| m.as_ref().map(|m| m.control_counts());
        let mut ids: Vec<&str> = Vec::new();
        for v in &cs {
            if !ids.contains(&v.id.as_str()) {
                ids.push(&v.id);
            }
        }
        let ids = ids.join(" + ");
        crate::verdict::Detection::judge(&ids, counts(&r.natural), counts(&r.amplified))
    });
    let run = engine::race_modes(&mut pools, &variants, &styles, trials, &opts, &mut scratch, &nonce, &mut next_id);
    pools.shutdown();
    drop(pools);
    for rt in &rts {
        rt.adapter().cleanup(rt, &ctx);
    }
    let (verdict, weak_race) = crate::verdict::apply_control(run.verdict, detection.as_ref());
    let mut wins_by_runtime = std::collections::BTreeMap::new();
    let deciding = run.deciding();
    for (slot, rt) in rts.iter().enumerate() {
        *wins_by_runtime.entry(rt.label.clone()).or_insert(0) +=
            deciding.and_then(|m| m.stats.wins_by_contender.get(slot).copied()).unwrap_or(0);
    }
    let result = crate::cross::CrossRace {
        contenders: wanted
            .iter()
            .zip(&rts)
            .enumerate()
            .map(|(slot, ((_, v), rt))| crate::cross::CrossContender {
                slot,
                runtime: rt.label.clone(),
                runtime_name: rt.name.to_string(),
                variant: v.id.clone(),
                call: v.call.clone(),
            })
            .collect(),
        verdict,
        decided_by: run.decided_by,
        natural: run.natural,
        amplified: run.amplified,
        amplified_unavailable: run.amplified_unavailable,
        detection,
        weak_race,
        wins_by_runtime,
        first_error: run.first_error,
        evidence: run.evidence,
        amplification: amplification_info(&a.power, &opts.amplify)?,
    };
    let text = serde_json::to_string_pretty(&result).expect("serialises") + "\n";
    if let Some(out) = &outdir {
        out.write("cross-race.json", &text)?;
        eprintln!("wrote {}", out.path().join("cross-race.json").display());
    }
    if a.json {
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

fn cmd_runtimes(a: &RuntimesArgs) -> Result<i32> {
    let req = Requested::parse(&a.runtime)?;
    let d = discover(&req);
    if a.json {
        let infos: Vec<RuntimeInfo> = d.runtimes.iter().map(runtime_info).collect();
        emit(&(serde_json::to_string_pretty(&infos).expect("serialises") + "\n"));
    } else {
        let header = ["name", "version", "status", "path / reason"].map(String::from);
        let rows = d.runtimes.iter().map(|rt| {
            let (st, detail) = match &rt.status {
                Status::Found => ("found", rt.path.as_ref().map(|p| p.display().to_string()).unwrap_or_default()),
                Status::NotFound(r) => ("not found", r.clone()),
                Status::Broken(r) => ("broken", r.clone()),
            };
            [rt.label.clone(), rt.version.clone(), st.to_string(), detail]
        });
        emit(&format!("{}\n", table::terminal_table(std::iter::once(header).chain(rows))));
    }
    Ok(exit_code::OK)
}

fn cmd_variants(a: &VariantsArgs, matrices: &Path) -> Result<i32> {
    let vs = select_variants(load_dir(matrices)?, &a.variant)?;
    if a.json {
        emit(&(serde_json::to_string_pretty(&vs).expect("serialises") + "\n"));
    } else {
        // a wide call is cut and control characters escaped, as in every terminal table
        let header = ["variant", "call", "source", "creates"].map(String::from);
        let rows = vs.iter().map(|v| {
            let id = if v.anti_pattern { format!("{} (anti-pattern)", v.id) } else { v.id.clone() };
            let kind = |k: &dyn std::fmt::Debug| format!("{k:?}").to_lowercase();
            [id, v.call.clone(), kind(&v.source), kind(&v.creates)]
        });
        emit(&format!("{}\n", table::terminal_table(std::iter::once(header).chain(rows))));
    }
    Ok(exit_code::OK)
}

fn cmd_compare(a: &CompareArgs) -> Result<i32> {
    let base = json::read(&a.base)?;
    let new = json::read(&a.new)?;
    let diff = crate::compare::compare(&base, &new);
    emit(&diff.render());
    Ok(if diff.differs() { exit_code::DIFFERENCES } else { exit_code::OK })
}

fn cmd_report(a: &ReportArgs) -> Result<i32> {
    let r = json::read(&a.results)?;
    match a.format {
        Format::Json => emit(&json::render(&r)),
        Format::Markdown => emit(&markdown::render(&r)),
        Format::Table => {
            for rt in r.measured_runtimes() {
                let label = table::escape_controls(rt);
                emit(&(format!("\n{label}\n{}", table::render_terminal(&r, rt)) + "\n"));
                for l in table::race_lines(&r, rt) {
                    emit(&format!("{l}\n"));
                }
            }
        }
    }
    Ok(exit_code::OK)
}

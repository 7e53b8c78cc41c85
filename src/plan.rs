//! The validated plan of a `run` or a `race`: every flag checked once, the engine's
//! [`Options`] built once, and — once runtimes are discovered — the list of cells a run will
//! measure ([`CellPlan`]), which gives the progress bar its total and `run --dry-run` its
//! output.
//!
//! [`crate::cli`] parses (and holds every default); this module validates and expands;
//! [`crate::app`] runs and prints. `run` and `race` share every check through [`Common`].

use std::path::{Path, PathBuf};
use std::time::Duration;

use globset::{Glob, GlobSetBuilder};
use serde::Serialize;

use crate::against::AgainstScope;
use crate::cli::{
    AmplifyArg, AttemptArgs, Cli, PowerArgs, RaceArgs, RunArgs, ScenarioArg, ScratchArgs, DEFAULT_ONESHOT_TRIALS,
    DEFAULT_RUN_TRIALS, DEFAULT_TRIALS, MAX_CONTENDERS,
};
use crate::domain::RaceScope;
use crate::engine::{self, Sweep};
use crate::error::{Error, Result};
use crate::exec::contender::{Contender, Mode};
use crate::exec::protocol::check_hello;
use crate::exec::scratch::{Scratch, TargetState};
use crate::matrix::{SourceKind, Variant};
use crate::options::{Amplify, ClaimOptions, Options, PublishOptions};
use crate::report::model::{AmplificationInfo, Cell, Results, RunInfo, RuntimeInfo, Scenario};
use crate::runtime::install::{Store, VersionRequest};
use crate::runtime::{Fetch, ProbeContext, Requested, Runtime, Status};

/// A probe's start-up may take at least this long, whatever `--timeout` says.
pub const MIN_STARTUP: Duration = Duration::from_secs(30);

/// A race stops after this many trials in a row in which a contender failed before the release.
pub const MAX_CONSECUTIVE_FAULTS: usize = 3;

/// What the global flags say: the folders, and whether the registry may be asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// Where the default output folders go (`reports/runs/` below it): the working folder, as
    /// the help says, spelled as an empty relative path so that messages show
    /// `reports/runs/…`; never the folder the binary was built in.
    pub home: PathBuf,
    /// `--probes`, or `None`: the probes built into the binary ([`crate::builtin`]).
    pub probes: Option<PathBuf>,
    /// `--matrices`, or `None`: the matrices built into the binary.
    pub matrices: Option<PathBuf>,
    /// `--cache-dir` (`CONFORMANCE_CACHE_DIR`), or `conformance` in the user's cache folder
    /// (the `dirs` crate: `$XDG_CACHE_HOME` or `~/.cache` on Linux, `~/Library/Caches` on
    /// macOS, `%LOCALAPPDATA%` on Windows), or in the temp folder where there is none.
    pub cache: PathBuf,
    /// `--offline`: never ask the npm registry.
    pub offline: bool,
}

impl Paths {
    /// The folders of `cli`'s global flags, defaulting to the project's. Never fails (the
    /// probes folder is checked by the plans that use it; the cache is made when needed).
    pub fn of(cli: &Cli) -> Paths {
        let home = PathBuf::new();
        Paths {
            probes: cli.probes.clone(),
            matrices: cli.matrices.clone(),
            cache: cli
                .cache_dir
                .clone()
                .unwrap_or_else(|| dirs::cache_dir().unwrap_or_else(std::env::temp_dir).join("conformance")),
            offline: cli.offline,
            home,
        }
    }

    /// The store of installed runtime versions, in [`Paths::cache`].
    pub fn store(&self) -> Store {
        Store::new(&self.cache)
    }

    /// Whether a `NAME@VERSION` that is not installed may be fetched (not with `--offline`).
    pub fn fetch(&self) -> Fetch {
        if self.offline {
            Fetch::Offline
        } else {
            Fetch::Allowed
        }
    }
}

/// The flags `run` and `race` share, validated: where probes and the scratch folder are, how
/// long an attempt may take, and how hard races look for a window.
#[derive(Debug, Clone)]
pub struct Common {
    /// The probes folder (it holds `PROTOCOL.md`), or `None` for the built-in probes, which
    /// [`Common::workspace`] writes into the scratch folder.
    pub probes: Option<PathBuf>,
    /// The harness's cache folder ([`Paths::cache`]).
    pub cache: PathBuf,
    /// Where the scratch folder is made (`--fs-root`, default the system temp folder).
    pub fs_root: PathBuf,
    /// Whether `--fs-root` gave it (else the system temp folder): errors name where it came from.
    pub fs_root_given: bool,
    /// The folder name every path passes through (`--hostile-paths`, `--path-segment`).
    pub segment: Option<String>,
    /// `--timeout`.
    pub timeout: Duration,
    /// `--hold-ms`.
    pub hold_ms: u64,
    /// `--amplify` as requested.
    pub amplify: AmplifyArg,
    /// `--amplify-delay-us`.
    pub amplify_delay_us: u64,
    /// `--amplify-paths`.
    pub amplify_paths: crate::exec::amplify::DelayScope,
    /// `--max-rate` as a probability.
    pub max_rate: Option<f64>,
    /// `--max-trials`.
    pub max_trials: u32,
    /// `--offsets` in µs.
    pub offsets: Option<Vec<u64>>,
}

impl Common {
    /// Validates the shared flags, with the folders of `paths`. `trials` is the `--trials`
    /// given, if any (for the `--max-trials` check).
    ///
    /// Errors: [`Error::Usage`] naming `--timeout`, `--max-rate`, `--offsets`, `--max-trials`,
    /// `--probes` or `--path-segment`, in that order of checking.
    pub fn new(
        power: &PowerArgs,
        attempt: &AttemptArgs,
        scratch: &ScratchArgs,
        paths: &Paths,
        trials: Option<u32>,
    ) -> Result<Common> {
        let timeout = parse_timeout(attempt.timeout)?;
        let max_rate = parse_max_rate(power.max_rate.as_deref())?;
        let offsets = parse_offsets(power.offsets.as_deref())?;
        if let (Some(_), Some(t)) = (max_rate, trials) {
            if power.max_trials < t {
                return Err(usage(
                    "--max-trials",
                    format!("{} is below --trials {t}; races run at least --trials", power.max_trials),
                ));
            }
        }
        if let Some(p) = &paths.probes {
            check_probes(p)?;
        }
        let segment = parse_segment(scratch.hostile_paths, scratch.path_segment.as_deref())?;
        Ok(Common {
            probes: paths.probes.clone(),
            cache: paths.cache.clone(),
            fs_root: scratch.fs_root.clone().unwrap_or_else(std::env::temp_dir),
            fs_root_given: scratch.fs_root.is_some(),
            segment,
            timeout,
            hold_ms: attempt.hold_ms,
            amplify: power.amplify,
            amplify_delay_us: power.amplify_delay_us,
            amplify_paths: power.amplify_paths.scope(),
            max_rate,
            max_trials: power.max_trials,
            offsets,
        })
    }

    /// The engine options for a measurement of `shape`: the one place [`Options`] is built.
    /// `amplify` is [`Common::detect_amplifier`]'s answer.
    fn options(&self, shape: Shape, amplify: Amplify) -> Options {
        Options {
            contenders: shape.contenders,
            trials: shape.trials as usize,
            oneshot_trials: shape.oneshot_trials as usize,
            timeout: self.timeout,
            startup_timeout: self.timeout.max(MIN_STARTUP),
            second_comer: shape.second_comer,
            race: shape.race,
            targets: shape.targets,
            relative: shape.relative,
            hold_ms: self.hold_ms,
            max_consecutive_faults: MAX_CONSECUTIVE_FAULTS,
            natural: self.amplify != AmplifyArg::On,
            amplify,
            max_rate: self.max_rate,
            max_trials: self.max_trials as usize,
            offsets: self.offsets.clone(),
            publish: shape.publish,
            claim: shape.claim,
            done_marker: shape.done_marker,
            recipes: shape.recipes,
            adaptive: shape.adaptive,
            races: shape.races,
            handoff_amplified: !shape.adaptive || self.amplify == AmplifyArg::On,
            contender_kind: shape.contender_kind,
        }
    }

    /// The amplifier: found and checked (`strace -V` and a traced child) only when races or
    /// hand-offs (`races`) run and amplification is wanted; [`Amplify::Off`] otherwise, [`Amplify::Unavailable`] with
    /// the reason where it cannot run. Never fails.
    pub fn detect_amplifier(&self, races: bool) -> Amplify {
        if !races || self.amplify == AmplifyArg::Off {
            return Amplify::Off;
        }
        match crate::exec::amplify::Amplifier::detect(self.amplify_delay_us, self.amplify_paths) {
            Ok(a) => Amplify::On(a),
            Err(why) => Amplify::Unavailable(why),
        }
    }

    /// The race settings as the results record them, with `amp` (the detected amplifier).
    pub fn amplification_info(&self, amp: &Amplify) -> AmplificationInfo {
        AmplificationInfo {
            requested: self.amplify.as_str().to_string(),
            delay_us: self.amplify_delay_us,
            offsets_us: self.offsets.clone(),
            max_rate: self.max_rate,
            max_trials: self.max_rate.map(|_| self.max_trials as usize),
            syscalls: crate::exec::amplify::SYSCALLS.iter().map(|s| s.to_string()).collect(),
            paths: Some(self.amplify_paths),
            tool: match amp {
                Amplify::On(a) => Some(a.version().to_string()),
                _ => None,
            },
            unavailable: match amp {
                Amplify::Unavailable(why) => Some(why.clone()),
                _ => None,
            },
        }
    }

    /// Creates the scratch folder (under [`Common::fs_root`], through [`Common::segment`])
    /// and the probe context. Before anything runs, the deepest paths the harness will make
    /// below the scratch folder are made once ([`crate::exec::health::self_test`]), so a root
    /// or segment too long for the file system fails here instead of turning cells into
    /// harness errors. An interrupt's second Ctrl-C removes the folder.
    ///
    /// Errors: [`Error::Scratch`] when the folder cannot be made, [`Error::ScratchBroken`]
    /// when the self-test fails (both exit code 3), [`Error::Usage`] naming `--path-segment`
    /// when the segment folder cannot be made (see [`Scratch::new`]).
    pub fn workspace(&self) -> Result<(Scratch, ProbeContext)> {
        let origin = crate::error::scratch_origin(self.fs_root_given);
        let scratch = Scratch::new(&self.fs_root, self.segment.as_deref()).map_err(|e| match e {
            Error::Scratch { path, source, .. } => Error::Scratch { path, origin, source },
            other => other,
        })?;
        crate::interrupt::remove_on_abort(scratch.top().to_path_buf());
        // tokens are `<nonce>-second-<id>` or `<nonce>-t<folder>-k<i>`: 40 bytes is ample
        crate::exec::health::self_test(scratch.root(), 40).map_err(|why| Error::ScratchBroken {
            path: self.fs_root.clone(),
            origin,
            why,
        })?;
        let probes_dir = match &self.probes {
            Some(p) => p.clone(),
            None => {
                // the built-in probes, in the scratch folder (removed with it)
                let dir = scratch.top().join("probes");
                crate::builtin::write_probes(&dir).map_err(|e| Error::ScratchBroken {
                    path: self.fs_root.clone(),
                    origin,
                    why: e.to_string(),
                })?;
                dir
            }
        };
        let ctx = ProbeContext {
            probes_dir,
            cache_dir: self.cache.clone(),
            scratch_top: scratch.top().to_path_buf(),
            scratch_root: scratch.root().to_path_buf(),
        };
        Ok((scratch, ctx))
    }
}

/// What differs between the [`Options`] of `run` and `race`; the default measures nothing
/// (one contender, the default trials, no scenario), what `race` and `runtimes` start from.
struct Shape {
    contenders: usize,
    trials: u32,
    oneshot_trials: u32,
    second_comer: bool,
    race: bool,
    targets: Vec<TargetState>,
    relative: bool,
    publish: Option<PublishOptions>,
    claim: Option<ClaimOptions>,
    done_marker: Option<usize>,
    recipes: Vec<String>,
    adaptive: bool,
    races: RaceScope,
    contender_kind: crate::domain::ContenderKind,
}

impl Default for Shape {
    fn default() -> Shape {
        Shape {
            contenders: 1,
            trials: DEFAULT_TRIALS,
            oneshot_trials: DEFAULT_ONESHOT_TRIALS,
            second_comer: false,
            race: false,
            targets: Vec::new(),
            relative: false,
            publish: None,
            claim: None,
            done_marker: None,
            recipes: Vec::new(),
            adaptive: false,
            races: RaceScope::All,
            contender_kind: crate::domain::ContenderKind::Processes,
        }
    }
}

/// The nonce that starts every token of a run, from its start time (hex, 32 bits).
pub fn nonce(at: jiff::Timestamp) -> String {
    format!("{:x}", at.as_nanosecond() as u64 & 0xFFFF_FFFF)
}

/// A validated `run`: what to select, how to measure it, where results go.
#[derive(Debug, Clone)]
pub struct RunPlan {
    /// The shared flags.
    pub common: Common,
    /// The selected variants (`--variant`), in matrix order.
    pub variants: Vec<Variant>,
    /// `--variant` as given, one pattern per item (empty: every variant), for
    /// [`crate::report::model::Selection`].
    pub variant_patterns: Vec<String>,
    /// Where the matrices came from (`built-in matrices/ (…)` or the `--matrices` folder).
    pub matrices: String,
    /// Every family's detection control (raced whenever races run, selected or not).
    pub controls: Vec<Variant>,
    /// `--runtime`.
    pub requested: Requested,
    /// `--require`.
    pub required: Requested,
    /// The engine options, targets typed and the amplifier detected.
    pub options: Options,
    /// The output folder (`--out`, default `reports/runs/<UTC timestamp>/`).
    pub out: PathBuf,
    /// `--expect`, read and checked.
    pub baseline: Option<Results>,
    /// When the run started.
    pub date: jiff::Timestamp,
    /// The token nonce ([`nonce`] of `date`).
    pub nonce: String,
    /// `--quiet`.
    pub quiet: bool,
    /// `--dry-run`.
    pub dry_run: bool,
    /// `--json` (with `--dry-run`).
    pub json: bool,
    /// Which pairs of rows are raced against each other once the rows are measured
    /// (`--against`; [`crate::against`]); `None` when races do not run or run in threads.
    pub against: crate::against::AgainstScope,
    /// `--ignore`: second-comer facts `--expect` does not compare.
    pub ignore: Vec<crate::compare::Fact>,
}

impl RunPlan {
    /// Validates `a` (with the folders of `paths`): matrices and variant patterns, targets,
    /// runtimes, the shared flags, the baseline; then detects the amplifier when races run.
    /// Nothing is written.
    ///
    /// Errors: [`Error::Usage`] naming the flag (see [`Common::new`], [`select_variants`],
    /// `--target`, `--contenders`), [`Error::UnknownRuntime`] naming `--runtime` or
    /// `--require`, [`Error::Input`] for a malformed matrix or `--expect` file.
    pub fn new(a: &RunArgs, paths: &Paths) -> Result<RunPlan> {
        let date = jiff::Timestamp::now();
        let trials = a.trials.unwrap_or(match (a.thorough, a.quick) {
            (true, _) => DEFAULT_TRIALS,
            (false, true) => crate::cli::QUICK_RUN_TRIALS,
            (false, false) => DEFAULT_RUN_TRIALS,
        });
        let common = Common::new(&a.power, &a.attempt, &a.scratch, paths, Some(trials))?;
        check_contenders(a.contenders as usize, "--contenders")?;
        let all = crate::matrix::load(paths.matrices.as_deref())?;
        let controls: Vec<Variant> = all.iter().filter(|v| v.control).cloned().collect();
        // `--variant` selects the hand-off recipes by id too (`'publish.*'`, `claim.rename-claim`)
        let recipe_rows = crate::handoff::RECIPES.iter().map(|r| r.as_variant());
        let (recipes, variants): (Vec<Variant>, Vec<Variant>) =
            select_variants(all.into_iter().chain(recipe_rows).collect(), &a.variant)?
                .into_iter()
                .partition(|v| crate::handoff::RECIPES.iter().any(|r| r.id == v.id));
        let recipes: Vec<String> = recipes.into_iter().map(|v| v.id).collect();
        // a variant measured with several kinds of source (`sources`) is one variant per kind,
        // each its own cells and table row
        let variants = select_sources(variants.iter().flat_map(Variant::per_source).collect(), &a.variant)?;
        let picked = |s: Scenario| recipes.iter().any(|id| crate::handoff::Recipe::of(s).any(|r| r.id == id));
        let targets = parse_targets(a.target.as_deref().unwrap_or(if a.thorough { "all" } else { "default" }))?;
        let requested = Requested::parse(&a.runtime)?;
        let required = Requested::parse_for(&a.require, "--require")?;
        let baseline = a.expect.as_deref().map(crate::report::json::read).transpose()?;
        let out = a.out.clone().unwrap_or_else(|| {
            let stamp = date.strftime("%Y%m%dT%H%M%SZ").to_string();
            paths.home.join("reports").join("runs").join(stamp)
        });
        // thread runs measure second comers and races only: the hand-offs race processes
        let threads = a.contender_kind == crate::cli::ContenderKindArg::Thread;
        let handoff = |s: ScenarioArg| a.scenario.iter().any(|x| *x == s || (*x == ScenarioArg::All && !threads));
        let wants = |s: ScenarioArg| a.scenario.iter().any(|x| *x == s || *x == ScenarioArg::All);
        let shape = Shape {
            contenders: a.contenders as usize,
            trials,
            oneshot_trials: a.oneshot_trials,
            second_comer: wants(ScenarioArg::SecondComer),
            race: wants(ScenarioArg::Race),
            targets,
            relative: !a.no_relative,
            publish: (handoff(ScenarioArg::Publish) && picked(Scenario::Publish)).then_some(PublishOptions {
                items: a.items as usize,
                readers: a.readers as usize,
                size: a.size as usize,
            }),
            claim: (handoff(ScenarioArg::Claim) && picked(Scenario::Claim))
                .then_some(ClaimOptions { workers: a.workers as usize, items: a.items as usize }),
            done_marker: (handoff(ScenarioArg::DoneMarker) && picked(Scenario::DoneMarker)).then_some(a.size as usize),
            recipes: recipes.clone(),
            adaptive: !a.thorough,
            races: match a.races {
                Some(r) => r.scope(),
                None if a.thorough || !a.variant.is_empty() => RaceScope::All,
                None if a.quick => RaceScope::Core,
                None => RaceScope::Auto,
            },
            contender_kind: a.contender_kind.kind(),
        };
        // the hand-offs are run amplified too (with --thorough or --amplify on), beside their
        // natural counts
        let handoffs = shape.publish.is_some() || shape.claim.is_some() || shape.done_marker.is_some();
        let amplify = common.detect_amplifier(shape.race || handoffs);
        let options = common.options(shape, amplify);
        // pairs are raced as processes, after the rows they rest on
        let threads = a.contender_kind == crate::cli::ContenderKindArg::Thread;
        if let (Some(x), true) = (a.against, !options.race || threads) {
            if x != crate::cli::AgainstArg::None {
                return Err(Error::Usage {
                    flag: "--against".into(),
                    message: format!(
                        "pairs are raced after the races, by processes: --against {} needs the race scenario and --contender-kind process",
                        x.scope().as_str()
                    ),
                });
            }
        }
        let against = match a.against {
            _ if !options.race || threads => AgainstScope::None,
            Some(x) => x.scope(),
            None if a.thorough => AgainstScope::All,
            None if a.quick => AgainstScope::None,
            None => AgainstScope::Cover,
        };
        Ok(RunPlan {
            common,
            variants,
            variant_patterns: a.variant.iter().flat_map(|p| p.split(',')).map(|p| p.trim().to_string()).collect(),
            matrices: paths
                .matrices
                .as_ref()
                .map_or_else(|| crate::builtin::describe("matrices"), |p| p.display().to_string()),
            controls,
            requested,
            required,
            options,
            out,
            baseline,
            date,
            nonce: nonce(date),
            quiet: a.quiet,
            dry_run: a.dry_run,
            json: a.json,
            against,
            ignore: a.ignore.clone(),
        })
    }

    /// The selected variants `rt` runs (its families), in matrix order.
    pub fn variants_of(&self, rt: &Runtime) -> Vec<&Variant> {
        self.variants.iter().filter(|v| rt.families.contains(&v.family.as_str())).collect()
    }

    /// The detection controls, as [`engine::measure`] takes them.
    pub fn control_refs(&self) -> Vec<&Variant> {
        self.controls.iter().collect()
    }

    /// The runtimes of `found` that will be measured: found and working, and running at
    /// least one selected variant.
    pub fn measurable<'a>(&self, found: &'a [Runtime]) -> Vec<&'a Runtime> {
        found.iter().filter(|r| self.measures(r)).collect()
    }

    /// True when `rt` will be measured: found and working, and running a selected variant or
    /// hand-off recipe.
    pub fn measures(&self, rt: &Runtime) -> bool {
        let o = &self.options;
        let handoff = o.publish.is_some() || o.claim.is_some() || o.done_marker.is_some();
        rt.status == Status::Found && (!self.variants_of(rt).is_empty() || handoff)
    }

    /// The `--require`d runtimes missing from `found` (not found, broken, or not selected by
    /// `--runtime`), each with the reason; empty when all are there.
    pub fn missing_required(&self, found: &[Runtime]) -> Vec<String> {
        let Some(names) = &self.required.names else { return Vec::new() };
        let why = |r: &Runtime| crate::status::status_line(r).split_whitespace().skip(2).collect::<Vec<_>>().join(" ");
        let mut missing: Vec<String> = names
            .iter()
            .filter(|n| !found.iter().any(|r| r.name == **n && r.status == Status::Found))
            .map(|n| match found.iter().find(|r| r.name == *n) {
                Some(r) => format!("{n} ({})", why(r)),
                None => format!("{n} (not selected by --runtime)"),
            })
            .collect();
        for v in &self.required.versions {
            let has = |r: &&Runtime| {
                r.name == v.runtime
                    && r.status == Status::Found
                    && semver::Version::parse(&r.version).is_ok_and(|x| v.spec.matches(&x))
            };
            if found.iter().any(|r| has(&r)) {
                continue;
            }
            missing.push(match found.iter().find(|r| r.selector == v.text) {
                Some(r) => format!("{} ({})", v.text, why(r)),
                None => format!("{} (not selected by --runtime)", v.text),
            });
        }
        missing
    }

    /// Why nothing of `found` is measurable (for [`Error::NoRuntime`]).
    pub fn nothing_measurable(&self, found: &[Runtime]) -> String {
        if found.iter().any(|r| r.status == Status::Found) {
            "no found runtime runs the selected variants".to_string()
        } else {
            "none of the selected runtimes was found (see the skip lines above)".to_string()
        }
    }

    /// How `rt`'s races run under this plan; `None` when races do not run.
    pub fn race_shape(&self, rt: &Runtime) -> Option<RaceShape> {
        let o = &self.options;
        o.race.then(|| {
            let ad = rt.adapter();
            let trials = o.trials_for(ad.mode() == Mode::OneShot);
            let unavailable = match (&o.amplify, ad.no_amplification()) {
                (Amplify::On(_), Some(why)) => Some(crate::domain::NoAmplified::Unavailable(why)),
                (amp, _) => amp.why_not(),
            };
            let amplified = match (&unavailable, &o.amplify) {
                (None, Amplify::On(a)) => {
                    Some(o.offsets.clone().unwrap_or_else(|| match Sweep::amplified(a.delay_us()) {
                        Sweep::Fixed(v) => v,
                        Sweep::NaturalAuto => vec![0],
                    }))
                }
                _ => None,
            };
            RaceShape {
                contenders: o.contenders,
                trials,
                max_trials: o.max_rate.map(|_| o.max_trials.max(trials)),
                natural: o.natural || amplified.is_none(),
                natural_offsets_us: o.offsets.clone(),
                amplified_offsets_us: amplified,
                amplified_unavailable: unavailable,
            }
        })
    }

    /// The cells a run of this plan measures on the runtimes of `found`, in the order of
    /// `results.json`: per measurable runtime and family, each selected variant's
    /// second-comer cells (one per target) and race cell, then the family's control race when
    /// the control was not selected; then one cell per publish and claim recipe. Its length is what [`engine::measure`] reports through
    /// its callback when nothing stops the run.
    pub fn cells(&self, found: &[Runtime]) -> Vec<CellPlan> {
        let o = &self.options;
        let mut out = Vec::new();
        for rt in self.measurable(found) {
            let race = self.race_shape(rt);
            let runtime = (rt.label.as_str(), rt.name, rt.version.as_str());
            // hand-offs always race processes
            let kind_of = |s: Scenario| match s {
                Scenario::SecondComer | Scenario::Race => o.contender_kind,
                _ => crate::domain::ContenderKind::Processes,
            };
            let cell = |v: &Variant, scenario, target: TargetState, race: Option<RaceShape>| CellPlan {
                id: Cell::id_of(runtime.0, &v.id, scenario, target, v.cell_source(), kind_of(scenario)),
                runtime: rt.label.clone(),
                variant: v.id.clone(),
                scenario,
                target,
                source: v.cell_source(),
                control: v.control,
                relative: scenario == Scenario::SecondComer && o.relative,
                conditional: scenario == Scenario::Race && o.races == RaceScope::Auto && o.second_comer && !v.control,
                race,
            };
            for family in &rt.families {
                let fam: Vec<&Variant> = self.variants.iter().filter(|v| v.family == *family).collect();
                if fam.is_empty() {
                    continue;
                }
                for v in &fam {
                    if o.second_comer {
                        let has_file_source = v.source == crate::matrix::SourceKind::File;
                        let targets = o.targets.iter().filter(|t| t.applies(has_file_source));
                        out.extend(targets.map(|&t| cell(v, Scenario::SecondComer, t, None)));
                    }
                    if o.races(v) {
                        out.push(cell(v, Scenario::Race, TargetState::Absent, race.clone()));
                    }
                }
                let control = self.controls.iter().find(|c| c.family == *family);
                if let (true, Some(c)) = (o.race, control) {
                    // a selected control whose own row is not raced (`--races core` leaves out
                    // a promise form) is still raced, as the engine does, after the rows
                    if !fam.iter().any(|v| v.id == c.id && o.races(v)) {
                        out.push(cell(c, Scenario::Race, TargetState::Absent, race.clone()));
                    }
                }
            }
            let handoffs = [
                (o.publish.is_some(), Scenario::Publish),
                (o.claim.is_some(), Scenario::Claim),
                (o.done_marker.is_some(), Scenario::DoneMarker),
            ];
            for (on, scenario) in handoffs {
                if on {
                    let recipes =
                        crate::handoff::Recipe::of(scenario).filter(|r| o.recipes.iter().any(|id| id == r.id));
                    out.extend(recipes.map(|r| cell(&r.as_variant(), scenario, TargetState::Absent, None)));
                }
            }
        }
        out
    }

    /// The run information of `results.json` before anything is measured: machine, file
    /// system of the scratch root, options, `found` runtimes, amplification.
    pub fn run_info(&self, found: &[Runtime]) -> RunInfo {
        let (os, os_version, kernel, arch) = crate::runinfo::os();
        let o = &self.options;
        RunInfo {
            harness_version: env!("CARGO_PKG_VERSION").to_string(),
            os,
            os_version,
            kernel,
            arch,
            fs: crate::runinfo::fs_info(&self.common.fs_root),
            date: self.date.to_string(),
            duration_s: 0.0,
            contenders: o.contenders,
            trials: o.trials,
            oneshot_trials: o.oneshot_trials,
            timeout_ms: o.timeout.as_millis() as u64,
            path_segment: self.common.segment.clone(),
            probes: Some(
                self.common
                    .probes
                    .as_ref()
                    .map_or_else(|| crate::builtin::describe("probes"), |p| p.display().to_string()),
            ),
            matrices: Some(self.matrices.clone()),
            races: o.race.then_some(o.races),
            against: o.race.then_some(self.against),
            interrupted: false,
            runtimes: found.iter().map(crate::status::runtime_info).collect(),
            amplification: self.common.amplification_info(&o.amplify),
            controls: Vec::new(),
            machines: Vec::new(),
            selection: Some(self.selection()),
        }
    }

    /// What this run asks for besides its runtimes: the `--variant` patterns, the scenarios
    /// that run and the second comers' target states.
    pub fn selection(&self) -> crate::report::model::Selection {
        let o = &self.options;
        let scenarios = [
            (o.second_comer, Scenario::SecondComer),
            (o.race, Scenario::Race),
            (o.publish.is_some(), Scenario::Publish),
            (o.claim.is_some(), Scenario::Claim),
            (o.done_marker.is_some(), Scenario::DoneMarker),
        ];
        crate::report::model::Selection {
            variants: self.variant_patterns.clone(),
            scenarios: scenarios.into_iter().filter_map(|(on, s)| on.then_some(s)).collect(),
            targets: o.targets.clone(),
        }
    }

    /// What `--dry-run` reports: the runtimes of `found` (measured or skipped, with reasons),
    /// the amplification, the cells and the estimated attempts.
    pub fn dry_run_report(&self, found: &[Runtime]) -> DryRun {
        let cells = self.cells(found);
        let attempts = Estimate::of(&cells);
        DryRun {
            runtimes: found
                .iter()
                .map(|r| DryRuntime {
                    info: crate::status::runtime_info(r),
                    measured: self.measures(r),
                    race: self.race_shape(r).filter(|_| self.measures(r)),
                })
                .collect(),
            amplification: self.common.amplification_info(&self.options.amplify),
            out: self.out.clone(),
            cells,
            attempts,
        }
    }
}

/// How one runtime's races run: contenders, trials and the release offsets of each mode.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RaceShape {
    /// Contenders per race.
    pub contenders: usize,
    /// Counted trials per race mode (after a few uncounted warm-up trials).
    pub trials: usize,
    /// With `--max-rate`: the most trials a race mode may add up to.
    pub max_trials: Option<usize>,
    /// Whether the natural race runs.
    pub natural: bool,
    /// The natural race's offsets (µs); `None`: 0 and the warm-up's release spread (0 only
    /// where the probe has no microsecond clock).
    pub natural_offsets_us: Option<Vec<u64>>,
    /// The amplified race's offsets (µs), when it runs.
    pub amplified_offsets_us: Option<Vec<u64>>,
    /// Why the amplified race does not run.
    pub amplified_unavailable: Option<crate::domain::NoAmplified>,
}

impl RaceShape {
    /// Race modes that run (1 or 2).
    pub fn modes(&self) -> usize {
        usize::from(self.natural) + usize::from(self.amplified_offsets_us.is_some())
    }
}

/// One cell a run will measure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CellPlan {
    /// The cell's id in `results.json` (`<runtime label>/<variant>/<scenario>/<target>`).
    pub id: String,
    /// The runtime's row label.
    pub runtime: String,
    /// The variant id.
    pub variant: String,
    /// Second comer or race.
    pub scenario: Scenario,
    /// The target state (`absent` for races).
    pub target: TargetState,
    /// The source kind, when not the variant's own ([`Cell::source`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<crate::matrix::SourceKind>,
    /// The variant is its family's detection control.
    pub control: bool,
    /// Second comer: the attempt is repeated with a relative path.
    pub relative: bool,
    /// Race: how it runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub race: Option<RaceShape>,
    /// Race under `--races auto`: measured only when the row's second comers leave its answer
    /// open ([`engine::needs_race`]), so the run may have fewer cells than its plan.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub conditional: bool,
}

impl CellPlan {
    /// The probe attempts this cell makes: (at least, at most). A second comer makes one (two
    /// with the relative repeat); a race `contenders × trials` per mode, up to `max_trials`
    /// with `--max-rate`. Warm-up and discarded trials are not counted, nor what adaptive
    /// trials (the default run's, [`Options::adaptive`]) save: a failing or
    /// naturally checked cell makes fewer, so "at least" holds for `--thorough` only.
    pub fn attempts(&self) -> (usize, usize) {
        match &self.race {
            None => {
                let n = 1 + usize::from(self.relative);
                (n, n)
            }
            Some(r) => {
                let per_trial = r.contenders * r.modes();
                (r.trials * per_trial, r.max_trials.unwrap_or(r.trials) * per_trial)
            }
        }
    }
}

/// The attempts a run is estimated to make.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Estimate {
    /// Second-comer attempts.
    pub second_comer: usize,
    /// Race attempts at least (every contender of every counted trial, every mode; without
    /// adaptive trials, see [`CellPlan::attempts`]; conditional races not counted).
    pub race_min: usize,
    /// Race attempts at most (`--max-rate` may add trials up to `--max-trials`).
    pub race_max: usize,
}

impl Estimate {
    /// The sum over `cells` of [`CellPlan::attempts`].
    pub fn of(cells: &[CellPlan]) -> Estimate {
        let mut e = Estimate::default();
        for c in cells {
            let (lo, hi) = c.attempts();
            if c.race.is_some() {
                // a conditional race may not run at all
                e.race_min += if c.conditional { 0 } else { lo };
                e.race_max += hi;
            } else {
                e.second_comer += lo;
            }
        }
        e
    }
}

/// A runtime in a dry run.
#[derive(Debug, Clone, Serialize)]
pub struct DryRuntime {
    /// As discovered (found, not found or broken, with the reason).
    #[serde(flatten)]
    pub info: RuntimeInfo,
    /// Whether the run would measure it.
    pub measured: bool,
    /// How its races would run (measured runtimes, when races run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub race: Option<RaceShape>,
}

/// What `run --dry-run` found: what a run would measure, nothing raced.
#[derive(Debug, Clone, Serialize)]
pub struct DryRun {
    /// Every selected runtime.
    pub runtimes: Vec<DryRuntime>,
    /// How races would be amplified (or why not).
    pub amplification: AmplificationInfo,
    /// Where a run would write its results.
    pub out: PathBuf,
    /// The cells, in `results.json` order.
    pub cells: Vec<CellPlan>,
    /// The estimated attempts.
    pub attempts: Estimate,
}

/// A validated `race`: the contenders (runtime and variant per slot), their controls, the
/// trials and the engine options.
#[derive(Debug, Clone)]
pub struct RacePlan {
    /// The shared flags.
    pub common: Common,
    /// Per slot: the runtime (and version) and the variant it runs.
    pub slots: Vec<Slot>,
    /// Per slot, its family's detection control; `None` when a family has none.
    pub controls: Option<Vec<Variant>>,
    /// Counted trials per race mode: `--trials`, else [`Options::trials`], or
    /// [`Options::oneshot_trials`] when a one-shot runtime (cmd on Windows) takes part.
    pub trials: usize,
    /// The engine options (the defaults of `run`, one contender per slot, races only).
    pub options: Options,
    /// `--out`.
    pub out: Option<PathBuf>,
    /// `--json`.
    pub json: bool,
    /// The token nonce.
    pub nonce: String,
}

impl RacePlan {
    /// Validates `a` (with the folders of `paths`), then detects the amplifier.
    ///
    /// Errors: [`Error::Usage`] naming `--contender` (more than [`MAX_CONTENDERS`], fewer
    /// than two, not `RUNTIME:VARIANT`, a malformed `NAME@VERSION`, an unknown variant, a
    /// runtime that does not run the variant's family) or a shared flag ([`Common::new`]); [`Error::UnknownRuntime`] naming
    /// `--contender`; [`Error::Input`] for a malformed matrix.
    pub fn new(a: &RaceArgs, paths: &Paths) -> Result<RacePlan> {
        check_contenders(a.contenders.len(), "--contender")?;
        let common = Common::new(&a.power, &a.attempt, &a.scratch, paths, a.trials)?;
        let all = crate::matrix::load(paths.matrices.as_deref())?;
        let slots = a.contenders.iter().map(|item| parse_contender(item, &all)).collect::<Result<Vec<_>>>()?;
        if slots.len() < 2 {
            return Err(usage("--contender", "a race needs at least two contenders".into()));
        }
        let controls =
            slots.iter().map(|s| engine::control_for(&all, &s.variant.family).cloned()).collect::<Option<Vec<_>>>();
        // without --trials, the defaults of `run`
        let shape = Shape {
            contenders: slots.len(),
            trials: a.trials.unwrap_or(DEFAULT_TRIALS),
            oneshot_trials: a.trials.unwrap_or(DEFAULT_ONESHOT_TRIALS),
            race: true,
            contender_kind: a.contender_kind.kind(),
            ..Shape::default()
        };
        if a.contender_kind == crate::cli::ContenderKindArg::Thread {
            let first = &slots[0];
            if let Some(s) = slots.iter().find(|s| {
                s.runtime != first.runtime || s.version != first.version || s.variant.family != first.variant.family
            }) {
                return Err(usage(
                    "--contender-kind",
                    format!(
                        "thread contenders run in one probe process: every --contender must name the same runtime and API family ({}:{} and {}:{} differ)",
                        first.runtime, first.variant.family, s.runtime, s.variant.family
                    ),
                ));
            }
        }
        let any_oneshot =
            slots.iter().any(|s| crate::runtime::adapter(s.runtime).is_some_and(|ad| ad.mode() == Mode::OneShot));
        let options = common.options(shape, common.detect_amplifier(true));
        let trials = options.trials_for(any_oneshot);
        Ok(RacePlan {
            common,
            slots,
            controls,
            trials,
            options,
            out: a.out.clone(),
            json: a.json,
            nonce: nonce(jiff::Timestamp::now()),
        })
    }

    /// The runtimes to discover: each slot's, by name (found on `PATH`) or `NAME@VERSION`
    /// (repeats dropped), not yet located.
    pub fn requested(&self) -> Requested {
        let mut names: Vec<&'static str> = Vec::new();
        let mut versions: Vec<VersionRequest> = Vec::new();
        for s in &self.slots {
            match &s.version {
                None if !names.contains(&s.runtime) => names.push(s.runtime),
                Some(v) if !versions.iter().any(|x| x.text == v.text) => versions.push(v.clone()),
                _ => {}
            }
        }
        Requested { names: Some(names), explicit: Vec::new(), versions, located: Vec::new() }
    }

    /// The runtime of `found` (discovered from [`RacePlan::requested`], located as `req`) that
    /// `slot` races on; `None` when it was not discovered.
    pub fn runtime_of<'a>(&self, slot: &Slot, req: &Requested, found: &'a [Runtime]) -> Option<&'a Runtime> {
        match &slot.version {
            None => found.iter().find(|r| r.name == slot.runtime && r.selector == slot.runtime),
            Some(v) => req.selected_version(&v.text, found),
        }
    }
}

/// One contender of a `race`.
#[derive(Debug, Clone)]
pub struct Slot {
    /// The runtime's registry name.
    pub runtime: &'static str,
    /// The version asked for (`-c bun@1.3.14:…`); `None`: the one found on `PATH`.
    pub version: Option<VersionRequest>,
    /// The variant it runs.
    pub variant: Variant,
}

/// One `--contender RUNTIME[@VERSION]:VARIANT` against the variants `all`. Errors: see
/// [`RacePlan::new`].
fn parse_contender(item: &str, all: &[Variant]) -> Result<Slot> {
    let (rt, var) = item.split_once(':').ok_or_else(|| {
        usage("--contender", format!("'{item}' is not RUNTIME:VARIANT (e.g. node:node.writeFileSync.wx)"))
    })?;
    let version = rt.contains('@').then(|| VersionRequest::parse(rt, "--contender")).transpose()?;
    let name = rt.split('@').next().unwrap_or(rt).trim();
    let adapter = crate::runtime::adapter(name).ok_or_else(|| Error::UnknownRuntime {
        name: name.to_string(),
        flag: "--contender".into(),
        known: crate::runtime::known_names(),
    })?;
    // VARIANT@KIND: the variant with another of its kinds of source (`sources`)
    let (var, kind) = match var.split_once('@') {
        Some((v, k)) => (v, Some(k.trim())),
        None => (var, None),
    };
    let v = all.iter().find(|v| v.id == var.trim()).ok_or_else(|| {
        usage("--contender", format!("'{}' is not a variant (see `conformance variants`)", var.trim()))
    })?;
    let v = match kind {
        None => v.clone(),
        Some(k) => v.per_source().into_iter().find(|x| x.source.as_str() == k).ok_or_else(|| {
            let kinds: Vec<&str> = v.per_source().iter().map(|x| x.source.as_str()).collect();
            usage(
                "--contender",
                format!("'{}' takes no '{}' source (its sources: {})", v.id, k.escape_debug(), kinds.join(", ")),
            )
        })?,
    };
    if !adapter.families().contains(&v.family.as_str()) {
        return Err(usage(
            "--contender",
            format!(
                "{} does not run the {} family (it runs: {})",
                adapter.name(),
                v.family,
                adapter.families().join(", ")
            ),
        ));
    }
    Ok(Slot { runtime: adapter.name(), version, variant: v })
}

fn usage(flag: &str, message: String) -> Error {
    Error::Usage { flag: flag.into(), message }
}

/// Keeps the variants whose id matches any of the glob patterns (comma-separated or repeated);
/// a pattern may end in `@KIND` (`node.renameSync@empty-dir`), a source kind that
/// [`select_sources`] applies once the variants are one per kind. No `--variant` at all keeps
/// everything.
///
/// Errors: [`Error::Usage`] naming `--variant` for an empty pattern (`-v ''`, `-v 'a,,b'`), an
/// invalid pattern, an unknown source kind, or a pattern that matches nothing.
pub fn select_variants(all: Vec<Variant>, patterns: &[String]) -> Result<Vec<Variant>> {
    if patterns.is_empty() {
        return Ok(all);
    }
    let pats = variant_patterns(patterns)?;
    let mut b = GlobSetBuilder::new();
    for (p, _) in &pats {
        let g =
            Glob::new(p).map_err(|e| usage("--variant", format!("'{}' is not a valid glob: {e}", p.escape_debug())))?;
        let single = g.compile_matcher();
        if !all.iter().any(|v| single.is_match(&v.id)) {
            return Err(usage(
                "--variant",
                format!("'{}' matches no variant (see `conformance variants`)", p.escape_debug()),
            ));
        }
        b.add(g);
    }
    let set = b.build().map_err(|e| usage("--variant", e.to_string()))?;
    Ok(all.into_iter().filter(|v| set.is_match(&v.id)).collect())
}

/// `--variant` patterns split into their id glob and the source kind after a last `@`, if any.
/// Errors: [`Error::Usage`] naming `--variant` for an empty pattern or an unknown kind.
fn variant_patterns(patterns: &[String]) -> Result<Vec<(String, Option<SourceKind>)>> {
    let mut out = Vec::new();
    for p in patterns.iter().flat_map(|p| p.split(',')).map(str::trim) {
        if p.is_empty() {
            let given = patterns.join(",");
            return Err(usage(
                "--variant",
                format!("'{}' has an empty pattern (use '*' for every variant)", given.escape_debug()),
            ));
        }
        let (glob, kind) = match crate::matrix::split_source_pattern(p) {
            (g, Some(k)) => {
                let kind = SourceKind::parse(k).ok_or_else(|| {
                    let known: Vec<&str> = SourceKind::ALL.iter().map(SourceKind::as_str).collect();
                    usage(
                        "--variant",
                        format!(
                            "'{}': unknown source kind '{}' (known: {})",
                            p.escape_debug(),
                            k.escape_debug(),
                            known.join(", ")
                        ),
                    )
                })?;
                (g, Some(kind))
            }
            (g, None) => (g, None),
        };
        out.push((glob.to_string(), kind));
    }
    Ok(out)
}

/// Of `variants` (one per source kind, [`Variant::per_source`], all matched by
/// [`select_variants`]), keeps those some pattern asks for: a pattern without `@KIND` takes
/// every kind of the variants it matches, one with `@KIND` only that kind. No `--variant`
/// keeps everything.
///
/// Errors: [`Error::Usage`] naming `--variant` when a `@KIND` pattern's variants take no such
/// source (naming the kinds they take).
pub fn select_sources(variants: Vec<Variant>, patterns: &[String]) -> Result<Vec<Variant>> {
    if patterns.is_empty() {
        return Ok(variants);
    }
    let pats: Vec<(globset::GlobMatcher, Option<SourceKind>, String)> = variant_patterns(patterns)?
        .into_iter()
        .map(|(g, k)| {
            let m = Glob::new(&g)
                .map_err(|e| usage("--variant", format!("'{}' is not a valid glob: {e}", g.escape_debug())))?;
            Ok((m.compile_matcher(), k, g))
        })
        .collect::<Result<_>>()?;
    for (m, kind, glob) in &pats {
        let Some(kind) = kind else { continue };
        let matched: Vec<&Variant> = variants.iter().filter(|v| m.is_match(&v.id)).collect();
        if !matched.iter().any(|v| v.source == *kind) {
            let mut kinds: Vec<&str> = matched.iter().map(|v| v.source.as_str()).collect();
            kinds.dedup();
            return Err(usage(
                "--variant",
                format!(
                    "'{}@{}': no variant it matches takes a {} source (they take: {})",
                    glob.escape_debug(),
                    kind.as_str(),
                    kind.as_str(),
                    kinds.join(", ")
                ),
            ));
        }
    }
    Ok(variants
        .into_iter()
        .filter(|v| pats.iter().any(|(m, k, _)| m.is_match(&v.id) && k.is_none_or(|k| k == v.source)))
        .collect())
}

/// `--target` as target states, in the order given, repeats dropped; `default` stands for
/// [`TargetState::DEFAULT`] and `all` for [`TargetState::ALL`]. Errors: [`Error::Usage`]
/// naming `--target` for an unknown state or an empty list.
pub fn parse_targets(s: &str) -> Result<Vec<TargetState>> {
    let mut out = Vec::new();
    for t in s.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let states: Vec<TargetState> = match t {
            "all" => TargetState::ALL.to_vec(),
            "default" => TargetState::DEFAULT.to_vec(),
            _ => vec![TargetState::parse(t).ok_or_else(|| {
                let known: Vec<&str> = TargetState::ALL.iter().map(|t| t.as_str()).collect();
                usage("--target", format!("unknown target state '{t}' (known: {}; or default, all)", known.join(", ")))
            })?],
        };
        for st in states {
            if !out.contains(&st) {
                out.push(st);
            }
        }
    }
    if out.is_empty() {
        return Err(usage("--target", "no target state given".into()));
    }
    Ok(out)
}

/// `--timeout` in seconds as a duration. Errors: [`Error::Usage`] naming `--timeout` unless it
/// is a number of seconds in (0, 3600].
pub fn parse_timeout(t: f64) -> Result<Duration> {
    if t.is_finite() && t > 0.0 && t <= 3600.0 {
        Ok(Duration::from_secs_f64(t))
    } else {
        Err(usage("--timeout", format!("{t} is not a number of seconds in (0, 3600]")))
    }
}

/// `--offsets` as microseconds, repeats dropped. Errors: [`Error::Usage`] naming `--offsets`
/// for an entry that is not a whole number of microseconds up to 1 s, or an empty list.
pub fn parse_offsets(raw: Option<&str>) -> Result<Option<Vec<u64>>> {
    let Some(raw) = raw else { return Ok(None) };
    let mut v = Vec::new();
    for part in raw.split(',').map(str::trim) {
        if part.is_empty() {
            return Err(usage("--offsets", format!("'{raw}' has an empty item (give offsets as 0,500,1000)")));
        }
        match part.parse::<u64>() {
            Ok(x) if x <= 1_000_000 => {
                if !v.contains(&x) {
                    v.push(x);
                }
            }
            _ => return Err(usage("--offsets", format!("'{part}' is not a number of microseconds from 0 to 1000000"))),
        }
    }
    if v.is_empty() {
        return Err(usage("--offsets", "no offset given".into()));
    }
    Ok(Some(v))
}

/// `--max-rate` as a probability. Errors: [`Error::Usage`] naming `--max-rate` when it is not
/// a number (or percentage) strictly between 0 and 1.
pub fn parse_max_rate(raw: Option<&str>) -> Result<Option<f64>> {
    let Some(raw) = raw else { return Ok(None) };
    let t = raw.trim();
    let parsed = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|x| x / 100.0),
        None => t.parse::<f64>(),
    };
    match parsed {
        Ok(r) if r > 0.0 && r < 1.0 => Ok(Some(r)),
        _ => Err(usage("--max-rate", format!("'{raw}' is not a rate between 0 and 1 (e.g. 0.01 or 1%)"))),
    }
}

/// The folder name every path passes through: the hostile name with `--hostile-paths`, else
/// `--path-segment`, else none. Errors: [`Error::Usage`] naming `--path-segment` when the
/// name is empty or not one path component.
pub fn parse_segment(hostile: bool, seg: Option<&str>) -> Result<Option<String>> {
    if hostile {
        return Ok(Some(crate::exec::scratch::HOSTILE_SEGMENT.to_string()));
    }
    let Some(s) = seg else { return Ok(None) };
    let mut comps = Path::new(s).components();
    match (comps.next(), comps.next()) {
        (Some(std::path::Component::Normal(_)), None) => Ok(Some(s.to_string())),
        _ => Err(usage("--path-segment", format!("'{s}' is not a single folder name"))),
    }
}

/// At most [`MAX_CONTENDERS`] contenders. Errors: [`Error::Usage`] naming `flag` when there
/// are more.
pub fn check_contenders(n: usize, flag: &str) -> Result<()> {
    if n > MAX_CONTENDERS as usize {
        return Err(usage(flag, format!("{n} contenders given; a race has at most {MAX_CONTENDERS}")));
    }
    Ok(())
}

/// Checks that `--probes` names a probes folder (one holding `PROTOCOL.md`). Errors:
/// [`Error::Usage`] naming `--probes`.
pub fn check_probes(probes: &Path) -> Result<()> {
    if probes.join("PROTOCOL.md").is_file() {
        Ok(())
    } else {
        Err(usage("--probes", format!("{} is not a probes folder (no PROTOCOL.md in it)", probes.display())))
    }
}

/// Builds or checks each found runtime's probe, then starts each session-mode probe once and
/// waits for its `hello`, with the start-up and attempt timeouts of `opts`
/// ([`engine::timeouts_for`]: `--timeout`, at least [`MIN_STARTUP`] for the start-up): a
/// runtime counts as found only when its probe speaks the protocol (a `--runtime
/// node=/bin/true` is `broken`, not measured as all-crashed). A runtime whose preparation
/// fails becomes `broken` with the reason. Returns one warning line per protocol-2 probe
/// whose `hello` does not list some of the `selected` variants of its families
/// ([`check_hello`]): their cells will be `unsupported`, and the line says so up front.
/// Never fails.
pub fn ready_runtimes(found: &mut [Runtime], ctx: &ProbeContext, opts: &Options, selected: &[&Variant]) -> Vec<String> {
    let matrix: Vec<(&str, &str)> = selected.iter().map(|v| (v.family.as_str(), v.id.as_str())).collect();
    let mut warnings = Vec::new();
    // one session probe per runtime and family, and whose it is: (index in `found`, family)
    let mut pool: Vec<Contender> = Vec::new();
    let mut owners = Vec::new();
    for (i, rt) in found.iter_mut().enumerate().filter(|(_, r)| r.status == Status::Found) {
        if let Err(why) = rt.adapter().prepare(rt, ctx) {
            rt.status = Status::Broken(why);
            continue;
        }
        if rt.adapter().mode() != Mode::Session {
            continue;
        }
        let t = engine::timeouts_for(rt.adapter(), opts);
        for family in rt.families.clone() {
            let launch = rt.adapter().launch(rt, family, ctx);
            owners.push((i, family));
            pool.push(Contender::new(Mode::Session, launch, ctx.scratch_top.clone(), t));
        }
    }
    // started all at once: the checks wait on runtimes loading, not on the CPU
    let started = crate::exec::contender::start_each(&mut pool);
    for (((i, family), c), fault) in owners.into_iter().zip(&pool).zip(started) {
        let rt = &mut found[i];
        if matches!(rt.status, Status::Broken(_)) {
            continue;
        }
        if let Some(a) = fault {
            let why = a.evidence.unwrap_or_default();
            rt.status = Status::Broken(format!("its {family} probe did not start: {why}"));
            continue;
        }
        let lacks = c.hello().and_then(|h| check_hello(h, &matrix)).map(|h| h.unknown_to_probe).unwrap_or_default();
        if !lacks.is_empty() {
            warnings.push(format!(
                "warn     {}: its {family} probe does not list {} selected variant(s) in its hello ({}); they will be unsupported",
                rt.label,
                lacks.len(),
                lacks.join(", ")
            ));
        }
    }
    warnings
}

/// What `conformance runtimes` needs to start each probe as `run` does before measuring
/// ([`ready_runtimes`]), with `run`'s default timeouts, so that `runtimes` says `found` only
/// for a runtime `run` would measure.
#[derive(Debug, Clone)]
pub struct RuntimesPlan {
    /// Where the probes are and the scratch folder goes (the system temp folder).
    pub common: Common,
    /// Engine options with `run`'s default timeouts (only the timeouts are used).
    pub options: Options,
    /// Every variant of the matrices, for the hello check.
    pub variants: Vec<Variant>,
}

impl RuntimesPlan {
    /// The plan for `paths`' probes, matrices and cache. Errors: [`Error::Usage`] naming
    /// `--probes` for a folder without `PROTOCOL.md`; [`Error::Input`] for a malformed matrix.
    pub fn new(paths: &Paths) -> Result<RuntimesPlan> {
        if let Some(p) = &paths.probes {
            check_probes(p)?;
        }
        let variants = crate::matrix::load(paths.matrices.as_deref())?;
        let common = Common {
            probes: paths.probes.clone(),
            cache: paths.cache.clone(),
            fs_root: std::env::temp_dir(),
            fs_root_given: false,
            segment: None,
            timeout: parse_timeout(crate::cli::DEFAULT_TIMEOUT_SECS)?,
            hold_ms: crate::cli::DEFAULT_HOLD_MS,
            amplify: AmplifyArg::Off,
            amplify_delay_us: crate::exec::amplify::DEFAULT_DELAY_US,
            amplify_paths: crate::exec::amplify::DelayScope::Race,
            max_rate: None,
            max_trials: crate::cli::DEFAULT_MAX_TRIALS,
            offsets: None,
        };
        let options = common.options(Shape::default(), Amplify::Off);
        Ok(RuntimesPlan { common, options, variants })
    }
}

/// Undoes every found runtime's preparation (a persistent Wine server). Never fails.
pub fn cleanup_runtimes(found: &[Runtime], ctx: &ProbeContext) {
    for rt in found.iter().filter(|r| r.status == Status::Found) {
        rt.adapter().cleanup(rt, ctx);
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::Command;
    use crate::matrix::SourceKind;
    use crate::runtime::discover;

    fn fixtures() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("fixtures")
    }

    fn cli(command: &str, args: &[&str]) -> Cli {
        let argv = ["conformance", command].into_iter().chain(args.iter().copied());
        Cli::try_parse_from(argv).unwrap_or_else(|e| panic!("{args:?}: {e}"))
    }

    fn run_plan(args: &[&str]) -> Result<RunPlan> {
        let c = cli("run", args);
        let paths = Paths::of(&c);
        match c.command {
            Command::Run(a) => RunPlan::new(&a, &paths),
            other => panic!("{other:?}"),
        }
    }

    fn race_plan(args: &[&str]) -> Result<RacePlan> {
        let c = cli("race", args);
        let paths = Paths::of(&c);
        match c.command {
            Command::Race(a) => RacePlan::new(&a, &paths),
            other => panic!("{other:?}"),
        }
    }

    const TWO: [&str; 4] = ["-c", "node:node.writeFileSync.wx", "-c", "deno:deno.writeFileSync.createNew"];

    /// Every validation error names the flag at fault, and `run` and `race` give the same one
    /// for the flags they share.
    #[test]
    fn validation_errors_name_the_flag() {
        let shared: &[(&[&str], &str)] = &[
            (&["--timeout", "0"], "--timeout"),
            (&["--timeout", "3601"], "--timeout"),
            (&["--max-rate", "5"], "--max-rate"),
            (&["--max-rate", "0"], "--max-rate"),
            (&["--offsets", "x"], "--offsets"),
            (&["--offsets", ","], "--offsets"),
            (&["--max-rate", "1%", "--max-trials", "5", "-n", "20"], "--max-trials"),
            (&["--path-segment", "a/b"], "--path-segment"),
            (&["--path-segment", ".."], "--path-segment"),
            (&["--probes", "/nonexistent"], "--probes"),
        ];
        for (args, flag) in shared {
            let run = run_plan(args).unwrap_err().to_string();
            let race = race_plan(&[&TWO[..], args].concat()).unwrap_err().to_string();
            assert!(run.contains(flag), "{args:?}: {run}");
            assert_eq!(run, race, "{args:?}: run and race disagree");
        }
        let run_only: &[(&[&str], &str)] = &[
            (&["--target", "file,fifo"], "--target"),
            (&["--target", ","], "--target"),
            (&["-v", "nope.*"], "--variant"),
            (&["-v", ""], "--variant"),
            (&["-v", "node.[x"], "--variant"),
            (&["-r", "nodee"], "--runtime"),
            (&["--require", "nodee"], "--require"),
            (&["--expect", "/nonexistent/base.json"], "/nonexistent/base.json"),
        ];
        for (args, flag) in run_only {
            let e = run_plan(args).unwrap_err().to_string();
            assert!(e.contains(flag), "{args:?}: {e}");
        }
        let race_only: &[(&[&str], &str)] = &[
            (&["-c", "node:node.writeFileSync.wx"], "at least two contenders"),
            (&["-c", "node", "-c", "node:node.writeFileSync.wx"], "is not RUNTIME:VARIANT"),
            (&["-c", "nodee:node.writeFileSync.wx", "-c", "node:node.writeFileSync.wx"], "unknown runtime 'nodee'"),
            (&["-c", "node:nope", "-c", "node:node.writeFileSync.wx"], "'nope' is not a variant"),
            (&["-c", "node:dotnet.FileMode.CreateNew", "-c", "node:node.writeFileSync.wx"], "does not run the dotnet"),
        ];
        for (args, expected) in race_only {
            let e = race_plan(args).unwrap_err().to_string();
            assert!(e.contains("--contender") && e.contains(expected), "{args:?}: {e}");
        }
        let many: Vec<&str> = std::iter::repeat_n(["-c", "node:node.writeFileSync.wx"], 65).flatten().collect();
        let e = race_plan(&many).unwrap_err().to_string();
        assert!(e.contains("--contender: 65 contenders given; a race has at most 64"), "{e}");
        assert!(check_contenders(65, "--contenders").unwrap_err().to_string().contains("--contenders"));
    }

    /// `race` runs with the defaults of `run --thorough`: the same engine options, and its
    /// trials (the one-shot trials when a one-shot runtime, cmd on Windows, takes part), all
    /// from the constants of `cli`. `run` without `--thorough` has fewer trials and adaptive
    /// ones; everything else is the same.
    #[test]
    fn race_and_run_share_defaults() {
        let quick = run_plan(&["--amplify", "off"]).unwrap();
        assert_eq!(quick.options.trials, crate::cli::DEFAULT_RUN_TRIALS as usize);
        assert!(quick.options.adaptive);
        assert_eq!(quick.options.targets, TargetState::DEFAULT.to_vec());
        let run = run_plan(&["--amplify", "off", "--thorough"]).unwrap();
        assert!(!run.options.adaptive);
        assert_eq!(run.options.targets, TargetState::ALL.to_vec(), "--thorough: every target state");
        let given = run_plan(&["--thorough", "-n", "7", "--target", "file"]).unwrap();
        assert_eq!((given.options.trials, given.options.targets), (7, vec![TargetState::File]), "flags win");
        let race = race_plan(&[&TWO[..], &["--amplify", "off"]].concat()).unwrap();
        let (r, c) = (&run.options, &race.options);
        assert!(!c.adaptive, "a cross-runtime race runs all its trials");
        assert_eq!(r.trials, crate::cli::DEFAULT_TRIALS as usize);
        assert_eq!(r.oneshot_trials, crate::cli::DEFAULT_ONESHOT_TRIALS as usize);
        assert_eq!(r.contenders, crate::cli::DEFAULT_CONTENDERS as usize);
        assert_eq!(r.timeout, Duration::from_secs_f64(crate::cli::DEFAULT_TIMEOUT_SECS));
        assert_eq!(r.hold_ms, crate::cli::DEFAULT_HOLD_MS);
        assert_eq!(r.max_trials, crate::cli::DEFAULT_MAX_TRIALS as usize);
        assert_eq!(
            (r.trials, r.oneshot_trials, r.timeout, r.startup_timeout, r.hold_ms),
            (c.trials, c.oneshot_trials, c.timeout, c.startup_timeout, c.hold_ms)
        );
        assert_eq!(
            (r.max_consecutive_faults, r.natural, r.max_rate, r.max_trials, &r.offsets),
            (c.max_consecutive_faults, c.natural, c.max_rate, c.max_trials, &c.offsets)
        );
        assert_eq!(r.startup_timeout, MIN_STARTUP);
        assert_eq!(race.trials, r.trials);
        assert_eq!(c.contenders, 2);
        assert!(c.race && !c.second_comer && c.targets.is_empty());
        // cmd runs one process per attempt on Windows (one-shot trials), a loop per contender
        // under Wine (the trials of every other runtime)
        let with_cmd = race_plan(&["-c", "node:node.writeFileSync.wx", "-c", "cmd:cmd.mkdir", "--amplify", "off"]);
        let cmd_trials = if cfg!(windows) { r.oneshot_trials } else { r.trials };
        assert_eq!(with_cmd.unwrap().trials, cmd_trials);
        let given = race_plan(&[&TWO[..], &["-n", "7", "--timeout", "40", "--amplify", "off"]].concat()).unwrap();
        assert_eq!((given.trials, given.options.startup_timeout), (7, Duration::from_secs(40)));
        // the same nonce formula for both
        let at = jiff::Timestamp::from_nanosecond(0x1234_5678_9abc_def0).unwrap();
        assert_eq!(nonce(at), "9abcdef0");
        assert_eq!(run.nonce.len(), nonce(run.date).len());
    }

    #[test]
    fn flag_values_are_parsed_once() {
        assert_eq!(parse_offsets(Some("0, 500,1000,500")).unwrap(), Some(vec![0, 500, 1000]));
        for bad in ["", "x", "-5", "2000000", "1.5", "1,,2", "1,"] {
            assert!(parse_offsets(Some(bad)).unwrap_err().to_string().contains("--offsets"), "{bad}");
        }
        assert_eq!(parse_max_rate(Some("0.01")).unwrap(), Some(0.01));
        assert_eq!(parse_max_rate(Some("2.5%")).unwrap(), Some(0.025));
        for bad in ["0", "1", "150%", "abc", "-0.1", "NaN"] {
            assert!(parse_max_rate(Some(bad)).unwrap_err().to_string().contains("--max-rate"), "{bad}");
        }
        assert_eq!(parse_targets("file, absent,file").unwrap(), [TargetState::File, TargetState::Absent]);
        assert_eq!(parse_segment(false, Some("a b")).unwrap().as_deref(), Some("a b"));
        assert!(parse_segment(true, Some("ignored")).unwrap().unwrap().contains("日本語"));
        let plan = run_plan(&["--amplify", "off", "--scenario", "second-comer", "--target", "dir,file"]).unwrap();
        assert_eq!(plan.options.targets, [TargetState::Dir, TargetState::File]);
        assert!(plan.options.second_comer && !plan.options.race);
        assert!(matches!(plan.options.amplify, Amplify::Off));
    }

    #[test]
    fn attempts_are_estimated_per_cell() {
        let race = RaceShape {
            contenders: 3,
            trials: 200,
            max_trials: Some(5000),
            natural: true,
            natural_offsets_us: None,
            amplified_offsets_us: Some(vec![0, 500]),
            amplified_unavailable: None,
        };
        let cell = |scenario, relative, race: Option<RaceShape>| CellPlan {
            id: String::new(),
            runtime: "node".into(),
            variant: "node.x".into(),
            scenario,
            target: TargetState::Absent,
            source: None,
            control: false,
            relative,
            race,
            conditional: false,
        };
        let cells = [
            cell(Scenario::SecondComer, true, None),
            cell(Scenario::SecondComer, false, None),
            cell(Scenario::Race, false, Some(race)),
        ];
        assert_eq!(cells[2].attempts(), (3 * 200 * 2, 3 * 5000 * 2));
        assert_eq!(Estimate::of(&cells), Estimate { second_comer: 3, race_min: 1200, race_max: 30000 });
    }

    /// Measures `args` for real with [`engine::measure`] and checks that the cell plans are
    /// the cells measured, in order, and that the callback (the progress bar) saw as many.
    /// Returns the ids measured, `None` when a runtime was not found or its probe did not
    /// start.
    fn cells_match_a_real_run(args: &[&str]) -> Option<Vec<String>> {
        let root = tempfile::tempdir().unwrap();
        let root_arg = root.path().display().to_string();
        let plan = run_plan(&[args, &["--fs-root", &root_arg, "--amplify", "off", "--timeout", "5"]].concat()).unwrap();
        let (mut scratch, ctx) = plan.common.workspace().unwrap();
        let mut found = discover(&plan.requested).runtimes;
        let selected: Vec<&Variant> = plan.variants.iter().collect();
        ready_runtimes(&mut found, &ctx, &plan.options, &selected);
        if let Some(rt) = found.iter().find(|r| r.status != Status::Found) {
            eprintln!("SKIPPED: {}", crate::status::status_line(rt));
            cleanup_runtimes(&found, &ctx);
            return None;
        }
        let planned: Vec<(String, bool)> = plan.cells(&found).into_iter().map(|c| (c.id, c.conditional)).collect();
        let (mut measured, mut reported) = (Vec::new(), 0);
        for rt in plan.measurable(&found) {
            let (vs, controls) = (plan.variants_of(rt), plan.control_refs());
            let mut measurement = engine::Measurement::new(&plan.options, &mut scratch, &plan.nonce);
            let m = engine::measure(rt, &vs, &controls, &mut measurement, &ctx, &mut |_| {
                reported += 1;
            });
            assert_eq!(m.scratch_failed, None);
            measured.extend(
                m.findings
                    .iter()
                    .map(|f| Cell::id_of(&rt.label, &f.variant, f.scenario, f.target, f.source, f.contenders)),
            );
        }
        cleanup_runtimes(&found, &ctx);
        assert!(!planned.is_empty(), "{args:?}");
        // a conditional race (`--races auto`) is left out where its second comers settled the
        // row; every other planned cell is measured, in order
        let kept: Vec<&String> = planned
            .iter()
            .filter(|(id, conditional)| !conditional || measured.contains(id))
            .map(|(id, _)| id)
            .collect();
        assert_eq!(kept, measured.iter().collect::<Vec<_>>(), "{args:?}");
        assert_eq!(reported, measured.len(), "{args:?}");
        drop(scratch);
        assert!(std::fs::read_dir(root.path()).unwrap().next().is_none(), "scratch folder left");
        Some(measured)
    }

    /// The cell list is what a run measures: with the fake runtime of the fault tests (its
    /// control selected or not, each scenario, targets and relative repeats), and with a real
    /// Node where one is installed.
    #[test]
    #[cfg(unix)]
    fn the_cell_list_is_what_a_run_measures() {
        let fake = format!("node={}", fixtures().join("fake-runtimes").join("faults").join("node").display());
        let matrices = fixtures().join("matrices").join("faults").display().to_string();
        let common = ["--matrices", &matrices, "-r", &fake, "-n", "2"];
        for selection in [
            &["-v", "node.fake.wx"][..],
            &["-v", "node.fake.wx", "--scenario", "second-comer", "--target", "file,absent", "--no-relative"],
            &["-v", "node.fake.wx,node.fake.check-then-create", "--scenario", "race"],
            &["-v", "node.fake.check-then-create", "--target", "dir"],
        ] {
            assert!(
                cells_match_a_real_run(&[&common[..], selection].concat()).is_some(),
                "the fake runtime must start"
            );
        }
        cells_match_a_real_run(&["-r", "node", "-v", "node.writeFileSync.wx,node.mkdirSync", "-n", "3"]);
        // `--races auto`: a row whose second comer failed (`w` replaces a file) is not raced
        let auto = ["-r", "node", "-v", "node.writeFileSync.wx,node.writeFileSync.w", "--races", "auto", "-n", "3"];
        if let Some(measured) = cells_match_a_real_run(&auto) {
            let raced = |id: &str| measured.iter().any(|m| m.contains(&format!("/{id}/race/")));
            assert!(raced("node.writeFileSync.wx") && !raced("node.writeFileSync.w"), "{measured:?}");
        }
        // `--races core`: a promise form and the other source kinds get no race cell, in the
        // plan as in the run
        let core = ["-r", "node", "-v", "node.writeFileSync.wx,node.promises.writeFile.wx,node.renameSync"];
        cells_match_a_real_run(&[&core[..], &["--races", "core", "--scenario", "race", "-n", "3"]].concat());
    }

    /// `--races core` on Bun with its control selected: the control's row (a promise form) is
    /// not a core race, yet the family's control race is planned, as the engine runs it (found
    /// in review: the dry run counted one cell too few, and the progress bar missed it).
    #[test]
    fn a_selected_control_outside_the_race_scope_is_still_raced() {
        let plan =
            run_plan(&["-r", "bun", "-v", "bun.file.exists+write,node.writeFileSync.wx", "--races", "core"]).unwrap();
        let bun = crate::runtime::Runtime {
            name: "bun",
            label: "bun 1.4.5".into(),
            version: "1.4.5".into(),
            path: Some(std::path::PathBuf::from("/bin/true")),
            status: Status::Found,
            families: crate::runtime::adapter("bun").unwrap().families().to_vec(),
            artifact: None,
            selector: "bun".into(),
            adapter: crate::runtime::adapter("bun").unwrap(),
        };
        let races: Vec<String> = plan
            .cells(std::slice::from_ref(&bun))
            .into_iter()
            .filter(|c| c.scenario == Scenario::Race)
            .map(|c| c.variant)
            .collect();
        // the node family's control (not selected) after its row, then Bun's (selected, and
        // left out before: the engine raced it, the plan did not count it)
        assert_eq!(races, ["node.writeFileSync.wx", "node.existsSync+writeFileSync", "bun.file.exists+write"]);
    }

    #[test]
    fn a_variant_pattern_may_pick_one_kind_of_source() {
        let rows = |v: &str| {
            let plan = run_plan(&["-v", v, "--amplify", "off"]).unwrap();
            plan.variants.iter().map(|v| crate::matrix::Variant::label(&v.id, v.cell_source())).collect::<Vec<_>>()
        };
        assert_eq!(rows("node.renameSync@empty-dir"), ["node.renameSync ← empty-dir"]);
        assert_eq!(rows("node.renameSync@file"), ["node.renameSync"], "the first kind keeps the plain label");
        assert_eq!(
            rows("node.renameSync"),
            ["node.renameSync", "node.renameSync ← empty-dir", "node.renameSync ← dir"]
        );
        // a kind applies to the variants of its own pattern only
        let both = rows("node.renameSync@dir,node.promises.rename");
        assert_eq!(both.len(), 4, "{both:?}");
        assert!(both.contains(&"node.renameSync ← dir".to_string()));
        for (bad, says) in [
            ("node.writeFileSync.wx@dir", "takes a dir source (they take: none)"),
            ("node.renameSync@blob", "unknown source kind 'blob'"),
            ("nothing.here@dir", "matches no variant"),
        ] {
            let e = run_plan(&["-v", bad, "--amplify", "off"]).unwrap_err().to_string();
            assert!(e.contains("--variant") && e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn the_default_run_races_every_open_row_and_quick_races_each_calls_plain_form() {
        let plan_of = |args: &[&str]| run_plan(&[args, &["--amplify", "off"]].concat()).unwrap();
        let races = |args: &[&str]| {
            let plan = plan_of(args);
            plan.variants
                .iter()
                .filter(|v| plan.options.races(v))
                .map(|v| (v.id.clone(), v.cell_source()))
                .collect::<Vec<_>>()
        };
        let has = |set: &[(String, Option<SourceKind>)], id: &str, src: Option<SourceKind>| {
            set.iter().any(|(i, s)| i == id && *s == src)
        };
        // the default: every form and source kind may be raced, each only if its second comers
        // leave the row open (the engine decides), with the trials the bound needs
        let default = plan_of(&[]);
        assert_eq!(default.options.races, RaceScope::Auto);
        assert_eq!(default.options.trials, DEFAULT_RUN_TRIALS as usize);
        assert_eq!(DEFAULT_RUN_TRIALS as usize, crate::verdict::MIN_TRIALS_FOR_SAFE, "the default reaches the bound");
        let cells = default.cells(&[]);
        assert!(cells.iter().all(|c| c.race.is_none() || c.conditional || c.control));
        for auto in [races(&[]), races(&["--races", "auto"])] {
            assert!(has(&auto, "node.promises.writeFile.wx", None));
            assert!(has(&auto, "node.renameSync", Some(SourceKind::EmptyDir)));
        }
        // --quick: each call's plain form, 30 trials
        let quick = races(&["--quick"]);
        assert_eq!(plan_of(&["--quick"]).options.trials, crate::cli::QUICK_RUN_TRIALS as usize);
        assert!(has(&quick, "node.writeFileSync.wx", None));
        assert!(has(&quick, "node.renameSync", None), "the first source kind is the plain form");
        assert!(!has(&quick, "node.renameSync", Some(SourceKind::EmptyDir)));
        assert!(!has(&quick, "node.promises.writeFile.wx", None), "a promise form is not raced by --quick");
        assert!(!has(&quick, "node.createWriteStream.wx", None));
        for all in [races(&["--thorough"]), races(&["--races", "all"]), races(&["-v", "node.*"])] {
            assert!(has(&all, "node.promises.writeFile.wx", None));
            assert!(has(&all, "node.renameSync", Some(SourceKind::EmptyDir)));
        }
        assert!(!has(&races(&["-v", "node.*", "--races", "core"]), "node.promises.writeFile.wx", None));
        assert!(races(&["--scenario", "second-comer"]).is_empty(), "no race without the race scenario");
        for bad in [
            &["--against", "all", "--contender-kind", "thread"][..],
            &["--against", "cover", "--scenario", "second-comer"],
        ] {
            let e = match run_plan(bad) {
                Err(e) => e.to_string(),
                Ok(_) => panic!("{bad:?} was accepted"),
            };
            assert!(e.contains("--against"), "{bad:?}: {e}");
        }
        assert_eq!(run_plan(&["--scenario", "second-comer"]).unwrap().against, AgainstScope::None);
        let both = Cli::try_parse_from(["conformance", "run", "--quick", "--thorough"]);
        assert!(both.is_err_and(|e| e.kind() == clap::error::ErrorKind::ArgumentConflict));
    }
}

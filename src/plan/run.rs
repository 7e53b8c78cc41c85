//! A `run`'s plan: what it selects, how it measures, where its results go, and the cells it
//! will measure ([`CellPlan`]) for the progress bar and `run --dry-run`.

use std::path::PathBuf;

use serde::Serialize;

use super::{check_contenders, nonce, parse_targets, select_sources, select_variants, Common, Paths, Shape};
use crate::against::AgainstScope;
use crate::cells::Planned;
use crate::cli::{RunArgs, ScenarioArg, DEFAULT_RUN_TRIALS, DEFAULT_TRIALS};
use crate::domain::RaceScope;
use crate::engine::Sweep;
use crate::error::{Error, Result};
use crate::exec::contender::Mode;
use crate::exec::scratch::TargetState;
use crate::matrix::Variant;
use crate::options::{Amplify, HandoffSizes, Options};
use crate::report::model::{AmplificationInfo, Cell, Results, RunInfo, RuntimeInfo, Scenario};
use crate::runtime::{Requested, Runtime, Status};

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
    /// The output folder (`--out`, default `conformance-runs/<UTC timestamp>/`).
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
    /// `--estimate-from`: that file, read.
    pub estimate_from: Option<(PathBuf, Results)>,
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
        let recipe_rows = crate::handoff::recipes().iter().map(|r| r.as_variant());
        let (recipes, variants): (Vec<Variant>, Vec<Variant>) =
            select_variants(all.into_iter().chain(recipe_rows).collect(), &a.variant)?
                .into_iter()
                .partition(|v| crate::handoff::Recipe::find(&v.id).is_some());
        // the user's own lock code is raced only when `check` gave it
        let recipes: Vec<String> = recipes
            .into_iter()
            .map(|v| v.id)
            .filter(|id| a.lock_module.is_some() || id != crate::handoff::USER_LOCK_RECIPE)
            .collect();
        // a variant measured with several kinds of source (`sources`) is one variant per kind,
        // each its own cells and table row
        let variants = select_sources(variants.iter().flat_map(Variant::per_source).collect(), &a.variant)?;
        let picked = |s: Scenario| recipes.iter().any(|id| crate::handoff::Recipe::of(s).any(|r| r.id == *id));
        let targets = parse_targets(a.target.as_deref().unwrap_or(if a.thorough { "all" } else { "default" }))?;
        let requested = Requested::parse(&a.runtime)?;
        let required = Requested::parse_for(&a.require, "--require")?;
        let baseline = a.expect.as_deref().map(crate::report::json::read).transpose()?;
        let estimate_from = match &a.estimate_from {
            Some(p) => Some((p.clone(), crate::report::json::read(p)?)),
            None => None,
        };
        let out = a.out.clone().unwrap_or_else(|| paths.default_out(date, ""));
        // thread runs measure second comers and races only: the hand-offs race processes
        let threads = a.contender_kind == crate::cli::ContenderKindArg::Thread;
        let named = |s: Scenario| a.scenario.contains(&ScenarioArg::One(s));
        let all = a.scenario.contains(&ScenarioArg::All);
        let wants = |s: Scenario| named(s) || all;
        // the mutex scenario's trials wait out takeovers: it runs only when named (or by `check`)
        let handoff = |s: Scenario| named(s) || (all && !threads && s != Scenario::Mutex);
        let shape = Shape {
            contenders: a.contenders as usize,
            trials,
            oneshot_trials: a.oneshot_trials,
            second_comer: wants(Scenario::SecondComer),
            race: wants(Scenario::Race),
            targets,
            relative: !a.no_relative,
            handoffs: Scenario::HANDOFFS.into_iter().filter(|&s| handoff(s) && picked(s)).collect(),
            sizes: HandoffSizes {
                items: a.items as usize,
                readers: a.readers as usize,
                workers: a.workers as usize,
                size: a.size as usize,
                takeover_wait_ms: a.takeover_wait * 1000,
            },
            recipes: recipes.clone(),
            lock_module: a.lock_module.as_ref().map(|p| p.display().to_string()),
            library_versions: requested.libraries.clone(),
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
        let amplify = common.detect_amplifier(shape.race || !shape.handoffs.is_empty());
        let options = common.options(shape, amplify);
        // a library version that nothing selected races would be measured nowhere: say so
        for lib in &options.library_versions {
            let of_lib: Vec<&crate::handoff::Recipe> = crate::handoff::recipes_racing(&lib.name).collect();
            if !of_lib.iter().any(|r| options.runs(r.scenario) && options.recipes.contains(&r.id)) {
                let names: Vec<String> =
                    of_lib.iter().map(|r| format!("{} (--scenario {})", r.id, r.scenario.as_str())).collect();
                return Err(Error::Usage {
                    flag: "--runtime".into(),
                    message: format!("{lib}: no selected recipe races {}; its recipes: {}", lib.name, names.join(", ")),
                });
            }
        }
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
            estimate_from,
            json: a.json,
            against,
            ignore: a.ignore.clone(),
        })
    }

    /// The selected variants `rt` runs (its families), in matrix order.
    pub fn variants_of(&self, rt: &Runtime) -> Vec<&Variant> {
        self.variants.iter().filter(|v| rt.families.contains(&v.family.as_str())).collect()
    }

    /// The detection controls, as [`crate::cells::expand`] takes them.
    pub fn control_refs(&self) -> Vec<&Variant> {
        self.controls.iter().collect()
    }

    /// The runtimes of `found` that will be measured: found and working, and running at
    /// least one selected variant.
    pub fn measurable<'a>(&self, found: &'a [Runtime]) -> Vec<&'a Runtime> {
        found.iter().filter(|r| self.measures(r)).collect()
    }

    /// True when `rt` will be measured: found and working, with a cell to measure (a selected
    /// variant or hand-off recipe).
    pub fn measures(&self, rt: &Runtime) -> bool {
        rt.status == Status::Found && !self.planned(rt).is_empty()
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
        let found_ones = || found.iter().filter(|r| r.status == Status::Found);
        if found_ones().any(|r| !self.variants_of(r).is_empty()) {
            "the selected variants, scenarios and target states give no cell to measure on the found runtimes (`run --dry-run` lists what a selection gives)".to_string()
        } else if found_ones().next().is_some() {
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
            let trials = o.trials_for([(ad.mode() == Mode::OneShot, ad.starts_cheaply())]);
            let unavailable = match (&o.amplify, ad.no_amplification()) {
                (Amplify::On(_), Some(why)) => Some(crate::domain::NoAmplified::Unavailable(why)),
                (amp, _) => amp.why_not(),
            };
            let amplified = match (&unavailable, &o.amplify) {
                (None, Amplify::On(a)) => {
                    Some(o.offsets.clone().unwrap_or_else(|| Sweep::amplified(a.delay_us()).planned()))
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

    /// The cells this plan measures on `rt`, in order ([`crate::cells::expand`]): the list
    /// [`engine::measure_with`](crate::engine::measure_with) walks.
    pub fn planned(&self, rt: &Runtime) -> Vec<Planned<'_>> {
        crate::cells::expand(&self.options, &rt.families, &self.variants_of(rt), &self.control_refs())
    }

    /// The cells a run of this plan measures on the runtimes of `found`, in the order of
    /// `results.json`: each measurable runtime's [`RunPlan::planned`] cells, with their ids
    /// and race shapes. A run reports these through its callback, in this order, less the
    /// conditional races its second comers settled ([`CellPlan::conditional`]).
    pub fn cells(&self, found: &[Runtime]) -> Vec<CellPlan> {
        let o = &self.options;
        let mut out = Vec::new();
        for rt in self.measurable(found) {
            let race = self.race_shape(rt);
            for p in self.planned(rt) {
                // hand-offs always race processes
                let kind = match p.scenario {
                    Scenario::SecondComer | Scenario::Race => o.contender_kind,
                    _ => crate::domain::ContenderKind::Processes,
                };
                out.push(CellPlan {
                    id: Cell::id_of(&rt.label, p.id(), p.scenario, p.target, p.source(), kind),
                    runtime: rt.label.clone(),
                    variant: p.id().to_string(),
                    scenario: p.scenario,
                    target: p.target,
                    source: p.source(),
                    control: p.variant().is_some_and(|v| v.control),
                    relative: p.scenario == Scenario::SecondComer && o.relative,
                    conditional: p.conditional,
                    race: (p.scenario == Scenario::Race).then(|| race.clone()).flatten(),
                });
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
            fs: crate::report::model::FsInfo {
                second_client: self.common.second_client.as_ref().map(|(_, s)| s.display().to_string()),
                ..crate::runinfo::fs_info(&self.common.fs_root)
            },
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
            fs_skipped: Vec::new(),
            phases: Vec::new(),
        }
    }

    /// What this run asks for besides its runtimes: the `--variant` patterns, the scenarios
    /// that run and the second comers' target states.
    pub fn selection(&self) -> crate::report::model::Selection {
        let o = &self.options;
        crate::report::model::Selection {
            variants: self.variant_patterns.clone(),
            scenarios: Scenario::ALL.into_iter().filter(|s| o.runs(*s)).collect(),
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
            seconds: match &self.estimate_from {
                Some((p, r)) => {
                    super::timing::estimate_seconds(&cells, super::timing::Earlier::Cells(&r.cells), p.clone())
                }
                None => super::timing::estimate_seconds(
                    &cells,
                    super::timing::Earlier::Calls(&super::timing::baseline_times()),
                    super::timing::BASELINE_RESULTS.into(),
                ),
            },
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
    /// open ([`verdict::needs_race`](crate::verdict::needs_race)), so the run may have fewer cells than its plan.
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
    /// Hand-off cells (one per recipe), whose attempts depend on `--items` and the recipe.
    pub handoff_cells: usize,
}

impl Estimate {
    /// The sum over `cells` of [`CellPlan::attempts`].
    pub fn of(cells: &[CellPlan]) -> Estimate {
        let mut e = Estimate::default();
        for c in cells {
            let (lo, hi) = c.attempts();
            if !matches!(c.scenario, Scenario::SecondComer | Scenario::Race) {
                e.handoff_cells += 1;
            } else if c.race.is_some() {
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
    /// The estimated time of the cells, from an earlier run's (`--estimate-from`, or the
    /// newest run under `conformance-runs/`), else from the committed baseline's call times
    /// built into the binary.
    pub seconds: super::timing::SecondsEstimate,
}

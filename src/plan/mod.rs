//! The validated plan of a `run` or a `race`: every flag checked once, the engine's
//! [`Options`] built once, and — once runtimes are discovered — the list of cells a run will
//! measure ([`CellPlan`]), which gives the progress bar its total and `run --dry-run` its
//! output.
//!
//! [`crate::cli`] parses (and holds every default but the limits and the quick run's trials,
//! which it re-exports); this module validates and expands, and says what it would do
//! ([`dry_run_text`]); [`crate::app`] runs and prints. `run` and `race` share every check
//! through [`Common`].
//!
//! Floor: just below [`crate::app`]; above the command line, the engine and
//! [`crate::status`].

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::cli::{AmplifyArg, AttemptArgs, Cli, PowerArgs, ScratchArgs, DEFAULT_ONESHOT_TRIALS, DEFAULT_TRIALS};
use crate::domain::RaceScope;
use crate::error::{Error, Result};
use crate::exec::scratch::{Scratch, TargetState};
use crate::options::{Amplify, HandoffSizes, Options};
use crate::report::model::AmplificationInfo;
use crate::runtime::install::Store;
use crate::runtime::{Fetch, ProbeContext};
use parse::usage;

/// A probe's start-up may take at least this long, whatever `--timeout` says.
pub const MIN_STARTUP: Duration = Duration::from_secs(30);

/// A race stops after this many trials in a row in which a contender failed before the release.
pub const MAX_CONSECUTIVE_FAULTS: usize = 3;

/// The folder, below the working folder, that holds the output folders of runs without
/// `--out` (`run`, `check`, `diff -r`), one per run named by its UTC start time.
pub const RUNS_DIR: &str = "conformance-runs";

/// What the global flags say: the folders, and whether the registry may be asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// Where the default output folders go ([`RUNS_DIR`] below it): the working folder, as
    /// the help says, spelled as an empty relative path so that messages show
    /// `conformance-runs/…`; never the folder the binary was built in.
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
    /// A relative `--probes`, `--matrices` or `--cache-dir` is made absolute against the
    /// working folder: probes run in folders of their own, where `probes/sh/probe.sh` names
    /// nothing.
    pub fn of(cli: &Cli) -> Paths {
        let home = PathBuf::new();
        let absolute = |p: &PathBuf| std::path::absolute(p).unwrap_or_else(|_| p.clone());
        Paths {
            probes: cli.probes.as_ref().map(absolute),
            matrices: cli.matrices.as_ref().map(absolute),
            cache: cli
                .cache_dir
                .as_ref()
                .map(absolute)
                .unwrap_or_else(|| dirs::cache_dir().unwrap_or_else(std::env::temp_dir).join("conformance")),
            offline: cli.offline,
            home,
        }
    }

    /// The default output folder of a run started `at`: `conformance-runs/<UTC timestamp><suffix>`
    /// below the working folder (`conformance-runs/20261205T231327Z`, `suffix` `-diff` for
    /// `diff -r`).
    pub fn default_out(&self, at: jiff::Timestamp, suffix: &str) -> PathBuf {
        self.home.join(RUNS_DIR).join(format!("{}{suffix}", at.strftime("%Y%m%dT%H%M%SZ")))
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
    /// `run --fs` on a two-client file system: (`fs_root`, the second client's view of it),
    /// both canonical; see [`Options::second_client`].
    pub second_client: Option<(PathBuf, PathBuf)>,
}

/// Checks that the scratch folder `root`, just made under the first client's root, is there
/// through the second client too (`second`: the two roots): otherwise the two are not one
/// share, and a race "between two clients" would be between two folders. A network file
/// system may show a new folder a moment late (attribute caching): it is looked for for 5 s.
///
/// Errors: [`Error::Usage`] naming `--second-client`.
fn check_second_client(root: &Path, second: &(PathBuf, PathBuf)) -> Result<()> {
    let canon = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let usage = |message: String| Error::Usage { flag: "--second-client".into(), message };
    let Ok(rest) = canon.strip_prefix(&second.0) else {
        return Err(usage(format!("the scratch folder {} is not under {}", canon.display(), second.0.display())));
    };
    let through = second.1.join(rest);
    let until = std::time::Instant::now() + Duration::from_secs(5);
    while !through.is_dir() {
        if std::time::Instant::now() > until {
            return Err(usage(format!(
                "{} is not the same share as {}: the folder {} made through the first is not {} through the second",
                second.1.display(),
                second.0.display(),
                canon.display(),
                through.display()
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
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
        let canonical = |p: &PathBuf| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
        let second_client = match (&scratch.fs_root, &scratch.second_client) {
            (Some(root), Some(second)) => Some((canonical(root), canonical(second))),
            _ => None,
        };
        // strace's -P names the race's paths as the first client sees them: with a second
        // client every listed call is delayed instead, so that both clients' contenders are
        let amplify_paths =
            if second_client.is_some() { crate::exec::amplify::DelayScope::All } else { power.amplify_paths.scope() };
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
            amplify_paths,
            max_rate,
            max_trials: power.max_trials,
            offsets,
            second_client,
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
            handoffs: shape.handoffs,
            sizes: shape.sizes,
            recipes: shape.recipes,
            lock_module: shape.lock_module,
            libraries: std::collections::BTreeMap::new(),
            library_versions: shape.library_versions,
            adaptive: shape.adaptive,
            races: shape.races,
            handoff_amplified: !shape.adaptive || self.amplify == AmplifyArg::On,
            contender_kind: shape.contender_kind,
            second_client: self.second_client.clone(),
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
            paths: matches!(amp, Amplify::On(_)).then_some(self.amplify_paths),
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
        if let Some(second) = &self.second_client {
            check_second_client(scratch.root(), second)?;
        }
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
    handoffs: Vec<crate::domain::Scenario>,
    sizes: HandoffSizes,
    recipes: Vec<String>,
    lock_module: Option<String>,
    /// Library versions to race instead of the recipes' pins (`-r NAME@VERSION`).
    library_versions: Vec<crate::handoff::LibrarySpec>,
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
            handoffs: Vec::new(),
            sizes: HandoffSizes::default(),
            recipes: Vec::new(),
            lock_module: None,
            library_versions: Vec::new(),
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

mod parse;
mod race;
mod run;
mod runtimes;
mod show;
mod timing;

pub use parse::{
    check_contenders, check_probes, parse_max_rate, parse_offsets, parse_segment, parse_targets, parse_timeout,
    select_sources, select_variants,
};
pub use race::{RacePlan, Slot};
pub use run::{CellPlan, DryRun, DryRuntime, Estimate, RaceShape, RunPlan};
pub use runtimes::{cleanup_runtimes, ready_runtimes, RuntimesPlan};
pub use show::{
    dry_run_text, fit_message, progress_message, progress_prefix_width, PROGRESS_TEMPLATE, PROGRESS_TEMPLATE_ETA,
};
pub use timing::{estimate_seconds, SecondsEstimate};

#[cfg(test)]
mod tests;

//! What a measurement is asked to do: the options of a run as the engine reads them
//! ([`Options`]), whether races are amplified ([`Amplify`]), how many trials a race counts
//! ([`Budget`]) and the hand-off scenarios' sizes. Pure data with no process I/O, so the plan
//! (which builds them from the command line) and the engine (which reads them) both depend on
//! this module and not on each other.
//!
//! Floor: above [`crate::exec`] (whose amplifier it holds) and [`crate::matrix`]; below
//! [`crate::cells`], the engine and the plan.

use std::time::Duration;

use crate::domain::{ContenderKind, NoAmplified, RaceScope, Scenario, TargetState};
use crate::exec::amplify::Amplifier;
use crate::matrix::Variant;

/// Trials per race cell of `run --quick`: its bound on a clean race, `1 − 0.05^(1/30)` = 9.5%,
/// is above the "safe as a lock" rule's 3%, so such rows say `? (-n 100)`. Also the most
/// trials a family whose detection control was weak races its other cells with
/// ([`Options::adaptive`]).
pub const QUICK_RUN_TRIALS: u32 = 30;

/// Options of a measurement.
#[derive(Debug, Clone)]
pub struct Options {
    /// Contenders per race (K).
    pub contenders: usize,
    /// Trials per race for session-mode runtimes (T).
    pub trials: usize,
    /// Trials per race for contenders that start a process per attempt (one-shot mode: cmd on
    /// Windows, or a cmd loop that did not start).
    pub oneshot_trials: usize,
    /// Per-attempt timeout (multiplied by the adapter's factor).
    pub timeout: Duration,
    /// Probe start-up timeout.
    pub startup_timeout: Duration,
    /// Run second-comer cells.
    pub second_comer: bool,
    /// Run race cells.
    pub race: bool,
    /// Target states for second-comer cells.
    pub targets: Vec<TargetState>,
    /// Also attempt each second comer with a relative path.
    pub relative: bool,
    /// Handle hold time for variants that hold a handle (ms).
    pub hold_ms: u64,
    /// Stop a race after this many consecutive faulty trials.
    pub max_consecutive_faults: usize,
    /// Run the natural race of each race cell.
    pub natural: bool,
    /// Whether and how to run the amplified race of each race cell.
    pub amplify: Amplify,
    /// `--max-rate`: keep adding trials to a race until a multi-winner trial appears or the
    /// one-sided 95% bound on the multi-winner rate falls to this (a probability).
    pub max_rate: Option<f64>,
    /// `--max-trials`: the cap on trials per race when `max_rate` is set.
    pub max_trials: usize,
    /// `--offsets`: release offsets (µs) for every race, instead of the default sweeps
    /// ([`crate::engine::Sweep::NaturalAuto`] natural, [`crate::engine::Sweep::amplified`] amplified).
    pub offsets: Option<Vec<u64>>,
    /// The hand-off scenarios that run ([`Scenario::HANDOFFS`] asked for by `--scenario`, each
    /// with a selected recipe), in that order.
    pub handoffs: Vec<Scenario>,
    /// The sizes the hand-off scenarios read, each what it needs.
    pub sizes: HandoffSizes,
    /// The hand-off recipes selected (`--variant` matches recipe ids too).
    pub recipes: Vec<String>,
    /// The libraries of the selected recipes that race one, by recipe id: the version raced
    /// and where it was installed, or why it could not be (the recipe's cells then say so).
    /// Filled before measuring.
    pub libraries: std::collections::BTreeMap<String, LibraryUse>,
    /// Library versions chosen with `-r NAME@VERSION` (`proper-lockfile@4.1.1`), raced instead
    /// of the version a recipe pins (`library` in `matrices/handoff/recipes.toml`).
    pub library_versions: Vec<crate::handoff::LibrarySpec>,
    /// The user's lock module that `mutex.module` races (`conformance check FILE`): an
    /// absolute path, handed to the probes as data; `None` outside `check`.
    pub lock_module: Option<String>,
    /// Adaptive trials (the default run; off with `--thorough`): a race run stops once it has
    /// shown a multi-winner trial and every ordering has had
    /// [`crate::engine::DISPROOF_TRIALS_PER_ORDERING`] trials, or after a trial in which a contender was
    /// prompted (either fixes the verdict: more trials cannot make it `exclusive`). A cell
    /// with an amplified race runs a natural check of [`crate::engine::NATURAL_CHECK_TRIALS_PER_ORDERING`]
    /// per ordering first; a failure there decides the cell without an amplified race
    /// ([`NoAmplified::Skipped`]). Trials go to the deciding runs of the cells still
    /// `exclusive`, whose bound needs them. A detection control runs both modes, and its
    /// judged mode all its trials. A family whose control was weak races its other cells with
    /// at most [`QUICK_RUN_TRIALS`]: an `exclusive` there is `inconclusive`
    /// whatever the trials, so only a failure can still show.
    pub adaptive: bool,
    /// Which rows are raced (`--races`): every one, each call's plain form only
    /// ([`Variant::is_core`]), or every one whose second comer did not already rule it out
    /// ([`RaceScope::Auto`], the default run's; see [`Options::races`] and [`crate::verdict::needs_race`]).
    pub races: RaceScope,
    /// Whether the hand-offs run their items a second time amplified ([`NoAmplified::NotRequested`]
    /// otherwise): with `--thorough` or `--amplify on`. The default run leaves it out for time
    /// (it about doubles the hand-offs' share; issue 13) and each cell says so.
    pub handoff_amplified: bool,
    /// `--contender-kind`: the contenders of second comers and races are processes (one probe
    /// each) or threads of one probe process ([`crate::exec::threads`]); every cell says which
    /// ([`crate::report::model::Cell::contenders`]). Hand-offs always run processes.
    pub contender_kind: ContenderKind,
    /// `run --fs` on a file system with two clients (sshfs): (the scratch folder's parent as the
    /// first client sees it, the same folder through the second client). A race's odd
    /// contenders (k1, k3, …) are given their paths through the second client, the others
    /// through the first: a race between two clients of one share
    /// ([`crate::engine::trial::client_view`]). `None`: every contender uses the first.
    pub second_client: Option<(std::path::PathBuf, std::path::PathBuf)>,
}

impl Options {
    /// Trials per race (the one rule): [`Options::oneshot_trials`] when some contender starts a
    /// process per attempt (a one-shot runtime, or a cmd loop that did not start) and starting
    /// one is slow (cmd.exe, not a shell: [`crate::runtime::Adapter::starts_cheaply`]),
    /// [`Options::trials`] otherwise. `contenders` gives, per contender, (process per attempt,
    /// starts cheaply).
    pub fn trials_for(&self, contenders: impl IntoIterator<Item = (bool, bool)>) -> usize {
        if contenders.into_iter().any(|(per_attempt, cheap)| per_attempt && !cheap) {
            self.oneshot_trials
        } else {
            self.trials
        }
    }

    /// True when `scenario` runs: its flag (`--scenario`) asked for it and, for a hand-off
    /// scenario, a recipe of it is selected.
    pub fn runs(&self, scenario: Scenario) -> bool {
        match scenario {
            Scenario::SecondComer => self.second_comer,
            Scenario::Race => self.race,
            s => self.handoffs.contains(&s),
        }
    }

    /// True when `v` may get a race cell: races run, and `v` is in their scope
    /// ([`Options::races`]). Under [`RaceScope::Auto`] the cell is made only when its second
    /// comers, measured first, leave the answer open ([`crate::verdict::needs_race`]). Detection controls are
    /// raced whenever races run, in or out of scope (see [`crate::cells::expand`]).
    pub fn races(&self, v: &Variant) -> bool {
        self.race
            && match self.races {
                RaceScope::Core => v.is_core(),
                RaceScope::Auto | RaceScope::All => true,
            }
    }
}

/// The amplified half of the races.
#[derive(Debug, Clone)]
pub enum Amplify {
    /// Not requested (`--amplify off`).
    Off,
    /// Requested, but not available on this machine: the reason.
    Unavailable(String),
    /// Requested and working.
    On(Amplifier),
}

impl Amplify {
    /// Why a cell has no amplified run under this setting (`None` when it can have one).
    pub fn why_not(&self) -> Option<NoAmplified> {
        match self {
            Amplify::Off => Some(NoAmplified::Off),
            Amplify::Unavailable(why) => Some(NoAmplified::Unavailable(why.clone())),
            Amplify::On(_) => None,
        }
    }

    /// The same setting delaying every listed call whatever it names (hand-off scenarios:
    /// their files have many names, see [`crate::exec::amplify::DelayScope`]).
    pub fn every_path(&self) -> Amplify {
        match self {
            Amplify::On(a) => Amplify::On(a.every_path()),
            other => other.clone(),
        }
    }

    /// The same, delaying only calls that name `paths` where the scope is the race's own paths
    /// ([`crate::exec::amplify::Amplifier::for_paths`]).
    pub fn for_paths(&self, paths: Vec<std::path::PathBuf>) -> Amplify {
        match self {
            Amplify::On(a) => Amplify::On(a.for_paths(paths)),
            other => other.clone(),
        }
    }
}

/// How many trials a race runs: at least `trials`; with `max_rate`, on until a multi-winner
/// trial appears or the bound reaches it, at most `max_trials`; with `disproof_per_ordering`,
/// fewer once a multi-winner trial has been seen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    /// Trials counted at least (unless a disproof ends the run, see below).
    pub trials: usize,
    /// See [`Options::max_rate`].
    pub max_rate: Option<f64>,
    /// See [`Options::max_trials`].
    pub max_trials: usize,
    /// Adaptive trials ([`Options::adaptive`]): once a multi-winner trial was seen, the run may
    /// stop when every ordering has had this many trials. `None`: it runs `trials`.
    pub disproof_per_ordering: Option<usize>,
    /// Adaptive trials, the run a detection control is judged by (amplified, or natural where
    /// there is no amplified run): see [`ControlBlocks`]. `None`: orderings in turn, all trials.
    pub control_blocks: Option<ControlBlocks>,
}

/// A detection control's run in blocks: its orderings run one after another in blocks of
/// `per` trials (not in turn), and the run stops after the first block the control rule
/// accepts for `mode` ([`crate::verdict::control::caught_enough`]): the control is judged on
/// its best ordering, and one that passes is enough. An amplified ordering that stays loose
/// (its contenders never within the delay's bound) gives way to the next one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControlBlocks {
    /// Trials per block (one ordering).
    pub per: usize,
    /// The race mode whose threshold a block must meet.
    pub mode: crate::verdict::RaceMode,
}

impl Budget {
    /// True when a race with `done` counted trials, `clean` of them clean and `multi` with two
    /// or more winners, over `orderings` release orderings taken in turn, may stop.
    pub fn enough(&self, done: usize, clean: usize, multi: usize, orderings: usize) -> bool {
        if let (Some(per), true) = (self.disproof_per_ordering, multi > 0) {
            if done >= per * orderings.max(1) {
                return true;
            }
        }
        if done < self.trials {
            return false;
        }
        match self.max_rate {
            None => true,
            Some(r) => multi > 0 || done >= self.max_trials || crate::stats::upper95(0, clean) <= r,
        }
    }
}

/// The sizes of the hand-off scenarios (`--items`, `--readers`, `--workers`, `--size`); each
/// scenario's engine file reads the ones it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HandoffSizes {
    /// Publish: files published per recipe (one trial each); claim: items in `incoming/` per
    /// trial.
    pub items: usize,
    /// Publish: readers polling each file.
    pub readers: usize,
    /// Claim: workers (separate processes) taking items; lease: takers of the stale lease;
    /// ledger: workers given the same item; update: workers adding to the counter.
    pub workers: usize,
    /// Publish and done-marker: payload bytes of each data file (which holds a header and a
    /// trailer besides).
    pub size: usize,
    /// Mutex: how long the others keep trying to take the lock of a killed or paused holder
    /// (`--takeover-wait`), ms; a killed trial nobody took it in by then is `stuck`.
    pub takeover_wait_ms: u64,
}

/// The library a recipe races in this run ([`Options::libraries`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LibraryUse {
    /// The version raced: the recipe's pin, or the one `-r NAME@VERSION` chose.
    pub spec: crate::handoff::LibrarySpec,
    /// The `node_modules` folder it was installed into ([`crate::runtime::library::ensure`]),
    /// or why it could not be.
    pub dir: Result<String, String>,
}

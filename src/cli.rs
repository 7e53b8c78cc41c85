//! Command-line flags (clap derive), mirrored as given; validation happens once, in
//! [`crate::plan`]. Every default lives here, as a constant or a clap default, and nowhere else,
//! except the limits and the quick run's trials, which lower floors read too: they live in
//! [`crate::domain`] ([`MAX_TRIALS`], [`MAX_CONTENDERS`]) and [`crate::options`]
//! ([`QUICK_RUN_TRIALS`]), and are re-exported here.
//!
//! Floor: the command line, above everything a command runs; only [`crate::plan`] and
//! [`crate::app`] read it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

const EXAMPLES: &str = "\
Examples:
  conformance run                        every runtime found: answers, tables
  conformance run -r node,deno --quick   a first look at two runtimes
  conformance report RESULTS.json --answers      which calls to use
  conformance race -c node:node.mkdirSync -c python:python.os.mkdir
  conformance check lock.mjs             race your own lock code
  conformance run --expect BASE.json --require node      a CI gate";

const AFTER_HELP: &str = "\
Exit codes:
  0  completed; with --expect, `compare` or `diff`, nothing differed
  1  completed, but an outcome differs from the expectation or baseline (`diff`: a cell differs),
     a cell the new run asked for is missing, or nothing was compared; or (docs --check) a
     document's generated tables differ from its results file
  2  bad input: unknown flag, runtime or variant pattern; malformed matrix or results file
  3  the output folder (--out), scratch root (--fs-root) or cache (--cache-dir) cannot be written
  4  no selected runtime could be found, so nothing was measured; or (install) a runtime
     version cannot be installed: --offline, npm or the registry unreachable, a failed check
  5  a runtime named by --require is missing or broken
  6  (check) the lock code hung, crashed or threw on some runtime: undetermined
 70  internal error (a bug)
130  interrupted (Ctrl-C, SIGTERM); partial results were written";

use crate::domain::Scenario;

/// `--help`'s closing text: the examples, then the exit codes.
fn concat_help() -> String {
    format!("{EXAMPLES}\n\n{AFTER_HELP}")
}

const RUN_EXAMPLES: &str = "\
Examples:
  conformance run                         every runtime found, every scenario
  conformance run -r node,bun,deno        three runtimes
  conformance run -r node -v 'node.*wx*'  one runtime, some calls
  conformance run --quick --out here      a first look, written to ./here
  conformance run -r node@22 -r node@20   two versions from npm
  conformance run --expect BASE.json -r node --require node   a CI gate";

/// `--help` groups: the flags a newcomer needs first have none (they lead, under `Options`).
const HEADING_SELECTION: &str = "Selection";
/// Flags that set how hard a race looks for a window.
const HEADING_RACES: &str = "Races";
/// Flags of the hand-off scenarios (publish, claim, lease, …, mutex).
const HEADING_HANDOFFS: &str = "Hand-offs";
/// Where the scratch folder is made and which file system it is on.
const HEADING_FILE_SYSTEM: &str = "File system";
/// What is written and printed.
const HEADING_OUTPUT: &str = "Output";
/// `diff -r`: how both runs are measured.
const HEADING_MEASURING: &str = "Measuring (with -r)";
/// The flags every command takes.
const HEADING_GLOBAL: &str = "Global";
pub use crate::domain::{MAX_CONTENDERS, MAX_TRIALS};
pub use crate::options::QUICK_RUN_TRIALS;

/// The longest `--hold-ms`, in milliseconds (one minute).
pub const MAX_HOLD_MS: u64 = 60_000;

/// Trials per race for session-mode runtimes: `race` without `--trials`, and `run --thorough`.
pub const DEFAULT_TRIALS: u32 = 200;

/// Trials per race cell of `run` without `--trials`, `--quick` or `--thorough`: the fewest with
/// which a clean race reaches the "safe as a lock" bound (`1 − 0.05^(1/100)` = 2.95% ≤ 3%), so
/// that a default run answers every row. Adaptive trials stop a failing race long before.
pub const DEFAULT_RUN_TRIALS: u32 = 100;

/// Default files published per recipe in the publish scenario (`--items`).
pub const DEFAULT_ITEMS: u32 = 40;

/// Default workers of the claim scenario (`--workers`).
pub const DEFAULT_WORKERS: u32 = 3;
/// The mutex scenario's takeover wait (`--takeover-wait`), seconds: above the 10 s default
/// staleness of proper-lockfile (`stale`, <https://github.com/moxystudio/node-proper-lockfile#lockfile-options>).
pub const DEFAULT_TAKEOVER_WAIT_SECS: u64 = 12;

/// Default readers per published file (`--readers`).
pub const DEFAULT_READERS: u32 = 2;

/// Default payload bytes per published file (`--size`): 8 writes of 4 KiB.
pub const DEFAULT_SIZE: u32 = 32 * 1024;

/// Trials per race for one-shot runtimes, which start a process per attempt (cmd on Windows,
/// and under Wine where its loop cannot start): `run --oneshot-trials`, and `race` without
/// `--trials` when a one-shot runtime takes part.
pub const DEFAULT_ONESHOT_TRIALS: u32 = 50;

/// Contenders per race of `run` (`--contenders`).
pub const DEFAULT_CONTENDERS: u32 = 3;

/// The per-attempt timeout in seconds (`--timeout`).
pub const DEFAULT_TIMEOUT_SECS: f64 = 10.0;

/// The hold time in milliseconds of variants that keep a handle open (`--hold-ms`). It must
/// outlast the release spread so that the holds of contenders released together overlap:
/// 20 ms is 5× the widest amplified release here (contender 2 of 3 released 2 × 2,000 µs after
/// contender 0, at the sweep's largest offset) and more than 10× the natural p99 spread. Each
/// trial of such a variant lasts at least this long, so it sets those cells' time: 200 trials
/// at 50 ms were 11 s per .NET runtime (issue 13).
pub const DEFAULT_HOLD_MS: u64 = 20;

/// The cap on trials per race with `--max-rate` (`--max-trials`).
pub const DEFAULT_MAX_TRIALS: u32 = 5000;

/// The global flags each command ignores (by clap id): where to find probes, matrices and
/// cached runtimes (`--probes`, `--matrices`, `--cache-dir`, `--offline`) matter only to the
/// commands that measure or list variants, and the terminal's layout (`--wide`, `--color`) only
/// to those that print tables. [`command`] hides them from those commands' help; they still
/// parse there, as a global flag must anywhere.
pub const IGNORED_GLOBALS: [(&str, &[&str]); 8] = [
    ("compare", EVERY_GLOBAL),
    ("merge", EVERY_GLOBAL),
    ("docs", EVERY_GLOBAL),
    ("completions", EVERY_GLOBAL),
    ("man", EVERY_GLOBAL),
    ("report", &["probes", "matrices", "cache_dir", "offline"]),
    // their tables hold no verdict or status word to colour
    ("variants", &["probes", "cache_dir", "offline", "color"]),
    ("install", &["probes", "matrices", "color"]),
];

/// Every global flag of [`Cli`], by clap id: what a command that neither measures nor prints
/// a table ignores.
const EVERY_GLOBAL: &[&str] = &["probes", "matrices", "cache_dir", "offline", "wide", "color"];

/// The command line as parsed and documented: [`Cli`]'s, with [`IGNORED_GLOBALS`] hidden from
/// the help of the commands that ignore them (each given a hidden copy of the global flag
/// before clap copies the global ones into every command; clap skips an id a command has).
/// `main`, `completions` and `man` use it.
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    let cli = Cli::command();
    let globals: Vec<clap::Arg> = cli.get_arguments().filter(|a| a.is_global_set()).cloned().collect();
    // mut_subcommands keeps the commands' order (mut_subcommand moves one to the end, which
    // man pages and completions list as stored)
    cli.mut_subcommands(|s| {
        let ignored = IGNORED_GLOBALS.iter().find(|(name, _)| *name == s.get_name()).map_or(&[][..], |(_, ids)| *ids);
        globals.iter().filter(|a| ignored.contains(&a.get_id().as_str())).fold(s, |s, a| s.arg(a.clone().hide(true)))
    })
}

/// Measures which file-system calls really give a process exclusive ownership of a name,
/// in Node.js, Bun, Deno, .NET (CoreCLR, Mono), PowerShell and cmd.
#[derive(Debug, Parser)]
#[command(name = "conformance", version, about, after_help = EXAMPLES, after_long_help = concat_help())]
pub struct Cli {
    /// Folder holding the probes (default: the probes built into this binary).
    #[arg(hide_short_help = true, help_heading = HEADING_GLOBAL, long, global = true, env = "CONFORMANCE_PROBES", value_name = "DIR")]
    pub probes: Option<PathBuf>,
    /// Folder holding the variant matrices (default: the matrices built into this binary).
    #[arg(hide_short_help = true, help_heading = HEADING_GLOBAL, long, global = true, env = "CONFORMANCE_MATRICES", value_name = "DIR")]
    pub matrices: Option<PathBuf>,
    /// The harness's cache of runtime versions, libraries and built probes.
    ///
    /// It holds installed runtime versions (runtimes/), the npm libraries the recipes race
    /// (libraries/), the built C# probe and user lock code, and the Wine prefix. Default: the
    /// user's cache folder, e.g. ~/.cache/conformance.
    #[arg(hide_short_help = true, help_heading = HEADING_GLOBAL, long, global = true, env = "CONFORMANCE_CACHE_DIR", value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Never ask the npm registry.
    ///
    /// A NAME@VERSION that is not installed is not found. `CONFORMANCE_OFFLINE` takes the usual boolean spellings (1/0, true/false, yes/no, on/off).
    #[arg(help_heading = HEADING_GLOBAL, long, global = true, env = "CONFORMANCE_OFFLINE", action = clap::ArgAction::SetTrue,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub offline: bool,
    /// Print tables at their full width instead of fitting them to the terminal.
    #[arg(help_heading = HEADING_GLOBAL, long, global = true)]
    pub wide: bool,
    /// Colour the words of tables and answers: auto (on a terminal, unless NO_COLOR is set),
    /// always, never.
    #[arg(help_heading = HEADING_GLOBAL, long, global = true, value_enum, value_name = "WHEN", default_value = "auto")]
    pub color: ColorArg,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure every runtime found; print the tables and the answer; write results.json,
    /// summary.md and report.html.
    #[command(after_help = RUN_EXAMPLES)]
    Run(RunArgs),
    /// Race contenders from different runtimes and variants for one name.
    ///
    /// E.g.
    /// `-c node:node.writeFileSync.wx -c deno:deno.writeFileSync.createNew -c cmd:cmd.mkdir`.
    Race(RaceArgs),
    /// Race your own lock code (a JS/TS module or a C# file) on every runtime that loads it.
    ///
    /// A JavaScript or TypeScript module exporting `acquire(path,
    /// owner)` (truthy when it took the lock, or a Promise of that) and `release(path, owner)`,
    /// or a C# file with static `Acquire`/`Release`, raced on Node, Bun and Deno (or CoreCLR
    /// and Mono) like the built-in lock recipes (the mutex scenario); prints
    /// the tables, one verdict line per runtime and a reproduction line (`--json`: the report
    /// as JSON; check.json in --out either way). Exit 0 safe, 1 unsafe (two holders at once, or
    /// a release by someone else that freed the lock) or stuck (nobody could take a killed
    /// holder's lock), 2 code that loads on no runtime or `-r` naming a runtime that cannot
    /// load it, 6 undetermined (it hung, crashed or threw).
    #[command(after_long_help = CHECK_AFTER_HELP)]
    Check(CheckArgs),
    /// List the runtimes found and the versions installed in the cache.
    ///
    /// Name, version, path and status of each, and the versions installed in the cache
    /// (`bun@1.3.14`). A runtime is `found` only when its probes start and say
    /// hello, as `run` checks before measuring; otherwise `broken` with the reason.
    Runtimes(RuntimesArgs),
    /// Install runtime or library versions into the cache: `install node@22 bun@1.3.14`.
    ///
    /// Node, bun and deno come from the npm registry, coreclr from NuGet: e.g. `install node@22.11.0 bun@1.3.14 deno@2 coreclr@8`; `run` then
    /// measures them beside what is on PATH, and `run -r bun@1.3.14` that version alone. Also
    /// a version of a library a recipe races (`install proper-lockfile@4.1.1`), which `run -r
    /// proper-lockfile@4.1.1` then races.
    Install(InstallArgs),
    /// List the variants in the matrices.
    Variants(VariantsArgs),
    /// Compare two results.json files cell by cell; exit 1 when an outcome or verdict changed.
    ///
    /// Cells are matched by runtime name, variant, scenario and target (versions ignored).
    Compare(CompareArgs),
    /// Show the cells that differ between two runs or two runtimes, with reproduction lines.
    ///
    /// Grouped by variant, with both raw
    /// errors and a reproduction line: `diff A.json B.json`, or `diff -r bun@1.1.44 -r
    /// bun@1.4.5 -v 'node.cp*'`, which measures both runtimes first, or `diff -r
    /// lockfile@1.0.3 -r lockfile@1.0.4`, two versions of a library; exit 1 when a cell differs.
    #[command(after_long_help = DIFF_AFTER_HELP)]
    Diff(DiffArgs),
    /// Render a results.json as a table, Markdown, HTML, CSV, JSON or JUnit XML.
    ///
    /// The file may be a single run's or a merged one; JUnit XML compares it with a baseline
    /// (`--expect`).
    Report(ReportArgs),
    /// Merge results.json files from several machines or file systems into one.
    ///
    /// The cells of the merged file carry a machine label (OS, kernel, file-system type).
    Merge(MergeArgs),
    /// Regenerate the tables of Markdown documents from a results file (--check: verify).
    ///
    /// The tables between `<!-- conformance:table KEY=VALUE … -->` and `<!--
    /// /conformance:table -->` markers in Markdown files from a results file (the tables of
    /// summary.md); with --check, write nothing and exit 1 when a document has drifted.
    #[command(after_long_help = DOCS_HELP)]
    Docs(DocsArgs),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
    ///
    /// E.g. `conformance completions bash >
    /// ~/.local/share/bash-completion/completions/conformance` (zsh, fish, powershell, elvish
    /// likewise).
    Completions(CompletionsArgs),
    /// Print the manual page, or write one page per command into a folder.
    ///
    /// The page is roff: read it with `conformance man | man -l -`.
    Man(ManArgs),
}

/// `completions` flags.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `man` flags.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write conformance.1 and conformance-COMMAND.1 for each command into this folder instead.
    #[arg(long, value_name = "DIR")]
    pub out: Option<std::path::PathBuf>,
}

const CHECK_AFTER_HELP: &str = "\
A lock module (lock.mjs):
  import fs from 'node:fs';
  export function acquire(path, owner) {
    try { fs.writeFileSync(path, owner, { flag: 'wx' }); return true; }
    catch (e) { if (e.code === 'EEXIST') return false; throw e; }
  }
  export function release(path, owner) {
    if (fs.readFileSync(path, 'utf8') === owner) fs.unlinkSync(path);
  }

  conformance check lock.mjs                 # node, bun and deno; natural and amplified
  conformance check lock.mjs -r node --thorough --takeover-wait 20

Your code runs inside the probes, never inside the harness; what it throws, how it hangs or
exits is reported with its stack or stderr, and the run goes on. Its console.log goes to
stderr. Verdicts come from a log the contenders append to while they believe they hold the
lock, read by the harness afterwards (docs/HANDOFF.md, \"mutex\").";

const DOCS_HELP: &str = "\
Markers (each on a line of its own; lines inside ``` or ~~~ fences are not markers):
  <!-- conformance:table runtime=node,bun scenario=second-comer variant=node.*.wx -->
  …replaced by the tables…
  <!-- /conformance:table -->

Keys (all optional; values without spaces, lists comma-separated):
  runtime=LIST    adapter names: node, bun, deno, coreclr, mono, pwsh, powershell, cmd
                  (default: every runtime in the results); one table per runtime row
  scenario=LIST   second-comer and/or race (default: both, with `safe as a lock`), or one
                  hand-off: publish, done-marker, claim (a recipe × runtime table)
  variant=GLOBS   variant or recipe ids (default: all)
  target=LIST     second-comer columns: absent, file, empty-dir, dir, self, … (default: all
                  the results hold)
  call=yes|no     the call column (hand-off tables: the steps column) (default: yes)
  results=PATH    this marker's results file, relative to the document (default: --results)

An unknown key or value, or a selection that holds no cell, exits 2 naming FILE:LINE and the
key. A file is written (atomically, keeping its permissions) only when it changes.";

/// A `--scenario` value: one scenario, as [`Scenario::as_str`] spells it, or `all`. The values
/// and their help come from [`Scenario::ALL`] and [`Scenario::about`], so a new scenario adds
/// nothing here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScenarioArg {
    /// That scenario.
    One(Scenario),
    /// All of them.
    All,
}

impl ScenarioArg {
    /// Every value, in [`Scenario::ALL`] order, then `all`.
    const VALUES: [ScenarioArg; Scenario::ALL.len() + 1] = {
        let mut v = [ScenarioArg::All; Scenario::ALL.len() + 1];
        let mut i = 0;
        while i < Scenario::ALL.len() {
            v[i] = ScenarioArg::One(Scenario::ALL[i]);
            i += 1;
        }
        v
    };
}

impl ValueEnum for ScenarioArg {
    fn value_variants<'a>() -> &'a [Self] {
        &ScenarioArg::VALUES
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(match self {
            ScenarioArg::One(s) => clap::builder::PossibleValue::new(s.as_str()).help(s.about()),
            ScenarioArg::All => clap::builder::PossibleValue::new("all").help("All of them"),
        })
    }
}

/// When to colour (`--color`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorArg {
    /// On a terminal, unless `NO_COLOR` is set (`CLICOLOR_FORCE` forces it).
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

impl ColorArg {
    /// The choice `anstream` takes.
    pub fn choice(self) -> anstream::ColorChoice {
        match self {
            ColorArg::Auto => anstream::ColorChoice::Auto,
            ColorArg::Always => anstream::ColorChoice::Always,
            ColorArg::Never => anstream::ColorChoice::Never,
        }
    }
}

/// Which variants `run` races (`--races`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RacesArg {
    /// Each call in its plain form: the synchronous form (`form = "sync"`) with its first
    /// source kind, plus every detection control; other forms and source kinds get their
    /// second-comer cells, and their race column says `not raced (--races all)`.
    Core,
    /// Every form and source kind whose second comer did not already rule it out as a lock
    /// (a name replaced, kept or gone into: no race can change that answer), plus every
    /// detection control.
    Auto,
    /// Every selected variant, in every form and with every source kind.
    All,
}

impl RacesArg {
    /// The scope `run_info.races` records.
    pub fn scope(self) -> crate::domain::RaceScope {
        match self {
            RacesArg::Core => crate::domain::RaceScope::Core,
            RacesArg::Auto => crate::domain::RaceScope::Auto,
            RacesArg::All => crate::domain::RaceScope::All,
        }
    }
}

/// Which pairs of rows `run` races against each other (`--against`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AgainstArg {
    /// No pair.
    None,
    /// Each (runtime, family, intent, name kind) at least once, placers against creators.
    Cover,
    /// Every pair of them within a name kind.
    All,
}

impl AgainstArg {
    /// The scope `run_info.against` records.
    pub fn scope(self) -> crate::against::AgainstScope {
        match self {
            AgainstArg::None => crate::against::AgainstScope::None,
            AgainstArg::Cover => crate::against::AgainstScope::Cover,
            AgainstArg::All => crate::against::AgainstScope::All,
        }
    }
}

/// What a race's contenders are (`--contender-kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum ContenderKindArg {
    /// One probe process per contender (the default).
    #[default]
    Process,
    /// K threads (workers) of one probe process, released together through shared memory;
    /// `unsupported` where the probe has no threads (cmd, PowerShell).
    Thread,
}

impl ContenderKindArg {
    /// The engine's [`crate::domain::ContenderKind`].
    pub fn kind(self) -> crate::domain::ContenderKind {
        match self {
            ContenderKindArg::Process => crate::domain::ContenderKind::Processes,
            ContenderKindArg::Thread => crate::domain::ContenderKind::Threads,
        }
    }
}

/// Which race modes to run (`--amplify`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AmplifyArg {
    /// Natural and amplified races; the amplified verdict decides where it ran.
    Both,
    /// Amplified races only (natural where amplification is unavailable).
    On,
    /// Natural races only.
    Off,
}

impl AmplifyArg {
    /// `both`, `on` or `off`.
    pub fn as_str(self) -> &'static str {
        match self {
            AmplifyArg::Both => "both",
            AmplifyArg::On => "on",
            AmplifyArg::Off => "off",
        }
    }
}

/// Which calls an amplified race delays (`--amplify-paths`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AmplifyPathsArg {
    /// Only calls that name the race's folder, target or a contender's source.
    Race,
    /// Every listed file-system call of the contender, whatever it names.
    All,
}

impl AmplifyPathsArg {
    /// The scope it asks for.
    pub fn scope(self) -> crate::exec::amplify::DelayScope {
        match self {
            AmplifyPathsArg::Race => crate::exec::amplify::DelayScope::Race,
            AmplifyPathsArg::All => crate::exec::amplify::DelayScope::All,
        }
    }
}

/// How hard races look for a window; shared by `run` and `race`.
#[derive(Debug, Clone, Args)]
pub struct PowerArgs {
    /// Race modes: both (natural and amplified), on (amplified only) or off (natural only).
    ///
    /// Natural races let the calls happen as they do; amplified ones delay every file-system
    /// system call of each contender on return, under strace (Linux).
    #[arg(value_name = "MODE", long, value_enum, default_value = "both")]
    pub amplify: AmplifyArg,
    /// Delay after each file-system call in amplified races, µs.
    ///
    /// The delay after each file-system system call in amplified races, in microseconds; only
    /// trials whose contenders entered their calls within half of it are counted.
    #[arg(long, default_value_t = crate::exec::amplify::DEFAULT_DELAY_US, value_name = "US", value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub amplify_delay_us: u64,
    /// Which calls amplified races delay: the race's own paths, or all.
    ///
    /// Which calls amplified races delay: those naming the race's own paths (its folder,
    /// target and sources; strace -P), or every listed file-system call of the contender
    /// (slower: a runtime's own start-up and bookkeeping calls are delayed too). Hand-off
    /// scenarios always delay every call.
    #[arg(hide_short_help = true, long, value_enum, default_value = "race", value_name = "WHICH")]
    pub amplify_paths: AmplifyPathsArg,
    /// Add trials until the 95% bound on the multi-winner rate falls to RATE.
    ///
    /// Keep adding trials to a race until a multi-winner trial appears or the 95% upper bound
    /// on the multi-winner rate falls to RATE (e.g. 0.01 or 1%), up to --max-trials.
    #[arg(long, value_name = "RATE")]
    pub max_rate: Option<String>,
    /// The cap on trials per race with --max-rate.
    #[arg(hide_short_help = true, value_name = "N", long, default_value_t = DEFAULT_MAX_TRIALS, requires = "max_rate", value_parser = clap::value_parser!(u32).range(1..=MAX_TRIALS as i64))]
    pub max_trials: u32,
    /// Release offsets in µs between contenders, comma-separated.
    ///
    /// Release offsets in µs, comma-separated: contender i is released i × offset after
    /// contender 0, and trials are spread over the offsets in turn. Default: amplified races
    /// sweep 0, D/2, D, 2D for delay D; natural races 0 and the measured release spread.
    #[arg(hide_short_help = true, long, value_name = "LIST", allow_hyphen_values = true)]
    pub offsets: Option<String>,
}

/// How long an attempt may take and how long a held handle is held; shared by `run` and `race`.
#[derive(Debug, Clone, Args)]
pub struct AttemptArgs {
    /// Per-attempt timeout in seconds.
    ///
    /// Per-attempt timeout in seconds (multiplied for slow runtimes: cmd ×3, PowerShell ×2);
    /// a probe's start-up may take max(30 s, this).
    #[arg(hide_short_help = true, long, default_value_t = DEFAULT_TIMEOUT_SECS, value_name = "SECS")]
    pub timeout: f64,
    /// Hold time in milliseconds for variants that keep a handle open (dotnet.FileShare.None);
    /// at most 60000.
    #[arg(hide_short_help = true, value_name = "MS", long, default_value_t = DEFAULT_HOLD_MS, value_parser = clap::value_parser!(u64).range(0..=MAX_HOLD_MS))]
    pub hold_ms: u64,
}

/// `check` flags.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Your lock code: .mjs/.js/.cjs/.ts/.mts exporting acquire/release, or .cs.
    ///
    /// Your lock code: .mjs, .js, .cjs (Node, Bun, Deno) or .ts, .mts (Deno, Bun), exporting
    /// acquire(path, owner) and release(path, owner), as named exports or on its default export;
    /// or .cs (CoreCLR, Mono; compiled first with Mono's mcs or the .NET SDK), a public type with
    /// `public static bool Acquire(string path, string owner)` (or `Task<bool>`) and
    /// `Release(string path, string owner)`.
    #[arg(value_name = "MODULE")]
    pub module: PathBuf,
    /// Runtimes to race it on (default: every runtime that can load it).
    ///
    /// Runtimes to race it on (names, NAME@VERSION, NAME=PATH, as `run -r`). Default: node,
    /// bun and deno for JavaScript, deno and bun for TypeScript, coreclr and mono for C#;
    /// those not found are skipped and said so.
    #[arg(long, short = 'r', value_name = "LIST")]
    pub runtime: Vec<String>,
    /// Contenders per trial (separate processes).
    #[arg(value_name = "N", help_heading = HEADING_RACES, long, default_value_t = DEFAULT_WORKERS, value_parser = clap::value_parser!(u32).range(2..=MAX_CONTENDERS as i64))]
    pub workers: u32,
    /// Seconds the others try to take a killed holder's lock.
    ///
    /// Seconds the others keep trying to take the lock of a killed or paused holder; set it
    /// above your lock's staleness threshold, or a lock that takes stale locks over shows as
    /// stuck.
    #[arg(help_heading = HEADING_RACES, long, value_name = "SECS", default_value_t = DEFAULT_TAKEOVER_WAIT_SECS, value_parser = clap::value_parser!(u64).range(1..=600))]
    pub takeover_wait: u64,
    /// Five rounds of trials instead of one (up to 175 per mode instead of 35).
    #[arg(help_heading = HEADING_RACES, long)]
    pub thorough: bool,
    /// Pass a lock nobody could take after its holder was killed.
    ///
    /// Pass (exit 0) a lock that nobody could take after its holder was killed (no stale-lock
    /// takeover within --takeover-wait): for a lock meant to wait for an operator after a crash.
    #[arg(help_heading = HEADING_RACES, long)]
    pub allow_stuck: bool,
    /// Per-attempt timeout in seconds: user code that takes longer is reported as hanging.
    #[arg(help_heading = HEADING_RACES, long, default_value_t = DEFAULT_TIMEOUT_SECS, value_name = "SECS")]
    pub timeout: f64,
    /// Output folder for results.json, summary.md and check.json (default:
    /// conformance-runs/TIMESTAMP/).
    #[arg(help_heading = HEADING_OUTPUT, long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Replace the results of an earlier run in --out.
    #[arg(help_heading = HEADING_OUTPUT, long)]
    pub force: bool,
    /// No progress bar or status lines.
    #[arg(help_heading = HEADING_OUTPUT, long, short = 'q')]
    pub quiet: bool,
    /// Print only the check's report as JSON.
    ///
    /// Print only the check's report as JSON (module, verdict, exit_code, runtimes, repro,
    /// results), as check.json holds it; no tables, no status lines.
    #[arg(help_heading = HEADING_OUTPUT, long)]
    pub json: bool,
}

/// `run` flags.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Runtimes to measure: node, bun@1.3.14, deno=/path/to/deno, … (default: all found).
    ///
    /// Runtimes to measure: names (node, bun, deno, coreclr, mono, pwsh, powershell, cmd),
    /// NAME=PATH for an explicit executable, and NAME@VERSION (node, bun, deno from npm,
    /// coreclr from NuGet) for a version from the cache, installed on first use (a range such
    /// as `node@22` takes the highest installed one, else the registry's); comma-separated or
    /// repeated. A comma inside a PATH or range is kept unless a runtime name follows it: `-r
    /// node=/opt/a,b/node,deno` is that node and deno. LIBRARY@VERSION (an exact version of a
    /// library a recipe races: proper-lockfile, lockfile, @rushstack/node-core-library,
    /// write-file-atomic, steno, atomically, fs-extra) races that version instead of the
    /// recipe's pin, installed on first use. Default: all on PATH and every version installed
    /// in the cache (`conformance runtimes` lists them).
    #[arg(long, short = 'r', value_name = "LIST")]
    pub runtime: Vec<String>,
    /// Variant ids to run, as glob patterns (e.g. 'node.*.wx', '*mkdir*'); comma-separated or repeated.
    #[arg(long, short = 'v', value_name = "GLOB")]
    pub variant: Vec<String>,
    /// A first look in about half the time (30 trials, plain forms raced).
    ///
    /// A first look in about half the time: 30 trials per race cell (unless --trials) and
    /// each call raced in its plain form only (unless --races); rows that need more say
    /// `? (-n 100)` or `? (--races all)`.
    #[arg(long)]
    pub quick: bool,
    /// Output folder [default: conformance-runs/TIMESTAMP/].
    ///
    /// Output folder for results.json and summary.md (default: conformance-runs/TIMESTAMP/). A
    /// folder that holds an earlier run's results is refused unless --force.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Scenarios to run; comma-separated or repeated.
    #[arg(value_name = "LIST", help_heading = HEADING_SELECTION, long, value_enum, value_delimiter = ',', default_value = "all")]
    pub scenario: Vec<ScenarioArg>,
    /// Hand-offs: worker processes per recipe.
    ///
    /// Claim scenario: workers (separate processes) taking items; lease scenario: takers of
    /// the stale lease; ledger: workers given the same item; update: workers adding to the
    /// counter (a reader besides); mutex: contenders for the lock.
    #[arg(value_name = "N", help_heading = HEADING_HANDOFFS, long, default_value_t = DEFAULT_WORKERS, value_parser = clap::value_parser!(u32).range(2..=MAX_CONTENDERS as i64))]
    pub workers: u32,
    /// Publish: files published per recipe (one trial each); claim: items in incoming/ per trial.
    #[arg(hide_short_help = true, value_name = "N", help_heading = HEADING_HANDOFFS, long, default_value_t = DEFAULT_ITEMS, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub items: u32,
    /// Publish scenario: readers polling each file.
    #[arg(hide_short_help = true, value_name = "N", help_heading = HEADING_HANDOFFS, long, default_value_t = DEFAULT_READERS, value_parser = clap::value_parser!(u32).range(1..=MAX_CONTENDERS as i64))]
    pub readers: u32,
    /// Publish scenario: payload bytes per file (written in 4 KiB chunks, with a header and a trailer).
    #[arg(hide_short_help = true, value_name = "BYTES", help_heading = HEADING_HANDOFFS, long, default_value_t = DEFAULT_SIZE, value_parser = clap::value_parser!(u32).range(1..=16 * 1024 * 1024))]
    pub size: u32,
    /// Mutex scenario: seconds the others try to take a killed holder's lock.
    ///
    /// Mutex scenario: seconds the others keep trying to take the lock of a killed or paused
    /// holder; a killed holder's lock nobody took by then is `stuck`. Above the lock's own
    /// staleness threshold, or a lock that takes stale locks over shows as stuck.
    #[arg(hide_short_help = true, help_heading = HEADING_HANDOFFS, long, value_name = "SECS", default_value_t = DEFAULT_TAKEOVER_WAIT_SECS, value_parser = clap::value_parser!(u64).range(1..=600))]
    pub takeover_wait: u64,
    /// The user's lock module `mutex.module` races (set by `conformance check`, absolute).
    #[arg(skip)]
    pub lock_module: Option<std::path::PathBuf>,
    /// Second comer: target states to meet (absent, file, empty-dir, dir, …, all).
    ///
    /// Target states for the second comer, comma-separated: absent, file, empty-dir, dir (the
    /// default); self, self-hardlink, self-symlink (the target is the variant's own source;
    /// variants with a file source only); symlink-to-file, symlink-to-dir, dangling-symlink.
    /// `all` names every state, `default` the first four.
    /// Default: `default`, or `all` with --thorough.
    #[arg(help_heading = HEADING_SELECTION, long, value_name = "LIST")]
    pub target: Option<String>,
    /// Scratch folder options.
    #[command(flatten, next_help_heading = HEADING_FILE_SYSTEM)]
    pub scratch: ScratchArgs,
    /// Measure on file systems made for the run (tmpfs, ext4, xfs, …, all; root).
    ///
    /// Measure on file systems the harness makes itself, one after the other, in a private
    /// mount namespace (Linux, as root): tmpfs, ext4, xfs, btrfs, overlay, exfat, sshfs
    /// (comma-separated), or `all`. Each is made with the Debian tools, measured as a run with
    /// --fs-root on it would be (its own results in OUT/fs/NAME/), and removed afterwards; one
    /// whose tool, kernel support or privilege is missing is skipped with the reason. The
    /// results hold one table per runtime and file system and name the cells that differ
    /// between them (docs/FILESYSTEMS.md).
    #[arg(help_heading = HEADING_FILE_SYSTEM, long, value_name = "LIST", conflicts_with = "fs_root")]
    pub fs: Option<String>,
    /// Trials per race cell [default: 100, 30 with --quick, 200 with --thorough].
    ///
    /// Trials per race cell [default: 100, 30 with --quick, 200 with --thorough]; "safe as a
    /// lock" needs 100 clean trials.
    #[arg(value_name = "N", help_heading = HEADING_RACES, long, short = 'n', value_parser = clap::value_parser!(u32).range(1..=MAX_TRIALS as i64))]
    pub trials: Option<u32>,
    /// Measure thoroughly: 200 trials, every target state, no adaptive stop.
    ///
    /// Measure thoroughly, as long as it takes: 200 trials per race cell (unless --trials
    /// says otherwise), every target state (unless --target), and every race runs all its
    /// trials in every ordering (no adaptive stop once a failure is seen).
    #[arg(help_heading = HEADING_RACES, long, conflicts_with = "quick")]
    pub thorough: bool,
    /// Which variants are raced: auto, core or all.
    ///
    /// Which variants are raced: `auto` (every form and source kind whose second comer did
    /// not already rule it out), `core` (each call in its synchronous form with its first
    /// source kind) or `all`. Default: `auto`; `core` with --quick; `all` with --thorough or
    /// --variant (a variant asked for by name is raced).
    #[arg(help_heading = HEADING_SELECTION, long, value_enum, value_name = "SCOPE")]
    pub races: Option<RacesArg>,
    /// Race calls against other calls of the same intent: cover, all or none.
    ///
    /// Against whom a call holds: after the rows are measured, those that held against
    /// copies of themselves are raced in pairs of two different calls that leave the same
    /// kind of entry (file, directory, symbolic link) at the name. `cover` races each
    /// (runtime, family, intent) at least once, a call that places a source of its own
    /// (rename, move, copy, link) against one that creates the entry, from another runtime
    /// where there is one; `all` every pair; `none` no pair. Default: `cover`; `all` with
    /// --thorough; `none` with --quick.
    #[arg(help_heading = HEADING_SELECTION, long, value_enum, value_name = "SCOPE")]
    pub against: Option<AgainstArg>,
    /// Trials per race cell for runtimes that start a process per attempt.
    ///
    /// Trials per race cell for one-shot runtimes (one process per attempt: cmd on Windows, or where its loop cannot start).
    #[arg(hide_short_help = true, value_name = "N", help_heading = HEADING_RACES, long, default_value_t = DEFAULT_ONESHOT_TRIALS, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub oneshot_trials: u32,
    /// Race modes, bounds and adaptive trials.
    #[command(flatten, next_help_heading = HEADING_RACES)]
    pub power: PowerArgs,
    /// Contenders per race (separate processes, or threads with --contender-kind thread).
    #[arg(value_name = "K", help_heading = HEADING_RACES, long, short = 'k', default_value_t = DEFAULT_CONTENDERS, value_parser = clap::value_parser!(u32).range(2..=MAX_CONTENDERS as i64))]
    pub contenders: u32,
    /// Contenders are separate processes or threads of one process.
    ///
    /// What the contenders of second comers and races are: separate processes, or threads of
    /// one probe process (cells then say `contenders: threads`; the hand-off scenarios are not
    /// run).
    #[arg(hide_short_help = true, value_name = "KIND", help_heading = HEADING_RACES, long, value_enum, default_value = "process")]
    pub contender_kind: ContenderKindArg,
    /// Per-attempt timeout and hold time.
    #[command(flatten, next_help_heading = HEADING_RACES)]
    pub attempt: AttemptArgs,
    /// Replace the results an earlier run left in --out.
    #[arg(help_heading = HEADING_OUTPUT, long)]
    pub force: bool,
    /// Skip the relative-path repeat of each second-comer attempt.
    #[arg(hide_short_help = true, help_heading = HEADING_SELECTION, long)]
    pub no_relative: bool,
    /// Fail (exit 5) unless these runtimes are found and working.
    ///
    /// Fail (exit 5) unless these runtimes are found and working (NAME, or NAME@VERSION for a
    /// version in that range); comma-separated. For CI.
    #[arg(help_heading = HEADING_SELECTION, long, value_name = "LIST")]
    pub require: Vec<String>,
    /// Compare with a baseline results.json and exit 1 when an outcome differs.
    #[arg(help_heading = HEADING_OUTPUT, long, value_name = "FILE")]
    pub expect: Option<PathBuf>,
    /// With --expect: facts not to compare (error-code, delivery, returned, fault).
    ///
    /// With --expect: facts not to compare, comma-separated: a second comer's `error-code`,
    /// `delivery`, `returned`, a failed pair's `fault` (the outcome and verdict are always
    /// compared).
    #[arg(help_heading = HEADING_OUTPUT, long, value_enum, value_delimiter = ',', value_name = "FACT", requires = "expect")]
    pub ignore: Vec<crate::compare::Fact>,
    /// No progress bar or status lines: the tables, the answers and the closing line.
    ///
    /// Skip lines, warnings and installations are still said.
    #[arg(help_heading = HEADING_OUTPUT, long, short = 'q')]
    pub quiet: bool,
    /// Print what would be measured (cells, trials, attempts); measure nothing.
    ///
    /// Discover the runtimes and check their probes, then print what would be measured (the
    /// cells, trials per race, offsets, an estimate of the attempts) without racing anything
    /// or writing results.
    #[arg(help_heading = HEADING_OUTPUT, long)]
    pub dry_run: bool,
    /// With --dry-run: the results.json whose cells' times estimate the run's.
    ///
    /// With --dry-run: the results.json (an earlier run, or the committed baseline
    /// reports/linux/results.json) whose cells' times give the estimate in seconds: each cell
    /// its own time there, or its call's on another runtime or version, or its scenario's
    /// median. Default: the newest conformance-runs/*/results.json under the working folder.
    #[arg(help_heading = HEADING_OUTPUT, long, value_name = "FILE", requires = "dry_run", hide_short_help = true)]
    pub estimate_from: Option<PathBuf>,
    /// Print the results as JSON instead of the tables.
    ///
    /// Print the results on stdout as JSON (what results.json holds) instead of the tables;
    /// with --dry-run, the plan.
    #[arg(help_heading = HEADING_OUTPUT, long)]
    pub json: bool,
}

impl RunArgs {
    /// The flags of a bare `conformance run`, each at the default clap gives it. Commands that
    /// measure through `run` (`diff`) start from these, so a new `run` flag gets its default
    /// there without being named. Panics only if a default of `run` does not parse, which the
    /// unit tests would show.
    pub fn defaults() -> RunArgs {
        #[derive(Parser)]
        struct Bare {
            #[command(flatten)]
            run: RunArgs,
        }
        Bare::try_parse_from(["run"]).map(|b| b.run).unwrap_or_else(|e| panic!("a bare `run` must parse: {e}"))
    }
}

/// `race` flags.
#[derive(Debug, Args)]
pub struct RaceArgs {
    /// A contender as RUNTIME:VARIANT, repeated (2 to 64).
    ///
    /// A contender as RUNTIME:VARIANT (runtime by name, e.g. node, deno, coreclr, mono, cmd,
    /// or NAME@VERSION, e.g. bun@1.3.14, installed on first use); at least two and at most 64,
    /// repeated.
    #[arg(long = "contender", short = 'c', value_name = "RUNTIME:VARIANT", required = true, num_args = 1)]
    pub contenders: Vec<String>,
    /// Contenders are separate processes or threads of one process.
    ///
    /// Separate processes, or threads of one probe process (then every contender must name the
    /// same runtime and API family).
    #[arg(value_name = "KIND", help_heading = HEADING_RACES, long, value_enum, default_value = "process")]
    pub contender_kind: ContenderKindArg,
    /// Trials (default: 200, or 50 when a one-shot runtime such as cmd takes part).
    #[arg(value_name = "N", help_heading = HEADING_RACES, long, short = 'n', value_parser = clap::value_parser!(u32).range(1..=MAX_TRIALS as i64))]
    pub trials: Option<u32>,
    /// Per-attempt timeout and hold time.
    #[command(flatten, next_help_heading = HEADING_RACES)]
    pub attempt: AttemptArgs,
    /// Race modes, bounds and adaptive trials.
    #[command(flatten, next_help_heading = HEADING_RACES)]
    pub power: PowerArgs,
    /// Scratch folder options.
    #[command(flatten, next_help_heading = HEADING_FILE_SYSTEM)]
    pub scratch: ScratchArgs,
    /// Also write cross-race.json into this folder.
    ///
    /// Also write cross-race.json into this folder; one that already holds a cross-race.json
    /// is refused unless --force.
    #[arg(help_heading = HEADING_OUTPUT, long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Replace the cross-race.json an earlier race left in --out.
    #[arg(help_heading = HEADING_OUTPUT, long, requires = "out")]
    pub force: bool,
    /// Print JSON instead of a table.
    #[arg(help_heading = HEADING_OUTPUT, long)]
    pub json: bool,
}

/// `runtimes` flags.
#[derive(Debug, Args)]
pub struct RuntimesArgs {
    /// Runtimes to look for, as for `run -r` (default: all).
    ///
    /// Runtimes to look for (as for `run --runtime`; a NAME@VERSION is looked for in the cache
    /// only, never fetched). Default: all on PATH and every version in the cache.
    #[arg(long, short = 'r', value_name = "LIST")]
    pub runtime: Vec<String>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// `install` flags.
#[derive(Debug, Args)]
pub struct InstallArgs {
    /// Versions as NAME@VERSION: node@22, bun@1.3.14, deno@2, coreclr@8, a library.
    ///
    /// Versions as NAME@VERSION: node, bun or deno at an exact version (1.3.14), a range (22,
    /// 22.11, ^1.3, '>=1.1 <1.2': the highest published) or latest; or a library that a
    /// hand-off recipe races (proper-lockfile, lockfile, @rushstack/node-core-library,
    /// write-file-atomic, steno, atomically, fs-extra) at an exact version, which `run -r` then
    /// races.
    #[arg(required = true, value_name = "NAME@VERSION")]
    pub versions: Vec<String>,
    /// Print what was installed as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `variants` flags.
#[derive(Debug, Args)]
pub struct VariantsArgs {
    /// Glob patterns, as for `run --variant`.
    #[arg(long, short = 'v', value_name = "GLOB")]
    pub variant: Vec<String>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

const DIFF_AFTER_HELP: &str = "\
A cell differs when its second-comer outcome (or relative-path outcome) changed, its error code
changed with the same outcome, its amplified race verdict changed, its natural verdict changed
significantly (Fisher's exact test, p < 0.001; natural-only or where the amplified verdicts
agree), or a hand-off failure counter changed significantly. Cells are matched by runtime name,
variant, scenario and target; when each side holds one runtime (as with -r), by variant,
scenario and target alone, so `-r node -r deno` compares Deno's node:fs with Node's.

Each changed cell shows both sides as the tables do, their raw errors, and a line to paste
into a shell: `node -e …`, `bun -e …`, `deno eval …`, `pwsh -NoProfile -c …` or `cmd /c …`
(cmd.exe; under Wine, the harness line) for second comers whose call is a statement of its language;
otherwise (races, .NET, calls made of several steps) `conformance run -r NAME=PATH -v VARIANT
--scenario … --target …`, which measures that one cell again with the same probe.

Exit codes: 0 nothing differs, 1 a cell differs, 2 bad input (a results file that cannot be
read, a flag), 4 a runtime of -r cannot be found or installed; the others as for `run`.";

/// `diff` flags: two results files, or two runtimes to measure (`-r`, twice) with a subset of
/// `run`'s flags.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// Two results.json files (single or merged, any schema `report` reads): A, then B. Not
    /// with --runtime.
    #[arg(value_name = "FILE", num_args = 0..=2, conflicts_with = "runtime")]
    pub files: Vec<PathBuf>,
    /// Facts not to compare (error-code, delivery, returned, fault).
    ///
    /// Facts not to compare, comma-separated: a second comer's `error-code`, `delivery`,
    /// `returned`, a failed pair's `fault` (the outcome and verdict are always compared).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "FACT")]
    pub ignore: Vec<crate::compare::Fact>,
    /// Two runtimes (or library versions) to measure and compare, A then B.
    ///
    /// Two runtimes to measure and compare, A then B, as for `run --runtime` (NAME,
    /// NAME@VERSION installed on first use, NAME=PATH); or two versions of one library
    /// (`-r lockfile@1.0.3 -r lockfile@1.0.4`, with the runtimes to race them on besides:
    /// default all); repeated or comma-separated.
    #[arg(long, short = 'r', value_name = "RUNTIME")]
    pub runtime: Vec<String>,
    /// With -r: variant ids to run, as glob patterns (e.g. 'node.cp*'); comma-separated or
    /// repeated. Default: all.
    #[arg(help_heading = HEADING_MEASURING, long, short = 'v', value_name = "GLOB")]
    pub variant: Vec<String>,
    /// With -r: scenarios to run; comma-separated or repeated.
    #[arg(value_name = "LIST", help_heading = HEADING_MEASURING, long, value_enum, value_delimiter = ',', default_value = "all")]
    pub scenario: Vec<ScenarioArg>,
    /// With -r: target states for the second comer, as for `run --target`.
    ///
    /// With -r: target states for the second comer, as for `run --target` [default: `default`,
    /// or `all` with --thorough].
    #[arg(help_heading = HEADING_MEASURING, long, value_name = "LIST")]
    pub target: Option<String>,
    /// With -r: trials per race cell, as for `run` [default: 100, 30 with --quick, 200 with
    /// --thorough].
    #[arg(value_name = "N", help_heading = HEADING_MEASURING, long, short = 'n', value_parser = clap::value_parser!(u32).range(1..=MAX_TRIALS as i64))]
    pub trials: Option<u32>,
    /// With -r: measure both as `run --thorough` does.
    ///
    /// With -r: measure both as `run --thorough` does (200 trials, every target state, no
    /// adaptive stop, hand-offs amplified too).
    #[arg(help_heading = HEADING_MEASURING, long, conflicts_with = "quick")]
    pub thorough: bool,
    /// With -r: measure both as `run --quick` does (30 trials, each call raced in its plain
    /// form only).
    #[arg(help_heading = HEADING_MEASURING, long)]
    pub quick: bool,
    /// With -r: contenders (separate processes) per race.
    #[arg(value_name = "K", help_heading = HEADING_MEASURING, long, short = 'k', default_value_t = DEFAULT_CONTENDERS, value_parser = clap::value_parser!(u32).range(2..=MAX_CONTENDERS as i64))]
    pub contenders: u32,
    /// With -r: race modes, bounds and adaptive trials.
    #[command(flatten, next_help_heading = HEADING_MEASURING)]
    pub power: PowerArgs,
    /// With -r: per-attempt timeout and hold time.
    #[command(flatten, next_help_heading = HEADING_MEASURING)]
    pub attempt: AttemptArgs,
    /// With -r: scratch folder options.
    #[command(flatten, next_help_heading = HEADING_MEASURING)]
    pub scratch: ScratchArgs,
    /// With -r: skip the relative-path repeat of each second-comer attempt.
    #[arg(help_heading = HEADING_MEASURING, long)]
    pub no_relative: bool,
    /// With -r: where the two runs' results go [default: conformance-runs/TIMESTAMP-diff/].
    ///
    /// With -r: where the two runs' results go, as DIR/a/ and DIR/b/ (results.json and
    /// summary.md; `diff DIR/a/results.json DIR/b/results.json` shows the same diff again).
    /// Default: conformance-runs/TIMESTAMP-diff/.
    #[arg(help_heading = HEADING_MEASURING, long, value_name = "DIR")]
    pub runs_dir: Option<PathBuf>,
    /// Output format.
    ///
    /// Output format: the changed cells as text, Markdown, JSON, or JUnit XML (one test case
    /// per compared cell, a changed cell a failure).
    #[arg(help_heading = HEADING_OUTPUT, value_name = "FORMAT", long, short = 'f', value_enum, default_value = "table")]
    pub format: DiffFormat,
    /// Write the diff to FILE (atomically) instead of stdout.
    #[arg(help_heading = HEADING_OUTPUT, long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// With -r: no status lines or progress bar while measuring.
    #[arg(help_heading = HEADING_MEASURING, long, short = 'q')]
    pub quiet: bool,
}

/// Output formats of `diff`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DiffFormat {
    /// Text: per variant, each changed cell with both sides, raw errors and reproductions.
    #[value(alias = "text")]
    Table,
    /// Markdown.
    #[value(alias = "markdown")]
    Md,
    /// JSON: the report (groups of changed cells, unchanged keys, noise, missing, new).
    Json,
    /// JUnit XML.
    Junit,
    /// HTML: the changed cells, then B's answer heatmap with the changed cells outlined.
    Html,
}

/// `compare` flags.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline results.json.
    pub base: PathBuf,
    /// The new results.json.
    pub new: PathBuf,
    /// Output format: text, or JUnit XML.
    ///
    /// Output format: the text list of differences, or JUnit XML (one test case per compared
    /// cell, a changed cell a failure).
    #[arg(value_name = "FORMAT", long, short = 'f', value_enum, default_value = "text")]
    pub format: CompareFormat,
    /// Write the output to FILE (atomically) instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Facts not to compare (error-code, delivery, returned, fault).
    ///
    /// Facts not to compare, comma-separated: a second comer's `error-code`, `delivery`,
    /// `returned`, a failed pair's `fault` (the outcome and verdict are always compared).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "FACT")]
    pub ignore: Vec<crate::compare::Fact>,
}

/// Output formats of `compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareFormat {
    /// One line per difference and a count line.
    Text,
    /// JUnit XML.
    Junit,
}

/// Output formats of `report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Terminal tables.
    Table,
    /// Markdown (summary.md).
    #[value(alias = "markdown")]
    Md,
    /// One self-contained HTML page.
    Html,
    /// CSV, one row per cell.
    Csv,
    /// JSON (results.json).
    Json,
    /// JUnit XML of a comparison with `--expect BASE`.
    Junit,
}

/// `report` flags.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A results.json (single or merged).
    pub results: PathBuf,
    /// Output format (`markdown` is an alias of `md`).
    #[arg(value_name = "FORMAT", long, short = 'f', value_enum, default_value = "table")]
    pub format: Format,
    /// A baseline results.json to compare against (required by, and only used with,
    /// `--format junit`).
    #[arg(long, value_name = "BASE")]
    pub expect: Option<PathBuf>,
    /// With --expect: facts not to compare, comma-separated: a second comer's `error-code`,
    /// `delivery`, `returned`, a failed pair's `fault`.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "FACT", requires = "expect")]
    pub ignore: Vec<crate::compare::Fact>,
    /// Write the output to FILE (atomically) instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Only these runtimes (names: node, coreclr, …); comma-separated or repeated.
    #[arg(help_heading = HEADING_SELECTION, long, short = 'r', value_name = "LIST", value_delimiter = ',')]
    pub runtime: Vec<String>,
    /// Only these variants or recipes, as glob patterns; comma-separated or repeated.
    #[arg(help_heading = HEADING_SELECTION, long, short = 'v', value_name = "GLOB")]
    pub variant: Vec<String>,
    /// Only these scenarios; comma-separated or repeated.
    ///
    /// `second-comer` and `race` each select the call tables whole (a call's answer rests on
    /// both); a hand-off scenario selects its table.
    #[arg(help_heading = HEADING_SELECTION, long, value_enum, value_delimiter = ',', value_name = "LIST")]
    pub scenario: Vec<ScenarioArg>,
    /// Only the calls and recipes answered this way (judged from the whole file).
    #[arg(help_heading = HEADING_SELECTION, long, value_enum, value_name = "ANSWER")]
    pub only: Option<OnlyArg>,
    /// Print only the answers: which calls to use and not to use.
    ///
    /// Print only the answers: per runtime, the calls to use and not to use by intent, and
    /// the undetermined ones with what would settle them (`--format table` only).
    #[arg(long)]
    pub answers: bool,
}

/// An answer to keep (`report --only`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnlyArg {
    /// Safe as a lock in every way measured.
    Yes,
    /// Failed in some way.
    No,
    /// Neither (`?`).
    Undetermined,
}

impl OnlyArg {
    /// The answer verdict it names.
    pub fn verdict(self) -> crate::verdict::answer::AnswerVerdict {
        match self {
            OnlyArg::Yes => crate::verdict::answer::AnswerVerdict::Yes,
            OnlyArg::No => crate::verdict::answer::AnswerVerdict::No,
            OnlyArg::Undetermined => crate::verdict::answer::AnswerVerdict::Undetermined,
        }
    }
}

/// `merge` flags.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The results.json files to merge (at least two).
    #[arg(required = true, num_args = 2..)]
    pub results: Vec<PathBuf>,
    /// Where to write the merged results.json (atomically); stdout when not given.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// `docs` flags.
#[derive(Debug, Args)]
pub struct DocsArgs {
    /// Markdown documents holding table markers (a file without markers is reported and left
    /// alone).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// The results file of markers without `results=`, relative to the working folder.
    #[arg(long, value_name = "FILE", default_value = crate::docs::DEFAULT_RESULTS)]
    pub results: PathBuf,
    /// Write nothing; exit 1 when a document has drifted.
    ///
    /// Write nothing; print each drifted marker (FILE:LINE) with a unified diff, and exit 1
    /// when any document differs from what its results would give.
    #[arg(long)]
    pub check: bool,
}

/// Where the scratch folder goes and which folder name every path passes through; shared by
/// `run` and `race`.
#[derive(Debug, Clone, Args)]
pub struct ScratchArgs {
    /// Where the scratch folder is made (default: the system temp folder).
    #[arg(long, value_name = "DIR")]
    pub fs_root: Option<PathBuf>,
    /// Pass every path through a folder named with spaces, &, %, ^, !, (, ), ', `, $ and Japanese.
    #[arg(long, conflicts_with = "path_segment")]
    pub hostile_paths: bool,
    /// Pass every path through a folder with this name (one path component).
    #[arg(hide_short_help = true, long, value_name = "NAME")]
    pub path_segment: Option<String>,
    /// The --fs-root folder as a second client of the same share sees it.
    ///
    /// The same folder as --fs-root, reached through a second client of the same share (a
    /// second mount of an NFS or SMB export, e.g. with `-o nosharecache`): each race's odd
    /// contenders (k1, k3, …) get their paths through it, the others through --fs-root, so
    /// that the race is between two clients. `run --fs` sets it for sshfs itself.
    #[arg(hide_short_help = true, long, value_name = "DIR", requires = "fs_root")]
    pub second_client: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn verify_cli() {
        super::Cli::command().debug_assert();
        super::command().debug_assert();
    }

    /// A command's help lists no global flag it ignores (IGNORED_GLOBALS), still parses it, and
    /// the commands that use a flag still list it.
    #[test]
    fn help_lists_no_flag_a_command_ignores() {
        let mut cmd = super::command();
        cmd.build();
        let help = |cmd: &mut clap::Command, sub: &str| {
            cmd.find_subcommand_mut(sub).expect(sub).render_long_help().to_string()
        };
        for (sub, ids) in super::IGNORED_GLOBALS {
            let text = help(&mut cmd, sub);
            for id in ids {
                let flag = format!("--{}", id.replace('_', "-"));
                assert!(
                    !text.contains(&format!("{flag} ")) && !text.contains(&format!("{flag}\n")),
                    "{sub} lists {flag}"
                );
            }
        }
        let merge = help(&mut cmd, "merge");
        assert!(!merge.contains("Global:"), "no empty Global heading: {merge}");
        for flag in ["--probes", "--matrices", "--cache-dir", "--offline", "--wide", "--color"] {
            assert!(help(&mut cmd, "run").contains(flag), "run lists {flag}");
        }
        assert!(help(&mut cmd, "report").contains("--wide") && help(&mut cmd, "variants").contains("--matrices"));
        let parsed = <super::Cli as clap::FromArgMatches>::from_arg_matches(
            &super::command().try_get_matches_from(["conformance", "merge", "a.json", "b.json", "--wide"]).unwrap(),
        )
        .unwrap();
        assert!(parsed.wide, "a hidden global flag still parses");
        // the commands keep their order (man pages and completions list them as stored)
        use clap::CommandFactory;
        let globals: Vec<String> = super::Cli::command()
            .get_arguments()
            .filter(|a| a.is_global_set())
            .map(|a| a.get_id().to_string())
            .collect();
        assert_eq!(globals, super::EVERY_GLOBAL, "EVERY_GLOBAL names every global flag");
        let names = |c: &clap::Command| c.get_subcommands().map(|s| s.get_name().to_string()).collect::<Vec<_>>();
        assert_eq!(names(&super::command()), names(&super::Cli::command()));
    }

    /// `race` without `--trials` runs the defaults of `run`; its help says which.
    #[test]
    fn race_help_names_the_run_defaults() {
        let mut cmd = super::Cli::command();
        let race = cmd.find_subcommand_mut("race").expect("race");
        let help = race.render_long_help().to_string();
        let expected = format!("default: {}, or {}", super::DEFAULT_TRIALS, super::DEFAULT_ONESHOT_TRIALS);
        assert!(help.contains(&expected), "{help}");
    }

    /// `diff` measures with a bare `run`'s defaults: the same as `conformance run` parses to.
    #[test]
    fn run_defaults_are_a_bare_run() {
        let d = super::RunArgs::defaults();
        let super::Command::Run(parsed) = <super::Cli as clap::Parser>::parse_from(["conformance", "run"]).command
        else {
            panic!("run parses to Command::Run")
        };
        assert_eq!(format!("{d:?}"), format!("{parsed:?}"));
        assert_eq!(
            (d.items, d.workers, d.oneshot_trials),
            (super::DEFAULT_ITEMS, super::DEFAULT_WORKERS, super::DEFAULT_ONESHOT_TRIALS)
        );
    }
}

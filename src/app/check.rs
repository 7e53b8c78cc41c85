//! `conformance check MODULE`: the user's own lock code (a JavaScript or TypeScript module, or
//! a C# file the harness compiles first) raced as the mutex scenario's `mutex.module` recipe on
//! the runtimes that load it, then one verdict line per runtime, the
//! whole check's verdict and a reproduction line.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::run::measure_run;
use crate::cli::{CheckArgs, Cli, Command, RunArgs};
use crate::error::{Error, Result};
use crate::handoff::USER_LOCK_RECIPE;
use crate::plan::Paths;
use crate::report::model::{Cell, CellResult, Results};
use crate::verdict::mutex::CheckVerdict;

/// The language of a lock module, from its file name's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Language {
    /// `.mjs`, `.js`, `.cjs`: Node, Bun and Deno load it.
    JavaScript,
    /// `.ts`, `.mts`: Deno and Bun load it (Node 20 does not strip types).
    TypeScript,
    /// `.cs`: compiled by the harness into a library the C# probe loads (CoreCLR, Mono).
    CSharp,
}

impl Language {
    /// The language of `module`; the usage error says which extensions are known.
    fn of(module: &Path) -> Result<Language> {
        let ext = module.extension().and_then(|e| e.to_str()).unwrap_or("");
        match ext {
            "mjs" | "js" | "cjs" => Ok(Language::JavaScript),
            "ts" | "mts" => Ok(Language::TypeScript),
            "cs" => Ok(Language::CSharp),
            "ps1" => Err(usage(format!(
                "{}: PowerShell lock code cannot be checked yet; give a JavaScript, TypeScript or C# file (.mjs, .js, .cjs, .ts, .mts, .cs)",
                module.display()
            ))),
            _ => Err(usage(format!(
                "{}: not JavaScript, TypeScript or C# (.mjs, .js, .cjs, .ts, .mts, .cs)",
                module.display()
            ))),
        }
    }

    /// The runtimes that can load it (`-r` may name only these).
    fn runtimes(self) -> &'static [&'static str] {
        match self {
            Language::JavaScript | Language::TypeScript => &["node", "bun", "deno"],
            Language::CSharp => &["coreclr", "mono"],
        }
    }

    /// The runtimes a check races it on when `-r` is not given.
    fn default_runtimes(self) -> &'static str {
        match self {
            Language::JavaScript => "node,bun,deno",
            Language::TypeScript => "deno,bun",
            Language::CSharp => "coreclr,mono",
        }
    }
}

/// A usage error about the MODULE argument.
fn usage(message: String) -> Error {
    Error::Usage { flag: "MODULE".into(), message }
}

/// The `run` that races `module` (absolute) as `a` asks.
fn run_args(a: &CheckArgs, module: PathBuf, language: Language, out: &Path) -> Result<RunArgs> {
    let runtimes = if a.runtime.is_empty() { language.default_runtimes().to_string() } else { a.runtime.join(",") };
    let mut argv: Vec<String> =
        ["conformance", "run", "--scenario", "mutex", "--variant", USER_LOCK_RECIPE, "--runtime"]
            .into_iter()
            .map(String::from)
            .collect();
    argv.push(runtimes);
    argv.extend(["--workers".into(), a.workers.to_string()]);
    argv.extend(["--takeover-wait".into(), a.takeover_wait.to_string()]);
    argv.extend(["--timeout".into(), a.timeout.to_string()]);
    argv.push("--out".into());
    argv.push(out.display().to_string());
    // --json prints nothing but the report on stdout: no status lines either
    for (on, flag) in [(a.thorough, "--thorough"), (a.force, "--force"), (a.quiet || a.json, "--quiet")] {
        if on {
            argv.push(flag.into());
        }
    }
    let cli = <Cli as clap::Parser>::try_parse_from(&argv)
        .map_err(|e| Error::Internal(format!("check's run did not parse: {e}")))?;
    match cli.command {
        Command::Run(mut r) => {
            r.lock_module = Some(module);
            Ok(r)
        }
        _ => Err(Error::Internal("check's run parsed as another command".into())),
    }
}

/// `check`: validates MODULE, races it, prints the verdicts; returns the exit code
/// ([`CheckVerdict::exit_code`], or `run`'s own when nothing was measured).
///
/// Errors: [`Error::Usage`] for a MODULE that is missing, not a file, or not JavaScript or
/// TypeScript; then those of `run` ([`measure_run`]).
pub(super) fn cmd_check(a: &CheckArgs, paths: &Paths) -> Result<i32> {
    let module = std::fs::canonicalize(&a.module)
        .map_err(|e| usage(format!("{}: cannot read the lock module: {e}", a.module.display())))?;
    if !module.is_file() {
        return Err(usage(format!("{}: not a file", a.module.display())));
    }
    let language = Language::of(&module)?;
    // a runtime that cannot load the code would race nothing: refused before anything starts
    for item in a.runtime.iter().flat_map(|r| r.split(',')) {
        let name = item.split(['@', '=']).next().unwrap_or("").trim();
        if !name.is_empty() && !language.runtimes().contains(&name) {
            return Err(Error::Usage {
                flag: "--runtime".into(),
                message: format!(
                    "{name} cannot load {}: it takes {}",
                    a.module.display(),
                    language.runtimes().join(", ")
                ),
            });
        }
    }
    // C# is compiled first (once per content, in the cache): the probes load the library
    let code = match language {
        Language::CSharp => crate::runtime::build_user_lock(&module, &paths.cache)
            .map_err(|why| usage(format!("{}: {why}", a.module.display())))?,
        _ => module.clone(),
    };
    // the output folder is known here, so that check.json goes beside results.json
    let out = a.out.clone().unwrap_or_else(|| paths.default_out(jiff::Timestamp::now(), ""));
    let args = run_args(a, code, language, &out)?;
    let (code, results) = measure_run(&args, paths, !a.json)?;
    let Some(results) = results else { return Ok(code) };
    let lines = verdict_lines(&results, &module);
    let verdicts: Vec<CheckVerdict> = lines.iter().map(|(v, _, _)| *v).collect();
    // code that no runtime could load is bad input, not an undetermined lock
    let unloadable =
        !lines.is_empty() && results.cells.iter().filter(|c| c.variant == USER_LOCK_RECIPE).all(never_loaded);
    let exit = if unloadable { crate::exit_code::USAGE } else { CheckVerdict::exit_code(&verdicts, a.allow_stuck) };
    let overall = Overall::of(exit, &verdicts);
    let report = CheckReport {
        module: module.display().to_string(),
        verdict: overall,
        exit_code: exit,
        runtimes: lines.into_iter().map(|(verdict, runtime, line)| CheckRuntime { runtime, verdict, line }).collect(),
        repro: repro(a, &module, &results),
        results: out.join("results.json").display().to_string(),
    };
    // beside results.json, for a CI job to read (a failure to write it is the run's output error)
    let json = serde_json::to_string_pretty(&report).expect("serialises") + "\n";
    super::output(Some(&out.join(CHECK_JSON)), &json)?;
    if a.json {
        crate::status::emit(&json);
        return Ok(exit);
    }
    let mut text = format!("\ncheck: {}\n", report.module);
    for r in &report.runtimes {
        text.push_str(&format!("  {}\n", r.line));
    }
    if report.runtimes.is_empty() {
        text.push_str("  no runtime measured it\n");
    }
    text.push_str(&format!("verdict: {} (exit {exit})\n", overall.text()));
    text.push_str(&format!("repro: {}\n", report.repro));
    crate::status::emit(&crate::report::table::escape_controls_but(&text, &['\n']));
    Ok(exit)
}

/// The file `check` writes beside results.json: its [`CheckReport`].
pub const CHECK_JSON: &str = "check.json";

/// What a check found, as `--json` prints it and `check.json` holds it.
#[derive(Debug, Serialize)]
struct CheckReport {
    /// The lock module, absolute.
    module: String,
    /// The check's verdict.
    verdict: Overall,
    /// The exit code `check` ends with.
    exit_code: i32,
    /// Per measured runtime: its verdict and line.
    runtimes: Vec<CheckRuntime>,
    /// A command line that measures the same again with more trials.
    repro: String,
    /// The results.json of the run.
    results: String,
}

/// One runtime's part of a [`CheckReport`].
#[derive(Debug, Serialize)]
struct CheckRuntime {
    /// Its row label (`node 20.20.2`).
    runtime: String,
    /// Its verdict.
    verdict: CheckVerdict,
    /// The line the text output shows (`node 20.20.2: UNSAFE — natural: …`).
    line: String,
}

/// The verdict of a whole check: the worst of its runtimes' ([`CheckVerdict::exit_code`]),
/// or code that loaded nowhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
enum Overall {
    /// Every runtime safe (exit 0).
    Safe,
    /// Safe, and stuck after a killed holder, passed by `--allow-stuck` (exit 0).
    SafeButStuck,
    /// Two holders at once or a foreign release that freed the lock somewhere (exit 1).
    Unsafe,
    /// Nobody took a killed holder's lock somewhere (exit 1).
    Stuck,
    /// Some runtime's code hung, crashed or threw (exit 6).
    Undetermined,
    /// The code loaded on no runtime (exit 2).
    NotLoaded,
}

impl Overall {
    /// The verdict of a check that ends with `exit` and whose runtimes gave `verdicts`.
    fn of(exit: i32, verdicts: &[CheckVerdict]) -> Overall {
        match exit {
            crate::exit_code::OK if verdicts.contains(&CheckVerdict::Stuck) => Overall::SafeButStuck,
            crate::exit_code::OK => Overall::Safe,
            crate::exit_code::USAGE => Overall::NotLoaded,
            crate::exit_code::DIFFERENCES if verdicts.contains(&CheckVerdict::Unsafe) => Overall::Unsafe,
            crate::exit_code::DIFFERENCES => Overall::Stuck,
            _ => Overall::Undetermined,
        }
    }

    /// The verdict line's words.
    fn text(self) -> &'static str {
        match self {
            Overall::SafeButStuck => {
                "safe, but stuck: no two holders at once, no release by someone else freed the lock; nobody could take a killed holder's lock (--allow-stuck)"
            }
            Overall::Safe => "safe: no two holders at once, no release by someone else freed the lock, a killed holder's lock taken over",
            Overall::NotLoaded => "the code did not load on any runtime (see the first error above)",
            Overall::Unsafe => "UNSAFE: two holders at once, or a release by someone else freed the lock",
            Overall::Stuck => {
                "STUCK: nobody took a killed holder's lock within --takeover-wait (--allow-stuck passes a lock meant to wait for an operator)"
            }
            Overall::Undetermined => "undetermined: the code hung, crashed or threw, and what did not run is not vouched for",
        }
    }
}

/// Per measured `mutex.module` cell of `results`: its verdict and its line (`node 20.20.2:
/// UNSAFE — double-owned 4/33 trials; …`); `module` is the user's file, whose frames an error's
/// stack shows first.
fn verdict_lines(results: &Results, module: &Path) -> Vec<(CheckVerdict, String, String)> {
    results
        .cells
        .iter()
        .filter(|c| c.variant == USER_LOCK_RECIPE)
        .filter_map(|c| {
            let answer = crate::report::answers::cell_recipe_answer(c)?;
            let verdict = CheckVerdict::of(&answer, faulted(c));
            let line =
                format!("{} {}: {} — {}", c.runtime_name, c.runtime_version, verdict.as_str(), details(c, module));
            Some((verdict, c.runtime.clone(), line))
        })
        .collect()
}

/// True when a run of `c` counted one of the mutex scenario's faults (or the harness failed),
/// by the answer's own rule ([`crate::verdict::recipe::faulted`]).
fn faulted(c: &Cell) -> bool {
    crate::report::answers::cell_recipe_runs(c)
        .is_some_and(|(runs, words)| crate::verdict::recipe::faulted(&runs, words.faults))
}

/// True when no contender of `c` ever loaded the code (every run stopped at `load`).
fn never_loaded(c: &Cell) -> bool {
    let Some((runs, _)) = crate::report::answers::cell_recipe_runs(c) else { return false };
    let n = |r: &crate::verdict::recipe::RecipeRun<'_>, k: &str| r.counters.get(k).copied().unwrap_or(0);
    !runs.is_empty()
        && runs
            .iter()
            .all(|r| n(r, crate::verdict::counter::NOT_LOADED) > 0 && n(r, crate::verdict::counter::ACQUISITIONS) == 0)
}

/// What a cell counted, natural and amplified, or why it has no counts (its evidence, the
/// first raw error its probes reported: the user code's stack).
fn details(c: &Cell, module: &Path) -> String {
    let CellResult::Counters(r) = &c.result else {
        return c.evidence.clone().unwrap_or_default();
    };
    let words = crate::report::handoff::words(c.scenario).expect("mutex has words");
    let mut s = if r.counters.is_empty() {
        c.evidence.clone().unwrap_or_else(|| "no trial ran".into())
    } else {
        format!("natural: {}", (words.counts)(r))
    };
    match (&r.amplified, &r.amplified_unavailable) {
        (Some(a), _) => s.push_str(&format!("; amplified: {}", (words.counts)(a))),
        (None, Some(why)) => s.push_str(&format!("; amplified: {}", why.text())),
        (None, None) => {}
    }
    if let Some(e) = r.errors_sample.first().or_else(|| r.amplified.as_ref().and_then(|a| a.errors_sample.first())) {
        s.push_str(&format!("; first error: {}", error_text(e, module)));
    }
    s
}

/// A raw error in a line: its message's first line (its kind first unless the message already
/// starts with it), then the frames of its stack that name the user's file — else the first two
/// — joined by ` | `.
fn error_text(e: &crate::domain::RawError, module: &Path) -> String {
    let mut lines = e.message.lines().map(str::trim).filter(|l| !l.is_empty());
    let head = lines.next().unwrap_or("");
    let head =
        if head.starts_with(&e.kind) || e.kind.is_empty() { head.to_string() } else { format!("{} {head}", e.kind) };
    let rest: Vec<&str> = lines.collect();
    let name = module.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    let own: Vec<&str> = rest.iter().copied().filter(|l| !name.is_empty() && l.contains(&name)).take(3).collect();
    let frames = if own.is_empty() { rest.into_iter().take(2).collect() } else { own };
    std::iter::once(head.as_str()).chain(frames).collect::<Vec<_>>().join(" | ")
}

/// The command that measures the same again, on the executables measured (`NAME=PATH`, as
/// `run_info` recorded them), with more trials.
fn repro(a: &CheckArgs, module: &Path, results: &Results) -> String {
    let mut runtimes: Vec<String> = results
        .cells
        .iter()
        .filter(|c| c.variant == USER_LOCK_RECIPE)
        .map(|c| {
            let exe = results.run_info.runtimes.iter().find(|i| i.label == c.runtime).and_then(|i| i.path.as_deref());
            exe.map_or_else(|| c.runtime_name.clone(), |p| format!("{}={p}", c.runtime_name))
        })
        .collect();
    runtimes.dedup();
    let mut words = vec!["conformance".to_string(), "check".into(), module.display().to_string()];
    for r in runtimes {
        words.extend(["-r".into(), r]);
    }
    words.extend(["--takeover-wait".into(), a.takeover_wait.to_string()]);
    // the flags that change what is measured or judged, as given; then more trials
    if a.workers != crate::cli::DEFAULT_WORKERS {
        words.extend(["--workers".into(), a.workers.to_string()]);
    }
    if a.timeout != crate::cli::DEFAULT_TIMEOUT_SECS {
        words.extend(["--timeout".into(), a.timeout.to_string()]);
    }
    if a.allow_stuck {
        words.push("--allow-stuck".into());
    }
    words.push("--thorough".into());
    shlex::try_join(words.iter().map(String::as_str)).unwrap_or_else(|_| words.join(" "))
}

//! `conformance diff`: two runtimes or two results files, cell by cell.

use std::path::{Path, PathBuf};

use super::run::measure_run;
use super::{locate_versions, output, refuse_earlier_results, refuse_out_onto_input};
use crate::cli::{DiffArgs, DiffFormat, RunArgs};
use crate::compare::junit;
use crate::error::{Error, Result};
use crate::exit_code;
use crate::plan::Paths;
use crate::report::json;
use crate::report::model::Results;
use crate::runtime::{discover, Requested, Status};
use crate::status::status_line;

/// `diff`: the cells that differ between two results files, or between two runtimes measured
/// now (`-r A -r B`), in `--format`; exit 1 when a cell differs.
///
/// Errors: [`Error::Usage`] (not two files or two runtimes, a `run` flag's value),
/// [`Error::Input`] naming a results file that cannot be read, and with `-r` those of
/// [`measure_run`] (a runtime not found or not installable: exit 4 or 5).
pub(super) fn cmd_diff(a: &DiffArgs, paths: &Paths) -> Result<i32> {
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
        DiffFormat::Table => super::fit_to_terminal(&crate::diff::render_text(&report), a.out.is_none()),
        DiffFormat::Md => crate::diff::render_markdown(&report),
        DiffFormat::Json => serde_json::to_string_pretty(&report).expect("serialises") + "\n",
        DiffFormat::Junit => junit::render(&report.as_compare_diff(), Path::new(&na), Path::new(&nb)),
        DiffFormat::Html => crate::diff::render_html(&report, &rb),
    };
    output(a.out.as_deref(), &text)?;
    Ok(if report.differs() { exit_code::DIFFERENCES } else { exit_code::OK })
}

/// `diff -r A -r B`: checks that both runtimes can be had (installing `NAME@VERSION` items on
/// first use) and are found, then measures A into `RUNS/a/` and B into `RUNS/b/` as `run`
/// would, printing nothing on stdout. Two versions of one library (`-r proper-lockfile@4.1.1
/// -r proper-lockfile@4.1.2`) are A and B instead, each raced by the recipes that race that
/// library (unless `-v`/`--scenario` say otherwise) on the runtimes given besides them (the
/// default ones without). Returns both results and how each is named in the report, or `None`
/// when interrupted.
///
/// Errors: [`Error::Usage`] unless exactly two different runtimes (or two versions of one
/// library) are given, those of [`Requested::parse`] and [`Requested::locate_versions`],
/// [`Error::NoRuntime`] naming a runtime that is not found or broken, and those of
/// [`measure_run`].
pub(super) fn diff_measure(a: &DiffArgs, paths: &Paths) -> Result<Option<(Results, Results, String, String)>> {
    let items: Vec<String> = a
        .runtime
        .iter()
        .flat_map(|v| crate::runtime::discover::split_items(v))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    let usage = |message: String| Error::Usage { flag: "--runtime".into(), message };
    let (libraries, runtimes): (Vec<String>, Vec<String>) =
        items.iter().cloned().partition(|i| crate::handoff::is_library_item(i));
    // A and B: two versions of one library (the runtimes shared), else two runtimes (the
    // libraries shared)
    let by_library = libraries.len() == 2;
    let (sides, shared) = if by_library { (&libraries, &runtimes) } else { (&runtimes, &libraries) };
    if sides.len() != 2 {
        return Err(usage(format!(
            "diff measures two runtimes, A then B (e.g. -r bun@1.1.44 -r bun@1.4.5), or two versions of a library (-r proper-lockfile@4.1.1 -r proper-lockfile@4.1.2); got {}: {}",
            items.len(),
            items.join(", ")
        )));
    }
    if sides[0] == sides[1] || sides.iter().any(|i| i == "all") {
        return Err(usage(format!(
            "A and B must be two different runtimes (or versions of a library); got {} and {}",
            sides[0], sides[1]
        )));
    }
    let (variant, scenario) = if by_library {
        let [la, lb] = [&libraries[0], &libraries[1]].map(|l| crate::handoff::LibrarySpec::parse(l));
        let (la, lb) = (la.map_err(usage)?, lb.map_err(usage)?);
        if la.name != lb.name {
            return Err(usage(format!("A and B must be two versions of one library; got {la} and {lb}")));
        }
        // by default, the recipes that race the library, in their scenarios
        let of_lib: Vec<&crate::handoff::Recipe> = crate::handoff::recipes_racing(&la.name).collect();
        let variant =
            if a.variant.is_empty() { of_lib.iter().map(|r| r.id.clone()).collect() } else { a.variant.clone() };
        let default_scenario = a.scenario == [crate::cli::ScenarioArg::All];
        let scenario = if default_scenario {
            let mut s: Vec<crate::cli::ScenarioArg> = Vec::new();
            for r in &of_lib {
                if !s.contains(&crate::cli::ScenarioArg::One(r.scenario)) {
                    s.push(crate::cli::ScenarioArg::One(r.scenario));
                }
            }
            s
        } else {
            a.scenario.clone()
        };
        (variant, scenario)
    } else {
        (a.variant.clone(), a.scenario.clone())
    };
    // both can be had before anything is measured: a missing B must not cost A's run
    // (the libraries are installed by each run; one run races one version of a library)
    let mut both = Requested::parse(if by_library { &runtimes } else { &items })?;
    locate_versions(&mut both, paths, "--runtime")?;
    if crate::interrupt::requested() {
        return Ok(None);
    }
    let missing: Vec<String> =
        discover(&both).runtimes.iter().filter(|r| r.status != Status::Found).map(status_line).collect();
    // (with no runtime named, the default ones are measured as `run` measures them)
    if !missing.is_empty() && both.names.is_some() {
        return Err(Error::no_runtime(missing.join("; "), &paths.cache));
    }
    let runs = a.runs_dir.clone().unwrap_or_else(|| paths.default_out(jiff::Timestamp::now(), "-diff"));
    for sub in ["a", "b"] {
        refuse_earlier_results(&runs.join(sub), false, "--runs-dir")?;
    }
    let mut measured = Vec::new();
    for (item, sub) in sides.iter().zip(["a", "b"]) {
        // a NAME=PATH item is required by its name, NAME and NAME@VERSION as given
        let name = |i: &String| i.split_once('=').map_or(i.as_str(), |(n, _)| n).to_string();
        let require = if by_library { runtimes.iter().map(name).collect() } else { vec![name(item)] };
        let args = RunArgs {
            runtime: std::iter::once(item.clone()).chain(shared.iter().cloned()).collect(),
            variant: variant.clone(),
            scenario: scenario.clone(),
            target: a.target.clone(),
            scratch: a.scratch.clone(),
            trials: a.trials,
            power: a.power.clone(),
            contenders: a.contenders,
            attempt: a.attempt.clone(),
            out: Some(runs.join(sub)),
            thorough: a.thorough,
            quick: a.quick,
            no_relative: a.no_relative,
            require,
            quiet: a.quiet,
            ..RunArgs::defaults()
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

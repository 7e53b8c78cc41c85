//! `conformance report`: a results file rendered as a table, Markdown, HTML, CSV, JUnit or JSON.

use super::{output, refuse_out_onto_input};
use crate::cli::{Format, ReportArgs};
use crate::compare::junit;
use crate::error::{Error, Result};
use crate::exit_code;
use crate::report::{csv, html, json, markdown, table};

pub(super) fn cmd_report(a: &ReportArgs) -> Result<i32> {
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
    let whole = json::read(&a.results)?;
    if whole.cells.is_empty() {
        return Err(Error::input(&a.results, "holds no cells: nothing to report (the run measured nothing)".into()));
    }
    let r = filtered(a, &whole)?;
    let mut code = exit_code::OK;
    // a file written with --out gets the plain layout: no colour, no fitting
    let style = if a.out.is_some() { crate::report::style::TermStyle::PLAIN } else { crate::report::style::current() };
    let text = match a.format {
        Format::Json => json::render(&r),
        Format::Md => markdown::render(&r),
        Format::Csv => csv::render(&r),
        Format::Html => html::render_with(&r, &super::again(&r)),
        Format::Junit => {
            let base_path = a.expect.as_deref().expect("checked above");
            let diff = crate::compare::compare_ignoring(&json::read(base_path)?, &r, &a.ignore);
            if diff.differs() {
                code = exit_code::DIFFERENCES;
            }
            junit::render(&diff, base_path, &a.results)
        }
        Format::Table if a.answers => crate::report::answers::render_styled(&r, style),
        Format::Table => table::render_with_answers(&r, style),
    };
    output(a.out.as_deref(), &text)?;
    Ok(code)
}

/// The cells of `whole` that `-r`, `-v`, `--scenario` and `--only` keep.
///
/// Errors: [`Error::Usage`] (exit 2) naming the flag when a pattern is not a glob, a runtime
/// is not in the file, or nothing is left.
fn filtered(a: &ReportArgs, whole: &crate::report::Results) -> Result<crate::report::Results> {
    use crate::cli::ScenarioArg;
    use crate::report::filter::{apply, Filter};
    let usage = |flag: &str, message: String| Error::Usage { flag: flag.into(), message };
    let scenarios = if a.scenario.contains(&ScenarioArg::All) {
        Vec::new()
    } else {
        a.scenario.iter().filter_map(|s| if let ScenarioArg::One(s) = s { Some(*s) } else { None }).collect()
    };
    let f = Filter {
        runtimes: a.runtime.iter().map(|r| r.trim().to_string()).filter(|r| !r.is_empty()).collect(),
        variants: Filter::globs(&a.variant).map_err(|e| usage("--variant", e))?,
        scenarios,
        only: a.only.map(|o| o.verdict()),
    };
    if let Some(rt) = f.runtimes.iter().find(|rt| !whole.cells.iter().any(|c| &c.runtime_name == *rt)) {
        let mut names: Vec<&str> = whole.cells.iter().map(|c| c.runtime_name.as_str()).collect();
        names.dedup();
        names.sort_unstable();
        names.dedup();
        return Err(usage("--runtime", format!("'{rt}' is not in the file (it holds: {})", names.join(", "))));
    }
    let r = apply(whole, &f);
    if r.cells.is_empty() && !f.is_empty() {
        // name the filter that leaves nothing on its own, else say it is their combination
        let alone = [
            ("--runtime", Filter { runtimes: f.runtimes.clone(), ..Filter::default() }),
            ("--variant", Filter { variants: f.variants.clone(), ..Filter::default() }),
            ("--scenario", Filter { scenarios: f.scenarios.clone(), ..Filter::default() }),
            ("--only", Filter { only: f.only, ..Filter::default() }),
        ];
        let flag = alone
            .iter()
            .find(|(_, one)| !one.is_empty() && apply(whole, one).cells.is_empty())
            .map_or("--runtime/--variant/--scenario/--only", |(flag, _)| *flag);
        let why = if flag.contains('/') { "together they leave" } else { "it leaves" };
        return Err(usage(flag, format!("{why} no cell of the file: nothing to report")));
    }
    Ok(r)
}

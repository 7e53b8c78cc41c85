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
    let r = json::read(&a.results)?;
    if r.cells.is_empty() {
        return Err(Error::input(&a.results, "holds no cells: nothing to report (the run measured nothing)".into()));
    }
    let mut code = exit_code::OK;
    // a file written with --out gets the plain layout: no colour, no fitting
    let style = if a.out.is_some() { crate::report::style::TermStyle::PLAIN } else { crate::report::style::current() };
    let text = match a.format {
        Format::Json => json::render(&r),
        Format::Md => markdown::render(&r),
        Format::Csv => csv::render(&r),
        Format::Html => html::render(&r),
        Format::Junit => {
            let base_path = a.expect.as_deref().expect("checked above");
            let diff = crate::compare::compare_ignoring(&json::read(base_path)?, &r, &a.ignore);
            if diff.differs() {
                code = exit_code::DIFFERENCES;
            }
            junit::render(&diff, base_path, &a.results)
        }
        Format::Table if a.answers => crate::report::answers::render_styled(&r, style),
        Format::Table => {
            let answers = crate::report::answers::render_styled(&r, style);
            format!("{answers}{}", table::render_report(&r, style))
        }
    };
    output(a.out.as_deref(), &text)?;
    Ok(code)
}

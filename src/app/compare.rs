//! `conformance compare`: a run against a baseline, as a CI gate.

use super::{output, refuse_out_onto_input};
use crate::cli::{CompareArgs, CompareFormat};
use crate::compare::junit;
use crate::error::Result;
use crate::exit_code;
use crate::report::json;

pub(super) fn cmd_compare(a: &CompareArgs) -> Result<i32> {
    refuse_out_onto_input(a.out.as_deref(), &[&a.base, &a.new])?;
    let base = json::read(&a.base)?;
    let new = json::read(&a.new)?;
    let diff = crate::compare::compare_ignoring(&base, &new, &a.ignore);
    let text = match a.format {
        CompareFormat::Text => super::fit_to_terminal(&diff.render(), a.out.is_none()),
        CompareFormat::Junit => junit::render(&diff, &a.base, &a.new),
    };
    output(a.out.as_deref(), &text)?;
    Ok(if diff.differs() { exit_code::DIFFERENCES } else { exit_code::OK })
}

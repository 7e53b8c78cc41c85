//! `conformance merge`: several results files into one.

use std::path::PathBuf;

use super::{output, refuse_out_onto_input};
use crate::cli::MergeArgs;
use crate::error::{Error, Result};
use crate::exit_code;
use crate::report::json;

pub(super) fn cmd_merge(a: &MergeArgs) -> Result<i32> {
    refuse_out_onto_input(a.out.as_deref(), &a.results.iter().map(PathBuf::as_path).collect::<Vec<_>>())?;
    // the same file twice would compare a machine with itself
    for (i, p) in a.results.iter().enumerate() {
        if let Some(q) = a.results[..i].iter().find(|q| *q == p || crate::outdir::is_same_file(q, p)) {
            return Err(Error::input(
                p,
                format!(
                    "given twice to merge (also as {}): merge combines runs of different machines or file systems",
                    q.display()
                ),
            ));
        }
    }
    let runs = a.results.iter().map(|p| Ok((p.display().to_string(), json::read(p)?))).collect::<Result<Vec<_>>>()?;
    let merged = crate::merge::merge(runs)?;
    // a merge of runs that measured nothing is a file `report` refuses: refuse it here
    if merged.cells.is_empty() {
        return Err(Error::input(&a.results[0], "the runs given hold no cells: nothing to merge".into()));
    }
    output(a.out.as_deref(), &json::render(&merged))?;
    Ok(exit_code::OK)
}

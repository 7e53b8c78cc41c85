//! `conformance variants`: list the matrices' variants.

use std::path::Path;

use crate::cli::VariantsArgs;
use crate::error::Result;
use crate::exit_code;
use crate::report::table;
use crate::status::emit;

pub(super) fn cmd_variants(a: &VariantsArgs, matrices: Option<&Path>) -> Result<i32> {
    // the hand-off recipes are selected by the same globs in `run`: listed with them
    let recipes = crate::handoff::recipes().iter().map(|r| r.as_variant());
    let vs =
        crate::plan::select_variants(crate::matrix::load(matrices)?.into_iter().chain(recipes).collect(), &a.variant)?;
    if a.json {
        emit(&(serde_json::to_string_pretty(&vs).expect("serialises") + "\n"));
    } else {
        // a wide call is cut and control characters escaped, as in every terminal table
        let header = ["variant", "call", "sources", "creates", "form", "shows"].map(String::from);
        let rows = vs.iter().map(|v| {
            let id = if v.anti_pattern { format!("{} (anti-pattern)", v.id) } else { v.id.clone() };
            let kind = |k: &dyn std::fmt::Debug| format!("{k:?}").to_lowercase();
            let shows: Vec<String> = v.show.iter().map(|f| kind(f)).collect();
            // every kind of source the variant is measured with, its own first
            let sources = match v.sources.is_empty() {
                true => v.source.as_str().to_string(),
                false => v.sources.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(", "),
            };
            [id, v.call.clone(), sources, kind(&v.creates), kind(&v.form), shows.join(", ")]
        });
        emit(&format!("{}\n", table::terminal_table(std::iter::once(header).chain(rows))));
    }
    Ok(exit_code::OK)
}

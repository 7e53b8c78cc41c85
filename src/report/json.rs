//! `results.json`: the [`Results`] model, pretty-printed.

use std::path::Path;

use super::model::{Results, Scenario, SCHEMA};
use crate::error::{Error, Result};
use crate::verdict::RaceVerdict;

/// Serialises results as pretty JSON with a trailing newline.
pub fn render(r: &Results) -> String {
    let mut s = serde_json::to_string_pretty(r).expect("results serialise");
    s.push('\n');
    s
}

/// Reads a `results.json`. Errors: [`Error::Input`] with the line and column of a parse error,
/// for an unknown schema version, or for a race cell whose counts are missing or malformed
/// (serde drops a malformed flattened group silently, so it is checked here).
pub fn read(path: &Path) -> Result<Results> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::input(path, format!("cannot read: {e}")))?;
    #[derive(serde::Deserialize)]
    struct Peek {
        schema: u32,
    }
    // the schema first: an older file fails on its schema, not on a field it lacks
    if let Ok(Peek { schema }) = serde_json::from_str::<Peek>(&text) {
        if schema != SCHEMA {
            let hint = if schema < SCHEMA { "; it predates natural and amplified races: measure again" } else { "" };
            return Err(Error::input(
                path,
                format!("schema {schema} is not supported (this conformance reads schema {SCHEMA}){hint}"),
            ));
        }
    }
    let r: Results = serde_json::from_str(&text).map_err(|e| Error::Input {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: format!("not a conformance results file: {e}"),
    })?;
    let bad = |message: String| Error::input(path, message);
    let counted = |v: Option<RaceVerdict>| !matches!(v, Some(RaceVerdict::Unsupported | RaceVerdict::Skipped) | None);
    if let Some(c) = r.cells.iter().find(|c| {
        c.scenario == Scenario::Race
            && counted(c.verdict)
            && c.natural.is_none()
            && c.amplified.is_none()
            && c.evidence.is_none()
    }) {
        return Err(bad(format!(
            "race cell '{}' has missing or malformed counts (contenders, trials, winners, …)",
            c.id
        )));
    }
    Ok(r)
}

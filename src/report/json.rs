//! `results.json`: the [`Results`] model, pretty-printed.

use std::path::Path;

use super::model::Results;
use crate::error::{Error, Result};

/// Serialises results as pretty JSON with a trailing newline.
pub fn render(r: &Results) -> String {
    let mut s = serde_json::to_string_pretty(r).expect("results serialise");
    s.push('\n');
    s
}

/// Reads a `results.json`. Errors: [`Error::Input`] with the line and column of a parse error.
pub fn read(path: &Path) -> Result<Results> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::Input {
        path: path.to_path_buf(),
        line: 0,
        column: 0,
        message: format!("cannot read: {e}"),
    })?;
    serde_json::from_str(&text).map_err(|e| Error::Input {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: format!("not a conformance results file: {e}"),
    })
}

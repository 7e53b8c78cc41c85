//! Reports: the results model and one exporter per format. Exporters take the model and
//! return text; only the caller writes files (hyperfine's `export/` layout). The JUnit XML of a
//! comparison is [`crate::compare::junit`]'s.
//!
//! Floor: above the judges, the processes and the runtime adapters whose words it records;
//! below everything that reads or compares results, the engine and the command line.

pub mod answers;
pub mod charts;
pub mod csv;
pub mod filter;
pub mod handoff;
pub mod html;
pub mod json;
mod legacy;
pub mod markdown;
pub mod model;
pub mod race_speed;
pub mod style;
pub mod table;
pub mod timings;

pub use model::{Cell, ErrorInfo, Results, RunInfo, RuntimeInfo, Scenario};

/// The committed results file `tests/fixtures/results/NAME`, read as `report` reads it: the
/// fixture of the report, merge and compare unit tests.
#[cfg(test)]
pub(crate) fn fixture(name: &str) -> model::Results {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results").join(name);
    json::read(&path).unwrap_or_else(|e| panic!("{e}"))
}

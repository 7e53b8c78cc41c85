//! Reports: the results model and one exporter per format. Exporters take the model and
//! return text; only the caller writes files (hyperfine's `export/` layout).

pub mod csv;
pub mod html;
pub mod json;
pub mod junit;
mod legacy;
pub mod markdown;
pub mod model;
pub mod table;

pub use model::{Cell, ErrorInfo, Results, RunInfo, RuntimeInfo, Scenario};

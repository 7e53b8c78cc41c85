//! Variants as data: the `matrices/*.toml` files, their model and loader.
//!
//! Each file describes one API family (`family = "node"`) and its variants; see
//! `matrices/README.md` for the fields. Expected outcomes are never stored here.
//!
//! Floor: just above the shared vocabulary; it reads no runtime adapter (the families a
//! matrix may name are [`FAMILIES`]).

mod load;
mod model;

pub use load::{load, load_builtin, load_dir, parse_file, FAMILIES};
pub use model::{split_source_pattern, Creates, Fact, Form, Intent, Promise, SourceKind, Variant};

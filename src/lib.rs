//! `conformance` measures which file-system calls really give a process exclusive ownership
//! of a name, in every runtime people write integration code in.
//!
//! Data flow: matrices (data, [`matrix`]) → runtimes found ([`runtime`]) → probes driven under
//! controlled races ([`engine`], over [`exec`]) → observations (probe reports plus
//! [`snapshot`]s of the disk) → outcomes ([`verdict`], pure) → [`report`]s.

pub mod against;
pub mod app;
pub mod builtin;
pub mod cells;
pub mod cli;
pub mod compare;
pub mod cross;
pub mod diff;
pub mod docs;
pub mod domain;
pub mod engine;
pub mod error;
pub mod exec;
pub mod exit_code;
pub mod handoff;
pub mod interrupt;
pub mod matrix;
pub mod merge;
pub mod options;
pub mod outdir;
pub mod plan;
pub mod report;
pub mod repro;
pub mod runinfo;
pub mod runtime;
pub mod snapshot;
pub mod stats;
pub mod status;
pub mod verdict;

//! `conformance` measures which file-system calls really give a process exclusive ownership
//! of a name, in every runtime people write integration code in.
//!
//! Data flow: matrices (data, [`matrix`]) → runtimes found ([`runtime`]) → probes driven under
//! controlled races ([`engine`], over [`exec`]) → observations (probe reports plus
//! [`snapshot`]s of the disk) → outcomes ([`verdict`], pure) → [`report`]s.
//!
//! # Floors
//!
//! Every top-level module stands on one floor. A module reads (`crate::…`, outside its tests)
//! only modules on its own floor or below, and the modules of one floor never read each other
//! in a circle. From the bottom:
//!
//! 1. Shared vocabulary and leaves: [`exit_code`], [`error`], [`stats`], [`builtin`], [`snapshot`], [`domain`].
//! 2. What is measured, as data: [`matrix`], [`against`], [`handoff`].
//! 3. Pure judges: [`verdict`].
//! 4. Processes: [`exec`], then [`interrupt`] (which kills exec's process groups on a second signal).
//! 5. Runtime adapters: [`runtime`].
//! 6. What a measurement is asked to do: [`options`], then [`cells`].
//! 7. Results, their model and exporters: [`report`].
//! 8. Reading, comparing and writing results: [`compare`], [`diff`], [`cross`], [`repro`], [`merge`], [`runinfo`], [`outdir`], [`docs`]; the file systems `run --fs` makes, [`fs`].
//! 9. Measuring: [`engine`].
//! 10. The command line's words: [`cli`].
//! 11. What a command says and plans: [`status`], then [`plan`].
//! 12. The commands: [`app`].
//!
//! `tests/integration/layers.rs` checks the code against this list.

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
pub mod fs;
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

//! Integration tests: the built `conformance` binary against fixtures and real runtimes.
//! One test binary (ripgrep's `autotests = false` layout).

mod cells;
mod check;
mod cli;
mod cmd_handoff;
mod common;
mod diff;
mod docs;
mod faults;
mod formats;
mod forms;
mod fs;
mod handoff;
mod harness;
mod install;
mod layers;
mod libraries;
mod outputs;
mod progress;
mod protocol;
mod runtimes;
mod sources;
mod threads;

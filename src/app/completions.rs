//! `conformance completions SHELL`: a completion script for bash, zsh, fish, PowerShell or
//! elvish, generated from the command line's definition by `clap_complete`.

use crate::cli::CompletionsArgs;
use crate::error::Result;
use crate::exit_code;
use crate::status::emit;

/// Prints the script for `a.shell` on stdout. Never fails.
pub(super) fn cmd_completions(a: &CompletionsArgs) -> Result<i32> {
    let mut buf = Vec::new();
    clap_complete::generate(a.shell, &mut crate::cli::command(), "conformance", &mut buf);
    emit(&String::from_utf8_lossy(&buf));
    Ok(exit_code::OK)
}

//! The `conformance` binary: parse, run, map the result to an exit code.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = conformance::cli::Cli::parse();
    let code = match conformance::app::run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            e.exit_code()
        }
    };
    std::process::ExitCode::from(u8::try_from(code).unwrap_or(1))
}

//! The `conformance` binary: parse, run, map the result to an exit code.

use clap::FromArgMatches;

fn main() -> std::process::ExitCode {
    // a panic is a bug of the harness: say so and exit with the documented code, not 101
    std::panic::set_hook(Box::new(|info| {
        eprintln!("internal error (a bug in conformance, please report it): {info}");
        std::process::exit(conformance::exit_code::INTERNAL);
    }));
    // lets the test suite prove the hook (tests/integration/harness.rs)
    if std::env::var_os("CONFORMANCE_TEST_PANIC").is_some() {
        panic!("CONFORMANCE_TEST_PANIC is set");
    }
    // clap's own parse, from the command whose help hides the flags a command ignores
    let mut command = conformance::cli::command();
    let matches = command.get_matches_mut();
    let cli = conformance::cli::Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.format(&mut command).exit());
    let code = match conformance::app::run(cli) {
        Ok(code) => code,
        Err(e) => {
            // a path or probe text in the message must not drive the terminal (ESC, BEL, bidi)
            eprintln!("error: {}", conformance::report::table::escape_controls_but(&e.to_string(), &['\n', '\t']));
            e.exit_code()
        }
    };
    std::process::ExitCode::from(u8::try_from(code).unwrap_or(1))
}

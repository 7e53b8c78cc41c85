//! `conformance man`: the manual pages (roff), generated from the command line's definition by
//! `clap_mangen`: `conformance.1` on stdout, or one page per command in a folder.

use crate::cli::ManArgs;
use crate::error::{Error, Result};
use crate::exit_code;
use crate::status::emit;

/// Renders `cmd`'s page as roff.
fn page(cmd: clap::Command) -> Vec<u8> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd).render(&mut buf).expect("writing to memory cannot fail");
    buf
}

/// Prints `conformance.1`, or with `--out DIR` writes `conformance.1` and
/// `conformance-COMMAND.1` for each command into DIR (made if missing; each file atomically).
///
/// Errors: [`Error::Output`] (exit 3) when DIR or a page cannot be written.
pub(super) fn cmd_man(a: &ManArgs) -> Result<i32> {
    let mut cli = crate::cli::command();
    cli.build();
    let Some(dir) = &a.out else {
        emit(&String::from_utf8_lossy(&page(cli)));
        return Ok(exit_code::OK);
    };
    std::fs::create_dir_all(dir).map_err(|source| Error::Output { path: dir.clone(), source })?;
    let mut pages = vec![("conformance.1".to_string(), page(cli.clone()))];
    for sub in cli.get_subcommands().filter(|s| s.get_name() != "help") {
        // the page's title and its usage line name the command as it is typed
        let name = format!("conformance-{}", sub.get_name());
        let sub = sub.clone().name(name.clone()).bin_name(format!("conformance {}", sub.get_name()));
        pages.push((format!("{name}.1"), page(sub)));
    }
    for (file, roff) in &pages {
        crate::outdir::write_file(&dir.join(file), &String::from_utf8_lossy(roff))?;
    }
    emit(&format!(
        "wrote {} manual pages into {}\n",
        pages.len(),
        crate::report::table::escape_controls(&dir.display().to_string())
    ));
    Ok(exit_code::OK)
}

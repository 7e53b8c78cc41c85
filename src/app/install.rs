//! `conformance install`: download runtime versions into the cache.

use super::Spinner;
use crate::cli::InstallArgs;
use crate::error::{Error, Result};
use crate::exit_code;
use crate::plan::Paths;
use crate::report::table;
use crate::runtime::install::{self, VersionRequest};
use crate::status::{self, emit};

/// `install NAME@VERSION…`: each version found in the cache or fetched, checked and started
/// once ([`install::install`]); a line per version on stderr, the list on stdout.
///
/// Errors: the first version that cannot be had: [`Error::Usage`] naming the item for a
/// version the registry does not have (exit 2), [`Error::RuntimeUnavailable`] (exit 4: with
/// `--offline`, npm or the registry unreachable, a failed check), [`Error::Output`] when the
/// cache cannot be written (exit 3). Versions installed before it stay installed. Ctrl-C stops
/// the download (exit 130) and leaves no half-made version.
pub(super) fn cmd_install(a: &InstallArgs, paths: &Paths) -> Result<i32> {
    let flag = "NAME@VERSION";
    let items: Vec<String> = a
        .versions
        .iter()
        .flat_map(|v| v.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect::<Vec<_>>())
        .collect();
    // a library's versions are for the recipes that race it, not runtimes
    let (libraries, items): (Vec<String>, Vec<String>) =
        items.into_iter().partition(|i| crate::handoff::is_library_item(i));
    let libraries = libraries
        .iter()
        .map(|l| crate::handoff::LibrarySpec::parse(l).map_err(|message| Error::Usage { flag: flag.into(), message }))
        .collect::<Result<Vec<_>>>()?;
    let requests = items
        .into_iter()
        .map(|item| {
            if item.contains('@') {
                VersionRequest::parse(&item, flag)
            } else {
                Err(Error::Usage {
                    flag: flag.into(),
                    message: format!(
                        "'{item}' is not NAME@VERSION (e.g. bun@1.3.14, node@22, deno@latest, coreclr@8, or a library: proper-lockfile@4.1.2)"
                    ),
                })
            }
        })
        .collect::<Result<Vec<_>>>()?;
    let store = paths.store();
    let spinner = Spinner::new();
    let mut rows = Vec::new();
    for r in &requests {
        // a range or `latest` asks the registry for its newest version; --offline takes the
        // newest installed one
        let (i, fetched) = if paths.offline {
            let i = store.best(r).ok_or_else(|| Error::RuntimeUnavailable {
                what: r.text.clone(),
                why: format!("not installed in {}, and --offline forbids fetching it", store.root().display()),
            })?;
            (i, false)
        } else {
            match install::install(&store, r, &mut |l| spinner.say(l)) {
                Ok(x) => x,
                Err(_) if crate::interrupt::requested() => {
                    spinner.done();
                    eprintln!("interrupted: {} was not installed; the versions before it were", r.text);
                    return Ok(exit_code::INTERRUPTED);
                }
                Err(e) => return Err(e.into_error(flag, &r.text)),
            }
        };
        if !fetched {
            // installed before: it must still start and report its version
            install::verify_version(i.runtime, &i.exe, &i.version)
                .map_err(|why| Error::RuntimeUnavailable { what: r.text.clone(), why })?;
            spinner.say(&format!("install  {}: {} already installed in {}", r.text, i.selector(), i.dir.display()));
        }
        rows.push(status::Installation::of(&i, fetched));
    }
    for spec in &libraries {
        if crate::interrupt::requested() {
            spinner.done();
            eprintln!("interrupted: {spec} was not installed; the versions before it were");
            return Ok(exit_code::INTERRUPTED);
        }
        let before = crate::runtime::library::folder(spec, &paths.cache).join("node_modules").is_dir();
        if !before {
            spinner.say(&format!("install  {spec}: npm install"));
        }
        let dir = crate::runtime::library::ensure(spec, &paths.cache, paths.offline).map_err(|e| match e {
            crate::runtime::library::LibraryError::NotPublished(message) => Error::Usage { flag: flag.into(), message },
            crate::runtime::library::LibraryError::Unavailable(why) => {
                Error::RuntimeUnavailable { what: spec.to_string(), why }
            }
        })?;
        if before {
            spinner.say(&format!("install  {spec}: already installed in {}", dir.display()));
        }
        rows.push(status::Installation::of_library(spec, &dir, !before));
    }
    spinner.done();
    if a.json {
        emit(&(serde_json::to_string_pretty(&rows).expect("serialises") + "\n"));
    } else {
        let header = ["runtime", "select with", "package", "path"].map(String::from);
        let body = rows
            .iter()
            .map(|r| [format!("{} {}", r.runtime, r.version), r.select.clone(), r.package.clone(), r.path.clone()]);
        emit(&format!("{}\n", table::terminal_table(std::iter::once(header).chain(body))));
    }
    Ok(exit_code::OK)
}

//! Library versions from the npm registry, for the hand-off recipes that race a library
//! (`library = "proper-lockfile@4.1.2"` in `matrices/handoff/recipes.toml`): each installed
//! once, with its dependencies, into `<cache>/libraries/<name>@<version>/node_modules/`
//! (`npm install --prefix`, its install scripts not run), published by renaming a finished
//! staging folder so that concurrent runs never see half an installation. The probes load it
//! from there (`params.library`, the `node_modules` folder) with `createRequire`.

use std::fmt;
use std::path::{Path, PathBuf};

pub use crate::handoff::LibrarySpec;

use super::install::{Npm, NpmFailure};

/// The folder, inside the cache, of the installed libraries.
pub const LIBRARIES: &str = "libraries";

/// Why a library version cannot be had ([`ensure`]); its text names the version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LibraryError {
    /// The registry does not publish that version (npm's `E404`/`ETARGET`, in npm's words).
    NotPublished(String),
    /// Anything else: offline and not installed, no npm, the registry unreachable, a folder
    /// that cannot be written.
    Unavailable(String),
}

impl fmt::Display for LibraryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LibraryError::NotPublished(why) | LibraryError::Unavailable(why) => f.write_str(why),
        }
    }
}

/// The folder of library `spec` in the cache under `cache` (`<cache>/libraries/<name>@<version>`;
/// its `node_modules` holds the library once installed).
pub fn folder(spec: &LibrarySpec, cache: &Path) -> PathBuf {
    cache.join(LIBRARIES).join(folder_name(&spec.to_string()))
}

/// The `node_modules` folder of library `spec` in the cache under `cache`, installing it first
/// when it is not there; `offline` never asks the registry.
///
/// Errors: [`LibraryError::NotPublished`] for a version the registry does not publish,
/// [`LibraryError::Unavailable`] otherwise (offline and not installed, no npm, npm's own
/// words).
pub fn ensure(spec: &LibrarySpec, cache: &Path, offline: bool) -> Result<PathBuf, LibraryError> {
    use LibraryError::Unavailable;
    let dir = folder(spec, cache);
    let modules = dir.join("node_modules");
    if modules.is_dir() {
        return Ok(modules);
    }
    if offline {
        return Err(Unavailable(format!(
            "{spec} is not installed in {} and --offline forbids the registry",
            dir.display()
        )));
    }
    let npm = Npm::locate().map_err(Unavailable)?;
    let spec_text = spec.to_string();
    let staging = super::staging_beside(&dir, ".install-").map_err(Unavailable)?;
    let prefix = staging.path().to_string_lossy().to_string();
    let npm_cache = staging.path().join(".npm-cache");
    let args = [
        "install",
        "--prefix",
        &prefix,
        "--no-save",
        "--no-package-lock",
        "--ignore-scripts",
        "--no-audit",
        "--no-fund",
        "--json",
        &spec_text,
    ];
    match npm.run(&args, staging.path(), &npm_cache) {
        Ok(_) => {}
        Err(NpmFailure::NotFound(why)) => {
            return Err(LibraryError::NotPublished(format!("the npm registry has no {spec}: {why}")))
        }
        Err(NpmFailure::Other(why)) => return Err(Unavailable(format!("npm could not install {spec}: {why}"))),
    }
    let _ = std::fs::remove_dir_all(&npm_cache);
    if !staging.path().join("node_modules").is_dir() {
        return Err(Unavailable(format!("npm install {spec} made no node_modules folder")));
    }
    super::publish_staged(staging, &dir, &modules).map_err(Unavailable)?;
    Ok(modules)
}

/// The cache folder's name of `spec`: `@scope/name@1.2.3` becomes `@scope+name@1.2.3` (one
/// path segment).
fn folder_name(spec: &str) -> String {
    spec.replace('/', "+")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_scoped_package_is_one_folder() {
        assert_eq!(super::folder_name("@rushstack/node-core-library@5.25.3"), "@rushstack+node-core-library@5.25.3");
        assert_eq!(super::folder_name("lockfile@1.0.4"), "lockfile@1.0.4");
    }

    #[test]
    fn a_spec_is_an_exact_version() {
        let s = super::LibrarySpec::parse("@rushstack/node-core-library@5.25.3").unwrap();
        assert_eq!((s.name.as_str(), s.version.to_string().as_str()), ("@rushstack/node-core-library", "5.25.3"));
        assert_eq!(s.to_string(), "@rushstack/node-core-library@5.25.3");
        for bad in
            ["proper-lockfile", "proper-lockfile@4", "proper-lockfile@^4.1.0", "proper-lockfile@latest", "@4.1.2"]
        {
            assert!(super::LibrarySpec::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_recipes_libraries_are_known_by_name() {
        let known = crate::handoff::known_libraries();
        assert!(known.contains(&"proper-lockfile") && known.contains(&"@rushstack/node-core-library"), "{known:?}");
        assert!(crate::handoff::is_library_item("proper-lockfile@4.1.1"));
        assert!(!crate::handoff::is_library_item("node@20") && !crate::handoff::is_library_item("proper-lockfile"));
    }

    #[test]
    fn offline_without_the_library_says_so() {
        let cache = tempfile::tempdir().unwrap();
        let spec = super::LibrarySpec::parse("lockfile@1.0.4").unwrap();
        let e = super::ensure(&spec, cache.path(), true).unwrap_err().to_string();
        assert!(e.contains("--offline") && e.contains("lockfile@1.0.4"), "{e}");
    }
}

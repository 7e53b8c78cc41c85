//! Library versions from the npm registry, for the hand-off recipes that race a library
//! (`library = "proper-lockfile@4.1.2"` in `matrices/handoff/recipes.toml`): each installed
//! once, with its dependencies, into `<cache>/libraries/<name>@<version>/node_modules/`
//! (`npm install --prefix`, its install scripts not run), published by renaming a finished
//! staging folder so that concurrent runs never see half an installation. The probes load it
//! from there (`params.library`, the `node_modules` folder) with `createRequire`.

use std::path::{Path, PathBuf};

use super::install::{Npm, NpmFailure};

/// The folder, inside the cache, of the installed libraries.
pub const LIBRARIES: &str = "libraries";

/// The `node_modules` folder of library `spec` (`name@version`, the version exact) in the
/// cache under `cache`, installing it first when it is not there; `offline` never asks the
/// registry.
///
/// Errors: why it cannot be had — offline and not installed, no npm, the registry's or npm's
/// own words (`E404` for a version it does not publish).
pub fn ensure(spec: &str, cache: &Path, offline: bool) -> Result<PathBuf, String> {
    let dir = cache.join(LIBRARIES).join(folder_name(spec));
    let modules = dir.join("node_modules");
    if modules.is_dir() {
        return Ok(modules);
    }
    if offline {
        return Err(format!("{spec} is not installed in {} and --offline forbids the registry", dir.display()));
    }
    let npm = Npm::locate()?;
    let staging = super::staging_beside(&dir, ".install-")?;
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
        spec,
    ];
    match npm.run(&args, staging.path(), &npm_cache) {
        Ok(_) => {}
        Err(NpmFailure::NotFound(why)) => return Err(format!("the npm registry has no {spec}: {why}")),
        Err(NpmFailure::Other(why)) => return Err(format!("npm could not install {spec}: {why}")),
    }
    let _ = std::fs::remove_dir_all(&npm_cache);
    if !staging.path().join("node_modules").is_dir() {
        return Err(format!("npm install {spec} made no node_modules folder"));
    }
    super::publish_staged(staging, &dir, &modules)?;
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
    fn offline_without_the_library_says_so() {
        let cache = tempfile::tempdir().unwrap();
        let e = super::ensure("lockfile@1.0.4", cache.path(), true).unwrap_err();
        assert!(e.contains("--offline") && e.contains("lockfile@1.0.4"), "{e}");
    }
}

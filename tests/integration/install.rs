//! `install` and `NAME@VERSION` (issue 10, item 1). A fake npm (`tests/fixtures/fake-npm`)
//! serves a registry folder, so that every path that must not need a network is tested
//! deterministically: two versions of one runtime side by side in `run`, `race` and
//! `runtimes`, installation on first use, the integrity and version checks, versions that do
//! not exist, `--offline`, an unreachable registry, malformed specs. One test downloads a real
//! build from the npm registry (skipped visibly where the registry cannot be reached; required
//! under CI).

use std::path::{Path, PathBuf};

use base64::Engine as _;
use sha2::Digest as _;

use crate::common::{conformance, fixtures, read_json};

/// The fake probe every fake bun runs (it speaks the session protocol).
fn fake_probe() -> PathBuf {
    fixtures().join("fake-runtimes").join("faults").join("node")
}

fn faults_matrices() -> PathBuf {
    fixtures().join("matrices").join("faults")
}

/// A registry folder for the fake npm, a private cache and a log of npm's arguments.
struct Registry {
    dir: tempfile::TempDir,
    cache: tempfile::TempDir,
    index: serde_json::Value,
}

impl Registry {
    fn new() -> Registry {
        Registry {
            dir: tempfile::tempdir().unwrap(),
            cache: tempfile::tempdir().unwrap(),
            index: serde_json::json!({}),
        }
    }

    /// The platform package of `runtime`, as the harness asks for it on this machine.
    fn package(runtime: &str) -> conformance::runtime::install::PlatformPackage {
        conformance::runtime::install::platform_package(runtime).expect("npm has builds for this platform")
    }

    /// Publishes bun `version` as a gzipped tarball holding `package/package.json` and a
    /// `package/bin/bun` that reports `reports` to `--version` and otherwise runs the fake
    /// probe; its integrity is the tarball's sha512, or another's when `tamper`.
    fn publish_bun(&mut self, version: &str, reports: &str, tamper: bool) {
        let pkg = Registry::package("bun");
        let script = format!(
            "#!/bin/sh\nif [ \"$1\" = --version ]; then echo {reports}; exit 0; fi\nexec {} \"$@\"\n",
            fake_probe().display()
        );
        let manifest = serde_json::json!({"name": pkg.name, "version": version}).to_string();
        let mut tgz = Vec::new();
        {
            let gz = flate2::write::GzEncoder::new(&mut tgz, flate2::Compression::fast());
            let mut b = tar::Builder::new(gz);
            for (path, body, mode) in
                [("package/package.json", manifest.as_bytes(), 0o644), ("package/bin/bun", script.as_bytes(), 0o644)]
            {
                let mut h = tar::Header::new_gnu();
                h.set_size(body.len() as u64);
                h.set_mode(mode);
                h.set_cksum();
                b.append_data(&mut h, path, body).unwrap();
            }
            b.into_inner().unwrap().finish().unwrap();
        }
        let file = self.dir.path().join(format!("bun-{version}.tgz"));
        std::fs::write(&file, &tgz).unwrap();
        let digest_of = if tamper { b"something else".to_vec() } else { tgz };
        let integrity =
            format!("sha512-{}", base64::engine::general_purpose::STANDARD.encode(sha2::Sha512::digest(&digest_of)));
        let entry = &mut self.index[&pkg.name];
        if entry.is_null() {
            *entry = serde_json::json!({"dist-tags": {}, "versions": {}});
        }
        entry["dist-tags"]["latest"] = version.into();
        entry["versions"][version] = serde_json::json!({
            "name": pkg.name,
            "version": version,
            "dist": {"integrity": integrity, "tarball": format!("https://registry.invalid/bun-{version}.tgz")},
            "file": file,
        });
        std::fs::write(self.dir.path().join("index.json"), self.index.to_string()).unwrap();
    }

    fn log(&self) -> PathBuf {
        self.dir.path().join("npm.log")
    }

    /// `conformance` with this cache and the fake npm on this registry.
    fn cmd(&self) -> assert_cmd::Command {
        let mut c = conformance();
        c.env("CONFORMANCE_NPM", fixtures().join("fake-npm").join("npm"))
            .env("FAKE_NPM_REGISTRY", self.dir.path())
            .env("FAKE_NPM_LOG", self.log())
            .env_remove("CONFORMANCE_OFFLINE")
            .arg("--cache-dir")
            .arg(self.cache.path());
        c
    }

    fn store(&self) -> PathBuf {
        self.cache.path().join("runtimes")
    }

    /// The entries of the store's folder for `runtime` (versions, and anything left behind).
    fn entries(&self, runtime: &str) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.store().join(runtime))
            .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        v.sort();
        v
    }
}

fn stderr_of(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stderr).into_owned()
}

fn stdout_of(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stdout).into_owned()
}

/// Two versions of one runtime: `install` fetches one (integrity checked, npm's cache inside
/// the store and gone afterwards), `run -r bun@A,bun@B` installs the other on first use and
/// measures both as separate rows with distinct cell ids, `runtimes` lists both with how to
/// select them, `race -c bun@A:… -c bun@B:…` races one against the other, and a second run
/// fetches nothing.
#[test]
#[cfg(unix)]
fn two_versions_of_one_runtime_are_two_rows() {
    let mut reg = Registry::new();
    reg.publish_bun("1.0.0", "1.0.0", false);
    reg.publish_bun("2.0.0", "2.0.0", false);
    reg.publish_bun("2.1.0-canary.1", "2.1.0-canary.1", false);

    let a = reg.cmd().args(["install", "bun@1"]).assert().success();
    let err = stderr_of(&a);
    let pkg = Registry::package("bun").name;
    assert!(err.contains(&format!("install  bun@1: fetching {pkg}@1.0.0 with npm pack")), "{err}");
    assert!(err.contains("sha512 verified"), "{err}");
    assert!(stdout_of(&a).contains("bun@1.0.0"), "{}", stdout_of(&a));
    assert_eq!(reg.entries("bun"), ["1.0.0"], "only the finished version is left");

    let out = tempfile::tempdir().unwrap();
    let a = reg
        .cmd()
        .arg("--matrices")
        .arg(faults_matrices())
        .args(["run", "-r", "bun@1.0.0,bun@2", "-v", "node.fake.wx", "-n", "3", "--amplify", "off", "--out"])
        .arg(out.path())
        .assert()
        .success();
    let err = stderr_of(&a);
    assert!(err.contains(&format!("install  bun@2: fetching {pkg}@2.0.0")), "installed on first use: {err}");
    assert!(!err.contains("bun@1.0.0: fetching"), "{err}");
    let text = stdout_of(&a);
    assert!(text.contains("\nbun 1.0.0\n") && text.contains("\nbun 2.0.0\n"), "{text}");
    let r = read_json(&out.path().join("results.json"));
    let labels: Vec<&str> =
        r["run_info"]["runtimes"].as_array().unwrap().iter().map(|x| x["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["bun 1.0.0", "bun 2.0.0"]);
    let ids: Vec<&str> = r["cells"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    let unique: std::collections::BTreeSet<&&str> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "cell ids must be distinct: {ids:?}");
    assert!(ids.contains(&"bun 1.0.0/node.fake.wx/second-comer/file"), "{ids:?}");
    assert!(ids.contains(&"bun 2.0.0/node.fake.wx/second-comer/file"), "{ids:?}");

    let a = reg.cmd().args(["runtimes", "--json", "-r", "bun@1.0.0,bun@2,bun@3"]).assert().success();
    let v: serde_json::Value = serde_json::from_str(&stdout_of(&a)).unwrap();
    let rows: Vec<(String, String, String)> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["select"].as_str().unwrap().into(),
                x["status"].as_str().unwrap().into(),
                x["version"].as_str().unwrap().into(),
            )
        })
        .collect();
    let row = |s: &str, st: &str, ver: &str| (s.to_string(), st.to_string(), ver.to_string());
    assert_eq!(
        rows,
        [row("bun@1.0.0", "found", "1.0.0"), row("bun@2.0.0", "found", "2.0.0"), row("bun@3", "not-found", "")]
    );
    assert!(v[2]["reason"].as_str().unwrap().contains("`conformance install bun@3` fetches it"), "{v}");
    // a listing never fetches
    assert_eq!(reg.entries("bun"), ["1.0.0", "2.0.0"]);
    let table = stdout_of(&reg.cmd().args(["runtimes", "-r", "bun@1.0.0"]).assert().success());
    assert!(table.contains("select with") && table.contains("bun@1.0.0"), "{table}");

    let a = reg
        .cmd()
        .arg("--matrices")
        .arg(faults_matrices())
        .args([
            "race",
            "-c",
            "bun@1.0.0:node.fake.wx",
            "-c",
            "bun@2:node.fake.wx",
            "-n",
            "3",
            "--amplify",
            "off",
            "--json",
        ])
        .assert()
        .success();
    assert!(!stderr_of(&a).contains("fetching"), "{}", stderr_of(&a));
    let race: serde_json::Value = serde_json::from_str(&stdout_of(&a)).unwrap();
    let slots: Vec<&str> =
        race["contenders"].as_array().unwrap().iter().map(|c| c["runtime"].as_str().unwrap()).collect();
    assert_eq!(slots, ["bun 1.0.0", "bun 2.0.0"]);

    // npm was told to keep its cache inside the store, in folders that are gone now
    let log = std::fs::read_to_string(reg.log()).unwrap();
    let mut calls = 0;
    for line in log.lines() {
        let args: Vec<String> = serde_json::from_str(line).unwrap();
        let cache = PathBuf::from(&args[args.iter().position(|a| a == "--cache").expect("--cache given") + 1]);
        assert!(cache.starts_with(reg.store()), "{cache:?}");
        assert!(!cache.exists(), "{cache:?} left behind");
        calls += 1;
    }
    assert_eq!(calls, 6, "view + view + pack per installed version: {log}");
}

/// `--offline`, an unreachable registry and a missing npm: `install` exits 4 naming the
/// version; `run` lists the runtime as not found with that reason (exit 4 when nothing else
/// is measurable, no --out made) and never asks npm under --offline.
#[test]
#[cfg(unix)]
fn a_version_that_cannot_be_fetched_is_named() {
    let mut reg = Registry::new();
    reg.publish_bun("1.0.0", "1.0.0", false);
    let out = tempfile::tempdir().unwrap();
    let a = reg.cmd().args(["--offline", "install", "bun@1.0.0"]).assert().code(4);
    let err = stderr_of(&a);
    assert!(err.contains("cannot install bun@1.0.0: not installed in") && err.contains("--offline forbids"), "{err}");
    let a = reg
        .cmd()
        .args(["--offline", "run", "-r", "bun@1.0.0", "-v", "node.writeFileSync.wx", "--out"])
        .arg(out.path().join("o"))
        .assert()
        .code(4);
    let err = stderr_of(&a);
    assert!(err.contains("skip     bun") && err.contains("bun@1.0.0 is not installed in"), "{err}");
    assert!(err.contains("--offline forbids fetching it"), "{err}");
    assert!(!out.path().join("o").exists());
    assert!(!reg.log().exists(), "--offline asked npm");

    let a = reg.cmd().env("FAKE_NPM_FAIL", "ECONNREFUSED").args(["install", "bun@1.0.0"]).assert().code(4);
    let err = stderr_of(&a);
    assert!(
        err.contains("cannot install bun@1.0.0: cannot ask the npm registry") && err.contains("ECONNREFUSED"),
        "{err}"
    );
    let a = reg
        .cmd()
        .env("FAKE_NPM_FAIL", "ENOTFOUND")
        .args(["run", "-r", "bun@1.0.0,bun", "-v", "node.writeFileSync.wx", "--dry-run"])
        .assert();
    let err = stderr_of(&a);
    assert!(err.contains("not found: bun@1.0.0: cannot ask the npm registry") && err.contains("ENOTFOUND"), "{err}");

    let a = reg.cmd().env("CONFORMANCE_NPM", "/nonexistent/npm").args(["install", "bun@1.0.0"]).assert().code(4);
    assert!(stderr_of(&a).contains("cannot start /nonexistent/npm"), "{}", stderr_of(&a));
    assert_eq!(reg.entries("bun"), Vec::<String>::new(), "nothing installed, nothing left behind");
}

/// A tarball whose sha512 is not the registry's, and a binary that reports another version,
/// are refused (exit 4, both named) and leave nothing in the store.
#[test]
#[cfg(unix)]
fn builds_that_fail_their_checks_are_refused() {
    let mut reg = Registry::new();
    reg.publish_bun("1.0.0", "1.0.0", true);
    reg.publish_bun("2.0.0", "9.9.9", false);
    let a = reg.cmd().args(["install", "bun@1.0.0"]).assert().code(4);
    let err = stderr_of(&a);
    assert!(err.contains("does not match the registry's integrity: sha512-"), "{err}");
    let a = reg.cmd().args(["install", "bun@2.0.0"]).assert().code(4);
    let err = stderr_of(&a);
    assert!(err.contains("reports version 9.9.9, not 2.0.0"), "{err}");
    assert_eq!(reg.entries("bun"), Vec::<String>::new());
}

/// Bad specs are bad input (exit 2), each naming the flag and the value: a version the
/// registry does not have (with the published range and the nearest versions, or the oldest
/// that exists), a malformed version, a runtime whose versions cannot be installed, an
/// unknown runtime; and `--require bun@2` fails (exit 5) when only bun 1.0.0 was measured.
#[test]
#[cfg(unix)]
fn bad_versions_name_the_flag_and_the_value() {
    let mut reg = Registry::new();
    reg.publish_bun("1.0.0", "1.0.0", false);
    reg.publish_bun("1.2.0", "1.2.0", false);
    let pkg = Registry::package("bun");
    let (name, platform) = (pkg.name.as_str(), pkg.platform.as_str());
    let cases: Vec<(&[&str], Vec<String>)> = vec![
        (
            &["install", "bun@1.1.0"],
            vec![format!("'bun@1.1.0': no published {name} version 1.1.0"), "nearest: 1.0.0, 1.2.0".into()],
        ),
        (&["install", "bun@0.5.0"], vec![format!("the oldest that exists for {platform} is 1.0.0")]),
        (
            &["install", "bun@3"],
            vec![format!("no published {name} version in 3.*"), "2 versions, 1.0.0 to 1.2.0".into()],
        ),
        (&["run", "-r", "bun@1.1.0"], vec!["invalid value for --runtime: 'bun@1.1.0': no published".into()]),
        (
            &["run", "-r", "bun@1.x.y.z"],
            vec!["invalid value for --runtime: 'bun@1.x.y.z': '1.x.y.z' is not a version".into()],
        ),
        (&["run", "-r", "node,bun@"], vec!["invalid value for --runtime: 'bun@': no version after '@'".into()]),
        (&["run", "-r", "bunn@1.0.0"], vec!["unknown runtime 'bunn' (in --runtime)".into()]),
        (&["run", "-r", "pwsh@7.6"], vec!["--runtime".into(), "versions of pwsh cannot be installed".into()]),
        // CoreCLR comes from NuGet, which floats a partial version to its highest, not a range
        (
            &["install", "coreclr@>=8 <9"],
            vec!["NuGet resolves a CoreCLR version from a partial one: give 8, 9.0".into()],
        ),
        (&["run", "--require", "bun@^^1"], vec!["invalid value for --require: 'bun@^^1'".into()]),
        (
            &["race", "-c", "bun@1.2.3.4:node.writeFileSync.wx", "-c", "node:node.writeFileSync.wx"],
            vec!["invalid value for --contender: 'bun@1.2.3.4'".into()],
        ),
        (&["install", "bun"], vec!["'bun' is not NAME@VERSION".into()]),
        (&["install", "mono@6.8"], vec!["versions of mono cannot be installed".into()]),
    ];
    for (args, expected) in &cases {
        let err = stderr_of(&reg.cmd().args(*args).assert().code(2));
        for e in expected {
            assert!(err.contains(e.as_str()), "{args:?}: expected {e:?} in {err}");
        }
        assert!(!err.contains("panicked"), "{err}");
    }
    let out = tempfile::tempdir().unwrap();
    let a = reg
        .cmd()
        .arg("--matrices")
        .arg(faults_matrices())
        .args(["run", "-r", "bun@1.0.0", "--require", "bun@1.2", "-v", "node.fake.wx", "--amplify", "off", "--out"])
        .arg(out.path().join("o"))
        .assert()
        .code(5);
    assert!(
        stderr_of(&a).contains("required runtime(s) not available: bun@1.2 (not selected by --runtime)"),
        "{}",
        stderr_of(&a)
    );
}

/// Whether the npm registry answers for `package@version` through npm within 60 s; when it
/// does not, prints SKIPPED (or fails under CI, where it must).
fn registry_reachable(package: &str, version: &str) -> bool {
    let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    let why = match which::which("npm") {
        Err(_) => Some("no npm on PATH".to_string()),
        Ok(npm) => {
            let cache = tempfile::tempdir().unwrap();
            let out = std::process::Command::new(npm)
                .args([
                    "view",
                    &format!("{package}@{version}"),
                    "version",
                    "--fetch-retries=1",
                    "--fetch-timeout=30000",
                ])
                .arg("--cache")
                .arg(cache.path())
                .output();
            match out {
                Ok(o) if o.status.success() && String::from_utf8_lossy(&o.stdout).trim() == version => None,
                Ok(o) => Some(format!("npm view failed: {}", String::from_utf8_lossy(&o.stderr).trim())),
                Err(e) => Some(format!("npm did not start: {e}")),
            }
        }
    };
    match why {
        None => true,
        Some(why) if ci => panic!("the npm registry must be reachable in CI: {why}"),
        Some(why) => {
            eprintln!("SKIPPED: real install from the npm registry: {why}");
            false
        }
    }
}

/// One real download (kept small: one Bun build, about 38 MB): `install bun@1.1.44` fetches the
/// platform's package from the npm registry with the real npm, checks it against the
/// registry's sha512, and the version then runs its `--version` and is listed by `runtimes`.
/// Nothing is written to the home folder (npm's cache and logs stay inside the store).
#[test]
fn a_real_version_installs_from_the_npm_registry() {
    let pkg = conformance::runtime::install::platform_package("bun").expect("bun builds for this platform");
    if !registry_reachable(&pkg.name, "1.1.44") {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut c = conformance();
    c.env_remove("CONFORMANCE_NPM").env_remove("CONFORMANCE_OFFLINE").arg("--cache-dir").arg(cache.path());
    if cfg!(unix) {
        // a private home: whatever npm or bun wrote there would show
        if let Some(rc) = dirs::home_dir().map(|h| h.join(".npmrc")).filter(|p| p.is_file()) {
            c.env("npm_config_userconfig", rc);
        }
        c.env("HOME", home.path());
    }
    let a = c.args(["install", "--json", "bun@1.1.44"]).assert().success();
    let v: serde_json::Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    assert_eq!(v[0]["select"], "bun@1.1.44", "{v}");
    assert_eq!(v[0]["fetched"], true);
    assert_eq!(v[0]["package"], pkg.name.as_str());
    assert!(v[0]["integrity"].as_str().unwrap().starts_with("sha512-"), "{v}");
    let exe = Path::new(v[0]["path"].as_str().unwrap());
    assert!(exe.starts_with(cache.path().join("runtimes").join("bun").join("1.1.44")), "{exe:?}");
    let a = conformance()
        .arg("--cache-dir")
        .arg(cache.path())
        .args(["runtimes", "--json", "-r", "bun@1.1"])
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    assert_eq!((v[0]["status"].as_str(), v[0]["version"].as_str()), (Some("found"), Some("1.1.44")), "{v}");
    let left: Vec<_> =
        std::fs::read_dir(cache.path().join("runtimes").join("bun")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, ["1.1.44"], "staging folders left");
    if cfg!(unix) {
        let written: Vec<_> = std::fs::read_dir(home.path()).unwrap().map(|e| e.unwrap().path()).collect();
        assert!(written.is_empty(), "written to the home folder: {written:?}");
    }
}

/// Two runs installing one version at once both end with it: both fetch (each `npm pack` takes
/// a second, so they overlap), the second `rename` into place fails, and the complete
/// installation the first left there is used.
#[test]
#[cfg(unix)]
fn two_installations_of_one_version_at_once_both_succeed() {
    let mut reg = Registry::new();
    reg.publish_bun("1.0.0", "1.0.0", false);
    let runs: Vec<_> = (0..2)
        .map(|_| {
            let mut c = reg.cmd();
            c.env("FAKE_NPM_PACK_SLEEP", "1");
            std::thread::spawn(move || c.args(["install", "--json", "bun@1.0.0"]).output().unwrap())
        })
        .collect();
    for r in runs {
        let out = r.join().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v[0]["select"], "bun@1.0.0");
    }
    assert_eq!(reg.entries("bun"), ["1.0.0"], "staging folders left");
    let log = std::fs::read_to_string(reg.log()).unwrap();
    assert_eq!(log.lines().filter(|l| l.starts_with("[\"pack\"")).count(), 2, "both fetched: {log}");
}

/// Whether `dotnet` with an SDK is on PATH (CoreCLR versions install through its NuGet
/// restore); when it is not: SKIPPED, or a failure under CI, where coreclr is required.
fn dotnet_sdk_present() -> bool {
    let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    let ok = std::process::Command::new("dotnet")
        .arg("--list-sdks")
        .output()
        .is_ok_and(|o| o.status.success() && !o.stdout.is_empty());
    match (ok, ci) {
        (true, _) => true,
        (false, true) => panic!("CI needs the .NET SDK's dotnet on PATH (run `bash .ci/install coreclr`)"),
        (false, false) => {
            eprintln!("SKIPPED: CoreCLR versions from NuGet: no .NET SDK on PATH");
            false
        }
    }
}

/// Issue 24: `install coreclr@8 coreclr@9` lays out two CoreCLR versions from NuGet's runtime
/// packs (real downloads, about 37 MB each), `runtimes` finds each by its version alone, and
/// `diff -r coreclr@8 -r coreclr@9` measures both with the same C# probe and compares every
/// cell (second comers only here, to keep it short): each side is the version asked for.
#[test]
fn coreclr_versions_install_from_nuget_and_compare() {
    if !dotnet_sdk_present() {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let a = conformance()
        .arg("--cache-dir")
        .arg(cache.path())
        .args(["install", "--json", "coreclr@8", "coreclr@9"])
        .assert();
    let out = a.get_output();
    assert!(out.status.success(), "install failed: {}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for (row, major) in v.as_array().unwrap().iter().zip(["8.0.", "9.0."]) {
        assert!(row["version"].as_str().unwrap().starts_with(major), "{row}");
        assert_eq!(row["package"], conformance::runtime::nuget::pack_id().unwrap().as_str(), "{row}");
        assert!(row["integrity"].as_str().unwrap().starts_with("sha512-"), "{row}");
        assert!(Path::new(row["path"].as_str().unwrap()).starts_with(cache.path()), "{row}");
    }
    let a = conformance()
        .arg("--cache-dir")
        .arg(cache.path())
        .args(["runtimes", "--json", "-r", "coreclr@8,coreclr@9"])
        .assert()
        .success();
    let rts: serde_json::Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    let versions: Vec<&str> = rts.as_array().unwrap().iter().filter_map(|r| r["version"].as_str()).collect();
    assert_eq!(versions.len(), 2, "{rts}");
    assert!(versions[0].starts_with("8.0.") && versions[1].starts_with("9.0."), "{rts}");
    // a run without --runtime measures the installed versions beside what is on PATH
    let a = conformance()
        .arg("--cache-dir")
        .arg(cache.path())
        .args(["run", "--dry-run", "-v", "dotnet.File.Move"])
        .assert()
        .success();
    let plan = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    let errs = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
    for v in &versions {
        assert!(
            errs.lines().any(|l| l.starts_with("found") && l.contains(&format!("CoreCLR {v}"))),
            "a default run leaves out CoreCLR {v}: {errs}\n{plan}"
        );
    }
    // the two runs go to conformance-runs/ below the working folder
    let work = tempfile::tempdir().unwrap();
    let a = conformance()
        .current_dir(work.path())
        .arg("--cache-dir")
        .arg(cache.path())
        .args(["diff", "-r", "coreclr@8", "-r", "coreclr@9", "--scenario", "second-comer"])
        .assert();
    let out = a.get_output();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(matches!(out.status.code(), Some(0 | 1)), "diff failed: {text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains(&format!("A = coreclr@8 (CoreCLR {})", versions[0])), "{text}");
    assert!(text.contains(&format!("B = coreclr@9 (CoreCLR {})", versions[1])), "{text}");
    let compared = text
        .lines()
        .find_map(|l| {
            l.split(" compared cells")
                .next()
                .filter(|_| l.contains(" compared cells"))?
                .rsplit(' ')
                .next()?
                .parse::<usize>()
                .ok()
        })
        .expect("a summary line");
    assert!(compared >= 80, "every second-comer cell of the dotnet matrix is compared: {text}");
}

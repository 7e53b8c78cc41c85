//! Finding runtimes: on `PATH` (the `which` crate), at known fallback locations, and at paths
//! given with `--runtime NAME=PATH`.

use std::path::{Path, PathBuf};

use super::install::{self, InstallError, Installed, Store, VersionRequest, VersionSpec};
use super::{adapter, known_names, Adapter, Runtime, Status, ADAPTERS};
use crate::error::{Error, Result};

/// What `--runtime` asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Requested {
    /// Registry names to look up on `PATH`; `None` means every adapter.
    pub names: Option<Vec<&'static str>>,
    /// Explicit executables: (adapter name, path).
    pub explicit: Vec<(&'static str, PathBuf)>,
    /// `NAME@VERSION` items, in the order given, repeats dropped.
    pub versions: Vec<VersionRequest>,
    /// `LIBRARY@VERSION` items ([`crate::handoff::is_library_item`]): library versions to race
    /// instead of the ones the recipes pin, in the order given, repeats dropped.
    pub libraries: Vec<crate::handoff::LibrarySpec>,
    /// What [`Requested::locate_versions`] found for each of [`Requested::versions`], in the
    /// same order: the installed version, or why there is none. Empty until then.
    pub located: Vec<Located>,
}

/// Where a `NAME@VERSION` item of [`Requested`] stands after [`Requested::locate_versions`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// The item.
    pub request: VersionRequest,
    /// The installed version it names, or why there is none (naming the item).
    pub installed: std::result::Result<Installed, String>,
}

/// Whether [`Requested::locate_versions`] may fetch a version that is not installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fetch {
    /// Install it from the npm registry (`run`, `race`).
    Allowed,
    /// `--offline`: never ask the registry.
    Offline,
    /// Only list what is installed (`runtimes`).
    Never,
}

impl Requested {
    /// Parses `--runtime` values: each is a comma-separated list of `NAME`, `NAME=PATH` or
    /// `NAME@VERSION` (see [`VersionRequest::parse`]).
    /// A comma inside a `PATH` or a version range is kept when what follows it is not a runtime
    /// name (`NAME`, `NAME=…`, `NAME@…` or `all`): `node=/opt/a,b/node,deno` is
    /// `node=/opt/a,b/node` and `deno`. With only `NAME=PATH` and `NAME@VERSION` items, nothing
    /// is looked up on `PATH`.
    ///
    /// Errors: as [`Requested::parse_for`] with `--runtime`.
    pub fn parse(values: &[String]) -> Result<Requested> {
        Requested::parse_for(values, "--runtime")
    }

    /// [`Requested::parse`] for the values of `flag` (`--runtime`, `--require`).
    ///
    /// Errors: [`Error::UnknownRuntime`] naming `flag` for an unknown name, [`Error::Usage`]
    /// naming `flag` for an empty item, an empty path or a malformed `NAME@VERSION`.
    pub fn parse_for(values: &[String], flag: &str) -> Result<Requested> {
        if values.is_empty() {
            return Ok(Requested::default());
        }
        let mut names = Vec::new();
        let mut explicit = Vec::new();
        let mut versions: Vec<VersionRequest> = Vec::new();
        let mut libraries = Vec::new();
        for item in values.iter().flat_map(|v| split_items(v)).map(str::trim) {
            if item.is_empty() {
                return Err(Error::Usage { flag: flag.into(), message: "empty runtime name".into() });
            }
            if crate::handoff::is_library_item(item) {
                let spec = crate::handoff::LibrarySpec::parse(item)
                    .map_err(|message| Error::Usage { flag: flag.into(), message })?;
                if libraries.iter().any(|l: &crate::handoff::LibrarySpec| l.name == spec.name) {
                    return Err(Error::Usage {
                        flag: flag.into(),
                        message: format!("{} is given twice: a run races one version of a library", spec.name),
                    });
                }
                libraries.push(spec);
                continue;
            }
            if is_versioned(item) {
                let r = VersionRequest::parse(item, flag)?;
                if !versions.iter().any(|v| v.runtime == r.runtime && v.spec == r.spec) {
                    versions.push(r);
                }
                continue;
            }
            let (name, path) = match item.split_once('=') {
                Some((n, p)) => (n.trim(), Some(p)),
                None => (item, None),
            };
            if name == "all" && path.is_none() {
                names.extend(ADAPTERS.iter().map(|a| a.name()));
                continue;
            }
            let a = adapter(name).ok_or_else(|| Error::UnknownRuntime {
                name: name.to_string(),
                flag: flag.into(),
                known: known_names(),
            })?;
            match path {
                Some("") => {
                    return Err(Error::Usage {
                        flag: flag.into(),
                        message: format!("'{item}' names no path after '='"),
                    })
                }
                Some(p) => {
                    // a path with a folder in it is taken from the current folder; a bare name is
                    // looked up on PATH at discovery
                    let p = PathBuf::from(p);
                    let p = if p.components().count() > 1 { std::path::absolute(&p).unwrap_or(p) } else { p };
                    explicit.push((a.name(), p));
                }
                None => {
                    if !names.contains(&a.name()) {
                        names.push(a.name());
                    }
                }
            }
        }
        // only library versions: the runtimes are the default ones
        let names = (!(names.is_empty() && explicit.is_empty() && versions.is_empty())).then_some(names);
        Ok(Requested { names, explicit, versions, libraries, located: Vec::new() })
    }

    /// Finds each `NAME@VERSION` item's version in `store` — an exact version, or the highest
    /// installed one in a range — and, with [`Fetch::Allowed`], installs the items that have
    /// none ([`install::install`]; `latest` always asks the registry), telling `say` before
    /// and after each download. An item that cannot be had otherwise (not installed with
    /// `--offline` or in `runtimes`; npm or the registry unreachable; a build that fails its
    /// checks) is kept with the reason, and its runtime is then listed as not found.
    ///
    /// Errors: [`Error::Usage`] naming `flag` and the item when the registry has no such
    /// version for this platform (naming the versions it has); [`Error::Output`] when the
    /// store cannot be written.
    pub fn locate_versions(&mut self, store: &Store, fetch: Fetch, flag: &str, say: install::Say<'_>) -> Result<()> {
        self.located.clear();
        for request in &self.versions {
            let have =
                store.best(request).filter(|_| !(fetch == Fetch::Allowed && request.spec == VersionSpec::Latest));
            let installed = match (have, fetch) {
                (Some(i), _) => Ok(i),
                (None, Fetch::Allowed) => match install::install(store, request, say) {
                    Ok((i, _)) => Ok(i),
                    Err(InstallError::Unavailable(why)) => Err(format!("{}: {why}", request.text)),
                    Err(e) => return Err(e.into_error(flag, &request.text)),
                },
                (None, Fetch::Offline) => Err(format!(
                    "{} is not installed in {}, and --offline forbids fetching it",
                    request.text,
                    store.root().display()
                )),
                (None, Fetch::Never) => Err(format!(
                    "{} is not installed in {} (`conformance install {}` fetches it)",
                    request.text,
                    store.root().display(),
                    request.text
                )),
            };
            self.located.push(Located { request: request.clone(), installed });
        }
        Ok(())
    }

    /// Adds every version in `store` as if asked for by `NAME@VERSION`, located (`runtimes`
    /// without `--runtime`).
    pub fn add_installed(&mut self, store: &Store) {
        for i in store.all() {
            let request =
                VersionRequest { runtime: i.runtime, spec: VersionSpec::Exact(i.version.clone()), text: i.selector() };
            self.versions.push(request.clone());
            self.located.push(Located { request, installed: Ok(i) });
        }
    }

    /// The runtime of `found` that the `NAME@VERSION` item `text` selected, once located.
    pub fn selected_version<'a>(&self, text: &str, found: &'a [Runtime]) -> Option<&'a Runtime> {
        let l = self.located.iter().find(|l| l.request.text == text)?;
        match &l.installed {
            Ok(i) => found.iter().find(|r| r.selector == i.selector()),
            Err(_) => found.iter().find(|r| r.selector == l.request.text),
        }
    }
}

/// True when `item` is `NAME@VERSION`: an `@` before any `=`.
fn is_versioned(item: &str) -> bool {
    match (item.find('@'), item.find('=')) {
        (Some(at), Some(eq)) => at < eq,
        (Some(_), None) => true,
        _ => false,
    }
}

/// Splits one `--runtime` value at the commas that start a new item: those followed by a
/// runtime name (`NAME`, `NAME=…`, `NAME@…`, `all`), or any comma while no `NAME=PATH` or
/// `NAME@VERSION` item is open (so an unknown name is still reported as one). Other commas
/// belong to the open item's path or version range (`bun@>=1.1,<1.2`).
pub fn split_items(value: &str) -> Vec<&str> {
    let starts_item = |piece: &str| {
        let name = piece.split(['=', '@']).next().unwrap_or(piece).trim();
        name == "all" || adapter(name).is_some() || crate::handoff::is_library_item(piece.trim())
    };
    let mut items: Vec<&str> = Vec::new();
    let mut start = 0;
    for (comma, _) in value.match_indices(',') {
        let next = value[comma + 1..].split(',').next().unwrap_or("");
        if value[start..comma].contains(['=', '@']) && !starts_item(next) {
            continue;
        }
        items.push(&value[start..comma]);
        start = comma + 1;
    }
    items.push(&value[start..]);
    items
}

/// The outcome of discovery: every selected runtime, found or not.
#[derive(Debug, Clone)]
pub struct Discovery {
    /// In table order: registry order; within a kind, the PATH entry, explicit paths, then
    /// installed versions in the order asked for.
    pub runtimes: Vec<Runtime>,
}

fn blank(a: &'static dyn Adapter, path: Option<PathBuf>, status: Status) -> Runtime {
    Runtime {
        name: a.name(),
        label: a.name().to_string(),
        version: String::new(),
        path,
        status,
        families: a.families().to_vec(),
        artifact: None,
        selector: a.name().to_string(),
        adapter: a,
    }
}

/// A runtime at `exe` whose version query has not run yet: [`Status::Found`] with no version,
/// which [`query_versions`] fills in (or turns into [`Status::Broken`]).
fn probe_exe(a: &'static dyn Adapter, exe: PathBuf) -> Runtime {
    blank(a, Some(exe), Status::Found)
}

/// Runs the version query of every runtime in `out` that has a path and is [`Status::Found`]
/// (in [`discover`], only those [`probe_exe`] made), all at once, one thread each (a query is
/// a process start, PowerShell's the longest, and one after another they added up), and sets
/// each one's version and label, or [`Status::Broken`] with why.
fn query_versions(out: &mut [Runtime]) {
    std::thread::scope(|s| {
        let queries: Vec<_> = out
            .iter_mut()
            .filter(|rt| rt.status == Status::Found)
            .filter_map(|rt| {
                let exe = rt.path.clone()?;
                let a = rt.adapter;
                Some((rt, s.spawn(move || a.version(&exe))))
            })
            .collect();
        for (rt, q) in queries {
            match q.join().unwrap_or_else(|_| Err("the version query panicked".into())) {
                Ok((version, label)) => {
                    rt.version = version;
                    rt.label = label;
                }
                Err(why) => rt.status = Status::Broken(why),
            }
        }
    });
}

/// The folder where `.ci/install` links the runtimes it installs (`<project>/.runtimes/bin`).
pub fn project_runtimes_bin() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(".runtimes").join("bin")
}

/// Finds `a`'s executable: on `PATH`, then in [`project_runtimes_bin`], then at the
/// adapter's fallback locations.
pub fn locate(a: &dyn Adapter) -> Option<PathBuf> {
    let local = project_runtimes_bin();
    a.executables()
        .iter()
        .find_map(|e| which::which(e).ok())
        .or_else(|| a.executables().iter().map(|e| local.join(e)).find(|p| p.is_file()))
        .or_else(|| a.fallback_paths().iter().map(PathBuf::from).find(|p| p.is_file()))
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Discovers the requested runtimes: runs each one's version query (at most 60 s each).
/// Never fails: missing and broken runtimes come back with that status and a reason.
pub fn discover(req: &Requested) -> Discovery {
    let mut out: Vec<Runtime> = Vec::new();
    for a in ADAPTERS.iter().copied() {
        let selected = req.names.as_ref().is_none_or(|n| n.contains(&a.name()));
        if selected {
            match locate(a) {
                Some(exe) => out.push(probe_exe(a, exe)),
                None => out.push(blank(a, None, Status::NotFound(a.absent_hint()))),
            }
        }
        for (name, path) in &req.explicit {
            if *name != a.name() {
                continue;
            }
            let dup = out.iter().any(|r| r.path.as_deref().map(canonical) == Some(canonical(path)));
            if dup {
                continue;
            }
            let exe = if path.components().count() == 1 { which::which(path).ok() } else { Some(path.clone()) };
            let mut rt = match exe.filter(|p| p.is_file()) {
                Some(exe) => probe_exe(a, exe),
                None => blank(
                    a,
                    Some(path.clone()),
                    Status::NotFound(if path.is_dir() {
                        format!("{} is a folder, not an executable", path.display())
                    } else {
                        format!("{} does not exist", path.display())
                    }),
                ),
            };
            rt.selector = format!("{name}={}", path.display());
            out.push(rt);
        }
        // installed versions, in the order asked for
        for l in req.located.iter().filter(|l| l.request.runtime == a.name()) {
            let mut rt = match &l.installed {
                Ok(i) => {
                    if out.iter().any(|r| r.path.as_deref().map(canonical) == Some(canonical(&i.exe))) {
                        continue;
                    }
                    probe_exe(a, i.exe.clone())
                }
                Err(why) => blank(a, None, Status::NotFound(why.clone())),
            };
            rt.selector = match &l.installed {
                Ok(i) => i.selector(),
                Err(_) => l.request.text.clone(),
            };
            out.push(rt);
        }
    }
    query_versions(&mut out);
    // two rows must never share a label
    let labels: Vec<String> = out.iter().map(|r| r.label.clone()).collect();
    for (i, rt) in out.iter_mut().enumerate() {
        if labels.iter().filter(|l| **l == labels[i]).count() > 1 {
            if let Some(p) = &rt.path {
                rt.label = format!("{} ({})", rt.label, p.display());
            }
        }
    }
    Discovery { runtimes: out }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::path::PathBuf;

    use super::{discover, Fetch, Requested, Status, Store};

    #[test]
    fn parses_lists_paths_and_aliases() {
        let r = Requested::parse(&["node,bun".into(), "node=/opt/node22/bin/node".into(), "dotnet".into()]).unwrap();
        assert_eq!(r.names, Some(vec!["node", "bun", "coreclr"]));
        assert_eq!(r.explicit, vec![("node", PathBuf::from("/opt/node22/bin/node"))]);
        assert_eq!(Requested::parse(&[]).unwrap().names, None);
        let only = Requested::parse(&["deno=/x/deno".into()]).unwrap();
        assert_eq!(only.names, Some(vec![]));
    }

    #[test]
    fn rejects_unknown_and_empty() {
        let e = Requested::parse(&["nodee".into()]).unwrap_err();
        assert!(e.to_string().contains("unknown runtime 'nodee'") && e.to_string().contains("node, bun"), "{e}");
        assert!(Requested::parse(&["node=".into()]).is_err());
        assert!(Requested::parse(&["node,,bun".into()]).is_err());
    }

    #[test]
    fn a_comma_in_a_path_is_kept_unless_a_runtime_follows() {
        let r = Requested::parse(&["node=/opt/a,b/node,deno".into()]).unwrap();
        assert_eq!(r.explicit, vec![("node", PathBuf::from("/opt/a,b/node"))]);
        assert_eq!(r.names, Some(vec!["deno"]));
        let r = Requested::parse(&["bun,node=/x,y,,z/node, mono=/m,n".into()]).unwrap();
        assert_eq!(r.names, Some(vec!["bun"]));
        assert_eq!(r.explicit, vec![("node", PathBuf::from("/x,y,,z/node")), ("mono", PathBuf::from("/m,n"))]);
        // without an open NAME=PATH, every comma separates, so typos stay errors
        let e = Requested::parse(&["node,nodee".into()]).unwrap_err().to_string();
        assert!(e.contains("unknown runtime 'nodee'"), "{e}");
        assert!(Requested::parse(&["node=/x,".into()]).is_ok_and(|r| r.explicit[0].1 == Path::new("/x,")));
    }

    /// `NAME@VERSION` items sit beside names and paths; a comma inside a range stays in it
    /// unless a runtime name follows; repeats are dropped; only names are looked up on PATH.
    #[test]
    fn parses_versions_beside_names_and_paths() {
        let r = Requested::parse(&["bun@1.3.14,bun@>=1.1,<1.2,node".into(), "deno@2,bun@1.3.14".into()]).unwrap();
        let texts: Vec<&str> = r.versions.iter().map(|v| v.text.as_str()).collect();
        assert_eq!(texts, ["bun@1.3.14", "bun@>=1.1,<1.2", "deno@2"]);
        assert_eq!(r.names, Some(vec!["node"]));
        let r = Requested::parse(&["node=/opt/n@22/bin/node,node@22".into()]).unwrap();
        assert_eq!(r.explicit, vec![("node", PathBuf::from("/opt/n@22/bin/node"))]);
        assert_eq!(r.versions[0].text, "node@22");
        let e = Requested::parse_for(&["bun@1.x.y.z".into()], "--require").unwrap_err().to_string();
        assert!(e.starts_with("invalid value for --require: 'bun@1.x.y.z'"), "{e}");
    }

    /// A library's `NAME@VERSION` sits beside runtimes (a scoped name too, after a range);
    /// given alone, the runtimes stay the default ones; its version is exact and given once.
    #[test]
    fn parses_library_versions_beside_runtimes() {
        let r = Requested::parse(&["node@20,proper-lockfile@4.1.1,@rushstack/node-core-library@5.20.0,deno".into()])
            .unwrap();
        let libs: Vec<String> = r.libraries.iter().map(ToString::to_string).collect();
        assert_eq!(libs, ["proper-lockfile@4.1.1", "@rushstack/node-core-library@5.20.0"]);
        assert_eq!(r.versions.iter().map(|v| v.text.as_str()).collect::<Vec<_>>(), ["node@20"]);
        assert_eq!(r.names, Some(vec!["deno"]));
        let alone = Requested::parse(&["lockfile@1.0.3".into()]).unwrap();
        assert_eq!((alone.names, alone.libraries.len()), (None, 1));
        let e = Requested::parse(&["lockfile@1".into()]).unwrap_err().to_string();
        assert!(e.contains("--runtime") && e.contains("exact"), "{e}");
        let e = Requested::parse(&["lockfile@1.0.3,lockfile@1.0.4".into()]).unwrap_err().to_string();
        assert!(e.contains("lockfile is given twice"), "{e}");
    }

    /// Without a network: an installed version is found, a missing one is not found with the
    /// reason naming it (never fetched by `runtimes`, refused by `--offline`).
    #[test]
    fn versions_are_located_in_the_store() {
        let t = tempfile::tempdir().unwrap();
        let store = Store::new(t.path());
        let mut r = Requested::parse(&["bun@1.3.14".into()]).unwrap();
        r.locate_versions(&store, Fetch::Never, "--runtime", &mut |_| {}).unwrap();
        let why = r.located[0].installed.clone().unwrap_err();
        assert!(
            why.contains("bun@1.3.14 is not installed in") && why.contains("conformance install bun@1.3.14"),
            "{why}"
        );
        r.locate_versions(&store, Fetch::Offline, "--runtime", &mut |_| {}).unwrap();
        let why = r.located[0].installed.clone().unwrap_err();
        assert!(why.contains("--offline forbids fetching it"), "{why}");
        let d = discover(&r);
        assert_eq!(d.runtimes.len(), 1);
        assert_eq!(d.runtimes[0].selector, "bun@1.3.14");
        assert!(matches!(&d.runtimes[0].status, Status::NotFound(w) if w.contains("--offline")));
    }

    /// Version queries run together ([`super::query_versions`]): each answer lands on its own
    /// executable's row, in the order asked for; a query that fails makes that row broken; two
    /// rows with one label are told apart by their paths.
    #[cfg(unix)]
    #[test]
    fn each_version_query_answers_for_its_own_executable() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let fake = |dir: &str, script: &str| {
            let d = t.path().join(dir);
            std::fs::create_dir(&d).unwrap();
            let exe = d.join("node");
            std::fs::write(&exe, format!("#!/bin/sh\n{script}\n")).unwrap();
            std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
            exe
        };
        let slow = fake("slow", "sleep 0.3; echo v22.1.0");
        let fast = fake("fast", "echo v18.20.8");
        let twin = fake("twin", "echo v18.20.8");
        let broken = fake("broken", "echo boom >&2; exit 1");
        let items: Vec<String> =
            [&slow, &fast, &broken, &twin].iter().map(|p| format!("node={}", p.display())).collect();
        let d = discover(&Requested::parse(&[items.join(",")]).unwrap());
        let rows: Vec<(&str, &Status)> = d.runtimes.iter().map(|r| (r.version.as_str(), &r.status)).collect();
        assert_eq!(rows.len(), 4, "{rows:?}");
        assert_eq!(d.runtimes[0].path.as_deref(), Some(slow.as_path()));
        assert_eq!((rows[0], d.runtimes[0].label.as_str()), (("22.1.0", &Status::Found), "node 22.1.0"));
        assert_eq!(rows[1], ("18.20.8", &Status::Found));
        assert!(matches!(rows[2].1, Status::Broken(_)), "{rows:?}");
        assert_eq!(rows[3], ("18.20.8", &Status::Found));
        assert_eq!(d.runtimes[1].label, format!("node 18.20.8 ({})", fast.display()));
        assert_eq!(d.runtimes[3].label, format!("node 18.20.8 ({})", twin.display()));
    }

    #[test]
    fn missing_explicit_path_is_not_found() {
        let r = Requested::parse(&["node=/nonexistent/node".into()]).unwrap();
        let d = discover(&r);
        assert_eq!(d.runtimes.len(), 1);
        assert!(matches!(d.runtimes[0].status, Status::NotFound(_)));
    }
}

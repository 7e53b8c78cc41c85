//! The probes and matrices built into the binary, so that an installed `conformance` (`cargo
//! install`, a copied executable) runs without the source checkout it was built from.
//!
//! Every file of `probes/` and every `*.toml` directly in `matrices/` is included at build time
//! (`include_str!`, which also makes cargo rebuild when one changes); a test checks that the
//! lists below name every such file and that each equals the file on disk. A run writes the
//! probes into its scratch folder ([`write_probes`]) and reads the matrices from memory
//! ([`MATRICES`]); `--probes DIR` and `--matrices DIR` use folders instead. The hand-off
//! recipes (`matrices/handoff/recipes.toml`) are built in by [`crate::handoff`].

use std::path::Path;

/// One built-in file: its path below `probes/` or `matrices/` (with `/` separators) and its text.
#[derive(Debug, Clone, Copy)]
pub struct BuiltIn {
    /// The path below the folder, e.g. `node/probe.mjs`.
    pub path: &'static str,
    /// The file's bytes as text (UTF-8), exactly as on disk at build time.
    pub text: &'static str,
}

macro_rules! probe {
    ($p:literal) => {
        BuiltIn { path: $p, text: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/probes/", $p)) }
    };
}

macro_rules! matrix {
    ($p:literal) => {
        BuiltIn { path: $p, text: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/matrices/", $p)) }
    };
}

/// Every file of `probes/`.
pub const PROBES: &[BuiltIn] = &[
    probe!("PROTOCOL.md"),
    probe!("cmd/README.md"),
    probe!("cmd/loop.cmd"),
    probe!("cmd/probe.cmd"),
    probe!("cmd/recipes.cmd"),
    probe!("deno/probe.ts"),
    probe!("dotnet/Probe.cs"),
    probe!("dotnet/Probe.csproj"),
    probe!("dotnet/README.md"),
    probe!("java/Probe.java"),
    probe!("java/README.md"),
    probe!("node/probe.mjs"),
    probe!("powershell/README.md"),
    probe!("powershell/probe.ps1"),
    probe!("python/README.md"),
    probe!("python/probe.py"),
    probe!("rust/Cargo.lock"),
    probe!("rust/Cargo.toml"),
    probe!("rust/README.md"),
    probe!("rust/src/main.rs"),
    probe!("sh/README.md"),
    probe!("sh/probe.sh"),
    probe!("sh/recipes.sh"),
    probe!("shared/README.md"),
    probe!("shared/session.mjs"),
];

/// Every `*.toml` of `matrices/`, sorted by name (the order `load_dir` reads a folder in).
pub const MATRICES: &[BuiltIn] = &[
    matrix!("bun.toml"),
    matrix!("cmd.toml"),
    matrix!("deno.toml"),
    matrix!("dotnet.toml"),
    matrix!("java.toml"),
    matrix!("node.toml"),
    matrix!("pwsh.toml"),
    matrix!("python.toml"),
    matrix!("rust.toml"),
    matrix!("sh.toml"),
];

/// How a folder option reads in messages and `run_info` when it is not given: the built-in
/// copy of the checkout's folder, e.g. `built-in probes/ (conformance 0.1.0)`.
pub fn describe(folder: &str) -> String {
    format!("built-in {folder}/ (conformance {})", env!("CARGO_PKG_VERSION"))
}

/// Writes [`PROBES`] below `dir` (created, with its sub-folders), byte for byte. Returns `dir`
/// as a probes folder. Errors: the OS error, naming the file.
pub fn write_probes(dir: &Path) -> std::io::Result<()> {
    for f in PROBES {
        let p = dir.join(f.path);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&p, f.text)
            .map_err(|e| std::io::Error::new(e.kind(), format!("cannot write {}: {e}", p.display())))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{write_probes, MATRICES, PROBES};

    fn files_below(dir: &Path, keep: &dyn Fn(&Path) -> bool) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if keep(&p) {
                    let rel = p.strip_prefix(dir).unwrap().to_string_lossy().replace('\\', "/");
                    out.push(rel);
                }
            }
        }
        out.sort();
        out
    }

    /// A new probe or matrix file that is not built in would be missing from an installed
    /// binary: every file on disk is in the lists, and equal to what was built in.
    #[test]
    fn every_probe_and_matrix_file_is_built_in_as_it_is_on_disk() {
        let home = Path::new(env!("CARGO_MANIFEST_DIR"));
        for (folder, list, keep) in [
            ("probes", PROBES, (&|_: &Path| true) as &dyn Fn(&Path) -> bool),
            // the matrices read are those directly in the folder; `handoff/recipes.toml` is
            // built in by `crate::handoff`
            ("matrices", MATRICES, &|p: &Path| {
                p.extension().is_some_and(|x| x == "toml") && p.parent().is_some_and(|d| d.ends_with("matrices"))
            }),
        ] {
            let on_disk = files_below(&home.join(folder), keep);
            let built: Vec<String> = list.iter().map(|f| f.path.to_string()).collect();
            assert_eq!(built, on_disk, "{folder}/: the built-in list and the folder differ");
            for f in list {
                let disk = std::fs::read(home.join(folder).join(f.path)).unwrap();
                assert!(disk == f.text.as_bytes(), "{folder}/{} changed since the build", f.path);
            }
        }
    }

    #[test]
    fn writes_the_probes_byte_for_byte() {
        let d = tempfile::tempdir().unwrap();
        write_probes(d.path()).unwrap();
        for f in PROBES {
            assert_eq!(std::fs::read(d.path().join(f.path)).unwrap(), f.text.as_bytes(), "{}", f.path);
        }
        assert!(d.path().join("PROTOCOL.md").is_file());
    }
}

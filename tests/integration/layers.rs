//! The floors of `src/` (the list in `src/lib.rs`'s crate doc): every top-level module is on
//! one floor, reads only modules on its floor or below, and no modules read each other in a
//! circle. Reads are the `crate::<module>` paths (and `crate::{…}` groups) of non-test code:
//! `#[cfg(test)] mod tests` blocks (from there to the end of the file) and `tests.rs` files are
//! left out and `//` comments (doc comments too) stripped, so a doc link to a higher floor is
//! no read. Nothing is built or run: the test reads `src/`. It also checks that no module
//! imports all of its parent (`use super::*`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::common::root;

/// Module → the modules it reads (itself left out), for every top-level module with code.
type Reads = BTreeMap<String, BTreeSet<String>>;

/// `text` without its `#[cfg(test)] mod tests` block (from there to the end, where the
/// project keeps it) and without `//` comments.
fn non_test_code(text: &str) -> String {
    let text = text.find("#[cfg(test)]\nmod tests").map_or(text, |i| &text[..i]);
    text.lines().map(|l| l.find("//").map_or(l, |i| &l[..i])).collect::<Vec<_>>().join("\n")
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The first identifiers of the items of a `{…}` group starting at `s[0]`, top level only
/// (`{a, b::c, d::{e, f}}` gives `a`, `b`, `d`).
fn group_heads(s: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let (mut depth, mut at_item) = (0usize, true);
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '{' => {
                depth += 1;
                at_item = depth == 1;
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            ',' if depth == 1 => at_item = true,
            c if at_item && depth == 1 && is_ident(c) => {
                let end = s[i..].find(|c: char| !is_ident(c)).map_or(s.len(), |n| i + n);
                heads.push(s[i..end].to_string());
                at_item = false;
                while chars.peek().is_some_and(|(j, _)| *j < end) {
                    chars.next();
                }
            }
            c if at_item && !c.is_whitespace() => at_item = false,
            _ => {}
        }
    }
    heads
}

/// The modules `code` names as `crate::<module>` or in `crate::{…}`.
fn named_modules(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in code.match_indices("crate::") {
        if code[..i].ends_with(|c: char| is_ident(c)) {
            continue;
        }
        let rest = &code[i + "crate::".len()..];
        if rest.starts_with('{') {
            out.extend(group_heads(rest));
        } else {
            let end = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
            if end > 0 {
                out.insert(rest[..end].to_string());
            }
        }
    }
    out
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// What each top-level module of `src/` reads, among `modules`.
fn reads(src: &Path, modules: &BTreeSet<String>) -> Reads {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut reads = Reads::new();
    for f in files {
        let rel = f.strip_prefix(src).unwrap();
        let top = rel.components().next().unwrap().as_os_str().to_str().unwrap();
        let top = top.strip_suffix(".rs").unwrap_or(top);
        if top == "lib" || top == "main" || rel.to_str().unwrap().ends_with("tests.rs") {
            continue;
        }
        let code = non_test_code(&std::fs::read_to_string(&f).unwrap());
        let mine = reads.entry(top.to_string()).or_default();
        mine.extend(named_modules(&code).into_iter().filter(|m| m != top && modules.contains(m)));
    }
    reads
}

/// The floors of `lib.rs`'s crate doc, bottom first: the numbered items under `# Floors`, each
/// the modules it links (`` [`name`] ``).
fn floors(lib: &str) -> Vec<Vec<String>> {
    let doc = lib.lines().map_while(|l| l.strip_prefix("//!")).map(str::trim_start);
    let mut floors: Vec<String> = Vec::new();
    let mut inside = false;
    for l in doc {
        if l.starts_with('#') {
            inside = l == "# Floors";
        } else if inside {
            let numbered =
                l.split_once(". ").is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
            if numbered {
                floors.push(l.to_string());
            } else if l.is_empty() && !floors.is_empty() {
                inside = false;
            }
        }
    }
    floors
        .iter()
        .map(|f| f.split("[`").skip(1).filter_map(|s| s.split_once("`]")).map(|(m, _)| m.to_string()).collect())
        .collect()
}

/// A circle of reads in `reads`, as `a -> b -> … -> a`, if there is one.
fn circle(reads: &Reads) -> Option<String> {
    fn visit<'a>(
        m: &'a str,
        reads: &'a Reads,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<String> {
        if let Some(i) = path.iter().position(|p| *p == m) {
            let mut c = path[i..].to_vec();
            c.push(m);
            return Some(c.join(" -> "));
        }
        if !done.insert(m) {
            return None;
        }
        path.push(m);
        for next in reads.get(m).into_iter().flatten() {
            if let Some(c) = visit(next, reads, path, done) {
                return Some(c);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    reads.keys().find_map(|m| visit(m, reads, &mut Vec::new(), &mut done))
}

/// The top-level modules `lib.rs` declares (`pub mod x;`, `mod x;`).
fn declared(lib: &str) -> BTreeSet<String> {
    lib.lines()
        .filter_map(|l| l.trim().trim_start_matches("pub ").strip_prefix("mod "))
        .filter_map(|l| l.strip_suffix(';'))
        .map(str::to_string)
        .collect()
}

#[test]
fn no_module_reads_a_higher_floor_or_in_a_circle() {
    let src = root().join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let modules = declared(&lib);
    let floors = floors(&lib);
    assert!(floors.len() > 1, "no `# Floors` list in src/lib.rs's crate doc");
    let mut floor_of: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, f) in floors.iter().enumerate() {
        for m in f {
            assert!(modules.contains(m), "floor {} names `{m}`, which src/lib.rs does not declare", i + 1);
            assert!(floor_of.insert(m, i + 1).is_none(), "`{m}` is on two floors");
        }
    }
    let unplaced: Vec<_> = modules.iter().filter(|m| !floor_of.contains_key(m.as_str())).collect();
    assert!(unplaced.is_empty(), "modules on no floor of src/lib.rs's list: {unplaced:?}");
    let reads = reads(&src, &modules);
    let mut upward = Vec::new();
    for (m, read) in &reads {
        for r in read {
            let (from, to) = (floor_of[m.as_str()], floor_of[r.as_str()]);
            if to > from {
                upward.push(format!("{m} (floor {from}) reads {r} (floor {to})"));
            }
        }
    }
    assert!(upward.is_empty(), "modules read higher floors:\n{}", upward.join("\n"));
    if let Some(c) = circle(&reads) {
        panic!("modules read each other in a circle: {c}");
    }
}

/// The checker finds what it must: paths, `use crate::{…}` groups (top level only), and no
/// path in a comment or a test block; and it names a circle.
#[test]
fn the_checker_sees_paths_groups_and_circles() {
    let code = non_test_code(
        "use crate::a::X;\nuse crate::{b, c::{d, e}};\nfn f() { crate::g::h(); } // crate::i\n/// [`crate::j`]\n\
         #[cfg(test)]\nmod tests {\n    use crate::k;\n}\n",
    );
    let names: Vec<_> = named_modules(&code).into_iter().collect();
    assert_eq!(names, ["a", "b", "c", "g"]);
    let reads: Reads = [("x", "y"), ("y", "z"), ("z", "x")]
        .iter()
        .map(|(a, b)| (a.to_string(), BTreeSet::from([b.to_string()])))
        .collect();
    assert_eq!(circle(&reads).as_deref(), Some("x -> y -> z -> x"));
    let lib = "//! Intro.\n//!\n//! # Floors\n//!\n//! 1. Low: [`a`], [`b`].\n//! 2. High: [`c`].\n//!\n//! After.\n";
    assert_eq!(floors(lib), [vec!["a", "b"], vec!["c"]]);
}

/// No module of `src/` imports all of its parent (`use super::*`): a test module names what it
/// uses, so that moving an item shows which tests read it.
#[test]
fn no_module_imports_all_of_its_parent() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let globs: Vec<_> = files
        .iter()
        .filter(|f| std::fs::read_to_string(f).unwrap().lines().any(|l| l.trim() == "use super::*;"))
        .map(|f| f.strip_prefix(root()).unwrap().display().to_string())
        .collect();
    assert!(globs.is_empty(), "use super::* in {globs:?}");
}

/// CONTRIBUTING.md's *Layout* names every source file of `src/`: a file of a folder in that
/// folder's entry (the lines from `src/<folder>/` to the next entry; a file of a subfolder by
/// its name or the subfolder's), a file of `src/` itself anywhere in the layout; so a new
/// module cannot go undocumented there.
#[test]
fn contributing_names_every_source_file() {
    let root = crate::common::root();
    let text = std::fs::read_to_string(root.join("CONTRIBUTING.md")).unwrap();
    let layout = &text[text.find("## Layout").expect("a Layout section")..];
    // the entries: a line starting `src/…` and the indented lines after it
    let mut entries: Vec<(String, String)> = Vec::new();
    for line in layout.lines() {
        match line.strip_prefix("src/") {
            Some(rest) => entries.push((rest.split_whitespace().next().unwrap_or("").to_string(), line.to_string())),
            None if line.starts_with(' ') => {
                if let Some((_, body)) = entries.last_mut() {
                    body.push('\n');
                    body.push_str(line);
                }
            }
            None => {}
        }
    }
    let mut missing = Vec::new();
    let mut stack = vec![root.join("src")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n != "snapshots") {
                    stack.push(p);
                }
                continue;
            }
            if p.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let rel = p.strip_prefix(root.join("src")).unwrap().to_string_lossy().replace('\\', "/");
            let parts: Vec<&str> = rel.split('/').collect();
            let named = match parts.as_slice() {
                [file] => layout.contains(*file),
                [folder, rest @ ..] => {
                    let head = format!("{folder}/");
                    let want: Vec<String> = match rest {
                        [file] if *file == "mod.rs" => vec![head.clone()],
                        [file] => vec![file.to_string()],
                        [sub, file, ..] => vec![format!("{sub}/"), file.to_string()],
                        [] => vec![],
                    };
                    // a module's folder is also described in its file's entry (`src/compare.rs`)
                    let file = format!("{folder}.rs");
                    entries
                        .iter()
                        .any(|(h, body)| (*h == head || *h == file) && want.iter().any(|w| body.contains(w.as_str())))
                }
                [] => true,
            };
            if !named {
                missing.push(format!("src/{rel}"));
            }
        }
    }
    missing.sort();
    assert!(missing.is_empty(), "CONTRIBUTING.md's Layout does not name, in its folder's entry: {missing:?}");
}

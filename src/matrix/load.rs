//! Loading and validating `matrices/*.toml`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::model::{MatrixFile, SourceKind, Variant};
use crate::error::{Error, Result};

/// Where things are in a matrix file: a second, lenient parse of the same text that keeps
/// the span of the family and of each variant's id (the strict parse into [`MatrixFile`]
/// keeps none).
#[derive(Deserialize)]
struct Positions {
    family: Option<Spanned<toml::Value>>,
    #[serde(default)]
    variant: Vec<IdPosition>,
}

#[derive(Deserialize)]
struct IdPosition {
    id: Option<Spanned<toml::Value>>,
}

/// A variant as parsed, with the byte offset of its id's value in the file.
struct Located {
    variant: Variant,
    at: usize,
}

/// The file's text; for bytes that are not UTF-8, an [`Error::Input`] at the first bad byte.
fn utf8<'a>(path: &Path, bytes: &'a [u8]) -> Result<&'a str> {
    std::str::from_utf8(bytes).map_err(|e| {
        let good = e.valid_up_to();
        let prefix = std::str::from_utf8(&bytes[..good]).unwrap_or_default();
        Error::input_at(
            path,
            prefix,
            Some(good),
            format!("not valid UTF-8 (byte 0x{:02x}); matrix files are UTF-8 text", bytes[good]),
        )
    })
}

/// Parses one matrix file's text.
///
/// Takes the file's path (for messages) and its text; returns its variants with `family`
/// filled in, in file order. Errors ([`Error::Input`], naming file, line and column): TOML
/// syntax, unknown or missing fields (`family` inside a `[[variant]]` is unknown: it is the
/// file's), a variant id that does not start with `<family>.` or has nothing after it, an id
/// with characters outside `[A-Za-z0-9._+-]`, an id repeated in the file, an empty call, or a
/// second detection control. Names and ids are quoted with control characters escaped.
pub fn parse_file(path: &Path, text: &str) -> Result<Vec<Variant>> {
    Ok(parse_located(path, text)?.into_iter().map(|l| l.variant).collect())
}

/// The longest variant id a matrix may give (bytes): ids are table labels and file-name
/// parts, and the longest built-in one has 49.
pub const MAX_ID_LEN: usize = 120;

/// Every API family some runtime adapter runs, in the adapters' order
/// (`crate::runtime::ADAPTERS`), each once: a matrix of another family is refused. Kept here
/// so that loading matrices needs no runtime adapter; a test of [`crate::runtime`] checks that
/// the adapters' families are exactly these.
pub const FAMILIES: &[&str] = &["node", "bun", "deno", "dotnet", "pwsh", "cmd", "python", "java", "rust", "sh"];

fn parse_located(path: &Path, text: &str) -> Result<Vec<Located>> {
    let at = |offset: usize, message: String| Error::input_at(path, text, Some(offset), message);
    let file: MatrixFile = toml::from_str(text).map_err(|e| {
        // an error without a place (a missing top-level key) is the file's: line 1
        at(e.span().map_or(0, |s| s.start), e.message().trim_end().to_string())
    })?;
    let pos: Option<Positions> = toml::from_str(text).ok();
    let family_at = pos.as_ref().and_then(|p| p.family.as_ref()).map_or(0, |f| f.span().start);
    let id_at = |i: usize| {
        pos.as_ref().and_then(|p| p.variant.get(i)).and_then(|v| v.id.as_ref()).map_or(0, |id| id.span().start)
    };
    if file.family.is_empty() || !file.family.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(at(family_at, format!("family {:?} must be a non-empty ASCII word ([A-Za-z0-9])", file.family)));
    }
    // a family no runtime adapter runs would never be measured (a typo, `nod`): said here
    let known = FAMILIES;
    if !known.contains(&file.family.as_str()) {
        return Err(at(
            family_at,
            format!("family {:?} is run by no runtime (the families: {})", file.family, known.join(", ")),
        ));
    }
    let prefix = format!("{}.", file.family);
    let mut out: Vec<Located> = Vec::with_capacity(file.variant.len());
    // ids seen so far, with their offsets, and whether a control was: linear in the variants
    // (a search of `out` per variant made 100,000 variants take minutes)
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::with_capacity(out.capacity());
    let mut has_control = false;
    for (i, mut v) in file.variant.into_iter().enumerate() {
        let here = id_at(i);
        let id = v.id.escape_debug().to_string();
        if !v.id.starts_with(&prefix) {
            return Err(at(here, format!("variant id '{id}' must start with '{prefix}'")));
        }
        if v.id.len() == prefix.len() {
            return Err(at(
                here,
                format!("variant id '{id}' names no call after '{prefix}' (ids are <family>.<call>[.<option>])"),
            ));
        }
        if v.id.len() > MAX_ID_LEN {
            return Err(at(
                here,
                format!(
                    "variant id '{}…' is {} bytes long; ids are at most {MAX_ID_LEN}",
                    v.id.chars().take(40).collect::<String>().escape_debug(),
                    v.id.len()
                ),
            ));
        }
        if let Some(bad) = v.id.chars().find(|c| !(c.is_ascii_alphanumeric() || "._+-".contains(*c))) {
            return Err(at(here, format!("variant id '{id}' has the character {bad:?}; ids use [A-Za-z0-9._+-]")));
        }
        if let Some(&first) = seen.get(&v.id) {
            let (line, _) = crate::error::line_col(text, first);
            return Err(at(here, format!("variant id '{id}' appears twice (first on line {line})")));
        }
        if v.call.trim().is_empty() {
            return Err(at(here, format!("variant '{id}' has an empty call")));
        }
        if let Some(why) = v.promise.as_ref().and_then(crate::matrix::Promise::problem) {
            return Err(at(here, format!("variant '{id}': {why}")));
        }
        if let Some(why) = sources_problem(&v).or_else(|| copies_problem(&v)) {
            return Err(at(here, format!("variant '{id}': {why}")));
        }
        if let Some(&first) = v.sources.first() {
            v.source = first;
        }
        if v.control && has_control {
            return Err(at(here, format!("variant '{id}' is a second detection control; a family has at most one")));
        }
        has_control |= v.control;
        seen.insert(v.id.clone(), here);
        v.family = file.family.clone();
        out.push(Located { variant: v, at: here });
    }
    Ok(out)
}

/// Why a variant's `sources` cannot be measured as given: `none` in the list (a variant without
/// a source has no `sources`), a kind listed twice, or a `source` that is not the list's first
/// (the first is the variant's own: its cells keep their ids). `None` when it is fine.
fn sources_problem(v: &Variant) -> Option<String> {
    if v.sources.contains(&SourceKind::None) {
        return Some("sources lists \"none\"; a variant without a source leaves `sources` out".into());
    }
    if let Some((i, k)) = v.sources.iter().enumerate().find(|(i, k)| v.sources[..*i].contains(k)) {
        return Some(format!(
            "sources lists \"{}\" twice (at {} and {})",
            k.as_str(),
            v.sources.iter().position(|x| x == k).unwrap_or(0) + 1,
            i + 1
        ));
    }
    match v.sources.first() {
        Some(first) if v.source != SourceKind::None && v.source != *first => Some(format!(
            "source = \"{}\" is not the first of sources (\"{}\"): the first is the variant's own, whose cells keep their ids",
            v.source.as_str(),
            first.as_str()
        )),
        _ => None,
    }
}

/// Why `copies = true` cannot be right for this variant: it has no source to copy, or its
/// intent is `claim-by-rename`, which moves its source (matrices/README.md: `copies` is "never
/// for moves": a mark written after a move fills the directory a rival's `rename(2)` could have
/// replaced, hiding the replacement). `None` when it is fine or `copies` is false.
fn copies_problem(v: &Variant) -> Option<String> {
    if !v.copies {
        return None;
    }
    if v.source == SourceKind::None && v.sources.is_empty() {
        return Some("copies = true without a source: a copy needs `source` or `sources`".into());
    }
    (v.intent == Some(crate::matrix::Intent::ClaimByRename)).then(|| {
        "copies = true on a move: intent claim-by-rename moves its source, and a mark written after a move \
         would hide a rival's rename (matrices/README.md, `copies`)"
            .into()
    })
}

/// Loads every `*.toml` file directly in `dir` (sorted by name) and returns all variants.
///
/// Errors: [`Error::Input`] when the folder cannot be read; when a file cannot be read, is
/// not UTF-8 or does not parse (see [`parse_file`]), naming the file and line; or when one id
/// appears in two files (the message names both, at the second definition's id).
pub fn load_dir(dir: &Path) -> Result<Vec<Variant>> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| Error::input(dir, format!("cannot read the matrices folder: {e}")))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    // a `*.toml` that is not a readable file (a folder, a dangling link, a link loop) is an
    // error naming it, never skipped: the user meant it as a matrix
    if let Some(f) = files.iter().find(|p| !p.is_file()) {
        let what = match std::fs::metadata(f) {
            Ok(m) if m.is_dir() => "is a folder, not a matrix file".to_string(),
            Ok(_) => "is not a regular file".to_string(),
            Err(e) => format!("cannot be read: {e}"),
        };
        return Err(Error::input(f, what));
    }
    files.sort();
    let mut read = Vec::with_capacity(files.len());
    for f in files {
        let bytes = std::fs::read(&f).map_err(|e| Error::input(&f, format!("cannot read: {e}")))?;
        read.push((f, bytes));
    }
    load_files(dir, read)
}

/// Loads the matrices built into the binary ([`crate::builtin::MATRICES`]); messages name
/// each as `matrices/<file>` with "(built in)".
///
/// Errors: as [`load_dir`] (a built-in matrix that does not parse is a bug the build's tests
/// catch).
pub fn load_builtin() -> Result<Vec<Variant>> {
    let files = crate::builtin::MATRICES
        .iter()
        .map(|f| (PathBuf::from(format!("matrices/{} (built in)", f.path)), f.text.as_bytes().to_vec()))
        .collect();
    load_files(Path::new("matrices/ (built in)"), files)
}

/// Loads the matrices from `dir` (`--matrices`), or the built-in ones when `None`. Errors: see
/// [`load_dir`] and [`load_builtin`].
pub fn load(dir: Option<&Path>) -> Result<Vec<Variant>> {
    match dir {
        Some(d) => load_dir(d),
        None => load_builtin(),
    }
}

/// Parses `files` (name, bytes) in order; `dir` names the whole for the "no variants" error.
fn load_files(dir: &Path, files: Vec<(PathBuf, Vec<u8>)>) -> Result<Vec<Variant>> {
    let mut all: Vec<Variant> = Vec::new();
    // where each id was defined: its file's index and byte offset (its line is counted only
    // for the error: counting it for every variant made loading quadratic in the file's size)
    let mut origin: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut texts: Vec<(PathBuf, Vec<u8>)> = Vec::with_capacity(files.len());
    for (n, (f, bytes)) in files.into_iter().enumerate() {
        utf8(&f, &bytes)?;
        texts.push((f, bytes));
        let (f, bytes) = &texts[n];
        let text = utf8(f, bytes)?;
        for l in parse_located(f, text)? {
            let v = l.variant;
            if let Some((prev_file, prev_at)) = origin.insert(v.id.clone(), (n, l.at)) {
                let (prev, prev_bytes) = &texts[prev_file];
                let (prev_line, _) = crate::error::line_col(utf8(prev, prev_bytes)?, prev_at);
                return Err(Error::input_at(
                    f,
                    text,
                    Some(l.at),
                    format!(
                        "variant id '{}' is already defined in {}:{prev_line}",
                        v.id.escape_debug(),
                        prev.display()
                    ),
                ));
            }
            all.push(v);
        }
    }
    if all.is_empty() {
        return Err(Error::input(dir, "no variants found (expected *.toml files with [[variant]] tables)".into()));
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::{load, load_builtin, load_dir, parse_file, Error, Variant, FAMILIES};
    use crate::matrix::{Creates, SourceKind};
    use std::path::Path;

    fn p() -> &'static Path {
        Path::new("m.toml")
    }

    /// Every built-in variant names its intent: the answer lists group by it, and one
    /// without would be listed under "other".
    #[test]
    fn every_built_in_variant_has_an_intent() {
        let missing: Vec<String> =
            load_builtin().unwrap().into_iter().filter(|v| v.intent.is_none()).map(|v| v.id).collect();
        assert!(missing.is_empty(), "variants without an intent: {missing:?}");
    }

    /// The built-in matrices are the project's `matrices/`, variant for variant.
    #[test]
    fn the_built_in_matrices_equal_the_folder() {
        let folder = load_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("matrices")).unwrap();
        assert_eq!(load_builtin().unwrap(), folder);
        assert_eq!(load(None).unwrap(), folder);
    }

    /// A promise is a quote with its https:// address; anything else is refused where it
    /// stands, and an unknown key in it is an error too.
    #[test]
    fn a_promise_is_a_short_quote_with_an_https_address() {
        let head = "family = \"node\"\n[[variant]]\nid = \"node.x\"\ncall = \"c\"\ncreates = \"file\"\n";
        let ok = format!(
            "{head}promise = {{ quote = \"fails if the path exists\", url = \"https://nodejs.org/api/fs.html\" }}\n"
        );
        let v = parse_file(p(), &ok).unwrap();
        assert_eq!(v[0].promise.as_ref().unwrap().quote, "fails if the path exists");
        let long = "x".repeat(crate::matrix::Promise::MAX_QUOTE + 1);
        for (promise, says) in [
            ("{ quote = \"q\", url = \"http://example.com\" }", "not an https:// address"),
            ("{ quote = \" \", url = \"https://example.com\" }", "promise.quote is empty"),
            (&format!("{{ quote = \"{long}\", url = \"https://example.com\" }}"), "at most 300"),
            ("{ quote = \"q\", url = \"https://example.com\", expect = \"refused\" }", "unknown field"),
            ("{ quote = \"a\\u001b[2Jb\", url = \"https://example.com\" }", "control character"),
            ("{ quote = \"q\", url = \"https://\" }", "not an https:// address"),
        ] {
            let e = parse_file(p(), &format!("{head}promise = {promise}\n")).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("m.toml:"), "{promise}: {e}");
        }
    }

    #[test]
    fn parses_a_family_and_fills_it_in() {
        let t = "family = \"node\"\n[[variant]]\nid = \"node.renameSync\"\ncall = \"fs.renameSync(src, p)\"\nsource = \"file\"\ncreates = \"file\"\n";
        let v = parse_file(p(), t).unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].family, "node");
        assert_eq!(v[0].source, SourceKind::File);
        assert_eq!(v[0].creates, Creates::File);
        assert!(!v[0].anti_pattern);
    }

    #[test]
    fn sources_list_the_kinds_and_the_first_is_the_variants_own() {
        let head = "family = \"node\"\n[[variant]]\nid = \"node.renameSync\"\ncall = \"c\"\ncreates = \"file\"\n";
        let v = parse_file(p(), &format!("{head}sources = [\"file\", \"empty-dir\", \"dir\", \"tree\"]\n")).unwrap();
        assert_eq!(v[0].source, SourceKind::File, "the first kind is the variant's source");
        assert_eq!(v[0].sources, [SourceKind::File, SourceKind::EmptyDir, SourceKind::Dir, SourceKind::Tree]);
        let each = v[0].per_source();
        let kinds: Vec<SourceKind> = each.iter().map(|x| x.source).collect();
        assert_eq!(kinds, v[0].sources);
        let keyed: Vec<Option<SourceKind>> = each.iter().map(Variant::cell_source).collect();
        assert_eq!(keyed, [None, Some(SourceKind::EmptyDir), Some(SourceKind::Dir), Some(SourceKind::Tree)]);
        // the shorthand: one kind, no `sources`, one variant keyed as before
        let v = parse_file(p(), &format!("{head}source = \"dir\"\n")).unwrap();
        assert!(v[0].sources.is_empty() && v[0].source == SourceKind::Dir);
        assert_eq!(v[0].per_source(), v, "a single source is not split");
        assert_eq!(v[0].cell_source(), None);
        // `source` beside `sources` must be its first
        let v = parse_file(p(), &format!("{head}source = \"dir\"\nsources = [\"dir\", \"empty-dir\"]\n")).unwrap();
        assert_eq!(v[0].source, SourceKind::Dir);
        let e = parse_file(p(), &format!("{head}source = \"file\"\nsources = [\"dir\", \"file\"]\n"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("m.toml:3:") && e.contains("not the first of sources"), "{e}");
        let e = parse_file(p(), &format!("{head}sources = [\"file\", \"file\"]\n")).unwrap_err().to_string();
        assert!(e.contains("\"file\" twice"), "{e}");
        let e = parse_file(p(), &format!("{head}sources = [\"none\"]\n")).unwrap_err().to_string();
        assert!(e.contains("lists \"none\""), "{e}");
        let e = parse_file(p(), &format!("{head}sources = [\"fifo\"]\n")).unwrap_err().to_string();
        assert!(e.starts_with("m.toml:6:"), "{e}");
    }

    #[test]
    fn a_moved_empty_dir_gets_no_mark_a_copied_one_does() {
        let t = "family = \"node\"\n[[variant]]\nid = \"node.mv\"\ncall = \"c\"\ncreates = \"dir\"\nsources = [\"dir\", \"empty-dir\", \"file\"]\n[[variant]]\nid = \"node.cp\"\ncall = \"c\"\ncreates = \"file\"\ncopies = true\nsources = [\"dir\", \"empty-dir\", \"file\"]\n";
        let v = parse_file(p(), t).unwrap();
        let marks = |v: &Variant| v.per_source().iter().map(Variant::writes_mark).collect::<Vec<bool>>();
        assert_eq!(marks(&v[0]), [true, false, false], "a move: its dir source's mark, identity for an empty one");
        assert_eq!(marks(&v[1]), [false, true, false], "a copy of an empty dir writes the mark after the call");
        let mut dir_copy = v[1].clone();
        dir_copy.creates = Creates::Dir;
        assert_eq!(marks(&dir_copy), [false, true, false], "a copied dir carries its mark");
    }

    #[test]
    fn copies_is_refused_on_a_move_and_without_a_source() {
        let head = "family = \"node\"\n[[variant]]\nid = \"node.x\"\ncall = \"c\"\ncreates = \"file\"\ncopies = true\n";
        for (rest, says) in [
            ("source = \"file\"\nintent = \"claim-by-rename\"\n", "copies = true on a move"),
            ("intent = \"publish\"\n", "copies = true without a source"),
        ] {
            let e = parse_file(p(), &format!("{head}{rest}")).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("m.toml:"), "{rest}: {e}");
        }
        let ok = parse_file(p(), &format!("{head}source = \"file\"\nintent = \"publish\"\n")).unwrap();
        assert!(ok[0].copies);
    }

    #[test]
    fn reports_line_of_unknown_field() {
        let t = "family = \"node\"\n[[variant]]\nid = \"node.x\"\ncall = \"c\"\ncreates = \"file\"\nexpected = \"refused\"\n";
        let e = parse_file(p(), t).unwrap_err().to_string();
        assert!(e.starts_with("m.toml:6:"), "{e}");
        assert!(e.contains("expected"), "{e}");
    }

    #[test]
    fn rejects_bad_enum_value_with_position() {
        let t = "family = \"node\"\n[[variant]]\nid = \"node.x\"\ncall = \"c\"\ncreates = \"fifo\"\n";
        let e = parse_file(p(), t).unwrap_err().to_string();
        assert!(e.starts_with("m.toml:5:"), "{e}");
    }

    #[test]
    fn rejects_id_outside_family_and_duplicates() {
        let t = "family = \"node\"\n[[variant]]\nid = \"deno.x\"\ncall = \"c\"\ncreates = \"file\"\n";
        let e = parse_file(p(), t).unwrap_err().to_string();
        assert!(e.contains("must start with 'node.'") && e.starts_with("m.toml:3:"), "{e}");
        let t = "family = \"node\"\n[[variant]]\nid = \"node.x\"\ncall = \"c\"\ncreates = \"file\"\n[[variant]]\nid = \"node.x\"\ncall = \"c\"\ncreates = \"file\"\n";
        let e = parse_file(p(), t).unwrap_err().to_string();
        assert!(e.contains("appears twice") && e.starts_with("m.toml:7:"), "{e}");
    }

    #[test]
    fn rejects_shell_characters_in_ids() {
        let t = "family = \"node\"\n[[variant]]\nid = \"node.x;rm\"\ncall = \"c\"\ncreates = \"file\"\n";
        assert!(parse_file(p(), t).unwrap_err().to_string().contains("';'"));
    }

    #[test]
    fn rejects_a_second_control() {
        let text = "family = \"node\"\n[[variant]]\nid = \"node.a\"\ncall = \"a\"\ncreates = \"file\"\ncontrol = true\n\n[[variant]]\nid = \"node.b\"\ncall = \"b\"\ncreates = \"file\"\ncontrol = true\n";
        let e = parse_file(p(), text).unwrap_err().to_string();
        assert!(e.contains("second detection control") && e.contains(":9:"), "{e}");
    }

    #[test]
    fn family_inside_a_variant_is_an_unknown_key() {
        let t =
            "family = \"node\"\n[[variant]]\nid = \"node.x\"\nfamily = \"deno\"\ncall = \"c\"\ncreates = \"file\"\n";
        let e = parse_file(p(), t).unwrap_err().to_string();
        assert!(e.starts_with("m.toml:4:") && e.contains("family"), "{e}");
    }

    #[test]
    fn an_id_that_is_only_the_prefix_says_so() {
        let t = "family = \"node\"\n[[variant]]\nid = \"node.\"\ncall = \"c\"\ncreates = \"file\"\n";
        let e = parse_file(p(), t).unwrap_err().to_string();
        assert!(e.starts_with("m.toml:3:6:") && e.contains("names no call after 'node.'"), "{e}");
        assert!(!e.contains("must start with"), "{e}");
    }

    #[test]
    fn escaped_control_characters_in_ids_are_located_and_not_printed_raw() {
        let t = "family = \"node\"\n# node.x\n[[variant]]\nid = \"node.x\\u0007\"\ncall = \"c\"\ncreates = \"file\"\n";
        let e = parse_file(p(), t).unwrap_err().to_string();
        assert!(e.starts_with("m.toml:4:6:"), "{e}");
        assert!(e.contains("'node.x\\u{7}'") && !e.contains('\u{7}'), "{e}");
    }

    #[test]
    fn a_duplicate_is_located_at_its_id_not_at_a_comment() {
        let t = "family = \"node\"\n# node.x is the one\n[[variant]]\nid = \"node.x\"\ncall = \"node.x\"\ncreates = \"file\"\n[[variant]]\nid = 'node.x'\ncall = \"c\"\ncreates = \"file\"\n";
        let e = parse_file(p(), t).unwrap_err().to_string();
        assert!(e.starts_with("m.toml:8:6:") && e.contains("first on line 4"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("a.toml"),
            "family = \"node\"\n\n[[variant]]\nid = \"node.x\"\ncall = \"c\"\ncreates = \"file\"\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("b.toml"),
            "# node.x again\nfamily = \"node\"\n[[variant]]\nid = \"node.x\"\ncall = \"c\"\ncreates = \"file\"\n",
        )
        .unwrap();
        let e = load_dir(dir.path()).unwrap_err().to_string();
        assert!(e.contains("b.toml:4:6:") && e.contains("a.toml:4"), "{e}");
    }

    #[test]
    fn invalid_utf8_names_the_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("n.toml"), b"family = \"node\"\n# caf\xe9\n").unwrap();
        let e = load_dir(dir.path()).unwrap_err();
        assert_eq!(e.exit_code(), crate::exit_code::USAGE);
        let e = e.to_string();
        assert!(e.contains("n.toml:2:6:") && e.contains("not valid UTF-8 (byte 0xe9)"), "{e}");
    }

    #[test]
    fn every_error_has_a_line() {
        for t in [
            "",
            "[[variant]]\nid = \"node.x\"\ncall = \"c\"\ncreates = \"file\"\n",
            "family = \"node\"\n[[variant]]\nid = \"node.x\"\ncreates = \"file\"\n",
            "family = \"no de\"\n",
            "family = \"nod\"\n",
            "family = 3\n",
            "family = \"node\"\n[[variant]]\nid = \"node.x\"\ncall = \" \"\ncreates = \"file\"\n",
        ] {
            let e = parse_file(p(), t).unwrap_err();
            assert!(matches!(e, Error::Input { line: 1.., .. }), "{t:?}: {e}");
        }
    }

    /// A family no runtime runs would never be measured: a typo is said where it stands.
    #[test]
    fn a_family_no_runtime_runs_is_refused() {
        let e = parse_file(p(), "family = \"nod\"\n").unwrap_err().to_string();
        assert!(e.contains("m.toml:1:") && e.contains("is run by no runtime") && e.contains("node, "), "{e}");
        for f in FAMILIES {
            assert!(parse_file(p(), &format!("family = \"{f}\"\n")).is_ok(), "{f}");
        }
    }

    #[test]
    fn the_shipped_matrices_load() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("matrices");
        let all = load_dir(&dir).unwrap();
        assert!(all.iter().any(|v| v.id == "node.writeFileSync.wx"));
        assert!(all.iter().any(|v| v.id == "deno.openSync.createNew"));
        assert!(all.iter().all(|v| !v.call.is_empty()));
    }
}

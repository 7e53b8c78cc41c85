//! Loading and validating `matrices/*.toml`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::model::{MatrixFile, Variant};
use crate::error::{Error, Result};

/// Parses one matrix file's text.
///
/// Takes the file's path (for messages) and its text; returns its variants with `family`
/// filled in, in file order. Errors ([`Error::Input`], naming file, line and column): TOML
/// syntax, unknown or missing fields, a variant id that does not start with `<family>.`, an
/// id with characters outside `[A-Za-z0-9._+-]`, or an id repeated in the file.
pub fn parse_file(path: &Path, text: &str) -> Result<Vec<Variant>> {
    let file: MatrixFile = toml::from_str(text).map_err(|e| {
        let offset = e.span().map(|s| s.start);
        Error::input_at(path, text, offset, e.message().to_string())
    })?;
    if file.family.is_empty() || !file.family.chars().all(|c| c.is_ascii_alphanumeric()) {
        let off = text.find("family");
        return Err(Error::input_at(
            path,
            text,
            off,
            format!("family '{}' must be a non-empty ASCII word", file.family),
        ));
    }
    let mut seen = BTreeMap::new();
    let mut out = Vec::with_capacity(file.variant.len());
    for mut v in file.variant {
        // point at this definition: the n-th `"<id>"` in the text, n = how often seen so far
        let nth = seen.get(&v.id).copied().unwrap_or(0);
        let needle = format!("\"{}\"", v.id);
        let at = text.match_indices(&needle).nth(nth).map(|(i, _)| i).or_else(|| text.find(&v.id));
        let prefix = format!("{}.", file.family);
        if !v.id.starts_with(&prefix) || v.id.len() == prefix.len() {
            return Err(Error::input_at(path, text, at, format!("variant id '{}' must start with '{prefix}'", v.id)));
        }
        if let Some(bad) = v.id.chars().find(|c| !(c.is_ascii_alphanumeric() || "._+-".contains(*c))) {
            return Err(Error::input_at(
                path,
                text,
                at,
                format!("variant id '{}' has the character {bad:?}; ids use [A-Za-z0-9._+-]", v.id),
            ));
        }
        if seen.insert(v.id.clone(), nth + 1).is_some() {
            return Err(Error::input_at(path, text, at, format!("variant id '{}' appears twice", v.id)));
        }
        if v.call.trim().is_empty() {
            return Err(Error::input_at(path, text, at, format!("variant '{}' has an empty call", v.id)));
        }
        if v.control && out.iter().any(|o: &Variant| o.control) {
            return Err(Error::input_at(
                path,
                text,
                at,
                format!("variant '{}' is a second detection control; a family has at most one", v.id),
            ));
        }
        v.family = file.family.clone();
        out.push(v);
    }
    Ok(out)
}

/// Loads every `*.toml` file directly in `dir` (sorted by name) and returns all variants.
///
/// Errors: [`Error::Input`] when the folder or a file cannot be read or parsed, or when one id
/// appears in two files (the message names both).
pub fn load_dir(dir: &Path) -> Result<Vec<Variant>> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| Error::input(dir, format!("cannot read the matrices folder: {e}")))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml") && p.is_file())
        .collect();
    files.sort();
    let mut all: Vec<Variant> = Vec::new();
    let mut origin: BTreeMap<String, PathBuf> = BTreeMap::new();
    for f in files {
        let text = std::fs::read_to_string(&f).map_err(|e| Error::input(&f, format!("cannot read: {e}")))?;
        for v in parse_file(&f, &text)? {
            if let Some(prev) = origin.insert(v.id.clone(), f.clone()) {
                let at = text.find(&v.id);
                return Err(Error::input_at(
                    &f,
                    &text,
                    at,
                    format!("variant id '{}' is already defined in {}", v.id, prev.display()),
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
    use super::*;
    use crate::matrix::{Creates, SourceKind};

    fn p() -> &'static Path {
        Path::new("m.toml")
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
        let text = "family = \"x\"\n[[variant]]\nid = \"x.a\"\ncall = \"a\"\ncreates = \"file\"\ncontrol = true\n\n[[variant]]\nid = \"x.b\"\ncall = \"b\"\ncreates = \"file\"\ncontrol = true\n";
        let e = parse_file(p(), text).unwrap_err().to_string();
        assert!(e.contains("second detection control") && e.contains(":9:"), "{e}");
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

//! `conformance docs`: the generated tables inside Markdown files, written or checked.

use std::path::Path;

use crate::cli::DocsArgs;
use crate::docs::{FileKind, Loaded};
use crate::error::{Error, Result};
use crate::exit_code;
use crate::report::{json, table};
use crate::status::emit;

/// The most lines of a drifted marker's diff `docs --check` prints.
pub(super) const DOCS_DIFF_LINES: usize = 40;

/// The file at `source` read as `kind`, from `loaded` where an earlier marker read it already
/// (each file is read once per call). Errors: those of [`json::read`] and [`json::read_as`].
fn load<'a>(
    loaded: &'a mut std::collections::BTreeMap<(std::path::PathBuf, FileKind), Loaded>,
    source: &Path,
    kind: FileKind,
) -> std::result::Result<&'a Loaded, Error> {
    let key = (source.to_path_buf(), kind);
    if !loaded.contains_key(&key) {
        let read = match kind {
            FileKind::Results => json::read(source).map(|r| Loaded::Results(Box::new(r))),
            FileKind::CrossRace => json::read_as(source, "a cross-race.json").map(|r| Loaded::CrossRace(Box::new(r))),
            FileKind::Timings => json::read_as(source, "a benchmark summary").map(Loaded::Timings),
            FileKind::RaceSpeed => json::read_as(source, "a race-speed summary").map(Loaded::RaceSpeed),
        };
        loaded.insert(key.clone(), read?);
    }
    Ok(&loaded[&key])
}

/// `docs FILE… [--results FILE] [--check]`: regenerates each document's marked tables
/// ([`crate::docs`]) from its results file, and the values in its sentences
/// ([`crate::docs::value`]) from `--results`; writes a document (atomically, keeping its
/// permissions) only when it changes. With `--check` writes nothing, prints each drifted
/// marker (`FILE:LINE`) with a short unified diff (a value: its old and new text), and returns
/// 1 when any drifted.
///
/// Errors: [`Error::Input`] (exit 2) naming the document, its line and the key for a bad
/// marker or a selection holding no cell, a document that cannot be read, or a results file
/// that cannot be read ([`json::read`]) — then nothing is written; [`Error::Output`] (exit 3)
/// when a document cannot be rewritten (the documents before it have been).
pub(super) fn cmd_docs(a: &DocsArgs) -> Result<i32> {
    let mut loaded: std::collections::BTreeMap<(std::path::PathBuf, FileKind), Loaded> = Default::default();
    let mut drifted = 0usize;
    let mut writes = Vec::new();
    for file in &a.files {
        let raw =
            std::fs::read_to_string(file).map_err(|e| Error::input(file, format!("cannot read the document: {e}")))?;
        // a byte order mark is not part of line 1's marker; it is written back as it was
        let (bom, text) = match raw.strip_prefix('\u{feff}') {
            Some(rest) => ("\u{feff}", rest.to_string()),
            None => ("", raw),
        };
        let at = |line: usize, message: String| Error::Input { path: file.clone(), line, column: 0, message };
        let (markers, values) = crate::docs::parse_all(&text).map_err(|e| at(e.line, e.message))?;
        if markers.is_empty() && values.is_empty() {
            eprintln!("{}: no {} markers; left alone", file.display(), crate::docs::OPEN.trim_start_matches("<!-- "));
            continue;
        }
        let mut blocks = Vec::new();
        for m in &markers {
            let source = match &m.selector.results {
                Some(p) => file.parent().unwrap_or(Path::new("")).join(p),
                None => a.results.clone(),
            };
            let kind = m.selector.scenarios.file_kind();
            let file = load(&mut loaded, &source, kind).map_err(|e| at(m.line, format!("file of this marker: {e}")))?;
            let tables = crate::docs::render_loaded(file, &m.selector).map_err(|e| at(m.line, e))?;
            blocks.push((m, source, crate::docs::block(&tables, m.eol)));
        }
        // the values in sentences come from the results file of the call (`--results`)
        let mut inline = Vec::new();
        for v in &values {
            let file = load(&mut loaded, &a.results, FileKind::Results)
                .map_err(|e| at(v.line, format!("file of this value: {e}")))?;
            let Loaded::Results(r) = file else { unreachable!("read as a results file") };
            let new = crate::docs::value::render(r, &v.selector).map_err(|e| at(v.line, e))?;
            inline.push((v, new));
        }
        let stale: Vec<_> = blocks.iter().filter(|(m, _, new)| text[m.content.clone()] != **new).collect();
        let stale_values: Vec<_> = inline.iter().filter(|(v, new)| text[v.content.clone()] != **new).collect();
        let name = file.display();
        let counted = |n: usize| {
            if values.is_empty() {
                format!("{n} table marker(s)")
            } else {
                format!("{n} table marker(s) and {} value(s)", values.len())
            }
        };
        if stale.is_empty() && stale_values.is_empty() {
            emit(&format!("{name}: {} up to date\n", counted(markers.len())));
            continue;
        }
        drifted += 1;
        if a.check {
            // each drifted marker's report, by its place in the document
            let mut reports: Vec<(usize, String)> = Vec::new();
            for (v, new) in &stale_values {
                let report = format!(
                    "drifted: {name}:{} {}\n-{}\n+{}\n",
                    v.line,
                    v.open,
                    table::escape_controls(&text[v.content.clone()]),
                    table::escape_controls(new)
                );
                reports.push((v.content.start, report));
            }
            for (m, source, new) in &stale {
                let mut out = String::new();
                // the document up to the marker's end against the same with the new tables: the
                // hunks then carry the document's own line numbers and context
                let old = &text[..m.content.end];
                let new = format!("{}{new}", &text[..m.content.start]);
                let diff = similar::TextDiff::from_lines(old, new.as_str());
                let unified = diff
                    .unified_diff()
                    .context_radius(1)
                    .header(&format!("{name} (in the document)"), &format!("{name} (from {})", source.display()))
                    .to_string();
                let lines: Vec<&str> = unified.lines().collect();
                out += &format!("drifted: {name}:{} {}\n", m.line, m.open);
                for l in lines.iter().take(DOCS_DIFF_LINES) {
                    out += &format!("{}\n", table::escape_controls(l));
                }
                if lines.len() > DOCS_DIFF_LINES {
                    out += &format!("… {} more diff lines\n", lines.len() - DOCS_DIFF_LINES);
                }
                reports.push((m.content.start, out));
            }
            reports.sort_by_key(|(at, _)| *at);
            emit(&reports.into_iter().map(|(_, r)| r).collect::<String>());
        } else {
            let mut spliced: Vec<_> = blocks.iter().map(|(m, _, new)| (m.content.clone(), new.clone())).collect();
            spliced.extend(inline.iter().map(|(v, new)| (v.content.clone(), new.clone())));
            spliced.sort_by_key(|(range, _)| range.start);
            let said = if values.is_empty() {
                format!("{name}: rewrote {} of {} table marker(s)\n", stale.len(), markers.len())
            } else {
                format!(
                    "{name}: rewrote {} of {} table marker(s) and {} of {} value(s)\n",
                    stale.len(),
                    markers.len(),
                    stale_values.len(),
                    values.len()
                )
            };
            writes.push((file, format!("{bom}{}", crate::docs::splice(&text, &spliced)), said));
        }
    }
    // every document is rendered before any is written: a bad marker anywhere writes nothing
    for (file, text, said) in writes {
        crate::outdir::replace_file(file, &text)?;
        emit(&said);
    }
    if a.check && drifted > 0 {
        let results = if a.results == Path::new(crate::docs::DEFAULT_RESULTS) {
            String::new()
        } else {
            format!(" --results {}", a.results.display())
        };
        let files: Vec<String> = a.files.iter().map(|f| f.display().to_string()).collect();
        emit(&format!(
            "{drifted} document(s) drifted from their results; regenerate with `conformance docs{results} {}`\n",
            files.join(" ")
        ));
        return Ok(exit_code::DIFFERENCES);
    }
    Ok(exit_code::OK)
}

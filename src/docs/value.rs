//! Values inside a document's sentences that regenerate from a results file, as the tables do:
//!
//! ```text
//! natural, <!-- conformance:value runtime=node variant=node.cpSync.errorOnExist fact=natural -->4/10<!-- /conformance:value --> on Node
//! ```
//!
//! Both comments and the value between them stay on one line of prose (Markdown shows neither
//! comment); `conformance docs` rewrites the value and `docs --check` fails where it drifted, so
//! a figure quoted in a sentence is held to the committed results like a table. Pure: the
//! caller reads the files ([`crate::app`]'s `docs`).

use std::ops::Range;

use crate::matrix::SourceKind;
use crate::report::model::{Cell, ModeRun, Results, Scenario, TargetState};
use crate::report::table;

/// The start of an inline value marker, up to its keys.
pub const OPEN: &str = "<!-- conformance:value";

/// The end of an inline value, on the same line as its opening marker.
pub const CLOSE: &str = "<!-- /conformance:value -->";

/// The keys a value marker may hold, as `KEY=VALUE` separated by spaces.
pub const KEYS: [&str; 6] = ["runtime", "version", "variant", "target", "fact", "offset"];

/// Which fact of a row a value marker shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fact {
    /// The race column's text (`multiple-winners (nat 4/10)`, [`table::race_text`]).
    Race,
    /// The natural race's count: trials showing its verdict / trials (`4/10`; `0/100` where it
    /// was exclusive); with `offset=` the ordering released at that offset.
    Natural,
    /// Likewise for the amplified race.
    Amplified,
    /// The detection control of the row's race: trials caught / trials, in the mode it was
    /// judged in (`20/20`).
    Control,
    /// The second comer's cell against `target=` (`refused EEXIST`, [`table::second_text`]).
    SecondComer,
    /// A hand-off recipe's natural cell as its table shows it ([`table::handoff_text`]).
    Handoff,
    /// A hand-off recipe's amplified cell ([`table::amplified_handoff_text`]).
    HandoffAmplified,
}

impl Fact {
    /// Every fact, in the order the marker's error message lists them.
    pub const ALL: [Fact; 7] = [
        Fact::Race,
        Fact::Natural,
        Fact::Amplified,
        Fact::Control,
        Fact::SecondComer,
        Fact::Handoff,
        Fact::HandoffAmplified,
    ];

    /// The fact as a marker spells it (`second-comer`).
    pub fn as_str(self) -> &'static str {
        match self {
            Fact::Race => "race",
            Fact::Natural => "natural",
            Fact::Amplified => "amplified",
            Fact::Control => "control",
            Fact::SecondComer => "second-comer",
            Fact::Handoff => "handoff",
            Fact::HandoffAmplified => "handoff-amplified",
        }
    }

    fn parse(s: &str) -> Option<Fact> {
        Fact::ALL.into_iter().find(|f| f.as_str() == s)
    }
}

/// What one value marker selects, parsed from its keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueSelector {
    /// `runtime=`: one adapter name (`node`, `coreclr`).
    pub runtime: String,
    /// `version=`: the runtime's version, where the results hold several (`8.0.34`).
    pub version: Option<String>,
    /// `variant=`: the variant or recipe id, exactly; `@KIND` after it names a source kind
    /// other than the variant's own (`cmd.ren@dir`), as `--variant` does.
    pub variant: String,
    /// The source kind after `@`, if any.
    pub source: Option<SourceKind>,
    /// `target=`: the second comer's target state (`fact=second-comer` only).
    pub target: Option<TargetState>,
    /// `fact=`.
    pub fact: Fact,
    /// `offset=`: an ordering's release offset, µs (`fact=natural` or `amplified` only).
    pub offset_us: Option<u64>,
}

impl ValueSelector {
    /// Parses a value marker's keys (the text between `conformance:value` and `-->`).
    ///
    /// Errors: a message naming the key for an unknown or repeated key, a token without `=`,
    /// an empty value, an unknown runtime, source kind, target state or fact, a missing
    /// `runtime`, `variant` or `fact`, `target=` without `fact=second-comer` (or that fact
    /// without it), or an `offset=` that is not a whole number of µs or not for a race mode.
    pub fn parse(keys: &str) -> Result<ValueSelector, String> {
        let mut seen: Vec<(&str, &str)> = Vec::new();
        for token in keys.split_whitespace() {
            let Some((key, value)) = token.split_once('=') else {
                return Err(format!("'{token}' is not KEY=VALUE (keys: {})", KEYS.join(", ")));
            };
            if !KEYS.contains(&key) {
                return Err(format!("unknown key '{key}' (known: {})", KEYS.join(", ")));
            }
            if seen.iter().any(|(k, _)| *k == key) {
                return Err(format!("key '{key}' is given twice"));
            }
            if value.is_empty() {
                return Err(format!("key '{key}' has an empty value"));
            }
            seen.push((key, value));
        }
        let get = |key: &str| seen.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
        let need = |key: &str| get(key).ok_or_else(|| format!("a value marker needs {key}=…"));
        let name = need("runtime")?;
        let runtime = crate::runtime::adapter(name)
            .ok_or_else(|| {
                format!("key 'runtime': unknown runtime '{name}' (known: {})", crate::runtime::known_names())
            })?
            .name()
            .to_string();
        let (variant, source) = match crate::matrix::split_source_pattern(need("variant")?) {
            (id, Some(kind)) => {
                let known = || SourceKind::ALL.map(|k| k.as_str()).join(", ");
                let k = SourceKind::parse(kind)
                    .ok_or_else(|| format!("key 'variant': unknown source kind '@{kind}' (known: {})", known()))?;
                (id.to_string(), Some(k))
            }
            (id, None) => (id.to_string(), None),
        };
        let f = need("fact")?;
        let fact = Fact::parse(f).ok_or_else(|| {
            format!("key 'fact': unknown fact '{f}' (known: {})", Fact::ALL.map(Fact::as_str).join(", "))
        })?;
        let target = match get("target") {
            Some(t) => Some(TargetState::parse(t).ok_or_else(|| {
                let known: Vec<&str> = TargetState::ALL.iter().map(|t| t.as_str()).collect();
                format!("key 'target': unknown target state '{t}' (known: {})", known.join(", "))
            })?),
            None => None,
        };
        match (fact, target) {
            (Fact::SecondComer, None) => return Err("fact=second-comer needs target=… (file, empty-dir, dir)".into()),
            (Fact::SecondComer, Some(_)) | (_, None) => {}
            (_, Some(_)) => return Err("key 'target' applies to fact=second-comer only".into()),
        }
        let offset_us = match get("offset") {
            Some(o) => {
                if !matches!(fact, Fact::Natural | Fact::Amplified) {
                    return Err("key 'offset' applies to fact=natural or fact=amplified only".into());
                }
                Some(o.parse::<u64>().map_err(|_| format!("key 'offset': '{o}' is not a whole number of µs"))?)
            }
            None => None,
        };
        Ok(ValueSelector {
            runtime,
            version: get("version").map(str::to_string),
            variant,
            source,
            target,
            fact,
            offset_us,
        })
    }

    /// The row as a table labels it (`cmd.ren ← dir`), for messages.
    fn label(&self) -> String {
        crate::matrix::Variant::label(&self.variant, self.source)
    }
}

/// One value marker found in a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueMarker {
    /// 1-based line of the marker.
    pub line: usize,
    /// The opening marker as written, for messages.
    pub open: String,
    /// What it selects.
    pub selector: ValueSelector,
    /// Byte range of the value between the two comments (what the splice replaces).
    pub content: Range<usize>,
}

/// The value markers of one line of a document (`line` without its end, starting at byte
/// `start` of the document, line number `line_no`). A marker's comment inside an inline code
/// span (after an odd number of backticks on the line) is an example, not a marker.
///
/// Errors (message only; the caller names the line): an opening marker whose `-->` or whose
/// [`CLOSE`] is not on the same line, or not before the next opening one, a [`CLOSE`] without
/// an opening marker before it (or after one written without its spaces), or keys
/// [`ValueSelector::parse`] refuses.
pub fn scan_line(line: &str, start: usize, line_no: usize) -> Result<Vec<ValueMarker>, String> {
    let mut out = Vec::new();
    let mut at = 0;
    // inside an inline code span: after an odd number of backticks on the line
    let in_code = |i: usize| line[..i].matches('`').count() % 2 == 1;
    loop {
        let rest = &line[at..];
        let open = rest.find(OPEN).map(|i| at + i);
        let close = rest.find(CLOSE).map(|i| at + i);
        match (open, close) {
            (_, Some(c)) if open.is_none_or(|o| c < o) => {
                if in_code(c) {
                    // a closing comment shown in code: an example
                    at = c + CLOSE.len();
                    continue;
                }
                if line[..c].contains("<!--conformance:") {
                    return Err(format!(
                        "malformed conformance marker before {CLOSE} (one space after <!-- and before -->)"
                    ));
                }
                return Err(format!("{CLOSE} without an opening {OPEN} … --> before it on its line"));
            }
            (None, _) => return Ok(out),
            _ => {}
        }
        let o = open.expect("matched above");
        let after = o + OPEN.len();
        if in_code(o) {
            at = after;
            continue;
        }
        let Some(end) = line[after..].find("-->").map(|i| after + i) else {
            return Err(format!("the value marker must end with --> on its line: {}", &line[o..]));
        };
        let keys = &line[after..end];
        if !keys.is_empty() && !keys.starts_with(char::is_whitespace) {
            return Err(format!("unknown conformance marker: {}", &line[o..end + 3]));
        }
        let selector = ValueSelector::parse(keys)?;
        let value_start = end + 3;
        let Some(c) = line[value_start..].find(CLOSE).map(|i| value_start + i) else {
            return Err(format!("this value marker has no {CLOSE} after it on its line"));
        };
        // a value holds no marker: an opening one before the close means this one was not closed
        // (taking the next one's close would swallow the prose between them)
        if line[value_start..c].contains(OPEN) {
            return Err(format!("this value marker has no {CLOSE} before the next one opens on its line"));
        }
        out.push(ValueMarker {
            line: line_no,
            open: line[o..value_start].to_string(),
            selector,
            content: start + value_start..start + c,
        });
        at = c + CLOSE.len();
    }
}

/// The value `sel` selects from `results`, as one line of text. The row is the one raced by
/// separate processes (a `(threads)` row of `run --threads` is not selected).
///
/// Errors: a message naming what is missing — no cell of the runtime, several versions of it
/// without `version=`, no row of the variant (with the rows there are), no race, mode,
/// ordering, control, second comer or hand-off cell where the fact needs one.
pub fn render(results: &Results, sel: &ValueSelector) -> Result<String, String> {
    let of_runtime: Vec<&Cell> = results
        .cells
        .iter()
        .filter(|c| c.runtime_name == sel.runtime)
        .filter(|c| sel.version.as_deref().is_none_or(|v| c.runtime_version == v))
        .collect();
    let mut labels: Vec<&str> = of_runtime.iter().map(|c| c.runtime.as_str()).collect();
    labels.sort_unstable();
    labels.dedup();
    match labels.as_slice() {
        [] => {
            let which = sel.version.as_ref().map(|v| format!(" {v}")).unwrap_or_default();
            return Err(format!("runtime={}: the results hold no cell of {}{which}", sel.runtime, sel.runtime));
        }
        [_] => {}
        several => {
            return Err(format!("runtime={}: the results hold {}; give version=…", sel.runtime, several.join(", ")))
        }
    }
    let scenarios: &[Scenario] = match sel.fact {
        Fact::SecondComer => &[Scenario::SecondComer],
        Fact::Race | Fact::Natural | Fact::Amplified | Fact::Control => &[Scenario::Race],
        Fact::Handoff | Fact::HandoffAmplified => &[],
    };
    let cell = of_runtime
        .iter()
        .copied()
        .filter(|c| c.variant == sel.variant && c.source == sel.source && c.contenders.is_processes())
        .filter(|c| if scenarios.is_empty() { c.scenario.is_handoff() } else { scenarios.contains(&c.scenario) })
        .find(|c| sel.target.is_none_or(|t| c.target == t))
        .ok_or_else(|| {
            let mut rows: Vec<String> =
                of_runtime.iter().map(|c| crate::matrix::Variant::label(&c.variant, c.source)).collect();
            rows.sort_unstable();
            rows.dedup();
            let near: Vec<&String> = rows.iter().filter(|r| r.starts_with(&sel.variant)).collect();
            let hint = if near.is_empty() { String::new() } else { format!(" (rows of it: {near:?})") };
            let kind = match scenarios {
                [] => "hand-off",
                [s] => s.as_str(),
                _ => "such",
            };
            format!("variant={}: {} has no {kind} cell of this row{hint}", sel.label(), labels[0])
        })?;
    let no = |what: &str| format!("{} {}: {what}", labels[0], sel.label());
    match sel.fact {
        Fact::Race => Ok(table::race_text(cell)),
        Fact::SecondComer => Ok(table::second_text(cell)),
        Fact::Handoff => Ok(table::handoff_text(cell)),
        Fact::HandoffAmplified => table::amplified_handoff_text(cell).ok_or_else(|| no("no amplified run")),
        Fact::Control => {
            let d = cell.race().and_then(|r| r.detection.as_ref()).ok_or_else(|| no("no detection control"))?;
            Ok(format!("{}/{}", d.caught, d.trials))
        }
        Fact::Natural | Fact::Amplified => {
            let race = cell.race().ok_or_else(|| no("no race result"))?;
            let (run, mode) = match sel.fact {
                Fact::Natural => (race.natural.as_ref(), "natural"),
                _ => (race.amplified.as_ref(), "amplified"),
            };
            let run: &ModeRun = run.ok_or_else(|| no(&format!("no {mode} race")))?;
            match sel.offset_us {
                None => Ok(format!("{}/{}", run.stats.trials_showing(run.verdict), run.stats.trials)),
                Some(us) => {
                    let o = run.orderings.iter().find(|o| o.offset_us == us).ok_or_else(|| {
                        let have: Vec<String> = run.orderings.iter().map(|o| o.offset_us.to_string()).collect();
                        no(&format!(
                            "the {mode} race has no ordering at +{us} µs (it has: {})",
                            if have.is_empty() { "one, not swept".into() } else { have.join(", ") }
                        ))
                    })?;
                    Ok(format!("{}/{}", o.stats.trials_showing(o.verdict), o.stats.trials))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::docs::value::{render, scan_line, Fact, ValueSelector, CLOSE, OPEN};
    use crate::report::model::{CellResult, OrderingRun, Results};

    fn base() -> Results {
        crate::report::fixture("base.json")
    }

    fn value(keys: &str) -> Result<String, String> {
        render(&base(), &ValueSelector::parse(keys)?)
    }

    #[test]
    fn a_sentence_holds_its_values_between_the_comments() {
        let line = format!("a {OPEN} runtime=node variant=node.writeFileSync.w fact=natural -->9/9{CLOSE} and {OPEN} runtime=node variant=node.writeFileSync.wx fact=race -->x{CLOSE}.");
        let found = scan_line(&line, 100, 7).unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!((found[0].line, &line[found[0].content.start - 100..found[0].content.end - 100]), (7, "9/9"));
        assert_eq!(&line[found[1].content.start - 100..found[1].content.end - 100], "x");
        assert_eq!(found[1].selector.fact, Fact::Race);
        assert!(found[0].open.ends_with("fact=natural -->"), "{:?}", found[0].open);
        // in an inline code span it is an example, closing comment and all
        let shown = format!("write `{OPEN} runtime=node variant=a fact=race -->v{CLOSE}` in prose");
        assert!(scan_line(&shown, 0, 1).unwrap().is_empty());
        let shown = format!("`{CLOSE}` closes; {OPEN} runtime=node variant=a fact=race -->v{CLOSE}");
        assert_eq!(scan_line(&shown, 0, 1).unwrap().len(), 1);
        let shown = format!("write `{OPEN} runtime=node variant=a fact=race -->` in prose");
        assert!(scan_line(&shown, 0, 1).unwrap().is_empty());
        assert!(scan_line("no marker here", 0, 1).unwrap().is_empty());
    }

    #[test]
    fn a_value_marker_that_is_not_whole_on_its_line_is_refused() {
        let e = scan_line(&format!("{OPEN} runtime=node variant=a fact=race -->4/10"), 0, 1).unwrap_err();
        assert!(e.contains("no <!-- /conformance:value --> after it on its line"), "{e}");
        let e = scan_line(&format!("{OPEN} runtime=node variant=a"), 0, 1).unwrap_err();
        assert!(e.contains("must end with -->"), "{e}");
        // a marker left open is not closed by the next one's end: the prose between would go
        let two = format!(
            "a {OPEN} runtime=node variant=a fact=race -->4/5 b {OPEN} runtime=bun variant=a fact=race -->1{CLOSE}."
        );
        let e = scan_line(&two, 0, 1).unwrap_err();
        assert!(e.contains("no <!-- /conformance:value --> before the next one opens"), "{e}");
        let malformed = format!("<!--conformance:value runtime=node variant=a fact=race -->1{CLOSE}");
        let e = scan_line(&malformed, 0, 1).unwrap_err();
        assert!(e.contains("malformed conformance marker"), "{e}");
        let e = scan_line(&format!("x{CLOSE}"), 0, 1).unwrap_err();
        assert!(e.contains("without an opening"), "{e}");
        let e = scan_line("<!-- conformance:values runtime=node -->", 0, 1).unwrap_err();
        assert!(e.contains("unknown conformance marker"), "{e}");
    }

    #[test]
    fn keys_are_checked_and_named() {
        for (keys, says) in [
            ("variant=a fact=race", "needs runtime="),
            ("runtime=node fact=race", "needs variant="),
            ("runtime=node variant=a", "needs fact="),
            ("runtime=nodez variant=a fact=race", "unknown runtime 'nodez'"),
            ("runtime=node variant=a fact=speed", "unknown fact 'speed'"),
            ("runtime=node variant=a@disk fact=race", "unknown source kind '@disk'"),
            ("runtime=node variant=a fact=second-comer", "needs target="),
            ("runtime=node variant=a fact=race target=file", "applies to fact=second-comer only"),
            ("runtime=node variant=a fact=race offset=100", "applies to fact=natural or fact=amplified only"),
            ("runtime=node variant=a fact=natural offset=1ms", "not a whole number of µs"),
            ("runtime=node variant=a fact=race runtime=bun", "given twice"),
            ("runtime=node variant=a fact=race colour=red", "unknown key 'colour'"),
            ("runtime=node variant=a fact=race results", "is not KEY=VALUE"),
        ] {
            let e = ValueSelector::parse(keys).unwrap_err();
            assert!(e.contains(says), "{keys}: {e}");
        }
        let s = ValueSelector::parse("runtime=cmd variant=cmd.ren@dir fact=race").unwrap();
        assert_eq!((s.variant.as_str(), s.source), ("cmd.ren", Some(crate::matrix::SourceKind::Dir)));
    }

    #[test]
    fn each_fact_reads_what_the_tables_show() {
        let r = base();
        let cell = |v: &str, race: bool| {
            r.cells.iter().find(|c| c.variant == v && (c.race().is_some() == race)).unwrap().clone()
        };
        let w = cell("node.writeFileSync.w", true);
        assert_eq!(
            value("runtime=node variant=node.writeFileSync.w fact=race").unwrap(),
            crate::report::table::race_text(&w)
        );
        let nat = w.race().unwrap().natural.as_ref().unwrap();
        assert_eq!(
            value("runtime=node variant=node.writeFileSync.w fact=natural").unwrap(),
            format!("{}/{}", nat.stats.multi_winner_trials, nat.stats.trials)
        );
        assert_eq!(
            value("runtime=node variant=node.writeFileSync.wx fact=amplified").unwrap(),
            "0/20",
            "exclusive: none of its trials"
        );
        let d = cell("node.writeFileSync.wx", true).race().unwrap().detection.clone().unwrap();
        assert_eq!(
            value("runtime=node variant=node.writeFileSync.wx fact=control").unwrap(),
            format!("{}/{}", d.caught, d.trials)
        );
        let file = r
            .cells
            .iter()
            .find(|c| c.variant == "node.writeFileSync.wx" && c.target == crate::report::model::TargetState::File)
            .unwrap();
        assert_eq!(
            value("runtime=node variant=node.writeFileSync.wx fact=second-comer target=file").unwrap(),
            crate::report::table::second_text(file)
        );
    }

    #[test]
    fn an_ordering_is_read_by_its_offset() {
        let mut r = base();
        let cell = r.cells.iter_mut().find(|c| c.variant == "node.writeFileSync.w" && c.race().is_some()).unwrap();
        let CellResult::Race(race) = &mut cell.result else { panic!("a race cell") };
        let nat = race.natural.as_mut().unwrap();
        let mut later = nat.stats.clone();
        (later.trials, later.multi_winner_trials) = (5, 2);
        nat.orderings = vec![
            OrderingRun { offset_us: 0, verdict: nat.verdict, stats: nat.stats.clone() },
            OrderingRun { offset_us: 1_000, verdict: nat.verdict, stats: later },
        ];
        let sel = |keys: &str| ValueSelector::parse(keys).unwrap();
        assert_eq!(
            render(&r, &sel("runtime=node variant=node.writeFileSync.w fact=natural offset=1000")).unwrap(),
            "2/5"
        );
        let e = render(&r, &sel("runtime=node variant=node.writeFileSync.w fact=natural offset=500")).unwrap_err();
        assert!(e.contains("no ordering at +500 µs (it has: 0, 1000)"), "{e}");
        let e = render(&r, &sel("runtime=node variant=node.writeFileSync.w fact=amplified offset=0")).unwrap_err();
        assert!(e.contains("(it has: one, not swept)"), "{e}");
    }

    #[test]
    fn what_the_results_lack_is_named() {
        for (keys, says) in [
            ("runtime=bun variant=node.writeFileSync.w fact=race", "runtime=bun: the results hold no cell of bun"),
            ("runtime=node version=18.0.0 variant=node.writeFileSync.w fact=race", "no cell of node 18.0.0"),
            (
                "runtime=node variant=node.writeFileSync fact=race",
                "variant=node.writeFileSync: node 20.20.2 has no race cell of this row (rows of it: ",
            ),
            ("runtime=node variant=node.writeFileSync.w@dir fact=race", "variant=node.writeFileSync.w ← dir"),
            ("runtime=node variant=node.writeFileSync.w fact=handoff", "has no hand-off cell"),
            ("runtime=node variant=node.writeFileSync.w fact=second-comer target=self", "has no second-comer cell"),
        ] {
            let e = value(keys).unwrap_err();
            assert!(e.contains(says), "{keys}: {e}");
        }
        // two versions of one runtime: the marker must say which
        let mut r = base();
        let mut other = r.cells[0].clone();
        (other.runtime, other.runtime_version) = ("node 22.0.0".into(), "22.0.0".into());
        r.cells.push(other);
        let e = render(&r, &ValueSelector::parse("runtime=node variant=node.writeFileSync.w fact=race").unwrap())
            .unwrap_err();
        assert!(e.contains("node 20.20.2, node 22.0.0; give version="), "{e}");
        let one = ValueSelector::parse("runtime=node version=20.20.2 variant=node.writeFileSync.w fact=race").unwrap();
        assert!(render(&r, &one).is_ok());
    }
}

//! `results.json`: the [`Results`] model, pretty-printed.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use super::model::{CellResult, ModeRun, RaceResult, Results, Scenario, TargetState, SCHEMA};
use crate::error::{Error, Result};
use crate::verdict::{Detection, RaceMode, RaceStats, RaceVerdict};

/// `results.json` as written: the results, then what is derived from their cells (a reader
/// ignores both derived keys and derives them again). [`schema`] describes it.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[schemars(
    title = "conformance results.json",
    description = "What one conformance run (or a merge of runs) measured: run information, one record per cell, and the answers derived from the cells. docs/GLOSSARY.md defines the words."
)]
pub struct Written<'a> {
    #[serde(flatten)]
    results: &'a Results,
    /// Per runtime × call, the answer (derived from the cells).
    answers: Vec<super::answers::AnswerRecord>,
    /// Per runtime × intent, the calls to use, not to use, and undetermined.
    intents: Vec<super::answers::IntentRecord>,
    /// Per runtime × hand-off recipe, the answer (derived from the cells).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    recipes: Vec<super::answers::RecipeAnswerRecord>,
}

/// The JSON Schema (draft 2020-12) of `results.json` as [`render`] writes it, generated from
/// the types (schemars); committed as `docs/results.schema.json`.
pub fn schema() -> String {
    // the serialisation contract: fields that are left out when empty are optional
    let s = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<Written<'static>>();
    let mut text = serde_json::to_string_pretty(&s).expect("schemas serialise");
    text.push('\n');
    text
}

/// Serialises results as pretty JSON with a trailing newline: `schema`, `run_info`, `cells`,
/// then the answers derived from the cells (`answers`, a record per runtime × call,
/// `intents`, the use / don't-use lists per runtime × intent, and `recipes`, a record per
/// runtime × hand-off recipe where there are any; [`super::answers`]).
pub fn render(r: &Results) -> String {
    let answers = super::answers::records(r);
    let intents = super::answers::intent_records(&answers);
    let recipes = super::answers::recipe_records(r);
    let mut s =
        serde_json::to_string_pretty(&Written { results: r, answers, intents, recipes }).expect("results serialise");
    s.push('\n');
    s
}

/// The largest results file [`read`] accepts: 256 MiB, far more than any run writes.
pub const MAX_BYTES: u64 = 256 << 20;

/// The largest trial count a run can record ([`crate::domain::MAX_TRIALS`]); larger counts in a
/// results file are rejected, so no sum or rate over them can wrap.
const MAX_TRIALS: usize = crate::domain::MAX_TRIALS as usize;

/// Reads a `results.json` of at most [`MAX_BYTES`].
///
/// Errors: [`Error::Input`] naming the file, for a file that cannot be read or is larger than
/// [`MAX_BYTES`]; with the line and column of a JSON or UTF-8 error; for an unknown schema
/// version; and, naming the cell by index and id, for a cell that contradicts its scenario
/// (a second-comer cell without `outcome` or with race counts, a race cell with `outcome`), a
/// race cell whose counts are missing or malformed (serde drops a malformed flattened group
/// silently, so it is checked here), counts beyond [`crate::domain::MAX_TRIALS`] trials or
/// inconsistent with their trials or contenders, or a cell repeated (same id, or same
/// runtime, variant, scenario and target).
pub fn read(path: &Path) -> Result<Results> {
    let bytes = read_capped(path, MAX_BYTES)?;
    parse(path, &bytes)
}

/// Reads a JSON file of another kind conformance writes (`cross-race.json`, a benchmark
/// summary) as `T`; `what` names the kind in messages (`a cross-race.json`).
///
/// Errors ([`Error::Input`], exit 2): the file cannot be read, is larger than 64 MiB, or is
/// not JSON of that shape (with the line and column serde reports).
pub fn read_as<T: serde::de::DeserializeOwned>(path: &Path, what: &str) -> Result<T> {
    let bytes = read_capped(path, MAX_BYTES)?;
    serde_json::from_slice(without_bom(&bytes)).map_err(|e| not_json(path, what, e))
}

/// `bytes` without a leading UTF-8 byte order mark (an editor's): what follows it is read as
/// usual.
fn without_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

/// The input error for `path` when it is not JSON of the shape `what` names (`a cross-race.json`),
/// at the line and column serde reports.
fn not_json(path: &Path, what: &str, e: serde_json::Error) -> Error {
    Error::Input { path: path.to_path_buf(), line: e.line(), column: e.column(), message: format!("not {what}: {e}") }
}

/// The bytes of `path`, refusing more than `limit` (checked on the size first, then while
/// reading through [`Read::take`], for what is not a regular file).
fn read_capped(path: &Path, limit: u64) -> Result<Vec<u8>> {
    let size = if limit.is_multiple_of(1 << 20) { format!("{} MiB", limit >> 20) } else { format!("{limit} bytes") };
    let too_big = || Error::input(path, format!("larger than {size}; not a results file conformance wrote, not read"));
    let cannot = |e: std::io::Error| Error::input(path, format!("cannot read: {e}"));
    let f = std::fs::File::open(path).map_err(cannot)?;
    if f.metadata().is_ok_and(|m| m.is_file() && m.len() > limit) {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    f.take(limit + 1).read_to_end(&mut bytes).map_err(cannot)?;
    if bytes.len() as u64 > limit {
        return Err(too_big());
    }
    Ok(bytes)
}

/// Parses and checks the bytes of a results file (see [`read`]); files of schemas 1 and 2
/// are brought up to [`SCHEMA`] first ([`super::legacy::upgrade`]).
fn parse(path: &Path, bytes: &[u8]) -> Result<Results> {
    let bytes = without_bom(bytes);
    let json_error = |e: serde_json::Error| not_json(path, "a conformance results file", e);
    #[derive(serde::Deserialize)]
    struct Peek {
        schema: u32,
    }
    // the schema first: an unknown one fails on its schema, not on a field it lacks
    let r: Results = match serde_json::from_slice::<Peek>(bytes) {
        Ok(Peek { schema: s @ 1..=2 }) => {
            let mut v: serde_json::Value = serde_json::from_slice(bytes).map_err(json_error)?;
            super::legacy::upgrade(&mut v, s);
            // the upgraded value has no positions: serde names the field that failed
            serde_json::from_value(v)
                .map_err(|e| Error::input(path, format!("not a conformance results file (schema {s}): {e}")))?
        }
        Ok(Peek { schema }) if schema != SCHEMA => {
            return Err(Error::input(
                path,
                format!("schema {schema} is not supported (this conformance reads schemas 1 to {SCHEMA})"),
            ))
        }
        _ => serde_json::from_slice(bytes).map_err(json_error)?,
    };
    check(&r).map_err(|m| Error::input(path, m))?;
    let mut r = r;
    renormalize(&mut r);
    Ok(r)
}

/// Derives each second comer's and race's normalised error code again from its raw error by
/// this harness's rules ([`crate::runtime::normalize`]), so that a file written before a rule
/// was added (PowerShell's error ids, say) reads, compares and renders as a run made now: the
/// code is a name for the raw error, which is what was measured and is kept as it was. A race's
/// per-code counts have no raw errors beside them and stay as written.
fn renormalize(r: &mut Results) {
    let fix = |e: &mut Option<super::model::ErrorInfo>| {
        if let Some(e) = e {
            e.code = crate::runtime::normalize(&e.raw).to_string();
        }
    };
    for c in &mut r.cells {
        match &mut c.result {
            CellResult::SecondComer(s) => {
                fix(&mut s.error);
                if let Some(rel) = &mut s.relative {
                    fix(&mut rel.error);
                }
            }
            CellResult::Race(x) => fix(&mut x.error),
            CellResult::Counters(_) => {}
        }
    }
}

/// What a results file must hold beyond its JSON shape; the message names the cell.
fn check(r: &Results) -> std::result::Result<(), String> {
    let counted = |v: RaceVerdict| v != RaceVerdict::Unsupported;
    let mut ids: HashMap<&str, usize> = HashMap::new();
    type Key<'a> = (&'a str, &'a str, Option<crate::matrix::SourceKind>, Scenario, TargetState);
    let mut keys: HashMap<Key<'_>, usize> = HashMap::new();
    for (i, c) in r.cells.iter().enumerate() {
        let at = |m: String| format!("cell {i} ('{}'): {m}", c.id.escape_debug());
        if let Some(j) = ids.insert(&c.id, i) {
            return Err(at(format!("repeats the id of cell {j}")));
        }
        if let Some(j) = keys.insert((&c.runtime, &c.variant, c.source, c.scenario, c.target), i) {
            return Err(at(format!("repeats cell {j} (same runtime, variant, source kind, scenario and target)")));
        }
        // what no run writes: a cell that cannot be told apart or whose time runs backwards
        for (field, value) in [("runtime", &c.runtime), ("runtime_name", &c.runtime_name), ("variant", &c.variant)] {
            if value.trim().is_empty() {
                return Err(at(format!("its {field} is empty")));
            }
        }
        if !c.elapsed_ms.is_finite() || c.elapsed_ms < 0.0 {
            return Err(at(format!("elapsed_ms is {}, not a duration", c.elapsed_ms)));
        }
        match (c.scenario, &c.result) {
            (Scenario::SecondComer, CellResult::SecondComer(_)) => {}
            (Scenario::Race, CellResult::Race(race)) => {
                if counted(race.verdict) && race.natural.is_none() && race.amplified.is_none() && c.evidence.is_none() {
                    return Err(at("a race cell without counts (no natural or amplified run) or evidence".into()));
                }
                for (mode, m) in [("natural", &race.natural), ("amplified", &race.amplified)] {
                    let Some(m) = m else { continue };
                    check_run(m).map_err(|e| at(format!("{mode} run: {e}")))?;
                }
                if let Some(d) = &race.detection {
                    check_detection(d).map_err(at)?;
                }
                check_verdict(race).map_err(at)?;
            }
            (s, CellResult::Counters(_)) if s.is_handoff() => {}
            (s, r) => return Err(at(format!("a {} cell holding a {} result", s.as_str(), r.kind()))),
        }
    }
    let ri = &r.run_info;
    if !ri.duration_s.is_finite() || ri.duration_s < 0.0 {
        return Err(format!("run_info.duration_s is {}, not a duration", ri.duration_s));
    }
    if ri.contenders == 0 || ri.trials == 0 {
        return Err(format!(
            "run_info says {} contenders × {} trials; every run has at least one of each",
            ri.contenders, ri.trials
        ));
    }
    for ctl in &r.run_info.controls {
        check_detection(&ctl.detection)
            .map_err(|e| format!("run_info control of {}: {e}", ctl.runtime.escape_debug()))?;
    }
    Ok(())
}

/// One run's counts: within [`MAX_TRIALS`], each no more than its trials, its winners no more
/// than its contenders; its orderings likewise and within the run.
fn check_run(m: &ModeRun) -> std::result::Result<(), String> {
    check_stats(&m.stats)?;
    let st = &m.stats;
    if m.discarded_trials > MAX_TRIALS || m.loose_trials > MAX_TRIALS {
        return Err(format!("more than {MAX_TRIALS} discarded or loose trials"));
    }
    let calls = st.trials.saturating_mul(st.contenders);
    if let Some((code, n)) = m.errors.iter().find(|(_, n)| **n > calls) {
        return Err(format!("{n} errors {} in {} calls", code.escape_debug(), calls));
    }
    if m.trials_per_second.is_some_and(|x| !(x.is_finite() && x >= 0.0)) {
        return Err("trials_per_second is not a rate".into());
    }
    for o in &m.orderings {
        check_stats(&o.stats).map_err(|e| format!("ordering +{} µs: {e}", o.offset_us))?;
        if o.stats.trials > st.trials {
            return Err(format!(
                "ordering +{} µs has {} of the run's {} trials",
                o.offset_us, o.stats.trials, st.trials
            ));
        }
    }
    Ok(())
}

fn check_stats(st: &RaceStats) -> std::result::Result<(), String> {
    let t = st.trials;
    if t > MAX_TRIALS {
        return Err(format!("{t} trials, more than any run makes ({MAX_TRIALS})"));
    }
    if st.contenders > crate::domain::MAX_CONTENDERS as usize {
        return Err(format!("{} contenders, more than any run has ({})", st.contenders, crate::domain::MAX_CONTENDERS));
    }
    for (name, n) in [
        ("multi_winner_trials", st.multi_winner_trials),
        ("lost_update_trials", st.lost_update_trials),
        ("no_winner_trials", st.no_winner_trials),
        ("fault_trials", st.fault_trials),
        ("clean_trials", st.clean_trials),
    ] {
        if n > t {
            return Err(format!("{name} {n} is more than its {t} trials"));
        }
    }
    if let Some(n) = st.wins_by_contender.iter().find(|n| **n > t) {
        return Err(format!("wins_by_contender {n} is more than its {t} trials"));
    }
    if st.wins_by_contender.len() > st.contenders {
        return Err(format!("wins for {} contenders of {}", st.wins_by_contender.len(), st.contenders));
    }
    let most = st.winners.keys().copied().max().unwrap_or(0).max(st.max_winners);
    if most > st.contenders {
        return Err(format!("{most} winners in a trial of {} contenders", st.contenders));
    }
    let sum = st.winners.values().try_fold(0usize, |a, n| a.checked_add(*n));
    if sum.is_none_or(|s| s > t) {
        return Err(format!("the winners histogram counts more than its {t} trials"));
    }
    if st.clean_trials.checked_add(st.fault_trials).is_none_or(|n| n > t) {
        return Err(format!("{} clean and {} faulty trials in {t}", st.clean_trials, st.fault_trials));
    }
    // the bound is shown as the evidence of an `exclusive`: it must follow from the counts
    let bound = crate::stats::upper95(st.multi_winner_trials.min(st.clean_trials), st.clean_trials);
    if (st.multi_winner_upper95 - bound).abs() > 1e-9 {
        return Err(format!(
            "multi_winner_upper95 {} does not follow from {} of {} clean trials ({bound})",
            st.multi_winner_upper95, st.multi_winner_trials, st.clean_trials
        ));
    }
    let rate = |x: f64| (0.0..=1.0).contains(&x);
    if !rate(st.multi_winner_upper95) || st.multi_winner_ci95.is_some_and(|[lo, hi]| !(rate(lo) && rate(hi))) {
        return Err("a multi-winner bound outside [0, 1]".into());
    }
    Ok(())
}

/// A race verdict its own counts contradict: `exclusive` beside a run that saw two winners or
/// a lost update (or whose own verdict says so), or decided by a mode that did not run. A
/// hand-edited file would otherwise list a failing call under "use".
fn check_verdict(race: &RaceResult) -> std::result::Result<(), String> {
    let runs = [(RaceMode::Natural, &race.natural), (RaceMode::Amplified, &race.amplified)];
    if race.verdict == RaceVerdict::Exclusive {
        for (mode, m) in runs.iter().filter_map(|(k, m)| m.as_ref().map(|m| (k, m))) {
            let st = &m.stats;
            let two =
                st.multi_winner_trials > 0 || st.max_winners > 1 || st.winners.iter().any(|(w, n)| *w > 1 && *n > 0);
            if two
                || st.lost_update_trials > 0
                || matches!(m.verdict, RaceVerdict::MultipleWinners | RaceVerdict::LostUpdate)
            {
                return Err(format!("verdict exclusive, but its {} run counts a failure", mode.as_str()));
            }
        }
    }
    let decided = match race.decided_by {
        RaceMode::Natural => &race.natural,
        RaceMode::Amplified => &race.amplified,
    };
    if decided.is_none() && (race.natural.is_some() || race.amplified.is_some()) {
        return Err(format!("decided by the {} run, which it does not hold", race.decided_by.as_str()));
    }
    Ok(())
}

fn check_detection(d: &Detection) -> std::result::Result<(), String> {
    let pairs = [Some([d.caught, d.trials]), d.natural, d.amplified];
    if pairs.into_iter().flatten().any(|[n, t]| n > t || t > MAX_TRIALS) {
        return Err(format!("detection control {} has counts beyond its trials", d.variant.escape_debug()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{check, parse, read, read_capped, Error, Results, SCHEMA};

    fn base() -> serde_json::Value {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/results/base.json");
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    fn err(v: &serde_json::Value) -> String {
        let e = parse(Path::new("r.json"), v.to_string().as_bytes()).unwrap_err();
        assert_eq!(e.exit_code(), crate::exit_code::USAGE);
        e.to_string()
    }

    fn race_index(v: &serde_json::Value) -> usize {
        v["cells"].as_array().unwrap().iter().position(|c| c["scenario"] == "race").unwrap()
    }

    #[test]
    fn the_fixture_reads() {
        assert!(parse(Path::new("r.json"), base().to_string().as_bytes()).is_ok());
    }

    /// A file written before PowerShell's error ids were normalised says OTHER beside the raw
    /// `DirectoryExist,…` id: it reads as a run made now would say it, the raw error unchanged.
    #[test]
    fn normalised_codes_are_derived_again_from_the_raw_error() {
        let mut v = base();
        let raw = serde_json::json!({"type": "System.IO.IOException", "code": "DirectoryExist,Microsoft.PowerShell.Commands.NewItemCommand", "errno": null, "hresult": -2146232800, "message": "An item with the specified name /x already exists."});
        v["cells"][1]["result"]["error"] = serde_json::json!({"code": "OTHER", "raw": raw.clone()});
        let r = parse(Path::new("r.json"), v.to_string().as_bytes()).unwrap();
        let e = r.cells[1].error().expect("the cell's error");
        assert_eq!(e.code, "EEXIST");
        assert_eq!(e.raw.code.as_deref(), raw["code"].as_str());
    }

    #[test]
    fn a_cell_must_match_its_scenario() {
        let mut v = base();
        v["cells"][1]["result"].as_object_mut().unwrap().remove("outcome");
        let e = err(&v);
        assert!(e.contains("missing field `outcome`"), "{e}");
        let mut v = base();
        let i = race_index(&v);
        v["cells"][i]["result"] = v["cells"][1]["result"].clone();
        let e = err(&v);
        assert!(
            e.starts_with(&format!("r.json: cell {i} (")) && e.contains("a race cell holding a second-comer result"),
            "{e}"
        );
        let mut v = base();
        v["cells"][i]["result"]["kind"] = "guess".into();
        assert!(err(&v).contains("unknown variant `guess`"), "{}", err(&v));
    }

    #[test]
    fn a_repeated_cell_is_rejected() {
        let mut v = base();
        let first = v["cells"][0].clone();
        v["cells"].as_array_mut().unwrap().push(first.clone());
        let n = v["cells"].as_array().unwrap().len() - 1;
        assert!(
            err(&v).contains(&format!("cell {n} (")) && err(&v).contains("repeats the id of cell 0"),
            "{}",
            err(&v)
        );
        // same runtime, variant, scenario and target under another id
        v["cells"][n]["id"] = "other".into();
        let why = "repeats cell 0 (same runtime, variant, source kind, scenario and target)";
        assert!(err(&v).contains(why), "{}", err(&v));
        // the same cell with another kind of source is a cell of its own
        v["cells"][n]["source"] = "empty-dir".into();
        let r: Results = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(check(&r), Ok(()));
    }

    #[test]
    fn counts_that_could_wrap_or_contradict_are_rejected() {
        let mut v = base();
        let i = race_index(&v);
        v["cells"][i]["result"]["natural"]["stats"]["trials"] = serde_json::json!(u64::MAX);
        let e = err(&v);
        assert!(e.contains(&format!("cell {i} (")) && e.contains("natural run: 18446744073709551615 trials"), "{e}");
        for (field, value) in [
            ("multi_winner_trials", serde_json::json!(1_000_000)),
            ("winners", serde_json::json!({"1": u64::MAX, "2": 5})),
            ("winners", serde_json::json!({"9": 1})),
            ("contenders", serde_json::json!(1000)),
            ("wins_by_contender", serde_json::json!([1_000_000, 0, 0])),
        ] {
            let mut v = base();
            v["cells"][i]["result"]["amplified"]["stats"][field] = value;
            let e = err(&v);
            assert!(e.contains("amplified run: "), "{field}: {e}");
        }
        let mut v = base();
        v["cells"][i]["result"]["detection"]["caught"] = serde_json::json!(1_000_000_000);
        assert!(err(&v).contains("detection control"), "{}", err(&v));
    }

    /// The adversarial pass's hand edits: an `exclusive` whose counts show two winners, a
    /// bound that does not follow from the counts, more clean and faulty trials than trials,
    /// and a verdict decided by a run the cell does not hold; each is refused, naming the cell.
    #[test]
    fn a_verdict_or_bound_its_counts_contradict_is_rejected() {
        let v0 = base();
        let i = v0["cells"]
            .as_array()
            .unwrap()
            .iter()
            .position(|c| {
                c["scenario"] == "race" && c["result"]["verdict"] == "exclusive" && c["result"]["natural"].is_object()
            })
            .expect("an exclusive race in the fixture");
        type Edit = (&'static str, fn(&mut serde_json::Value), &'static str);
        let edits: [Edit; 4] = [
            (
                "two winners under exclusive",
                |r| {
                    let st = &mut r["natural"]["stats"];
                    let t = st["trials"].as_u64().unwrap();
                    st["multi_winner_trials"] = serde_json::json!(1);
                    st["max_winners"] = serde_json::json!(2);
                    st["winners"] = serde_json::json!({"1": t - 1, "2": 1});
                    st["multi_winner_upper95"] =
                        serde_json::json!(crate::stats::upper95(1, st["clean_trials"].as_u64().unwrap() as usize));
                },
                "counts a failure",
            ),
            (
                "a bound not from the counts",
                |r| r["natural"]["stats"]["multi_winner_upper95"] = serde_json::json!(0.5),
                "does not follow",
            ),
            (
                "clean and faulty beyond trials",
                |r| {
                    let t = r["natural"]["stats"]["trials"].as_u64().unwrap();
                    r["natural"]["stats"]["fault_trials"] = serde_json::json!(t);
                },
                "faulty trials in",
            ),
            (
                "decided by a missing run",
                |r| {
                    r["amplified"] = serde_json::Value::Null;
                    r["decided_by"] = serde_json::json!("amplified");
                },
                "which it does not hold",
            ),
        ];
        for (what, edit, says) in edits {
            let mut v = v0.clone();
            edit(&mut v["cells"][i]["result"]);
            let e = err(&v);
            assert!(e.contains(says) && e.contains(&format!("cell {i} (")), "{what}: {e}");
        }
    }

    #[test]
    fn run_info_that_no_run_writes_is_rejected() {
        for (field, value, says) in [
            ("duration_s", serde_json::json!(-5.0), "not a duration"),
            ("trials", serde_json::json!(0), "0 trials"),
            ("contenders", serde_json::json!(0), "0 contenders"),
        ] {
            let mut v = base();
            v["run_info"][field] = value;
            let e = err(&v);
            assert!(e.contains(says), "{field}: {e}");
        }
    }

    #[test]
    fn older_schemas_are_read_and_unknown_ones_refused() {
        for name in ["schema1.json", "schema2.json"] {
            let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results").join(name);
            let r = read(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(r.schema, SCHEMA, "{name}");
            assert!(r.cells.iter().any(|c| c.race().is_some_and(|r| r.natural.is_some())), "{name}");
        }
        let mut v = base();
        v["schema"] = 99.into();
        assert!(err(&v).contains("schema 99 is not supported (this conformance reads schemas 1 to 3)"), "{}", err(&v));
    }

    #[test]
    fn invalid_utf8_has_a_line() {
        let text = base().to_string().replacen("node.writeFileSync.wx", "node.writeFileSync.w\u{e9}", 1);
        let mut bytes = text.into_bytes();
        let at = bytes.iter().position(|b| *b == 0xc3).unwrap();
        bytes[at] = 0xff;
        let e = parse(Path::new("r.json"), &bytes).unwrap_err();
        assert!(matches!(e, Error::Input { line: 1.., .. }), "{e}");
    }

    #[test]
    fn the_size_read_is_capped() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("big.json");
        std::fs::write(&f, vec![b' '; 2048]).unwrap();
        assert_eq!(read_capped(&f, 2048).unwrap().len(), 2048);
        let e = read_capped(&f, 1024).unwrap_err().to_string();
        assert!(e.contains("big.json: larger than 1024 bytes"), "{e}");
        // what has no size (a device, a pipe) is cut while reading
        #[cfg(unix)]
        {
            let e = read_capped(Path::new("/dev/zero"), 1 << 20).unwrap_err().to_string();
            assert!(e.contains("/dev/zero: larger than 1 MiB"), "{e}");
        }
    }
}

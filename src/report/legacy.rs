//! Older `results.json` schemas, brought up to [`SCHEMA`] before they are read, so that
//! `report`, `compare` and `--expect` take files written by earlier versions.
//!
//! - Schema 1 (before natural and amplified races): a race cell holds its counts flat, beside
//!   `errors`, `discarded_trials` and `trials_per_second`; they become its natural run, which
//!   decided the verdict; the clean trials and the multi-winner bound, not recorded then, are
//!   computed from the counts. `run_info` gains an amplification marked "not recorded".
//! - Schema 2: a cell's findings lie beside its identity (`outcome`, `verdict`, `natural`, …)
//!   and every group of counts is flattened into its parent; they move into `result` (tagged by
//!   `kind`) and into nested `stats` / `detection` objects.
//!
//! The upgrade works on the JSON value and only moves fields; what it cannot place is left
//! where it is, so the typed read that follows reports it with the file's name.

use serde_json::{Map, Value};

use super::model::SCHEMA;

/// The race counts a schema 1 or 2 file kept flat in their parent object
/// ([`crate::verdict::RaceStats`]'s fields).
const STATS_FIELDS: [&str; 13] = [
    "contenders",
    "trials",
    "winners",
    "multi_winner_trials",
    "max_winners",
    "lost_update_trials",
    "no_winner_trials",
    "fault_trials",
    "wins_by_contender",
    "barrier_spread_us",
    "clean_trials",
    "multi_winner_upper95",
    "multi_winner_ci95",
];

/// A detection control's fields, flat in a schema 2 `run_info.controls` entry.
const DETECTION_FIELDS: [&str; 8] =
    ["variant", "mode", "caught", "trials", "offset_us", "natural", "amplified", "worked"];

/// The fields of a second-comer cell's findings in schema 2.
const SECOND_FIELDS: [&str; 5] = ["outcome", "error", "relative", "before", "after"];

/// The fields of a race cell's findings in schema 2.
const RACE_FIELDS: [&str; 8] =
    ["verdict", "decided_by", "error", "natural", "amplified", "amplified_unavailable", "detection", "weak_race"];

/// Brings `v`, a results file of schema `from` (1 or 2), up to [`SCHEMA`] in place. Other
/// schemas are left alone (the caller rejects them).
pub fn upgrade(v: &mut Value, from: u32) {
    if from == 1 {
        one_to_two(v);
    }
    if from <= 2 {
        two_to_three(v);
        v["schema"] = SCHEMA.into();
    }
}

/// Moves `fields` present in `from` into a new object.
fn take(from: &mut Map<String, Value>, fields: &[&str]) -> Map<String, Value> {
    fields.iter().filter_map(|f| from.remove(*f).map(|x| (f.to_string(), x))).collect()
}

/// Nests the flat counts of a mode run or ordering (`obj`) under `stats`.
fn nest_stats(obj: &mut Value) {
    if let Some(o) = obj.as_object_mut() {
        let stats = take(o, &STATS_FIELDS);
        o.insert("stats".into(), Value::Object(stats));
        if let Some(Value::Array(orderings)) = o.get_mut("orderings") {
            orderings.iter_mut().for_each(nest_stats);
        }
    }
}

fn two_to_three(v: &mut Value) {
    if let Some(cells) = v.get_mut("cells").and_then(Value::as_array_mut) {
        for c in cells.iter_mut().filter_map(Value::as_object_mut) {
            let race = c.get("scenario").and_then(Value::as_str) == Some("race");
            let mut result = take(c, if race { &RACE_FIELDS } else { &SECOND_FIELDS });
            for mode in ["natural", "amplified"] {
                if let Some(m) = result.get_mut(mode).filter(|m| !m.is_null()) {
                    nest_stats(m);
                }
            }
            if !race {
                // a harness error of schema 2 had no before/after descriptions
                for f in ["before", "after"] {
                    if result.get(f).is_none_or(Value::is_null) {
                        result.insert(f.into(), "".into());
                    }
                }
            }
            result.insert("kind".into(), if race { "race" } else { "second-comer" }.into());
            c.insert("result".into(), Value::Object(result));
        }
    }
    if let Some(controls) = v.pointer_mut("/run_info/controls").and_then(Value::as_array_mut) {
        for ctl in controls.iter_mut().filter_map(Value::as_object_mut) {
            let d = take(ctl, &DETECTION_FIELDS);
            ctl.insert("detection".into(), Value::Object(d));
        }
    }
}

fn one_to_two(v: &mut Value) {
    if let Some(cells) = v.get_mut("cells").and_then(Value::as_array_mut) {
        for c in cells.iter_mut().filter_map(Value::as_object_mut) {
            if c.get("scenario").and_then(Value::as_str) != Some("race") {
                continue;
            }
            let mut run = take(c, &STATS_FIELDS);
            if run.is_empty() {
                // unsupported or a fault before any trial: no counts were written
                continue;
            }
            run.extend(take(c, &["errors", "discarded_trials", "trials_per_second"]));
            let n = |k: &str| run.get(k).and_then(Value::as_u64).unwrap_or(0) as usize;
            let clean = n("trials").saturating_sub(n("fault_trials"));
            let multi = n("multi_winner_trials").min(clean);
            run.insert("clean_trials".into(), clean.into());
            run.insert("multi_winner_upper95".into(), crate::stats::upper95(multi, clean).into());
            if multi > 0 {
                let [lo, hi] = crate::stats::interval95(multi, clean);
                run.insert("multi_winner_ci95".into(), serde_json::json!([lo, hi]));
            }
            run.insert("verdict".into(), c.get("verdict").cloned().unwrap_or(Value::Null));
            c.insert("natural".into(), Value::Object(run));
            c.insert("decided_by".into(), "natural".into());
            c.insert("amplified_unavailable".into(), "not recorded (a schema 1 file: natural races only)".into());
        }
    }
    if let Some(info) = v.get_mut("run_info").and_then(Value::as_object_mut) {
        info.entry("amplification").or_insert_with(|| {
            serde_json::json!({
                "requested": "off",
                "delay_us": 0,
                "syscalls": [],
                "unavailable": "not recorded (a schema 1 file: natural races only)"
            })
        });
    }
}

#[cfg(test)]
mod tests {
    use super::{upgrade, Value, SCHEMA};

    fn fixture(name: &str) -> Value {
        let path = format!("{}/tests/fixtures/results/{name}", env!("CARGO_MANIFEST_DIR"));
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    #[test]
    fn schema_2_moves_findings_into_result_and_nests_counts() {
        let mut v = fixture("schema2.json");
        upgrade(&mut v, 2);
        let cells = v["cells"].as_array().unwrap();
        let race = cells.iter().find(|c| c["scenario"] == "race").unwrap();
        assert_eq!(race["result"]["kind"], "race");
        assert!(race["verdict"].is_null() && race["natural"].is_null(), "moved, not copied: {race}");
        assert!(race["result"]["natural"]["stats"]["trials"].as_u64().unwrap() > 0, "{race}");
        assert!(race["result"]["natural"]["trials"].is_null(), "{race}");
        let second = cells.iter().find(|c| c["scenario"] == "second-comer").unwrap();
        assert_eq!(second["result"]["kind"], "second-comer");
        assert!(second["result"]["outcome"].is_string(), "{second}");
        let ctl = &v["run_info"]["controls"][0];
        assert!(ctl["detection"]["worked"].is_boolean() && ctl["worked"].is_null(), "{ctl}");
        assert_eq!(v["schema"], SCHEMA);
    }

    #[test]
    fn schema_1_races_become_natural_runs_with_their_bound() {
        let mut v = fixture("schema1.json");
        upgrade(&mut v, 1);
        let race = v["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["variant"] == "node.writeFileSync.wx" && c["scenario"] == "race")
            .unwrap();
        let n = &race["result"]["natural"];
        assert_eq!(race["result"]["decided_by"], "natural");
        assert_eq!(n["verdict"], race["result"]["verdict"]);
        assert_eq!(n["stats"]["clean_trials"], 200, "{n}");
        let bound = n["stats"]["multi_winner_upper95"].as_f64().unwrap();
        assert!((bound - crate::stats::upper95(0, 200)).abs() < 1e-12, "{bound}");
        assert!(n["errors"]["EEXIST"].as_u64().unwrap() > 0, "{n}");
        assert!(v["run_info"]["amplification"]["unavailable"].as_str().unwrap().contains("schema 1"));
    }
}

//! `run --against`: the rows that held, raced against each other's calls (see [`crate::against`]).

use crate::engine::{self};
use crate::matrix::Variant;
use crate::plan::RunPlan;
use crate::report::model::Results;
use crate::report::table;
use crate::runtime::{ProbeContext, Runtime};

/// Races the pairs `plan.against` picks ([`crate::against::pairs`]) among the rows of
/// `results` that held against copies of themselves, one contender each, and appends them to
/// `results.against`; the bar grows by the pairs. Stops between pairs on an interrupt.
pub(super) fn race_against(
    plan: &RunPlan,
    found: &[Runtime],
    results: &mut Results,
    m: &mut engine::Measurement<'_>,
    ctx: &ProbeContext,
    bar: &super::Progress,
) {
    use crate::against::Candidate;
    let mut rows: Vec<(Candidate, &Runtime, Variant)> = Vec::new();
    for rt in plan.measurable(found) {
        let vs = plan.variants_of(rt);
        let safe =
            results.rows(&rt.label).into_iter().filter(|r| r.contenders.is_processes() && r.safe() == Some(true));
        for row in safe {
            if let Some(v) = vs.iter().find(|v| v.id == row.variant && v.cell_source() == row.source) {
                rows.push((Candidate::of(&rt.label, v), rt, (*v).clone()));
            }
        }
    }
    let cands: Vec<Candidate> = rows.iter().map(|r| r.0.clone()).collect();
    let pairs = crate::against::pairs(&cands, plan.against);
    // the bank holds the probes every runtime's families left for the pairs
    // (Measurement::keep_for_pairs); what no pair uses is stopped
    let mut kept = m.take_kept();
    if pairs.is_empty() {
        kept.shutdown();
        return;
    }
    bar.inc_length(pairs.len() as u64);
    let detection = |label: &str, family: &str| {
        results.run_info.controls.iter().find(|c| c.runtime == label && c.family == family).map(|c| c.detection.clone())
    };
    let detections: Vec<Option<crate::verdict::Detection>> =
        rows.iter().map(|(_, rt, v)| detection(&rt.label, &v.family)).collect();
    // the runtimes' background processes were stopped after each was measured (cmd's Wine
    // server): started again for the pairs, stopped after
    let mut used: Vec<&Runtime> = Vec::new();
    for &(a, b) in &pairs {
        for rt in [rows[a].1, rows[b].1] {
            if !used.iter().any(|u| u.label == rt.label) {
                used.push(rt);
            }
        }
    }
    for rt in &used {
        if let Err(why) = rt.adapter().resume(rt, ctx) {
            bar.suspend(|| eprintln!("warn     {}: could not start again for the pairs: {why}", rt.label));
        }
    }
    // probes are kept from one pair to the next (engine::against::KeptPools): the pairs run
    // grouped by their runtimes and families (a stable sort: in their order within a group),
    // so that each side's probes are used while they are kept, and are reported in the order
    // of `pairs`
    let side_key = |i: usize| engine::against::side_key(rows[i].1, &rows[i].2);
    let mut order: Vec<usize> = (0..pairs.len()).collect();
    order.sort_by_key(|&i| [side_key(pairs[i].0), side_key(pairs[i].1)]);
    let mut raced: Vec<Option<crate::report::model::AgainstRace>> = (0..pairs.len()).map(|_| None).collect();
    for (at, &i) in order.iter().enumerate() {
        if crate::interrupt::requested() {
            break;
        }
        // the kept probes of sides no pair from here on uses are stopped (a Wine server does
        // not idle beside the other pairs' races)
        let ahead: Vec<engine::against::SideKey> =
            order[at..].iter().flat_map(|&j| [side_key(pairs[j].0), side_key(pairs[j].1)]).collect();
        kept.keep_only(&ahead);
        let (a, b) = pairs[i];
        let side = |i: usize| engine::against::Side { rt: rows[i].1, v: &rows[i].2, detection: detections[i].as_ref() };
        let label = |i: usize| format!("{} {}", rows[i].1.name, Variant::label(&rows[i].2.id, rows[i].2.cell_source()));
        bar.say(table::escape_controls(&format!("against · {} vs {}", label(a), label(b))).into_owned());
        raced[i] = engine::against::race_pair([side(a), side(b)], m, ctx, &mut kept);
        bar.inc(1);
    }
    kept.shutdown();
    results.against.extend(raced.into_iter().flatten());
    for rt in used {
        rt.adapter().cleanup(rt, ctx);
    }
}

//! Races two rows of a run against each other, one contender each (`run --against`; the pairs
//! come from [`crate::against::pairs`]).

use super::{race_modes, timeouts_for, Amplify, Measurement, Pools, RaceRole};
use crate::exec::contender::{Attempt, Contender};
use crate::matrix::Variant;
use crate::report::model::{AgainstRace, AgainstSide};
use crate::runtime::{ProbeContext, Runtime};
use crate::verdict::Detection;

/// The side each slot of a pair's race runs: the first, the second, the first again.
pub const PAIR_SLOTS: [usize; 3] = [0, 1, 0];

/// One side of a pair: the runtime, the row's variant (its source kind set) and the detection
/// control of its family in this run (`None` where none ran).
pub struct Side<'a> {
    /// The runtime.
    pub rt: &'a Runtime,
    /// The row.
    pub v: &'a Variant,
    /// Its family's detection control in this run.
    pub detection: Option<&'a Detection>,
}

/// What decides a pair's probes: the runtime label and family of each side (the slots are
/// [`PAIR_SLOTS`] of these). Pairs with one layout can share their probes ([`KeptPools`]), so a
/// run races them one after the other.
pub fn layout<'a>(sides: [(&'a Runtime, &'a Variant); 2]) -> [(&'a str, &'a str); 2] {
    sides.map(|(rt, v)| (rt.label.as_str(), v.family.as_str()))
}

/// The probes of the last pair raced, kept for the next pair whose slots run the same
/// runtimes' same families (a session probe runs any variant of its family): a run's pairs
/// then start their probes once per such layout instead of once per pair. Call
/// [`KeptPools::shutdown`] when the pairs are done.
#[derive(Default)]
pub struct KeptPools {
    kept: Option<Kept>,
}

/// The pools of [`KeptPools`].
struct Kept {
    /// The pair's [`layout`].
    key: [(String, String); 2],
    /// The pools.
    pools: Pools,
    /// How their start ended (`None`: every probe started).
    start_fault: Option<Attempt>,
}

impl KeptPools {
    /// Stops the kept probes, if any.
    pub fn shutdown(&mut self) {
        if let Some(mut k) = self.kept.take() {
            k.pools.shutdown();
        }
    }
}

/// Races `sides` on one absent name, natural and amplified as a race cell is, with the run's
/// trials (`--oneshot-trials` where a side starts a process per attempt), in pools of one
/// probe per slot: those `kept` from the previous pair when its slots ran the same runtimes'
/// families, else new ones (the old ones stopped), left in `kept` for the next pair. The slots
/// are the first side, the second, the first again
/// ([`PAIR_SLOTS`]): a release ordering delays slot *i* by *i* × offset, so the second side
/// meets the first both ahead of it and behind it. An `exclusive` verdict becomes
/// `inconclusive` where either family's detection control was weak (the weaker control is the
/// race's). Returns `None` when an interrupt left nothing to report (it came before the race,
/// or no trial was counted).
pub fn race_pair(
    sides: [Side<'_>; 2],
    m: &mut Measurement<'_>,
    ctx: &ProbeContext,
    kept: &mut KeptPools,
) -> Option<AgainstRace> {
    if crate::interrupt::requested() {
        return None;
    }
    let opts = m.opts;
    let amplify = m.amplify().clone();
    let key =
        layout([(sides[0].rt, sides[0].v), (sides[1].rt, sides[1].v)]).map(|(r, f)| (r.to_string(), f.to_string()));
    if kept.kept.as_ref().is_none_or(|k| k.key != key) {
        kept.shutdown();
        let slots = PAIR_SLOTS
            .iter()
            .map(|&i| &sides[i])
            .map(|s| {
                let ad = s.rt.adapter();
                (ad.mode(), ad.launch(s.rt, &s.v.family, ctx), timeouts_for(ad, opts))
            })
            .collect();
        let mut pools = Pools::new(slots, m.scratch.root().to_path_buf());
        for (slot, &i) in PAIR_SLOTS.iter().enumerate() {
            if sides[i].rt.adapter().amplify_by_attach() {
                pools.attach_after_start(slot);
            }
        }
        if let (Some(why), Amplify::On(_)) = (sides.iter().find_map(|s| s.rt.adapter().no_amplification()), &amplify) {
            pools.amplified_broke(why);
        }
        let start_fault = pools.start(matches!(amplify, Amplify::On(_)).then_some(&amplify));
        kept.kept = Some(Kept { key, pools, start_fault });
    }
    let Kept { pools, start_fault, .. } = kept.kept.as_mut().expect("pools kept just above");
    let start_fault = start_fault.clone();
    let trials = opts.trials_for(pools.natural.iter().any(Contender::process_per_attempt));
    let variants: Vec<&Variant> = PAIR_SLOTS.iter().map(|&i| sides[i].v).collect();
    let styles: Vec<_> = PAIR_SLOTS.iter().map(|&i| sides[i].rt.adapter().path_style()).collect();
    let run = race_modes(pools, &variants, &styles, trials, RaceRole::Row, m);
    if start_fault.is_some() {
        // a probe that did not start is started anew for the next pair, as it was before
        // pools were kept
        kept.shutdown();
    }
    let counted = run.race.natural.iter().chain(run.race.amplified.iter()).any(|m| m.stats.trials > 0);
    if run.cut_short() || (crate::interrupt::requested() && !counted) {
        return None;
    }
    // the weaker control speaks for the pair: a failed one before a working one
    let detection = sides.iter().filter_map(|s| s.detection).min_by_key(|d| d.worked).cloned();
    let mut race = run.race;
    (race.verdict, race.weak_race) = crate::verdict::apply_control(race.verdict, detection.as_ref());
    race.detection = detection;
    let evidence = run
        .evidence
        .or_else(|| start_fault.and_then(|f| f.evidence).map(|e| format!("a probe did not start: {e}")))
        .or_else(|| race.deciding().and_then(|m| m.evidence.clone()));
    Some(AgainstRace {
        contenders: sides
            .iter()
            .map(|s| AgainstSide {
                runtime: s.rt.label.clone(),
                runtime_name: s.rt.name.to_string(),
                variant: s.v.id.clone(),
                source: s.v.cell_source(),
            })
            .collect(),
        kind: crate::against::NameKind::of(sides[0].v),
        elapsed_ms: run.elapsed_ms,
        evidence,
        race,
    })
}

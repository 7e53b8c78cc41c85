//! Races two rows of a run against each other, one contender each (`run --against`; the pairs
//! come from [`crate::against::pairs`]).

use super::{race_modes, timeouts_for, Amplify, Measurement, Pools, RaceRole};
use crate::exec::amplify::Amplifier;
use crate::exec::contender::{shutdown_all, Contender};
use crate::matrix::Variant;
use crate::report::model::{AgainstRace, AgainstSide};
use crate::runtime::{ProbeContext, Runtime};
use crate::verdict::Detection;

pub use crate::against::PAIR_SLOTS;

/// One side of a pair: the runtime, the row's variant (its source kind set) and the detection
/// control of its family in this run (`None` where none ran).
#[derive(Clone, Copy)]
pub struct Side<'a> {
    /// The runtime.
    pub rt: &'a Runtime,
    /// The row.
    pub v: &'a Variant,
    /// Its family's detection control in this run.
    pub detection: Option<&'a Detection>,
}

/// A side's probes: its runtime label and family (a session probe runs any variant of its
/// family). A run races the pairs grouped by their two sides' keys, so that the probes kept
/// from one pair ([`KeptPools`]) serve the next.
pub type SideKey = (String, String);

/// The [`SideKey`] of `v` run by `rt`.
pub fn side_key(rt: &Runtime, v: &Variant) -> SideKey {
    side_key_of(rt, &v.family)
}

/// The [`SideKey`] of `rt`'s probes of `family`.
pub fn side_key_of(rt: &Runtime, family: &str) -> SideKey {
    (rt.label.clone(), family.to_string())
}

/// The started probes of the pairs raced so far, idle, for the next pairs: a slot whose side
/// runs the same runtime's same family, under the same tracer (or none), takes one instead of
/// starting a probe. A run's pairs then start each side's probes once (again only after a probe
/// died or a race raised its delay), not once per pair or per layout (pwsh: about 1.5 s of
/// CPU per probe here). Call [`KeptPools::keep_only`] as the
/// pairs go, so that probes no later pair needs (Wine's) do not idle beside the others, and
/// [`KeptPools::shutdown`] when the pairs are done.
#[derive(Default)]
pub struct KeptPools {
    idle: Vec<Idle>,
    /// The pairs (their two sides) whose amplified probes did not start or completed no trial
    /// under the tracer, and why: a later pair of the same sides is not amplified either, as
    /// when a pair's pools were kept whole.
    broken: Vec<([SideKey; 2], String)>,
}

impl std::fmt::Debug for KeptPools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeptPools").field("idle", &self.idle.len()).field("broken", &self.broken).finish()
    }
}

/// One idle probe of [`KeptPools`].
struct Idle {
    side: SideKey,
    /// The tracer it runs under; `None`: natural.
    tracer: Option<Amplifier>,
    contender: Contender,
}

impl KeptPools {
    /// Stops every kept probe.
    pub fn shutdown(&mut self) {
        self.keep_only(&[]);
    }

    /// Stops the kept probes of every side not in `sides` (those the pairs still to come use).
    pub fn keep_only(&mut self, sides: &[SideKey]) {
        let (keep, mut stop): (Vec<Idle>, Vec<Idle>) =
            std::mem::take(&mut self.idle).into_iter().partition(|i| sides.contains(&i.side));
        self.idle = keep;
        shutdown_all(stop.iter_mut().map(|i| &mut i.contender));
    }

    /// An idle probe of `side` under `tracer`, taken out of the bank.
    fn take(&mut self, side: &SideKey, tracer: Option<&Amplifier>) -> Option<Contender> {
        let at = self.idle.iter().position(|i| i.side == *side && i.tracer.as_ref() == tracer)?;
        Some(self.idle.swap_remove(at).contender)
    }

    /// Takes the probes of a runtime's family pools (`side`) that a pair can use: the natural
    /// ones and those under `tracer` (the run's, for the race paths); stops the rest (a
    /// raised delay's, the hand-offs' every-path tracer).
    pub(super) fn adopt(&mut self, side: SideKey, pools: &mut Pools, tracer: Option<&Amplifier>) {
        for (with, mut contenders) in pools.take_back() {
            if with.is_none() || with.as_ref() == tracer {
                for c in contenders {
                    self.put(side.clone(), with.clone(), c);
                }
            } else {
                shutdown_all(&mut contenders);
            }
        }
    }

    /// Puts `contender`, of `side` under `tracer`, back.
    fn put(&mut self, side: SideKey, tracer: Option<Amplifier>, contender: Contender) {
        self.idle.push(Idle { side, tracer, contender });
    }

    /// The number of kept probes (tests).
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.idle.len()
    }
}

/// `sides` with a placer first where the other side is a creator
/// ([`crate::against::is_placer`]), else as given. Every release ordering but lockstep releases
/// the first side first: a creator released first takes the name at once and the placer's
/// check sees it, while a creator released behind a placer lands inside the placer's window
/// between its check and its move (.NET's `Directory.Move` is `stat` then `rename(2)`, and a
/// `rename(2)` of a directory onto an empty one replaces it). Measured: Node's `mkdirSync`
/// first against Mono's `Directory.Move` of a directory raced `exclusive` in 0 of 100 amplified
/// trials with both cores loaded, while its natural races caught two winners in 1 or 2 of 10
/// on a quiet machine.
fn placer_first(sides: [Side<'_>; 2]) -> [Side<'_>; 2] {
    let [a, b] = sides;
    if !crate::against::is_placer(a.v) && crate::against::is_placer(b.v) {
        [b, a]
    } else {
        [a, b]
    }
}

/// Races `sides` (a placer first where the other side is a creator: `placer_first`) on one
/// absent name, natural and amplified as a race cell is, with the run's trials
/// (`--oneshot-trials` where a side starts a process per attempt), in pools of one
/// probe per slot: idle ones `kept` from earlier pairs where they run the slot's runtime's
/// family under the race's tracer, else new ones; afterwards the natural ones and those under
/// the run's tracer go back to `kept` (a pair whose amplified probes broke is remembered
/// there, and its sides' next pair is not amplified). The slots
/// are the first side, the second, the first again
/// ([`PAIR_SLOTS`]): a release ordering delays slot *i* by *i* × offset, so the second side
/// meets the first both ahead of it and behind it. An `exclusive` verdict becomes
/// `inconclusive` where either family's detection control was weak (the weaker control is the
/// race's). Where the race was `exclusive` and the first side won every trial of its deciding
/// run (one-sided, [`crate::verdict::answer::one_sided`]: the second side always acted after
/// the first had finished, however far behind the orderings released the first), it is raced
/// again with the second side first, and that race is the pair's: its sweeps' contest search
/// ([`crate::engine::Sweep::Contested`]) then releases the first side later until it wins
/// too. Returns `None` when an interrupt left nothing to report (it came before the race, or no
/// trial was counted).
pub fn race_pair(
    sides: [Side<'_>; 2],
    m: &mut Measurement<'_>,
    ctx: &ProbeContext,
    kept: &mut KeptPools,
) -> Option<AgainstRace> {
    let [a, b] = placer_first(sides);
    let first = race_in_order([a, b], m, ctx, kept)?;
    let first_won_all = first.race.verdict == crate::verdict::RaceVerdict::Exclusive
        && first.race.deciding().and_then(|d| crate::verdict::answer::one_sided(&d.stats)).is_some_and(|(s, _)| s == 0);
    if !first_won_all || crate::interrupt::requested() {
        return Some(first);
    }
    // an interrupt that leaves the second order nothing to report keeps the first
    let Some(mut again) = race_in_order([b, a], m, ctx, kept) else { return Some(first) };
    let (won, behind) = (first.contenders[0].label(), first.contenders[1].label());
    let why = format!("raced with {won} first, it won every trial: raced again with {behind} first");
    again.evidence = Some(match again.evidence.take() {
        Some(e) => format!("{why}; {e}"),
        None => why,
    });
    again.elapsed_ms += first.elapsed_ms;
    Some(again)
}

/// [`race_pair`] in the order given: slots first, second, first again.
fn race_in_order(
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
    let keys: Vec<SideKey> = PAIR_SLOTS.iter().map(|&i| side_key(sides[i].rt, sides[i].v)).collect();
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
    let pair: [SideKey; 2] = [keys[0].clone(), keys[1].clone()];
    let broken = kept.broken.iter().find(|(p, _)| *p == pair).map(|(_, why)| why.clone());
    let unamplified = sides.iter().find_map(|s| s.rt.adapter().no_amplification()).or(broken);
    if let (Some(why), Amplify::On(_)) = (&unamplified, &amplify) {
        pools.amplified_broke(why.clone());
    }
    // the probes of earlier pairs where they fit, started ones here for the rest
    let natural = keys.iter().map(|k| kept.take(k, None)).collect();
    let tracer = unamplified.is_none().then(|| pools.tracer_for(&amplify)).flatten();
    let amplified = tracer.clone().map(|t| {
        let taken = keys.iter().map(|k| kept.take(k, Some(&t))).collect();
        (t, taken)
    });
    pools.hand_over(natural, amplified);
    let start_fault = pools.start(matches!(amplify, Amplify::On(_)).then_some(&amplify));
    let trials = opts.trials_for(
        pools
            .natural
            .iter()
            .zip(PAIR_SLOTS)
            .map(|(c, i)| (c.process_per_attempt(), sides[i].rt.adapter().starts_cheaply())),
    );
    let variants: Vec<&Variant> = PAIR_SLOTS.iter().map(|&i| sides[i].v).collect();
    let styles: Vec<_> = PAIR_SLOTS.iter().map(|&i| sides[i].rt.adapter().path_style()).collect();
    let run = race_modes(&mut pools, &variants, &styles, trials, RaceRole::Pair, m);
    // every probe back to the bank, natural or under the pair's tracer (one that did not
    // start is started again by the next pair that takes it); probes under a raised delay
    // are stopped, since pairs ask for the run's delay
    if let Some(why) = pools.unusable().filter(|_| unamplified.is_none()) {
        kept.broken.push((pair, why.to_string()));
    }
    for (with, mut contenders) in pools.take_back() {
        if with.is_none() || with == tracer {
            for (k, c) in keys.iter().zip(contenders) {
                kept.put(k.clone(), with.clone(), c);
            }
        } else {
            shutdown_all(&mut contenders);
        }
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

#[cfg(test)]
mod tests {
    use super::{placer_first, KeptPools, Pools, Side, SideKey};
    use crate::exec::amplify::Amplifier;
    use crate::exec::contender::Contender;

    /// A kept probe goes to a slot of its side under its own tracer only, once; the probes of
    /// sides no pair ahead uses are stopped.
    #[test]
    fn kept_probes_fit_their_side_and_tracer() {
        let named = |n: &'static str| Contender::with_driver(Box::new(crate::engine::tests::Named::new(n)));
        let side = |r: &str| -> SideKey { (r.to_string(), "node".to_string()) };
        let (t1, t4) = (Amplifier::for_tests(1000), Amplifier::for_tests(4000));
        let mut kept = KeptPools::default();
        kept.put(side("node 20"), None, named("n1"));
        kept.put(side("node 20"), None, named("n2"));
        kept.put(side("node 20"), Some(t1.clone()), named("a1"));
        kept.put(side("bun 1.4"), None, named("b1"));
        let note = |c: Option<Contender>| c.and_then(|c| c.note());
        assert_eq!(note(kept.take(&side("node 20"), Some(&t4))), None, "another delay");
        assert_eq!(note(kept.take(&side("node 20"), Some(&t1))), Some("a1".into()));
        assert_eq!(note(kept.take(&side("node 20"), Some(&t1))), None, "taken once");
        assert!(note(kept.take(&side("node 20"), None)).is_some_and(|n| n.starts_with('n')));
        assert_eq!(kept.len(), 2);
        kept.keep_only(&[side("bun 1.4")]);
        assert_eq!((kept.len(), note(kept.take(&side("bun 1.4"), None))), (1, Some("b1".into())));
        assert_eq!(note(kept.take(&side("node 20"), None)), None, "stopped");
    }

    /// A runtime's family pools left for the pairs (Measurement::keep_for_pairs): its natural
    /// probes and those under the run's tracer go to the bank under its side; a raised delay's
    /// (parked) are stopped; without amplification only the natural ones stay.
    #[test]
    fn a_familys_pools_leave_their_natural_probes_and_those_under_the_runs_tracer() {
        let named = |n: &'static str| Contender::with_driver(Box::new(crate::engine::tests::Named::new(n)));
        let side = || -> SideKey { ("node 20".to_string(), "node".to_string()) };
        let (t1, t4) = (Amplifier::for_tests(1000), Amplifier::for_tests(4000));
        let pools = || {
            Pools::ready_traced(
                vec![named("n1"), named("n2")],
                (t1.clone(), vec![named("a1")]),
                Some((t4.clone(), vec![named("p4")])),
            )
        };
        let note = |c: Option<Contender>| c.and_then(|c| c.note());
        let mut kept = KeptPools::default();
        kept.adopt(side(), &mut pools(), Some(&t1));
        assert_eq!(kept.len(), 3, "n1, n2, a1");
        assert_eq!(note(kept.take(&side(), Some(&t4))), None, "the raised delay's probe was stopped");
        assert_eq!(note(kept.take(&side(), Some(&t1))), Some("a1".into()));
        assert!(note(kept.take(&side(), None)).is_some_and(|n| n.starts_with('n')));
        let mut off = KeptPools::default();
        off.adopt(side(), &mut pools(), None);
        assert_eq!(off.len(), 2, "natural only");
        assert_eq!(note(off.take(&side(), Some(&t1))), None);
    }

    /// A pair of a creator and a placer races the placer first, whichever order the pair came
    /// in; two creators or two placers keep their order.
    #[test]
    fn a_placer_goes_first_against_a_creator() {
        let a = crate::runtime::adapter("node").expect("node");
        let rt = crate::runtime::Runtime {
            name: a.name(),
            label: "node 20".into(),
            version: "20".into(),
            path: None,
            status: crate::runtime::Status::Found,
            families: a.families().to_vec(),
            artifact: None,
            selector: "node".into(),
            adapter: a,
        };
        let creator = crate::engine::tests::variant("node.mkdirSync");
        let mut placer = crate::engine::tests::variant("node.existsSync+renameSync");
        placer.source = crate::matrix::SourceKind::Dir;
        let ids = |s: [Side<'_>; 2]| s.map(|s| s.v.id.clone());
        let side = |v| Side { rt: &rt, v, detection: None };
        assert_eq!(ids(placer_first([side(&creator), side(&placer)])), [placer.id.clone(), creator.id.clone()]);
        assert_eq!(ids(placer_first([side(&placer), side(&creator)])), [placer.id.clone(), creator.id.clone()]);
        assert_eq!(ids(placer_first([side(&creator), side(&creator)])), [creator.id.clone(), creator.id.clone()]);
    }
}

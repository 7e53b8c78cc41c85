//! `conformance race`: contenders from different runtimes and variants for one name.

use super::{give_up, locate_versions, open_out};
use crate::cli::RaceArgs;
use crate::cross::{CrossContender, CrossRace};
use crate::engine;
use crate::error::{Error, Result};
use crate::exec::scratch::Scratch;
use crate::exit_code;
use crate::matrix::Variant;
use crate::options::Amplify;
use crate::outdir::OutDir;
use crate::plan::{ready_runtimes, Paths, RacePlan};
use crate::report::model::ModeRun;
use crate::runtime::{discover, ProbeContext, Runtime, Status};
use crate::status::{amplify_line, emit, status_line};

/// The file `race --out DIR` writes into DIR.
const CROSS_RACE_FILE: &str = "cross-race.json";

pub(super) fn cmd_race(a: &RaceArgs, paths: &Paths) -> Result<i32> {
    let plan = RacePlan::new(a, paths)?;
    let mut requested = plan.requested();
    locate_versions(&mut requested, paths, "--contender")?;
    if crate::interrupt::requested() {
        eprintln!("interrupted before racing: nothing measured, nothing written");
        return Ok(exit_code::INTERRUPTED);
    }
    let mut outdir = plan.out.as_deref().map(open_out).transpose()?;
    // after the lock, as `run` does: an earlier race's file is not replaced without --force
    if let Some(o) = outdir.as_mut().filter(|o| !a.force && o.path().join(CROSS_RACE_FILE).exists()) {
        let message = format!(
            "{} already holds an earlier race's {CROSS_RACE_FILE}; choose another folder, or give --force to replace it",
            o.path().display()
        );
        o.abandon();
        return Err(Error::Usage { flag: "--out".into(), message });
    }
    let mut found = discover(&requested).runtimes;
    let (mut scratch, ctx) = match plan.common.workspace() {
        Ok(w) => w,
        Err(e) => {
            outdir.iter_mut().for_each(OutDir::abandon);
            return Err(e);
        }
    };
    let selected: Vec<&Variant> = plan.slots.iter().map(|s| &s.variant).collect();
    for w in ready_runtimes(&mut found, &ctx, &plan.options, &selected) {
        eprintln!("{w}");
    }
    if crate::interrupt::requested() {
        give_up(&found, &ctx, &mut outdir);
        eprintln!("interrupted before racing: nothing measured, nothing written");
        return Ok(exit_code::INTERRUPTED);
    }
    let missing: Vec<String> = found.iter().filter(|r| r.status != Status::Found).map(status_line).collect();
    if !missing.is_empty() {
        give_up(&found, &ctx, &mut outdir);
        return Err(Error::no_runtime(missing.join("; "), &plan.common.cache));
    }
    if let Some(l) = amplify_line(&plan.options.amplify) {
        eprintln!("{l}");
    }
    let Some(rts) =
        plan.slots.iter().map(|s| plan.runtime_of(s, &requested, &found)).collect::<Option<Vec<&Runtime>>>()
    else {
        give_up(&found, &ctx, &mut outdir);
        return Err(Error::Internal("a contender's runtime was not discovered".into()));
    };
    let result = cross_race(&plan, &rts, &ctx, &mut scratch);
    for rt in &rts {
        rt.adapter().cleanup(rt, &ctx);
    }
    let text = serde_json::to_string_pretty(&result).expect("serialises") + "\n";
    if let Some(out) = &outdir {
        out.write(CROSS_RACE_FILE, &text)?;
        let shown = out.path().join(CROSS_RACE_FILE).display().to_string();
        eprintln!("wrote {}", crate::report::table::escape_controls(&shown));
    }
    if plan.json {
        emit(&text);
    } else {
        emit(&result.render());
    }
    drop(scratch);
    if crate::interrupt::requested() {
        eprintln!("interrupted: the race above counts only the trials completed before the stop");
        return Ok(exit_code::INTERRUPTED);
    }
    Ok(exit_code::OK)
}

/// Races `plan`'s slots (slot `i` on `rts[i]`) in one pool: first the detection control,
/// every slot making its own family's check-then-create, then the contenders' calls.
pub(super) fn cross_race(plan: &RacePlan, rts: &[&Runtime], ctx: &ProbeContext, scratch: &mut Scratch) -> CrossRace {
    let opts = &plan.options;
    let slots: Vec<_> = plan
        .slots
        .iter()
        .zip(rts)
        .map(|(s, rt)| {
            let ad = rt.adapter();
            (ad.mode(), ad.launch(rt, &s.variant.family, ctx), engine::timeouts_for(ad, opts))
        })
        .collect();
    let mut pools = match opts.contender_kind {
        crate::domain::ContenderKind::Processes => engine::Pools::new(slots, scratch.root().to_path_buf()),
        // one runtime and family (checked by the plan): one launch for every thread
        crate::domain::ContenderKind::Threads => {
            let (mode, launch, timeouts) = slots[0].clone();
            engine::Pools::threads(slots.len(), mode, launch, timeouts, scratch.root().to_path_buf())
        }
    };
    for (slot, rt) in rts.iter().enumerate() {
        if rt.adapter().amplify_by_attach() {
            pools.attach_after_start(slot);
        }
    }
    if let Some(why) = rts.iter().find_map(|r| r.adapter().no_amplification()) {
        if matches!(opts.amplify, Amplify::On(_)) {
            pools.amplified_broke(why);
        }
    }
    for c in &mut pools.natural {
        let _ = c.start();
    }
    let variants: Vec<&Variant> = plan.slots.iter().map(|s| &s.variant).collect();
    let styles: Vec<_> = rts.iter().map(|r| r.adapter().path_style()).collect();
    let trials = plan.trials;
    let mut m = engine::Measurement::new(opts, scratch, &plan.nonce);
    let detection = plan.controls.as_ref().map(|cs| {
        let cs: Vec<&Variant> = cs.iter().collect();
        let r = engine::race_modes(&mut pools, &cs, &styles, trials, engine::RaceRole::control(opts), &mut m);
        let counts = |m: &Option<ModeRun>| m.as_ref().map(|m| m.control_counts());
        let mut ids: Vec<&str> = Vec::new();
        for v in &cs {
            if !ids.contains(&v.id.as_str()) {
                ids.push(&v.id);
            }
        }
        crate::verdict::Detection::judge(&ids.join(" + "), counts(&r.race.natural), counts(&r.race.amplified))
    });
    let run = engine::race_modes(&mut pools, &variants, &styles, trials, engine::RaceRole::Row, &mut m);
    pools.shutdown();
    drop(pools);
    let (verdict, weak_race) = crate::verdict::apply_control(run.race.verdict, detection.as_ref());
    let mut wins_by_runtime = std::collections::BTreeMap::new();
    let deciding = run.race.deciding();
    for (slot, rt) in rts.iter().enumerate() {
        *wins_by_runtime.entry(rt.label.clone()).or_insert(0) +=
            deciding.and_then(|m| m.stats.wins_by_contender.get(slot).copied()).unwrap_or(0);
    }
    CrossRace {
        contender_kind: opts.contender_kind,
        contenders: plan
            .slots
            .iter()
            .zip(rts)
            .enumerate()
            .map(|(slot, (s, rt))| CrossContender {
                slot,
                runtime: rt.label.clone(),
                runtime_name: rt.name.to_string(),
                variant: s.variant.id.clone(),
                source: s.variant.cell_source(),
                call: s.variant.call.clone(),
            })
            .collect(),
        verdict,
        decided_by: run.race.decided_by,
        natural: run.race.natural,
        amplified: run.race.amplified,
        amplified_unavailable: run.race.amplified_unavailable,
        detection,
        weak_race,
        wins_by_runtime,
        first_error: run.race.error,
        evidence: run.evidence,
        amplification: plan.common.amplification_info(&opts.amplify),
    }
}

//! The claim scenario (`docs/HANDOFF.md`): per recipe, [`CLAIM_TRIALS`] trials in which
//! `workers` workers, released together, take the `items` files of one `incoming/` folder,
//! each appending what it processed to its own output file; the folder and the output files
//! are read afterwards and [`crate::verdict::claim`] counts duplicates and losses.

use super::attempt::ms;
use super::trial::{run_trial, Slot, TrialEnd, TrialPlan, TrialSetup};
use super::*;
use crate::exec::contender::RecipeSpec;
use crate::handoff::Recipe;
use crate::verdict::claim::{judge_claim, ClaimTrial};

/// Trials per claim recipe.
pub const CLAIM_TRIALS: usize = 5;

/// How the claim scenario runs (`--workers`, `--items`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClaimOptions {
    /// Workers (separate processes) taking items.
    pub workers: usize,
    /// Items in `incoming/` per trial.
    pub items: usize,
}

/// Measures every claim recipe on `rt` with probes of its first family, one finding per
/// recipe; `on_finding` is called after each. A recipe the probe does not have is one finding
/// with the reason (`unsupported`); an interrupt drops the recipe in flight.
pub(super) fn measure_claim(
    rt: &Runtime,
    o: ClaimOptions,
    m: &mut Measurement<'_>,
    ctx: &ProbeContext,
    on_finding: &mut dyn FnMut(&Finding),
) -> Vec<Finding> {
    let adapter = rt.adapter();
    let Some(family) = rt.families.first() else { return Vec::new() };
    let launch = adapter.launch(rt, family, ctx);
    let slots = vec![(adapter.mode(), launch, timeouts_for(adapter, m.opts)); o.workers];
    let mut pools = Pools::new(slots, m.scratch.root().to_path_buf());
    let mut out = Vec::new();
    for recipe in Recipe::of(Scenario::Claim).filter(|r| m.opts.recipes.iter().any(|id| id == r.id)) {
        if crate::interrupt::requested() {
            break;
        }
        let Some(f) = claim_recipe(&mut pools.natural, recipe, adapter.path_style(), o, m) else { break };
        on_finding(&f);
        out.push(f);
    }
    pools.shutdown();
    out
}

/// The lines of a worker's output file.
fn lines(p: &Path) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(p).ok()?;
    Some(text.lines().map(str::to_string).collect())
}

/// One recipe's finding; `None` when the run was interrupted.
fn claim_recipe(
    pool: &mut [Contender],
    recipe: &Recipe,
    style: PathStyle,
    o: ClaimOptions,
    m: &mut Measurement<'_>,
) -> Option<Finding> {
    let started = Instant::now();
    let v = recipe.as_variant();
    let mut trials = Vec::with_capacity(CLAIM_TRIALS);
    let mut result = CountersResult::default();
    let mut evidence = None;
    let (dir, _) = match m.scratch.cell_dir() {
        Ok(d) => d,
        Err(e) => {
            evidence = Some(format!("harness-error: could not create a cell folder: {e}"));
            return Some(finding(&v, result, evidence, started));
        }
    };
    for n in 0..CLAIM_TRIALS {
        if crate::interrupt::requested() {
            clear(&dir);
            return None;
        }
        let id = m.next_id();
        let tdir = dir.join(format!("b{n}"));
        let incoming = tdir.join("incoming");
        let items: Vec<String> = (0..o.items).map(|i| format!("{}-b{n}-item{i}", m.nonce)).collect();
        let made = std::fs::create_dir_all(&incoming).and_then(|()| {
            for (i, item) in items.iter().enumerate() {
                std::fs::write(incoming.join(format!("item-{i:05}")), item)?;
            }
            (0..o.workers).try_for_each(|w| std::fs::create_dir_all(tdir.join("processing").join(format!("w{w}"))))
        });
        if let Err(e) = made {
            evidence = Some(format!("harness-error: could not set up incoming/: {e}"));
            clear(&tdir);
            break;
        }
        let output = |w: usize| tdir.join(format!("out-{w}.txt"));
        let slots: Vec<Slot<'_>> = (0..o.workers)
            .map(|w| {
                let params = serde_json::json!({
                    "incoming": spell(&incoming, style),
                    "processing": spell(&tdir.join("processing").join(format!("w{w}")), style),
                    "output": spell(&output(w), style),
                });
                Slot {
                    variant: &v,
                    style,
                    index: w,
                    token: format!("{}-b{n}-w{w}", m.nonce),
                    recipe: Some(RecipeSpec {
                        scenario: Scenario::Claim.as_str().into(),
                        recipe: recipe.id.into(),
                        role: "worker".into(),
                        params,
                        until_stopped: false,
                    }),
                }
            })
            .collect();
        let setup = TrialSetup {
            dir: &tdir,
            probe_dir: &tdir,
            first: (TargetState::Absent, ""),
            slots: &slots,
            plan: TrialPlan::release(o.workers, 0),
            hold_ms: 0,
            snapshot_before: false,
        };
        let end = run_trial(pool, &setup, id);
        let outputs: Vec<Option<Vec<String>>> = (0..o.workers).map(|w| lines(&output(w))).collect();
        let remaining: Vec<String> = std::fs::read_dir(&incoming)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .filter(|e| !e.file_name().to_string_lossy().ends_with(".claim"))
                    .filter_map(|e| std::fs::read_to_string(e.path()).ok())
                    .collect()
            })
            .unwrap_or_default();
        clear(&tdir);
        let attempts = match end {
            TrialEnd::Interrupted => {
                clear(&dir);
                return None;
            }
            TrialEnd::HarnessError(why) => {
                evidence = Some(format!("harness-error: {why}"));
                break;
            }
            TrialEnd::NotReleased { fault, .. } => {
                evidence = Some(match fault.report {
                    Report::Unsupported => format!("unsupported: {}", fault.evidence.unwrap_or_default()),
                    r => format!("{}: {}", format!("{r:?}").to_lowercase(), fault.evidence.unwrap_or_default()),
                });
                break;
            }
            TrialEnd::Released { attempts, .. } => attempts,
        };
        for a in &attempts {
            if let Some(r) = &a.recipe {
                let room = 8usize.saturating_sub(result.errors_sample.len());
                result.errors_sample.extend(r.errors_sample.iter().take(room).cloned());
                for e in &r.errors_sample {
                    *result.errors.entry(normalize(e).to_string()).or_insert(0) += 1;
                }
            }
        }
        trials.push(ClaimTrial {
            items,
            outputs,
            remaining,
            workers: attempts
                .iter()
                .map(|a| a.recipe.as_ref().filter(|_| a.report == Report::Success).map(|r| r.counters.clone()))
                .collect(),
        });
    }
    clear(&dir);
    if !trials.is_empty() {
        result.counters = judge_claim(&trials);
    }
    Some(finding(&v, result, evidence, started))
}

fn finding(v: &Variant, result: CountersResult, evidence: Option<String>, started: Instant) -> Finding {
    Finding {
        variant: v.id.clone(),
        scenario: Scenario::Claim,
        target: TargetState::Absent,
        control: false,
        evidence,
        elapsed_ms: ms(started.elapsed()),
        result: CellResult::Counters(result),
    }
}

//! The publish scenario (`docs/HANDOFF.md`): per recipe, `items` trials in which one writer
//! publishes a framed file by the recipe while `readers` readers read the final name until the
//! writer is done (then once more); the item's folder is read afterwards, and
//! [`crate::verdict::publish`] counts the failures.

use super::attempt::{error_info, ms};
use super::trial::{run_trial, Slot, TrialEnd, TrialPlan, TrialSetup};
use super::*;
use crate::exec::contender::RecipeSpec;
use crate::handoff::{framed, Recipe, READER};
use crate::verdict::publish::{judge_publish, PublishItem};

/// How the publish scenario runs (`--items`, `--readers`, `--size`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PublishOptions {
    /// Files published per recipe (one trial each).
    pub items: usize,
    /// Readers polling each file.
    pub readers: usize,
    /// Payload bytes of each file (the file holds a header and a trailer besides).
    pub size: usize,
}

/// Measures every publish recipe on `rt` with probes of its first family, one finding per
/// recipe; `on_finding` is called after each. A recipe the probe does not have is one finding
/// with the reason (`unsupported`); an interrupt drops the recipe in flight.
pub(super) fn measure_publish(
    rt: &Runtime,
    p: PublishOptions,
    m: &mut Measurement<'_>,
    ctx: &ProbeContext,
    on_finding: &mut dyn FnMut(&Finding),
) -> Vec<Finding> {
    let adapter = rt.adapter();
    let Some(family) = rt.families.first() else { return Vec::new() };
    let launch = adapter.launch(rt, family, ctx);
    let timeouts = timeouts_for(adapter, m.opts);
    let slots = vec![(adapter.mode(), launch, timeouts); 1 + p.readers];
    let mut pools = Pools::new(slots, m.scratch.root().to_path_buf());
    let mut out = Vec::new();
    for recipe in Recipe::of(Scenario::Publish).filter(|r| m.opts.recipes.iter().any(|id| id == r.id)) {
        if crate::interrupt::requested() {
            break;
        }
        let Some(f) = publish_recipe(&mut pools.natural, recipe, adapter.path_style(), p, m) else { break };
        on_finding(&f);
        out.push(f);
    }
    pools.shutdown();
    out
}

/// One recipe's finding; `None` when the run was interrupted.
fn publish_recipe(
    pool: &mut [Contender],
    recipe: &Recipe,
    style: PathStyle,
    p: PublishOptions,
    m: &mut Measurement<'_>,
) -> Option<Finding> {
    let started = Instant::now();
    let v = recipe.as_variant();
    let mut items = Vec::with_capacity(p.items);
    let mut result = CountersResult::default();
    let mut evidence = None;
    let (dir, _) = match m.scratch.cell_dir() {
        Ok(d) => d,
        Err(e) => {
            evidence = Some(format!("harness-error: could not create a cell folder: {e}"));
            return Some(finding(&v, result, evidence, started));
        }
    };
    for n in 0..p.items {
        if crate::interrupt::requested() {
            clear(&dir);
            return None;
        }
        let id = m.next_id();
        let tdir = dir.join(format!("i{n}"));
        if let Err(e) = std::fs::create_dir(&tdir) {
            evidence = Some(format!("harness-error: could not create an item folder: {e}"));
            break;
        }
        let token = format!("{}-i{n}", m.nonce);
        let content = framed(&token, p.size);
        let expect = serde_json::json!([String::from_utf8_lossy(&content)]);
        let spec = |recipe: &str, role: &str, params: serde_json::Value, until_stopped| RecipeSpec {
            scenario: Scenario::Publish.as_str().into(),
            recipe: recipe.into(),
            role: role.into(),
            params,
            until_stopped,
        };
        let mut slots = vec![Slot {
            variant: &v,
            style,
            index: 0,
            token: token.clone(),
            recipe: Some(spec(recipe.id, "writer", serde_json::json!({ "size": p.size }), false)),
        }];
        for r in 1..=p.readers {
            slots.push(Slot {
                variant: &v,
                style,
                index: r,
                token: format!("{token}-r{r}"),
                recipe: Some(spec(READER, "reader", serde_json::json!({ "expect": expect }), true)),
            });
        }
        // the readers first, so that they are reading when the writer starts
        let plan = TrialPlan::new(
            (1..=p.readers).chain(std::iter::once(0)).map(|slot| trial::Phase::Release { slot, at_us: 0 }).collect(),
        );
        let setup = TrialSetup {
            dir: &tdir,
            probe_dir: &tdir,
            first: (TargetState::Absent, ""),
            slots: &slots,
            plan,
            hold_ms: 0,
            snapshot_before: false,
        };
        let end = run_trial(pool, &setup, id);
        // what the folder holds afterwards, read before it goes
        let whole = std::fs::read(tdir.join("target")).is_ok_and(|b| b == content);
        let leftovers = std::fs::read_dir(&tdir)
            .map(|d| d.filter_map(|e| e.ok()).filter(|e| e.file_name() != "target").count())
            .unwrap_or(0);
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
                // a probe without the recipe, or one that did not start: nothing was published
                evidence = Some(match fault.report {
                    Report::Unsupported => format!("unsupported: {}", fault.evidence.unwrap_or_default()),
                    r => format!("{}: {}", format!("{r:?}").to_lowercase(), fault.evidence.unwrap_or_default()),
                });
                break;
            }
            TrialEnd::Released { attempts, .. } => attempts,
        };
        let writer = &attempts[0];
        if let Some(r) = &writer.recipe {
            result.errors_sample.extend(r.errors_sample.iter().take(8 - result.errors_sample.len().min(8)).cloned());
        }
        items.push(PublishItem {
            writer: writer.report,
            writer_error: error_info(writer).map(|e| e.code),
            readers: attempts[1..]
                .iter()
                .map(|a| a.recipe.as_ref().filter(|_| a.report == Report::Success).map(|r| r.counters.clone()))
                .collect(),
            target_whole: whole,
            leftovers,
        });
    }
    clear(&dir);
    if !items.is_empty() {
        (result.counters, result.errors) = judge_publish(&items);
    }
    Some(finding(&v, result, evidence, started))
}

fn finding(v: &Variant, result: CountersResult, evidence: Option<String>, started: Instant) -> Finding {
    Finding {
        variant: v.id.clone(),
        scenario: Scenario::Publish,
        target: TargetState::Absent,
        control: false,
        evidence,
        elapsed_ms: ms(started.elapsed()),
        result: CellResult::Counters(result),
    }
}

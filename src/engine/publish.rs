//! The publish scenario (`docs/HANDOFF.md`): per recipe, `items` trials in which one writer
//! publishes a framed file by the recipe while `readers` readers read the final name until the
//! writer is done (then once more); the item's folder is read afterwards, and
//! [`crate::verdict::publish`] counts the failures.

use super::attempt::error_info;
use super::handoff;
use super::trial::{Slot, TrialPlan};
use crate::options::HandoffSizes;

use super::trial::Phase;
use super::Measurement;
use super::Pools;
use crate::domain::Scenario;
use crate::exec::contender::Contender;
use crate::exec::scratch::spell;
use crate::exec::scratch::PathStyle;
use crate::handoff::{framed, Recipe, TempPlace, READER};
use crate::report::model::CountersResult;
use crate::report::model::Finding;
use crate::verdict::publish::{judge_publish, PublishItem};
use crate::verdict::Report;
use std::path::Path;
use std::time::Instant;

/// The publish scenario for the engine: a writer and `--readers` readers per item.
pub(super) const RUNNER: handoff::Runner = handoff::Runner {
    scenario: Scenario::Publish,
    slots: |o| 1 + o.sizes.readers,
    observers: |o| 1..1 + o.sizes.readers,
    measure: measure_publish,
};

/// Measures a batch of publish recipes ([`handoff::measure_recipes`]) with the run's
/// [`HandoffSizes`].
fn measure_publish(
    batch: &handoff::Batch<'_>,
    pools: &mut Pools,
    m: &mut Measurement<'_>,
    on_finding: &mut dyn FnMut(&Finding),
) -> Vec<Finding> {
    let p = m.opts.sizes;
    handoff::measure_recipes(
        batch,
        pools,
        m,
        on_finding,
        handoff::AmplifiedRun::WhenAsked,
        &mut |pool, recipe, style, m| publish_recipe(pool, recipe, style, p, m),
        None,
    )
}

/// A new folder of the harness's own on a file system other than `root`'s (`/dev/shm`, then
/// the system temp folder), removed when dropped. Errors: `unsupported: …` when there is none.
fn other_volume(root: &Path) -> Result<tempfile::TempDir, String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let dev = |p: &Path| std::fs::metadata(p).map(|m| m.dev()).ok();
        let here = dev(root);
        for cand in [Path::new("/dev/shm").to_path_buf(), std::env::temp_dir()] {
            if dev(&cand).is_some_and(|d| Some(d) != here) {
                if let Ok(t) = tempfile::Builder::new().prefix("conformance-xv-").tempdir_in(&cand) {
                    return Ok(t);
                }
            }
        }
    }
    Err(format!(
        "unsupported: no second file system to put the temp file on (tried /dev/shm and {}; the scratch folder is on the same one)",
        std::env::temp_dir().display()
    ))
}

/// One recipe's finding; `None` when the run was interrupted.
fn publish_recipe(
    pool: &mut [Contender],
    recipe: &Recipe,
    style: PathStyle,
    p: HandoffSizes,
    m: &mut Measurement<'_>,
) -> Option<Finding> {
    let started = Instant::now();
    let v = recipe.as_variant();
    // cross-volume: the temp files go to a second scratch folder of the harness's own on
    // another file system, removed when the recipe is done
    let other = match recipe.temp {
        TempPlace::OtherVolume => match other_volume(m.scratch.root()) {
            Ok(d) => Some(d),
            Err(why) => {
                let stopped = handoff::Stopped { why, harness: false };
                return Some(handoff::finding(recipe, CountersResult::default(), Some(stopped), started));
            }
        },
        TempPlace::Beside => None,
    };
    // a library recipe's writer loads the library installed before the run
    let library = match handoff::library_dir(recipe, m, started) {
        Ok(dir) => dir,
        Err(unsupported) => return Some(*unsupported),
    };
    let (done, evidence) = handoff::run_items(
        m,
        p.items,
        &mut |n, tdir, m| {
            let id = m.next_id();
            let token = format!("{}-i{n}", m.nonce);
            let content = framed(&token, p.size);
            let expect = serde_json::json!([String::from_utf8_lossy(&content)]);
            let spec = |recipe: &str, role: &str, params, until_stopped| {
                handoff::recipe_spec(Scenario::Publish, recipe, role, params, until_stopped)
            };
            let mut writer_params = serde_json::json!({ "size": p.size });
            if let Some(o) = &other {
                writer_params["temp"] = spell(&o.path().join(format!("{token}.tmp")), style).into();
            }
            if let Some(dir) = &library {
                writer_params["library"] = dir.clone().into();
            }
            let mut slots = vec![Slot {
                variant: &v,
                style,
                index: 0,
                token: token.clone(),
                recipe: spec(&recipe.id, "writer", writer_params, false),
            }];
            for r in 1..=p.readers {
                slots.push(Slot {
                    variant: &v,
                    style,
                    index: r,
                    token: format!("{token}-r{r}"),
                    recipe: spec(READER, "reader", serde_json::json!({ "expect": expect }), true),
                });
            }
            // the readers first, so that they are reading when the writer starts
            let plan = TrialPlan::new(
                (1..=p.readers).chain(std::iter::once(0)).map(|slot| Phase::Release { slot, at_us: 0 }).collect(),
            );
            let end = handoff::run_item(pool, tdir, &slots, plan, id);
            // what the folder holds afterwards
            let whole = std::fs::read(tdir.join("target")).is_ok_and(|b| b == content);
            let leftovers = std::fs::read_dir(tdir)
                .map(|d| d.filter_map(|e| e.ok()).filter(|e| e.file_name() != "target").count())
                .unwrap_or(0);
            Ok((end, (whole, leftovers)))
        },
        &|_| false,
    )?;
    let mut result = CountersResult::default();
    let items: Vec<PublishItem> = done
        .iter()
        .map(|(attempts, (whole, leftovers))| {
            let writer = &attempts[0];
            if let Some(r) = &writer.recipe {
                handoff::keep_sample(&mut result, &r.errors_sample);
            }
            // a failed write's own error, so that the cell says why (a library that would not load)
            let writer_error = error_info(writer);
            if let Some(e) = &writer_error {
                handoff::keep_sample(&mut result, std::slice::from_ref(&e.raw));
            }
            PublishItem {
                writer: writer.report,
                writer_error: writer_error.map(|e| e.code),
                readers: attempts[1..]
                    .iter()
                    .map(|a| a.recipe.as_ref().filter(|_| a.report == Report::Success).map(|r| r.counters.clone()))
                    .collect(),
                target_whole: *whole,
                leftovers: *leftovers,
            }
        })
        .collect();
    if !items.is_empty() {
        (result.counters, result.errors) = judge_publish(&items);
    }
    Some(handoff::finding(recipe, result, evidence, started))
}

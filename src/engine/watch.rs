//! The folder-watch scenario (`docs/HANDOFF.md`, "watch"): per recipe, [`WATCH_TRIALS`] trials
//! ([`WATCH_TRIALS_THOROUGH`] with `--thorough`), each of one consumer. The consumer watches an
//! empty folder by the recipe (change notifications, a periodic listing, or both) and records
//! every file it sees as a line of its record file; once it says it is watching (its marker),
//! the harness stops it (`SIGSTOP`: a consumer busy elsewhere), lays a burst of empty files
//! out in the folder (hard links to one file: [`lay_burst`]) — a quarter more than the kernel queues notifications for
//! (`/proc/sys/fs/inotify/max_queued_events`, `inotify(7)`) — resumes it, and watches its
//! record grow until it names every file or [`DEADLINE_MS`] have passed. Then the consumer is
//! stopped, and [`crate::verdict::watch`] counts from the record the files it never saw.

use super::handoff;
use super::trial::{Slot, TrialPlan};

use super::Measurement;
use crate::domain::Scenario;
use crate::exec::contender::Contender;
use crate::exec::driver::Control;
use crate::exec::scratch::spell;
use crate::exec::scratch::PathStyle;
use crate::handoff::Recipe;
use crate::report::model::CountersResult;
use crate::report::model::Finding;
use crate::verdict::watch::{judge_watch, read_record, WatchTrial};
use std::cell::RefCell;
use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

/// Trials per watch recipe in the default run: one burst shows whether the recipe loses files
/// once the queue overflows (each trial creates some 20,000 files).
pub const WATCH_TRIALS: usize = 1;
/// Trials per watch recipe with `--thorough`.
pub const WATCH_TRIALS_THOROUGH: usize = 5;
/// How often a listing recipe lists the folder (`params.rescan_ms`), ms.
pub const RESCAN_MS: u64 = 100;
/// How long after the resume the harness waits for the record to name every file, ms: twenty
/// times the listing interval (a listing recipe saw all 20,480 files within 530 ms here), so
/// a listing recipe is not cut short; what the record misses is read after the consumer
/// stopped, whatever the deadline.
pub const DEADLINE_MS: u64 = 2_000;
/// How long the harness waits for the consumer's marker before the burst, ms.
pub const READY_MS: u64 = 10_000;
/// How often the harness reads the record while it waits, ms.
const POLL_MS: u64 = 10;
/// The watched folder's name in a trial's folder.
pub const INCOMING: &str = "incoming";
/// The consumer's record file in a trial's folder (one line per file seen).
pub const RECORD: &str = "seen";
/// The consumer's marker in a trial's folder, created once it watches.
pub const WATCHING: &str = "watching";
/// The kernel's notification queue, where it cannot be read (the Linux default, `inotify(7)`).
const DEFAULT_QUEUE: u64 = 16_384;
/// The largest burst, whatever the queue says.
const MAX_BURST: u64 = 200_000;
/// Where Linux says how many notifications it queues per watcher (`inotify(7)`).
const QUEUE_SETTING: &str = "/proc/sys/fs/inotify/max_queued_events";

/// The watch scenario for the engine: one consumer per trial, never amplified: the burst, not
/// a race, is what shows the failure, and under the tracer Deno's watcher took longer than
/// [`READY_MS`] to start from the second trial on.
pub(super) const RUNNER: handoff::Runner = handoff::Runner {
    scenario: Scenario::Watch,
    slots: |_| 1,
    observers: handoff::no_observers,
    measure: |b, p, m, f| handoff::measure_recipes(b, p, m, f, NEVER_AMPLIFIED, &mut watch_recipe, None),
};

/// Why a watch cell has no amplified run.
const NEVER_AMPLIFIED: handoff::AmplifiedRun = handoff::AmplifiedRun::Never(
    "not amplified: the harness lays the burst out, there is no race to widen (and Deno's watcher took over 10 s to start under the tracer)",
);

/// The files of a burst: the kernel's queue as `setting` (the text of
/// `/proc/sys/fs/inotify/max_queued_events`, if it could be read; 16,384 otherwise, the Linux
/// default) gives it, and a quarter more. Errors: the burst would be larger than 200,000 files
/// (a machine whose queue is that long cannot be overflowed here), with why.
pub fn burst_size(setting: Option<&str>) -> Result<u64, String> {
    let queue = setting.and_then(|s| s.trim().parse::<u64>().ok()).filter(|q| *q > 0).unwrap_or(DEFAULT_QUEUE);
    let burst = queue.saturating_add(queue / 4);
    if burst > MAX_BURST {
        return Err(format!(
            "this kernel queues {queue} notifications per watcher ({QUEUE_SETTING}): a burst past that would take more than {MAX_BURST} files"
        ));
    }
    Ok(burst)
}

/// What the harness saw during a trial.
#[derive(Debug, Default)]
struct Burst {
    /// The consumer's marker came before the deadline, and the consumer was stopped for the
    /// burst.
    watching: bool,
    /// Time from the resume to the record naming every file.
    ms_to_all: Option<u64>,
    /// The harness could not create a file of the burst: why.
    failed: Option<String>,
}

/// The empty file, in a trial's folder (outside the watched one), whose hard links make a
/// burst ([`lay_burst`]).
pub const BURST_SOURCE: &str = "burst-source";

/// Lays a burst out: `names` in `incoming` as hard links (`link(2)`) to one empty file
/// [`BURST_SOURCE`] in `dir`, or, where the file system refuses the first link, as new empty
/// files (`O_CREAT|O_EXCL`). Either way each name is one `IN_CREATE` notification in the
/// watched folder (`inotify(7)`: "open(2) O_CREAT, mkdir(2), link(2), symlink(2)"); a link
/// allocates no inode, and 20,480 new inodes took 3.9–9.8 s on this machine's ext4 (virtual
/// disk, `discard`) against 0.3 s for as many links. Errors: a name that could not be laid
/// out, with why.
fn lay_burst(dir: &Path, incoming: &Path, names: &[String]) -> Result<(), String> {
    let create = |path: &Path| std::fs::OpenOptions::new().write(true).create_new(true).open(path).map(drop);
    let source = dir.join(BURST_SOURCE);
    let mut link = create(&source).is_ok() || source.is_file();
    for (i, name) in names.iter().enumerate() {
        let path = incoming.join(name);
        if link {
            match std::fs::hard_link(&source, &path) {
                Ok(()) => continue,
                // no link on this file system (FAT, some FUSE ones): new files from the first on
                Err(e) if i == 0 && e.kind() != std::io::ErrorKind::AlreadyExists => link = false,
                Err(e) => return Err(format!("could not link {name} of the burst: {e}")),
            }
        }
        create(&path).map_err(|e| format!("could not create {name} of the burst: {e}"))?;
    }
    Ok(())
}

/// The harness's side of a trial in `dir` with the consumer `pool[0]`: waits for its marker,
/// stops it, creates `names` in the watched folder, resumes it, and reads its record every
/// [`POLL_MS`] until it names them all or [`DEADLINE_MS`] have passed.
fn burst(pool: &mut [Contender], dir: &Path, names: &[String], set: &HashSet<String>) -> Burst {
    let mut seen = Burst::default();
    if !handoff::wait_for(READY_MS, || dir.join(WATCHING).exists()) {
        return seen;
    }
    // a consumer that cannot be stopped gets the burst while it runs: a trial of another kind,
    // which does not count as watched
    let paused = pool[0].control(Control::Pause).is_ok();
    seen.watching = paused;
    seen.failed = lay_burst(dir, &dir.join(INCOMING), names).err();
    if paused {
        let _ = pool[0].control(Control::Resume);
    }
    let resumed = Instant::now();
    let record = dir.join(RECORD);
    while resumed.elapsed() < Duration::from_millis(DEADLINE_MS) {
        let text = std::fs::read_to_string(&record).unwrap_or_default();
        if read_record(&text, set).0 == names.len() as u64 {
            seen.ms_to_all = Some(resumed.elapsed().as_millis() as u64);
            break;
        }
        std::thread::sleep(Duration::from_millis(POLL_MS));
    }
    seen
}

/// One recipe's finding; `None` when the run was interrupted.
fn watch_recipe(pool: &mut [Contender], recipe: &Recipe, style: PathStyle, m: &mut Measurement<'_>) -> Option<Finding> {
    let started = Instant::now();
    let v = recipe.as_variant();
    let trials = if m.opts.adaptive { WATCH_TRIALS } else { WATCH_TRIALS_THOROUGH };
    let n = match burst_size(std::fs::read_to_string(QUEUE_SETTING).ok().as_deref()) {
        Ok(n) => n,
        Err(why) => {
            let stopped = handoff::Stopped { why: format!("unsupported: {why}"), harness: false };
            return Some(handoff::finding(recipe, CountersResult::default(), Some(stopped), started));
        }
    };
    let names: Vec<String> = (0..n).map(|i| format!("item-{i:06}")).collect();
    let set: HashSet<String> = names.iter().cloned().collect();
    let (done, evidence) = handoff::run_items(
        m,
        trials,
        &mut |t, tdir, m| {
            let id = m.next_id();
            let incoming = tdir.join(INCOMING);
            std::fs::create_dir(&incoming).map_err(|e| format!("could not create the watched folder: {e}"))?;
            let slots = [Slot {
                variant: &v,
                style,
                index: 0,
                token: format!("{}-w{t}-consumer", m.nonce),
                recipe: handoff::recipe_spec(
                    Scenario::Watch,
                    &recipe.id,
                    "consumer",
                    serde_json::json!({
                        "dir": spell(&incoming, style),
                        "record": spell(&tdir.join(RECORD), style),
                        "watching": spell(&tdir.join(WATCHING), style),
                        "rescan_ms": RESCAN_MS,
                    }),
                    true,
                ),
            }];
            let side = RefCell::new(Burst::default());
            let during = |pool: &mut [Contender]| *side.borrow_mut() = burst(pool, tdir, &names, &set);
            let end = handoff::run_item_during(pool, tdir, &slots, TrialPlan::release(1, 0), id, Some(&during));
            let side = side.into_inner();
            if let Some(why) = side.failed {
                return Err(why);
            }
            let text = std::fs::read_to_string(tdir.join(RECORD)).unwrap_or_default();
            let (seen, duplicates, strays) = read_record(&text, &set);
            let trial = WatchTrial {
                watching: side.watching,
                items: n,
                seen,
                duplicates,
                strays,
                ms_to_all: side.ms_to_all,
                faults: Vec::new(),
            };
            Ok((end, trial))
        },
        &|_| false,
    )?;
    let mut result = CountersResult::default();
    let mut judged = Vec::with_capacity(done.len());
    for (attempts, mut seen) in done {
        seen.faults = handoff::errors_and_faults(&mut result, &attempts);
        judged.push(seen);
    }
    if !judged.is_empty() {
        result.counters = judge_watch(&judged);
    }
    Some(handoff::finding(recipe, result, evidence, started))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_burst_is_a_quarter_more_than_the_queue() {
        assert_eq!(super::burst_size(Some("16384\n")), Ok(20_480));
        assert_eq!(super::burst_size(Some("not a number")), Ok(20_480), "the Linux default");
        assert_eq!(super::burst_size(None), Ok(20_480));
        let e = super::burst_size(Some("1000000")).unwrap_err();
        assert!(e.contains("1000000") && e.contains("200000"), "{e}");
    }

    #[test]
    fn a_burst_is_every_name_as_a_new_entry_of_the_watched_folder() {
        let dir = tempfile::tempdir().unwrap();
        let incoming = dir.path().join(super::INCOMING);
        std::fs::create_dir(&incoming).unwrap();
        let names: Vec<String> = (0..50).map(|i| format!("item-{i:06}")).collect();
        super::lay_burst(dir.path(), &incoming, &names).unwrap();
        let mut laid: Vec<String> =
            std::fs::read_dir(&incoming).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        laid.sort();
        assert_eq!(laid, names, "every name, nothing else, in the watched folder");
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let source = std::fs::metadata(dir.path().join(super::BURST_SOURCE)).unwrap();
            assert_eq!(source.nlink(), 51, "links to the one empty file outside the watched folder");
            assert_eq!(source.len(), 0);
        }
        // a name already there is an error naming it, not a silent overwrite
        let e = super::lay_burst(dir.path(), &incoming, &names[..1]).unwrap_err();
        assert!(e.contains("item-000000"), "{e}");
    }
}

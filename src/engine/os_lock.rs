//! The OS-lock scenario (`docs/HANDOFF.md`, "os-lock"): per recipe, [`OS_LOCK_TRIALS`] trials
//! ([`OS_LOCK_TRIALS_THOROUGH`] with `--thorough`), each of two contenders of one runtime. The
//! harness puts one file per [`Intrusion`] in the trial's folder, holding [`ORIGINAL`]; the
//! holder locks every one by the recipe, creates its `locked` marker and holds them until it
//! is stopped; the intruder ([`INTRUDER`]) waits for the marker and goes at its own files
//! without asking (write, append, rename, delete, mapped write, the holder's own lock again).
//! Once it is done the harness, while the holder still holds, reads `/proc/locks` and goes at
//! its own files with plain POSIX calls; then the holder is stopped, releases and ends, and
//! [`crate::verdict::os_lock`] counts from the files what got through.

use super::handoff;
use super::trial::{Slot, TrialPlan};

use super::Measurement;
use crate::domain::Scenario;
use crate::exec::contender::Contender;
use crate::exec::scratch::spell;
use crate::exec::scratch::PathStyle;
use crate::handoff::Recipe;
use crate::report::model::CountersResult;
use crate::report::model::Finding;
use crate::verdict::os_lock::{judge_os_lock, locks_on, Intrusion, LockSeen, OsLockTrial};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Trials per OS-lock recipe in the default run: the trial is laid out (the intruder waits for
/// the holder's locks), not raced, so two show what the lock lets through.
pub const OS_LOCK_TRIALS: usize = 2;
/// Trials per OS-lock recipe with `--thorough`.
pub const OS_LOCK_TRIALS_THOROUGH: usize = 10;
/// The intruder's recipe: the same runtime going at the files without asking, and taking the
/// holder's lock again.
pub const INTRUDER: &str = "os-lock.intrude";
/// What the harness puts in every file before the holder locks it; a file that holds anything
/// else afterwards was written.
pub const ORIGINAL: &str = "original\n";
/// The holder's marker in a trial's folder, created once every file is locked.
pub const LOCKED: &str = "locked";
/// The intruder's marker in a trial's folder, created (holding its token) only while it held
/// the holder's kind of lock on its `relock` file.
pub const RELOCKED: &str = "relocked";
/// What a renamed file's new name adds to its old one.
pub const MOVED_SUFFIX: &str = ".moved";
/// How long the intruder waits for the holder's marker before it gives up (`params.wait_ms`),
/// ms: a PowerShell holder on a busy machine takes a while to open a dozen files; below the
/// default attempt timeout (`--timeout`, 10 s), so that the intruder says why before it is
/// killed.
pub const WAIT_MS: u64 = 5_000;
/// How long the intruder waits for a second lock that blocks instead of refusing (Deno's
/// `FsFile.lock`) before it counts it refused (`params.relock_ms`), ms.
pub const RELOCK_MS: u64 = 300;

/// The OS-lock scenario for the engine: a holder and an intruder per trial, amplified only
/// where the run asks for it (nothing here is a race).
pub(super) const RUNNER: handoff::Runner = handoff::Runner {
    scenario: Scenario::OsLock,
    slots: |_| 2,
    observers: handoff::no_observers,
    measure: |b, p, m, f| {
        handoff::measure_recipes(b, p, m, f, handoff::AmplifiedRun::WhenAsked, &mut os_lock_recipe, None)
    },
};

/// What the harness did at the holder's files while it held them.
#[derive(Debug, Default)]
struct HarnessSide {
    /// The holder's marker was there.
    locked: bool,
    /// The kinds of lock `/proc/locks` listed on the holder's files.
    locks_seen: Vec<LockSeen>,
    /// The harness's `flock` and `fcntl` locks that were granted.
    granted: Vec<Intrusion>,
}

/// The path of `i`'s file in `dir`.
fn file_of(dir: &Path, i: Intrusion) -> PathBuf {
    dir.join(i.file())
}

/// The path a renamed file of `i` gets.
fn moved_of(dir: &Path, i: Intrusion) -> PathBuf {
    dir.join(format!("{}{MOVED_SUFFIX}", i.file()))
}

/// Tries a lock of the harness's own on `path` without waiting: `flock(LOCK_EX|LOCK_NB)`
/// ([`Intrusion::ForeignFlock`]) or `fcntl(F_SETLK)` with a write lock over the whole file
/// ([`Intrusion::ForeignFcntl`]); true when it was granted (it is released at once).
#[cfg(unix)]
fn harness_lock(path: &Path, kind: Intrusion) -> bool {
    use nix::fcntl::{fcntl, FcntlArg, Flock, FlockArg};
    let Ok(file) = std::fs::OpenOptions::new().read(true).write(true).open(path) else { return false };
    match kind {
        Intrusion::ForeignFlock => Flock::lock(file, FlockArg::LockExclusiveNonblock).is_ok(),
        _ => {
            // l_len 0: to the end of the file, however long it grows
            let lock = nix::libc::flock {
                l_type: nix::libc::F_WRLCK as i16,
                l_whence: nix::libc::SEEK_SET as i16,
                l_start: 0,
                l_len: 0,
                l_pid: 0,
            };
            // closing the file releases a granted POSIX lock
            fcntl(&file, FcntlArg::F_SETLK(&lock)).is_ok()
        }
    }
}

/// No lock of the harness's own where there is no `flock`/`fcntl`.
#[cfg(not(unix))]
fn harness_lock(_path: &Path, _kind: Intrusion) -> bool {
    false
}

/// The harness's side of a trial in `dir`, while the holder holds: is it locked, what
/// `/proc/locks` lists on its files, then its own writes, appends, renames, deletes and locks
/// (each on its own file; failures of the writes are read from the files afterwards).
fn go_at_files(dir: &Path) -> HarnessSide {
    let mut side = HarnessSide { locked: dir.join(LOCKED).exists(), ..Default::default() };
    if !side.locked {
        return side;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // the device as /proc/locks prints it, MAJOR(st_dev):MINOR(st_dev) (makedev(3))
        let files: Vec<_> = Intrusion::ALL
            .iter()
            .filter_map(|i| std::fs::metadata(file_of(dir, *i)).ok())
            .map(|m| (nix::sys::stat::major(m.dev()), nix::sys::stat::minor(m.dev()), m.ino()))
            .collect();
        if let Ok(text) = std::fs::read_to_string("/proc/locks") {
            side.locks_seen = locks_on(&text, &files);
        }
    }
    let _ = std::fs::write(file_of(dir, Intrusion::ForeignWrite), "foreign\n");
    let _ = std::fs::OpenOptions::new()
        .append(true)
        .open(file_of(dir, Intrusion::ForeignAppend))
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"foreign\n"));
    let _ = std::fs::rename(file_of(dir, Intrusion::ForeignRename), moved_of(dir, Intrusion::ForeignRename));
    let _ = std::fs::remove_file(file_of(dir, Intrusion::ForeignDelete));
    for kind in [Intrusion::ForeignFlock, Intrusion::ForeignFcntl] {
        if harness_lock(&file_of(dir, kind), kind) {
            side.granted.push(kind);
        }
    }
    side
}

/// What got through, read from the files of a trial in `dir` after the holder ended: a file
/// that no longer holds [`ORIGINAL`] was written, a name that is gone was renamed or deleted,
/// the intruder's [`RELOCKED`] marker holding `intruder` is a second lock; the harness's own
/// locks as `side` saw them granted.
fn through(dir: &Path, intruder: &str, side: &HarnessSide) -> Vec<Intrusion> {
    let changed = |i: Intrusion| std::fs::read(file_of(dir, i)).map_or(true, |b| b != ORIGINAL.as_bytes());
    let gone = |i: Intrusion| std::fs::symlink_metadata(file_of(dir, i)).is_err();
    Intrusion::ALL
        .into_iter()
        .filter(|&i| match i {
            Intrusion::Write
            | Intrusion::Append
            | Intrusion::Mmap
            | Intrusion::ForeignWrite
            | Intrusion::ForeignAppend => changed(i),
            Intrusion::Rename | Intrusion::Delete | Intrusion::ForeignRename | Intrusion::ForeignDelete => gone(i),
            Intrusion::SecondLock => std::fs::read_to_string(dir.join(RELOCKED)).is_ok_and(|t| t == intruder),
            Intrusion::ForeignFlock | Intrusion::ForeignFcntl => side.granted.contains(&i),
        })
        .collect()
}

/// One recipe's finding; `None` when the run was interrupted.
fn os_lock_recipe(
    pool: &mut [Contender],
    recipe: &Recipe,
    style: PathStyle,
    m: &mut Measurement<'_>,
) -> Option<Finding> {
    let started = Instant::now();
    let v = recipe.as_variant();
    let trials = if m.opts.adaptive { OS_LOCK_TRIALS } else { OS_LOCK_TRIALS_THOROUGH };
    let (done, evidence) = handoff::run_items(
        m,
        trials,
        &mut |n, tdir, m| {
            let id = m.next_id();
            let mut files = BTreeMap::new();
            for i in Intrusion::ALL {
                let path = file_of(tdir, i);
                std::fs::write(&path, ORIGINAL).map_err(|e| format!("could not write the file {}: {e}", i.file()))?;
                files.insert(i.file(), spell(&path, style));
            }
            let holder = format!("{}-o{n}-holder", m.nonce);
            let intruder = format!("{}-o{n}-intruder", m.nonce);
            let locked = spell(&tdir.join(LOCKED), style);
            let slots = [
                Slot {
                    variant: &v,
                    style,
                    index: 0,
                    token: holder,
                    recipe: handoff::recipe_spec(
                        Scenario::OsLock,
                        &recipe.id,
                        "holder",
                        serde_json::json!({ "files": files, "locked": locked }),
                        true,
                    ),
                },
                Slot {
                    variant: &v,
                    style,
                    index: 1,
                    token: intruder.clone(),
                    recipe: handoff::recipe_spec(
                        Scenario::OsLock,
                        INTRUDER,
                        "intruder",
                        serde_json::json!({
                            "files": files,
                            "locked": locked,
                            "relocked": spell(&tdir.join(RELOCKED), style),
                            "moved": spell(&moved_of(tdir, Intrusion::Rename), style),
                            "lock": recipe.id,
                            "wait_ms": WAIT_MS,
                            "relock_ms": RELOCK_MS,
                        }),
                        false,
                    ),
                },
            ];
            let side = RefCell::new(HarnessSide::default());
            let during = |_: &mut [Contender]| *side.borrow_mut() = go_at_files(tdir);
            let end = handoff::run_item_during(pool, tdir, &slots, TrialPlan::release(2, 0), id, Some(&during));
            let side = side.into_inner();
            let seen = OsLockTrial {
                locked: side.locked,
                through: through(tdir, &intruder, &side),
                mmap_tried: false,
                locks_seen: side.locks_seen,
                faults: Vec::new(),
            };
            Ok((end, seen))
        },
        &|_| false,
    )?;
    let mut result = CountersResult::default();
    let mut judged = Vec::with_capacity(done.len());
    for (attempts, mut seen) in done {
        seen.faults = handoff::errors_and_faults(&mut result, &attempts);
        // an intruder that gave up waiting for the holder's marker went at nothing: whatever the
        // harness then found, the trial measured no lock
        if attempts.get(1).and_then(|a| a.recipe.as_ref()).is_some_and(|r| r.step.as_deref() == Some("wait")) {
            seen.locked = false;
        }
        // whether the runtime can map a file at all is the intruder's to say; what its mapped
        // write did is read from the file
        seen.mmap_tried = attempts
            .get(1)
            .and_then(|a| a.recipe.as_ref())
            .is_some_and(|r| r.counters.get("mmap_tried").is_some_and(|n| *n > 0));
        judged.push(seen);
    }
    if !judged.is_empty() {
        result.counters = judge_os_lock(&judged);
    }
    Some(handoff::finding(recipe, result, evidence, started))
}

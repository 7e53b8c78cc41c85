//! The mutex scenario (`docs/HANDOFF.md`, "mutex"): lock code raced around a critical
//! section. Per recipe (stopping after the first trial in which every contender hung, crashed
//! or could not load the code), [`MUTEX_ROUNDS`] rounds ([`MUTEX_ROUNDS_THOROUGH`] with `--thorough`)
//! of [`KINDS_PER_ROUND`] trials: [`TOGETHER_PER_ORDERING`] trials per release ordering of the
//! lease scenario with every contender acquiring, holding [`HOLD_MS`] and releasing; one with a holder killed
//! (`SIGKILL`) once it holds the lock, before the others try; one with a holder paused
//! (`SIGSTOP`) while they try, resumed afterwards; one in which another contender calls
//! `release` with its own owner id while the holder holds, then tries to acquire. Contenders
//! append `enter`/`leave`/`done` lines to one log; [`crate::verdict::mutex`] judges the log.

use super::handoff;
use super::lease::PAUSES;
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
use crate::verdict::mutex::{judge_mutex, parse_log, Mark, MutexTrial, TrialKind};
use std::cell::Cell;
use std::path::Path;
use std::time::{Instant, SystemTime};

/// Rounds per mutex recipe in a default run (each [`KINDS_PER_ROUND`] trials).
pub const MUTEX_ROUNDS: usize = 1;
/// Rounds per mutex recipe with `--thorough`.
pub const MUTEX_ROUNDS_THOROUGH: usize = 5;
/// Together-trials per release ordering in a round: they cost about 0.1 s each, and a
/// check-then-act lock's natural window is narrow (1–8 of 10 trials here), so a round holds
/// three of each for the natural race to show it too.
pub const TOGETHER_PER_ORDERING: usize = 3;
/// Together-trials per round.
const TOGETHER: usize = TOGETHER_PER_ORDERING * PAUSES.len();
/// Killed-holder trials per round: each has `--workers` − 1 takers racing for the killed
/// holder's lock, where a stale-lock takeover by delete-then-create shows (two takers showed it
/// in 0 of 10 such trials here, eight in 1 of 13 amplified). After one in which nobody took the
/// lock the cell runs no more of them: a lock without takeover waits the whole
/// `--takeover-wait` in each.
pub const KILLED_PER_ROUND: usize = 3;
/// Trials per round at most: the together-trials, the killed-holder trials, then a paused
/// holder and a foreign release.
pub const KINDS_PER_ROUND: usize = TOGETHER + KILLED_PER_ROUND + 2;
/// How long a contender of a together-trial holds the lock, ms: longer than a natural release
/// spread and than an amplified run's delayed steps, so that two holders would overlap.
pub const HOLD_MS: u64 = 20;
/// How long a contender of a together-trial keeps trying to acquire (again every
/// [`RETRY_MS`] while `acquire` returns false), ms: time for every other contender's turn.
pub const TOGETHER_WAIT_MS: u64 = 2_000;
/// The pause between two `acquire` calls of one contender, ms.
pub const RETRY_MS: u64 = 5;
/// How long the releaser of a foreign trial tries to acquire after its release, ms.
pub const FOREIGN_WAIT_MS: u64 = 200;
/// How long the harness (and a releaser) waits for the holder's `enter` line, ms.
pub const HOLDER_WAIT_MS: u64 = 5_000;
/// How long the harness waits past the takeover wait for the takers' `done` lines, ms.
pub const DONE_MARGIN_MS: u64 = 2_000;
/// The lock's name in a trial's folder.
pub const LOCK: &str = "lock";
/// The log's name in a trial's folder.
pub const LOG: &str = "log";
/// The marker the harness creates once it killed or paused the holder: the takers start then.
pub const GO: &str = "go";
/// The marker the releaser of a foreign trial creates after its release.
pub const RELEASED: &str = "released";

/// The mutex scenario for the engine: `--workers` contenders per trial, amplified wherever
/// amplification is on (a contender paused inside a delayed call shows a check-then-act lock).
pub(super) const RUNNER: handoff::Runner = handoff::Runner {
    scenario: Scenario::Mutex,
    slots: |o| o.sizes.workers,
    observers: handoff::no_observers,
    measure: |b, p, m, f| handoff::measure_workers(b, p, m, f, handoff::AmplifiedRun::Always, mutex_recipe, None),
};

/// The kinds of the trials of `rounds` rounds, in order (before killed-holder trials are left
/// out: see [`KILLED_PER_ROUND`]).
fn schedule(rounds: usize) -> Vec<TrialKind> {
    let round = std::iter::repeat_n(TrialKind::Together, TOGETHER)
        .chain(std::iter::repeat_n(TrialKind::Killed, KILLED_PER_ROUND))
        .chain([TrialKind::Paused, TrialKind::Foreign]);
    round.cycle().take(rounds * KINDS_PER_ROUND).collect()
}

/// True when contender `a`'s lock code threw: a failed step other than waiting for the holder
/// or its go marker (which fails when the holder did).
fn code_error(a: &crate::exec::contender::Attempt) -> bool {
    a.report == crate::verdict::Report::Error
        && a.recipe.as_ref().is_some_and(|r| !matches!(r.step.as_deref(), Some("wait") | None))
}

/// True when the log at `log` has a line starting `prefix`.
fn log_has(log: &Path, prefix: &str) -> bool {
    std::fs::read_to_string(log).is_ok_and(|t| t.lines().any(|l| l.starts_with(prefix)))
}

/// True when contender `a` could not load the lock code (its step `load` failed: a module that
/// does not parse, or exports no `acquire` and `release`).
fn not_loaded(a: &crate::exec::contender::Attempt) -> bool {
    a.recipe.as_ref().is_some_and(|r| r.step.as_deref() == Some("load"))
}

/// One recipe's finding; `None` when the run was interrupted.
fn mutex_recipe(
    pool: &mut [Contender],
    recipe: &Recipe,
    style: PathStyle,
    workers: usize,
    m: &mut Measurement<'_>,
) -> Option<Finding> {
    let started = Instant::now();
    let v = recipe.as_variant();
    let rounds = if m.opts.adaptive { MUTEX_ROUNDS } else { MUTEX_ROUNDS_THOROUGH };
    let takeover_ms = m.opts.sizes.takeover_wait_ms;
    let module = m.opts.lock_module.clone();
    // a library recipe races the library installed before the run; one that could not be
    // installed is unsupported here, with the reason
    let library = match handoff::library_dir(recipe, m, started) {
        Ok(dir) => dir,
        Err(unsupported) => return Some(*unsupported),
    };
    let kinds = schedule(rounds);
    // the next trial's place in `kinds`, and whether a killed holder's lock stayed untaken
    let (next, stuck_once) = (Cell::new(0), Cell::new(false));
    let (done, evidence) = handoff::run_items(
        m,
        kinds.len(),
        &mut |n, tdir, m| {
            let id = m.next_id();
            while stuck_once.get() && kinds.get(next.get()) == Some(&TrialKind::Killed) {
                next.set(next.get() + 1);
            }
            let kind = kinds.get(next.get()).copied().unwrap_or(TrialKind::Together);
            next.set(next.get() + 1);
            let together_n = kinds[..next.get() - 1].iter().filter(|k| **k == TrialKind::Together).count();
            let lock = tdir.join(LOCK);
            let log = tdir.join(LOG);
            let go = tdir.join(GO);
            let tokens: Vec<String> = (0..workers).map(|w| format!("{}-m{n}-w{w}", m.nonce)).collect();
            let holder = tokens[0].clone();
            // who does what: the holder (slot 0) of a killed, paused or foreign trial holds until
            // stopped; a foreign trial's releaser is slot 1 and nobody else takes part
            let used = if kind == TrialKind::Foreign { 2 } else { workers };
            let slots: Vec<Slot<'_>> = tokens[..used]
                .iter()
                .enumerate()
                .map(|(w, token)| {
                    let mut params = serde_json::json!({
                        "lock": spell(&lock, style),
                        "log": spell(&log, style),
                        "hold_ms": HOLD_MS,
                        "retry_ms": RETRY_MS,
                        "go_wait_ms": HOLDER_WAIT_MS + takeover_ms,
                    });
                    if let Some(module) = &module {
                        params["module"] = module.clone().into();
                    }
                    if let Some(library) = &library {
                        params["library"] = library.clone().into();
                    }
                    let (role, until_stopped) = match (kind, w) {
                        (TrialKind::Together, _) => {
                            params["wait_ms"] = TOGETHER_WAIT_MS.into();
                            ("contender", false)
                        }
                        (_, 0) => {
                            params["wait_ms"] = HOLDER_WAIT_MS.into();
                            ("holder", true)
                        }
                        (TrialKind::Foreign, _) => {
                            params["wait_ms"] = FOREIGN_WAIT_MS.into();
                            params["holder"] = holder.clone().into();
                            params["released"] = spell(&tdir.join(RELEASED), style).into();
                            ("releaser", false)
                        }
                        _ => {
                            // the takers start at the harness's go, and run alongside it (loop
                            // recipes that end by themselves) while it holds the holder still
                            params["wait_ms"] = takeover_ms.into();
                            params["go"] = spell(&go, style).into();
                            ("contender", true)
                        }
                    };
                    let spec = handoff::recipe_spec(Scenario::Mutex, &recipe.id, role, params, until_stopped);
                    Slot { variant: &v, style, index: w, token: token.clone(), recipe: spec }
                })
                .collect();
            let plan = match kind {
                TrialKind::Together => PAUSES[together_n % PAUSES.len()].plan(workers),
                _ => TrialPlan::release(used, 0),
            };
            let held = Cell::new(true);
            let stopped_ms = Cell::new(None);
            let during = |pool: &mut [Contender]| {
                let control = match kind {
                    TrialKind::Killed => Control::Kill,
                    TrialKind::Paused => Control::Pause,
                    _ => return,
                };
                held.set(handoff::wait_for(HOLDER_WAIT_MS, || log_has(&log, &format!("enter {holder} "))));
                stopped_ms.set(Some(super::lease::epoch_ms(SystemTime::now())));
                let _ = pool[0].control(control);
                if std::fs::write(&go, "").is_ok() {
                    let takers = &tokens[1..used];
                    handoff::wait_for(takeover_ms + DONE_MARGIN_MS, || {
                        takers.iter().all(|t| log_has(&log, &format!("done {t} ")))
                    });
                }
                if control == Control::Pause {
                    let _ = pool[0].control(Control::Resume);
                }
            };
            let end = handoff::run_item_during(&mut pool[..used], tdir, &slots, plan, id, Some(&during));
            let (lines, garbled) = parse_log(&std::fs::read_to_string(&log).unwrap_or_default());
            let holder_in = match kind {
                TrialKind::Together => true,
                TrialKind::Foreign => lines.iter().any(|l| l.token == holder),
                _ => held.get(),
            };
            if kind == TrialKind::Killed && !lines.iter().any(|l| l.mark == Mark::Enter && l.token != holder) {
                stuck_once.set(true);
            }
            let seen = MutexTrial {
                kind,
                lines,
                garbled,
                holder: (kind != TrialKind::Together).then(|| holder.clone()),
                holder_in,
                stopped_ms: stopped_ms.get(),
                faults: Vec::new(),
                code_errors: 0,
                not_loaded: 0,
            };
            Ok((end, seen))
        },
        // code that every contender hung or crashed in, or could not load, gives nothing more to
        // judge: one such trial says it (a hang costs the attempt timeout) and the run goes on;
        // and the schedule may end early (killed-holder trials left out)
        &|done| {
            let all_bad =
                done.last().is_some_and(|(attempts, _)| attempts.iter().all(|a| handoff::faulted(a) || not_loaded(a)));
            let rest_killed = kinds[next.get().min(kinds.len())..].iter().all(|k| *k == TrialKind::Killed);
            all_bad || next.get() >= kinds.len() || (stuck_once.get() && rest_killed)
        },
    )?;
    let mut result = CountersResult::default();
    let mut judged = Vec::with_capacity(done.len());
    for (attempts, mut seen) in done {
        seen.faults = if seen.kind == TrialKind::Killed {
            // the holder the harness killed ended as it was made to: not a fault, no evidence
            let mut f = vec![false];
            f.extend(handoff::errors_and_faults(&mut result, attempts.get(1..).unwrap_or_default()));
            f
        } else {
            handoff::errors_and_faults(&mut result, &attempts)
        };
        seen.code_errors = attempts.iter().filter(|a| code_error(a)).count();
        seen.not_loaded = attempts.iter().filter(|a| not_loaded(a)).count();
        judged.push(seen);
    }
    if !judged.is_empty() {
        result.counters = judge_mutex(&judged);
    }
    Some(handoff::finding(recipe, result, evidence, started))
}

//! The engine's success paths with the in-process fake driver: no runtime needed.

use super::policy::natural_budget;
use super::{
    race_modes, trial, Amplify, Attempt, Budget, CellBase, CellResult, ContenderKind, Measurement, Options, Outcome,
    PathStyle, Pools, RaceMode, RaceResult, RaceRole, RaceVerdict, Scenario, Scratch, TargetState,
    DISPROOF_TRIALS_PER_ORDERING, NATURAL_CHECK_TRIALS_PER_ORDERING,
};
use crate::exec::contender::{Contender, Mode, Spec, Timeouts};
use crate::exec::fake::FakeCall;
use crate::exec::process::Launch;
use crate::matrix::{Creates, SourceKind, Variant};
use crate::verdict::Report;
use std::time::{Duration, Instant};

pub(super) fn options(trials: usize) -> Options {
    Options {
        contenders: 3,
        trials,
        oneshot_trials: trials,
        timeout: Duration::from_secs(5),
        startup_timeout: Duration::from_secs(5),
        second_comer: true,
        race: true,
        targets: TargetState::ALL.to_vec(),
        relative: true,
        hold_ms: 0,
        max_consecutive_faults: 3,
        natural: true,
        amplify: Amplify::Off,
        max_rate: None,
        max_trials: trials,
        offsets: None,
        handoffs: Vec::new(),
        sizes: Default::default(),
        recipes: Vec::new(),
        lock_module: None,
        libraries: Default::default(),
        library_versions: Vec::new(),
        adaptive: false,
        races: crate::domain::RaceScope::All,
        handoff_amplified: false,
        contender_kind: Default::default(),
        second_client: None,
    }
}

pub(super) fn variant(id: &str) -> Variant {
    Variant {
        id: id.into(),
        family: "fake".into(),
        call: id.into(),
        source: SourceKind::None,
        sources: Vec::new(),
        copies: false,
        creates: Creates::File,
        anti_pattern: false,
        control: false,
        holds: false,
        form: Default::default(),
        intent: None,
        show: Vec::new(),
        note: String::new(),
        promise: None,
    }
}

/// `v` raced by the three contenders of `pools` with native paths, as a row (`role`) or a
/// control, under `opts`, with tokens made from `nonce`.
fn race_of_three(
    pools: &mut Pools,
    v: &Variant,
    trials: usize,
    role: RaceRole,
    opts: &Options,
    scratch: &mut Scratch,
    nonce: &str,
) -> RaceResult {
    race_modes(pools, &[v; 3], &[PathStyle::Native; 3], trials, role, &mut Measurement::new(opts, scratch, nonce)).race
}

fn race(call: FakeCall, trials: usize, fail_begin_every: Option<u64>) -> RaceResult {
    let mut scratch = Scratch::new(&std::env::temp_dir(), None).unwrap();
    let root = scratch.root().to_path_buf();
    let natural = (0..3)
        .map(|_| {
            let mut f = crate::exec::fake::Fake::new(call, root.clone());
            f.fail_begin_every = fail_begin_every;
            Contender::with_driver(Box::new(f))
        })
        .collect();
    let mut pools = Pools::of(natural, root);
    let v = variant("fake.call");
    race_of_three(&mut pools, &v, trials, RaceRole::Row, &options(trials), &mut scratch, "n0")
}

#[test]
fn an_exclusive_call_counts_every_trial_after_the_warm_up() {
    let r = race(FakeCall::CreateNew, 40, None);
    assert_eq!(r.verdict, RaceVerdict::Exclusive, "{r:?}");
    assert_eq!(r.decided_by, RaceMode::Natural);
    assert!(r.amplified.is_none() && r.amplified_unavailable.is_some());
    // --amplify off is `off`, not an amplifier that was unavailable (the tables say
    // `amp unavailable` only for the latter)
    assert_eq!(r.amplified_unavailable, Some(crate::domain::NoAmplified::Off));
    let n = r.natural.as_ref().unwrap();
    assert_eq!(n.stats.trials, 40, "the warm-up trials are not counted");
    assert_eq!(n.stats.clean_trials, 40);
    assert_eq!(n.stats.wins_by_contender.iter().sum::<usize>(), 40, "one winner per trial");
    assert_eq!(n.discarded_trials, 0);
    // the natural sweep: released together, then one measured release spread apart
    assert_eq!(n.orderings.len(), 2, "{:?}", n.orderings);
    assert_eq!(n.orderings.iter().map(|o| o.stats.trials).sum::<usize>(), 40);
}

/// Every released trial's steps are timed (the warm-up's too), and neither the race folder nor
/// the folder a trial was set aside to (removed during the next trial's prepare round trip)
/// outlives the race.
#[test]
fn a_race_times_each_released_trial_and_leaves_no_trial_folder() {
    let mut scratch = Scratch::new(&std::env::temp_dir(), None).unwrap();
    let root = scratch.root().to_path_buf();
    let natural = (0..3)
        .map(|_| Contender::with_driver(Box::new(crate::exec::fake::Fake::new(FakeCall::CreateNew, root.clone()))))
        .collect();
    let mut pools = Pools::of(natural, root.clone());
    let r = race_of_three(&mut pools, &variant("fake.call"), 40, RaceRole::Row, &options(40), &mut scratch, "n0");
    let n = r.natural.as_ref().unwrap();
    let cost = n.cost.expect("a race that released trials says what they cost");
    assert_eq!(cost.trials, 40 + super::trial::NATURAL_AUTO_WARMUP_TRIALS, "{cost:?}");
    let steps = [cost.set_up_us, cost.prepare_us, cost.release_us, cost.calls_us, cost.read_us, cost.clean_up_us];
    assert!(steps.iter().all(|s| s.is_finite() && *s >= 0.0), "{cost:?}");
    assert!(steps.iter().sum::<f64>() > 0.0, "{cost:?}");
    let left: Vec<_> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(
        !left.iter().any(|n| n.to_string_lossy().starts_with(crate::exec::scratch::RACE_DIR)),
        "a trial folder outlived the race: {left:?}"
    );
}

#[test]
fn a_check_then_create_double_wins_every_trial() {
    let r = race(FakeCall::CheckThenCreate, 30, None);
    assert_eq!(r.verdict, RaceVerdict::MultipleWinners, "{r:?}");
    let n = r.natural.as_ref().unwrap();
    assert_eq!(n.stats.multi_winner_trials, 30);
    assert_eq!(n.found_at_offset_us, Some(0), "found in lockstep (the first, smaller offset on a tie)");
}

/// A natural and an amplified pool of three in-process fake contenders making `call`, in the
/// scratch folder of `scratch` (the amplified one is never run under strace).
fn fake_pools(call: FakeCall, scratch: &Scratch) -> Pools {
    let root = scratch.root().to_path_buf();
    let fakes = || -> Vec<Contender> {
        (0..3).map(|_| Contender::with_driver(Box::new(crate::exec::fake::Fake::new(call, root.clone())))).collect()
    };
    Pools::ready(fakes(), fakes(), root.clone())
}

/// The default run's options (adaptive trials) with `trials` and amplification on at release
/// `offsets` (µs, small so that they cost no time), its delay far above the in-process fakes'
/// release spread (every amplified trial is tight).
fn adaptive_amplified(trials: usize, offsets: Vec<u64>) -> Options {
    let mut opts = options(trials);
    opts.adaptive = true;
    opts.amplify = Amplify::On(crate::exec::amplify::Amplifier::for_tests(100_000));
    opts.offsets = Some(offsets);
    opts
}

/// Adaptive trials (issue 13): the natural check runs first; a failure there decides the cell
/// and its amplified race is skipped, with the reason; an exclusive call gets its amplified race
/// (which decides, with the bound) and keeps the check as its natural run.
#[test]
fn a_natural_failure_decides_the_cell_before_any_amplified_trial() {
    for call in [FakeCall::CheckThenCreate, FakeCall::CreateNew] {
        let mut scratch = Scratch::new(&std::env::temp_dir(), None).unwrap();
        let mut pools = fake_pools(call, &scratch);
        let v = variant("fake.call");
        // one ordering (released together)
        let opts = adaptive_amplified(40, vec![0]);
        let r = race_of_three(&mut pools, &v, 40, RaceRole::Row, &opts, &mut scratch, "n0");
        let n = r.natural.as_ref().expect("the natural check ran");
        if call == FakeCall::CheckThenCreate {
            assert_eq!((r.verdict, r.decided_by), (RaceVerdict::MultipleWinners, RaceMode::Natural), "{r:?}");
            assert!(r.amplified.is_none(), "{r:?}");
            assert_eq!(r.amplified_unavailable, Some(crate::domain::NoAmplified::Skipped));
            assert_eq!(n.stats.trials, DISPROOF_TRIALS_PER_ORDERING, "one disproof round: {n:?}");
        } else {
            assert_eq!((r.verdict, r.decided_by), (RaceVerdict::Exclusive, RaceMode::Amplified), "{r:?}");
            assert_eq!(r.amplified.as_ref().expect("amplified ran").stats.trials, 40);
            assert!(r.amplified_unavailable.is_none(), "{r:?}");
            assert_eq!(n.stats.trials, NATURAL_CHECK_TRIALS_PER_ORDERING, "the check stands: {n:?}");
        }
    }
}

/// A cell whose amplified race stops after 50 loose trials in a row (its contenders entered
/// their calls further apart than half the delay) runs again at a longer delay, each step
/// ESCALATION_FACTOR times the last, and reports both delays and every loose trial; it is not
/// left with the few trials the loose run counted.
#[test]
fn a_loose_amplified_race_runs_again_at_a_longer_delay() {
    use crate::exec::amplify::{Amplifier, ESCALATION_FACTOR, MAX_ESCALATED_DELAY_US};
    let mut scratch = Scratch::new(&std::env::temp_dir(), None).unwrap();
    let mut pools = fake_pools(FakeCall::CreateNew, &scratch);
    // the amplified contenders report entering their calls 0, 2 and 4 ms after the release:
    // loose at 1 and 4 ms (half the delay is the bound), tight at 16 ms
    let root = scratch.root().to_path_buf();
    // three exclusive fakes, contender i reporting its call's entry i × lag µs late
    let lagged = |lag: f64| -> Vec<Contender> {
        (0..3)
            .map(|i| {
                let mut f = crate::exec::fake::Fake::new(FakeCall::CreateNew, root.clone());
                f.stamp_lag_us = lag * i as f64;
                Contender::with_driver(Box::new(f))
            })
            .collect()
    };
    pools.set_amplified(lagged(2_000.0));
    let mut opts = adaptive_amplified(40, vec![0]);
    opts.amplify = Amplify::On(Amplifier::for_tests(1_000));
    assert_eq!(1_000 * ESCALATION_FACTOR * ESCALATION_FACTOR, MAX_ESCALATED_DELAY_US, "two steps to the cap");
    let v = variant("fake.call");
    let r = race_of_three(&mut pools, &v, 40, RaceRole::Row, &opts, &mut scratch, "n0");
    let a = r.amplified.as_ref().expect("the amplified race ran");
    assert_eq!((a.delay_us, a.raised_from_us), (Some(MAX_ESCALATED_DELAY_US), Some(1_000)), "{a:?}");
    assert_eq!(a.loose_trials, 2 * crate::engine::trial::MAX_LOOSE_IN_ROW, "both loose runs counted: {a:?}");
    assert_eq!(a.stats.trials, 40, "the raised run counted its trials: {a:?}");
    assert_eq!((r.verdict, r.decided_by), (RaceVerdict::Exclusive, RaceMode::Amplified), "{r:?}");

    // at the cap, a race that stays loose is not raised past it: it ends with what it counted
    let mut pools = fake_pools(FakeCall::CreateNew, &scratch);
    pools.set_amplified(lagged(100_000.0));
    let r = race_of_three(&mut pools, &v, 40, RaceRole::Row, &opts, &mut scratch, "n1");
    assert!(r.amplified.is_none(), "no trial counted at any delay: {r:?}");
    assert!(
        matches!(&r.amplified_unavailable, Some(crate::domain::NoAmplified::Broke(why)) if why.contains("8000.0 µs apart")),
        "the reason gives the last delay's bound: {r:?}"
    );
}

/// Adaptive trials (issue 13): a detection control's amplified orderings run in blocks of
/// CONTROL_MIN_TRIALS, and the run stops after the first block the control rule accepts; a
/// control that is never caught runs every block (and is judged weak on its best ordering).
#[test]
fn a_control_stops_after_the_first_ordering_that_catches_it() {
    let min = crate::verdict::CONTROL_MIN_TRIALS;
    for (call, blocks) in [(FakeCall::CheckThenCreate, 1), (FakeCall::CreateNew, 4)] {
        let mut scratch = Scratch::new(&std::env::temp_dir(), None).unwrap();
        let mut pools = fake_pools(call, &scratch);
        let v = variant("fake.control");
        let opts = adaptive_amplified(30, vec![0, 10, 20, 40]);
        // the control's rule: each of the 4 orderings gets CONTROL_MIN_TRIALS amplified trials
        let role = RaceRole::control(&opts);
        assert_eq!(role, RaceRole::Control { min_amplified_trials: 4 * min });
        let r = race_of_three(&mut pools, &v, 30, role, &opts, &mut scratch, "n0");
        let a = r.amplified.as_ref().expect("a control runs amplified");
        assert_eq!(a.stats.trials, blocks * min, "{a:?}");
        assert_eq!(a.orderings.len(), blocks, "one ordering after another: {a:?}");
        assert!(a.orderings.iter().all(|o| o.stats.trials == min), "{a:?}");
        let (caught, trials, _) = a.control_counts();
        let d = crate::verdict::Detection::judge("fake.control", None, Some((caught, trials, 0)));
        assert_eq!(d.worked, call == FakeCall::CheckThenCreate, "{d:?}");
    }
}

/// A control's ordering that stays loose (here: the contenders 2 ms apart whenever they are
/// released together, tight otherwise) gives way to the next ordering, which judges the
/// control at the delay it was asked for: its family is not raised for one ordering.
#[test]
fn a_control_ordering_that_stays_loose_gives_way_to_the_next() {
    let min = crate::verdict::CONTROL_MIN_TRIALS;
    let mut scratch = Scratch::new(&std::env::temp_dir(), None).unwrap();
    let mut pools = fake_pools(FakeCall::CheckThenCreate, &scratch);
    let root = scratch.root().to_path_buf();
    pools.set_amplified(
        (0..3)
            .map(|i| {
                let mut f = crate::exec::fake::Fake::new(FakeCall::CheckThenCreate, root.clone());
                (f.stamp_lag_us, f.lag_only_together) = (2_000.0 * i as f64, true);
                Contender::with_driver(Box::new(f))
            })
            .collect(),
    );
    let mut opts = adaptive_amplified(30, vec![0, 10, 20, 40]);
    opts.amplify = Amplify::On(crate::exec::amplify::Amplifier::for_tests(1_000));
    let v = variant("fake.control");
    let r = race_of_three(&mut pools, &v, 30, RaceRole::control(&opts), &opts, &mut scratch, "n0");
    let a = r.amplified.as_ref().expect("a control runs amplified");
    assert_eq!((a.delay_us, a.raised_from_us), (Some(1_000), None), "not raised: {a:?}");
    assert_eq!(a.loose_trials, crate::engine::trial::MAX_LOOSE_IN_ROW, "{a:?}");
    assert_eq!((a.stats.trials, a.orderings.len()), (min, 1), "judged on the next ordering: {a:?}");
    assert_eq!(a.orderings[0].offset_us, 10, "{a:?}");
    let (caught, trials, _) = a.control_counts();
    assert!(crate::verdict::Detection::judge("fake.control", None, Some((caught, trials, 10))).worked);
}

#[test]
fn a_contender_failing_before_the_release_discards_the_trial() {
    let r = race(FakeCall::CreateNew, 40, Some(7));
    let n = r.natural.as_ref().unwrap();
    assert_eq!(r.verdict, RaceVerdict::Exclusive, "{r:?}");
    assert_eq!(n.stats.trials, 40, "discarded trials are run again");
    assert!(n.discarded_trials >= 5, "every 7th attempt id fails before ready: {}", n.discarded_trials);
}

#[test]
fn a_trial_plan_can_kill_a_contender_after_its_release() {
    use crate::exec::driver::Control;
    use trial::{Phase, TrialPlan};
    let d = tempfile::tempdir().unwrap();
    let mut pool: Vec<Contender> = (0..2).map(|_| Contender::fake(FakeCall::CreateNew, d.path().into())).collect();
    for (i, c) in pool.iter_mut().enumerate() {
        let spec = Spec {
            id: 1,
            variant: "fake.wx".into(),
            target: "target".into(),
            source: None,
            token: format!("tok{i}"),
            mark: None,
            hold_ms: 0,
            recipe: None,
            delay_us: 0,
        };
        c.begin(&spec).unwrap();
    }
    let mut attempts = vec![None, None];
    let plan = TrialPlan::new(vec![
        Phase::Release { slot: 0, at_us: 0 },
        Phase::Control { slot: 1, at_us: 200, control: Control::Kill },
        Phase::Release { slot: 1, at_us: 100 },
    ]);
    plan.run(&mut pool, &mut attempts);
    assert!(attempts.iter().all(Option::is_none), "no step failed");
    assert_eq!(pool[0].finish().report, Report::Success);
    assert_eq!(pool[1].finish().report, Report::Crashed, "killed after its release");
}

/// A session probe (the fake `node` of the fault tests) paused with SIGSTOP between its
/// release and its result answers only after it is resumed.
#[cfg(unix)]
#[test]
fn a_paused_session_probe_answers_after_it_is_resumed() {
    use crate::exec::driver::Control;
    let fake = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake-runtimes/faults/node");
    let d = tempfile::tempdir().unwrap();
    let t = Timeouts { startup: Duration::from_secs(20), attempt: Duration::from_secs(20) };
    let mut c = Contender::new(Mode::Session, Launch::new(&fake, ["probe"]), d.path().into(), t);
    let spec = Spec {
        id: 1,
        variant: "node.fake.wx".into(),
        target: "target".into(),
        source: None,
        token: "tok".into(),
        mark: None,
        hold_ms: 0,
        recipe: None,
        delay_us: 0,
    };
    c.begin(&spec).unwrap();
    c.ready().unwrap();
    c.control(Control::Pause).unwrap();
    c.release().unwrap();
    let paused_at = Instant::now();
    std::thread::sleep(Duration::from_millis(300));
    assert!(!d.path().join("target").exists(), "a paused probe makes no call");
    c.control(Control::Resume).unwrap();
    let a = c.finish();
    assert_eq!(a.report, Report::Success, "{a:?}");
    assert!(paused_at.elapsed() >= Duration::from_millis(300));
    assert_eq!(std::fs::read_to_string(d.path().join("target")).unwrap(), "tok");
}

/// Adaptive natural budgets (issue 13): a cell the amplified race found exclusive over all its
/// trials gets a check of NATURAL_CHECK_TRIALS_PER_ORDERING per ordering; one it disproved, a
/// round of DISPROOF_TRIALS_PER_ORDERING; a control, all its trials; `--thorough`, all of them.
#[test]
fn the_natural_race_gets_what_the_amplified_one_left_to_decide() {
    let b =
        Budget { trials: 100, max_rate: None, max_trials: 1000, disproof_per_ordering: Some(5), control_blocks: None };
    let per = Some(DISPROOF_TRIALS_PER_ORDERING);
    let n = |amp, control, adaptive| natural_budget(b, adaptive, amp, control, 2);
    let settled = n(Some((RaceVerdict::Exclusive, 100)), false, per);
    assert_eq!(settled.trials, 2 * NATURAL_CHECK_TRIALS_PER_ORDERING);
    assert_eq!(settled.disproof_per_ordering, per);
    assert_eq!(n(Some((RaceVerdict::MultipleWinners, 20)), false, per).trials, 2 * DISPROOF_TRIALS_PER_ORDERING);
    // an amplified race cut short (too many loose trials) settles nothing
    assert_eq!(n(Some((RaceVerdict::Exclusive, 30)), false, per).trials, 100);
    // a detection control's natural run and a run without amplification get every trial
    assert_eq!(n(Some((RaceVerdict::Exclusive, 100)), true, per).trials, 100);
    assert_eq!(n(None, false, per).trials, 100);
    // a control judged on its natural run gets CONTROL_MIN_TRIALS per ordering, even at -n 30
    let quick = Budget { trials: 30, max_trials: 30, disproof_per_ordering: None, ..b };
    let natural_control = natural_budget(quick, per, None, true, 2);
    assert_eq!((natural_control.trials, natural_control.max_trials), (2 * crate::verdict::CONTROL_MIN_TRIALS, 40));
    assert_eq!(natural_control.disproof_per_ordering, None, "the judged run is not cut by a disproof");
    let blocks = crate::options::ControlBlocks { per: crate::verdict::CONTROL_MIN_TRIALS, mode: RaceMode::Natural };
    assert_eq!(natural_control.control_blocks, Some(blocks), "its orderings in blocks, judged as natural");
    let full = natural_budget(b, per, None, true, 2).control_blocks.map(|c| c.per);
    assert_eq!(full, Some(b.trials / 2), "a block is an ordering's whole share");
    let thorough = natural_budget(quick, None, None, true, 2);
    assert_eq!((thorough.trials, thorough.control_blocks), (40, None), "--thorough -n 30: every trial");
    // --thorough: no adaptive trials
    assert_eq!(n(Some((RaceVerdict::Exclusive, 100)), false, None), b);
}

/// A start-up the harness itself failed (its start-up thread panicked) is a harness error, in
/// `start_all` and in the cells made from it, never the runtime's crash.
#[test]
fn a_start_up_the_harness_failed_is_a_harness_error_not_a_crash() {
    #[derive(Debug)]
    struct Panics;
    impl crate::exec::driver::Driver for Panics {
        fn start(&mut self) -> Result<(), Attempt> {
            panic!("test: this start-up thread panics")
        }
        fn begin(&mut self, _: &Spec) -> Result<(), Attempt> {
            Ok(())
        }
        fn ready(&mut self) -> Result<(), Attempt> {
            Ok(())
        }
        fn release(&mut self) -> Result<(), Attempt> {
            Ok(())
        }
        fn finish(&mut self) -> Attempt {
            Attempt::new(Report::Success)
        }
        fn shutdown(&mut self) {}
        fn control(&mut self, _: crate::exec::driver::Control) -> Result<(), Attempt> {
            Ok(())
        }
    }
    let mut pool = vec![Contender::with_driver(Box::new(Panics))];
    let f = crate::exec::contender::start_all(&mut pool).expect("a fault");
    assert_eq!(f.report, Report::HarnessError, "{f:?}");
    let v = variant("fake.wx");
    let base = CellBase { v: &v, kind: ContenderKind::Processes };
    match base.fault(Scenario::SecondComer, TargetState::File, &f).result {
        CellResult::SecondComer(r) => assert_eq!(r.outcome, Outcome::HarnessError),
        other => panic!("{other:?}"),
    }
    match base.fault(Scenario::Race, TargetState::Absent, &f).result {
        CellResult::Race(r) => assert_eq!(r.verdict, RaceVerdict::HarnessError),
        other => panic!("{other:?}"),
    }
}

/// A contender that only names itself (its note), for tests that move contenders around; a
/// counted one ([`Named::counted`]) counts its start-ups, which fail where asked.
#[derive(Debug)]
pub(super) struct Named {
    name: &'static str,
    starts: Option<(std::sync::Arc<std::sync::atomic::AtomicUsize>, bool)>,
}

impl Named {
    /// A contender named `name`.
    pub(super) fn new(name: &'static str) -> Named {
        Named { name, starts: None }
    }

    /// A contender whose start-ups are counted in `starts` and fail when `fails`.
    fn counted(starts: std::sync::Arc<std::sync::atomic::AtomicUsize>, fails: bool) -> Named {
        Named { name: "counted", starts: Some((starts, fails)) }
    }
}

impl crate::exec::driver::Driver for Named {
    fn start(&mut self) -> Result<(), Attempt> {
        match &self.starts {
            Some((n, fails)) => {
                n.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                if *fails {
                    return Err(Attempt::new(Report::Crashed));
                }
                Ok(())
            }
            None => Ok(()),
        }
    }
    fn begin(&mut self, _: &Spec) -> Result<(), Attempt> {
        Ok(())
    }
    fn ready(&mut self) -> Result<(), Attempt> {
        Ok(())
    }
    fn release(&mut self) -> Result<(), Attempt> {
        Ok(())
    }
    fn finish(&mut self) -> Attempt {
        Attempt::new(Report::Success)
    }
    fn shutdown(&mut self) {}
    fn control(&mut self, _: crate::exec::driver::Control) -> Result<(), Attempt> {
        Ok(())
    }
    fn note(&self) -> Option<String> {
        Some(self.name.to_string())
    }
}

/// The pairs' kept probes go into a pair's pools slot by slot (natural ones, and amplified
/// ones under the pool's tracer, the missing slots new), and all come back out with their
/// tracers, the parked pool's too.
#[test]
fn pools_take_kept_contenders_and_give_them_back() {
    let named = |n: &'static str| Contender::with_driver(Box::new(Named::new(n)));
    let notes = |v: &[Contender]| v.iter().map(|c| c.note().unwrap_or_else(|| "new".into())).collect::<Vec<_>>();
    let launch = crate::exec::process::Launch::new("/nonexistent/probe", Vec::<String>::new());
    let t = Timeouts { startup: Duration::from_secs(1), attempt: Duration::from_secs(1) };
    let slot = (Mode::Session, launch, t);
    let d = tempfile::tempdir().unwrap();
    let mut pools = Pools::new(vec![slot.clone(), slot.clone(), slot], d.path().into());
    let tracer = crate::exec::amplify::Amplifier::for_tests(1000);
    pools.hand_over(
        vec![Some(named("a0")), None, Some(named("a2"))],
        Some((tracer.clone(), vec![None, Some(named("b1")), None])),
    );
    let back = pools.take_back();
    assert_eq!(back.len(), 2, "natural and amplified");
    assert_eq!((back[0].0.clone(), notes(&back[0].1)), (None, vec!["a0".to_string(), "new".into(), "a2".into()]));
    assert_eq!(
        (back[1].0.clone(), notes(&back[1].1)),
        (Some(tracer), vec!["new".to_string(), "b1".into(), "new".into()])
    );
    assert!(pools.take_back().iter().all(|(_, v)| v.is_empty()), "left empty");
}

/// A pool under another tracer is parked, and taken back when its tracer is asked for again:
/// here after the raised pool failed to start and was reset, as `race_modes` does.
#[test]
fn a_parked_pool_is_taken_back() {
    let named = |n: &'static str| Contender::with_driver(Box::new(Named::new(n)));
    let launch = crate::exec::process::Launch::new("/nonexistent/probe", Vec::<String>::new());
    let t = Timeouts { startup: Duration::from_secs(1), attempt: Duration::from_secs(1) };
    let d = tempfile::tempdir().unwrap();
    let mut pools = Pools::new(vec![(Mode::Session, launch.clone(), t), (Mode::Session, launch, t)], d.path().into());
    let (at1, at4) = (
        Amplify::On(crate::exec::amplify::Amplifier::for_tests(1000)),
        Amplify::On(crate::exec::amplify::Amplifier::for_tests(4000)),
    );
    let t1 = pools.tracer_for(&at1).unwrap();
    pools.hand_over(vec![None, None], Some((t1, vec![Some(named("p0")), Some(named("p1"))])));
    assert!(pools.amplified(&at4).is_err(), "the raised pool cannot start here");
    pools.reset_amplified();
    let back = pools.amplified(&at1).expect("the parked pool");
    assert_eq!(back.iter().filter_map(Contender::note).collect::<Vec<_>>(), ["p0", "p1"]);
}

/// A natural race no tracer widens gets trials until its bound is 1% in an adaptive run:
/// 299 clean trials, a failure still ending it; not a control, a quick run or `--thorough`.
#[test]
fn a_race_no_tracer_widens_goes_on_to_a_one_percent_bound() {
    use super::policy::widened_by_nothing;
    let b =
        Budget { trials: 100, max_rate: None, max_trials: 5000, disproof_per_ordering: Some(5), control_blocks: None };
    let w = widened_by_nothing(b, Some(5), false);
    assert_eq!(w.max_rate, Some(super::policy::NATURAL_ONLY_MAX_RATE));
    assert!(!w.enough(298, 298, 0, 2) && w.enough(299, 299, 0, 2), "1 - 0.05^(1/299) <= 1%");
    assert!(w.enough(10, 10, 1, 2), "a failure still ends it");
    assert_eq!(widened_by_nothing(b, Some(5), true), b, "a control keeps its budget");
    assert_eq!(widened_by_nothing(b, None, false), b, "--thorough keeps its trials");
    let quick = Budget { trials: 30, ..b };
    assert_eq!(widened_by_nothing(quick, Some(5), false), quick, "--quick keeps its 30");
    let lower = Budget { max_rate: Some(0.005), ..b };
    assert_eq!(widened_by_nothing(lower, Some(5), false).max_rate, Some(0.005), "a lower --max-rate stands");
}

/// An amplified hand-off run takes its observers (the readers) from the natural pool: the
/// swap puts the natural contender of each observer slot into the amplified pool and back.
/// The update scenario's observer is its reader (the last slot), publish's its readers.
#[test]
fn observers_swap_into_the_amplified_pool_and_back() {
    let named = |n: &'static str| Contender::with_driver(Box::new(Named::new(n)));
    let notes = |v: &[Contender]| v.iter().filter_map(Contender::note).collect::<Vec<_>>();
    let launch = crate::exec::process::Launch::new("/nonexistent/probe", Vec::<String>::new());
    let t = Timeouts { startup: Duration::from_secs(1), attempt: Duration::from_secs(1) };
    let d = tempfile::tempdir().unwrap();
    let mut pools = Pools::new(vec![(Mode::Session, launch, t); 3], d.path().into());
    let amp = Amplify::On(crate::exec::amplify::Amplifier::for_tests(1000));
    let tracer = pools.tracer_for(&amp).unwrap();
    pools.hand_over(
        vec![Some(named("n0")), Some(named("n1")), Some(named("n2"))],
        Some((tracer, vec![Some(named("a0")), Some(named("a1")), Some(named("a2"))])),
    );
    pools.swap_natural(2..3);
    assert_eq!(notes(pools.amplified(&amp).unwrap()), ["a0", "a1", "n2"]);
    assert_eq!(notes(&pools.natural), ["n0", "n1", "a2"]);
    pools.swap_natural(2..3);
    assert_eq!(notes(pools.amplified(&amp).unwrap()), ["a0", "a1", "a2"]);
    assert_eq!(notes(&pools.natural), ["n0", "n1", "n2"]);
    // the scoped form: the natural observer inside the run, the pools as they were after it
    let inside = pools.with_amplified(&amp, 2..3, |pool| notes(pool)).unwrap();
    assert_eq!(inside, ["a0", "a1", "n2"]);
    assert_eq!(notes(pools.amplified(&amp).unwrap()), ["a0", "a1", "a2"]);
    assert_eq!(notes(&pools.natural), ["n0", "n1", "n2"]);
    // slots the pools do not have are left alone
    pools.swap_natural(3..9);
    assert_eq!(notes(&pools.natural), ["n0", "n1", "n2"]);
    let o = options(10);
    let (workers, readers) = (o.sizes.workers, o.sizes.readers);
    assert_eq!((super::update::RUNNER.observers)(&o), workers..workers + 1, "update: the reader");
    assert_eq!((super::publish::RUNNER.observers)(&o), 1..1 + readers, "publish: the readers");
    assert!((super::claim::RUNNER.observers)(&o).is_empty());
}

/// The run starts every session runtime's probes at once before measuring: each family's
/// natural fault is kept for its own family (here the second family's probes fail to start),
/// the hand-off pool starts with them, and a runtime whose probes are a loop driver (cmd) is
/// left to start its pools when used.
#[test]
fn start_runtimes_starts_session_runtimes_only_and_keeps_each_familys_fault() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let runtime = |name: &str| {
        let a = crate::runtime::adapter(name).expect("an adapter");
        crate::runtime::Runtime {
            name: a.name(),
            label: a.name().into(),
            version: "1".into(),
            path: None,
            status: crate::runtime::Status::Found,
            families: a.families().to_vec(),
            artifact: None,
            selector: a.name().into(),
            adapter: a,
        }
    };
    let d = tempfile::tempdir().unwrap();
    let pool = |starts: &Arc<AtomicUsize>, fails: bool| {
        let c = || Contender::with_driver(Box::new(Named::counted(starts.clone(), fails)));
        Pools::of(vec![c(), c()], d.path().into())
    };
    let (ok, failing, handoff, looped) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
    );
    let session = |first: Pools, second: Pools, h: Option<Pools>| super::RuntimePools {
        families: vec![(first, true), (second, false)],
        handoff: h,
        share_first: false,
        slots: Some(2),
        started: vec![None, None],
        handoff_started: false,
    };
    let (bun, cmd) = (runtime("bun"), runtime("cmd"));
    assert_eq!(bun.adapter().mode(), Mode::Session);
    assert!(matches!(cmd.adapter().mode(), Mode::Loop(_) | Mode::OneShot), "{:?}", cmd.adapter().mode());
    let mut b = session(pool(&ok, false), pool(&failing, true), Some(pool(&handoff, false)));
    let mut c = session(pool(&looped, false), pool(&looped, false), None);
    super::start_runtimes(&mut [(&cmd, &mut c), (&bun, &mut b)], &Amplify::Off);
    let started: Vec<Option<Report>> =
        b.started.iter().map(|s| s.as_ref().expect("started").as_ref().map(|a| a.report)).collect();
    assert_eq!(started, [None, Some(Report::Crashed)], "each family's own fault");
    assert_eq!(
        [&ok, &failing, &handoff].map(|n| n.load(Ordering::SeqCst)),
        [2, 2, 2],
        "every probe of the session runtime, its hand-off pool's too"
    );
    assert_eq!(looped.load(Ordering::SeqCst), 0, "the loop driver's pools start when used");
    assert!(c.started.iter().all(Option::is_none));
    assert!(b.handoff_started && !c.handoff_started);
}

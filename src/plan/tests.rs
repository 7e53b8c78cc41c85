use std::time::Duration;

use clap::Parser;

use super::{
    check_contenders, nonce, parse_max_rate, parse_offsets, parse_segment, parse_targets, Amplify, CellPlan, Cli,
    Estimate, Paths, RacePlan, RaceScope, RaceShape, Result, RunPlan, TargetState, MIN_STARTUP,
};

use crate::against::AgainstScope;
use crate::cli::Command;
use crate::cli::DEFAULT_RUN_TRIALS;
use crate::matrix::SourceKind;
use crate::report::model::Scenario;
use crate::runtime::Status;

fn cli(command: &str, args: &[&str]) -> Cli {
    let argv = ["conformance", command].into_iter().chain(args.iter().copied());
    Cli::try_parse_from(argv).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

fn run_plan(args: &[&str]) -> Result<RunPlan> {
    let c = cli("run", args);
    let paths = Paths::of(&c);
    match c.command {
        Command::Run(a) => RunPlan::new(&a, &paths),
        other => panic!("{other:?}"),
    }
}

fn race_plan(args: &[&str]) -> Result<RacePlan> {
    let c = cli("race", args);
    let paths = Paths::of(&c);
    match c.command {
        Command::Race(a) => RacePlan::new(&a, &paths),
        other => panic!("{other:?}"),
    }
}

/// A relative `--probes`, `--matrices` or `--cache-dir` is taken from the working folder and
/// made absolute (a probe runs in a folder of its own, where the relative name is nothing).
#[test]
fn relative_folders_of_the_global_flags_are_made_absolute() {
    let c = cli("variants", &["--probes", "probes", "--matrices", "m", "--cache-dir", "c"]);
    let p = Paths::of(&c);
    let here = std::env::current_dir().unwrap();
    assert_eq!(p.probes, Some(here.join("probes")));
    assert_eq!(p.matrices, Some(here.join("m")));
    assert_eq!(p.cache, here.join("c"));
}

const TWO: [&str; 4] = ["-c", "node:node.writeFileSync.wx", "-c", "deno:deno.writeFileSync.createNew"];

/// Every validation error names the flag at fault, and `run` and `race` give the same one
/// for the flags they share.
#[test]
fn validation_errors_name_the_flag() {
    let shared: &[(&[&str], &str)] = &[
        (&["--timeout", "0"], "--timeout"),
        (&["--timeout", "3601"], "--timeout"),
        (&["--max-rate", "5"], "--max-rate"),
        (&["--max-rate", "0"], "--max-rate"),
        (&["--offsets", "x"], "--offsets"),
        (&["--offsets", ","], "--offsets"),
        (&["--max-rate", "1%", "--max-trials", "5", "-n", "20"], "--max-trials"),
        (&["--path-segment", "a/b"], "--path-segment"),
        (&["--path-segment", ".."], "--path-segment"),
        (&["--probes", "/nonexistent"], "--probes"),
    ];
    for (args, flag) in shared {
        let run = run_plan(args).unwrap_err().to_string();
        let race = race_plan(&[&TWO[..], args].concat()).unwrap_err().to_string();
        assert!(run.contains(flag), "{args:?}: {run}");
        assert_eq!(run, race, "{args:?}: run and race disagree");
    }
    let run_only: &[(&[&str], &str)] = &[
        (&["--target", "file,fifo"], "--target"),
        (&["--target", ","], "--target"),
        (&["-v", "nope.*"], "--variant"),
        (&["-v", ""], "--variant"),
        (&["-v", "node.[x"], "--variant"),
        (&["-r", "nodee"], "--runtime"),
        (&["--require", "nodee"], "--require"),
        (&["--expect", "/nonexistent/base.json"], "/nonexistent/base.json"),
    ];
    for (args, flag) in run_only {
        let e = run_plan(args).unwrap_err().to_string();
        assert!(e.contains(flag), "{args:?}: {e}");
    }
    let race_only: &[(&[&str], &str)] = &[
        (&["-c", "node:node.writeFileSync.wx"], "at least two contenders"),
        (&["-c", "node", "-c", "node:node.writeFileSync.wx"], "is not RUNTIME:VARIANT"),
        (&["-c", "nodee:node.writeFileSync.wx", "-c", "node:node.writeFileSync.wx"], "unknown runtime 'nodee'"),
        (&["-c", "node:nope", "-c", "node:node.writeFileSync.wx"], "'nope' is not a variant"),
        (&["-c", "node:dotnet.FileMode.CreateNew", "-c", "node:node.writeFileSync.wx"], "does not run the dotnet"),
    ];
    for (args, expected) in race_only {
        let e = race_plan(args).unwrap_err().to_string();
        assert!(e.contains("--contender") && e.contains(expected), "{args:?}: {e}");
    }
    let many: Vec<&str> = std::iter::repeat_n(["-c", "node:node.writeFileSync.wx"], 65).flatten().collect();
    let e = race_plan(&many).unwrap_err().to_string();
    assert!(e.contains("--contender: 65 contenders given; a race has at most 64"), "{e}");
    assert!(check_contenders(65, "--contenders").unwrap_err().to_string().contains("--contenders"));
}

/// `race` runs with the defaults of `run --thorough`: the same engine options, and its
/// trials (the one-shot trials when a one-shot runtime, cmd on Windows, takes part), all
/// from the constants of `cli`. `run` without `--thorough` has fewer trials and adaptive
/// ones; everything else is the same.
#[test]
fn race_and_run_share_defaults() {
    let quick = run_plan(&["--amplify", "off"]).unwrap();
    assert_eq!(quick.options.trials, crate::cli::DEFAULT_RUN_TRIALS as usize);
    assert!(quick.options.adaptive);
    assert_eq!(quick.options.targets, TargetState::DEFAULT.to_vec());
    let run = run_plan(&["--amplify", "off", "--thorough"]).unwrap();
    assert!(!run.options.adaptive);
    assert_eq!(run.options.targets, TargetState::ALL.to_vec(), "--thorough: every target state");
    let given = run_plan(&["--thorough", "-n", "7", "--target", "file"]).unwrap();
    assert_eq!((given.options.trials, given.options.targets), (7, vec![TargetState::File]), "flags win");
    let race = race_plan(&[&TWO[..], &["--amplify", "off"]].concat()).unwrap();
    let (r, c) = (&run.options, &race.options);
    assert!(!c.adaptive, "a cross-runtime race runs all its trials");
    assert_eq!(r.trials, crate::cli::DEFAULT_TRIALS as usize);
    assert_eq!(r.oneshot_trials, crate::cli::DEFAULT_ONESHOT_TRIALS as usize);
    assert_eq!(r.contenders, crate::cli::DEFAULT_CONTENDERS as usize);
    assert_eq!(r.timeout, Duration::from_secs_f64(crate::cli::DEFAULT_TIMEOUT_SECS));
    assert_eq!(r.hold_ms, crate::cli::DEFAULT_HOLD_MS);
    assert_eq!(r.max_trials, crate::cli::DEFAULT_MAX_TRIALS as usize);
    assert_eq!(
        (r.trials, r.oneshot_trials, r.timeout, r.startup_timeout, r.hold_ms),
        (c.trials, c.oneshot_trials, c.timeout, c.startup_timeout, c.hold_ms)
    );
    assert_eq!(
        (r.max_consecutive_faults, r.natural, r.max_rate, r.max_trials, &r.offsets),
        (c.max_consecutive_faults, c.natural, c.max_rate, c.max_trials, &c.offsets)
    );
    assert_eq!(r.startup_timeout, MIN_STARTUP);
    assert_eq!(race.trials, r.trials);
    assert_eq!(c.contenders, 2);
    assert!(c.race && !c.second_comer && c.targets.is_empty());
    // cmd runs one process per attempt on Windows (one-shot trials), a loop per contender
    // under Wine (the trials of every other runtime)
    let with_cmd = race_plan(&["-c", "node:node.writeFileSync.wx", "-c", "cmd:cmd.mkdir", "--amplify", "off"]);
    let cmd_trials = if cfg!(windows) { r.oneshot_trials } else { r.trials };
    assert_eq!(with_cmd.unwrap().trials, cmd_trials);
    let given = race_plan(&[&TWO[..], &["-n", "7", "--timeout", "40", "--amplify", "off"]].concat()).unwrap();
    assert_eq!((given.trials, given.options.startup_timeout), (7, Duration::from_secs(40)));
    // the same nonce formula for both
    let at = jiff::Timestamp::from_nanosecond(0x1234_5678_9abc_def0).unwrap();
    assert_eq!(nonce(at), "9abcdef0");
    assert_eq!(run.nonce.len(), nonce(run.date).len());
}

#[test]
fn flag_values_are_parsed_once() {
    assert_eq!(parse_offsets(Some("0, 500,1000,500")).unwrap(), Some(vec![0, 500, 1000]));
    for bad in ["", "x", "-5", "2000000", "1.5", "1,,2", "1,"] {
        assert!(parse_offsets(Some(bad)).unwrap_err().to_string().contains("--offsets"), "{bad}");
    }
    assert_eq!(parse_max_rate(Some("0.01")).unwrap(), Some(0.01));
    assert_eq!(parse_max_rate(Some("2.5%")).unwrap(), Some(0.025));
    for bad in ["0", "1", "150%", "abc", "-0.1", "NaN"] {
        assert!(parse_max_rate(Some(bad)).unwrap_err().to_string().contains("--max-rate"), "{bad}");
    }
    assert_eq!(parse_targets("file, absent,file").unwrap(), [TargetState::File, TargetState::Absent]);
    assert_eq!(parse_segment(false, Some("a b")).unwrap().as_deref(), Some("a b"));
    assert!(parse_segment(true, Some("ignored")).unwrap().unwrap().contains("日本語"));
    let plan = run_plan(&["--amplify", "off", "--scenario", "second-comer", "--target", "dir,file"]).unwrap();
    assert_eq!(plan.options.targets, [TargetState::Dir, TargetState::File]);
    assert!(plan.options.second_comer && !plan.options.race);
    assert!(matches!(plan.options.amplify, Amplify::Off));
}

#[test]
fn attempts_are_estimated_per_cell() {
    let race = RaceShape {
        contenders: 3,
        trials: 200,
        max_trials: Some(5000),
        natural: true,
        natural_offsets_us: None,
        amplified_offsets_us: Some(vec![0, 500]),
        amplified_unavailable: None,
    };
    let cell = |scenario, relative, race: Option<RaceShape>| CellPlan {
        id: String::new(),
        runtime: "node".into(),
        variant: "node.x".into(),
        scenario,
        target: TargetState::Absent,
        source: None,
        control: false,
        relative,
        race,
        conditional: false,
    };
    let cells = [
        cell(Scenario::SecondComer, true, None),
        cell(Scenario::SecondComer, false, None),
        cell(Scenario::Race, false, Some(race)),
        cell(Scenario::Publish, false, None),
    ];
    assert_eq!(cells[2].attempts(), (3 * 200 * 2, 3 * 5000 * 2));
    let want = Estimate { second_comer: 3, race_min: 1200, race_max: 30000, handoff_cells: 1 };
    assert_eq!(Estimate::of(&cells), want, "a hand-off cell is no second-comer attempt");
}

/// `--races core` on Bun with its control selected: the control's row (a promise form) is
/// not a core race, yet the family's control race is planned, as the engine runs it (found
/// in review: the dry run counted one cell too few, and the progress bar missed it).
/// A found Bun at a made-up path, with its adapter's families: for plans that need a runtime
/// and start nothing.
fn bun() -> crate::runtime::Runtime {
    crate::runtime::Runtime {
        name: "bun",
        label: "bun 1.4.5".into(),
        version: "1.4.5".into(),
        path: Some(std::path::PathBuf::from("/bin/true")),
        status: Status::Found,
        families: crate::runtime::adapter("bun").unwrap().families().to_vec(),
        artifact: None,
        selector: "bun".into(),
        adapter: crate::runtime::adapter("bun").unwrap(),
    }
}

#[test]
fn a_selected_control_outside_the_race_scope_is_still_raced() {
    let plan =
        run_plan(&["-r", "bun", "-v", "bun.file.exists+write,node.writeFileSync.wx", "--races", "core"]).unwrap();
    let bun = bun();
    let races: Vec<String> = plan
        .cells(std::slice::from_ref(&bun))
        .into_iter()
        .filter(|c| c.scenario == Scenario::Race)
        .map(|c| c.variant)
        .collect();
    // the node family's control (not selected) after its row, then Bun's (selected, and
    // left out before: the engine raced it, the plan did not count it)
    assert_eq!(races, ["node.writeFileSync.wx", "node.existsSync+writeFileSync", "bun.file.exists+write"]);
}

/// The one cell list, in `results.json` order: per family each row's second comers (one per
/// target) then its race, the family's unselected control after its rows, then the hand-off
/// recipes, publish before claim; under `--races auto` the rows' races are conditional, the
/// control's never.
#[test]
fn the_cell_list_is_in_results_order() {
    let args = ["-r", "bun", "-v", "node.writeFileSync.wx,node.mkdirSync,publish.*,claim.*", "--target", "absent,file"];
    let args = [&args[..], &["--no-relative"]].concat();
    let scenarios = ["--scenario", "second-comer,race,publish,claim", "--races", "auto"];
    let plan = run_plan(&[&args[..], &scenarios].concat()).unwrap();
    let cells: Vec<String> = plan
        .cells(&[bun()])
        .iter()
        .map(|c| {
            let conditional = if c.conditional { " ?" } else { "" };
            format!("{} {} {}{conditional}", c.variant, c.scenario.as_str(), c.target.as_str())
        })
        .collect();
    let mut want = vec![
        "node.writeFileSync.wx second-comer absent",
        "node.writeFileSync.wx second-comer file",
        "node.writeFileSync.wx race absent ?",
        "node.mkdirSync second-comer absent",
        "node.mkdirSync second-comer file",
        "node.mkdirSync race absent ?",
        "node.existsSync+writeFileSync race absent",
    ];
    let asked = [Scenario::Publish, Scenario::Claim];
    let recipes = crate::handoff::recipes().iter().filter(|r| asked.contains(&r.scenario));
    let handoffs: Vec<String> = recipes.map(|r| format!("{} {} absent", r.id, r.scenario.as_str())).collect();
    want.extend(handoffs.iter().map(String::as_str));
    assert_eq!(cells, want);
}

/// The dry run's closing line counts hand-off recipes apart from second-comer attempts, once.
#[test]
fn the_dry_run_counts_hand_off_recipes_once() {
    let plan = run_plan(&["-r", "bun", "-v", "publish.*", "--scenario", "publish", "--amplify", "off"]).unwrap();
    let text = super::dry_run_text(&plan.dry_run_report(&[bun()]));
    assert_eq!(text.matches("hand-off recipe(s)").count(), 1, "{text}");
    assert!(text.contains("6 cells; estimated attempts: 0 second-comer, 0 race, and 6 hand-off recipe(s)"), "{text}");
}

#[test]
fn a_variant_pattern_may_pick_one_kind_of_source() {
    let rows = |v: &str| {
        let plan = run_plan(&["-v", v, "--amplify", "off"]).unwrap();
        plan.variants.iter().map(|v| crate::matrix::Variant::label(&v.id, v.cell_source())).collect::<Vec<_>>()
    };
    assert_eq!(rows("node.renameSync@empty-dir"), ["node.renameSync ← empty-dir"]);
    assert_eq!(rows("node.renameSync@file"), ["node.renameSync"], "the first kind keeps the plain label");
    assert_eq!(rows("node.renameSync"), ["node.renameSync", "node.renameSync ← empty-dir", "node.renameSync ← dir"]);
    // a kind applies to the variants of its own pattern only
    let both = rows("node.renameSync@dir,node.promises.rename");
    assert_eq!(both.len(), 4, "{both:?}");
    assert!(both.contains(&"node.renameSync ← dir".to_string()));
    for (bad, says) in [
        ("node.writeFileSync.wx@dir", "takes a dir source (they take: none)"),
        ("node.renameSync@blob", "unknown source kind 'blob'"),
        ("nothing.here@dir", "matches no variant"),
    ] {
        let e = run_plan(&["-v", bad, "--amplify", "off"]).unwrap_err().to_string();
        assert!(e.contains("--variant") && e.contains(says), "{bad}: {e}");
    }
}

#[test]
fn the_default_run_races_every_open_row_and_quick_races_each_calls_plain_form() {
    let plan_of = |args: &[&str]| run_plan(&[args, &["--amplify", "off"]].concat()).unwrap();
    let races = |args: &[&str]| {
        let plan = plan_of(args);
        plan.variants
            .iter()
            .filter(|v| plan.options.races(v))
            .map(|v| (v.id.clone(), v.cell_source()))
            .collect::<Vec<_>>()
    };
    let has = |set: &[(String, Option<SourceKind>)], id: &str, src: Option<SourceKind>| {
        set.iter().any(|(i, s)| i == id && *s == src)
    };
    // the default: every form and source kind may be raced, each only if its second comers
    // leave the row open (the engine decides), with the trials the bound needs
    let default = plan_of(&[]);
    assert_eq!(default.options.races, RaceScope::Auto);
    assert_eq!(default.options.trials, DEFAULT_RUN_TRIALS as usize);
    assert_eq!(DEFAULT_RUN_TRIALS as usize, crate::verdict::MIN_TRIALS_FOR_SAFE, "the default reaches the bound");
    let cells = default.cells(&[]);
    assert!(cells.iter().all(|c| c.race.is_none() || c.conditional || c.control));
    for auto in [races(&[]), races(&["--races", "auto"])] {
        assert!(has(&auto, "node.promises.writeFile.wx", None));
        assert!(has(&auto, "node.renameSync", Some(SourceKind::EmptyDir)));
    }
    // --quick: each call's plain form, 30 trials
    let quick = races(&["--quick"]);
    assert_eq!(plan_of(&["--quick"]).options.trials, crate::cli::QUICK_RUN_TRIALS as usize);
    assert!(has(&quick, "node.writeFileSync.wx", None));
    assert!(has(&quick, "node.renameSync", None), "the first source kind is the plain form");
    assert!(!has(&quick, "node.renameSync", Some(SourceKind::EmptyDir)));
    assert!(!has(&quick, "node.promises.writeFile.wx", None), "a promise form is not raced by --quick");
    assert!(!has(&quick, "node.createWriteStream.wx", None));
    for all in [races(&["--thorough"]), races(&["--races", "all"]), races(&["-v", "node.*"])] {
        assert!(has(&all, "node.promises.writeFile.wx", None));
        assert!(has(&all, "node.renameSync", Some(SourceKind::EmptyDir)));
    }
    assert!(!has(&races(&["-v", "node.*", "--races", "core"]), "node.promises.writeFile.wx", None));
    assert!(races(&["--scenario", "second-comer"]).is_empty(), "no race without the race scenario");
    for bad in
        [&["--against", "all", "--contender-kind", "thread"][..], &["--against", "cover", "--scenario", "second-comer"]]
    {
        let e = match run_plan(bad) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{bad:?} was accepted"),
        };
        assert!(e.contains("--against"), "{bad:?}: {e}");
    }
    assert_eq!(run_plan(&["--scenario", "second-comer"]).unwrap().against, AgainstScope::None);
    let both = Cli::try_parse_from(["conformance", "run", "--quick", "--thorough"]);
    assert!(both.is_err_and(|e| e.kind() == clap::error::ErrorKind::ArgumentConflict));
}

/// `--estimate-from` reads the file and the dry run gives seconds from its cells' times (the
/// fixture's Node cells time Bun's node:fs calls, another runtime's); without one, from the
/// committed baseline built into the binary; a file that does not read names itself.
#[test]
fn the_dry_run_estimates_seconds_from_an_earlier_runs_cells() {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/results/base.json");
    let args = ["-r", "bun", "-v", "node.writeFileSync.wx", "--scenario", "second-comer,race", "--amplify", "off"];
    let with: Vec<&str> = args.iter().copied().chain(["--dry-run", "--estimate-from", fixture]).collect();
    let plan = run_plan(&with).unwrap();
    let d = plan.dry_run_report(&[bun()]);
    let e = &d.seconds;
    assert_eq!(e.from, std::path::PathBuf::from(fixture));
    assert_eq!(e.same_cell, 0, "{e:?}");
    assert!(e.same_call > 0 && e.max_s > 0.0, "{e:?}");
    let text = super::dry_run_text(&d);
    assert!(text.contains("estimated time: ") && text.contains(" s of measuring, from the cells of "), "{text}");

    // without one, the committed baseline's call times built into the binary
    let without: Vec<&str> = args.iter().copied().chain(["--dry-run"]).collect();
    let d = run_plan(&without).unwrap().dry_run_report(&[bun()]);
    assert!(d.seconds.built_in && d.seconds.same_call > 0 && d.seconds.max_s > 0.0, "{:?}", d.seconds);
    let text = super::dry_run_text(&d);
    assert!(text.contains("s of measuring, from the committed baseline built into this binary"), "{text}");

    let missing: Vec<&str> = args.iter().copied().chain(["--dry-run", "--estimate-from", "/no/such/r.json"]).collect();
    let Err(err) = run_plan(&missing) else { panic!("a file that does not read is an error") };
    let err = err.to_string();
    assert!(err.contains("/no/such/r.json"), "{err}");
    // only with --dry-run
    let c = Cli::try_parse_from(["conformance", "run", "--estimate-from", fixture]);
    assert!(c.is_err(), "--estimate-from without --dry-run parsed");
}

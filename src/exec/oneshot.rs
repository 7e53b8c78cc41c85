//! The one-shot driver: one process per attempt, the attempt's data in environment variables,
//! `ready` and `result` on stdout (`probes/PROTOCOL.md`, one-shot mode; cmd.exe). The command
//! run by the probe shares the console: its own output is evidence, and a confirmation prompt
//! it prints is answered `N`.

#![expect(clippy::result_large_err, reason = "an Attempt is data (see driver.rs)")]

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::contender::{join, Attempt, RecipeOutput, RecipeSpec, Spec, Timeouts, EVIDENCE_CHARS};
use super::driver::{control_child, fail_child, Control, Driver};
use super::process::{Child, Launch, ReadError};
use super::protocol::{parse_line, time_of_day_us, FromProbe};
use crate::domain::Report;

/// The recipe parameters a one-shot probe gets, each in its own environment variable (empty
/// when the request has none): `temp` (by default, for a publish writer, beside the target:
/// `cmdloop::default_temp`), claim's folders and output, the update worker's counter, lock and
/// increments, the ledger worker's folder, key, effect file and processed list
/// (`matrices/handoff/recipes.toml`; `probes/PROTOCOL.md`, *Recipes in one-shot mode*).
pub const RECIPE_ENV: [(&str, &str); 11] = [
    ("temp", "CONFORMANCE_TEMP"),
    ("incoming", "CONFORMANCE_INCOMING"),
    ("processing", "CONFORMANCE_PROCESSING"),
    ("output", "CONFORMANCE_OUTPUT"),
    ("counter", "CONFORMANCE_COUNTER"),
    ("lock", "CONFORMANCE_LOCK"),
    ("increments", "CONFORMANCE_INCREMENTS"),
    ("ledger", "CONFORMANCE_LEDGER"),
    ("key", "CONFORMANCE_KEY"),
    ("effect", "CONFORMANCE_EFFECT"),
    ("list", "CONFORMANCE_LIST"),
];

/// The recipes script of a one-shot probe: `recipes` with the probe script's extension, beside
/// it (`probes/cmd/probe.cmd` → `probes/cmd/recipes.cmd`, `probes/sh/probe.sh` →
/// `probes/sh/recipes.sh`).
pub fn recipes_script(probe: &str) -> String {
    let name = match probe.rsplit(['\\', '/']).next().and_then(|n| n.rsplit_once('.')) {
        Some((_, ext)) => format!("recipes.{ext}"),
        None => super::cmdloop::RECIPES_SCRIPT.to_string(),
    };
    super::cmdloop::sibling(probe, &name)
}

/// A one-shot probe: a new process for every attempt.
#[derive(Debug)]
pub struct OneShot {
    launch: Launch,
    cwd: PathBuf,
    timeouts: Timeouts,
    child: Option<Child>,
    /// The recipe of the attempt in flight, if it is one (protocol 2).
    recipe: Option<RecipeSpec>,
    /// This driver's recipe folder, relative to `cwd` (`.oneshot-<harness pid>-<n>`): the
    /// content a publish writer copies, a reader's copies, the stop file.
    dir_name: String,
}

/// Makes one-shot recipe folder names unique within the harness process.
static NEXT_DIR: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl OneShot {
    /// A driver that will start `launch` in `cwd` once per attempt.
    pub fn new(launch: Launch, cwd: PathBuf, timeouts: Timeouts) -> OneShot {
        let n = NEXT_DIR.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir_name = format!(".oneshot-{}-{n}", std::process::id());
        OneShot { launch, cwd, timeouts, child: None, recipe: None, dir_name }
    }

    /// Sets up a recipe's data (protocol 2, `probes/PROTOCOL.md`, *Recipes in one-shot
    /// mode*): a fresh recipe folder holding the publish content or an empty `reads` folder,
    /// and the environment naming the recipe, its folder, the recipes script beside the probe
    /// ([`recipes_script`]) and the recipe's parameters ([`RECIPE_ENV`]). Errors:
    /// `Unsupported` for a size out of range, `HarnessError` when the folder cannot be made.
    fn recipe_env(&self, spec: &Spec, r: &RecipeSpec) -> Result<Vec<(&'static str, String)>, Attempt> {
        let dir = self.cwd.join(&self.dir_name);
        let io = |e: std::io::Error| Attempt::harness_error(format!("cannot prepare {}: {e}", dir.display()));
        match std::fs::remove_dir_all(&dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(e)),
            _ => {}
        }
        std::fs::create_dir(&dir).map_err(io)?;
        if let Some(content) = super::cmdloop::publish_content(spec, r)? {
            std::fs::write(dir.join("content"), content).map_err(io)?;
        }
        if r.recipe == super::cmdloop::READER {
            std::fs::create_dir(dir.join("reads")).map_err(io)?;
        }
        let script = self.launch.args.last().map(|a| a.to_string_lossy().into_owned()).unwrap_or_default();
        let mut env = vec![
            ("CONFORMANCE_RECIPE", r.recipe.clone()),
            ("CONFORMANCE_RECIPE_DIR", self.dir_name.clone()),
            ("CONFORMANCE_RECIPES", recipes_script(&script)),
        ];
        for (param, var) in RECIPE_ENV {
            let value = match r.params.get(param) {
                Some(serde_json::Value::String(s)) => s.clone(),
                Some(serde_json::Value::Number(n)) => n.to_string(),
                _ if param == "temp" && r.recipe.starts_with("publish.") => super::cmdloop::default_temp(spec),
                _ => String::new(),
            };
            env.push((var, value));
        }
        Ok(env)
    }

    /// The attempt's data as the probe's variables (name, value), in the order of
    /// `probes/PROTOCOL.md` (*One-shot mode*): a recipe's first ([`OneShot::recipe_env`], which
    /// also makes its folder), then the variant, target, source, token and mark (empty when
    /// there is none). Remembers the recipe for [`Driver::finish`] and [`Driver::stop`].
    /// Errors: those of [`OneShot::recipe_env`].
    pub(crate) fn request(&mut self, spec: &Spec) -> Result<Vec<(&'static str, String)>, Attempt> {
        self.recipe = spec.recipe.clone();
        let mut env = match &spec.recipe {
            Some(r) => self.recipe_env(spec, r)?,
            None => Vec::new(),
        };
        env.extend([
            ("CONFORMANCE_VARIANT", spec.variant.clone()),
            ("CONFORMANCE_TARGET", spec.target.clone()),
            ("CONFORMANCE_SOURCE", spec.source.clone().unwrap_or_default()),
            ("CONFORMANCE_TOKEN", spec.token.clone()),
            ("CONFORMANCE_MARK", spec.mark.clone().unwrap_or_default()),
        ]);
        Ok(env)
    }

    /// After a `read.poll` recipe's result: the counters read from the copies in the recipe
    /// folder (`cmdloop::reader_counters`) added to `attempt`'s. Other attempts are left alone.
    pub(crate) fn add_reader_counters(&self, attempt: &mut Attempt) {
        if let (Some(r), Some(out)) = (&self.recipe, attempt.recipe.as_mut()) {
            if r.recipe == super::cmdloop::READER {
                let reads = self.cwd.join(&self.dir_name).join("reads");
                super::cmdloop::reader_counters(&reads, &r.params, &mut out.counters);
            }
        }
    }

    /// Kills the process tree and builds a fault attempt with the stderr tail as evidence.
    fn fail(&mut self, report: Report, why: String) -> Attempt {
        fail_child(&mut self.child, report, &why)
    }

    /// Lets the finished process exit (killing it after 2 s).
    fn discard(&mut self) {
        if let Some(mut c) = self.child.take() {
            if c.exit_status(Duration::from_millis(2000)).is_none() {
                c.kill();
            }
        }
    }
}

impl Driver for OneShot {
    fn start(&mut self) -> Result<(), Attempt> {
        Ok(())
    }

    fn begin(&mut self, spec: &Spec) -> Result<(), Attempt> {
        let mut launch = self.launch.clone();
        for (k, v) in self.request(spec)? {
            launch.env.push((OsString::from(k), OsString::from(v)));
        }
        let child = Child::spawn(&launch, &self.cwd)
            .map_err(|e| Attempt::fault(Report::Crashed, format!("cannot start {}: {e}", launch.display())))?;
        self.child = Some(child);
        Ok(())
    }

    fn ready(&mut self) -> Result<(), Attempt> {
        let Some(child) = self.child.as_mut() else {
            return Err(Attempt::fault(Report::Crashed, "no probe process"));
        };
        let line = match child.read_line_or_stop(Instant::now() + self.timeouts.startup) {
            Ok(l) => l,
            Err(ReadError::Interrupted) => {
                return Err(self.fail(Report::Interrupted, "interrupted before the probe answered".into()))
            }
            Err(ReadError::Timeout) => return Err(self.fail(Report::Timeout, "no ready in time".into())),
            Err(ReadError::Closed) => return Err(self.fail(Report::Crashed, "probe exited before ready".into())),
        };
        match parse_line(&line) {
            Ok(FromProbe::Ready { supported: true, .. }) => Ok(()),
            Ok(FromProbe::Ready { reason, .. }) => {
                self.discard();
                Err(Attempt::fault(Report::Unsupported, reason.unwrap_or_else(|| "unsupported".into())))
            }
            Ok(other) => Err(self.fail(Report::Crashed, format!("expected ready, got {other:?}"))),
            Err(e) => Err(self.fail(Report::Crashed, e)),
        }
    }

    fn release(&mut self) -> Result<(), Attempt> {
        let Some(child) = self.child.as_mut() else {
            return Err(Attempt::fault(Report::Crashed, "no probe process"));
        };
        if let Err(e) = child.write_line("go") {
            return Err(self.fail(Report::Crashed, format!("cannot release probe: {e}")));
        }
        Ok(())
    }

    /// Waits for the `result` (`await_result`), then lets the process exit.
    fn finish(&mut self) -> Attempt {
        let awaited = match await_result(&mut self.child, &self.timeouts, &Child::stderr_tail) {
            Ok(w) => w,
            Err(fault) => return fault,
        };
        let console = self.child.as_ref().map(Child::stderr_tail).unwrap_or_default();
        self.discard();
        let mut attempt = awaited.attempt(console, None);
        self.add_reader_counters(&mut attempt);
        attempt
    }

    /// Ends a loop recipe (`read.poll`): a `stop` file in the recipe folder, as in loop
    /// mode. Errors: a harness error when it cannot be written.
    fn stop(&mut self) -> Result<(), Attempt> {
        if self.recipe.is_none() {
            return Ok(());
        }
        std::fs::write(self.cwd.join(&self.dir_name).join("stop"), b"")
            .map_err(|e| Attempt::harness_error(format!("cannot write the cmd probe's stop file: {e}")))
    }

    fn control(&mut self, control: Control) -> Result<(), Attempt> {
        control_child(self.child.as_mut(), control)
    }

    fn process_per_attempt(&self) -> bool {
        true
    }

    fn shutdown(&mut self) {
        if let Some(mut c) = self.child.take() {
            c.kill();
        }
        let _ = std::fs::remove_dir_all(self.cwd.join(&self.dir_name));
    }
}

/// What [`await_result`] saw of one attempt: the probe's `result` and what came around it.
#[derive(Debug)]
pub(crate) struct Awaited {
    /// Whether the call returned success.
    pub ok: bool,
    /// The attempt id of the result (loop mode), `None` in one-shot mode.
    pub id: Option<u64>,
    /// cmd's ERRORLEVEL after the call.
    pub errorlevel: Option<i64>,
    /// The raw error the probe sent (a `MarkError`), if any.
    pub error: Option<crate::domain::RawError>,
    /// cmd's `%TIME%` before and after the call, converted to µs since the Unix epoch where it
    /// parses (not under Wine, whose `%TIME%` has no seconds).
    pub t0_us: Option<f64>,
    /// See `t0_us`.
    pub t1_us: Option<f64>,
    /// cmd's `%TIME%` before the call as printed, for the reason a trial has no stamps.
    pub t0_text: Option<String>,
    /// True when a confirmation prompt was answered `N` before the result came.
    pub answered: bool,
    /// Output on stdout that was not protocol (the command's own, e.g. a prompt), joined.
    pub stray: String,
    /// Protocol 2 (the loop's recipes): the step that failed, `None` on success or for a
    /// variant.
    pub step: Option<String>,
    /// Protocol 2 (the loop's recipes): the recipe's counters; empty for a variant.
    pub counters: std::collections::BTreeMap<String, i64>,
    /// True when the result carried `step` or `counters`: it answered a recipe.
    pub is_recipe: bool,
}

impl Awaited {
    /// The attempt this result makes: [`Report::Prompted`] if a prompt was answered, else
    /// success or error by `ok`. `console` is the command's output during the attempt (the
    /// probe's stderr): the raw message of a failed call that carries none, and evidence of a
    /// prompt. `stamps` (µs since the Unix epoch, before and after the call) replace the
    /// `%TIME%` ones where given.
    pub fn attempt(self, console: String, stamps: Option<(Option<f64>, Option<f64>)>) -> Attempt {
        let Awaited {
            ok,
            errorlevel,
            error,
            t0_us,
            t1_us,
            t0_text,
            answered,
            mut stray,
            step,
            counters,
            is_recipe,
            ..
        } = self;
        let (t0_us, t1_us) = match stamps {
            Some((a, b)) => (a.or(t0_us), b.or(t1_us)),
            None => (t0_us, t1_us),
        };
        // wall-clock stamps (the file clock, cmd's %TIME%) on the harness's timeline, without
        // the window check: %TIME%'s centiseconds are wider than most windows
        let now = super::clock::now();
        let (t0_us, t1_us) = (
            t0_us.map(|t| super::clock::wall_to_timeline(t, now)),
            t1_us.map(|t| super::clock::wall_to_timeline(t, now)),
        );
        let unstamped = t0_us.is_none().then(|| unstamped_reason(t0_text.as_deref()));
        let console = console.trim().to_string();
        if answered && !console.is_empty() {
            // cmd prints its confirmation prompt on stderr: keep it as evidence
            if !stray.is_empty() {
                stray.push_str(" | ");
            }
            stray.push_str(&console);
        }
        let mut error = if ok { None } else { Some(error.unwrap_or_default()) };
        if let Some(e) = error.as_mut() {
            e.errorlevel = errorlevel;
            if e.kind.is_empty() {
                e.kind = "errorlevel".into();
            }
            if e.message.is_empty() {
                e.message = console;
            }
        }
        let report = if answered {
            Report::Prompted
        } else if ok {
            Report::Success
        } else {
            Report::Error
        };
        let evidence = (!stray.is_empty()).then_some(stray);
        let recipe = is_recipe.then(|| Box::new(RecipeOutput { step, counters, errors_sample: Vec::new() }));
        Attempt { t0_us, t1_us, error, evidence, unstamped, recipe, ..Attempt::new(report) }
    }
}

/// Waits for the `result` line of a cmd probe (one-shot or loop mode), which shares its
/// console with the command it runs. `console` gives the probe's console output of this
/// attempt so far (its stderr). A confirmation prompt the command printed (see
/// [`shows_prompt`]) is answered with `N` lines as soon as it is seen (the console is looked
/// at every [`PROMPT_POLL`]: a command that printed its prompt waits for an answer, so a later
/// answer would only cost time), and the attempt is then [`Report::Prompted`]. A slow command
/// that printed no prompt keeps its real ending (its result, a timeout, or a crash). Lines before the result that are
/// not protocol are kept as evidence ([`Awaited::stray`]).
///
/// Errors: the fault (timeout, a probe that exited without a result, an interrupt); the
/// process tree is then killed and `child` emptied.
pub(crate) fn await_result(
    child: &mut Option<Child>,
    timeouts: &Timeouts,
    console: &dyn Fn(&Child) -> String,
) -> Result<Awaited, Attempt> {
    let deadline = Instant::now() + timeouts.attempt;
    let mut answered = false;
    let mut stray = String::new();
    loop {
        let now = Instant::now();
        if now >= deadline {
            let report = if answered { Report::Prompted } else { Report::Timeout };
            let ev = format!("no result within {} ms", timeouts.attempt.as_millis());
            return Err(fail_child(child, report, &join(&ev, &stray)));
        }
        if !answered {
            // no result yet: answer only a confirmation prompt the command has printed
            let tail = child.as_ref().map(console).unwrap_or_default();
            if shows_prompt(&tail) || shows_prompt(&stray) {
                answered = true;
                if let Some(c) = child.as_mut() {
                    let _ = c.write_line("N");
                    let _ = c.write_line("N");
                }
            }
        }
        let wake = deadline.min(now + if answered { Duration::from_millis(200) } else { PROMPT_POLL });
        let line = match child.as_mut().map(|c| c.read_line_or_stop(wake)) {
            None => return Err(Attempt::fault(Report::Crashed, "no probe process")),
            Some(Ok(l)) => l,
            Some(Err(ReadError::Timeout)) => continue,
            Some(Err(ReadError::Interrupted)) => {
                return Err(fail_child(child, Report::Interrupted, "interrupted before the probe answered"))
            }
            Some(Err(ReadError::Closed)) => {
                let report = if answered { Report::Prompted } else { Report::Crashed };
                let printed = if stray.is_empty() { String::new() } else { format!("; printed: {stray}") };
                return Err(fail_child(child, report, &format!("probe exited without a result{printed}")));
            }
        };
        // the probe shares stdout with the command it runs: a prompt printed without a
        // newline lands in front of the result line. Keep it as evidence.
        let (prefix, json) = match line.find("{\"type\":\"result\"") {
            Some(i) => (line[..i].trim().to_string(), line[i..].to_string()),
            None => (String::new(), line.clone()),
        };
        if !prefix.is_empty() {
            stray.push_str(&prefix);
        }
        match parse_line(&json) {
            Ok(FromProbe::Result { id, ok, t0_us, t1_us, errorlevel, error, t0, t1, step, counters, .. }) => {
                let stamp = |s: &Option<String>| s.as_deref().and_then(time_of_day_us).map(epoch_us_of_local_time);
                let t0_us = t0_us.or_else(|| stamp(&t0));
                let t1_us = t1_us.or_else(|| stamp(&t1));
                // a recipe's result carries `"step"` (null on success) and counters
                let is_recipe = step.is_some() || !counters.is_empty() || json.contains("\"step\":");
                return Ok(Awaited {
                    ok,
                    id,
                    errorlevel,
                    error,
                    t0_us,
                    t1_us,
                    t0_text: t0,
                    answered,
                    stray,
                    step,
                    counters,
                    is_recipe,
                });
            }
            _ => {
                // the command's own console output (e.g. "1 file(s) moved."): evidence, not protocol
                if stray.len() < EVIDENCE_CHARS * 4 {
                    if !stray.is_empty() {
                        stray.push_str(" | ");
                    }
                    stray.push_str(&line);
                }
            }
        }
    }
}

/// Why a one-shot or loop result has no stamps: cmd's `%TIME%` (`t0`) that does not give the
/// centisecond (Wine's `8:10 PM`), or no stamp at all (the sh probe under dash, whose shell
/// has no clock it can read without starting a process, sends neither `t0` nor `t0_us`).
fn unstamped_reason(t0_text: Option<&str>) -> String {
    match t0_text {
        Some(t) => format!("cmd gave no time to the centisecond ({t})"),
        None => "the probe sent no stamps (no t0/t1 or t0_us/t1_us)".to_string(),
    }
}

/// How often `await_result` looks at the console for a prompt while no result has come.
pub const PROMPT_POLL: Duration = Duration::from_millis(10);

/// Microseconds in a day.
const DAY_US: f64 = 86_400e6;

/// Turns a local time of day in µs (cmd's `%TIME%`, which is local wall-clock time) into µs
/// since the Unix epoch, the unit of every other probe's stamps (`probes/PROTOCOL.md`), taking
/// the date from the harness's clock: the stamp is the latest such time not after now (plus
/// 12 h of slack for clocks that disagree), so a stamp from just before midnight read just
/// after it lands on the previous day.
fn epoch_us_of_local_time(tod_us: f64) -> f64 {
    epoch_us_of_local_time_at(tod_us, &jiff::Zoned::now())
}

/// [`epoch_us_of_local_time`] with the harness's clock read at `now`, so that the day
/// boundary can be tested at any hour.
fn epoch_us_of_local_time_at(tod_us: f64, now: &jiff::Zoned) -> f64 {
    let t = now.time();
    let now_tod = f64::from(t.hour()) * 3600e6
        + f64::from(t.minute()) * 60e6
        + f64::from(t.second()) * 1e6
        + f64::from(t.subsec_nanosecond()) / 1e3;
    let mut ago = now_tod - tod_us;
    if ago < -DAY_US / 2.0 {
        ago += DAY_US;
    }
    now.timestamp().as_microsecond() as f64 - ago
}

/// True when `text` (a one-shot command's console output) holds a confirmation prompt:
/// cmd.exe's `Overwrite NAME? (Yes/No/All):` (Windows, `move`/`copy` help: "/-Y Causes
/// prompting to confirm you want to overwrite") or Wine's `Overwrite NAME? (Yes|No)` (Wine
/// 8.0's `cmd`, `programs/cmd/builtins.c`). Localised Windows builds keep the `(Yes/No/All)`
/// answer list.
pub fn shows_prompt(text: &str) -> bool {
    let t = text.to_ascii_lowercase();
    ["(yes/no", "(yes|no", "(y/n)", "[y/n]"].iter().any(|p| t.contains(p))
}

#[cfg(test)]
mod tests {
    use super::{epoch_us_of_local_time, epoch_us_of_local_time_at, recipes_script, shows_prompt, Awaited, DAY_US};

    #[test]
    fn the_recipes_script_has_the_probe_scripts_extension_and_folder() {
        assert_eq!(recipes_script("/p/probes/sh/probe.sh"), "/p/probes/sh/recipes.sh");
        assert_eq!(recipes_script(r"Z:\p\cmd\probe.cmd"), r"Z:\p\cmd\recipes.cmd");
        assert_eq!(recipes_script("probe"), "recipes.cmd");
        // a dot in a folder name is not the script's extension
        assert_eq!(recipes_script("/a.b/probe"), "/a.b/recipes.cmd");
    }

    #[test]
    fn cmd_time_of_day_stamps_become_epoch_microseconds() {
        let now = jiff::Zoned::now();
        let t = now.time();
        let tod = (f64::from(t.hour()) * 3600.0 + f64::from(t.minute()) * 60.0 + f64::from(t.second())) * 1e6;
        let epoch = now.timestamp().as_microsecond() as f64;
        let got = epoch_us_of_local_time(tod);
        assert!((got - epoch).abs() < 2e6, "within the second: {got} vs {epoch}");
    }

    #[test]
    fn the_day_of_a_stamp_is_the_latest_not_after_now() {
        let at = |s: &str| s.parse::<jiff::Zoned>().unwrap();
        let us = |z: &jiff::Zoned| z.timestamp().as_microsecond() as f64;
        // a stamp 23:59:59 read at 00:00:01 is from yesterday, two seconds ago, not 24 h ahead
        let after_midnight = at("2026-11-30T00:00:01[UTC]");
        let v = epoch_us_of_local_time_at(DAY_US - 1e6, &after_midnight);
        assert_eq!(v, us(&after_midnight) - 2e6);
        // the same stamp read at noon, an hour before noon, and just after it: today, earlier
        for now in ["2026-11-30T12:00:00[UTC]", "2026-11-30T11:00:00[UTC]", "2026-11-30T12:00:24[UTC]"] {
            let now = at(now);
            let v = epoch_us_of_local_time_at(3_600e6, &now);
            assert_eq!(v, us(&at("2026-11-30T01:00:00[UTC]")), "01:00:00 read at {now}");
        }
        // a stamp a second ahead of the harness's clock (clocks that disagree) stays today
        let noon = at("2026-11-30T12:00:00[UTC]");
        let v = epoch_us_of_local_time_at(12.0 * 3600e6 + 1e6, &noon);
        assert_eq!(v, us(&noon) + 1e6);
    }

    fn awaited(json: &str) -> Awaited {
        let Ok(crate::exec::protocol::FromProbe::Result { ok, t0_us, t1_us, errorlevel, error, t0, .. }) =
            crate::exec::protocol::parse_line(json)
        else {
            panic!("not a result: {json}")
        };
        Awaited {
            ok,
            id: None,
            errorlevel,
            error,
            t0_us,
            t1_us,
            t0_text: t0,
            answered: false,
            stray: String::new(),
            step: None,
            counters: Default::default(),
            is_recipe: false,
        }
    }

    /// The sh probe's results (`probes/sh/probe.sh`): under dash no stamps at all, under bash
    /// `t0_us`/`t1_us` (EPOCHREALTIME, wall clock); the raw error the probe derived from the
    /// tool's stderr is kept, with the exit status as its errorlevel.
    #[test]
    fn sh_results_with_and_without_stamps() {
        let a = awaited(r#"{"type":"result","ok":false,"errorlevel":1,"error":{"type":"mv","code":"ENOENT","errno":null,"hresult":null,"message":"mv: cannot stat 's': No such file or directory"}}"#)
            .attempt("mv: cannot stat 's': No such file or directory".into(), None);
        assert_eq!(a.report, crate::domain::Report::Error);
        assert!(a.t0_us.is_none() && a.t1_us.is_none());
        let why = a.unstamped.as_deref().unwrap_or_default();
        assert!(why.contains("no stamps") && !why.contains("cmd"), "{why}");
        let e = a.error.expect("an error");
        assert_eq!((e.kind.as_str(), e.code.as_deref(), e.errorlevel), ("mv", Some("ENOENT"), Some(1)));
        assert_eq!(e.message, "mv: cannot stat 's': No such file or directory");
        assert_eq!(crate::runtime::normalize(&e), "ENOENT");

        let now = jiff::Timestamp::now().as_microsecond();
        let b = awaited(&format!(
            r#"{{"type":"result","ok":true,"errorlevel":0,"t0_us":{},"t1_us":{},"error":null}}"#,
            now - 300,
            now - 100
        ))
        .attempt(String::new(), None);
        assert_eq!(b.report, crate::domain::Report::Success);
        assert!(b.unstamped.is_none() && b.error.is_none());
        let (t0, t1) = (b.t0_us.unwrap(), b.t1_us.unwrap());
        assert!((t1 - t0 - 200.0).abs() < 1.0, "{t0} {t1}");

        // cmd's %TIME% without seconds (Wine) keeps its reason
        let c = awaited(r#"{"type":"result","ok":true,"errorlevel":0,"t0":"8:10 PM","t1":"8:10 PM"}"#)
            .attempt(String::new(), None);
        assert!(c.unstamped.as_deref().unwrap_or_default().contains("8:10 PM"), "{c:?}");
    }

    #[test]
    fn prompts_are_recognised_by_their_answer_list() {
        assert!(shows_prompt("Overwrite Z:\\tmp\\c1\\target? (Yes|No)"));
        assert!(shows_prompt("Overwrite C:\\t\\target? (Yes/No/All): "));
        assert!(!shows_prompt("A subdirectory or file target already exists."));
        assert!(!shows_prompt(""));
    }
}

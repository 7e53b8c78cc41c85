//! The persistent cmd driver: one `cmd /d /c loop.cmd` process per contender
//! (`probes/cmd/loop.cmd`), kept for a whole API family, answering one attempt after another
//! (`probes/PROTOCOL.md`, loop mode).
//!
//! Data and signals travel apart. The attempt's values (variant, target, source, token, mark
//! and its id) go into files of a loop folder that the probe reads with `set /p`, one value
//! per file, so they reach cmd as data, never as command text; signals are single lines on
//! stdin (`prepare`, `go ID`, `quit`), each written only after the answer to the one before,
//! because Wine's `set /p` takes a whole pipe read, not one line (`probes/cmd/README.md`).
//! Answers come on stdout (`hello`, `ready`, `result`), as in one-shot mode.
//!
//! **Release.** The probe blocks in a `set /p` read of stdin until `go` arrives, so the
//! release is a pipe write per contender like a session probe's, with no polling. Measured
//! with prototypes of both, 3 contenders on the 2 busy cores: the contenders entered their
//! calls with a median spread of about 200 µs; a loop polling for a `go` file (`if not exist …
//! goto wait`, 3 spinning processes on 2 cores) gave about 2,000 µs. The harness's cmd races
//! with this driver then showed p50 350–450 µs (median over cells; 2,000 µs with two more
//! busy loops on the cores).
//!
//! **Clock.** cmd under Wine has no sub-second clock, so the probe reads the harness's file
//! clock ([`super::clock`]) right before and after the call and copies what it read, unparsed,
//! into the loop folder; the harness turns it into µs since the Unix epoch.
//!
//! **Text.** Wine's `set /p` decodes a file in the console code page (measured: UTF-8 bytes of
//! `日本語` came out as `æ—¥æœ¬èªž` from a file, intact from the environment), so request files
//! carry ASCII only: a path inside the probe's working folder is sent as the part after that
//! folder, with a `NAME.root` marker, and the probe joins it to the folder it got once, in full
//! Unicode, through its environment (`CONFORMANCE_ROOT`). Every path the engine hands a probe
//! lies inside the working folder and the rest is ASCII the harness made; anything else is
//! `unsupported` with the reason.
//!
//! **Faults.** A crash, a hang (timeout) or a protocol break ends the attempt as data
//! ([`Attempt`]: crashed, timeout) and kills the process tree; an answered prompt (`prompted`)
//! or a stray line on stdout kills it after the result, so that no attempt inherits another's
//! console state. Either way the next attempt starts a new loop.
//!
//! **Fallback.** When the loop does not start (no `hello` with the expected check text in the
//! start-up time, or the probe exits), the driver makes its attempts with the one-shot driver
//! ([`super::oneshot::OneShot`]) from then on and says so ([`Driver::note`]); the engine
//! writes that into every cell it measures that way.

#![expect(clippy::result_large_err, reason = "an Attempt is data (see driver.rs)")]

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::contender::{Attempt, Spec, Timeouts};
use super::driver::{control_child, fail_child, Control, Driver};
use super::fileclock::FileClock;
use super::oneshot::{await_result, OneShot};
use super::process::{Child, Launch, ReadError};
use super::protocol::{parse_line, FromProbe};
use super::scratch::{spell, PathStyle};
use crate::domain::Report;

/// The loop probe's file name: `probes/cmd/loop.cmd`, beside the one-shot `probe.cmd`.
pub const LOOP_SCRIPT: &str = "loop.cmd";

/// The hand-off recipes the loop calls (`probes/cmd/recipes.cmd`, beside `loop.cmd`), named
/// to the loop in `CONFORMANCE_RECIPES`.
pub const RECIPES_SCRIPT: &str = "recipes.cmd";

/// The recipe whose folder of copies the driver reads after the result ([`reader_counters`]).
pub(crate) const READER: &str = crate::handoff::READER;

/// The line the probe writes on stderr at the end of each attempt, before its `result`
/// (followed by the attempt id): what the command printed during the attempt is what stands
/// between the previous attempt's end and this one.
const END_OF_ATTEMPT: &str = "probe: end of attempt ";

/// How long the harness waits, after a `result`, for the probe's end-of-attempt line on
/// stderr (which it wrote before the result, on another pipe).
const STDERR_GRACE: Duration = Duration::from_millis(500);

/// The persistent cmd driver (see the module documentation).
#[derive(Debug)]
pub struct CmdLoop {
    /// The one-shot launch of the probe; the loop's replaces the script with [`LOOP_SCRIPT`]
    /// and adds its environment.
    launch: Launch,
    cwd: PathBuf,
    timeouts: Timeouts,
    style: PathStyle,
    clock: Option<&'static FileClock>,
    /// The loop folder: absolute, and as the probe names it (relative to `cwd`).
    dir: PathBuf,
    dir_name: String,
    child: Option<Child>,
    /// The attempt in flight, and where its stderr starts (a [`Child::stderr_mark`]).
    pending: Option<u64>,
    stderr_from: u64,
    /// Set when the loop could not start: the one-shot driver used instead, and why.
    fallback: Option<(OneShot, String)>,
    /// How many loop processes this driver started.
    starts: u64,
    /// A loop started ahead of its first use, not yet heard from: the process and the check
    /// text its hello must quote. A retired loop's successor is started at once, so that its
    /// start-up (about 0.2 s under Wine) overlaps the other contenders' (see
    /// [`CmdLoop::retire`]).
    starting: Option<(Child, String)>,
    /// The running loop's hello: its protocol version and the recipes it lists.
    hello: Option<(u32, Vec<String>)>,
    /// The recipe of the attempt in flight, if it is one.
    recipe: Option<crate::exec::contender::RecipeSpec>,
}

/// Makes loop folder names unique within the harness process.
static NEXT_DIR: AtomicU64 = AtomicU64::new(1);

impl CmdLoop {
    /// A driver that will run the cmd probe of `launch` (its one-shot launch) in loop mode in
    /// `cwd`, spelling paths in `style`, reading the time from `clock` where given (see
    /// [`super::fileclock::file_clock`]). Nothing starts until [`Driver::start`] or the first
    /// [`Driver::begin`]; the loop folder `.cmd-loop-<harness pid>-<n>` is made in `cwd` then.
    pub fn new(
        launch: Launch,
        cwd: PathBuf,
        timeouts: Timeouts,
        style: PathStyle,
        clock: Option<&'static FileClock>,
    ) -> CmdLoop {
        let dir_name = format!(".cmd-loop-{}-{}", std::process::id(), NEXT_DIR.fetch_add(1, Ordering::Relaxed));
        CmdLoop {
            dir: cwd.join(&dir_name),
            dir_name,
            launch,
            cwd,
            timeouts,
            style,
            clock,
            child: None,
            pending: None,
            stderr_from: 0,
            fallback: None,
            starts: 0,
            starting: None,
            hello: None,
            recipe: None,
        }
    }

    /// The launch of the loop: the one-shot launch with its last argument, the probe script,
    /// replaced by [`LOOP_SCRIPT`] in the same folder, plus the loop folder, the working
    /// folder as the probe spells it, and the clock file.
    fn loop_launch(&self) -> Launch {
        let mut l = self.launch.clone();
        let mut recipes = String::new();
        if let Some(script) = l.args.last_mut() {
            recipes = sibling(&script.to_string_lossy(), RECIPES_SCRIPT);
            *script = sibling(&script.to_string_lossy(), LOOP_SCRIPT).into();
        }
        let clock = self.clock.map(|c| spell(c.path(), self.style)).unwrap_or_default();
        l.with_env("CONFORMANCE_LOOP_DIR", &self.dir_name)
            .with_env("CONFORMANCE_RECIPES", recipes)
            .with_env("CONFORMANCE_ROOT", spell(&self.cwd, self.style))
            .with_env("CONFORMANCE_CLOCK", clock)
    }

    /// Starts a loop process (with a new check file for its hello to quote) without waiting
    /// for it. Errors: why it could not be started.
    fn spawn_loop(&mut self) -> Result<(Child, String), LoopStart> {
        let check = format!("loop-{}-{}", self.dir_name.trim_start_matches(".cmd-loop-"), self.starts + 1);
        std::fs::create_dir_all(&self.dir)
            .and_then(|()| std::fs::write(self.dir.join("check"), format!("{check}\r\n")))
            .map_err(|e| LoopStart::Failed(format!("cannot write the loop folder {}: {e}", self.dir.display())))?;
        let launch = self.loop_launch();
        let child = Child::spawn(&launch, &self.cwd)
            .map_err(|e| LoopStart::Failed(format!("cannot start {}: {e}", launch.display())))?;
        self.starts += 1;
        Ok((child, check))
    }

    /// Starts the loop (or takes the one started ahead, [`CmdLoop::starting`]) and waits for
    /// its `hello`. Errors: why it did not start (the process tree is then killed), or
    /// [`Report::Interrupted`].
    fn start_loop(&mut self) -> Result<(), LoopStart> {
        let (mut child, check) = match self.starting.take() {
            Some(started) => started,
            None => self.spawn_loop()?,
        };
        let deadline = Instant::now() + self.timeouts.startup;
        let why = match child.read_line_or_stop(deadline) {
            Err(ReadError::Interrupted) => {
                child.kill();
                return Err(LoopStart::Interrupted);
            }
            Ok(line) => match parse_line(&line) {
                Ok(FromProbe::Hello { protocol, recipes, .. })
                    if hello_check(&line).as_deref() == Some(check.as_str()) =>
                {
                    self.hello = Some((protocol, recipes));
                    self.child = Some(child);
                    return Ok(());
                }
                Ok(FromProbe::Hello { .. }) => format!("its hello did not quote the check file ({check}): {line}"),
                Ok(other) => format!("expected a hello, got {other:?}"),
                Err(e) => e,
            },
            Err(e) => super::driver::missing_hello(&mut child, &e, self.timeouts.startup),
        };
        Err(LoopStart::Failed(super::driver::abandon_start(child, &why)))
    }

    /// Makes sure a loop runs, starting one if needed; if it cannot start, switches this
    /// driver to one-shot mode for good (and says why in [`Driver::note`]). Errors: only an
    /// interrupt.
    fn ensure(&mut self) -> Result<(), Attempt> {
        if self.fallback.is_some() || self.child.is_some() {
            return Ok(());
        }
        // One more try before giving up on the loop: under Wine a start now and then prints
        // "Application could not be started, or no application associated with the specified
        // file." instead of the hello while the next start works.
        // loops started before this one (one started ahead, [`CmdLoop::starting`], is this one)
        let restart = self.starts > u64::from(self.starting.is_some());
        let started = match self.start_loop() {
            Err(LoopStart::Failed(first)) => self.start_loop().map_err(|e| match e {
                LoopStart::Failed(then) => LoopStart::Failed(format!("{first}; tried again: {then}")),
                other => other,
            }),
            other => other,
        };
        match started {
            Ok(()) => Ok(()),
            Err(LoopStart::Interrupted) => {
                Err(Attempt::fault(Report::Interrupted, "interrupted before the cmd loop said hello"))
            }
            Err(LoopStart::Failed(why)) => {
                let when = if restart { "did not restart" } else { "did not start" };
                let why = format!("the cmd loop {when}: {why}");
                self.fallback = Some((OneShot::new(self.launch.clone(), self.cwd.clone(), self.timeouts), why));
                Ok(())
            }
        }
    }

    /// Writes the attempt's request into the loop folder. Errors: `Unsupported` for a value
    /// the loop cannot pass (non-ASCII text outside the working folder), `HarnessError` when
    /// the folder cannot be written.
    fn write_request(&self, spec: &Spec) -> Result<(), Attempt> {
        let values = request_files(spec, &spell(&self.cwd, self.style), self.style)?;
        let io = |e: std::io::Error| {
            Attempt::harness_error(format!("cannot write the cmd loop's request into {}: {e}", self.dir.display()))
        };
        for name in STALE {
            match std::fs::remove_file(self.dir.join(name)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(e)),
                _ => {}
            }
        }
        match std::fs::remove_dir_all(self.dir.join("reads")) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(e)),
            _ => {}
        }
        for (name, bytes) in values {
            std::fs::write(self.dir.join(name), bytes).map_err(io)?;
        }
        if let Some(r) = &spec.recipe {
            for (name, bytes) in recipe_files(spec, r, &spell(&self.cwd, self.style), self.style)? {
                std::fs::write(self.dir.join(name), bytes).map_err(io)?;
            }
            if r.recipe == READER {
                std::fs::create_dir(self.dir.join("reads")).map_err(io)?;
            }
        }
        Ok(())
    }

    /// Refuses a recipe the running loop does not list in its hello (a protocol-1 loop lists
    /// none). Errors: `Unsupported` with what the loop said.
    fn check_recipe(&self, recipe: &str) -> Result<(), Attempt> {
        match &self.hello {
            Some((p, listed)) if *p >= 2 && listed.iter().any(|r| r == recipe) => Ok(()),
            Some((p, listed)) => Err(Attempt::fault(
                Report::Unsupported,
                format!("the cmd loop (protocol {p}) has no recipe {recipe}; it lists: [{}]", listed.join(", ")),
            )),
            None => Err(Attempt::fault(Report::Unsupported, "the cmd loop said no hello")),
        }
    }

    /// Kills the loop's process tree and builds a fault attempt with its stderr as evidence.
    fn fail(&mut self, report: Report, why: &str) -> Attempt {
        fail_child(&mut self.child, report, why)
    }

    /// The time the probe read from the clock file `name` of the loop folder, in µs since
    /// the Unix epoch; `None` without a clock or a readable stamp.
    fn stamp(&self, name: &str) -> Option<f64> {
        self.clock?;
        let text = std::fs::read(self.dir.join(name)).ok()?;
        FileClock::epoch_us(&String::from_utf8_lossy(&text))
    }

    /// What the command printed during attempt `id`: the probe's stderr from the start of the
    /// attempt (after the previous attempt's end-of-attempt line, should part of that attempt's
    /// output have been read late) to this attempt's end-of-attempt line, waiting up to
    /// [`STDERR_GRACE`] for that line.
    fn console(&self, id: u64) -> String {
        let Some(child) = self.child.as_ref() else { return String::new() };
        let end = format!("{END_OF_ATTEMPT}{id}");
        let until = Instant::now() + STDERR_GRACE;
        loop {
            let text = child.stderr_since(self.stderr_from);
            let found = text.find(&end);
            if found.is_some() || Instant::now() >= until {
                let mut text = &text[..found.unwrap_or(text.len())];
                if let Some(i) = text.rfind(END_OF_ATTEMPT) {
                    // the previous attempt's end line: what stands before it was its output
                    let after = &text[i..];
                    text = after.find('\n').map_or("", |n| &after[n + 1..]);
                }
                return text.trim().to_string();
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Ends the loop process: `quit`, a short wait, then the tree is killed; a loop started
    /// ahead is killed too.
    fn stop_loop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.write_line("quit");
            c.close_stdin();
            let _ = c.exit_status(Duration::from_millis(300));
            c.kill();
        }
        if let Some((mut c, _)) = self.starting.take() {
            c.kill();
        }
    }

    /// Replaces a loop whose console state is spoiled (after a prompt or stray output): its
    /// tree is killed at once (a `quit` could be read as the answer to a prompt), and its
    /// successor is started now ([`Driver::spawn`]); the next attempt waits for its hello. A
    /// successor that cannot be started is left to the next attempt, which then falls back as
    /// at start.
    fn retire(&mut self) {
        if let Some(mut c) = self.child.take() {
            c.kill();
        }
        let _ = Driver::spawn(self);
    }
}

/// Why a loop did not start.
enum LoopStart {
    Interrupted,
    Failed(String),
}

/// The request files the probe reads, removed before each request is written (so that a
/// value absent this time is not read from the last one): every value file and marker, and
/// the clock stamps the last attempt left.
const STALE: [&str; 32] = [
    "id",
    "variant",
    "target",
    "target.root",
    "source",
    "source.root",
    "token",
    "mark",
    "mark.root",
    "name",
    "suspect",
    "t0",
    "t1",
    "recipe",
    "temp",
    "temp.root",
    "incoming",
    "incoming.root",
    "processing",
    "processing.root",
    "output",
    "output.root",
    "counter",
    "counter.root",
    "effect",
    "effect.root",
    "list",
    "list.root",
    "key",
    "increments",
    "content",
    "stop",
];

/// The request files of `spec` as (file name, contents): each value followed by CR LF (cmd's
/// `set /p` drops the line end); `source` and `mark` only when set; a path that lies inside
/// `root` (the probe's working folder as the probe spells it, in `style`) as its part after
/// `root` plus an empty `NAME.root` marker; `name`, the target's last path component (ren's
/// new name, which ren wants bare); an empty `suspect` marker when a value written holds `!`
/// or `%` (the probe then runs its re-expansion checks). Errors:
/// `Unsupported` when a value would not be ASCII (printable, U+0020 to U+007E) in its file.
fn request_files(spec: &Spec, root: &str, style: PathStyle) -> Result<Vec<(String, Vec<u8>)>, Attempt> {
    let sep = match style {
        PathStyle::Wine => '\\',
        PathStyle::Native => std::path::MAIN_SEPARATOR,
    };
    let mut out = Vec::new();
    // the probe runs its re-expansion checks (a file read per batch line under Wine) only for
    // a request with a value holding '!' or '%', which Wine's cmd re-expands; a root holding
    // them it checks once at start
    let mut suspect = false;
    let mut put = |name: &str, value: &str, path: bool| -> Result<(), Attempt> {
        let (value, rooted) = match value.strip_prefix(root) {
            Some(rest) if path && !root.is_empty() && rest.starts_with(sep) => (rest, true),
            _ => (value, false),
        };
        let line = ascii_line(name, value)?;
        suspect |= value.contains(['!', '%']);
        out.push((name.to_string(), line));
        if rooted {
            out.push((format!("{name}.root"), Vec::new()));
        }
        Ok(())
    };
    put("id", &spec.id.to_string(), false)?;
    put("variant", &spec.variant, false)?;
    put("target", &spec.target, true)?;
    // ren takes a bare new name: the target's last path component
    let name = spec.target.rsplit(['\\', '/']).next().unwrap_or_default();
    if !name.is_empty() {
        put("name", name, false)?;
    }
    if let Some(s) = &spec.source {
        put("source", s, true)?;
    }
    put("token", &spec.token, false)?;
    if let Some(m) = &spec.mark {
        put("mark", m, true)?;
    }
    if suspect {
        out.push(("suspect".to_string(), Vec::new()));
    }
    Ok(out)
}

/// `value` as a request file's contents: the value followed by CR LF (cmd's `set /p` drops the
/// line end). Errors: `Unsupported` when it is not ASCII (printable, U+0020 to U+007E): the
/// loop's `set /p` decodes files in the console code page.
fn ascii_line(name: &str, value: &str) -> Result<Vec<u8>, Attempt> {
    if let Some(c) = value.chars().find(|c| !(' '..='~').contains(c)) {
        return Err(Attempt::fault(
            Report::Unsupported,
            format!(
                "the cmd loop passes request values as ASCII text (its set /p decodes files in the console code page), \
                 and the {name} {value:?} holds {c:?}"
            ),
        ));
    }
    Ok(format!("{value}\r\n").into_bytes())
}

/// The path parameters a recipe's request carries, when given (`temp` also by default for the
/// publish writers): claim's folders and output, the update worker's counter and temp, the
/// ledger worker's effect file and processed list.
const RECIPE_PATHS: [&str; 7] = ["temp", "incoming", "processing", "output", "counter", "effect", "list"];

/// The path parameters the recipes read with `for /f` (`probes/cmd/recipes.cmd`: the update
/// counter, the processed list), which names its file by `%`-expansion: Wine 8's `for /f`
/// expands neither `!VAR!` nor a `for` variable in its file set (measured), and on Windows a
/// `!` that `%`-expansion inserts would be eaten by delayed expansion. Such a path must hold
/// neither `!` nor `%`.
const FOR_F_PATHS: [&str; 2] = ["counter", "list"];

/// The recipe's request files (protocol 2, `probes/PROTOCOL.md`, loop mode): `recipe`, its
/// path parameters ([`RECIPE_PATHS`]; spelled and rooted as [`request_files`] does), its
/// plain values (`key`, the ledger's idempotency key; `increments`, an update worker's count),
/// and for the publish writers `content`, the bytes to publish ([`crate::handoff::framed`] of
/// the token and `params.size`, or the token), which the recipe copies: cmd cannot write given
/// bytes itself. `temp` defaults, for a publish writer, to
/// `<folder of target>\.<name>.cmd.<id>.tmp`. Errors: `Unsupported` for a value that is not
/// ASCII (see [`request_files`]), a path of [`FOR_F_PATHS`] holding `!` or `%`, or a `size` out
/// of range.
fn recipe_files(
    spec: &Spec,
    r: &crate::exec::contender::RecipeSpec,
    root: &str,
    style: PathStyle,
) -> Result<Vec<(String, Vec<u8>)>, Attempt> {
    let text = |k: &str| r.params.get(k).and_then(|v| v.as_str()).map(str::to_string);
    let mut paths: Vec<(&str, String)> = Vec::new();
    for k in RECIPE_PATHS {
        match text(k) {
            Some(v) => paths.push((k, v)),
            None if k == "temp" && r.recipe.starts_with("publish.") => paths.push((k, default_temp(spec))),
            None => {}
        }
    }
    if let Some((name, value)) = paths.iter().find(|(n, v)| FOR_F_PATHS.contains(n) && v.contains(['!', '%'])) {
        return Err(Attempt::fault(
            Report::Unsupported,
            format!(
                "the cmd recipe reads its {name} with for /f, which takes the file name by %-expansion (Wine's for /f \
                 expands neither !VAR! nor a for variable there), and the path {value:?} holds ! or %"
            ),
        ));
    }
    let probe = Spec { recipe: None, mark: None, source: None, ..spec.clone() };
    let mut out: Vec<(String, Vec<u8>)> = Vec::new();
    out.push(("recipe".into(), format!("{}\r\n", r.recipe).into_bytes()));
    for (name, value) in paths {
        let one = Spec { target: value, ..probe.clone() };
        for (n, b) in request_files(&one, root, style)? {
            if let Some(rest) = n.strip_prefix("target") {
                out.push((format!("{name}{rest}"), b));
            }
        }
    }
    // the plain values, no paths
    let increments = r.params.get("increments").and_then(serde_json::Value::as_u64).map(|n| n.to_string());
    for (name, value) in [("key", text("key")), ("increments", increments)] {
        if let Some(value) = value {
            out.push((name.to_string(), ascii_line(name, &value)?));
        }
    }
    if let Some(content) = publish_content(spec, r)? {
        out.push(("content".into(), content));
    }
    Ok(out)
}

/// The default temp name of a cmd publish writer: `<folder of target>\.<name>.cmd.<id>.tmp`
/// (cmd has no process id of its own to put in it; the attempt id is unique per run).
pub(crate) fn default_temp(spec: &Spec) -> String {
    let (dir, name) = match spec.target.rfind(['\\', '/']) {
        Some(i) => (&spec.target[..=i], &spec.target[i + 1..]),
        None => ("", spec.target.as_str()),
    };
    format!("{dir}.{name}.cmd.{}.tmp", spec.id)
}

/// The bytes a cmd publish writer copies into place: [`crate::handoff::framed`] of the token
/// and `params.size`, or the token; `None` for other recipes. Errors: `Unsupported` for a
/// size out of range (1 to 16 MiB).
pub(crate) fn publish_content(spec: &Spec, r: &crate::exec::contender::RecipeSpec) -> Result<Option<Vec<u8>>, Attempt> {
    if !r.recipe.starts_with("publish.") {
        return Ok(None);
    }
    Ok(Some(match r.params.get("size").and_then(|v| v.as_u64()) {
        Some(n @ 1..=16_777_216) => crate::handoff::framed(&spec.token, n as usize),
        Some(n) => {
            return Err(Attempt::fault(Report::Unsupported, format!("params.size {n} is out of range (1 to 16 MiB)")))
        }
        None => spec.token.clone().into_bytes(),
    }))
}

/// Fills a reader's counters (`read.poll`) from the copies its reads made, `reads/1` … in
/// `dir`: the recipe counted `reads`, `absent` and `errors` itself (a copy that failed,
/// with the target there or not); each copy is `complete` (its bytes equal one of
/// `params.expect`), `empty` or `torn`; `changes` counts reads whose class or bytes differ
/// from the read before (a failed read is its own class). The same counters as the session
/// probes' `read.poll` (`probes/PROTOCOL.md`), from what the reader saw.
pub(crate) fn reader_counters(
    dir: &std::path::Path,
    params: &serde_json::Value,
    counters: &mut std::collections::BTreeMap<String, i64>,
) {
    let expect: Vec<&[u8]> = params
        .get("expect")
        .and_then(|v| v.as_array())
        .map(|a| a.iter().filter_map(|v| v.as_str()).map(str::as_bytes).collect())
        .unwrap_or_default();
    let reads = counters.get("reads").copied().unwrap_or(0).max(0);
    let (mut complete, mut empty, mut torn, mut changes) = (0i64, 0i64, 0i64, 0i64);
    let mut last: Option<Option<Vec<u8>>> = None;
    for k in 1..=reads {
        let seen = std::fs::read(dir.join(k.to_string())).ok();
        match &seen {
            Some(b) if expect.contains(&b.as_slice()) => complete += 1,
            Some(b) if b.is_empty() => empty += 1,
            Some(_) => torn += 1,
            None => {}
        }
        if last.as_ref().is_some_and(|l| *l != seen) {
            changes += 1;
        }
        last = Some(seen);
    }
    for (k, v) in [("complete", complete), ("empty", empty), ("torn", torn), ("changes", changes)] {
        counters.insert(k.to_string(), v);
    }
}

/// `path` (a file path with `\\` or `/` separators) with its file name replaced by `name`.
pub(crate) fn sibling(path: &str, name: &str) -> String {
    match path.rfind(['\\', '/']) {
        Some(i) => format!("{}{name}", &path[..=i]),
        None => name.to_string(),
    }
}

/// The `check` field of a loop `hello` line, if any.
fn hello_check(line: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    v.get("check")?.as_str().map(str::to_string)
}

impl Driver for CmdLoop {
    fn spawn(&mut self) -> Result<(), Attempt> {
        // a loop that cannot be spawned is left to start, which falls back to one-shot
        if self.fallback.is_none() && self.child.is_none() && self.starting.is_none() {
            self.starting = self.spawn_loop().ok();
        }
        Ok(())
    }

    fn start(&mut self) -> Result<(), Attempt> {
        self.ensure()?;
        match &mut self.fallback {
            Some((one, _)) => one.start(),
            None => Ok(()),
        }
    }

    fn begin(&mut self, spec: &Spec) -> Result<(), Attempt> {
        self.ensure()?;
        if let Some((one, _)) = &mut self.fallback {
            return one.begin(spec);
        }
        self.recipe = None;
        if let Some(r) = &spec.recipe {
            self.check_recipe(&r.recipe)?;
            self.recipe = Some(r.clone());
        }
        self.pending = Some(spec.id);
        self.write_request(spec)?;
        let child = self.child.as_mut().expect("the loop runs");
        self.stderr_from = child.stderr_mark();
        if let Err(e) = child.write_line("prepare") {
            return Err(self.fail(Report::Crashed, &format!("cannot write to the cmd loop: {e}")));
        }
        Ok(())
    }

    fn ready(&mut self) -> Result<(), Attempt> {
        if let Some((one, _)) = &mut self.fallback {
            return one.ready();
        }
        let Some(child) = self.child.as_mut() else {
            return Err(Attempt::fault(Report::Crashed, "no probe process"));
        };
        let line = match super::driver::ready_line(child, Instant::now() + self.timeouts.attempt, "cmd loop") {
            Ok(l) => l,
            Err((report, why)) => return Err(self.fail(report, &why)),
        };
        match parse_line(&line) {
            Ok(FromProbe::Ready { id, .. }) if id != self.pending => {
                let why = format!("ready for attempt {id:?}, expected {:?}", self.pending);
                Err(self.fail(Report::Crashed, &why))
            }
            Ok(FromProbe::Ready { supported: true, .. }) => Ok(()),
            Ok(FromProbe::Ready { reason, .. }) => {
                Err(Attempt::fault(Report::Unsupported, reason.unwrap_or_else(|| "unsupported".into())))
            }
            Ok(other) => Err(self.fail(Report::Crashed, &format!("expected ready, got {other:?}"))),
            Err(e) => Err(self.fail(Report::Crashed, &e)),
        }
    }

    fn release(&mut self) -> Result<(), Attempt> {
        if let Some((one, _)) = &mut self.fallback {
            return one.release();
        }
        let line = format!("go {}", self.pending.unwrap_or(0));
        let Some(child) = self.child.as_mut() else {
            return Err(Attempt::fault(Report::Crashed, "no probe process"));
        };
        if let Err(e) = child.write_line(&line) {
            return Err(self.fail(Report::Crashed, &format!("cannot release the cmd loop: {e}")));
        }
        Ok(())
    }

    /// Waits for the `result` (`await_result`: prompts answered, stray output kept), then
    /// reads the clock stamps and the attempt's console output. A result for another attempt
    /// is a crash; after stray output or a prompt the loop is stopped, to start afresh.
    fn finish(&mut self) -> Attempt {
        if let Some((one, _)) = &mut self.fallback {
            return one.finish();
        }
        let from = self.stderr_from;
        let console = move |c: &Child| c.stderr_since(from);
        let awaited = match await_result(&mut self.child, &self.timeouts, &console) {
            Ok(w) => w,
            Err(fault) => return fault,
        };
        if awaited.id != self.pending {
            let why = format!("result for attempt {:?}, expected {:?}", awaited.id, self.pending);
            return self.fail(Report::Crashed, &why);
        }
        let id = self.pending.unwrap_or(0);
        let stamps = (self.stamp("t0"), self.stamp("t1"));
        let console = self.console(id);
        // a prompt or stray output: the next attempt gets a process with a clean console
        let retire = awaited.answered || !awaited.stray.is_empty();
        let mut attempt = awaited.attempt(console, Some(stamps));
        if let (Some(r), Some(out)) = (&self.recipe, attempt.recipe.as_mut()) {
            if r.recipe == READER {
                reader_counters(&self.dir.join("reads"), &r.params, &mut out.counters);
            }
        }
        if retire {
            self.retire();
        }
        attempt
    }

    /// Ends a loop recipe (`read.poll`): an empty `stop` file in the loop folder, which the
    /// recipe looks for before each read (stdin is blocked on nothing while it runs, and
    /// cmd cannot read it without blocking). Errors: a harness error when it cannot be
    /// written.
    fn stop(&mut self) -> Result<(), Attempt> {
        if let Some((one, _)) = &mut self.fallback {
            return one.stop();
        }
        if self.recipe.is_none() {
            return Ok(());
        }
        std::fs::write(self.dir.join("stop"), b"")
            .map_err(|e| Attempt::harness_error(format!("cannot write the cmd loop's stop file: {e}")))
    }

    fn control(&mut self, control: Control) -> Result<(), Attempt> {
        match &mut self.fallback {
            Some((one, _)) => one.control(control),
            None => control_child(self.child.as_mut(), control),
        }
    }

    fn shutdown(&mut self) {
        if let Some((one, _)) = &mut self.fallback {
            one.shutdown();
        }
        self.stop_loop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }

    fn note(&self) -> Option<String> {
        Some(match &self.fallback {
            None => crate::domain::LOOP_DRIVER.to_string(),
            Some((_, why)) => format!("one-shot ({why})"),
        })
    }

    fn process_per_attempt(&self) -> bool {
        self.fallback.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::{
        hello_check, reader_counters, recipe_files, request_files, sibling, PathStyle, Report, Spec, LOOP_SCRIPT,
    };

    fn spec(target: &str, source: Option<&str>, mark: Option<&str>) -> Spec {
        Spec {
            id: 7,
            variant: "cmd.mkdir".into(),
            target: target.into(),
            source: source.map(Into::into),
            token: "ab12-t7-k0".into(),
            mark: mark.map(Into::into),
            hold_ms: 0,
            recipe: None,
            delay_us: 0,
        }
    }

    fn files(r: &[(String, Vec<u8>)]) -> Vec<(String, String)> {
        r.iter().map(|(n, b)| (n.clone(), String::from_utf8(b.clone()).unwrap())).collect()
    }

    /// Paths inside the working folder travel as their ASCII rest plus a marker; the
    /// working folder itself (Japanese, `&`, `%`) never enters a request file.
    #[test]
    fn paths_inside_the_root_travel_as_their_rest() {
        let root = "Z:\\tmp\\conformance-x\\sp ace&amp %PATH% 日本語";
        let s = spec(&format!("{root}\\c3\\target"), None, Some(&format!("{root}\\c3\\target\\.mark-ab12")));
        let got = files(&request_files(&s, root, PathStyle::Wine).unwrap());
        let want: Vec<(String, String)> = [
            ("id", "7\r\n"),
            ("variant", "cmd.mkdir\r\n"),
            ("target", "\\c3\\target\r\n"),
            ("target.root", ""),
            ("name", "target\r\n"),
            ("token", "ab12-t7-k0\r\n"),
            ("mark", "\\c3\\target\\.mark-ab12\r\n"),
            ("mark.root", ""),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        assert_eq!(got, want);
        // a relative path goes as it is; a name that merely starts like the root is not inside it
        let s = spec("c3\\target", Some(&format!("{root}x\\src-1")), None);
        let err = request_files(&s, root, PathStyle::Wine).unwrap_err();
        assert_eq!(err.report, Report::Unsupported, "non-ASCII outside the root: {err:?}");
        let s = spec("c3\\target", Some("c3\\src-1"), None);
        let got = files(&request_files(&s, root, PathStyle::Wine).unwrap());
        assert!(got.contains(&("target".into(), "c3\\target\r\n".into())), "{got:?}");
        assert!(got.contains(&("source".into(), "c3\\src-1\r\n".into())), "{got:?}");
        assert!(!got.iter().any(|(n, _)| n.ends_with(".root")), "{got:?}");
        assert!(!got.iter().any(|(n, _)| n == "suspect"), "{got:?}");
        // a '!' or '%' in a path or the token asks the probe for its re-expansion checks
        for t in ["c3\\t!a!", "c3\\%PATH%"] {
            let got = files(&request_files(&spec(t, None, None), root, PathStyle::Wine).unwrap());
            assert!(got.contains(&("suspect".into(), String::new())), "{t}: {got:?}");
        }
    }

    /// The two cmd probes make the same calls: every command line that makes a call or writes
    /// the token (`… || set "F=…"` and the mark write), and every variant id, appear in both.
    #[test]
    fn the_loop_and_the_one_shot_probe_make_the_same_calls() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("probes").join("cmd");
        let lines = |name: &str, pick: &dyn Fn(&str) -> bool| -> std::collections::BTreeSet<String> {
            let text = std::fs::read_to_string(dir.join(name)).unwrap();
            text.lines().map(str::trim).filter(|l| pick(l)).map(str::to_string).collect()
        };
        let calls = |l: &str| {
            !l.starts_with("rem ")
                && (l.contains("|| set \"F=!errorlevel!\"") || l.contains("|| set \"MF=!errorlevel!\""))
        };
        let one_shot = lines("probe.cmd", &calls);
        // seven commands, the token write (cmd.redirect and the anti-pattern), the mark write
        // (the check-then-move anti-pattern's line is move /Y's)
        assert_eq!(one_shot.len(), 9, "{one_shot:?}");
        assert_eq!(one_shot, lines(LOOP_SCRIPT, &calls));
        let ids = |name: &str| -> std::collections::BTreeSet<String> {
            let text = std::fs::read_to_string(dir.join(name)).unwrap();
            text.split("\"!V!\"==\"").skip(1).map(|rest| rest.split('"').next().unwrap().to_string()).collect()
        };
        assert_eq!(ids("probe.cmd").len(), 10);
        assert_eq!(ids("probe.cmd"), ids(LOOP_SCRIPT));
    }

    /// A recipe's paths travel rooted like the target, the temp name defaults beside the
    /// target, and a publish writer gets the framed bytes to copy.
    #[test]
    fn recipe_requests_carry_rooted_paths_and_the_content() {
        let root = "Z:\\tmp\\x & 日本";
        let mut s = spec(&format!("{root}\\c1\\i0\\target"), None, None);
        s.id = 9;
        let r = crate::exec::contender::RecipeSpec {
            scenario: "publish".into(),
            recipe: "publish.temp-rename".into(),
            role: "writer".into(),
            params: serde_json::json!({ "size": 10 }),
            until_stopped: false,
        };
        let got = recipe_files(&s, &r, root, PathStyle::Wine).unwrap();
        let get = |n: &str| got.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        assert_eq!(get("recipe").unwrap(), b"publish.temp-rename\r\n");
        assert_eq!(get("temp").unwrap(), b"\\c1\\i0\\.target.cmd.9.tmp\r\n");
        assert_eq!(get("temp.root").unwrap(), b"");
        assert_eq!(get("content").unwrap(), crate::handoff::framed(&s.token, 10));
        // the harness's temp on another volume goes as it is (ASCII), without a root marker
        let r2 = crate::exec::contender::RecipeSpec {
            params: serde_json::json!({ "size": 10, "temp": "Z:\\dev\\shm\\x\\t.tmp" }),
            ..r.clone()
        };
        let got = recipe_files(&s, &r2, root, PathStyle::Wine).unwrap();
        assert!(got.contains(&("temp".into(), b"Z:\\dev\\shm\\x\\t.tmp\r\n".to_vec())), "{got:?}");
        assert!(!got.iter().any(|(k, _)| k == "temp.root"), "{got:?}");
        // claim paths; no content
        let c = crate::exec::contender::RecipeSpec {
            scenario: "claim".into(),
            recipe: "claim.rename-claim".into(),
            role: "worker".into(),
            params: serde_json::json!({
                "incoming": format!("{root}\\c2\\i0\\incoming"),
                "processing": format!("{root}\\c2\\i0\\processing\\w1"),
                "output": format!("{root}\\c2\\i0\\out-1.txt"),
            }),
            until_stopped: false,
        };
        let got = recipe_files(&s, &c, root, PathStyle::Wine).unwrap();
        let names: Vec<&str> = got.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            names,
            ["recipe", "incoming", "incoming.root", "processing", "processing.root", "output", "output.root"]
        );
        // a path outside the root that is not ASCII cannot travel
        let bad = crate::exec::contender::RecipeSpec {
            params: serde_json::json!({ "output": "Z:\\elsewhere\\日本\\out.txt", "incoming": "x" }),
            ..c
        };
        assert_eq!(recipe_files(&s, &bad, root, PathStyle::Wine).unwrap_err().report, Report::Unsupported);
    }

    /// An update or ledger worker's request: its paths rooted like the target (the lock and the
    /// ledger folder, which cmd's recipes do not use, stay out), the key and the number of
    /// increments as plain values, no content; a path the recipe reads with `for /f` holding
    /// `!` or `%`, or a key that is not ASCII, cannot travel.
    #[test]
    fn update_and_ledger_requests_carry_their_paths_and_values() {
        let root = "Z:\\tmp\\x & 日本";
        let dir = format!("{root}\\c4\\i0");
        let s = spec(&format!("{dir}\\target"), None, None);
        let u = crate::exec::contender::RecipeSpec {
            scenario: "update".into(),
            recipe: "update.temp-rename".into(),
            role: "worker".into(),
            params: serde_json::json!({
                "counter": format!("{dir}\\target"),
                "lock": format!("{dir}\\target.lock"),
                "temp": format!("{dir}\\target.w1.tmp"),
                "increments": 10,
            }),
            until_stopped: false,
        };
        let got = files(&recipe_files(&s, &u, root, PathStyle::Wine).unwrap());
        let want: Vec<(String, String)> = [
            ("recipe", "update.temp-rename\r\n"),
            ("temp", "\\c4\\i0\\target.w1.tmp\r\n"),
            ("temp.root", ""),
            ("counter", "\\c4\\i0\\target\r\n"),
            ("counter.root", ""),
            ("increments", "10\r\n"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        assert_eq!(got, want);
        let l = crate::exec::contender::RecipeSpec {
            scenario: "ledger".into(),
            recipe: "ledger.check-process-append".into(),
            params: serde_json::json!({
                "key": "order-42",
                "effect": format!("{dir}\\effects\\w2"),
                "ledger": format!("{dir}\\ledger"),
                "list": format!("{dir}\\processed.txt"),
            }),
            ..u.clone()
        };
        let got = files(&recipe_files(&s, &l, root, PathStyle::Wine).unwrap());
        let names: Vec<&str> = got.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["recipe", "effect", "effect.root", "list", "list.root", "key"]);
        assert!(got.contains(&("key".into(), "order-42\r\n".into())), "{got:?}");
        // for /f takes its file name by %-expansion: a counter or list with '!' or '%' is refused
        for (k, v) in [("counter", "c4\\t!x!"), ("list", "c4\\%PATH%.txt")] {
            let mut bad = u.clone();
            bad.params[k] = serde_json::json!(v);
            let err = recipe_files(&s, &bad, root, PathStyle::Wine).unwrap_err();
            assert_eq!(err.report, Report::Unsupported, "{k}: {err:?}");
        }
        // an effect file may hold them (it is written through delayed expansion, as the target)
        let mut ok = l.clone();
        ok.params["effect"] = serde_json::json!("c4\\effects\\w!1!");
        assert!(recipe_files(&s, &ok, root, PathStyle::Wine).is_ok());
        let mut bad = l;
        bad.params["key"] = serde_json::json!("順番-42");
        assert_eq!(recipe_files(&s, &bad, root, PathStyle::Wine).unwrap_err().report, Report::Unsupported);
    }

    /// The reader's copies are classified by their bytes; failed reads (no copy) are a class
    /// of their own for `changes`; the recipe's own counts stay.
    #[test]
    fn reader_counters_come_from_the_copies() {
        let dir = tempfile::tempdir().unwrap();
        // read 1 failed (absent), 2 empty, 3 torn, 4 and 5 complete
        std::fs::write(dir.path().join("2"), b"").unwrap();
        std::fs::write(dir.path().join("3"), b"conformance-pub").unwrap();
        std::fs::write(dir.path().join("4"), b"whole").unwrap();
        std::fs::write(dir.path().join("5"), b"whole").unwrap();
        let mut c: std::collections::BTreeMap<String, i64> =
            [("reads", 5), ("absent", 1), ("errors", 0)].into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        reader_counters(dir.path(), &serde_json::json!({ "expect": ["whole"] }), &mut c);
        let n = |k: &str| c[k];
        assert_eq!((n("complete"), n("empty"), n("torn"), n("absent"), n("errors")), (2, 1, 1, 1, 0));
        assert_eq!(n("complete") + n("empty") + n("torn") + n("absent") + n("errors"), n("reads"));
        assert_eq!(n("changes"), 3, "absent -> empty -> torn -> whole, then the same");
    }

    #[test]
    fn the_loop_script_lies_beside_the_one_shot_probe() {
        assert_eq!(sibling("Z:\\work\\probes\\cmd\\probe.cmd", LOOP_SCRIPT), "Z:\\work\\probes\\cmd\\loop.cmd");
        assert_eq!(sibling("/w/probes/cmd/probe.cmd", LOOP_SCRIPT), "/w/probes/cmd/loop.cmd");
        assert_eq!(sibling("probe.cmd", LOOP_SCRIPT), "loop.cmd");
    }

    #[test]
    fn the_hello_check_is_read_from_the_line() {
        let line = r#"{"protocol":1,"type":"hello","probe":"cmd","families":["cmd"],"mode":"loop","check":"loop-1-2"}"#;
        assert_eq!(hello_check(line).as_deref(), Some("loop-1-2"));
        assert_eq!(hello_check(r#"{"protocol":1,"type":"ready","supported":true}"#), None);
    }
}

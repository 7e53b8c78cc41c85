//! The Rust std probe of the conformance harness (../../PROTOCOL.md, session mode, protocol 2).
//!
//! It performs one named call (a *variant*, `rust.*`, listed in ../../../matrices/rust.toml) or
//! one named routine of several steps (a *recipe*, the ids of ../../shared/session.mjs, written
//! again with the calls a Rust integrator would use from `std`) on the paths it is given, and
//! reports what the calls returned. It never judges an outcome: the harness does, from this
//! report and from the disk afterwards.
//!
//! stdin and stdout carry one JSON object per line. A helper thread reads stdin and hands each
//! line to the main thread through a channel: the main thread blocks on it between attempts and
//! polls it without waiting (`try_recv`) while a loop recipe runs, so `stop` works on every OS.
//! Nothing but protocol lines goes to stdout; diagnostics go to stderr.

use std::collections::{HashSet, VecDeque};
use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

/// The protocol version this probe speaks.
const PROTOCOL: i64 = 2;
/// At most this many raw errors travel in a result's `errors_sample`.
const ERRORS_SAMPLE_MAX: usize = 8;
/// Largest single write of the publish and done recipes (bytes).
const PUBLISH_CHUNK: usize = 4096;
/// Rounds without progress after which a claim worker gives up (step `stuck`).
const CLAIM_STUCK_ROUNDS: u64 = 100_000;
/// How long a locked update waits for the lock before it gives up (step `lock`), ms.
const UPDATE_LOCK_WAIT_MS: f64 = 10_000.0;
/// How often a worker reads the counter again when it held no whole number, at most.
const UPDATE_READ_TRIES: u64 = 1_000;

// ---- JSON out -------------------------------------------------------------------------------

/// A JSON value written in the order it was built (serde_json's own map sorts its keys).
enum J {
    Null,
    Bool(bool),
    Int(i64),
    Num(f64),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(&'static str, J)>),
}

impl J {
    fn str(s: impl Into<String>) -> J {
        J::Str(s.into())
    }

    fn write(&self, out: &mut String) {
        match self {
            J::Null => out.push_str("null"),
            J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            J::Int(i) => out.push_str(&i.to_string()),
            J::Num(f) => {
                if f.is_finite() {
                    out.push_str(&format!("{f}"));
                } else {
                    out.push_str("null");
                }
            }
            J::Str(s) => out.push_str(&serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())),
            J::Arr(a) => {
                out.push('[');
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write(out);
                }
                out.push(']');
            }
            J::Obj(o) => {
                out.push('{');
                for (i, (k, v)) in o.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&serde_json::to_string(k).unwrap_or_default());
                    out.push(':');
                    v.write(out);
                }
                out.push('}');
            }
        }
    }

    fn text(&self) -> String {
        let mut s = String::new();
        self.write(&mut s);
        s
    }
}

/// The counters of a loop recipe, in the order they were named.
struct Counters(Vec<(&'static str, i64)>);

impl Counters {
    fn new(names: &[&'static str]) -> Counters {
        Counters(names.iter().map(|n| (*n, 0)).collect())
    }
    fn slot(&mut self, name: &'static str) -> &mut i64 {
        if let Some(i) = self.0.iter().position(|(n, _)| *n == name) {
            return &mut self.0[i].1;
        }
        self.0.push((name, 0));
        &mut self.0.last_mut().unwrap().1
    }
    fn inc(&mut self, name: &'static str) {
        *self.slot(name) += 1;
    }
    fn set(&mut self, name: &'static str, v: i64) {
        *self.slot(name) = v;
    }
    fn get(&self, name: &str) -> i64 {
        self.0.iter().find(|(n, _)| *n == name).map(|(_, v)| *v).unwrap_or(0)
    }
    fn json(&self) -> J {
        J::Obj(self.0.iter().map(|(n, v)| (*n, J::Int(*v))).collect())
    }
}

/// One protocol line on stdout, flushed.
fn send(obj: &J) {
    let mut line = obj.text();
    line.push('\n');
    let out = io::stdout();
    let mut lock = out.lock();
    if lock.write_all(line.as_bytes()).and_then(|_| lock.flush()).is_err() {
        // the harness is gone: nothing can be reported any more
        std::process::exit(4);
    }
}

fn diag(msg: &str) {
    eprintln!("probe: {msg}");
}

fn fatal(msg: &str, code: i32) -> ! {
    diag(msg);
    std::process::exit(code);
}

// ---- clocks ---------------------------------------------------------------------------------

/// Microseconds on CLOCK_MONOTONIC (one clock for every process of the machine).
fn now_us() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the struct it is given; CLOCK_MONOTONIC always exists on Linux
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts);
    }
    ts.tv_sec as f64 * 1e6 + ts.tv_nsec as f64 / 1e3
}

/// Milliseconds on the monotonic clock, for pacing and waiting (never sent).
fn now_ms() -> f64 {
    now_us() / 1000.0
}

/// Milliseconds since the Unix epoch (the wall clock: lease records and mutex log lines).
fn wall_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

fn sleep_ms(ms: f64) {
    if ms > 0.0 {
        thread::sleep(Duration::from_micros((ms * 1000.0) as u64));
    }
}

// ---- raw errors -----------------------------------------------------------------------------

/// The errno names the harness knows (src/runtime/normalize.rs), by number.
fn errno_name(n: i32) -> Option<&'static str> {
    Some(match n {
        libc::EEXIST => "EEXIST",
        libc::ENOENT => "ENOENT",
        libc::ENOTEMPTY => "ENOTEMPTY",
        libc::EISDIR => "EISDIR",
        libc::ENOTDIR => "ENOTDIR",
        libc::EPERM => "EPERM",
        libc::EACCES => "EACCES",
        libc::EBUSY => "EBUSY",
        libc::EXDEV => "EXDEV",
        libc::ENOSPC => "ENOSPC",
        libc::EDQUOT => "EDQUOT",
        libc::EROFS => "EROFS",
        libc::EIO => "EIO",
        libc::ENAMETOOLONG => "ENAMETOOLONG",
        libc::EINVAL => "EINVAL",
        libc::EAGAIN => "EAGAIN",
        libc::ELOOP => "ELOOP",
        libc::ETXTBSY => "ETXTBSY",
        _ => return None,
    })
}

/// The raw error of an io::Error: `type` its ErrorKind's name, `code` the errno's name,
/// `errno` the OS error number (positive, as `raw_os_error` gives it), `message` its Display.
fn raw(e: &io::Error) -> J {
    let errno = e.raw_os_error();
    J::Obj(vec![
        ("type", J::str(format!("{:?}", e.kind()))),
        ("code", errno.and_then(errno_name).map(J::str).unwrap_or(J::Null)),
        ("errno", errno.map(|n| J::Int(n as i64)).unwrap_or(J::Null)),
        ("hresult", J::Null),
        ("message", J::str(e.to_string())),
    ])
}

/// A raw error of the probe's own making (a check that found the target, a wait that ran out).
fn raw_own(kind: &str, code: Option<&str>, message: String) -> J {
    J::Obj(vec![
        ("type", J::str(kind)),
        ("code", code.map(J::str).unwrap_or(J::Null)),
        ("errno", J::Null),
        ("hresult", J::Null),
        ("message", J::str(message)),
    ])
}

/// `raw(e)` with `type` MarkError (a failed mark write or hold).
fn raw_mark(e: &io::Error) -> J {
    let mut j = raw(e);
    if let J::Obj(ref mut o) = j {
        o[0].1 = J::str("MarkError");
    }
    j
}

fn other(msg: impl Into<String>) -> io::Error {
    io::Error::other(msg.into())
}

// ---- stdin ----------------------------------------------------------------------------------

enum Polled {
    Line(String),
    Eof,
    Nothing,
}

/// Lines of stdin, read by a helper thread (None: end of input).
struct Input {
    rx: Receiver<Option<String>>,
    back: VecDeque<String>,
    eof: bool,
}

impl Input {
    fn start() -> Input {
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let stdin = io::stdin();
            let mut lock = stdin.lock();
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match lock.read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => {
                        let _ = tx.send(None);
                        return;
                    }
                    Ok(_) => {
                        while buf.last() == Some(&b'\n') || buf.last() == Some(&b'\r') {
                            buf.pop();
                        }
                        if tx.send(Some(String::from_utf8_lossy(&buf).into_owned())).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        Input { rx, back: VecDeque::new(), eof: false }
    }

    /// The next line (blocking), or None at end of input.
    fn next(&mut self) -> Option<String> {
        if let Some(l) = self.back.pop_front() {
            return Some(l);
        }
        if self.eof {
            return None;
        }
        match self.rx.recv() {
            Ok(Some(l)) => Some(l),
            _ => {
                self.eof = true;
                None
            }
        }
    }

    /// A line if one is there without waiting.
    fn poll(&mut self) -> Polled {
        if let Some(l) = self.back.pop_front() {
            return Polled::Line(l);
        }
        if self.eof {
            return Polled::Eof;
        }
        match self.rx.try_recv() {
            Ok(Some(l)) => Polled::Line(l),
            Ok(None) | Err(TryRecvError::Disconnected) => {
                self.eof = true;
                Polled::Eof
            }
            Err(TryRecvError::Empty) => Polled::Nothing,
        }
    }
}

/// What a running recipe sees of the session: whether the harness asked it to stop.
struct Ctx<'a> {
    input: &'a mut Input,
    running: Value,
}

impl Ctx<'_> {
    /// True when the harness asked the running loop to end: `stop` (for this attempt, or
    /// without id), `quit` or end of input (both left for the main loop).
    fn stop_requested(&mut self) -> bool {
        loop {
            let line = match self.input.poll() {
                Polled::Nothing => return false,
                Polled::Eof => return true,
                Polled::Line(l) => l,
            };
            if line.trim().is_empty() {
                continue;
            }
            let msg: Value = match serde_json::from_str(&line) {
                Ok(v) => v,
                Err(_) => fatal(&format!("not JSON: {line}"), 3),
            };
            match msg.get("type").and_then(Value::as_str) {
                Some("stop") => {
                    let id = msg.get("id").cloned().unwrap_or(Value::Null);
                    if id.is_null() || id == self.running {
                        return true;
                    }
                }
                Some("quit") => {
                    self.input.back.push_back(line);
                    return true;
                }
                other => {
                    fatal(&format!("{other:?} while attempt {} runs (only stop or quit may come)", self.running), 3)
                }
            }
        }
    }
}

// ---- variants -------------------------------------------------------------------------------

/// Every variant id, in the probe's order, and whether it needs a source.
const VARIANTS: &[(&str, bool)] = &[
    ("rust.File.create_new", false),
    ("rust.OpenOptions.write.create_new", false),
    ("rust.OpenOptions.append.create_new", false),
    ("rust.OpenOptions.custom_flags.O_EXCL", false),
    ("rust.File.create", false),
    ("rust.OpenOptions.write.create", false),
    ("rust.OpenOptions.append.create", false),
    ("rust.fs.write", false),
    ("rust.File.try_lock", false),
    ("rust.fs.create_dir", false),
    ("rust.fs.create_dir_all", false),
    ("rust.fs.rename", true),
    ("rust.fs.hard_link", true),
    ("rust.os.unix.fs.symlink", true),
    ("rust.fs.copy", true),
    ("rust.Path.exists+File.create", false),
    ("rust.Path.try_exists+fs.rename", true),
    ("rust.Path.exists+fs.create_dir", false),
];

/// A variant resolved ahead of its call.
struct VariantCall {
    id: &'static str,
    target: PathBuf,
    source: Option<PathBuf>,
    data: Vec<u8>,
}

fn check_exists(target: &Path, how: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::AlreadyExists,
        CheckExists(format!("target exists (checked with {how}): {}", target.display())),
    )
}

/// The error of a check-then-act variant whose check found the target (type `CheckExists`).
#[derive(Debug)]
struct CheckExists(String);
impl std::fmt::Display for CheckExists {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for CheckExists {}

fn is_check_exists(e: &io::Error) -> bool {
    e.get_ref().map(|i| i.is::<CheckExists>()).unwrap_or(false)
}

impl VariantCall {
    /// Makes the call. Returns the handle to hold (`rust.File.try_lock`), if any.
    fn call(&self) -> io::Result<Option<File>> {
        let t = &self.target;
        let src = || self.source.as_deref().expect("checked at prepare");
        match self.id {
            "rust.File.create_new" => {
                let mut f = File::create_new(t)?;
                f.write_all(&self.data)?;
            }
            "rust.OpenOptions.write.create_new" => {
                let mut f = OpenOptions::new().write(true).create_new(true).open(t)?;
                f.write_all(&self.data)?;
            }
            "rust.OpenOptions.append.create_new" => {
                let mut f = OpenOptions::new().append(true).create_new(true).open(t)?;
                f.write_all(&self.data)?;
            }
            "rust.OpenOptions.custom_flags.O_EXCL" => {
                let mut f = OpenOptions::new().write(true).create(true).custom_flags(libc::O_EXCL).open(t)?;
                f.write_all(&self.data)?;
            }
            "rust.File.create" => {
                let mut f = File::create(t)?;
                f.write_all(&self.data)?;
            }
            "rust.OpenOptions.write.create" => {
                #[allow(clippy::suspicious_open_options)]
                let mut f = OpenOptions::new().write(true).create(true).open(t)?;
                f.write_all(&self.data)?;
            }
            "rust.OpenOptions.append.create" => {
                let mut f = OpenOptions::new().append(true).create(true).open(t)?;
                f.write_all(&self.data)?;
            }
            "rust.fs.write" => fs::write(t, &self.data)?,
            "rust.File.try_lock" => {
                #[allow(clippy::suspicious_open_options)]
                let mut f = OpenOptions::new().read(true).write(true).create(true).open(t)?;
                f.try_lock().map_err(io::Error::from)?;
                f.set_len(0)?;
                f.write_all(&self.data)?;
                return Ok(Some(f));
            }
            "rust.fs.create_dir" => fs::create_dir(t)?,
            "rust.fs.create_dir_all" => fs::create_dir_all(t)?,
            "rust.fs.rename" => fs::rename(src(), t)?,
            "rust.fs.hard_link" => fs::hard_link(src(), t)?,
            "rust.os.unix.fs.symlink" => std::os::unix::fs::symlink(src(), t)?,
            "rust.fs.copy" => {
                fs::copy(src(), t)?;
            }
            "rust.Path.exists+File.create" => {
                if t.exists() {
                    return Err(check_exists(t, "Path::exists"));
                }
                let mut f = File::create(t)?;
                f.write_all(&self.data)?;
            }
            "rust.Path.try_exists+fs.rename" => {
                if t.try_exists()? {
                    return Err(check_exists(t, "Path::try_exists"));
                }
                fs::rename(src(), t)?;
            }
            "rust.Path.exists+fs.create_dir" => {
                if t.exists() {
                    return Err(check_exists(t, "Path::exists"));
                }
                fs::create_dir(t)?;
            }
            other => return Err(other_error(format!("unknown variant {other}"))),
        }
        Ok(None)
    }
}

fn other_error(msg: String) -> io::Error {
    other(msg)
}

/// The raw error of a variant's failure (CheckExists spelled as the other probes do).
fn variant_error(e: &io::Error) -> J {
    if is_check_exists(e) {
        return raw_own("CheckExists", Some("CHECK_EXISTS"), e.to_string());
    }
    raw(e)
}

fn resolve_variant(msg: &Value) -> Result<VariantCall, String> {
    let name = msg.get("variant").and_then(Value::as_str).unwrap_or("");
    let Some(&(id, needs_source)) = VARIANTS.iter().find(|(v, _)| *v == name) else {
        return Err(format!("unknown variant {name}"));
    };
    let target = match msg.get("target").and_then(Value::as_str) {
        Some(t) if !t.is_empty() => PathBuf::from(t),
        _ => return Err("the prepare has no target".into()),
    };
    let source = msg.get("source").and_then(Value::as_str).filter(|s| !s.is_empty()).map(PathBuf::from);
    if needs_source && source.is_none() {
        return Err(format!("{id} needs a source"));
    }
    let data = msg.get("token").and_then(Value::as_str).unwrap_or("").as_bytes().to_vec();
    Ok(VariantCall { id, target, source, data })
}

/// After a successful call: the mark (the token in a new file, create/truncate), then the hold.
fn write_mark(mark: &Path, token: &[u8]) -> io::Result<()> {
    fs::write(mark, token)
}

// ---- recipe plumbing ------------------------------------------------------------------------

/// What a recipe's routine returns.
struct Outcome {
    ok: bool,
    error: Option<J>,
    step: Option<&'static str>,
    counters: Option<Counters>,
    sample: Option<Vec<J>>,
}

impl Outcome {
    fn ok() -> Outcome {
        Outcome { ok: true, error: None, step: None, counters: None, sample: None }
    }
    fn failed(step: &'static str, e: &io::Error) -> Outcome {
        Outcome { ok: false, error: Some(raw(e)), step: Some(step), counters: None, sample: None }
    }
    fn with(mut self, c: Counters) -> Outcome {
        self.counters = Some(c);
        self
    }
    fn sampled(mut self, s: Vec<J>) -> Outcome {
        self.sample = Some(s);
        self
    }
}

type Run = Box<dyn FnOnce(&mut Ctx) -> Outcome>;

/// A recipe's request (`prepare` with `recipe`).
struct Req {
    id: Value,
    target: PathBuf,
    source: Option<PathBuf>,
    token: String,
    data: Vec<u8>,
    params: serde_json::Map<String, Value>,
    role: Option<String>,
}

type Prep = Result<Run, String>;

fn string_param(req: &Req, name: &str) -> Result<Option<String>, String> {
    match req.params.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
        _ => Err(format!("params.{name} must be a non-empty string")),
    }
}

fn path_param(req: &Req, name: &str) -> Result<Option<PathBuf>, String> {
    Ok(string_param(req, name)?.map(PathBuf::from))
}

fn int_value(v: Option<&Value>) -> Option<i64> {
    let v = v?;
    if let Some(i) = v.as_i64() {
        return Some(i);
    }
    let f = v.as_f64()?;
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        Some(f as i64)
    } else {
        None
    }
}

/// An integer parameter from 1 to `max`.
fn positive_param(req: &Req, name: &str, max: i64) -> Result<i64, String> {
    match int_value(req.params.get(name)) {
        Some(v) if (1..=max).contains(&v) => Ok(v),
        _ => Err(format!("params.{name} must be an integer from 1 to {max}")),
    }
}

/// An integer parameter from 0 to `max`, 0 when absent.
fn optional_param(req: &Req, name: &str, max: i64) -> Result<i64, String> {
    match req.params.get(name) {
        None | Some(Value::Null) => Ok(0),
        v => match int_value(v) {
            Some(v) if (0..=max).contains(&v) => Ok(v),
            _ => Err(format!("params.{name} must be an integer from 0 to {max}")),
        },
    }
}

/// A slow taker's wait (params.stall_us) before a step after its check, as one descheduled
/// between its steps would.
fn stall(us: u64) {
    if us > 0 {
        std::thread::sleep(Duration::from_micros(us));
    }
}

fn bool_param(req: &Req, name: &str) -> Result<bool, String> {
    match req.params.get(name) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        _ => Err(format!("params.{name} must be true or false")),
    }
}

/// The content a publish recipe writes (session.mjs, publishContent): the token's bytes, or
/// with params.size the framed content the harness computes (src/handoff.rs, `framed`).
fn publish_content(req: &Req) -> Result<Vec<u8>, String> {
    let size = match req.params.get("size") {
        None | Some(Value::Null) => return Ok(req.data.clone()),
        v => match int_value(v) {
            Some(s) if (1..=16 * 1024 * 1024).contains(&s) => s as usize,
            _ => return Err("params.size must be an integer from 1 to 16777216".into()),
        },
    };
    let line = format!("{}\n", req.token).into_bytes();
    let mut out = format!("conformance-publish {} {}\n", req.token, size).into_bytes();
    let mut payload = Vec::with_capacity(size);
    while payload.len() < size {
        let n = line.len().min(size - payload.len());
        payload.extend_from_slice(&line[..n]);
    }
    out.extend_from_slice(&payload);
    out.extend_from_slice(format!("end {}\n", req.token).as_bytes());
    Ok(out)
}

fn write_chunks(f: &mut File, data: &[u8]) -> io::Result<()> {
    for chunk in data.chunks(PUBLISH_CHUNK) {
        f.write_all(chunk)?;
    }
    Ok(())
}

/// `<dir of target>/.<name of target>.<pid>.<id>.tmp`.
fn default_temp(target: &Path, id: &Value) -> PathBuf {
    let name = target.file_name().map(|n| n.to_os_string()).unwrap_or_else(|| OsString::from("target"));
    let mut tmp = OsString::from(".");
    tmp.push(name);
    tmp.push(format!(".{}.{}.tmp", std::process::id(), id));
    match target.parent() {
        Some(p) => p.join(tmp),
        None => PathBuf::from(tmp),
    }
}

fn is_kind(e: &io::Error, errno: i32) -> bool {
    e.raw_os_error() == Some(errno)
}

fn not_found(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::NotFound
}

/// Opens `p` exclusively (`'wx'`: create_new) and writes `data`.
fn write_new(p: &Path, data: &[u8]) -> io::Result<()> {
    let mut f = OpenOptions::new().write(true).create_new(true).open(p)?;
    f.write_all(data)
}

fn remove_quiet(p: &Path) -> io::Result<()> {
    match fs::remove_file(p) {
        Err(e) if not_found(&e) => Ok(()),
        r => r,
    }
}

fn append_bytes(p: &Path, data: &[u8]) -> io::Result<()> {
    let mut f = OpenOptions::new().append(true).create(true).open(p)?;
    f.write_all(data)
}

// ---- publish ----------------------------------------------------------------------------------

fn publish_direct(req: Req) -> Prep {
    let data = publish_content(&req)?;
    Ok(Box::new(move |_ctx| {
        let mut step = "open";
        let r = (|| {
            let mut f = File::create(&req.target)?;
            step = "write";
            write_chunks(&mut f, &data)?;
            step = "close";
            drop(f);
            Ok(())
        })();
        match r {
            Ok(()) => Outcome::ok(),
            Err(e) => Outcome::failed(step, &e),
        }
    }))
}

fn publish_temp_rename(req: Req) -> Prep {
    let temp = path_param(&req, "temp")?.unwrap_or_else(|| default_temp(&req.target, &req.id));
    let fsync = bool_param(&req, "fsync")?;
    let data = publish_content(&req)?;
    Ok(Box::new(move |_ctx| {
        let mut step = "open";
        let mut created = false;
        let r = (|| {
            let mut f = OpenOptions::new().write(true).create_new(true).open(&temp)?;
            created = true;
            step = "write";
            write_chunks(&mut f, &data)?;
            if fsync {
                step = "fsync";
                f.sync_all()?;
            }
            step = "close";
            drop(f);
            step = "rename";
            fs::rename(&temp, &req.target)
        })();
        match r {
            Ok(()) => Outcome::ok(),
            Err(e) => {
                if created {
                    let _ = fs::remove_file(&temp);
                }
                Outcome::failed(step, &e)
            }
        }
    }))
}

fn claim_rename(req: Req) -> Prep {
    let Some(source) = req.source.clone() else {
        return Err("claim.rename needs a source".into());
    };
    Ok(Box::new(move |_ctx| match fs::rename(&source, &req.target) {
        Ok(()) => Outcome::ok(),
        Err(e) => Outcome::failed("rename", &e),
    }))
}

fn read_poll(req: Req) -> Prep {
    let whole: HashSet<Vec<u8>> = match req.params.get("expect") {
        Some(Value::Array(a)) if a.iter().all(Value::is_string) => {
            a.iter().map(|s| s.as_str().unwrap().as_bytes().to_vec()).collect()
        }
        _ => return Err("read.poll needs params.expect: the list of complete contents (strings)".into()),
    };
    Ok(Box::new(move |ctx| {
        let mut c = Counters::new(&["reads", "complete", "empty", "torn", "absent", "errors", "changes"]);
        let mut sample = Vec::new();
        // the class of the previous read and its bytes
        let mut last: Option<(u8, Vec<u8>)> = None;
        let mut next_poll = 0.0;
        let mut stopping = false;
        loop {
            c.inc("reads");
            let seen = match fs::read(&req.target) {
                Ok(b) if b.is_empty() => {
                    c.inc("empty");
                    (b'E', b)
                }
                Ok(b) if whole.contains(&b) => {
                    c.inc("complete");
                    (b'C', b)
                }
                Ok(b) => {
                    c.inc("torn");
                    (b'T', b)
                }
                Err(e) if not_found(&e) => {
                    c.inc("absent");
                    (b'A', Vec::new())
                }
                Err(e) => {
                    c.inc("errors");
                    if sample.len() < ERRORS_SAMPLE_MAX {
                        sample.push(raw(&e));
                    }
                    (b'X', e.raw_os_error().unwrap_or(0).to_string().into_bytes())
                }
            };
            if let Some(l) = &last {
                if *l != seen {
                    c.inc("changes");
                }
            }
            last = Some(seen);
            if stopping {
                break;
            }
            let now = now_ms();
            if now >= next_poll {
                stopping = ctx.stop_requested();
                next_poll = now + 1.0;
            }
        }
        Outcome::ok().with(c).sampled(sample)
    }))
}

// ---- claim ------------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq)]
enum ClaimMethod {
    ListThenOpen,
    Rename,
    Marker,
}

fn claim_worker(method: ClaimMethod, req: Req) -> Prep {
    let incoming = path_param(&req, "incoming")?;
    let output = path_param(&req, "output")?;
    let processing = if method == ClaimMethod::Rename { path_param(&req, "processing")? } else { None };
    let (Some(incoming), Some(output)) = (incoming, output) else {
        return Err("claim workers need params.incoming, params.output (and params.processing to move into)".into());
    };
    if method == ClaimMethod::Rename && processing.is_none() {
        return Err("claim workers need params.incoming, params.output (and params.processing to move into)".into());
    }
    Ok(Box::new(move |_ctx| {
        let mut c = Counters::new(&["rounds", "listed", "claimed", "claim_failed", "delete_failed", "processed"]);
        let mut sample = Vec::new();
        let mut out = match OpenOptions::new().append(true).create(true).open(&output) {
            Ok(f) => f,
            Err(e) => return Outcome::failed("output", &e).with(c).sampled(sample),
        };
        let mut idle = 0u64;
        loop {
            c.inc("rounds");
            let names: Vec<OsString> = match fs::read_dir(&incoming)
                .and_then(|d| d.map(|e| e.map(|e| e.file_name())).collect::<io::Result<Vec<_>>>())
            {
                Ok(n) => n.into_iter().filter(|n| !n.as_bytes().ends_with(b".claim")).collect(),
                Err(e) => return Outcome::failed("list", &e).with(c).sampled(sample),
            };
            if names.is_empty() {
                break;
            }
            let mut progress = false;
            for name in names {
                c.inc("listed");
                let item = incoming.join(&name);
                let mut at = item.clone();
                let claimed = (|| {
                    match method {
                        ClaimMethod::Rename => {
                            at = processing.as_ref().unwrap().join(&name);
                            fs::rename(&item, &at)?;
                        }
                        ClaimMethod::Marker => {
                            let mut m = item.clone().into_os_string();
                            m.push(".claim");
                            OpenOptions::new().write(true).create_new(true).open(PathBuf::from(m))?;
                        }
                        ClaimMethod::ListThenOpen => {}
                    }
                    fs::read(&at)
                })();
                let mut data = match claimed {
                    Ok(d) => d,
                    Err(e) => {
                        c.inc("claim_failed");
                        if sample.len() < ERRORS_SAMPLE_MAX {
                            sample.push(raw(&e));
                        }
                        continue;
                    }
                };
                c.inc("claimed");
                data.push(b'\n');
                if let Err(e) = out.write_all(&data) {
                    return Outcome::failed("output", &e).with(c).sampled(sample);
                }
                c.inc("processed");
                progress = true;
                if let Err(e) = fs::remove_file(&at) {
                    c.inc("delete_failed");
                    if sample.len() < ERRORS_SAMPLE_MAX {
                        sample.push(raw(&e));
                    }
                }
            }
            idle = if progress { 0 } else { idle + 1 };
            if idle >= CLAIM_STUCK_ROUNDS {
                return Outcome {
                    ok: false,
                    error: None,
                    step: Some("stuck"),
                    counters: Some(c),
                    sample: Some(sample),
                };
            }
        }
        Outcome::ok().with(c).sampled(sample)
    }))
}

// ---- done-marker --------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq)]
enum DoneMethod {
    MarkerAfterData,
    MarkerBeforeData,
    SizeStable,
    MtimeStable,
}

fn done_writer(method: DoneMethod, req: Req) -> Prep {
    let data = publish_content(&req)?;
    let marker = path_param(&req, "marker")?;
    let uses_marker = matches!(method, DoneMethod::MarkerAfterData | DoneMethod::MarkerBeforeData);
    if marker.is_none() && uses_marker {
        return Err("a marker method needs params.marker".into());
    }
    let chunk_ms = match req.params.get("chunk_ms") {
        None | Some(Value::Null) => 0,
        v => match int_value(v) {
            Some(n) if (0..=1000).contains(&n) => n,
            _ => return Err("params.chunk_ms must be an integer from 0 to 1000".into()),
        },
    };
    let name = req.target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let manifest = J::Obj(vec![
        ("name", J::Str(name)),
        ("size", J::Int(data.len() as i64)),
        ("records", J::Int(data.iter().filter(|b| **b == b'\n').count() as i64)),
        ("idempotency_key", J::str(req.token.clone())),
    ])
    .text()
    .into_bytes();
    Ok(Box::new(move |_ctx| {
        let mut step = "manifest";
        let r = (|| {
            if method == DoneMethod::MarkerBeforeData {
                fs::write(marker.as_ref().unwrap(), &manifest)?;
            }
            step = "open";
            let mut f = File::create(&req.target)?;
            step = "write";
            for (i, chunk) in data.chunks(PUBLISH_CHUNK).enumerate() {
                if i > 0 {
                    sleep_ms(chunk_ms as f64);
                }
                f.write_all(chunk)?;
            }
            step = "close";
            drop(f);
            step = "manifest";
            if method == DoneMethod::MarkerAfterData {
                fs::write(marker.as_ref().unwrap(), &manifest)?;
            }
            Ok(())
        })();
        match r {
            Ok(()) => Outcome::ok(),
            Err(e) => Outcome::failed(step, &e),
        }
    }))
}

fn consume_poll(req: Req) -> Prep {
    let rule = string_param(&req, "rule")?.unwrap_or_default();
    let marker = path_param(&req, "marker")?;
    let stable_ms = match req.params.get("stable_ms") {
        None | Some(Value::Null) => 0,
        v => int_value(v).filter(|n| *n >= 0).ok_or("params.stable_ms must be a whole number")?,
    } as f64;
    if !["marker", "size-stable", "mtime-stable"].contains(&rule.as_str()) || (rule == "marker" && marker.is_none()) {
        return Err(
            "consume.poll needs params.rule (marker, size-stable, mtime-stable) and params.marker for marker".into()
        );
    }
    let whole = match req.params.get("expect") {
        Some(Value::Array(a)) if a.first().map(Value::is_string).unwrap_or(false) => {
            a[0].as_str().unwrap().as_bytes().to_vec()
        }
        _ => return Err("consume.poll needs params.expect".into()),
    };
    Ok(Box::new(move |ctx| {
        let mut c = Counters::new(&["consumed", "whole", "partial", "checks"]);
        #[derive(PartialEq)]
        enum Key {
            Size(u64),
            Mtime(Option<SystemTime>),
        }
        let mut last: Option<Key> = None;
        let mut since = 0.0;
        let mut deadline: Option<f64> = None;
        loop {
            c.inc("checks");
            let now = now_ms();
            let mut ready = false;
            if rule == "marker" {
                ready = marker.as_ref().unwrap().exists();
            } else if let Ok(st) = fs::metadata(&req.target) {
                let key = if rule == "size-stable" { Key::Size(st.len()) } else { Key::Mtime(st.modified().ok()) };
                if st.len() > 0 && last.as_ref() == Some(&key) {
                    ready = now - since >= stable_ms;
                } else {
                    last = Some(key);
                    since = now;
                }
            }
            if ready {
                c.set("consumed", 1);
                match fs::read(&req.target) {
                    Ok(b) if b == whole => c.set("whole", 1),
                    _ => c.set("partial", 1),
                }
                break;
            }
            if deadline.is_none() && ctx.stop_requested() {
                deadline = Some(now + 2.0 * stable_ms + 100.0);
            }
            if let Some(d) = deadline {
                if now >= d {
                    break;
                }
            }
            sleep_ms(1.0);
        }
        while deadline.is_none() && !ctx.stop_requested() {
            sleep_ms(1.0);
        }
        Outcome::ok().with(c).sampled(Vec::new())
    }))
}

// ---- lease ------------------------------------------------------------------------------------

fn lease_record(token: &str, ttl_ms: i64) -> Vec<u8> {
    let now = wall_ms();
    J::Obj(vec![
        ("ownerId", J::str(token)),
        ("host", J::str(std::env::var("HOSTNAME").unwrap_or_default())),
        ("pid", J::Int(std::process::id() as i64)),
        ("acquiredAt", J::Int(now)),
        ("expiresAt", J::Int(now + ttl_ms)),
        ("heartbeatAt", J::Int(now)),
    ])
    .text()
    .into_bytes()
}

/// The lease record at `p`: Ok(None) when absent, Ok(Some(None)) when it does not parse as an
/// object, Ok(Some(Some(record))) otherwise.
fn read_lease(p: &Path) -> io::Result<Option<Option<serde_json::Map<String, Value>>>> {
    let text = match fs::read(p) {
        Ok(t) => t,
        Err(e) if not_found(&e) => return Ok(None),
        Err(e) => return Err(e),
    };
    Ok(Some(match serde_json::from_slice::<Value>(&text) {
        Ok(Value::Object(m)) => Some(m),
        _ => None,
    }))
}

/// JavaScript's `Number(v)` for a record's field (NaN where it is not a number).
fn number_of(v: Option<&Value>) -> f64 {
    match v {
        Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
        Some(Value::String(s)) => {
            let t = s.trim();
            if t.is_empty() {
                0.0
            } else {
                t.parse().unwrap_or(f64::NAN)
            }
        }
        Some(Value::Bool(b)) => *b as i64 as f64,
        Some(Value::Null) => 0.0,
        _ => f64::NAN,
    }
}

fn mtime_age_ms(st: &fs::Metadata) -> f64 {
    match st.modified() {
        Ok(m) => match SystemTime::now().duration_since(m) {
            Ok(d) => d.as_secs_f64() * 1000.0,
            Err(e) => -(e.duration().as_secs_f64() * 1000.0),
        },
        Err(_) => 0.0,
    }
}

#[derive(Clone, Copy, PartialEq)]
enum LeaseMethod {
    Mtime,
    Expires,
    RenameAside,
    Breaker,
    DirMtime,
}

fn lease_taker(method: LeaseMethod, req: Req) -> Prep {
    let (Some(lease), Some(held)) = (path_param(&req, "lease")?, path_param(&req, "held")?) else {
        return Err("a lease taker needs params.lease and params.held".into());
    };
    let stale_ms = positive_param(&req, "stale_ms", 86_400_000)? as f64;
    let ttl_ms = positive_param(&req, "ttl_ms", 86_400_000)?;
    let stall_us = optional_param(&req, "stall_us", 1_000_000)? as u64;
    let record = lease_record(&req.token, ttl_ms);
    Ok(Box::new(move |_ctx| {
        let mut c = Counters::new(&["acquired", "fresh", "unreadable", "restore_failed"]);
        let mut step = "check";
        let r: io::Result<bool> = (|| {
            // the marker is written as soon as the taker holds the lease
            let mark_held = |c: &mut Counters, step: &mut &'static str| -> io::Result<()> {
                if c.get("acquired") == 1 {
                    return Ok(());
                }
                *step = "held";
                write_new(&held, req.token.as_bytes())?;
                c.set("acquired", 1);
                Ok(())
            };
            // dir-mtime's first mkdir is its check: no wait before it
            let first = std::cell::Cell::new(method == LeaseMethod::DirMtime);
            let create = |step: &mut &'static str| -> io::Result<bool> {
                if !first.replace(false) {
                    stall(stall_us);
                }
                *step = "create";
                let r = if method == LeaseMethod::DirMtime {
                    fs::create_dir(&lease).and_then(|_| {
                        stall(stall_us);
                        *step = "record";
                        fs::write(lease.join("owner"), &record)
                    })
                } else {
                    write_new(&lease, &record)
                };
                match r {
                    Ok(()) => Ok(true),
                    Err(e) if *step == "create" && e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
                    Err(e) => Err(e),
                }
            };
            let done = |acquired: bool, c: &mut Counters, step: &mut &'static str| -> io::Result<bool> {
                if acquired {
                    mark_held(c, step)?;
                }
                Ok(true)
            };
            if method == LeaseMethod::Mtime || method == LeaseMethod::DirMtime {
                if method == LeaseMethod::DirMtime {
                    if create(&mut step)? {
                        return done(true, &mut c, &mut step);
                    }
                    step = "check";
                }
                let st = match fs::metadata(&lease) {
                    Ok(st) => Some(st),
                    Err(e) if not_found(&e) => None,
                    Err(e) => return Err(e),
                };
                if let Some(st) = &st {
                    if mtime_age_ms(st) < stale_ms {
                        c.set("fresh", 1);
                        return done(false, &mut c, &mut step);
                    }
                }
                stall(stall_us);
                step = "delete";
                if method == LeaseMethod::DirMtime {
                    remove_quiet(&lease.join("owner"))?;
                    match fs::remove_dir(&lease) {
                        Ok(()) => {}
                        Err(e) if not_found(&e) => {}
                        Err(e) if is_kind(&e, libc::ENOTEMPTY) || is_kind(&e, libc::EEXIST) => {
                            return done(false, &mut c, &mut step)
                        }
                        Err(e) => return Err(e),
                    }
                } else if st.is_some() {
                    remove_quiet(&lease)?;
                }
                let took = create(&mut step)?;
                return done(took, &mut c, &mut step);
            }
            let seen = read_lease(&lease)?;
            let Some(seen) = seen else {
                let took = create(&mut step)?;
                return done(took, &mut c, &mut step);
            };
            let Some(seen) = seen else {
                c.set("unreadable", 1);
                return done(false, &mut c, &mut step);
            };
            // live unless expiresAt is a number at or before now (a missing or odd field: live)
            let expired = number_of(seen.get("expiresAt")) <= wall_ms() as f64;
            if !expired {
                c.set("fresh", 1);
                return done(false, &mut c, &mut step);
            }
            if method == LeaseMethod::Expires {
                stall(stall_us);
                step = "delete";
                remove_quiet(&lease)?;
                let took = create(&mut step)?;
                return done(took, &mut c, &mut step);
            }
            if method == LeaseMethod::RenameAside {
                let mut aside = lease.clone().into_os_string();
                aside.push(format!(".{}.stale", req.token));
                let aside = PathBuf::from(aside);
                stall(stall_us);
                step = "rename";
                match fs::rename(&lease, &aside) {
                    Ok(()) => {}
                    Err(e) if not_found(&e) => return done(false, &mut c, &mut step),
                    Err(e) => return Err(e),
                }
                stall(stall_us);
                step = "recheck";
                let moved = read_lease(&aside)?;
                if let Some(Some(m)) = &moved {
                    if m.get("ownerId") == seen.get("ownerId") {
                        stall(stall_us);
                        step = "delete";
                        remove_quiet(&aside)?;
                        let took = create(&mut step)?;
                        return done(took, &mut c, &mut step);
                    }
                }
                stall(stall_us);
                step = "restore";
                match fs::hard_link(&aside, &lease) {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => c.set("restore_failed", 1),
                    Err(e) => return Err(e),
                }
                remove_quiet(&aside)?;
                return done(false, &mut c, &mut step);
            }
            // breaker
            let mut breaker = lease.clone().into_os_string();
            breaker.push(".takeover");
            let breaker = PathBuf::from(breaker);
            stall(stall_us);
            step = "breaker";
            match OpenOptions::new().write(true).create_new(true).open(&breaker) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return done(false, &mut c, &mut step),
                Err(e) => return Err(e),
            }
            let mut took = false;
            let inner: io::Result<()> = (|| {
                stall(stall_us);
                step = "recheck";
                let again = read_lease(&lease)?;
                let same = match &again {
                    None => true,
                    Some(Some(r)) => r.get("ownerId") == seen.get("ownerId"),
                    Some(None) => false,
                };
                if same {
                    stall(stall_us);
                    step = "delete";
                    if again.is_some() {
                        remove_quiet(&lease)?;
                    }
                    took = create(&mut step)?;
                    if took {
                        mark_held(&mut c, &mut step)?;
                    }
                }
                Ok(())
            })();
            let failed = inner.err().map(|e| (e, step));
            // the breaker goes whatever happened; a failed step before it is the one reported
            let unbreak = remove_quiet(&breaker);
            if let Some((e, s)) = failed {
                step = s;
                return Err(e);
            }
            if let Err(e) = unbreak {
                step = "unbreak";
                return Err(e);
            }
            done(took, &mut c, &mut step)
        })();
        match r {
            Ok(_) => Outcome::ok().with(c),
            Err(e) => Outcome::failed(step, &e).with(c),
        }
    }))
}

// ---- holder -----------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq)]
enum HolderMethod {
    NoCheck,
    RenewBlind,
    CheckOwner,
}

fn holder_worker(method: HolderMethod, req: Req) -> Prep {
    let (Some(lease), Some(effect)) = (path_param(&req, "lease")?, path_param(&req, "effect")?) else {
        return Err("a lease holder needs params.lease and params.effect".into());
    };
    let ttl_ms = positive_param(&req, "ttl_ms", 86_400_000)?;
    let work_ms = positive_param(&req, "work_ms", 86_400_000)?;
    Ok(Box::new(move |_ctx| {
        let mut c = Counters::new(&["effect", "renewed", "released", "lost"]);
        let mut step = "work";
        let r: io::Result<()> = (|| {
            let mine = |c: &mut Counters, step: &mut &'static str| -> io::Result<bool> {
                *step = "check";
                let ok = matches!(read_lease(&lease)?, Some(Some(r)) if r.get("ownerId").and_then(Value::as_str) == Some(req.token.as_str()));
                if !ok {
                    c.set("lost", 1);
                }
                Ok(ok)
            };
            sleep_ms(work_ms as f64);
            if method == HolderMethod::CheckOwner && !mine(&mut c, &mut step)? {
                return Ok(());
            }
            if method != HolderMethod::NoCheck {
                step = "renew";
                fs::write(&lease, lease_record(&req.token, ttl_ms))?;
                c.set("renewed", 1);
            }
            if method == HolderMethod::CheckOwner && !mine(&mut c, &mut step)? {
                return Ok(());
            }
            step = "effect";
            write_new(&effect, req.token.as_bytes())?;
            c.set("effect", 1);
            if method == HolderMethod::RenewBlind {
                return Ok(());
            }
            if method == HolderMethod::CheckOwner && !mine(&mut c, &mut step)? {
                return Ok(());
            }
            step = "release";
            remove_quiet(&lease)?;
            c.set("released", 1);
            Ok(())
        })();
        match r {
            Ok(()) => Outcome::ok().with(c),
            Err(e) => Outcome::failed(step, &e).with(c),
        }
    }))
}

// ---- ledger -----------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq)]
enum LedgerMethod {
    KeyFirst,
    CheckProcessAppend,
    CheckProcessCreate,
}

fn ledger_worker(method: LedgerMethod, req: Req) -> Prep {
    let key = string_param(&req, "key")?;
    let effect = path_param(&req, "effect")?;
    let ledger = path_param(&req, "ledger")?;
    let list = path_param(&req, "list")?;
    let (Some(key), Some(effect), Some(ledger), Some(list)) = (key, effect, ledger, list) else {
        return Err("a ledger worker needs params.key, params.effect, params.ledger and params.list".into());
    };
    let key_file = ledger.join(&key);
    Ok(Box::new(move |_ctx| {
        let mut c = Counters::new(&["processed", "skipped", "record_refused"]);
        let mut step = "check";
        let r: io::Result<()> = (|| {
            let effect_now = |c: &mut Counters, step: &mut &'static str| -> io::Result<()> {
                *step = "effect";
                write_new(&effect, req.token.as_bytes())?;
                c.set("processed", 1);
                Ok(())
            };
            match method {
                LedgerMethod::KeyFirst => {
                    step = "record";
                    match write_new(&key_file, req.token.as_bytes()) {
                        Ok(()) => {}
                        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                            c.set("skipped", 1);
                            return Ok(());
                        }
                        Err(e) => return Err(e),
                    }
                    effect_now(&mut c, &mut step)?;
                }
                LedgerMethod::CheckProcessAppend => {
                    let text = match fs::read_to_string(&list) {
                        Ok(t) => t,
                        Err(e) if not_found(&e) => String::new(),
                        Err(e) => return Err(e),
                    };
                    if text.split('\n').any(|l| l == key) {
                        c.set("skipped", 1);
                        return Ok(());
                    }
                    effect_now(&mut c, &mut step)?;
                    step = "record";
                    append_bytes(&list, format!("{key}\n").as_bytes())?;
                }
                LedgerMethod::CheckProcessCreate => {
                    if key_file.exists() {
                        c.set("skipped", 1);
                        return Ok(());
                    }
                    effect_now(&mut c, &mut step)?;
                    step = "record";
                    match write_new(&key_file, req.token.as_bytes()) {
                        Ok(()) => {}
                        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => c.set("record_refused", 1),
                        Err(e) => return Err(e),
                    }
                }
            }
            Ok(())
        })();
        match r {
            Ok(()) => Outcome::ok().with(c),
            Err(e) => Outcome::failed(step, &e).with(c),
        }
    }))
}

// ---- update -----------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq)]
enum UpdateMethod {
    ReadModifyWrite,
    LockedReadModifyWrite,
    TempRename,
    LockedTempRename,
    AppendLine,
}

fn update_worker(method: UpdateMethod, req: Req) -> Prep {
    let counter = path_param(&req, "counter")?;
    let lock = path_param(&req, "lock")?;
    let temp = path_param(&req, "temp")?;
    let increments = int_value(req.params.get("increments")).filter(|n| *n >= 0);
    let (Some(counter), Some(lock), Some(temp), Some(increments)) = (counter, lock, temp, increments) else {
        return Err("an update worker needs params.counter, params.lock, params.temp and params.increments".into());
    };
    let locked = matches!(method, UpdateMethod::LockedReadModifyWrite | UpdateMethod::LockedTempRename);
    let via_temp = matches!(method, UpdateMethod::TempRename | UpdateMethod::LockedTempRename);
    Ok(Box::new(move |_ctx| {
        let mut c = Counters::new(&["increments", "unreadable_reads", "lock_waits"]);
        let mut step = "read";
        let r: io::Result<()> = (|| {
            for _ in 0..increments {
                if method == UpdateMethod::AppendLine {
                    step = "append";
                    append_bytes(&counter, b"1\n")?;
                    c.inc("increments");
                    continue;
                }
                if locked {
                    step = "lock";
                    let until = now_ms() + UPDATE_LOCK_WAIT_MS;
                    loop {
                        match OpenOptions::new().write(true).create_new(true).open(&lock) {
                            Ok(_) => break,
                            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                            Err(e) => return Err(e),
                        }
                        c.inc("lock_waits");
                        if now_ms() > until {
                            return Err(other(format!("the lock stayed taken for {UPDATE_LOCK_WAIT_MS} ms")));
                        }
                        sleep_ms(0.1);
                    }
                }
                let mut tries = 0;
                let value: u64 = loop {
                    step = "read";
                    let text = fs::read_to_string(&counter)?;
                    let t = text.trim();
                    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
                        if let Ok(v) = t.parse() {
                            break v;
                        }
                    }
                    c.inc("unreadable_reads");
                    if tries >= UPDATE_READ_TRIES {
                        return Err(other(format!(
                            "the counter held no whole number {UPDATE_READ_TRIES} times in a row"
                        )));
                    }
                    tries += 1;
                };
                let next = format!("{}\n", value + 1);
                if via_temp {
                    step = "write";
                    write_new(&temp, next.as_bytes())?;
                    step = "rename";
                    fs::rename(&temp, &counter)?;
                } else {
                    step = "write";
                    fs::write(&counter, next.as_bytes())?;
                }
                c.inc("increments");
                if locked {
                    step = "unlock";
                    fs::remove_file(&lock)?;
                }
            }
            Ok(())
        })();
        match r {
            Ok(()) => Outcome::ok().with(c),
            Err(e) => Outcome::failed(step, &e).with(c),
        }
    }))
}

// ---- os-lock ----------------------------------------------------------------------------------

/// The OS locks this probe takes, by recipe id: `os-lock.none` (open read+write, no lock: the
/// control) and `os-lock.flock` (File::try_lock: flock(LOCK_EX|LOCK_NB) on Unix). Neither
/// waits: a lock another process holds is refused, so a second holder's try is the same call.
const OS_LOCKS: &[&str] = &["os-lock.none", "os-lock.flock"];

/// Opens `p` and takes the lock of `id`; the returned File holds it until it is dropped
/// (`unlock` first for flock).
fn take_os_lock(id: &str, p: &Path) -> io::Result<File> {
    let f = OpenOptions::new().read(true).write(true).open(p)?;
    if id == "os-lock.flock" {
        f.try_lock().map_err(io::Error::from)?;
    }
    Ok(f)
}

fn release_os_lock(id: &str, f: File) -> io::Result<()> {
    if id == "os-lock.flock" {
        f.unlock()?;
    }
    drop(f);
    Ok(())
}

fn files_param(req: &Req) -> Result<Option<Vec<(String, PathBuf)>>, String> {
    match req.params.get("files") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) => {
            let mut out = Vec::new();
            for (k, v) in m {
                match v.as_str() {
                    Some(s) if !s.is_empty() => out.push((k.clone(), PathBuf::from(s))),
                    _ => return Err(format!("params.files.{k} must be a non-empty string")),
                }
            }
            Ok(Some(out))
        }
        _ => Err("params.files must be an object of paths".into()),
    }
}

fn os_lock_holder(id: &'static str, req: Req) -> Prep {
    let files = files_param(&req)?;
    let locked = path_param(&req, "locked")?;
    let (Some(files), Some(locked)) = (files, locked) else {
        return Err("an OS-lock holder needs params.files and params.locked".into());
    };
    Ok(Box::new(move |ctx| {
        let mut c = Counters::new(&["locked", "released"]);
        let mut held = Vec::new();
        let mut step = "lock";
        let mut failed: Option<(io::Error, &'static str)> = None;
        let r: io::Result<()> = (|| {
            for (_, p) in &files {
                held.push(take_os_lock(id, p)?);
                c.inc("locked");
            }
            step = "mark";
            OpenOptions::new().write(true).create_new(true).open(&locked)?;
            step = "hold";
            while !ctx.stop_requested() {
                sleep_ms(1.0);
            }
            Ok(())
        })();
        if let Err(e) = r {
            failed = Some((e, step));
        }
        for f in held {
            match release_os_lock(id, f) {
                Ok(()) => c.inc("released"),
                Err(e) => {
                    if failed.is_none() {
                        failed = Some((e, "release"));
                    }
                }
            }
        }
        match failed {
            Some((e, s)) => Outcome::failed(s, &e).with(c),
            None => Outcome::ok().with(c),
        }
    }))
}

fn os_lock_intruder(req: Req) -> Prep {
    let files = files_param(&req)?;
    let locked = path_param(&req, "locked")?;
    let relocked = path_param(&req, "relocked")?;
    let moved = path_param(&req, "moved")?;
    let lock = string_param(&req, "lock")?;
    let (Some(files), Some(locked), Some(relocked), Some(moved), Some(lock)) = (files, locked, relocked, moved, lock)
    else {
        return Err(
            "an OS-lock intruder needs params.files, params.locked, params.relocked, params.moved and params.lock"
                .into(),
        );
    };
    let Some(lock) = OS_LOCKS.iter().copied().find(|l| *l == lock) else {
        return Err(format!("no {lock} here"));
    };
    let file = |name: &str| files.iter().find(|(k, _)| k == name).map(|(_, p)| p.clone());
    let (Some(f_write), Some(f_append), Some(f_rename), Some(f_delete), Some(f_relock)) =
        (file("write"), file("append"), file("rename"), file("delete"), file("relock"))
    else {
        return Err("an OS-lock intruder needs params.files.write, append, rename, delete and relock".into());
    };
    let wait_ms = positive_param(&req, "wait_ms", 600_000)? as f64;
    // try_lock never waits: relock_ms is checked, not needed
    positive_param(&req, "relock_ms", 600_000)?;
    Ok(Box::new(move |_ctx| {
        let mut c = Counters::new(&["write", "append", "rename", "delete", "mmap_tried", "relock"]);
        let mut sample = Vec::new();
        let until = now_ms() + wait_ms;
        while !locked.exists() {
            if now_ms() > until {
                let e = other(format!("the holder had not locked its files after {wait_ms} ms"));
                return Outcome::failed("wait", &e).with(c);
            }
            sleep_ms(1.0);
        }
        let mut attempt = |c: &mut Counters, name: &'static str, r: io::Result<()>| match r {
            Ok(()) => c.set(name, 1),
            Err(e) => {
                if sample.len() < ERRORS_SAMPLE_MAX {
                    sample.push(raw(&e));
                }
            }
        };
        attempt(&mut c, "write", fs::write(&f_write, req.token.as_bytes()));
        attempt(&mut c, "append", append_bytes(&f_append, req.token.as_bytes()));
        attempt(&mut c, "rename", fs::rename(&f_rename, &moved));
        attempt(&mut c, "delete", fs::remove_file(&f_delete));
        // std has no memory-mapped files: mmap_tried stays 0
        let relock = (|| {
            let h = take_os_lock(lock, &f_relock)?;
            let r = write_new(&relocked, req.token.as_bytes());
            release_os_lock(lock, h)?;
            r
        })();
        attempt(&mut c, "relock", relock);
        Outcome::ok().with(c).sampled(sample)
    }))
}

// ---- watch ------------------------------------------------------------------------------------

/// The folder-watch consumer by listing (`watch.poll`): every params.rescan_ms it lists
/// params.dir and appends each name not recorded yet to params.record; once watching it
/// creates params.watching ('wx'); until `stop`. std has no change notifications, so the
/// events methods are not here.
fn watch_poll(req: Req) -> Prep {
    let dir = path_param(&req, "dir")?;
    let record = path_param(&req, "record")?;
    let watching = path_param(&req, "watching")?;
    let (Some(dir), Some(record), Some(watching)) = (dir, record, watching) else {
        return Err("a watch consumer needs params.dir, params.record and params.watching".into());
    };
    let rescan_ms = positive_param(&req, "rescan_ms", 600_000)? as f64;
    Ok(Box::new(move |ctx| {
        let mut c = Counters::new(&["events", "listings", "recorded"]);
        let mut seen: HashSet<OsString> = HashSet::new();
        let mut step = "record";
        let r: io::Result<()> = (|| {
            let mut out = OpenOptions::new().append(true).create(true).open(&record)?;
            step = "mark";
            OpenOptions::new().write(true).create_new(true).open(&watching)?;
            let mut next_list = now_ms() + rescan_ms;
            while !ctx.stop_requested() {
                if now_ms() >= next_list {
                    step = "list";
                    for entry in fs::read_dir(&dir)? {
                        let name = entry?.file_name();
                        if seen.insert(name.clone()) {
                            step = "record";
                            let mut line = name.as_bytes().to_vec();
                            line.push(b'\n');
                            out.write_all(&line)?;
                            c.inc("recorded");
                            step = "list";
                        }
                    }
                    c.inc("listings");
                    next_list = now_ms() + rescan_ms;
                }
                sleep_ms(1.0);
            }
            Ok(())
        })();
        match r {
            Ok(()) => Outcome::ok().with(c),
            Err(e) => Outcome::failed(step, &e).with(c),
        }
    }))
}

// ---- mutex ------------------------------------------------------------------------------------

/// The built-in lock code of the mutex scenario (session.mjs, LOCKS):
/// - check-then-create: `Path::exists` false -> `fs::write` the owner id; release removes it;
/// - exclusive-create: `create_new` + the owner id, AlreadyExists -> not acquired; release
///   removes it only while it holds the owner id.
fn lock_acquire(id: &str, p: &Path, owner: &str) -> io::Result<bool> {
    if id == "mutex.check-then-create" {
        if p.exists() {
            return Ok(false);
        }
        fs::write(p, owner)?;
        return Ok(true);
    }
    match write_new(p, owner.as_bytes()) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e),
    }
}

fn lock_release(id: &str, p: &Path, owner: &str) -> io::Result<()> {
    if id == "mutex.check-then-create" {
        return remove_quiet(p);
    }
    let seen = match fs::read(p) {
        Ok(s) => s,
        Err(e) if not_found(&e) => return Ok(()),
        Err(e) => return Err(e),
    };
    if seen == owner.as_bytes() {
        fs::remove_file(p)?;
    }
    Ok(())
}

fn log_has(log: &Path, prefix: &str) -> io::Result<bool> {
    match fs::read(log) {
        Ok(t) => Ok(t.split(|b| *b == b'\n').any(|l| l.starts_with(prefix.as_bytes()))),
        Err(e) if not_found(&e) => Ok(false),
        Err(e) => Err(e),
    }
}

fn wait_until(mut ready: impl FnMut() -> io::Result<bool>, ms: f64, what: &str) -> io::Result<()> {
    let until = now_ms() + ms;
    while !ready()? {
        if now_ms() > until {
            return Err(other(format!("{what} did not come within {ms} ms")));
        }
        sleep_ms(1.0);
    }
    Ok(())
}

fn mutex_worker(id: &'static str, req: Req) -> Prep {
    let (Some(lock_path), Some(log)) = (path_param(&req, "lock")?, path_param(&req, "log")?) else {
        return Err("a mutex contender needs params.lock and params.log".into());
    };
    let role = req.role.clone().unwrap_or_default();
    if !["contender", "holder", "releaser"].contains(&role.as_str()) {
        return Err(format!("no mutex role {role}"));
    }
    let wait_ms = match req.params.get("wait_ms") {
        None | Some(Value::Null) => 0,
        v => int_value(v)
            .filter(|n| (0..=3_600_000).contains(n))
            .ok_or("params.wait_ms must be an integer from 0 to 3600000")?,
    } as f64;
    let retry_ms = positive_param(&req, "retry_ms", 10_000)? as f64;
    let hold_ms = positive_param(&req, "hold_ms", 600_000)? as f64;
    let go_wait_ms = positive_param(&req, "go_wait_ms", 3_600_000)? as f64;
    let go = path_param(&req, "go")?;
    let holder_token = string_param(&req, "holder")?;
    let released = path_param(&req, "released")?;
    if role == "releaser" && (holder_token.is_none() || released.is_none()) {
        return Err("a releaser needs params.holder and params.released".into());
    }
    Ok(Box::new(move |ctx| {
        let mut c = Counters::new(&["acquired", "released", "tries", "foreign_release", "foreign_refused"]);
        let token = req.token.clone();
        let line = |what: &str| append_bytes(&log, format!("{what} {token} {}\n", wall_ms()).as_bytes());
        let mut step = "load";
        let r: io::Result<()> = (|| {
            if let Some(go) = &go {
                step = "wait";
                wait_until(|| Ok(go.exists()), go_wait_ms, &format!("the go marker {}", go.display()))?;
            }
            if role == "releaser" {
                step = "wait";
                let prefix = format!("enter {} ", holder_token.as_ref().unwrap());
                wait_until(|| log_has(&log, &prefix), go_wait_ms, "the holder's enter line")?;
                step = "release-other";
                match lock_release(id, &lock_path, &token) {
                    Ok(()) => c.set("foreign_release", 1),
                    Err(_) => c.set("foreign_refused", 1),
                }
                write_new(released.as_ref().unwrap(), token.as_bytes())?;
            }
            step = "acquire";
            let until = now_ms() + wait_ms;
            loop {
                c.inc("tries");
                if lock_acquire(id, &lock_path, &token)? {
                    c.set("acquired", 1);
                    break;
                }
                if now_ms() >= until {
                    break;
                }
                sleep_ms(retry_ms);
            }
            if c.get("acquired") == 1 {
                step = "enter";
                line("enter")?;
                step = "hold";
                if role == "holder" {
                    while !ctx.stop_requested() {
                        sleep_ms(2.0);
                    }
                } else {
                    sleep_ms(hold_ms);
                }
                step = "leave";
                line("leave")?;
                step = "release";
                lock_release(id, &lock_path, &token)?;
                c.set("released", 1);
            }
            Ok(())
        })();
        let mut failed = r.err().map(|e| (e, step));
        if let Err(e) = line("done") {
            if failed.is_none() {
                failed = Some((e, "done"));
            }
        }
        match failed {
            Some((e, s)) => Outcome::failed(s, &e).with(c),
            None => Outcome::ok().with(c),
        }
    }))
}

// ---- the recipe table -------------------------------------------------------------------------

/// Every recipe id this probe implements, in the hello's order.
const RECIPES: &[&str] = &[
    "publish.direct",
    "publish.temp-rename",
    "publish.temp-rename-cross-volume",
    "claim.rename",
    "read.poll",
    "claim.list-then-open",
    "claim.rename-claim",
    "claim.exclusive-marker",
    "done.marker-after-data",
    "done.marker-before-data",
    "done.size-stable",
    "done.mtime-stable",
    "consume.poll",
    "lease.mtime-delete-create",
    "lease.expires-delete-create",
    "lease.rename-aside",
    "lease.breaker",
    "lease.dir-mtime",
    "holder.no-check",
    "holder.renew-blind",
    "holder.check-owner",
    "ledger.key-first",
    "ledger.check-process-append",
    "ledger.check-process-create",
    "update.read-modify-write",
    "update.locked-read-modify-write",
    "update.temp-rename",
    "update.locked-temp-rename",
    "update.append-line",
    "os-lock.none",
    "os-lock.flock",
    "os-lock.intrude",
    "watch.poll",
    "mutex.check-then-create",
    "mutex.exclusive-create",
];

fn prepare_recipe(name: &str, req: Req) -> Prep {
    match name {
        "publish.direct" => publish_direct(req),
        "publish.temp-rename" | "publish.temp-rename-cross-volume" => publish_temp_rename(req),
        "claim.rename" => claim_rename(req),
        "read.poll" => read_poll(req),
        "claim.list-then-open" => claim_worker(ClaimMethod::ListThenOpen, req),
        "claim.rename-claim" => claim_worker(ClaimMethod::Rename, req),
        "claim.exclusive-marker" => claim_worker(ClaimMethod::Marker, req),
        "done.marker-after-data" => done_writer(DoneMethod::MarkerAfterData, req),
        "done.marker-before-data" => done_writer(DoneMethod::MarkerBeforeData, req),
        "done.size-stable" => done_writer(DoneMethod::SizeStable, req),
        "done.mtime-stable" => done_writer(DoneMethod::MtimeStable, req),
        "consume.poll" => consume_poll(req),
        "lease.mtime-delete-create" => lease_taker(LeaseMethod::Mtime, req),
        "lease.expires-delete-create" => lease_taker(LeaseMethod::Expires, req),
        "lease.rename-aside" => lease_taker(LeaseMethod::RenameAside, req),
        "lease.breaker" => lease_taker(LeaseMethod::Breaker, req),
        "lease.dir-mtime" => lease_taker(LeaseMethod::DirMtime, req),
        "holder.no-check" => holder_worker(HolderMethod::NoCheck, req),
        "holder.renew-blind" => holder_worker(HolderMethod::RenewBlind, req),
        "holder.check-owner" => holder_worker(HolderMethod::CheckOwner, req),
        "ledger.key-first" => ledger_worker(LedgerMethod::KeyFirst, req),
        "ledger.check-process-append" => ledger_worker(LedgerMethod::CheckProcessAppend, req),
        "ledger.check-process-create" => ledger_worker(LedgerMethod::CheckProcessCreate, req),
        "update.read-modify-write" => update_worker(UpdateMethod::ReadModifyWrite, req),
        "update.locked-read-modify-write" => update_worker(UpdateMethod::LockedReadModifyWrite, req),
        "update.temp-rename" => update_worker(UpdateMethod::TempRename, req),
        "update.locked-temp-rename" => update_worker(UpdateMethod::LockedTempRename, req),
        "update.append-line" => update_worker(UpdateMethod::AppendLine, req),
        "os-lock.none" => os_lock_holder("os-lock.none", req),
        "os-lock.flock" => os_lock_holder("os-lock.flock", req),
        "os-lock.intrude" => os_lock_intruder(req),
        "watch.poll" => watch_poll(req),
        "mutex.check-then-create" => mutex_worker("mutex.check-then-create", req),
        "mutex.exclusive-create" => mutex_worker("mutex.exclusive-create", req),
        other => Err(format!("unknown recipe {other}")),
    }
}

// ---- the session ------------------------------------------------------------------------------

/// A variant's call with what follows it: the mark and the hold.
struct Attempt {
    call: VariantCall,
    mark: Option<PathBuf>,
    token: Vec<u8>,
    hold_ms: u64,
}

impl Attempt {
    fn of(msg: &Value) -> Result<Attempt, String> {
        let call = resolve_variant(msg)?;
        let hold_ms = int_value(msg.get("hold_ms")).filter(|n| *n > 0).unwrap_or(0) as u64;
        let token = msg.get("token").and_then(Value::as_str).unwrap_or("").as_bytes().to_vec();
        Ok(Attempt { call, mark: mark_of(msg), token, hold_ms })
    }

    /// Makes the call between two stamps, then writes the mark and holds the handle on
    /// success. The result's fields: ok, t0_us, t1_us, error.
    fn run(self) -> Vec<(&'static str, J)> {
        let t0 = now_us();
        let r = self.call.call();
        let t1 = now_us();
        let (ok, error) = match r {
            Ok(handle) => {
                let mut out = (true, J::Null);
                if let Some(m) = &self.mark {
                    if let Err(e) = write_mark(m, &self.token) {
                        out = (false, raw_mark(&e));
                    }
                }
                if self.hold_ms > 0 && out.0 {
                    thread::sleep(Duration::from_millis(self.hold_ms));
                }
                drop(handle);
                out
            }
            Err(e) => (false, variant_error(&e)),
        };
        vec![("ok", J::Bool(ok)), ("t0_us", J::Num(t0)), ("t1_us", J::Num(t1)), ("error", error)]
    }
}

/// The release of a thread race: Waiting until `go`, then the release stamp (µs).
#[derive(Clone, Copy)]
enum Gate {
    Waiting,
    Released(f64),
    /// another prepare came instead of `go`: the threads end without calling
    Abandoned,
}

type SharedGate = std::sync::Arc<(std::sync::Mutex<Gate>, std::sync::Condvar)>;

/// What each contender thread hands back: its slot and its result's fields.
type ThreadResults = Receiver<(usize, Vec<(&'static str, J)>)>;

/// prepare-threads: each contender's call resolved here, then given to a thread of its own,
/// which blocks on the gate until `go`, waits its `delay_us` after the release stamp (spinning
/// on the clock), makes the call and hands its result back. Err: the first contender's reason.
fn prepare_threads(msg: &Value) -> Result<(SharedGate, ThreadResults, usize), String> {
    let list = match msg.get("contenders") {
        Some(Value::Array(a)) if !a.is_empty() => a,
        _ => return Err("prepare-threads without contenders".into()),
    };
    let mut attempts = Vec::new();
    for c in list {
        let delay = c.get("delay_us").and_then(Value::as_f64).filter(|d| *d > 0.0).unwrap_or(0.0);
        attempts.push((Attempt::of(c)?, delay));
    }
    let gate: SharedGate = std::sync::Arc::new((std::sync::Mutex::new(Gate::Waiting), std::sync::Condvar::new()));
    let (tx, rx) = mpsc::channel();
    let n = attempts.len();
    for (i, (attempt, delay)) in attempts.into_iter().enumerate() {
        let gate = gate.clone();
        let tx = tx.clone();
        thread::spawn(move || {
            let stamp = {
                let (lock, cv) = &*gate;
                let mut g = lock.lock().unwrap();
                loop {
                    match *g {
                        Gate::Released(s) => break s,
                        Gate::Abandoned => return,
                        Gate::Waiting => {}
                    }
                    g = cv.wait(g).unwrap();
                }
            };
            if delay > 0.0 {
                let at = stamp + delay;
                while now_us() < at {
                    std::hint::spin_loop();
                }
            }
            let _ = tx.send((i, attempt.run()));
        });
    }
    Ok((gate, rx, n))
}

/// Lets the threads of a prepared thread race go without calling (a new prepare came).
fn abandon(prepared: &mut Option<Prepared>) {
    if let Some(Prepared::Threads { gate, .. }) = prepared.take() {
        let (lock, cv) = &*gate;
        *lock.lock().unwrap() = Gate::Abandoned;
        cv.notify_all();
    }
}

enum Prepared {
    Variant { id: Value, attempt: Attempt },
    Threads { id: Value, gate: SharedGate, results: ThreadResults, n: usize },
    Recipe { id: Value, run: Run, mark: Option<PathBuf>, token: Vec<u8> },
}

fn id_of(msg: &Value) -> Value {
    msg.get("id").cloned().unwrap_or(Value::Null)
}

fn id_json(v: &Value) -> J {
    match v {
        Value::Number(n) => match n.as_i64() {
            Some(i) => J::Int(i),
            None => J::Num(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => J::str(s.clone()),
        _ => J::Null,
    }
}

fn ready(id: &Value, reason: Option<String>) {
    let mut o = vec![("type", J::str("ready")), ("id", id_json(id)), ("supported", J::Bool(reason.is_none()))];
    if let Some(r) = reason {
        o.push(("reason", J::Str(r)));
    }
    send(&J::Obj(o));
}

fn mark_of(msg: &Value) -> Option<PathBuf> {
    msg.get("mark").and_then(Value::as_str).filter(|s| !s.is_empty()).map(PathBuf::from)
}

fn hello() -> J {
    let version = std::env::var("CONFORMANCE_RUSTC_VERSION")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .or_else(|| option_env!("CONFORMANCE_RUSTC_VERSION").map(String::from))
        .unwrap_or_else(|| "unknown".into());
    J::Obj(vec![
        ("protocol", J::Int(PROTOCOL)),
        ("type", J::str("hello")),
        ("probe", J::str("rust")),
        ("families", J::Arr(vec![J::str("rust")])),
        ("runtime", J::str("rust")),
        ("version", J::Str(version.trim().to_string())),
        ("pid", J::Int(std::process::id() as i64)),
        ("clock", J::str("monotonic")),
        ("variants", J::Arr(VARIANTS.iter().map(|(v, _)| J::str(*v)).collect())),
        ("recipes", J::Arr(RECIPES.iter().map(|r| J::str(*r)).collect())),
        ("capabilities", J::Arr(vec![J::str("threads")])),
    ])
}

fn main() {
    send(&hello());
    let mut input = Input::start();
    let mut prepared: Option<Prepared> = None;
    while let Some(line) = input.next() {
        if line.trim().is_empty() {
            continue;
        }
        let msg: Value = match serde_json::from_str(&line) {
            Ok(v @ Value::Object(_)) => v,
            _ => fatal(&format!("not a JSON object: {line}"), 3),
        };
        let kind = msg.get("type").and_then(Value::as_str).unwrap_or("");
        match kind {
            "quit" => break,
            "stop" => continue, // nothing runs: the result was sent already
            "prepare" => {
                abandon(&mut prepared);
                let id = id_of(&msg);
                let token = msg.get("token").and_then(Value::as_str).unwrap_or("").to_string();
                if let Some(recipe) = msg.get("recipe").filter(|r| !r.is_null()) {
                    let name = recipe.as_str().unwrap_or("");
                    if !RECIPES.contains(&name) {
                        ready(&id, Some(format!("unknown recipe {recipe}")));
                        continue;
                    }
                    let Some(target) = msg.get("target").and_then(Value::as_str) else {
                        ready(&id, Some("the prepare has no target".into()));
                        continue;
                    };
                    let params = match msg.get("params") {
                        Some(Value::Object(m)) => m.clone(),
                        _ => serde_json::Map::new(),
                    };
                    let req = Req {
                        id: id.clone(),
                        target: PathBuf::from(target),
                        source: msg.get("source").and_then(Value::as_str).filter(|s| !s.is_empty()).map(PathBuf::from),
                        data: token.as_bytes().to_vec(),
                        token: token.clone(),
                        params,
                        role: msg.get("role").and_then(Value::as_str).map(String::from),
                    };
                    match prepare_recipe(name, req) {
                        Ok(run) => {
                            prepared = Some(Prepared::Recipe {
                                id: id.clone(),
                                run,
                                mark: mark_of(&msg),
                                token: token.into_bytes(),
                            });
                            ready(&id, None);
                        }
                        Err(reason) => ready(&id, Some(reason)),
                    }
                    continue;
                }
                match Attempt::of(&msg) {
                    Ok(attempt) => {
                        prepared = Some(Prepared::Variant { id: id.clone(), attempt });
                        ready(&id, None);
                    }
                    Err(reason) => ready(&id, Some(reason)),
                }
            }
            "go" => {
                let id = id_of(&msg);
                let attempt = prepared.take();
                let matches = match &attempt {
                    Some(Prepared::Variant { id: p, .. })
                    | Some(Prepared::Recipe { id: p, .. })
                    | Some(Prepared::Threads { id: p, .. }) => *p == id,
                    None => false,
                };
                if !matches {
                    fatal(&format!("go {id} without prepare"), 3);
                }
                match attempt.unwrap() {
                    Prepared::Variant { id, attempt } => {
                        let mut o = vec![("type", J::str("result")), ("id", id_json(&id))];
                        o.extend(attempt.run());
                        send(&J::Obj(o));
                    }
                    Prepared::Threads { id, gate, results, n } => {
                        let stamp = now_us();
                        {
                            let (lock, cv) = &*gate;
                            *lock.lock().unwrap() = Gate::Released(stamp);
                            cv.notify_all();
                        }
                        let mut out: Vec<Option<J>> = (0..n).map(|_| None).collect();
                        for _ in 0..n {
                            match results.recv() {
                                Ok((i, r)) => out[i] = Some(J::Obj(r)),
                                Err(_) => fatal("a contender thread ended without a result", 4),
                            }
                        }
                        let list = out.into_iter().map(|r| r.unwrap_or(J::Null)).collect();
                        send(&J::Obj(vec![
                            ("type", J::str("results")),
                            ("id", id_json(&id)),
                            ("results", J::Arr(list)),
                        ]));
                    }
                    Prepared::Recipe { id, run, mark, token } => {
                        let mut ctx = Ctx { input: &mut input, running: id.clone() };
                        let t0 = now_us();
                        let out = run(&mut ctx);
                        let t1 = now_us();
                        let mut ok = out.ok;
                        let mut error = out.error.unwrap_or(J::Null);
                        if ok {
                            if let Some(m) = &mark {
                                if let Err(e) = write_mark(m, &token) {
                                    ok = false;
                                    error = raw_mark(&e);
                                }
                            }
                        }
                        let mut o = vec![
                            ("type", J::str("result")),
                            ("id", id_json(&id)),
                            ("ok", J::Bool(ok)),
                            ("t0_us", J::Num(t0)),
                            ("t1_us", J::Num(t1)),
                            ("error", error),
                            ("step", out.step.map(J::str).unwrap_or(J::Null)),
                        ];
                        if let Some(c) = out.counters {
                            o.push(("counters", c.json()));
                        }
                        if let Some(s) = out.sample {
                            o.push(("errors_sample", J::Arr(s)));
                        }
                        send(&J::Obj(o));
                    }
                }
            }
            "prepare-threads" => {
                abandon(&mut prepared);
                let id = id_of(&msg);
                match prepare_threads(&msg) {
                    Ok((gate, results, n)) => {
                        prepared = Some(Prepared::Threads { id: id.clone(), gate, results, n });
                        ready(&id, None);
                    }
                    Err(reason) => ready(&id, Some(reason)),
                }
            }
            other => fatal(&format!("unknown message type {other}"), 3),
        }
    }
    // the reader thread may still block on stdin: exit without joining it
    let _ = io::stdout().flush();
    std::process::exit(0);
}

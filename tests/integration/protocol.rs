//! Protocol 2 against the real probes of Node, Bun and Deno (`probes/shared/session.mjs`) and
//! .NET (`probes/dotnet/Probe.cs` on Mono and CoreCLR) and PowerShell
//! (`probes/powershell/probe.ps1` on pwsh), Python (`probes/python/probe.py`), Java
//! (`probes/java/Probe.java`) and Rust (`probes/rust`), driven directly over stdin/stdout,
//! without the harness in between: the hello lists the
//! variants (checked against `matrices/` with `check_hello`) and the recipes; a variant is still
//! answered with the protocol-1 result; `publish.temp-rename` (alone and raced by two
//! processes) leaves exactly one token at the target and no temp file; `claim.rename` moves the
//! source; `read.poll` runs until `stop` and reports counters; an unknown recipe is
//! `supported:false` with a reason and the probe keeps answering. Each runtime is a visible
//! SKIPPED when it is not installed (a failure in CI).

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use conformance::exec::protocol::{
    check_hello, parse_line, Call, FromProbe, Go, Prepare, PrepareRecipe, Stop, PROTOCOL,
};
use serde_json::{json, Value};

use crate::common::{available, conformance, one_at_a_time, root};

const RECIPES: [&str; 3] = ["publish.temp-rename", "claim.rename", "read.poll"];

/// One probe as an adapter launches it (`src/runtime/node.rs`, `src/runtime/bun.rs`).
#[derive(Debug, Clone, Copy)]
enum Launcher {
    /// `node probes/node/probe.mjs`
    Node,
    /// `bun probes/node/probe.mjs`
    Bun,
    /// `deno run -A --quiet --no-config probes/node/probe.mjs` (Deno's node:fs family)
    DenoNode,
    /// `deno run -A --quiet --no-config probes/deno/probe.ts` (Deno's own family)
    DenoOwn,
    /// `mono Probe.exe`, built from `probes/dotnet/Probe.cs` with Mono's `mcs`
    Mono,
    /// `dotnet exec --runtimeconfig Probe.runtimeconfig.json Probe.exe` (the mcs-built probe on
    /// CoreCLR, as `src/runtime/dotnet.rs` runs it without an SDK)
    CoreClr,
    /// `pwsh -NoLogo -NoProfile -NonInteractive -ExecutionPolicy Bypass -File
    /// probes/powershell/probe.ps1` (as `src/runtime/pwsh.rs` launches it)
    Pwsh,
    /// `python3 -I -u probes/python/probe.py` (`src/runtime/python.rs`)
    Python,
    /// `java -cp DIR Probe`, compiled from `probes/java/Probe.java` by the `javac` on PATH
    /// (`src/runtime/java.rs` takes the one beside `java`)
    Java,
    /// `probes/rust` built by `cargo build --release --locked` (`src/runtime/rust.rs`)
    Rust,
}

impl Launcher {
    fn runtime(self) -> &'static str {
        match self {
            Launcher::Node => "node",
            Launcher::Bun => "bun",
            Launcher::DenoNode | Launcher::DenoOwn => "deno",
            Launcher::Mono => "mono",
            Launcher::CoreClr => "coreclr",
            Launcher::Pwsh => "pwsh",
            Launcher::Python => "python",
            Launcher::Java => "java",
            Launcher::Rust => "rust",
        }
    }

    fn family(self) -> &'static str {
        match self {
            Launcher::DenoOwn => "deno",
            Launcher::Mono | Launcher::CoreClr => "dotnet",
            Launcher::Pwsh => "pwsh",
            Launcher::Python => "python",
            Launcher::Java => "java",
            Launcher::Rust => "rust",
            _ => "node",
        }
    }

    /// An exclusive-create variant of the family, for the protocol-1 check.
    fn create_new(self) -> &'static str {
        match self {
            Launcher::DenoOwn => "deno.writeFileSync.createNew",
            Launcher::Mono | Launcher::CoreClr => "dotnet.FileMode.CreateNew",
            Launcher::Pwsh => "pwsh.New-Item.File",
            Launcher::Python => "python.open.x",
            Launcher::Java => "java.Files.createFile",
            Launcher::Rust => "rust.File.create_new",
            _ => "node.writeFileSync.wx",
        }
    }

    fn command(self, exe: &Path, scratch: &Path) -> Command {
        let probes = root().join("probes");
        let tmp = scratch.join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let mut c = Command::new(exe);
        match self {
            Launcher::Node => {
                c.arg(probes.join("node").join("probe.mjs"));
            }
            Launcher::Bun => {
                c.arg(probes.join("node").join("probe.mjs")).env("BUN_RUNTIME_TRANSPILER_CACHE_PATH", "0");
            }
            Launcher::DenoNode | Launcher::DenoOwn => {
                let script = match self {
                    Launcher::DenoOwn => probes.join("deno").join("probe.ts"),
                    _ => probes.join("node").join("probe.mjs"),
                };
                c.args(["run", "-A", "--quiet", "--no-config"])
                    .arg(script)
                    .env("DENO_DIR", scratch.join("deno-dir"))
                    .env("NO_COLOR", "1")
                    .env("DENO_NO_UPDATE_CHECK", "1");
            }
            Launcher::Mono => {
                c.arg(dotnet_probe(scratch, None));
            }
            Launcher::Pwsh => {
                c.args(["-NoLogo", "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-File"])
                    .arg(probes.join("powershell").join("probe.ps1"))
                    .env("POWERSHELL_TELEMETRY_OPTOUT", "1")
                    .env("POWERSHELL_UPDATECHECK", "Off")
                    // a cache folder of its own, as the harness gives each pwsh start
                    // (src/runtime/pwsh.rs, pwsh_cache): pwsh processes sharing one race on
                    // their start-up profile, and a half-written one crashes every later start
                    .env("XDG_CACHE_HOME", tempfile::Builder::new().tempdir_in(&tmp).unwrap().keep());
            }
            Launcher::CoreClr => {
                let v = conformance().args(["runtimes", "--json", "--runtime", "coreclr"]).output().unwrap();
                let v: Value = serde_json::from_slice(&v.stdout).unwrap();
                let version = v[0]["version"].as_str().expect("a found runtime has a version");
                let exe = dotnet_probe(scratch, Some(version));
                c.args(["exec", "--runtimeconfig"])
                    .arg(exe.with_file_name("Probe.runtimeconfig.json"))
                    .arg(exe)
                    .env("DOTNET_SYSTEM_GLOBALIZATION_INVARIANT", "1")
                    .env("COMPlus_EnableDiagnostics", "0");
            }
            Launcher::Python => {
                c.args(["-I", "-u"]).arg(probes.join("python").join("probe.py")).env("LC_ALL", "C.UTF-8");
            }
            Launcher::Java => {
                c.args(["-Dfile.encoding=UTF-8", "-cp"]).arg(java_probe(scratch)).arg("Probe").env("LC_ALL", "C.UTF-8");
            }
            Launcher::Rust => {
                c = Command::new(rust_probe());
            }
        }
        c.env("TMPDIR", &tmp).env("TEMP", &tmp).env("TMP", &tmp).current_dir(scratch);
        c
    }
}

/// The folder of `Probe.class`, compiled from `probes/java/Probe.java` by `javac` into
/// `scratch/java/` (once per scratch folder).
fn java_probe(scratch: &Path) -> PathBuf {
    let dir = scratch.join("java");
    if !dir.join("Probe.class").is_file() {
        std::fs::create_dir_all(&dir).unwrap();
        let out = Command::new(which::which("javac").expect("javac"))
            .args(["-encoding", "UTF-8", "-nowarn", "-d"])
            .arg(&dir)
            .arg(root().join("probes").join("java").join("Probe.java"))
            .output()
            .unwrap();
        assert!(out.status.success(), "javac: {}", String::from_utf8_lossy(&out.stderr));
    }
    dir
}

/// The Rust probe built by `cargo build --release --locked` from `probes/rust` into the cargo
/// target folder the harness builds it in under the tests' cache folder
/// ([`crate::common::conformance`]'s `CONFORMANCE_CACHE_DIR`, `rust/target`): a build by either
/// leaves the other nothing to compile (cargo locks the folder while one builds), where two
/// folders cost two release builds of the probe in every clean CI run.
fn rust_probe() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let target = crate::common::test_cache_dir().join("rust").join("target");
            let out = Command::new(runtime_path("rust"))
                .args(["build", "--release", "--locked", "--quiet", "--manifest-path"])
                .arg(root().join("probes").join("rust").join("Cargo.toml"))
                .arg("--target-dir")
                .arg(&target)
                .output()
                .unwrap();
            assert!(out.status.success(), "cargo: {}", String::from_utf8_lossy(&out.stderr));
            target.join("release").join("probe")
        })
        .clone()
}

/// `Probe.exe` built from `probes/dotnet/Probe.cs` with Mono's `mcs` into `scratch/dotnet/`
/// (once per scratch folder), with a runtimeconfig for CoreCLR `version` when given.
fn dotnet_probe(scratch: &Path, coreclr: Option<&str>) -> PathBuf {
    let dir = scratch.join("dotnet");
    let exe = dir.join("Probe.exe");
    if !exe.is_file() {
        std::fs::create_dir_all(&dir).unwrap();
        let out = Command::new(which::which("mcs").expect("mcs"))
            .arg(format!("-out:{}", exe.display()))
            .args(["-nologo", "-optimize+"])
            .arg(root().join("probes").join("dotnet").join("Probe.cs"))
            .output()
            .unwrap();
        assert!(out.status.success(), "mcs: {}", String::from_utf8_lossy(&out.stdout));
    }
    if let Some(v) = coreclr {
        let text = json!({"runtimeOptions": {"tfm": "netcoreapp3.1", "framework": {"name": "Microsoft.NETCore.App", "version": v}}});
        std::fs::write(dir.join("Probe.runtimeconfig.json"), text.to_string()).unwrap();
    }
    exe
}

/// Where `conformance runtimes --json` found a runtime.
fn runtime_path(name: &str) -> PathBuf {
    let out = conformance().args(["runtimes", "--json", "--runtime", name]).output().expect("runs");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    PathBuf::from(v[0]["path"].as_str().expect("a found runtime has a path"))
}

/// A running probe: stdin to write lines to, stdout lines through a reader thread, stderr
/// in a file for the failure messages.
struct Probe {
    name: String,
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    stderr: PathBuf,
    hello: Value,
    hello_line: String,
}

impl Probe {
    fn start(l: Launcher, exe: &Path, scratch: &Path, name: &str) -> Probe {
        let stderr = scratch.join(format!("{name}.stderr"));
        let mut child = l
            .command(exe, scratch)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {l:?}: {e}"));
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut p = Probe {
            name: format!("{l:?} {name}"),
            child,
            stdin,
            lines: rx,
            stderr,
            hello: Value::Null,
            hello_line: String::new(),
        };
        let (line, hello) = p.recv();
        p.hello = hello;
        p.hello_line = line;
        p
    }

    fn send(&mut self, msg: &impl serde::Serialize) {
        let line = serde_json::to_string(msg).unwrap();
        writeln!(self.stdin, "{line}").unwrap_or_else(|e| panic!("{}: cannot write {line}: {e}", self.name));
        self.stdin.flush().unwrap();
    }

    /// The next line, as text and JSON; it must also parse as a protocol message.
    fn recv(&mut self) -> (String, Value) {
        match self.lines.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => {
                parse_line(&line).unwrap_or_else(|e| panic!("{}: {e}", self.name));
                let v: Value = serde_json::from_str(&line).unwrap();
                (line, v)
            }
            Err(e) => {
                let _ = self.child.kill();
                let err = std::fs::read_to_string(&self.stderr).unwrap_or_default();
                panic!("{}: no line ({e}); stderr: {err}", self.name)
            }
        }
    }

    fn expect(&mut self, kind: &str, id: u64) -> Value {
        let (line, v) = self.recv();
        assert_eq!(v["type"], kind, "{}: {line}", self.name);
        assert_eq!(v["id"], id, "{}: {line}", self.name);
        v
    }

    fn ready(&mut self, id: u64) -> Value {
        let v = self.expect("ready", id);
        assert_eq!(v["supported"], true, "{}: {v}", self.name);
        v
    }

    /// Sends quit and waits for exit status 0.
    fn quit(mut self) {
        self.send(&json!({"type": "quit"}));
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                assert!(s.success(), "{} exited with {s}", self.name);
                return;
            }
            assert!(std::time::Instant::now() < deadline, "{} did not exit after quit", self.name);
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn names_in(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect()
}

fn now_us() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_micros() as f64
}

/// Timestamps are µs on the clock the hello names (`clock`: `monotonic`, the system's
/// CLOCK_MONOTONIC, on Linux; `wall` or absent: since the Unix epoch): within two minutes of the
/// harness's reading of that clock, t0 <= t1.
fn check_stamps(v: &Value, clock: &Value) {
    let (t0, t1) = (v["t0_us"].as_f64().expect("t0_us"), v["t1_us"].as_f64().expect("t1_us"));
    let now = match clock.as_str() {
        Some("monotonic") => conformance::exec::clock::mono_us().expect("a monotonic probe on a system with one"),
        _ => now_us(),
    };
    assert!((now - t0).abs() < 120e6, "t0_us {t0} is not µs on the {clock} clock (now {now}): {v}");
    assert!(t0 <= t1, "{v}");
}

fn exercise(l: Launcher) {
    if !available(l.runtime()) {
        return;
    }
    if matches!(l, Launcher::Mono | Launcher::CoreClr) && which::which("mcs").is_err() {
        eprintln!("SKIPPED: the .NET probe protocol test builds Probe.cs with Mono's mcs, which is not on PATH");
        return;
    }
    let _serial = one_at_a_time();
    let exe = runtime_path(l.runtime());
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path();

    // hello: protocol 2, the variants agree with the matrices, the recipes are listed
    let mut a = Probe::start(l, &exe, s, "a");
    assert_eq!(a.hello["type"], "hello", "{}", a.hello_line);
    assert_eq!(a.hello["protocol"], PROTOCOL, "{}", a.hello_line);
    assert_eq!(a.hello["runtime"], l.runtime(), "{}", a.hello_line);
    // Bun's run of the Node probe also offers Bun's own API (family `bun`)
    let families = if l.runtime() == "bun" { json!([l.family(), "bun"]) } else { json!([l.family()]) };
    assert_eq!(a.hello["families"], families, "{}", a.hello_line);
    if cfg!(target_os = "linux") {
        // every probe here stamps with CLOCK_MONOTONIC (probes/PROTOCOL.md, clocks)
        assert_eq!(a.hello["clock"], "monotonic", "{}", a.hello_line);
    }
    let recipes: Vec<&str> = a.hello["recipes"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect();
    for r in RECIPES {
        assert!(recipes.contains(&r), "{r} missing from {}", a.hello_line);
    }
    let matrix = conformance::matrix::load_dir(&root().join("matrices")).unwrap();
    let pairs: Vec<(&str, &str)> = matrix.iter().map(|v| (v.family.as_str(), v.id.as_str())).collect();
    let hello = parse_line(&a.hello_line).unwrap();
    assert!(matches!(hello, FromProbe::Hello { protocol: 2, .. }));
    let check = check_hello(&hello, &pairs).expect("a v2 hello is checked");
    assert!(check.is_clean(), "{l:?}: probe and matrices disagree: {check:?}");
    println!(
        "{l:?}: hello protocol 2, {} variants (same as matrices/{}.toml), recipes {recipes:?}",
        a.hello["variants"].as_array().unwrap().len(),
        l.family()
    );

    // a variant is answered exactly as in protocol 1
    std::fs::create_dir(s.join("v1")).unwrap();
    let call =
        Call { variant: l.create_new(), target: "v1/target", source: None, token: "tok-v1", mark: None, hold_ms: 0 };
    a.send(&Prepare::new(1, call));
    a.ready(1);
    a.send(&Go::new(1));
    let r = a.expect("result", 1);
    let keys: Vec<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(BTreeSet::from_iter(keys), BTreeSet::from(["type", "id", "ok", "t0_us", "t1_us", "error"]), "{r}");
    assert_eq!((&r["ok"], &r["error"]), (&json!(true), &Value::Null), "{r}");
    check_stamps(&r, &a.hello["clock"]);
    assert_eq!(std::fs::read_to_string(s.join("v1/target")).unwrap(), "tok-v1");

    // a hostile folder name and token pass as data: spaces, Japanese, shell and cmd
    // metacharacters and quotes reach the file system unchanged (a second attempt is refused)
    let hostile = "a b ファイル &%^!'\"$(x)`";
    std::fs::create_dir(s.join(hostile)).unwrap();
    let target = format!("{hostile}/t &!%");
    let token = "tok ファイル &%^!'\"";
    for (id, want_ok) in [(20, true), (21, false)] {
        let call = Call { variant: l.create_new(), target: &target, source: None, token, mark: None, hold_ms: 0 };
        a.send(&Prepare::new(id, call));
        a.ready(id);
        a.send(&Go::new(id));
        let r = a.expect("result", id);
        assert_eq!(r["ok"], want_ok, "{r}");
    }
    assert_eq!(names_in(&s.join(hostile)), BTreeSet::from(["t &!%".to_string()]));
    assert_eq!(std::fs::read_to_string(s.join(hostile).join("t &!%")).unwrap(), token);

    // a race's prepares repeat but for the id and the token (probes may reuse what a repeat
    // resolved, and the last refusal's error): each go writes its own token, and each refusal
    // names its own target
    std::fs::create_dir(s.join("rep")).unwrap();
    let attempt = |p: &mut Probe, id: u64, target: &str, token: &str| -> Value {
        p.send(&Prepare::new(
            id,
            Call { variant: l.create_new(), target, source: None, token, mark: None, hold_ms: 0 },
        ));
        p.ready(id);
        p.send(&Go::new(id));
        p.expect("result", id)
    };
    assert_eq!(attempt(&mut a, 30, "rep/target", "tok-30")["ok"], true);
    let refused = attempt(&mut a, 31, "rep/target", "tok-31");
    assert_eq!(refused["ok"], false, "{refused}");
    std::fs::remove_file(s.join("rep/target")).unwrap();
    assert_eq!(attempt(&mut a, 32, "rep/target", "tok-32")["ok"], true);
    assert_eq!(
        std::fs::read_to_string(s.join("rep/target")).unwrap(),
        "tok-32",
        "a repeated prepare kept an old token"
    );
    assert_eq!(attempt(&mut a, 33, "rep/other", "tok-33")["ok"], true);
    let other = attempt(&mut a, 34, "rep/other", "tok-34");
    assert_eq!(other["ok"], false, "{other}");
    // every probe's refusal message names the path (as the runtime's own message does; Rust's
    // `io::Error` names none: "File exists (os error 17)")
    let named = if matches!(l, Launcher::Rust) {
        vec![]
    } else {
        vec![(&refused, "rep/target", "rep/other"), (&other, "rep/other", "rep/target")]
    };
    for (r, own, not) in named {
        let m = r["error"]["message"].as_str().unwrap_or_default();
        assert!(m.contains(own) && !m.contains(not), "a stale error (not about {own}): {r}");
    }
    assert_eq!(std::fs::read_to_string(s.join("rep/other")).unwrap(), "tok-33");
    // names that differ only by Unicode normalisation (NFC é, NFD e + U+0301) are two files on
    // Linux: a probe must not take one for the other (PowerShell's -ceq compares by culture)
    let (nfc, nfd) = ("rep/caf\u{e9}", "rep/cafe\u{301}");
    for (id, own, not) in [(40, nfc, nfd), (42, nfd, nfc)] {
        assert_eq!(attempt(&mut a, id, own, &format!("tok-{id}"))["ok"], true, "{own:?} taken for {not:?}");
        let r = attempt(&mut a, id + 1, own, "again");
        let m = r["error"]["message"].as_str().unwrap_or_default();
        let about = matches!(l, Launcher::Rust) || (m.contains(own) && !m.contains(not));
        assert!(r["ok"] == false && about, "a stale error (not about {own:?}): {r}");
    }
    assert_eq!(std::fs::read_to_string(s.join(nfc)).unwrap(), "tok-40");
    assert_eq!(std::fs::read_to_string(s.join(nfd)).unwrap(), "tok-42");
    if matches!(l, Launcher::Pwsh) {
        // a variant whose splatted arguments carry the token (Out-File -InputObject)
        for (id, token) in [(35, "tok-35"), (36, "tok-36")] {
            let _ = std::fs::remove_file(s.join("rep/splat"));
            let call = Call {
                variant: "pwsh.Out-File.NoClobber",
                target: "rep/splat",
                source: None,
                token,
                mark: None,
                hold_ms: 0,
            };
            a.send(&Prepare::new(id, call));
            a.ready(id);
            a.send(&Go::new(id));
            assert_eq!(a.expect("result", id)["ok"], true);
            assert_eq!(std::fs::read_to_string(s.join("rep/splat")).unwrap(), token);
        }
    }

    // publish.temp-rename alone: exactly the token at the target, no temp file beside it
    std::fs::create_dir(s.join("one")).unwrap();
    a.send(&PrepareRecipe::new(2, "publish.temp-rename", "one/target", "tok-one").scenario("publish").role("writer"));
    a.ready(2);
    a.send(&Go::new(2));
    let r = a.expect("result", 2);
    assert_eq!((&r["ok"], &r["step"], &r["error"]), (&json!(true), &Value::Null, &Value::Null), "{r}");
    check_stamps(&r, &a.hello["clock"]);
    assert_eq!(names_in(&s.join("one")), BTreeSet::from(["target".to_string()]));
    assert_eq!(std::fs::read_to_string(s.join("one/target")).unwrap(), "tok-one");

    // publish.temp-rename raced by two processes released together
    let mut b = Probe::start(l, &exe, s, "b");
    std::fs::create_dir(s.join("race")).unwrap();
    for (p, tok) in [(&mut a, "tok-a"), (&mut b, "tok-b")] {
        p.send(&PrepareRecipe::new(3, "publish.temp-rename", "race/target", tok).scenario("publish").role("writer"));
        p.ready(3);
    }
    a.send(&Go::new(3));
    b.send(&Go::new(3));
    let (ra, rb) = (a.expect("result", 3), b.expect("result", 3));
    let held = std::fs::read_to_string(s.join("race/target")).unwrap();
    assert_eq!(names_in(&s.join("race")), BTreeSet::from(["target".to_string()]), "a temp file was left");
    assert!(held == "tok-a" || held == "tok-b", "target holds {held:?}");
    println!("{l:?}: publish.temp-rename race of 2: ok {} and {}, target holds {held}", ra["ok"], rb["ok"]);

    // claim.rename: the prepared source becomes the target
    std::fs::create_dir(s.join("claim")).unwrap();
    std::fs::write(s.join("claim/src-a"), "tok-claim").unwrap();
    a.send(&PrepareRecipe::new(4, "claim.rename", "claim/target", "tok-claim").source("claim/src-a"));
    a.ready(4);
    a.send(&Go::new(4));
    let r = a.expect("result", 4);
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(names_in(&s.join("claim")), BTreeSet::from(["target".to_string()]));
    // claim.rename without a source is unsupported, with the reason
    a.send(&PrepareRecipe::new(5, "claim.rename", "claim/other", "t"));
    let r = a.expect("ready", 5);
    assert_eq!(r["supported"], false, "{r}");
    assert!(r["reason"].as_str().unwrap().contains("source"), "{r}");

    // read.poll: a reads until stop while b publishes 20 times; then counters
    std::fs::create_dir(s.join("poll")).unwrap();
    let tokens: Vec<String> = (0..20).map(|i| format!("w-{i:02}-{}", "x".repeat(4096))).collect();
    a.send(&PrepareRecipe::new(6, "read.poll", "poll/target", "r").role("reader").params(json!({ "expect": tokens })));
    a.ready(6);
    a.send(&Go::new(6));
    for (i, tok) in tokens.iter().enumerate() {
        let id = 100 + i as u64;
        b.send(&PrepareRecipe::new(id, "publish.temp-rename", "poll/target", tok).role("writer"));
        b.ready(id);
        b.send(&Go::new(id));
        let r = b.expect("result", id);
        assert_eq!(r["ok"], true, "{r}");
    }
    std::thread::sleep(Duration::from_millis(50));
    a.send(&Stop::new(6));
    let (line, r) = a.recv();
    assert_eq!((&r["type"], &r["id"], &r["ok"]), (&json!("result"), &json!(6), &json!(true)), "{line}");
    check_stamps(&r, &a.hello["clock"]);
    let c = r["counters"].as_object().unwrap_or_else(|| panic!("no counters: {line}"));
    let n = |k: &str| c.get(k).and_then(Value::as_i64).unwrap_or_else(|| panic!("counter {k} missing: {line}"));
    assert!(n("reads") >= 1, "{line}");
    assert_eq!(n("complete") + n("empty") + n("torn") + n("absent") + n("errors"), n("reads"), "{line}");
    let sample = r["errors_sample"].as_array().unwrap_or_else(|| panic!("no errors_sample: {line}"));
    assert!(sample.len() as i64 <= n("errors").min(8), "{line}");
    match parse_line(&line).unwrap() {
        FromProbe::Result { counters, .. } => assert_eq!(counters.get("reads").copied(), Some(n("reads"))),
        other => panic!("{other:?}"),
    }
    assert_eq!(names_in(&s.join("poll")), BTreeSet::from(["target".to_string()]));
    println!("{l:?}: read.poll during 20 publishes (4 KiB each): {}", r["counters"]);

    // stop with nothing running is ignored; an unknown recipe is unsupported with a reason;
    // the probe keeps answering
    a.send(&Stop::new(6));
    a.send(&PrepareRecipe::new(7, "no.such.recipe", "x", "t"));
    let r = a.expect("ready", 7);
    assert_eq!(r["supported"], false, "{r}");
    assert!(r["reason"].as_str().unwrap().contains("no.such.recipe"), "{r}");
    std::fs::create_dir(s.join("after")).unwrap();
    a.send(&PrepareRecipe::new(8, "publish.temp-rename", "after/target", "tok-after"));
    a.ready(8);
    a.send(&Go::new(8));
    assert_eq!(a.expect("result", 8)["ok"], true);
    assert_eq!(std::fs::read_to_string(s.join("after/target")).unwrap(), "tok-after");

    a.quit();
    b.quit();
}

#[test]
fn protocol_v2_powershell_probe_on_pwsh() {
    exercise(Launcher::Pwsh);
}

#[test]
fn protocol_v2_dotnet_probe_on_mono() {
    exercise(Launcher::Mono);
}

#[test]
fn protocol_v2_dotnet_probe_on_coreclr() {
    exercise(Launcher::CoreClr);
}

#[test]
fn protocol_v2_node_probe_on_node() {
    exercise(Launcher::Node);
}

#[test]
fn protocol_v2_node_probe_on_bun() {
    exercise(Launcher::Bun);
}

#[test]
fn protocol_v2_node_probe_on_deno() {
    exercise(Launcher::DenoNode);
}

#[test]
fn protocol_v2_deno_probe_on_deno() {
    exercise(Launcher::DenoOwn);
}

#[test]
fn protocol_v2_python_probe() {
    exercise(Launcher::Python);
}

#[test]
fn protocol_v2_java_probe() {
    exercise(Launcher::Java);
}

#[test]
fn protocol_v2_rust_probe() {
    exercise(Launcher::Rust);
}

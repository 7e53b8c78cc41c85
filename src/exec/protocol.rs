//! The messages of `probes/PROTOCOL.md` as serde types: version 2, and version 1, which stays
//! valid (a v1 message is a v2 message without the optional v2 fields). Every field added by
//! version 2 is optional here, with a default, so one parser reads both versions. The pure
//! [`check_hello`] compares what a v2 probe says it knows with what the matrices ask of it.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// The protocol version this harness speaks (`probes/PROTOCOL.md`).
pub const PROTOCOL: u32 = 2;

/// The oldest protocol version this harness still accepts from a probe.
pub const OLDEST_PROTOCOL: u32 = 1;

/// Whether the harness accepts a probe whose `hello` (or one-shot `ready`) says `version`:
/// 1 or 2 (`OLDEST_PROTOCOL..=PROTOCOL`). A version-1 probe is driven with version-1 messages
/// only (a `prepare` with a `variant`, `go`, `quit`); recipes and `stop` need version 2.
pub fn accepts(version: u32) -> bool {
    (OLDEST_PROTOCOL..=PROTOCOL).contains(&version)
}

pub use crate::domain::{RawError, Returned};

/// A message from a probe.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum FromProbe {
    /// Sent once at start.
    Hello {
        /// Protocol version.
        protocol: u32,
        /// The runtime as the probe sees itself.
        #[serde(default)]
        runtime: String,
        /// Its version.
        #[serde(default)]
        version: String,
        /// Variant families implemented.
        #[serde(default)]
        families: Vec<String>,
        /// The probe's name (`node`, `deno`, `dotnet`, …); empty when not sent.
        #[serde(default)]
        probe: String,
        /// Version 2: every variant id the probe implements; empty in version 1.
        #[serde(default)]
        variants: Vec<String>,
        /// Version 2: every recipe name the probe implements; empty in version 1.
        #[serde(default)]
        recipes: Vec<String>,
        /// Version 2: what the `*_us` stamps count: `monotonic` (the system's monotonic clock,
        /// `CLOCK_MONOTONIC` on Linux) or `wall` (µs since the Unix epoch, also when absent).
        #[serde(default)]
        clock: Option<String>,
        /// Version 2: optional messages the probe answers (`threads`: `prepare-threads`, see
        /// [`PrepareThreads`]); empty when not sent.
        #[serde(default)]
        capabilities: Vec<String>,
        /// The process that makes the calls (`process.pid`, `$PID`, …), which may be a child of
        /// the one the harness started (the PowerShell tool's launcher starts `dotnet`).
        #[serde(default)]
        pid: Option<u32>,
    },
    /// Answer to `prepare`.
    Ready {
        /// Attempt id (absent in one-shot mode).
        #[serde(default)]
        id: Option<u64>,
        /// Whether the call exists here.
        supported: bool,
        /// Why not, when unsupported.
        #[serde(default)]
        reason: Option<String>,
    },
    /// Answer to `go`.
    Result {
        /// Attempt id (absent in one-shot mode).
        #[serde(default)]
        id: Option<u64>,
        /// Whether the call returned success.
        ok: bool,
        /// Wall clock before the call, µs since the Unix epoch.
        #[serde(default)]
        t0_us: Option<f64>,
        /// Wall clock after the call, µs since the Unix epoch.
        #[serde(default)]
        t1_us: Option<f64>,
        /// cmd's ERRORLEVEL (one-shot mode).
        #[serde(default)]
        errorlevel: Option<i64>,
        /// One-shot mode: cmd's `%TIME%` before the call (`H:MM:SS.cc`, centiseconds).
        #[serde(default)]
        t0: Option<String>,
        /// One-shot mode: cmd's `%TIME%` after the call.
        #[serde(default)]
        t1: Option<String>,
        /// The raw error when `ok` is false.
        #[serde(default)]
        error: Option<RawError>,
        /// Version 2, recipes: the name of the step that failed (`write`, `rename`, …), `None`
        /// on success and for variants.
        #[serde(default)]
        step: Option<String>,
        /// Version 2: named counters a recipe kept (`read.poll`: `reads`, `torn`, …); empty
        /// when none were sent.
        #[serde(default)]
        counters: BTreeMap<String, i64>,
        /// Version 2: up to N raw errors a recipe met along the way (N = 8 in the shared
        /// Node/Deno loop), in the order met; empty when none were sent.
        #[serde(default)]
        errors_sample: Vec<RawError>,
        /// Version 2, failed variants: how the failure reached the caller (`throw`,
        /// `rejected`, `callback`, `error-event`); `None` when not sent.
        #[serde(default)]
        delivery: Option<String>,
        /// Version 2, successful variants whose return value the probe reports: that value
        /// (boxed: it is rare, and large beside the other fields).
        #[serde(default)]
        returned: Option<Box<Returned>>,
    },
    /// Version 2, capability `threads`: answer to the `go` of a [`PrepareThreads`], one result
    /// per contender in the order of its `contenders`.
    Results {
        /// Attempt id.
        #[serde(default)]
        id: Option<u64>,
        /// Each contender's result.
        results: Vec<ThreadResult>,
    },
}

/// The capability a probe lists in its hello when it answers [`PrepareThreads`].
pub const THREADS_CAPABILITY: &str = "threads";

/// One contender's result in a `results` message: the fields of a variant's `result`
/// without `type` and `id` (stamps in µs on the probe's clock, the raw error, delivery and
/// returned value as in `result`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ThreadResult {
    /// Whether the call returned success.
    pub ok: bool,
    /// The probe's clock before the call, µs.
    #[serde(default)]
    pub t0_us: Option<f64>,
    /// The probe's clock after the call, µs.
    #[serde(default)]
    pub t1_us: Option<f64>,
    /// The raw error when `ok` is false.
    #[serde(default)]
    pub error: Option<RawError>,
    /// How a failure reached the caller, as in `result`.
    #[serde(default)]
    pub delivery: Option<String>,
    /// The value a successful call returned, as in `result`.
    #[serde(default)]
    pub returned: Option<Box<Returned>>,
}

/// `prepare-threads` (harness → probe; version 2, only to a probe whose hello lists
/// [`THREADS_CAPABILITY`]): K contenders to run as K threads (workers) of the one probe
/// process, released together by the probe on the next `go` (`probes/PROTOCOL.md`, "Threads").
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PrepareThreads<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    /// Attempt id.
    pub id: u64,
    /// The contenders, in slot order.
    pub contenders: Vec<ThreadContender<'a>>,
}

impl<'a> PrepareThreads<'a> {
    /// A `prepare-threads` for attempt `id`.
    pub fn new(id: u64, contenders: Vec<ThreadContender<'a>>) -> Self {
        PrepareThreads { kind: "prepare-threads", id, contenders }
    }
}

/// One contender of a [`PrepareThreads`]: the fields of a variant's `prepare` (without `type`
/// and `id`) and `delay_us`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThreadContender<'a> {
    /// What the contender calls, on which paths.
    #[serde(flatten)]
    pub call: Call<'a>,
    /// How long after the probe's release stamp this contender makes its call, µs (the
    /// release ordering: contender `i` at `i × offset`).
    pub delay_us: u64,
}

/// The fields of one variant's call, in a `prepare` message and in each contender of a
/// `prepare-threads` (`probes/PROTOCOL.md`, "prepare").
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Call<'a> {
    /// Variant id.
    pub variant: &'a str,
    /// Target path as the probe should see it.
    pub target: &'a str,
    /// Source path, if any.
    pub source: Option<&'a str>,
    /// The contender's token.
    pub token: &'a str,
    /// Mark-file path, if any.
    pub mark: Option<&'a str>,
    /// Handle hold time in milliseconds.
    pub hold_ms: u64,
}

/// `prepare` message (harness → probe).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prepare<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    /// Attempt id.
    pub id: u64,
    /// What the probe calls, on which paths.
    #[serde(flatten)]
    pub call: Call<'a>,
}

impl<'a> Prepare<'a> {
    /// Builds the `prepare` message of attempt `id`.
    pub fn new(id: u64, call: Call<'a>) -> Self {
        Prepare { kind: "prepare", id, call }
    }
}

/// `prepare` message of version 2 for a recipe (harness → probe): a named multi-step routine
/// the probe runs on `go`, instead of one variant's call. Built with [`PrepareRecipe::new`]
/// and the setters; optional fields that are not set are sent as `null` (`params` as `{}`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PrepareRecipe<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    /// Attempt id.
    pub id: u64,
    /// The scenario this attempt belongs to (`publish`, `claim`, …); informative for the probe.
    pub scenario: Option<&'a str>,
    /// The recipe name (`publish.temp-rename`, `claim.rename`, `read.poll`).
    pub recipe: &'a str,
    /// This contender's role in the scenario (`writer`, `reader`, …); informative.
    pub role: Option<&'a str>,
    /// Target path as the probe should see it.
    pub target: &'a str,
    /// Source path, if any.
    pub source: Option<&'a str>,
    /// The contender's token.
    pub token: &'a str,
    /// Mark-file path, if any (written after a successful recipe, as for a variant).
    pub mark: Option<&'a str>,
    /// Handle hold time in milliseconds (0: recipes hold nothing today).
    pub hold_ms: u64,
    /// The recipe's parameters (`publish.temp-rename`: `temp`, `fsync`; `read.poll`: `expect`).
    pub params: serde_json::Value,
}

impl<'a> PrepareRecipe<'a> {
    /// A recipe `prepare` for attempt `id` on `target` with `token`; no scenario, role,
    /// source or mark, and empty params.
    pub fn new(id: u64, recipe: &'a str, target: &'a str, token: &'a str) -> Self {
        PrepareRecipe {
            kind: "prepare",
            id,
            scenario: None,
            recipe,
            role: None,
            target,
            source: None,
            token,
            mark: None,
            hold_ms: 0,
            params: serde_json::Value::Object(serde_json::Map::new()),
        }
    }

    /// Sets the scenario.
    pub fn scenario(mut self, scenario: &'a str) -> Self {
        self.scenario = Some(scenario);
        self
    }

    /// Sets the role.
    pub fn role(mut self, role: &'a str) -> Self {
        self.role = Some(role);
        self
    }

    /// Sets the source path.
    pub fn source(mut self, source: &'a str) -> Self {
        self.source = Some(source);
        self
    }

    /// Sets the mark path.
    pub fn mark(mut self, mark: &'a str) -> Self {
        self.mark = Some(mark);
        self
    }

    /// Sets the parameters (a JSON object).
    pub fn params(mut self, params: serde_json::Value) -> Self {
        self.params = params;
        self
    }
}

/// `go` message (harness → probe): release attempt `id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Go {
    #[serde(rename = "type")]
    kind: &'static str,
    /// Attempt id.
    pub id: u64,
}

impl Go {
    /// Builds `{"type":"go","id":id}`.
    pub fn new(id: u64) -> Self {
        Go { kind: "go", id }
    }
}

/// `stop` message of version 2 (harness → probe): ends the loop recipe running for attempt
/// `id`, which then sends its `result`. A probe ignores a `stop` when nothing runs (its result
/// was sent already), so the harness may send it to every contender of a trial.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Stop {
    #[serde(rename = "type")]
    kind: &'static str,
    /// Attempt id.
    pub id: u64,
}

impl Stop {
    /// Builds `{"type":"stop","id":id}`.
    pub fn new(id: u64) -> Self {
        Stop { kind: "stop", id }
    }
}

/// What a version-2 probe says it knows, against what the matrices ask of it (see
/// [`check_hello`]). Both lists are sorted and without repeats.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HelloCheck {
    /// Matrix variant ids of the probe's families that the probe does not list: attempts of
    /// these would come back unsupported.
    pub unknown_to_probe: Vec<String>,
    /// Variant ids the probe lists that the matrices do not have for the probe's families:
    /// nothing would ever measure them.
    pub unknown_to_matrices: Vec<String>,
}

impl HelloCheck {
    /// True when both lists are empty: the probe and the matrices agree.
    pub fn is_clean(&self) -> bool {
        self.unknown_to_probe.is_empty() && self.unknown_to_matrices.is_empty()
    }
}

/// Checks a probe's `hello` against the matrices. Takes the parsed hello and the matrix
/// variants as `(family, id)` pairs (`matrix::Variant::family` and `id`, as loaded from
/// `matrices/*.toml`; pairs of other families may be included, they are left out). Only the
/// families the hello lists count. Returns `None` when `hello` is not a `hello`, or says
/// protocol 1 (a v1 probe lists no variants: there is nothing to check); otherwise the two
/// differences. Pure: no I/O, no errors.
pub fn check_hello(hello: &FromProbe, matrix: &[(&str, &str)]) -> Option<HelloCheck> {
    let FromProbe::Hello { protocol, families, variants, .. } = hello else {
        return None;
    };
    if *protocol < 2 {
        return None;
    }
    let expected: BTreeSet<&str> =
        matrix.iter().filter(|(family, _)| families.iter().any(|f| f == family)).map(|&(_, id)| id).collect();
    let listed: BTreeSet<&str> = variants.iter().map(String::as_str).collect();
    Some(HelloCheck {
        unknown_to_probe: expected.difference(&listed).map(|s| s.to_string()).collect(),
        unknown_to_matrices: listed.difference(&expected).map(|s| s.to_string()).collect(),
    })
}

/// Converts cmd's `%TIME%` (`H:MM:SS.cc` or ` H:MM:SS,cc`, locale-dependent separator) to
/// microseconds since midnight. Resolution is 10 ms. `None` when it does not parse.
pub fn time_of_day_us(s: &str) -> Option<f64> {
    let s = s.trim();
    let (hms, cc) = s.split_once(['.', ','])?;
    let mut parts = hms.split(':').map(|p| p.trim().parse::<u64>().ok());
    let (h, m, sec) = (parts.next()??, parts.next()??, parts.next()??);
    let cc: u64 = cc.trim().parse().ok()?;
    Some(((h * 3600 + m * 60 + sec) * 1_000_000 + cc * 10_000) as f64)
}

/// Parses one stdout line of a probe. Errors: the line (cut to 200 characters) with the parse error.
pub fn parse_line(line: &str) -> Result<FromProbe, String> {
    serde_json::from_str(line).map_err(|e| {
        let cut: String = line.chars().take(200).collect();
        format!("not a protocol message ({e}): {cut}")
    })
}

#[cfg(test)]
mod tests {
    use super::{
        accepts, check_hello, parse_line, time_of_day_us, Call, FromProbe, Go, Prepare, PrepareRecipe, Stop, PROTOCOL,
    };

    /// A call of `variant` on `target` with token `k`, no source, mark or hold.
    fn call<'a>(variant: &'a str, target: &'a str) -> Call<'a> {
        Call { variant, target, source: None, token: "k", mark: None, hold_ms: 0 }
    }

    #[test]
    fn parses_messages() {
        let h =
            parse_line(r#"{"protocol":1,"type":"hello","runtime":"node","version":"20","families":["node"],"pid":1}"#)
                .unwrap();
        assert!(matches!(h, FromProbe::Hello { protocol: 1, .. }));
        let r = parse_line(r#"{"type":"result","id":3,"ok":false,"t0_us":1.5,"t1_us":2.0,"error":{"type":"Error","code":"EEXIST","errno":-17,"hresult":null,"message":"m"}}"#).unwrap();
        match r {
            FromProbe::Result { ok, error: Some(e), .. } => {
                assert!(!ok);
                assert_eq!(e.code.as_deref(), Some("EEXIST"));
            }
            other => panic!("{other:?}"),
        }
        assert!(parse_line("Overwrite x? (Yes/No/All):").unwrap_err().contains("Overwrite"));
        assert!(parse_line(r#"{"type":"bogus"}"#).is_err());
        assert_eq!(time_of_day_us(" 9:05:01.25"), Some(32_701_250_000.0));
        assert_eq!(time_of_day_us("23:59:59,99"), Some(86_399_990_000.0));
        assert_eq!(time_of_day_us("garbage"), None);
    }

    #[test]
    fn accepts_versions_one_and_two_only() {
        assert!(accepts(1));
        assert!(accepts(2));
        assert!(accepts(PROTOCOL));
        assert!(!accepts(0));
        assert!(!accepts(3));
    }

    #[test]
    fn parses_a_v1_hello_and_result_with_v2_defaults() {
        let h = parse_line(r#"{"protocol":1,"type":"hello","probe":"dotnet","families":["dotnet"],"runtime":"CoreCLR","version":"3.1.23","framework":".NET Core 3.1.23","pid":9}"#).unwrap();
        match h {
            FromProbe::Hello { protocol, probe, variants, recipes, .. } => {
                assert_eq!((protocol, probe.as_str()), (1, "dotnet"));
                assert!(variants.is_empty() && recipes.is_empty());
            }
            other => panic!("{other:?}"),
        }
        let r = parse_line(r#"{"type":"result","id":3,"ok":true,"t0_us":1.5,"t1_us":2.0,"error":null}"#).unwrap();
        match r {
            FromProbe::Result { ok, step, counters, errors_sample, .. } => {
                assert!(ok);
                assert_eq!(step, None);
                assert!(counters.is_empty() && errors_sample.is_empty());
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn parses_a_v2_hello_and_recipe_results() {
        let h = parse_line(r#"{"protocol":2,"type":"hello","probe":"node","families":["node"],"runtime":"bun","version":"1.4.5","pid":7,"variants":["node.renameSync","node.mkdirSync"],"recipes":["publish.temp-rename","claim.rename","read.poll"]}"#).unwrap();
        match &h {
            FromProbe::Hello { protocol: 2, runtime, variants, recipes, .. } => {
                assert_eq!(runtime, "bun");
                assert_eq!(variants, &["node.renameSync", "node.mkdirSync"]);
                assert_eq!(recipes.len(), 3);
            }
            other => panic!("{other:?}"),
        }
        let r = parse_line(r#"{"type":"result","id":8,"ok":true,"t0_us":1796000000000000.5,"t1_us":1796000000100000,"error":null,"step":null,"counters":{"reads":2208,"torn":0,"absent":12},"errors_sample":[{"type":"Error","code":"EISDIR","errno":-21,"hresult":null,"message":"m"}]}"#).unwrap();
        match r {
            FromProbe::Result { id: Some(8), counters, errors_sample, step: None, .. } => {
                assert_eq!(counters.get("reads"), Some(&2208));
                assert_eq!(counters.get("absent"), Some(&12));
                assert_eq!(errors_sample.len(), 1);
                assert_eq!(errors_sample[0].code.as_deref(), Some("EISDIR"));
            }
            other => panic!("{other:?}"),
        }
        let f = parse_line(r#"{"type":"result","id":9,"ok":false,"t0_us":1,"t1_us":2,"error":{"type":"Error","code":"ENOENT","errno":-2,"hresult":null,"message":"m"},"step":"rename"}"#).unwrap();
        assert!(matches!(f, FromProbe::Result { ok: false, step: Some(ref s), .. } if s == "rename"));
        // counters are integers
        assert!(parse_line(r#"{"type":"result","id":9,"ok":true,"counters":{"reads":"many"}}"#).is_err());
    }

    #[test]
    fn parses_the_v2_clock_delivery_and_returned_fields() {
        let h = parse_line(r#"{"protocol":2,"type":"hello","probe":"node","families":["node"],"runtime":"bun","version":"1.1.44","pid":7,"clock":"monotonic","variants":[],"recipes":[]}"#).unwrap();
        assert!(matches!(h, FromProbe::Hello { clock: Some(ref c), .. } if c == "monotonic"));
        let r = parse_line(r#"{"type":"result","id":2,"ok":false,"t0_us":1,"t1_us":2,"error":{"type":"Error","code":"EEXIST","errno":-17,"hresult":null,"message":"m"},"delivery":"error-event"}"#).unwrap();
        assert!(matches!(r, FromProbe::Result { delivery: Some(ref d), returned: None, .. } if d == "error-event"));
        let r = parse_line(r#"{"type":"result","id":3,"ok":true,"t0_us":1,"t1_us":2,"error":null,"returned":{"type":"string","value":"t1/d"}}"#).unwrap();
        match r {
            FromProbe::Result { returned: Some(v), delivery: None, .. } => {
                assert_eq!(v.describe(&["t1/d"], &[], "tok"), "target");
                assert_eq!(v.describe(&["/abs/t1/d"], &[], "tok"), "'t1/d'");
            }
            other => panic!("{other:?}"),
        }
        let r =
            parse_line(r#"{"type":"result","id":4,"ok":true,"error":null,"returned":{"type":"undefined"}}"#).unwrap();
        assert!(
            matches!(r, FromProbe::Result { returned: Some(ref v), .. } if v.describe(&[], &[], "tok") == "undefined")
        );
        let r =
            parse_line(r#"{"type":"result","id":5,"ok":true,"error":null,"returned":{"type":"number","value":11}}"#)
                .unwrap();
        assert!(matches!(r, FromProbe::Result { returned: Some(ref v), .. } if v.describe(&[], &[], "tok") == "11"));
        // the number of bytes of the data it was given (11 bytes of token): a fact of the call,
        // not of the run's numbering
        assert!(
            matches!(r, FromProbe::Result { returned: Some(ref v), .. } if v.describe(&[], &[], "abc-def-123") == crate::domain::Returned::BYTE_COUNT)
        );
        let r = parse_line(
            r#"{"type":"result","id":6,"ok":true,"error":null,"returned":{"type":"object","class":"FileHandle"}}"#,
        )
        .unwrap();
        assert!(
            matches!(r, FromProbe::Result { returned: Some(ref v), .. } if v.describe(&[], &[], "tok") == "FileHandle")
        );
    }

    #[test]
    fn v2_messages_serialise_as_documented() {
        let p = PrepareRecipe::new(9, "publish.temp-rename", "t9/target", "c0-t9")
            .scenario("publish")
            .role("writer")
            .params(serde_json::json!({"fsync": false}));
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            r#"{"type":"prepare","id":9,"scenario":"publish","recipe":"publish.temp-rename","role":"writer","target":"t9/target","source":null,"token":"c0-t9","mark":null,"hold_ms":0,"params":{"fsync":false}}"#
        );
        let q = PrepareRecipe::new(2, "claim.rename", "t", "k").source("s").mark("m");
        let v: serde_json::Value = serde_json::to_value(&q).unwrap();
        assert_eq!((v["source"].as_str(), v["mark"].as_str(), v["scenario"].is_null()), (Some("s"), Some("m"), true));
        assert_eq!(v["params"], serde_json::json!({}));
        assert_eq!(serde_json::to_string(&Stop::new(4)).unwrap(), r#"{"type":"stop","id":4}"#);
        assert_eq!(serde_json::to_string(&Go::new(4)).unwrap(), r#"{"type":"go","id":4}"#);
        // a v1 prepare is unchanged: no v2 field appears
        let v1 = serde_json::to_string(&Prepare::new(1, call("node.x", "t"))).unwrap();
        assert_eq!(
            v1,
            r#"{"type":"prepare","id":1,"variant":"node.x","target":"t","source":null,"token":"k","mark":null,"hold_ms":0}"#
        );
    }

    #[test]
    fn hello_check_compares_the_probe_families_only() {
        let matrix =
            [("node", "node.a"), ("node", "node.b"), ("node", "node.c"), ("deno", "deno.a"), ("dotnet", "dotnet.a")];
        let hello = |protocol: u32, families: &[&str], variants: &[&str]| FromProbe::Hello {
            protocol,
            runtime: "r".into(),
            version: "v".into(),
            families: families.iter().map(|s| s.to_string()).collect(),
            probe: "p".into(),
            variants: variants.iter().map(|s| s.to_string()).collect(),
            recipes: vec![],
            clock: None,
            capabilities: vec![],
            pid: None,
        };
        // v1 lists nothing: nothing to check
        assert_eq!(check_hello(&hello(1, &["node"], &[]), &matrix), None);
        // not a hello
        let ready = FromProbe::Ready { id: Some(1), supported: true, reason: None };
        assert_eq!(check_hello(&ready, &matrix), None);
        // agreement
        let c = check_hello(&hello(2, &["node"], &["node.c", "node.a", "node.b"]), &matrix).unwrap();
        assert!(c.is_clean(), "{c:?}");
        // both directions, sorted, repeats once; deno.a counts as unknown for a node-only probe
        let c = check_hello(&hello(2, &["node"], &["node.z", "node.a", "node.z", "deno.a"]), &matrix).unwrap();
        assert_eq!(c.unknown_to_probe, ["node.b", "node.c"]);
        assert_eq!(c.unknown_to_matrices, ["deno.a", "node.z"]);
        assert!(!c.is_clean());
        // two families
        let c = check_hello(&hello(2, &["deno", "dotnet"], &["deno.a"]), &matrix).unwrap();
        assert_eq!(c.unknown_to_probe, ["dotnet.a"]);
        assert!(c.unknown_to_matrices.is_empty());
        // a v2 hello without variants: every matrix variant of its families is unknown to it
        let c = check_hello(&hello(2, &["deno"], &[]), &matrix).unwrap();
        assert_eq!(c.unknown_to_probe, ["deno.a"]);
    }

    #[test]
    fn prepare_serialises_paths_as_data() {
        let p = Prepare::new(1, Call { token: "t", ..call("node.x", "a \"b\" & %c% 日本") });
        let s = serde_json::to_string(&p).unwrap();
        assert!(s.contains(r#""target":"a \"b\" & %c% 日本""#), "{s}");
        assert!(s.starts_with(r#"{"type":"prepare""#));
    }
}

//! The messages of `probes/PROTOCOL.md`, version 1, as serde types.

use serde::{Deserialize, Serialize};

/// The protocol version this harness speaks.
pub const PROTOCOL: u32 = 1;

/// The raw error a probe reports, exactly as the runtime gave it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct RawError {
    /// Exception class or error name (`Error`, `AlreadyExists`, `System.IO.IOException`).
    #[serde(rename = "type", default)]
    pub kind: String,
    /// The runtime's own string code (Node's `err.code`), if any.
    #[serde(default)]
    pub code: Option<String>,
    /// errno, if any.
    #[serde(default)]
    pub errno: Option<i64>,
    /// HResult (.NET, PowerShell), if any.
    #[serde(default)]
    pub hresult: Option<i64>,
    /// cmd's ERRORLEVEL, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errorlevel: Option<i64>,
    /// The message.
    #[serde(default)]
    pub message: String,
}

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
    },
}

/// `prepare` message (harness → probe).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prepare<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    /// Attempt id.
    pub id: u64,
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

impl<'a> Prepare<'a> {
    /// Builds a `prepare` message.
    pub fn new(
        id: u64,
        variant: &'a str,
        target: &'a str,
        source: Option<&'a str>,
        token: &'a str,
        mark: Option<&'a str>,
        hold_ms: u64,
    ) -> Self {
        Prepare { kind: "prepare", id, variant, target, source, token, mark, hold_ms }
    }
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
    use super::*;

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
    fn prepare_serialises_paths_as_data() {
        let p = Prepare::new(1, "node.x", "a \"b\" & %c% 日本", None, "t", None, 0);
        let s = serde_json::to_string(&p).unwrap();
        assert!(s.contains(r#""target":"a \"b\" & %c% 日本""#), "{s}");
        assert!(s.starts_with(r#"{"type":"prepare""#));
    }
}

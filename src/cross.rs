//! Cross-runtime races: contenders from different runtimes and API families on one name
//! (e.g. Node `wx`, Deno `createNew`, .NET `CreateNew`, cmd `mkdir`), reporting per trial who
//! won and whether exclusion held across them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::report::model::ErrorInfo;
use crate::verdict::{RaceStats, RaceVerdict};

/// One contender of a cross-runtime race.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrossContender {
    /// Slot number (index into `wins_by_contender`).
    pub slot: usize,
    /// Runtime row label (`node 20.20.2`).
    pub runtime: String,
    /// Adapter name.
    pub runtime_name: String,
    /// Variant id.
    pub variant: String,
    /// The call as shown in tables.
    pub call: String,
}

/// The result of a cross-runtime race (`cross-race.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrossRace {
    /// The contenders, in slot order.
    pub contenders: Vec<CrossContender>,
    /// The verdict (glossary race verdicts, or `unsupported`).
    pub verdict: RaceVerdict,
    /// Counts: trials, winners histogram, wins per slot, barrier spread (µs; absent when a
    /// contender's probe has no microsecond clock, e.g. cmd).
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub stats: Option<RaceStats>,
    /// Wins per runtime label, summed over slots.
    pub wins_by_runtime: BTreeMap<String, usize>,
    /// Normalised error codes of failed calls → count.
    pub errors: BTreeMap<String, usize>,
    /// The first failed call's error.
    pub first_error: Option<ErrorInfo>,
    /// Faults seen, or why the race stopped.
    pub evidence: Option<String>,
    /// Trials per second.
    pub trials_per_second: Option<f64>,
}

impl CrossRace {
    /// A terminal report: one line per contender with its wins, then the verdict.
    pub fn render(&self) -> String {
        let mut b = tabled::builder::Builder::default();
        b.push_record(["slot", "runtime", "variant", "call", "wins"]);
        for c in &self.contenders {
            let wins = self.stats.as_ref().and_then(|s| s.wins_by_contender.get(c.slot)).copied().unwrap_or(0);
            b.push_record([c.slot.to_string(), c.runtime.clone(), c.variant.clone(), c.call.clone(), wins.to_string()]);
        }
        let mut t = b.build();
        t.with(tabled::settings::Style::sharp());
        let mut s = format!("{t}\n");
        match &self.stats {
            Some(st) => {
                let hist = st.winners.iter().map(|(k, v)| format!("{k} winner(s): {v}")).collect::<Vec<_>>().join(", ");
                s.push_str(&format!("verdict: {} ({} trials; {hist}", self.verdict.as_str(), st.trials));
                if let Some(sp) = st.barrier_spread_us {
                    s.push_str(&format!("; barrier spread p50 {:.0} µs, p99 {:.0} µs", sp.p50, sp.p99));
                }
                s.push_str(")\n");
            }
            None => s.push_str(&format!("verdict: {}\n", self.verdict.as_str())),
        }
        if let Some(e) = &self.evidence {
            s.push_str(&format!("evidence: {e}\n"));
        }
        s
    }
}

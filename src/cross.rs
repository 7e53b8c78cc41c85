//! Cross-runtime races: contenders from different runtimes and API families on one name
//! (e.g. Node `wx`, Deno `createNew`, .NET `CreateNew`, cmd `mkdir`), reporting per trial who
//! won and whether exclusion held across them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::report::model::{ErrorInfo, ModeRun};
use crate::verdict::{Detection, RaceMode, RaceVerdict};

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
    /// The kind of source it was given, when not the variant's own (`-c node:node.x@empty-dir`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<crate::matrix::SourceKind>,
    /// The call as shown in tables.
    pub call: String,
}

/// The result of a cross-runtime race (`cross-race.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrossRace {
    /// The contenders, in slot order.
    pub contenders: Vec<CrossContender>,
    /// What the contenders were (`--contender-kind`): `threads`, or (left out) `processes`.
    #[serde(default, skip_serializing_if = "crate::domain::ContenderKind::is_processes")]
    pub contender_kind: crate::domain::ContenderKind,
    /// The verdict (glossary race verdicts, or `unsupported`), after the detection control.
    pub verdict: RaceVerdict,
    /// The mode whose run decided the verdict.
    pub decided_by: RaceMode,
    /// The natural run: counts, winners histogram, wins per slot, bounds, barrier spread (µs;
    /// absent when a contender's probe has no microsecond clock, e.g. cmd).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub natural: Option<ModeRun>,
    /// The amplified run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amplified: Option<ModeRun>,
    /// Why there is no amplified run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amplified_unavailable: Option<crate::domain::NoAmplified>,
    /// The control: every slot making its own family's check-then-create in the same pools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detection: Option<Detection>,
    /// Why an `exclusive` verdict became `inconclusive`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weak_race: Option<String>,
    /// Wins per runtime label in the deciding run, summed over slots.
    pub wins_by_runtime: BTreeMap<String, usize>,
    /// The first failed call's error.
    pub first_error: Option<ErrorInfo>,
    /// Why the race could not run, if it could not.
    pub evidence: Option<String>,
    /// How the races were amplified (delay, system calls, tracer) and the offsets and
    /// adaptive-trial settings, as in `results.json`'s `run_info`.
    pub amplification: crate::report::model::AmplificationInfo,
}

impl CrossRace {
    /// A terminal report in the terminal's style ([`crate::report::style::current`]): see
    /// [`CrossRace::render_styled`].
    pub fn render(&self) -> String {
        self.render_styled(crate::report::style::current())
    }

    /// A terminal report: one line per contender with its wins in each mode (the table fitted
    /// to `style`'s width and coloured as it says), then one line per mode, the verdict and the
    /// control; control characters escaped, wide cells cut.
    pub fn render_styled(&self, style: crate::report::style::TermStyle) -> String {
        let header = ["slot", "runtime", "variant", "call", "wins (natural)", "wins (amplified)"].map(String::from);
        let wins = |m: &Option<ModeRun>, slot: usize| {
            m.as_ref().and_then(|m| m.stats.wins_by_contender.get(slot)).map_or("-".into(), |w| w.to_string())
        };
        let rows = self.contenders.iter().map(|c| {
            [
                c.slot.to_string(),
                c.runtime.clone(),
                crate::matrix::Variant::label(&c.variant, c.source),
                c.call.clone(),
                wins(&self.natural, c.slot),
                wins(&self.amplified, c.slot),
            ]
        });
        // cells cut and control characters escaped, as in every terminal table
        let records = std::iter::once(header).chain(rows).map(|r| r.map(|c| (c, None)));
        let mut s = format!("{}\n", crate::report::table::toned_table(records, style));
        for (name, m) in [("natural", &self.natural), ("amplified", &self.amplified)] {
            if let Some(m) = m {
                s.push_str(&format!("{name:<9}  {}\n", mode_line(m)));
            }
        }
        if let Some(why) = &self.amplified_unavailable {
            s.push_str(&format!("amplified  unavailable ({why})\n"));
        }
        let mut v = format!("verdict: {} (decided by the {} race)", self.verdict.as_str(), self.decided_by.as_str());
        if let Some(w) = &self.weak_race {
            v.push_str(&format!("; {w}"));
        }
        s.push_str(&v);
        s.push('\n');
        if !self.contender_kind.is_processes() {
            s.push_str("contenders: threads of one probe process\n");
        }
        if let Some(d) = &self.detection {
            s.push_str(&format!(
                "detection control ({}): {}{}\n",
                d.variant,
                d.describe(),
                if d.worked { "" } else { " — weak race" }
            ));
        }
        if let Some(e) = &self.evidence {
            s.push_str(&format!("evidence: {e}\n"));
        }
        // what a probe said (evidence, errors) must not drive the terminal either
        s.lines().map(|l| crate::report::table::escape_controls(l).into_owned() + "\n").collect()
    }
}

/// `exclusive 0/200 (bound < 1.5%); 1 winner(s): 200; barrier spread p50 120 µs, p99 400 µs`.
fn mode_line(m: &ModeRun) -> String {
    let st = &m.stats;
    let hist = st.winners.iter().map(|(k, v)| format!("{k} winner(s): {v}")).collect::<Vec<_>>().join(", ");
    let mut s = format!("{} {}; {hist}", m.verdict.as_str(), crate::report::table::counts_text(m));
    if let Some(sp) = st.barrier_spread_us {
        s.push_str(&format!("; barrier spread p50 {:.0} µs, p99 {:.0} µs", sp.p50, sp.p99));
    }
    if let Some(e) = &m.evidence {
        s.push_str(&format!("; {e}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::{CrossContender, CrossRace, RaceMode, RaceVerdict};

    #[test]
    fn render_escapes_control_characters() {
        let r = CrossRace {
            contenders: vec![CrossContender {
                slot: 0,
                runtime: "node \u{1b}[2J".into(),
                runtime_name: "node".into(),
                variant: "node.x".into(),
                source: None,
                call: "fs.x(p)\u{0}".into(),
            }],
            verdict: RaceVerdict::Inconclusive,
            decided_by: RaceMode::Natural,
            natural: None,
            amplified: None,
            amplified_unavailable: Some(crate::domain::NoAmplified::Unavailable("no strace\u{7}".into())),
            contender_kind: Default::default(),
            detection: None,
            weak_race: None,
            wins_by_runtime: BTreeMap::new(),
            first_error: None,
            evidence: Some("probe said \u{1b}]0;x\u{7}\rback".into()),
            amplification: crate::report::model::AmplificationInfo {
                requested: "off".into(),
                delay_us: 1000,
                syscalls: Vec::new(),
                paths: None,
                offsets_us: None,
                max_rate: None,
                max_trials: None,
                tool: None,
                unavailable: None,
            },
        };
        let text = r.render();
        assert!(!text.chars().any(|c| c.is_control() && c != '\n'), "{text:?}");
        assert!(text.contains("node \\u{1b}[2J") && text.contains("probe said \\u{1b}]0;x\\u{7}\\u{d}back"), "{text}");
    }
}

//! The detection-control judge: how often the family's check-then-create anti-pattern showed
//! two winners, raced like any variant, and whether that is enough to believe the race's
//! `exclusive` verdicts.

use serde::{Deserialize, Serialize};

use super::{RaceMode, RaceVerdict};

/// Smallest share of trials in which the detection control must show two winners for a race
/// to count as working: amplified races (the delay makes a check-then-create window certain)
/// and natural races (where only luck finds the window). The race-truth issue's thresholds.
pub const CONTROL_MIN_AMPLIFIED: f64 = 0.90;
/// See [`CONTROL_MIN_AMPLIFIED`].
pub const CONTROL_MIN_NATURAL: f64 = 0.20;

/// The significance level of the control's test: a control counts as weak when its count is
/// below [`CONTROL_MIN_AMPLIFIED`] (or [`CONTROL_MIN_NATURAL`]) with p < 0.05.
pub const CONTROL_ALPHA: f64 = 0.05;

/// Fewest control trials (in the ordering judged) from which a detection rate is believed: a
/// lucky 1/1 says nothing about a race's power.
pub const CONTROL_MIN_TRIALS: usize = 20;

/// How well the detection control (the family's check-then-create anti-pattern, raced like
/// any variant) was caught in one run: the evidence that the race machinery finds windows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Detection {
    /// The control variant's id.
    pub variant: String,
    /// The mode judged (amplified where it ran, else natural).
    pub mode: RaceMode,
    /// Trials with two or more winners in that mode (in its ordering that caught the most).
    pub caught: usize,
    /// Trials run in that mode (in that ordering).
    pub trials: usize,
    /// That ordering's release offset, µs (0 = released together).
    #[serde(default)]
    pub offset_us: u64,
    /// Natural trials with two or more winners and natural trials, where the natural race ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub natural: Option<[usize; 2]>,
    /// Likewise for the amplified race.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amplified: Option<[usize; 2]>,
    /// True when at least [`CONTROL_MIN_TRIALS`] trials ran and `caught / trials` is not
    /// significantly below [`CONTROL_MIN_AMPLIFIED`] (amplified) or [`CONTROL_MIN_NATURAL`]
    /// (natural only): one-sided exact binomial test, p ≥ [`CONTROL_ALPHA`].
    pub worked: bool,
}

impl Detection {
    /// Judges a control from its natural and amplified counts, each `(multi-winner trials,
    /// trials, release offset µs)` of the ordering that caught the most; `None` for a mode
    /// that did not run. A control that ran in neither mode (unsupported, crashed) did not work.
    pub fn judge(
        variant: &str,
        natural: Option<(usize, usize, u64)>,
        amplified: Option<(usize, usize, u64)>,
    ) -> Detection {
        let (mode, (caught, trials, offset_us)) = match (natural, amplified) {
            (_, Some(a)) => (RaceMode::Amplified, a),
            (Some(n), None) => (RaceMode::Natural, n),
            (None, None) => (RaceMode::Natural, (0, 0, 0)),
        };
        Detection {
            variant: variant.to_string(),
            mode,
            caught,
            trials,
            offset_us,
            natural: natural.map(|(a, b, _)| [a, b]),
            amplified: amplified.map(|(a, b, _)| [a, b]),
            worked: caught_enough(caught, trials, mode),
        }
    }

    /// `control caught 12/100 (amplified)`, with `, +500 µs` for a staggered ordering and a
    /// note when it ran fewer than [`CONTROL_MIN_TRIALS`] trials.
    pub fn describe(&self) -> String {
        let at = if self.offset_us > 0 { format!(", +{} µs", self.offset_us) } else { String::new() };
        let few = if self.trials < CONTROL_MIN_TRIALS {
            format!(", fewer than {CONTROL_MIN_TRIALS} trials: raise --trials")
        } else {
            String::new()
        };
        format!("control caught {}/{} ({}{at}{few})", self.caught, self.trials, self.mode.as_str())
    }
}

/// The control rule on one ordering's counts: at least [`CONTROL_MIN_TRIALS`] trials, and
/// `caught` of `trials` not significantly below [`CONTROL_MIN_AMPLIFIED`] (amplified) or
/// [`CONTROL_MIN_NATURAL`] (natural): weak only when the count is significantly below the
/// threshold (a one-sided exact binomial test, p < [`CONTROL_ALPHA`]), since a hard cut flips
/// with sampling noise for a runtime whose true rate sits near it (CoreCLR under load: about
/// 93%).
pub fn caught_enough(caught: usize, trials: usize, mode: RaceMode) -> bool {
    let min = match mode {
        RaceMode::Amplified => CONTROL_MIN_AMPLIFIED,
        RaceMode::Natural => CONTROL_MIN_NATURAL,
    };
    trials >= CONTROL_MIN_TRIALS && crate::stats::below_p(caught, trials, min) >= CONTROL_ALPHA
}

/// Applies the detection control to a race verdict: an `exclusive` verdict from a race whose
/// control was not caught becomes `inconclusive`, with the reason (`weak race: control caught
/// n/T`). Other verdicts stand: a failure seen is a failure whatever the control did.
pub fn apply_control(verdict: RaceVerdict, control: Option<&Detection>) -> (RaceVerdict, Option<String>) {
    match control {
        Some(d) if !d.worked && verdict == RaceVerdict::Exclusive => {
            (RaceVerdict::Inconclusive, Some(format!("weak race: {}", d.describe())))
        }
        _ => (verdict, None),
    }
}

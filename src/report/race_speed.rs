//! How fast the race engine runs one race cell beside a C floor and a plain driver of the same
//! race: the summary `benches/floor.sh` writes (committed as `benches/results/race-speed.json`
//! with `SAVE=1`), and its Markdown, which `conformance docs` puts in `docs/MEASURING.md`
//! (`scenario=race-speed`).
//!
//! The figures are measured, never typed: the script writes the file, the marker renders it,
//! and `docs --check` fails when the document and the file disagree. The table shows ratios,
//! not targets: what a round should reach is an issue's business, not this file's.

use serde::{Deserialize, Serialize};

use crate::report::model::TrialCost;

/// One round of `benches/floor.sh`: the machine, the build, the race and each way it was run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RaceSpeed {
    /// The machine, as the script describes it (`x86_64, 2 cores, Linux 6.18.44, Debian 12`).
    pub machine: String,
    /// The commit of the binary measured, with `-dirty` when the checkout had changes.
    pub conformance: String,
    /// When the round ended (RFC 3339 date).
    pub date: String,
    /// The runtime every way's contenders ran on (`node v20.20.2`).
    pub runtime: String,
    /// The call raced (`node.writeFileSync.wx`: `writeFileSync(p, token, {flag: 'wx'})`).
    pub call: String,
    /// Contenders per trial.
    pub contenders: u32,
    /// Trials asked of each way.
    pub trials: u64,
    /// The ways, in the script's order.
    pub ways: Vec<Way>,
}

/// How a way ran the race.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WayKind {
    /// `benches/floor/excl_race.c`: forked contenders blocked on pipes, `open(O_EXCL)`.
    CFloor,
    /// `benches/floor/plain_driver.py`: persistent contenders of the runtime over JSON lines,
    /// a prepare and a go round trip and a folder per trial, no checks.
    PlainDriver,
    /// `conformance run --scenario race --amplify off`: the product's natural race.
    Natural,
    /// `conformance run --scenario race --thorough`: the product's amplified race (every
    /// file-system call of the race's paths delayed under strace).
    Amplified,
}

impl WayKind {
    /// The way's name in the table.
    pub fn label(self) -> &'static str {
        match self {
            WayKind::CFloor => "C floor",
            WayKind::PlainDriver => "plain driver",
            WayKind::Natural => "conformance, natural",
            WayKind::Amplified => "conformance, amplified",
        }
    }
}

/// One way's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Way {
    /// Which way.
    pub way: WayKind,
    /// Trials per second of wall time (the product's: its cell's `trials_per_second`).
    pub trials_per_s: f64,
    /// Trials counted (the product stops a race early once its verdict cannot change).
    pub trials_counted: u64,
    /// Trials with more than one winner.
    pub multi_winner_trials: u64,
    /// The barrier spread's median, µs (the probes' monotonic stamps on one time line); `None`
    /// where the way does not measure it.
    pub barrier_p50_us: Option<f64>,
    /// The barrier spread's 99th percentile, µs.
    pub barrier_p99_us: Option<f64>,
    /// Where a trial's time went (the product's `cost` in results.json).
    pub cost: Option<TrialCost>,
}

/// A rate as the table shows it: a whole number with thousands separators (no crate in the
/// offline mirror does this: `num-format` and `thousands` are not in it).
fn rate(x: f64) -> String {
    let n = x.round() as u64;
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// `a` as a multiple of `b`: `3.1×`, `0.18×` (two significant figures under 1); empty when
/// either is missing or `b` is 0.
fn times(a: f64, b: Option<f64>) -> String {
    match b {
        Some(b) if b > 0.0 => {
            let r = a / b;
            if r < 1.0 {
                format!("{r:.2}×")
            } else {
                format!("{r:.1}×")
            }
        }
        _ => String::new(),
    }
}

/// The Markdown of `s`, ending in a newline: one row per way (trials/s, as a multiple of the
/// plain driver and of the C floor, the amplified race also of the natural one, the barrier
/// spread and multi-winner trials), a line naming the race, machine and build, then where a
/// product trial's time went in each mode.
pub fn markdown(s: &RaceSpeed) -> String {
    let of = |k: WayKind| s.ways.iter().find(|w| w.way == k).map(|w| w.trials_per_s);
    let (floor, plain, natural) = (of(WayKind::CFloor), of(WayKind::PlainDriver), of(WayKind::Natural));
    let mut out = String::from(
        "| way | trials/s | × plain driver | × C floor | × natural | barrier spread p50 / p99 | trials | multiple winners |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for w in &s.ways {
        let spread = match (w.barrier_p50_us, w.barrier_p99_us) {
            (Some(a), Some(b)) => format!("{a:.0} / {b:.0} µs"),
            (Some(a), None) => format!("{a:.0} µs"),
            _ => String::new(),
        };
        let vs_natural = if w.way == WayKind::Amplified { times(w.trials_per_s, natural) } else { String::new() };
        out += &format!(
            "| {} | {} | {} | {} | {vs_natural} | {spread} | {} | {} |\n",
            w.way.label(),
            rate(w.trials_per_s),
            if w.way == WayKind::PlainDriver { String::new() } else { times(w.trials_per_s, plain) },
            if w.way == WayKind::CFloor { String::new() } else { times(w.trials_per_s, floor) },
            rate(w.trials_counted as f64),
            w.multi_winner_trials
        );
    }
    let md = crate::report::markdown::md_escape;
    out += &format!(
        "\n`{}` on {}, {} contenders, {} trials asked of each way; measured by `benches/floor.sh` on {} \
         (conformance {}, {}).\n",
        s.call.replace('`', "'"),
        md(&s.runtime),
        s.contenders,
        rate(s.trials as f64),
        md(&s.machine),
        md(&s.conformance),
        md(&s.date)
    );
    for w in &s.ways {
        if let Some(c) = &w.cost {
            out += &format!(
                "\n{} trials, µs each (mean of {}): set-up {:.0}, `prepare` round trip {:.0}, release plan {:.0}, \
                 calls {:.0}, read {:.0}, clean-up {:.0}.\n",
                if w.way == WayKind::Amplified { "Amplified" } else { "Natural" },
                rate(c.trials as f64),
                c.set_up_us,
                c.prepare_us,
                c.release_us,
                c.calls_us,
                c.read_us,
                c.clean_up_us
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{markdown, RaceSpeed, Way, WayKind};
    use crate::report::model::TrialCost;

    fn way(way: WayKind, trials_per_s: f64) -> Way {
        Way {
            way,
            trials_per_s,
            trials_counted: 3000,
            multi_winner_trials: 0,
            barrier_p50_us: None,
            barrier_p99_us: None,
            cost: None,
        }
    }

    fn sample() -> RaceSpeed {
        let mut natural = way(WayKind::Natural, 1636.0);
        natural.barrier_p50_us = Some(98.4);
        natural.barrier_p99_us = Some(561.0);
        natural.cost = Some(TrialCost {
            trials: 2990,
            set_up_us: 3.2,
            prepare_us: 204.0,
            release_us: 162.0,
            calls_us: 142.0,
            read_us: 16.0,
            clean_up_us: 12.0,
        });
        RaceSpeed {
            machine: "x86_64, 2 cores".into(),
            conformance: "abc1234".into(),
            date: "2026-12-06".into(),
            runtime: "node v20.20.2".into(),
            call: "node.writeFileSync.wx".into(),
            contenders: 3,
            trials: 3000,
            ways: vec![
                way(WayKind::CFloor, 14870.0),
                way(WayKind::PlainDriver, 1544.0),
                natural,
                way(WayKind::Amplified, 295.0),
            ],
        }
    }

    #[test]
    fn each_way_is_set_beside_the_plain_driver_the_floor_and_natural() {
        let md = markdown(&sample());
        assert!(md.contains("| C floor | 14,870 | 9.6× |  |  |  | 3,000 | 0 |"), "{md}");
        assert!(md.contains("| plain driver | 1,544 |  | 0.10× |  |  | 3,000 | 0 |"), "{md}");
        assert!(md.contains("| conformance, natural | 1,636 | 1.1× | 0.11× |  | 98 / 561 µs | 3,000 | 0 |"), "{md}");
        assert!(md.contains("| conformance, amplified | 295 | 0.19× | 0.02× | 0.18× |  |"), "{md}");
        assert!(md.contains("`node.writeFileSync.wx` on node v20.20.2, 3 contenders, 3,000 trials"), "{md}");
        assert!(md.contains("(conformance abc1234, 2026-12-06)"), "{md}");
        assert!(md.contains("Natural trials, µs each (mean of 2,990): set-up 3, `prepare` round trip 204,"), "{md}");
        assert!(!md.contains("Amplified trials"), "a way without cost has no cost line: {md}");
    }

    #[test]
    fn a_way_missing_leaves_its_ratio_empty_and_the_file_round_trips() {
        let mut s = sample();
        s.ways.retain(|w| w.way != WayKind::PlainDriver);
        assert!(markdown(&s).contains("| conformance, natural | 1,636 |  | 0.11× |"), "{}", markdown(&s));
        let text = serde_json::to_string(&s).unwrap();
        assert!(text.contains("\"way\":\"c-floor\""), "{text}");
        assert_eq!(serde_json::from_str::<RaceSpeed>(&text).unwrap(), s);
        let extra = text.replacen("{", "{\"surprise\":1,", 1);
        assert!(serde_json::from_str::<RaceSpeed>(&extra).is_err(), "unknown fields are refused");
    }
}

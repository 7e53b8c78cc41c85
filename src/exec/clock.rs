//! One timeline for every contender's stamps: the harness's clocks, what a probe's stamps
//! mean (`probes/PROTOCOL.md`, "Clocks"), and the check that turns a stamp that cannot be
//! right into a reason instead of a barrier spread.
//!
//! The timeline is the system's monotonic clock in microseconds (`CLOCK_MONOTONIC`,
//! clock_gettime(2), on Linux: one clock for every process, which `node`'s
//! `process.hrtime.bigint()` and .NET's `Stopwatch.GetTimestamp()` read too); where the
//! harness cannot read it (other systems), the wall clock (µs since the Unix epoch).

/// Allowed disagreement of a wall-clock stamp with the harness's window, in µs: the harness
/// converts such stamps with its own wall-to-monotonic offset, read once per attempt, and
/// probes format wall time to 0.1 µs.
pub const WALL_SLACK_US: f64 = 100.0;

/// Allowed disagreement of a monotonic stamp with the window, in µs (rounding only).
pub const MONOTONIC_SLACK_US: f64 = 1.0;

/// What a probe's `*_us` stamps count (the hello's `clock`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeClock {
    /// The system's monotonic clock in µs (`CLOCK_MONOTONIC` on Linux).
    Monotonic,
    /// µs since the Unix epoch (protocol 1, and a hello without `clock`).
    Wall,
}

impl ProbeClock {
    /// The hello's `clock` (`monotonic`, `wall`, or absent: wall). Errors: any other value,
    /// named.
    pub fn parse(s: Option<&str>) -> Result<ProbeClock, String> {
        match s {
            None | Some("wall") => Ok(ProbeClock::Wall),
            Some("monotonic") => Ok(ProbeClock::Monotonic),
            Some(other) => Err(format!("unknown clock '{other}' in the hello (monotonic or wall)")),
        }
    }
}

/// One reading of the harness's clocks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Now {
    /// `CLOCK_MONOTONIC` in µs, where the harness can read it (Linux).
    pub mono_us: Option<f64>,
    /// µs since the Unix epoch.
    pub wall_us: f64,
}

impl Now {
    /// This reading on the timeline: the monotonic clock where there is one, else the wall clock.
    pub fn timeline_us(&self) -> f64 {
        self.mono_us.unwrap_or(self.wall_us)
    }
}

/// Reads the harness's clocks (monotonic first, then wall).
pub fn now() -> Now {
    Now { mono_us: mono_us(), wall_us: wall_us() }
}

/// `CLOCK_MONOTONIC` in µs (clock_gettime(2)); `None` off Linux, where the probes' monotonic
/// clocks need not be this one (macOS's `mach_absolute_time` stops in sleep).
#[cfg(target_os = "linux")]
pub fn mono_us() -> Option<f64> {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC)
        .ok()
        .map(|t| t.tv_sec() as f64 * 1e6 + t.tv_nsec() as f64 / 1e3)
}

/// See the Linux version: `None` here.
#[cfg(not(target_os = "linux"))]
pub fn mono_us() -> Option<f64> {
    None
}

/// µs since the Unix epoch (0 for a clock before 1970).
pub fn wall_us() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64() * 1e6)
}

/// A wall-clock stamp (µs since the epoch) on the timeline, by the offset between the two
/// clocks of the reading `at`.
pub fn wall_to_timeline(wall_us: f64, at: Now) -> f64 {
    match at.mono_us {
        Some(m) => wall_us - (at.wall_us - m),
        None => wall_us,
    }
}

/// Places a probe's `t0`/`t1` (µs on `clock`) on the timeline and checks them against what the
/// harness saw: the call cannot have started before the harness released it (`sent`, read just
/// before `go` was written) nor ended after its result arrived (`received`, read just after),
/// and cannot end before it started. Returns the two stamps on the timeline.
///
/// Errors: why the stamps cannot be right (a missing stamp; a monotonic stamp where the
/// harness has no monotonic clock; a stamp outside the window by more than the slack
/// ([`MONOTONIC_SLACK_US`], [`WALL_SLACK_US`]), with the distances in µs). Then the trial
/// has no barrier spread, and the reason is reported instead ("not measured (…)").
pub fn place(
    t0: Option<f64>,
    t1: Option<f64>,
    clock: ProbeClock,
    sent: Now,
    received: Now,
) -> Result<(f64, f64), String> {
    let (Some(t0), Some(t1)) = (t0, t1) else {
        return Err("the probe sent no stamps".into());
    };
    let (a, b, slack, name) = match clock {
        ProbeClock::Monotonic => match sent.mono_us {
            Some(_) => (t0, t1, MONOTONIC_SLACK_US, "monotonic"),
            None => {
                return Err(
                    "the probe stamps with the system's monotonic clock, which the harness cannot read here".into()
                )
            }
        },
        ProbeClock::Wall => {
            (wall_to_timeline(t0, received), wall_to_timeline(t1, received), WALL_SLACK_US, "wall-clock")
        }
    };
    let (lo, hi) = (sent.timeline_us(), received.timeline_us());
    if b < a {
        return Err(format!("the probe's {name} stamps run backwards (end {:.0} µs before start)", a - b));
    }
    if a < lo - slack {
        return Err(format!(
            "a {name} stamp lies {:.0} µs before the harness released the call (the probe's clock is not the harness's)",
            lo - a
        ));
    }
    if b > hi + slack {
        return Err(format!(
            "a {name} stamp lies {:.0} µs after the harness received the result (the probe's clock is not the harness's)",
            b - hi
        ));
    }
    Ok((a, b))
}

#[cfg(test)]
mod tests {
    use super::{now, place, Now, ProbeClock};

    fn at(t: f64) -> Now {
        Now { mono_us: Some(t), wall_us: t + 1.0e15 }
    }

    #[test]
    fn stamps_inside_the_window_are_placed() {
        assert_eq!(place(Some(110.0), Some(150.0), ProbeClock::Monotonic, at(100.0), at(200.0)), Ok((110.0, 150.0)));
        // wall stamps go through the offset of the reading
        let (a, b) = place(Some(1.0e15 + 120.0), Some(1.0e15 + 130.0), ProbeClock::Wall, at(100.0), at(200.0)).unwrap();
        assert!((a - 120.0).abs() < 1e-3 && (b - 130.0).abs() < 1e-3, "{a} {b}");
    }

    #[test]
    fn stamps_that_cannot_be_right_are_refused_with_the_reason() {
        let e = place(Some(50.0), Some(150.0), ProbeClock::Monotonic, at(100.0), at(200.0)).unwrap_err();
        assert!(e.contains("50 µs before the harness released"), "{e}");
        let e = place(Some(150.0), Some(260.0), ProbeClock::Monotonic, at(100.0), at(200.0)).unwrap_err();
        assert!(e.contains("60 µs after the harness received"), "{e}");
        let e = place(Some(150.0), Some(140.0), ProbeClock::Monotonic, at(100.0), at(200.0)).unwrap_err();
        assert!(e.contains("backwards"), "{e}");
        // a per-process wall clock 34 ms off (Deno 2.0.0's performance.timeOrigin, issue 11)
        let e = place(Some(1.0e15 + 34_120.0), Some(1.0e15 + 34_130.0), ProbeClock::Wall, at(100.0), at(200.0))
            .unwrap_err();
        assert!(e.contains("after the harness received"), "{e}");
        assert_eq!(place(None, Some(1.0), ProbeClock::Wall, at(0.0), at(1.0)).unwrap_err(), "the probe sent no stamps");
        let no_mono = Now { mono_us: None, wall_us: 5.0 };
        assert!(place(Some(5.0), Some(5.0), ProbeClock::Monotonic, no_mono, no_mono)
            .unwrap_err()
            .contains("cannot read"));
        // slack: a wall stamp 50 µs early passes, a monotonic one 2 µs early does not
        assert!(place(Some(1.0e15 + 50.0), Some(1.0e15 + 120.0), ProbeClock::Wall, at(100.0), at(200.0)).is_ok());
        assert!(place(Some(98.0), Some(120.0), ProbeClock::Monotonic, at(100.0), at(200.0)).is_err());
    }

    #[test]
    fn clocks_parse() {
        assert_eq!(ProbeClock::parse(None), Ok(ProbeClock::Wall));
        assert_eq!(ProbeClock::parse(Some("monotonic")), Ok(ProbeClock::Monotonic));
        assert!(ProbeClock::parse(Some("tai")).unwrap_err().contains("'tai'"));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_harness_reads_clock_monotonic() {
        let a = now();
        let b = now();
        let (ma, mb) = (a.mono_us.unwrap(), b.mono_us.unwrap());
        assert!(mb >= ma && ma > 0.0);
        // CLOCK_MONOTONIC counts from boot: /proc/uptime is CLOCK_BOOTTIME, equal without suspend
        let up: f64 = std::fs::read_to_string("/proc/uptime").unwrap().split(' ').next().unwrap().parse().unwrap();
        assert!(ma / 1e6 <= up + 1.0, "{ma} µs vs uptime {up} s");
    }
}

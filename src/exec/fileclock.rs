//! A wall clock that a probe with no clock of its own reads as a file: cmd.exe under Wine,
//! whose `%TIME%` has no seconds (`probes/cmd/README.md`) and which has no other clock.
//!
//! The harness arms a `timerfd` (Linux, `timerfd_create(2)`) on `CLOCK_REALTIME` to expire at
//! a fixed absolute time far ahead ([`EXPIRY_S`]) and never reads or waits on it. The kernel
//! shows the time left before that expiry in the descriptor's `fdinfo`
//! (`/proc/<pid>/fdinfo/<fd>`, `proc_pid_fdinfo(5)`, line `it_value: (SECONDS, NANOSECONDS)`),
//! computed when the file is read. So a probe that reads that file right before its call has
//! read the time, to the nanosecond, as an unparsed text; the harness turns it into µs since
//! the Unix epoch ([`FileClock::epoch_us`]): expiry − time left. Any process of the same user
//! may read the file, so the probe needs no privilege (`/proc/timer_list`, which shows the
//! monotonic clock, is readable by root only).

use std::path::{Path, PathBuf};

/// The absolute expiry of the clock's timer, in seconds since the Unix epoch: 4,000,000,000 s
/// (the year 2096), far past any run, so the time left never reaches zero.
pub const EXPIRY_S: i64 = 4_000_000_000;

/// The harness's file clock: the armed timer and the path of its `fdinfo`.
#[derive(Debug)]
pub struct FileClock {
    #[cfg(target_os = "linux")]
    _timer: nix::sys::timerfd::TimerFd,
    path: PathBuf,
}

impl FileClock {
    /// The file a probe reads (`/proc/<harness pid>/fdinfo/<fd>`), as a host path; spell it for
    /// the runtime before handing it over.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The time a probe read from [`FileClock::path`], in µs since the Unix epoch: the
    /// [`EXPIRY_S`] minus the `it_value: (S, NS)` time left found anywhere in `text` (what the
    /// probe copied out of the file, any line endings). `None` when `text` holds no such line,
    /// or a time left of zero (the timer expired or was disarmed: no time can be read from it).
    pub fn epoch_us(text: &str) -> Option<f64> {
        let rest = &text[text.find("it_value:")? + "it_value:".len()..];
        let inner = rest.trim_start().strip_prefix('(')?;
        let (s, rest) = inner.split_once(',')?;
        let ns = rest.split(')').next()?;
        let s: i64 = s.trim().parse().ok()?;
        let ns: i64 = ns.trim().parse().ok()?;
        if (s, ns) == (0, 0) || !(0..1_000_000_000).contains(&ns) || s < 0 {
            return None;
        }
        let left_us = s as f64 * 1e6 + ns as f64 / 1e3;
        Some(EXPIRY_S as f64 * 1e6 - left_us)
    }
}

/// The process's file clock, made on first use and kept for the harness's life; `None` where
/// there is none (not Linux, or the kernel refused the timer or hides `/proc`).
pub fn file_clock() -> Option<&'static FileClock> {
    static CLOCK: std::sync::OnceLock<Option<FileClock>> = std::sync::OnceLock::new();
    CLOCK.get_or_init(make).as_ref()
}

#[cfg(target_os = "linux")]
fn make() -> Option<FileClock> {
    use nix::sys::time::TimeSpec;
    use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
    use std::os::fd::{AsFd, AsRawFd};
    let timer = TimerFd::new(ClockId::CLOCK_REALTIME, TimerFlags::TFD_CLOEXEC).ok()?;
    let at = Expiration::OneShot(TimeSpec::new(EXPIRY_S, 0));
    timer.set(at, TimerSetTimeFlags::TFD_TIMER_ABSTIME).ok()?;
    let path = PathBuf::from(format!("/proc/{}/fdinfo/{}", std::process::id(), timer.as_fd().as_raw_fd()));
    // the clock works only if the file says the time: check it against the harness's clock
    let text = std::fs::read_to_string(&path).ok()?;
    let now_us = jiff::Timestamp::now().as_microsecond() as f64;
    let read = FileClock::epoch_us(&text)?;
    ((read - now_us).abs() < 1e6).then_some(FileClock { _timer: timer, path })
}

#[cfg(not(target_os = "linux"))]
fn make() -> Option<FileClock> {
    None
}

#[cfg(test)]
mod tests {
    use super::{file_clock, FileClock};

    #[test]
    fn the_time_left_becomes_epoch_microseconds() {
        let text = "pos:\t0\nflags:\t02000002\nmnt_id:\t17\nino:\t1038\nclockid: 0\nticks: 0\nsettime flags: 01\n\
                    it_value: (2203982505, 316600530)\nit_interval: (0, 0)\r\n";
        let us = FileClock::epoch_us(text).unwrap();
        assert!((us - 1_796_017_494_683_399.5).abs() < 1.0, "{us}");
        assert_eq!(FileClock::epoch_us("it_value: (0, 0)"), None, "an expired timer tells no time");
        assert_eq!(FileClock::epoch_us("ECHO is off."), None);
        assert_eq!(FileClock::epoch_us("it_value: (12, 2000000000)"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_file_clock_agrees_with_the_harness_clock() {
        let c = file_clock().expect("Linux has timerfd and /proc");
        for _ in 0..3 {
            let before = jiff::Timestamp::now().as_microsecond() as f64;
            let read = FileClock::epoch_us(&std::fs::read_to_string(c.path()).unwrap()).unwrap();
            let after = jiff::Timestamp::now().as_microsecond() as f64;
            assert!(read >= before - 1.0 && read <= after + 1.0, "{before} <= {read} <= {after}");
        }
    }
}

//! Pure judges: from what probes reported and what the harness saw on disk, to outcomes,
//! verdicts and counts in the vocabulary of `docs/GLOSSARY.md`; one judge per scenario.
//!
//! - [`second`]: one second comer's attempt against a first comer's state → an [`Outcome`].
//! - [`race`]: race trials → a [`RaceVerdict`] with counts, bounds and orderings, and the
//!   verdict of a cell from its natural and amplified runs.
//! - [`control`]: the detection control's counts → whether the race machinery found windows,
//!   and what that does to an `exclusive` verdict.
//! - [`lock`]: a variant's cells → "safe as a lock".
//! - [`answer`]: a call's rows (one per source kind) → the answer: yes, no (how, and the
//!   condition it held under) or undetermined (why).
//! - [`publish`]: what readers saw of files published by a recipe → counted failures.
//! - [`claim`]: what workers wrote to their output files → duplicate and lost items.
//! - [`done`]: what a consumer read when its completion rule held → premature consumes.
//!
//! Nothing here knows which variant or runtime it is judging: the same rules apply to all,
//! so an outcome can only come from observation. Nothing here does I/O.
//!
//! Floor: above the shared vocabulary and [`crate::matrix`]; it reads no process code.

use serde::{Deserialize, Serialize};

pub mod answer;
pub mod claim;
pub mod control;
pub mod counter;
pub mod done;
pub mod holder;
pub mod lease;
pub mod ledger;
pub mod lock;
pub mod mutex;
pub mod os_lock;
pub mod publish;
pub mod race;
pub mod recipe;
pub mod second;
pub mod update;
pub mod watch;

pub use control::*;

/// A counters map with every name in `names` at 0: the judges of the hand-off scenarios list
/// every counter they keep, so a count that stayed 0 is still shown.
pub(crate) fn zeroed(names: &[&str]) -> std::collections::BTreeMap<String, u64> {
    names.iter().map(|k| (k.to_string(), 0)).collect()
}
pub use lock::*;
pub use race::*;
pub use second::*;

/// The outcome of one attempt on a target (second-comer scenario; `absent` is the control).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Control: the call succeeded on a free name and the target holds the contender's token.
    Acquired,
    /// Control: the call failed on a free name and left it free; the variant cannot take a name.
    Failed,
    /// The call failed and the target is unchanged. Safe.
    Refused,
    /// The call succeeded and the target now holds the second comer's token: silent overwrite.
    Replaced,
    /// The call succeeded and the target is unchanged: success without taking anything.
    Kept,
    /// The call succeeded and the directory at the target now contains the second comer's item.
    Nested,
    /// The call succeeded through a symbolic link at the target: the link is kept (same text)
    /// and what it points at now holds the second comer's token or item (written, created
    /// or nested into through the link).
    Followed,
    /// The target changed, but not to the second comer's token (merged, truncated, emptied).
    Damaged,
    /// The call waited for console input.
    Prompted,
    /// The probe did not answer within the per-attempt timeout (its process tree was killed).
    Timeout,
    /// The probe exited, failed to start, or broke the protocol.
    Crashed,
    /// The runtime does not have this call (the probe said so, with a reason).
    Unsupported,
    /// Not measured: the harness itself failed around the attempt (it could not set up the
    /// first comer's state or a source, could not read the target afterwards, or the scratch
    /// file system failed with ENOSPC, EDQUOT, EROFS or EIO). Says nothing about the call; the
    /// reason is in the cell's evidence.
    HarnessError,
}

impl Outcome {
    /// The glossary spelling, e.g. `multiple-winners`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Acquired => "acquired",
            Outcome::Failed => "failed",
            Outcome::Refused => "refused",
            Outcome::Replaced => "replaced",
            Outcome::Kept => "kept",
            Outcome::Nested => "nested",
            Outcome::Followed => "followed",
            Outcome::Damaged => "damaged",
            Outcome::Prompted => "prompted",
            Outcome::Timeout => "timeout",
            Outcome::Crashed => "crashed",
            Outcome::Unsupported => "unsupported",
            Outcome::HarnessError => "harness-error",
        }
    }

    /// True for outcomes that carry no verdict (timeout, crashed, unsupported, skipped,
    /// harness-error).
    pub fn is_fault(self) -> bool {
        matches!(self, Outcome::Timeout | Outcome::Crashed | Outcome::Unsupported | Outcome::HarnessError)
    }
}

pub use crate::domain::Report;

/// The verdict of a race cell (`docs/GLOSSARY.md`, "Race").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RaceVerdict {
    /// Every trial had exactly one success and the target held that contender's token.
    Exclusive,
    /// Some trial had two or more successes.
    MultipleWinners,
    /// A contender succeeded but the target held someone else's token (or no token).
    LostUpdate,
    /// Some trial had no success.
    NoWinner,
    /// Faults (timeouts, crashes) kept trials from completing.
    Inconclusive,
    /// The runtime does not have this call.
    Unsupported,
    /// Not measured: the harness failed (set-up, snapshot, scratch file system) before any
    /// trial could be counted; see [`Outcome::HarnessError`].
    HarnessError,
}

impl RaceVerdict {
    /// The glossary spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            RaceVerdict::Exclusive => "exclusive",
            RaceVerdict::MultipleWinners => "multiple-winners",
            RaceVerdict::LostUpdate => "lost-update",
            RaceVerdict::NoWinner => "no-winner",
            RaceVerdict::Inconclusive => "inconclusive",
            RaceVerdict::Unsupported => "unsupported",
            RaceVerdict::HarnessError => "harness-error",
        }
    }
}

/// How a race was run (the glossary's "Race": natural and amplified).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RaceMode {
    /// As the calls happen.
    Natural,
    /// Every file-system system call delayed on return ([`crate::exec::amplify`]).
    Amplified,
}

impl RaceMode {
    /// `natural` or `amplified`.
    pub fn as_str(self) -> &'static str {
        match self {
            RaceMode::Natural => "natural",
            RaceMode::Amplified => "amplified",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{
        apply_control, classify_second, classify_second_source, decide, held_by, placed_by, safe_as_lock, spread,
        strongest_ordering, summarize_orderings, summarize_race, Detection, Outcome, RaceEvidence, RaceMode,
        RaceVerdict, Report, Trial, LOCK_TARGETS,
    };
    use crate::domain::TargetState;
    use crate::snapshot::{Entry, Identity};

    fn file(id: u64, s: &str) -> Entry {
        Entry::File { id: Some(Identity(1, id)), bytes: s.as_bytes().to_vec() }
    }
    fn dir(id: u64, items: &[(&str, Entry)]) -> Entry {
        Entry::Dir {
            id: Some(Identity(1, id)),
            entries: items.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
        }
    }

    /// Empty-directory sources carry no token: the judges find their owner by the identity
    /// the harness read from the disk before the release. Real renames on a temporary folder.
    #[cfg(unix)]
    #[test]
    fn empty_dir_sources_are_told_apart_by_their_identity() {
        use crate::exec::scratch::{make_source, source_identity};
        use crate::matrix::SourceKind;
        use crate::snapshot::read;
        let root = tempfile::tempdir().unwrap();
        let (t, s0, s1) = (root.path().join("target"), root.path().join("src-0"), root.path().join("src-1"));
        for s in [&s0, &s1] {
            make_source(s, SourceKind::EmptyDir, "unused").unwrap();
        }
        let ids =
            [source_identity(&s0, SourceKind::EmptyDir).unwrap(), source_identity(&s1, SourceKind::EmptyDir).unwrap()];
        assert!(ids[0].is_some() && ids[0] != ids[1]);
        assert_eq!(source_identity(&s0, SourceKind::File).unwrap(), None, "only directory sources");
        let toks = ["k0", "k1"];
        // contender 0 renames its empty directory onto the absent name: it holds the name
        std::fs::rename(&s0, &t).unwrap();
        let after = read(&t).unwrap();
        assert_eq!(held_by(&after, &toks, &ids), [true, false]);
        assert_eq!(held_by(&after, &toks, &[None, None]), [false, false], "no token to find without identity");
        let trial = |reports: Vec<Report>, held: Vec<bool>| Trial {
            reports,
            held,
            t0_us: vec![Some(0.0), Some(1.0)],
            offset_us: 0,
            held_during_us: vec![None, None],
            unstamped: None,
            placed: Vec::new(),
        };
        // the other refused (a separate check saw the name): one winner, its effect stands
        let one = trial(vec![Report::Success, Report::Error], held_by(&after, &toks, &ids));
        assert_eq!(summarize_race(2, &[one]).verdict, RaceVerdict::Exclusive);
        // judged by tokens alone, the same trial would be a lost update: the judge needs identity
        let blind = trial(vec![Report::Success, Report::Error], held_by(&after, &toks, &[None, None]));
        assert_eq!(summarize_race(2, &[blind]).verdict, RaceVerdict::LostUpdate);
        // rename(2) replaces an empty directory: contender 1's move succeeds too, and the name is
        // its directory now
        std::fs::rename(&s1, &t).unwrap();
        let after = read(&t).unwrap();
        assert_eq!(held_by(&after, &toks, &ids), [false, true]);
        let two = trial(vec![Report::Success, Report::Success], held_by(&after, &toks, &ids));
        assert_eq!(summarize_race(2, &[two]).verdict, RaceVerdict::MultipleWinners);
        // a copy has an identity of its own: its owner is the mark the probe wrote after it
        let copy = root.path().join("copy");
        std::fs::create_dir(&copy).unwrap();
        std::fs::write(copy.join(crate::snapshot::mark_name("k0")), "k0").unwrap();
        assert_eq!(held_by(&read(&copy).unwrap(), &toks, &ids), [true, false]);
    }

    /// A creator against a placer on one name, with real calls: contender 0 makes the
    /// directory (`mkdir`) and contender 1 then renames its prepared directory onto it
    /// (`rename(2)` replaces an empty directory), after which contender 0 writes its mark into
    /// what is now contender 1's directory. Both reported success and both tokens are found at
    /// the name, yet only contender 1's source stands there: the failure is its doing.
    #[cfg(unix)]
    #[test]
    fn the_winner_whose_own_source_stands_over_anothers_entry_is_to_blame() {
        use crate::exec::scratch::{make_source, source_identity};
        use crate::matrix::SourceKind;
        use crate::snapshot::{mark_name, read};
        let root = tempfile::tempdir().unwrap();
        let (t, s1) = (root.path().join("target"), root.path().join("src-1"));
        make_source(&s1, SourceKind::Dir, "k1").unwrap();
        let ids = [None, source_identity(&s1, SourceKind::Dir).unwrap()];
        std::fs::create_dir(&t).unwrap();
        std::fs::rename(&s1, &t).unwrap();
        std::fs::write(t.join(mark_name("k0")), "k0").unwrap();
        let after = read(&t).unwrap();
        let toks = ["k0", "k1"];
        assert_eq!(held_by(&after, &toks, &ids), [true, true], "contender 0's mark landed inside");
        assert_eq!(placed_by(&after, &ids), [false, true]);
        let t = Trial {
            reports: vec![Report::Success, Report::Success],
            held: held_by(&after, &toks, &ids),
            t0_us: vec![Some(0.0), Some(1.0)],
            offset_us: 0,
            held_during_us: vec![None, None],
            unstamped: None,
            placed: placed_by(&after, &ids),
        };
        let s = summarize_race(2, std::slice::from_ref(&t));
        assert_eq!((s.verdict, s.stats.lost_update_trials), (RaceVerdict::MultipleWinners, 0));
        assert_eq!(s.stats.failures_by_contender, [0, 1]);
        // without the identities, the tokens cannot tell: both winners count
        let blind = Trial { placed: Vec::new(), ..t };
        assert_eq!(summarize_race(2, &[blind]).stats.failures_by_contender, [1, 1]);
    }

    /// A second comer given an empty directory: what its call left is judged by that
    /// directory's identity.
    #[cfg(unix)]
    #[test]
    fn a_second_comers_empty_dir_source_is_judged_by_identity() {
        use crate::domain::TargetState as S;
        use crate::exec::scratch::{set_up_cell, source_identity, source_name, TARGET_NAME};
        use crate::matrix::SourceKind;
        use crate::snapshot::read;
        let root = tempfile::tempdir().unwrap();
        let mut n = 0;
        let mut judge = |st: S, op: &dyn Fn(&std::path::Path, &std::path::Path) -> bool| {
            n += 1;
            let dir = root.path().join(format!("c{n}"));
            std::fs::create_dir(&dir).unwrap();
            set_up_cell(&dir, st, "A", "B", SourceKind::EmptyDir).unwrap();
            let (t, src) = (dir.join(TARGET_NAME), dir.join(source_name(st, 1)));
            let id = source_identity(&src, SourceKind::EmptyDir).unwrap();
            let before = read(&t).unwrap();
            let ok = op(&t, &src);
            let after = read(&t).unwrap();
            let r = if ok { Report::Success } else { Report::Error };
            (
                classify_second_source(&before, r, &after, "B", false, id),
                classify_second(&before, r, &after, "B", false),
            )
        };
        let rename = |t: &std::path::Path, s: &std::path::Path| std::fs::rename(s, t).is_ok();
        let into = |t: &std::path::Path, s: &std::path::Path| std::fs::rename(s, t.join("src-1")).is_ok();
        assert_eq!(judge(S::Absent, &rename), (Outcome::Acquired, Outcome::Damaged));
        assert_eq!(
            judge(S::EmptyDir, &rename),
            (Outcome::Replaced, Outcome::Damaged),
            "rename(2) replaces an empty dir"
        );
        assert_eq!(judge(S::Dir, &rename).0, Outcome::Refused, "ENOTEMPTY");
        assert_eq!(judge(S::File, &rename).0, Outcome::Refused, "ENOTDIR");
        assert_eq!(judge(S::EmptyDir, &into), (Outcome::Nested, Outcome::Damaged), "moved into the directory");
    }

    /// A copied tree merged into a directory that was there: its mark and its folders went in.
    #[test]
    fn a_tree_copied_into_a_directory_is_nested() {
        let before = dir(1, &[("owner.A", file(2, "A"))]);
        let sub = |data: &str| ("sub", dir(4, &[("deeper", dir(5, &[("data", file(6, data))]))]));
        let merged = dir(1, &[("owner.A", file(2, "A")), ("owner.B", file(3, "B")), sub("B")]);
        assert_eq!(classify_second(&before, Report::Success, &merged, "B", false), Outcome::Nested);
        let foreign = dir(1, &[("owner.A", file(2, "A")), ("owner.B", file(3, "B")), sub("C")]);
        assert_eq!(classify_second(&before, Report::Success, &foreign, "B", false), Outcome::Damaged);
    }

    /// The link and self states, classified from what real file-system operations leave
    /// behind (the operations a call makes: a write that follows the link, a rename over it,
    /// a copy that truncates its own source, a no-op), never from an expected result.
    #[cfg(unix)]
    #[test]
    fn links_and_selves_are_classified_from_what_the_disk_shows() {
        use crate::domain::TargetState as S;
        use crate::exec::scratch::{set_up_cell, source_name, TARGET_NAME};
        use crate::matrix::SourceKind;
        use crate::snapshot::read;
        let root = tempfile::tempdir().unwrap();
        let mut n = 0;
        // sets up `st`, runs `op(dir, target, source)`, classifies its report `ok`
        let mut judge =
            |st: S, ok: bool, own_mark: bool, op: &dyn Fn(&std::path::Path, &std::path::Path, &std::path::Path)| {
                n += 1;
                let dir = root.path().join(format!("c{n}"));
                std::fs::create_dir(&dir).unwrap();
                set_up_cell(&dir, st, "A", "B", SourceKind::File).unwrap();
                let (t, src) = (dir.join(TARGET_NAME), dir.join(source_name(st, 1)));
                let before = read(&t).unwrap();
                op(&dir, &t, &src);
                let after = read(&t).unwrap();
                classify_second(&before, if ok { Report::Success } else { Report::Error }, &after, "B", own_mark)
            };
        let write_b = |_: &std::path::Path, t: &std::path::Path, _: &std::path::Path| std::fs::write(t, "B").unwrap();
        let append_b = |_: &std::path::Path, t: &std::path::Path, _: &std::path::Path| {
            use std::io::Write;
            std::fs::OpenOptions::new().append(true).create(true).open(t).unwrap().write_all(b"B").unwrap()
        };
        let rename = |_: &std::path::Path, t: &std::path::Path, s: &std::path::Path| std::fs::rename(s, t).unwrap();
        let nothing = |_: &std::path::Path, _: &std::path::Path, _: &std::path::Path| {};
        // a copy onto itself that opens the destination with O_TRUNC first: 0 bytes (issue 11)
        let truncate = |_: &std::path::Path, t: &std::path::Path, _: &std::path::Path| {
            std::fs::OpenOptions::new().write(true).truncate(true).open(t).unwrap();
        };
        let mkdir_p_with_mark = |_: &std::path::Path, t: &std::path::Path, _: &std::path::Path| {
            std::fs::create_dir_all(t).unwrap();
            std::fs::write(t.join(crate::snapshot::mark_name("B")), "B").unwrap();
        };
        // writes through links
        assert_eq!(judge(S::SymlinkToFile, true, false, &write_b), Outcome::Followed);
        assert_eq!(judge(S::DanglingSymlink, true, false, &write_b), Outcome::Followed, "creates the link's target");
        assert_eq!(judge(S::SymlinkToFile, true, false, &append_b), Outcome::Damaged, "A then B: merged");
        // a link replaced by the second comer's file
        for st in [S::SymlinkToFile, S::SymlinkToDir, S::DanglingSymlink] {
            let rename_file = |d: &std::path::Path, t: &std::path::Path, _: &std::path::Path| {
                if st == S::SymlinkToDir {
                    std::fs::remove_file(t).unwrap(); // rename(2) replaces the link itself
                }
                std::fs::rename(d.join("src-1"), t).unwrap()
            };
            assert_eq!(judge(st, true, false, &rename_file), Outcome::Replaced, "{st:?}");
            assert_eq!(judge(st, false, false, &nothing), Outcome::Refused, "{st:?}");
        }
        // mkdir -p through a link to a directory: only the probe's own mark is new
        assert_eq!(judge(S::SymlinkToDir, true, true, &mkdir_p_with_mark), Outcome::Kept);
        assert_eq!(judge(S::SymlinkToDir, true, false, &mkdir_p_with_mark), Outcome::Followed, "B's item inside");
        // the target is the source
        for st in [S::SelfSame, S::SelfHardlink, S::SelfSymlink] {
            assert_eq!(judge(st, true, false, &nothing), Outcome::Kept, "{st:?}: a no-op success");
            assert_eq!(judge(st, false, false, &nothing), Outcome::Refused, "{st:?}");
            assert_eq!(judge(st, true, false, &truncate), Outcome::Damaged, "{st:?}: emptied");
        }
        // rename(2) between two links of one file does nothing and succeeds (POSIX rename)
        assert_eq!(judge(S::SelfHardlink, true, false, &rename), Outcome::Kept);
        // renaming the source over a link to it: the file itself is now at the name
        assert_eq!(judge(S::SelfSymlink, true, false, &rename), Outcome::Replaced);
    }

    #[test]
    fn control_outcomes() {
        let a = Entry::Absent;
        assert_eq!(classify_second(&a, Report::Success, &file(2, "B"), "B", false), Outcome::Acquired);
        assert_eq!(classify_second(&a, Report::Error, &a, "B", false), Outcome::Failed);
        assert_eq!(classify_second(&a, Report::Success, &a, "B", false), Outcome::Damaged);
        assert_eq!(classify_second(&a, Report::Error, &file(2, ""), "B", false), Outcome::Damaged);
    }

    #[test]
    fn file_target_outcomes() {
        let before = file(1, "A");
        assert_eq!(classify_second(&before, Report::Error, &before, "B", false), Outcome::Refused);
        assert_eq!(classify_second(&before, Report::Success, &file(1, "B"), "B", false), Outcome::Replaced);
        assert_eq!(classify_second(&before, Report::Success, &file(9, "B"), "B", false), Outcome::Replaced);
        assert_eq!(classify_second(&before, Report::Success, &before, "B", false), Outcome::Kept);
        assert_eq!(classify_second(&before, Report::Success, &file(1, "AB"), "B", false), Outcome::Damaged);
        assert_eq!(classify_second(&before, Report::Error, &file(1, ""), "B", false), Outcome::Damaged);
    }

    #[test]
    fn dir_target_outcomes() {
        let before = dir(5, &[("owner.A", file(6, "A"))]);
        // mkdir -p: success, only the probe's own mark was added
        let with_mark = dir(5, &[("owner.A", file(6, "A")), ("owner.B", file(7, "B"))]);
        assert_eq!(classify_second(&before, Report::Success, &with_mark, "B", true), Outcome::Kept);
        // the same picture without a mark request: the second comer's item went inside
        assert_eq!(classify_second(&before, Report::Success, &with_mark, "B", false), Outcome::Nested);
        // move into the directory
        let nested = dir(5, &[("owner.A", file(6, "A")), ("src-1", file(8, "B"))]);
        assert_eq!(classify_second(&before, Report::Success, &nested, "B", false), Outcome::Nested);
        // an empty dir replaced by a renamed dir
        let empty = dir(5, &[]);
        let replaced = dir(9, &[("owner.B", file(10, "B"))]);
        assert_eq!(classify_second(&empty, Report::Success, &replaced, "B", false), Outcome::Replaced);
        // an empty dir kept by mkdir -p
        let kept = dir(5, &[("owner.B", file(10, "B"))]);
        assert_eq!(classify_second(&empty, Report::Success, &kept, "B", true), Outcome::Kept);
        // directory emptied in place
        assert_eq!(classify_second(&before, Report::Success, &empty, "B", false), Outcome::Damaged);
    }

    #[test]
    fn faults_pass_through() {
        let a = file(1, "A");
        assert_eq!(classify_second(&a, Report::Timeout, &a, "B", false), Outcome::Timeout);
        assert_eq!(classify_second(&a, Report::Crashed, &a, "B", false), Outcome::Crashed);
        assert_eq!(classify_second(&a, Report::Prompted, &a, "B", false), Outcome::Prompted);
        assert_eq!(classify_second(&a, Report::Unsupported, &a, "B", false), Outcome::Unsupported);
    }

    fn trial(reports: &[Report], held: &[bool], t0: &[f64]) -> Trial {
        Trial {
            reports: reports.to_vec(),
            held: held.to_vec(),
            t0_us: t0.iter().map(|&x| Some(x)).collect(),
            offset_us: 0,
            held_during_us: vec![None; reports.len()],
            unstamped: None,
            placed: Vec::new(),
        }
    }
    use Report::{Error as E, Success as S};

    #[test]
    fn race_verdicts() {
        let ex = vec![trial(&[S, E, E], &[true, false, false], &[0.0, 5.0, 10.0]); 4];
        let s = summarize_race(3, &ex);
        assert_eq!(s.verdict, RaceVerdict::Exclusive);
        assert_eq!(s.stats.winners.get(&1), Some(&4));
        assert_eq!(s.stats.barrier_spread_us.unwrap().p50, 10.0);
        assert_eq!(s.stats.wins_by_contender, vec![4, 0, 0]);

        let mut mw = ex.clone();
        mw.push(trial(&[S, S, E], &[false, true, false], &[0.0, 1.0, 2.0]));
        let s = summarize_race(3, &mw);
        assert_eq!(s.verdict, RaceVerdict::MultipleWinners);
        assert_eq!((s.stats.multi_winner_trials, s.stats.max_winners, s.stats.lost_update_trials), (1, 2, 1));

        let lost = vec![trial(&[S, E, E], &[false, true, false], &[0.0, 1.0, 2.0])];
        assert_eq!(summarize_race(3, &lost).verdict, RaceVerdict::LostUpdate);
        let none = vec![trial(&[E, E, E], &[false, false, false], &[0.0, 1.0, 2.0])];
        assert_eq!(summarize_race(3, &none).verdict, RaceVerdict::NoWinner);
        let fault = vec![trial(&[S, Report::Timeout, E], &[true, false, false], &[0.0, 1.0, 2.0])];
        assert_eq!(summarize_race(3, &fault).verdict, RaceVerdict::Inconclusive);
        let prompted = vec![trial(&[S, S, Report::Prompted], &[false, true, false], &[0.0, 1.0, 2.0])];
        assert_eq!(summarize_race(3, &prompted).verdict, RaceVerdict::Inconclusive);
        assert_eq!(summarize_race(3, &[]).verdict, RaceVerdict::Inconclusive);
    }

    /// Whose doing each failed trial was: the winner whose token alone stands over another
    /// winner's; every winner where none or both stand; a winner whose effect was lost and a
    /// contender whose token stands without a success; everyone where nobody won. No failure,
    /// no counts.
    #[test]
    fn failed_trials_are_counted_against_the_contenders_whose_doing_they_were() {
        let blamed = |t: Trial| summarize_race(3, &[t]).stats.failures_by_contender;
        assert_eq!(blamed(trial(&[S, S, E], &[false, true, false], &[0.0; 3])), [0, 1, 0]);
        assert_eq!(blamed(trial(&[S, S, E], &[false, false, false], &[0.0; 3])), [1, 1, 0]);
        assert_eq!(blamed(trial(&[S, S, E], &[true, true, false], &[0.0; 3])), [1, 1, 0]);
        assert_eq!(blamed(trial(&[S, E, E], &[false, true, false], &[0.0; 3])), [1, 1, 0]);
        assert_eq!(blamed(trial(&[E, E, E], &[false; 3], &[0.0; 3])), [1, 1, 1]);
        // the source that stands decides over the tokens found
        let placed = Trial { placed: vec![false, false, true], ..trial(&[S, E, S], &[true, false, true], &[0.0; 3]) };
        assert_eq!(blamed(placed), [0, 0, 1]);
        let clean = vec![trial(&[S, E, E], &[true, false, false], &[0.0; 3]); 3];
        assert!(summarize_race(3, &clean).stats.failures_by_contender.is_empty());
        // a faulty trial with no winner is a fault, not a failure
        assert!(blamed(trial(&[Report::Timeout, E, E], &[false; 3], &[0.0; 3])).is_empty());
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let mut v: Vec<f64> = (1..=100).map(f64::from).collect();
        let s = spread(&mut v).unwrap();
        assert_eq!((s.p50, s.p99, s.max), (50.0, 99.0, 100.0));
        assert!(spread(&mut []).is_none());
    }

    fn ev(verdict: RaceVerdict, clean: usize, control: Option<bool>) -> Option<RaceEvidence> {
        Some(RaceEvidence {
            verdict,
            clean_trials: clean,
            upper95: crate::stats::upper95(0, clean),
            control_worked: control,
            amplified_broke: false,
        })
    }

    #[test]
    fn handle_holders_one_after_the_other_are_not_two_winners() {
        use Report::{Error as E, Success as S};
        let held = |spans: [Option<(f64, f64)>; 3], held: [bool; 3]| Trial {
            reports: vec![S, S, E],
            held: held.to_vec(),
            t0_us: vec![Some(0.0), Some(10.0), Some(20.0)],
            offset_us: 0,
            held_during_us: spans.to_vec(),
            unstamped: None,
            placed: Vec::new(),
        };
        // B took the handle 60 ms after A, A held it 50 ms: one after the other; B's token stands
        let seq = held([Some((100.0, 50_100.0)), Some((60_000.0, 110_000.0)), None], [false, true, false]);
        assert_eq!(seq.concurrent_winners(), 1);
        let s = summarize_race(3, &vec![seq.clone(); 5]);
        assert_eq!(s.verdict, RaceVerdict::Exclusive, "{s:?}");
        assert_eq!(s.stats.winners.get(&1), Some(&5));
        // ... but A's token standing after B took the handle is a lost update
        let lost = held([Some((100.0, 50_100.0)), Some((60_000.0, 110_000.0)), None], [true, false, false]);
        assert_eq!(summarize_race(3, &[lost]).verdict, RaceVerdict::LostUpdate);
        // overlapping holds are two winners at once
        let both = held([Some((100.0, 50_100.0)), Some((20_000.0, 70_000.0)), None], [false, true, false]);
        assert_eq!(both.concurrent_winners(), 2);
        assert_eq!(summarize_race(3, &[both]).verdict, RaceVerdict::MultipleWinners);
        // without a hold interval every success counts
        let unknown = held([Some((100.0, 50_100.0)), None, None], [false, true, false]);
        assert_eq!(unknown.concurrent_winners(), 2);
    }

    #[test]
    fn safe_as_lock_needs_everything() {
        let all = |o: Outcome| -> Vec<(TargetState, Outcome, Option<Outcome>)> {
            LOCK_TARGETS
                .iter()
                .map(|&t| {
                    let x = if t == TargetState::Absent { Outcome::Acquired } else { o };
                    (t, x, Some(x))
                })
                .collect()
        };
        let good = all(Outcome::Refused);
        let ex = |n| ev(RaceVerdict::Exclusive, n, Some(true));
        assert_eq!(safe_as_lock(&good, ex(200)), Some(true));
        assert_eq!(safe_as_lock(&good, ex(100)), Some(true), "0/100 bounds the rate at 2.95%");
        assert_eq!(safe_as_lock(&good, ex(99)), None, "too few trials: bound above 3%");
        assert_eq!(safe_as_lock(&good, ev(RaceVerdict::Exclusive, 200, Some(false))), None, "weak race");
        assert_eq!(safe_as_lock(&good, ev(RaceVerdict::Exclusive, 200, None)), None, "no control");
        assert_eq!(safe_as_lock(&good, ev(RaceVerdict::MultipleWinners, 200, Some(true))), Some(false));
        assert_eq!(safe_as_lock(&good, ev(RaceVerdict::MultipleWinners, 200, Some(false))), Some(false));
        assert_eq!(safe_as_lock(&good, None), None);
        assert_eq!(safe_as_lock(&good[..2], ex(200)), None, "targets missing");
        assert_eq!(safe_as_lock(&all(Outcome::Replaced), ex(200)), Some(false));
        let mut rel = good.clone();
        rel[3].2 = Some(Outcome::Kept);
        assert_eq!(safe_as_lock(&rel, ex(200)), Some(false), "relative disagrees");
        let mut faulty = good.clone();
        faulty[1].1 = Outcome::Timeout;
        assert_eq!(safe_as_lock(&faulty, ex(200)), None);
        let no_relative: Vec<_> = good.iter().map(|(t, a, _)| (*t, *a, None)).collect();
        assert_eq!(safe_as_lock(&no_relative, ex(200)), None, "--no-relative: relative paths not measured");
    }

    #[test]
    fn a_failure_in_either_mode_decides() {
        use RaceVerdict::{Exclusive as X, Inconclusive as I, MultipleWinners as M};
        assert_eq!(decide(Some(X), Some(M)), (M, RaceMode::Amplified));
        assert_eq!(decide(Some(M), Some(X)), (M, RaceMode::Natural));
        assert_eq!(decide(Some(X), Some(X)), (X, RaceMode::Amplified));
        assert_eq!(decide(Some(X), Some(I)), (I, RaceMode::Amplified), "a broken amplified race is not a pass");
        assert_eq!(decide(Some(X), None), (X, RaceMode::Natural));
        assert_eq!(decide(None, None).0, I);
    }

    #[test]
    fn a_weak_control_makes_exclusive_inconclusive() {
        let weak = Detection::judge("c", Some((50, 100, 0)), Some((84, 100, 0)));
        assert!(!weak.worked, "84/100 is significantly below 90%");
        assert_eq!(weak.mode, RaceMode::Amplified);
        let (v, why) = apply_control(RaceVerdict::Exclusive, Some(&weak));
        assert_eq!(v, RaceVerdict::Inconclusive);
        assert_eq!(why.unwrap(), "weak race: control caught 84/100 (amplified)");
        assert_eq!(apply_control(RaceVerdict::MultipleWinners, Some(&weak)).0, RaceVerdict::MultipleWinners);
        assert!(Detection::judge("c", Some((0, 100, 0)), Some((86, 100, 0))).worked, "86/100: noise around 90%");
        assert!(Detection::judge("c", None, Some((17, 20, 0))).worked, "17/20 is not significantly below 90%");
        assert!(!Detection::judge("c", None, Some((15, 20, 0))).worked);
        assert!(Detection::judge("c", Some((14, 100, 150)), None).worked, "natural: 14/100 vs 20%, p = 0.08");
        assert!(!Detection::judge("c", Some((12, 100, 0)), None).worked);
        assert!(!Detection::judge("c", None, None).worked);
        let lucky = Detection::judge("c", None, Some((1, 1, 0)));
        assert!(!lucky.worked, "1/1 is luck, not power");
        assert!(lucky.describe().contains("fewer than 20 trials"), "{}", lucky.describe());
        let ok = Detection::judge("c", None, Some((100, 100, 500)));
        assert_eq!(ok.describe(), "control caught 100/100 (amplified, +500 µs)");
        assert_eq!(apply_control(RaceVerdict::Exclusive, Some(&ok)), (RaceVerdict::Exclusive, None));
    }

    #[test]
    fn race_stats_carry_their_bounds() {
        let ex = vec![trial(&[S, E, E], &[true, false, false], &[0.0, 5.0, 10.0]); 200];
        let s = summarize_race(3, &ex).stats;
        assert_eq!(s.clean_trials, 200);
        assert!((s.multi_winner_upper95 - 0.014_866).abs() < 1e-5);
        assert!(s.multi_winner_ci95.is_none());
        let mut mw = ex.clone();
        mw.truncate(95);
        mw.extend(vec![trial(&[S, S, E], &[false, true, false], &[0.0, 1.0, 2.0]); 5]);
        let s = summarize_race(3, &mw).stats;
        let [lo, hi] = s.multi_winner_ci95.unwrap();
        assert!((lo - 0.016_431).abs() < 1e-5 && (hi - 0.112_835).abs() < 1e-5, "{lo} {hi}");
    }

    #[test]
    fn orderings_are_summarised_apart_and_spreads_net_of_offsets() {
        let mut lockstep = vec![trial(&[S, E, E], &[true, false, false], &[0.0, 5.0, 10.0]); 4];
        let mut staggered = trial(&[S, S, E], &[false, true, false], &[0.0, 1005.0, 2010.0]);
        staggered.offset_us = 1000;
        assert_eq!(staggered.spread_us(), Some(10.0), "the planned 1000 µs steps are not spread");
        lockstep.push(staggered.clone());
        lockstep.push(staggered);
        let o = summarize_orderings(3, &lockstep);
        assert_eq!(o.iter().map(|x| x.offset_us).collect::<Vec<_>>(), vec![0, 1000]);
        assert_eq!(o[0].summary.verdict, RaceVerdict::Exclusive);
        assert_eq!(o[1].summary.verdict, RaceVerdict::MultipleWinners);
        assert_eq!(strongest_ordering(RaceVerdict::MultipleWinners, &o), Some(1));
        assert_eq!(strongest_ordering(RaceVerdict::Exclusive, &o), None);
        // the whole run: one failing ordering decides, and every trial counts towards the bound
        let all = summarize_race(3, &lockstep);
        assert_eq!(all.verdict, RaceVerdict::MultipleWinners);
        assert_eq!(all.stats.barrier_spread_us.unwrap().max, 10.0);
    }
}

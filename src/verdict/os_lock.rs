//! The OS-lock judge: a holder kept files locked by a runtime's OS lock while an intruder of
//! the same runtime and the harness itself went at them without asking → what got through, per
//! intrusion (`docs/HANDOFF.md`, "os-lock").
//!
//! Each intrusion has its own file, so one trial measures them all. The harness decides from
//! the files afterwards, never from the intruder's word: a write, an append or a mapped write
//! got through when the file no longer holds what the harness put there; a rename or a delete
//! when the name is gone; a second lock of the holder's kind when the intruder's marker (made
//! only while it held that lock) holds its token. The harness's own `flock`/`fcntl` attempts
//! are its own observations. Counters, each summed over the trials:
//! - `trials`: trials judged;
//! - `locked`: trials in which the holder had locked every file when the harness looked (its
//!   `locked` marker was there); every `*_through` counter counts only these; `not_locked` the
//!   others;
//! - one `<intrusion>_through` counter per [`Intrusion`];
//! - `mmap_tried`: locked trials in which the intruder could map the file at all (a runtime
//!   without memory-mapped files cannot, and `mmap_through` then says nothing);
//! - `flock_seen`, `posix_seen`, `ofd_seen`: locked trials in which `/proc/locks` listed a lock
//!   of that kind on one of the holder's files (`proc(5)`, "/proc/locks": `FLOCK`, `POSIX`,
//!   `OFDLCK`) — which OS mechanism the runtime's call takes;
//! - `worker_faults`: holders and intruders that crashed, timed out or reported no counts.

use super::counter;
use std::collections::BTreeMap;

/// One way to go at a locked file without asking, each on its own file of the trial.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Intrusion {
    /// The intruder writes the file the runtime's usual way (truncate, write).
    Write,
    /// The intruder appends to it.
    Append,
    /// The intruder renames it aside.
    Rename,
    /// The intruder deletes it.
    Delete,
    /// The intruder maps it into memory and writes through the mapping.
    Mmap,
    /// The intruder takes the holder's own kind of lock on it (a second holder).
    SecondLock,
    /// The harness writes it (`open(O_WRONLY|O_TRUNC)`, `write`).
    ForeignWrite,
    /// The harness appends to it (`open(O_APPEND)`).
    ForeignAppend,
    /// The harness renames it aside (`rename(2)`).
    ForeignRename,
    /// The harness deletes it (`unlink(2)`).
    ForeignDelete,
    /// The harness takes `flock(LOCK_EX|LOCK_NB)` on it.
    ForeignFlock,
    /// The harness takes `fcntl(F_SETLK)` with a write lock on all of it.
    ForeignFcntl,
}

impl Intrusion {
    /// Every intrusion, in the reports' order: the intruder's, then the harness's.
    pub const ALL: [Intrusion; 12] = [
        Intrusion::Write,
        Intrusion::Append,
        Intrusion::Rename,
        Intrusion::Delete,
        Intrusion::Mmap,
        Intrusion::SecondLock,
        Intrusion::ForeignWrite,
        Intrusion::ForeignAppend,
        Intrusion::ForeignRename,
        Intrusion::ForeignDelete,
        Intrusion::ForeignFlock,
        Intrusion::ForeignFcntl,
    ];

    /// The intrusion's file in a trial's folder, and its key in the probes' `params.files`.
    pub const fn file(self) -> &'static str {
        match self {
            Intrusion::Write => "write",
            Intrusion::Append => "append",
            Intrusion::Rename => "rename",
            Intrusion::Delete => "delete",
            Intrusion::Mmap => "mmap",
            Intrusion::SecondLock => "relock",
            Intrusion::ForeignWrite => "foreign-write",
            Intrusion::ForeignAppend => "foreign-append",
            Intrusion::ForeignRename => "foreign-rename",
            Intrusion::ForeignDelete => "foreign-delete",
            Intrusion::ForeignFlock => "foreign-flock",
            Intrusion::ForeignFcntl => "foreign-fcntl",
        }
    }

    /// Its counter: locked trials in which it got through.
    pub const fn counter(self) -> &'static str {
        match self {
            Intrusion::Write => "write_through",
            Intrusion::Append => "append_through",
            Intrusion::Rename => "rename_through",
            Intrusion::Delete => "delete_through",
            Intrusion::Mmap => "mmap_through",
            Intrusion::SecondLock => counter::SECOND_LOCK_THROUGH,
            Intrusion::ForeignWrite => "foreign_write_through",
            Intrusion::ForeignAppend => "foreign_append_through",
            Intrusion::ForeignRename => "foreign_rename_through",
            Intrusion::ForeignDelete => "foreign_delete_through",
            Intrusion::ForeignFlock => "foreign_flock_through",
            Intrusion::ForeignFcntl => "foreign_fcntl_through",
        }
    }

    /// Its name in the tables (`write`, `2nd lock`, `flock`…).
    pub const fn label(self) -> &'static str {
        match self {
            Intrusion::Write | Intrusion::ForeignWrite => "write",
            Intrusion::Append | Intrusion::ForeignAppend => "append",
            Intrusion::Rename | Intrusion::ForeignRename => "rename",
            Intrusion::Delete | Intrusion::ForeignDelete => "delete",
            Intrusion::Mmap => "mmap",
            Intrusion::SecondLock => "2nd lock",
            Intrusion::ForeignFlock => "flock",
            Intrusion::ForeignFcntl => "fcntl",
        }
    }

    /// True for the harness's own intrusions (a process of another kind), false for the
    /// intruder's (the holder's runtime).
    pub const fn foreign(self) -> bool {
        matches!(
            self,
            Intrusion::ForeignWrite
                | Intrusion::ForeignAppend
                | Intrusion::ForeignRename
                | Intrusion::ForeignDelete
                | Intrusion::ForeignFlock
                | Intrusion::ForeignFcntl
        )
    }
}

/// A kind of lock `/proc/locks` lists (`proc(5)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LockSeen {
    /// `FLOCK`: a `flock(2)` lock, held by an open file description.
    Flock,
    /// `POSIX`: an `fcntl(2)` record lock, held by a process.
    Posix,
    /// `OFDLCK`: an open-file-description record lock (`F_OFD_SETLK`).
    Ofd,
}

impl LockSeen {
    /// Every kind, in the reports' order.
    pub const ALL: [LockSeen; 3] = [LockSeen::Flock, LockSeen::Posix, LockSeen::Ofd];

    /// The kind spelled as `/proc/locks` spells it, if it is one of these.
    pub fn parse(s: &str) -> Option<LockSeen> {
        match s {
            "FLOCK" => Some(LockSeen::Flock),
            "POSIX" => Some(LockSeen::Posix),
            "OFDLCK" => Some(LockSeen::Ofd),
            _ => None,
        }
    }

    /// Its counter: locked trials in which it was seen on a held file.
    pub const fn counter(self) -> &'static str {
        match self {
            LockSeen::Flock => "flock_seen",
            LockSeen::Posix => "posix_seen",
            LockSeen::Ofd => "ofd_seen",
        }
    }

    /// Its name in the tables.
    pub const fn label(self) -> &'static str {
        match self {
            LockSeen::Flock => "flock",
            LockSeen::Posix => "fcntl",
            LockSeen::Ofd => "OFD",
        }
    }
}

/// A file as `/proc/locks` names it: its device's major and minor numbers and its inode number.
pub type FileId = (u64, u64, u64);

/// The kinds of lock `/proc/locks` (its text, `proc(5)`) lists as held (not waiting: the lines
/// marked `->` are blocked requests) on one of `files`.
///
/// A line reads `1: FLOCK  ADVISORY  WRITE 4711 00:2a:1234567 0 EOF`; the sixth field is
/// `major:minor:inode` (the device numbers in hex, the inode in decimal). A line that does not
/// read so is skipped.
pub fn locks_on(proc_locks: &str, files: &[FileId]) -> Vec<LockSeen> {
    let mut seen = Vec::new();
    for line in proc_locks.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.get(1) == Some(&"->") {
            continue;
        }
        let (Some(kind), Some(dev)) = (fields.get(1).and_then(|k| LockSeen::parse(k)), fields.get(5)) else {
            continue;
        };
        let id = match dev.split(':').collect::<Vec<_>>()[..] {
            [major, minor, inode] => u64::from_str_radix(major, 16)
                .ok()
                .zip(u64::from_str_radix(minor, 16).ok())
                .zip(inode.parse::<u64>().ok())
                .map(|((a, b), c)| (a, b, c)),
            _ => None,
        };
        if id.is_some_and(|i| files.contains(&i)) && !seen.contains(&kind) {
            seen.push(kind);
        }
    }
    seen.sort();
    seen
}

/// What the harness observed of one OS-lock trial.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OsLockTrial {
    /// The holder's `locked` marker was there when the harness went at its files.
    pub locked: bool,
    /// The intrusions that got through (each once).
    pub through: Vec<Intrusion>,
    /// The intruder could map its file at all.
    pub mmap_tried: bool,
    /// The kinds of lock `/proc/locks` listed on the holder's files.
    pub locks_seen: Vec<LockSeen>,
    /// Per contender (holder, intruder): `true` when it crashed, timed out or reported no
    /// counts.
    pub faults: Vec<bool>,
}

/// The counters of an OS-lock cell over `trials` (see the module documentation).
pub fn judge_os_lock(trials: &[OsLockTrial]) -> BTreeMap<String, u64> {
    let mut names =
        vec![counter::TRIALS, counter::LOCKED, counter::NOT_LOCKED, counter::MMAP_TRIED, counter::WORKER_FAULTS];
    names.extend(Intrusion::ALL.map(Intrusion::counter));
    names.extend(LockSeen::ALL.map(LockSeen::counter));
    let mut c = super::zeroed(&names);
    let mut add = |k: &str, n: u64| *c.get_mut(k).expect("every counter is listed") += n;
    for t in trials {
        add(counter::TRIALS, 1);
        add(counter::WORKER_FAULTS, t.faults.iter().filter(|f| **f).count() as u64);
        if !t.locked {
            add(counter::NOT_LOCKED, 1);
            continue;
        }
        add(counter::LOCKED, 1);
        add(counter::MMAP_TRIED, u64::from(t.mmap_tried));
        for i in Intrusion::ALL {
            add(i.counter(), u64::from(t.through.contains(&i)));
        }
        for k in LockSeen::ALL {
            add(k.counter(), u64::from(t.locks_seen.contains(&k)));
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::{judge_os_lock, locks_on, Intrusion, LockSeen, OsLockTrial};

    fn locked(through: &[Intrusion]) -> OsLockTrial {
        OsLockTrial { locked: true, through: through.to_vec(), faults: vec![false, false], ..Default::default() }
    }

    #[test]
    fn what_got_through_is_counted_per_intrusion_over_the_locked_trials() {
        let c = judge_os_lock(&[
            locked(&[Intrusion::Write, Intrusion::ForeignDelete]),
            locked(&[Intrusion::Write]),
            OsLockTrial { through: vec![Intrusion::Write], faults: vec![true, false], ..Default::default() },
        ]);
        assert_eq!((c["trials"], c["locked"], c["write_through"], c["foreign_delete_through"]), (3, 2, 2, 1));
        assert_eq!((c["second_lock_through"], c["worker_faults"]), (0, 1));
    }

    #[test]
    fn every_intrusion_and_lock_kind_has_a_counter_of_its_own() {
        let c = judge_os_lock(&[]);
        let mut names: Vec<&str> = Intrusion::ALL.iter().map(|i| i.counter()).collect();
        names.extend(LockSeen::ALL.map(LockSeen::counter));
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Intrusion::ALL.len() + LockSeen::ALL.len());
        assert!(names.iter().all(|n| c.get(*n) == Some(&0)), "{c:?}");
        let files: std::collections::BTreeSet<&str> = Intrusion::ALL.iter().map(|i| i.file()).collect();
        assert_eq!(files.len(), Intrusion::ALL.len(), "each intrusion has a file of its own");
    }

    #[test]
    fn the_lock_kinds_of_the_held_files_are_read_from_proc_locks() {
        let text = "1: FLOCK  ADVISORY  WRITE 4711 00:2a:1234567 0 EOF\n\
                    1: -> FLOCK  ADVISORY  WRITE 4712 00:2a:1234567 0 EOF\n\
                    2: POSIX  ADVISORY  WRITE 4711 fd:01:99 0 EOF\n\
                    3: OFDLCK ADVISORY  READ  -1 00:2a:1234568 0 EOF\n\
                    garbage\n";
        assert_eq!(locks_on(text, &[(0, 0x2a, 1234567)]), vec![LockSeen::Flock]);
        let all = [(0, 0x2a, 1234567), (0xfd, 1, 99), (0, 0x2a, 1234568)];
        assert_eq!(locks_on(text, &all), vec![LockSeen::Flock, LockSeen::Posix, LockSeen::Ofd]);
        assert_eq!(locks_on(text, &[(0, 0x2a, 5)]), vec![]);
        assert_eq!(locks_on(text, &[(0, 0x2b, 1234567)]), vec![], "the same inode on another device");
        let c = judge_os_lock(&[OsLockTrial { locks_seen: vec![LockSeen::Flock], ..locked(&[]) }]);
        assert_eq!((c["flock_seen"], c["posix_seen"], c["ofd_seen"]), (1, 0, 0));
    }
}

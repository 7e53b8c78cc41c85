//! Against whom a call holds: which rows of a run are raced against each other after each has
//! held against copies of itself (`run --against`, `docs/GLOSSARY.md`, "against").
//!
//! A lock is only as good as the call the *other* party uses: `mkdir` holds against `mkdir`,
//! yet a `rename` of a prepared directory onto the empty directory another party just made
//! replaces it (`man 2 rename`: "oldpath can specify a directory. In this case, newpath must
//! either not exist, or it must specify an empty directory"). So once the rows of a run are
//! measured, the rows that were safe as a lock against themselves are raced in pairs, one
//! contender each, and the answer says against which contenders a call held.
//!
//! Pairs are drawn within a *name kind* — what the call leaves at the name (a file, a
//! directory, a symbolic link) — since parties that share a lock name agree on what it is.
//! Each (runtime, API family, intent, name kind) is represented by its first row in the run's
//! order (the call's plain form comes first in the matrices), so forms of one call do not
//! multiply the pairs. Which pairs run ([`AgainstScope`]):
//!
//! - `cover` (the default run's): every representative is raced at least once, each against a
//!   partner of the other class where the group has one — a *placer* (a call that puts a
//!   source of its own at the name: rename, move, copy, link) against a *creator* (a call that
//!   makes the entry itself: `O_EXCL`, `mkdir`) — from another runtime where there is one;
//! - `all` (`--thorough`): every pair of representatives of a name kind;
//! - `none`: no pair.
//!
//! This module is pure: it picks pairs from [`Candidate`]s; the engine races them
//! (`crate::engine::against::race_pair`: three contenders, the first call, the second, the
//! first again ([`PAIR_SLOTS`]), so that the orderings put the second call both behind and
//! ahead of the first); `crate::verdict::answer::at_fault` reads, from the race's counts,
//! whose doing a failure was.

use serde::{Deserialize, Serialize};

use crate::matrix::{Creates, Intent, SourceKind, Variant};

/// The side each contender slot of a pair's race runs: the first, the second, the first again.
pub const PAIR_SLOTS: [usize; 3] = [0, 1, 0];

/// A pair race's per-contender counts (one per slot of [`PAIR_SLOTS`]: wins, failures) summed
/// per side (`[first, second]`); `None` when `per_slot` is not a pair's.
pub fn per_side(per_slot: &[usize]) -> Option<[usize; 2]> {
    (per_slot.len() == PAIR_SLOTS.len()).then(|| {
        let mut sides = [0; 2];
        for (slot, &n) in per_slot.iter().enumerate() {
            sides[PAIR_SLOTS[slot]] += n;
        }
        sides
    })
}

/// What a call leaves at the name when it takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum NameKind {
    /// A regular file (also a hard link to one).
    File,
    /// A directory.
    Dir,
    /// A symbolic link.
    Symlink,
}

impl NameKind {
    /// `file`, `dir` or `symlink`.
    pub fn as_str(self) -> &'static str {
        match self {
            NameKind::File => "file",
            NameKind::Dir => "dir",
            NameKind::Symlink => "symlink",
        }
    }

    /// The kind a row of `v` leaves at the name, from the matrix: a symbolic link where the
    /// call creates one; the kind of its source where it puts a source at the name (a file,
    /// or a directory for `empty-dir`, `dir` and `tree`); what it `creates` otherwise.
    pub fn of(v: &Variant) -> NameKind {
        match (v.creates, v.source) {
            (Creates::Symlink, _) => NameKind::Symlink,
            (_, SourceKind::File) => NameKind::File,
            (_, SourceKind::EmptyDir | SourceKind::Dir | SourceKind::Tree) => NameKind::Dir,
            (Creates::File, SourceKind::None) => NameKind::File,
            (Creates::Dir, SourceKind::None) => NameKind::Dir,
        }
    }
}

/// Which pairs `run` races (`--against`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AgainstScope {
    /// No pair.
    None,
    /// Every representative at least once, placers against creators first.
    Cover,
    /// Every pair of representatives of a name kind.
    All,
}

impl AgainstScope {
    /// `none`, `cover` or `all`.
    pub fn as_str(self) -> &'static str {
        match self {
            AgainstScope::None => "none",
            AgainstScope::Cover => "cover",
            AgainstScope::All => "all",
        }
    }
}

/// A row that held against copies of itself, as the pairing sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The runtime's label (`node 20.20.2`).
    pub runtime: String,
    /// The variant id.
    pub variant: String,
    /// Its API family.
    pub family: String,
    /// The source kind, when not the variant's own ([`Variant::cell_source`]).
    pub source: Option<SourceKind>,
    /// The job it serves.
    pub intent: Option<Intent>,
    /// What it leaves at the name.
    pub kind: NameKind,
    /// True for a call that puts a source of its own at the name (it takes a source).
    pub placer: bool,
}

impl Candidate {
    /// The candidate for row `v` (a variant with its source kind set) on `runtime`.
    pub fn of(runtime: &str, v: &Variant) -> Candidate {
        Candidate {
            runtime: runtime.to_string(),
            variant: v.id.clone(),
            family: v.family.clone(),
            source: v.cell_source(),
            intent: v.intent,
            kind: NameKind::of(v),
            placer: is_placer(v),
        }
    }
}

/// True for a *placer*: a call that puts a source of its own at the name (rename, move, copy,
/// link: it takes a source); false for a *creator*, which makes the entry itself.
pub fn is_placer(v: &Variant) -> bool {
    v.source != SourceKind::None
}

/// The indices into `cands` of the representatives: the first candidate of each (runtime,
/// family, intent, name kind), in `cands`' order.
pub fn representatives(cands: &[Candidate]) -> Vec<usize> {
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for (i, c) in cands.iter().enumerate() {
        let key = (&c.runtime, &c.family, c.intent, c.kind);
        if !seen.contains(&key) {
            seen.push(key);
            out.push(i);
        }
    }
    out
}

/// The pairs to race under `scope`, as index pairs into `cands` (first < second in `cands`'
/// order), grouped by name kind in the order [`NameKind`] lists them. Only representatives
/// ([`representatives`]) are paired; a name kind with one representative has no pair.
pub fn pairs(cands: &[Candidate], scope: AgainstScope) -> Vec<(usize, usize)> {
    let reps = representatives(cands);
    let mut out = Vec::new();
    for kind in [NameKind::File, NameKind::Dir, NameKind::Symlink] {
        let group: Vec<usize> = reps.iter().copied().filter(|&i| cands[i].kind == kind).collect();
        match scope {
            AgainstScope::None => {}
            AgainstScope::All => {
                for (n, &a) in group.iter().enumerate() {
                    out.extend(group[n + 1..].iter().map(|&b| (a, b)));
                }
            }
            AgainstScope::Cover => out.extend(cover(cands, &group)),
        }
    }
    out
}

/// Pairs that race every member of `group` at least once: each member not yet raced, in order,
/// gets the partner it is most worth racing against — of the other class (placer against
/// creator), from another runtime, not yet raced, earliest — in that order of preference.
fn cover(cands: &[Candidate], group: &[usize]) -> Vec<(usize, usize)> {
    let mut raced = vec![false; cands.len()];
    let mut out: Vec<(usize, usize)> = Vec::new();
    for &a in group {
        if raced[a] {
            continue;
        }
        let worth = |b: usize| {
            let (x, y) = (&cands[a], &cands[b]);
            // lower is better: other class, other runtime, not yet raced
            (x.placer == y.placer, x.runtime == y.runtime, raced[b])
        };
        let Some(b) = group.iter().copied().filter(|&b| b != a).min_by_key(|&b| worth(b)) else { continue };
        let pair = if a < b { (a, b) } else { (b, a) };
        if !out.contains(&pair) {
            out.push(pair);
        }
        raced[a] = true;
        raced[b] = true;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{pairs, representatives, AgainstScope, Candidate, Intent, NameKind, SourceKind, Variant};

    /// The first and the third contender are the first call; counts of another length are no
    /// pair's.
    #[test]
    fn a_pair_counts_per_side() {
        assert_eq!(super::per_side(&[3, 4, 5]), Some([8, 4]));
        assert_eq!(super::per_side(&[0, 0, 0]), Some([0, 0]));
        assert_eq!(super::per_side(&[1, 2]), None);
        assert_eq!(super::per_side(&[]), None);
    }

    fn cand(runtime: &str, variant: &str, intent: Intent, kind: NameKind, placer: bool) -> Candidate {
        Candidate {
            runtime: runtime.into(),
            variant: variant.into(),
            family: variant.split('.').next().unwrap().into(),
            source: None,
            intent: Some(intent),
            kind,
            placer,
        }
    }

    fn dirs() -> Vec<Candidate> {
        vec![
            cand("node", "node.mkdirSync", Intent::LockDir, NameKind::Dir, false),
            cand("node", "node.mkdir", Intent::LockDir, NameKind::Dir, false),
            cand("bun", "node.mkdirSync", Intent::LockDir, NameKind::Dir, false),
            cand("mono", "dotnet.Directory.Move", Intent::PlaceDir, NameKind::Dir, true),
            cand("node", "node.linkSync", Intent::LockLink, NameKind::File, true),
        ]
    }

    #[test]
    fn the_name_kind_comes_from_the_matrix() {
        let all = crate::matrix::load(None).unwrap();
        let kind = |id: &str, source: SourceKind| {
            let v = all.iter().find(|v| v.id == id).unwrap();
            NameKind::of(&Variant { source, ..v.clone() })
        };
        assert_eq!(kind("node.mkdirSync", SourceKind::None), NameKind::Dir);
        assert_eq!(kind("node.writeFileSync.wx", SourceKind::None), NameKind::File);
        assert_eq!(kind("node.renameSync", SourceKind::Dir), NameKind::Dir, "a renamed directory is a directory");
        assert_eq!(kind("node.renameSync", SourceKind::File), NameKind::File);
        assert_eq!(kind("node.linkSync", SourceKind::File), NameKind::File);
        assert_eq!(kind("node.symlinkSync", SourceKind::File), NameKind::Symlink);
        assert_eq!(kind("dotnet.Directory.Move", SourceKind::Dir), NameKind::Dir);
    }

    #[test]
    fn one_representative_per_runtime_family_intent_and_kind() {
        let c = dirs();
        assert_eq!(representatives(&c), vec![0, 2, 3, 4], "node.mkdir is represented by node.mkdirSync");
    }

    #[test]
    fn cover_races_every_representative_placers_against_creators_from_another_runtime() {
        let c = dirs();
        let p = pairs(&c, AgainstScope::Cover);
        // node mkdirSync meets mono's Directory.Move (other class, other runtime); bun's mkdirSync,
        // not yet raced, meets the only placer again; the lone file row has no partner
        assert_eq!(p, vec![(0, 3), (2, 3)]);
        let mut covered: Vec<usize> = p.iter().flat_map(|&(a, b)| [a, b]).collect();
        covered.sort();
        covered.dedup();
        assert_eq!(covered, vec![0, 2, 3]);
        assert!(pairs(&c, AgainstScope::None).is_empty());
    }

    #[test]
    fn all_races_every_pair_of_representatives_of_a_kind() {
        let c = dirs();
        assert_eq!(pairs(&c, AgainstScope::All), vec![(0, 2), (0, 3), (2, 3)]);
    }

    #[test]
    fn cover_without_the_other_class_pairs_within_the_class() {
        let c = vec![
            cand("node", "node.symlinkSync", Intent::LockLink, NameKind::Symlink, true),
            cand("bun", "node.symlinkSync", Intent::LockLink, NameKind::Symlink, true),
            cand("deno", "deno.symlinkSync", Intent::LockLink, NameKind::Symlink, true),
        ];
        assert_eq!(pairs(&c, AgainstScope::Cover), vec![(0, 1), (0, 2)]);
    }
}

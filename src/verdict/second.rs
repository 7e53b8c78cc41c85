//! The second-comer judge: one attempt against the state a first comer left at the target.

use super::{Outcome, Report};
use crate::snapshot::{mark_name, Entry, Identity};

/// Classifies one second-comer attempt.
///
/// Takes the target as it stood before the attempt (the first comer's state, or `Absent` for
/// the control), the probe's report, the target afterwards, and the second comer's token.
/// `own_mark` is true when the probe was asked to write a mark file into a directory it
/// creates; that file alone is bookkeeping, not something the call took.
pub fn classify_second(before: &Entry, report: Report, after: &Entry, token: &str, own_mark: bool) -> Outcome {
    classify_second_source(before, report, after, token, own_mark, None)
}

/// [`classify_second`] for a second comer given a directory source: `source` is the identity
/// of that directory, read from the disk before the attempt (`None` for other sources). An
/// empty directory carries no token; what stands at the target afterwards is the second
/// comer's when it holds its token or is that very directory ([`Entry::owned_by`]).
pub fn classify_second_source(
    before: &Entry,
    report: Report,
    after: &Entry,
    token: &str,
    own_mark: bool,
    source: Option<Identity>,
) -> Outcome {
    match report {
        Report::Prompted => return Outcome::Prompted,
        Report::Timeout => return Outcome::Timeout,
        Report::Crashed => return Outcome::Crashed,
        Report::Unsupported => return Outcome::Unsupported,
        Report::HarnessError => return Outcome::HarnessError,
        // the engine drops interrupted attempts before classifying, so this is never stored;
        // were it judged, a call cut short says nothing about the call: not measured
        Report::Interrupted => return Outcome::HarnessError,
        Report::Success | Report::Error => {}
    }
    let ok = report == Report::Success;
    if matches!(before, Entry::Absent) {
        return match (ok, after.owned_by(token, source), matches!(after, Entry::Absent)) {
            (true, true, _) => Outcome::Acquired,
            (false, _, true) => Outcome::Failed,
            _ => Outcome::Damaged,
        };
    }
    if !ok {
        return if after == before { Outcome::Refused } else { Outcome::Damaged };
    }
    let after_without_mark = if own_mark { without_entry(after, &mark_name(token)) } else { after.clone() };
    if &after_without_mark == before {
        return Outcome::Kept;
    }
    // a symbolic link at the target that the call kept (same text): judge what it points at
    // by the same rules; a success there went through the link
    if let (Entry::Symlink { link: bl, resolved: br }, Entry::Symlink { link: al, resolved: ar }) = (before, after) {
        if bl == al {
            return match classify_second_source(br, report, ar, token, own_mark, source) {
                Outcome::Acquired | Outcome::Replaced | Outcome::Nested | Outcome::Followed => Outcome::Followed,
                Outcome::Kept => Outcome::Kept,
                _ => Outcome::Damaged,
            };
        }
    }
    match (before, after) {
        (Entry::Dir { id: b_id, entries: b }, Entry::Dir { id: a_id, entries: a }) if b_id == a_id => {
            let kept_all = b.iter().all(|(k, v)| a.get(k) == Some(v));
            let added: Vec<&Entry> = a
                .iter()
                .filter(|(k, _)| !b.contains_key(*k) && (!own_mark || **k != mark_name(token)))
                .map(|(_, v)| v)
                .collect();
            // what the call put inside: its source (a file or directory holding the token, or the
            // very directory), or the content of a copied tree merged in (a folder whose files
            // hold the token somewhere below)
            let its = |e: &&Entry| e.owned_by(token, source) || e.contains_token(token);
            if kept_all && !added.is_empty() && added.iter().all(its) {
                Outcome::Nested
            } else {
                Outcome::Damaged
            }
        }
        (Entry::Dir { .. }, _) if after.id() == before.id() => Outcome::Damaged,
        _ if after.owned_by(token, source) && !holds_other(after, token) => Outcome::Replaced,
        _ => Outcome::Damaged,
    }
}

/// `e` without the entry `name` at its top level (a directory's, or, for a symbolic link, the
/// directory it points at).
fn without_entry(e: &Entry, name: &str) -> Entry {
    match e {
        Entry::Dir { id, entries } => {
            let mut entries = entries.clone();
            entries.remove(name);
            Entry::Dir { id: *id, entries }
        }
        Entry::Symlink { link, resolved } => {
            Entry::Symlink { link: link.clone(), resolved: Box::new(without_entry(resolved, name)) }
        }
        other => other.clone(),
    }
}

/// True when a directory holds marks of tokens other than `token` (a merge, not a replace).
fn holds_other(e: &Entry, token: &str) -> bool {
    match e {
        Entry::Dir { entries, .. } => {
            entries.keys().any(|k| k.starts_with(crate::snapshot::MARK_PREFIX) && *k != mark_name(token))
        }
        _ => false,
    }
}

//! What stands at a name: a recursive, comparable picture of a file-system entry.
//!
//! The harness takes one before and one after every attempt; [`crate::verdict`] compares them.
//! Identity (device and inode on Unix, creation time on Windows) tells a replaced object from
//! one whose content changed in place.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

/// File-name prefix of mark files: `owner.<token>`, written into a directory by the contender
/// that created it (see `probes/PROTOCOL.md`, `mark`).
pub const MARK_PREFIX: &str = "owner.";

/// Deepest directory level read; deeper levels are summarised as [`Entry::Other`].
const MAX_DEPTH: usize = 4;
/// Largest file content read, in bytes; tokens are far shorter.
const MAX_BYTES: u64 = 64 * 1024;

/// An opaque object identity: equal identities mean the same file-system object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Identity(pub u64, pub u64);

/// One file-system entry as observed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Entry {
    /// Nothing at the name.
    Absent,
    /// A regular file and its content (at most 64 KiB).
    File {
        /// Object identity.
        id: Option<Identity>,
        /// The content.
        #[serde(serialize_with = "ser_lossy")]
        bytes: Vec<u8>,
    },
    /// A directory and its entries by name.
    Dir {
        /// Object identity.
        id: Option<Identity>,
        /// Entries, sorted by name.
        entries: BTreeMap<String, Entry>,
    },
    /// A symbolic link: its text and what it resolves to.
    Symlink {
        /// The link's text.
        link: String,
        /// What the link resolves to, read like any entry (a file with its content, a
        /// directory with its entries, one level deeper); `Absent` when dangling or a loop.
        resolved: Box<Entry>,
    },
    /// Something else (a device, a FIFO, or a level deeper than the reader goes).
    Other,
}

fn ser_lossy<S: serde::Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&String::from_utf8_lossy(b))
}

/// The identity of the object `m` describes (see [`Identity`]), where the platform gives one.
pub fn identity_of(m: &std::fs::Metadata) -> Option<Identity> {
    identity(m)
}

#[cfg(unix)]
fn identity(m: &std::fs::Metadata) -> Option<Identity> {
    use std::os::unix::fs::MetadataExt;
    Some(Identity(m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn identity(m: &std::fs::Metadata) -> Option<Identity> {
    let t = m.created().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?;
    Some(Identity(t.as_secs(), u64::from(t.subsec_nanos())))
}

/// Reads what stands at `path` now; a part that cannot be read becomes [`Entry::Other`].
/// For callers that only look (tests, descriptions); the engine uses [`read`].
pub fn take(path: &Path) -> Entry {
    read(path).unwrap_or(Entry::Other)
}

/// Reads what stands at `path` now, recursively (at most 4 levels, 64 KiB per file).
///
/// Returns [`Entry::Absent`] when nothing is at the name (`ENOENT`). Errors: any other error
/// reading the entry, a directory listing or a file's content (e.g. `ENAMETOOLONG`, `EIO`,
/// `EACCES`): the harness cannot say what stands there, and its caller reports a harness
/// error instead of an outcome.
pub fn read(path: &Path) -> std::io::Result<Entry> {
    read_depth(path, 0)
}

fn read_depth(path: &Path, depth: usize) -> std::io::Result<Entry> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Entry::Absent),
        Err(e) => return Err(e),
    };
    let ft = meta.file_type();
    if ft.is_symlink() {
        let link = std::fs::read_link(path)?.to_string_lossy().into_owned();
        let resolved = match std::fs::metadata(path) {
            Ok(m) if m.is_file() => read_file(path, &m)?,
            Ok(m) if m.is_dir() => read_dir(path, &m, depth + 1)?,
            Ok(_) => Entry::Other,
            // dangling (or a loop): the link resolves to nothing
            Err(_) => Entry::Absent,
        };
        return Ok(Entry::Symlink { link, resolved: Box::new(resolved) });
    }
    if ft.is_file() {
        return read_file(path, &meta);
    }
    if ft.is_dir() {
        return read_dir(path, &meta, depth);
    }
    Ok(Entry::Other)
}

fn read_dir(path: &Path, meta: &std::fs::Metadata, depth: usize) -> std::io::Result<Entry> {
    if depth >= MAX_DEPTH {
        return Ok(Entry::Other);
    }
    let mut entries = BTreeMap::new();
    for e in std::fs::read_dir(path)? {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        entries.insert(name, read_depth(&e.path(), depth + 1)?);
    }
    Ok(Entry::Dir { id: identity(meta), entries })
}

fn read_file(path: &Path, meta: &std::fs::Metadata) -> std::io::Result<Entry> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.take(MAX_BYTES).read_to_end(&mut bytes)?;
    Ok(Entry::File { id: identity(meta), bytes })
}

/// True when `bytes` is `token`, allowing only encoding artefacts that some runtimes add to
/// text they write: a UTF-8 byte-order mark before it, and one trailing `\n`, `\r\n` or
/// space before the line end (cmd's `echo`). Anything else (a merge, a truncation) is not a match.
pub fn content_is(bytes: &[u8], token: &str) -> bool {
    let mut b = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    b = b.strip_suffix(b"\r\n").or_else(|| b.strip_suffix(b"\n")).unwrap_or(b);
    b = b.strip_suffix(b" ").unwrap_or(b);
    b == token.as_bytes()
}

/// The mark-file name for a token.
pub fn mark_name(token: &str) -> String {
    format!("{MARK_PREFIX}{token}")
}

impl Entry {
    /// True when this entry holds `token`: a file whose content is the token, a symlink that
    /// resolves to one, or a directory with the token's mark file at its top level.
    pub fn holds(&self, token: &str) -> bool {
        match self {
            Entry::File { bytes, .. } => content_is(bytes, token),
            Entry::Symlink { resolved, .. } => resolved.holds(token),
            Entry::Dir { entries, .. } => entries
                .get(&mark_name(token))
                .is_some_and(|m| matches!(m, Entry::File { bytes, .. } if content_is(bytes, token))),
            Entry::Absent | Entry::Other => false,
        }
    }

    /// True when this entry is a contender's: it holds `token` ([`Entry::holds`]), or it is
    /// the very object the contender was given as its source (`source`, the identity recorded
    /// before the release: an empty directory carries no token, but a move keeps its
    /// identity), or a symbolic link resolving to such an object.
    pub fn owned_by(&self, token: &str, source: Option<Identity>) -> bool {
        if self.holds(token) {
            return true;
        }
        match (self, source) {
            (Entry::Symlink { resolved, .. }, Some(_)) => resolved.owned_by(token, source),
            (_, Some(id)) => self.id() == Some(id),
            (_, None) => false,
        }
    }

    /// True when this entry is the very object whose identity is `id` (recorded before a
    /// release: a moved directory keeps it), or a symbolic link resolving to it.
    pub fn is_object(&self, id: Identity) -> bool {
        match self {
            Entry::Symlink { resolved, .. } => resolved.is_object(id),
            _ => self.id() == Some(id),
        }
    }

    /// True when this entry holds `token` ([`Entry::holds`]) or is a directory with such an
    /// entry somewhere below it (as far as the snapshot reads).
    pub fn contains_token(&self, token: &str) -> bool {
        match self {
            Entry::Dir { entries, .. } => self.holds(token) || entries.values().any(|e| e.contains_token(token)),
            _ => self.holds(token),
        }
    }

    /// Object identity, where the entry has one.
    pub fn id(&self) -> Option<Identity> {
        match self {
            Entry::File { id, .. } | Entry::Dir { id, .. } => *id,
            _ => None,
        }
    }

    /// A short human description: `absent`, `file "tokA"`, `dir [owner.tokA]`, `symlink -> …`.
    pub fn describe(&self) -> String {
        match self {
            Entry::Absent => "absent".into(),
            Entry::File { bytes, .. } => {
                let s = String::from_utf8_lossy(bytes);
                let s: String = s.chars().take(60).collect();
                format!("file {s:?}")
            }
            Entry::Dir { entries, .. } => {
                let names: Vec<&str> = entries.keys().map(String::as_str).take(8).collect();
                format!("dir [{}]", names.join(", "))
            }
            Entry::Symlink { link, resolved } => format!("symlink -> {link} ({})", resolved.describe()),
            Entry::Other => "other".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{content_is, mark_name, read, take, Entry};

    #[test]
    fn content_allows_only_encoding_artefacts() {
        assert!(content_is(b"tok", "tok"));
        assert!(content_is(b"\xEF\xBB\xBFtok\r\n", "tok"));
        assert!(content_is(b"tok \r\n", "tok"));
        assert!(!content_is(b"tokA tok", "tok"));
        assert!(!content_is(b"to", "tok"));
        assert!(!content_is(b"tok\n\n", "tok"));
    }

    #[test]
    fn snapshots_files_dirs_and_links() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f");
        assert_eq!(take(&f), Entry::Absent);
        std::fs::write(&f, "A").unwrap();
        assert!(take(&f).holds("A"));
        let sub = d.path().join("d");
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(sub.join(mark_name("B")), "B").unwrap();
        let s = take(&sub);
        assert!(s.holds("B") && !s.holds("A"));
        #[cfg(unix)]
        {
            let l = d.path().join("l");
            std::os::unix::fs::symlink(&f, &l).unwrap();
            assert!(take(&l).holds("A"));
        }
    }

    #[test]
    fn an_unreadable_name_is_an_error_not_absent() {
        let d = tempfile::tempdir().unwrap();
        let long = d.path().join("x".repeat(300));
        assert_eq!(read(&d.path().join("none")).unwrap(), Entry::Absent);
        let e = read(&long).expect_err("a name past NAME_MAX cannot be read");
        assert_ne!(e.kind(), std::io::ErrorKind::NotFound, "{e}");
    }
}

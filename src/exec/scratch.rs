//! The scratch folder: the only place the harness (and its probes) write to.
//!
//! It is created under `--fs-root` (default: the system temp folder), removed at the end of
//! the run (also on error, through `TempDir`'s drop), and holds one sub-folder per cell and the
//! folder every race trial runs in ([`RACE_DIR`]).

use std::path::{Path, PathBuf};

pub use crate::domain::{PathStyle, TargetState};
use crate::error::{Error, Result};
use crate::matrix::SourceKind;
use crate::snapshot::mark_name;

/// A folder name made of the characters that shells and cmd/PowerShell interpret: spaces,
/// `&`, `%`, `^`, `!`, `(`, `)`, `'`, `` ` ``, `$`, and Japanese. Every path given to probes
/// passes through it when `--hostile-paths` is on, to prove that paths reach probes as data.
pub const HOSTILE_SEGMENT: &str = "sp ace&amp %PATH% ^c !b! (p) 'q' `b` $d 日本語";

/// The run's scratch folder.
#[derive(Debug)]
pub struct Scratch {
    /// The top folder, held for its drop (which removes it); `None` for a lane
    /// ([`Scratch::lane`]), which lies inside another scratch folder and goes with it.
    _dir: Option<tempfile::TempDir>,
    top: PathBuf,
    root: PathBuf,
    next: u64,
}

impl Scratch {
    /// Creates `conformance-XXXXXX` under `fs_root`, and inside it a folder named `segment`
    /// when given (e.g. [`HOSTILE_SEGMENT`]); probes then work below that folder.
    /// Errors: [`Error::Scratch`] naming `fs_root` when `conformance-XXXXXX` cannot be made;
    /// [`Error::Usage`] naming `--path-segment` (`--hostile-paths` for the hostile name) when
    /// the segment folder cannot be made in it (a name too long or invalid for the file system).
    pub fn new(fs_root: &Path, segment: Option<&str>) -> Result<Scratch> {
        let err = |source| Error::Scratch { path: fs_root.to_path_buf(), origin: "--fs-root", source };
        let dir = tempfile::Builder::new().prefix("conformance-").tempdir_in(fs_root).map_err(err)?;
        // one spelling for every path the harness hands out, the canonical one: amplified races
        // delay only calls naming the race's paths as strace's `-P` was given them (an exact
        // match), and a runtime that normalises a path (`./`, `..`, a symbolic link in
        // `--fs-root` or TMPDIR) would otherwise name them another way and go undelayed. Linux
        // only (the only place with `-P`; Windows' canonical form is a `\\?\` path)
        #[cfg(target_os = "linux")]
        let mut root = std::fs::canonicalize(dir.path()).map_err(err)?;
        #[cfg(not(target_os = "linux"))]
        let mut root = dir.path().to_path_buf();
        if let Some(seg) = segment {
            root.push(seg);
            std::fs::create_dir(&root).map_err(|e| Error::Usage {
                flag: if seg == HOSTILE_SEGMENT { "--hostile-paths" } else { "--path-segment" }.into(),
                message: format!(
                    "cannot create a folder named '{}' ({} bytes) under {}: {e}",
                    seg.escape_debug(),
                    seg.len(),
                    fs_root.display()
                ),
            })?;
        }
        let top = dir.path().to_path_buf();
        Ok(Scratch { _dir: Some(dir), top, root, next: 0 })
    }

    /// Another scratch folder for work done at the same time as this one's (a lane of the
    /// run's hand-offs): `<root>/lane-<n>`, made here, whose cell folders cannot meet this
    /// one's; removed with this scratch folder. Errors: the OS error.
    pub fn lane(&self, n: usize) -> std::io::Result<Scratch> {
        let root = self.root.join(format!("lane-{n}"));
        std::fs::create_dir(&root)?;
        Ok(Scratch { _dir: None, top: self.top.clone(), root, next: 0 })
    }

    /// The folder probes run in; relative targets are relative to it.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The top of the scratch folder (removed when the run ends).
    pub fn top(&self) -> &Path {
        &self.top
    }

    /// The folder every race trial runs in, `<root>/race` ([`RACE_DIR`]); not created here.
    pub fn race_dir(&self) -> PathBuf {
        self.root.join(RACE_DIR)
    }

    /// A new, empty folder for one cell, `c<N>`, returned as (absolute, relative to root).
    /// Errors: the OS error.
    pub fn cell_dir(&mut self) -> std::io::Result<(PathBuf, PathBuf)> {
        self.next += 1;
        let rel = PathBuf::from(format!("c{}", self.next));
        let abs = self.root.join(&rel);
        std::fs::create_dir(&abs)?;
        Ok((abs, rel))
    }

    /// The absolute path the next [`Scratch::cell_dir`] will have (not created): for a tracer
    /// started before a cell that must name the cell's paths.
    pub fn next_cell_dir(&self) -> PathBuf {
        self.root.join(format!("c{}", self.next + 1))
    }
}

/// The name of the target inside a cell or trial folder.
pub const TARGET_NAME: &str = "target";

/// The folder, in the scratch root, where every race trial runs, made anew for each trial
/// ([`Scratch::race_dir`]): one fixed name, so that an amplifier started once for a pool can
/// delay the calls that name the race's paths and no others
/// ([`crate::exec::amplify::DelayScope::Race`]).
pub const RACE_DIR: &str = "race";

/// How many contenders' sources (`src-0` …) [`race_paths`] names: every contender a race can
/// have ([`crate::domain::MAX_CONTENDERS`]), whichever pool it comes from.
const RACE_SOURCES: usize = crate::domain::MAX_CONTENDERS as usize;

/// The paths a race's calls name, for a race run in `arena`: the folder itself (calls relative
/// to a descriptor on it), [`TARGET_NAME`] and every contender's source ([`source_name`]).
pub fn race_paths(arena: &Path) -> Vec<PathBuf> {
    let mut paths = vec![arena.to_path_buf(), arena.join(TARGET_NAME)];
    paths.extend((0..RACE_SOURCES).map(|k| arena.join(source_name(TargetState::Absent, k))));
    paths
}

/// The name beside the target that the symbolic-link states point at (`link-dest`, the link's
/// text, relative to the link's own folder so that absolute and relative attempts resolve it
/// alike).
pub const LINK_DEST_NAME: &str = "link-dest";

/// Contender `k`'s source name in a cell or trial folder: `src-<k>`, or, for the `self` state
/// (the source is the target itself), [`TARGET_NAME`].
pub fn source_name(state: TargetState, k: usize) -> String {
    match state {
        TargetState::SelfSame => TARGET_NAME.to_string(),
        _ => format!("src-{k}"),
    }
}

/// Puts the first comer's `state` at `target` with `token` (a file holding it, a directory,
/// one holding its mark file, or a symbolic link to such a thing, or to nothing, named
/// [`LINK_DEST_NAME`] beside the target). Errors: the OS error; `InvalidInput` for the `self`
/// states, which need the second comer's source ([`set_up_cell`]).
pub fn set_up(target: &Path, state: TargetState, token: &str) -> std::io::Result<()> {
    let dest = target.with_file_name(LINK_DEST_NAME);
    match state {
        TargetState::Absent => Ok(()),
        TargetState::File => std::fs::write(target, token),
        TargetState::EmptyDir => std::fs::create_dir(target),
        TargetState::Dir => {
            std::fs::create_dir(target)?;
            std::fs::write(target.join(mark_name(token)), token)
        }
        TargetState::SymlinkToFile => {
            std::fs::write(&dest, token)?;
            symlink(LINK_DEST_NAME, target, false)
        }
        TargetState::SymlinkToDir => {
            std::fs::create_dir(&dest)?;
            std::fs::write(dest.join(mark_name(token)), token)?;
            symlink(LINK_DEST_NAME, target, true)
        }
        TargetState::DanglingSymlink => symlink(LINK_DEST_NAME, target, false),
        TargetState::SelfSame | TargetState::SelfHardlink | TargetState::SelfSymlink => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("the {} state is the second comer's own source: set it up with set_up_cell", state.as_str()),
        )),
    }
}

/// Sets up a second-comer cell folder `dir`: the first comer's `state` at [`TARGET_NAME`]
/// holding `first`, and the second comer's (contender 1's) source of kind `source` holding
/// `second` at [`source_name`]`(state, 1)`. For the `self` states there is one file, holding
/// `second`: named twice (`self`: the source path is the target path), under two hard links
/// (`self-hardlink`: `target` and `src-1`), or as `src-1` with `target` a symbolic link to it
/// (`self-symlink`).
///
/// Errors: the OS error; `InvalidInput` when a `self` state meets a source that is not a file.
pub fn set_up_cell(
    dir: &Path,
    state: TargetState,
    first: &str,
    second: &str,
    source: SourceKind,
) -> std::io::Result<()> {
    let target = dir.join(TARGET_NAME);
    let src = dir.join(source_name(state, 1));
    if state.is_self() && source != SourceKind::File {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("the {} state needs a variant whose source is a file", state.as_str()),
        ));
    }
    match state {
        TargetState::SelfSame => std::fs::write(&target, second),
        TargetState::SelfHardlink => {
            std::fs::write(&target, second)?;
            std::fs::hard_link(&target, &src)
        }
        TargetState::SelfSymlink => {
            std::fs::write(&src, second)?;
            symlink(source_name(state, 1), &target, false)
        }
        _ => {
            set_up(&target, state, first)?;
            make_source(&src, source, second)
        }
    }
}

/// Makes a symbolic link at `link` whose text is `text` (`dir`: it points at a directory,
/// which Windows needs to know). Errors: the OS error (on Windows, creating links may need a
/// privilege or developer mode).
fn symlink(text: impl AsRef<Path>, link: &Path, dir: bool) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        let _ = dir;
        std::os::unix::fs::symlink(text, link)
    }
    #[cfg(windows)]
    {
        if dir {
            std::os::windows::fs::symlink_dir(text, link)
        } else {
            std::os::windows::fs::symlink_file(text, link)
        }
    }
}

/// Prepares a contender's source: a file holding `token`, an empty directory, a directory
/// holding its mark, or a tree (the mark at the top, and `sub/deeper/data` holding `token`).
/// Errors: the OS error.
pub fn make_source(path: &Path, kind: SourceKind, token: &str) -> std::io::Result<()> {
    match kind {
        SourceKind::None => Ok(()),
        SourceKind::File => std::fs::write(path, token),
        SourceKind::EmptyDir => std::fs::create_dir(path),
        SourceKind::Dir => {
            std::fs::create_dir(path)?;
            std::fs::write(path.join(mark_name(token)), token)
        }
        SourceKind::Tree => {
            make_source(path, SourceKind::Dir, token)?;
            let deeper = path.join("sub").join("deeper");
            std::fs::create_dir_all(&deeper)?;
            std::fs::write(deeper.join("data"), token)
        }
    }
}

/// The identity of the source a contender was given (`path`), for the directory kinds: what
/// names a moved empty directory's owner afterwards. `None` for other kinds. Errors: the OS
/// error reading it (the harness then cannot judge the trial).
pub fn source_identity(path: &Path, kind: SourceKind) -> std::io::Result<Option<crate::snapshot::Identity>> {
    if !kind.is_dir() {
        return Ok(None);
    }
    Ok(crate::snapshot::identity_of(&std::fs::symlink_metadata(path)?))
}

/// Removes a folder and everything in it, ignoring errors (a probe may still hold a handle
/// on Windows; the whole scratch folder goes at the end anyway).
pub fn clear(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
}

/// Spells `p` for a runtime with `style`.
pub fn spell(p: &Path, style: PathStyle) -> String {
    let s = p.to_string_lossy();
    match style {
        PathStyle::Native => s.into_owned(),
        PathStyle::Wine => {
            let back = s.replace('/', "\\");
            if p.is_absolute() {
                format!("Z:{back}")
            } else {
                back
            }
        }
    }
}

/// The longest path cmd.exe handles, in UTF-16 units: `MAX_PATH` (260) less its terminating
/// null ("Naming Files, Paths, and Namespaces", *Maximum Path Length Limitation*). Measured
/// under Wine 8.0 (`cmd.move`, `cmd.copy`, `cmd.ren` through `--path-segment`): a 259-unit
/// target works, a 260-unit one is damaged.
pub const WIN32_MAX_PATH_CHARS: usize = 259;

/// The longest path component Win32 file systems take, in UTF-16 units (the
/// `lpMaximumComponentLength` NTFS and FAT32 report; "Naming Files, Paths, and Namespaces").
pub const WIN32_MAX_COMPONENT_CHARS: usize = 255;

/// Why `path` cannot be given to cmd.exe as it stands — the name cmd would act on differs
/// from the one the harness inspects — or `None` when every component is a valid Win32 name
/// and the whole path fits in `MAX_PATH`.
///
/// Takes the path as the harness holds it (a Unix path on Linux, spelled for Wine with
/// [`spell`]`(path, PathStyle::Wine)`; a native path on Windows). Give it the absolute path:
/// cmd resolves a relative one against its working directory, and the length rule is about
/// the resolved path (measured: with a working directory past `MAX_PATH`, relative repeats
/// are damaged too). Returns a short reason naming the component, e.g. "the name 'dot.' ends
/// in a dot, which Win32 strips".
///
/// The rules are those of Microsoft's "Naming Files, Paths, and Namespaces"
/// (<https://learn.microsoft.com/en-us/windows/win32/fileio/naming-a-file>), checked per
/// component (split on `/` on Unix, so a literal `\` inside a Unix name is a problem):
/// - a reserved character `< > : " / \ | ? *`;
/// - a control character, U+0001 to U+001F;
/// - a trailing dot or space (Win32 path normalisation removes them; measured under Wine 8.0:
///   `mkdir "…\dot."` creates `dot`, `"…\sp "` creates `sp`, `"…\a.b."` creates `a.b`);
/// - a reserved device name, `CON PRN AUX NUL COM0–COM9 COM¹ COM² COM³ LPT0–LPT9 LPT¹ LPT²
///   LPT³`, in any case, alone or before an extension (`NUL.txt`, `NUL.tar.gz`), with
///   spaces before the dot ignored (Wine 8.0 refuses `con.txt`, `AUX.tar.gz`, `COM1 .txt`;
///   it creates `COM0`, `LPT0` and `COM¹` as ordinary names, but Windows does not, and the
///   cmd adapter serves both);
/// - a component longer than [`WIN32_MAX_COMPONENT_CHARS`] UTF-16 units;
/// - a component that is not valid Unicode (it has no Win32 spelling; [`spell`] would
///   replace its bytes);
///
/// and on the whole path: longer than [`WIN32_MAX_PATH_CHARS`] UTF-16 units as cmd sees it.
///
/// `.` and `..` components mean the same to Win32 and pass. Characters that are legal in
/// Win32 names pass, including `[ ] + ; , = ~`, U+007F and private-use characters (all
/// created unchanged by Wine 8.0's `mkdir`, measured), spaces inside a name, `&`, `^`, and
/// non-ASCII text. `!` and `%` pass too: Wine's cmd re-expands them inside variable values,
/// but the cmd probe itself refuses such values (`probes/cmd/README.md`).
pub fn win32_name_problem(path: &Path) -> Option<String> {
    use std::path::Component;
    for c in path.components() {
        if let Component::Normal(os) = c {
            if let Some(why) = win32_component_problem(os) {
                return Some(why);
            }
        }
    }
    let style = if cfg!(windows) { PathStyle::Native } else { PathStyle::Wine };
    let spelled = spell(path, style);
    let units = spelled.encode_utf16().count();
    (units > WIN32_MAX_PATH_CHARS).then(|| {
        format!(
            "the path is {units} UTF-16 units long as cmd sees it ('{}'), over MAX_PATH (260 with its terminating \
             null), past which cmd under Wine acts on another name",
            shown(&spelled)
        )
    })
}

/// The Win32 reserved device names (without the superscript forms, handled apart).
const WIN32_DEVICES: [&str; 4] = ["CON", "PRN", "AUX", "NUL"];

/// The problem with one path component, if any (see [`win32_name_problem`]).
fn win32_component_problem(os: &std::ffi::OsStr) -> Option<String> {
    let Some(name) = os.to_str() else {
        return Some(format!(
            "the name '{}' is not valid Unicode, so it has no Win32 spelling",
            shown(&os.to_string_lossy())
        ));
    };
    if name == "." || name == ".." {
        return None;
    }
    let n = shown(name);
    if name.contains('\\') {
        return Some(format!("the name '{n}' holds '\\', which Win32 reads as a folder separator"));
    }
    if let Some(c) = name.chars().find(|c| matches!(c, '<' | '>' | ':' | '"' | '/' | '|' | '?' | '*')) {
        return Some(format!("the name '{n}' holds '{c}', which Win32 reserves (< > : \" / \\ | ? *)"));
    }
    if let Some(c) = name.chars().find(|c| ('\u{1}'..='\u{1f}').contains(c)) {
        return Some(format!(
            "the name '{n}' holds the control character U+{:04X}, which Win32 forbids (U+0001 to U+001F)",
            c as u32
        ));
    }
    if name.ends_with('.') {
        return Some(format!("the name '{n}' ends in a dot, which Win32 strips"));
    }
    if name.ends_with(' ') {
        return Some(format!("the name '{n}' ends in a space, which Win32 strips"));
    }
    let stem = name.split('.').next().unwrap_or(name).trim_end_matches(' ');
    let upper = stem.to_uppercase();
    let device = WIN32_DEVICES.contains(&upper.as_str())
        || (upper.chars().count() == 4
            && (upper.starts_with("COM") || upper.starts_with("LPT"))
            && upper.chars().nth(3).is_some_and(|d| d.is_ascii_digit() || matches!(d, '¹' | '²' | '³')));
    if device {
        return Some(format!(
            "the name '{n}' is the reserved device name {upper}{}, which Win32 opens instead of a file",
            if stem.len() < name.len() { " with an extension" } else { "" }
        ));
    }
    let units = name.encode_utf16().count();
    if units > WIN32_MAX_COMPONENT_CHARS {
        return Some(format!(
            "the name '{n}' is {units} UTF-16 units long, over Win32's {WIN32_MAX_COMPONENT_CHARS} per component"
        ));
    }
    None
}

/// `s` for a message: control characters escaped (`\n`, `\u{7}`), cut to 60 characters.
fn shown(s: &str) -> String {
    const KEEP: usize = 60;
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i == KEEP {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{
        make_source, set_up, set_up_cell, source_name, spell, win32_name_problem, PathStyle, Scratch, SourceKind,
        TargetState, HOSTILE_SEGMENT, LINK_DEST_NAME, RACE_DIR, TARGET_NAME, WIN32_MAX_COMPONENT_CHARS,
        WIN32_MAX_PATH_CHARS,
    };
    use crate::snapshot::{take, Entry};
    use std::path::Path;

    /// The root is spelled canonically whatever `--fs-root` looked like (a symbolic link, a
    /// `..`): strace's `-P` matches the race's paths as text, and a runtime that normalises
    /// the path it is given would otherwise name another spelling and go undelayed.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_root_is_canonical_whatever_fs_root_looks_like() {
        let top = tempfile::tempdir().unwrap();
        let real = top.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, top.path().join("link")).unwrap();
        let given = top.path().join("link").join("..").join("link");
        let s = Scratch::new(&given, Some("seg")).unwrap();
        let canonical = std::fs::canonicalize(top.path()).unwrap().join("real");
        assert!(s.root().starts_with(&canonical), "{} is not under {}", s.root().display(), canonical.display());
        assert!(s.root().ends_with("seg"));
        assert_eq!(std::fs::canonicalize(s.root()).unwrap(), s.root());
        assert_eq!(s.race_dir(), s.root().join(RACE_DIR));
    }

    #[test]
    fn a_segment_the_file_system_refuses_names_path_segment() {
        let root = tempfile::tempdir().unwrap();
        let Err(e) = Scratch::new(root.path(), Some(&"a".repeat(300))) else { panic!("a 300-byte name is refused") };
        assert_eq!(e.exit_code(), crate::exit_code::USAGE);
        let text = e.to_string();
        assert!(text.contains("--path-segment") && !text.contains("--fs-root"), "{text}");
        assert!(text.contains("300 bytes"), "{text}");
    }

    #[test]
    fn states_and_sources_hold_tokens() {
        let mut s = Scratch::new(&std::env::temp_dir(), Some(HOSTILE_SEGMENT)).unwrap();
        assert!(s.root().ends_with(HOSTILE_SEGMENT));
        let next = s.next_cell_dir();
        assert!(!next.exists(), "announced, not created");
        let (abs, rel) = s.cell_dir().unwrap();
        assert!(rel.is_relative() && abs.is_dir());
        assert_eq!(abs, next, "the folder announced is the one made");
        for st in TargetState::ALL {
            let link = matches!(
                st,
                TargetState::SelfSymlink
                    | TargetState::SymlinkToFile
                    | TargetState::SymlinkToDir
                    | TargetState::DanglingSymlink
            );
            if cfg!(windows) && link {
                continue; // creating links may need a privilege there
            }
            let dir = abs.join(st.as_str());
            std::fs::create_dir(&dir).unwrap();
            set_up_cell(&dir, st, "A", "B", SourceKind::File).unwrap();
            let t = take(&dir.join(TARGET_NAME));
            let src = take(&dir.join(source_name(st, 1)));
            assert!(src.holds("B"), "{st:?}: the second comer's source holds its token: {src:?}");
            match st {
                TargetState::Absent => assert_eq!(t, Entry::Absent),
                TargetState::EmptyDir => assert!(matches!(&t, Entry::Dir { entries, .. } if entries.is_empty())),
                TargetState::File | TargetState::Dir => assert!(t.holds("A"), "{st:?}"),
                // the target is the second comer's own file: same path, a second hard link, a link to it
                TargetState::SelfSame => assert_eq!(source_name(st, 1), TARGET_NAME),
                TargetState::SelfHardlink => assert_eq!(t.id(), src.id(), "one file under two names"),
                TargetState::SelfSymlink => {
                    assert!(matches!(&t, Entry::Symlink { link, resolved } if link == "src-1" && resolved.holds("B")))
                }
                TargetState::SymlinkToFile => {
                    assert!(
                        matches!(&t, Entry::Symlink { link, resolved } if link == LINK_DEST_NAME && resolved.holds("A"))
                    )
                }
                TargetState::SymlinkToDir => {
                    assert!(
                        matches!(&t, Entry::Symlink { resolved, .. } if matches!(**resolved, Entry::Dir { .. }) && resolved.holds("A"))
                    )
                }
                TargetState::DanglingSymlink => {
                    assert!(matches!(&t, Entry::Symlink { resolved, .. } if **resolved == Entry::Absent))
                }
            }
            if st.is_self() {
                assert!(t.holds("B") && !t.holds("A"), "{st:?}: {t:?}");
            }
        }
        // the self states need a file source; set_up alone cannot make them
        let d = abs.join("dir-source");
        std::fs::create_dir(&d).unwrap();
        let e = set_up_cell(&d, TargetState::SelfSame, "A", "B", SourceKind::Dir).unwrap_err();
        assert!(e.to_string().contains("needs a variant whose source is a file"), "{e}");
        assert!(set_up(&d.join(TARGET_NAME), TargetState::SelfHardlink, "A").is_err());
        make_source(&abs.join("src"), SourceKind::Dir, "B").unwrap();
        assert!(take(&abs.join("src")).holds("B"));
        let top = s.top().to_path_buf();
        drop(s);
        assert!(!top.exists());
    }

    #[test]
    fn states_apply_to_variants_by_their_source() {
        for st in TargetState::ALL {
            assert!(st.applies(true), "{st:?}");
            assert_eq!(st.applies(false), !st.is_self(), "{st:?}");
        }
        assert_eq!(TargetState::DEFAULT.len(), 4);
        assert!(TargetState::DEFAULT.iter().all(|t| !t.is_self()));
    }

    #[test]
    fn wine_spelling() {
        assert_eq!(spell(Path::new("/tmp/a b/c"), PathStyle::Wine), "Z:\\tmp\\a b\\c");
        assert_eq!(spell(Path::new("c1/target"), PathStyle::Wine), "c1\\target");
        assert_eq!(TargetState::parse("empty-dir"), Some(TargetState::EmptyDir));
    }

    #[test]
    fn win32_names_valid() {
        for ok in [
            "/tmp/c1/target",
            "c1/src-1",
            "/tmp/日本語/target",
            "/tmp/sp ace inside/x",
            "/tmp/a&b/x",
            "/tmp/100%/x",
            "/tmp/^c/x",
            "/tmp/!b!/x",
            "/tmp/a[b]+c;d,e=f~1/x",
            "/tmp/conx/console/nul-ish/COM10/LPT/x",
            "/tmp/ lead/x",
            "/tmp/./a/../b",
            "/tmp/.hidden/x",
            "/tmp/del\u{7f}/\u{f02a}",
            HOSTILE_SEGMENT,
        ] {
            assert_eq!(win32_name_problem(Path::new(ok)), None, "{ok}");
        }
        let longest = "a".repeat(WIN32_MAX_COMPONENT_CHARS);
        assert_eq!(win32_name_problem(Path::new(&longest)), None);
    }

    #[cfg(unix)]
    #[test]
    fn win32_name_rules() {
        let why = |p: &str| win32_name_problem(Path::new(p)).unwrap_or_else(|| panic!("{p:?} passed"));
        // trailing dot and space
        assert_eq!(why("/tmp/dot./target"), "the name 'dot.' ends in a dot, which Win32 strips");
        assert!(why("/tmp/sp /target").contains("'sp ' ends in a space"));
        // '\' inside a Unix name
        assert!(why("/tmp/a\\b/target").contains("holds '\\', which Win32 reads as a folder separator"));
        // each reserved character
        for c in ['<', '>', ':', '"', '|', '?', '*'] {
            assert!(why(&format!("/tmp/a{c}b/t")).contains(&format!("holds '{c}'")), "{c}");
        }
        // control characters, shown escaped
        assert!(why("/tmp/a\nb/t").contains("'a\\nb' holds the control character U+000A"));
        assert!(why("/tmp/a\tb").contains("U+0009"));
        assert!(why("/tmp/a\u{1f}b").contains("U+001F"));
        // reserved device names, any case, with extensions, superscript digits
        for dev in ["CON", "con", "Prn", "AUX", "nul", "COM1", "com9", "COM0", "LPT1", "lpt0", "COM¹", "LPT³"] {
            assert!(why(&format!("/tmp/{dev}")).contains("reserved device name"), "{dev}");
        }
        assert!(why("/tmp/NUL.tar.gz/x").contains("reserved device name NUL with an extension"));
        assert!(why("/tmp/COM1 .txt").contains("reserved device name COM1"));
        // a component past 255 UTF-16 units, counted in UTF-16 (Japanese: 1 unit, 3 bytes)
        let long = format!("/t/{}", "a".repeat(WIN32_MAX_COMPONENT_CHARS + 1));
        assert!(why(&long).contains("is 256 UTF-16 units long, over Win32's 255"));
        assert_eq!(win32_name_problem(&Path::new("/t").join("日".repeat(80))), None);
        // not Unicode
        {
            use std::os::unix::ffi::OsStrExt;
            let p = Path::new(std::ffi::OsStr::from_bytes(b"/tmp/a\xffb/t"));
            assert!(win32_name_problem(p).unwrap().contains("not valid Unicode"));
        }
        // the whole path past MAX_PATH, as spelled for Wine (`Z:` counts)
        let fits = format!("/{}bb", "a/".repeat(127)); // Z: + 257 = 259 units
        assert_eq!(spell(Path::new(&fits), PathStyle::Wine).len(), WIN32_MAX_PATH_CHARS);
        assert_eq!(win32_name_problem(Path::new(&fits)), None);
        assert!(why(&(fits + "c")).contains("the path is 260 UTF-16 units long as cmd sees it"));
        // components are checked before the length, the first problem is the one reported
        assert!(why("/tmp/dot./CON").contains("'dot.'"));
    }
}

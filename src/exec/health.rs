//! Is the scratch file system still working? The harness asks before it trusts an outcome
//! that may come from the machine rather than the call (a full disk, a read-only remount, a
//! path too long), so that such trouble becomes a `harness-error`, never a measurement.

use std::io::Write;
use std::path::Path;

/// Bytes written by [`check`]: larger than any token or mark file the harness or a probe
/// writes, so a file system that cannot take them cannot take an attempt either.
const CHECK_BYTES: usize = 4096;

/// Least free space (bytes) and free inodes a working scratch file system keeps after a harness
/// error: below this it is full for practical purposes, whatever one small write says.
const MIN_FREE_BYTES: u64 = 1 << 20;
const MIN_FREE_INODES: u64 = 64;

/// Checks, after a harness error, that `root` (the scratch folder) still works: its file system
/// has at least 1 MiB and 64 inodes free (`statvfs(3)`, Unix), and a small file can be
/// created exclusively, written, synced, read back and removed there.
///
/// Errors: what failed, with the OS error (e.g. `cannot write …/health-check: No space left on
/// device (os error 28)`, or `only 12 KiB free`).
pub fn check(root: &Path) -> Result<(), String> {
    #[cfg(unix)]
    #[allow(clippy::useless_conversion, reason = "statvfs field types differ by platform (u32 on macOS)")]
    if let Ok(st) = nix::sys::statvfs::statvfs(root) {
        let free = u64::from(st.blocks_available()).saturating_mul(u64::from(st.fragment_size()));
        if free < MIN_FREE_BYTES {
            return Err(format!("No space left on device: only {} KiB free under {}", free / 1024, root.display()));
        }
        if st.files() > 0 && u64::from(st.files_available()) < MIN_FREE_INODES {
            return Err(format!(
                "No space left on device: only {} inodes free under {}",
                st.files_available(),
                root.display()
            ));
        }
    }
    write_check(root)
}

fn write_check(root: &Path) -> Result<(), String> {
    let p = root.join(format!("health-check-{}", std::process::id()));
    let res = (|| -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&p)?;
        f.write_all(&[b'h'; CHECK_BYTES])?;
        f.sync_all()?;
        drop(f);
        if std::fs::read(&p)?.len() != CHECK_BYTES {
            return Err(std::io::Error::other("read back a different length"));
        }
        std::fs::remove_file(&p)
    })();
    res.map_err(|e| {
        let _ = std::fs::remove_file(&p);
        format!("cannot write {}: {e}", p.display())
    })
}

/// Creates, then removes, the deepest paths the harness will use below `root`: a cell folder,
/// a trial folder, a target directory with a mark file named after a `token_len`-byte token,
/// and a source beside it (`c…/t…/target/owner.<token>`). Run once before measuring, so that a
/// `--fs-root` or `--path-segment` whose paths would pass `PATH_MAX` (4,096 bytes on Linux,
/// `limits.h`) or `NAME_MAX` (255) fails the run at once instead of turning every cell into a
/// harness error.
///
/// Errors: the path that could not be made, with the OS error.
pub fn self_test(root: &Path, token_len: usize) -> Result<(), String> {
    let cell = root.join("c9999999");
    let trial = cell.join("t9999999");
    let target = trial.join("target");
    let mark = target.join(format!("{}{}", crate::snapshot::MARK_PREFIX, "t".repeat(token_len)));
    let src = trial.join("src-63");
    let steps: [(&Path, bool); 4] = [(&cell, true), (&trial, true), (&target, true), (&mark, false)];
    let mut res = Ok(());
    for (p, dir) in steps {
        let r = if dir { std::fs::create_dir(p) } else { std::fs::write(p, "t") };
        if let Err(e) = r {
            res = Err(format!("cannot create {} ({} bytes): {e}", p.display(), p.as_os_str().len()));
            break;
        }
    }
    if res.is_ok() {
        if let Err(e) = std::fs::write(&src, "t") {
            res = Err(format!("cannot create {} ({} bytes): {e}", src.display(), src.as_os_str().len()));
        }
    }
    let _ = std::fs::remove_dir_all(&cell);
    res
}

#[cfg(test)]
mod tests {
    use super::{check, self_test};

    #[test]
    fn a_working_folder_passes_and_is_left_clean() {
        let d = tempfile::tempdir().unwrap();
        check(d.path()).unwrap();
        self_test(d.path(), 40).unwrap();
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }

    #[test]
    fn paths_past_path_max_fail_the_self_test() {
        let d = tempfile::tempdir().unwrap();
        // nest folders until the root is about 4,040 bytes long: the folder itself can be
        // made, but a mark file below it passes PATH_MAX (4,096)
        let mut deep = d.path().to_path_buf();
        while deep.as_os_str().len() < 3800 {
            deep.push("d".repeat(200));
            std::fs::create_dir(&deep).unwrap();
        }
        let pad = 4040 - deep.as_os_str().len() - 1;
        deep.push("p".repeat(pad));
        std::fs::create_dir(&deep).unwrap();
        check(&deep).unwrap();
        let e = self_test(&deep, 40).expect_err("too long");
        assert!(e.contains("cannot create") && e.contains("File name too long"), "{e}");
    }
}

//! Facts about the machine for `run_info`: OS, kernel, architecture, and the scratch
//! folder's file system (type and mount options, from `/proc/self/mountinfo` on Linux,
//! `proc(5)`).

use std::path::Path;

use crate::report::model::FsInfo;

/// (os, os_version, kernel, arch) of this machine, via `sysinfo`.
pub fn os() -> (String, String, String, String) {
    let name = sysinfo::System::name().unwrap_or_else(|| std::env::consts::OS.to_string());
    let version = sysinfo::System::os_version().unwrap_or_default();
    let kernel = sysinfo::System::kernel_version().unwrap_or_default();
    (format!("{} ({name})", std::env::consts::OS), version, kernel, std::env::consts::ARCH.to_string())
}

/// The file system holding `root`. Never fails: unknown parts are `unknown`.
pub fn fs_info(root: &Path) -> FsInfo {
    let canon = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let mut info = FsInfo {
        root: root.display().to_string(),
        fs_type: "unknown".into(),
        mount_point: "unknown".into(),
        mount_options: "unknown".into(),
        made: None,
        second_client: None,
    };
    if let Ok(text) = std::fs::read_to_string("/proc/self/mountinfo") {
        if let Some((mp, fstype, opts)) = best_mount(&text, &canon) {
            info.fs_type = fstype;
            info.mount_point = mp;
            info.mount_options = opts;
        }
    }
    info
}

fn unescape(s: &str) -> String {
    // mountinfo escapes space, tab, newline and backslash as \ooo (octal)
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 3 < b.len() && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c)) {
            let v = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// From mountinfo text, the mount with the longest mount point that contains `path`:
/// (mount point, fs type, mount options + super options).
pub fn best_mount(mountinfo: &str, path: &Path) -> Option<(String, String, String)> {
    let mut best: Option<(String, String, String)> = None;
    for line in mountinfo.lines() {
        let (pre, post) = line.split_once(" - ")?;
        let f: Vec<&str> = pre.split(' ').collect();
        let g: Vec<&str> = post.split(' ').collect();
        if f.len() < 6 || g.len() < 3 {
            continue;
        }
        let mp = unescape(f[4]);
        if !path.starts_with(&mp) {
            continue;
        }
        if best.as_ref().is_some_and(|b| b.0.len() > mp.len()) {
            continue;
        }
        best = Some((mp, g[0].to_string(), format!("{},{}", f[5], g[2])));
    }
    best
}

#[cfg(test)]
mod tests {
    use super::best_mount;
    use std::path::Path;

    #[test]
    fn picks_the_longest_containing_mount() {
        let mi = "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/vda rw\n\
                  30 22 0:26 / /tmp rw,nosuid shared:2 - tmpfs tmpfs rw,size=100k\n\
                  31 22 0:27 / /mnt/a\\040b rw shared:3 - xfs /dev/x rw\n";
        let (mp, t, o) = best_mount(mi, Path::new("/tmp/conformance-x")).unwrap();
        assert_eq!((mp.as_str(), t.as_str(), o.as_str()), ("/tmp", "tmpfs", "rw,nosuid,rw,size=100k"));
        assert_eq!(best_mount(mi, Path::new("/home/u")).unwrap().1, "ext4");
        assert_eq!(best_mount(mi, Path::new("/mnt/a b/c")).unwrap().1, "xfs");
    }
}

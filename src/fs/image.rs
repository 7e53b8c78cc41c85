//! File systems on loop images: a sparse image file made by the Debian tool (`mkfs.ext4`,
//! `mkfs.xfs`, `mkfs.btrfs`, `mkfs.exfat`), mounted with `mount -o loop` (`losetup(8)`: the
//! loop device is freed with the mount). btrfs gets two subvolumes and is measured in the
//! first; exFAT is mounted by the kernel's driver where it has one, else by `exfat-fuse`.

use std::path::Path;

use super::{kernel_has, mount, tool, tool_s, version_line, wait_for_mount, FsKind, Mounted};

/// How each image is made: (mkfs program, its arguments before the image, Debian package,
/// image size in MiB, the version query). Sizes are the smallest each tool accepts with room
/// for a run: mkfs.xfs refuses images under 300 MiB (xfsprogs 5.19 and later), mkfs.btrfs under
/// about 114 MiB.
fn recipe(kind: FsKind) -> (&'static str, &'static [&'static str], &'static str, u64, &'static [&'static str]) {
    match kind {
        FsKind::Ext4 => ("mkfs.ext4", &["-q", "-F"], "e2fsprogs", 128, &["-V"]),
        FsKind::Xfs => ("mkfs.xfs", &["-q", "-f"], "xfsprogs", 320, &["-V"]),
        FsKind::Btrfs => ("mkfs.btrfs", &["-q", "-f"], "btrfs-progs", 256, &["--version"]),
        FsKind::Exfat => ("mkfs.exfat", &[], "exfatprogs", 64, &["-V"]),
        other => unreachable!("{other} is not made on a loop image"),
    }
}

/// Makes `kind` on a sparse image in `dir` and mounts it at `dir/mnt`. Errors: the mkfs tool
/// missing (with its Debian package), no loop device or kernel driver, a command's message.
pub fn prepare(kind: FsKind, dir: &Path) -> Result<Mounted, String> {
    let (mkfs, args, package, mib, version_args) = recipe(kind);
    which::which(mkfs).map_err(|_| format!("{mkfs} is not installed (Debian: apt-get install {package})"))?;
    let fuse_exfat = kind == FsKind::Exfat && !kernel_has("exfat");
    if fuse_exfat {
        which::which("mount.exfat-fuse").map_err(|_| {
            "the kernel has no exfat driver and mount.exfat-fuse is not installed (Debian: apt-get install exfat-fuse)"
                .to_string()
        })?;
    } else if !kernel_has(kind.as_str()) {
        return Err(format!("the kernel lists no {kind} in /proc/filesystems"));
    }
    let img = dir.join(format!("{kind}.img"));
    let file = std::fs::File::create(&img).map_err(|e| format!("cannot make {}: {e}", img.display()))?;
    file.set_len(mib << 20).map_err(|e| format!("cannot size {}: {e}", img.display()))?;
    drop(file);
    let mut a: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    a.push(img.as_os_str());
    tool(mkfs, &a, package)?;
    let mnt = dir.join("mnt");
    std::fs::create_dir_all(&mnt).map_err(|e| e.to_string())?;
    let made = version_line(mkfs, version_args);
    let mut m = Mounted::new(kind, mnt.clone(), format!("{made}; a {mib} MiB sparse image, mounted -o loop"));
    if fuse_exfat {
        // `mount -t exfat-fuse -o loop` attaches the loop device (freed with the mount) and
        // runs the helper /sbin/mount.exfat-fuse on it: the helper refuses a plain file
        // ("Block device required"), and Debian's exfat-fuse installs no mount.exfat
        mount(&mut m, "exfat-fuse", "loop", &img, &mnt)?;
        wait_for_mount(&mnt, 10)?;
        m.how = format!("{made}; a {mib} MiB sparse image, mounted -o loop by mount.exfat-fuse (FUSE)");
        m.daemon = Some(version_line("mount.exfat-fuse", &["-V"]));
    } else {
        mount(&mut m, kind.as_str(), "loop", &img, &mnt)?;
    }
    if kind == FsKind::Btrfs {
        // two subvolumes: the run measures in the first; the second is there for renames
        // across subvolumes (EXDEV), as on a machine that snapshots its volumes
        for sub in ["a", "b"] {
            tool_s("btrfs", &["subvolume", "create", &mnt.join(sub).to_string_lossy()], "btrfs-progs")?;
        }
        m.root = mnt.join("a");
        m.how.push_str("; subvolumes a (measured) and b");
    }
    Ok(m)
}

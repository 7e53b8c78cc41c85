//! tmpfs: `mount -t tmpfs -o size=256m` (`tmpfs(5)`).

use std::path::Path;

use super::{kernel_has, mount, FsKind, Mounted};

/// Mounts a 256 MiB tmpfs at `dir/mnt`. Errors: no tmpfs in the kernel, `mount`'s message.
pub fn prepare(dir: &Path) -> Result<Mounted, String> {
    if !kernel_has("tmpfs") {
        return Err("the kernel lists no tmpfs in /proc/filesystems".into());
    }
    let mnt = dir.join("mnt");
    std::fs::create_dir_all(&mnt).map_err(|e| e.to_string())?;
    let mut m = Mounted::new(FsKind::Tmpfs, mnt.clone(), "mount -t tmpfs -o size=256m".into());
    mount(&mut m, "tmpfs", "size=256m", Path::new("tmpfs"), &mnt)?;
    Ok(m)
}

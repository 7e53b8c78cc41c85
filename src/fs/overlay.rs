//! overlay: `mount -t overlay -o lowerdir=…,upperdir=…,workdir=…` (the kernel's
//! `Documentation/filesystems/overlayfs.rst`), its three folders on a tmpfs of its own (an
//! upper folder cannot sit on another overlay, as in a container). The lower layer holds the
//! folder the run measures in (`shared/`) and a few files beside it, so that the scratch folder
//! is made inside a directory that comes from the lower layer and is copied up on the first
//! write, as a job's folder baked into a container image is; the names the run creates
//! themselves live in the upper layer.

use std::path::Path;

use super::{kernel_has, mount, FsKind, Mounted};

/// Mounts an overlay at `dir/mnt` and measures in its `shared/`. Errors: no overlay or tmpfs in
/// the kernel, `mount`'s message.
pub fn prepare(dir: &Path) -> Result<Mounted, String> {
    if !kernel_has("overlay") {
        return Err("the kernel lists no overlay in /proc/filesystems".into());
    }
    let base = dir.join("layers");
    let mnt = dir.join("mnt");
    for d in [&base, &mnt] {
        std::fs::create_dir_all(d).map_err(|e| e.to_string())?;
    }
    let mut m = Mounted::new(FsKind::Overlay, mnt.join("shared"), String::new());
    mount(&mut m, "tmpfs", "size=256m", Path::new("tmpfs"), &base)?;
    let (lower, upper, work) = (base.join("lower"), base.join("upper"), base.join("work"));
    let io = |e: std::io::Error| format!("cannot lay out the overlay's layers: {e}");
    for d in [&lower, &upper, &work] {
        std::fs::create_dir_all(d).map_err(io)?;
    }
    std::fs::create_dir_all(lower.join("shared").join("from-lower")).map_err(io)?;
    std::fs::write(lower.join("shared").join("lower-file"), b"from the lower layer\n").map_err(io)?;
    let options = format!("lowerdir={},upperdir={},workdir={}", lower.display(), upper.display(), work.display());
    if [&lower, &upper, &work].iter().any(|p| p.to_string_lossy().contains([',', ':'])) {
        return Err(format!("the overlay's folders hold a comma or colon, which its options cannot carry: {options}"));
    }
    mount(&mut m, "overlay", &options, Path::new("overlay"), &mnt)?;
    m.how =
        "mount -t overlay, lower, upper and work folders on a 256 MiB tmpfs; measured in a folder of the lower layer"
            .into();
    Ok(m)
}

//! The private mount namespace of `run --fs`: the harness moves itself into a new mount
//! namespace (`unshare(2)`, `CLONE_NEWNS`) and makes every mount in it private (`mount(2)`,
//! `MS_REC | MS_PRIVATE`; `mount_namespaces(7)`), so that what it mounts is seen by it and the
//! probes it starts, never by the rest of the machine, and is dropped by the kernel when the
//! last process in the namespace exits — also after a SIGKILL. A loop device mounted with
//! `mount -o loop` is freed when its file system is unmounted (util-linux sets
//! `LO_FLAGS_AUTOCLEAR`, `losetup(8)`), so none outlives the namespace either.

/// Moves the calling thread — and every thread and process it starts afterwards — into a new,
/// private mount namespace. Call it before any thread that starts processes exists: threads
/// started earlier stay in the old namespace (`unshare(2)`: the namespace is per task).
///
/// Errors: why not (no `CAP_SYS_ADMIN`: not root, or a container without it), as a sentence.
#[cfg(target_os = "linux")]
pub fn enter_private() -> Result<(), String> {
    use nix::mount::{mount, MsFlags};
    use nix::sched::{unshare, CloneFlags};
    unshare(CloneFlags::CLONE_NEWNS).map_err(|e| {
        format!("cannot make a private mount namespace (unshare CLONE_NEWNS: {e}); --fs needs root or CAP_SYS_ADMIN")
    })?;
    mount(None::<&str>, "/", None::<&str>, MsFlags::MS_REC | MsFlags::MS_PRIVATE, None::<&str>)
        .map_err(|e| format!("cannot make the mounts of the new namespace private (mount MS_PRIVATE: {e})"))
}

/// Elsewhere there is no mount namespace: `--fs` is refused.
#[cfg(not(target_os = "linux"))]
pub fn enter_private() -> Result<(), String> {
    Err("--fs makes file systems in a Linux mount namespace; this is not Linux".into())
}

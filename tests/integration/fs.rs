//! `run --fs`: file systems the harness makes itself, measured one after the other, and
//! nothing of them left behind (mounts, loop devices, daemons, work folders).

use std::collections::BTreeSet;

use crate::common::{available, conformance, one_at_a_time, read_results, required_runtimes};
use conformance::fs::FsKind;

/// The machine's state that `run --fs` must leave as it found it: mounts of this mount
/// namespace (`/proc/self/mountinfo`, mount point and type), loop devices in use (sysfs:
/// `/sys/block/loop*/loop/backing_file`), the processes of the daemons it starts (by their
/// command names), and the harness's work folders in the temp folder.
fn machine_state() -> BTreeSet<String> {
    let mut state = BTreeSet::new();
    for line in std::fs::read_to_string("/proc/self/mountinfo").unwrap().lines() {
        let f: Vec<&str> = line.split(' ').collect();
        let post = line.split_once(" - ").map_or("", |(_, p)| p);
        state.insert(format!("mount {} {}", f.get(4).unwrap_or(&"?"), post.split(' ').next().unwrap_or("?")));
    }
    for e in std::fs::read_dir("/sys/block").unwrap().flatten() {
        let backing = e.path().join("loop").join("backing_file");
        if let Ok(b) = std::fs::read_to_string(&backing) {
            state.insert(format!("loop {} {}", e.file_name().to_string_lossy(), b.trim()));
        }
    }
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(comm) = std::fs::read_to_string(e.path().join("comm")) else { continue };
        let comm = comm.trim();
        if ["sshd", "sshfs", "mount.exfat-fus", "mount.exfat-fuse"].contains(&comm) {
            state.insert(format!("process {} {comm}", e.file_name().to_string_lossy()));
        }
    }
    for e in std::fs::read_dir(std::env::temp_dir()).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("conformance-fs-") {
            state.insert(format!("folder {name}"));
        }
    }
    state
}

/// True when this process may make mount namespaces (root); in CI it must.
fn may_mount() -> bool {
    // /proc/self belongs to the process's effective user
    let root = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").unwrap()) == 0;
    if !root {
        assert!(required_runtimes().is_empty(), "CI runs as root: run --fs needs it");
        eprintln!("SKIPPED: run --fs needs root");
    }
    root
}

#[test]
fn fs_all_measures_six_file_systems_and_leaves_nothing_behind() {
    let _serial = one_at_a_time();
    if !available("node") || !may_mount() {
        return;
    }
    let before = machine_state();
    let out = tempfile::tempdir().unwrap();
    let assert = conformance()
        .args(["run", "--fs", "all", "-r", "node", "--scenario", "second-comer,race", "-n", "30", "--races", "all"])
        .args(["-v", "node.writeFileSync.wx,node.mkdirSync,node.renameSync", "--target", "absent,file", "-q"])
        .arg("--out")
        .arg(out.path())
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    let after = machine_state();
    let changed: Vec<&String> = after.symmetric_difference(&before).collect();
    assert!(changed.is_empty(), "run --fs left something behind (or took it away): {changed:?}");
    let r = read_results(&out.path().join("results.json"));
    let made: Vec<FsKind> = r.run_info.machines.iter().filter_map(|m| m.fs.made.as_ref().map(|f| f.kind)).collect();
    for s in &r.run_info.fs_skipped {
        eprintln!("skipped {}: {}", s.kind, s.why);
    }
    // where CI installs the tools (.ci/install filesystems), every one is made
    let least = if required_runtimes().is_empty() { 1 } else { FsKind::ALL.len() };
    assert!(made.len() >= least, "made {made:?}, skipped {:?}", r.run_info.fs_skipped);
    assert_eq!(
        made.len() + r.run_info.fs_skipped.len(),
        FsKind::ALL.len(),
        "every kind measured or skipped with a reason"
    );
    for m in &r.run_info.machines {
        let kind = m.fs.made.as_ref().unwrap().kind;
        // each run's scratch file system is the one made (sshfs: FUSE; exFAT: the kernel's or FUSE)
        let want: &[&str] = match kind {
            FsKind::Sshfs => &["fuse.sshfs"],
            FsKind::Exfat => &["exfat", "fuseblk"],
            k => &[k.as_str()],
        };
        assert!(want.contains(&m.fs.fs_type.as_str()), "{kind}: measured on {:?}", m.fs);
        // the cells of each file system: every selected row, under its own label
        let cells = r.cells.iter().filter(|c| c.machine.as_deref() == Some(m.label.as_str())).count();
        assert!(cells >= 3, "{kind}: {cells} cells");
        assert!(stdout.contains(&format!("  {:<8} ", kind.as_str())), "{kind} in the file-system view: {stdout}");
        let own = out.path().join("fs").join(kind.as_str()).join("results.json");
        assert_eq!(read_results(&own).cells.len(), cells, "{kind}: its own results file");
    }
    if made.contains(&FsKind::Sshfs) {
        let m = r.run_info.machines.iter().find(|m| m.fs.made.as_ref().is_some_and(|f| f.kind == FsKind::Sshfs));
        let made = m.unwrap().fs.made.as_ref().unwrap();
        assert!(m.unwrap().fs.second_client.is_some(), "{:?}", m.unwrap().fs);
        assert!(made.daemon.as_deref().is_some_and(|d| d.contains("SSHFS")), "{made:?}");
        // a race between two clients: each client's contenders won some trial of a race
        // that any contender can win (an exclusive create: the winner is whoever comes first)
        let wins: Vec<(usize, usize)> = r
            .cells
            .iter()
            .filter(|c| c.machine == Some(m.unwrap().label.clone()))
            .filter_map(|c| c.race()?.natural.as_ref())
            .map(|run| {
                let w = &run.stats.wins_by_contender;
                let by = |p: usize| w.iter().enumerate().filter(|(i, _)| i % 2 == p).map(|(_, n)| n).sum();
                (by(0), by(1))
            })
            .collect();
        assert!(wins.iter().any(|&(a, b)| a > 0 && b > 0), "both clients won somewhere: {wins:?}");
    }
}

#[test]
fn fs_refuses_a_bad_list_before_making_anything() {
    let before = machine_state();
    let assert = conformance().args(["run", "--fs", "tmpfs,ntfs", "-r", "node"]).assert().code(2);
    let err = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(err.contains("--fs") && err.contains("ntfs") && err.contains("known: tmpfs"), "{err}");
    assert_eq!(before, machine_state());
    // --fs makes its own roots: --fs-root is refused with it
    conformance().args(["run", "--fs", "tmpfs", "--fs-root", "/tmp"]).assert().code(2);
    // an earlier --fs run's own results (one interrupted before the merged file) are kept
    let out = tempfile::tempdir().unwrap();
    let earlier = out.path().join("fs").join("tmpfs");
    std::fs::create_dir_all(&earlier).unwrap();
    std::fs::write(earlier.join("results.json"), "{}").unwrap();
    let assert = conformance().args(["run", "--fs", "tmpfs", "-r", "node", "--out"]).arg(out.path()).assert().code(2);
    let err = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(err.contains("earlier --fs run") && err.contains("--force"), "{err}");
    assert!(earlier.join("results.json").is_file(), "the earlier results are still there");
}

//! `conformance merge`: several runs (machines, file systems) in one results file.
//!
//! A merged file is an ordinary results file of schema [`SCHEMA`]: each cell carries the
//! label of the run it came from in [`Cell::machine`] and in its runtime label
//! (`node 20.20.2 [linux 6.1.0 ext4]`), so every report renders one table per runtime and
//! machine; [`RunInfo::machines`] lists the runs merged. Cells that disagree between machines
//! are found by [`Results::disagreements`].

use std::path::Path;

use crate::error::{Error, Result};
use crate::report::model::{Cell, MachineInfo, Results, RunInfo, SCHEMA};

/// The machine label of a single run: OS, kernel and scratch file-system type
/// (`linux 6.1.0 ext4`); for a file system `run --fs` made, only its name (`sshfs`, not
/// `fuse.sshfs`): the runs of one `--fs` share the machine, whose facts are in
/// [`RunInfo::machines`].
pub fn machine_label(ri: &RunInfo) -> String {
    match &ri.fs.made {
        Some(m) => m.kind.to_string(),
        None => format!("{} {} {}", ri.os, ri.kernel, ri.fs.fs_type),
    }
}

/// Merges runs, each given with the path it was read from (for [`MachineInfo::source`]).
///
/// A run that is itself merged keeps its cells' machines. Two runs with the same machine
/// label (two runs on one file system) get ` #2`, ` #3`, … appended to the later ones. The
/// merged `run_info` is the first run's, with every run's runtimes and controls (relabelled),
/// the machines, the summed duration and `os` set to `merged`.
///
/// Errors: [`Error::Usage`] when fewer than two runs are given; see [`merge_labelled`].
pub fn merge(runs: Vec<(String, Results)>) -> Result<Results> {
    if runs.len() < 2 {
        return Err(Error::Usage { flag: "merge".into(), message: "give at least two results files".into() });
    }
    merge_labelled(runs)
}

/// [`merge`] of one run or more (`run --fs` labels even a single file system's cells).
///
/// Errors: [`Error::Usage`] for no run; [`Error::Input`] naming a merged run whose machine is
/// already in the merge.
pub fn merge_labelled(runs: Vec<(String, Results)>) -> Result<Results> {
    if runs.is_empty() {
        return Err(Error::Usage { flag: "merge".into(), message: "give at least one results file".into() });
    }
    let mut info: Option<RunInfo> = None;
    let mut cells: Vec<Cell> = Vec::new();
    let mut against = Vec::new();
    let mut machines: Vec<MachineInfo> = Vec::new();
    let mut runtimes = Vec::new();
    let mut controls = Vec::new();
    let mut duration = 0.0;
    for (source, r) in runs {
        duration += r.run_info.duration_s;
        if !r.run_info.machines.is_empty() {
            // already merged: its cells keep their labels
            for m in &r.run_info.machines {
                if machines.iter().any(|x| x.label == m.label) {
                    return Err(Error::input(
                        Path::new(&source),
                        format!("machine '{}' is already in the merge; merge each run once", m.label),
                    ));
                }
            }
            machines.extend(r.run_info.machines.iter().cloned());
            runtimes.extend(r.run_info.runtimes.iter().cloned());
            controls.extend(r.run_info.controls.iter().cloned());
            cells.extend(r.cells);
            against.extend(r.against);
        } else {
            let base = machine_label(&r.run_info);
            let mut label = base.clone();
            let mut n = 1;
            while machines.iter().any(|m| m.label == label) {
                n += 1;
                label = format!("{base} #{n}");
            }
            let ri = &r.run_info;
            machines.push(MachineInfo {
                label: label.clone(),
                source: source.clone(),
                os: ri.os.clone(),
                os_version: ri.os_version.clone(),
                kernel: ri.kernel.clone(),
                arch: ri.arch.clone(),
                fs: ri.fs.clone(),
                date: ri.date.clone(),
            });
            let relabel = |l: &str| format!("{l} [{label}]");
            runtimes.extend(ri.runtimes.iter().cloned().map(|mut x| {
                x.label = relabel(&x.label);
                x
            }));
            controls.extend(ri.controls.iter().cloned().map(|mut x| {
                x.runtime = relabel(&x.runtime);
                x
            }));
            against.extend(r.against.into_iter().map(|mut a| {
                a.contenders.iter_mut().for_each(|s| s.runtime = relabel(&s.runtime));
                a
            }));
            cells.extend(r.cells.into_iter().map(|mut c| {
                c.runtime = relabel(&c.runtime);
                c.id = Cell::id_of(&c.runtime, &c.variant, c.scenario, c.target, c.source, c.contenders);
                c.machine = Some(label.clone());
                c
            }));
        }
        if info.is_none() {
            info = Some(r.run_info);
        }
    }
    let mut run_info = info.expect("at least one run");
    run_info.os = "merged".into();
    run_info.duration_s = duration;
    run_info.runtimes = runtimes;
    run_info.controls = controls;
    run_info.machines = machines;
    // each run asked for its own cells; comparisons fall back to what the merged file holds
    run_info.selection = None;
    // each run's steps took their own time on their own machine: summed they profile nothing
    run_info.phases = Vec::new();
    Ok(Results { schema: SCHEMA, run_info, cells, against })
}

#[cfg(test)]
mod tests {
    use super::{merge, Results};

    fn base() -> Results {
        crate::report::fixture("base.json")
    }

    #[test]
    fn two_file_systems_side_by_side() {
        let a = base();
        let mut b = base();
        b.run_info.fs.fs_type = "tmpfs".into();
        let i = b.cells.iter().position(|c| c.second().is_some()).unwrap();
        use crate::verdict::Outcome;
        let was = b.cells[i].outcome().unwrap();
        b.cells[i].second_mut().unwrap().outcome =
            if was == Outcome::Replaced { Outcome::Refused } else { Outcome::Replaced };
        let m = merge(vec![("a.json".into(), a.clone()), ("b.json".into(), b)]).unwrap();
        assert_eq!(m.cells.len(), 2 * a.cells.len());
        assert_eq!(m.run_info.machines.len(), 2);
        let labels: Vec<_> = m.run_info.machines.iter().map(|m| m.label.clone()).collect();
        assert_ne!(labels[0], labels[1]);
        assert!(m.cells[0].runtime.ends_with(&format!("[{}]", labels[0])), "{}", m.cells[0].runtime);
        let ids: std::collections::BTreeSet<_> = m.cells.iter().map(|c| &c.id).collect();
        assert_eq!(ids.len(), m.cells.len(), "ids unique");
        let d = m.disagreements();
        assert_eq!(d.len(), 2, "{d:?}");
        // the merged file reads back as any results file
        let text = crate::report::json::render(&m);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.json");
        std::fs::write(&p, text).unwrap();
        assert_eq!(crate::report::json::read(&p).unwrap(), m);
    }

    #[test]
    fn file_systems_the_run_made_are_labelled_by_name_and_their_answers_compared() {
        use crate::fs::FsKind;
        use crate::report::model::MadeFs;
        let made = |kind| MadeFs { kind, how: "test".into(), daemon: None };
        let mut a = base();
        a.run_info.fs.made = Some(made(FsKind::Ext4));
        let mut b = base();
        b.run_info.fs.fs_type = "fuse.sshfs".into();
        b.run_info.fs.made = Some(made(FsKind::Sshfs));
        // a race that held on ext4 lets two winners in on sshfs
        let i =
            b.cells.iter().position(|c| c.race().is_some_and(|r| r.verdict == crate::verdict::RaceVerdict::Exclusive));
        let i = i.expect("an exclusive race in the fixture");
        let race = b.cells[i].race_mut().unwrap();
        race.verdict = crate::verdict::RaceVerdict::MultipleWinners;
        for run in [race.natural.as_mut(), race.amplified.as_mut()].into_iter().flatten() {
            run.verdict = crate::verdict::RaceVerdict::MultipleWinners;
            run.stats.multi_winner_trials = 3;
        }
        let m = super::merge_labelled(vec![("a".into(), a), ("b".into(), b)]).unwrap();
        let labels: Vec<&str> = m.run_info.machines.iter().map(|m| m.label.as_str()).collect();
        assert_eq!(labels, ["ext4", "sshfs"]);
        let text = crate::report::answers::render_by_machine(&m, 200);
        let variant = &m.cells[i].variant;
        let line = text.lines().find(|l| l.contains(variant.as_str())).unwrap_or_else(|| panic!("{text}"));
        // the fixture's race is too short for a yes on ext4 (`? (-n 100)`); on sshfs it is a no
        assert!(
            line.contains("? (-n 100) on ext4") && line.contains("multiple-winners 3/") && line.ends_with(" on sshfs"),
            "{line}"
        );
        // one machine: nothing to compare
        assert!(crate::report::answers::render_by_machine(
            &super::merge_labelled(vec![("a".into(), base())]).unwrap(),
            100
        )
        .is_empty());
    }

    #[test]
    fn same_machine_twice_gets_numbered() {
        let m = merge(vec![("a".into(), base()), ("b".into(), base())]).unwrap();
        assert!(m.run_info.machines[1].label.ends_with(" #2"));
        assert!(m.disagreements().is_empty());
        assert!(merge(vec![("a".into(), base())]).is_err());
    }
}

//! A `race`'s plan: its contenders (runtime and variant per slot), their controls and trials.

use std::path::PathBuf;

use super::parse::usage;
use super::{check_contenders, nonce, Common, Paths, Shape};
use crate::cli::{RaceArgs, DEFAULT_ONESHOT_TRIALS, DEFAULT_TRIALS};
use crate::engine;
use crate::error::{Error, Result};
use crate::exec::contender::Mode;
use crate::matrix::Variant;
use crate::options::Options;
use crate::runtime::install::VersionRequest;
use crate::runtime::{Requested, Runtime};

/// A validated `race`: the contenders (runtime and variant per slot), their controls, the
/// trials and the engine options.
#[derive(Debug, Clone)]
pub struct RacePlan {
    /// The shared flags.
    pub common: Common,
    /// Per slot: the runtime (and version) and the variant it runs.
    pub slots: Vec<Slot>,
    /// Per slot, its family's detection control; `None` when a family has none.
    pub controls: Option<Vec<Variant>>,
    /// Counted trials per race mode: `--trials`, else [`Options::trials`], or
    /// [`Options::oneshot_trials`] when a one-shot runtime (cmd on Windows) takes part.
    pub trials: usize,
    /// The engine options (the defaults of `run`, one contender per slot, races only).
    pub options: Options,
    /// `--out`.
    pub out: Option<PathBuf>,
    /// `--json`.
    pub json: bool,
    /// The token nonce.
    pub nonce: String,
}

impl RacePlan {
    /// Validates `a` (with the folders of `paths`), then detects the amplifier.
    ///
    /// Errors: [`Error::Usage`] naming `--contender` (more than [`MAX_CONTENDERS`](crate::cli::MAX_CONTENDERS), fewer
    /// than two, not `RUNTIME:VARIANT`, a malformed `NAME@VERSION`, an unknown variant, a
    /// runtime that does not run the variant's family) or a shared flag ([`Common::new`]); [`Error::UnknownRuntime`] naming
    /// `--contender`; [`Error::Input`] for a malformed matrix.
    pub fn new(a: &RaceArgs, paths: &Paths) -> Result<RacePlan> {
        check_contenders(a.contenders.len(), "--contender")?;
        let common = Common::new(&a.power, &a.attempt, &a.scratch, paths, a.trials)?;
        let all = crate::matrix::load(paths.matrices.as_deref())?;
        let slots = a.contenders.iter().map(|item| parse_contender(item, &all)).collect::<Result<Vec<_>>>()?;
        if slots.len() < 2 {
            return Err(usage("--contender", "a race needs at least two contenders".into()));
        }
        let controls =
            slots.iter().map(|s| engine::control_for(&all, &s.variant.family).cloned()).collect::<Option<Vec<_>>>();
        // without --trials, the defaults of `run`
        let shape = Shape {
            contenders: slots.len(),
            trials: a.trials.unwrap_or(DEFAULT_TRIALS),
            oneshot_trials: a.trials.unwrap_or(DEFAULT_ONESHOT_TRIALS),
            race: true,
            contender_kind: a.contender_kind.kind(),
            ..Shape::default()
        };
        if a.contender_kind == crate::cli::ContenderKindArg::Thread {
            let first = &slots[0];
            if let Some(s) = slots.iter().find(|s| {
                s.runtime != first.runtime || s.version != first.version || s.variant.family != first.variant.family
            }) {
                return Err(usage(
                    "--contender-kind",
                    format!(
                        "thread contenders run in one probe process: every --contender must name the same runtime and API family ({}:{} and {}:{} differ)",
                        first.runtime, first.variant.family, s.runtime, s.variant.family
                    ),
                ));
            }
        }
        let options = common.options(shape, common.detect_amplifier(true));
        let trials = options.trials_for(
            slots
                .iter()
                .filter_map(|s| crate::runtime::adapter(s.runtime))
                .map(|ad| (ad.mode() == Mode::OneShot, ad.starts_cheaply())),
        );
        Ok(RacePlan {
            common,
            slots,
            controls,
            trials,
            options,
            out: a.out.clone(),
            json: a.json,
            nonce: nonce(jiff::Timestamp::now()),
        })
    }

    /// The runtimes to discover: each slot's, by name (found on `PATH`) or `NAME@VERSION`
    /// (repeats dropped), not yet located.
    pub fn requested(&self) -> Requested {
        let mut names: Vec<&'static str> = Vec::new();
        let mut versions: Vec<VersionRequest> = Vec::new();
        for s in &self.slots {
            match &s.version {
                None if !names.contains(&s.runtime) => names.push(s.runtime),
                Some(v) if !versions.iter().any(|x| x.text == v.text) => versions.push(v.clone()),
                _ => {}
            }
        }
        Requested { names: Some(names), explicit: Vec::new(), versions, libraries: Vec::new(), located: Vec::new() }
    }

    /// The runtime of `found` (discovered from [`RacePlan::requested`], located as `req`) that
    /// `slot` races on; `None` when it was not discovered.
    pub fn runtime_of<'a>(&self, slot: &Slot, req: &Requested, found: &'a [Runtime]) -> Option<&'a Runtime> {
        match &slot.version {
            None => found.iter().find(|r| r.name == slot.runtime && r.selector == slot.runtime),
            Some(v) => req.selected_version(&v.text, found),
        }
    }
}

/// One contender of a `race`.
#[derive(Debug, Clone)]
pub struct Slot {
    /// The runtime's registry name.
    pub runtime: &'static str,
    /// The version asked for (`-c bun@1.3.14:…`); `None`: the one found on `PATH`.
    pub version: Option<VersionRequest>,
    /// The variant it runs.
    pub variant: Variant,
}

/// One `--contender RUNTIME[@VERSION]:VARIANT` against the variants `all`. Errors: see
/// [`RacePlan::new`].
pub(super) fn parse_contender(item: &str, all: &[Variant]) -> Result<Slot> {
    let (rt, var) = item.split_once(':').ok_or_else(|| {
        usage("--contender", format!("'{item}' is not RUNTIME:VARIANT (e.g. node:node.writeFileSync.wx)"))
    })?;
    let version = rt.contains('@').then(|| VersionRequest::parse(rt, "--contender")).transpose()?;
    let name = rt.split('@').next().unwrap_or(rt).trim();
    let adapter = crate::runtime::adapter(name).ok_or_else(|| Error::UnknownRuntime {
        name: name.to_string(),
        flag: "--contender".into(),
        known: crate::runtime::known_names(),
    })?;
    // VARIANT@KIND: the variant with another of its kinds of source (`sources`)
    let (var, kind) = match var.split_once('@') {
        Some((v, k)) => (v, Some(k.trim())),
        None => (var, None),
    };
    let v = all.iter().find(|v| v.id == var.trim()).ok_or_else(|| {
        usage("--contender", format!("'{}' is not a variant (see `conformance variants`)", var.trim()))
    })?;
    let v = match kind {
        None => v.clone(),
        Some(k) => v.per_source().into_iter().find(|x| x.source.as_str() == k).ok_or_else(|| {
            let kinds: Vec<&str> = v.per_source().iter().map(|x| x.source.as_str()).collect();
            usage(
                "--contender",
                format!("'{}' takes no '{}' source (its sources: {})", v.id, k.escape_debug(), kinds.join(", ")),
            )
        })?,
    };
    if !adapter.families().contains(&v.family.as_str()) {
        return Err(usage(
            "--contender",
            format!(
                "{} does not run the {} family (it runs: {})",
                adapter.name(),
                v.family,
                adapter.families().join(", ")
            ),
        ));
    }
    Ok(Slot { runtime: adapter.name(), version, variant: v })
}

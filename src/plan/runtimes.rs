//! Getting the selected runtimes ready before a measurement: probes built or checked,
//! session probes started once for their hello, and what is cleaned up afterwards.

use super::{check_probes, parse_timeout, Common, Paths, Shape};
use crate::cli::AmplifyArg;
use crate::engine;
use crate::error::Result;
use crate::exec::contender::{Contender, Mode};
use crate::exec::protocol::check_hello;
use crate::matrix::Variant;
use crate::options::{Amplify, Options};
use crate::runtime::{ProbeContext, Runtime, Status};

/// Builds or checks each found runtime's probe, then starts each session-mode probe once and
/// waits for its `hello`, with the start-up and attempt timeouts of `opts`
/// ([`engine::timeouts_for`]: `--timeout`, at least [`MIN_STARTUP`](super::MIN_STARTUP) for the start-up): a
/// runtime counts as found only when its probe speaks the protocol (a `--runtime
/// node=/bin/true` is `broken`, not measured as all-crashed). A runtime whose preparation
/// fails becomes `broken` with the reason. Returns one warning line per protocol-2 probe
/// whose `hello` does not list some of the `selected` variants of its families
/// ([`check_hello`]): their cells will be `unsupported`, and the line says so up front.
/// Never fails.
pub fn ready_runtimes(found: &mut [Runtime], ctx: &ProbeContext, opts: &Options, selected: &[&Variant]) -> Vec<String> {
    let matrix: Vec<(&str, &str)> = selected.iter().map(|v| (v.family.as_str(), v.id.as_str())).collect();
    let mut warnings = Vec::new();
    // one session probe per runtime and family, and whose it is: (index in `found`, family)
    let mut pool: Vec<Contender> = Vec::new();
    let mut owners = Vec::new();
    prepare_each(found, ctx);
    for (i, rt) in found.iter_mut().enumerate().filter(|(_, r)| r.status == Status::Found) {
        if rt.adapter().mode() != Mode::Session {
            continue;
        }
        let t = engine::timeouts_for(rt.adapter(), opts);
        for family in rt.families.clone() {
            let launch = rt.adapter().launch(rt, family, ctx);
            owners.push((i, family));
            pool.push(Contender::new(Mode::Session, launch, ctx.scratch_top.clone(), t));
        }
    }
    // started all at once: the checks wait on runtimes loading, not on the CPU
    let started = crate::exec::contender::start_each(&mut pool);
    for (((i, family), c), fault) in owners.into_iter().zip(&pool).zip(started) {
        let rt = &mut found[i];
        if matches!(rt.status, Status::Broken(_)) {
            continue;
        }
        if let Some(a) = fault {
            let why = a.evidence.unwrap_or_default();
            rt.status = Status::Broken(format!("its {family} probe did not start: {why}"));
            continue;
        }
        let lacks = c.hello().and_then(|h| check_hello(h, &matrix)).map(|h| h.unknown_to_probe).unwrap_or_default();
        if !lacks.is_empty() {
            warnings.push(format!(
                "warn     {}: its {family} probe does not list {} selected variant(s) in its hello ({}); they will be unsupported",
                rt.label,
                lacks.len(),
                lacks.join(", ")
            ));
        }
    }
    warnings
}

/// Runs [`Adapter::prepare`](crate::runtime::Adapter::prepare) (probe builds and checks,
/// Wine's start) for every found runtime in `found`, the adapters at once — one thread each,
/// as a run of every runtime here waited on them one after another (Wine's start alone about
/// 2 s) — and the versions of one adapter one after another, since they share its probe's
/// build: the first makes it, the others find it. A runtime whose preparation fails becomes
/// [`Status::Broken`] with the reason.
fn prepare_each(found: &mut [Runtime], ctx: &ProbeContext) {
    let mut groups: Vec<(&str, Vec<&mut Runtime>)> = Vec::new();
    for rt in found.iter_mut().filter(|r| r.status == Status::Found) {
        match groups.iter_mut().find(|(name, _)| *name == rt.name) {
            Some((_, g)) => g.push(rt),
            None => groups.push((rt.name, vec![rt])),
        }
    }
    std::thread::scope(|s| {
        for (_, group) in groups {
            s.spawn(move || {
                for rt in group {
                    if let Err(why) = rt.adapter().prepare(rt, ctx) {
                        rt.status = Status::Broken(why);
                    }
                }
            });
        }
    });
}

/// What `conformance runtimes` needs to start each probe as `run` does before measuring
/// ([`ready_runtimes`]), with `run`'s default timeouts, so that `runtimes` says `found` only
/// for a runtime `run` would measure.
#[derive(Debug, Clone)]
pub struct RuntimesPlan {
    /// Where the probes are and the scratch folder goes (the system temp folder).
    pub common: Common,
    /// Engine options with `run`'s default timeouts (only the timeouts are used).
    pub options: Options,
    /// Every variant of the matrices, for the hello check.
    pub variants: Vec<Variant>,
}

impl RuntimesPlan {
    /// The plan for `paths`' probes, matrices and cache. Errors: [`Error::Usage`](crate::error::Error::Usage) naming
    /// `--probes` for a folder without `PROTOCOL.md`; [`Error::Input`](crate::error::Error::Input) for a malformed matrix.
    pub fn new(paths: &Paths) -> Result<RuntimesPlan> {
        if let Some(p) = &paths.probes {
            check_probes(p)?;
        }
        let variants = crate::matrix::load(paths.matrices.as_deref())?;
        let common = Common {
            probes: paths.probes.clone(),
            cache: paths.cache.clone(),
            fs_root: std::env::temp_dir(),
            fs_root_given: false,
            segment: None,
            timeout: parse_timeout(crate::cli::DEFAULT_TIMEOUT_SECS)?,
            hold_ms: crate::cli::DEFAULT_HOLD_MS,
            amplify: AmplifyArg::Off,
            amplify_delay_us: crate::exec::amplify::DEFAULT_DELAY_US,
            amplify_paths: crate::exec::amplify::DelayScope::Race,
            max_rate: None,
            max_trials: crate::cli::DEFAULT_MAX_TRIALS,
            offsets: None,
            second_client: None,
        };
        let options = common.options(Shape::default(), Amplify::Off);
        Ok(RuntimesPlan { common, options, variants })
    }
}

/// Undoes every found runtime's preparation (a persistent Wine server). Never fails.
pub fn cleanup_runtimes(found: &[Runtime], ctx: &ProbeContext) {
    for rt in found.iter().filter(|r| r.status == Status::Found) {
        rt.adapter().cleanup(rt, ctx);
    }
}

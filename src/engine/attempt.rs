//! One attempt's plumbing shared by every trial: its spec (paths spelled for the runtime) and
//! the checks that turn harness trouble or a name the runtime cannot spell into a
//! `harness-error` or `unsupported` attempt instead of an outcome.

use crate::exec::contender::Attempt;
use crate::exec::contender::Spec;
use crate::exec::scratch::spell;
use crate::exec::scratch::win32_name_problem;
use crate::exec::scratch::PathStyle;
use crate::matrix::SourceKind;
use crate::matrix::Variant;
use crate::report::model::ErrorInfo;
use crate::runtime::normalize;
use crate::runtime::FS_FAILURE_CODES;
use crate::snapshot::mark_name;
use crate::verdict::Report;
use std::path::Path;
use std::time::Duration;

pub(super) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

pub(crate) fn error_info(a: &Attempt) -> Option<ErrorInfo> {
    a.error.as_ref().map(|raw| ErrorInfo { code: normalize(raw).to_string(), raw: raw.clone() })
}

/// The attempt's spec. `target_dir` is the folder as the probe should see it (absolute or
/// relative); `source_dir` likewise for the source. A symbolic link's text is resolved
/// against the link's own folder, not the working folder, so symlink variants always get an
/// absolute source (the caller passes it).
pub(super) fn spec_for(
    v: &Variant,
    id: u64,
    target_dir: &Path,
    source_dir: &Path,
    style: PathStyle,
    k: usize,
    token: &str,
) -> Spec {
    let target = target_dir.join("target");
    let source = (v.source != SourceKind::None).then(|| spell(&source_dir.join(format!("src-{k}")), style));
    let mark = v.writes_mark().then(|| spell(&target.join(mark_name(token)), style));
    Spec {
        id,
        variant: v.id.clone(),
        target: spell(&target, style),
        source,
        token: token.to_string(),
        mark,
        hold_ms: 0,
        recipe: None,
        delay_us: 0,
    }
}

/// Makes an attempt whose call failed with a file-system failure ([`FS_FAILURE_CODES`]) a
/// harness error: a full, read-only or failing scratch file system says nothing about the call.
pub(super) fn fs_failure_is_harness_error(a: &mut Attempt) {
    if let Some(e) = error_info(a).filter(|e| FS_FAILURE_CODES.contains(&e.code.as_str())) {
        let why = format!(
            "the call failed with {} ({}): the scratch file system failed, not the call",
            e.code, e.raw.message
        );
        // the stamps and the error stay: they say what the call met
        let h = Attempt::harness_error(why);
        (a.report, a.evidence) = (h.report, h.evidence);
    }
}

/// For a runtime that names paths the Win32 way through Wine ([`PathStyle::Wine`]): why it
/// cannot name one of the attempt's paths (target, source, mark), in their absolute form
/// (a relative attempt runs in the scratch folder, so its whole path counts), or `None`.
/// Wine would act on another name (a trailing dot stripped, a `\` made a folder), so such an
/// attempt is `unsupported`, never run (see [`win32_name_problem`]).
pub(super) fn inexpressible(v: &Variant, style: PathStyle, dir: &Path, k: usize, token: &str) -> Option<Attempt> {
    if style != PathStyle::Wine {
        return None;
    }
    let target = dir.join("target");
    let mut paths = vec![target.clone()];
    if v.source != SourceKind::None {
        paths.push(dir.join(format!("src-{k}")));
    }
    if v.writes_mark() {
        paths.push(target.join(mark_name(token)));
    }
    paths
        .iter()
        .find_map(|p| win32_name_problem(p))
        .map(|why| Attempt::fault(Report::Unsupported, format!("cmd under Wine cannot name this path: {why}")))
}

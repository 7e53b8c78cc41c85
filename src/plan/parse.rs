//! The checks of single flags shared by `run` and `race`: variant and source patterns,
//! targets, timeouts, offsets, rates, folder names, contender counts, the probes folder.

use std::path::Path;
use std::time::Duration;

use globset::{Glob, GlobSetBuilder};

use crate::cli::MAX_CONTENDERS;
use crate::error::{Error, Result};
use crate::exec::scratch::TargetState;
use crate::matrix::{SourceKind, Variant};

pub(super) fn usage(flag: &str, message: String) -> Error {
    Error::Usage { flag: flag.into(), message }
}

/// Keeps the variants whose id matches any of the glob patterns (comma-separated or repeated);
/// a pattern may end in `@KIND` (`node.renameSync@empty-dir`), a source kind that
/// [`select_sources`] applies once the variants are one per kind. No `--variant` at all keeps
/// everything.
///
/// Errors: [`Error::Usage`] naming `--variant` for an empty pattern (`-v ''`, `-v 'a,,b'`), an
/// invalid pattern, an unknown source kind, or a pattern that matches nothing.
pub fn select_variants(all: Vec<Variant>, patterns: &[String]) -> Result<Vec<Variant>> {
    if patterns.is_empty() {
        return Ok(all);
    }
    let pats = variant_patterns(patterns)?;
    let mut b = GlobSetBuilder::new();
    for (p, _) in &pats {
        let g =
            Glob::new(p).map_err(|e| usage("--variant", format!("'{}' is not a valid glob: {e}", p.escape_debug())))?;
        let single = g.compile_matcher();
        if !all.iter().any(|v| single.is_match(&v.id)) {
            return Err(usage(
                "--variant",
                format!("'{}' matches no variant (see `conformance variants`)", p.escape_debug()),
            ));
        }
        b.add(g);
    }
    let set = b.build().map_err(|e| usage("--variant", e.to_string()))?;
    Ok(all.into_iter().filter(|v| set.is_match(&v.id)).collect())
}

/// `--variant` patterns split into their id glob and the source kind after a last `@`, if any.
/// Errors: [`Error::Usage`] naming `--variant` for an empty pattern or an unknown kind.
pub(super) fn variant_patterns(patterns: &[String]) -> Result<Vec<(String, Option<SourceKind>)>> {
    let mut out = Vec::new();
    for p in patterns.iter().flat_map(|p| p.split(',')).map(str::trim) {
        if p.is_empty() {
            let given = patterns.join(",");
            return Err(usage(
                "--variant",
                format!("'{}' has an empty pattern (use '*' for every variant)", given.escape_debug()),
            ));
        }
        let (glob, kind) = match crate::matrix::split_source_pattern(p) {
            (g, Some(k)) => {
                let kind = SourceKind::parse(k).ok_or_else(|| {
                    let known: Vec<&str> = SourceKind::ALL.iter().map(SourceKind::as_str).collect();
                    usage(
                        "--variant",
                        format!(
                            "'{}': unknown source kind '{}' (known: {})",
                            p.escape_debug(),
                            k.escape_debug(),
                            known.join(", ")
                        ),
                    )
                })?;
                (g, Some(kind))
            }
            (g, None) => (g, None),
        };
        out.push((glob.to_string(), kind));
    }
    Ok(out)
}

/// Of `variants` (one per source kind, [`Variant::per_source`], all matched by
/// [`select_variants`]), keeps those some pattern asks for: a pattern without `@KIND` takes
/// every kind of the variants it matches, one with `@KIND` only that kind. No `--variant`
/// keeps everything.
///
/// Errors: [`Error::Usage`] naming `--variant` when a `@KIND` pattern's variants take no such
/// source (naming the kinds they take).
pub fn select_sources(variants: Vec<Variant>, patterns: &[String]) -> Result<Vec<Variant>> {
    if patterns.is_empty() {
        return Ok(variants);
    }
    let pats: Vec<(globset::GlobMatcher, Option<SourceKind>, String)> = variant_patterns(patterns)?
        .into_iter()
        .map(|(g, k)| {
            let m = Glob::new(&g)
                .map_err(|e| usage("--variant", format!("'{}' is not a valid glob: {e}", g.escape_debug())))?;
            Ok((m.compile_matcher(), k, g))
        })
        .collect::<Result<_>>()?;
    for (m, kind, glob) in &pats {
        let Some(kind) = kind else { continue };
        let matched: Vec<&Variant> = variants.iter().filter(|v| m.is_match(&v.id)).collect();
        if !matched.iter().any(|v| v.source == *kind) {
            let mut kinds: Vec<&str> = matched.iter().map(|v| v.source.as_str()).collect();
            kinds.dedup();
            return Err(usage(
                "--variant",
                format!(
                    "'{}@{}': no variant it matches takes a {} source (they take: {})",
                    glob.escape_debug(),
                    kind.as_str(),
                    kind.as_str(),
                    kinds.join(", ")
                ),
            ));
        }
    }
    Ok(variants
        .into_iter()
        .filter(|v| pats.iter().any(|(m, k, _)| m.is_match(&v.id) && k.is_none_or(|k| k == v.source)))
        .collect())
}

/// `--target` as target states, in the order given, repeats dropped; `default` stands for
/// [`TargetState::DEFAULT`] and `all` for [`TargetState::ALL`]. Errors: [`Error::Usage`]
/// naming `--target` for an unknown state or an empty list.
pub fn parse_targets(s: &str) -> Result<Vec<TargetState>> {
    let mut out = Vec::new();
    for t in s.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let states: Vec<TargetState> = match t {
            "all" => TargetState::ALL.to_vec(),
            "default" => TargetState::DEFAULT.to_vec(),
            _ => vec![TargetState::parse(t).ok_or_else(|| {
                let known: Vec<&str> = TargetState::ALL.iter().map(|t| t.as_str()).collect();
                usage("--target", format!("unknown target state '{t}' (known: {}; or default, all)", known.join(", ")))
            })?],
        };
        for st in states {
            if !out.contains(&st) {
                out.push(st);
            }
        }
    }
    if out.is_empty() {
        return Err(usage("--target", "no target state given".into()));
    }
    Ok(out)
}

/// `--timeout` in seconds as a duration. Errors: [`Error::Usage`] naming `--timeout` unless it
/// is a number of seconds in (0, 3600].
pub fn parse_timeout(t: f64) -> Result<Duration> {
    if t.is_finite() && t > 0.0 && t <= 3600.0 {
        Ok(Duration::from_secs_f64(t))
    } else {
        Err(usage("--timeout", format!("{t} is not a number of seconds in (0, 3600]")))
    }
}

/// `--offsets` as microseconds, repeats dropped. Errors: [`Error::Usage`] naming `--offsets`
/// for an entry that is not a whole number of microseconds up to 1 s, or an empty list.
pub fn parse_offsets(raw: Option<&str>) -> Result<Option<Vec<u64>>> {
    let Some(raw) = raw else { return Ok(None) };
    let mut v = Vec::new();
    for part in raw.split(',').map(str::trim) {
        if part.is_empty() {
            return Err(usage("--offsets", format!("'{raw}' has an empty item (give offsets as 0,500,1000)")));
        }
        match part.parse::<u64>() {
            Ok(x) if x <= 1_000_000 => {
                if !v.contains(&x) {
                    v.push(x);
                }
            }
            _ => return Err(usage("--offsets", format!("'{part}' is not a number of microseconds from 0 to 1000000"))),
        }
    }
    if v.is_empty() {
        return Err(usage("--offsets", "no offset given".into()));
    }
    Ok(Some(v))
}

/// `--max-rate` as a probability. Errors: [`Error::Usage`] naming `--max-rate` when it is not
/// a number (or percentage) strictly between 0 and 1.
pub fn parse_max_rate(raw: Option<&str>) -> Result<Option<f64>> {
    let Some(raw) = raw else { return Ok(None) };
    let t = raw.trim();
    let parsed = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|x| x / 100.0),
        None => t.parse::<f64>(),
    };
    match parsed {
        Ok(r) if r > 0.0 && r < 1.0 => Ok(Some(r)),
        _ => Err(usage("--max-rate", format!("'{raw}' is not a rate between 0 and 1 (e.g. 0.01 or 1%)"))),
    }
}

/// The folder name every path passes through: the hostile name with `--hostile-paths`, else
/// `--path-segment`, else none. Errors: [`Error::Usage`] naming `--path-segment` when the
/// name is empty or not one path component.
pub fn parse_segment(hostile: bool, seg: Option<&str>) -> Result<Option<String>> {
    if hostile {
        return Ok(Some(crate::exec::scratch::HOSTILE_SEGMENT.to_string()));
    }
    let Some(s) = seg else { return Ok(None) };
    let mut comps = Path::new(s).components();
    match (comps.next(), comps.next()) {
        (Some(std::path::Component::Normal(_)), None) => Ok(Some(s.to_string())),
        _ => Err(usage("--path-segment", format!("'{s}' is not a single folder name"))),
    }
}

/// At most [`MAX_CONTENDERS`] contenders. Errors: [`Error::Usage`] naming `flag` when there
/// are more.
pub fn check_contenders(n: usize, flag: &str) -> Result<()> {
    if n > MAX_CONTENDERS as usize {
        return Err(usage(flag, format!("{n} contenders given; a race has at most {MAX_CONTENDERS}")));
    }
    Ok(())
}

/// Checks that `--probes` names a probes folder (one holding `PROTOCOL.md`). Errors:
/// [`Error::Usage`] naming `--probes`.
pub fn check_probes(probes: &Path) -> Result<()> {
    if probes.join("PROTOCOL.md").is_file() {
        Ok(())
    } else {
        Err(usage("--probes", format!("{} is not a probes folder (no PROTOCOL.md in it)", probes.display())))
    }
}

//! The second-comer scenario: the first comer's state is put in place, the target is read,
//! one contender makes its call (with an absolute, then a relative path), the target is read
//! again, and [`crate::verdict::classify_second`] judges.

use super::attempt::error_info;
use super::attempt::ms;
use super::trial::{run_trial, Slot, TrialEnd, TrialPlan, TrialSetup};
use super::CellBase;
use super::Measurement;
use crate::domain::Scenario;
use crate::domain::TargetState;
use crate::exec::contender::Attempt;
use crate::exec::contender::Contender;
use crate::exec::scratch::clear;
use crate::exec::scratch::source_name;
use crate::exec::scratch::spell;
use crate::exec::scratch::PathStyle;
use crate::exec::scratch::TARGET_NAME;
use crate::matrix::Variant;
use crate::report::model::CellResult;
use crate::report::model::Finding;
use crate::report::model::RelativeAttempt;
use crate::report::model::SecondComerResult;
use crate::verdict::classify_second_source;
use crate::verdict::Outcome;
use std::time::Instant;

/// One second-comer finding: the attempt with an absolute path and, if asked, again with a
/// relative one. `None` when the run was interrupted before both were made: a cell is never
/// built from an attempt cut short.
pub(super) fn second_comer_cell(
    base: &CellBase<'_>,
    c: &mut Contender,
    t: TargetState,
    style: PathStyle,
    m: &mut Measurement<'_>,
) -> Option<Finding> {
    let started = Instant::now();
    let v = base.v;
    let abs = second_comer(c, v, t, false, style, m)?;
    let relative = match m.opts.relative {
        true => {
            let r = second_comer(c, v, t, true, style, m)?;
            Some(RelativeAttempt { outcome: r.outcome, error: error_info(&r.attempt), evidence: r.attempt.evidence })
        }
        false => None,
    };
    let result = SecondComerResult {
        outcome: abs.outcome,
        error: error_info(&abs.attempt),
        relative,
        before: abs.before,
        after: abs.after,
        delivery: abs.attempt.delivery.clone(),
        returned: abs.returned,
    };
    let mut f = base.finding(Scenario::SecondComer, t, CellResult::SecondComer(Box::new(result)));
    f.evidence = abs.attempt.evidence;
    f.elapsed_ms = ms(started.elapsed());
    Some(f)
}

/// What one second-comer attempt produced.
struct SecondComer {
    outcome: Outcome,
    /// The target before and after, described.
    before: String,
    after: String,
    /// The call's returned value, described ([`crate::domain::Returned::describe`]).
    returned: Option<String>,
    attempt: Attempt,
}

impl SecondComer {
    /// An attempt the harness could not make or judge: a `harness-error`, with the reason.
    fn harness_error(why: String) -> SecondComer {
        let attempt = Attempt::harness_error(why);
        SecondComer {
            outcome: Outcome::HarnessError,
            before: String::new(),
            after: String::new(),
            returned: None,
            attempt,
        }
    }
}

/// One second-comer attempt: a trial of one slot (source and token index 1; the first
/// comer is 0) against `state`, read before and after; `None` when the run was interrupted
/// before or during it.
fn second_comer(
    c: &mut Contender,
    v: &Variant,
    state: TargetState,
    relative: bool,
    style: PathStyle,
    m: &mut Measurement<'_>,
) -> Option<SecondComer> {
    if crate::interrupt::requested() {
        return None;
    }
    let id = m.next_id();
    let first = format!("{}-first-{id}", m.nonce);
    let token = format!("{}-second-{id}", m.nonce);
    let (abs, rel) = match m.scratch.cell_dir() {
        Ok(d) => d,
        Err(e) => return Some(SecondComer::harness_error(format!("could not create a cell folder: {e}"))),
    };
    let slots = [Slot { variant: v, style, index: 1, token: token.clone(), recipe: None }];
    let setup = TrialSetup {
        dir: &abs,
        probe_dir: if relative { &rel } else { &abs },
        first: (state, &first),
        slots: &slots,
        plan: TrialPlan::release(1, 0),
        hold_ms: 0,
        snapshot_before: true,
        trash: None,
        second_client: None,
        during: None,
    };
    let end = run_trial(std::slice::from_mut(c), &setup, id);
    clear(&abs);
    let (attempt, before, after, source) = match end {
        TrialEnd::Interrupted => return None,
        TrialEnd::HarnessError(why) => return Some(SecondComer::harness_error(why)),
        TrialEnd::Released { mut attempts, before, after, sources, .. } => {
            (attempts.remove(0), before, after, sources.first().copied().flatten())
        }
        TrialEnd::NotReleased { fault, before, after } => (*fault, before, after, None),
    };
    let before = before.expect("asked for");
    let outcome = classify_second_source(&before, attempt.report, &after, &token, v.writes_mark(), source);
    // a returned path is named by what it is: the target or the source, as given or absolute
    let probe_dir = if relative { &rel } else { &abs };
    let forms = |name: &str| [spell(&probe_dir.join(name), style), spell(&abs.join(name), style)];
    let (target_forms, source_forms) = (forms(TARGET_NAME), forms(&source_name(state, 1)));
    let returned = attempt.returned.as_ref().map(|r| {
        let (t, s) = (&target_forms, &source_forms);
        r.describe(&[t[0].as_str(), t[1].as_str()], &[s[0].as_str(), s[1].as_str()], &token)
    });
    Some(SecondComer { outcome, before: before.describe(), after: after.describe(), returned, attempt })
}

#[cfg(test)]
mod tests {
    use super::{second_comer, Contender, Outcome, PathStyle, TargetState};
    use crate::engine::tests::variant;
    use crate::engine::Measurement;
    use crate::exec::fake::FakeCall;
    use crate::exec::scratch::Scratch;

    #[test]
    fn second_comers_with_absolute_and_relative_paths() {
        let mut scratch = Scratch::new(&std::env::temp_dir(), Some("sp ace 日本語")).unwrap();
        let mut c = Contender::fake(FakeCall::CreateNew, scratch.root().to_path_buf());
        let v = variant("fake.wx");
        let opts = crate::engine::tests::options(1);
        let mut m = Measurement::new(&opts, &mut scratch, "n1");
        for relative in [false, true] {
            let mut at = |t| second_comer(&mut c, &v, t, relative, PathStyle::Native, &mut m).unwrap().outcome;
            assert_eq!(at(TargetState::Absent), Outcome::Acquired, "relative: {relative}");
            assert_eq!(at(TargetState::File), Outcome::Refused, "relative: {relative}");
            assert_eq!(at(TargetState::EmptyDir), Outcome::Refused, "relative: {relative}");
            assert_eq!(at(TargetState::Dir), Outcome::Refused, "relative: {relative}");
        }
    }
}

//! What a run's plan says of itself: the `run --dry-run` listing ([`dry_run_text`]) and the
//! progress bar of `run` ([`PROGRESS_TEMPLATE`], [`progress_message`]), both read off the plan's
//! cells ([`CellPlan`]). Every label a runtime or matrix supplies is escaped
//! ([`table::escape_controls`]) before it reaches the terminal.

use std::fmt::Write as _;

use super::{CellPlan, DryRun, RaceShape};
use crate::report::model::Scenario;
use crate::report::table;

/// The progress bar of `run` (indicatif template): spinner, elapsed time, bar, cells done of
/// the plan's total, and [`progress_message`].
pub const PROGRESS_TEMPLATE: &str = "{spinner} [{elapsed_precise}] {bar:20} {pos}/{len} cells  {wide_msg}";

/// The progress bar of `run --thorough`, which takes as long as it needs: also the time left,
/// estimated from the cells done so far (indicatif's `{eta}`; race cells take longer than
/// second comers, so it is rough).
pub const PROGRESS_TEMPLATE_ETA: &str =
    "{spinner} [{elapsed_precise}] {bar:20} {pos}/{len} cells, about {eta} left  {wide_msg}";

/// The columns [`PROGRESS_TEMPLATE`] (or [`PROGRESS_TEMPLATE_ETA`] when `eta`) takes before
/// its message for a plan of `cells` cells: the spinner and a space (2), `[hh:mm:ss] ` (11),
/// the bar and a space (21), `pos/len cells  ` (9 + twice the digits of `cells`), and with
/// `eta` `, about 59m left` at its longest (16; indicatif's `{eta}` in its short form).
pub fn progress_prefix_width(cells: u64, eta: bool) -> usize {
    let digits = cells.max(1).ilog10() as usize + 1;
    2 + 11 + 21 + 9 + 2 * digits + if eta { 16 } else { 0 }
}

/// `message` fitted to `width` columns (as the terminal shows them, `unicode-width`): as it
/// is when it fits; else cut at the last space that leaves room for ` …`, which marks the
/// cut — a word is split only when the first one alone is wider than the room. The progress
/// bar's `{wide_msg}` cuts wherever the edge falls (`bun 1.4.5 · node.writeFileSy`), which
/// reads as a different call.
pub fn fit_message(message: &str, width: usize) -> String {
    if textwrap::core::display_width(message) <= width {
        return message.to_string();
    }
    let room = width.saturating_sub(2).max(1);
    let opts = textwrap::Options::new(room).word_splitter(textwrap::WordSplitter::NoHyphenation).break_words(true);
    let first = textwrap::wrap(message, opts).into_iter().next().unwrap_or_default();
    format!("{} …", first.trim_end())
}

/// What the progress bar says when `done` of `cells` (the plan's list, in measuring order)
/// are measured: the runtime, variant, scenario and target of the cell under way, e.g.
/// `bun 1.3.14 · node.writeFileSync.wx · race`; control characters escaped.
pub fn progress_message(cells: &[CellPlan], done: usize) -> String {
    let Some(c) = cells.get(done) else { return "writing results".to_string() };
    let what = match c.scenario {
        Scenario::SecondComer => format!("second comer on {}", c.target.as_str()),
        other => other.as_str().to_string(),
    };
    let variant = crate::matrix::Variant::label(&c.variant, c.source);
    table::escape_controls(&format!("{} · {variant} · {what}", c.runtime)).into_owned()
}

/// `0, 500, 1000 µs`.
fn offsets(v: &[u64]) -> String {
    let list: Vec<String> = v.iter().map(u64::to_string).collect();
    format!("{} µs", list.join(", "))
}

/// One line saying how a runtime's races run.
fn race_line(r: &RaceShape) -> String {
    let mut s = format!("races: {} contenders × {} trials per mode", r.contenders, r.trials);
    if let Some(max) = r.max_trials {
        let _ = write!(s, " (up to {max} with --max-rate)");
    }
    if r.natural {
        match &r.natural_offsets_us {
            Some(v) => {
                let _ = write!(s, "; natural at {}", offsets(v));
            }
            None => s.push_str("; natural at 0 µs and the warm-up's release spread"),
        }
    }
    match (&r.amplified_offsets_us, &r.amplified_unavailable) {
        (Some(v), _) => {
            let _ = write!(s, "; amplified at {}", offsets(v));
        }
        (None, Some(why)) => {
            let _ = write!(s, "; amplified not run: {why}");
        }
        (None, None) => {}
    }
    s
}

/// How a runtime's second-comer cells run, from its cells; `None` when there are none.
fn second_comer_line(cells: &[&CellPlan]) -> Option<String> {
    let mut targets: Vec<&str> = Vec::new();
    for c in cells.iter().filter(|c| c.scenario == Scenario::SecondComer) {
        if !targets.contains(&c.target.as_str()) {
            targets.push(c.target.as_str());
        }
    }
    let relative = cells.iter().any(|c| c.relative);
    (!targets.is_empty()).then(|| {
        let rel = if relative { "; each attempt repeated with a relative path" } else { "" };
        format!("second comer: one attempt per target ({}){rel}", targets.join(", "))
    })
}

/// One line per variant of `cells` (one runtime's, in order): its second-comer cells and
/// race, the detection control marked.
fn variant_lines(cells: &[&CellPlan]) -> Vec<String> {
    // one line per row of the tables: a variant with another kind of source is a row of its own
    let mut order: Vec<(&str, Option<crate::matrix::SourceKind>)> = Vec::new();
    for c in cells {
        if !order.contains(&(c.variant.as_str(), c.source)) {
            order.push((&c.variant, c.source));
        }
    }
    let labels: Vec<String> = order.iter().map(|(v, s)| crate::matrix::Variant::label(v, *s)).collect();
    let width = labels.iter().map(|v| v.chars().count()).max().unwrap_or(0);
    order
        .iter()
        .zip(&labels)
        .map(|((v, source), label)| {
            let mine: Vec<&&CellPlan> = cells.iter().filter(|c| c.variant == *v && c.source == *source).collect();
            let second = mine.iter().filter(|c| c.scenario == Scenario::SecondComer).count();
            let mut parts = Vec::new();
            if second > 0 {
                parts.push(format!("second-comer ×{second}"));
            }
            if let Some(race) = mine.iter().find(|c| c.scenario == Scenario::Race) {
                parts.push(if race.control { "race (detection control)".to_string() } else { "race".to_string() });
            }
            for c in mine.iter().filter(|c| c.scenario.is_handoff()) {
                parts.push(format!("{} (hand-off recipe)", c.scenario.as_str()));
            }
            let line = format!("  {label:<width$}  {}", parts.join(", "));
            table::escape_controls(&line).into_owned()
        })
        .collect()
}

/// The text of `run --dry-run`: each selected runtime (measured, or skipped with the reason),
/// how its races would run, its cells one variant a line, and the totals with the estimated
/// attempts.
pub fn dry_run_text(d: &DryRun) -> String {
    let mut s = String::new();
    let measured = d.runtimes.iter().filter(|r| r.measured).count();
    let _ = writeln!(
        s,
        "dry run: {}{} cells on {measured} runtime(s) would be measured; nothing was raced or written",
        if d.cells.iter().any(|c| c.conditional) { "up to " } else { "" },
        d.cells.len()
    );
    for r in &d.runtimes {
        let label = table::escape_controls(&r.info.label).into_owned();
        let mine: Vec<&CellPlan> = d.cells.iter().filter(|c| c.runtime == r.info.label).collect();
        let _ = writeln!(s);
        match (&r.info.reason, r.measured) {
            (Some(why), _) => {
                let _ = writeln!(s, "{label}: skipped, {}: {}", r.info.status.as_str(), table::escape_controls(why));
            }
            (None, false) => {
                let _ = writeln!(s, "{label}: skipped, it runs none of the selected variants");
            }
            (None, true) => {
                let conditional = mine.iter().filter(|c| c.conditional).count();
                if conditional > 0 {
                    let _ = writeln!(
                        s,
                        "{label}: {} cells, {conditional} of them races made only where the row's second comers \
                         leave its answer open (--races auto)",
                        mine.len()
                    );
                } else {
                    let _ = writeln!(s, "{label}: {} cells", mine.len());
                }
                if let Some(l) = second_comer_line(&mine) {
                    let _ = writeln!(s, "  {l}");
                }
                if let Some(race) = &r.race {
                    let _ = writeln!(s, "  {}", table::escape_controls(&race_line(race)));
                }
                for l in variant_lines(&mine) {
                    let _ = writeln!(s, "{l}");
                }
            }
        }
    }
    let a = d.attempts;
    let _ = writeln!(s);
    let _ =
        write!(s, "{} cells; estimated attempts: {} second-comer, {} race", d.cells.len(), a.second_comer, a.race_min);
    if a.race_max > a.race_min {
        let _ = write!(s, " (up to {}: conditional races, --max-rate)", a.race_max);
    }
    if a.handoff_cells > 0 {
        let _ = write!(s, ", and {} hand-off recipe(s)", a.handoff_cells);
    }
    let _ = writeln!(s, ", besides warm-up and discarded trials");
    let e = &d.seconds;
    // cells the earlier run has no time for make the figure a floor
    let range = if e.untimed > 0 {
        format!("at least {:.0} s", e.min_s)
    } else if e.max_s - e.min_s >= 1.0 {
        format!("{:.0}–{:.0} s", e.min_s, e.max_s)
    } else {
        format!("{:.0} s", e.max_s)
    };
    let from = if e.built_in {
        format!(
            "the committed baseline built into this binary ({}, measured on the project's 2-core Linux machine; \
             no earlier run here)",
            e.from.display()
        )
    } else {
        format!("the cells of {}", table::escape_controls(&e.from.display().to_string()))
    };
    // the built-in baseline keeps one time per call (its median over the baseline's runtimes)
    let by_call = if e.built_in {
        "by their call's median over the baseline's runtimes"
    } else {
        "by their call's on another runtime or version"
    };
    let _ = writeln!(
        s,
        "estimated time: {range} of measuring, from {from}: {} cells by their own time, {} {by_call}, {} by \
         their scenario's median{}; start-up and pairs not counted",
        e.same_cell,
        e.same_call,
        e.same_scenario,
        if e.untimed > 0 {
            format!(", {} untimed: their scenario was not measured there", e.untimed)
        } else {
            String::new()
        }
    );
    let _ = writeln!(s, "results would go to {}", table::escape_controls(&d.out.display().to_string()));
    s
}

#[cfg(test)]
mod tests {
    use super::{
        fit_message, progress_message, progress_prefix_width, CellPlan, Scenario, PROGRESS_TEMPLATE,
        PROGRESS_TEMPLATE_ETA,
    };
    use crate::exec::scratch::TargetState;

    /// The bar names the cell under way — the plan's next — and says when all are done.
    #[test]
    fn the_progress_message_names_the_cell_under_way() {
        let cell = |runtime: &str, variant: &str, scenario, target| CellPlan {
            id: String::new(),
            runtime: runtime.into(),
            variant: variant.into(),
            scenario,
            target,
            source: None,
            control: false,
            relative: false,
            race: None,
            conditional: false,
        };
        let cells = [
            cell("bun 1.3.14", "node.mkdirSync", Scenario::SecondComer, TargetState::EmptyDir),
            cell("bun 1.1.44", "node.mkdirSync", Scenario::Race, TargetState::Absent),
            cell("evil\u{1b}[2J", "v", Scenario::Race, TargetState::Absent),
        ];
        assert_eq!(progress_message(&cells, 0), "bun 1.3.14 · node.mkdirSync · second comer on empty-dir");
        assert_eq!(progress_message(&cells, 1), "bun 1.1.44 · node.mkdirSync · race");
        assert!(!progress_message(&cells, 2).contains('\u{1b}'));
        assert_eq!(progress_message(&cells, 3), "writing results");
        assert!(PROGRESS_TEMPLATE.contains("{pos}/{len} cells") && PROGRESS_TEMPLATE.contains("{elapsed_precise}"));
        assert!(PROGRESS_TEMPLATE_ETA.contains("{pos}/{len} cells") && PROGRESS_TEMPLATE_ETA.contains("{eta}"));
    }

    /// A message too long for the room is cut at a word, the cut marked; one that fits is
    /// left as it is; a first word wider than the room is split (nothing else fits).
    #[test]
    fn a_long_message_is_cut_at_a_word() {
        let m = "bun 1.4.5 · node.writeFileSync.wx · second comer on empty-dir";
        assert_eq!(fit_message(m, 200), m);
        assert_eq!(fit_message(m, m.chars().count()), m);
        assert_eq!(fit_message(m, 40), "bun 1.4.5 · node.writeFileSync.wx · …");
        assert_eq!(fit_message(m, 20), "bun 1.4.5 · …");
        let cut = fit_message("hand-offs: node.writeFileSync.wx", 12);
        assert_eq!(cut, "hand-offs: …");
        let long = fit_message("node.writeFileSync.wx", 10);
        assert!(long.ends_with(" …") && textwrap::core::display_width(&long) <= 10, "{long}");
        // Japanese runtime labels take two columns a character
        let wide = fit_message("ランタイム 一 二 三 四", 12);
        assert!(textwrap::core::display_width(&wide) <= 12, "{wide}");
    }

    /// What the bar itself draws (indicatif on a terminal of 80, 100 and 120 columns, a run's
    /// count of cells): a message fitted to the room [`progress_prefix_width`] leaves is drawn
    /// whole — indicatif cuts nothing of it — and, without the time left, starts exactly
    /// where the prefix ends.
    #[test]
    fn a_fitted_message_is_drawn_whole_by_the_bar() {
        use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle, TermLike};
        use std::sync::{Arc, Mutex};
        #[derive(Debug, Clone)]
        struct Screen(Arc<Mutex<Vec<String>>>, u16);
        impl TermLike for Screen {
            fn width(&self) -> u16 {
                self.1
            }
            fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
                Ok(())
            }
            fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
                Ok(())
            }
            fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
                Ok(())
            }
            fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
                Ok(())
            }
            fn write_line(&self, s: &str) -> std::io::Result<()> {
                self.write_str(s)
            }
            fn write_str(&self, s: &str) -> std::io::Result<()> {
                self.0.lock().unwrap().push(s.to_string());
                Ok(())
            }
            fn clear_line(&self) -> std::io::Result<()> {
                Ok(())
            }
            fn flush(&self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let long = "bun 1.4.5 · node.writeFileSync.wx · second comer on empty-dir, then more words than any terminal holds on one line of its width";
        for (width, eta) in [(80u16, false), (120, false), (100, true)] {
            let total = 2757u64;
            let screen = Screen(Arc::new(Mutex::new(Vec::new())), width);
            let bar =
                ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::term_like(Box::new(screen.clone())));
            let template = if eta { PROGRESS_TEMPLATE_ETA } else { PROGRESS_TEMPLATE };
            bar.set_style(ProgressStyle::with_template(template).unwrap());
            bar.set_position(1234);
            let prefix = progress_prefix_width(total, eta);
            let msg = fit_message(long, usize::from(width) - prefix);
            assert!(msg.ends_with(" …"), "{msg}");
            bar.set_message(msg.clone());
            bar.tick();
            let drawn =
                screen.0.lock().unwrap().iter().rev().find(|l| l.contains("cells")).cloned().expect("a drawn bar");
            let at = drawn.find(&msg).unwrap_or_else(|| panic!("{width} columns: {msg:?} not whole in {drawn:?}"));
            assert!(textwrap::core::display_width(&drawn) <= usize::from(width), "{drawn:?}");
            if !eta {
                assert_eq!(textwrap::core::display_width(&drawn[..at]), prefix, "{drawn:?}");
            }
        }
    }
}

//! The comparison table (runtime × variant), built once as text rows and rendered for the
//! terminal (tabled) and for Markdown ([`super::markdown`]).

use std::borrow::Cow;

use tabled::builder::Builder;
use tabled::settings::Style;

use super::model::{Cell, CellResult, CountersResult, ModeRun, Results, Row, Scenario};
use super::style::Tone;
use crate::matrix::Fact;
use crate::verdict::{Outcome, RaceMode, RaceVerdict};

/// The widest a terminal table cell is shown when the table is fitted to the terminal, in
/// columns; a longer cell is cut and ends in `…` (a 5 MB `call` must not pad every row of
/// `variants` to 5 MB).
pub const MAX_CELL_WIDTH: usize = 100;
/// The widest a cell is shown in the full layout (`--wide`, a pipe or a file), in columns: the
/// reader asked for every word (a mutex cell's reason runs to 159 in the baseline), yet a 5 MB
/// cell is cut (every row of the table is padded to its widest cell).
pub const WIDE_MAX_CELL_WIDTH: usize = 400;

/// `s` with every control character (C0 such as ESC, NUL, CR and LF; DEL; C1) written as a
/// Rust escape (`\u{1b}`), so that text from a runtime's `--version`, a probe or a matrix
/// cannot drive the terminal or break a table or a Markdown line. Returns `s` itself when it
/// has none.
pub fn escape_controls(s: &str) -> Cow<'_, str> {
    escape_controls_but(s, &[])
}

/// [`escape_controls`], keeping the control characters in `keep` as they are (a CSV keeps its
/// line breaks and tabs: quoting carries them).
pub fn escape_controls_but<'a>(s: &'a str, keep: &[char]) -> Cow<'a, str> {
    // bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069) reorder the text
    // shown after them (CVE-2021-42574, "Trojan Source"), so they are escaped as controls are
    let bidi = |c: char| matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    let escaped = |c: char| (c.is_control() || bidi(c)) && !keep.contains(&c);
    if !s.chars().any(escaped) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if escaped(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A table for the terminal: the first record is the header; every cell has its control
/// characters escaped ([`escape_controls`]) and is cut to [`MAX_CELL_WIDTH`] columns; the
/// table is fitted to the terminal's width ([`super::style::current`]). Returns the table
/// without a trailing newline.
pub fn terminal_table<R, C>(records: impl IntoIterator<Item = R>) -> String
where
    R: IntoIterator<Item = C>,
    C: AsRef<str>,
{
    toned_table(records.into_iter().map(|r| r.into_iter().map(|c| (c, None))), super::style::current())
}

/// [`terminal_table`] with a tone per cell, coloured as `style` says and fitted to its width:
/// the widest columns are narrowed first and their cells wrapped at spaces (textwrap; see
/// `column_widths`); a table that cannot fit keeps its narrowest form.
pub fn toned_table<R, C>(records: impl IntoIterator<Item = R>, style: super::style::TermStyle) -> String
where
    R: IntoIterator<Item = (C, Option<super::style::Tone>)>,
    C: AsRef<str>,
{
    // the cells as shown (escaped, cut), measured before colour is added
    let max = if style.width.is_some() { MAX_CELL_WIDTH } else { WIDE_MAX_CELL_WIDTH };
    let cells: Vec<Vec<(String, Option<super::style::Tone>)>> = records
        .into_iter()
        .map(|r| {
            r.into_iter()
                .map(|(c, tone)| {
                    let c = c.as_ref();
                    // cut far beyond the width first, so a huge cell is never measured whole
                    let head = match c.char_indices().nth(max * 4) {
                        Some((i, _)) => &c[..i],
                        None => c,
                    };
                    let cut: String = escape_controls(head).chars().take(max + 1).collect();
                    let cut = if cut.chars().count() > max {
                        format!("{}…", cut.chars().take(max - 1).collect::<String>())
                    } else {
                        cut
                    };
                    (cut, tone)
                })
                .collect()
        })
        .collect();
    let widths = style.width.map(|w| column_widths(&cells, w.max(super::style::MIN_WIDTH)));
    // too narrow for the table even with every cell wrapped to its longest word: one card a row
    if let (Some(w), Some((fitted, _))) = (style.width, &widths) {
        if fitted.iter().sum::<usize>() + 3 * fitted.len() + 1 > w.max(super::style::MIN_WIDTH) {
            return cards(&cells, style, w.max(super::style::MIN_WIDTH));
        }
    }
    let mut b = Builder::default();
    for r in &cells {
        b.push_record(r.iter().enumerate().map(|(i, (text, tone))| {
            // wrapped at spaces to the column's fitted width, then coloured line by line: the
            // escape sequences are ours, added after escaping, and never span a line
            let lines: Vec<String> = match &widths {
                Some((fitted, _)) if textwrap::core::display_width(text) > fitted[i] => {
                    textwrap::wrap(text, wrap_options(fitted[i])).into_iter().map(|l| l.into_owned()).collect()
                }
                _ => text.lines().map(str::to_string).collect(),
            };
            lines.iter().map(|l| style.paint(*tone, l)).collect::<Vec<_>>().join("\n")
        }));
    }
    let mut t = b.build();
    t.with(Style::sharp());
    t.to_string()
}

/// How a cell is wrapped to `width` columns: at spaces only (an outcome word such as
/// `multiple-winners` or a path is never split at its hyphen), a word wider than the column
/// broken inside.
fn wrap_options(width: usize) -> textwrap::Options<'static> {
    textwrap::Options::new(width.max(1)).break_words(true).word_splitter(textwrap::WordSplitter::NoHyphenation)
}

/// The narrowest a header cell is wrapped to, in columns (`safe as` / `a lock`).
const HEADER_MIN: usize = 8;
/// The narrowest the first column (the row's name) is wrapped to, in columns: a longer word
/// in it is broken.
const FIRST_COLUMN_MIN: usize = 24;

/// `cells` (the first record the header) as one card per row, for a terminal too narrow for the
/// table: the row's first cell on a line of its own, then `header: value` for the others,
/// separated by `; ` and wrapped to `width` under a two-space indent. Returns the cards
/// without a trailing newline.
fn cards(cells: &[Vec<(String, Option<super::style::Tone>)>], style: super::style::TermStyle, width: usize) -> String {
    let Some((header, rows)) = cells.split_first() else { return String::new() };
    let mut out = Vec::new();
    for r in rows {
        let Some(((name, tone), rest)) = r.split_first() else { continue };
        out.push(style.paint(*tone, &name.replace('\n', " ")));
        let items: Vec<String> = rest
            .iter()
            .zip(header.iter().skip(1))
            .map(|((v, tone), (h, _))| {
                format!("{}: {}", h.replace('\n', " "), style.paint(*tone, &v.replace('\n', " ")))
            })
            .collect();
        // textwrap measures without the colour codes; first fit, because optimal fit lets a line
        // run past the width rather than leave one short (`call:` alone before a long call)
        let opts = textwrap::Options::new(width)
            .initial_indent("  ")
            .subsequent_indent("    ")
            .word_splitter(textwrap::WordSplitter::NoHyphenation)
            .wrap_algorithm(textwrap::WrapAlgorithm::FirstFit);
        out.extend(textwrap::wrap(&items.join("; "), opts).into_iter().map(|l| l.into_owned()));
    }
    out.join("\n")
}

/// The content width of each column of `cells` so that the table fits `total` columns (its
/// borders and padding included): `(fitted, full)`. One column at a time gives up a column:
/// the one whose cells then take the fewest new lines (the widest of those), never below its
/// longest word (the first column, which names the row, below
/// [`FIRST_COLUMN_MIN`] only when whole words cannot fit). A table whose words alone are wider than
/// `total` keeps them whole and is wider. The first record is the header, kept on one line.
fn column_widths(cells: &[Vec<(String, Option<super::style::Tone>)>], total: usize) -> (Vec<usize>, Vec<usize>) {
    let n = cells.iter().map(Vec::len).max().unwrap_or(0);
    let width = |s: &str| s.lines().map(textwrap::core::display_width).max().unwrap_or(0);
    let word = |s: &str| s.split_whitespace().map(textwrap::core::display_width).max().unwrap_or(0);
    let mut full = vec![0; n];
    let mut min = vec![1; n];
    for (row, r) in cells.iter().enumerate() {
        for (i, (c, _)) in r.iter().enumerate() {
            full[i] = full[i].max(width(c));
            // a header keeps a few words a line: `safe as a lock` in four lines reads as four words
            let least = if row == 0 { word(c).max(width(c).min(HEADER_MIN)) } else { word(c) };
            min[i] = min[i].max(least);
        }
    }
    // "│ a │ b │": one separator per column and one more, one space each side of a cell
    let room = total.saturating_sub(3 * n + 1);
    // only when whole words cannot fit may the first column break a long name
    // (`node.existsSync+writeFileSync`) inside it
    let first_word = min.first().copied().unwrap_or(0);
    if min.iter().sum::<usize>() > room {
        if let Some(first) = min.first_mut() {
            *first = (*first).min(FIRST_COLUMN_MIN);
        }
    }
    // the lines column `i` takes over all rows at width `w`
    let lines = |i: usize, w: usize| -> usize {
        cells.iter().filter_map(|r| r.get(i)).map(|(c, _)| textwrap::wrap(c, wrap_options(w)).len()).sum()
    };
    let mut fitted = full.clone();
    let mut now: Vec<usize> = (0..n).map(|i| lines(i, fitted[i])).collect();
    while fitted.iter().sum::<usize>() > room {
        // the column a column narrower costs the fewest new lines; of those the widest. The
        // first column breaks a name inside (`node.promises.writeFile.` / `wx`: no longer
        // found by a search) only once every other column is at its longest word
        let narrowable =
            |i: usize, breaking_names: bool| fitted[i] > min[i] && (breaking_names || i > 0 || fitted[i] > first_word);
        let breaking_names = !(0..n).any(|i| narrowable(i, false));
        let pick = (0..n)
            .filter(|&i| narrowable(i, breaking_names))
            .map(|i| {
                let after = lines(i, fitted[i] - 1);
                (i, after, after - now[i].min(after))
            })
            .min_by_key(|&(i, _, more)| (more, std::cmp::Reverse(fitted[i]), std::cmp::Reverse(i)));
        match pick {
            Some((i, after, _)) => {
                fitted[i] -= 1;
                now[i] = after;
            }
            None => break,
        }
    }
    (fitted, full)
}

/// Text of a second-comer cell: the outcome, the normalised error code when the call failed,
/// and the relative-path outcome when it differs (`refused EEXIST`, `kept (rel: refused)`).
pub fn second_text(c: &Cell) -> String {
    let mut s = c.word().to_string();
    let Some(sc) = c.second() else { return s };
    if let (o, Some(e)) = (sc.outcome, &sc.error) {
        if matches!(o, Outcome::Refused | Outcome::Failed | Outcome::Damaged) {
            s.push(' ');
            s.push_str(&e.code);
        }
    }
    if let (true, Some(d)) = (c.show.contains(&Fact::Delivery), &sc.delivery) {
        s.push_str(&format!(" ({d})"));
    }
    if let (true, Some(r)) = (c.show.contains(&Fact::Returned), &sc.returned) {
        s.push_str(&format!(" → returned {r}"));
    }
    if let Some(r) = &sc.relative {
        if r.outcome != sc.outcome {
            s.push_str(&format!(" (rel: {})", r.outcome.as_str()));
        }
    }
    s
}

/// A run's count for the cell's verdict kind: multi-winner trials for `multiple-winners`
/// (and for `exclusive`, where it is 0), lost-update, no-winner or faulty trials for those.
fn count_for(v: RaceVerdict, m: &ModeRun) -> usize {
    // a cell made inconclusive by the other run: this run's multi-winner trials
    let v = if v == RaceVerdict::Inconclusive && m.verdict != v { RaceVerdict::MultipleWinners } else { v };
    m.stats.trials_showing(v)
}

/// Per ordering, the multi-winner trials: `+0: 50/50, +500: 48/50, +1000: 20/50, +2000: 0/50`
/// (empty when the run swept one ordering).
pub fn orderings_text(m: &ModeRun) -> String {
    m.orderings
        .iter()
        .map(|o| format!("+{}: {}/{}", o.offset_us, o.stats.multi_winner_trials, o.stats.trials))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A percentage for tables: `1.5%`, `0.30%`, `100%`.
pub fn pct(p: f64) -> String {
    let x = p * 100.0;
    if x >= 10.0 {
        format!("{x:.0}%")
    } else if x >= 1.0 {
        format!("{x:.1}%")
    } else {
        format!("{x:.2}%")
    }
}

/// One run's counts with their bound: `0/200 < 1.5%` (one-sided 95% upper bound, no
/// multi-winner trial) or `48/200, 95% CI 18–31%` (Clopper–Pearson), or `n/T` for other kinds.
pub fn counts_text(m: &ModeRun) -> String {
    let st = &m.stats;
    match m.verdict {
        RaceVerdict::Exclusive => format!("0/{} < {}", st.clean_trials, pct(st.multi_winner_upper95)),
        RaceVerdict::MultipleWinners => match st.multi_winner_ci95 {
            Some([lo, hi]) => format!("{}/{}, 95% CI {}–{}", st.multi_winner_trials, st.trials, pct(lo), pct(hi)),
            None => format!("{}/{}", st.multi_winner_trials, st.trials),
        },
        v => format!("{}/{}", count_for(v, m), st.trials),
    }
}

/// Text of a race cell: the verdict, then each run's count of trials showing it, the deciding
/// run first, with the bound of an `exclusive` one; a failing run that swept release offsets
/// shows the ordering that found the failure at the highest rate:
/// `multiple-winners (amp 50/50 at +0 µs; nat 48/200)`, `exclusive (amp 0/200 < 1.5%; nat 0/200)`,
/// `inconclusive: weak race: control caught 12/100 (amplified)`.
pub fn race_text(c: &Cell) -> String {
    match c.race() {
        Some(r) => race_result_text(r),
        None => "?".into(),
    }
}

/// One line per race of two rows against each other (`run --against`): `node node.mkdirSync vs
/// mono dotnet.Directory.Move (dir): multiple-winners (nat 1/10 at +0 µs; …) — mono
/// dotnet.Directory.Move's doing`, failures first, with whose doing a failure was where the
/// trials tell one side alone ([`crate::verdict::answer::at_fault`]) and, for an `exclusive`
/// race one call won alone (` — one-sided: deno deno.statSync+renameSync won all 100`,
/// [`crate::verdict::answer::one_sided`]), that it vouches for nothing; control characters
/// escaped.
/// Empty when the results hold none.
pub fn against_lines(results: &Results) -> Vec<String> {
    let mut races: Vec<&super::model::AgainstRace> = results.against.iter().collect();
    races.sort_by_key(|a| !crate::verdict::is_disproof(a.race.verdict));
    let several = results.kinds_with_several_rows();
    races
        .iter()
        .map(|a| {
            let sides: Vec<String> = a.contenders.iter().map(|s| s.label_among(&several)).collect();
            let runs = a.race.run_stats();
            // whose doing a failure was, where the trials tell one side alone
            let whose = match crate::verdict::answer::at_fault(&runs) {
                [true, false] => sides.first(),
                [false, true] => sides.get(1),
                _ => None,
            };
            let whose = whose.map(|w| format!(" — {w}'s doing")).unwrap_or_default();
            // an exclusive race one call won alone vouches for nothing
            let lopsided = match (a.race.verdict, a.race.deciding()) {
                (RaceVerdict::Exclusive, Some(m)) => crate::verdict::answer::one_sided(&m.stats)
                    .and_then(|(side, n)| Some(format!(" — one-sided: {} won all {n}", sides.get(side)?)))
                    .unwrap_or_default(),
                _ => String::new(),
            };
            let line =
                format!("{} ({}): {}{whose}{lopsided}", sides.join(" vs "), a.kind.as_str(), race_result_text(&a.race));
            escape_controls(&line).into_owned()
        })
        .collect()
}

/// The races of two rows against each other as a block under its heading (`against other
/// parties' calls: …`), with a blank line before, each line wrapped as `style` says; empty
/// when there are none.
pub fn against_block(r: &Results, style: super::style::TermStyle) -> String {
    let lines: Vec<String> = against_lines(r).iter().map(|l| style.note(l)).collect();
    if lines.is_empty() {
        return String::new();
    }
    let head = style
        .note("against other parties' calls (rows that held against themselves, raced in pairs, one contender each)");
    format!("\n{head}\n{}\n", lines.join("\n"))
}

/// The race column's text for race result `c`: the verdict and each run's counts.
pub fn race_result_text(c: &super::model::RaceResult) -> String {
    let v = c.verdict;
    // not a measurement: no counts beside it (the reason is in the cell's evidence)
    if (c.natural.is_none() && c.amplified.is_none()) || v == RaceVerdict::HarnessError {
        return v.as_str().into();
    }
    let judged = if c.weak_race.is_some() { RaceVerdict::Exclusive } else { v };
    let part = |name: &str, m: &ModeRun, deciding: bool| {
        let n = count_for(judged, m);
        if deciding && judged == RaceVerdict::Exclusive && m.verdict == RaceVerdict::Exclusive {
            format!("{name} 0/{} < {}", m.stats.clean_trials, pct(m.stats.multi_winner_upper95))
        } else if m.verdict == judged && m.found_at_offset_us.is_some() {
            // the ordering that found the failure at the highest rate: how narrow the window is
            let (n, t, at) = m.strongest();
            format!("{name} {n}/{t} at +{} µs", at.unwrap_or(0))
        } else {
            format!("{name} {n}/{}", m.stats.trials)
        }
    };
    let mut parts = Vec::new();
    let amp_first = c.decided_by != RaceMode::Natural;
    let amp = c.amplified.as_ref().map(|m| part("amp", m, amp_first));
    let nat = c.natural.as_ref().map(|m| part("nat", m, !amp_first));
    if amp_first {
        parts.extend(amp);
        parts.extend(nat);
    } else {
        parts.extend(nat);
        parts.extend(amp);
    }
    // off by request, or skipped because the natural race decided (said once per runtime)
    if c.amplified.is_none() && c.amplified_unavailable.as_ref().is_some_and(crate::domain::NoAmplified::is_unavailable)
    {
        parts.push("amp unavailable".into());
    }
    if c.interrupted {
        parts.push("interrupted".into());
    }
    match &c.weak_race {
        Some(w) => format!("{} ({w}; {})", v.as_str(), parts.join("; ")),
        None => format!("{} ({})", v.as_str(), parts.join("; ")),
    }
}

/// The race column of `row`, which has no race cell: `not raced (--races all)` in a run that
/// raced only each call's plain form (`run_info.races` is `core`); `not raced (second comer
/// failed)` in a run that raced only the rows their second comers left open (`auto`) where
/// this row's ruled it out; `-` otherwise.
pub fn unraced_text(results: &Results, row: &Row<'_>) -> &'static str {
    use crate::domain::RaceScope;
    match results.run_info.races {
        Some(RaceScope::Core) => "not raced (--races all)",
        Some(RaceScope::Auto) if !crate::verdict::needs_race(&row.lock_inputs().0) => "not raced (second comer failed)",
        _ => "-",
    }
}

/// "yes", "no" or "?"; a `?` that a flag would settle names it ([`Row::settled_by`]):
/// `? (--races all)`, `? (-n 100)`. `results` is the file the row is from.
pub fn safe_text(results: &Results, r: &Row<'_>) -> String {
    match r.safe() {
        Some(true) => "yes".into(),
        Some(false) => "no".into(),
        None => match r.settled_by(results.run_info.races == Some(crate::domain::RaceScope::Core)) {
            Some(flag) => format!("? ({flag})"),
            None => "?".into(),
        },
    }
}

/// The race column header for a runtime: `race 3×200` when every race cell agrees.
pub fn race_header(rows: &[Row<'_>]) -> String {
    let shapes: Vec<(usize, usize)> = rows
        .iter()
        .filter_map(|r| r.race)
        .filter_map(|c| c.race())
        .flat_map(|c| c.natural.iter().chain(c.amplified.iter()))
        .map(|m| (m.stats.contenders, m.stats.trials))
        .collect();
    match shapes.first() {
        Some(&(k, t)) if shapes.iter().all(|s| *s == (k, t)) => format!("race {k}×{t}"),
        _ => "race".into(),
    }
}

/// Header and rows of one runtime's table, as text. `with_call` adds the call column.
pub fn text_rows(results: &Results, runtime: &str, with_call: bool) -> (Vec<String>, Vec<Vec<String>>) {
    let targets = results.targets();
    let rows = results.rows(runtime);
    let mut header = vec!["variant".to_string()];
    if with_call {
        header.push("call".into());
    }
    header.extend(targets.iter().map(|t| t.as_str().to_string()));
    let races = results.has_races();
    if races {
        header.push(race_header(&rows));
    }
    header.push("safe as a lock".into());
    let mut out = Vec::new();
    for r in &rows {
        let label = r.label();
        let mut line = vec![if r.anti_pattern { format!("{label} (anti-pattern)") } else { label }];
        if with_call {
            line.push(r.call.to_string());
        }
        for t in &targets {
            line.push(r.second.get(t).map_or_else(|| "-".into(), |c| second_text(c)));
        }
        if races {
            line.push(r.race.map_or_else(|| unraced_text(results, r).into(), race_text));
        }
        line.push(safe_text(results, r));
        out.push(line);
    }
    (header, out)
}

/// What `report` prints in a terminal for `r` (`report --format table`): the answer lists
/// ([`super::answers::render_styled`]), then [`render_report`], both as `style` says. The
/// `terminal` marker of `conformance docs` renders the same at a fixed width.
pub fn render_with_answers(r: &Results, style: super::style::TermStyle) -> String {
    format!("{}{}", super::answers::render_styled(r, style), render_report(r, style))
}

/// The whole report as terminal text (`report --format table`): one table per runtime row
/// label (per machine in a merged file) with its race lines, then the hand-off tables. In a
/// merged file, cells that disagree between machines ([`Results::disagreements`]) are marked
/// `≠` and listed at the end with each machine's word.
pub fn render_report(r: &Results, style: super::style::TermStyle) -> String {
    let mut s = String::new();
    let differ = r.disagreements();
    for rt in r.measured_runtimes() {
        if r.rows(rt).is_empty() {
            continue;
        }
        let label = escape_controls(rt);
        let (header, mut rows) = text_rows(r, rt, false);
        if !differ.is_empty() {
            mark_rows(r, rt, &differ, &mut rows);
        }
        s += &format!("\n{label}\n{}\n", runtime_table(r, rt, header, rows, style));
        for l in race_lines(r, rt) {
            s += &format!("{}\n", style.note(&l));
        }
    }
    for scenario in Scenario::HANDOFFS {
        if let Some(t) = render_scenario(r, scenario, style) {
            s += &format!("\n{} (hand-off: counted from the files)\n{t}\n", scenario.as_str());
        }
    }
    s += &against_block(r, style);
    let by_machine = super::answers::render_by_machine(r, super::answers::ANSWER_WIDTH);
    if !by_machine.is_empty() {
        s += &format!("\n{by_machine}");
    }
    if !differ.is_empty() {
        s += &format!("\n{}", disagreement_text(r));
    }
    s
}

/// The race cell's text for a table fitted to a terminal: the verdict and the deciding run's
/// count over all its trials, as the answer lists give it, with the bound of an `exclusive`
/// one (`exclusive (amp 0/100 < 3.0%)`, `multiple-winners (nat 3/10)`); the other run, the
/// strongest ordering and the weak-race reason stay in
/// [`race_result_text`] (`--wide`, summary.md, results.json).
pub fn race_compact_text(c: &super::model::RaceResult) -> String {
    let v = c.verdict;
    let deciding = match c.decided_by {
        RaceMode::Natural => c.natural.as_ref().map(|m| ("nat", m)),
        _ => c.amplified.as_ref().map(|m| ("amp", m)).or(c.natural.as_ref().map(|m| ("nat", m))),
    };
    match deciding {
        Some((name, m)) if v != RaceVerdict::HarnessError && c.weak_race.is_none() => {
            if v == RaceVerdict::Exclusive && m.verdict == RaceVerdict::Exclusive {
                format!("{} ({name} 0/{} < {})", v.as_str(), m.stats.clean_trials, pct(m.stats.multi_winner_upper95))
            } else {
                format!("{} ({name} {}/{})", v.as_str(), count_for(v, m), m.stats.trials)
            }
        }
        _ => race_result_text(c),
    }
}

/// `rows` (from [`text_rows`] without the call column) with the tone of each cell, from the
/// cells' own verdicts: a second comer's outcome, the race verdict, the row's answer; with
/// `compact`, the race cells in [`race_compact_text`].
fn toned_rows(r: &Results, runtime: &str, rows: Vec<Vec<String>>, compact: bool) -> Vec<Vec<(String, Option<Tone>)>> {
    let targets = r.targets();
    r.rows(runtime)
        .iter()
        .zip(rows)
        .map(|(row, line)| {
            line.into_iter()
                .enumerate()
                .map(|(i, text)| {
                    let tone = match i {
                        0 => None,
                        i if i <= targets.len() => {
                            row.second.get(&targets[i - 1]).and_then(|c| c.outcome()).and_then(Tone::of_outcome)
                        }
                        i if i == targets.len() + 1 && r.has_races() => {
                            let race = row.race.and_then(|c| c.race());
                            if let (true, Some(x)) = (compact, race) {
                                return (race_compact_text(x), Tone::of_race(x.verdict));
                            }
                            race.and_then(|x| Tone::of_race(x.verdict))
                        }
                        _ => Some(Tone::of_answer(row.safe())),
                    };
                    (text, tone)
                })
                .collect()
        })
        .collect()
}

/// One runtime's rows as a terminal table, toned and fitted as `style` says.
fn runtime_table(
    r: &Results,
    runtime: &str,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    style: super::style::TermStyle,
) -> String {
    let toned = toned_rows(r, runtime, rows, style.width.is_some());
    let header = header.into_iter().map(|h| (h, None));
    toned_table(std::iter::once(header.collect::<Vec<_>>()).chain(toned), style)
}

/// Appends ` ≠` to the texts of `rows` (from [`text_rows`] without the call column) whose
/// cells are in `differ`.
fn mark_rows(r: &Results, runtime: &str, differ: &std::collections::BTreeSet<&str>, rows: &mut [Vec<String>]) {
    let targets = r.targets();
    for (row, line) in r.rows(runtime).iter().zip(rows.iter_mut()) {
        for (i, t) in targets.iter().enumerate() {
            if row.second.get(t).is_some_and(|c| differ.contains(c.id.as_str())) {
                line[1 + i] += " ≠";
            }
        }
        if row.race.is_some_and(|c| differ.contains(c.id.as_str())) {
            line[1 + targets.len()] += " ≠";
        }
    }
}

/// The cells that disagree between machines, one line per (runtime name, variant, scenario,
/// target) with each machine's word: `machines disagree: node/v/second-comer/file: replaced
/// [linux 6.1 ext4], refused [linux 6.1 tmpfs]`. Where the runs measured different versions of
/// the runtime, the line says so and names each one, since the version may be what changed:
/// `versions disagree: node/v/race/absent: exclusive [node 20.20.2; linux …], multiple-winners
/// [node 22.1.0; linux …]`. Empty when none disagree.
pub fn disagreement_text(r: &Results) -> String {
    disagreeing_groups(r)
        .iter()
        .map(|(k, (what, cells))| {
            let versions = *what == Disagreement::Versions;
            let words: Vec<String> = cells
                .iter()
                .map(|c| {
                    let m = escape_controls(c.machine.as_deref().unwrap_or("?")).into_owned();
                    match versions {
                        true => {
                            let v = format!("{} {}", c.runtime_name, c.runtime_version);
                            format!("{} [{}; {m}]", c.word(), escape_controls(&v))
                        }
                        false => format!("{} [{m}]", c.word()),
                    }
                })
                .collect();
            format!("{}: {}: {}\n", what.as_str(), escape_controls(k), words.join(", "))
        })
        .collect()
}

/// How the merged runs that disagree on a cell differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disagreement {
    /// They measured the same version of the runtime on different machines or file systems.
    Machines,
    /// They measured different versions of the runtime: the version may be what changed.
    Versions,
}

impl Disagreement {
    /// How the tables and the HTML heatmap say it (`versions disagree`).
    pub fn as_str(self) -> &'static str {
        match self {
            Disagreement::Machines => "machines disagree",
            Disagreement::Versions => "versions disagree",
        }
    }
}

/// The cells of `r` that disagree between merged runs ([`Results::disagreements`]) by key
/// (runtime name, variant, scenario, target), each key with how its runs differ: by version
/// where any cell's runtime version differs from the first's (the version, not the row label:
/// a merged file's labels carry the machine too), by machine otherwise.
pub fn disagreeing_groups(r: &Results) -> std::collections::BTreeMap<String, (Disagreement, Vec<&Cell>)> {
    let differ = r.disagreements();
    let mut groups: std::collections::BTreeMap<String, Vec<&Cell>> = std::collections::BTreeMap::new();
    for c in r.cells.iter().filter(|c| differ.contains(c.id.as_str())) {
        groups.entry(c.key()).or_default().push(c);
    }
    groups
        .into_iter()
        .map(|(k, cells)| {
            let versions = cells.iter().any(|c| c.runtime_version != cells[0].runtime_version);
            let how = if versions { Disagreement::Versions } else { Disagreement::Machines };
            (k, (how, cells))
        })
        .collect()
}

/// One runtime's table for the terminal (see [`terminal_table`]).
pub fn render_terminal(results: &Results, runtime: &str) -> String {
    let (header, rows) = text_rows(results, runtime, false);
    runtime_table(results, runtime, header, rows, super::style::current())
}

/// The counters of a hand-off cell that measured something and was not cut short by a harness
/// error; otherwise the word to show: the first word of its evidence (`unsupported`,
/// `harness-error`), or `?`.
fn measured_counters(c: &Cell) -> Result<&CountersResult, String> {
    match &c.result {
        // counts cut short by a harness failure are not shown as the runtime's
        CellResult::Counters(r) if !r.counters.is_empty() && !r.harness_error => Ok(r),
        _ => {
            let why = c.evidence.as_deref().unwrap_or("?");
            Err(why.split(':').next().unwrap_or(why).to_string())
        }
    }
}

/// The text of a hand-off cell, in its scenario's words ([`super::handoff::words`]): the
/// counts of its natural run, or, for a cell without counts, its evidence's first word
/// (`unsupported`, `harness-error`, `?`).
pub fn handoff_text(c: &Cell) -> String {
    match (measured_counters(c), super::handoff::words(c.scenario)) {
        (Ok(r), Some(w)) => (w.counts)(r),
        (Ok(_), None) => "?".into(),
        (Err(word), _) => word,
    }
}

/// The text of a hand-off cell's amplified run, in the words of [`handoff_text`]; `None` when
/// the cell says nothing of one (results from before amplified hand-offs, a race cell). A run
/// that did not happen or stopped shows the first words of why (`off`, `unsupported`,
/// `harness-error`).
pub fn amplified_handoff_text(c: &Cell) -> Option<String> {
    let CellResult::Counters(r) = &c.result else { return None };
    match (&r.amplified, &r.amplified_unavailable) {
        (Some(a), _) if !a.counters.is_empty() && !a.harness_error => {
            Some(super::handoff::words(c.scenario).map_or_else(|| "?".into(), |w| (w.counts)(a)))
        }
        (_, Some(why)) => Some(why.text().split([':', '(']).next().unwrap_or(why.text()).trim().to_string()),
        (Some(_), None) => Some("?".into()),
        (None, None) => None,
    }
}

/// Header and rows of a hand-off scenario's table: one row per recipe (with its steps when
/// `with_steps`), one column per runtime that has cells of `scenario`; `None` when it has none.
pub fn scenario_rows(
    results: &Results,
    scenario: Scenario,
    with_steps: bool,
) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let (header, rows) = toned_scenario_rows(results, scenario, with_steps)?;
    Some((header, rows.into_iter().map(|r| r.into_iter().map(|(t, _)| t).collect()).collect()))
}

/// The tone of hand-off cell `c`'s run in `mode`: held (no failure counted), failed, or
/// undetermined, as the recipe answers judge a run ([`crate::verdict::recipe::answer_recipe`]);
/// `None` when the cell has no such run.
fn handoff_tone(c: &Cell, mode: RaceMode) -> Option<Tone> {
    let (runs, words) = super::answers::cell_recipe_runs(c)?;
    let run: Vec<_> = runs.into_iter().filter(|r| r.mode == mode).collect();
    if run.is_empty() {
        return None;
    }
    let a = crate::verdict::recipe::answer_recipe(&run, words.failures, words.faults);
    Some(Tone::of_verdict(a.verdict))
}

/// [`scenario_rows`] with the tone of each cell's run ([`handoff_tone`]).
type TonedRows = (Vec<String>, Vec<Vec<(String, Option<Tone>)>>);

fn toned_scenario_rows(results: &Results, scenario: Scenario, with_steps: bool) -> Option<TonedRows> {
    let cells: Vec<&Cell> = results.cells.iter().filter(|c| c.scenario == scenario).collect();
    if cells.is_empty() {
        return None;
    }
    let mut runtimes: Vec<&str> = Vec::new();
    let mut recipes: Vec<(&str, &str, bool)> = Vec::new();
    for c in &cells {
        if !runtimes.contains(&c.runtime.as_str()) {
            runtimes.push(&c.runtime);
        }
        if !recipes.iter().any(|r| r.0 == c.variant) {
            recipes.push((&c.variant, &c.call, c.anti_pattern));
        }
    }
    // a library recipe's row names the version raced
    let label = |id: &str| match cells.iter().find_map(|c| (c.variant == id).then_some(c.library.as_deref()).flatten())
    {
        Some(lib) => format!("{id} ({lib})"),
        None => id.to_string(),
    };
    let mut header = vec!["recipe".to_string()];
    if with_steps {
        header.push("steps".into());
    }
    header.extend(runtimes.iter().map(|r| r.to_string()));
    let mut rows = Vec::new();
    for (id, steps, anti) in &recipes {
        let of = |rt: &&str| cells.iter().find(|c| c.variant == *id && c.runtime == *rt);
        let mut row = vec![(if *anti { format!("{} (anti-pattern)", label(id)) } else { label(id) }, None)];
        if with_steps {
            row.push((steps.to_string(), None));
        }
        row.extend(runtimes.iter().map(|rt| {
            of(rt).map_or_else(|| ("-".into(), None), |c| (handoff_text(c), handoff_tone(c, RaceMode::Natural)))
        }));
        rows.push(row);
        // the amplified run, on a row of its own, where any runtime says something of it
        // a runtime whose amplified run did not happen shows `-` there: the footnote says why,
        // once, instead of `not run` in every column
        let ran = |c: &Cell| matches!(&c.result, CellResult::Counters(r) if r.amplified.is_some());
        let amp: Vec<Option<(String, Option<Tone>)>> = runtimes
            .iter()
            .map(|rt| {
                of(rt)
                    .filter(|c| ran(c))
                    .and_then(|c| amplified_handoff_text(c).map(|t| (t, handoff_tone(c, RaceMode::Amplified))))
            })
            .collect();
        // a row only where some runtime ran it: "not run" fourteen times says nothing a
        // footnote does not ([`handoff_footnote`])
        if amp.iter().flatten().any(|(_, tone)| tone.is_some()) {
            let mut row = vec![(format!("{} · amplified", label(id)), None)];
            if with_steps {
                row.push(("the same, every file-system call delayed".into(), None));
            }
            row.extend(amp.into_iter().map(|t| t.unwrap_or_else(|| ("-".into(), None))));
            rows.push(row);
        }
    }
    Some((header, rows))
}

/// The terminal table of a hand-off scenario (see [`scenario_rows`]), `None` when the results
/// have no cell of it.
pub fn render_scenario(results: &Results, scenario: Scenario, style: super::style::TermStyle) -> Option<String> {
    let (header, rows) = toned_scenario_rows(results, scenario, false)?;
    let header: Vec<(String, Option<Tone>)> = header.into_iter().map(|h| (h, None)).collect();
    let table = toned_table(std::iter::once(header).chain(rows), style);
    Some(match handoff_footnote(results, scenario) {
        Some(note) => format!("{table}\n{}", style.note(&note)),
        None => table,
    })
}

/// The line under a hand-off table whose amplified runs did not all happen: the reasons,
/// each once (`amplified: not run (--thorough or --amplify on runs it)`); `None` when every
/// cell of `scenario` ran its amplified run or says nothing of one. Control characters are
/// escaped.
pub fn handoff_footnote(results: &Results, scenario: Scenario) -> Option<String> {
    // each reason once, with the runtimes it holds for (`-` in their amplified rows), unless
    // it holds for every runtime of the table
    let mut why: Vec<(String, Vec<&str>)> = Vec::new();
    let mut runtimes: Vec<&str> = Vec::new();
    for c in results.cells.iter().filter(|c| c.scenario == scenario) {
        if !runtimes.contains(&c.runtime.as_str()) {
            runtimes.push(&c.runtime);
        }
        let CellResult::Counters(r) = &c.result else { continue };
        if let (None, Some(w)) = (&r.amplified, &r.amplified_unavailable) {
            let w = escape_controls(w.text()).into_owned();
            match why.iter_mut().find(|(x, _)| *x == w) {
                Some((_, rts)) if !rts.contains(&c.runtime.as_str()) => rts.push(&c.runtime),
                Some(_) => {}
                None => why.push((w, vec![&c.runtime])),
            }
        }
    }
    let parts: Vec<String> = why
        .into_iter()
        .map(
            |(w, rts)| {
                if rts.len() == runtimes.len() {
                    w
                } else {
                    format!("{w} [{}]", escape_controls(&rts.join(", ")))
                }
            },
        )
        .collect();
    (!parts.is_empty()).then(|| format!("amplified: {}", parts.join("; ")))
}

/// The lines under a runtime's table: per race mode, cells, trials, median barrier spread and
/// trials per second; each family's detection control; and why amplified races did not run.
/// Control characters are escaped ([`escape_controls`]).
pub fn race_lines(results: &Results, runtime: &str) -> Vec<String> {
    race_lines_raw(results, runtime).iter().map(|l| escape_controls(l).into_owned()).collect()
}

fn race_lines_raw(results: &Results, runtime: &str) -> Vec<String> {
    let cells: Vec<&Cell> =
        results.cells.iter().filter(|c| c.runtime == runtime && c.scenario == Scenario::Race).collect();
    let mut out = Vec::new();
    for (name, pick) in [
        ("natural", (|c: &Cell| c.race()?.natural.as_ref()) as fn(&Cell) -> Option<&ModeRun>),
        ("amplified", |c: &Cell| c.race()?.amplified.as_ref()),
    ] {
        let runs: Vec<&ModeRun> = cells.iter().filter_map(|c| pick(c)).collect();
        if runs.is_empty() {
            continue;
        }
        let med = |mut v: Vec<f64>| crate::verdict::spread(&mut v).map(|s| s.p50);
        let p50 = med(runs.iter().filter_map(|m| m.stats.barrier_spread_us.map(|s| s.p50)).collect());
        let p99 = med(runs.iter().filter_map(|m| m.stats.barrier_spread_us.map(|s| s.p99)).collect());
        let tps = med(runs.iter().filter_map(|m| m.trials_per_second).collect());
        let trials = runs.iter().fold(0usize, |a, m| a.saturating_add(m.stats.trials));
        // why trials had no spread (stamps missing or impossible): how many cells, the first reason
        let unmeasured: Vec<&str> = runs.iter().filter_map(|m| m.stats.barrier_spread_unmeasured.as_deref()).collect();
        let why = unmeasured.first();
        let spread = match (p50, p99, why) {
            (Some(a), Some(b), None) => format!("barrier spread (median over cells) p50 {a:.0} µs, p99 {b:.0} µs"),
            (Some(a), Some(b), Some(w)) => format!(
                "barrier spread (median over cells) p50 {a:.0} µs, p99 {b:.0} µs; not measured in trials of {} of {} cells (first: {w})",
                unmeasured.len(),
                runs.len()
            ),
            (_, _, Some(w)) => format!("barrier spread not measured ({w})"),
            _ => "barrier spread not measured (the probe has no microsecond clock)".to_string(),
        };
        out.push(format!(
            "{name} races: {} cells, {trials} trials; {spread}; {} trials/s per cell (median)",
            runs.len(),
            tps.map_or("?".into(), |x| format!("{x:.0}")),
        ));
    }
    for ctl in results.run_info.controls.iter().filter(|c| c.runtime == runtime) {
        let d = &ctl.detection;
        let mut modes = Vec::new();
        if let Some([n, t]) = d.amplified {
            modes.push(format!("amplified {n}/{t}"));
        }
        if let Some([n, t]) = d.natural {
            modes.push(format!("natural {n}/{t}"));
        }
        let judged = if d.worked {
            "the race finds windows".to_string()
        } else {
            format!("WEAK RACE: its exclusive verdicts are inconclusive ({})", d.describe())
        };
        let modes = if modes.is_empty() {
            "did not run".to_string()
        } else {
            format!("{} (best ordering of each)", modes.join(", "))
        };
        // weak at the run's delay, then raced again with longer ones: say so, and at what delay
        let raised = match (ctl.escalations.first(), ctl.escalations.last()) {
            (Some(first), Some(last)) => format!(
                "; amplified delay raised from {} µs (caught {}/{}) to {} µs for this family",
                first[0],
                first[1],
                first[2],
                last[0] * crate::exec::amplify::ESCALATION_FACTOR
            ),
            _ => String::new(),
        };
        out.push(format!(
            "detection control {} ({} family): caught in {modes}; {judged}{raised}",
            d.variant, ctl.family
        ));
    }
    // each reason once, with the number of race cells it stands for
    let mut reasons: Vec<(&str, usize)> = Vec::new();
    for r in cells.iter().filter_map(|c| c.race()?.amplified_unavailable.as_ref().map(crate::domain::NoAmplified::text))
    {
        match reasons.iter_mut().find(|(w, _)| *w == r) {
            Some((_, n)) => *n += 1,
            None => reasons.push((r, 1)),
        }
    }
    for (r, n) in reasons {
        out.push(format!("amplified races: {r} ({n} {})", if n == 1 { "cell" } else { "cells" }));
    }
    out.extend(driver_lines(results, runtime));
    let threads = cells.iter().filter(|c| !c.contenders.is_processes()).count();
    if threads > 0 {
        out.push(format!(
            "contenders: threads of one probe process, released through shared memory ({threads} cells, rows marked (threads))"
        ));
    }
    out
}

/// How the runtime's probe was driven, where it has more than one way ([`Cell::driver`]): one
/// line per way, with the number of cells when the ways differ within the run.
fn driver_lines(results: &Results, runtime: &str) -> Vec<String> {
    let mut ways: Vec<(&str, usize)> = Vec::new();
    for d in results.cells.iter().filter(|c| c.runtime == runtime).filter_map(|c| c.driver.as_deref()) {
        match ways.iter_mut().find(|(w, _)| *w == d) {
            Some((_, n)) => *n += 1,
            None => ways.push((d, 1)),
        }
    }
    let mixed = ways.len() > 1;
    ways.iter()
        .map(|(w, n)| {
            let what = if *w == crate::domain::LOOP_DRIVER {
                "loop (one process per contender for each API family, answering attempt after attempt)".to_string()
            } else {
                format!("{w}, one process per attempt")
            };
            if mixed {
                format!("driver: {what} ({n} cells)")
            } else {
                format!("driver: {what}")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    /// Two runs that disagree on a cell: said as machines disagreeing, or, where the runtime's
    /// version differs too, as versions disagreeing with each version named.
    #[test]
    fn a_disagreement_names_the_versions_when_they_differ() {
        let mut r = crate::report::fixture("base.json");
        let a = r.cells.iter().position(|c| c.scenario == super::Scenario::SecondComer).unwrap();
        let b = r
            .cells
            .iter()
            .position(|c| c.scenario == super::Scenario::SecondComer && c.word() != r.cells[a].word())
            .unwrap();
        let mut other = r.cells[b].clone();
        other.runtime = r.cells[a].runtime.clone();
        other.runtime_name = r.cells[a].runtime_name.clone();
        other.variant = r.cells[a].variant.clone();
        other.target = r.cells[a].target;
        other.id = "other".into();
        r.cells[a].machine = Some("linux ext4".into());
        other.machine = Some("linux tmpfs".into());
        r.cells.push(other);
        let same = super::disagreement_text(&r);
        assert!(same.starts_with("machines disagree: ") && same.contains("[linux tmpfs]"), "{same}");
        // a merged file's row labels carry the machine: not a version difference
        r.cells.last_mut().unwrap().runtime = format!("{} [linux tmpfs]", r.cells[a].runtime);
        assert!(super::disagreement_text(&r).starts_with("machines disagree: "));
        r.cells.last_mut().unwrap().runtime_version = "99.0.0".into();
        let versions = super::disagreement_text(&r);
        assert!(
            versions.starts_with("versions disagree: ")
                && versions.contains(&format!("[{} 99.0.0; linux tmpfs]", r.cells[a].runtime_name)),
            "{versions}"
        );
    }

    /// A fitted table's race cell keeps the verdict and the deciding run's count (with the
    /// bound of an `exclusive` one), and drops the rest.
    #[test]
    fn compact_race_text_keeps_the_deciding_run() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/linux/results.json");
        let r = crate::report::json::read(&path).unwrap();
        let race = |variant: &str| {
            r.cells
                .iter()
                .find(|c| c.runtime_name == "node" && c.variant == variant && c.scenario == super::Scenario::Race)
                .and_then(|c| c.race())
                .unwrap()
        };
        let held = super::race_compact_text(race("node.writeFileSync.wx"));
        assert!(held.starts_with("exclusive (amp 0/") && held.contains(" < ") && !held.contains(';'), "{held}");
        let failed = super::race_compact_text(race("node.writeFileSync.w"));
        assert!(failed.starts_with("multiple-winners (") && !failed.contains("µs"), "{failed}");
        assert!(super::race_result_text(race("node.writeFileSync.w")).len() > failed.len());
    }

    use std::borrow::Cow;

    use super::{
        escape_controls, scenario_rows, terminal_table, CellResult, CountersResult, Scenario, MAX_CELL_WIDTH,
        WIDE_MAX_CELL_WIDTH,
    };

    #[test]
    fn control_characters_are_escaped() {
        assert!(matches!(escape_controls("plain é ✓ |"), Cow::Borrowed(_)));
        assert_eq!(
            escape_controls("a\u{1b}[0m\0b\u{9b}c\u{7f}\r\n\t"),
            "a\\u{1b}[0m\\u{0}b\\u{9b}c\\u{7f}\\u{d}\\u{a}\\u{9}"
        );
    }

    #[test]
    fn a_hand_off_cell_shows_its_amplified_run_on_a_row_of_its_own() {
        let mut r = crate::report::fixture("base.json");
        let mut c = r.cells[0].clone();
        c.scenario = Scenario::Publish;
        c.variant = "publish.direct".into();
        let counts = |torn: u64, reads: u64| CountersResult {
            counters: [("torn_reads", torn), ("reads", reads), ("published", 4), ("reader_items", 8)]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            ..CountersResult::default()
        };
        let mut k = counts(3, 90);
        k.amplified = Some(Box::new(counts(1, 20)));
        c.result = CellResult::Counters(k);
        let mut off = c.clone();
        off.runtime = "deno 2".into();
        if let CellResult::Counters(k) = &mut off.result {
            k.amplified = None;
            k.amplified_unavailable = Some(crate::domain::NoAmplified::Off);
        }
        r.cells = vec![c, off];
        let (header, rows) = scenario_rows(&r, Scenario::Publish, false).unwrap();
        assert_eq!(header.len(), 3, "{header:?}");
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert!(rows[0][1].starts_with("torn 3/90 reads"), "{rows:?}");
        assert_eq!(rows[1][0], "publish.direct · amplified");
        assert!(rows[1][1].starts_with("torn 1/20 reads"), "{rows:?}");
        // the runtime whose amplified run did not happen: `-`, and the footnote says why, once
        assert_eq!(rows[1][2], "-");
        let note = super::handoff_footnote(&r, Scenario::Publish).expect("a footnote");
        assert!(note.starts_with("amplified: off") && note.ends_with("[deno 2]"), "{note}");
        // results without amplified hand-offs (older files) get no such row
        for c in &mut r.cells {
            if let CellResult::Counters(k) = &mut c.result {
                (k.amplified, k.amplified_unavailable) = (None, None);
            }
        }
        assert_eq!(scenario_rows(&r, Scenario::Publish, false).unwrap().1.len(), 1);
        assert_eq!(super::handoff_footnote(&r, Scenario::Publish), None);
        // no runtime ran it: no amplified row, the reason once under the table
        for c in &mut r.cells {
            if let CellResult::Counters(k) = &mut c.result {
                k.amplified_unavailable = Some(crate::domain::NoAmplified::Off);
            }
        }
        assert_eq!(scenario_rows(&r, Scenario::Publish, false).unwrap().1.len(), 1);
        let table = super::render_scenario(&r, Scenario::Publish, super::super::style::TermStyle::PLAIN).unwrap();
        assert_eq!(table.matches("amplified: off").count(), 1, "{table}");
    }

    /// Where the words cannot all fit, the first column gives up width only after the other
    /// columns are at their longest words: it stays as wide as it can, so the shorter ids in
    /// it stay whole (an id cut in two cannot be searched or copied).
    #[test]
    fn ids_stay_whole_while_other_columns_can_wrap() {
        // a 40-column id and 20-column words elsewhere cannot fit 80 columns whole: the first
        // column must break the longest id, but no more than that
        let (long, id) = ("node.cpSync.recursive.errorOnExist.extra", "node.promises.writeFile.wx");
        let text = "aaaaaaaaaaaaaaaaaaaa bbbbbbbbbbbbbbbbbbbb ccc";
        let mut records = vec![["variant", "file", "dir"], [long, text, text], [id, text, text]];
        records.extend(std::iter::repeat_n(["node.x", text, text], 6));
        let fitted = super::super::style::TermStyle { width: Some(80), ..super::super::style::TermStyle::PLAIN };
        let t = super::toned_table(records.iter().map(|r| r.map(|c| (c, None))), fitted);
        assert!(t.lines().all(|l| textwrap::core::display_width(l) <= 80), "{t}");
        assert!(t.contains(id), "the id is broken:\n{t}");
    }

    #[test]
    fn wide_cells_are_cut_in_terminal_tables() {
        let wide = "y".repeat(1 << 20);
        let records = || [["id", "call"], ["node.x", wide.as_str()], ["node.\u{1b}", "z"]];
        // the full layout (--wide, a pipe): cut only far out
        let t = terminal_table(records());
        assert!(t.lines().all(|l| l.chars().count() <= WIDE_MAX_CELL_WIDTH + 20), "{t}");
        assert!(t.contains(&format!("{}…", "y".repeat(WIDE_MAX_CELL_WIDTH - 1))), "{t}");
        assert!(t.contains("node.\\u{1b}") && !t.contains('\u{1b}'), "{t}");
        // fitted to a terminal: cut at MAX_CELL_WIDTH, then wrapped
        let fitted = super::super::style::TermStyle { width: Some(120), ..super::super::style::TermStyle::PLAIN };
        let t = super::toned_table(records().map(|r| r.map(|c| (c, None))), fitted);
        assert!(t.lines().all(|l| l.chars().count() <= 120), "{t}");
        let ys: usize = t.chars().filter(|c| *c == 'y').count();
        assert_eq!(ys, MAX_CELL_WIDTH - 1, "{t}");
    }
}

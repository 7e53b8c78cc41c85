//! How terminal text is laid out and coloured: the width tables and answer lists are fitted
//! to, and whether words are coloured. Set once per process from the global flags
//! ([`configure`]); every terminal renderer reads [`current`]. Markdown, HTML, CSV and JSON
//! never read it: only the terminal is fitted and coloured.
//!
//! Colour follows the conventions <https://no-color.org> and <https://bixense.com/clicolors/>
//! (`NO_COLOR`, `CLICOLOR`, `CLICOLOR_FORCE`, a terminal on stdout), as decided by
//! `anstream::AutoStream::choice`, and `--color`.

use std::sync::OnceLock;

use crate::verdict::{Outcome, RaceVerdict};

/// The narrowest width tables are fitted to: below it a table keeps this width and the
/// terminal wraps it.
pub const MIN_WIDTH: usize = 60;

/// What a word says about a call's safety, for its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Held: `acquired`, `refused`, `exclusive`, `yes`, a hand-off with no failure (green).
    Good,
    /// Failed: `replaced`, `kept`, `multiple-winners`, `no`, a hand-off with failures (red).
    Bad,
    /// Says nothing either way: `?`, `inconclusive`, a timeout or crash (yellow).
    Unsure,
}

impl Tone {
    /// The tone of a second comer's outcome; `None` for `unsupported` (no colour).
    pub fn of_outcome(o: Outcome) -> Option<Tone> {
        match o {
            Outcome::Acquired | Outcome::Refused => Some(Tone::Good),
            Outcome::Replaced | Outcome::Kept | Outcome::Nested | Outcome::Followed | Outcome::Damaged => {
                Some(Tone::Bad)
            }
            Outcome::Failed | Outcome::Prompted | Outcome::Timeout | Outcome::Crashed | Outcome::HarnessError => {
                Some(Tone::Unsure)
            }
            Outcome::Unsupported => None,
        }
    }

    /// The tone of a race verdict; `None` for `unsupported`.
    pub fn of_race(v: RaceVerdict) -> Option<Tone> {
        match v {
            RaceVerdict::Exclusive => Some(Tone::Good),
            RaceVerdict::Unsupported => None,
            v if crate::verdict::is_disproof(v) => Some(Tone::Bad),
            _ => Some(Tone::Unsure),
        }
    }

    /// The tone of an answer's verdict: `yes` held, `no` failed, `undetermined` unsure.
    pub fn of_verdict(v: crate::verdict::answer::AnswerVerdict) -> Tone {
        use crate::verdict::answer::AnswerVerdict;
        match v {
            AnswerVerdict::Yes => Tone::Good,
            AnswerVerdict::No => Tone::Bad,
            AnswerVerdict::Undetermined => Tone::Unsure,
        }
    }

    /// The tone of a yes / no / undetermined answer.
    pub fn of_answer(safe: Option<bool>) -> Tone {
        match safe {
            Some(true) => Tone::Good,
            Some(false) => Tone::Bad,
            None => Tone::Unsure,
        }
    }

    fn style(self) -> anstyle::Style {
        let colour = match self {
            Tone::Good => anstyle::AnsiColor::Green,
            Tone::Bad => anstyle::AnsiColor::Red,
            Tone::Unsure => anstyle::AnsiColor::Yellow,
        };
        anstyle::Style::new().fg_color(Some(colour.into()))
    }
}

/// The layout and colour of terminal output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TermStyle {
    /// The width to fit tables and lists to, in columns; `None`: no fitting (`--wide`, or
    /// stdout is not a terminal and `COLUMNS` is not set).
    pub width: Option<usize>,
    /// Whether words are coloured.
    pub colour: bool,
}

impl TermStyle {
    /// No fitting, no colour: what files and pipes get.
    pub const PLAIN: TermStyle = TermStyle { width: None, colour: false };

    /// `text` in `tone`'s colour when colour is on; otherwise `text` as it is.
    pub fn paint(&self, tone: Option<Tone>, text: &str) -> String {
        match tone {
            Some(t) if self.colour => format!("{}{text}{}", t.style().render(), t.style().render_reset()),
            _ => text.to_string(),
        }
    }

    /// `line` (a note under a table) wrapped to the fitted width, its continuation lines
    /// indented by two spaces; as it is without fitting.
    pub fn note(&self, line: &str) -> String {
        match self.width {
            // at spaces only: a path (`conformance-runs/…`) is never split at its hyphen
            Some(w) => textwrap::fill(
                line,
                textwrap::Options::new(w.max(MIN_WIDTH))
                    .subsequent_indent("  ")
                    .word_splitter(textwrap::WordSplitter::NoHyphenation),
            ),
            None => line.to_string(),
        }
    }

    /// The width answer lists and notes are wrapped to: the terminal's (at least
    /// [`MIN_WIDTH`]) up to `max`, or `max` without fitting.
    pub fn text_width(&self, max: usize) -> usize {
        self.width.map_or(max, |w| w.clamp(MIN_WIDTH, max))
    }
}

static STYLE: OnceLock<TermStyle> = OnceLock::new();

/// The width of the terminal: `COLUMNS` when it holds a number (as shells export it, and as
/// tests set it), else the size of the terminal on stdout; `None` when neither is known.
fn terminal_width() -> Option<usize> {
    if let Some(n) = std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse::<usize>().ok()).filter(|n| *n > 0) {
        return Some(n);
    }
    terminal_size::terminal_size().map(|(w, _)| usize::from(w.0))
}

/// Sets the process's terminal style from the global flags: `wide` turns fitting off; `colour`
/// is `--color` (`auto` follows the environment and whether stdout is a terminal). Later calls
/// change nothing.
pub fn configure(wide: bool, colour: anstream::ColorChoice) {
    colour.write_global();
    let on = !matches!(anstream::AutoStream::choice(&std::io::stdout()), anstream::ColorChoice::Never);
    let _ = STYLE.set(TermStyle { width: if wide { None } else { terminal_width() }, colour: on });
}

/// The process's terminal style ([`configure`]); plain when it was never configured (the
/// library's callers, the unit tests).
pub fn current() -> TermStyle {
    STYLE.get().copied().unwrap_or(TermStyle::PLAIN)
}

#[cfg(test)]
mod tests {
    use super::{TermStyle, Tone};
    use crate::verdict::{Outcome, RaceVerdict};

    /// Colour codes appear only when colour is on; the text is kept either way.
    #[test]
    fn paint_colours_only_when_colour_is_on() {
        let on = TermStyle { width: None, colour: true };
        let red = on.paint(Some(Tone::Bad), "replaced");
        assert!(red.starts_with("\u{1b}[31m") && red.contains("replaced") && red.ends_with("\u{1b}[0m"), "{red:?}");
        assert_eq!(TermStyle::PLAIN.paint(Some(Tone::Bad), "replaced"), "replaced");
        assert_eq!(on.paint(None, "unsupported"), "unsupported");
    }

    /// Taking a name and refusing a taken one hold; replacing, keeping, nesting fail.
    #[test]
    fn tones_follow_the_verdicts() {
        assert_eq!(Tone::of_outcome(Outcome::Refused), Some(Tone::Good));
        assert_eq!(Tone::of_outcome(Outcome::Kept), Some(Tone::Bad));
        assert_eq!(Tone::of_outcome(Outcome::Followed), Some(Tone::Bad));
        assert_eq!(Tone::of_outcome(Outcome::Timeout), Some(Tone::Unsure));
        assert_eq!(Tone::of_race(RaceVerdict::Exclusive), Some(Tone::Good));
        assert_eq!(Tone::of_race(RaceVerdict::MultipleWinners), Some(Tone::Bad));
        assert_eq!(Tone::of_race(RaceVerdict::Inconclusive), Some(Tone::Unsure));
        assert_eq!(Tone::of_answer(None), Tone::Unsure);
    }

    /// A note is wrapped only when fitting, under a two-space indent.
    #[test]
    fn notes_wrap_only_when_fitting() {
        let line = "natural races: 7 cells, 100 trials; barrier spread (median over cells) p50 134 µs, p99 500 µs";
        assert_eq!(TermStyle::PLAIN.note(line), line);
        let wrapped = TermStyle { width: Some(60), colour: false }.note(line);
        assert!(wrapped.lines().count() == 2 && wrapped.lines().all(|l| l.chars().count() <= 60), "{wrapped}");
        assert!(wrapped.lines().nth(1).unwrap().starts_with("  "), "{wrapped}");
    }

    /// Lists are wrapped to the terminal, never below the floor nor above their own width.
    #[test]
    fn text_width_is_clamped() {
        let at = |w| TermStyle { width: Some(w), colour: false }.text_width(100);
        assert_eq!((at(80), at(40), at(200)), (80, super::MIN_WIDTH, 100));
        assert_eq!(TermStyle::PLAIN.text_width(100), 100);
    }
}

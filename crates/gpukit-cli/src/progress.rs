//! A progress bar on stderr for long work (selftest, emu-check, bench, profile): drawn
//! with indicatif, only when stderr is a terminal and only once the work has taken more
//! than a second, so stdout (and `--json`) never carries any of it and quick runs never
//! flash a bar.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long work runs before its bar appears.
const DELAY: Duration = Duration::from_secs(1);

/// The bar of one piece of work; cleared from the terminal when dropped.
pub(crate) struct Progress {
    bar: ProgressBar,
    start: Instant,
    tty: bool,
    shown: bool,
}

impl Progress {
    /// A bar for work of `total` steps, hidden until [`Progress::step`] finds the work
    /// has run for [`DELAY`] with stderr a terminal.
    pub(crate) fn new(total: usize) -> Progress {
        Progress::with_terminal(total, std::io::stderr().is_terminal())
    }

    /// [`Progress::new`] with the terminal test given: `tty = false` never draws.
    fn with_terminal(total: usize, tty: bool) -> Progress {
        let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::hidden());
        // A template that fails to parse would be a bug here; the bar then keeps
        // indicatif's default style rather than stopping the work.
        if let Ok(style) = ProgressStyle::with_template("[{pos}/{len}] {wide_bar} {msg}") {
            bar.set_style(style);
        }
        Progress {
            bar,
            start: Instant::now(),
            tty,
            shown: false,
        }
    }

    /// Step `i` (0-based) of `total` starts, doing `what`.
    pub(crate) fn step(&mut self, i: usize, total: usize, what: &str) {
        self.bar.set_length(total as u64);
        self.bar.set_position(i as u64 + 1);
        self.bar.set_message(what.to_string());
        if self.tty && !self.shown && self.start.elapsed() > DELAY {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.shown = true;
        }
    }

    /// Whether the bar has been put on the terminal.
    #[cfg(test)]
    fn shown(&self) -> bool {
        self.shown
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_follows_the_steps() {
        let mut p = Progress::with_terminal(3, false);
        p.step(0, 3, "a");
        assert_eq!((p.bar.position(), p.bar.length()), (1, Some(3)));
        p.step(4, 9, "b");
        assert_eq!((p.bar.position(), p.bar.length()), (5, Some(9)));
        assert_eq!(p.bar.message(), "b");
    }

    #[test]
    fn no_terminal_no_bar() {
        let mut p = Progress::with_terminal(2, false);
        p.start -= 2 * DELAY;
        p.step(0, 2, "x");
        assert!(!p.shown());
        assert!(p.bar.is_hidden());
    }

    #[test]
    fn a_terminal_gets_the_bar_only_after_the_delay() {
        let mut p = Progress::with_terminal(2, true);
        p.step(0, 2, "x");
        assert!(!p.shown(), "shown before the delay");
        p.start -= 2 * DELAY;
        p.step(1, 2, "y");
        assert!(p.shown());
    }
}

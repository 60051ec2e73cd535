//! Searching with a pattern that needs the backtracking engine, in steps short enough
//! that the parse's deadline is checked between them.
//!
//! fancy-regex cannot be stopped in the middle of a search; it stops only at its
//! backtrack limit, and the work between two backtracks can be a scan of the whole text
//! (see `shape.rs`). So a search is run as match attempts at one start position each
//! (`\G` in front of the pattern), at the positions where a pattern without the
//! backtracking constructs matches (a superset: the `relaxed` pattern). Each attempt
//! starts with a backtrack limit sized so that it cannot run long whatever the text
//! (from the pattern's shape), and is tried again with eight times the limit while the
//! previous run's time says the next one fits in the time left: the limit found is then
//! a matter of time, the parse's deadline, and never of a count.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use fancy_regex::{Captures, Error, Regex, RegexBuilder, RuntimeError};

use super::error::ParseError;
use super::limits::Clock;
use super::shape::Shape;

/// Steps of the engine assumed per second when sizing an attempt before it runs: low,
/// so that the estimate errs towards stopping early.
const STEPS_PER_SECOND: f64 = 1.0e8;

/// Work an attempt may start with, in steps (a few milliseconds).
const FIRST_ATTEMPT_STEPS: usize = 1 << 20;

/// Backtrack limits, from the smallest: each eight times the one before.
const LEVELS: usize = 11;

fn limit_at(level: usize) -> usize {
    1 << (3 * level)
}

/// A hard pattern's bounded searches: its shape, its candidate filter and its anchored
/// forms, compiled on first use, one per backtrack limit.
#[derive(Debug)]
pub(crate) struct Backtracking {
    /// The pattern as fancy-regex reads it, with `\G` in front.
    anchored_source: String,
    /// Shown in errors.
    shown: String,
    shape: Shape,
    relaxed: Option<Regex>,
    anchored: [OnceLock<Result<Regex, String>>; LEVELS],
}

impl Backtracking {
    /// The bounded form of a pattern (already translated and known to compile), or
    /// `None` when it needs no backtracking (fancy-regex then runs it in linear time).
    pub(crate) fn new(translated: &str, shown: &str) -> Option<Self> {
        let shape = Shape::of(translated)?;
        if !shape.hard {
            return None;
        }
        // A filter that fails to compile (too large) only costs speed: every position is
        // a candidate.
        let relaxed = shape
            .relaxed
            .as_deref()
            .and_then(|source| Regex::new(source).ok());
        Some(Backtracking {
            anchored_source: format!("\\G(?:{translated})"),
            shown: shown.to_string(),
            shape,
            relaxed,
            anchored: Default::default(),
        })
    }

    /// `search(text, pos)`: the first match starting at or after byte `pos`.
    pub(crate) fn search<'t>(
        &self,
        text: &'t str,
        pos: usize,
        clock: &Clock,
    ) -> Result<Option<Captures<'t>>, ParseError> {
        self.check_degree(text, clock)?;
        let mut from = pos;
        loop {
            clock.check(|| self.doing(from))?;
            let Some(start) = self.candidate(text, from)? else {
                return Ok(None);
            };
            if let Some(found) = self.attempt(text, start, clock)? {
                return Ok(Some(found));
            }
            let Some(next) = text[start..].chars().next() else {
                return Ok(None);
            };
            from = start + next.len_utf8();
        }
    }

    /// The next position at or after `from` where a match may start, if any.
    fn candidate(&self, text: &str, from: usize) -> Result<Option<usize>, ParseError> {
        let Some(relaxed) = &self.relaxed else {
            return Ok(Some(from));
        };
        match relaxed.find_from_pos(text, from) {
            Ok(found) => Ok(found.map(|m| m.start())),
            Err(error) => Err(stopped(&error)),
        }
    }

    /// One match attempt at `start`, its backtrack limit raised while time allows.
    fn attempt<'t>(
        &self,
        text: &'t str,
        start: usize,
        clock: &Clock,
    ) -> Result<Option<Captures<'t>>, ParseError> {
        let unit = self.step_cost(text.len());
        let mut level = (0..LEVELS)
            .rev()
            .find(|l| limit_at(*l).saturating_mul(unit) <= FIRST_ATTEMPT_STEPS)
            .unwrap_or(0);
        loop {
            let regex = self.anchored(level)?;
            let began = Instant::now();
            match regex.captures_from_pos(text, start) {
                Ok(found) => return Ok(found),
                Err(Error::RuntimeError(RuntimeError::BacktrackLimitExceeded))
                    if level + 1 < LEVELS =>
                {
                    level += 1;
                    if self.next_run(began.elapsed()) > clock.remaining() {
                        return Err(clock.over(&self.doing(start)));
                    }
                }
                Err(error) => return Err(stopped(&error)),
            }
        }
    }

    /// How long the next run may take, with eight times the backtracks of one that took
    /// `took`: eight times as long when each backtrack costs about the same, 64 times when
    /// each may also scan more than the one before (a back-reference to a group that
    /// grows with every backtrack, a look-around that reaches further).
    fn next_run(&self, took: Duration) -> Duration {
        let growth = if self.shape.degree == 0 { 8 } else { 64 };
        took.saturating_mul(growth)
    }

    /// What one backtrack may cost, in steps: a scan of the text when the pattern can
    /// match or look at text of any length, else about its own size.
    fn step_cost(&self, len: usize) -> usize {
        let own = self.anchored_source.len();
        match self.shape.max_len {
            Some(max) if self.shape.degree == 0 => max.saturating_add(own),
            _ => len.saturating_add(own),
        }
    }

    /// Patterns whose single attempt costs a power of the text's length (a repeated
    /// look-around of unbounded length) cannot be stopped part-way: they run only when
    /// even that worst case fits the time left.
    fn check_degree(&self, text: &str, clock: &Clock) -> Result<(), ParseError> {
        let degree = self.shape.degree;
        if degree < 2 {
            return Ok(());
        }
        let steps = (text.len().max(1) as f64).powi(degree as i32);
        if steps / STEPS_PER_SECOND <= clock.remaining().as_secs_f64() {
            return Ok(());
        }
        Err(clock.over(&format!(
            "the pattern {} repeats a look-around or back-reference of unbounded length, so \
             one match attempt can take time growing with the power {degree} of the text's {} \
             bytes",
            self.shown,
            text.len()
        )))
    }

    fn anchored(&self, level: usize) -> Result<&Regex, ParseError> {
        self.anchored[level]
            .get_or_init(|| {
                RegexBuilder::new(&self.anchored_source)
                    .backtrack_limit(limit_at(level))
                    .build()
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|e| ParseError::limit(format!("regex search stopped: {e}")))
    }

    fn doing(&self, at: usize) -> String {
        format!("searching with the pattern {} at byte {at}", self.shown)
    }
}

/// A search fancy-regex gave up (its stack is full, or a limit of its own).
pub(crate) fn stopped(error: &Error) -> ParseError {
    ParseError::limit(format!("regex search stopped: {error}"))
}

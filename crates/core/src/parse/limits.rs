//! The bounds of one parse: a wall-clock deadline and a cancel token, checked between
//! every search step, so that a hostile `response_template` or output stops with a
//! clear error instead of running for hours. Python's `regex` has no such bound; these
//! errors are chatplate's own ([`super::LIMIT_CLASS`]).

use std::time::{Duration, Instant};

use chatplate_render::remedy::{means, Knob};
use chatplate_render::{CancelToken, Limits};

use super::error::ParseError;

/// How long one parse may take, and what may stop it sooner.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ParseLimits {
    /// The wall-clock bound on the whole parse (the render deadline's knob raises it).
    pub deadline: Duration,
    /// Cancelling it stops the parse (the app's worker cancels work it no longer needs).
    pub cancel: CancelToken,
}

impl Default for ParseLimits {
    /// The render's default deadline.
    fn default() -> Self {
        ParseLimits {
            deadline: Limits::default().deadline,
            cancel: CancelToken::new(),
        }
    }
}

impl ParseLimits {
    /// Bounded by `deadline`.
    pub fn new(deadline: Duration) -> Self {
        ParseLimits {
            deadline,
            ..ParseLimits::default()
        }
    }

    /// Also stopped when `cancel` is cancelled.
    pub fn with_cancel(mut self, cancel: CancelToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// The clock of a parse starting now.
    pub(crate) fn start(&self) -> Clock {
        Clock {
            started: Instant::now(),
            deadline: self.deadline,
            cancel: self.cancel.clone(),
        }
    }
}

/// A running parse's time, checked between steps.
#[derive(Debug, Clone)]
pub(crate) struct Clock {
    started: Instant,
    deadline: Duration,
    cancel: CancelToken,
}

impl Clock {
    /// A clock with no deadline worth speaking of, for work bounded another way (tests).
    #[cfg(test)]
    pub(crate) fn unbounded() -> Clock {
        ParseLimits::new(Duration::from_secs(86_400)).start()
    }

    /// Fails once the deadline has passed or the parse was cancelled; `doing` says what
    /// the parse was doing, for the message.
    pub(crate) fn check(&self, doing: impl FnOnce() -> String) -> Result<(), ParseError> {
        if self.cancel.is_cancelled() {
            return Err(ParseError::limit("the parse was cancelled"));
        }
        if self.started.elapsed() > self.deadline {
            return Err(self.over(&doing()));
        }
        Ok(())
    }

    /// The time left before the deadline.
    pub(crate) fn remaining(&self) -> Duration {
        self.deadline.saturating_sub(self.started.elapsed())
    }

    /// The error of a parse that would pass its deadline `doing` something.
    pub(crate) fn over(&self, doing: &str) -> ParseError {
        ParseError::limit(format!(
            "the parse would take longer than its deadline of {} s ({doing}); raise it with {}",
            seconds(self.deadline),
            means(Knob::Deadline)
        ))
    }
}

/// A duration in seconds as people write it: `5`, `0.25`.
fn seconds(duration: Duration) -> String {
    let text = format!("{:.3}", duration.as_secs_f64());
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_passed_deadline_names_its_knob() {
        let clock = ParseLimits::new(Duration::ZERO).start();
        std::thread::sleep(Duration::from_millis(2));
        let error = clock.check(|| "searching".into()).unwrap_err();
        assert_eq!(error.class, super::super::LIMIT_CLASS);
        assert!(
            error.message.starts_with(
                "the parse would take longer than its deadline of 0 s (searching); raise it with "
            ),
            "{}",
            error.message
        );
        assert_eq!(seconds(Duration::from_millis(2500)), "2.5");
    }

    #[test]
    fn cancelling_stops_the_parse() {
        let limits = ParseLimits::default();
        let clock = limits.start();
        assert!(clock.check(String::new).is_ok());
        limits.cancel.cancel();
        assert!(clock.check(String::new).is_err());
    }
}

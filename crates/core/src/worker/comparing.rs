//! The other side of a comparison: the worker's conversation rendered by another
//! template (the app's live template preview) or by another engine (the app's compare
//! view), so the caller can set it beside its own render.
//!
//! Another template renders in chatplate's renderer like [`super::Job::Render`], on the
//! runner with its deadline and cancel token. `minijinja` runs in process on the runner
//! too. The external engines (`python`, `hf-jinja`) start a child process that takes
//! seconds: the dispatcher runs them on a thread of their own, bounded by
//! [`crate::compare::Bounds`] (time and output), so a render never waits behind them.
//!
//! The line diff against the caller's own prompt is made here too, off the caller's
//! thread: the caller only slices the two texts to draw them.

use std::ops::Range;
use std::sync::Arc;

use chatplate_render::{CancelToken, PreparedMessages, RenderError, RenderErrorKind};

use super::snapshot::Snapshot;
use super::{Output, Template};
use crate::compare::{self, Engine, EngineError, EngineRender, EngineSetup};
use crate::diff::{diff_lines, DiffLine};

/// What renders the other side.
#[derive(Debug, Clone)]
pub enum Counterpart {
    /// chatplate's own renderer with another template.
    Template(Arc<Template>),
    /// Another engine on a template source (the session's, usually).
    Engine {
        /// The engine.
        engine: Engine,
        /// The template source it renders.
        source: Arc<str>,
        /// Where the external engines are and their bounds.
        setup: Arc<EngineSetup>,
    },
    /// A fixed text (a fixture's expected prompt), or why there is none.
    Text {
        /// The text.
        text: Arc<str>,
        /// Why there is no text to compare with, if there is none.
        error: Option<String>,
    },
}

impl Counterpart {
    /// Whether it runs in a child process (slow: seconds, not milliseconds).
    pub fn is_external(&self) -> bool {
        matches!(
            self,
            Counterpart::Engine {
                engine: Engine::Python | Engine::HfJinja | Engine::LlamaCpp | Engine::Plugin(_),
                ..
            }
        )
    }

    /// The template it renders with, when that is one the worker compiles.
    pub(crate) fn template(&self) -> Option<&Arc<Template>> {
        match self {
            Counterpart::Template(template) => Some(template),
            Counterpart::Engine { .. } | Counterpart::Text { .. } => None,
        }
    }
}

/// The other side's render and its line diff from the caller's prompt.
#[derive(Debug, Clone)]
pub struct Compared {
    /// The other side's prompt or error, with its engine and version.
    pub render: EngineRender,
    /// The caller's prompt the diff was made against.
    pub against: Arc<str>,
    /// The other side's prompt (empty when it failed).
    pub other: Arc<str>,
    changes: Vec<(Change, Range<usize>)>,
}

/// What a diff line is, with its byte range in `against` (same, removed) or `other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    Same,
    Removed,
    Added,
}

impl Compared {
    fn new(render: EngineRender, against: Arc<str>) -> Self {
        let other: Arc<str> = render.result.as_deref().unwrap_or_default().into();
        let changes = changes(&against, &other);
        Compared {
            render,
            against,
            other,
            changes,
        }
    }

    /// The line diff from `against` (removed) to `other` (added).
    pub fn lines<'a>(&'a self) -> Vec<DiffLine<'a>> {
        let (against, other) = (&*self.against, &*self.other);
        let text =
            |t: &'a str, r: &Range<usize>| -> &'a str { t.get(r.clone()).unwrap_or_default() };
        self.changes
            .iter()
            .map(|(change, range)| match change {
                Change::Same => DiffLine::Same(text(against, range)),
                Change::Removed => DiffLine::Removed(text(against, range)),
                Change::Added => DiffLine::Added(text(other, range)),
            })
            .collect()
    }

    /// How many runs of changed lines (hunks) there are.
    pub fn hunks(&self) -> usize {
        let changed: Vec<bool> = self
            .changes
            .iter()
            .map(|(c, _)| *c != Change::Same)
            .collect();
        (0..changed.len())
            .filter(|&i| changed[i] && (i == 0 || !changed[i - 1]))
            .count()
    }
}

/// The diff as byte ranges into the two texts (each line a slice of one of them).
fn changes(against: &str, other: &str) -> Vec<(Change, Range<usize>)> {
    // The diff walks both texts in order: a same line takes its length from both, a
    // removed one from `against`, an added one from `other`.
    let (mut left, mut right) = (0, 0);
    diff_lines(against, other)
        .into_iter()
        .map(|line| match line {
            DiffLine::Same(l) => {
                right += l.len();
                left += l.len();
                (Change::Same, left - l.len()..left)
            }
            DiffLine::Removed(l) => {
                left += l.len();
                (Change::Removed, left - l.len()..left)
            }
            DiffLine::Added(l) => {
                right += l.len();
                (Change::Added, right - l.len()..right)
            }
        })
        .collect()
}

/// Renders `counterpart` on `conversation` and diffs it from `against`. A failed render is an answer (the other
/// side shows its error); only a cancelled one is an error of the job.
pub(super) fn render(
    counterpart: &Counterpart,
    against: Arc<str>,
    conversation: &Snapshot,
    values: &PreparedMessages,
    token: &CancelToken,
) -> Result<Output, RenderError> {
    let answer = match counterpart {
        Counterpart::Template(template) => {
            let result = match super::runner::render_prompt(template, conversation, values, token) {
                Ok(prompt) => Ok(prompt),
                Err(err) if err.kind == RenderErrorKind::Cancelled => return Err(err),
                Err(err) => Err(EngineError::Render(err.to_string())),
            };
            EngineRender {
                engine: Engine::Transformers,
                version: format!("chatplate {}", env!("CARGO_PKG_VERSION")),
                result,
                url: None,
                note: None,
                tokens: None,
            }
        }
        Counterpart::Engine {
            engine,
            source,
            setup,
        } => compare::render(*engine, source, &conversation.conversation(), setup),
        Counterpart::Text { text, error } => EngineRender {
            engine: Engine::Transformers,
            version: "the fixture's expected prompt".into(),
            result: match error {
                Some(why) => Err(EngineError::Render(why.clone())),
                None => Ok(text.to_string()),
            },
            url: None,
            note: None,
            tokens: None,
        },
    };
    Ok(Output::Compared(Arc::new(Compared::new(answer, against))))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Read back, the ranges give each text again, whatever the diff did.
    #[test]
    fn the_ranges_rebuild_both_texts() {
        let cases = [
            ("a\nb\nc", "a\nB\nc\nd\n"),
            ("a\nbb\nc\n", "a\nB\nc\n"),
            ("", "x\ny"),
            ("é\n\nü", "é\nü\n"),
            ("same\n", "same\n"),
        ];
        for (against, other) in cases {
            let (mut left, mut right) = (String::new(), String::new());
            for (change, range) in changes(against, other) {
                match change {
                    // A same line is read from `against` (it is in both).
                    Change::Same => {
                        left.push_str(&against[range.clone()]);
                        right.push_str(&against[range]);
                    }
                    Change::Removed => left.push_str(&against[range]),
                    Change::Added => right.push_str(&other[range]),
                }
            }
            assert_eq!((left.as_str(), right.as_str()), (against, other));
        }
    }
}

//! Render errors as data: what went wrong, where in the template, and an excerpt.

use std::fmt;

use super::globals::RAISED_PREFIX;
use super::pyerror::translate;
use super::source::normalize_newlines;

/// What kind of failure a render ended with. More kinds may be added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RenderErrorKind {
    /// The template does not parse.
    Syntax,
    /// The template called `raise_exception(...)`: it rejected the conversation.
    Raised,
    /// Evaluation failed (Python would raise `TypeError`, `UndefinedError`, ...).
    Runtime,
    /// The template exceeded a work, output or recursion bound.
    Limit,
    /// The render ran past its wall-clock deadline and was abandoned.
    Timeout,
    /// The render was stopped through its [`CancelToken`](super::CancelToken).
    Cancelled,
    /// The inputs are unusable before the template runs (transformers' `ValueError`s).
    Input,
}

impl RenderErrorKind {
    /// A short label for display.
    pub fn label(self) -> &'static str {
        match self {
            RenderErrorKind::Syntax => "syntax error",
            RenderErrorKind::Raised => "template raised",
            RenderErrorKind::Runtime => "render error",
            RenderErrorKind::Limit => "limit exceeded",
            RenderErrorKind::Timeout => "timed out",
            RenderErrorKind::Cancelled => "cancelled",
            RenderErrorKind::Input => "invalid input",
        }
    }
}

/// A 1-based position in the template source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourcePosition {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
}

/// A failed render or compile, with everything needed to show it in place.
///
/// Where transformers would raise too, [`RenderError::exception`] names the Python
/// exception class and [`RenderError::message`] is what Python's `str(exception)` says
/// (exactly, where Jinja2's wording is deterministic). Positions refer to the template as
/// the user wrote it, with newlines normalized (see [`RenderError::excerpt`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RenderError {
    /// The failure class.
    pub kind: RenderErrorKind,
    /// The Python exception class transformers raises for the same failure
    /// (`TypeError`, `UndefinedError`, `TemplateSyntaxError`, ...), when there is one.
    pub exception: Option<&'static str>,
    /// The message, without position or exception class.
    pub message: String,
    /// Where in the template, when known.
    pub position: Option<SourcePosition>,
    /// The bound a [`RenderErrorKind::Limit`] or [`RenderErrorKind::Timeout`] error hit,
    /// with its values, when it is one of [`Limits`](crate::Limits)' bounds.
    pub bound: Option<crate::Bound>,
}

impl std::error::Error for RenderError {}

impl fmt::Display for RenderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.label(), self.traceback_line())?;
        if let Some(pos) = self.position {
            write!(f, " (line {}, column {})", pos.line, pos.column)?;
        }
        Ok(())
    }
}

impl RenderError {
    /// An error of `kind` with `message`, without position or Python class.
    pub fn new(kind: RenderErrorKind, message: impl Into<String>) -> Self {
        RenderError {
            kind,
            exception: None,
            message: message.into(),
            position: None,
            bound: None,
        }
    }

    /// A render stopped through its cancel token.
    pub fn cancelled() -> Self {
        Self::new(RenderErrorKind::Cancelled, "the render was stopped")
    }

    /// An error about the inputs, before any template code ran (transformers raises
    /// `ValueError` for these).
    pub fn input(message: impl Into<String>) -> Self {
        RenderError {
            exception: Some("ValueError"),
            ..Self::new(
                RenderErrorKind::Input,
                crate::visible::message(&message.into()),
            )
        }
    }

    /// A bound was exceeded (`kind` is [`RenderErrorKind::Limit`] or
    /// [`RenderErrorKind::Timeout`]); `message` names the limit and how to raise it.
    pub fn limit(kind: RenderErrorKind, message: String) -> Self {
        Self::new(kind, message)
    }

    /// One of [`Limits`](crate::Limits)' bounds was exceeded: the error carries it, and
    /// its message ([`crate::Bound::message`]).
    pub fn bounded(kind: RenderErrorKind, bound: crate::Bound) -> Self {
        RenderError {
            bound: Some(bound),
            ..Self::new(kind, bound.message())
        }
    }

    /// A syntax error Jinja2 reports at byte `offset` of `source`.
    pub(super) fn syntax(message: String, source: &str, offset: usize) -> Self {
        RenderError {
            kind: RenderErrorKind::Syntax,
            exception: Some("TemplateSyntaxError"),
            message,
            position: position_at(source, offset),
            bound: None,
        }
    }

    /// Whether this error's position comes before byte `offset` of `source`.
    pub(super) fn is_before(&self, source: &str, offset: usize) -> bool {
        match (self.position, position_at(source, offset)) {
            (Some(mine), Some(theirs)) => (mine.line, mine.column) < (theirs.line, theirs.column),
            _ => false,
        }
    }

    /// The message as Python prints an uncaught exception's last line: `TypeError:
    /// can only concatenate str (not "int") to str`. A template's own
    /// `raise_exception` text is shown as it is.
    pub fn traceback_line(&self) -> String {
        match self.exception {
            Some(class) if self.kind != RenderErrorKind::Raised => {
                format!("{class}: {}", self.message)
            }
            _ => self.message.clone(),
        }
    }

    /// The stable form of this error, as `--bless` and the app's `E` store it: kind and
    /// the first line of [`RenderError::traceback_line`] without the position, so an
    /// expectation survives the template's lines moving. (`{"error": fragment}` matches
    /// when the fragment is part of it.)
    pub fn summary(&self) -> String {
        let line = self.traceback_line();
        let first_line = line.lines().next().unwrap_or_default();
        format!("{}: {first_line}", self.kind.label())
    }

    /// `Class: message` when the error has a Python class (a template's own
    /// `raise_exception` is a `TemplateError`): what an expected `{"exception": ...}`
    /// must equal.
    pub fn exception_line(&self) -> Option<String> {
        self.exception
            .map(|class| format!("{class}: {}", self.message))
    }

    /// Whether this error is exactly the expected Python exception, `Class: message`.
    pub fn matches_exception(&self, want: &str) -> bool {
        self.exception_line().as_deref() == Some(want)
    }

    /// Whether this error satisfies an expected `{"error": fragment}`: the fragment is
    /// part of the summary, of the full message with its position (older fixtures
    /// stored that form) or of the message alone. A blank fragment matches nothing: it
    /// would be part of every error.
    pub fn matches_expected(&self, fragment: &str) -> bool {
        !fragment.trim().is_empty()
            && (self.summary().contains(fragment)
                || self.to_string().contains(fragment)
                || self.message.contains(fragment))
    }

    /// Converts a MiniJinja error. `source` is the template as the user wrote it (newlines
    /// normalised); `to_original` maps a byte offset in the text MiniJinja compiled back
    /// into `source`.
    pub(super) fn from_minijinja(
        err: &minijinja::Error,
        source: &str,
        to_original: &dyn Fn(usize) -> usize,
        limit_hint: Option<&str>,
    ) -> Self {
        use minijinja::ErrorKind as K;
        let detail = full_detail(err);
        let (kind, exception, message) = if let Some(raised) = detail.strip_prefix(RAISED_PREFIX) {
            (
                RenderErrorKind::Raised,
                Some("TemplateError"),
                raised.to_string(),
            )
        } else {
            match err.kind() {
                K::SyntaxError | K::InvalidDelimiter => {
                    let offset = error_offset(err, to_original);
                    let message = super::syntax::translate(&detail, source, offset);
                    (
                        RenderErrorKind::Syntax,
                        Some("TemplateSyntaxError"),
                        message,
                    )
                }
                K::OutOfFuel => (
                    RenderErrorKind::Limit,
                    None,
                    limit_hint.unwrap_or(&detail).to_string(),
                ),
                K::WriteFailure => (
                    RenderErrorKind::Limit,
                    None,
                    limit_hint.unwrap_or("output too large").to_string(),
                ),
                _ if detail.contains("recursion limit") => (
                    RenderErrorKind::Limit,
                    None,
                    limit_hint.map_or(detail.clone(), str::to_string),
                ),
                kind => {
                    let python = translate(kind, &detail);
                    (RenderErrorKind::Runtime, python.class, python.message)
                }
            }
        };
        RenderError {
            kind,
            exception,
            // The message may carry the template's own text (`raise_exception`):
            // control characters escaped, and cut when huge.
            message: crate::visible::message(&message),
            position: position_of(err, source, to_original),
            bound: None,
        }
    }

    /// The template lines around the error, numbered, with a caret under the column.
    /// `source` is the template as the user wrote it.
    pub fn excerpt(&self, source: &str, context: usize) -> Option<String> {
        let pos = self.position?;
        let source = normalize_newlines(source);
        let lines: Vec<&str> = source.lines().collect();
        let first = pos.line.saturating_sub(context + 1);
        let last = (pos.line + context).min(lines.len());
        let width = last.to_string().len();
        let mut out = String::new();
        for (index, text) in lines.iter().enumerate().take(last).skip(first) {
            let number = index + 1;
            let mark = if number == pos.line { ">" } else { " " };
            let (shown, column) = excerpt_window(text, pos.column, number == pos.line);
            let shown = crate::visible::for_terminal(&shown);
            out.push_str(&format!("{mark}{number:>width$} | {shown}\n"));
            if number == pos.line {
                let pad = " ".repeat(width + 3 + column.saturating_sub(1) + 1);
                out.push_str(&format!("{pad}^\n"));
            }
        }
        Some(out)
    }
}

/// Widest template line shown in an excerpt, in characters.
const EXCERPT_CHARS: usize = 160;

/// A long line cut to a window around the error column (one-line templates are common);
/// returns the text and the column within it.
fn excerpt_window(line: &str, column: usize, has_error: bool) -> (String, usize) {
    let len = line.chars().count();
    if len <= EXCERPT_CHARS {
        return (line.to_string(), column);
    }
    let start = if has_error {
        column
            .saturating_sub(EXCERPT_CHARS / 2)
            .min(len - EXCERPT_CHARS)
    } else {
        0
    };
    let window: String = line.chars().skip(start).take(EXCERPT_CHARS).collect();
    let before = if start > 0 { "…" } else { "" };
    let after = if start + EXCERPT_CHARS < len {
        "…"
    } else {
        ""
    };
    (
        format!("{before}{window}{after}"),
        column - start + before.chars().count(),
    )
}

/// The error's detail plus any chained causes (MiniJinja nests errors from calls).
pub(crate) fn full_detail(err: &minijinja::Error) -> String {
    let mut message = match err.detail() {
        Some(detail) => detail.to_string(),
        None => err.kind().to_string(),
    };
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        if let Some(inner) = cause.downcast_ref::<minijinja::Error>() {
            if let Some(detail) = inner.detail() {
                if detail.starts_with(RAISED_PREFIX) {
                    return detail.to_string();
                }
                message = format!("{message}: {detail}");
            }
        } else {
            message = format!("{message}: {cause}");
        }
        source = cause.source();
    }
    message
}

fn position_of(
    err: &minijinja::Error,
    source: &str,
    to_original: &dyn Fn(usize) -> usize,
) -> Option<SourcePosition> {
    let line = err.line()?;
    error_offset(err, to_original)
        .and_then(|offset| position_at(source, offset))
        .or(Some(SourcePosition { line, column: 1 }))
}

/// Where in the user's source MiniJinja reports `err`, as a byte offset.
fn error_offset(err: &minijinja::Error, to_original: &dyn Fn(usize) -> usize) -> Option<usize> {
    err.range().map(|range| to_original(range.start))
}

/// The line and column of byte `offset` in `source`.
pub(super) fn position_at(source: &str, offset: usize) -> Option<SourcePosition> {
    let before = source.get(..offset)?;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    Some(SourcePosition {
        line: before.matches('\n').count() + 1,
        column: before[line_start..].chars().count() + 1,
    })
}

//! What a pattern can cost, read from its syntax tree before it ever runs: whether it
//! needs the backtracking engine at all, how long a match can be, and how many times one
//! match attempt can rescan the text.
//!
//! fancy-regex bounds a search by the number of times it backtracks, but the work between
//! two backtracks is not counted: a look-around or back-reference of unbounded length
//! scans up to the whole text each time it runs (a variable-length look-behind scans
//! backwards to the start). [`crate::parse::search`] uses this shape to size each search
//! so that no single uninterruptible step is long, and to refuse, by the deadline, the
//! patterns whose single attempt grows with a power of the text.

use fancy_regex::{Assertion, Expr};

/// A pattern's cost, as far as its syntax tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shape {
    /// Needs the backtracking engine (look-arounds, back-references, atomic groups,
    /// word boundaries...); otherwise fancy-regex runs it on a linear-time engine.
    pub(crate) hard: bool,
    /// The longest match in bytes, when bounded.
    pub(crate) max_len: Option<usize>,
    /// The power of the text's length that one match attempt may cost, besides what it
    /// consumes: 0 when every look-around and back-reference has a bounded length, 1 when
    /// some scan the text, 2 when such a scan sits in a repetition, and so on.
    pub(crate) degree: u32,
    /// A pattern that matches wherever this one can start a match (and possibly
    /// elsewhere), without any construct that needs backtracking: the candidate start
    /// positions of a bounded search. `None` when it could not be made.
    pub(crate) relaxed: Option<String>,
    /// Uses `\G`, whose meaning depends on where the search started.
    pub(crate) continues: bool,
}

impl Shape {
    /// The shape of a pattern already in fancy-regex's syntax (see `pattern::translate`).
    pub(crate) fn of(translated: &str) -> Option<Shape> {
        let tree = Expr::parse_tree(translated).ok()?;
        let expr = &tree.expr;
        let relaxed = relax_tail(expr).map(|easy| {
            let mut text = String::new();
            easy.to_str(&mut text, 0);
            text
        });
        Some(Shape {
            hard: is_hard(expr),
            max_len: max_len(expr),
            degree: degree(expr),
            relaxed,
            continues: contains(expr, &|e| matches!(e, Expr::ContinueFromPreviousMatchEnd)),
        })
    }
}

/// Whether `expr` has a part that only the backtracking engine runs.
fn is_hard(expr: &Expr) -> bool {
    contains(expr, &|e| match e {
        Expr::Assertion(assertion) => hard_assertion(*assertion),
        Expr::LookAround(..)
        | Expr::Backref { .. }
        | Expr::BackrefWithRelativeRecursionLevel { .. }
        | Expr::AtomicGroup(_)
        | Expr::KeepOut
        | Expr::ContinueFromPreviousMatchEnd
        | Expr::BackrefExistsCondition(_)
        | Expr::Conditional { .. }
        | Expr::SubroutineCall(_)
        | Expr::UnresolvedNamedSubroutineCall { .. } => true,
        _ => false,
    })
}

/// The assertions the linear engine cannot write in its own syntax.
fn hard_assertion(assertion: Assertion) -> bool {
    !matches!(
        assertion,
        Assertion::StartText
            | Assertion::EndText
            | Assertion::StartLine { .. }
            | Assertion::EndLine { .. }
    )
}

/// Whether `expr` or any part of it satisfies `test`.
fn contains(expr: &Expr, test: &dyn Fn(&Expr) -> bool) -> bool {
    test(expr) || children(expr).iter().any(|child| contains(child, test))
}

fn children(expr: &Expr) -> Vec<&Expr> {
    match expr {
        Expr::Concat(items) | Expr::Alt(items) => items.iter().collect(),
        Expr::Group(child)
        | Expr::LookAround(child, _)
        | Expr::AtomicGroup(child)
        | Expr::Repeat { child, .. } => vec![child],
        Expr::Conditional {
            condition,
            true_branch,
            false_branch,
        } => vec![condition, true_branch, false_branch],
        _ => Vec::new(),
    }
}

/// The longest text `expr` can match, in bytes; `None` when unbounded.
fn max_len(expr: &Expr) -> Option<usize> {
    match expr {
        Expr::Empty
        | Expr::Assertion(_)
        | Expr::LookAround(..)
        | Expr::KeepOut
        | Expr::ContinueFromPreviousMatchEnd
        | Expr::BackrefExistsCondition(_) => Some(0),
        Expr::Any { .. } => Some(4),
        // Case folding can turn one byte into up to three (`ß` matches `ẞ`).
        Expr::Literal { val, casei } => val.len().checked_mul(if *casei { 3 } else { 1 }),
        Expr::Delegate { size, .. } => size.checked_mul(4),
        Expr::Concat(items) => items
            .iter()
            .try_fold(0usize, |sum, item| sum.checked_add(max_len(item)?)),
        Expr::Alt(items) => items
            .iter()
            .try_fold(0, |most, item| Some(most.max(max_len(item)?))),
        Expr::Group(child) | Expr::AtomicGroup(child) => max_len(child),
        Expr::Repeat { child, hi, .. } if *hi == usize::MAX => (max_len(child)? == 0).then_some(0),
        Expr::Repeat { child, hi, .. } => max_len(child)?.checked_mul(*hi),
        Expr::Conditional {
            true_branch,
            false_branch,
            ..
        } => Some(max_len(true_branch)?.max(max_len(false_branch)?)),
        _ => None,
    }
}

/// Repetitions of at most this many passes count as a constant factor.
const FEW_PASSES: usize = 16;

/// The power of the text's length one execution of `expr` may cost beyond what it
/// consumes (see [`Shape::degree`]).
fn degree(expr: &Expr) -> u32 {
    match expr {
        // A look-around of unbounded length may scan to either end of the text.
        Expr::LookAround(inner, _) => u32::from(max_len(inner).is_none()).max(degree(inner)),
        Expr::Backref { .. } | Expr::BackrefWithRelativeRecursionLevel { .. } => 1,
        // Each pass of a repetition may run its scans again: up to one pass per character
        // (a few passes at most only multiply the cost).
        Expr::Repeat { child, hi, .. } if *hi > FEW_PASSES => match degree(child) {
            0 => 0,
            inner => inner + 1,
        },
        _ => children(expr).into_iter().map(degree).max().unwrap_or(0),
    }
}

/// [`relax`], except that a look-ahead nothing follows keeps its text, consumed: where
/// the pattern ends in `(?=\n?\z)` (Python's `$`), only the end of the text and the
/// newline before it remain candidates instead of every position.
fn relax_tail(expr: &Expr) -> Option<Expr> {
    Some(match expr {
        Expr::Alt(items) => Expr::Alt(items.iter().map(relax_tail).collect::<Option<_>>()?),
        Expr::Concat(items) => {
            let (last, rest) = items.split_last()?;
            let mut relaxed = rest.iter().map(relax).collect::<Option<Vec<_>>>()?;
            relaxed.push(relax_tail(last)?);
            Expr::Concat(relaxed)
        }
        Expr::Group(child) => Expr::Group(Box::new(relax_tail(child)?)),
        Expr::LookAround(inner, fancy_regex::LookAround::LookAhead) => relax(inner)?,
        other => relax(other)?,
    })
}

/// `expr` with every construct the linear engine lacks replaced by one that matches at
/// least as much: a look-around or a hard assertion by nothing, a back-reference by any
/// text, an atomic group by a plain one, a condition by either branch. Where this
/// pattern matches, so does the relaxed one, starting at the same place.
fn relax(expr: &Expr) -> Option<Expr> {
    let all = |items: &[Expr]| items.iter().map(relax).collect::<Option<Vec<_>>>();
    Some(match expr {
        Expr::Assertion(assertion) if hard_assertion(*assertion) => Expr::Empty,
        Expr::LookAround(..) | Expr::KeepOut | Expr::BackrefExistsCondition(_) => Expr::Empty,
        Expr::Backref { .. } | Expr::BackrefWithRelativeRecursionLevel { .. } => Expr::Repeat {
            child: Box::new(Expr::Any { newline: true }),
            lo: 0,
            hi: usize::MAX,
            greedy: false,
        },
        Expr::Concat(items) => Expr::Concat(all(items)?),
        Expr::Alt(items) => Expr::Alt(all(items)?),
        Expr::Group(child) => Expr::Group(Box::new(relax(child)?)),
        // Not a capture group: the relaxed pattern's group numbers do not matter.
        Expr::AtomicGroup(child) => Expr::Concat(vec![relax(child)?]),
        Expr::Repeat {
            child,
            lo,
            hi,
            greedy,
        } => Expr::Repeat {
            child: Box::new(relax(child)?),
            lo: *lo,
            hi: *hi,
            greedy: *greedy,
        },
        Expr::Conditional {
            condition,
            true_branch,
            false_branch,
        } => Expr::Alt(vec![
            Expr::Concat(vec![relax(condition)?, relax(true_branch)?]),
            relax(false_branch)?,
        ]),
        Expr::ContinueFromPreviousMatchEnd
        | Expr::SubroutineCall(_)
        | Expr::UnresolvedNamedSubroutineCall { .. } => return None,
        other => other.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(pattern: &str) -> Shape {
        Shape::of(pattern).unwrap()
    }

    #[test]
    fn plain_patterns_are_easy_and_bounded_when_they_are() {
        let plain = shape(r"<\|im_end\|>\s*");
        assert!(!plain.hard);
        assert_eq!(plain.max_len, None);
        assert_eq!(plain.degree, 0);
        assert_eq!(shape("<tool_call>").max_len, Some(11));
    }

    #[test]
    fn scans_are_counted_by_how_often_they_can_run() {
        assert_eq!(shape("(?<=!)x").degree, 0);
        assert_eq!(shape("(?<=a+)b").degree, 1);
        assert_eq!(shape(r"(?=[\s\S]*?</think>)").degree, 1);
        assert_eq!(shape("(?:(?<=a+)a)*b").degree, 2);
        assert_eq!(shape(r"(\w+)x\1").degree, 1);
        assert_eq!(shape("(?:(?=x)a)*").degree, 0);
        assert!(shape("(?<=a+)b").hard);
    }

    #[test]
    fn the_relaxed_pattern_drops_what_needs_backtracking() {
        assert_eq!(shape("(?<=a+)b").relaxed.as_deref(), Some("b"));
        assert_eq!(shape("a(?=b)c").relaxed.as_deref(), Some("ac"));
        assert_eq!(
            shape(r"\s*functools(?=\[)").relaxed.as_deref(),
            Some(r"\s*functools\[")
        );
        // Python's `$`: the end, or a final newline (the linear engine's `$` is the end).
        assert_eq!(shape(r"x|(?=\n?\z)").relaxed.as_deref(), Some("x|\n?$"));
        assert_eq!(shape(r"\Gx").relaxed, None);
        assert!(shape(r"\Gx").continues);
    }
}

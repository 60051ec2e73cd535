//! Slices: `base[start:stop:step]`.
//!
//! Every slice is rewritten ([`super::rewrite`]) into a call to [`slice_of`], for three
//! reasons:
//!
//! * **Python's semantics.** Jinja2 compiles a slice to Python's own subscript, past
//!   the sandbox's `getitem`: an undefined base raises `UndefinedError`, `None`, numbers,
//!   dicts, generators and namespaces raise Python's `TypeError`, bounds must be
//!   integers or `None`, and a step of 0 is a `ValueError`. MiniJinja slices undefined
//!   and `none` into `[]`. Only a slice Jinja2 folds as a constant (the whole `{{ }}`
//!   expression, of literals only: `{{ none[1:] }}`) goes through the sandbox, which
//!   turns those `TypeError`s into an undefined value.
//! * **Closures.** MiniJinja's analysis of what a macro (or `{% call %}` /
//!   `{% generation %}` body) captures does not look inside a slice's base, so
//!   `{{ xs[1:] }}` in a macro saw no `xs`. As a call's argument it is seen.
//! * **Indexing a slice in place** (`messages[1:][i]`): MiniJinja slices a list lazily
//!   (an iterable that skips `start` items and takes the rest), and indexing that
//!   iterable walks it from the start, so `messages[1:][i]` in a loop over `i` is
//!   quadratic. Stored slices are lists already ([`super::loops`]); a slice indexed
//!   where it is written is a view that finds item `i` at `start + i × step` in O(1).
//!
//! Everything Python can slice is then sliced by MiniJinja itself, so the items never
//! change.

use std::sync::{Arc, LazyLock};

use minijinja::machinery::ast::{Expr, Slice};
use minijinja::value::{Enumerator, Object, ObjectRepr, Value, ValueKind};
use minijinja::{Environment, Error, Expression};

use super::edits::{Edit, EditKind};
use super::helpers::Helpers;
use super::none::is_python_none;
use super::pyerror::raise;
use super::pytype::type_name;
use super::rewrite::Cx;

/// Registers the helper under this template's name.
pub(crate) fn register(env: &mut Environment<'static>, helpers: &Helpers) {
    env.add_filter(helpers.slice_of(), slice_of);
}

/// How a slice is used where it is written (the helper's last argument).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SliceUse {
    /// Anything else.
    Plain = 0,
    /// Indexed at once: `base[1:][i]`.
    Indexed = 1,
    /// The whole `{{ }}` expression, made of literals: Jinja2 folds it as a constant.
    Folded = 2,
}

/// `base[start:stop:step]` as Python computes it (missing bounds are `none`); `mode` is
/// a [`SliceUse`].
fn slice_of(
    base: Value,
    start: Value,
    stop: Value,
    step: Value,
    mode: i64,
) -> Result<Value, Error> {
    let folded = mode == SliceUse::Folded as i64;
    match python_slice(base, [start, stop, step], mode == SliceUse::Indexed as i64) {
        // The sandbox's `getitem` gives an undefined value for a `TypeError`.
        Err(err) if folded && err.to_string().contains("TypeError: ") => Ok(Value::UNDEFINED),
        result => result,
    }
}

fn python_slice(base: Value, bounds: [Value; 3], indexed: bool) -> Result<Value, Error> {
    if base.is_undefined() {
        // Jinja2's `Undefined.__getitem__`: MiniJinja's own error about the undefined
        // value, which names the expression it came from.
        return Err(i64::try_from(base).expect_err("undefined is no integer"));
    }
    not_subscriptable(&base)?;
    let [start, stop, step] = bounds.map(python_bound);
    let (start, stop, step) = (start?, stop?, step?);
    if step.is_some_and(|step| step == 0) {
        return Err(raise("ValueError", "slice step cannot be zero"));
    }
    let [start, stop, step] = [start, stop, step].map(Value::from);
    if indexed {
        if let Some(view) = SliceView::of(&base, &start, &stop, &step) {
            return Ok(Value::from_object(view));
        }
    }
    let safe = base.is_safe();
    let sliced = minijinja_slice(base, start, stop, step)?;
    Ok(match sliced.as_str() {
        // markupsafe's `Markup.__getitem__` keeps the result Markup.
        Some(text) if safe && sliced.kind() == ValueKind::String => {
            Value::from_safe_string(text.into())
        }
        _ => sliced,
    })
}

/// Python's `TypeError` for a base it cannot slice.
fn not_subscriptable(base: &Value) -> Result<(), Error> {
    let name = type_name(base);
    let message = match name {
        "dict" => "unhashable type: 'slice'".to_string(),
        "NoneType" | "bool" | "int" | "float" | "generator" | "TemplateNamespace"
        | "LoopContext" | "Macro" => format!("'{name}' object is not subscriptable"),
        _ => return Ok(()),
    };
    Err(raise("TypeError", message))
}

/// A bound as Python's sequences take it: an integer (or `bool`) or `None`.
fn python_bound(bound: Value) -> Result<Option<i64>, Error> {
    if is_python_none(&bound) {
        return Ok(None);
    }
    let integral = matches!(bound.kind(), ValueKind::Bool)
        || (bound.kind() == ValueKind::Number && bound.is_integer());
    match integral.then(|| i64::try_from(bound)) {
        Some(Ok(bound)) => Ok(Some(bound)),
        // Beyond 64 bits, or not an integer.
        _ => Err(raise(
            "TypeError",
            "slice indices must be integers or None or have an __index__ method",
        )),
    }
}

/// Whether Jinja2 folds this slice as a constant when it is printed on its own: its
/// base and bounds are all literals.
pub(crate) fn is_folded(slice: &Slice) -> bool {
    std::iter::once(&slice.expr)
        .chain(
            [&slice.start, &slice.stop, &slice.step]
                .into_iter()
                .flatten(),
        )
        .all(is_literal)
}

/// A constant Jinja2 folds: a literal, or a list, tuple, dict or operation of literals.
fn is_literal(expr: &Expr) -> bool {
    match expr {
        Expr::Const(_)
        | Expr::List(_)
        | Expr::Tuple(_)
        | Expr::Map(_)
        | Expr::UnaryOp(_)
        | Expr::BinOp(_) => super::subexpressions::of(expr).all(is_literal),
        _ => false,
    }
}

/// The rewrite: `base[start:stop:step]` (`whole`) becomes
/// `(((base))|slice_of((start), (stop), (step), usage))` (the helper in filter form, see
/// `helpers::OPEN`), `none` for a missing bound. Only
/// the brackets and colons between the parts are replaced, so the parts keep their own
/// edits.
pub(crate) fn rewrite(slice: &Slice, whole: &Expr, usage: SliceUse, cx: &mut Cx) {
    let (start, end) = cx.extents.of(whole);
    // The base runs to the `[`: in `(x)[1:]` its parentheses belong to the slice.
    let (_, base_end) = cx.extents.of(&slice.expr);
    let bracket = cx.source[base_end..end]
        .find('[')
        .map_or(base_end, |at| base_end + at);
    cx.edits.push(Edit {
        start,
        end: bracket,
        kind: EditKind::Around(super::helpers::OPEN.into(), String::new()),
    });
    let (mut cursor, mut between) = (bracket, super::helpers::then_call(&cx.helpers.slice_of()));
    for bound in [&slice.start, &slice.stop, &slice.step] {
        let Some(bound) = bound else {
            between.push_str("none, ");
            continue;
        };
        let (start, bound_end) = cx.extents.of(bound);
        cx.edits.push(Edit {
            start: cursor,
            end: start,
            kind: EditKind::Replace(format!("{between}(")),
        });
        (cursor, between) = (bound_end, String::from("), "));
    }
    cx.edits.push(Edit {
        start: cursor,
        end,
        kind: EditKind::Replace(format!("{between}{}))", usage as u8)),
    });
}

/// A bound MiniJinja's way (already checked to be `none` or an integer).
fn bound(value: &Value) -> Option<Option<i64>> {
    if value.is_none() {
        return Some(None);
    }
    i64::try_from(value.clone()).ok().map(Some)
}

/// The items of a list slice with a positive step, indexed in O(1). It answers exactly
/// the lookups MiniJinja's lazy slice answers: the same items, the same length.
#[derive(Debug)]
struct SliceView {
    items: Arc<Vec<Value>>,
    start: usize,
    step: usize,
    len: usize,
}

impl SliceView {
    fn of(base: &Value, start: &Value, stop: &Value, step: &Value) -> Option<Self> {
        let items = base.downcast_object::<Vec<Value>>()?;
        let (start, stop, step) = (bound(start)?, bound(stop)?, bound(step)?);
        let step = usize::try_from(step.unwrap_or(1)).ok().filter(|&s| s > 0)?;
        let (start, taken) = offset_and_len(start, stop, items.len());
        // The lazy slice takes `taken` items from `start`, as many as there are, and
        // keeps every `step`th.
        let available = taken.min(items.len().saturating_sub(start));
        Some(SliceView {
            len: available.div_ceil(step),
            items,
            start,
            step,
        })
    }
}

/// MiniJinja's slice bounds for a positive step: where the slice starts and how many
/// items it may take. Negative bounds count from the end (clamped at 0); positive
/// ones are not clamped (taking stops where the items end).
fn offset_and_len(start: Option<i64>, stop: Option<i64>, len: usize) -> (usize, usize) {
    let from_end = |bound: i64| (len as i64).saturating_add(bound).max(0) as usize;
    let start = match start.unwrap_or(0) {
        s if s < 0 => from_end(s),
        s => s as usize,
    };
    let stop = match stop {
        None => len,
        Some(s) if s < 0 => from_end(s),
        Some(s) => s as usize,
    };
    (start, stop.saturating_sub(start))
}

/// The list `value` is, or the list and start of a suffix of one (a view made by an
/// indexed slice with no stop and step 1): for scans that remember what they found in
/// a list ([`super::scans`]).
pub(crate) fn suffix_of(value: &Value) -> Option<(Arc<Vec<Value>>, usize)> {
    if let Some(list) = value.downcast_object::<Vec<Value>>() {
        return Some((list, 0));
    }
    let view = value.downcast_object_ref::<SliceView>()?;
    (view.step == 1 && view.start.checked_add(view.len)? == view.items.len())
        .then(|| (Arc::clone(&view.items), view.start))
}

impl Object for SliceView {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Seq
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let index = key.as_usize().filter(|&i| i < self.len)?;
        self.items.get(self.start + index * self.step).cloned()
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Seq(self.len)
    }
}

/// An environment only for evaluating MiniJinja's own slice expression.
static SLICER: LazyLock<Environment<'static>> = LazyLock::new(Environment::new);

/// MiniJinja's slice expression, compiled once.
static SLICE: LazyLock<Expression<'static, 'static>> = LazyLock::new(|| {
    SLICER
        .compile_expression("base[start:stop:step]")
        .expect("a valid expression")
});

/// `base[start:stop:step]` exactly as MiniJinja computes it (strings, tuples, negative
/// steps, lazy lists).
fn minijinja_slice(base: Value, start: Value, stop: Value, step: Value) -> Result<Value, Error> {
    SLICE.eval(minijinja::context! { base, start, stop, step })
}

#[cfg(test)]
mod tests {
    use crate::{CompiledTemplate, Conversation, Limits};

    /// The same expression through chatplate (rewritten) and plain MiniJinja.
    fn both(expression: &str) -> (String, String) {
        let source = format!("{{% set l = [10, 11, 12, 13, 14, 15, 16] %}}{{{{ {expression} }}}}");
        let conversation = Conversation {
            messages: vec![serde_json::json!({"role": "user", "content": "x"})],
            ..Conversation::default()
        };
        let ours = CompiledTemplate::compile(&source, Limits::default())
            .and_then(|t| t.render(&conversation))
            .map_err(|e| e.message.clone());
        let mut env = minijinja::Environment::new();
        env.add_template("t", &source).unwrap();
        let plain = env
            .get_template("t")
            .unwrap()
            .render(())
            .map_err(|e| e.to_string());
        (
            ours.unwrap_or_else(|e| format!("error {e}")),
            plain.unwrap_or_else(|_| "error".into()),
        )
    }

    #[test]
    fn indexing_a_slice_in_place_gives_minijinja_s_items() {
        let bounds = ["", "0", "1", "3", "-2", "-9", "9", "none"];
        let steps = ["", "1", "2", "3", "-1", "-2"];
        let indexes = ["0", "1", "2", "-1", "-3", "5", "9", "'a'", "1.0", "true"];
        let mut checked = 0;
        for start in bounds {
            for stop in bounds {
                for step in steps {
                    for index in indexes {
                        let slice = match step {
                            "" => format!("l[{start}:{stop}]"),
                            step => format!("l[{start}:{stop}:{step}]"),
                        };
                        let expression = format!("{slice}[{index}]");
                        let (ours, plain) = both(&expression);
                        if !plain.starts_with("error") {
                            assert_eq!(ours, plain, "{expression}");
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert!(checked > 1000, "{checked}");
    }

    #[test]
    fn strings_and_tuples_keep_minijinja_s_slices() {
        for expression in [
            "'hello'[1:][0]",
            "'hello'[::-1][0]",
            "(1, 2, 3)[1:][0]",
            "'héllo'[-3:]",
            "l[::-2]",
            "(l[1:] | list)[0]",
            "l[1:][0:2]",
            "l[1:][l[2:][0] - 11]",
        ] {
            let (ours, plain) = both(expression);
            assert_eq!(ours, plain, "{expression}");
        }
    }

    fn render(source: &str) -> String {
        let conversation = Conversation {
            messages: vec![serde_json::json!({"role": "user", "content": "hi"})],
            ..Conversation::default()
        };
        match CompiledTemplate::compile(source, Limits::default())
            .and_then(|t| t.render(&conversation))
        {
            Ok(out) => out,
            Err(err) => err.traceback_line(),
        }
    }

    // Expectations: transformers 5.23.0 / Jinja2 3.1.6 (CPython 3.11) on the same source.
    #[test]
    fn slices_fail_where_python_s_subscript_fails() {
        for (source, python) in [
            ("{{ nope[1:] }}", "UndefinedError: 'nope' is undefined"),
            (
                "{{ messages[0].nope[1:] }}",
                "UndefinedError: 'dict object' has no attribute 'nope'",
            ),
            (
                "{% set n = none %}{{ n[1:] }}",
                "TypeError: 'NoneType' object is not subscriptable",
            ),
            (
                "{% set n = 5 %}{{ n[1:] }}",
                "TypeError: 'int' object is not subscriptable",
            ),
            (
                "{{ messages[0][1:] }}",
                "TypeError: unhashable type: 'slice'",
            ),
            ("{{ [1, 2][::0] }}", "ValueError: slice step cannot be zero"),
            (
                "{{ [1, 2][nope:] }}",
                "TypeError: slice indices must be integers or None or have an __index__ method",
            ),
            (
                "{% for x in [1] %}{{ loop[1:] }}{% endfor %}",
                "TypeError: 'LoopContext' object is not subscriptable",
            ),
            (
                "{{ none[1:][0] is undefined }}",
                "TypeError: 'NoneType' object is not subscriptable",
            ),
        ] {
            assert_eq!(render(source), python, "{source}");
        }
    }

    // Jinja2 folds `{{ <literals>[a:b] }}` as a constant through the sandbox's getitem,
    // which makes a TypeError an undefined value (printed as nothing).
    #[test]
    fn a_printed_slice_of_literals_is_folded_like_jinja2() {
        for (source, python) in [
            ("{{ none[1:] }}", ""),
            ("{{ (5)[1:] }}", ""),
            ("{{ {'a': 1}[1:] }}", ""),
            ("{{ [1, 2]['a':] }}", ""),
            ("{{ [1, 2, 3][1:] }}", "[2, 3]"),
            ("{{ 'ab'[none:] }}", "ab"),
            ("{{ [1, 2][::0] }}", "ValueError: slice step cannot be zero"),
            (
                "{{ none[1:].x }}",
                "TypeError: 'NoneType' object is not subscriptable",
            ),
        ] {
            assert_eq!(render(source), python, "{source}");
        }
    }
}

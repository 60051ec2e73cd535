//! Python's `TypeError` for an operator applied to mismatched values, worked out from
//! the values themselves.
//!
//! MiniJinja reports `'a' + 1` as "unsupported types string and number", which does
//! not say whether the number was an int or a float (Python's message names the type:
//! `can only concatenate str (not "int") to str`), nor whether a sequence was a list or
//! a tuple. When a render fails that way, the failing expression (found by the error's
//! span) is replaced by a call to [`EXPLAIN`] and the template rendered once more: the
//! helper performs the operation like MiniJinja does and, where it fails, raises the
//! error Python raises for those operand types. Only failed renders pay for this.

use std::ops::Range;

use minijinja::machinery::ast::{BinOpKind, Call, Expr, Stmt, UnaryOpKind};
use minijinja::value::{Value, ValueKind};
use minijinja::{Error, ErrorKind, State};

use super::extent::extent;
use super::pyerror::{operator_error, raise};
use super::pytype::type_name;
use super::subexpressions;

/// The helper the failing operation is routed through.
pub(crate) const EXPLAIN: &str = "__chatplate_explain_operator";

/// Whether `err` is an operator failure whose Python wording needs the operand types.
pub(crate) fn needs_types(err: &Error) -> bool {
    if err.kind() != ErrorKind::InvalidOperation {
        return false;
    }
    match err.detail() {
        None => true,
        Some(detail) => {
            let undecided = ["number", "plain object", "iterator", "sequence"];
            // An undefined operand is Jinja2's UndefinedError, not a TypeError.
            (detail.starts_with("tried to use ")
                && !detail.contains("undefined")
                && undecided.iter().any(|k| detail.contains(k)))
                || detail == "strings can only be multiplied with integers"
                || detail == "sequences and iterables can only be multiplied with integers"
        }
    }
}

/// Registers the helper (on the environment used for the second render only).
pub(crate) fn register(env: &mut minijinja::Environment<'static>) {
    env.add_function(EXPLAIN, explain);
}

/// `source` with the operation at `range` routed through [`EXPLAIN`].
pub(crate) fn instrument(
    source: &str,
    range: Range<usize>,
    syntax: &minijinja::syntax::SyntaxConfig,
) -> Option<String> {
    let ast = minijinja::machinery::parse(source, "diagnosis", syntax.clone()).ok()?;
    let call = find(&ast, source, &range)?;
    Some(format!(
        "{}{call}{}",
        &source[..range.start],
        &source[range.end..]
    ))
}

fn find(stmt: &Stmt, source: &str, range: &Range<usize>) -> Option<String> {
    let mut found = None;
    visit_stmt(stmt, &mut |expr| {
        if found.is_none() {
            found = replacement(expr, source, range);
        }
    });
    found
}

/// The helper call for `expr`, if it is the operation at `range`.
fn replacement(expr: &Expr, source: &str, range: &Range<usize>) -> Option<String> {
    let text = |e: &Expr| {
        let (start, end) = extent(e, source);
        source.get(start..end).map(str::to_string)
    };
    match expr {
        Expr::BinOp(b) => {
            let (start, _) = extent(&b.left, source);
            let (_, end) = extent(&b.right, source);
            if (start..end) != *range {
                return None;
            }
            let op = match b.op {
                BinOpKind::Add => "+",
                BinOpKind::Sub => "-",
                BinOpKind::Mul => "*",
                BinOpKind::Div => "/",
                BinOpKind::FloorDiv => "//",
                BinOpKind::Rem => "%",
                BinOpKind::Pow => "**",
                _ => return None,
            };
            Some(format!(
                "{EXPLAIN}({op:?}, ({}), ({}))",
                text(&b.left)?,
                text(&b.right)?
            ))
        }
        Expr::UnaryOp(u) if matches!(u.op, UnaryOpKind::Neg) => {
            let (_, end) = extent(&u.expr, source);
            if ((u.span().start_offset as usize)..end) != *range {
                return None;
            }
            Some(format!("{EXPLAIN}(\"-\", none, ({}))", text(&u.expr)?))
        }
        _ => None,
    }
}

/// The operation as MiniJinja performs it; where that fails, Python's error.
fn explain(state: &State, op: String, left: Value, right: Value) -> Result<Value, Error> {
    let unary = left.is_none() && op == "-";
    let source = if unary {
        "-__right".to_string()
    } else {
        format!("__left {op} __right")
    };
    if op == "*" {
        repetition_error(&left, &right)?;
    }
    let expression = state.env().compile_expression(&source)?;
    let pair = [("__left", left.clone()), ("__right", right.clone())];
    // A map of the two names (collecting pairs would make a list of tuples).
    match expression.eval(Value::from_pairs(pair)) {
        Ok(value) => Ok(value),
        Err(_) if unary => Err(raise(
            "TypeError",
            format!("bad operand type for unary -: '{}'", type_name(&right)),
        )),
        Err(err) => match operator_error(&op, type_name(&left), type_name(&right)) {
            Some(python) => Err(raise("TypeError", python.message)),
            None => Err(err),
        },
    }
}

/// What Python raises for `left * right` before any repetition happens: Jinja2's
/// `Undefined.__mul__`/`__rmul__` raise at once, except that Markup's `__mul__` (which
/// a Markup on the right also answers, as `__rmul__`) hands its operand to
/// `str.__mul__` first, which refuses anything but an integer.
fn repetition_error(left: &Value, right: &Value) -> Result<(), Error> {
    let is_markup = |v: &Value| v.is_safe() && v.kind() == ValueKind::String;
    let is_index = |v: &Value| v.kind() == ValueKind::Bool || v.is_integer();
    let not_an_integer = |v: &Value| {
        let name = if is_markup(v) { "Markup" } else { type_name(v) };
        raise(
            "TypeError",
            format!("'{name}' object cannot be interpreted as an integer"),
        )
    };
    if left.is_undefined() {
        return Err(super::markup::undefined_error(left));
    }
    if is_markup(left) && !is_index(right) {
        return Err(not_an_integer(right));
    }
    if is_markup(right) && !is_index(left) {
        return Err(not_an_integer(left));
    }
    if right.is_undefined() {
        return Err(super::markup::undefined_error(right));
    }
    Ok(())
}

pub(super) fn visit_stmt(stmt: &Stmt, visit: &mut dyn FnMut(&Expr)) {
    let exprs_and_bodies: (Vec<&Expr>, Vec<&[Stmt]>) = match stmt {
        Stmt::Template(t) => (vec![], vec![&t.children]),
        Stmt::EmitExpr(e) => (vec![&e.expr], vec![]),
        Stmt::ForLoop(f) => (
            std::iter::once(&f.iter).chain(&f.filter_expr).collect(),
            vec![&f.body, &f.else_body],
        ),
        Stmt::IfCond(i) => (vec![&i.expr], vec![&i.true_body, &i.false_body]),
        Stmt::WithBlock(w) => (
            w.assignments.iter().map(|(_, v)| v).collect(),
            vec![&w.body],
        ),
        Stmt::Set(s) => (vec![&s.expr], vec![]),
        Stmt::SetBlock(s) => (s.filter.iter().collect(), vec![&s.body]),
        Stmt::AutoEscape(a) => (vec![], vec![&a.body]),
        Stmt::FilterBlock(f) => (vec![&f.filter], vec![&f.body]),
        Stmt::Block(b) => (vec![], vec![&b.body]),
        Stmt::Macro(m) => (m.defaults.iter().collect(), vec![&m.body]),
        Stmt::CallBlock(c) => (call_parts(&c.call), vec![&c.macro_decl.body]),
        Stmt::Do(d) => (call_parts(&d.call), vec![]),
        _ => (vec![], vec![]),
    };
    let (exprs, bodies) = exprs_and_bodies;
    for expr in exprs {
        visit_expr(expr, visit);
    }
    for body in bodies {
        for child in body {
            visit_stmt(child, visit);
        }
    }
}

fn call_parts<'e, 'a>(call: &'e Call<'a>) -> Vec<&'e Expr<'a>> {
    std::iter::once(&call.expr)
        .chain(call.args.iter().map(super::rewrite::argument))
        .collect()
}

fn visit_expr(expr: &Expr, visit: &mut dyn FnMut(&Expr)) {
    visit(expr);
    for child in subexpressions::of(expr) {
        visit_expr(child, visit);
    }
}

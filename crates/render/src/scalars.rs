//! Expressions whose value is plainly a scalar (a string, number, boolean or none),
//! whatever the variables hold, so the rewrite ([`super::rewrite`]) can leave them
//! without the helper call that guards values which could be containers.

use minijinja::machinery::ast::{BinOpKind, CallArg, Expr, UnaryOpKind};
use minijinja::value::ValueKind;

/// String methods (and their namesakes on other values) that give a string or a boolean,
/// or fail: no value a template can reach has a method of one of these names that
/// returns a container (a dict's `get` could, so it is not here).
const STRING_METHODS: &[&str] = &[
    "strip",
    "lstrip",
    "rstrip",
    "lower",
    "upper",
    "title",
    "capitalize",
    "replace",
    "startswith",
    "endswith",
];

/// Filters that always return a string or a number (or fail).
const SCALAR_FILTERS: &[&str] = &[
    "length",
    "count",
    "int",
    "float",
    "string",
    "trim",
    "tojson",
    "lower",
    "upper",
    "join",
    "replace",
    "capitalize",
    "title",
    "indent",
    "center",
    "truncate",
    "striptags",
    "wordcount",
    "round",
    "safe",
    "escape",
    "e",
];

/// Filters that give back their input or one of their arguments (`default`): what
/// they give is as plain as what they are given.
const PASSING_FILTERS: &[&str] = &["default", "d"];

/// Whether `expr` always evaluates to a string, number, boolean or none (or fails):
/// a scalar literal, a comparison or test, `not`, a `~` concatenation, arithmetic other
/// than `+` and `*` (which also join and repeat lists), a `+` with a scalar on either
/// side (MiniJinja joins only two lists or two tuples; a scalar beside anything adds,
/// concatenates strings or fails), a string method call, a filter that always
/// returns a string or a number, `default` with plain scalars in and out, or an
/// `a if b else c` whose both sides are plain scalars (without `else`: undefined).
pub(crate) fn is_plain_scalar(expr: &Expr) -> bool {
    if let Some(every_part) = parts_are(expr, is_plain_scalar) {
        return every_part;
    }
    match expr {
        Expr::BinOp(b) if matches!(b.op, BinOpKind::Add) => {
            is_plain_scalar(&b.left) || is_plain_scalar(&b.right)
        }
        Expr::Const(c) => !matches!(
            c.value.kind(),
            ValueKind::Seq | ValueKind::Map | ValueKind::Iterable | ValueKind::Plain
        ),
        Expr::Compare(_) | Expr::Test(_) => true,
        Expr::UnaryOp(u) => matches!(u.op, UnaryOpKind::Not),
        Expr::BinOp(b) => matches!(
            b.op,
            BinOpKind::Concat
                | BinOpKind::Eq
                | BinOpKind::Ne
                | BinOpKind::Lt
                | BinOpKind::Lte
                | BinOpKind::Gt
                | BinOpKind::Gte
                | BinOpKind::Sub
                | BinOpKind::Div
                | BinOpKind::FloorDiv
                | BinOpKind::Rem
                | BinOpKind::Pow
        ),
        Expr::Filter(f) => SCALAR_FILTERS.contains(&f.name),
        Expr::Call(call) => match &call.expr {
            Expr::GetAttr(attr) => STRING_METHODS.contains(&attr.name),
            _ => false,
        },
        _ => false,
    }
}

/// Whether a plain `{% set name = expr %}` can store `expr` without the helper's check:
/// a plain scalar, or a lookup in a variable (`message.content`,
/// `messages[i]['role']`; `{% set x = message.content %}` runs on every turn). A
/// lookup gives a value that already sits in a container: a huge list there can be
/// used as well without assigning it (the loop and filter checkpoints bound what is
/// done with it), so a check here would bound nothing new. A bare variable is still
/// checked: a macro's argument or a loop's item can be a lazy list (`m(a + b)`), which
/// the helper stores as a list. Namespace attributes are always checked.
pub(crate) fn needs_no_set_check(expr: &Expr) -> bool {
    // `message.content | default('', true)`: the lookup or the default.
    if let Some(every_part) = parts_are(expr, needs_no_set_check) {
        return every_part;
    }
    is_plain_scalar(expr)
        || match expr {
            Expr::GetAttr(attr) => is_lookup(&attr.expr),
            Expr::GetItem(item) => is_lookup(&item.expr),
            _ => false,
        }
}

/// For an expression whose value is one of its own parts, `a if b else c` (either
/// branch; without `else`, undefined) or `default` (its input or an argument), whether
/// `plain` accepts every such part (a filter's positional arguments; keywords and splats
/// are not looked into, so a filter given one is refused); `None` for any other.
fn parts_are(expr: &Expr, plain: fn(&Expr) -> bool) -> Option<bool> {
    match expr {
        Expr::IfExpr(e) => Some(plain(&e.true_expr) && e.false_expr.as_ref().is_none_or(plain)),
        Expr::Filter(f) if PASSING_FILTERS.contains(&f.name) => Some(
            f.expr.as_ref().is_some_and(plain)
                && f.args.iter().all(|arg| match arg {
                    CallArg::Pos(value) => plain(value),
                    _ => false,
                }),
        ),
        _ => None,
    }
}

/// `name`, `name.attr` or `name[key]`, chained.
fn is_lookup(expr: &Expr) -> bool {
    match expr {
        Expr::Var(_) => true,
        Expr::GetAttr(attr) => is_lookup(&attr.expr),
        Expr::GetItem(item) => is_lookup(&item.expr),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use minijinja::machinery::ast::Stmt;

    use super::{is_plain_scalar, needs_no_set_check};

    /// The value of the template's only `{% set %}`.
    fn set_value_passes(source: &str, test: fn(&minijinja::machinery::ast::Expr) -> bool) -> bool {
        let ast = minijinja::machinery::parse(source, "t", Default::default()).unwrap();
        let Stmt::Template(template) = &ast else {
            panic!("not a template")
        };
        match &template.children[0] {
            Stmt::Set(set) => test(&set.expr),
            other => panic!("not a set: {other:?}"),
        }
    }

    #[test]
    fn lookups_on_variables_need_no_set_check() {
        for source in [
            "{% set x = a.b %}",
            "{% set x = a[0]['b'].c %}",
            "{% set x = message.content | default('', true) %}",
            "{% set x = a.b | d(c.d) %}",
            "{% set x = a.b if c else d.e %}",
        ] {
            assert!(set_value_passes(source, needs_no_set_check), "{source}");
        }
        for source in [
            "{% set x = a.b() %}",
            "{% set x = (a + b).c %}",
            "{% set x = a[1:] %}",
            "{% set x = f(a).b %}",
            "{% set x = a + b %}",
            "{% set x = a %}",
            "{% set x = a.b | default([]) %}",
            "{% set x = a.b | default(c) %}",
            "{% set x = a | default('') %}",
            "{% set x = a.b if c else d %}",
        ] {
            assert!(!set_value_passes(source, needs_no_set_check), "{source}");
        }
    }

    /// Whether the value of the template's only `{% set %}` is plainly a scalar.
    fn set_value_is_scalar(source: &str) -> bool {
        let ast = minijinja::machinery::parse(source, "t", Default::default()).unwrap();
        let Stmt::Template(template) = &ast else {
            panic!("not a template")
        };
        match &template.children[0] {
            Stmt::Set(set) => is_plain_scalar(&set.expr),
            other => panic!("not a set: {other:?}"),
        }
    }

    #[test]
    fn literals_comparisons_and_concatenations_are_scalars() {
        for source in [
            "{% set x = true %}",
            "{% set x = '' %}",
            "{% set x = none %}",
            "{% set x = 1.5 %}",
            "{% set ns.found = false %}",
            "{% set x = a == b %}",
            "{% set x = a < b < c %}",
            "{% set x = a is defined %}",
            "{% set x = not a %}",
            "{% set x = a ~ b %}",
            "{% set x = a|length %}",
            "{% set x = (a|length - 1) - loop.index0 %}",
            "{% set x = a // 2 %}",
            "{% set x = a.split('</think>')[-1].lstrip('\\n') %}",
            "{% set x = a|join(', ') %}",
            "{% set x = '<|start|>' + a + '<|end|>' + b %}",
            "{% set ns.content = ns.content + '<|eot_id|>' %}",
            "{% set x = a + 1 %}",
            "{% set x = a + b|length %}",
            "{% set x = a|tojson|safe if a is mapping else a|string %}",
            "{% set x = 'a' if b %}",
            "{% set x = a|default('', true)|trim %}",
            "{% set x = a|trim|default('none') %}",
        ] {
            assert!(set_value_is_scalar(source), "{source}");
        }
    }

    #[test]
    fn anything_that_could_be_a_container_is_not() {
        for source in [
            "{% set x = a %}",
            "{% set x = a.b %}",
            "{% set x = [1, 2] %}",
            "{% set x = (1, 2) %}",
            "{% set x = a + b %}",
            "{% set x = a + [b] %}",
            "{% set x = a + b + c.d %}",
            "{% set x = a and b %}",
            "{% set x = a|sum(start=[]) %}",
            "{% set x = a if b else c %}",
            "{% set x = a.split(',') %}",
            "{% set x = -a %}",
            "{% set x = a * 2 %}",
            "{% set x = a.get('b') %}",
            "{% set x = a.strip %}",
            "{% set x = strip() %}",
            "{% set x = a if b else [c] %}",
            "{% set x = a.b|default('') %}",
            "{% set x = 'a'|default(b) %}",
        ] {
            assert!(!set_value_is_scalar(source), "{source}");
        }
    }
}

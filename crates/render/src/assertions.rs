//! Jinja2's compile-time check of filter and test names.
//!
//! Jinja2 resolves filters and tests when it compiles a template: an unknown name fails
//! the whole template ("No filter named 'from_json'.") even if that code never runs,
//! except inside an `{% if %}` or a conditional expression, where the check is put off
//! until the call ("No filter named 'from_json' found."). MiniJinja looks names up only
//! when a filter runs. This pass applies Jinja2's rule with the names transformers'
//! environment knows, so a template Jinja2 rejects is rejected here too (and one using
//! a MiniJinja-only filter such as `|bool` does not pass unnoticed).

use minijinja::machinery::ast::{CallArg, Expr, Stmt};

use super::pyerror::repr;
use super::subexpressions;

/// The filters of Jinja2 3.1's sandboxed environment (plus transformers' `tojson`),
/// sorted (looked up by binary search).
const FILTERS: [&str; 54] = [
    "abs",
    "attr",
    "batch",
    "capitalize",
    "center",
    "count",
    "d",
    "default",
    "dictsort",
    "e",
    "escape",
    "filesizeformat",
    "first",
    "float",
    "forceescape",
    "format",
    "groupby",
    "indent",
    "int",
    "items",
    "join",
    "last",
    "length",
    "list",
    "lower",
    "map",
    "max",
    "min",
    "pprint",
    "random",
    "reject",
    "rejectattr",
    "replace",
    "reverse",
    "round",
    "safe",
    "select",
    "selectattr",
    "slice",
    "sort",
    "string",
    "striptags",
    "sum",
    "title",
    "tojson",
    "trim",
    "truncate",
    "unique",
    "upper",
    "urlencode",
    "urlize",
    "wordcount",
    "wordwrap",
    "xmlattr",
];

/// The tests of Jinja2 3.1, sorted.
const TESTS: [&str; 39] = [
    "!=",
    "<",
    "<=",
    "==",
    ">",
    ">=",
    "boolean",
    "callable",
    "defined",
    "divisibleby",
    "eq",
    "equalto",
    "escaped",
    "even",
    "false",
    "filter",
    "float",
    "ge",
    "greaterthan",
    "gt",
    "in",
    "integer",
    "iterable",
    "le",
    "lessthan",
    "lower",
    "lt",
    "mapping",
    "ne",
    "none",
    "number",
    "odd",
    "sameas",
    "sequence",
    "string",
    "test",
    "true",
    "undefined",
    "upper",
];

/// Whether Jinja2 (in transformers' environment) has a filter of this name.
pub(crate) fn is_jinja2_filter(name: &str) -> bool {
    FILTERS.binary_search(&name).is_ok()
}

/// Whether Jinja2 has a test of this name.
fn is_jinja2_test(name: &str) -> bool {
    TESTS.binary_search(&name).is_ok()
}

/// Jinja2's `TemplateAssertionError` for the first unknown filter or test outside a
/// conditional: its message and byte offset.
pub(crate) fn check(ast: &Stmt) -> Option<(String, usize)> {
    stmt(ast, false)
}

fn stmts(body: &[Stmt], soft: bool) -> Option<(String, usize)> {
    body.iter().find_map(|node| stmt(node, soft))
}

/// `soft` is Jinja2's "soft frame": inside an `if` (or conditional expression), where
/// unknown names are only checked when used.
fn stmt(node: &Stmt, soft: bool) -> Option<(String, usize)> {
    match node {
        Stmt::Template(t) => stmts(&t.children, soft),
        Stmt::EmitExpr(e) => expr(&e.expr, soft),
        Stmt::ForLoop(f) => expr(&f.iter, soft)
            .or_else(|| f.filter_expr.as_ref().and_then(|e| expr(e, false)))
            .or_else(|| stmts(&f.body, false))
            .or_else(|| stmts(&f.else_body, false)),
        Stmt::IfCond(i) => expr(&i.expr, true)
            .or_else(|| stmts(&i.true_body, true))
            .or_else(|| stmts(&i.false_body, true)),
        Stmt::WithBlock(w) => w
            .assignments
            .iter()
            .find_map(|(_, value)| expr(value, soft))
            .or_else(|| stmts(&w.body, false)),
        Stmt::Set(s) => expr(&s.expr, soft),
        Stmt::SetBlock(s) => s
            .filter
            .as_ref()
            .and_then(|f| expr(f, false))
            .or_else(|| stmts(&s.body, false)),
        Stmt::AutoEscape(a) => stmts(&a.body, soft),
        Stmt::FilterBlock(f) => expr(&f.filter, false).or_else(|| stmts(&f.body, false)),
        Stmt::Block(b) => stmts(&b.body, false),
        Stmt::Macro(m) => m
            .defaults
            .iter()
            .find_map(|d| expr(d, false))
            .or_else(|| stmts(&m.body, false)),
        Stmt::CallBlock(c) => args(&c.call.args, soft).or_else(|| {
            let m = &c.macro_decl;
            m.defaults
                .iter()
                .find_map(|d| expr(d, false))
                .or_else(|| stmts(&m.body, false))
        }),
        Stmt::Do(d) => args(&d.call.args, soft),
        _ => None,
    }
}

fn args(list: &[CallArg], soft: bool) -> Option<(String, usize)> {
    list.iter()
        .find_map(|arg| expr(super::rewrite::argument(arg), soft))
}

fn expr(node: &Expr, soft: bool) -> Option<(String, usize)> {
    let soft = soft || matches!(node, Expr::IfExpr(_));
    let unknown = match node {
        Expr::Filter(f) if !is_jinja2_filter(f.name) => Some(("filter", f.name)),
        Expr::Test(t) if !is_jinja2_test(t.name) => Some(("test", t.name)),
        _ => None,
    };
    if let Some((kind, name)) = unknown.filter(|_| !soft) {
        let offset = node.span().start_offset as usize;
        return Some((format!("No {kind} named {}.", repr(name)), offset));
    }
    subexpressions::of(node).find_map(|child| expr(child, soft))
}

#[cfg(test)]
mod tests {
    use super::{check, FILTERS, TESTS};

    #[test]
    fn the_name_lists_are_sorted_for_binary_search() {
        assert!(FILTERS.windows(2).all(|pair| pair[0] < pair[1]));
        assert!(TESTS.windows(2).all(|pair| pair[0] < pair[1]));
    }

    fn message(source: &str) -> Option<String> {
        let ast = minijinja::machinery::parse(source, "t", Default::default()).unwrap();
        check(&ast).map(|(message, _)| message)
    }

    // Jinja2 3.1.6: "{{ x|nonexistent }}" fails to compile with TemplateAssertionError
    // "No filter named 'nonexistent'."; inside {% if %} it compiles.
    #[test]
    fn unknown_names_fail_outside_conditionals_only() {
        assert_eq!(
            message("{{ x|nonexistent }}").as_deref(),
            Some("No filter named 'nonexistent'.")
        );
        assert_eq!(
            message("{% for m in x %}{{ m is nonexistent }}{% endfor %}").as_deref(),
            Some("No test named 'nonexistent'.")
        );
        assert_eq!(message("{% if x %}{{ x|nonexistent }}{% endif %}"), None);
        assert_eq!(message("{{ x|nonexistent if y else z }}"), None);
        assert_eq!(message("{{ x|tojson|trim }}{{ x is defined }}"), None);
    }
}

//! Python's `Markup + str`: adding a plain string to a `|safe` string HTML-escapes the
//! plain one (markupsafe's `Markup.__add__` / `__radd__`), even though transformers
//! renders with autoescape off. Functionary v3.1 builds its tool list this way, so
//! `'"'` in a tool description becomes `&#34;` in the real prompt.
//!
//! MiniJinja only does this with autoescape on, which would change everything else. So
//! before compiling, the template is parsed with MiniJinja's own parser, every `+` with
//! an operand that is statically Markup (`x|safe`, `x|escape`, or another such `+`) is
//! located by its source span, and that span is rewritten to call [`MARKUP_ADD`]. Only
//! the `+` expression's own text changes; line numbers are preserved.
//!
//! Not covered: Markup stored in a variable first (`{% set m = x|safe %}{{ m + y }}`);
//! the parser cannot know `m`'s type, so that `+` concatenates without escaping.

use minijinja::machinery::ast::{BinOpKind, CallArg, Expr, Stmt};
use minijinja::value::{Value, ValueKind};
use minijinja::{Error, ErrorKind, State};

/// The helper function rewritten `+` expressions call.
pub const MARKUP_ADD: &str = "__chatplate_markup_add";

const MARKUP_FILTERS: [&str; 4] = ["safe", "escape", "e", "forceescape"];

/// Registers the runtime helper.
pub fn register(env: &mut minijinja::Environment<'static>) {
    env.add_function(MARKUP_ADD, markup_add);
}

/// Rewrites Markup `+` expressions in `source`; returns it unchanged when there are none
/// or when it does not parse (the real compile then reports the syntax error).
pub fn rewrite(source: &str, syntax: &minijinja::syntax::SyntaxConfig) -> String {
    if !MARKUP_FILTERS.iter().any(|name| source.contains(name)) {
        return source.to_string();
    }
    let Ok(ast) = minijinja::machinery::parse(source, "<template>", syntax.clone()) else {
        return source.to_string();
    };
    let mut edits = Vec::new();
    walk_stmt(&ast, source, &mut edits);
    apply_edits(source, edits)
}

type Edit = (usize, usize, String);

fn apply_edits(source: &str, mut edits: Vec<Edit>) -> String {
    edits.sort_by_key(|(start, _, _)| *start);
    let mut out = String::with_capacity(source.len() + edits.len() * 32);
    let mut cursor = 0;
    for (start, end, text) in edits {
        if start < cursor {
            continue; // nested inside an edit already made
        }
        out.push_str(&source[cursor..start]);
        out.push_str(&text);
        cursor = end;
    }
    out.push_str(&source[cursor..]);
    out
}

fn walk_stmts(stmts: &[Stmt], source: &str, edits: &mut Vec<Edit>) {
    for stmt in stmts {
        walk_stmt(stmt, source, edits);
    }
}

fn walk_stmt(stmt: &Stmt, source: &str, edits: &mut Vec<Edit>) {
    let mut expr = |e: &Expr| walk_expr(e, source, edits);
    match stmt {
        Stmt::Template(t) => walk_stmts(&t.children, source, edits),
        Stmt::EmitExpr(e) => expr(&e.expr),
        Stmt::ForLoop(f) => {
            expr(&f.iter);
            if let Some(filter) = &f.filter_expr {
                expr(filter);
            }
            walk_stmts(&f.body, source, edits);
            walk_stmts(&f.else_body, source, edits);
        }
        Stmt::IfCond(i) => {
            expr(&i.expr);
            walk_stmts(&i.true_body, source, edits);
            walk_stmts(&i.false_body, source, edits);
        }
        Stmt::WithBlock(w) => {
            for (_, value) in &w.assignments {
                expr(value);
            }
            walk_stmts(&w.body, source, edits);
        }
        Stmt::Set(s) => expr(&s.expr),
        Stmt::SetBlock(s) => walk_stmts(&s.body, source, edits),
        Stmt::AutoEscape(a) => walk_stmts(&a.body, source, edits),
        Stmt::FilterBlock(f) => walk_stmts(&f.body, source, edits),
        Stmt::Block(b) => walk_stmts(&b.body, source, edits),
        Stmt::Macro(m) => {
            for default in &m.defaults {
                expr(default);
            }
            walk_stmts(&m.body, source, edits);
        }
        Stmt::CallBlock(c) => {
            walk_args(&c.call.args, source, edits);
            walk_stmts(&c.macro_decl.body, source, edits);
        }
        Stmt::Do(d) => walk_args(&d.call.args, source, edits),
        _ => {}
    }
}

fn walk_args(args: &[CallArg], source: &str, edits: &mut Vec<Edit>) {
    for arg in args {
        let (CallArg::Pos(e)
        | CallArg::Kwarg(_, e)
        | CallArg::PosSplat(e)
        | CallArg::KwargSplat(e)) = arg;
        walk_expr(e, source, edits);
    }
}

fn walk_expr(expr: &Expr, source: &str, edits: &mut Vec<Edit>) {
    if is_markup_add(expr) {
        let (start, end) = extent(expr, source);
        edits.push((start, end, emit(expr, source)));
        return;
    }
    for child in children(expr) {
        walk_expr(child, source, edits);
    }
}

/// The direct sub-expressions of `expr`, in source order.
fn children<'e, 'a>(expr: &'e Expr<'a>) -> Vec<&'e Expr<'a>> {
    let args = |args: &'e [CallArg<'a>]| {
        args.iter().map(|arg| match arg {
            CallArg::Pos(e)
            | CallArg::Kwarg(_, e)
            | CallArg::PosSplat(e)
            | CallArg::KwargSplat(e) => e,
        })
    };
    match expr {
        Expr::Slice(s) => std::iter::once(&s.expr)
            .chain([&s.start, &s.stop, &s.step].into_iter().flatten())
            .collect(),
        Expr::UnaryOp(u) => vec![&u.expr],
        Expr::BinOp(b) => vec![&b.left, &b.right],
        Expr::Compare(c) => std::iter::once(&c.expr)
            .chain(c.ops.iter().map(|op| &op.expr))
            .collect(),
        Expr::IfExpr(i) => [&i.true_expr, &i.test_expr]
            .into_iter()
            .chain(i.false_expr.as_ref())
            .collect(),
        Expr::Filter(f) => f.expr.iter().chain(args(&f.args)).collect(),
        Expr::Test(t) => std::iter::once(&t.expr).chain(args(&t.args)).collect(),
        Expr::GetAttr(g) => vec![&g.expr],
        Expr::GetItem(g) => vec![&g.expr, &g.subscript_expr],
        Expr::Call(c) => std::iter::once(&c.expr).chain(args(&c.args)).collect(),
        Expr::List(l) => l.items.iter().collect(),
        Expr::Tuple(t) => t.items.iter().collect(),
        Expr::Map(m) => m.keys.iter().chain(&m.values).collect(),
        Expr::Var(_) | Expr::Const(_) => Vec::new(),
    }
}

/// Byte range of the whole expression text. MiniJinja's filter and test spans cover
/// only `|name(args)`, so the range is the union with every sub-expression, widened to
/// take in parentheses the parser consumed.
fn extent(expr: &Expr, source: &str) -> (usize, usize) {
    let span = expr.span();
    let (mut start, mut end) = (span.start_offset as usize, span.end_offset as usize);
    for child in children(expr) {
        let (child_start, child_end) = extent(child, source);
        start = start.min(child_start);
        end = end.max(child_end);
    }
    balance_parens(source, start.min(source.len()), end.min(source.len()))
}

/// Extends `start..end` outwards until its parentheses balance (outside string literals).
fn balance_parens(source: &str, mut start: usize, mut end: usize) -> (usize, usize) {
    let (mut depth, mut lowest, mut quote) = (0i32, 0i32, None);
    for ch in source.get(start..end).unwrap_or_default().chars() {
        match (quote, ch) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(ch),
            (None, '(') => depth += 1,
            (None, ')') => {
                depth -= 1;
                lowest = lowest.min(depth);
            }
            _ => {}
        }
    }
    for _ in 0..-lowest {
        let before = source[..start].trim_end();
        if before.ends_with('(') {
            start = before.len() - 1;
        }
    }
    for _ in 0..(depth - lowest).max(0) {
        let after = &source[end..];
        let skipped = after.len() - after.trim_start().len();
        if after.trim_start().starts_with(')') {
            end += skipped + 1;
        }
    }
    (start, end)
}

/// Statically a Markup value: a `|safe`-like filter or a Markup `+`.
fn is_markup(expr: &Expr) -> bool {
    match expr {
        Expr::Filter(f) => MARKUP_FILTERS.contains(&f.name),
        _ => is_markup_add(expr),
    }
}

fn is_markup_add(expr: &Expr) -> bool {
    matches!(expr, Expr::BinOp(b) if matches!(b.op, BinOpKind::Add) && (is_markup(&b.left) || is_markup(&b.right)))
}

/// The replacement text for an expression: Markup `+` becomes a helper call, anything
/// else keeps its source text.
fn emit(expr: &Expr, source: &str) -> String {
    if let Expr::BinOp(b) = expr {
        if is_markup_add(expr) {
            return format!(
                "{MARKUP_ADD}({}, {})",
                emit(&b.left, source),
                emit(&b.right, source)
            );
        }
    }
    let (start, end) = extent(expr, source);
    format!("({})", source.get(start..end).unwrap_or_default())
}

/// `left + right` with markupsafe semantics when one side is Markup.
fn markup_add(state: &State, left: Value, right: Value) -> Result<Value, Error> {
    let is_str = |v: &Value| v.kind() == ValueKind::String;
    if !(left.is_safe() || right.is_safe()) {
        return plain_add(state, left, right);
    }
    if !(is_str(&left) && is_str(&right)) {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            format!(
                "TypeError: unsupported operand type(s) for +: '{}' and '{}'",
                super::pytype::type_name(&left),
                super::pytype::type_name(&right)
            ),
        ));
    }
    let escaped = |v: &Value| {
        let text = v.as_str().unwrap_or_default();
        if v.is_safe() {
            text.to_string()
        } else {
            escape_html(text)
        }
    };
    Ok(Value::from_safe_string(escaped(&left) + &escaped(&right)))
}

/// Ordinary `+` for operands that turned out not to be Markup at run time.
fn plain_add(state: &State, left: Value, right: Value) -> Result<Value, Error> {
    let expr = state.env().compile_expression("__left + __right")?;
    expr.eval(Value::from_pairs([("__left", left), ("__right", right)]))
}

/// markupsafe's `escape`: `& < > ' "`.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\'' => out.push_str("&#39;"),
            '"' => out.push_str("&#34;"),
            c => out.push(c),
        }
    }
    out
}

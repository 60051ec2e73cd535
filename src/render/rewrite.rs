//! AST-guided source rewrites for the Python behaviours MiniJinja's VM cannot be
//! told about from outside. Before compiling, the template is parsed with MiniJinja's own
//! parser; the affected expressions are located by their source spans and only their
//! text is rewritten, so line numbers (and error positions) are preserved.
//!
//! * **`Markup + str`**: adding a plain string to a `|safe` string HTML-escapes the plain
//!   one (markupsafe's `Markup.__add__` / `__radd__`), even though transformers renders
//!   with autoescape off; functionary v3.1 builds its tool list this way. Every `+` with
//!   an operand that is statically Markup (`x|safe`, `x|escape`, or another such `+`)
//!   becomes a call to [`MARKUP_ADD`]. Not covered: Markup stored in a variable first
//!   (`{% set m = x|safe %}{{ m + y }}`), whose type the parser cannot know.
//! * **`'...' % args`**: Python's string formatting, where the left operand is a string
//!   literal (so numeric `%` is untouched), becomes a call to [`PERCENT_FORMAT`].
//! * **Looping over a string**: Jinja2 knows the length, so `loop.length`, `loop.last`
//!   and `loop.revindex` work; MiniJinja's character iterator has none. Every `for`
//!   loop's iterable is wrapped in [`LOOP_ITERABLE`], which turns a string into its list
//!   of characters and passes anything else through.

use minijinja::machinery::ast::{BinOpKind, CallArg, Expr, Stmt};
use minijinja::value::{Value, ValueKind};

use super::markup::MARKUP_ADD;
use super::percent::PERCENT_FORMAT;

/// The helper every `for` loop's iterable is passed through.
pub const LOOP_ITERABLE: &str = "__chatplate_loop_iterable";

const MARKUP_FILTERS: [&str; 4] = ["safe", "escape", "e", "forceescape"];

/// Registers the loop helper.
pub fn register(env: &mut minijinja::Environment<'static>) {
    env.add_function(LOOP_ITERABLE, loop_iterable);
}

/// A string becomes its list of characters (so the loop knows its length); `None` and
/// numbers fail with Python's message; anything else is passed through.
fn loop_iterable(value: Value) -> Result<Value, minijinja::Error> {
    match value.as_str() {
        Some(text) if value.kind() == ValueKind::String => {
            Ok(text.chars().map(|c| Value::from(c.to_string())).collect())
        }
        _ if value.is_undefined() => Ok(value),
        _ => super::filters::ensure_iterable(&value).map(|()| value),
    }
}

/// A rewritten template and the way back from its byte offsets to the original's.
#[derive(Debug, Clone, Default)]
pub struct Rewritten {
    /// The text MiniJinja compiles.
    pub text: String,
    shifts: Vec<Shift>,
}

/// Where one top-level edit landed: `new` is its range in the rewritten text, `original`
/// the range it replaced, `prefix` the length of text inserted before the original
/// (for wraps, `function((`).
#[derive(Debug, Clone, Copy)]
struct Shift {
    new: (usize, usize),
    original: (usize, usize),
    prefix: Option<usize>,
}

impl Rewritten {
    /// Maps a byte offset in the rewritten text to the original source, so error
    /// positions point at what the user wrote.
    pub fn original_offset(&self, offset: usize) -> usize {
        let mut growth: isize = 0;
        for shift in &self.shifts {
            if offset < shift.new.0 {
                break;
            }
            if offset < shift.new.1 {
                let inside = offset - shift.new.0;
                let original_len = shift.original.1 - shift.original.0;
                return match shift.prefix {
                    Some(prefix) if inside >= prefix && inside - prefix < original_len => {
                        shift.original.0 + inside - prefix
                    }
                    _ => shift.original.0,
                };
            }
            growth += (shift.new.1 - shift.new.0) as isize
                - (shift.original.1 - shift.original.0) as isize;
        }
        offset.saturating_add_signed(-growth)
    }
}

/// Applies the rewrites to `source`; returns it unchanged when it does not parse (the
/// real compile then reports the syntax error).
pub fn rewrite(source: &str, syntax: &minijinja::syntax::SyntaxConfig) -> Rewritten {
    let Ok(ast) = minijinja::machinery::parse(source, "<template>", syntax.clone()) else {
        return Rewritten {
            text: source.to_string(),
            shifts: Vec::new(),
        };
    };
    let mut edits = Vec::new();
    walk_stmt(&ast, source, &mut edits);
    // Outer edits first where two start together, so a wrap encloses what it contains.
    edits.sort_by_key(|edit| (edit.start, std::cmp::Reverse(edit.end)));
    let mut shifts = Vec::with_capacity(edits.len());
    let text = apply_edits(
        source,
        0,
        source.len(),
        &mut edits.as_slice(),
        Some(&mut shifts),
    );
    Rewritten { text, shifts }
}

/// One rewrite: the byte range it covers and how its new text is made.
struct Edit {
    start: usize,
    end: usize,
    kind: EditKind,
}

enum EditKind {
    /// Replace the range with this text.
    Replace(String),
    /// Wrap the range, with any edits inside it applied, in a call to this function.
    Wrap(&'static str),
}

/// Writes `source[start..end]` with the edits inside that range applied. `edits` is
/// sorted by start and consumed as it is used; nested edits are applied inside `Wrap`s.
/// Top-level edits are recorded in `shifts` when given.
fn apply_edits(
    source: &str,
    start: usize,
    end: usize,
    edits: &mut &[Edit],
    mut shifts: Option<&mut Vec<Shift>>,
) -> String {
    let mut out = String::with_capacity(end - start + 32);
    let mut cursor = start;
    while let Some((edit, rest)) = edits.split_first() {
        if edit.start >= end {
            break;
        }
        *edits = rest;
        if edit.start < cursor {
            continue; // overlaps an edit already made
        }
        out.push_str(&source[cursor..edit.start]);
        let new_start = start + out.len();
        let prefix = match &edit.kind {
            EditKind::Replace(text) => {
                out.push_str(text);
                None
            }
            EditKind::Wrap(function) => {
                let inner = apply_edits(source, edit.start, edit.end, edits, None);
                out.push_str(&format!("{function}(({inner}))"));
                Some(function.len() + 2)
            }
        };
        if let Some(shifts) = shifts.as_deref_mut() {
            shifts.push(Shift {
                new: (new_start, start + out.len()),
                original: (edit.start, edit.end),
                prefix,
            });
        }
        cursor = edit.end;
    }
    out.push_str(&source[cursor..end]);
    out
}

fn walk_stmts(stmts: &[Stmt], source: &str, edits: &mut Vec<Edit>) {
    for stmt in stmts {
        walk_stmt(stmt, source, edits);
    }
}

fn walk_stmt(stmt: &Stmt, source: &str, edits: &mut Vec<Edit>) {
    match stmt {
        Stmt::Template(t) => walk_stmts(&t.children, source, edits),
        Stmt::EmitExpr(e) => walk_expr(&e.expr, source, edits),
        Stmt::ForLoop(f) => {
            let (start, end) = extent(&f.iter, source);
            // Pushed before the iterable's own edits so that, once sorted, it encloses them.
            edits.push(Edit {
                start,
                end,
                kind: EditKind::Wrap(LOOP_ITERABLE),
            });
            walk_expr(&f.iter, source, edits);
            if let Some(filter) = &f.filter_expr {
                walk_expr(filter, source, edits);
            }
            walk_stmts(&f.body, source, edits);
            walk_stmts(&f.else_body, source, edits);
        }
        Stmt::IfCond(i) => {
            walk_expr(&i.expr, source, edits);
            walk_stmts(&i.true_body, source, edits);
            walk_stmts(&i.false_body, source, edits);
        }
        Stmt::WithBlock(w) => {
            for (_, value) in &w.assignments {
                walk_expr(value, source, edits);
            }
            walk_stmts(&w.body, source, edits);
        }
        Stmt::Set(s) => walk_expr(&s.expr, source, edits),
        Stmt::SetBlock(s) => walk_stmts(&s.body, source, edits),
        Stmt::AutoEscape(a) => walk_stmts(&a.body, source, edits),
        Stmt::FilterBlock(f) => walk_stmts(&f.body, source, edits),
        Stmt::Block(b) => walk_stmts(&b.body, source, edits),
        Stmt::Macro(m) => {
            for default in &m.defaults {
                walk_expr(default, source, edits);
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
    if let Some((format, args)) = string_percent(expr) {
        let (start, end) = extent(expr, source);
        let text = format!(
            "{PERCENT_FORMAT}({}, {})",
            emit(format, source),
            emit(args, source)
        );
        edits.push(Edit {
            start,
            end,
            kind: EditKind::Replace(text),
        });
        return;
    }
    if is_markup_add(expr) {
        let (start, end) = extent(expr, source);
        edits.push(Edit {
            start,
            end,
            kind: EditKind::Replace(emit(expr, source)),
        });
        return;
    }
    for child in children(expr) {
        walk_expr(child, source, edits);
    }
}

/// The direct sub-expressions of `expr`, in source order.
pub(crate) fn children<'e, 'a>(expr: &'e Expr<'a>) -> Vec<&'e Expr<'a>> {
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

/// The source text of the whole expression (see [`extent`]).
pub(crate) fn expression_source<'s>(expr: &Expr, source: &'s str) -> &'s str {
    let (start, end) = extent(expr, source);
    source.get(start..end).unwrap_or_default()
}

/// Statically a Markup value: a `|safe`-like filter or a Markup `+`.
fn is_markup(expr: &Expr) -> bool {
    match expr {
        Expr::Filter(f) => MARKUP_FILTERS.contains(&f.name),
        _ => is_markup_add(expr),
    }
}

/// `'literal' % args`: Python string formatting, the operands.
fn string_percent<'e, 'a>(expr: &'e Expr<'a>) -> Option<(&'e Expr<'a>, &'e Expr<'a>)> {
    match expr {
        Expr::BinOp(b) if matches!(b.op, BinOpKind::Rem) => match &b.left {
            Expr::Const(c) if c.value.kind() == ValueKind::String => Some((&b.left, &b.right)),
            _ => None,
        },
        _ => None,
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

//! AST-guided source rewrites for the Python behaviours MiniJinja's VM cannot be
//! told about from outside. Before compiling, the template is parsed with MiniJinja's own
//! parser; the affected expressions are located by their source spans and only their
//! text is rewritten, so line numbers (and error positions) are preserved.
//!
//! * **`Markup + str`**: adding a plain string to a `|safe` string HTML-escapes the plain
//!   one (markupsafe's `Markup.__add__` / `__radd__`), even though transformers renders
//!   with autoescape off; functionary v3.1 builds its tool list this way. Every `+` with
//!   an operand that is statically Markup (`x|safe`, `x|escape`, or another such `+`)
//!   becomes a call to the Markup helper ([`super::markup`]); so does `+` on a variable
//!   some `{% set %}` assigns Markup to (see [`super::markupvars`]).
//! * **`x % args`**: Python's string formatting or modulo, decided at run time, for
//!   every `%` whose left operand is not plainly numeric (those keep MiniJinja's own
//!   `%`, which has Python's floor semantics), becomes a call to the formatting helper
//!   ([`super::percent`]).
//! * **Dict methods**: `d.items` (not called) and `d['items']` go through a helper
//!   ([`super::boundmethods`]) that finds the method as Python does.
//! * **Looping over a string**: Jinja2 knows the length, so `loop.length`, `loop.last`
//!   and `loop.revindex` work; MiniJinja's character iterator has none. Every `for`
//!   loop's iterable is wrapped in the loop helper ([`super::loops`]), which gives a
//!   string its length (and lets a cancelled render stop at the next item).
//! * **Assignments**: the value of every `{% set ns.attr = value %}` passes through a
//!   helper ([`super::loops`]) that refuses a namespace inside a namespace (which could
//!   contain itself) and lists too large to ever materialise; every other `{% set %}`
//!   value through one that refuses only the too-large lists. A value that is plainly a
//!   scalar (`true`, `''`, `a ~ b`, `a == b`: see [`super::scalars`]) can be neither, and
//!   is left as it is.
//! * **`in` and `not in`** go through a helper ([`super::membership`]) that raises
//!   Python's `TypeError` where Python cannot test membership (`'a' in none`).
//! * **Slices** (`base[start:stop:step]`) go through a helper ([`super::slices`]) that
//!   slices as Python does (errors included), and indexes a slice indexed in place
//!   (`messages[1:][i]`) in O(1) instead of walking MiniJinja's lazy one.
//! * **Flag-guarded loops**: a `for` loop whose body is one `{% if %}` on a condition
//!   no iteration changes by itself gets an `{% else %}{% break %}`, so a search that
//!   has found what it wanted stops walking (see [`super::guards`], which says why the
//!   prompt and errors stay the same).
//! * **Flag scans**: a `for` loop whose body only sets a namespace flag to a constant
//!   when a condition on its item holds iterates just the first matching and the first
//!   raising item, which a per-render memo finds for every suffix of the same list at
//!   once (see [`super::scans`], which says why that is safe).
//! * **Closures**: names a macro or call block body reads that MiniJinja's closure
//!   analysis would miss are read at the top of the body (see [`super::closures`]).
//!
//! Expression extents come from [`super::extent`], computed once per node, so the pass is
//! linear in the template.
//!
//! The helpers' names are chosen per template ([`Helpers`]), so the template itself
//! cannot call them.

use minijinja::machinery::ast::{BinOpKind, CallArg, Expr, Stmt, UnaryOpKind};
use minijinja::value::ValueKind;

use super::boundmethods::{dict_lookup, Lookup};

use super::edits::{Edit, EditKind};
use super::extent::Extents;
use super::helpers::Helpers;
use super::offsets::OffsetMap;
use super::slices::SliceUse;

/// A rewritten template and the way back from its byte offsets to the original's.
#[derive(Debug, Clone, Default)]
pub(crate) struct Rewritten {
    /// The text MiniJinja compiles.
    pub text: String,
    /// Where the edits landed.
    pub map: OffsetMap,
    /// The deepest expression nesting in the template (a chain of `n` operators is `n`
    /// deep), which MiniJinja's compiler recurses through.
    pub depth: usize,
}

impl Rewritten {
    /// Maps a byte offset in the rewritten text to the original source, so error
    /// positions point at what the user wrote.
    pub(crate) fn original_offset(&self, offset: usize) -> usize {
        self.map.original_offset(offset)
    }
}

/// Applies the rewrites to `source`; returns it unchanged when it does not parse (the
/// real compile then reports the syntax error).
pub(crate) fn rewrite(source: &str, ast: Option<&Stmt>, helpers: &Helpers) -> Rewritten {
    let Some(ast) = ast else {
        return Rewritten {
            text: source.to_string(),
            map: OffsetMap::default(),
            depth: 0,
        };
    };
    let mut extents = Extents::new(source);
    // Pushed first so that, once sorted, they enclose the edits inside the values.
    let mut edits: Vec<Edit> = super::scopes::namespace_sets(ast, &mut extents)
        .into_iter()
        .map(|set| Edit {
            start: set.value.0,
            end: set.value.1,
            kind: EditKind::Around("((".into(), format!("), {})[0]", set.namespace)),
        })
        .collect();
    let variable = helpers.captured_names();
    edits.extend(
        super::closures::captures(ast, source, crate::syntax_config())
            .into_iter()
            .map(|capture| Edit {
                start: capture.offset,
                end: capture.offset,
                kind: EditKind::Replace(capture.statement(&variable)),
            }),
    );
    let mut cx = Cx {
        source,
        helpers,
        edits,
        depth: 0,
        escaping: false,
        appended: super::appends::names(ast),
        extents,
        scans: Vec::new(),
    };
    super::markupvars::with_names(ast, || walk_stmt(ast, &mut cx));
    let cx_depth = cx.depth;
    let mut edits = cx.edits;
    // Flag scans copy their condition's rewritten text, so they come last.
    super::scans::finish(&cx.scans, &mut edits, source, helpers);
    let (text, map) = super::edits::apply(source, edits);
    Rewritten {
        text,
        map,
        depth: cx_depth,
    }
}

/// The walk's state: the source, the helper names and the edits found so far. The
/// modules of single behaviours ([`super::slices`], [`super::membership`]) add their
/// edits to it.
pub(crate) struct Cx<'s> {
    /// The text being rewritten.
    pub source: &'s str,
    /// The helpers' names for this template.
    pub helpers: &'s Helpers,
    /// The edits found so far.
    pub edits: Vec<Edit>,
    /// The deepest expression nesting seen.
    depth: usize,
    /// Inside an `{% autoescape %}` block (where `~` keeps MiniJinja's own escaping).
    escaping: bool,
    /// Namespace variables whose appends grow a builder (see [`super::appends`]).
    appended: std::collections::BTreeSet<String>,
    /// Expression extents, each computed once.
    pub extents: Extents<'s>,
    /// The flag scans found (see [`super::scans`]).
    scans: Vec<super::scans::Plan>,
}

fn walk_stmts(stmts: &[Stmt], cx: &mut Cx) {
    for stmt in stmts {
        walk_stmt(stmt, cx);
    }
}

fn walk_stmt(stmt: &Stmt, cx: &mut Cx) {
    match stmt {
        Stmt::Template(t) => walk_stmts(&t.children, cx),
        Stmt::EmitExpr(e) => match &e.expr {
            // Jinja2 folds a slice of literals printed on its own (see `slices`).
            whole @ Expr::Slice(slice) if super::slices::is_folded(slice) => {
                walk_slice(whole, SliceUse::Folded, 1, cx);
            }
            expr => walk_expr(expr, cx),
        },
        Stmt::ForLoop(f) => {
            let (start, end) = cx.extents.of(&f.iter);
            // Pushed before the iterable's own edits so that, once sorted, it encloses them.
            cx.edits.push(Edit {
                start,
                end,
                kind: EditKind::Wrap(cx.helpers.loop_iterable()),
            });
            // A flag-guarded search leaves once its flag is set (see `guards`).
            cx.edits
                .extend(super::guards::early_exit(f, &mut cx.extents));
            // A flag scan answers from a memo; its slice is a view it can recognise.
            let scan = super::scans::plan(f, &mut cx.extents);
            match &f.iter {
                Expr::Slice(_) if scan.is_some() => walk_slice(&f.iter, SliceUse::Indexed, 1, cx),
                iter => walk_expr(iter, cx),
            }
            cx.scans.extend(scan);
            if let Some(filter) = &f.filter_expr {
                walk_expr(filter, cx);
            }
            walk_stmts(&f.body, cx);
            walk_stmts(&f.else_body, cx);
        }
        Stmt::IfCond(i) => {
            walk_expr(&i.expr, cx);
            walk_stmts(&i.true_body, cx);
            walk_stmts(&i.false_body, cx);
        }
        Stmt::WithBlock(w) => {
            for (_, value) in &w.assignments {
                walk_expr(value, cx);
            }
            walk_stmts(&w.body, cx);
        }
        Stmt::Set(s) if append(&s.target, &s.expr, cx) => {}
        Stmt::Set(s) => {
            let (mut start, end) = cx.extents.of(&s.expr);
            // Some expression spans (comparisons) begin before the `=`.
            let (_, target_end) = cx.extents.of(&s.target);
            if let Some(equals) = cx.source.get(target_end..).and_then(|t| t.find('=')) {
                start = start.max(target_end + equals + 1);
            }
            // A value that is plainly a string, number, boolean or none can be neither a
            // namespace nor a list, so it needs no check (this skips a helper call per
            // `{% set ns.found = true %}` in a template's loops).
            let namespace = matches!(s.target, Expr::GetAttr(_));
            let checked = if namespace {
                !super::scalars::is_plain_scalar(&s.expr)
            } else {
                !super::scalars::needs_no_set_check(&s.expr)
            };
            if checked {
                let helper = if namespace {
                    cx.helpers.namespace_value()
                } else {
                    cx.helpers.set_value()
                };
                cx.edits.push(Edit {
                    start,
                    end,
                    kind: EditKind::Wrap(helper),
                });
            }
            walk_expr(&s.expr, cx);
        }
        Stmt::SetBlock(s) => walk_stmts(&s.body, cx),
        Stmt::AutoEscape(a) => {
            let outer = std::mem::replace(&mut cx.escaping, true);
            walk_stmts(&a.body, cx);
            cx.escaping = outer;
        }
        Stmt::FilterBlock(f) => walk_stmts(&f.body, cx),
        Stmt::Block(b) => walk_stmts(&b.body, cx),
        Stmt::Macro(m) => {
            for default in &m.defaults {
                walk_expr(default, cx);
            }
            walk_stmts(&m.body, cx);
        }
        Stmt::CallBlock(c) => {
            walk_args(&c.call.args, cx);
            walk_stmts(&c.macro_decl.body, cx);
        }
        Stmt::Do(d) => walk_args(&d.call.args, cx),
        _ => {}
    }
}

/// `{% set ns.out = ns.out ~ a ~ b %}` for a namespace whose appends grow a builder:
/// the value becomes `append(mark(ns.out), a, b)` (see [`super::appends`]). Whether
/// the statement was rewritten so.
fn append(target: &Expr, value: &Expr, cx: &mut Cx) -> bool {
    let Some(name) = super::appends::append_target(target, value) else {
        return false;
    };
    if !cx.appended.contains(name) || cx.escaping {
        return false;
    }
    let Some(pieces) = super::concat::chain(value, cx) else {
        return false;
    };
    // The first piece must be the attribute itself, not a longer chain cut at 1,000.
    let Some((first, rest)) = pieces.split_first() else {
        return false;
    };
    if super::appends::attribute_base(first).is_none() {
        return false;
    }
    super::concat::rewrite_with(value, &pieces, &cx.helpers.append(), cx);
    let (start, end) = cx.extents.of(first);
    cx.edits.push(Edit {
        start,
        end,
        kind: EditKind::Wrap(cx.helpers.append_mark()),
    });
    for piece in rest {
        walk_expr(piece, cx);
    }
    true
}

fn walk_args(args: &[CallArg], cx: &mut Cx) {
    for arg in args {
        walk_expr(argument(arg), cx);
    }
}

fn walk_expr(expr: &Expr, cx: &mut Cx) {
    walk_expr_at(expr, 1, cx);
}

/// Walks `expr`, nested `depth` deep. Long operator chains (`a ~ b ~ c ~ ...`) are
/// left-deep trees: their left spine is walked in a loop, so the walk costs neither
/// stack nor time per level beyond the level itself.
fn walk_expr_at(expr: &Expr, depth: usize, cx: &mut Cx) {
    let (mut current, mut depth, mut known_plain) = (expr, depth, false);
    loop {
        cx.depth = cx.depth.max(depth);
        if let Some((format, args)) = string_percent(current) {
            let (start, end) = cx.extents.of(current);
            let (format, args) = (emit(format, cx), emit(args, cx));
            let text = super::helpers::filter_call(&format, &cx.helpers.percent_format(), &args);
            cx.edits.push(Edit {
                start,
                end,
                kind: EditKind::Replace(text),
            });
            return;
        }
        if !known_plain && is_markup_add(current) {
            let (start, end) = cx.extents.of(current);
            let text = emit(current, cx);
            cx.edits.push(Edit {
                start,
                end,
                kind: EditKind::Replace(text),
            });
            return;
        }
        let Expr::BinOp(b) = current else {
            walk_other(current, depth, cx);
            return;
        };
        if matches!(b.op, BinOpKind::Concat) && !cx.escaping {
            if let Some(pieces) = super::concat::chain(current, cx) {
                super::concat::rewrite(current, &pieces, cx);
                cx.depth = cx.depth.max(depth + pieces.len() - 1);
                for piece in pieces {
                    walk_expr_at(piece, depth + 1, cx);
                }
                return;
            }
        }
        if matches!(b.op, BinOpKind::In) && !matches!(b.right, Expr::List(_) | Expr::Tuple(_)) {
            super::membership::rewrite(current, b, cx);
        }
        if super::equality::wanted(b) {
            super::equality::rewrite(current, b, cx);
        }
        if super::repeat::wanted(b, current) {
            super::repeat::rewrite(current, b, cx);
        }
        walk_expr_at(&b.right, depth + 1, cx);
        // A `+` that is not a Markup `+` has no Markup `+` on its left either.
        known_plain = matches!(b.op, BinOpKind::Add);
        current = &b.left;
        depth += 1;
    }
}

/// Walks an expression that is not an operator: dict-method lookups are rewritten
/// (see [`super::boundmethods`]); everything else is walked part by part.
fn walk_other(expr: &Expr, depth: usize, cx: &mut Cx) {
    if super::appends::attribute_base(expr).is_some_and(|name| cx.appended.contains(name)) {
        let (start, end) = cx.extents.of(expr);
        cx.edits.push(Edit {
            start,
            end,
            kind: EditKind::Wrap(cx.helpers.append_read()),
        });
    }
    if let Expr::Call(call) = expr {
        // `d.items()` is a method call, not a lookup: only its parts are walked.
        if let Expr::GetAttr(callee) = &call.expr {
            walk_expr_at(&callee.expr, depth + 1, cx);
            walk_args(&call.args, cx);
            return;
        }
    }
    if let Some((base, lookup, name)) = dict_lookup(expr) {
        // `(((base))|helper('name'))`: the base keeps its own edits, the lookup goes.
        let (base_start, base_end) = cx.extents.of(base);
        let (_, end) = cx.extents.of(expr);
        let helper = match lookup {
            Lookup::Attr => cx.helpers.dict_attr(),
            Lookup::Item => cx.helpers.dict_item(),
        };
        cx.edits.push(Edit {
            start: base_start,
            end: base_end,
            kind: EditKind::Around(
                super::helpers::OPEN.into(),
                format!("{}{name:?}))", super::helpers::then_call(&helper)),
            ),
        });
        cx.edits.push(Edit {
            start: base_end,
            end,
            kind: EditKind::Replace(String::new()),
        });
        walk_expr_at(base, depth + 1, cx);
        return;
    }
    if let Expr::GetItem(item) = expr {
        if let Expr::Slice(_) = &item.expr {
            walk_slice(&item.expr, SliceUse::Indexed, depth + 1, cx);
            walk_expr_at(&item.subscript_expr, depth + 1, cx);
            return;
        }
    }
    if let Expr::Slice(_) = expr {
        walk_slice(expr, SliceUse::Plain, depth, cx);
        return;
    }
    for child in super::subexpressions::of(expr) {
        walk_expr_at(child, depth + 1, cx);
    }
}

/// Rewrites `whole`, a slice (see [`super::slices::rewrite`]), and walks its parts.
fn walk_slice(whole: &Expr, usage: SliceUse, depth: usize, cx: &mut Cx) {
    let Expr::Slice(slice) = whole else {
        return;
    };
    super::slices::rewrite(slice, whole, usage, cx);
    walk_expr_at(&slice.expr, depth + 1, cx);
    for bound in [&slice.start, &slice.stop, &slice.step]
        .into_iter()
        .flatten()
    {
        walk_expr_at(bound, depth + 1, cx);
    }
}

/// The expression a call argument passes, whatever its kind (positional, keyword,
/// `*args`, `**kwargs`).
pub fn argument<'e, 'a>(arg: &'e CallArg<'a>) -> &'e Expr<'a> {
    let (CallArg::Pos(e) | CallArg::Kwarg(_, e) | CallArg::PosSplat(e) | CallArg::KwargSplat(e)) =
        arg;
    e
}

/// The direct sub-expressions of `expr`, in source order (see
/// [`super::subexpressions`], which walks them without collecting them).
pub fn children<'e, 'a>(expr: &'e Expr<'a>) -> Vec<&'e Expr<'a>> {
    super::subexpressions::of(expr).collect()
}

/// `'literal' % args`: Python string formatting, the operands.
pub(crate) fn string_percent<'e, 'a>(expr: &'e Expr<'a>) -> Option<(&'e Expr<'a>, &'e Expr<'a>)> {
    match expr {
        Expr::BinOp(b) if matches!(b.op, BinOpKind::Rem) && !is_numeric(&b.left) => {
            Some((&b.left, &b.right))
        }
        _ => None,
    }
}

/// Plainly a number: a number literal, a `loop` counter, a counting filter, or
/// arithmetic on those. Such `%` stays MiniJinja's own (it has Python's floor modulo).
pub(crate) fn is_numeric(expr: &Expr) -> bool {
    match expr {
        Expr::Const(c) => matches!(c.value.kind(), ValueKind::Number | ValueKind::Bool),
        Expr::GetAttr(g) => {
            matches!(&g.expr, Expr::Var(v) if v.id == "loop")
                && matches!(
                    g.name,
                    "index" | "index0" | "revindex" | "revindex0" | "length" | "depth" | "depth0"
                )
        }
        Expr::Filter(f) => matches!(
            f.name,
            "length" | "count" | "int" | "float" | "abs" | "round" | "sum" | "wordcount"
        ),
        Expr::BinOp(b) => {
            !matches!(
                b.op,
                BinOpKind::Concat | BinOpKind::ScAnd | BinOpKind::ScOr | BinOpKind::In
            ) && is_numeric(&b.left)
                && is_numeric(&b.right)
        }
        Expr::UnaryOp(u) => matches!(u.op, UnaryOpKind::Neg) && is_numeric(&u.expr),
        _ => false,
    }
}

/// Longest chain of `+` searched for a Markup operand; beyond it the chain is left as
/// it is (real templates add a handful of strings; a machine-made chain of a million
/// would otherwise make the rewrite quadratic).
const MAX_MARKUP_CHAIN: usize = 1000;

pub(crate) fn is_markup_add(expr: &Expr) -> bool {
    let mut current = expr;
    for _ in 0..MAX_MARKUP_CHAIN {
        let Expr::BinOp(b) = current else {
            return false;
        };
        if !matches!(b.op, BinOpKind::Add) {
            return false;
        }
        if super::markupvars::is_markup_operand(&b.right)
            || super::markupvars::is_markup_operand(&b.left)
        {
            return true;
        }
        if matches!(&b.right, Expr::BinOp(_)) && is_markup_add(&b.right) {
            return true;
        }
        current = &b.left;
    }
    false
}

/// The replacement text for an expression: Markup `+` becomes a helper call, anything
/// else keeps its source text.
fn emit(expr: &Expr, cx: &mut Cx) -> String {
    if let Expr::BinOp(b) = expr {
        if is_markup_add(expr) {
            let (left, right) = (emit(&b.left, cx), emit(&b.right, cx));
            return super::helpers::filter_call(&left, &cx.helpers.markup_add(), &right);
        }
    }
    let (start, end) = cx.extents.of(expr);
    format!("({})", cx.source.get(start..end).unwrap_or_default())
}

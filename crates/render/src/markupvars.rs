//! Which variables may hold Markup, for the `Markup + str` rewrite.
//!
//! `'<b>'|safe + x` escapes `x` in Python; so does `{% set m = '<b>'|safe %}{{ m + x }}`.
//! The rewrite can see the first form in the expression itself; for the second it needs
//! to know that `m` was assigned a Markup value somewhere. This pass collects every
//! variable (and namespace attribute, `ns.m`) that some `{% set %}` assigns a statically
//! Markup expression to, repeating until assignments of those variables are counted
//! too. The analysis ignores order and branches: a `+` on such a name goes through the
//! Markup helper, which adds plainly when neither operand turns out to be Markup.

use std::cell::RefCell;

use minijinja::machinery::ast::{BinOpKind, Expr, Stmt};

thread_local! {
    /// The names found for the template being rewritten on this thread.
    static NAMES: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// The filters whose result is Markup.
const MARKUP_FILTERS: [&str; 4] = ["safe", "escape", "e", "forceescape"];

/// Runs `body` with the Markup variables of `ast` known to [`is_markup`].
pub(crate) fn with_names<T>(ast: &Stmt, body: impl FnOnce() -> T) -> T {
    let names = collect(ast);
    NAMES.with(|cell| *cell.borrow_mut() = names);
    let result = body();
    NAMES.with(|cell| cell.borrow_mut().clear());
    result
}

/// One operand of a `+` chain is statically Markup: a `|safe`-like filter or a
/// variable that holds Markup (the chain itself is walked by the caller, so long
/// chains stay linear).
pub(crate) fn is_markup_operand(expr: &Expr) -> bool {
    match expr {
        Expr::Filter(f) => MARKUP_FILTERS.contains(&f.name),
        Expr::Var(_) | Expr::GetAttr(_) => NAMES.with(|cell| {
            // Compared in place: building each operand's name was an allocation per `+`.
            cell.borrow().iter().any(|name| is_named(expr, name))
        }),
        _ => false,
    }
}

/// Whether `expr` is `name` (`x`, or `ns.attr` as [`name_of`] spells it).
fn is_named(expr: &Expr, name: &str) -> bool {
    match expr {
        Expr::Var(var) => var.id == name,
        Expr::GetAttr(attr) => match &attr.expr {
            Expr::Var(var) => name
                .strip_prefix(var.id)
                .and_then(|rest| rest.strip_prefix('.'))
                .is_some_and(|rest| rest == attr.name),
            _ => false,
        },
        _ => false,
    }
}

fn is_markup_with(expr: &Expr, names: &[String]) -> bool {
    match expr {
        Expr::Filter(f) => MARKUP_FILTERS.contains(&f.name),
        Expr::BinOp(b) if matches!(b.op, BinOpKind::Add) => {
            is_markup_with(&b.left, names) || is_markup_with(&b.right, names)
        }
        _ => name_of(expr).is_some_and(|name| names.contains(&name)),
    }
}

/// `x` or `ns.attr`, as a name.
fn name_of(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Var(var) => Some(var.id.to_string()),
        Expr::GetAttr(attr) => match &attr.expr {
            Expr::Var(var) => Some(format!("{}.{}", var.id, attr.name)),
            _ => None,
        },
        _ => None,
    }
}

fn collect(ast: &Stmt) -> Vec<String> {
    let mut sets = Vec::new();
    assignments(ast, &mut sets);
    let mut names: Vec<String> = Vec::new();
    loop {
        let before = names.len();
        for (target, value) in &sets {
            if !names.contains(target) && is_markup_with(value, &names) {
                names.push(target.clone());
            }
        }
        if names.len() == before {
            return names;
        }
    }
}

/// Every `{% set target = value %}` with a simple target, anywhere in the template.
fn assignments<'a, 'e>(stmt: &'e Stmt<'a>, sets: &mut Vec<(String, &'e Expr<'a>)>) {
    let body: &[Stmt] = match stmt {
        Stmt::Set(s) => {
            if let Some(target) = name_of(&s.target) {
                sets.push((target, &s.expr));
            }
            return;
        }
        Stmt::Template(t) => &t.children,
        Stmt::ForLoop(f) => {
            f.else_body.iter().for_each(|s| assignments(s, sets));
            &f.body
        }
        Stmt::IfCond(i) => {
            i.false_body.iter().for_each(|s| assignments(s, sets));
            &i.true_body
        }
        Stmt::WithBlock(w) => &w.body,
        Stmt::SetBlock(s) => &s.body,
        Stmt::AutoEscape(a) => &a.body,
        Stmt::FilterBlock(f) => &f.body,
        Stmt::Block(b) => &b.body,
        Stmt::Macro(m) => &m.body,
        Stmt::CallBlock(c) => &c.macro_decl.body,
        _ => return,
    };
    body.iter().for_each(|s| assignments(s, sets));
}

//! Macro, call and `{% generation %}` bodies that assign to an outer namespace.
//!
//! A macro or call body sees the template's variables through a closure, and MiniJinja
//! decides what goes into it from the names the body *reads*. `{% set ns.x = ... %}`
//! does not read `ns` in MiniJinja's eyes, so a body that only assigns to an outer
//! namespace finds `ns` undefined ("can only assign to namespaces, not undefined"),
//! unless the same body (or another block declared beside it) happens to read `ns`.
//! Jinja2 resolves `ns` either way, and TRL's training templates rely on it to carry
//! state out of `{% generation %}` blocks.
//!
//! The fix reads the namespace where it is assigned: inside any macro or call body,
//! `{% set ns.x = value %}` becomes `{% set ns.x = ((value), ns)[0] %}`. The value and
//! its evaluation order are unchanged; the extra read puts `ns` in the closure of that
//! body and of every body around it.

use minijinja::machinery::ast::{Expr, Stmt};

use super::extent::Extents;

/// One assignment to rewrite: the value's source range and the namespace's name.
pub(crate) struct NamespaceSet<'a> {
    /// Byte range of the assigned value.
    pub value: (usize, usize),
    /// The namespace variable assigned to.
    pub namespace: &'a str,
}

/// Every `{% set ns.attr = value %}` inside a macro or call body.
pub(crate) fn namespace_sets<'a>(ast: &Stmt<'a>, extents: &mut Extents) -> Vec<NamespaceSet<'a>> {
    let mut found = Vec::new();
    walk(ast, false, extents, &mut found);
    found
}

fn walk_all<'a>(
    body: &[Stmt<'a>],
    in_body: bool,
    extents: &mut Extents,
    found: &mut Vec<NamespaceSet<'a>>,
) {
    for stmt in body {
        walk(stmt, in_body, extents, found);
    }
}

fn walk<'a>(
    stmt: &Stmt<'a>,
    in_body: bool,
    extents: &mut Extents,
    found: &mut Vec<NamespaceSet<'a>>,
) {
    match stmt {
        Stmt::Template(t) => walk_all(&t.children, in_body, extents, found),
        Stmt::Set(s) if in_body => {
            if let Expr::GetAttr(target) = &s.target {
                if let Expr::Var(var) = &target.expr {
                    found.push(NamespaceSet {
                        value: extents.of(&s.expr),
                        namespace: var.id,
                    });
                }
            }
        }
        Stmt::ForLoop(f) => {
            walk_all(&f.body, in_body, extents, found);
            walk_all(&f.else_body, in_body, extents, found);
        }
        Stmt::IfCond(i) => {
            walk_all(&i.true_body, in_body, extents, found);
            walk_all(&i.false_body, in_body, extents, found);
        }
        Stmt::WithBlock(w) => walk_all(&w.body, in_body, extents, found),
        Stmt::SetBlock(s) => walk_all(&s.body, in_body, extents, found),
        Stmt::AutoEscape(a) => walk_all(&a.body, in_body, extents, found),
        Stmt::FilterBlock(f) => walk_all(&f.body, in_body, extents, found),
        Stmt::Block(b) => walk_all(&b.body, in_body, extents, found),
        Stmt::Macro(m) => walk_all(&m.body, true, extents, found),
        Stmt::CallBlock(c) => walk_all(&c.macro_decl.body, true, extents, found),
        _ => {}
    }
}

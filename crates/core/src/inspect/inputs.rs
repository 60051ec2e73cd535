//! Which names a template reads from its context: every variable read at a point where
//! the template has not (possibly) set it itself, with Jinja2's scoping: `if` blocks do
//! not scope, `for` loops, macros, call blocks and `with` blocks do.
//!
//! "Possibly set" counts an assignment in any branch, so a name the template sets on
//! one path before reading it is not reported (Llama 3.1's `system_message`), while
//! `{% if x is not defined %}{% set x = ... %}` is (the test reads `x` first).

use std::collections::{BTreeSet, HashSet};

use minijinja::machinery::ast::{CallArg, Expr, Stmt};

use chatplate_render::syntax_config;
use chatplate_render::syntax_tree::{argument, children};

/// Names Jinja2 provides inside templates, never read from the context.
const SPECIAL: [&str; 5] = ["loop", "self", "caller", "varargs", "kwargs"];

/// Names read from the context by `source`, in name order.
pub(crate) fn context_reads(source: &str) -> BTreeSet<String> {
    let Ok(ast) = minijinja::machinery::parse(source, "<template>", syntax_config()) else {
        return BTreeSet::new();
    };
    let mut reads = Reads {
        scopes: vec![HashSet::new()],
        found: BTreeSet::new(),
        macro_depth: 0,
        deferred: BTreeSet::new(),
    };
    reads.stmt(&ast);
    // A macro body runs when called, after every top-level assignment before the call;
    // other macros defined later count as set.
    let top = reads.scopes.first().cloned().unwrap_or_default();
    let deferred: Vec<String> = reads
        .deferred
        .iter()
        .filter(|name| !top.contains(*name))
        .map(std::string::ToString::to_string)
        .collect();
    reads.found.extend(deferred);
    reads.found
}

struct Reads<'a> {
    scopes: Vec<HashSet<&'a str>>,
    found: BTreeSet<String>,
    /// How many macro bodies the walk is inside.
    macro_depth: usize,
    /// Names read inside macro bodies before being set there.
    deferred: BTreeSet<&'a str>,
}

impl<'a> Reads<'a> {
    fn read(&mut self, name: &'a str) {
        let set = self.scopes.iter().any(|scope| scope.contains(name));
        if set || SPECIAL.contains(&name) {
            return;
        }
        if self.macro_depth > 0 {
            self.deferred.insert(name);
        } else {
            self.found.insert(name.to_string());
        }
    }

    fn assign(&mut self, name: &'a str) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name);
        }
    }

    /// Runs `f` in a new scope.
    fn scoped(&mut self, f: impl FnOnce(&mut Self)) {
        self.scopes.push(HashSet::new());
        f(self);
        self.scopes.pop();
    }

    fn stmts(&mut self, stmts: &'a [Stmt<'a>]) {
        for stmt in stmts {
            self.stmt(stmt);
        }
    }

    fn stmt(&mut self, stmt: &'a Stmt<'a>) {
        match stmt {
            Stmt::Template(t) => self.stmts(&t.children),
            Stmt::EmitExpr(e) => self.expr(&e.expr),
            Stmt::IfCond(i) => {
                self.expr(&i.expr);
                self.stmts(&i.true_body);
                self.stmts(&i.false_body);
            }
            Stmt::ForLoop(f) => {
                self.expr(&f.iter);
                self.scoped(|reads| {
                    reads.target(&f.target);
                    if let Some(filter) = &f.filter_expr {
                        reads.expr(filter);
                    }
                    reads.stmts(&f.body);
                });
                self.scoped(|reads| reads.stmts(&f.else_body));
            }
            Stmt::WithBlock(w) => {
                w.assignments.iter().for_each(|(_, value)| self.expr(value));
                self.scoped(|reads| {
                    w.assignments
                        .iter()
                        .for_each(|(target, _)| reads.target(target));
                    reads.stmts(&w.body);
                });
            }
            // The value is read before the name is set: `{% set x = x | default(1) %}`.
            Stmt::Set(s) => {
                self.expr(&s.expr);
                self.target(&s.target);
            }
            Stmt::SetBlock(s) => {
                self.stmts(&s.body);
                if let Some(filter) = &s.filter {
                    self.expr(filter);
                }
                self.target(&s.target);
            }
            Stmt::AutoEscape(a) => self.stmts(&a.body),
            Stmt::FilterBlock(f) => {
                self.expr(&f.filter);
                self.stmts(&f.body);
            }
            Stmt::Block(b) => self.stmts(&b.body),
            Stmt::Macro(m) => {
                self.assign(m.name);
                m.defaults.iter().for_each(|d| self.expr(d));
                self.macro_depth += 1;
                self.scoped(|reads| {
                    m.args.iter().for_each(|arg| reads.target(arg));
                    reads.stmts(&m.body);
                });
                self.macro_depth -= 1;
            }
            Stmt::CallBlock(c) => {
                self.args(&c.call.args);
                self.expr(&c.call.expr);
                self.scoped(|reads| {
                    c.macro_decl.args.iter().for_each(|arg| reads.target(arg));
                    reads.stmts(&c.macro_decl.body);
                });
            }
            Stmt::Do(d) => {
                self.expr(&d.call.expr);
                self.args(&d.call.args);
            }
            _ => {}
        }
    }

    /// An assignment target: names are set, `ns.attr` and `x[i]` read their base.
    fn target(&mut self, target: &'a Expr<'a>) {
        match target {
            Expr::Var(var) => self.assign(var.id),
            Expr::Tuple(t) => t.items.iter().for_each(|item| self.target(item)),
            Expr::List(l) => l.items.iter().for_each(|item| self.target(item)),
            other => self.expr(other),
        }
    }

    fn args(&mut self, args: &'a [CallArg<'a>]) {
        for arg in args {
            self.expr(argument(arg));
        }
    }

    fn expr(&mut self, expr: &'a Expr<'a>) {
        if let Expr::Var(var) = expr {
            self.read(var.id);
        }
        for child in children(expr) {
            self.expr(child);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reads(source: &str) -> Vec<String> {
        context_reads(source).into_iter().collect()
    }

    #[test]
    fn if_blocks_do_not_scope_but_loops_do() {
        let source = "{% if messages[0].role == 'system' %}{% set sys = 1 %}{% else %}{% set sys = 2 %}{% endif %}{{ sys }}\
            {% for m in messages %}{% set role = m.role %}{{ role }}{{ loop.index }}{% endfor %}{{ role }}";
        assert_eq!(reads(source), vec!["messages", "role"]);
    }

    #[test]
    fn a_value_is_read_before_its_name_is_set() {
        let source = "{% set flag = flag | default(true) %}{% if not date is defined %}{% set date = 'x' %}{% endif %}\
            {% set ns = namespace(a=1) %}{% set ns.a = extra %}{% macro m(x, y=fallback) %}{{ x }}{{ outer }}{{ later() }}{{ top }}{% endmacro %}\
            {% macro later() %}{% endmacro %}{% set top = 1 %}{{ m(1) }}";
        assert_eq!(
            reads(source),
            vec!["date", "extra", "fallback", "flag", "namespace", "outer"]
        );
    }
}

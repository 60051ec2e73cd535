//! Names a macro body reads that MiniJinja's closure analysis does not capture.
//!
//! A macro (and the body of a `{% call %}` or `{% generation %}` block, which is one)
//! sees the variables of the scope it is defined in. MiniJinja decides which ones at
//! compile time, walking the body and capturing every name read before the body binds
//! it. Its walk binds some names before it reads the expression that uses them, which
//! Python evaluates first:
//!
//! * a `for` loop binds `loop` before its iterable is read, so
//!   `{% for m in messages[loop.index:] %}` in a `{% generation %}` block inside a loop
//!   found no `loop`;
//! * `{% set x = x + [1] %}` and `{% with x = x %}` bind `x` before reading the value.
//!
//! For each such body, the rewrite ([`super::rewrite`]) puts a statement that reads
//! those names first, `{% set <hidden> = [loop, x] %}`, right after the opening tag, with
//! the tag's own whitespace marker so the output does not change. Capturing a name the
//! body then binds itself is harmless: its own binding is found first.

use minijinja::machinery::ast::{Expr, Macro, Stmt};
use minijinja::machinery::{tokenize, Token};

use super::subexpressions;

/// Names MiniJinja must never be made to capture: `caller` changes what the macro
/// accepts.
const NEVER: [&str; 3] = ["caller", "varargs", "kwargs"];

/// A statement to insert: at `offset` (just after a macro's or call block's opening
/// tag), reading `names`, ending with the tag's whitespace `marker`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Capture {
    /// Where the opening tag ends.
    pub offset: usize,
    /// `-`, `+` or nothing, as the opening tag ends.
    pub marker: &'static str,
    /// The names to read, in the order found.
    pub names: Vec<String>,
}

impl Capture {
    /// The statement, assigning to `variable`.
    pub(crate) fn statement(&self, variable: &str) -> String {
        format!(
            "{{% set {variable} = [{}] {}%}}",
            self.names.join(", "),
            self.marker
        )
    }
}

/// Every macro or call block body of `ast` with names to capture.
pub(crate) fn captures(
    ast: &Stmt,
    source: &str,
    syntax: minijinja::syntax::SyntaxConfig,
) -> Vec<Capture> {
    let mut bodies = Vec::new();
    find_bodies(ast, &mut bodies);
    let wanted: Vec<(usize, Vec<String>)> = bodies
        .into_iter()
        .filter_map(|(keyword, body)| {
            let mut names = Vec::new();
            missed_in(&body.body, &mut names);
            (!names.is_empty()).then_some((keyword, names))
        })
        .collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    let ends = block_ends(source, syntax);
    wanted
        .into_iter()
        .filter_map(|(keyword, names)| {
            let at = ends.partition_point(|(start, _)| *start < keyword);
            let &(start, end) = ends.get(at)?;
            let marker = match source.as_bytes().get(start) {
                Some(b'-') => "-",
                Some(b'+') => "+",
                _ => "",
            };
            Some(Capture {
                offset: end,
                marker,
                names,
            })
        })
        .collect()
}

/// Every macro and call block body, with the offset of its keyword.
fn find_bodies<'e, 'a>(stmt: &'e Stmt<'a>, out: &mut Vec<(usize, &'e Macro<'a>)>) {
    let children: Vec<&[Stmt]> = match stmt {
        Stmt::Template(t) => vec![&t.children],
        Stmt::ForLoop(f) => vec![&f.body, &f.else_body],
        Stmt::IfCond(i) => vec![&i.true_body, &i.false_body],
        Stmt::WithBlock(w) => vec![&w.body],
        Stmt::SetBlock(s) => vec![&s.body],
        Stmt::AutoEscape(a) => vec![&a.body],
        Stmt::FilterBlock(f) => vec![&f.body],
        Stmt::Block(b) => vec![&b.body],
        Stmt::Macro(m) => {
            out.push((m.span().start_offset as usize, &**m));
            vec![&m.body]
        }
        Stmt::CallBlock(c) => {
            out.push((c.span().start_offset as usize, &*c.macro_decl));
            vec![&c.macro_decl.body]
        }
        _ => vec![],
    };
    for body in children {
        for child in body {
            find_bodies(child, out);
        }
    }
}

/// The names `stmts` read where MiniJinja's analysis has already bound them (not
/// looking into nested macro bodies, which get their own statement).
fn missed_in(stmts: &[Stmt], names: &mut Vec<String>) {
    for stmt in stmts {
        match stmt {
            Stmt::ForLoop(f) => {
                if reads(&f.iter, "loop") {
                    add(names, "loop");
                }
                missed_in(&f.body, names);
                missed_in(&f.else_body, names);
            }
            Stmt::Set(s) => bound_and_read(&s.target, &[&s.expr], names),
            Stmt::WithBlock(w) => {
                let values: Vec<&Expr> = w.assignments.iter().map(|(_, v)| v).collect();
                for (target, _) in &w.assignments {
                    bound_and_read(target, &values, names);
                }
                missed_in(&w.body, names);
            }
            Stmt::IfCond(i) => {
                missed_in(&i.true_body, names);
                missed_in(&i.false_body, names);
            }
            Stmt::SetBlock(s) => missed_in(&s.body, names),
            Stmt::AutoEscape(a) => missed_in(&a.body, names),
            Stmt::FilterBlock(f) => missed_in(&f.body, names),
            _ => {}
        }
    }
}

/// Adds the names `target` binds that one of `values` reads.
fn bound_and_read(target: &Expr, values: &[&Expr], names: &mut Vec<String>) {
    let mut bound = Vec::new();
    targets(target, &mut bound);
    for name in bound {
        if values.iter().any(|value| reads(value, name)) {
            add(names, name);
        }
    }
}

/// The names an assignment target binds (`x`, `a, b`; not `ns.attr`).
pub(crate) fn targets<'a>(target: &Expr<'a>, out: &mut Vec<&'a str>) {
    match target {
        Expr::Var(v) => out.push(v.id),
        Expr::Tuple(t) => t.items.iter().for_each(|item| targets(item, out)),
        Expr::List(l) => l.items.iter().for_each(|item| targets(item, out)),
        _ => {}
    }
}

/// Whether `expr` reads the variable `name`.
fn reads(expr: &Expr, name: &str) -> bool {
    let mut pending = vec![expr];
    while let Some(expr) = pending.pop() {
        match expr {
            Expr::Var(v) if v.id == name => return true,
            _ => pending.extend(subexpressions::of(expr)),
        }
    }
    false
}

fn add(names: &mut Vec<String>, name: &str) {
    if !NEVER.contains(&name) && !names.iter().any(|known| known == name) {
        names.push(name.to_string());
    }
}

/// The byte ranges of every block tag's closing marker (`%}`, `-%}`, `+%}`), in order.
fn block_ends(source: &str, syntax: minijinja::syntax::SyntaxConfig) -> Vec<(usize, usize)> {
    tokenize(source, false, syntax)
        .map_while(Result::ok)
        .filter(|(token, _)| matches!(token, Token::BlockEnd))
        .map(|(_, span)| (span.start_offset as usize, span.end_offset as usize))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn captures_of(source: &str) -> Vec<Capture> {
        let ast = minijinja::machinery::parse(source, "t", crate::syntax_config()).unwrap();
        captures(&ast, source, crate::syntax_config())
    }

    #[test]
    fn finds_loop_in_an_iterable_and_self_reading_assignments() {
        let source = "{% for x in xs %}{%- call f() -%}\n{% for m in ms[loop.index:] %}\
                      {% endfor %}{% set a, b = b, 1 %}{% endcall %}{% endfor %}";
        let found = captures_of(source);
        assert_eq!(found.len(), 1);
        let capture = &found[0];
        assert_eq!(
            &source[..capture.offset],
            "{% for x in xs %}{%- call f() -%}"
        );
        assert_eq!(capture.marker, "-");
        assert_eq!(capture.names, ["loop", "b"]);
        assert_eq!(capture.statement("h"), "{% set h = [loop, b] -%}");
    }

    #[test]
    fn leaves_bodies_that_miss_nothing() {
        assert!(captures_of("{% macro m(x) %}{% set y = x %}{{ y }}{% endmacro %}").is_empty());
        assert!(captures_of("{% macro m() %}{% set caller = caller %}{% endmacro %}").is_empty());
    }
}

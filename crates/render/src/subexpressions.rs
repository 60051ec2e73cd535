//! The direct sub-expressions of an expression, in source order, without allocating.
//!
//! Every pass over a template's syntax tree (extents, the rewrites, Jinja2's checks)
//! asks each node for its children; collecting them into a `Vec` per node was a
//! tenth of the rewrite's cost. [`Subexpressions`] walks them in place.

use std::slice::Iter;

use minijinja::machinery::ast::{CallArg, CompareOp, Expr};

/// Whether `expr` calls nothing (no call, filter or slice, whose helpers could have
/// effects or answer differently each time, no test given splatted arguments) and every
/// variable it reads passes `read`. Walked with a list of pending sub-expressions, not
/// recursion: a condition may be a chain of a great many `and`s.
pub(crate) fn calls_nothing_reading(expr: &Expr, mut read: impl FnMut(&str) -> bool) -> bool {
    let mut pending = vec![expr];
    while let Some(expr) = pending.pop() {
        match expr {
            Expr::Var(var) if !read(var.id) => return false,
            Expr::Slice(_) | Expr::Filter(_) | Expr::Call(_) => return false,
            // A test's arguments qualify when they are plain positional or keyword ones.
            Expr::Test(test)
                if test
                    .args
                    .iter()
                    .any(|arg| matches!(arg, CallArg::PosSplat(_) | CallArg::KwargSplat(_))) =>
            {
                return false
            }
            _ => pending.extend(of(expr)),
        }
    }
    true
}

/// An iterator over an expression's direct sub-expressions, in source order: the
/// fixed ones first, then call arguments, list items, map keys and values, and
/// comparison operands (no expression has more than one of those lists).
pub(crate) struct Subexpressions<'e, 'a> {
    fixed: [Option<&'e Expr<'a>>; 4],
    next_fixed: usize,
    args: Iter<'e, CallArg<'a>>,
    items: Iter<'e, Expr<'a>>,
    values: Iter<'e, Expr<'a>>,
    compared: Iter<'e, CompareOp<'a>>,
}

/// The direct sub-expressions of `expr`, in source order.
pub(crate) fn of<'e, 'a>(expr: &'e Expr<'a>) -> Subexpressions<'e, 'a> {
    let mut walk = Subexpressions {
        fixed: [None; 4],
        next_fixed: 0,
        args: [].iter(),
        items: [].iter(),
        values: [].iter(),
        compared: [].iter(),
    };
    match expr {
        Expr::Slice(s) => {
            walk.fixed = [
                Some(&s.expr),
                s.start.as_ref(),
                s.stop.as_ref(),
                s.step.as_ref(),
            ];
        }
        Expr::UnaryOp(u) => walk.fixed[0] = Some(&u.expr),
        Expr::BinOp(b) => walk.fixed[..2].copy_from_slice(&[Some(&b.left), Some(&b.right)]),
        Expr::Compare(c) => {
            walk.fixed[0] = Some(&c.expr);
            walk.compared = c.ops.iter();
        }
        Expr::IfExpr(i) => walk.fixed[..3].copy_from_slice(&[
            Some(&i.true_expr),
            Some(&i.test_expr),
            i.false_expr.as_ref(),
        ]),
        Expr::Filter(f) => {
            walk.fixed[0] = f.expr.as_ref();
            walk.args = f.args.iter();
        }
        Expr::Test(t) => {
            walk.fixed[0] = Some(&t.expr);
            walk.args = t.args.iter();
        }
        Expr::GetAttr(g) => walk.fixed[0] = Some(&g.expr),
        Expr::GetItem(g) => {
            walk.fixed[..2].copy_from_slice(&[Some(&g.expr), Some(&g.subscript_expr)]);
        }
        Expr::Call(c) => {
            walk.fixed[0] = Some(&c.expr);
            walk.args = c.args.iter();
        }
        Expr::List(l) => walk.items = l.items.iter(),
        Expr::Tuple(t) => walk.items = t.items.iter(),
        Expr::Map(m) => {
            walk.items = m.keys.iter();
            walk.values = m.values.iter();
        }
        Expr::Var(_) | Expr::Const(_) => {}
    }
    walk
}

impl<'e, 'a> Iterator for Subexpressions<'e, 'a> {
    type Item = &'e Expr<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        while let Some(slot) = self.fixed.get(self.next_fixed) {
            self.next_fixed += 1;
            if slot.is_some() {
                return *slot;
            }
        }
        if let Some(arg) = self.args.next() {
            return Some(super::rewrite::argument(arg));
        }
        self.items
            .next()
            .or_else(|| self.values.next())
            .or_else(|| self.compared.next().map(|op| &op.expr))
    }
}

#[cfg(test)]
mod tests {
    use minijinja::machinery::ast::{Expr, Stmt};

    /// The variable names under `expr`, depth first, children in the order given.
    fn names(expr: &Expr, out: &mut Vec<String>) {
        if let Expr::Var(var) = expr {
            out.push(var.id.to_string());
        }
        super::of(expr).for_each(|child| names(child, out));
    }

    #[test]
    fn children_come_in_source_order() {
        let cases = [
            ("[a, b, c]", "a b c"),
            ("{a: b, c: d}", "a c b d"),
            ("a < b <= c", "a b c"),
            ("a if b else c", "a b c"),
            ("a if b", "a b"),
            ("a | f(b, c=d, *e, **g)", "a b d e g"),
            ("a is t(b)", "a b"),
            ("f(a, b=c)[d:e:g]", "f a c d e g"),
            ("a[b][::c]", "a b c"),
            ("-a ~ b.c", "a b"),
            ("(a, b)", "a b"),
        ];
        for (source, expected) in cases {
            let template = format!("{{{{ {source} }}}}");
            let ast = minijinja::machinery::parse(&template, "t", Default::default()).unwrap();
            let Stmt::Template(t) = &ast else { panic!() };
            let Some(Stmt::EmitExpr(emit)) = t.children.first() else {
                panic!()
            };
            let mut found = Vec::new();
            names(&emit.expr, &mut found);
            assert_eq!(found.join(" "), expected, "{source}");
        }
    }
}

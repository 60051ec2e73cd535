//! Which object a failed lookup was made on, for Jinja2's `UndefinedError` wording.
//!
//! Jinja2 words an undefined value after the object that lacked the attribute or item:
//! `'str object' has no attribute 'text'`, `list object has no element 5`. MiniJinja's
//! undefined values remember only the expression that made them
//! (`message['content'][0]['text']`), and only the conversation's own dicts note their
//! misses as they happen ([`super::undefined`]). So when a render fails on an undefined
//! value that came from a lookup, it is rendered once more with every `x.name` and
//! `x[key]` routed through [`LOOKUP`], which looks up like MiniJinja and notes each miss
//! with the type of the object it was made on. Only failed renders pay for this.

use std::collections::HashSet;

use minijinja::machinery::ast::Expr;
use minijinja::value::Value;
use minijinja::Error;

use super::edits::{Edit, EditKind};
use super::extent::Extents;

/// The helper every lookup is routed through in the diagnosis.
pub(crate) const LOOKUP: &str = "__chatplate_explain_lookup";

/// Registers the helper (on the environment of the diagnosis only).
pub(crate) fn register(env: &mut minijinja::Environment<'static>) {
    env.add_function(LOOKUP, lookup);
}

/// `source` with every attribute and item lookup routed through [`LOOKUP`] (method
/// calls and slices keep their own form).
pub(crate) fn instrument(source: &str, syntax: &minijinja::syntax::SyntaxConfig) -> Option<String> {
    let ast = minijinja::machinery::parse(source, "diagnosis", syntax.clone()).ok()?;
    let mut extents = Extents::new(source);
    let mut edits = Vec::new();
    let mut callees = HashSet::new();
    super::diagnose::visit_stmt(&ast, &mut |expr| {
        if let Expr::Call(call) = expr {
            // `x.method()` is a method call, not a lookup.
            callees.insert(&raw const call.expr as usize);
        }
        if !callees.contains(&(std::ptr::from_ref::<Expr>(expr) as usize)) {
            route(expr, source, &mut extents, &mut edits);
        }
    });
    Some(super::edits::apply(source, edits).0)
}

/// The edits that route `expr` through [`LOOKUP`], if it is a lookup: the base and the
/// key become its arguments, the brackets or dot between them are replaced.
fn route(expr: &Expr, source: &str, extents: &mut Extents, edits: &mut Vec<Edit>) {
    let (start, end) = extents.of(expr);
    let (base, tail) = match expr {
        Expr::GetAttr(attr) => (&attr.expr, format!(", {:?}, true)", attr.name)),
        Expr::GetItem(item) if !matches!(item.subscript_expr, Expr::Slice(_)) => {
            (&item.expr, String::new())
        }
        _ => return,
    };
    let (_, base_end) = extents.of(base);
    let opener = if tail.is_empty() { '[' } else { '.' };
    // The base runs to the `.` or `[`: in `(x).y` its parentheses belong to it.
    let Some(at) = source.get(base_end..end).and_then(|t| t.find(opener)) else {
        return;
    };
    let split = base_end + at;
    edits.push(Edit {
        start,
        end: split,
        kind: EditKind::Around(format!("{LOOKUP}(("), ")".into()),
    });
    if let Expr::GetItem(item) = expr {
        let (key_start, key_end) = extents.of(&item.subscript_expr);
        edits.push(Edit {
            start: split,
            end: key_start,
            kind: EditKind::Replace(", (".into()),
        });
        edits.push(Edit {
            start: key_end,
            end,
            kind: EditKind::Replace("), false)".into()),
        });
    } else {
        edits.push(Edit {
            start: split,
            end,
            kind: EditKind::Replace(tail),
        });
    }
}

/// `base.key` (`attr`) or `base[key]` as MiniJinja looks it up; a miss is noted with
/// the kind of object it was made on.
fn lookup(base: Value, key: Value, attr: bool) -> Result<Value, Error> {
    if base.is_undefined() {
        // MiniJinja fails here too, naming the undefined value.
        return Err(i64::try_from(base).expect_err("undefined is no integer"));
    }
    let found = match (attr, key.as_str()) {
        (true, Some(name)) => base.get_attr(name)?,
        _ => base.get_item(&key)?,
    };
    if found.is_undefined() {
        if let Some(owner) = super::undefined::known_object_type_repr(&base) {
            super::undefined::note_miss(&key, owner);
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_attribute_and_item_lookups_but_not_method_calls() {
        let source = "{{ (m).content[0]['text'] + x.strip() + y[1:] }}";
        let syntax = crate::syntax_config();
        assert_eq!(
            instrument(source, &syntax).unwrap(),
            format!(
                "{{{{ {LOOKUP}(({LOOKUP}(({LOOKUP}(((m)), \"content\", true)), (0), false)), \
                 ('text'), false) + x.strip() + y[1:] }}}}"
            )
        );
    }
}

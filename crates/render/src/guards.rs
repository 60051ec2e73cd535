//! Loops that end early: a `for` loop whose whole body is one `{% if %}` on a condition
//! that no iteration can change once the body stops running.
//!
//! Jinja2 has no `break` unless the `loopcontrols` extension is on, so templates stop a
//! search with a flag instead:
//!
//! ```jinja
//! {%- for j in range(loop.index0 - 1, -1, -1) -%}
//!     {%- if not prev.found -%} ... {%- set prev.found = true -%} ... {%- endif -%}
//! {%- endfor -%}
//! ```
//!
//! Once the flag is set the loop still walks every remaining item, evaluating the
//! condition and doing nothing else. Gemma 4 runs such a search back through the
//! conversation for every message, which makes its template quadratic, nearly all of
//! it in iterations that do nothing.
//!
//! The rewrite gives that `if` an `{% else %}{% break %}`; the mirror image, a loop
//! whose `if` does nothing while a `stopped` flag is set (`{% if stopped %}{% elif
//! ... %}...{% endif %}`, Gemma 4's scan forward through tool results), gets a `{% break
//! %}` in that empty branch. It is exact, not a guess: when the condition takes the
//! branch that does nothing, the iteration runs nothing but the condition, so the next
//! one starts in the same state (only the loop variable and `loop` differ), and a
//! condition that reads neither, and calls nothing, takes the same branch there too,
//! and in every iteration after it. So the remaining iterations can have no effect, and
//! leaving the loop at once writes the same prompt and raises the same errors.
//!
//! What qualifies:
//! * the loop is not `recursive` and has no `if` filter of its own;
//! * its body is exactly one `{% if %}` (text around it that whitespace control leaves
//!   empty is allowed; text that would be written in every iteration is not), which
//!   either has no `{% else %}` or `{% elif %}`, or has nothing in its first branch;
//! * the condition uses only names (not the loop's own variables, not `loop`),
//!   constants, attribute and item lookups, operators, comparisons, tests, `if`
//!   expressions and literal lists, tuples and dicts of those: no filters, calls or
//!   slices, whose helpers could have effects or differ between calls (`strftime_now`).

use minijinja::machinery::ast::{Expr, ForLoop, IfCond, Spanned, Stmt};

use super::edits::{Edit, EditKind};
use super::extent::Extents;

/// The edit that makes `for_loop` leave once its guarding condition says the rest of
/// the loop does nothing, when the loop qualifies (see the module docs).
pub(crate) fn early_exit(for_loop: &ForLoop, extents: &mut Extents) -> Option<Edit> {
    if for_loop.recursive || for_loop.filter_expr.is_some() {
        return None;
    }
    let guard = sole(&for_loop.body, |stmt| match stmt {
        Stmt::IfCond(guard) => Some(guard),
        _ => None,
    })?;
    let mut bound = Vec::new();
    super::closures::targets(&for_loop.target, &mut bound);
    if !is_invariant(&guard.expr, &bound) {
        return None;
    }
    let source = extents.source();
    if guard.false_body.is_empty() {
        // `{% if flag %}...{% endif %}`: leave when the condition is false. The `else`
        // takes over the whitespace control the `endif` had on its left, so the end of
        // the `if` body is trimmed exactly as before; nothing stands between the inserted
        // tags and the `endif`, so its own markers act as before.
        let (offset, left_marker) = endif_tag(guard, source)?;
        return Some(insertion(
            offset,
            format!("{{%{left_marker} else %}}{{% break %}}"),
        ));
    }
    if writes_nothing(&guard.true_body) {
        // `{% if stopped %}{% elif ... %}...{% endif %}`: leave when the condition is
        // true, first thing after the `if` tag, so nothing after it is written.
        let (_, condition_end) = extents.of(&guard.expr);
        let offset = tag_end(source, condition_end)?;
        return Some(insertion(offset, "{% break %}".to_string()));
    }
    None
}

/// An edit that inserts `text` at `offset`.
fn insertion(offset: usize, text: String) -> Edit {
    Edit {
        start: offset,
        end: offset,
        kind: EditKind::Replace(text),
    }
}

/// Whether `body` has nothing in it but text that whitespace control left empty.
pub(crate) fn writes_nothing(body: &[Stmt]) -> bool {
    body.iter().all(is_empty_text)
}

/// Text that whitespace control left empty.
fn is_empty_text(stmt: &Stmt) -> bool {
    matches!(stmt, Stmt::EmitRaw(raw) if raw.raw.is_empty())
}

/// Just after the `%}` that closes a tag whose last expression ends at `from`: `None`
/// when anything but a whitespace marker stands between.
fn tag_end(source: &str, from: usize) -> Option<usize> {
    let rest = source.get(from..)?;
    let close = rest.find("%}")?;
    match rest[..close].trim() {
        "" | "-" | "+" => Some(from + close + 2),
        _ => None,
    }
}

/// The one statement of `body` that `pick` accepts, when everything else in it is text
/// that whitespace control left empty (guards and flag scans alike).
pub(crate) fn sole<'b, 'a, T>(
    body: &'b [Stmt<'a>],
    pick: impl Fn(&'b Stmt<'a>) -> Option<T>,
) -> Option<T> {
    let mut found = None;
    for stmt in body {
        if is_empty_text(stmt) {
            continue;
        }
        if found.is_some() {
            return None;
        }
        found = Some(pick(stmt)?);
    }
    found
}

/// Whether `expr` reads nothing an iteration changes by itself (the loop's variables,
/// `loop`) and calls nothing (see the module docs and
/// [`super::subexpressions::calls_nothing_reading`]).
fn is_invariant(expr: &Expr, bound: &[&str]) -> bool {
    super::subexpressions::calls_nothing_reading(expr, |name| {
        name != "loop" && !bound.contains(&name)
    })
}

/// Where the `if`'s closing tag starts, and the whitespace marker after its `{%`
/// (`-`, `+` or none). `None` when the text there is not a plain `{% endif`.
fn endif_tag(guard: &Spanned<IfCond>, source: &str) -> Option<(usize, &'static str)> {
    // The statement's span ends just after the `endif` keyword.
    let end = usize::try_from(guard.span().end_offset).ok()?;
    let keyword_start = end.checked_sub("endif".len())?;
    if source.get(keyword_start..end)? != "endif" {
        return None;
    }
    let before = source.get(..keyword_start)?;
    let open = before.rfind("{%")?;
    let between = &before[open + 2..];
    let marker = match between.trim() {
        "" => "",
        "-" if between.starts_with('-') => "-",
        "+" if between.starts_with('+') => "+",
        _ => return None,
    };
    Some((open, marker))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rewritten text of `source` (only this module's edits).
    fn rewritten(source: &str) -> String {
        let ast = minijinja::machinery::parse(source, "t", crate::syntax_config()).expect("parses");
        let mut edits = Vec::new();
        collect(&ast, &mut Extents::new(source), &mut edits);
        super::super::edits::apply(source, edits).0
    }

    fn collect(stmt: &Stmt, extents: &mut Extents, edits: &mut Vec<Edit>) {
        match stmt {
            Stmt::Template(t) => t.children.iter().for_each(|s| collect(s, extents, edits)),
            Stmt::ForLoop(f) => {
                edits.extend(early_exit(f, extents));
                f.body.iter().for_each(|s| collect(s, extents, edits));
            }
            Stmt::IfCond(i) => i
                .true_body
                .iter()
                .chain(&i.false_body)
                .for_each(|s| collect(s, extents, edits)),
            _ => {}
        }
    }

    #[test]
    fn a_flag_guarded_search_gets_a_break() {
        let source =
            "{%- for j in range(3) -%}\n{%- if not ns.found -%}x{%- endif -%}\n{%- endfor -%}";
        assert_eq!(
            rewritten(source),
            "{%- for j in range(3) -%}\n{%- if not ns.found -%}x{%- else %}{% break %}{%- endif -%}\n{%- endfor -%}"
        );
        let plain =
            "{% for j in r %}{% if ns.n < 3 and flag is defined %}{{ j }}{% endif %}{% endfor %}";
        assert!(rewritten(plain).contains("{{ j }}{% else %}{% break %}{% endif %}"));
        let plus = "{% for j in r %}{% if not ns.f %}a{%+ endif %}{% endfor %}";
        assert!(rewritten(plus).contains("a{%+ else %}{% break %}{%+ endif %}"));
    }

    #[test]
    fn a_loop_that_does_nothing_once_stopped_gets_a_break() {
        let source = "{%- for k in r -%}\n{%- if scan.stopped -%}\n{%- elif k > 2 -%}{%- set scan.stopped = true -%}{%- else -%}{{ k }}{%- endif -%}{%- endfor -%}";
        assert_eq!(
            rewritten(source),
            "{%- for k in r -%}\n{%- if scan.stopped -%}{% break %}\n{%- elif k > 2 -%}{%- set scan.stopped = true -%}{%- else -%}{{ k }}{%- endif -%}{%- endfor -%}"
        );
        let quoted = "{% for k in r %}{% if s == '%}' %}{% else %}{{ k }}{% endif %}{% endfor %}";
        assert!(rewritten(quoted).contains("{% if s == '%}' %}{% break %}{% else %}"));
    }

    #[test]
    fn loops_whose_condition_can_change_by_itself_are_left_alone() {
        for source in [
            // Reads the loop variable or `loop`.
            "{% for m in ms %}{% if m.role == 'user' %}x{% endif %}{% endfor %}",
            "{% for k, v in d %}{% if not v %}x{% endif %}{% endfor %}",
            "{% for m in ms %}{% if loop.first %}x{% endif %}{% endfor %}",
            // Calls or filters, which could have effects or differ between calls.
            "{% for m in ms %}{% if ns.items.pop() %}x{% endif %}{% endfor %}",
            "{% for m in ms %}{% if ns.x | length %}x{% endif %}{% endfor %}",
            // More than the `if` in the body, or an `else` that runs every time.
            "{% for m in ms %}{% if not ns.f %}x{% endif %} {% endfor %}",
            "{% for m in ms %}{% if not ns.f %}x{% else %}y{% endif %}{% endfor %}",
            "{% for m in ms %}{% if not ns.f %}x{% elif ns.g %}y{% endif %}{% endfor %}",
            "{% for m in ms %}{% if ns.f %} {% else %}y{% endif %}{% endfor %}",
            // A filter of the loop's own, or a recursive loop.
            "{% for m in ms if m %}{% if not ns.f %}x{% endif %}{% endfor %}",
            "{% for m in ms recursive %}{% if not ns.f %}x{% endif %}{% endfor %}",
        ] {
            assert_eq!(rewritten(source), source, "{source}");
        }
    }
}

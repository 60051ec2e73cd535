//! Flag scans: a `for` loop that only sets a namespace flag when its item matches,
//! answered from a per-render memo instead of walking the list again.
//!
//! gpt-oss looks ahead from every assistant message with tool calls for a later final
//! answer:
//!
//! ```jinja
//! {%- for future_message in loop_messages[loop.index:] %}
//!     {%- if future_message.role == 'assistant' and "tool_calls" not in future_message %}
//!         {%- set future_final_message.found = true %}
//!     {%- endif %}
//! {%- endfor %}
//! ```
//!
//! Each such message walks every message after it, so the template is quadratic. The
//! loop has only three observable effects: the flag is set (to the same constant,
//! however often) if the condition holds for some item; the first item whose condition
//! raises fails the render with that error; and a failing assignment (the namespace is
//! not one) fails at the first item that matches. All three are fixed by two items of
//! the list: the first that matches and the first that raises. So the loop is made to
//! iterate those two items only, in their order, and runs its own body, unchanged, on
//! them: the same assignment and the same error, raised at the same place.
//!
//! Which items those are comes from the condition evaluated on each item by a macro
//! holding a copy of the condition (`{% if P %}1{% endif %}`, defined just before the
//! loop), and is remembered for the render, per loop for the last list it scanned: per
//! item, the first matching and the first raising index at or after it, computed from
//! the end backwards down to the lowest start asked for so far. The first scan of a list
//! walks it as the original (a list scanned once gains nothing); from the second on,
//! every scan of a suffix of it (`loop_messages[loop.index:]`) is answered at once.
//!
//! Why that is safe (see docs/speed.md, "A flag scan is answered from a memo"):
//! * **The condition is a function of the item alone.** It reads nothing but the loop
//!   variable and constants, through lookups, operators, comparisons, tests and
//!   literals: no other names, no `loop`, no calls, filters or slices (whose helpers
//!   could have effects or differ between calls).
//! * **The item cannot change.** The memo is used only while every item it evaluated is
//!   plain data (strings, numbers, `none`, and lists and dicts of those: a conversation's
//!   messages), never a namespace or an iterator, and only for a list (which no template
//!   can modify) it keeps alive, so its address cannot be reused by another list.
//! * **Nothing is evaluated that the original would not.** A scan of `L[s:]` evaluates
//!   the condition only on items at or after `s`, which the original loop evaluates
//!   too; a raising item's error is not raised by the memo but by the loop's own body.
//! * **Anything else iterates as before.** Another iterable, a stop or step, an item
//!   that is not plain data and the runs that word a failure (which note missed keys
//!   in order) take the original loop over the original items. In a traced render,
//!   whose messages note which loop reached them, the items are walked first as the
//!   original loop walked them, without its body.
//!
//! Bounds: each evaluated item is a checkpoint (cancel, deadline, byte budget), the
//! macro's instructions burn fuel as the original loop's did, and the memo's two indexes
//! per item are charged to the byte budget before they are allocated.

use std::collections::HashMap;
use std::sync::Arc;

use minijinja::machinery::ast::{Expr, ForLoop, IfCond, Spanned, Stmt};
use minijinja::value::Value;
use minijinja::{Environment, Error, ErrorKind, State};

use super::edits::{Edit, EditKind};
use super::extent::Extents;
use super::guards::{sole, writes_nothing};
use super::helpers::Helpers;
use super::scope;

/// Registers the scan helper under this template's name.
pub(crate) fn register(env: &mut Environment<'static>, helpers: &Helpers) {
    env.add_function(helpers.scan(), scan);
}

/// A loop that qualifies (see the module docs), found while walking the template; its
/// edits are made once every other edit is known ([`finish`]), since the macro holds
/// the condition's rewritten text.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// Where the loop's `{%` starts: the macro is defined just before it.
    tag_start: usize,
    /// The whitespace marker after that `{%` (`-`, `+` or none).
    marker: &'static str,
    /// The loop variable.
    target: String,
    /// The condition's extent.
    condition: (usize, usize),
    /// The iterable's extent.
    iterable: (usize, usize),
}

/// The plan for `for_loop` when it is a flag scan (see the module docs).
pub(crate) fn plan(for_loop: &Spanned<ForLoop>, extents: &mut Extents) -> Option<Plan> {
    if for_loop.recursive || for_loop.filter_expr.is_some() || !writes_nothing(&for_loop.else_body)
    {
        return None;
    }
    let Expr::Var(target) = &for_loop.target else {
        return None;
    };
    if target.id == "loop" {
        return None;
    }
    let guard = sole(&for_loop.body, |stmt| match stmt {
        Stmt::IfCond(guard) => Some(guard),
        _ => None,
    })?;
    if !sets_a_constant_flag(guard, target.id) || !reads_only(&guard.expr, target.id) {
        return None;
    }
    let source = extents.source();
    let (target_start, _) = extents.of(&for_loop.target);
    let open = source.get(..target_start)?.rfind("{%")?;
    let between = &source[open + 2..target_start];
    let marker = match between.chars().next() {
        Some('-') => "-",
        Some('+') => "+",
        _ => "",
    };
    if between[marker.len()..].trim() != "for" {
        return None;
    }
    let condition = extents.of(&guard.expr);
    if !is_whole_condition(source, condition) {
        return None;
    }
    Some(Plan {
        tag_start: open,
        marker,
        target: target.id.to_string(),
        condition,
        iterable: extents.of(&for_loop.iter),
    })
}

/// Whether `(start, end)` is everything between `{% if` and `%}`, so that the macro's
/// copy of it is the whole condition.
fn is_whole_condition(source: &str, (start, end): (usize, usize)) -> bool {
    let Some(before) = source.get(..start) else {
        return false;
    };
    let Some(open) = before.rfind("{%") else {
        return false;
    };
    let opening = before[open + 2..].trim_start_matches(['-', '+']);
    let closing = source
        .get(end..)
        .and_then(|rest| rest.find("%}").map(|at| &rest[..at]));
    opening.trim() == "if" && closing.is_some_and(|text| matches!(text.trim(), "" | "-" | "+"))
}

/// Most loops of one template made flag scans.
const MAX_SCANS: usize = 64;

/// The edits of the planned scans: for each, the macro before the loop and the helper
/// around its iterable. A scan whose condition holds an edit that reaches outside it
/// (none of the rewrites makes one) is left as it is.
pub(crate) fn finish(plans: &[Plan], edits: &mut Vec<Edit>, source: &str, helpers: &Helpers) {
    // Each scan looks through every edit for its condition's: a machine-made template of
    // many thousands of scans would make the rewrite quadratic. Real templates have one
    // or two.
    for plan in plans.iter().take(MAX_SCANS) {
        let Some(condition) = condition_text(plan, edits, source) else {
            continue;
        };
        let site = plan.tag_start;
        let name = format!("{}{site}", helpers.scan_condition());
        let marker = plan.marker;
        edits.push(Edit {
            start: plan.tag_start,
            end: plan.tag_start,
            kind: EditKind::Replace(format!(
                "{{%{marker} macro {name}({}) %}}{{% if {condition} %}}1{{% endif %}}{{% endmacro %}}",
                plan.target
            )),
        });
        let (start, end) = plan.iterable;
        edits.push(Edit {
            start,
            end,
            kind: EditKind::Around(format!("{}({site}, {name}, (", helpers.scan()), "))".into()),
        });
    }
}

/// The condition's text with the edits inside it applied, on one line (the macro is
/// inserted on the loop's line, so the line numbers after it stay). `None` when an edit
/// crosses its ends, or it spans lines and has a string literal (which a newline could
/// be part of).
fn condition_text(plan: &Plan, edits: &[Edit], source: &str) -> Option<String> {
    let (start, end) = plan.condition;
    let mut inside = Vec::new();
    for edit in edits {
        let within = edit.start >= start && edit.end <= end;
        let apart = edit.end <= start || edit.start >= end;
        if within {
            inside.push(Edit {
                start: edit.start - start,
                end: edit.end - start,
                kind: edit.kind.clone(),
            });
        } else if !apart {
            return None;
        }
    }
    let (text, _) = super::edits::apply(source.get(start..end)?, inside);
    if text.contains(['\n', '\r']) {
        if text.contains(['\'', '"']) {
            return None;
        }
        return Some(text.replace(['\n', '\r'], " "));
    }
    Some(text)
}

/// `{% if P %}{% set NS.ATTR = constant %}{% endif %}`, no `else`, `NS` not the loop
/// variable.
fn sets_a_constant_flag(guard: &IfCond, target: &str) -> bool {
    if !writes_nothing(&guard.false_body) {
        return false;
    }
    sole(&guard.true_body, |stmt| match stmt {
        Stmt::Set(set) => match (&set.target, &set.expr) {
            (Expr::GetAttr(attr), Expr::Const(_)) => match &attr.expr {
                Expr::Var(namespace) => Some(namespace.id != target && namespace.id != "loop"),
                _ => Some(false),
            },
            _ => Some(false),
        },
        _ => None,
    })
    .unwrap_or(false)
}

/// Whether `expr` reads the loop variable `target` and nothing but it and constants,
/// and calls and slices nothing (see the module docs).
fn reads_only(expr: &Expr, target: &str) -> bool {
    let mut reads_target = false;
    let pure = super::subexpressions::calls_nothing_reading(expr, |name| {
        reads_target |= name == target;
        name == target
    });
    // A condition that reads no item is left to `guards`, which stops such a loop.
    pure && reads_target
}

/// The scan helper: `items` is what the loop iterates. For a list or a suffix of one,
/// the items at the first index where `condition` holds and the first where it raises
/// (see the module docs); anything else as it is.
fn scan(state: &mut State, site: i64, condition: Value, items: Value) -> Result<Value, Error> {
    scope::tick(Some(state))?;
    if super::undefined::noting() {
        return Ok(items);
    }
    let Some((list, start)) = super::slices::suffix_of(&items) else {
        return Ok(items);
    };
    let Ok(site) = usize::try_from(site) else {
        return Ok(items);
    };
    // One memo per loop, for the last list it scanned: a loop over a new list each
    // time keeps no more than the original did.
    let memos = &mut state.get_or_insert_extension_with(Memos::default).0;
    let mut memo = match memos.remove(&site) {
        Some(memo) if Arc::ptr_eq(&memo.list, &list) => memo,
        // The first scan of a list walks it as the original (a loop that scans each
        // list once gains nothing from a memo, and a macro call per item costs more
        // than the loop's own iteration); the memo is filled from the second on.
        _ => {
            memos.insert(site, Memo::pending(list));
            return Ok(items);
        }
    };
    if scope::traced() && !memo.disabled {
        // The messages note which loop reached them: every item, as the original did
        // (walking the items is cheap; evaluating the condition on them is not).
        super::loops::reach_all(state, items.clone())?;
    }
    let found = memo.extend_to(state, start, &condition)?;
    // Not plain data: this loop over this list iterates as the original from now on.
    memo.disabled |= found.is_none();
    state
        .get_or_insert_extension_with(Memos::default)
        .0
        .insert(site, memo);
    Ok(found.map_or(items, Value::from))
}

/// The render's memos, by loop (the offset of its tag).
#[derive(Default)]
struct Memos(HashMap<usize, Memo>);

/// No index (past the end).
const NONE: u32 = u32::MAX;

/// What one loop's condition gave on a list's items, from `low` to the end.
struct Memo {
    /// The list, kept alive so that no other list can take its address.
    list: Arc<Vec<Value>>,
    /// The lowest index evaluated (the list's length before any).
    low: usize,
    /// Per index: the first index at or after it where the condition holds.
    first_match: Vec<u32>,
    /// Per index: the first index at or after it where the condition raises.
    first_error: Vec<u32>,
    /// An item was not plain data: the memo answers nothing.
    disabled: bool,
}

impl Memo {
    /// A memo for `list` that has evaluated nothing and holds no indexes yet.
    fn pending(list: Arc<Vec<Value>>) -> Self {
        Memo {
            low: list.len(),
            first_match: Vec::new(),
            first_error: Vec::new(),
            disabled: list.len() >= NONE as usize,
            list,
        }
    }

    /// Allocates the indexes, charged to the byte budget first, if not yet done.
    fn allocate(&mut self, state: &State) -> Result<(), Error> {
        if self.first_match.is_empty() {
            let len = self.list.len() + 1;
            scope::reserve_items(Some(state), len, 2 * size_of::<u32>())?;
            self.first_match = vec![NONE; len];
            self.first_error = vec![NONE; len];
        }
        Ok(())
    }

    /// The items to iterate for a scan from `start`: the first match and the first
    /// raising item at or after it, in order. `None` when the memo cannot answer.
    fn extend_to(
        &mut self,
        state: &mut State,
        start: usize,
        condition: &Value,
    ) -> Result<Option<Vec<Value>>, Error> {
        if self.disabled {
            return Ok(None);
        }
        self.allocate(state)?;
        let start = start.min(self.list.len());
        while self.low > start {
            let index = self.low - 1;
            scope::tick(Some(&*state))?;
            let item = &self.list[index];
            if !is_plain_data(item) {
                return Ok(None);
            }
            let (matched, raised) = match condition.call(state, std::slice::from_ref(item)) {
                Ok(out) => (out.is_true(), false),
                Err(err) => {
                    // A stopped render (or one out of fuel) fails now; an error of the
                    // condition's own is raised by the loop's body.
                    scope::tick(Some(&*state))?;
                    if err.kind() == ErrorKind::OutOfFuel {
                        return Err(err);
                    }
                    (false, true)
                }
            };
            let here = u32::try_from(index).unwrap_or(NONE);
            self.first_match[index] = if matched {
                here
            } else {
                self.first_match[index + 1]
            };
            self.first_error[index] = if raised {
                here
            } else {
                self.first_error[index + 1]
            };
            self.low = index;
        }
        let mut found: Vec<u32> = [self.first_match[start], self.first_error[start]]
            .into_iter()
            .filter(|&index| index != NONE)
            .collect();
        found.sort_unstable();
        Ok(Some(
            found
                .into_iter()
                .filter_map(|index| self.list.get(index as usize).cloned())
                .collect(),
        ))
    }
}

/// Whether `value` can never change: strings, numbers, booleans, `none` and undefined,
/// and lists and input dicts of those. Walked with a list of pending values, not
/// recursion (nesting may be deep).
fn is_plain_data(value: &Value) -> bool {
    let mut pending = vec![value.clone()];
    while let Some(value) = pending.pop() {
        if value.as_object().is_none() || super::none::is_python_none(&value) {
            continue;
        }
        if let Some(list) = value.downcast_object_ref::<Vec<Value>>() {
            pending.extend(list.iter().cloned());
        } else if let Some(dict) = value.downcast_object_ref::<super::data::PyDict>() {
            pending.extend(
                dict.entries()
                    .iter()
                    .flat_map(|(k, v)| [k.clone(), v.clone()]),
            );
        } else {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    /// The rewritten text of `source` (every rewrite).
    fn rewritten(source: &str) -> String {
        crate::rewritten_source(source)
    }

    #[test]
    fn a_flag_scan_gets_a_condition_macro_and_the_scan_helper() {
        let source = "{%- for m in ms[loop.index:] %}\n    {%- if m.role == 'a' and 'x' not in m %}\n        {%- set ns.found = true %}\n    {%- endif %}\n{%- endfor %}";
        let text = rewritten(source);
        assert_eq!(
            text,
            "{%- macro __c_scan_condition0(m) %}{% if m.role == 'a' and ((('x' ))|__c_contains(( m), true)) %}1{% endif %}{% endmacro %}\
             {%- for m in (((__c_scan(0, __c_scan_condition0, ((((ms))|__c_slice_of((loop.index), none, none, 1))))))|__c_loop_iterable) %}\n    \
             {%- if m.role == 'a' and ((('x' ))|__c_contains(( m), true)) %}\n        {%- set ns.found = true %}\n    {%- endif %}\n{%- endfor %}"
        );
        assert_eq!(text.lines().count(), source.lines().count());
        // A plain list, `+` whitespace control, a condition over two lines.
        let plain = "x{%+ for m in ms %}{% if m.a is defined or\nm.b %}{% set ns.f = 1 %}{% endif %}{% endfor %}";
        assert!(rewritten(plain).starts_with(
            "x{%+ macro __c_scan_condition1(m) %}{% if m.a is defined or m.b %}1{% endif %}{% endmacro %}{%+ for m in (((__c_scan(1, __c_scan_condition1, (ms))))|__c_loop_iterable) %}"
        ));
    }

    #[test]
    fn the_macro_copies_the_whole_condition() {
        let quoted =
            "{% for m in ms %}{% if m.c == '%}' or (m.d) %}{% set ns.f = true %}{% endif %}{% endfor %}";
        assert!(
            rewritten(quoted).contains("{% if m.c == '%}' or (m.d) %}1{% endif %}{% endmacro %}")
        );
    }

    #[test]
    fn at_most_64_loops_become_flag_scans() {
        let source =
            "{% for m in ms %}{% if m.a %}{% set ns.f = true %}{% endif %}{% endfor %}".repeat(100);
        assert_eq!(rewritten(&source).matches("_scan(").count(), 64);
    }

    #[test]
    fn loops_that_do_more_than_set_a_flag_are_left_alone() {
        for source in [
            // The condition reads another name, `loop`, calls, filters or slices.
            "{% for m in ms %}{% if m.role == role %}{% set ns.f = true %}{% endif %}{% endfor %}",
            "{% for m in ms %}{% if loop.first %}{% set ns.f = true %}{% endif %}{% endfor %}",
            "{% for m in ms %}{% if m.content.strip() %}{% set ns.f = true %}{% endif %}{% endfor %}",
            "{% for m in ms %}{% if m.content | length %}{% set ns.f = true %}{% endif %}{% endfor %}",
            "{% for m in ms %}{% if m.content[1:] %}{% set ns.f = true %}{% endif %}{% endfor %}",
            "{% for m in ms %}{% if m is sameas(*xs) %}{% set ns.f = true %}{% endif %}{% endfor %}",
            // The assigned value is not a constant, or the target is not a namespace's.
            "{% for m in ms %}{% if m.a %}{% set ns.f = m.a %}{% endif %}{% endfor %}",
            "{% for m in ms %}{% if m.a %}{% set f = true %}{% endif %}{% endfor %}",
            "{% for m in ms %}{% if m.a %}{% set m.f = true %}{% endif %}{% endfor %}",
            // More in the body, an `else`, output.
            "{% for m in ms %}{% if m.a %}{% set ns.f = true %}{% set ns.g = 1 %}{% endif %}{% endfor %}",
            "{% for m in ms %}{% if m.a %}{% set ns.f = true %}{% else %}{% set ns.g = 1 %}{% endif %}{% endfor %}",
            "{% for m in ms %}{% if m.a %}{% set ns.f = true %}{% endif %} {% endfor %}",
            "{% for m in ms %}{% if m.a %}{% set ns.f = true %}{% endif %}{% else %}x{% endfor %}",
            // Unpacking, a loop filter, a recursive loop.
            "{% for k, v in ms %}{% if v %}{% set ns.f = true %}{% endif %}{% endfor %}",
            "{% for m in ms if m %}{% if m.a %}{% set ns.f = true %}{% endif %}{% endfor %}",
            "{% for m in ms recursive %}{% if m.a %}{% set ns.f = true %}{% endif %}{% endfor %}",
            // A condition that reads no item (`guards` stops that loop instead).
            "{% for m in ms %}{% if true %}{% set ns.f = true %}{% endif %}{% endfor %}",
        ] {
            assert!(!rewritten(source).contains("__c_scan"), "{source}");
        }
    }
}

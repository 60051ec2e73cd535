//! The names of chatplate's hidden helpers, which the source rewrites call
//! (`{% generation %}` blocks, Markup `+`, `'...' % x`, loop iterables, namespace
//! assignments).
//!
//! A template must see only what transformers' environment has, so it must not be
//! able to call a helper by name. The helpers are registered per template under a
//! prefix that does not occur anywhere in that template's source: the rewrites can
//! name them, the template cannot.

/// How a rewrite opens a call of a helper in filter form: `(((first))|helper(rest))`.
///
/// The helpers are filters, not functions, for speed: MiniJinja looks a function up by
/// name at every call, walking every frame of the render's scope and then the
/// environment's globals (a B-tree of names that share this prefix), about 600
/// instructions, where a filter is looked up once per render and instruction. A
/// template of a thousand messages calls helpers thousands of times. The filter form
/// evaluates the same arguments in the same order (the first, then the rest, left to
/// right), and the outer parentheses keep it one operand wherever the call stood (a
/// unary `-` before `x|f` would otherwise apply before the filter).
pub(crate) const OPEN: &str = "(((";

/// What follows a filter-form call's first argument: `))|helper(`.
pub(crate) fn then_call(helper: &str) -> String {
    let mut text = String::with_capacity(helper.len() + 4);
    text.push_str("))|");
    text.push_str(helper);
    text.push('(');
    text
}

/// The whole text of a filter-form call: `(((first))|helper(rest))`, for a rewrite that
/// writes the call at once rather than as edits around its operands.
pub(crate) fn filter_call(first: &str, helper: &str, rest: &str) -> String {
    [OPEN, first, &then_call(helper), rest, "))"].concat()
}

/// The prefix of the helper names of a template that does not contain it.
const DEFAULT_PREFIX: &str = "__c_";

/// The helper names for one template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Helpers {
    prefix: String,
}

impl Default for Helpers {
    /// The names of a template that does not contain [`DEFAULT_PREFIX`].
    fn default() -> Self {
        Helpers {
            prefix: DEFAULT_PREFIX.to_string(),
        }
    }
}

impl Helpers {
    /// Names that `source` cannot mention: `__c_` unless the source contains it, else
    /// `__c1_`, `__c2_`, ... (short: MiniJinja reads a filter's whole name at every
    /// call, looking for spaces to remove).
    pub(crate) fn for_source(source: &str) -> Self {
        let mut prefix = DEFAULT_PREFIX.to_string();
        let mut attempt = 0u64;
        while source.contains(&prefix) {
            attempt += 1;
            prefix = format!("__c{attempt}_");
        }
        Helpers { prefix }
    }

    fn name(&self, helper: &str) -> String {
        // Called for every edit of the rewrite: plain concatenation is several times
        // cheaper than `format!`.
        let mut name = String::with_capacity(self.prefix.len() + helper.len());
        name.push_str(&self.prefix);
        name.push_str(helper);
        name
    }

    /// Body of a `{% generation %}` block.
    pub(crate) fn generation(&self) -> String {
        self.name("generation")
    }

    /// `left + right` with markupsafe semantics.
    pub(crate) fn markup_add(&self) -> String {
        self.name("markup_add")
    }

    /// `a ~ b ~ c` in one allocation (see [`super::concat`]).
    pub(crate) fn concat(&self) -> String {
        self.name("concat")
    }

    /// `a == b` and `a != b` on lists, stoppable (see [`super::equality`]).
    pub(crate) fn equal(&self) -> String {
        self.name("equal")
    }

    /// The check before a `*` that may repeat a string (see [`super::repeat`]).
    pub(crate) fn repeat_check(&self) -> String {
        self.name("repeat_check")
    }

    /// The right operand of a `*` that [`Helpers::repeat_check`] kept.
    pub(crate) fn stashed(&self) -> String {
        self.name("stashed")
    }

    /// The value of `ns.attr` where an append to it begins (see [`super::appends`]).
    pub(crate) fn append_mark(&self) -> String {
        self.name("append_mark")
    }

    /// `ns.attr ~ pieces` grown in place (see [`super::appends`]).
    pub(crate) fn append(&self) -> String {
        self.name("append")
    }

    /// Every other read of an appended namespace's attribute (see [`super::appends`]).
    pub(crate) fn append_read(&self) -> String {
        self.name("append_read")
    }

    /// `'format' % args`.
    pub(crate) fn percent_format(&self) -> String {
        self.name("percent_format")
    }

    /// Every `for` loop's iterable.
    pub(crate) fn loop_iterable(&self) -> String {
        self.name("loop_iterable")
    }

    /// The value of every `{% set ns.attr = value %}`.
    pub(crate) fn namespace_value(&self) -> String {
        self.name("namespace_value")
    }

    /// `x.name` where `name` is a dict method, not called (see [`super::boundmethods`]).
    pub(crate) fn dict_attr(&self) -> String {
        self.name("dict_attr")
    }

    /// `x['name']` where `name` is a dict method (see [`super::boundmethods`]).
    pub(crate) fn dict_item(&self) -> String {
        self.name("dict_item")
    }

    /// `base[start:stop:step]` (see [`super::slices`]).
    pub(crate) fn slice_of(&self) -> String {
        self.name("slice_of")
    }

    /// `needle in container` (see [`super::membership`]).
    pub(crate) fn contains(&self) -> String {
        self.name("contains")
    }

    /// The variable a macro body's capture statement assigns (see
    /// [`super::closures`]).
    pub(crate) fn captured_names(&self) -> String {
        self.name("captured")
    }

    /// A flag scan's memoised walk of its list (see [`super::scans`]).
    pub(crate) fn scan(&self) -> String {
        self.name("scan")
    }

    /// The prefix of a flag scan's condition macro, which its loop's offset completes
    /// (see [`super::scans`]).
    pub(crate) fn scan_condition(&self) -> String {
        self.name("scan_condition")
    }

    /// The value of every other `{% set ... = value %}`.
    pub(crate) fn set_value(&self) -> String {
        self.name("set_value")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_avoid_the_source() {
        assert_eq!(Helpers::for_source("").loop_iterable(), "__c_loop_iterable");
        let crafted = "{{ x|__c_loop_iterable }}{{ __c1_x }}";
        assert_eq!(
            Helpers::for_source(crafted).loop_iterable(),
            "__c2_loop_iterable"
        );
    }
}

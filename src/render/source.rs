//! Template source preparation: what Jinja2's lexer and transformers' extensions do
//! before MiniJinja sees the text.
//!
//! * Jinja2 normalizes every `\r\n` and lone `\r` to `\n`.
//! * Jinja2 keeps the newline after `{% raw %}` under trim_blocks; MiniJinja needs the
//!   tag written `{% raw +%}` for that.
//! * String literals are decoded with Python's escapes (see [`super::literals`]).
//! * transformers registers a `{% generation %}...{% endgeneration %}` tag that renders
//!   its body as a call block; MiniJinja has no custom tags, so the tag is rewritten to
//!   an equivalent `{% call %}` of a helper function. Whitespace markers and line
//!   numbers are preserved, so error positions still point at the user's source.

use super::helpers::Helpers;

/// Returns the source MiniJinja should compile; error positions refer to this text.
pub fn prepare(source: &str) -> String {
    prepare_with_helpers(source).0
}

/// [`prepare`], plus the helper names chosen for this source (see [`Helpers`]).
pub fn prepare_with_helpers(source: &str) -> (String, Helpers) {
    let normalized = source.replace("\r\n", "\n").replace('\r', "\n");
    let decoded = super::literals::decode_python_escapes(&normalized);
    let helpers = Helpers::for_source(&decoded);
    (rewrite_generation_tags(&decoded, &helpers), helpers)
}

fn rewrite_generation_tags(source: &str, helpers: &Helpers) -> String {
    if !source.contains("generation") && !source.contains("raw") {
        return source.to_string();
    }
    let mut out = String::with_capacity(source.len() + 64);
    let mut rest = source;
    while let Some(start) = rest.find("{%") {
        out.push_str(&rest[..start]);
        let tag = &rest[start..];
        // The closing `%}` comes after the opening `{%` (in `{%}` they overlap).
        let Some(end) = tag[2..].find("%}").map(|at| at + 2) else {
            out.push_str(tag);
            return out;
        };
        let (whole, after) = tag.split_at(end + 2);
        out.push_str(&rewrite_tag(whole, helpers));
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Rewrites one `{%...%}` tag if it is `generation` or `endgeneration`.
fn rewrite_tag(tag: &str, helpers: &Helpers) -> String {
    let inner = &tag[2..tag.len() - 2];
    let open = marker(inner.chars().next());
    let close = marker(inner.chars().last());
    let body = inner
        .trim_start_matches(['-', '+'])
        .trim_end_matches(['-', '+'])
        .trim();
    let (replacement, close) = match body {
        "generation" => (format!("call {}()", helpers.generation()), close),
        "endgeneration" => ("endcall".to_string(), close),
        // Jinja2 keeps the newline after `{% raw %}` even with trim_blocks; MiniJinja
        // trims it unless the tag says `+%}`.
        "raw" if close.is_empty() => ("raw".to_string(), "+"),
        _ => return tag.to_string(),
    };
    format!("{{%{open} {replacement} {close}%}}")
}

fn marker(ch: Option<char>) -> &'static str {
    match ch {
        Some('-') => "-",
        Some('+') => "+",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_generation_tags_keeping_markers() {
        let helper = Helpers::for_source("").generation();
        assert_eq!(
            prepare("{%- generation %}x{% endgeneration -%}\r\n"),
            format!("{{%- call {helper}() %}}x{{% endcall -%}}\n")
        );
        assert_eq!(
            prepare("{% if add_generation_prompt %}"),
            "{% if add_generation_prompt %}"
        );
    }

    #[test]
    fn a_tag_whose_ends_overlap_is_left_for_the_parser() {
        // `{%}`: the `%` is shared by the opening and closing marker. Jinja2 rejects
        // it; here it must only not panic, and reach the parser unchanged.
        assert_eq!(prepare("{%}{% raw %}"), "{%}{% raw %}");
        assert_eq!(prepare("x {%} generation"), "x {%} generation");
    }
}

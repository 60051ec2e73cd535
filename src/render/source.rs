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

use super::globals::GENERATION_HELPER;

/// Returns the source MiniJinja should compile; error positions refer to this text.
pub fn prepare(source: &str) -> String {
    let normalized = source.replace("\r\n", "\n").replace('\r', "\n");
    let decoded = super::literals::decode_python_escapes(&normalized);
    rewrite_generation_tags(&decoded)
}

fn rewrite_generation_tags(source: &str) -> String {
    if !source.contains("generation") && !source.contains("raw") {
        return source.to_string();
    }
    let mut out = String::with_capacity(source.len() + 64);
    let mut rest = source;
    while let Some(start) = rest.find("{%") {
        out.push_str(&rest[..start]);
        let tag = &rest[start..];
        let Some(end) = tag.find("%}") else {
            out.push_str(tag);
            return out;
        };
        let (whole, after) = tag.split_at(end + 2);
        out.push_str(&rewrite_tag(whole));
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Rewrites one `{%...%}` tag if it is `generation` or `endgeneration`.
fn rewrite_tag(tag: &str) -> String {
    let inner = &tag[2..tag.len() - 2];
    let open = marker(inner.chars().next());
    let close = marker(inner.chars().last());
    let body = inner
        .trim_start_matches(['-', '+'])
        .trim_end_matches(['-', '+'])
        .trim();
    let (replacement, close) = match body {
        "generation" => (format!("call {GENERATION_HELPER}()"), close),
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
        assert_eq!(
            prepare("{%- generation %}x{% endgeneration -%}\r\n"),
            format!("{{%- call {GENERATION_HELPER}() %}}x{{% endcall -%}}\n")
        );
        assert_eq!(
            prepare("{% if add_generation_prompt %}"),
            "{% if add_generation_prompt %}"
        );
    }
}

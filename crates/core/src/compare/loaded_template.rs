//! What the template a llama-server reports (`GET /props`) says about the session's: the
//! same, another template altogether (the server was started without the session's
//! `--chat-template-file`), or the session's as llama.cpp changed it while loading it.
//!
//! llama.cpp patches some templates on load that its engine cannot run as written: it
//! replaces an `{% if ... %}` condition by `false` (`common_chat_templates_init`). So a
//! server started with the session's template may report one that differs from it, and
//! advising `--chat-template-file` there is wrong. The rule is general: the two templates
//! are the same but for the conditions of some `if` tags, and each of those is `false` in
//! the server's.

use sha2::{Digest, Sha256};

use chatplate_render::visible;

/// A note when the server's loaded template is not the session's. One trailing newline
/// does not count: llama-server reports its template without it, and Jinja2 drops it too
/// (`keep_trailing_newline` is off), so it changes no render.
pub(super) fn note(session: &str, loaded: &str) -> Option<String> {
    let significant = |text: &'_ str| text.strip_suffix('\n').unwrap_or(text).to_string();
    let (session, loaded) = (significant(session), significant(loaded));
    if session == loaded {
        return None;
    }
    let hashes = format!(
        "sha256 {} loaded, {} in the session",
        short_sha256(&loaded),
        short_sha256(&session)
    );
    Some(match conditions_turned_off(&session, &loaded) {
        Some(turned_off) => format!(
            "llama.cpp changed the session's template when it loaded it ({hashes}): {} \
             `if` condition{} made `false`, the first {}, as it does to templates its \
             engine cannot run as written; it renders that changed template",
            turned_off.len(),
            if turned_off.len() == 1 { "" } else { "s" },
            visible::quoted(&turned_off[0]),
        ),
        None => format!(
            "the server's template differs from the session's ({hashes}); start it with \
             --chat-template-file FILE"
        ),
    })
}

/// The session's `if` tags whose condition is `false` in `loaded`, when that is the only
/// difference between the two templates.
fn conditions_turned_off(session: &str, loaded: &str) -> Option<Vec<String>> {
    let (ours, theirs) = (Tags::of(session), Tags::of(loaded));
    if ours.skeleton != theirs.skeleton || ours.conditions.len() != theirs.conditions.len() {
        return None;
    }
    let mut turned_off = Vec::new();
    for (mine, server) in ours.conditions.iter().zip(&theirs.conditions) {
        if mine.condition == server.condition {
            continue;
        }
        if server.condition != "false" {
            return None;
        }
        turned_off.push(mine.tag.clone());
    }
    (!turned_off.is_empty()).then_some(turned_off)
}

/// A template's `if` and `elif` tags, and its text with their conditions left out.
struct Tags {
    /// The text, each condition replaced by nothing.
    skeleton: String,
    /// The conditions, in order.
    conditions: Vec<Condition>,
}

/// One `if` or `elif` tag.
struct Condition {
    /// The whole tag as written.
    tag: String,
    /// Its condition, trimmed.
    condition: String,
}

impl Tags {
    fn of(template: &str) -> Tags {
        let mut tags = Tags {
            skeleton: String::with_capacity(template.len()),
            conditions: Vec::new(),
        };
        let mut rest = template;
        while let Some(open) = rest.find("{%") {
            let Some(close) = rest[open..].find("%}").map(|at| open + at + 2) else {
                break;
            };
            let tag = &rest[open..close];
            let body = tag[2..tag.len() - 2].trim_matches(['-', '+']).trim();
            let keyword = ["if", "elif"].into_iter().find(|word| {
                body.strip_prefix(word)
                    .is_some_and(|c| c.starts_with(char::is_whitespace))
            });
            tags.skeleton.push_str(&rest[..open]);
            match keyword {
                Some(word) => {
                    tags.skeleton.push_str(&tag[..2]);
                    tags.skeleton.push_str(word);
                    tags.conditions.push(Condition {
                        tag: tag.to_string(),
                        condition: body[word.len()..].trim().to_string(),
                    });
                }
                None => tags.skeleton.push_str(tag),
            }
            rest = &rest[close..];
        }
        tags.skeleton.push_str(rest);
        tags
    }
}

fn short_sha256(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    digest[..6].iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_template_is_named_by_hash_with_the_flag_to_start_the_server_with() {
        assert_eq!(note("a", "a"), None);
        assert_eq!(note("a\n", "a"), None);
        assert!(note("a\n\n", "a").is_some());
        let note = note("a", "b").unwrap();
        assert!(note.contains("--chat-template-file"), "{note}");
        assert!(note.contains(&short_sha256("a")) && note.contains(&short_sha256("b")));
    }

    #[test]
    fn conditions_made_false_are_llama_cpps_own_change() {
        let session = "{%- for m in messages %}{%- if m.content is none or m.x %}N{%- elif m.y %}Y{% endif %}{% endfor %}";
        let loaded =
            "{%- for m in messages %}{%- if false %}N{%- elif m.y %}Y{% endif %}{% endfor %}";
        let said = note(session, loaded).unwrap();
        assert!(!said.contains("--chat-template-file"), "{said}");
        assert!(
            said.contains(
                "1 `if` condition made `false`, the first \"{%- if m.content is none or m.x %}\""
            ),
            "{said}"
        );
        // Another change beside it, or a condition changed to something else, is another
        // template.
        let edited = loaded.replace("Y{%", "Z{%");
        assert!(note(session, &edited)
            .unwrap()
            .contains("--chat-template-file"));
        let other = session.replace("m.x", "m.z");
        assert!(note(session, &other)
            .unwrap()
            .contains("--chat-template-file"));
    }
}

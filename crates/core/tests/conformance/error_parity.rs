//! Error messages that say what Jinja2 says: every error case of the conformance corpus
//! holds the exception class and `str(exception)` transformers raised
//! (`expected/<template>/<scenario>.err`). chatplate's error for the same case must carry
//! the same class and, where Jinja2's wording is deterministic, the same text.
//!
//! The number of exact matches is pinned so it can only go up.

use chatplate_core::catalog::{self, TemplateAccess};
use chatplate_core::corpus;
use chatplate_core::session::Session;
use chatplate_render::{CompiledTemplate, Limits};

use crate::common;
/// Error cases in the dev corpus whose message (and class) equal Python's exactly.
/// Measured: 17 of 87 before the translation layer, 87 of 87 after.
const PINNED_EXACT: usize = 87;

#[test]
fn error_messages_match_jinja2() {
    let Some(dir) = common::corpus_dir("error_parity") else {
        return;
    };
    let out = tempfile::tempdir().expect("temp dir");
    let fixtures = corpus::import(&dir, out.path()).expect("corpus converts to fixtures");
    let (mut total, mut exact, mut differences) = (0, 0, Vec::new());
    for path in fixtures {
        let relative = path.strip_prefix(out.path()).expect("inside out dir");
        let Ok(golden) =
            std::fs::read_to_string(dir.join("expected").join(relative.with_extension("err")))
        else {
            continue;
        };
        total += 1;
        let (class, message) = golden.split_once('\n').expect("class line, then message");
        let class = class.rsplit('.').next().unwrap_or(class);
        let session = Session::load(&path).expect("fixture loads");
        let template = catalog::resolve(
            &session.template,
            path.parent().expect("has parent"),
            &TemplateAccess::Anywhere,
        )
        .expect("template resolves");
        let conversation = session.conversation().expect("conversation");
        let result = CompiledTemplate::compile(&template.source, Limits::default())
            .and_then(|compiled| compiled.render(&conversation));
        match result {
            Err(err) if err.message == message && err.exception == Some(class) => exact += 1,
            Err(err) => differences.push(format!(
                "{}\n  python:    {class}: {message}\n  chatplate: {}",
                relative.display(),
                err.traceback_line()
            )),
            Ok(_) => differences.push(format!("{}: rendered, Python raised", relative.display())),
        }
    }
    eprintln!("error parity: {exact} of {total} messages equal Python's");
    for difference in &differences {
        eprintln!("{difference}");
    }
    assert_eq!(total, 87, "the dev corpus has 87 error cases");
    assert!(
        exact >= PINNED_EXACT,
        "error-message parity fell to {exact} (pinned: {PINNED_EXACT})"
    );
}

/// Error positions and excerpts show what the user wrote, never the engine's rewrites of
/// it (`{% generation %}` becomes a call block internally, string literals are decoded,
/// `for` iterables are wrapped).
#[test]
fn excerpts_show_the_users_own_source() {
    use chatplate_render::{Conversation, SourcePosition};
    let source = "{%- for m in messages %}\r\n{% generation %}{{ m.content + 1 }}{% endgeneration %}\r\n{% endfor %}";
    let conversation =
        Conversation::new(vec![serde_json::json!({"role": "user", "content": "hi"})]);
    let err = CompiledTemplate::compile(source, Limits::default())
        .expect("compiles")
        .render(&conversation)
        .expect_err("str + int fails");
    let excerpt = err.excerpt(source, 0).expect("has a position");
    assert!(
        excerpt.contains("{% generation %}{{ m.content + 1 }}{% endgeneration %}"),
        "{excerpt}"
    );
    assert!(!excerpt.contains("__chatplate"), "{excerpt}");
    assert_eq!(err.position.map(|p| p.line), Some(2));

    // A syntax error after a rewritten tag and a decoded literal on the same line.
    let source = "{% generation %}{{ 'a\\\nb' }}{{ x y }}{% endgeneration %}";
    let err = CompiledTemplate::compile(source, Limits::default()).expect_err("syntax error");
    assert_eq!(
        err.position,
        Some(SourcePosition {
            line: 2,
            column: 11
        })
    );
    let excerpt = err.excerpt(source, 0).expect("has a position");
    assert_eq!(
        excerpt,
        ">2 | b' }}{{ x y }}{% endgeneration %}\n               ^\n"
    );
}

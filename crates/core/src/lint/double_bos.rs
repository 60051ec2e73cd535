//! `double-bos`: the template prints the BOS token at the start of the prompt while the
//! tokenizer config (`add_bos_token`) or the GGUF (`tokenizer.ggml.add_bos_token`) says
//! the tokenizer adds one itself, so tokenizing the prompt with special tokens gives the
//! model two.

use super::lab::Lab;
use super::{Finding, Rule};
use crate::catalog::{Origin, TemplateSource};
use crate::inspect::{text_excerpt, Cancelled, Probe, USER_NEEDLE};

/// Who says the tokenizer adds BOS itself, from what was read with `template`: the
/// GGUF's `tokenizer.ggml.add_bos_token` or the model folder's `add_bos_token`.
pub fn adds_bos(template: &TemplateSource) -> Option<String> {
    if template.metadata.add_bos_token != Some(true) {
        return None;
    }
    match &template.origin {
        Origin::Gguf { .. } => Some("the GGUF sets tokenizer.ggml.add_bos_token".into()),
        Origin::Model(_) => Some(format!(
            "{} sets add_bos_token: true",
            crate::catalog::model::TOKENIZER_CONFIG
        )),
        _ => None,
    }
}

/// The double-BOS warning for `prompt`, rendered with `bos` as `bos_token`, when
/// `template`'s tokenizer adds BOS itself and the prompt starts with it: the rule
/// `lint` applies, for `render` and the app to say of the prompt they show.
pub fn warning(template: &TemplateSource, bos: Option<&str>, prompt: &str) -> Option<String> {
    let bos = bos.filter(|bos| !bos.is_empty())?;
    message(prompt, bos, &adds_bos(template)?)
}

/// What the rule says of `prompt`, when it starts with `bos` and `said` says the
/// tokenizer adds one.
fn message(prompt: &str, bos: &str, said: &str) -> Option<String> {
    if !prompt.starts_with(bos) {
        return None;
    }
    let shown = serde_json::to_string(bos).unwrap_or_default();
    Some(format!(
        "the prompt starts with the BOS token {shown} and {said}: tokenizing the prompt \
         with special tokens (tokenizer(prompt), llama.cpp) gives the model two"
    ))
}

/// The finding, when both print the BOS token.
pub(crate) fn check(lab: &Lab) -> Result<Vec<Finding>, Cancelled> {
    let (Some(said), Some(bos)) = (&lab.surroundings.adds_bos, lab.bos()) else {
        return Ok(Vec::new());
    };
    let probe = Probe::of(vec![lab.message("user", USER_NEEDLE)]).with_generation_prompt();
    let Ok(prompt) = lab.render(&probe)? else {
        return Ok(Vec::new());
    };
    let Some(text) = message(&prompt, bos, said) else {
        return Ok(Vec::new());
    };
    let finding = Finding::new(Rule::DoubleBos, text)
        .at(lab
            .scan
            .first_ident("bos_token")
            .or_else(|| lab.scan.literal(bos)))
        .on(probe.describe())
        .showing(format!("prompt: {}", text_excerpt(&prompt, 0, 60)));
    Ok(vec![finding])
}

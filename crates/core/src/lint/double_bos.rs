//! `double-bos`: the template prints the BOS token at the start of the prompt while the
//! tokenizer config (`add_bos_token`) or the GGUF (`tokenizer.ggml.add_bos_token`) says
//! the tokenizer adds one itself, so tokenizing the prompt with special tokens gives the
//! model two.

use super::lab::Lab;
use super::{Finding, Rule};
use crate::inspect::{text_excerpt, Cancelled, Probe, USER_NEEDLE};

/// The finding, when both print the BOS token.
pub(crate) fn check(lab: &Lab) -> Result<Vec<Finding>, Cancelled> {
    let (Some(said), Some(bos)) = (&lab.surroundings.adds_bos, lab.bos()) else {
        return Ok(Vec::new());
    };
    let probe = Probe::of(vec![lab.message("user", USER_NEEDLE)]).with_generation_prompt();
    let Ok(prompt) = lab.render(&probe)? else {
        return Ok(Vec::new());
    };
    if !prompt.starts_with(bos) {
        return Ok(Vec::new());
    }
    let shown = serde_json::to_string(bos).unwrap_or_default();
    let finding = Finding::new(
        Rule::DoubleBos,
        format!(
            "the prompt starts with the BOS token {shown} and {said}: tokenizing the prompt \
             with special tokens (tokenizer(prompt), llama.cpp) gives the model two"
        ),
    )
    .at(lab
        .scan
        .first_ident("bos_token")
        .or_else(|| lab.scan.literal(bos)))
    .on(probe.describe())
    .showing(format!("prompt: {}", text_excerpt(&prompt, 0, 60)));
    Ok(vec![finding])
}

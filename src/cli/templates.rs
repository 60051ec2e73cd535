//! `chatplate templates`: the bundled templates, the templates one source offers, or the
//! cached Hugging Face models that have a chat template.

use anyhow::Result;
use clap::Args;

use super::output;
use super::session_input::open_template;
use chatplate_core::catalog::{self, hf_cache, TemplateSet};

#[derive(Debug, Args)]
pub(super) struct TemplatesArgs {
    /// A source to list: a model folder, a .gguf, a model id, a folder of templates
    /// (`-`: a template on standard input).
    source: Option<String>,
    /// List the models in the local Hugging Face cache that have a chat template.
    #[arg(long, conflicts_with = "source")]
    cached: bool,
}

/// `chatplate templates`: one template per line (`name  origin`). Names come from files
/// (GGUF keys, Hub file names, cache folders), so they are printed escaped.
pub(super) fn run(args: TemplatesArgs) -> Result<i32> {
    let mut text = String::new();
    if args.cached {
        let root = hf_cache::cache_root();
        let models = catalog::cached_models(&root);
        if models.is_empty() {
            output::note(&format!(
                "chatplate: no cached model with a chat template in {}",
                root.display()
            ));
        }
        models.iter().for_each(|set| list_set(&mut text, set));
    } else {
        match &args.source {
            None => catalog::bundled()
                .iter()
                .for_each(|t| text.push_str(&format!("{}\n", t.name))),
            Some(source) => list_set(&mut text, &open_template(source)?),
        }
    }
    output::print_visible(&text)?;
    Ok(0)
}

/// Each template with its origin, then its special tokens and notes (once).
fn list_set(out: &mut String, set: &TemplateSet) {
    for template in &set.entries {
        out.push_str(&format!(
            "{}  [{}]\n",
            template.name,
            template.origin_label()
        ));
    }
    let Some(first) = set.entries.first() else {
        return;
    };
    let tokens: Vec<String> = first
        .token_variables()
        .iter()
        .map(|(key, value)| format!("{key}={value}"))
        .collect();
    if !tokens.is_empty() {
        out.push_str(&format!("  tokens: {}\n", tokens.join(" ")));
    }
    if let Some(add_bos) = first.metadata.add_bos_token {
        out.push_str(&format!("  add_bos_token: {add_bos}\n"));
    }
    for note in &first.metadata.notes {
        out.push_str(&format!("  note: {note}\n"));
    }
}

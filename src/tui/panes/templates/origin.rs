//! Where each template in the picker came from: the picker's sections (bundled, files,
//! models, the Hugging Face cache, ...), the origin shown beside names that occur more
//! than once, and the origin line above the source.

use chatplate_core::catalog::{ModelPlace, Origin, TemplateSource};

/// The picker section a template belongs to.
pub fn section(template: &TemplateSource) -> &'static str {
    match &template.origin {
        Origin::Bundled => "Bundled",
        Origin::File(_) => "Files",
        Origin::Model(model) => match model.place {
            ModelPlace::Folder(_) => "Model folders",
            ModelPlace::Cache(_) => "Hugging Face cache",
            ModelPlace::Hub(_) => "Hub",
        },
        Origin::Gguf { .. } => "GGUF",
        Origin::Request(_) => "Request bodies",
        Origin::Inline => "Inline",
    }
}

/// The list label: the name, plus where it came from when another entry has the same
/// name (two models' `default`, one file loaded from two folders).
pub fn label(catalog: &[TemplateSource], index: usize) -> String {
    let template = &catalog[index];
    let twins = catalog.iter().filter(|t| t.name == template.name).count();
    if twins > 1 {
        format!("{} · {}", template.name, short_origin(template))
    } else {
        template.name.clone()
    }
}

/// A compact origin for list rows: the model and revision, or the file.
fn short_origin(template: &TemplateSource) -> String {
    match &template.origin {
        Origin::Model(model) => match &model.place {
            ModelPlace::Folder(dir) => dir.display().to_string(),
            ModelPlace::Cache(s) | ModelPlace::Hub(s) => format!(
                "{}@{} {}",
                s.id,
                s.revision,
                chatplate_core::catalog::short(&s.commit)
            ),
        },
        _ => template.origin_label(),
    }
}

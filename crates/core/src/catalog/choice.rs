//! Choosing one template among a model's several, exactly as transformers'
//! `get_chat_template` and llama.cpp's `common_chat_templates` do: an explicit name always
//! wins; otherwise `tool_use` when the conversation has tools (even an empty list) and the
//! model has one; otherwise `default`.

use super::{CatalogError, Origin, TemplateSource};

/// Every template one source offers, and the name the user pinned, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateSet {
    /// What the set is (a model name, a folder, a file), for messages.
    pub(crate) label: String,
    /// The templates, in the source's order.
    pub entries: Vec<TemplateSource>,
    /// The entry asked for by name (`--template-name`, `#NAME`, a fixture's `name`).
    pub pinned: Option<String>,
}

impl TemplateSet {
    /// A set of one.
    pub fn single(template: TemplateSource) -> Self {
        TemplateSet {
            label: template.name.clone(),
            entries: vec![template],
            pinned: None,
        }
    }

    /// The same set with `name` asked for (`None` leaves the current choice).
    pub fn pin(mut self, name: Option<&str>) -> Self {
        if let Some(name) = name {
            self.pinned = Some(name.to_string());
        }
        self
    }

    /// The names of the entries (`default`, `tool_use`, ...), empty for a single template.
    pub fn names(&self) -> Vec<String> {
        self.entries
            .iter()
            .filter_map(|t| t.entry().map(String::from))
            .collect()
    }

    /// The template a conversation with (`has_tools`) or without tools renders with.
    pub fn choose(&self, has_tools: bool) -> Result<TemplateSource, CatalogError> {
        if let Some(name) = &self.pinned {
            return self.named(name).map(|mut template| {
                template.metadata.pinned = true;
                template
            });
        }
        if let [only] = self.entries.as_slice() {
            if only.entry().is_none() {
                return Ok(only.clone());
            }
        }
        if !self.one_source() {
            return Err(CatalogError::NoDefault {
                label: self.label.clone(),
                available: self.available(),
            });
        }
        let tool_use = has_tools.then(|| self.by_entry("tool_use")).flatten();
        tool_use
            .or_else(|| self.by_entry("default"))
            .cloned()
            .ok_or_else(|| CatalogError::NoDefault {
                label: self.label.clone(),
                available: self.available(),
            })
    }

    fn named(&self, name: &str) -> Result<TemplateSource, CatalogError> {
        self.by_entry(name)
            .or_else(|| self.entries.iter().find(|t| t.name == name))
            .cloned()
            .ok_or_else(|| CatalogError::UnknownEntry {
                label: self.label.clone(),
                name: name.to_string(),
                available: self.available(),
            })
    }

    /// Whether every entry is a named template of the same model or GGUF file (a folder of
    /// several models or loose files has no default to fall back on).
    fn one_source(&self) -> bool {
        let source = |t: &TemplateSource| match &t.origin {
            Origin::Model(model) if model.entry.is_some() => Some(model.place.dir().to_path_buf()),
            Origin::Gguf {
                path,
                entry: Some(_),
            } => Some(path.clone()),
            _ => None,
        };
        let first = self.entries.first().and_then(source);
        first.is_some() && self.entries.iter().all(|t| source(t) == first)
    }

    fn by_entry(&self, name: &str) -> Option<&TemplateSource> {
        self.entries.iter().find(|t| t.entry() == Some(name))
    }

    /// Entry names for one model; display names for a folder of several.
    fn available(&self) -> String {
        if self.one_source() {
            return self.names().join(", ");
        }
        let all: Vec<&str> = self.entries.iter().map(|t| t.name.as_str()).collect();
        all.join(", ")
    }
}

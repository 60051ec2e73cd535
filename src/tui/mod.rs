//! The interactive terminal app (placeholder until the TUI lands).

use std::path::PathBuf;

/// What the app opens with.
#[derive(Debug, Clone, Default)]
pub struct TuiOptions {
    /// A session, template file or tokenizer_config.json to open.
    pub file: Option<PathBuf>,
    /// Extra template directories for the picker.
    pub template_dirs: Vec<PathBuf>,
}

/// Runs the app until the user quits.
pub fn run(_options: TuiOptions) -> anyhow::Result<()> {
    anyhow::bail!("the TUI is not built yet")
}

//! Where a tokenizer's files are: `tokenizer.json` and the `tokenizer_config.json` beside
//! it, found from a model folder or from either file.
//!
//! Everything that names a tokenizer (`--tokenizer`, a fixture's `tokenizer` field, the
//! folder a template came from, later a model id in the Hugging Face cache) ends here as a
//! path, so each source only has to produce a folder or a file.

use std::path::{Path, PathBuf};

use super::TokenizerError;
use crate::catalog::{NamedFile, OutsideError, TemplateAccess};

/// The tokenizer's file name inside a model folder.
pub const TOKENIZER_FILE: &str = "tokenizer.json";
/// The config (added tokens, special tokens, `split_special_tokens`) beside it.
pub const CONFIG_FILE: &str = "tokenizer_config.json";

/// A located tokenizer: the `tokenizer.json` and, when present, its config.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TokenizerFiles {
    /// The `tokenizer.json`.
    pub tokenizer: PathBuf,
    /// The `tokenizer_config.json` beside it, if there is one.
    pub config: Option<PathBuf>,
}

impl TokenizerFiles {
    /// Finds the files from `path`: a model folder, its `tokenizer.json` (any file name: a
    /// renamed copy works) or its `tokenizer_config.json`.
    pub fn locate(path: &Path) -> Result<Self, TokenizerError> {
        if path.is_dir() {
            return Self::in_folder(path).ok_or_else(|| TokenizerError::NotFound {
                path: path.to_path_buf(),
            });
        }
        if !path.exists() {
            return Err(TokenizerError::NotFound {
                path: path.to_path_buf(),
            });
        }
        let folder = path.parent().unwrap_or(Path::new(""));
        if path.file_name().is_some_and(|name| name == CONFIG_FILE) {
            let tokenizer = folder.join(TOKENIZER_FILE);
            if !tokenizer.is_file() {
                return Err(TokenizerError::NotFound {
                    path: path.to_path_buf(),
                });
            }
            return Ok(TokenizerFiles {
                tokenizer,
                config: Some(path.to_path_buf()),
            });
        }
        Ok(TokenizerFiles {
            tokenizer: path.to_path_buf(),
            config: existing(folder.join(CONFIG_FILE)),
        })
    }

    /// [`TokenizerFiles::locate`] for a path a session names (`written`, joined with the
    /// session's folder as `path`): the path and each file found from it must be where
    /// `access` allows, the rule for the session's template path.
    pub fn locate_within(
        path: &Path,
        written: &str,
        access: &TemplateAccess,
    ) -> Result<Self, TokenizerError> {
        access.check(NamedFile::Tokenizer, path, written)?;
        let files = Self::locate(path)?;
        files.check(access)?;
        Ok(files)
    }

    /// Whether `access` allows every file here (a `tokenizer.json` found in an allowed
    /// folder may still be a link to anywhere).
    pub fn check(&self, access: &TemplateAccess) -> Result<(), OutsideError> {
        for file in std::iter::once(&self.tokenizer).chain(&self.config) {
            access.check(NamedFile::Tokenizer, file, &file.display().to_string())?;
        }
        Ok(())
    }

    /// The tokenizer of a model folder, if it has a `tokenizer.json`.
    pub(crate) fn in_folder(folder: &Path) -> Option<Self> {
        let tokenizer = existing(folder.join(TOKENIZER_FILE))?;
        Some(TokenizerFiles {
            tokenizer,
            config: existing(folder.join(CONFIG_FILE)),
        })
    }

    /// The tokenizer of the model folder a template file lives in (a `chat_template.jinja`
    /// or `tokenizer_config.json`), if that folder has one.
    pub(crate) fn beside(template_file: &Path) -> Option<Self> {
        Self::in_folder(template_file.parent()?)
    }
}

fn existing(path: PathBuf) -> Option<PathBuf> {
    path.is_file().then_some(path)
}

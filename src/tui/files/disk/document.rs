//! A session on its way to a file. Its template reference is made here, by the file work
//! and not in `update`: a path relative to the file's folder resolves links on the disk,
//! and it must be one that reading the file will accept (the rule every command applies,
//! [`TemplateAccess`](chatplate_core::catalog::TemplateAccess)); when it would not be,
//! a save waits for the user to decide.

use std::path::{Path, PathBuf};

use chatplate_core::catalog::{folder_to_allow, TemplateSource};
use chatplate_core::session::{Session, TemplateRef};

use super::Guard;
use crate::tui::files::startup;

/// The session as it goes to a file.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// The session.
    pub session: Box<Session>,
    /// The template in use, referred to from the file's folder; `None` keeps the
    /// session's own reference (its template is missing).
    pub template: Option<Box<TemplateSource>>,
    /// What to do with a template path the file's readers would refuse.
    pub outside: Outside,
}

/// What to do when the template's file is outside the session's folder and every
/// allowed template root: a session naming it would fail `chatplate check` and would not
/// open again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outside {
    /// Write nothing yet: ask the user (a save).
    Ask,
    /// Write the path anyway (the recovery file: the work is what matters; reading it
    /// back applies the rule and says how to allow the folder).
    Keep,
    /// Write the template's text into the session instead of its path.
    Inline,
}

/// A save held back because of where its template is, with what saving it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outsider {
    /// The template's file (or model folder).
    pub template: PathBuf,
    /// The folder that, allowed as a template root, lets the session name it.
    pub folder: PathBuf,
    /// Where the session was going.
    pub target: PathBuf,
    /// What the save checks before it writes.
    pub guard: Guard,
    /// Quit once saved.
    pub then_quit: bool,
}

/// Where the template is when the rule refuses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// The template's file (or model folder).
    pub template: PathBuf,
    /// The folder to allow.
    pub folder: PathBuf,
}

impl Document {
    /// The JSON for a file in folder `dir`, and the template reference it holds.
    pub fn written(mut self, dir: &Path) -> Result<(String, TemplateRef), Refused> {
        self.refer(dir)?;
        Ok((self.session.to_json(), self.session.template))
    }

    /// Points the session at its template from `dir`.
    fn refer(&mut self, dir: &Path) -> Result<(), Refused> {
        let Some(template) = &self.template else {
            return Ok(());
        };
        let reference = template.reference(dir);
        let path = match &reference {
            TemplateRef::Path(path) | TemplateRef::Named { path, .. } => dir.join(path),
            _ => PathBuf::new(),
        };
        let allowed = path.as_os_str().is_empty() || startup::template_access(dir).allows(&path);
        match self.outside {
            _ if allowed => self.session.template = reference,
            Outside::Keep => self.session.template = reference,
            Outside::Inline => template.inline_into(&mut self.session),
            Outside::Ask => {
                return Err(Refused {
                    folder: folder_to_allow(&path),
                    template: std::fs::canonicalize(&path).unwrap_or(path),
                })
            }
        }
        // A save records the template's fingerprint; a recovery file (`Keep`) holds the
        // session as it is, so the restore question's diff shows only the user's edits.
        if self.outside != Outside::Keep {
            self.session.record_template(&template.source);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chatplate_core::catalog::{self, Origin};

    fn document(template: TemplateSource, outside: Outside) -> Document {
        let session = crate::tui::panes::messages::conversation::example_session(
            TemplateRef::Source("x".into()),
        );
        Document {
            session: Box::new(session),
            template: Some(Box::new(template)),
            outside,
        }
    }

    #[test]
    fn a_template_inside_the_folder_is_named_by_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.jinja");
        std::fs::write(&file, "{{ messages|length }}").unwrap();
        let template = catalog::load_path(&file).unwrap().remove(0);
        let (json, reference) = document(template, Outside::Ask)
            .written(dir.path())
            .unwrap();
        assert_eq!(reference, TemplateRef::Path("t.jinja".into()));
        // The save records the text's fingerprint beside the reference.
        let hash = chatplate_core::session::template_sha256("{{ messages|length }}");
        assert!(json.contains(&format!("\"sha256\": \"{hash}\"")), "{json}");
    }

    #[test]
    fn a_template_outside_is_asked_about_kept_or_written_inline() {
        let (sessions, elsewhere) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let file = elsewhere.path().join("t.jinja");
        std::fs::write(&file, "{{ messages|length }}").unwrap();
        let template = catalog::load_path(&file).unwrap().remove(0);
        let refused = document(template.clone(), Outside::Ask)
            .written(sessions.path())
            .unwrap_err();
        let real = std::fs::canonicalize(elsewhere.path()).unwrap();
        assert_eq!(
            (refused.template, refused.folder),
            (real.join("t.jinja"), real)
        );
        let (_, kept) = document(template.clone(), Outside::Keep)
            .written(sessions.path())
            .unwrap();
        assert!(matches!(kept, TemplateRef::Path(path) if path.ends_with("t.jinja")));
        let (_, inline) = document(template, Outside::Inline)
            .written(sessions.path())
            .unwrap();
        assert_eq!(inline, TemplateRef::Source("{{ messages|length }}".into()));
    }

    #[test]
    fn a_missing_template_keeps_the_reference_and_others_need_no_path() {
        let mut missing = document(catalog::default_template(), Outside::Ask);
        missing.template = None;
        let dir = std::env::temp_dir();
        let (_, reference) = missing.written(&dir).unwrap();
        assert_eq!(reference, TemplateRef::Source("x".into()));
        let bundled = document(catalog::default_template(), Outside::Ask);
        let (_, reference) = bundled.written(&dir).unwrap();
        assert!(matches!(reference, TemplateRef::Bundled(_)));
        let inline = TemplateSource::new("i", "{{ 1 }}", Origin::Inline);
        let (_, reference) = document(inline, Outside::Ask).written(&dir).unwrap();
        assert_eq!(reference, TemplateRef::Source("{{ 1 }}".into()));
    }
}

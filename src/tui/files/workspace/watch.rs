//! The template file watch, on the workspace's side: which file is watched, the look the
//! event loop takes at it ([`Poll`]) and what came of that.

use std::path::Path;

use chatplate_core::catalog::TemplateSource;

use super::{FileProblem, Watch, Workspace};
use crate::tui::files::disk::Poll;
use crate::tui::files::disk::Reload;
use crate::tui::files::disk::Stamp;

impl Workspace {
    /// Watches the template's file. The same file keeps its last look; another is looked
    /// at by the next tick.
    pub(super) fn watch_template(&mut self) {
        let path = self.template.watched_path();
        if path.is_some() && self.watch.as_ref().map(|w| w.path.as_path()) == path {
            return;
        }
        self.watch = path.map(|path| Watch {
            path: path.to_path_buf(),
            seen: None,
        });
    }

    /// Whether the watched template file has not been looked at yet.
    pub fn watch_unseen(&self) -> bool {
        self.watch.as_ref().is_some_and(|w| w.seen.is_none())
    }

    /// The look at the watched template file, if there is one.
    pub fn poll_job(&self) -> Option<Poll> {
        let watch = self.watch.as_ref()?;
        let reload = match self.missing_template {
            Some(_) => Reload::Resolve {
                reference: self.session.template.clone(),
                dir: self.session_dir(),
            },
            None => Reload::Named(self.template.name.clone()),
        };
        Some(Poll {
            path: watch.path.clone(),
            seen: watch.seen,
            reload,
        })
    }

    /// The first look at the watched file found `stamp`.
    pub fn template_seen(&mut self, path: &Path, stamp: Stamp) {
        if let Some(watch) = self.watch.as_mut().filter(|w| w.path == path) {
            watch.seen = Some(stamp);
        }
    }

    /// The watched template file changed: takes the template read again in (a missing
    /// template is found at last), and returns it or the error. `None`: another file is
    /// watched by now.
    pub fn template_changed(
        &mut self,
        path: &Path,
        stamp: Stamp,
        reloaded: Result<Box<TemplateSource>, String>,
    ) -> Option<Result<TemplateSource, String>> {
        self.watch.as_mut().filter(|w| w.path == path)?.seen = Some(stamp);
        let reloaded = reloaded.map(|template| *template);
        match &reloaded {
            Ok(template) => {
                self.template = template.clone();
                self.template_file = None;
                if self.missing_template.take().is_some() {
                    self.watch_template();
                }
            }
            Err(_) if self.missing_template.is_some() => {}
            Err(_) if stamp.is_none() => self.template_file = Some(FileProblem::Deleted),
            Err(_) => self.template_file = Some(FileProblem::Unreadable),
        }
        Some(reloaded)
    }
}

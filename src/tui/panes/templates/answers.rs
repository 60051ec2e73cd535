//! The Templates pane's background work: the selected template's capabilities for the
//! info view, the badges of the templates in the list's window, and their lints.

use chatplate_core::worker::{Job, JobKind, Reply};

use crate::tui::jobs::Background;

use crate::tui::jobs::JobView;

use crate::tui::jobs::Said;
use crate::tui::panes::templates::TemplatesPane;

impl Background for TemplatesPane {
    fn takes(&self, reply: &Reply, _view: &JobView) -> bool {
        matches!(
            reply.kind,
            JobKind::Capabilities | JobKind::Badges | JobKind::Lint
        )
    }

    /// The info view's answers first (they are what the user looks at, its lint
    /// section too), else the next badges: the session's own template first, since the
    /// conversation's warnings need it, then the list's window; then the lints.
    fn request(&mut self, view: &JobView, _said: &mut Said) -> Option<(u64, Job)> {
        if let Some(job) = self.info_job() {
            return Some(job);
        }
        if self.info.open {
            if let Some(job) = self.lint_job(&view.screen) {
                return Some(job);
            }
        }
        let own = self.badges.job_for(&view.workspace.template);
        own.or_else(|| self.badge_job(&view.screen))
            .or_else(|| self.lint_job(&view.screen))
    }

    fn receive(&mut self, reply: Reply, _view: &JobView, _said: &mut Said) -> bool {
        match reply.kind {
            JobKind::Capabilities => self.info.receive(reply),
            JobKind::Lint => self.lints.receive(reply).unwrap_or(false),
            _ => self.badges.receive(reply).unwrap_or(false),
        }
    }

    fn pending(&self, _view: &JobView) -> bool {
        self.info.pending() || self.badges.pending() || self.lints.pending()
    }
}

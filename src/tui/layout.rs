//! Where everything goes on the screen: the tab line, the panes that fit, the status
//! line and the key hints, for a terminal size and focus. Wide terminals (120+ columns)
//! show all three panes; from 70 columns the prompt shares the screen with the last
//! focused other pane; below that one pane is shown at a time. The views draw into
//! these areas, and the components that page or scroll ask them for their height.

use ratatui::layout::{Constraint, Layout, Rect};

use crate::tui::action::Pane;
use crate::tui::screen::Screen;

/// Where everything goes for a screen size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Areas {
    /// The tab line.
    pub tabs: Rect,
    /// The panes shown, left to right.
    pub panes: Vec<(Pane, Rect)>,
    /// The status line (zero height on tiny screens).
    pub status: Rect,
    /// The key hints (zero height on tiny screens).
    pub footer: Rect,
}

/// The layout for `app::screen`.
pub fn areas(screen: &Screen) -> Areas {
    let area = Rect::new(0, 0, screen.width, screen.height);
    let chrome = if screen.height >= 10 { 1 } else { 0 };
    let [tabs, body, status, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(chrome),
        Constraint::Length(chrome),
    ])
    .areas(area);
    let shown = visible_panes(screen);
    let widths: Vec<Constraint> = shown.iter().map(|p| width_of(*p, shown.len())).collect();
    let rects = Layout::horizontal(widths).split(body);
    Areas {
        tabs,
        panes: shown.into_iter().zip(rects.iter().copied()).collect(),
        status,
        footer,
    }
}

fn visible_panes(screen: &Screen) -> Vec<Pane> {
    if screen.zoom {
        vec![screen.focus]
    } else if screen.width >= 120 && screen.height >= 16 {
        Pane::ALL.to_vec()
    } else if screen.width >= 70 && screen.height >= 12 {
        vec![screen.left, Pane::Prompt]
    } else {
        vec![screen.focus]
    }
}

fn width_of(pane: Pane, count: usize) -> Constraint {
    match (count, pane) {
        (3, Pane::Templates) => Constraint::Percentage(24),
        (3, Pane::Messages) => Constraint::Percentage(36),
        (2, Pane::Prompt) => Constraint::Percentage(55),
        (2, _) => Constraint::Percentage(45),
        _ => Constraint::Fill(1),
    }
}

/// Text rows inside `app::pane` (borders excluded); 0 when it is not shown.
pub fn pane_height(screen: &Screen, pane: Pane) -> usize {
    areas(screen)
        .panes
        .iter()
        .find(|(p, _)| *p == pane)
        .map_or(0, |(_, rect)| usize::from(rect.height.saturating_sub(2)))
}

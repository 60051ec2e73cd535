//! The settings' Knobs section: the template's variables as the worker found them
//! ([`crate::tui::jobs::knobs`]), each with its value; `Enter` on a boolean one sets
//! the other value in the session's variables, the prompt pane's compare view shows the
//! new prompt against the one before (the diff is what the flip did), and the status
//! line says it in bytes.

use ratatui::text::Span;
use serde_json::Value as Json;

use crate::tui::context::PaneContext;
use crate::tui::jobs::knobs::KnobRow;
use crate::tui::panes::messages::view::truncate;
use crate::tui::theme::Theme;

/// Flips knob `index`: its variable set to the other boolean (an unsaved, undoable
/// change that renders again).
pub fn flip(knobs: &[KnobRow], index: usize, ctx: &mut PaneContext) {
    let Some(knob) = knobs.get(index) else {
        return;
    };
    let Some(to) = knob.flip_to else {
        return ctx.warn(format!(
            "{} is not a boolean: edit its value in variables",
            knob.name
        ));
    };
    let variables = &mut ctx.workspace.session.variables;
    let before = variables.insert(knob.name.clone(), Json::Bool(to));
    ctx.edited();
    // The prompt pane shows what the flip did: the new render diffed with this one.
    if let (Ok(prompt), false) = (&ctx.preview.output, before == Some(Json::Bool(to))) {
        let label = format!("before {}→{to}", knob.name);
        ctx.compare_before(label, std::sync::Arc::clone(prompt));
    }
    let mut said = format!("{} = {to}: {}", knob.name, knob.effect);
    if !knob.excerpt.is_empty() {
        said.push_str(&format!(", {}", knob.excerpt));
    }
    ctx.notify(said);
}

/// The spans of knob row `knob` after its label, in `room` columns: name and value
/// first (what must survive a narrow pane), then what `Enter` does.
pub fn spans(knob: &KnobRow, room: usize, theme: Theme) -> Vec<Span<'static>> {
    let head = truncate(&format!("{} = {}", knob.name, knob.value), room);
    let rest = room.saturating_sub(head.chars().count());
    let mut spans = vec![Span::raw(head)];
    let tail = match (knob.flip_to, knob.retention) {
        (Some(to), Some((now, then))) => {
            format!(" · ⏎ {to}: {}, reasoning shown {now}→{then}", knob.effect)
        }
        (Some(to), None) => format!(" · ⏎ {to}: {}", knob.effect),
        (None, _) => format!(" · {}", knob.effect),
    };
    if rest > 3 {
        spans.push(Span::styled(truncate(&tail, rest), theme.dim()));
    }
    spans
}

//! How attribution shows: a note in the prompt pane's title and the per-message byte
//! counts in the message list.

use crate::tui::jobs::attribution::AttributionState;

/// The prompt title's note on attribution: computing (all of it, or the rest), not
/// prefix-monotone, failed.
pub fn title_note(state: AttributionState) -> &'static str {
    match state {
        AttributionState::Exact => "",
        AttributionState::Pending => " · attributing…",
        AttributionState::OnScreen => " · attributing the rest…",
        AttributionState::OnScreenOnly => " · exact on screen only",
        AttributionState::NotMonotone => " · not prefix-monotone",
        AttributionState::Failed => " · attribution failed",
        AttributionState::Stopped => " · attribution stopped",
    }
}

/// A byte count in a few characters: `812B`, `4.1k`, `37k`, `1.2M`.
pub fn short_bytes(bytes: usize) -> String {
    match bytes {
        0..1000 => format!("{bytes}B"),
        1000..10_000 => format!("{:.1}k", bytes as f64 / 1000.0),
        10_000..1_000_000 => format!("{}k", bytes / 1000),
        _ => format!("{:.1}M", bytes as f64 / 1_000_000.0),
    }
}

/// The message list's byte column for message `index`, when attributed.
pub fn bytes_column(counts: Option<&[Option<usize>]>, index: usize) -> Option<String> {
    counts?.get(index).copied().flatten().map(short_bytes)
}

//! An error excerpt laid out for a terminal: tabs expanded and long lines wrapped by us,
//! so the caret under the error column stays under it. (A terminal wraps a long line
//! and its caret line independently, which put the caret rows away from the text it
//! pointed at; a tab shown 8 cells wide moved it sideways.)

/// Columns an excerpt row takes at most, gutter included: fits an 80-column terminal.
pub(crate) const EXCERPT_COLUMNS: usize = 80;

/// Cells a tab takes in an excerpt.
const TAB_CELLS: usize = 4;

/// `excerpt` (as [`RenderError::excerpt`](chatplate_render::RenderError::excerpt) makes it:
/// `">N | text"` rows, a `"   ^"` row under the error's row) with tabs expanded and
/// rows longer than `columns` wrapped, continuation rows under the same gutter and the
/// caret row right under the wrapped row holding the error column.
pub(crate) fn fit(excerpt: &str, columns: usize) -> String {
    let rows: Vec<&str> = excerpt.lines().collect();
    let mut out = String::new();
    let mut index = 0;
    while index < rows.len() {
        let row = rows[index];
        let caret = rows.get(index + 1).and_then(|next| caret_column(next));
        if let Some(bar) = row.find(" | ") {
            let (gutter, text) = (&row[..bar + 3], &row[bar + 3..]);
            let caret = caret.map(|column| column.saturating_sub(gutter.chars().count()));
            fit_row(&mut out, gutter, text, caret, columns);
            index += if caret.is_some() { 2 } else { 1 };
        } else {
            out.push_str(row);
            out.push('\n');
            index += 1;
        }
    }
    out
}

/// The 0-based column of a caret row's `^`, when `row` is one.
fn caret_column(row: &str) -> Option<usize> {
    let trimmed = row.trim_start_matches(' ');
    (trimmed == "^").then(|| row.len() - 1)
}

/// One source row: `caret` is the 0-based character index of the error in `text`.
/// Rows are cut by display width (a CJK character or an emoji takes two cells), and the
/// caret is padded by the width of what precedes it on its row, so it stays under its
/// character.
fn fit_row(out: &mut String, gutter: &str, text: &str, caret: Option<usize>, columns: usize) {
    let (cells, caret) = expand_tabs(text, caret);
    let gutter_width = gutter.chars().count();
    let width = columns.saturating_sub(gutter_width).max(20);
    let continuation = format!("{}| ", " ".repeat(gutter_width.saturating_sub(2)));
    let chunks = chunks_of(&cells, width);
    // A caret just past the row's end (an unclosed tag) stays on the last row.
    let caret_row = caret.map(|c| {
        (chunks
            .iter()
            .position(|(start, end)| c >= *start && c < *end))
        .unwrap_or(chunks.len() - 1)
    });
    for (number, (start, end)) in chunks.iter().enumerate() {
        out.push_str(if number == 0 { gutter } else { &continuation });
        out.extend(&cells[*start..*end]);
        out.push('\n');
        if let (Some(caret), Some(_)) = (caret, caret_row.filter(|row| *row == number)) {
            let before = &cells[*start..caret.min(*end)];
            let past = caret.saturating_sub(*end);
            let within: usize = before.iter().map(|c| cell_width(*c)).sum::<usize>() + past;
            out.push_str(&" ".repeat(gutter_width + within));
            out.push_str("^\n");
        }
    }
}

/// Cells a character takes on a terminal: two for wide (East Asian, emoji), none for
/// combining marks.
fn cell_width(c: char) -> usize {
    unicode_width::UnicodeWidthChar::width(c).unwrap_or(0)
}

/// `cells` cut into rows of at most `width` display cells: each row's `start..end`
/// indexes (one empty row for an empty text).
fn chunks_of(cells: &[char], width: usize) -> Vec<(usize, usize)> {
    let mut rows = Vec::new();
    let (mut start, mut used) = (0, 0);
    for (index, c) in cells.iter().enumerate() {
        let w = cell_width(*c);
        if used + w > width && index > start {
            rows.push((start, index));
            (start, used) = (index, 0);
        }
        used += w;
    }
    rows.push((start, cells.len()));
    rows
}

/// The row's characters with each tab as spaces, and where the caret's character went.
fn expand_tabs(text: &str, caret: Option<usize>) -> (Vec<char>, Option<usize>) {
    let mut cells = Vec::with_capacity(text.len());
    let mut moved = caret;
    for (index, ch) in text.chars().enumerate() {
        if Some(index) == caret {
            moved = Some(cells.len());
        }
        if ch == '\t' {
            cells.extend(std::iter::repeat_n(' ', TAB_CELLS));
        } else {
            cells.push(ch);
        }
    }
    if caret.is_some_and(|c| c >= text.chars().count()) {
        moved = caret.map(|c| c - text.chars().count() + cells.len());
    }
    (cells, moved)
}

#[cfg(test)]
mod tests {
    use super::fit;

    #[test]
    fn short_rows_are_unchanged() {
        let excerpt = " 1 | a\n>2 | {{ x }}\n        ^\n 3 | b\n";
        assert_eq!(fit(excerpt, 80), excerpt);
    }

    #[test]
    fn a_long_row_wraps_and_the_caret_follows_its_row() {
        let line = format!("{}X{}", "a".repeat(100), "b".repeat(50));
        let excerpt = format!(">1 | {line}\n{}^\n", " ".repeat(5 + 100));
        let fitted = fit(&excerpt, 40);
        let rows: Vec<&str> = fitted.lines().collect();
        // 35 characters per row after the 5-column gutter: X (index 100) is on row 3.
        assert_eq!(rows[0], format!(">1 | {}", "a".repeat(35)));
        assert_eq!(rows[1], format!("   | {}", "a".repeat(35)));
        assert_eq!(rows[2], format!("   | {}", "a".repeat(30) + "X" + "bbbb"));
        let caret = rows[3].find('^').unwrap();
        assert_eq!(rows[2].chars().nth(caret), Some('X'), "{fitted}");
        assert!(rows.iter().all(|row| row.chars().count() <= 40), "{fitted}");
    }

    #[test]
    fn tabs_are_expanded_and_the_caret_moves_with_them() {
        let excerpt = ">1 | \t\t{{ x }}\n          ^\n";
        let fitted = fit(excerpt, 80);
        let rows: Vec<&str> = fitted.lines().collect();
        assert_eq!(rows[0], ">1 |         {{ x }}");
        let caret = rows[1].find('^').unwrap();
        assert_eq!(&rows[0][caret..=caret], "x", "{fitted}");
    }

    #[test]
    fn wide_characters_keep_the_caret_under_its_character_and_rows_in_width() {
        use unicode_width::UnicodeWidthStr;
        // 40 CJK characters (80 cells), then the error.
        let line = format!("{{{{ \"{}\" }}}}{{{{ foo( }}}}", "漢".repeat(40));
        let error = line.chars().position(|c| c == 'f').unwrap();
        let excerpt = format!(">1 | {line}\n{}^\n", " ".repeat(5 + error));
        let fitted = fit(&excerpt, 40);
        let rows: Vec<&str> = fitted.lines().collect();
        assert!(rows.iter().all(|row| row.width() <= 40), "{fitted}");
        let caret_row = rows.iter().position(|row| row.trim() == "^").unwrap();
        let above = rows[caret_row - 1];
        let caret = rows[caret_row].find('^').unwrap();
        // The character whose cells start at the caret's column.
        let mut column = 0;
        let under = above.chars().find(|c| {
            let here = column;
            column += unicode_width::UnicodeWidthChar::width(*c).unwrap_or(0);
            here == caret
        });
        assert_eq!(under, Some('f'), "{fitted}");
    }

    #[test]
    fn a_caret_past_the_end_of_the_row_stays_after_it() {
        let excerpt = ">1 | {{\n       ^\n";
        assert_eq!(fit(excerpt, 80), excerpt);
    }
}

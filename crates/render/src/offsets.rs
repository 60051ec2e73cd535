//! The way back from a rewritten template to the text the user wrote.
//!
//! Several preparation steps replace pieces of the source (string literals, `{%
//! generation %}` tags, AST-guided expression rewrites). Each records where its edits
//! landed, so an error MiniJinja reports in the compiled text can point at the user's
//! own line and column.

/// Where one edit landed: `new` is its range in the rewritten text, `original` the range
/// it replaced, `prefix` the length of text inserted before the original when the edit
/// wraps it (so offsets inside the wrapped text map to the same place in the original).
#[derive(Debug, Clone, Copy)]
struct Shift {
    new: (usize, usize),
    original: (usize, usize),
    prefix: Option<usize>,
}

/// The edits one rewrite made, in order of position.
#[derive(Debug, Clone, Default)]
pub(crate) struct OffsetMap {
    shifts: Vec<Shift>,
}

impl OffsetMap {
    /// Records that `original` (a range of the input) became `new` (a range of the
    /// output). `prefix` is the length of text inserted before a wrapped original.
    /// Edits must be recorded in increasing order and must not overlap.
    pub(crate) fn record(
        &mut self,
        new: (usize, usize),
        original: (usize, usize),
        prefix: Option<usize>,
    ) {
        self.shifts.push(Shift {
            new,
            original,
            prefix,
        });
    }

    /// Maps a byte offset in the rewritten text to the text before the rewrite.
    pub(crate) fn original_offset(&self, offset: usize) -> usize {
        let mut growth: isize = 0;
        for shift in &self.shifts {
            if offset < shift.new.0 {
                break;
            }
            if offset < shift.new.1 {
                let inside = offset - shift.new.0;
                let original_len = shift.original.1 - shift.original.0;
                return match shift.prefix {
                    Some(prefix) if inside >= prefix && inside - prefix < original_len => {
                        shift.original.0 + inside - prefix
                    }
                    _ => shift.original.0,
                };
            }
            growth += (shift.new.1 - shift.new.0) as isize
                - (shift.original.1 - shift.original.0) as isize;
        }
        offset.saturating_add_signed(-growth)
    }
}

#[cfg(test)]
mod tests {
    use super::OffsetMap;

    #[test]
    fn maps_offsets_around_inside_and_after_edits() {
        // "ab XY cd" -> "ab f((XY)) cd": the wrap adds "f((" before and "))" after.
        let mut map = OffsetMap::default();
        map.record((3, 10), (3, 5), Some(3));
        assert_eq!(map.original_offset(1), 1);
        assert_eq!(map.original_offset(3), 3); // the inserted "f(("
        assert_eq!(map.original_offset(7), 4); // "Y"
        assert_eq!(map.original_offset(11), 6); // "c", after the edit
    }
}

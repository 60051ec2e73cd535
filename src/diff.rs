//! A line diff of the expected prompt against the rendered one, shared by
//! `chatplate check` and the app's diff mode. Lines keep their
//! newline so a missing or extra final newline shows up as a changed line.

/// One line of the diff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffLine<'a> {
    /// In both.
    Same(&'a str),
    /// Only in the expected prompt.
    Removed(&'a str),
    /// Only in the rendered prompt.
    Added(&'a str),
}

/// Largest middle section (lines x lines) compared exactly; beyond it the differing
/// middle is shown as removed-then-added, which stays fast on huge prompts.
const MAX_TABLE: usize = 4_000_000;

/// The diff from `expected` to `actual`.
pub fn diff_lines<'a>(expected: &'a str, actual: &'a str) -> Vec<DiffLine<'a>> {
    let old: Vec<&str> = expected.split_inclusive('\n').collect();
    let new: Vec<&str> = actual.split_inclusive('\n').collect();
    let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let mut out: Vec<DiffLine> = old[..prefix].iter().map(|l| DiffLine::Same(l)).collect();
    out.extend(middle(
        &old[prefix..old.len() - suffix],
        &new[prefix..new.len() - suffix],
    ));
    out.extend(old[old.len() - suffix..].iter().map(|l| DiffLine::Same(l)));
    out
}

fn middle<'a>(old: &[&'a str], new: &[&'a str]) -> Vec<DiffLine<'a>> {
    if old.len().saturating_mul(new.len()) > MAX_TABLE {
        let removed = old.iter().map(|l| DiffLine::Removed(l));
        return removed
            .chain(new.iter().map(|l| DiffLine::Added(l)))
            .collect();
    }
    // Longest common subsequence table, filled from the end.
    let width = new.len() + 1;
    let mut table = vec![0u32; (old.len() + 1) * width];
    for i in (0..old.len()).rev() {
        for j in (0..new.len()).rev() {
            table[i * width + j] = if old[i] == new[j] {
                table[(i + 1) * width + j + 1] + 1
            } else {
                table[(i + 1) * width + j].max(table[i * width + j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < old.len() || j < new.len() {
        if i < old.len() && j < new.len() && old[i] == new[j] {
            out.push(DiffLine::Same(old[i]));
            (i, j) = (i + 1, j + 1);
        } else if i < old.len()
            && (j == new.len() || table[(i + 1) * width + j] >= table[i * width + j + 1])
        {
            out.push(DiffLine::Removed(old[i]));
            i += 1;
        } else {
            out.push(DiffLine::Added(new[j]));
            j += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{diff_lines, DiffLine::*};

    #[test]
    fn changed_line_in_the_middle() {
        let diff = diff_lines("a\nb\nc\n", "a\nB\nc\n");
        assert_eq!(
            diff,
            vec![Same("a\n"), Removed("b\n"), Added("B\n"), Same("c\n")]
        );
    }

    #[test]
    fn missing_final_newline_is_a_change() {
        let diff = diff_lines("a\n", "a");
        assert_eq!(diff, vec![Removed("a\n"), Added("a")]);
    }
}

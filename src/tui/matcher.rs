//! The one matcher every list filter uses (the opener, the session picker, the
//! templates filter, the help): what was typed is ranked against each candidate with
//! helix's fuzzy matcher (`nucleo-matcher`, fzf's scoring), so the same text ranks the
//! same way in every list.
//!
//! The typed text is split into words that may match in any order, each as a
//! subsequence; a word with a capital letter matches case-sensitively (smart case), and
//! accented letters match their plain ones. fzf's marks work too: `'word` for a literal
//! substring, `^word` for a prefix, `word$` for a suffix, `!word` to leave out. The
//! scoring is the one for paths: a match just after a `/`, at a word's start or in a
//! run of consecutive characters ranks higher. Of equal scores the shorter candidate
//! comes first, then the candidates' order.

use std::cell::RefCell;

use nucleo_matcher::pattern::{AtomKind, CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};

/// A candidate that matched: its position in the candidates given, and its score
/// (higher is better).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ranked {
    /// Where the candidate is in the slice given.
    pub index: usize,
    /// How well it matched; 0 for every candidate when nothing was typed.
    pub score: u32,
}

thread_local! {
    // The matcher keeps scratch memory between calls (its documentation asks for one
    // to be reused); the filters run on the UI thread, several times per key.
    static MATCHER: RefCell<Matcher> = RefCell::new(Matcher::new(Config::DEFAULT.match_paths()));
}

/// The candidates that match `query`, each word as a subsequence (fzf's default, for
/// names and paths), best first; of equal scores the shorter first (as fzf), then the
/// candidates' order. A blank query keeps every candidate, in order.
pub fn rank<S: AsRef<str>>(query: &str, candidates: &[S]) -> Vec<Ranked> {
    let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart);
    rank_with(&pattern, query, candidates)
}

/// As [`rank`], each word as a substring (fzf's `--exact`): for prose such as the help's
/// descriptions, where a word's letters scattered over a long line match nearly any.
pub fn rank_exact<S: AsRef<str>>(query: &str, candidates: &[S]) -> Vec<Ranked> {
    let (case, normalize) = (CaseMatching::Smart, Normalization::Smart);
    let pattern = Pattern::new(query, case, normalize, AtomKind::Substring);
    rank_with(&pattern, query, candidates)
}

fn rank_with<S: AsRef<str>>(pattern: &Pattern, query: &str, candidates: &[S]) -> Vec<Ranked> {
    if query.trim().is_empty() {
        let all = (0..candidates.len()).map(|index| Ranked { index, score: 0 });
        return all.collect();
    }
    let mut ranked: Vec<Ranked> = MATCHER.with_borrow_mut(|matcher| {
        let mut buf = Vec::new();
        (candidates.iter().enumerate())
            .filter_map(|(index, candidate)| {
                let haystack = Utf32Str::new(candidate.as_ref(), &mut buf);
                let score = pattern.score(haystack, matcher)?;
                Some(Ranked { index, score })
            })
            .collect()
    });
    // Stable: ties of score and length stay in the candidates' order.
    let length = |r: &Ranked| candidates[r.index].as_ref().len();
    ranked.sort_by_key(|r| (std::cmp::Reverse(r.score), length(r)));
    ranked
}

/// The indices of `ranked` (of a list cut into sections, a heading each) with the
/// sections kept in order and each one's matches in their ranking, so a heading still
/// stands above its rows. `section` names the section of the candidate at an index; a
/// section is a run of consecutive candidates with one name, `count` of them in all.
pub fn in_sections<K: PartialEq>(
    ranked: Vec<Ranked>,
    count: usize,
    section: impl Fn(usize) -> K,
) -> Vec<usize> {
    let mut run = 0;
    let runs: Vec<usize> = (0..count)
        .map(|i| {
            if i > 0 && section(i) != section(i - 1) {
                run += 1;
            }
            run
        })
        .collect();
    let mut ranked = ranked;
    // Stable: within a section, the ranking stays.
    ranked.sort_by_key(|r| runs[r.index]);
    ranked.into_iter().map(|r| r.index).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranked<'a>(query: &str, candidates: &[&'a str]) -> Vec<&'a str> {
        (rank(query, candidates).iter())
            .map(|r| candidates[r.index])
            .collect()
    }

    #[test]
    fn a_word_matches_as_a_subsequence() {
        let all = ["sessions/gemma.json", "templates/qwen.jinja"];
        assert_eq!(ranked("gmjs", &all), ["sessions/gemma.json"]);
        assert_eq!(ranked("qwj", &all), ["templates/qwen.jinja"]);
        assert!(ranked("zz", &all).is_empty());
        assert!(ranked("jsg", &all).is_empty(), "in order only");
    }

    #[test]
    fn words_match_in_any_order() {
        let all = [
            "saved/qwen/tools.json",
            "saved/llama.json",
            "saved/x/qwen-a.json",
        ];
        assert_eq!(ranked("tools qwen", &all), ["saved/qwen/tools.json"]);
        assert_eq!(ranked("qwen tools", &all), ["saved/qwen/tools.json"]);
        assert_eq!(ranked("qwen", &all).len(), 2);
    }

    #[test]
    fn a_capital_asks_for_that_case() {
        let all = ["Qwen-a.json", "qwen-b.json"];
        assert_eq!(ranked("qwen", &all), all, "lower case matches both");
        assert_eq!(ranked("Qwen", &all), ["Qwen-a.json"]);
    }

    #[test]
    fn a_match_at_a_path_part_ranks_above_one_inside_a_word() {
        let all = [
            "templates/abcdefgh.jinja",
            "x/gemma/tools.json",
            "x/gemma.json",
        ];
        let best = ranked("gem", &all);
        assert_eq!(
            best,
            ["x/gemma.json", "x/gemma/tools.json"],
            "the shorter first"
        );
        let same = ["b/gem.json", "a/gem.json"];
        assert_eq!(ranked("gem", &same), same, "then in order");
        assert_eq!(
            ranked("tools", &["a/b/toolsfoo.json", "a/xtoolsx.json"])[0],
            "a/b/toolsfoo.json"
        );
    }

    #[test]
    fn consecutive_characters_rank_above_scattered_ones() {
        let all = ["g-e-m.json", "gem.json"];
        assert_eq!(ranked("gem", &all), ["gem.json", "g-e-m.json"]);
    }

    #[test]
    fn a_blank_query_keeps_every_candidate_in_order() {
        let all = ["b", "a", "c"];
        assert_eq!(ranked("", &all), all);
        assert_eq!(ranked("  ", &all), all);
    }

    #[test]
    fn fzf_marks_ask_for_a_literal_a_prefix_or_none() {
        let all = ["s-e-s", "sessions", "a vase"];
        assert_eq!(ranked("ses", &all), ["sessions", "s-e-s"]);
        assert_eq!(ranked("'ses", &all), ["sessions"]);
        assert_eq!(ranked("^a", &all), ["a vase"]);
        assert_eq!(ranked("s !vase", &all), ["s-e-s", "sessions"]);
    }

    #[test]
    fn exact_words_are_substrings_in_any_order() {
        let all = [
            "Undo the last change",
            "Use the selected template (and go back)",
        ];
        assert_eq!(rank("undo", &all).len(), 2, "u..n..d..o");
        let exact: Vec<usize> = rank_exact("change undo", &all)
            .iter()
            .map(|r| r.index)
            .collect();
        assert_eq!(exact, [0]);
        assert!(rank_exact("Change", &all).is_empty(), "smart case");
        assert_eq!(rank_exact("", &all).len(), 2);
    }

    #[test]
    fn sections_keep_their_order_and_rank_inside() {
        let all = ["a/x", "a/qwen", "b/q-w-e-n", "b/qwen2", "a/qwen3"];
        let section = |i: usize| all[i].as_bytes()[0];
        let sections = |query| in_sections(rank(query, &all), all.len(), section);
        // a, a | b, b | a: the last "a" is a section of its own; inside "b", b/qwen2
        // ranks above b/q-w-e-n.
        assert_eq!(sections("qwen"), [1, 3, 2, 4]);
        assert_eq!(sections(""), [0, 1, 2, 3, 4]);
    }
}

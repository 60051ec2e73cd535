//! The session picker (`Ctrl+O`) filters as you type: the path inside the sessions
//! folder is ranked by the shared matcher (`tui::matcher`: words in any order, each a
//! subsequence, best first), the cursor goes to the first entry shown, and the title
//! counts what is shown.

use std::path::{Path, PathBuf};

use crate::tui::dialogs::Picker;

impl Picker {
    /// A picker over `entries`, found in `root`, unfiltered.
    pub fn new(entries: Vec<PathBuf>, root: PathBuf) -> Self {
        Picker {
            entries,
            cursor: 0,
            filter: String::new(),
            root,
        }
    }

    /// How `path` is shown and filtered: inside the folder listed (the folder says
    /// nothing about which session it is).
    pub fn name<'a>(&self, path: &'a Path) -> std::borrow::Cow<'a, str> {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .to_string_lossy()
    }

    /// The entries the filter shows, best first (all, in order, with no filter).
    pub fn shown(&self) -> Vec<&PathBuf> {
        let names: Vec<_> = self.entries.iter().map(|path| self.name(path)).collect();
        (crate::tui::matcher::rank(&self.filter, &names).into_iter())
            .map(|r| &self.entries[r.index])
            .collect()
    }

    /// Adds `c` to the filter.
    pub fn type_char(&mut self, c: char) {
        self.filter.push(c);
        self.cursor = 0;
    }

    /// Removes the filter's last character.
    pub fn backspace(&mut self) {
        self.filter.pop();
        self.cursor = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_typed_must_occur_in_the_path() {
        let paths = [
            "saved/qwen/tools.json",
            "saved/llama.json",
            "saved/x/Qwen-a.json",
        ];
        let entries = paths.iter().map(PathBuf::from).collect();
        let mut picker = Picker::new(entries, PathBuf::from("saved"));
        picker.type_char('v');
        assert!(
            picker.shown().is_empty(),
            "the folder listed is not matched"
        );
        picker.backspace();
        for c in "qwen".chars() {
            picker.type_char(c);
        }
        assert_eq!(picker.shown().len(), 2);
        for c in " tool".chars() {
            picker.type_char(c);
        }
        assert_eq!(picker.shown(), [&PathBuf::from(paths[0])]);
        picker.filter.clear();
        picker.backspace();
        assert_eq!(picker.shown().len(), 3);
    }
}

//! The command-line examples in the docs run as shown: every ```console block of every
//! page of docs/ is run against the real binary by trycmd, and its output (stdout and
//! stderr as a terminal shows them) must match. Blocks that cannot run here (they need a
//! terminal, the network or a model outside the repository) are `text` or `sh` blocks
//! without a `$ ` prompt, which the second test enforces.
//!
//! The examples read files from `docs/examples/` and `sessions/`, and the Hugging Face
//! cache of `docs/examples/hf-cache`, never the user's own.

use std::path::{Path, PathBuf};

#[test]
fn the_command_line_examples_in_the_docs_run_as_shown() {
    let cases = trycmd::TestCases::new();
    cases
        .register_bin("chatplate", Path::new(env!("CARGO_BIN_EXE_chatplate")))
        .env("HF_HUB_CACHE", "docs/examples/hf-cache")
        .env("HF_HUB_OFFLINE", "1")
        .env("NO_COLOR", "1");
    for page in pages() {
        cases.case(comparable_copy(&page));
    }
}

/// trycmd turns every `\` of the output into `/` before comparing (it takes them for
/// Windows path separators), but not in the page: the pages are run from copies (under
/// the target folder, same names and line numbers) whose console output does the same,
/// so `"Hi\n"` in a page matches the binary's `"Hi\n"`.
fn comparable_copy(page: &Path) -> PathBuf {
    let text = std::fs::read_to_string(page).expect("the page is readable");
    let mut in_console = false;
    let mut copy = String::new();
    for line in text.lines() {
        if let Some(info) = line.strip_prefix("```") {
            in_console = !in_console && info.trim() == "console";
        }
        if in_console && !line.starts_with("$ ") {
            copy.push_str(&line.replace('\\', "/"));
        } else {
            copy.push_str(line);
        }
        copy.push('\n');
    }
    let folder = Path::new(env!("CARGO_TARGET_TMPDIR")).join("docs");
    std::fs::create_dir_all(&folder).expect("the copies' folder is writable");
    let path = folder.join(page.file_name().expect("a page has a name"));
    std::fs::write(&path, copy).expect("the copy is writable");
    path
}

/// The Markdown pages of docs/.
fn pages() -> Vec<PathBuf> {
    let entries = std::fs::read_dir("docs").expect("docs/ is readable");
    let mut pages: Vec<PathBuf> = entries
        .map(|entry| entry.expect("docs/ lists").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    pages.sort();
    pages
}

/// A `$ command` line outside a ```console block would look like an example that runs
/// without being run: each one is in a console block (or the page says otherwise).
#[test]
fn every_shell_prompt_in_the_docs_is_in_a_console_block() {
    let stray: Vec<String> = pages()
        .iter()
        .flat_map(|page| stray_prompts(page))
        .collect();
    assert!(
        stray.is_empty(),
        "`$ ` lines outside ```console blocks (make the block `console` so trycmd runs it, \
         or drop the prompt when it cannot run here):\n{}",
        stray.join("\n")
    );
}

/// `page:line` of each `$ ` line inside a fenced block that is not `console`.
fn stray_prompts(page: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(page).expect("the page is readable");
    let mut fence: Option<&str> = None;
    let mut stray = Vec::new();
    for (number, line) in text.lines().enumerate() {
        match (fence, line.strip_prefix("```")) {
            (None, Some(info)) => fence = Some(info.trim()),
            (Some(_), Some(_)) => fence = None,
            (Some(info), None) if info != "console" && line.starts_with("$ ") => {
                stray.push(format!("{}:{}: {line}", page.display(), number + 1));
            }
            _ => {}
        }
    }
    stray
}

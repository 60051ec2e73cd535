//! Saving keeps what the file was: a symlink stays a symlink, permissions and owner stay,
//! leftovers of interrupted saves go; and killing the app mid-save never leaves anything
//! but the old or the new complete fixture.

#![cfg(unix)]

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use chatplate_core::session::{write_atomically, Session, TemplateRef};

#[cfg(feature = "tui")]
use crate::e2e_support;
fn session(text: &str) -> Session {
    let mut session = Session::new(TemplateRef::Bundled("gemma-3-tools".into()));
    session.messages[0].0["content"] = text.into();
    session
}

fn content(path: &Path) -> String {
    Session::load(path).unwrap().messages[0].0["content"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_symlinked_fixture_stays_a_symlink() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.json");
    let link = dir.path().join("link.json");
    session("old").save(&real).unwrap();
    std::os::unix::fs::symlink("real.json", &link).unwrap();
    session("new").save(&link).unwrap();
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    assert_eq!(content(&real), "new", "written through to the target");
}

#[test]
fn a_private_fixture_stays_private() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("secret.json");
    session("old").save(&path).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    session("new").save(&path).unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert_eq!(content(&path), "new");
}

#[test]
fn the_owner_is_kept_where_the_system_allows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("theirs.json");
    session("old").save(&path).unwrap();
    let given = std::process::Command::new("chown")
        .args(["4321:4321"])
        .arg(&path)
        .status()
        .is_ok_and(|s| s.success());
    if !given {
        println!("SKIPPED owner test: only root may give a file away");
        return;
    }
    session("new").save(&path).unwrap();
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!((meta.uid(), meta.gid()), (4321, 4321));
}

#[test]
fn leftovers_of_interrupted_saves_are_removed_by_the_next_save() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    // PIDs above the kernel's maximum belong to no process.
    let leftover = dir.path().join(".s.json.99999999.tmp");
    let unrelated = dir.path().join(".other.json.99999999.tmp");
    std::fs::write(&leftover, "{ partial").unwrap();
    std::fs::write(&unrelated, "{ partial").unwrap();
    write_atomically(&path, b"{}\n").unwrap();
    assert!(!leftover.exists());
    assert!(unrelated.exists(), "only this file's leftovers");
}

#[cfg(feature = "tui")]
mod killed_mid_save {
    //! The app saving a 1,000-message fixture, killed with SIGKILL at varying moments:
    //! before the save starts, while the temporary file is written, around the rename.

    use std::time::Duration;

    use chatplate_core::session::Session;

    use super::e2e_support::Tui;

    const ROUNDS: usize = 16;

    #[test]
    fn the_file_is_always_the_old_or_the_new_complete_fixture() {
        let dir = tempfile::tempdir().unwrap();
        let fixture = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/bench/llama-3.1-1000.json"
        );
        let path = dir.path().join("big.json");
        std::fs::copy(fixture, &path).unwrap();
        // The template is referenced relative to the fixture.
        let mut session = Session::load(&path).unwrap();
        session.template = chatplate_core::session::TemplateRef::Source(
            "{% for m in messages %}{{ m.content }}{% endfor %}".into(),
        );
        session.save(&path).unwrap();
        let mut versions = vec![std::fs::read(&path).unwrap()];
        for round in 0..ROUNDS {
            save_and_kill(dir.path(), round);
            let now = std::fs::read(&path).unwrap();
            let parsed = Session::parse(&String::from_utf8_lossy(&now), &path)
                .unwrap_or_else(|err| panic!("round {round}: a damaged fixture: {err}"));
            assert_eq!(parsed.messages.len(), 1000, "round {round}");
            let last = versions.last().unwrap();
            if now != *last {
                // New: exactly one more character than the version before.
                let before = Session::parse(&String::from_utf8_lossy(last), &path).unwrap();
                let grown = |s: &Session| s.messages[1].0["content"].as_str().unwrap().len();
                assert_eq!(grown(&parsed), grown(&before) + 1, "round {round}");
                versions.push(now);
            }
            for entry in std::fs::read_dir(dir.path()).unwrap() {
                let name = entry.unwrap().file_name().to_string_lossy().into_owned();
                if name.ends_with(".recovery.json") {
                    std::fs::remove_file(dir.path().join(name)).unwrap();
                }
            }
        }
        println!(
            "{} of {ROUNDS} saves completed before the kill",
            versions.len() - 1
        );
    }

    /// Opens the fixture, types one character into message 2, presses Ctrl+S and kills
    /// the app a little later (later each round, to land before, during and after the
    /// write).
    fn save_and_kill(dir: &std::path::Path, round: usize) {
        let mut tui = Tui::start(dir, "big.json");
        tui.wait_for("the first frame", |s| s.contains("big.json"));
        tui.send("\x1b[Be"); // Down, edit the second message
        tui.wait_for("the editor", |s| s.contains("#2 user"));
        tui.send("x\x13"); // a character, Ctrl+S
        std::thread::sleep(Duration::from_millis(8 * round as u64));
        // SIGKILL: no handler runs.
        tui.kill("KILL");
        tui.wait_exit();
    }
}

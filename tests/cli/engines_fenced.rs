//! The external engines run fenced from the folder chatplate runs in: `check --engines`
//! and `compare` inside a folder that carries a hostile `json.py`, `typing.py`,
//! `sitecustomize.py` and `node_modules/@huggingface/jinja` (each leaves a mark when it
//! runs) run none of them, and the real transformers and @huggingface/jinja still answer.
//! And an engine is stopped with everything it started at its timeout.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::binary::{binary_under_test, run_bounded, stderr, stdout};
use crate::compare_cli::{node_path, python};
use serde_json::{json, Value as Json};

/// The binary under test (`CHATPLATE_TEST_BIN` runs these against another build) with
/// `args`, in `dir`.
fn command(args: &[&str], dir: &Path) -> Command {
    let mut command = Command::new(binary_under_test());
    command.args(args).current_dir(dir);
    command
}

/// The Python modules a hostile folder carries: a `json.py` and a `typing.py`, which
/// transformers imports, and a `sitecustomize.py`, which Python imports at start-up.
const PYTHON_BAIT: [&str; 3] = ["json", "typing", "sitecustomize"];

/// A folder with the bait and a fixture, and the folder the marks would go to.
fn hostile_folder(dir: &Path) -> PathBuf {
    let marks = dir.join("marks");
    std::fs::create_dir(&marks).unwrap();
    let tree = dir.join("tree");
    std::fs::create_dir(&tree).unwrap();
    for module in PYTHON_BAIT {
        let mark = marks.join(format!("{module}.py"));
        let code = format!("open({:?}, 'w').write('ran')\n", mark.to_str().unwrap());
        std::fs::write(tree.join(format!("{module}.py")), code).unwrap();
    }
    let package = tree.join("node_modules/@huggingface/jinja");
    std::fs::create_dir_all(&package).unwrap();
    let meta = json!({"name": "@huggingface/jinja", "version": "6.6.6", "main": "index.js"});
    std::fs::write(package.join("package.json"), meta.to_string()).unwrap();
    let mark = marks.join("node_modules");
    let code = format!(
        "require('fs').writeFileSync({:?}, 'ran');\n\
         exports.Template = class {{ render() {{ return 'pwned'; }} }};\n",
        mark.to_str().unwrap()
    );
    std::fs::write(package.join("index.js"), code).unwrap();
    // What a user's environment could also carry: read by the interpreters on start.
    let preload = marks.join("node_options");
    let code = format!(
        "require('fs').writeFileSync({:?}, 'ran');\n",
        preload.to_str().unwrap()
    );
    std::fs::write(tree.join("preload.js"), code).unwrap();
    let fixture = json!({
        "version": 1,
        "template": {"source": "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"},
        "messages": [{"role": "user", "content": "Hi"}],
        "expected": {"prompt": "<user>Hi"},
    });
    std::fs::write(tree.join("fixture.json"), fixture.to_string()).unwrap();
    tree
}

/// chatplate in `tree` with the real engines' paths, and the variables that would make
/// an interpreter load the bait.
fn in_tree(args: &[&str], tree: &Path, python: &str, node_path: &str) -> Command {
    let mut command = command(args, tree);
    command
        .env("CHATPLATE_PYTHON", python)
        .env("NODE_PATH", node_path)
        .env("PYTHONPATH", tree)
        .env("PYTHONSTARTUP", tree.join("typing.py"))
        .env(
            "NODE_OPTIONS",
            format!("--require {}", tree.join("preload.js").display()),
        )
        .env("HF_HUB_OFFLINE", "1");
    command
}

fn marks(dir: &Path) -> Vec<String> {
    let mut found: Vec<String> = std::fs::read_dir(dir.join("marks"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    found.sort();
    found
}

#[test]
fn nothing_in_the_working_folder_runs_and_the_real_engines_still_answer() {
    let test = "nothing_in_the_working_folder_runs_and_the_real_engines_still_answer";
    let (Some(python), Some(node_path)) = (python(test), node_path(test)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let tree = hostile_folder(dir.path());
    let args = [
        "check",
        "fixture.json",
        "--engines",
        "python,hf-jinja",
        "--color",
        "never",
    ];
    let out = in_tree(&args, &tree, &python, &node_path).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("1 passed, 0 failed"),
        "{}",
        stdout(&out)
    );
    assert_eq!(marks(dir.path()), Vec::<String>::new());
    let args = [
        "compare",
        "fixture.json",
        "--engine",
        "python",
        "--engine",
        "hf-jinja",
        "--json",
    ];
    let out = in_tree(&args, &tree, &python, &node_path).output().unwrap();
    let report: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["first_difference"], Json::Null, "{report:#}");
    assert_eq!(report["renders"][1]["version"], "5.23.0", "{report:#}");
    assert_eq!(report["renders"][2]["version"], "0.5.11", "{report:#}");
    for render in report["renders"].as_array().unwrap() {
        assert_eq!(render["prompt"], "<user>Hi", "{report:#}");
    }
    assert_eq!(marks(dir.path()), Vec::<String>::new());
}

#[test]
fn hf_jinja_is_not_looked_for_in_the_working_folder() {
    let test = "hf_jinja_is_not_looked_for_in_the_working_folder";
    if node_path(test).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tree = hostile_folder(dir.path());
    // NODE_PATH names nothing: the tree's node_modules is the only package around, and
    // it is not used.
    let mut command = command(
        &["compare", "fixture.json", "--engine", "hf-jinja", "--json"],
        &tree,
    );
    command.env_remove("NODE_PATH").env("HOME", dir.path());
    let out = command.output().unwrap();
    let report: Json = serde_json::from_slice(&out.stdout).unwrap();
    let error = report["renders"][1]["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("hf-jinja is not available: no @huggingface/jinja in ")
            && error.contains("NODE_PATH")
            && error.contains("is never used"),
        "{report:#}"
    );
    assert_eq!(marks(dir.path()), Vec::<String>::new());
}

/// A stand-in interpreter that starts a grandchild holding its output open, writes the
/// grandchild's pid to `pid_file`, and then waits far past any timeout (or, with `answer`,
/// answers at once and leaves the grandchild behind).
fn lingering_engine(dir: &Path, pid_file: &Path, answer: Option<&str>) -> PathBuf {
    let script = dir.join("engine.sh");
    let last = match answer {
        Some(answer) => format!("printf '%s' '{answer}'"),
        None => "sleep 60".into(),
    };
    let text = format!(
        "#!/bin/sh\nsleep 60 &\necho $! > '{}'\n{last}\n",
        pid_file.display()
    );
    std::fs::write(&script, text).unwrap();
    make_executable(&script);
    script
}

#[cfg(unix)]
fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Whether the process `pid` is gone (or a zombie waiting for its parent).
fn is_gone(pid: &str) -> bool {
    if !Path::new("/proc/self").exists() {
        return !Command::new("kill")
            .args(["-0", pid])
            .status()
            .is_ok_and(|status| status.success());
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
        Err(_) => true,
    }
}

/// Waits a little for `pid_file` to name a process that is gone.
fn grandchild_gone(pid_file: &Path) -> bool {
    let pid = std::fs::read_to_string(pid_file).unwrap_or_default();
    let pid = pid.trim();
    assert!(!pid.is_empty(), "the engine wrote no pid");
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        if is_gone(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[cfg(unix)]
#[test]
fn an_engine_and_its_grandchild_die_at_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("grandchild.pid");
    let engine = lingering_engine(dir.path(), &pid_file, None);
    std::fs::write(
        dir.path().join("s.json"),
        r#"{"version": 1, "template": {"source": "x"}, "messages": [{"role": "user", "content": "Hi"}]}"#,
    )
    .unwrap();
    let mut compare = command(
        &[
            "compare",
            "s.json",
            "--engine",
            "python",
            "--timeout",
            "1",
            "--json",
        ],
        dir.path(),
    );
    compare.env("CHATPLATE_PYTHON", &engine);
    // The grandchild sleeps for a minute holding the engine's stdout: a run that waited
    // for the pipe to close would take that long and be killed here.
    let run = run_bounded(compare, Duration::from_secs(30));
    let report: Json = serde_json::from_str(&run.stdout).unwrap();
    let error = report["renders"][1]["error"].as_str().unwrap_or_default();
    assert!(error.starts_with("stopped after 1s"), "{report:#}");
    assert!(
        grandchild_gone(&pid_file),
        "the grandchild outlived the timeout"
    );

    // The same in `check --engines`, whose children run the engines.
    std::fs::remove_file(&pid_file).unwrap();
    std::fs::write(
        dir.path().join("s.json"),
        r#"{"version": 1, "template": {"source": "x"}, "messages": [{"role": "user", "content": "Hi"}], "expected": {"prompt": "x"}}"#,
    )
    .unwrap();
    let check = command(
        &[
            "check",
            "s.json",
            "--engines",
            "python",
            "--python",
            engine.to_str().unwrap(),
            "--engine-timeout",
            "1",
            "--color",
            "never",
        ],
        dir.path(),
    );
    let run = run_bounded(check, Duration::from_secs(30));
    assert_eq!(run.code(), Some(1), "{}", run.stdout);
    assert!(run.stdout.contains("stopped after 1s"), "{}", run.stdout);
    assert!(
        grandchild_gone(&pid_file),
        "the grandchild outlived the timeout"
    );
}

#[cfg(unix)]
#[test]
fn an_engine_that_answers_and_leaves_a_grandchild_behind_is_not_waited_for() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("grandchild.pid");
    let answer = r#"{"version": "0", "prompt": "x"}"#;
    let engine = lingering_engine(dir.path(), &pid_file, Some(answer));
    std::fs::write(
        dir.path().join("s.json"),
        r#"{"version": 1, "template": {"source": "x"}, "messages": [{"role": "user", "content": "Hi"}]}"#,
    )
    .unwrap();
    let mut compare = command(
        &["compare", "s.json", "--engine", "python", "--json"],
        dir.path(),
    );
    compare.env("CHATPLATE_PYTHON", &engine);
    let run = run_bounded(compare, Duration::from_secs(30));
    let report: Json = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["renders"][1]["prompt"], "x", "{report:#}");
    assert_eq!(run.code(), Some(0));
    assert!(
        grandchild_gone(&pid_file),
        "the grandchild outlived the engine"
    );
}

#[test]
fn hf_jinja_gets_null_tools_and_documents_as_transformers_js_passes_them() {
    let test = "hf_jinja_gets_null_tools_and_documents_as_transformers_js_passes_them";
    let (Some(python), Some(node_path)) = (python(test), node_path(test)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let template = "{% if tools is not none and tools|length > 0 %}[tools]{% endif %}\
                    {% if documents is not none %}[documents]{% endif %}\
                    {{ messages[0].content }}";
    for (extra, want) in [
        (json!({}), "Hi"),
        (json!({"tools": [{"type": "function"}]}), "[tools]Hi"),
        (json!({"documents": [{"text": "d"}]}), "[documents]Hi"),
    ] {
        let mut body = json!({
            "version": 1,
            "template": {"source": template},
            "messages": [{"role": "user", "content": "Hi"}],
        });
        for (key, value) in extra.as_object().unwrap() {
            body[key] = value.clone();
        }
        std::fs::write(dir.path().join("s.json"), body.to_string()).unwrap();
        let args = [
            "compare", "s.json", "--engine", "python", "--engine", "hf-jinja", "--json",
        ];
        let out = command(&args, dir.path())
            .env("CHATPLATE_PYTHON", &python)
            .env("NODE_PATH", &node_path)
            .output()
            .unwrap();
        let report: Json = serde_json::from_slice(&out.stdout).unwrap();
        for render in report["renders"].as_array().unwrap() {
            assert_eq!(render["prompt"], want, "{extra}: {report:#}");
        }
        assert_eq!(out.status.code(), Some(0), "{report:#}");
    }
}

#[cfg(unix)]
#[test]
fn an_engine_starts_in_an_empty_folder_with_an_environment_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    // A stand-in interpreter that answers with the names of its variables, its working
    // folder and how many files are in it.
    let script = dir.path().join("engine.sh");
    let text = "#!/bin/sh\nnames=$(env | cut -d= -f1 | sort | tr '\\n' ' ')\n\
                printf '{\"version\": \"0\", \"prompt\": \"%s| %s | %s\"}' \"$names\" \"$(pwd)\" \"$(ls -A | wc -l | tr -d ' ')\"\n";
    std::fs::write(&script, text).unwrap();
    make_executable(&script);
    std::fs::write(
        dir.path().join("s.json"),
        r#"{"version": 1, "template": {"source": "x"}, "messages": [{"role": "user", "content": "Hi"}]}"#,
    )
    .unwrap();
    let out = command(
        &["compare", "s.json", "--engine", "python", "--json"],
        dir.path(),
    )
    .env("CHATPLATE_PYTHON", &script)
    .env("HF_TOKEN", "hf_secret")
    .env("PYTHONPATH", dir.path())
    .env("NODE_OPTIONS", "--require x")
    .env("LC_ALL", "C")
    .output()
    .unwrap();
    let report: Json = serde_json::from_slice(&out.stdout).unwrap();
    let said = report["renders"][1]["prompt"].as_str().unwrap_or_default();
    let (names, rest) = said.split_once('|').expect("the stand-in's answer");
    let names: Vec<&str> = names.split_whitespace().collect();
    for kept in ["PATH", "LC_ALL"] {
        assert!(names.contains(&kept), "{said}");
    }
    for dropped in ["HF_TOKEN", "PYTHONPATH", "NODE_OPTIONS", "CHATPLATE_PYTHON"] {
        assert!(!names.contains(&dropped), "{said}");
    }
    let (folder, files) = rest.rsplit_once('|').unwrap();
    let folder = Path::new(folder.trim());
    assert_ne!(folder, dir.path(), "{said}");
    let name = folder.file_name().unwrap_or_default().to_string_lossy();
    assert!(name.starts_with("chatplate-engine-"), "{said}");
    assert_eq!(files.trim(), "0", "{said}");
    assert!(
        !folder.exists(),
        "the engine's folder is removed after the run"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn an_engine_dies_with_an_interrupted_chatplate() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("engine.pid");
    // The engine itself sleeps (exec), long past the test, in a group of its own.
    let script = dir.path().join("engine.sh");
    let text = format!(
        "#!/bin/sh\necho $$ > '{}'\nexec sleep 60\n",
        pid_file.display()
    );
    std::fs::write(&script, text).unwrap();
    make_executable(&script);
    std::fs::write(
        dir.path().join("s.json"),
        r#"{"version": 1, "template": {"source": "x"}, "messages": [{"role": "user", "content": "Hi"}]}"#,
    )
    .unwrap();
    let mut chatplate = command(&["compare", "s.json", "--engine", "python"], dir.path())
        .env("CHATPLATE_PYTHON", &script)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(20);
    while std::fs::read_to_string(&pid_file).map_or(true, |pid| pid.trim().is_empty()) {
        assert!(Instant::now() < until, "the engine did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Ctrl+C reaches chatplate's group only; the engine's is its own.
    let interrupted = Command::new("kill")
        .args(["-INT", &chatplate.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let _ = chatplate.wait();
    assert!(grandchild_gone(&pid_file), "the engine outlived chatplate");
}

//! A Hugging Face cache tree in `huggingface_hub`'s exact layout, built by the tests:
//! `models--ORG--NAME/{blobs,refs,snapshots}`, snapshot files as relative symlinks into
//! `blobs/`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// Two commits of `acme/chat`: `main` points at [`MAIN`], the tag `v1` at [`V1`].
pub const MAIN: &str = "1111111111111111111111111111111111111111";
/// The older commit.
pub const V1: &str = "2222222222222222222222222222222222222222";

/// A template that names its revision and prints bos/eos around each message.
pub fn template(label: &str) -> String {
    format!("({label}){{% for m in messages %}}{{{{ bos_token }}}}{{{{ m.content }}}}{{{{ eos_token }}}}{{% endfor %}}")
}

/// Writes `bytes` as a blob and links it from `snapshots/<commit>/<file>`.
pub fn put(repo: &Path, commit: &str, file: &str, bytes: &str) {
    let blob_name = format!("blob-{commit}-{}", file.replace('/', "_"));
    let blobs = repo.join("blobs");
    std::fs::create_dir_all(&blobs).unwrap();
    std::fs::write(blobs.join(&blob_name), bytes).unwrap();
    let pointer = repo.join("snapshots").join(commit).join(file);
    std::fs::create_dir_all(pointer.parent().unwrap()).unwrap();
    let depth = file.matches('/').count();
    let target = PathBuf::from("../".repeat(depth + 2))
        .join("blobs")
        .join(blob_name);
    #[cfg(unix)]
    std::os::unix::fs::symlink(target, &pointer).unwrap();
    #[cfg(not(unix))]
    std::fs::copy(
        repo.join("blobs").join(target.file_name().unwrap()),
        &pointer,
    )
    .unwrap();
}

/// Points `refs/<name>` at `commit`.
pub fn set_ref(repo: &Path, name: &str, commit: &str) {
    let path = repo.join("refs").join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, commit).unwrap();
}

/// The cache under `root`: `acme/chat` (main + v1, the main commit with a named
/// `tool_use` template), `acme/weights-only` (no template files) and `acme/dangling`
/// (a ref to a missing snapshot).
pub fn fake_cache(root: &Path) -> PathBuf {
    let repo = root.join("models--acme--chat");
    let config = serde_json::json!({"bos_token": "<s>", "eos_token": {"__type": "AddedToken", "content": "</s>"}});
    for commit in [MAIN, V1] {
        put(&repo, commit, "tokenizer_config.json", &config.to_string());
        put(&repo, commit, "config.json", "{}");
    }
    put(&repo, MAIN, "chat_template.jinja", &template("main"));
    put(
        &repo,
        MAIN,
        "additional_chat_templates/tool_use.jinja",
        &template("main tool_use"),
    );
    put(&repo, V1, "chat_template.jinja", &template("v1"));
    set_ref(&repo, "main", MAIN);
    set_ref(&repo, "v1", V1);
    let weights = root.join("models--acme--weights-only");
    put(&weights, MAIN, "config.json", "{}");
    set_ref(&weights, "main", MAIN);
    set_ref(&root.join("models--acme--dangling"), "main", V1);
    repo
}

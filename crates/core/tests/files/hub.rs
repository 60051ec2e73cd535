//! Fetching template files from the Hub, against a local HTTP server this test starts on
//! 127.0.0.1 that answers the Hub's own paths (`/api/models/{repo}/revision/{rev}`,
//! `/{repo}/resolve/{commit}/{file}`) with its headers (`X-Repo-Commit`, `ETag`,
//! `X-Linked-Etag`, `X-Error-Code`). The server stops by itself after a minute at most;
//! no test reaches the internet.

#![cfg(feature = "hub")]

use std::net::TcpListener;
use std::path::{Path, PathBuf};

use chatplate_core::catalog::hf_cache::{self, ModelId};
use chatplate_core::catalog::hub::{fetch_templates, FetchEvent, HubError, HubFetch};
use chatplate_core::catalog::{Fetch, NamedBy};

use crate::hub_support::{Hub, Seen, COMMIT, GOOD_TOKEN, TEMPLATE, TOOL_TEMPLATE};

fn fetch(
    hub: &Hub,
    cache: &Path,
    id: &str,
    token: Option<&str>,
) -> Result<Vec<FetchEvent>, HubError> {
    let mut events = Vec::new();
    let settings = hub.settings(cache, token);
    fetch_templates(&settings, &ModelId::parse(id).unwrap(), &mut |e| {
        events.push(e.clone());
    })?;
    Ok(events)
}

#[test]
fn only_the_template_files_land_in_the_huggingface_hub_layout() {
    let hub = Hub::start();
    let cache = tempfile::tempdir().unwrap();
    let events = fetch(&hub, cache.path(), "acme/open", None).unwrap();
    assert!(matches!(&events[0], FetchEvent::Resolving { .. }));
    assert!(matches!(events.last(), Some(FetchEvent::Done(s)) if s.commit == COMMIT));
    let repo = cache.path().join("models--acme--open");
    assert_eq!(
        std::fs::read_to_string(repo.join("refs/main")).unwrap(),
        COMMIT
    );
    let snapshot = repo.join("snapshots").join(COMMIT);
    let link = std::fs::read_link(snapshot.join("chat_template.jinja")).unwrap();
    assert_eq!(link, PathBuf::from("../../blobs/etag-template"));
    let nested =
        std::fs::read_link(snapshot.join("additional_chat_templates/tool_use.jinja")).unwrap();
    assert_eq!(nested, PathBuf::from("../../../blobs/etag-tool-use"));
    assert_eq!(
        std::fs::read_to_string(repo.join("blobs/etag-template")).unwrap(),
        TEMPLATE
    );
    let fetched = hub.paths();
    assert!(!fetched
        .iter()
        .any(|p| p.contains("safetensors") || p.contains("config.json\0")));
    assert_eq!(fetched.len(), 4, "{fetched:?}");

    // Offline from now on: the cache resolves it, with its named template.
    let snapshot = hf_cache::snapshot(cache.path(), &ModelId::parse("acme/open").unwrap()).unwrap();
    let set =
        chatplate_core::catalog::model::load(chatplate_core::catalog::ModelPlace::Cache(snapshot))
            .unwrap();
    assert_eq!(set.names(), ["default", "tool_use"]);
    assert_eq!(set.choose(false).unwrap().bos_token.as_deref(), Some("<s>"));
}

#[test]
fn python_tools_find_what_was_fetched() {
    let python = std::env::var("CHATPLATE_PYTHON").unwrap_or_else(|_| "python3".into());
    let probe = std::process::Command::new(&python)
        .args(["-c", "import huggingface_hub"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        crate::common::skip_unless_ci(
            "python_tools_find_what_was_fetched",
            &format!("{python} has no huggingface_hub"),
        );
        return;
    }
    let hub = Hub::start();
    let cache = tempfile::tempdir().unwrap();
    fetch(&hub, cache.path(), "acme/open", None).unwrap();
    let script = "import sys; from huggingface_hub import try_to_load_from_cache as t; \
                  print(open(t('acme/open', 'additional_chat_templates/tool_use.jinja', cache_dir=sys.argv[1])).read())";
    let output = std::process::Command::new(&python)
        .args(["-c", script, cache.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim_end(),
        TOOL_TEMPLATE,
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn gated_models_need_an_accepted_token_sent_only_to_the_hub() {
    let hub = Hub::start();
    let cache = tempfile::tempdir().unwrap();
    let err = fetch(&hub, cache.path(), "acme/gated", None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("401") && err.contains("HF_TOKEN"), "{err}");
    let err = fetch(&hub, cache.path(), "acme/gated", Some("hf_wrong"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("403") && err.contains("gated"), "{err}");
    assert!(!err.contains("hf_wrong"));
    fetch(&hub, cache.path(), "acme/gated", Some(GOOD_TOKEN)).unwrap();
    // A redirect to another origin (the CDN) gets no token.
    fetch(&hub, cache.path(), "acme/moved", Some(GOOD_TOKEN)).unwrap();
    let seen = hub.seen.lock().unwrap().clone();
    let cdn: Vec<&Seen> = seen
        .iter()
        .filter(|s| s.path.starts_with("/cdn/"))
        .collect();
    assert_eq!(cdn.len(), 3);
    assert!(cdn.iter().all(|s| !s.authorized), "{cdn:?}");
    let moved = cache.path().join("models--acme--moved/blobs/etag-tool-use");
    assert_eq!(std::fs::read_to_string(moved).unwrap(), TOOL_TEMPLATE);
}

#[test]
fn the_token_goes_with_models_the_user_names_and_with_files_models_only_when_allowed() {
    let hub = Hub::start();
    // (who named the model, files may use the token, is the token sent)
    for (named_by, allowed, sent) in [
        (NamedBy::File, false, false),
        (NamedBy::User, false, true),
        (NamedBy::File, true, true),
    ] {
        let cache = tempfile::tempdir().unwrap();
        let mut settings = hub.settings(cache.path(), Some(GOOD_TOKEN));
        settings.token_for_files = allowed;
        let before = hub.seen.lock().unwrap().len();
        let mut fetch = HubFetch {
            settings,
            progress: &mut |_| {},
        };
        let fetched = fetch.fetch(&ModelId::parse("acme/gated").unwrap(), named_by);
        let seen = hub.seen.lock().unwrap()[before..].to_vec();
        assert!(!seen.is_empty());
        assert!(
            seen.iter().all(|s| s.authorized == sent),
            "{named_by:?}, allowed {allowed}: {seen:?}"
        );
        match fetched {
            Some(Ok(_)) => assert!(sent),
            Some(Err(err)) => {
                assert!(!sent);
                // The gated model is refused, and the message says why and what allows it.
                let err = err.to_string();
                assert!(
                    err.contains("acme/gated@main is named by a file")
                        && err.contains("without your Hugging Face token")
                        && err.contains("(401)")
                        && err.contains("--hub-token-for-fixtures")
                        && err.contains("\"hub_token_for_fixtures\": true"),
                    "{err}"
                );
                assert!(!err.contains(GOOD_TOKEN));
            }
            None => panic!("the Hub fetcher fetches"),
        }
    }
}

#[test]
fn missing_models_revisions_and_templates_are_clear_errors() {
    let hub = Hub::start();
    let cache = tempfile::tempdir().unwrap();
    let err = fetch(&hub, cache.path(), "acme/nothing", None)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("401") && err.contains("does not exist"),
        "{err}"
    );
    let err = fetch(&hub, cache.path(), "acme/open@v9", None)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("revision \"v9\" of acme/open not found") && err.contains("404"),
        "{err}"
    );
    let err = fetch(&hub, cache.path(), "acme/gguf-only", None)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("no chat template files") && err.contains(".gguf"),
        "{err}"
    );
}

#[test]
fn offline_never_connects_and_no_network_says_so() {
    let hub = Hub::start();
    let cache = tempfile::tempdir().unwrap();
    let mut settings = hub.settings(cache.path(), None);
    settings.offline = true;
    let id = ModelId::parse("acme/open").unwrap();
    let err = fetch_templates(&settings, &id, &mut |_| {}).unwrap_err();
    assert!(matches!(err, HubError::Offline { .. }));
    assert!(err.to_string().contains("HF_HUB_OFFLINE is set"));
    assert!(hub.paths().is_empty());

    // A port nothing listens on.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    settings.offline = false;
    settings.endpoint = endpoint.clone();
    let err = fetch_templates(&settings, &id, &mut |_| {})
        .unwrap_err()
        .to_string();
    assert!(err.contains(&format!("cannot reach {endpoint}")), "{err}");
}

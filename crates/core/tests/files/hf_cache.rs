//! Model ids resolved from a local Hugging Face cache that the test builds in the exact
//! `models--ORG--NAME/{refs,snapshots,blobs}` layout, offline.

use crate::hf_support;
use chatplate_core::catalog::hf_cache::{self, CacheError, ModelId};
use chatplate_core::catalog::{self, ModelPlace, NoFetch, Origin};
use hf_support::{fake_cache, MAIN, V1};

fn id(text: &str) -> ModelId {
    ModelId::parse(text).unwrap()
}

#[test]
fn refs_name_the_snapshot_and_a_revision_selects_one() {
    let root = tempfile::tempdir().unwrap();
    fake_cache(root.path());
    let main = hf_cache::snapshot(root.path(), &id("acme/chat")).unwrap();
    assert_eq!(
        (main.revision.as_str(), main.commit.as_str()),
        ("main", MAIN)
    );
    assert!(main
        .dir
        .ends_with(format!("models--acme--chat/snapshots/{MAIN}")));
    let tag = hf_cache::snapshot(root.path(), &id("acme/chat@v1")).unwrap();
    assert_eq!(tag.commit, V1);
    let commit = hf_cache::snapshot(root.path(), &id(&format!("acme/chat@{V1}"))).unwrap();
    assert_eq!((commit.revision.as_str(), commit.commit.as_str()), (V1, V1));
}

#[test]
fn missing_models_revisions_and_snapshots_are_clear_errors() {
    let root = tempfile::tempdir().unwrap();
    fake_cache(root.path());
    let err = hf_cache::snapshot(root.path(), &id("acme/other")).unwrap_err();
    assert!(matches!(err, CacheError::NotCached { .. }));
    assert!(err
        .to_string()
        .contains("acme/other@main is not in the local Hugging Face cache"));
    let err = hf_cache::snapshot(root.path(), &id("acme/chat@v9")).unwrap_err();
    assert!(err.to_string().contains("acme/chat@v9"), "{err}");
    let err = hf_cache::snapshot(root.path(), &id("acme/dangling")).unwrap_err();
    assert!(matches!(err, CacheError::NoSnapshot { .. }), "{err}");
}

#[test]
fn a_cached_model_opens_with_its_templates_and_tokens() {
    let root = tempfile::tempdir().unwrap();
    fake_cache(root.path());
    let snapshot = hf_cache::snapshot(root.path(), &id("acme/chat")).unwrap();
    let set = chatplate_core::catalog::model::load(ModelPlace::Cache(snapshot)).unwrap();
    assert_eq!(set.names(), ["default", "tool_use"]);
    let chosen = set.choose(true).unwrap();
    assert!(chosen.source.starts_with("(main tool_use)"));
    assert_eq!(chosen.eos_token.as_deref(), Some("</s>"));
    assert_eq!(chosen.name, "acme/chat#tool_use");
    let label = chosen.origin_label();
    assert_eq!(
        label,
        "HF cache acme/chat@main 1111111 (additional_chat_templates/tool_use.jinja)"
    );
    let reference = chosen.reference(root.path());
    assert_eq!(
        reference,
        chatplate_core::session::TemplateRef::Model {
            id: "acme/chat".into(),
            revision: Some("main".into()),
            snapshot: Some(MAIN.into()),
            name: None,
        }
    );
}

#[test]
fn cached_models_lists_each_revision_that_has_a_chat_template() {
    let root = tempfile::tempdir().unwrap();
    fake_cache(root.path());
    let models = catalog::cached_models(root.path());
    let found: Vec<String> = models
        .iter()
        .map(|set| {
            let Origin::Model(model) = &set.entries[0].origin else {
                panic!("not a model")
            };
            let snapshot = model.place.snapshot().unwrap();
            format!(
                "{}@{} {}",
                snapshot.id,
                snapshot.revision,
                set.names().join(",")
            )
        })
        .collect();
    assert_eq!(found, ["acme/chat@main default,tool_use", "acme/chat@v1 "]);
    assert!(catalog::cached_models(&root.path().join("absent")).is_empty());
}

#[test]
fn model_ids_that_are_not_cached_are_not_fetched_offline() {
    let err = catalog::open_model(&id("acme/not-cached-anywhere"), &mut NoFetch).unwrap_err();
    assert!(
        err.to_string()
            .contains("not in the local Hugging Face cache"),
        "{err}"
    );
}

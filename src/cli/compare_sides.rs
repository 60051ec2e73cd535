//! What `chatplate compare` sets side by side: the engines' renders of the session's
//! template, and the session's conversation rendered by chatplate with another template
//! (`--template SOURCE`: any source `render --template` takes) or with the session's
//! model at another revision (`--revision REV`: from the Hugging Face cache, or the Hub
//! when the `hub` feature fetches it).

use std::borrow::Borrow;

use anyhow::{bail, Result};

use super::fetching::with_hub;
use super::session_input::open_template;
use chatplate_core::catalog::{self, CachedModel, NamedByFile, TemplateSource};
use chatplate_core::compare::{self, text, Engine, EngineRender, EngineSetup};
use chatplate_core::session::Session;
use chatplate_render::visible;

/// One render as the report shows it.
pub(super) struct Shown {
    /// The render.
    pub(super) render: EngineRender,
    /// How it is headed (`minijinja (minijinja 3.1.0)`, `template chatml (bundled)`).
    pub(super) heading: String,
    /// Its short name beside its excerpt (`minijinja`, `chatml`, `acme/chat@v1`).
    pub(super) name: String,
    /// The template's name.
    pub(super) template: String,
    /// Where the template came from (`bundled`, `HF cache acme/chat@v1 2222222 (...)`).
    pub(super) source: String,
    /// A template or revision rather than an engine.
    pub(super) is_side: bool,
}

impl Borrow<EngineRender> for Shown {
    fn borrow(&self) -> &EngineRender {
        &self.render
    }
}

impl Shown {
    /// An engine's render of the session's own template.
    pub(super) fn engine(render: EngineRender, template: &TemplateSource) -> Self {
        let version = visible::for_terminal(&render.version).into_owned();
        // A server's address belongs in its heading: which llama-server answered.
        let heading = match &render.url {
            Some(url) => format!(
                "{} ({version}, {})",
                render.engine,
                visible::for_terminal(url)
            ),
            None => format!("{} ({version})", render.engine),
        };
        Shown {
            heading,
            name: render.engine.name().to_string(),
            template: template.name.clone(),
            source: template.origin_label(),
            is_side: false,
            render,
        }
    }

    /// The error's text, for [`Shown::side`] to borrow.
    pub(super) fn error_text(&self) -> String {
        self.render
            .result
            .as_ref()
            .err()
            .map(ToString::to_string)
            .unwrap_or_default()
    }

    /// This render as the comparison text takes it; `error` is [`Shown::error_text`].
    pub(super) fn side<'a>(&'a self, error: &'a str) -> text::Side<'a> {
        text::Side {
            heading: &self.heading,
            name: &self.name,
            result: self.render.result.as_deref().map_err(|_| error),
        }
    }
}

/// What `--template` and `--revision` name.
pub(super) struct SideArgs<'a> {
    /// Template sources.
    pub(super) templates: &'a [String],
    /// Revisions of the session's model.
    pub(super) revisions: &'a [String],
}

impl SideArgs<'_> {
    /// Whether any side beside the engines was asked for.
    pub(super) fn any(&self) -> bool {
        !self.templates.is_empty() || !self.revisions.is_empty()
    }
}

/// Each `--template` and `--revision` rendered with chatplate's engine; a source that
/// cannot be opened is bad input (the error says which).
pub(super) fn render_sides(
    args: &SideArgs,
    session: &Session,
    own: &TemplateSource,
    setup: &EngineSetup,
) -> Result<Vec<Shown>> {
    let mut shown = Vec::new();
    for source in args.templates {
        let template = open_side(source, session)?;
        let label = format!("template {}", template.name);
        shown.push(render_side(
            &template,
            session,
            setup,
            label,
            template.name.clone(),
        )?);
    }
    for revision in args.revisions {
        let model = cached_model(own, revision)?;
        // The session named the model: its revisions are fetched as files' models are.
        let set = with_hub(|fetch| model.at(revision, &mut NamedByFile(fetch)))?;
        let template = set.choose(session.tools.is_some())?;
        let label = format!("revision {revision}");
        let name = model.target(revision);
        shown.push(render_side(&template, session, setup, label, name)?);
    }
    Ok(shown)
}

fn open_side(source: &str, session: &Session) -> Result<TemplateSource> {
    let set = open_template(source)?;
    Ok(set.choose(session.tools.is_some())?)
}

fn render_side(
    template: &TemplateSource,
    session: &Session,
    setup: &EngineSetup,
    label: String,
    name: String,
) -> Result<Shown> {
    let conversation = catalog::conversation_for(session, template)?;
    let render = compare::render(Engine::Transformers, &template.source, &conversation, setup);
    let source = template.origin_label();
    Ok(Shown {
        heading: visible::for_terminal(&format!("{label} ({source})")).into_owned(),
        name,
        template: template.name.clone(),
        source,
        is_side: true,
        render,
    })
}

/// The session's model in the Hugging Face cache, for `--revision`: a model id, or a
/// path into a cached snapshot.
fn cached_model(own: &TemplateSource, revision: &str) -> Result<CachedModel> {
    let Some(model) = CachedModel::of(own) else {
        bail!(
            "--revision {revision}: the session's template is not a model from the Hugging Face cache ({}); name another template with --template",
            own.origin_label()
        );
    };
    Ok(model)
}

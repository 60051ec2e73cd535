//! `check --engines`: portability CI for template authors. A fixture that passes its own
//! check is also rendered by other engines (named as `compare` names them), and fails
//! when one of them disagrees with the reference render, with the report `compare`
//! prints ([`crate::compare::text`]).

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Outcome, RenderFailure};
use crate::catalog::{self, TemplateSource};
use crate::compare::{self, text, Bounds, Engine, EngineSetup};
use crate::session::Session;
use chatplate_render::{visible, Limits};

/// Which other engines each fixture must agree with, and how they run.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EngineCheck {
    /// The engines besides the reference (none: no cross-check).
    #[serde(with = "engine_names")]
    pub engines: Vec<Engine>,
    /// The Python with transformers for `python` (else `$CHATPLATE_PYTHON`).
    pub python: Option<PathBuf>,
    /// How long one external render may run; `None` keeps compare's default.
    pub timeout: Option<Duration>,
}

impl EngineCheck {
    /// A check against `engines`, with the default Python and timeout.
    pub fn new(engines: Vec<Engine>) -> Self {
        EngineCheck {
            engines,
            ..EngineCheck::default()
        }
    }

    /// The most time the engines may take on one fixture (for the parent's patience).
    pub(crate) fn time_needed(&self) -> Duration {
        let each = self.timeout.unwrap_or(Bounds::default().timeout);
        each.saturating_mul(u32::try_from(self.engines.len()).unwrap_or(u32::MAX))
    }

    fn setup(&self, limits: Limits) -> EngineSetup {
        let mut setup = EngineSetup::default();
        if self.python.is_some() {
            setup.python = self.python.clone();
        }
        if let Some(timeout) = self.timeout {
            setup.bounds = setup.bounds.with_timeout(timeout);
        }
        setup.limits = limits;
        setup
    }
}

/// One engine's render of a fixture, as a failing case keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EngineOutcome {
    /// The engine's name.
    pub engine: String,
    /// Its version.
    pub version: String,
    /// Its prompt, or its error's message.
    pub result: Result<String, String>,
}

impl EngineOutcome {
    fn heading(&self) -> String {
        format!("{} ({})", self.engine, self.version)
    }
}

/// The reference render against each engine; `None` when every one agrees.
pub(crate) fn cross_check(
    engines: &EngineCheck,
    session: &Session,
    template: &TemplateSource,
    reference: &Result<String, RenderFailure>,
    limits: Limits,
) -> Option<Outcome> {
    if engines.engines.is_empty() {
        return None;
    }
    let conversation = catalog::conversation_for(session, template).ok()?;
    let setup = engines.setup(limits);
    let reference = reference.clone().map_err(|failure| failure.summary);
    let renders: Vec<EngineOutcome> = engines
        .engines
        .iter()
        .map(|&engine| {
            let render = compare::render(engine, &template.source, &conversation, &setup);
            EngineOutcome {
                engine: engine.name().to_string(),
                version: render.version,
                result: render.result.map_err(|err| err.to_string()),
            }
        })
        .collect();
    let agree = |render: &EngineOutcome| match (&reference, &render.result) {
        (Ok(want), Ok(got)) => want == got,
        (Err(_), Err(_)) => true,
        _ => false,
    };
    (!renders.iter().all(agree)).then_some(Outcome::EnginesDisagree { reference, renders })
}

/// The report of a fixture whose engines disagree: each engine against the reference,
/// as `compare` prints it.
pub(crate) fn report(
    reference: &Result<String, String>,
    renders: &[EngineOutcome],
    color: bool,
) -> String {
    let name = Engine::Transformers.name();
    let reference_side = text::Side {
        heading: name,
        name,
        result: reference.as_deref().map_err(String::as_str),
    };
    let mut out = String::new();
    let mut differ = 0;
    for render in renders {
        let heading = render.heading();
        let side = text::Side {
            heading: &heading,
            name: &render.engine,
            result: render.result.as_deref().map_err(String::as_str),
        };
        let (lines, same) = text::versus(&reference_side, &side, color);
        differ += usize::from(!same);
        out.push_str(&lines);
    }
    format!(
        "{differ} of {} engines disagree with {name}: {}\n{out}",
        renders.len(),
        visible::message(&text::summary(reference.as_deref().map_err(String::as_str)))
    )
}

/// The fields a fixture might use to name an engine or a program to run.
const ENGINE_FIELDS: [&str; 4] = ["engine", "program", "command", "cmd"];

/// A fixture's load error, with why a fixture that tries to name an engine or a program
/// is refused: running a program is the user's choice (the command line, their config
/// file), never a file's, so checking a stranger's fixtures runs nothing of theirs.
pub(crate) fn refused(message: String) -> String {
    let names_engine = ENGINE_FIELDS
        .iter()
        .any(|field| message.contains(&format!("unknown field `{field}")));
    if names_engine {
        format!(
            "{message}\n  a fixture cannot name an engine or a program to run: name engines \
             with `check --engines` or in your config file's \"engines\""
        )
    } else {
        message
    }
}

/// Engines travel to the checking children by name (a plug-in with its command).
mod engine_names {
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    use crate::compare::Engine;

    pub(super) fn serialize<S: Serializer>(engines: &[Engine], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(engines.iter().map(|engine| engine.spec()))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Engine>, D::Error> {
        Vec::<String>::deserialize(d)?
            .iter()
            .map(|name| Engine::from_spec(name).ok_or_else(|| D::Error::custom(name)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::TemplateRef;

    fn check(template: &str, engines: &[Engine]) -> Option<Outcome> {
        let session = Session::new(TemplateRef::Source(template.into()));
        let source = TemplateSource::new("t", template, catalog::Origin::Inline);
        let limits = Limits::default();
        let reference = super::super::render_with(&session, &source, limits);
        cross_check(
            &EngineCheck::new(engines.to_vec()),
            &session,
            &source,
            &reference,
            limits,
        )
    }

    #[test]
    fn agreeing_engines_pass_and_a_disagreeing_one_is_reported_as_compare_does() {
        assert_eq!(
            check("{{ messages[0].content }}", &[Engine::MiniJinja]),
            None
        );
        // Bare MiniJinja's tojson escapes ' where Python's json.dumps keeps it.
        let outcome = check("{{ \"it's\" | tojson }}", &[Engine::MiniJinja]);
        let Some(Outcome::EnginesDisagree { reference, renders }) = outcome else {
            panic!("{outcome:?}");
        };
        assert_eq!(reference.as_deref(), Ok("\"it's\""));
        let text = report(&reference, &renders, false);
        assert!(
            text.starts_with("1 of 1 engines disagree with transformers: 6 bytes\n"),
            "{text}"
        );
        assert!(text.contains(": differs at byte 3 (line 1:4)\n"), "{text}");
    }

    #[test]
    fn engines_travel_by_name() {
        let options = EngineCheck::new(vec![Engine::MiniJinja, Engine::HfJinja]);
        let json = serde_json::to_string(&options).unwrap();
        assert!(json.contains(r#"["minijinja","hf-jinja"]"#), "{json}");
        assert_eq!(serde_json::from_str::<EngineCheck>(&json).unwrap(), options);
    }
}

//! One template under lint: compiled once, its capabilities probed once, its tokens
//! read once, and every probe render kept, so rules that look at the same conversation
//! (the crash check, the markers, the stability check) render it once between them.

use std::cell::RefCell;
use std::collections::HashMap;

use serde_json::{json, Value as Json};

use super::surroundings::Surroundings;
use super::syntax::Scan;
use crate::inspect::{
    template_variables, Cancelled, Capabilities, Maker, Probe, ProbeSettings, Prober,
};
use chatplate_render::{CancelToken, CompiledTemplate, RenderError, TrackedRender};

/// A render's outcome: the prompt or the template's error; the outer `Err` of the
/// functions returning it means the lint was cancelled.
pub(crate) type Rendered = Result<String, RenderError>;

/// Everything the rules share about one template.
pub(crate) struct Lab<'a> {
    /// The compiled template.
    pub(crate) template: &'a CompiledTemplate,
    /// What is known around it (tokenizer, response_template, GGUF's model).
    pub(crate) surroundings: &'a Surroundings,
    /// The variables every probe gets.
    pub(crate) settings: &'a ProbeSettings,
    /// Renders probes, remembering failures.
    pub(crate) prober: Prober<'a>,
    /// What the probes found it can render.
    pub(crate) caps: Capabilities,
    /// Its tokens, for lines.
    pub(crate) scan: Scan<'a>,
    /// Stops the renders.
    pub(crate) cancel: &'a CancelToken,
    cache: RefCell<HashMap<String, Rendered>>,
}

impl<'a> Lab<'a> {
    /// Probes `template`'s capabilities (the answers every rule starts from).
    pub(crate) fn new(
        template: &'a CompiledTemplate,
        surroundings: &'a Surroundings,
        settings: &'a ProbeSettings,
        cancel: &'a CancelToken,
    ) -> Result<Self, Cancelled> {
        let prober = Prober::new(template, settings, cancel);
        let names: Vec<String> = template_variables(template)
            .into_iter()
            .map(|v| v.name)
            .collect();
        let caps = Capabilities::detect(&prober, &names)?;
        Ok(Lab {
            template,
            surroundings,
            settings,
            prober,
            caps,
            scan: Scan::of(template.source()),
            cancel,
            cache: RefCell::new(HashMap::new()),
        })
    }

    /// Renders `probe`, once per distinct input.
    pub(crate) fn render(&self, probe: &Probe) -> Result<Rendered, Cancelled> {
        let key = key(probe);
        if let Some(found) = self.cache.borrow().get(&key) {
            return Ok(found.clone());
        }
        let rendered = self.prober.render(probe)?;
        self.cache.borrow_mut().insert(key, rendered.clone());
        Ok(rendered)
    }

    /// Renders `probe` recording its `{% generation %}` spans.
    pub(crate) fn tracked(
        &self,
        probe: &Probe,
    ) -> Result<Result<TrackedRender, RenderError>, Cancelled> {
        self.prober.render_tracked(probe)
    }

    /// A message of `role` with `text`, shaped as the template wants content.
    pub(crate) fn message(&self, role: &str, text: &str) -> Json {
        self.caps.content.message(role, text)
    }

    /// A tool result answering the probe call.
    pub(crate) fn tool_result(&self, text: &str) -> Json {
        let mut result = self.message("tool", text);
        result["tool_call_id"] = json!(crate::inspect::CALL_ID);
        result["name"] = json!(CALL_NAME);
        result
    }

    /// An assistant message with the probe call (`count` calls for parallel ones).
    pub(crate) fn calls(&self, count: usize) -> Json {
        let ids = [crate::inspect::CALL_ID, "CallIdA02"];
        let names = [CALL_NAME, "probe_call_two"];
        let calls = (0..count.min(2))
            .map(|i| self.caps.tools.call(ids[i], names[i]))
            .collect();
        crate::inspect::call_message(&self.caps.content, calls)
    }

    /// Builds assistant turns with reasoning in the template's own form.
    pub(crate) fn maker(&self) -> Maker<'_> {
        Maker::new(&self.caps.content, &self.caps.tools, &self.caps.reasoning)
    }

    /// The template's `bos_token`, when it has a non-empty one.
    pub(crate) fn bos(&self) -> Option<&str> {
        self.token("bos_token")
    }

    /// The template's `eos_token`, when it has a non-empty one.
    pub(crate) fn eos(&self) -> Option<&str> {
        self.token("eos_token")
    }

    fn token(&self, name: &str) -> Option<&str> {
        (self.settings.variables.get(name))
            .and_then(Json::as_str)
            .filter(|t| !t.is_empty())
    }
}

/// The name of the probe tool call.
pub(crate) const CALL_NAME: &str = "probe_call_one";

/// What identifies a probe's input.
fn key(probe: &Probe) -> String {
    json!([
        probe.messages,
        probe.tools,
        probe.add_generation_prompt,
        probe.variables,
        probe.clock.map(|c| c.to_string()),
    ])
    .to_string()
}

//! The `llama.cpp` engine: a running llama-server's `POST /apply-template`, which renders
//! the chat template with llama.cpp's own Jinja engine and its own message handling and
//! returns the prompt without generating anything. The server's `GET /props` gives its
//! build (`build_info`, the engine's version) and the template it loaded, which is
//! compared with the session's: llama-server renders its own template, not ours
//! ([`loaded_template`]).
//!
//! The request carries what `/apply-template` accepts (tools/server/server-common.cpp,
//! `oaicompat_chat_params_parse`): `messages`, `tools`, `add_generation_prompt`,
//! `continue_final_message`, and `chat_template_kwargs`, whose entries become template
//! variables and override the server's own (`bos_token`, `eos_token`): the session's
//! variables and its `documents` go there. The fixed clock cannot be sent: llama.cpp's
//! `strftime_now` reads the server's clock.

use chatplate_render::remedy::{means, Knob};
use chatplate_render::{effective_messages, visible, Conversation};
use serde_json::{json, Map, Value as Json};

use super::http::{self, Endpoint, HttpError, Response};
use super::loaded_template;
use super::{Engine, EngineError, EngineRender, EngineSetup};

/// Longest version (the server's `build_info`) kept, in characters.
const MAX_VERSION_CHARS: usize = 100;

/// How to start a llama-server for the engine (its flags are llama-server's own).
fn how() -> String {
    format!(
        "start one with the session's template, e.g. \
         `llama-server -m MODEL.gguf --chat-template-file TEMPLATE.jinja --port 8080` \
         (scripts/build_llama_server.sh builds it from source), \
         and name it with {} http://127.0.0.1:8080",
        means(Knob::LlamaServer)
    )
}

/// Checks a llama-server URL as `--engine` takes it (`http://host[:port][/base]`).
pub fn check_server_url(url: &str) -> Result<(), String> {
    Endpoint::parse(url).map(|_| ())
}

/// Renders with the llama-server at `setup.llama_server`.
pub(super) fn render(
    template: &str,
    conversation: &Conversation,
    setup: &EngineSetup,
) -> EngineRender {
    let Some(url) = setup.llama_server.clone() else {
        return failed(
            None,
            not_available("no llama-server URL given".into()),
            "not connected",
        );
    };
    let endpoint = match Endpoint::parse(&url) {
        Ok(endpoint) => endpoint,
        Err(err) => return failed(Some(url), EngineError::Failed(err), "unknown"),
    };
    let limits = http::Limits {
        timeout: setup.bounds.timeout,
        max_response: setup.bounds.max_output,
    };
    let props = match http::request(&endpoint, "GET", "/props", None, limits) {
        Ok(response) => json_body(&response),
        Err(HttpError::Unreachable(why)) => {
            let reason = format!("cannot reach llama-server at {url}: {why}");
            return failed(Some(url), not_available(reason), "not connected");
        }
        Err(err) => return failed(Some(url), http_error(err), "unknown"),
    };
    let version = props
        .as_ref()
        .and_then(|props| props.get("build_info"))
        .and_then(Json::as_str)
        .map_or_else(
            || "unknown".into(),
            |v| visible::cut(v, MAX_VERSION_CHARS).into_owned(),
        );
    let body = request_body(conversation).to_string();
    let result = http::request(
        &endpoint,
        "POST",
        "/apply-template",
        Some(body.as_bytes()),
        limits,
    )
    .map_err(http_error)
    .and_then(|response| prompt(&response));
    let loaded = props
        .as_ref()
        .and_then(|props| props.get("chat_template"))
        .and_then(Json::as_str);
    EngineRender {
        engine: Engine::LlamaCpp,
        version,
        result,
        url: Some(url),
        note: loaded.and_then(|loaded| loaded_template::note(template, loaded)),
        tokens: None,
    }
}

fn failed(url: Option<String>, error: EngineError, version: &str) -> EngineRender {
    EngineRender {
        engine: Engine::LlamaCpp,
        version: version.into(),
        result: Err(error),
        url,
        note: None,
        tokens: None,
    }
}

fn not_available(reason: String) -> EngineError {
    EngineError::NotInstalled {
        engine: Engine::LlamaCpp.name(),
        reason,
        how: how(),
    }
}

fn http_error(err: HttpError) -> EngineError {
    match err {
        HttpError::TimedOut => EngineError::Failed("llama-server did not answer in time".into()),
        HttpError::TooLarge(cap) => EngineError::TooLarge(cap),
        HttpError::Unreachable(why) | HttpError::Protocol(why) => {
            EngineError::Failed(format!("llama-server: {why}"))
        }
    }
}

fn json_body(response: &Response) -> Option<Json> {
    serde_json::from_slice(&response.body).ok()
}

/// The `/apply-template` body: the same inputs the other engines get, in llama-server's
/// terms.
pub(super) fn request_body(conversation: &Conversation) -> Json {
    let mut kwargs: Map<String, Json> = conversation.variables.clone();
    if let Some(documents) = &conversation.documents {
        kwargs.insert("documents".into(), json!(documents));
    }
    let mut body = json!({
        "messages": effective_messages(&conversation.messages),
        "add_generation_prompt": conversation.add_generation_prompt,
        "chat_template_kwargs": kwargs,
    });
    if let Some(tools) = &conversation.tools {
        body["tools"] = json!(tools);
    }
    if let Some(field) = conversation.continue_final_message.field() {
        body["continue_final_message"] = json!(field);
    }
    body
}

/// The prompt of an `/apply-template` answer, or the server's error message.
fn prompt(response: &Response) -> Result<String, EngineError> {
    let answer = json_body(response);
    if let Some(prompt) = answer
        .as_ref()
        .and_then(|a| a.get("prompt"))
        .and_then(Json::as_str)
    {
        if response.status == 200 {
            return Ok(prompt.to_string());
        }
    }
    // llama-server's errors: {"error": {"code", "message", "type"}}.
    let message = answer
        .as_ref()
        .and_then(|a| a.pointer("/error/message"))
        .and_then(Json::as_str)
        .map(str::to_string);
    match message {
        Some(message) => Err(EngineError::Render(
            visible::cut(&message, visible::MAX_MESSAGE_CHARS).into_owned(),
        )),
        None => Err(EngineError::Failed(format!(
            "llama-server answered {} without a prompt: {}",
            response.status,
            String::from_utf8_lossy(&response.body[..response.body.len().min(200)])
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chatplate_render::ContinueFinal;

    #[test]
    fn the_body_carries_the_inputs_in_llama_servers_terms() {
        let mut variables = Map::new();
        variables.insert("bos_token".into(), json!("<s>"));
        let conversation = Conversation::new(vec![json!({"role": "user", "content": "Hi"})])
            .with_tools(Some(vec![json!({"type": "function"})]))
            .with_documents(Some(vec![json!({"title": "t"})]))
            .with_generation_prompt(false)
            .with_continue_final(ContinueFinal::content())
            .with_variables(variables);
        let body = request_body(&conversation);
        assert_eq!(body["add_generation_prompt"], json!(false));
        assert_eq!(body["continue_final_message"], json!("content"));
        assert_eq!(body["tools"], json!([{"type": "function"}]));
        assert_eq!(body["chat_template_kwargs"]["bos_token"], json!("<s>"));
        assert_eq!(
            body["chat_template_kwargs"]["documents"],
            json!([{"title": "t"}])
        );
        assert_eq!(body["messages"][0]["content"], json!("Hi"));
    }

    #[test]
    fn server_errors_become_render_errors() {
        let response = Response {
            status: 500,
            body:
                br#"{"error":{"code":500,"message":"Unknown method: foo","type":"server_error"}}"#
                    .to_vec(),
        };
        assert_eq!(
            prompt(&response),
            Err(EngineError::Render("Unknown method: foo".into()))
        );
        let ok = Response {
            status: 200,
            body: br#"{"prompt":"<s>hi"}"#.to_vec(),
        };
        assert_eq!(prompt(&ok), Ok("<s>hi".into()));
    }
}

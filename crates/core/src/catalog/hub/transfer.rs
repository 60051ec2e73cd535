//! The Hub's HTTP protocol, as `huggingface_hub` speaks it: the revision's file list from
//! `GET /api/models/{repo}/revision/{revision}`, then each file from
//! `GET /{repo}/resolve/{commit}/{file}`, whose `X-Linked-Etag`/`ETag` names the blob.
//! Redirects are followed by hand so the token only goes to the Hub's own origin.

use std::time::Duration;

use serde_json::Value as Json;
use ureq::http::Response;
use ureq::Body;

use super::super::hf_cache::{is_commit, ModelId};
use super::super::Snapshot;
use super::{is_template_file, store, FetchEvent, HubError, HubSettings};

/// Largest file accepted (a tokenizer config with a big vocabulary is a few MB).
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// Redirects followed per file.
const MAX_REDIRECTS: usize = 5;

/// Fetches the template files of `id` into the cache.
pub(crate) fn fetch(
    settings: &HubSettings,
    id: &ModelId,
    progress: &mut dyn FnMut(&FetchEvent),
) -> Result<Snapshot, HubError> {
    if !id.is_valid() {
        return Err(HubError::NotFound {
            what: format!("{id:?} (not a valid model id and revision)"),
            endpoint: settings.endpoint.clone(),
        });
    }
    let client = Client::new(settings);
    progress(&FetchEvent::Resolving {
        id: id.clone(),
        endpoint: settings.endpoint.clone(),
    });
    let (commit, files) = client.revision(id)?;
    if !files
        .iter()
        .any(|f| f != super::model::SPECIAL_TOKENS_MAP && f != super::model::PROCESSOR_CONFIG)
    {
        return Err(HubError::NoTemplate {
            id: id.clone(),
            hint: no_template_hint(&files),
        });
    }
    for file in &files {
        let (etag, bytes) = client.file(id, &commit, file)?;
        store::store(&settings.cache, id, &commit, file, &etag, &bytes)?;
        progress(&FetchEvent::Fetched {
            file: file.clone(),
            bytes: bytes.len() as u64,
        });
    }
    let snapshot = store::snapshot(&settings.cache, id, &commit);
    progress(&FetchEvent::Done(snapshot.clone()));
    Ok(snapshot)
}

fn no_template_hint(files: &[String]) -> String {
    if files.is_empty() {
        "no tokenizer_config.json, chat_template.jinja, chat_template.json or additional_chat_templates/; a GGUF repository? download the .gguf and open it".into()
    } else {
        "only special tokens and processor settings, no template".into()
    }
}

struct Client<'a> {
    settings: &'a HubSettings,
    agent: ureq::Agent,
}

impl<'a> Client<'a> {
    fn new(settings: &'a HubSettings) -> Self {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_connect(Some(Duration::from_secs(10)))
            .timeout_global(Some(Duration::from_secs(60)))
            .user_agent(concat!("chatplate/", env!("CARGO_PKG_VERSION")))
            .build();
        Client {
            settings,
            agent: config.into(),
        }
    }

    /// The commit `id`'s revision points at, and its template files.
    fn revision(&self, id: &ModelId) -> Result<(String, Vec<String>), HubError> {
        let url = format!(
            "{}/api/models/{}/revision/{}",
            self.settings.endpoint,
            id.repo,
            encode(id.revision(), false)
        );
        let (_, body) = self.get(&url, id, &format!("{id}"))?;
        let info: Json = serde_json::from_slice(&body).map_err(|err| bad(&url, err))?;
        let commit = info["sha"].as_str().unwrap_or_default().to_string();
        if !is_commit(&commit) {
            return Err(bad(&url, "no commit hash (\"sha\") in the answer"));
        }
        let files = info["siblings"]
            .as_array()
            .map(|list| list.iter().filter_map(|s| s["rfilename"].as_str()))
            .into_iter()
            .flatten()
            .filter(|f| is_template_file(f))
            .map(String::from)
            .collect();
        Ok((commit, files))
    }

    /// One file's blob name (its etag) and bytes.
    fn file(&self, id: &ModelId, commit: &str, file: &str) -> Result<(String, Vec<u8>), HubError> {
        let url = format!(
            "{}/{}/resolve/{commit}/{}",
            self.settings.endpoint,
            id.repo,
            encode(file, true)
        );
        let (response, body) = self.get(&url, id, &format!("{file} of {id}"))?;
        let header = |name: &str| {
            let value = response.headers().get(name)?.to_str().ok()?;
            Some(value.trim_start_matches("W/").trim_matches('"').to_string())
        };
        let etag = header("x-linked-etag").or_else(|| header("etag"));
        Ok((etag.unwrap_or_default(), body))
    }

    /// GET with the token (on the Hub's own origin only), following redirects; the first
    /// response (whose headers describe the file) and the final body.
    fn get(
        &self,
        url: &str,
        id: &ModelId,
        what: &str,
    ) -> Result<(Response<()>, Vec<u8>), HubError> {
        let mut current = url.to_string();
        let mut first: Option<Response<()>> = None;
        for _ in 0..=MAX_REDIRECTS {
            let mut response = self.send(&current)?;
            let status = response.status().as_u16();
            let head = strip_body(&response);
            if (300..400).contains(&status) {
                let location = head.headers().get("location").and_then(|v| v.to_str().ok());
                let Some(location) = location else {
                    return Err(bad(
                        &current,
                        format!("redirect {status} without a location"),
                    ));
                };
                current = self.absolute(location);
                first.get_or_insert(head);
                continue;
            }
            if status != 200 {
                return Err(self.status_error(status, &head, id, what));
            }
            let body = response
                .body_mut()
                .with_config()
                .limit(MAX_FILE_BYTES)
                .read_to_vec()
                .map_err(|err| bad(&current, err))?;
            return Ok((first.unwrap_or(head), body));
        }
        Err(bad(url, "too many redirects"))
    }

    fn send(&self, url: &str) -> Result<Response<Body>, HubError> {
        let mut request = self.agent.get(url);
        if let Some(token) = self
            .settings
            .token
            .as_ref()
            .filter(|_| self.same_origin(url))
        {
            request = request.header("Authorization", format!("Bearer {}", token.secret()));
        }
        request.call().map_err(|err| HubError::Network {
            endpoint: self.settings.endpoint.clone(),
            message: err.to_string(),
        })
    }

    fn same_origin(&self, url: &str) -> bool {
        let origin = origin(&self.settings.endpoint);
        url.starts_with(origin) && url[origin.len()..].starts_with(['/', '?'])
    }

    fn absolute(&self, location: &str) -> String {
        if location.starts_with('/') {
            format!("{}{location}", origin(&self.settings.endpoint))
        } else {
            location.to_string()
        }
    }

    fn status_error(&self, status: u16, head: &Response<()>, id: &ModelId, what: &str) -> HubError {
        let code = head
            .headers()
            .get("x-error-code")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        match (status, code) {
            (403, _) => HubError::Forbidden { id: id.clone() },
            (401, _) => HubError::Unauthorized {
                id: id.clone(),
                hint: match (&self.settings.token, code) {
                    (None, "GatedRepo") => "the model is gated: set HF_TOKEN (or log in with `hf auth login`) for an account that has access".into(),
                    (None, _) => "the model is private or gated, or does not exist; set HF_TOKEN or log in with `hf auth login`".into(),
                    (Some(_), _) => "the token (HF_TOKEN or the token file) was not accepted, or the model does not exist".into(),
                },
            },
            (404, "RevisionNotFound") => HubError::NotFound {
                what: format!("revision {:?} of {}", id.revision(), id.repo),
                endpoint: self.settings.endpoint.clone(),
            },
            (404, _) => HubError::NotFound {
                what: what.to_string(),
                endpoint: self.settings.endpoint.clone(),
            },
            _ => bad(what, format!("HTTP {status}")),
        }
    }
}

/// The response's status and headers, without its body.
fn strip_body(response: &Response<Body>) -> Response<()> {
    let mut head = Response::new(());
    *head.status_mut() = response.status();
    *head.headers_mut() = response.headers().clone();
    head
}

/// `scheme://host[:port]` of a URL.
fn origin(url: &str) -> &str {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    match url[after_scheme..].find('/') {
        Some(slash) => &url[..after_scheme + slash],
        None => url,
    }
}

/// Percent-encodes all but unreserved characters (and `/` when `keep_slash`), as
/// `urllib.parse.quote` does for the Hub's URLs.
fn encode(text: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        let unreserved = byte.is_ascii_alphanumeric() || b"-._~".contains(&byte);
        if unreserved || (keep_slash && byte == b'/') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

fn bad(url: &str, message: impl std::fmt::Display) -> HubError {
    HubError::BadResponse {
        url: url.to_string(),
        message: message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_encoded_like_huggingface_hub() {
        assert_eq!(encode("refs/pr/1", false), "refs%2Fpr%2F1");
        assert_eq!(
            encode("additional_chat_templates/a b.jinja", true),
            "additional_chat_templates/a%20b.jinja"
        );
        assert_eq!(origin("https://hf.co/api/x"), "https://hf.co");
        assert_eq!(origin("http://127.0.0.1:8/"), "http://127.0.0.1:8");
    }
}

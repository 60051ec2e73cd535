//! The `llama.cpp` engine's HTTP requests, through `ureq` (the Hub client's HTTP crate):
//! plain `http://` to a llama-server the user runs (usually on localhost or through an SSH
//! tunnel). Every request has one deadline for connecting, writing and reading, and the
//! response body is cut at a size cap, so a stuck or hostile server cannot hold chatplate
//! or fill its memory. Redirects are not followed and proxies from the environment are not
//! used: the URL the user named is the server asked.

use std::time::Duration;

/// A server's address, from an `http://host:port[/base]` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Endpoint {
    host: String,
    port: u16,
    /// The URL's path without its trailing `/` (empty for the root).
    base: String,
}

impl Endpoint {
    /// Parses `url`; only `http://` is supported (llama-server speaks plain HTTP unless
    /// built with TLS, and a tunnel is the way to reach a remote one).
    pub(super) fn parse(url: &str) -> Result<Endpoint, String> {
        let Some(rest) = url.strip_prefix("http://") else {
            return Err(format!(
                "{url:?} is not an http:// URL (only plain http:// is supported; \
                 reach a remote server through an SSH tunnel)"
            ));
        };
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) if !host.is_empty() && !port.contains(']') => {
                let port = port
                    .parse::<u16>()
                    .map_err(|_| format!("{url:?}: the port {port:?} is not a number"))?;
                (host, port)
            }
            _ => (authority, 80),
        };
        if host.is_empty() || host.contains(['@', '?', '#', ' ']) {
            return Err(format!("{url:?}: no host name to connect to"));
        }
        Ok(Endpoint {
            host: host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string(),
            port,
            base: path.trim_end_matches('/').to_string(),
        })
    }

    /// The URL of `path` on this server.
    fn url(&self, path: &str) -> String {
        format!("http://{}{}{path}", self.authority(), self.base)
    }

    /// `host:port`, the host in brackets when it is an IPv6 address.
    fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// One answer: its status and body.
#[derive(Debug)]
pub(super) struct Response {
    pub(super) status: u16,
    pub(super) body: Vec<u8>,
}

/// Why a request got no answer.
#[derive(Debug)]
pub(super) enum HttpError {
    /// Nothing accepted the connection (no server there).
    Unreachable(String),
    /// The deadline passed.
    TimedOut,
    /// The answer was longer than allowed.
    TooLarge(usize),
    /// The connection broke, or the answer was not HTTP.
    Protocol(String),
}

/// How far one request may go.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    pub(super) timeout: Duration,
    pub(super) max_response: usize,
}

/// `method path` on `endpoint` with an optional JSON `body`, within `limits`.
pub(super) fn request(
    endpoint: &Endpoint,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
    limits: Limits,
) -> Result<Response, HttpError> {
    let agent = agent(limits.timeout);
    let url = endpoint.url(path);
    let answer = match (method, body) {
        ("POST", Some(body)) => agent
            .post(&url)
            .header("Accept", "application/json")
            .header("Content-Type", "application/json")
            .send(body),
        _ => agent.get(&url).header("Accept", "application/json").call(),
    };
    let mut answer = answer.map_err(|err| http_error(err, endpoint, limits))?;
    let status = answer.status().as_u16();
    let body = answer
        .body_mut()
        .with_config()
        .limit(limits.max_response as u64)
        .read_to_vec()
        .map_err(|err| http_error(err, endpoint, limits))?;
    Ok(Response { status, body })
}

/// A client for one render's requests: statuses are answers (llama-server words its
/// errors in the body), `timeout` bounds each whole request, nothing is redirected and
/// no proxy stands between chatplate and the server.
fn agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .proxy(None)
        .timeout_global(Some(timeout))
        .user_agent(concat!("chatplate/", env!("CARGO_PKG_VERSION")))
        .build()
        .into()
}

/// `ureq`'s error in the terms the engine reports.
fn http_error(err: ureq::Error, endpoint: &Endpoint, limits: Limits) -> HttpError {
    match err {
        ureq::Error::Timeout(_) => HttpError::TimedOut,
        ureq::Error::BodyExceedsLimit(_) => HttpError::TooLarge(limits.max_response),
        ureq::Error::HostNotFound => {
            HttpError::Unreachable(format!("cannot resolve {}", endpoint.host))
        }
        ureq::Error::ConnectionFailed => {
            HttpError::Unreachable(format!("cannot connect to {}", endpoint.authority()))
        }
        ureq::Error::Io(err) => io_error(err),
        other => HttpError::Protocol(other.to_string()),
    }
}

/// An I/O error: nothing listening is unreachable (the server is not running), a
/// timeout is the deadline, anything else a broken exchange.
fn io_error(err: std::io::Error) -> HttpError {
    use std::io::ErrorKind;
    match err.kind() {
        ErrorKind::TimedOut | ErrorKind::WouldBlock => HttpError::TimedOut,
        ErrorKind::ConnectionRefused
        | ErrorKind::AddrNotAvailable
        | ErrorKind::HostUnreachable
        | ErrorKind::NetworkUnreachable => HttpError::Unreachable(err.to_string()),
        _ => HttpError::Protocol(err.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::time::Instant;

    #[test]
    fn urls_give_host_port_and_base() {
        let endpoint = Endpoint::parse("http://127.0.0.1:8080").unwrap();
        assert_eq!((endpoint.host.as_str(), endpoint.port), ("127.0.0.1", 8080));
        assert_eq!(endpoint.base, "");
        let endpoint = Endpoint::parse("http://example.org/llama/").unwrap();
        assert_eq!((endpoint.port, endpoint.base.as_str()), (80, "/llama"));
        let endpoint = Endpoint::parse("http://[::1]:9000").unwrap();
        assert_eq!((endpoint.host.as_str(), endpoint.port), ("::1", 9000));
        assert_eq!(endpoint.authority(), "[::1]:9000");
        assert!(Endpoint::parse("https://example.org").is_err());
        assert!(Endpoint::parse("http://host:port").is_err());
        assert!(Endpoint::parse("http://").is_err());
    }

    /// A local listener that answers every connection with `answer` (or, when `None`,
    /// reads and never answers): the client's own bounds under test, not an engine.
    fn listener(answer: Option<Vec<u8>>) -> Endpoint {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for mut stream in listener.incoming().flatten() {
                let mut request = [0u8; 1024];
                let _ = stream.read(&mut request);
                match &answer {
                    Some(answer) => drop(stream.write_all(answer)),
                    None => std::thread::sleep(Duration::from_secs(5)),
                }
            }
        });
        Endpoint::parse(&format!("http://127.0.0.1:{port}")).unwrap()
    }

    #[test]
    fn a_long_answer_is_cut_and_a_silent_server_times_out() {
        let limits = Limits {
            timeout: Duration::from_millis(300),
            max_response: 1024,
        };
        let mut long = b"HTTP/1.1 200 OK\r\n\r\n".to_vec();
        long.extend(std::iter::repeat_n(b'x', 4096));
        let endpoint = listener(Some(long));
        let result = request(&endpoint, "GET", "/props", None, limits);
        assert!(
            matches!(result, Err(HttpError::TooLarge(1024))),
            "{result:?}"
        );
        let short = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}".to_vec();
        let endpoint = listener(Some(short));
        let answer = request(&endpoint, "POST", "/apply-template", Some(b"{}"), limits).unwrap();
        assert_eq!((answer.status, answer.body.as_slice()), (200, &b"{}"[..]));
        let started = Instant::now();
        let result = request(&listener(None), "GET", "/props", None, limits);
        assert!(matches!(result, Err(HttpError::TimedOut)), "{result:?}");
        assert!(started.elapsed() < Duration::from_secs(3));
    }

    #[test]
    fn responses_are_read_by_length_chunks_or_to_the_end() {
        let limits = Limits {
            timeout: Duration::from_secs(5),
            max_response: 1024,
        };
        let answer = |raw: &[u8]| {
            let endpoint = listener(Some(raw.to_vec()));
            request(&endpoint, "GET", "/props", None, limits)
        };
        let sized = answer(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhiXX").unwrap();
        assert_eq!((sized.status, sized.body.as_slice()), (200, &b"hi"[..]));
        let chunked = answer(
            b"HTTP/1.1 400 Bad\r\nTransfer-Encoding: chunked\r\n\r\n3;x\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
        )
        .unwrap();
        assert_eq!(
            (chunked.status, chunked.body.as_slice()),
            (400, &b"abcde"[..])
        );
        let open = answer(b"HTTP/1.0 500 E\r\n\r\nall").unwrap();
        assert_eq!(open.body, b"all");
        assert!(answer(b"SSH-2.0-OpenSSH\r\n\r\n").is_err());
    }

    #[test]
    fn nothing_listening_is_unreachable() {
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap().port()
        };
        let endpoint = Endpoint::parse(&format!("http://127.0.0.1:{port}")).unwrap();
        let limits = Limits {
            timeout: Duration::from_secs(5),
            max_response: 1024,
        };
        let result = request(&endpoint, "GET", "/props", None, limits);
        assert!(
            matches!(result, Err(HttpError::Unreachable(_))),
            "{result:?}"
        );
    }
}

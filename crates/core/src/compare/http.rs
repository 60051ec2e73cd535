//! A small, bounded HTTP/1.1 client over `std::net` for the `llama.cpp` engine: plain
//! `http://` to a llama-server the user runs (usually on localhost or through an SSH
//! tunnel), one request per connection (`Connection: close`). Every request has one
//! deadline for connecting, writing and reading, and the response is cut at a size cap,
//! so a stuck or hostile server cannot hold chatplate or fill its memory.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

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

    /// The `Host` header's value.
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
    let deadline = Instant::now() + limits.timeout;
    let mut stream = connect(endpoint, deadline)?;
    let mut head = format!(
        "{method} {}{path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nAccept: application/json\r\n",
        endpoint.base,
        endpoint.authority()
    );
    if let Some(body) = body {
        head.push_str("Content-Type: application/json\r\n");
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body.unwrap_or_default());
    stream
        .set_write_timeout(Some(remaining(deadline)?))
        .map_err(io_error)?;
    stream.write_all(&bytes).map_err(io_error)?;
    let raw = read_bounded(&mut stream, deadline, limits.max_response)?;
    parse_response(&raw)
}

fn connect(endpoint: &Endpoint, deadline: Instant) -> Result<TcpStream, HttpError> {
    let addresses: Vec<SocketAddr> = (endpoint.host.as_str(), endpoint.port)
        .to_socket_addrs()
        .map_err(|err| HttpError::Unreachable(format!("cannot resolve {}: {err}", endpoint.host)))?
        .collect();
    let mut last = None;
    for address in addresses {
        match TcpStream::connect_timeout(&address, remaining(deadline)?) {
            Ok(stream) => return Ok(stream),
            Err(err) if err.kind() == std::io::ErrorKind::TimedOut => {
                return Err(HttpError::TimedOut)
            }
            Err(err) => last = Some(err),
        }
    }
    Err(HttpError::Unreachable(match last {
        Some(err) => err.to_string(),
        None => format!("{} has no address", endpoint.host),
    }))
}

fn remaining(deadline: Instant) -> Result<Duration, HttpError> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        Err(HttpError::TimedOut)
    } else {
        Ok(left)
    }
}

fn io_error(err: std::io::Error) -> HttpError {
    match err.kind() {
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => HttpError::TimedOut,
        _ => HttpError::Protocol(err.to_string()),
    }
}

/// Reads until the server closes (we asked it to), keeping at most `cap` bytes.
fn read_bounded(
    stream: &mut TcpStream,
    deadline: Instant,
    cap: usize,
) -> Result<Vec<u8>, HttpError> {
    let mut kept = Vec::new();
    let mut buffer = [0u8; 64 * 1024];
    loop {
        stream
            .set_read_timeout(Some(remaining(deadline)?))
            .map_err(io_error)?;
        let n = stream.read(&mut buffer).map_err(io_error)?;
        if n == 0 {
            return Ok(kept);
        }
        if kept.len() + n > cap {
            return Err(HttpError::TooLarge(cap));
        }
        kept.extend_from_slice(&buffer[..n]);
    }
}

/// The status and body of a whole response (`Content-Length`, chunked, or to the end).
fn parse_response(raw: &[u8]) -> Result<Response, HttpError> {
    let bad = |what: &str| HttpError::Protocol(format!("not an HTTP response: {what}"));
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| bad("no end of headers"))?;
    let head = std::str::from_utf8(&raw[..end]).map_err(|_| bad("headers are not text"))?;
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|line| line.strip_prefix("HTTP/1."))
        .and_then(|line| line.get(2..5))
        .and_then(|code| code.parse::<u16>().ok())
        .ok_or_else(|| bad("no status line"))?;
    let mut chunked = false;
    let mut length = None;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.eq_ignore_ascii_case("chunked");
        } else if name.eq_ignore_ascii_case("content-length") {
            length = Some(
                value
                    .parse::<usize>()
                    .map_err(|_| bad("bad Content-Length"))?,
            );
        }
    }
    let rest = &raw[end + 4..];
    let body = if chunked {
        dechunk(rest).ok_or_else(|| bad("bad chunked body"))?
    } else if let Some(length) = length {
        rest.get(..length)
            .ok_or_else(|| bad("the body is shorter than its Content-Length"))?
            .to_vec()
    } else {
        rest.to_vec()
    };
    Ok(Response { status, body })
}

/// The body of a `Transfer-Encoding: chunked` message.
fn dechunk(mut rest: &[u8]) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = rest.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(&rest[..line_end]).ok()?;
        let size_text = size_text.split(';').next()?.trim();
        let size = usize::from_str_radix(size_text, 16).ok()?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            return Some(body);
        }
        body.extend_from_slice(rest.get(..size)?);
        rest = rest.get(size + 2..)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let sized = parse_response(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhiXX").unwrap();
        assert_eq!((sized.status, sized.body.as_slice()), (200, &b"hi"[..]));
        let chunked = parse_response(
            b"HTTP/1.1 400 Bad\r\nTransfer-Encoding: chunked\r\n\r\n3;x\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
        )
        .unwrap();
        assert_eq!(
            (chunked.status, chunked.body.as_slice()),
            (400, &b"abcde"[..])
        );
        let open = parse_response(b"HTTP/1.0 500 E\r\n\r\nall").unwrap();
        assert_eq!(open.body, b"all");
        assert!(parse_response(b"SSH-2.0-OpenSSH\r\n\r\n").is_err());
        assert!(parse_response(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nhi").is_err());
    }
}

//! The HTTP every model endpoint shares (OpenAI-compatible servers: the embeddings
//! endpoint in `amber-retrieval`, the chat models of the judge, extraction, learning and
//! compile in `amber-tiers`): one agent that never follows a redirect (a POST's text and
//! key are never sent elsewhere) and reads a non-2xx answer instead of failing on it, one
//! JSON POST with the key as a bearer token and a single deadline over resolving,
//! connecting, sending and reading, and one way to say why a request failed. What an
//! answer means (vectors, a chat reply, retrying) stays with each caller.

#![forbid(unsafe_code)]

use std::time::Duration;

/// The HTTP agent (ureq's), kept by each endpoint between requests.
pub use ureq::Agent;

/// The agent every endpoint posts through.
pub fn agent() -> Agent {
    ureq::Agent::config_builder()
        // A non-2xx answer is read (its body goes into the reason), not an Err.
        .http_status_as_error(false)
        // A redirect of a POST is not followed (nor the text and key sent elsewhere).
        .max_redirects(0)
        .build()
        .new_agent()
}

/// An endpoint's answer: its status and body (at most the caller's limit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// The body as text.
    pub body: String,
}

impl Answer {
    /// True for a 2xx status.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// Posts `body` (JSON) to `url`, with `api_key` as a bearer token when there is one, all
/// within `deadline`, reading at most `max_body` bytes of the answer. Err: why the request
/// did not get an answer (timed out, refused, the body too long, …), in words.
pub fn post_json(
    agent: &Agent,
    url: &str,
    api_key: Option<&str>,
    body: &str,
    deadline: Duration,
    max_body: u64,
) -> Result<Answer, String> {
    let mut req = agent.post(url).header("Content-Type", "application/json");
    if let Some(key) = api_key {
        req = req.header("Authorization", format!("Bearer {key}"));
    }
    let req = req.config().timeout_global(Some(deadline)).build();
    let ms = deadline.as_millis();
    let mut resp = req.send(body).map_err(|e| reason(e, ms))?;
    let status = resp.status().as_u16();
    let body = resp.body_mut().with_config().limit(max_body).read_to_string().map_err(|e| reason(e, ms))?;
    Ok(Answer { status, body })
}

/// Why a request failed, in words.
fn reason(e: ureq::Error, deadline_ms: u128) -> String {
    match e {
        ureq::Error::Timeout(what) => format!("timed out after {deadline_ms} ms ({what})"),
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            format!("connection refused ({io})")
        }
        other => format!("request failed: {other}"),
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpListener;

    use super::*;

    /// A one-request server on 127.0.0.1 answering `reply` (a whole HTTP response);
    /// returns its address and the request it read.
    fn serve(reply: &'static str) -> (String, std::thread::JoinHandle<String>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = format!("http://{}", l.local_addr().unwrap());
        let h = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut buf = vec![0u8; 8192];
            let mut got = String::new();
            while !got.contains("\r\n\r\n{") || !got.ends_with('}') {
                let n = s.read(&mut buf).unwrap();
                if n == 0 {
                    break;
                }
                got.push_str(&String::from_utf8_lossy(&buf[..n]));
            }
            s.write_all(reply.as_bytes()).unwrap();
            got
        });
        (addr, h)
    }

    #[test]
    fn a_post_sends_json_and_the_key_and_reads_a_non_2xx_answer() {
        let (url, h) = serve("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy");
        let a = post_json(&agent(), &url, Some("k-123"), "{\"x\":1}", Duration::from_secs(5), 1024).unwrap();
        assert_eq!(a, Answer { status: 503, body: "busy".into() });
        assert!(!a.is_success());
        let req = h.join().unwrap().to_ascii_lowercase();
        assert!(
            req.contains("authorization: bearer k-123") && req.contains("content-type: application/json"),
            "{req}"
        );
    }

    #[test]
    fn a_redirect_is_not_followed() {
        let (url, _h) = serve(
            "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:1/x\r\nContent-Length: 0\r\n\r\n",
        );
        let a = post_json(&agent(), &url, Some("k"), "{}", Duration::from_secs(5), 1024).unwrap();
        assert_eq!(a.status, 307);
    }

    #[test]
    fn a_closed_port_is_a_reason_not_a_panic() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", l.local_addr().unwrap());
        drop(l);
        let e = post_json(&agent(), &url, None, "{}", Duration::from_secs(5), 1024).unwrap_err();
        assert!(e.contains("refused") || e.starts_with("request failed"), "{e}");
    }
}

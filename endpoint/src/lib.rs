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
    let started = std::time::Instant::now();
    let send = |deadline: Duration| {
        let mut req = agent.post(url).header("Content-Type", "application/json");
        if let Some(key) = api_key {
            req = req.header("Authorization", format!("Bearer {key}"));
        }
        req.config().timeout_global(Some(deadline)).build().send(body)
    };
    let ms = deadline.as_millis();
    let mut resp = match send(deadline) {
        // A kept connection the server dropped as the request went out (a reset, not an
        // answer): sent once more, on a new connection, within what is left of the deadline.
        Err(ureq::Error::Io(io)) if dropped(&io) && started.elapsed() < deadline => {
            send(deadline - started.elapsed())
        }
        other => other,
    }
    .map_err(|e| reason(e, ms))?;
    let status = resp.status().as_u16();
    let body = resp.body_mut().with_config().limit(max_body).read_to_string().map_err(|e| reason(e, ms))?;
    Ok(Answer { status, body })
}

/// The connection went away under the request (no answer was read).
fn dropped(io: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(io.kind(), ConnectionReset | ConnectionAborted | BrokenPipe)
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
            let got = read_post(&mut s);
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

    /// Reads one JSON POST off `s`, through its closing brace (or until it closes).
    fn read_post(s: &mut std::net::TcpStream) -> String {
        let (mut buf, mut got) = (vec![0u8; 8192], String::new());
        while !got.contains("\r\n\r\n{") || !got.ends_with('}') {
            let n = s.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            got.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
        got
    }

    /// Reads one JSON POST off `s` and answers 200 `{}`.
    fn answer_one(s: &mut std::net::TcpStream) {
        read_post(s);
        s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}").unwrap();
    }

    #[test]
    fn a_kept_connection_the_server_closed_does_not_fail_the_next_request() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", l.local_addr().unwrap());
        let h = std::thread::spawn(move || {
            // The first connection answers once, is kept by the client, then closed
            // here (a server's idle timeout); the second answers the next request.
            let (mut first, _) = l.accept().unwrap();
            answer_one(&mut first);
            std::thread::sleep(Duration::from_millis(100));
            drop(first);
            let (mut second, _) = l.accept().unwrap();
            answer_one(&mut second);
        });
        let agent = agent();
        assert_eq!(post_json(&agent, &url, None, "{}", Duration::from_secs(5), 64).unwrap().status, 200);
        std::thread::sleep(Duration::from_millis(300));
        let again = post_json(&agent, &url, None, "{\"n\":2}", Duration::from_secs(5), 64);
        assert_eq!(again.map(|a| a.status), Ok(200));
        h.join().unwrap();
    }

    #[test]
    fn a_request_the_server_resets_is_sent_once_more() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", l.local_addr().unwrap());
        let h = std::thread::spawn(move || {
            // Closed with the request half read: the kernel answers with a reset.
            let (mut first, _) = l.accept().unwrap();
            first.read_exact(&mut [0u8; 8]).unwrap();
            std::thread::sleep(Duration::from_millis(50));
            drop(first);
            let (mut second, _) = l.accept().unwrap();
            answer_one(&mut second);
        });
        let a = post_json(&agent(), &url, None, "{\"big\":1}", Duration::from_secs(5), 64);
        assert_eq!(a.map(|a| a.status), Ok(200));
        h.join().unwrap();
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

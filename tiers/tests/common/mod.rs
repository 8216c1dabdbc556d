//! What the tests against a fake OpenAI-compatible endpoint share: the endpoint, on
//! 127.0.0.1, and a learner for it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use amber_tiers::advice::Learner;

/// A fake endpoint: every request body is kept; `answer` gives the assistant's reply
/// for a body (None: hold the connection for 3 s, past the test's deadline).
pub struct Fake {
    pub url: String,
    pub bodies: Arc<Mutex<Vec<serde_json::Value>>>,
    pub answered: Arc<AtomicUsize>,
}

pub fn fake(answer: impl Fn(&str) -> Option<String> + Send + 'static) -> Fake {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let answered = Arc::new(AtomicUsize::new(0));
    let (seen, done) = (bodies.clone(), answered.clone());
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { continue };
            let mut r = BufReader::new(conn);
            let mut len = 0;
            loop {
                let mut line = String::new();
                if r.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; len];
            let _ = r.read_exact(&mut body);
            let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
            let user = body["messages"][1]["content"].as_str().unwrap_or("").to_string();
            let system = body["messages"][0]["content"].as_str().unwrap_or("").to_string();
            seen.lock().unwrap().push(body);
            let Some(content) = answer(&format!("{system}\n{user}")) else {
                std::thread::sleep(Duration::from_secs(3));
                continue;
            };
            let reply =
                serde_json::json!({"choices": [{"message": {"role": "assistant", "content": content}}]})
                    .to_string();
            let mut conn = r.into_inner();
            let _ = write!(
                conn,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}",
                reply.len()
            );
            done.fetch_add(1, Ordering::SeqCst);
        }
    });
    Fake { url, bodies, answered }
}

pub fn learner(url: &str) -> Learner {
    Learner::new(url, "test-model", None, Duration::from_secs(5)).unwrap()
}

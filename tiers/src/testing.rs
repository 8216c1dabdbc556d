//! For tests only (the cargo feature `testing`, off by default): a fake model, one local
//! server speaking just enough HTTP/1.1 and the OpenAI chat-completions protocol on
//! 127.0.0.1, written once for every test that needs a model endpoint.
//!
//! [`serve`] starts it on a free port with a closure that decides the [`Reply`] to each
//! [`Request`]; the closure runs after the request is recorded and before anything is
//! sent, so it may also wait (for the test, a delay) before answering. Requests are
//! served one at a time, on one thread, each on its own connection (`Connection: close`).
//! The thread lives as long as the test process.
//!
//! ```no_run
//! use amber_tiers::testing::{Reply, serve};
//!
//! let model = serve(|req| {
//!     if req.user().contains("E0502") { Reply::answer("yes") } else { Reply::answer("no") }
//! });
//! // Point the code under test at `model.url` (`http://127.0.0.1:PORT/v1`), then:
//! assert_eq!(model.answered(), model.requests().len());
//! ```

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// How long the server waits for a request's bytes before dropping the connection.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// One request as the fake model received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The request line, e.g. `POST /v1/chat/completions HTTP/1.1`.
    pub line: String,
    /// The header lines as sent (`Name: value`), in order, without the line ends.
    pub headers: Vec<String>,
    /// The body (lossily decoded as UTF-8).
    pub body: String,
}

impl Request {
    /// The value of the first header called `name` (any case), trimmed.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find_map(|h| {
            let (k, v) = h.split_once(':')?;
            k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }

    /// The body as JSON. Panics (failing the test) when it is not JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("the request body is not JSON ({e}): {:?}", self.body))
    }

    /// The text content of `messages[i]` in the body, or "" when there is none.
    pub fn message(&self, i: usize) -> String {
        let body: serde_json::Value = serde_json::from_str(&self.body).unwrap_or_default();
        body["messages"][i]["content"].as_str().unwrap_or("").to_string()
    }

    /// The first message's text (the system prompt), or "".
    pub fn system(&self) -> String {
        self.message(0)
    }

    /// The second message's text (the user's), or "".
    pub fn user(&self) -> String {
        self.message(1)
    }
}

/// What the fake model does with a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// 200 with a chat completion whose assistant message is this text.
    Answer(String),
    /// This status and this body, as they are.
    Raw(u16, String),
    /// Waits this long (holding the connection), then does the inner reply.
    After(Duration, Box<Reply>),
    /// Sends the headers of a 1000-byte body, then one byte every 100 ms for 5 s (a body
    /// that never completes in time).
    Trickle,
    /// Closes the connection without a response.
    Close,
}

impl Reply {
    /// [`Reply::Answer`] with this text.
    pub fn answer(content: impl Into<String>) -> Reply {
        Reply::Answer(content.into())
    }

    /// [`Reply::After`]: waits `delay`, then does `reply`.
    pub fn after(delay: Duration, reply: Reply) -> Reply {
        Reply::After(delay, Box::new(reply))
    }

    /// Holds the connection for `delay`, then closes it unanswered (a model slower than
    /// any deadline in the tests).
    pub fn hold(delay: Duration) -> Reply {
        Reply::after(delay, Reply::Close)
    }
}

/// A running fake model (see [`serve`]).
#[derive(Debug, Clone)]
pub struct FakeModel {
    /// Its base URL, `http://127.0.0.1:PORT/v1` (clients post to `{url}/chat/completions`).
    pub url: String,
    /// Every request received, in order, recorded before its reply.
    pub requests: Arc<Mutex<Vec<Request>>>,
    /// How many requests got a response (counted just before it is sent; a
    /// [`Reply::Close`] is not one).
    pub answered: Arc<AtomicUsize>,
}

impl FakeModel {
    /// A copy of every request received so far.
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The `i`th request received (from 0). Panics when there are not that many.
    pub fn request(&self, i: usize) -> Request {
        let all = self.requests();
        all.get(i).cloned().unwrap_or_else(|| panic!("request {i} asked, {} received", all.len()))
    }

    /// How many requests got a response so far.
    pub fn answered(&self) -> usize {
        self.answered.load(Ordering::SeqCst)
    }
}

/// Starts a fake model on a free port of 127.0.0.1: each request is recorded, then
/// `reply` decides what is sent back.
pub fn serve(reply: impl Fn(&Request) -> Reply + Send + 'static) -> FakeModel {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("the fake model's address");
    let model = FakeModel {
        url: format!("http://{addr}/v1"),
        requests: Arc::new(Mutex::new(Vec::new())),
        answered: Arc::new(AtomicUsize::new(0)),
    };
    let (requests, answered) = (model.requests.clone(), model.answered.clone());
    thread::Builder::new()
        .name("fake-model".into())
        .spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let Some((request, stream)) = read_request(stream) else { continue };
                requests.lock().unwrap_or_else(|e| e.into_inner()).push(request.clone());
                send(stream, reply(&request), &answered);
            }
        })
        .expect("spawn the fake model's thread");
    model
}

/// [`serve`] with the same reply to every request.
pub fn always(reply: Reply) -> FakeModel {
    serve(move |_| reply.clone())
}

/// The body of a chat completion whose one choice is an assistant message saying `content`.
pub fn completion(content: &str) -> String {
    serde_json::json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "test-model",
        "choices": [{ "index": 0, "message": { "role": "assistant", "content": content }, "finish_reason": "stop" }],
    })
    .to_string()
}

/// Reads one request (request line, headers, a `Content-Length` body); None when the
/// connection fails or closes first.
fn read_request(stream: TcpStream) -> Option<(Request, TcpStream)> {
    stream.set_read_timeout(Some(READ_TIMEOUT)).ok()?;
    let mut r = BufReader::new(stream);
    let mut line = String::new();
    if r.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut headers = Vec::new();
    let mut len = 0;
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end_matches(['\r', '\n']);
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':')
            && k.trim().eq_ignore_ascii_case("content-length")
        {
            len = v.trim().parse().ok()?;
        }
        headers.push(h.to_string());
    }
    let mut body = vec![0; len];
    r.read_exact(&mut body).ok()?;
    let request = Request {
        line: line.trim_end_matches(['\r', '\n']).to_string(),
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    Some((request, r.into_inner()))
}

/// Does `reply` on the connection. Write errors are ignored: the client may have given
/// up already (the deadline tests).
fn send(mut stream: TcpStream, reply: Reply, answered: &AtomicUsize) {
    match reply {
        Reply::Answer(content) => send(stream, Reply::Raw(200, completion(&content)), answered),
        Reply::Raw(status, body) => {
            let reason = if status == 200 { "OK" } else { "Status" };
            let head = format!(
                "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            answered.fetch_add(1, Ordering::SeqCst);
            let _ = stream.write_all(head.as_bytes()).and_then(|_| stream.write_all(body.as_bytes()));
        }
        Reply::After(delay, reply) => {
            thread::sleep(delay);
            send(stream, *reply, answered);
        }
        Reply::Trickle => {
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n";
            answered.fetch_add(1, Ordering::SeqCst);
            if stream.write_all(head.as_bytes()).is_err() {
                return;
            }
            for _ in 0..50 {
                thread::sleep(Duration::from_millis(100));
                if stream.write_all(b" ").and_then(|_| stream.flush()).is_err() {
                    return;
                }
            }
        }
        Reply::Close => {}
    }
}

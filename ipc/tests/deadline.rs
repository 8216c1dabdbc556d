//! A client never hangs on a daemon that stops answering: a call past its timeout fails
//! with `ClientError::Timeout`, and the next call goes on a new connection, so the late
//! reply is never read as another request's answer. Against a socket that reads requests
//! and answers only on its second connection.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixListener;
use std::time::{Duration, Instant};

use amber_ipc::{AsyncClient, Client, ClientError};
use serde_json::{Value, json};

/// Accepts two connections: reads a request on the first and never answers it (the
/// connection stays open); answers each request on the second with its id and the
/// method it named.
fn silent_then_answering(path: &std::path::Path) -> std::thread::JoinHandle<()> {
    let listener = UnixListener::bind(path).unwrap();
    std::thread::spawn(move || {
        let (first, _) = listener.accept().unwrap();
        let mut first = BufReader::new(first);
        let mut line = String::new();
        first.read_line(&mut line).unwrap();
        let (second, _) = listener.accept().unwrap();
        let mut second = BufReader::new(second);
        loop {
            let mut line = String::new();
            if second.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let req: Value = serde_json::from_str(&line).unwrap();
            let reply = json!({ "jsonrpc": "2.0", "id": req["id"], "result": { "method": req["method"] } });
            second.get_mut().write_all(format!("{reply}\n").as_bytes()).unwrap();
        }
    })
}

#[test]
fn a_call_past_its_timeout_fails_and_the_next_goes_on_a_new_connection() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sock");
    let server = silent_then_answering(&path);
    let mut c = Client::connect(&path).unwrap();
    c.set_timeout(Some(Duration::from_millis(300)));
    let t0 = Instant::now();
    let e = c.call_value("status", json!({})).unwrap_err();
    assert!(matches!(&e, ClientError::Timeout { method, .. } if method == "status"), "{e:?}");
    assert!(t0.elapsed() < Duration::from_secs(30), "it waited {:?}", t0.elapsed());
    assert_eq!(c.call_value("hello", json!({})).unwrap(), json!({ "method": "hello" }));
    drop(c);
    server.join().unwrap();
}

#[test]
fn the_async_client_times_out_the_same_way() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sock");
    let server = silent_then_answering(&path);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let mut c = AsyncClient::connect(&path).await.unwrap();
        c.set_timeout(Some(Duration::from_millis(300)));
        let e = c.call_value("status", json!({})).await.unwrap_err();
        assert!(matches!(&e, ClientError::Timeout { method, .. } if method == "status"), "{e:?}");
        assert_eq!(c.call_value("hello", json!({})).await.unwrap(), json!({ "method": "hello" }));
    });
    server.join().unwrap();
}

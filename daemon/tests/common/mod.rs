//! The daemon under test: started on a temporary data dir and socket, killed on drop.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use amber_core::{NewMemory, Scope};
use amber_ipc::protocol::{ErrorKind, Response};
use amber_ipc::{Client, socket_name};
use interprocess::local_socket::Stream;
use interprocess::local_socket::traits::Stream as _;

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
        let data = root.join("data");
        let socket = root.join("run").join("amber.sock");
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

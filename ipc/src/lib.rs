//! Amber's wire protocol and client.
//!
//! Amber's daemon (`amberd`) listens on a local socket (a Unix domain socket, a named pipe
//! on Windows) and speaks JSON-RPC 2.0, one request per line, UTF-8. This crate holds
//! what both sides share: the message types ([`protocol`]), the framing and request
//! parsing ([`frame`]), where the socket lives ([`default_socket_path`]), and the clients
//! ([`Client`], [`AsyncClient`]). `docs/PROTOCOL.md` documents every method.
//!
//! ```no_run
//! use amber_ipc::{Client, protocol::RecallParams};
//! let mut c = Client::connect(&amber_ipc::default_socket_path(std::path::Path::new("/tmp/data"))).unwrap();
//! let hits = c.recall(&RecallParams::new("where is the build cache?")).unwrap().hits;
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod client;
pub mod config;
pub mod frame;
pub mod protocol;
pub mod sources;

use std::path::{Path, PathBuf};

pub use client::{AsyncClient, Client, ClientError, socket_name};
pub use config::{Config, ConfigError};
pub use protocol::{DEFAULT_MAX_FRAME, ErrorKind, PROTOCOL_VERSION};

/// The socket file name.
pub const SOCKET_FILE: &str = "amber.sock";

/// `$AMBER_SOCKET`, else `$XDG_RUNTIME_DIR/amber/amber.sock`, else `amber.sock` in the
/// data directory.
pub fn default_socket_path(data_dir: &Path) -> PathBuf {
    if let Some(p) = std::env::var_os("AMBER_SOCKET") {
        return PathBuf::from(p);
    }
    match std::env::var_os("XDG_RUNTIME_DIR") {
        Some(run) if !run.is_empty() => PathBuf::from(run).join("amber").join(SOCKET_FILE),
        _ => data_dir.join(SOCKET_FILE),
    }
}

//! Registered agent names. A person registers a name (`amber agent register NAME`, or
//! `amber install claude-code` for `claude-code`): the daemon makes a random token, keeps
//! only its SHA-256 in `<data_dir>/agents.json` (0600), and hands the token back once; the
//! command line writes it where that agent's hooks and MCP server read it
//! (`<state_dir>/agents/NAME.token`, 0600). From then on `session_start` with that name
//! needs the token: a session of that agent, and so its inbox and what is addressed to it,
//! go only to a client that holds it. A name nobody registered works as before.
//!
//! Every local client is the same person's (the socket admits one uid), so a token keeps
//! a misled or confused agent from taking another's name, not a hostile process of the
//! same user, which could read the token file.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;

use amber_ipc::protocol::{AgentRegisterParams, AgentRegisterResult, ErrorKind, ErrorObject};
use serde_json::Value;
use sha2::Digest;

use crate::peer::Peer;
use crate::rpc::to_value;
use crate::state::Shared;

fn path(shared: &Shared) -> PathBuf {
    shared.config.data_dir.join("agents.json")
}

fn sha(token: &str) -> String {
    hex::encode(sha2::Sha256::digest(token.as_bytes()))
}

fn internal(what: &str, e: impl std::fmt::Display) -> ErrorObject {
    ErrorObject::new(ErrorKind::Internal, format!("{what}: {e}"))
}

/// The registered names and their tokens' hashes (none when the file is absent).
fn load(shared: &Shared) -> Result<BTreeMap<String, String>, ErrorObject> {
    match std::fs::read(path(shared)) {
        Ok(raw) => serde_json::from_slice(&raw).map_err(|e| internal("agents.json is not readable", e)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(e) => Err(internal("agents.json", e)),
    }
}

/// `agent_register`: a new token for a name (a person's call; registering again
/// replaces the token).
pub(crate) async fn register(
    shared: &Arc<Shared>,
    peer: Peer,
    p: AgentRegisterParams,
) -> Result<Value, ErrorObject> {
    crate::person_log::person_only(
        shared,
        peer,
        "agent_register (`amber agent register NAME`)",
        crate::person_log::Undo::Irreversible,
    )?;
    let name = crate::rpc::agent_name(&p.name)?;
    let mut raw = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut raw))
        .map_err(|e| internal("no randomness for the token", e))?;
    let token = hex::encode(raw);
    let shared2 = shared.clone();
    let (n, t) = (name.clone(), token.clone());
    tokio::task::spawn_blocking(move || -> Result<(), ErrorObject> {
        let _guard = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
        let mut agents = load(&shared2)?;
        agents.insert(n, sha(&t));
        let body = serde_json::to_vec_pretty(&agents).map_err(|e| internal("agents.json", e))?;
        let file = path(&shared2);
        let tmp = file.with_extension("json.tmp");
        {
            use std::io::Write;
            use std::os::unix::fs::OpenOptionsExt;
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(&tmp)
                .map_err(|e| internal("agents.json", e))?;
            f.write_all(&body).and_then(|_| f.sync_all()).map_err(|e| internal("agents.json", e))?;
        }
        std::fs::rename(&tmp, &file).map_err(|e| internal("agents.json", e))
    })
    .await
    .map_err(|e| internal("agent_register", e))??;
    tracing::info!(agent = %name, "agent name registered");
    to_value(&AgentRegisterResult { name, token })
}

/// One registration at a time.
static REGISTRY: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// True when `name` is registered (its sessions show its token at `session_start`).
pub(crate) fn is_registered(shared: &Shared, name: &str) -> bool {
    load(shared).is_ok_and(|agents| agents.contains_key(name))
}

/// Refuses a registered name claimed without its token.
pub(crate) fn check(shared: &Shared, name: &str, token: Option<&str>) -> Result<(), ErrorObject> {
    let agents = load(shared)?;
    match agents.get(name) {
        None => Ok(()),
        Some(h) if token.is_some_and(|t| sha(t) == *h) => Ok(()),
        Some(_) => Err(ErrorObject::new(
            ErrorKind::NotPermitted,
            format!(
                "the agent name {name:?} is registered: its sessions need its token (agent_token), \
                 which `amber agent register {name}` wrote for its clients"
            ),
        )),
    }
}

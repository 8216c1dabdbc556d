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

use amber_ipc::protocol::{
    AgentRegisterParams, AgentRegisterResult, AgentRestoreResult, ErrorKind, ErrorObject,
};
use sha2::Digest;

use crate::peer::Peer;
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
    read_map(&path(shared))
}

/// A JSON map kept in the data directory (empty when the file is absent).
fn read_map<V: serde::de::DeserializeOwned>(
    file: &std::path::Path,
) -> Result<BTreeMap<String, V>, ErrorObject> {
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    match std::fs::read(file) {
        Ok(raw) => serde_json::from_slice(&raw).map_err(|e| internal(&format!("{name} is not readable"), e)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(e) => Err(internal(&name, e)),
    }
}

/// `agent_register`: a new token for a name (a person's call; registering again
/// replaces the token).
pub(crate) async fn register(
    shared: &Arc<Shared>,
    peer: Peer,
    p: AgentRegisterParams,
) -> Result<AgentRegisterResult, ErrorObject> {
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
        // The token it replaces is kept (its hash) for `agent_restore`, the undo.
        if let Some(old) = agents.insert(n.clone(), sha(&t)) {
            let mut retired = load_retired(&shared2)?;
            retired.insert(n, Retired { sha: old, retired_at: amber_core::now_millis() });
            save(&retired_path(&shared2), &retired)?;
        }
        save(&path(&shared2), &agents)
    })
    .await
    .map_err(|e| internal("agent_register", e))??;
    tracing::info!(agent = %name, "agent name registered");
    Ok(AgentRegisterResult { name, token })
}

/// A token a registration replaced: its hash, and when.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Retired {
    sha: String,
    retired_at: amber_core::Millis,
}

/// How long a replaced token can be restored.
const RESTORE_WITHIN_MS: amber_core::Millis = 7 * 24 * 3600 * 1000;

fn retired_path(shared: &Shared) -> PathBuf {
    shared.config.data_dir.join("agents-retired.json")
}

fn load_retired(shared: &Shared) -> Result<BTreeMap<String, Retired>, ErrorObject> {
    read_map(&retired_path(shared))
}

/// Writes a JSON file whole: 0600, through a temporary file.
fn save(file: &std::path::Path, value: &impl serde::Serialize) -> Result<(), ErrorObject> {
    let what = file.display().to_string();
    let body = serde_json::to_vec_pretty(value).map_err(|e| internal(&what, e))?;
    amber_core::paths::write_private(file, &body).map_err(|e| internal(&what, e))
}

/// `agent_restore`: undoes the last registration of a name within a week: the token it
/// replaced is the name's again, and the one it made is retired in its place (so the
/// restore can be undone the same way). A person's call.
pub(crate) async fn restore(
    shared: &Arc<Shared>,
    peer: Peer,
    p: AgentRegisterParams,
) -> Result<AgentRestoreResult, ErrorObject> {
    crate::person_log::person_only(
        shared,
        peer,
        "agent_restore (`amber agent restore NAME`)",
        crate::person_log::Undo::Reversible,
    )?;
    let name = crate::rpc::agent_name(&p.name)?;
    let shared2 = shared.clone();
    let n = name.clone();
    let retired_at = tokio::task::spawn_blocking(move || -> Result<amber_core::Millis, ErrorObject> {
        let _guard = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
        let mut retired = load_retired(&shared2)?;
        let now = amber_core::now_millis();
        let Some(old) = retired.get(&n).filter(|r| now - r.retired_at <= RESTORE_WITHIN_MS).cloned() else {
            return Err(ErrorObject::new(
                ErrorKind::NotFound,
                format!("no token of {n:?} was replaced in the last 7 days: nothing to restore"),
            ));
        };
        let mut agents = load(&shared2)?;
        match agents.insert(n.clone(), old.sha) {
            Some(current) => retired.insert(n, Retired { sha: current, retired_at: now }),
            None => retired.remove(&n),
        };
        save(&retired_path(&shared2), &retired)?;
        save(&path(&shared2), &agents)?;
        Ok(old.retired_at)
    })
    .await
    .map_err(|e| internal("agent_restore", e))??;
    tracing::info!(agent = %name, "agent token restored");
    Ok(amber_ipc::protocol::AgentRestoreResult { name, retired_at })
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

//! Purges that wait out a grace period. A purge deletes a forgotten memory's content for
//! good; asked while an agent session is live (when a misled agent may be the one asking
//! through the person's door), it is deferred instead: the memory stays forgotten (no
//! read serves it), `unforget` still brings it back, and after [`GRACE_MS`] the daemon
//! purges it. The ledger is `<data_dir>/purges-due.jsonl` (0600, one line a purge); the
//! daemon looks at it when it starts and every [`TICK`], so a purge due while it was down
//! is done at its next start. A memory unforgotten in the meantime is not purged (purge
//! deletes only what is forgotten), and the line goes.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use amber_core::{MemoryId, Millis, now_millis};
use serde::{Deserialize, Serialize};

use crate::state::Shared;
use crate::writer::{WriteDone, WriteOp};

/// The ledger's file name in the data directory.
const FILE: &str = "purges-due.jsonl";
/// How long a deferred purge waits.
pub(crate) const GRACE_MS: Millis = 24 * 3600 * 1000;
/// How often the daemon looks for purges that are due.
const TICK: Duration = Duration::from_secs(600);

/// One deferred purge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Due {
    /// The memory.
    pub id: MemoryId,
    /// When it was asked.
    pub asked_at: Millis,
    /// When it is done.
    pub due_at: Millis,
}

fn path(data_dir: &Path) -> PathBuf {
    data_dir.join(FILE)
}

/// The deferred purges in the ledger (lines that do not parse are skipped).
pub(crate) fn load(data_dir: &Path) -> Vec<Due> {
    std::fs::read_to_string(path(data_dir))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Writes the ledger whole (0600, through a temporary file).
fn save(data_dir: &Path, dues: &[Due]) -> std::io::Result<()> {
    let file = path(data_dir);
    if dues.is_empty() {
        return match std::fs::remove_file(&file) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        };
    }
    let mut body = Vec::new();
    for d in dues {
        writeln!(body, "{}", serde_json::to_string(d).map_err(std::io::Error::other)?)?;
    }
    amber_core::paths::write_private(&file, &body)
}

/// Defers the purge of `id`; returns when it is due. Asking again keeps the first time.
pub(crate) fn defer(data_dir: &Path, id: &MemoryId) -> std::io::Result<Millis> {
    let _guard = LEDGER.lock().unwrap_or_else(|e| e.into_inner());
    let mut dues = load(data_dir);
    if let Some(d) = dues.iter().find(|d| d.id == *id) {
        return Ok(d.due_at);
    }
    let now = now_millis();
    let due = Due { id: id.clone(), asked_at: now, due_at: now + GRACE_MS };
    dues.push(due.clone());
    save(data_dir, &dues)?;
    Ok(due.due_at)
}

/// One writer of the ledger at a time.
static LEDGER: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Purges what is due (on every side that may hold the id); keeps the rest.
pub(crate) async fn sweep(shared: &Arc<Shared>) {
    let data_dir = shared.config.data_dir.clone();
    let now = now_millis();
    let due: Vec<Due> = load(&data_dir).into_iter().filter(|d| d.due_at <= now).collect();
    if due.is_empty() {
        return;
    }
    let mut done: Vec<MemoryId> = Vec::new();
    for d in due {
        let (sides, away) = shared.id_sides();
        let mut settled = away.is_none();
        for side in sides {
            match crate::rpc::write_on(shared, &side, WriteOp::Purge(d.id.clone())).await {
                Ok(WriteDone::Purged(true)) => {
                    tracing::info!(id = %d.id, asked_at = d.asked_at, "a deferred purge is done");
                    settled = true;
                    break;
                }
                Ok(_) => {}
                // Unforgotten in the meantime: nothing to purge, the purge is dropped.
                Err(e) if e.kind() == Some(amber_ipc::protocol::ErrorKind::NotForgotten) => {
                    tracing::info!(id = %d.id, "a deferred purge is dropped: the memory was unforgotten");
                    break;
                }
                Err(e) => {
                    tracing::warn!(id = %d.id, error = %e.message, "a deferred purge failed; tried again later");
                    settled = false;
                }
            }
        }
        if settled {
            done.push(d.id);
        }
    }
    let _guard = LEDGER.lock().unwrap_or_else(|e| e.into_inner());
    let left: Vec<Due> = load(&data_dir).into_iter().filter(|d| !done.contains(&d.id)).collect();
    if let Err(e) = save(&data_dir, &left) {
        tracing::warn!(cause = %e, "cannot rewrite the deferred purges");
    }
}

/// Looks for due purges at the start and every [`TICK`], until shutdown.
pub(crate) async fn sweep_loop(shared: Arc<Shared>) {
    let mut shutdown = shared.shutdown.subscribe();
    loop {
        sweep(&shared).await;
        tokio::select! {
            _ = tokio::time::sleep(TICK) => {}
            _ = crate::state::shutdown_asked(&mut shutdown) => return,
        }
    }
}

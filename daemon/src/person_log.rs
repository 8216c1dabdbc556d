//! The person's door while an agent session is live. A process inside an agent's session
//! is refused the person's methods however it was started (`crate::ancestry`); what the
//! daemon cannot see is a process that left its lineage (a double fork with `setsid`).
//! So every person-only action taken while an agent session is live is recorded with its
//! caller (`<data_dir>/person-actions.jsonl`, 0600, shown by `amber audit`), and the ones
//! that cannot be undone (purge, a new agent token, the web view's token, export, backup,
//! keeping secrets) are refused to a caller with no terminal whose parent is init.

use std::io::Write;
use std::path::PathBuf;

use amber_core::{Millis, now_millis};
use amber_ipc::protocol::{ErrorKind, ErrorObject, PersonAction};

use crate::peer::Peer;
use crate::state::Shared;

/// The log's file name in the data directory.
const FILE: &str = "person-actions.jsonl";
/// Past this size the log is moved to `person-actions.jsonl.1` (one older file kept).
const MAX_BYTES: u64 = 1 << 20;
/// A session idle for longer than this no longer counts as live here (an agent that died
/// without ending its session leaves it in the daemon until the idle reaper ends it).
const LIVE_WITHIN_MS: Millis = 6 * 3600 * 1000;

/// Whether what a person's method does can be undone by the person afterwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Undo {
    /// It can (trust, unforget, moves, listing): recorded only.
    Reversible,
    /// It cannot (purge, a new token, the web token, export, backup, keeping secrets):
    /// refused to a detached caller with no terminal while an agent session is live.
    Irreversible,
}

/// Refuses a person's method to every door but the person's (`Peer::person_only`); while
/// an agent session is live, refuses an irreversible one to a detached caller with no
/// terminal, and records the rest with their caller. Ok(true) when an agent session is
/// live (what cannot be undone may then wait: `crate::purge_due`).
pub(crate) fn person_only(shared: &Shared, peer: Peer, what: &str, undo: Undo) -> Result<bool, ErrorObject> {
    peer.person_only(what)?;
    if peer.door == amber_core::origin::Door::Web {
        return Ok(false);
    }
    let now = now_millis();
    let live: Vec<String> = shared
        .sessions
        .lock()
        .values()
        .filter(|s| s.ended_at.is_none() && now - s.last_active <= LIVE_WITHIN_MS)
        .map(|s| format!("{} ({})", s.id, s.agent))
        .collect();
    if live.is_empty() {
        return Ok(false);
    }
    let refused = undo == Undo::Irreversible && peer.detached && !peer.tty;
    let action = PersonAction {
        at: now,
        what: what.to_string(),
        pid: peer.pid,
        exe: peer
            .pid
            .and_then(|p| std::fs::read_link(format!("/proc/{p}/exe")).ok())
            .map(|p| p.display().to_string()),
        command: peer.pid.map(command_of).unwrap_or_default(),
        tty: peer.tty,
        detached: peer.detached,
        live_sessions: live.clone(),
        refused,
    };
    if let Err(e) = append(&shared.config.data_dir, &action) {
        tracing::warn!(cause = %e, "cannot record a person's action taken while an agent session is live");
    }
    tracing::info!(what, pid = ?peer.pid, tty = peer.tty, detached = peer.detached, refused, "a person's method while an agent session is live");
    if refused {
        return Err(ErrorObject::new(
            ErrorKind::NotPermitted,
            format!(
                "{what} was asked by a process with no terminal that left whatever started it, while an agent session is live ({}): \
                 run it yourself from a terminal (recorded; `amber audit` lists it)",
                live.join(", ")
            ),
        ));
    }
    Ok(true)
}

/// The caller's command line as one line of text, cut to 200 characters.
fn command_of(pid: u32) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let words: Vec<String> = raw
        .split(|b| *b == 0)
        .filter(|w| !w.is_empty())
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect();
    let line: String = words.join(" ").chars().filter(|c| !c.is_control()).take(200).collect();
    amber_tiers::redact::redact(&line).0
}

fn path(data_dir: &std::path::Path) -> PathBuf {
    data_dir.join(FILE)
}

fn append(data_dir: &std::path::Path, action: &PersonAction) -> std::io::Result<()> {
    let file = path(data_dir);
    if std::fs::metadata(&file).is_ok_and(|m| m.len() > MAX_BYTES) {
        std::fs::rename(&file, data_dir.join(format!("{FILE}.1")))?;
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.create(true).append(true);
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    let mut f = opts.open(&file)?;
    let mut line = serde_json::to_vec(action).map_err(std::io::Error::other)?;
    line.push(b'\n');
    f.write_all(&line)?;
    f.sync_data()
}

/// The most recent `limit` recorded actions, newest last (an unreadable line is skipped).
pub(crate) fn recent(data_dir: &std::path::Path, limit: usize) -> Vec<PersonAction> {
    let text = std::fs::read_to_string(path(data_dir)).unwrap_or_default();
    let all: Vec<PersonAction> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let skip = all.len().saturating_sub(limit);
    all.into_iter().skip(skip).collect()
}

//! A session's record by id, wherever it is: the live map, the sessions being ended,
//! or the store. Sessions (`session_show`, `session_end`'s manifest) and outcomes
//! (`outcome` with a session) both look sessions up through it.

use std::sync::Arc;

use amber_engine::SessionRow;
use amber_ipc::protocol::{ErrorKind, ErrorObject};
use amber_tiers::session::Session;

use crate::rpc::read;
use crate::state::Shared;

/// A session by id and whether it is live: live, being ended (still live until its ended
/// record is stored), or stored. A stored record that does not parse is an error.
pub(crate) async fn find(shared: &Arc<Shared>, id: &str) -> Result<Option<(Session, bool)>, ErrorObject> {
    if let Some(s) = shared.sessions.get(id).or_else(|| shared.sessions.ending(id)) {
        return Ok(Some((s, true)));
    }
    let key = id.to_string();
    let Some(row) = read(shared, move |e| e.get_session(&key)).await? else { return Ok(None) };
    let session: Session = serde_json::from_str(&row.record).map_err(|e| {
        tracing::error!(cause = %e, session = %row.id, "a stored session record does not parse");
        ErrorObject::new(ErrorKind::Internal, "the stored session record does not parse (see the daemon log)")
    })?;
    Ok(Some((session, false)))
}

/// Stores a session's record.
pub(crate) async fn persist(shared: &Arc<Shared>, s: &Session) -> Result<(), ErrorObject> {
    let row = SessionRow {
        id: s.id.clone(),
        agent: s.agent.clone(),
        scope: s.scope.to_string(),
        started_at: s.started_at,
        ended_at: s.ended_at,
        record: serde_json::to_string(s).map_err(|e| {
            tracing::error!(cause = %e, "a session record did not serialize");
            ErrorObject::new(ErrorKind::Internal, "internal error (see the daemon log)")
        })?,
    };
    // On the writer, as every write; at shutdown, when new writes are refused, the last
    // records (`session::save_all`) still go through it before it stops.
    if *shared.shutdown.borrow() {
        crate::rpc::write_at_shutdown(shared, move |e| e.put_session(&row)).await
    } else {
        crate::rpc::write_with(shared, move |e| e.put_session(&row)).await
    }
}

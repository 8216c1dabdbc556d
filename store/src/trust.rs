//! A person's word on how far a memory is trusted (`amber trust`, the web view): the
//! SQLite side of [`crate::Memories::set_trust`].

use amber_core::{Memory, MemoryId, Millis};
use rusqlite::params;

use crate::backend::Memories;
use crate::{Error, Result, Store};

pub(crate) fn set_trust(
    store: &mut Store,
    id: &MemoryId,
    trust: amber_core::origin::Trust,
    by: amber_core::origin::SetBy,
    now: Millis,
) -> Result<Option<(Memory, bool)>> {
    // One writer connection: nothing changes the row between the read and the update.
    let Some(mut m) = store.get(id)? else { return Ok(None) };
    let changed = amber_core::origin::set_trust(&mut m.metadata, trust, by, now);
    if changed {
        store
            .conn
            .execute(
                "UPDATE memories SET metadata = ?2 WHERE id = ?1",
                params![id.as_str(), m.metadata.to_string()],
            )
            .map_err(|source| Error::Sqlite { path: store.path.clone(), source })?;
    }
    Ok(Some((m, changed)))
}

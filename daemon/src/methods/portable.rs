//! `export`, `import`, `backup`: a person's memory taken elsewhere (docs/EXPORT.md). Each
//! is the person's alone (the `amber` command outside an agent's session): an export
//! reads every scope, an import can file memories at the person's trust, a backup
//! copies everything.

use std::sync::Arc;

use amber_core::portable::ExportFilter;
use amber_ipc::protocol::{
    BackupParams, BackupStats, ErrorObject, ExportPage, ExportParams, ImportParams, ImportTally,
    MAX_PORTABLE_RECORDS,
};
use serde_json::Value;

use crate::peer::Peer;
use crate::rpc::{invalid, read_on, write_with};
use crate::state::Shared;

/// Records per export page when the caller names no limit.
const DEFAULT_PAGE: usize = 500;

/// `export`: one page of records; `next` names the page after it.
pub(crate) async fn export(
    shared: &Arc<Shared>,
    peer: Peer,
    p: ExportParams,
) -> Result<ExportPage, ErrorObject> {
    crate::person_log::person_only(shared, peer, "export", crate::person_log::Undo::Irreversible)?;
    let limit = p.limit.unwrap_or(DEFAULT_PAGE);
    if limit == 0 || limit > MAX_PORTABLE_RECORDS {
        return Err(invalid(format!("limit must be 1 to {MAX_PORTABLE_RECORDS}, got {limit}")));
    }
    if p.embeddings && p.scope.is_some() {
        return Err(invalid(
            "embeddings are exported with every scope only (the cache is not kept by scope)",
        ));
    }
    let side = shared.side_of(p.scope.as_ref())?;
    let filter = ExportFilter { scope: p.scope, since: p.since, embeddings: None };
    let page =
        read_on(shared, &side, move |e| e.export_page(&filter, p.embeddings, p.cursor.as_deref(), limit))
            .await?;
    Ok(page)
}

/// `import`: records of an export into the local store, through the writer.
pub(crate) async fn import(
    shared: &Arc<Shared>,
    peer: Peer,
    p: ImportParams,
) -> Result<ImportTally, ErrorObject> {
    crate::person_log::person_only(shared, peer, "import", crate::person_log::Undo::Reversible)?;
    if p.records.len() > MAX_PORTABLE_RECORDS {
        return Err(invalid(format!(
            "at most {MAX_PORTABLE_RECORDS} records a call, got {}",
            p.records.len()
        )));
    }
    let opts = p.options();
    let mut records = p.records;
    // Secrets are redacted as on every other way in; the person's own export
    // (`keep_trust`) comes back as it was.
    if !opts.keep_trust {
        let n = super::import_redact::redact_records(&mut records);
        if n > 0 {
            tracing::info!(redacted = n, "import: secrets redacted");
        }
    }
    // Team scopes live in the team's database, never in the local store.
    let (records, team): (Vec<Value>, Vec<Value>) = records.into_iter().partition(|r| {
        !r.get("scope")
            .and_then(Value::as_str)
            .and_then(|s| s.parse().ok())
            .is_some_and(|s| shared.is_team(&s))
    });
    let mut tally = write_with(shared, move |e| e.import(&records, opts)).await?;
    for r in team {
        let kind = r.get("record").and_then(Value::as_str).unwrap_or("?");
        let scope = r.get("scope").and_then(Value::as_str).unwrap_or("?");
        tally.skip(kind, scope, "a team scope: it is kept in the team's database (docs/TEAM.md)");
    }
    Ok(tally)
}

/// `backup`: SQLite's online backup of the local store into a new file.
pub(crate) async fn backup(
    shared: &Arc<Shared>,
    peer: Peer,
    p: BackupParams,
) -> Result<BackupStats, ErrorObject> {
    crate::person_log::person_only(shared, peer, "backup", crate::person_log::Undo::Irreversible)?;
    if !p.path.is_absolute() {
        return Err(invalid(format!("the backup's path must be absolute, got {}", p.path.display())));
    }
    let path = p.path;
    let stats = read_on(shared, &shared.local(), move |e| e.backup(&path)).await?;
    Ok(stats)
}

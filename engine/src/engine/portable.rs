//! Export, import and backup through the engine (docs/EXPORT.md): reads on a reader
//! connection, an import on the write connection and then taken in like another
//! writer's memories ([`EngineWriter::follow`]: new memories, standings, duplicate marks and
//! graph names), and indexed.

use std::path::Path;

use amber_core::now_millis;
use amber_core::portable::{BackupStats, ExportFilter, ExportPage, ImportOptions, ImportTally};
use serde_json::Value;

use super::{Engine, EngineWriter};
use crate::Result;

impl Engine {
    /// Up to `limit` export records after `cursor`. With `embeddings`, the embedding
    /// cache of this engine's model is exported too (every scope only).
    pub fn export_page(
        &self,
        filter: &ExportFilter,
        embeddings: bool,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<ExportPage> {
        let mut filter = filter.clone();
        filter.embeddings = embeddings.then(|| self.model_id());
        self.read(|s| s.export_page(&filter, cursor, limit))
    }

    /// A consistent copy of the whole store, the embedding cache with it, into a new file.
    pub fn backup(&self, to: &Path) -> Result<BackupStats> {
        self.read(|s| s.backup(to))
    }
}

/// Restores a backup into a data directory that holds no store yet (the daemon not
/// running on it). The indexes are rebuilt when an engine next opens it, from the
/// backup's embedding cache: nothing is embedded again.
pub fn restore(data_dir: &Path, from: &Path) -> Result<BackupStats> {
    crate::layout::create_private_dir(data_dir)
        .map_err(|source| crate::Error::DataDir { path: data_dir.into(), source })?;
    Ok(amber_store::restore(from, &crate::layout::db_path(data_dir))?)
}

impl EngineWriter<'_> {
    /// Writes export records (one transaction), then takes them in and indexes them.
    pub fn import(&mut self, records: &[Value], opts: ImportOptions) -> Result<ImportTally> {
        let tally = self.store().import(records, opts, now_millis())?;
        if tally.added_total() > 0 {
            self.follow()?;
            self.index_pending()?;
        }
        Ok(tally)
    }
}

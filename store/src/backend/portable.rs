//! Taking a store elsewhere: export, import and backup. Part of the storage boundary
//! ([`crate::MemoryStore`]): implemented once per backend (the team store on PostgreSQL
//! refuses them: its own tools do this, docs/TEAM.md).

use std::path::Path;

use amber_core::Millis;
use amber_core::portable::{BackupStats, ExportFilter, ExportPage, ImportOptions, ImportTally};
use serde_json::Value;

use crate::Result;

/// Export records, their import, and an online backup.
pub trait Portable {
    /// Up to `limit` export records after `cursor` (None: from the start).
    fn export_page(&self, filter: &ExportFilter, cursor: Option<&str>, limit: usize) -> Result<ExportPage>;
    /// Writes export records in one transaction; what it did with each kind.
    fn import(&mut self, records: &[Value], opts: ImportOptions, now: Millis) -> Result<ImportTally>;
    /// A consistent copy of the whole store into a new file at `to`.
    fn backup(&self, to: &Path) -> Result<BackupStats>;
}

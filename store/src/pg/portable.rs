//! Export, import and backup of the team store: PostgreSQL's own tools do them.

use super::PgStore;
use crate::{Error, Result};

/// The team store is taken elsewhere with PostgreSQL's own tools (`pg_dump`,
/// `pg_basebackup`; docs/TEAM.md), not by Amber.
impl crate::backend::Portable for PgStore {
    fn export_page(
        &self,
        _: &amber_core::portable::ExportFilter,
        _: Option<&str>,
        _: usize,
    ) -> Result<amber_core::portable::ExportPage> {
        Err(Error::Unsupported(TEAM_PORTABLE.into()))
    }

    fn import(
        &mut self,
        _: &[serde_json::Value],
        _: amber_core::portable::ImportOptions,
        _: amber_core::Millis,
    ) -> Result<amber_core::portable::ImportTally> {
        Err(Error::Unsupported(TEAM_PORTABLE.into()))
    }

    fn backup(&self, _: &std::path::Path) -> Result<amber_core::portable::BackupStats> {
        Err(Error::Unsupported(TEAM_PORTABLE.into()))
    }
}

const TEAM_PORTABLE: &str = "a team store is exported and backed up with PostgreSQL's own tools (pg_dump, pg_basebackup): see docs/TEAM.md";

//! Taking a store elsewhere: export records and their import (docs/EXPORT.md), and a
//! consistent copy of the whole database while it serves (`amber backup`). Part of the
//! storage boundary ([`crate::Portable`]).

mod export;
mod import;

use std::path::Path;

use amber_core::Millis;
use amber_core::portable::{BackupStats, ExportFilter, ExportPage, ImportOptions, ImportTally};
use rusqlite::Connection;
use serde_json::Value;

use crate::backend::Portable;
use crate::{Error, Result, Store};

impl Portable for Store {
    fn export_page(&self, filter: &ExportFilter, cursor: Option<&str>, limit: usize) -> Result<ExportPage> {
        self.export_records(filter, cursor, limit)
    }

    fn import(&mut self, records: &[Value], opts: ImportOptions, now: Millis) -> Result<ImportTally> {
        self.import_records(records, opts, now)
    }

    /// SQLite's online backup in one step: the copy is the database as of one read
    /// transaction, and writers go on meanwhile (WAL). The file must not exist; it is
    /// written beside its final name and renamed when complete, 0600.
    fn backup(&self, to: &Path) -> Result<BackupStats> {
        if to.exists() {
            return Err(Error::Unsupported(format!(
                "{} exists: a backup never overwrites a file",
                to.display()
            )));
        }
        copy_db(&self.conn, to, to)
    }
}

/// Creates a new database file 0600 from the start (never readable by others, not even
/// for a moment) and opens it.
fn private_db(path: &Path) -> Result<Connection> {
    let io = |e: std::io::Error| Error::Unsupported(format!("cannot create {}: {e}", path.display()));
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    drop(o.open(path).map_err(io)?);
    Connection::open(path).map_err(|source| Error::Sqlite { path: path.into(), source })
}

/// Counts what a copy holds, closes it as one file (no journal beside it) and moves it
/// to its name.
fn finish(dst: Connection, partial: &Path, to: &Path, pages: u64) -> Result<BackupStats> {
    let sql = |source| Error::Sqlite { path: to.into(), source };
    let memories: i64 = dst.query_row("SELECT COUNT(*) FROM memories", [], |r| r.get(0)).map_err(sql)?;
    let vectors: i64 = dst.query_row("SELECT COUNT(*) FROM embeddings", [], |r| r.get(0)).map_err(sql)?;
    dst.pragma_update(None, "journal_mode", "DELETE").map_err(sql)?;
    drop(dst);
    std::fs::rename(partial, to).map_err(|e| Error::Unsupported(format!("{}: {e}", to.display())))?;
    let bytes = std::fs::metadata(to).map(|m| m.len()).unwrap_or(0);
    Ok(BackupStats { bytes, pages, memories: memories as u64, vectors: vectors as u64 })
}

/// Restores a backup into a new store file at `to` (which must not exist): the backup
/// is opened read-only, checked (`quick_check`, an Amber store of a schema this binary
/// knows), and copied page by page.
pub fn restore(from: &Path, to: &Path) -> Result<BackupStats> {
    use rusqlite::OpenFlags;
    if to.exists() {
        return Err(Error::Unsupported(format!(
            "{} exists: a restore goes into an empty data directory",
            to.display()
        )));
    }
    if !from.is_file() {
        return Err(Error::Unsupported(format!("{}: no such file", from.display())));
    }
    let sql = |source| Error::Sqlite { path: from.into(), source };
    let src = Connection::open_with_flags(from, OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(sql)?;
    let check: String = src.query_row("PRAGMA quick_check", [], |r| r.get(0)).map_err(sql)?;
    if check != "ok" {
        return Err(Error::Corrupt { path: from.into(), detail: format!("quick_check: {check}") });
    }
    let version: i64 = src.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(sql)?;
    let amber: bool = src
        .query_row("SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'memories')", [], |r| r.get(0))
        .map_err(sql)?;
    if !amber || version < 1 {
        return Err(Error::Corrupt { path: from.into(), detail: "not an Amber store".into() });
    }
    if version > crate::SCHEMA_VERSION {
        return Err(Error::SchemaTooNew { path: from.into(), found: version, known: crate::SCHEMA_VERSION });
    }
    copy_db(&src, from, to)
}

/// SQLite's online backup of `src` in one step (the database as of one read transaction)
/// into a new file at `to`, written 0600 beside its name and renamed when complete; the
/// partial file is removed on failure. `err_path` names the file in a SQLite error.
fn copy_db(src: &Connection, err_path: &Path, to: &Path) -> Result<BackupStats> {
    let sql = |source| Error::Sqlite { path: err_path.into(), source };
    let partial = to.with_extension("partial");
    let _ = std::fs::remove_file(&partial);
    let result = (|| {
        let mut dst = private_db(&partial)?;
        let pages = {
            let b = rusqlite::backup::Backup::new(src, &mut dst).map_err(sql)?;
            b.step(-1).map_err(sql)?;
            b.progress().pagecount as u64
        };
        finish(dst, &partial, to, pages)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    result
}

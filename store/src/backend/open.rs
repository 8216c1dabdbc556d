//! Opening a store: the [`Backend`] trait and the embedded SQLite store's.

use std::path::{Path, PathBuf};

use crate::MemoryStore;
use crate::{Result, Store};

/// Opens a store: one write connection, any number of read connections.
pub trait Backend: Send + Sync {
    /// The write connection (creating and migrating the store if needed).
    fn open_writer(&self) -> Result<Box<dyn MemoryStore>>;
    /// A read connection; it sees every committed write.
    fn open_reader(&self) -> Result<Box<dyn MemoryStore>>;
    /// Where the store is, for messages and `status`.
    fn location(&self) -> String;
}

/// The embedded SQLite store at a path (the default backend).
#[derive(Debug, Clone)]
pub struct SqliteBackend {
    path: PathBuf,
}

impl SqliteBackend {
    /// The store at `path` (`amber.db` in the data directory).
    pub fn new(path: impl Into<PathBuf>) -> SqliteBackend {
        SqliteBackend { path: path.into() }
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Backend for SqliteBackend {
    fn open_writer(&self) -> Result<Box<dyn MemoryStore>> {
        Ok(Box::new(Store::open(&self.path)?))
    }

    fn open_reader(&self) -> Result<Box<dyn MemoryStore>> {
        Ok(Box::new(Store::open_reader(&self.path)?))
    }

    fn location(&self) -> String {
        self.path.display().to_string()
    }
}

//! Documents as sources (`amber ingest`): a file's memories and the files a scope holds.

use amber_core::{Memory, Scope};

use super::{Engine, EngineWriter};
use crate::Result;

impl Engine {
    /// A scope's memories whose `source` is `source` (a file's chunks and the
    /// invalidations of its changes), archived ones included, in seq order.
    pub fn by_source(&self, scope: &Scope, source: &str) -> Result<Vec<Memory>> {
        self.read(|s| s.by_source(scope, source))
    }

    /// A stored setting (`meta` table), when set.
    pub fn meta(&self, key: &str) -> Result<Option<String>> {
        self.read(|s| s.meta(key))
    }

    /// The files a scope holds document chunks of whose path starts with `prefix`.
    pub fn document_sources(&self, scope: &Scope, prefix: &str) -> Result<Vec<String>> {
        self.read(|s| s.document_sources(scope, prefix))
    }
}

impl EngineWriter<'_> {
    /// Stores a setting.
    pub fn set_meta(&mut self, key: &str, value: &str) -> Result<()> {
        Ok(self.store().set_meta(key, value)?)
    }
}

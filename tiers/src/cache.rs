//! The model-call cache: a reply kept on disk under the SHA-256 of the backend (its
//! endpoint), the model and the request body, so the same call made again is answered
//! from disk without asking the model. Files are private (0600 in a 0700 folder).
//!
//! It keeps replies after the data they were made from is forgotten: a reply holds
//! what the model said about those runs. Delete the folder to drop them.

use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// A folder of cached model replies, one file a call.
#[derive(Debug, Clone)]
pub struct ModelCache {
    dir: PathBuf,
}

impl ModelCache {
    /// A cache in `dir` (created, 0700, on the first write).
    pub fn new(dir: impl Into<PathBuf>) -> ModelCache {
        ModelCache { dir: dir.into() }
    }

    /// Its folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The key of one call: SHA-256 over backend, model and body (each ended by a 0
    /// byte), as 64 hex digits.
    pub fn key(backend: &str, model: &str, body: &str) -> String {
        let mut h = Sha256::new();
        for part in [backend, model, body] {
            h.update(part.as_bytes());
            h.update([0u8]);
        }
        hex::encode(h.finalize())
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.txt"))
    }

    /// The reply kept under `key`, if any.
    pub fn get(&self, key: &str) -> Option<String> {
        std::fs::read_to_string(self.path(key)).ok()
    }

    /// Keeps a reply under `key`: written to a private temporary file, then renamed, so
    /// a reader never sees half of one.
    pub fn put(&self, key: &str, reply: &str) -> std::io::Result<()> {
        amber_core::paths::create_private_dir(&self.dir)?;
        let tmp = self.dir.join(format!(".{key}.{}.tmp", std::process::id()));
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        let mut f = opts.open(&tmp)?;
        f.write_all(reply.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, self.path(key))
    }

    /// How many replies are kept.
    pub fn len(&self) -> usize {
        std::fs::read_dir(&self.dir)
            .map(|d| {
                d.filter_map(|e| e.ok()).filter(|e| e.path().extension().is_some_and(|x| x == "txt")).count()
            })
            .unwrap_or(0)
    }

    /// True when none is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

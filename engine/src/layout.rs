//! Where things live on disk.
//!
//! ```text
//! $AMBER_HOME (default $XDG_DATA_HOME/amber, i.e. ~/.local/share/amber)
//! ├── runtime/libonnxruntime.so.1.32.0     installed by scripts/setup.sh
//! ├── models/all-MiniLM-L6-v2-int8/        installed by scripts/setup.sh
//! └── data/                                the default data directory (0700)
//!     ├── amber.db (+ -wal, -shm)           SQLite: the source of truth
//!     └── index/                            derived, rebuilt from amber.db when needed
//!         ├── bm25/                         tantivy
//!         ├── vectors.usearch               usearch HNSW
//!         └── vectors.json                  what the vector index was built with
//! ```

use std::path::{Path, PathBuf};

/// `$AMBER_HOME`, else `$XDG_DATA_HOME/amber`, else `~/.local/share/amber`.
pub fn default_amber_home() -> PathBuf {
    if let Some(h) = std::env::var_os("AMBER_HOME") {
        return PathBuf::from(h);
    }
    dirs::data_dir().unwrap_or_else(|| PathBuf::from(".")).join("amber")
}

/// `$AMBER_DATA_DIR`, else `<amber home>/data`.
pub fn default_data_dir() -> PathBuf {
    std::env::var_os("AMBER_DATA_DIR").map(PathBuf::from).unwrap_or_else(|| default_amber_home().join("data"))
}

pub(crate) fn db_path(data_dir: &Path) -> PathBuf {
    data_dir.join("amber.db")
}

pub(crate) fn index_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("index")
}

pub(crate) fn bm25_dir(data_dir: &Path) -> PathBuf {
    index_dir(data_dir).join("bm25")
}

pub(crate) fn vectors_path(data_dir: &Path) -> PathBuf {
    index_dir(data_dir).join("vectors.usearch")
}

pub(crate) fn vectors_state_path(data_dir: &Path) -> PathBuf {
    index_dir(data_dir).join("vectors.json")
}

/// Creates `dir` (and parents) private to the user: 0700 on Unix.
pub(crate) fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

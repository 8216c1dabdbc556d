//! Where things live on disk.
//!
//! ```text
//! $AMBER_HOME (default $XDG_DATA_HOME/amber, i.e. ~/.local/share/amber)
//! ├── runtime/libonnxruntime.so.1.32.0     installed by scripts/setup.sh
//! ├── models/all-MiniLM-L6-v2-q8/          installed by scripts/setup.sh
//! └── data/                                the default data directory (0700)
//!     ├── amber.db (+ -wal, -shm)           SQLite: the source of truth
//!     └── index/                            derived, rebuilt from amber.db when needed
//!         ├── bm25/                         tantivy
//!         ├── vectors.usearch               usearch HNSW
//!         └── vectors.json                  what the vector index was built with
//! ```

use std::path::{Path, PathBuf};

pub use amber_core::paths::{default_amber_home, default_data_dir};

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

pub(crate) use amber_core::paths::create_private_dir;

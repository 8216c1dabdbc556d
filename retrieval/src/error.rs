//! Retrieval errors.

use std::path::PathBuf;

/// A retrieval result.
pub type Result<T> = std::result::Result<T, Error>;

/// What can go wrong in retrieval.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The embedding model or ONNX Runtime is not installed (or not where expected).
    #[error("{what} not found at {path}: {hint}")]
    ModelUnavailable {
        /// What is missing.
        what: &'static str,
        /// Where it was looked for.
        path: PathBuf,
        /// The command that fixes it.
        hint: &'static str,
    },
    /// The model files are there but did not load or run.
    #[error("embedding model failed: {0}")]
    Model(String),
    /// The embeddings endpoint did not answer (refused, timed out, 429 or 5xx after the
    /// retries): the model is away, not broken.
    #[error("the embeddings endpoint {endpoint} is unavailable: {reason}")]
    EndpointUnavailable {
        /// The URL posted to.
        endpoint: String,
        /// Why, from the last attempt.
        reason: String,
    },
    /// tantivy failed.
    #[error("bm25 index error at {path}: {source}")]
    Bm25 {
        /// The index directory (empty for an in-RAM index).
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: tantivy::TantivyError,
    },
    /// usearch failed.
    #[error("vector index error at {path}: {message}")]
    Vector {
        /// The index file (empty for an unsaved index).
        path: PathBuf,
        /// usearch's message.
        message: String,
    },
    /// A vector of the wrong dimension.
    #[error("vector has {got} dimensions, the index has {want}")]
    Dimension {
        /// What was given.
        got: usize,
        /// What the index holds.
        want: usize,
    },
    /// A file could not be read or written.
    #[error("io error at {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

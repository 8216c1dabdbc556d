//! Memories and what is kept beside them: the embedding cache, documents, scopes. Part of the storage boundary ([`crate::MemoryStore`]):
//! each trait is implemented once per backend, in the file that owns its tables.

use amber_core::filing::Filing;
use amber_core::{Memory, MemoryId, Millis, NewMemory, Scope};

use crate::{DocFile, Key, ListFilter, MoveOne, Moved, PrefixMatch, Purged, Result, Vector};

/// The memories themselves, verbatim (the source of truth): filing, forgetting, reading by id, seq and scan, counts, the change log, metadata.
pub trait Memories {
    /// Files memories in one transaction (see `Store::insert_batch`).
    fn insert_batch(&mut self, memories: &[NewMemory], now: Millis) -> Result<Vec<(Memory, bool)>>;
    /// Marks a memory forgotten (see `Store::forget`).
    fn forget(&mut self, id: &MemoryId, now: Millis) -> Result<Option<(Memory, bool)>>;
    /// Sets a memory's trust (a person's word, or the daemon lowering it:
    /// `amber_core::origin::set_trust`); the memory, and whether it changed. None when no
    /// memory has this id.
    fn set_trust(
        &mut self,
        id: &MemoryId,
        trust: amber_core::origin::Trust,
        by: amber_core::origin::SetBy,
        now: Millis,
    ) -> Result<Option<(Memory, bool)>>;
    /// Deletes a forgotten memory for good.
    fn purge(&mut self, id: &MemoryId) -> Result<Purged>;
    /// The forgotten memories' seqs.
    fn forgotten_seqs(&self) -> Result<Vec<u64>>;
    /// The forgotten memories filed in a session.
    fn forgotten_session_keys(&self) -> Result<Vec<Key>>;
    /// A memory by id, forgotten or not.
    fn get(&self, id: &MemoryId) -> Result<Option<Memory>>;
    /// Live memories by seq, in the order asked.
    fn get_by_seqs(&self, seqs: &[u64]) -> Result<Vec<Memory>>;
    /// Live memories with `after < seq <= through`, in seq order, at most `limit`.
    fn scan(&self, after: u64, through: u64, limit: usize) -> Result<Vec<Memory>>;
    /// The filter keys of live memories after `after`, at most `limit`.
    fn scan_keys(&self, after: u64, limit: usize) -> Result<Vec<Key>>;
    /// Forgets and moves other writers made, after change `after`, oldest first, at most
    /// `limit`. A store no other node writes (the SQLite store) keeps no such log:
    /// nothing.
    fn changes_after(&self, _after: u64, _limit: usize) -> Result<Vec<crate::Change>> {
        Ok(Vec::new())
    }
    /// The newest change number (0 for a store that keeps no change log).
    fn max_change(&self) -> Result<u64> {
        Ok(0)
    }
    /// Live memories.
    fn count(&self) -> Result<u64>;
    /// Forgotten memories.
    fn count_forgotten(&self) -> Result<u64>;
    /// Live raw captures (type `event`, filed in a session or by a capture).
    fn count_raw_captures(&self) -> Result<u64>;
    /// Live memories with `seq <= seq`.
    fn count_through(&self, seq: u64) -> Result<u64>;
    /// The highest seq ever given.
    fn max_seq(&self) -> Result<u64>;
    /// Live memories per scope.
    fn scope_counts(&self) -> Result<Vec<(String, u64)>>;
    /// A metadata value.
    fn meta(&self, key: &str) -> Result<Option<String>>;
    /// Sets a metadata value.
    fn set_meta(&mut self, key: &str, value: &str) -> Result<()>;
    /// True when the backend's own consistency check passes.
    fn integrity_check(&self) -> Result<bool>;
}

/// Where a chunk's vector is cached: the scope of the memory the chunk belongs to and the
/// SHA-256 of the chunk's text. The local store keys its cache by the hash alone (one
/// person's cache, in a private file); the team store by model, scope and a keyed hash
/// of both (HMAC-SHA256 under the team's secret, `store/src/pg/vectors.rs`), under the
/// scope's grants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChunkKey<'a> {
    /// The scope of the memory the chunk is from.
    pub scope: &'a Scope,
    /// SHA-256 of the chunk's text.
    pub hash: [u8; 32],
}

/// The embedding cache: vectors by model and chunk ([`ChunkKey`]), so that rebuilding an
/// index never re-embeds.
pub trait VectorCache {
    /// The cached vector of each chunk under a model, in the order asked (None when
    /// missing, or not readable by this connection's role).
    fn cached_vectors(&self, model: &str, chunks: &[ChunkKey<'_>]) -> Result<Vec<Option<Vector>>>;
    /// Caches vectors under a model. A chunk already cached keeps its vector (the team
    /// store is insert-only for every role from schema 6; the local store does the same).
    /// A vector this role may not cache (the team store: a scope it may not write) is
    /// left out, with no error.
    fn put_vectors(&mut self, model: &str, vectors: &[(ChunkKey<'_>, &[f32])]) -> Result<()>;
    /// Vectors cached under a model (that this connection's role may read).
    fn cached_vector_count(&self, model: &str) -> Result<u64>;
    /// Deletes the cached vectors of these chunk hashes, under every model (a purged
    /// memory's: a vector can say much of its text). Returns how many rows went. The
    /// team store's cache is insert-only for every role (schema 6) and keyed per scope
    /// under a team secret: it deletes nothing here (0).
    fn forget_vectors(&mut self, hashes: &[[u8; 32]]) -> Result<u64>;
}

/// Memories filed from documents, by their source file.
pub trait Documents {
    /// A scope's memories from one source, archived included (`Store::by_source`).
    fn by_source(&self, scope: &Scope, source: &str) -> Result<Vec<Memory>>;
    /// The document files a scope holds under a path prefix (`Store::document_sources`).
    fn document_sources(&self, scope: &Scope, prefix: &str) -> Result<Vec<String>>;
    /// A page of a scope's ingested files with live sections, by path: the first `offset`
    /// skipped, at most `limit`; and how many there are in all.
    fn document_files(&self, scope: &Scope, offset: u64, limit: usize) -> Result<(Vec<DocFile>, u64)>;
    /// A file's live sections (chunks) in a scope, in the order their lines had when
    /// filed (then by seq), at most `limit`.
    fn document_sections(&self, scope: &Scope, source: &str, limit: usize) -> Result<Vec<Memory>>;
}

/// Scopes: project roots, moving a scope or one memory, a scope's memories page by page,
/// id prefixes and moved ids.
pub trait Scopes {
    /// Notes the project root a scope stands for.
    fn note_scope_root(&mut self, scope: &Scope, root: &str, now: Millis) -> Result<()>;
    /// Every scope with a known root.
    fn scope_roots(&self) -> Result<Vec<(String, String)>>;
    /// Live durable memories filed since a time in these scopes.
    fn durable_since(&self, scopes: &[Scope], since: Millis) -> Result<u64>;
    /// Where a moved memory went.
    fn moved_to(&self, id: &MemoryId) -> Result<Option<MemoryId>>;
    /// The memory an id prefix names.
    fn lookup_prefix(&self, prefix: &str) -> Result<PrefixMatch>;
    /// Re-files a scope's memories into another, in one transaction.
    fn move_scope(&mut self, from: &Scope, to: &Scope, now: Millis) -> Result<Vec<Moved>>;
    /// Re-files one live memory into a scope, in one transaction, as a scope move does
    /// each of its memories (new id, the old one forwarded, everything that names it
    /// re-pointed, merged into the same content already there).
    fn move_memory(&mut self, id: &MemoryId, to: &Scope, now: Millis) -> Result<MoveOne>;
    /// A page of one scope's memories (not those below it) that `filter` keeps, newest
    /// filed first: seqs below `before`, the first `offset` of them skipped, at most
    /// `limit`.
    fn scope_page(
        &self,
        scope: &Scope,
        filter: &ListFilter,
        before: Option<u64>,
        offset: u64,
        limit: usize,
    ) -> Result<Vec<Memory>>;
    /// How many of one scope's memories (not those below it) `filter` keeps, by filing
    /// (its `filings` aside), every filing in [`Filing::ALL`] order.
    fn scope_tally(&self, scope: &Scope, filter: &ListFilter) -> Result<Vec<(Filing, u64)>>;
}

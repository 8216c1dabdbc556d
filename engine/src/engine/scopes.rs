//! Scopes: counts, the project roots they stand for, moving memories between scopes,
//! and ids named by a prefix.

use amber_core::{MemoryId, Scope, now_millis};
use amber_store::{MoveOne, Moved, PrefixMatch};
use std::sync::atomic::Ordering::SeqCst;

use super::{Engine, EngineWriter, lock, write};
use crate::Result;

/// One scope as `amber scopes` lists it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ScopeInfo {
    /// The scope.
    pub scope: String,
    /// Live memories filed in it (not in the scopes below it).
    pub memories: u64,
    /// The project root it stands for, when it is a project scope seen by the resolver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
}

impl Engine {
    /// Every scope holding live memories or with a known root, with its count and root.
    pub fn scopes(&self) -> Result<Vec<ScopeInfo>> {
        let (counts, roots) = self.read(|s| Ok((s.scope_counts()?, s.scope_roots()?)))?;
        let mut out: Vec<ScopeInfo> =
            counts.into_iter().map(|(scope, memories)| ScopeInfo { scope, memories, root: None }).collect();
        for (scope, root) in roots {
            match out.iter_mut().find(|i| i.scope == scope) {
                Some(i) => i.root = Some(root),
                None => out.push(ScopeInfo { scope, memories: 0, root: Some(root) }),
            }
        }
        out.sort_by(|a, b| a.scope.cmp(&b.scope));
        Ok(out)
    }

    /// The memory an id prefix names (at least 4 hex digits).
    pub fn lookup_prefix(&self, prefix: &str) -> Result<PrefixMatch> {
        self.read(|s| s.lookup_prefix(prefix))
    }

    /// Live durable memories (not `event`) filed since `since` in these scopes.
    pub fn durable_since(&self, scopes: &[Scope], since: amber_core::Millis) -> Result<u64> {
        self.read(|s| s.durable_since(scopes, since))
    }

    /// Where a memory moved by [`EngineWriter::move_scope`] or [`EngineWriter::move_memory`] went.
    pub fn moved_to(&self, id: &MemoryId) -> Result<Option<MemoryId>> {
        self.read(|s| s.moved_to(id))
    }

    /// The indexes after a move (the caller holds the indexing lock): a moved memory
    /// keeps its seq and vectors, BM25 and the filter maps learn its new scope; one
    /// merged into a copy already in the target leaves the indexes like a forgotten one.
    fn follow_moves(&self, moved: &[Moved]) -> Result<()> {
        if moved.is_empty() {
            return Ok(());
        }
        let mark = self.bm25_mark.load(SeqCst);
        {
            let mut docs = write(&self.docs);
            for m in moved {
                docs.remove(m.seq, &m.old_scope);
                if !m.merged {
                    docs.add(amber_store::Key::of(&m.memory));
                }
            }
        }
        for m in moved {
            if m.merged {
                self.bm25.delete(m.seq)?;
                if write(&self.vectors).remove_memory(m.seq)? > 0 {
                    self.vectors_unsaved.store(true, SeqCst);
                }
            } else if m.seq <= mark {
                self.add_words(&m.memory)?;
            }
        }
        self.bm25.commit(mark)?;
        Ok(())
    }
}

impl EngineWriter<'_> {
    /// Re-files one live memory into `to`, as a scope move re-files each of its memories
    /// (a new id, the old one forwarded, what names it re-pointed, merged into the same
    /// content already there); the indexes follow in the same call.
    pub fn move_memory(&mut self, id: &MemoryId, to: &Scope) -> Result<MoveOne> {
        let _indexing = lock(&self.engine().indexing);
        let out = self.store().move_memory(id, to, now_millis())?;
        if let MoveOne::Moved(m) = &out {
            self.follow_moves(std::slice::from_ref(&**m))?;
            tracing::info!(from = %m.old_scope, to = %to, merged = m.merged, "memory moved");
        }
        Ok(out)
    }

    /// Re-files every live memory of `from` (and the scopes below it) into `to`,
    /// verbatim: see [`amber_store::Store::move_scope`] for what happens to ids, links,
    /// mentions and sessions. The indexes follow in the same call ([`Engine::follow_moves`]).
    pub fn move_scope(&mut self, from: &Scope, to: &Scope) -> Result<Vec<Moved>> {
        let _indexing = lock(&self.engine().indexing);
        let moved = self.store().move_scope(from, to, now_millis())?;
        self.follow_moves(&moved)?;
        tracing::info!(from = %from, to = %to, moved = moved.len(), "scope moved");
        Ok(moved)
    }

    /// Notes the project root a project scope stands for.
    pub fn note_scope_root(&mut self, scope: &Scope, root: &std::path::Path) -> Result<()> {
        Ok(self.store().note_scope_root(scope, &root.to_string_lossy(), now_millis())?)
    }
}

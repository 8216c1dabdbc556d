//! Embedding ahead of the commit, for a store other nodes follow (team scopes on
//! PostgreSQL): the vectors of memories about to be committed are put in the shared
//! embedding cache first, so a node that follows the store finds them there the moment
//! it sees the memories, and no node embeds a chunk another node embedded. On a store
//! nobody else follows this is off: a commit does not wait for the model.

use std::collections::HashMap;

use amber_core::{NewMemory, Scope};

use super::indexer::Text;
use super::{Engine, read};
use crate::Result;

impl Engine {
    /// Caches the vectors of these memories' chunks (and of their session contexts,
    /// reckoned as if they were filed now, in this order) before they are committed.
    pub(super) fn embed_ahead(&self, memories: &[NewMemory]) -> Result<()> {
        let contexts = self.contexts_ahead(memories)?;
        let texts: Vec<Text<'_>> = memories
            .iter()
            .enumerate()
            .map(|(i, m)| Text {
                seq: i as u64,
                scope: &m.scope,
                content: &m.content,
                context: contexts.get(&i).map(String::as_str),
            })
            .collect();
        let m = self.models();
        let chunks = self.chunks_of(&m, &texts);
        self.vectors_of(&m, &chunks)?;
        Ok(())
    }

    /// The session context each memory (by its index) would get if the batch were
    /// committed now: the end of the memory filed before it in its session, earlier in
    /// the batch or already in the store.
    fn contexts_ahead(&self, memories: &[NewMemory]) -> Result<HashMap<usize, String>> {
        if !self.opts.session_context {
            return Ok(HashMap::new());
        }
        let mut last: HashMap<(&Scope, &str), usize> = HashMap::new();
        let mut previous: Vec<(usize, Before)> = Vec::new();
        {
            let docs = read(&self.docs);
            for (i, m) in memories.iter().enumerate() {
                let Some(session) = m.session_id.as_deref() else { continue };
                let key = (&m.scope, session);
                match last.insert(key, i) {
                    Some(j) => previous.push((i, Before::InBatch(j))),
                    None => {
                        if let Some(seq) = docs.last_in_session(&m.scope, session) {
                            previous.push((i, Before::Stored(seq)));
                        }
                    }
                }
            }
        }
        let stored: Vec<u64> = previous
            .iter()
            .filter_map(|(_, p)| match p {
                Before::Stored(seq) => Some(*seq),
                Before::InBatch(_) => None,
            })
            .collect();
        let fetched: HashMap<u64, String> = if stored.is_empty() {
            HashMap::new()
        } else {
            self.read(|s| s.get_by_seqs(&stored))?.into_iter().map(|m| (m.seq, m.content)).collect()
        };
        let mut out = HashMap::with_capacity(previous.len());
        for (i, p) in previous {
            let text = match p {
                Before::InBatch(j) => Some(memories[j].content.as_str()),
                Before::Stored(seq) => fetched.get(&seq).map(String::as_str),
            };
            if let Some(text) = text {
                out.insert(i, self.context_from(&self.models(), text));
            }
        }
        Ok(out)
    }
}

/// The memory filed before one in its session.
enum Before {
    /// Earlier in the same batch (its index).
    InBatch(usize),
    /// Already in the store (its seq).
    Stored(u64),
}

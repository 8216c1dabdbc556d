//! The engine's in-memory view of the live memories: the time, scope, session, type and
//! filing of each, loaded from the store at open and kept in step by every write. The query
//! filters, the time ranking, the session prior, session neighbours and session context
//! read it.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use amber_core::{Filing, MemoryType, Millis, Scope};
use amber_store::{Key, MemoryStore};

use crate::Result;

/// Time, scope and session of the live memories, for the filters and the neighbour
/// ranking.
#[derive(Default)]
pub(super) struct Docs {
    /// seq -> time (event time, else filing time).
    pub(super) time: HashMap<u64, Millis>,
    /// scope -> seqs filed in it (not in its sub-scopes).
    pub(super) scopes: BTreeMap<Scope, Vec<u64>>,
    /// scope -> session id -> its index in `session_seqs` (by scope first, so that a
    /// lookup borrows both).
    session_ids: HashMap<Scope, HashMap<String, u32>>,
    /// Per session: the seqs filed in it, in filing order.
    session_seqs: Vec<Vec<u64>>,
    /// seq -> its session's index, for memories filed in a session.
    pub(super) session_of: HashMap<u64, u32>,
    /// seq -> its type (for its lifespan).
    pub(super) kind: HashMap<u64, MemoryType>,
    /// seq -> how it was filed, for memories not filed by the person (the ranking's
    /// filing prior; absent: `person`).
    pub(super) filing: HashMap<u64, Filing>,
    /// The lifefacts' seqs (the briefing's standing preferences are read from these,
    /// not from a scan of every memory).
    pub(super) lifefacts: BTreeSet<u64>,
}

impl Docs {
    pub(super) fn load(store: &dyn MemoryStore) -> Result<Docs> {
        let mut docs = Docs::default();
        let mut after = 0;
        loop {
            let batch = store.scan_keys(after, 10_000)?;
            let Some(last) = batch.last() else { break };
            after = last.seq;
            for k in batch {
                docs.add(k);
            }
        }
        Ok(docs)
    }

    /// Notes a memory. Seqs usually come in increasing order (filing order); one added
    /// back after a move takes its place in order.
    pub(super) fn add(&mut self, key: Key) {
        let Key { seq, scope, time, session_id, kind, filing } = key;
        self.kind.insert(seq, kind);
        if kind == MemoryType::Lifefact {
            self.lifefacts.insert(seq);
        } else {
            self.lifefacts.remove(&seq);
        }
        self.set_filing(seq, filing);
        if let Some(session) = session_id {
            let next = u32::try_from(self.session_seqs.len()).unwrap_or(u32::MAX);
            let sessions = match self.session_ids.get_mut(&scope) {
                Some(sessions) => sessions,
                None => self.session_ids.entry(scope.clone()).or_default(),
            };
            let i = *sessions.entry(session).or_insert(next);
            if i == next {
                self.session_seqs.push(Vec::new());
            }
            if let Some(seqs) = self.session_seqs.get_mut(i as usize) {
                insert_sorted(seqs, seq);
                self.session_of.insert(seq, i);
            }
        }
        insert_sorted(self.scopes.entry(scope).or_default(), seq);
        self.time.insert(seq, time);
    }

    /// Notes how a memory is filed now (its trust was set, say).
    pub(super) fn set_filing(&mut self, seq: u64, filing: Filing) {
        if filing == Filing::Person {
            self.filing.remove(&seq);
        } else {
            self.filing.insert(seq, filing);
        }
    }

    /// How a memory was filed.
    pub(super) fn filing_of(&self, seq: u64) -> Filing {
        self.filing.get(&seq).copied().unwrap_or(Filing::Person)
    }

    pub(super) fn remove(&mut self, seq: u64, scope: &Scope) {
        self.time.remove(&seq);
        self.kind.remove(&seq);
        self.lifefacts.remove(&seq);
        self.filing.remove(&seq);
        if let Some(seqs) = self.scopes.get_mut(scope) {
            seqs.retain(|s| *s != seq);
            if seqs.is_empty() {
                self.scopes.remove(scope);
            }
        }
        // An emptied session keeps its (small) slot until the next load.
        if let Some(i) = self.session_of.remove(&seq)
            && let Some(seqs) = self.session_seqs.get_mut(i as usize)
        {
            seqs.retain(|s| *s != seq);
        }
    }

    /// The first live memory filed after `seq` in this session of this scope.
    pub(super) fn next_in_session(&self, scope: &Scope, session: &str, seq: u64) -> Option<u64> {
        let i = *self.session_ids.get(scope)?.get(session)?;
        let seqs = self.session_seqs.get(i as usize)?;
        seqs.get(seqs.partition_point(|s| *s <= seq)).copied()
    }

    /// The last live memory filed in this session of this scope.
    pub(super) fn last_in_session(&self, scope: &Scope, session: &str) -> Option<u64> {
        let i = *self.session_ids.get(scope)?.get(session)?;
        self.session_seqs.get(i as usize)?.last().copied()
    }

    /// The live memories filed just before and just after `seq` in its session (same
    /// scope), if it was filed in one.
    pub(super) fn neighbours(&self, seq: u64) -> [Option<u64>; 2] {
        let Some(seqs) = self.session_of.get(&seq).and_then(|&i| self.session_seqs.get(i as usize)) else {
            return [None, None];
        };
        match seqs.binary_search(&seq) {
            Ok(i) => [i.checked_sub(1).map(|j| seqs[j]), seqs.get(i + 1).copied()],
            Err(_) => [None, None],
        }
    }
}

/// Inserts `seq` in its place in an increasing list (at the end, the usual case, in
/// O(1)); a seq already there is not added twice.
fn insert_sorted(seqs: &mut Vec<u64>, seq: u64) {
    match seqs.last() {
        None => seqs.push(seq),
        Some(&last) if last < seq => seqs.push(seq),
        Some(_) => {
            if let Err(at) = seqs.binary_search(&seq) {
                seqs.insert(at, seq);
            }
        }
    }
}

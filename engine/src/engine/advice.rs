//! Advice through the engine: situations, sorted runs, versioned notes, servings and
//! judgements in the store, and the shortlist of situation lines by Amber's hybrid
//! search (BM25 and vectors fused, no model call beyond the embedding model).

use amber_core::advice::{Judgement, Note, NoteVerdict, Serving, Situation};
use amber_core::{Millis, Scope, now_millis};
use amber_retrieval::fusion::reciprocal_rank_fusion;
use amber_retrieval::{Bm25Doc, Bm25Filter, Bm25Index, cosine};

use super::{Engine, EngineWriter};
use crate::Result;

impl Engine {
    /// A scope's situations.
    pub fn situations(&self, scope: &Scope) -> Result<Vec<Situation>> {
        self.read(|s| s.situations(scope))
    }

    /// (run id, situation) of the runs sorted in a scope.
    pub fn sorted_runs(&self, scope: &Scope) -> Result<Vec<(String, String)>> {
        self.read(|s| s.sorted_runs(scope))
    }

    /// A scope's notes (the newest of each series, or every version with `history`).
    pub fn notes(&self, scope: &Scope, situation: Option<&str>, history: bool) -> Result<Vec<Note>> {
        self.read(|s| s.notes(scope, situation, history))
    }

    /// The judgements of a scope's runs and sessions (every scope's when None), newest
    /// first.
    pub fn judgements(&self, scope: Option<&Scope>, limit: usize) -> Result<Vec<Judgement>> {
        self.read(|s| s.judgements(scope, limit))
    }

    /// The servings of notes in a scope and below (every scope when None) since a time.
    pub fn servings(&self, scope: Option<&Scope>, since: Millis) -> Result<Vec<Serving>> {
        self.read(|s| s.servings(scope, since))
    }

    /// The words on notes of a scope and below (every scope when None), oldest first.
    pub fn note_verdicts(&self, scope: Option<&Scope>) -> Result<Vec<NoteVerdict>> {
        self.read(|s| s.note_verdicts(scope))
    }

    /// The indexes of the `k` of `lines` that best match `query` by Amber's hybrid
    /// search: BM25 over the lines (a throwaway index in RAM) and the embedding model's
    /// cosine, fused by reciprocal rank with the engine's weights. Best first.
    pub fn shortlist(&self, query: &str, lines: &[&str], k: usize) -> Result<Vec<usize>> {
        let bm25 = Bm25Index::create_in_ram()?;
        let scope = Scope::default();
        for (i, line) in lines.iter().enumerate() {
            bm25.add(&Bm25Doc { seq: i as u64, scope: &scope, time: 0, content: line })?;
        }
        bm25.commit(lines.len() as u64)?;
        let by_words: Vec<u64> =
            bm25.search(query, &Bm25Filter::default(), lines.len())?.into_iter().map(|(i, _)| i).collect();
        let qv = self.embed_query(query)?;
        let vectors = self.embed_texts(&self.models(), lines)?;
        let mut by_meaning: Vec<(u64, f32)> =
            vectors.iter().enumerate().map(|(i, v)| (i as u64, cosine(&qv, v))).collect();
        by_meaning.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let by_meaning: Vec<u64> = by_meaning.into_iter().map(|(i, _)| i).collect();
        let fused = reciprocal_rank_fusion(
            &[(&by_words[..], self.opts.bm25_weight), (&by_meaning[..], self.opts.vector_weight)],
            self.opts.rrf_k,
        );
        Ok(fused.into_iter().take(k).map(|f| f.key as usize).collect())
    }
}

impl EngineWriter<'_> {
    /// Records that a session was served a note; the earlier (version, time) when this
    /// situation's note was served to it before.
    pub fn mark_served(&mut self, session_id: &str, note: &Note) -> Result<Option<(u32, i64)>> {
        Ok(self.store().mark_served(session_id, note, now_millis())?)
    }

    /// Merges situation `from` into `into` (kept as an alias).
    pub fn merge_situation(&mut self, scope: &Scope, from: &str, into: &str) -> Result<()> {
        Ok(self.store().merge_situation(scope, from, into)?)
    }

    /// Stores judgements of runs.
    pub fn put_judgements(&mut self, judgements: &[Judgement]) -> Result<()> {
        Ok(self.store().put_judgements(judgements)?)
    }

    /// Stores a note as its series' next version; returns the version.
    pub fn put_note(&mut self, note: &Note) -> Result<u32> {
        Ok(self.store().put_note(note)?)
    }

    /// Stores words on served notes (the judge's or the person's).
    pub fn put_note_verdicts(&mut self, verdicts: &[NoteVerdict]) -> Result<()> {
        Ok(self.store().put_note_verdicts(verdicts)?)
    }

    /// Adds situations or updates their lines and aliases.
    pub fn put_situations(&mut self, situations: &[Situation]) -> Result<()> {
        Ok(self.store().put_situations(situations)?)
    }

    /// Sets or clears why a note version is withheld.
    pub fn set_withheld(&mut self, note: &Note, withheld: Option<&str>) -> Result<()> {
        Ok(self.store().set_withheld(note, withheld)?)
    }

    /// Records which situation each run was sorted under.
    pub fn sort_runs(&mut self, scope: &Scope, sorted: &[(String, String)]) -> Result<()> {
        Ok(self.store().sort_runs(scope, sorted)?)
    }
}

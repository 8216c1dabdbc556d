//! The model pool: which embedding model instance runs a text. Queries take the first
//! free instance; indexing spreads its texts over all of them.

use std::sync::TryLockError;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use super::{Engine, SharedEmbedder, lock};
use crate::Result;

/// Vectors of some of a list of texts, each with the text's index in the list.
type Embedded = Vec<(usize, Vec<f32>)>;

impl Engine {
    /// Embeds texts for indexing, one per model run, taking each model's lock per text
    /// (a query waits at most for one text). With a query model loaded, both instances
    /// work through the texts at once, one thread each, so indexing uses both cores even
    /// for short texts (one model run of a short text barely uses a second thread).
    pub(super) fn embed_texts(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let models = &self.query_embedders;
        if models.len() < 2 || texts.len() < 2 {
            let mut out = Vec::with_capacity(texts.len());
            for text in texts {
                out.extend(lock(&self.index_embedder).embed(&[*text])?);
            }
            return Ok(out);
        }
        let next = AtomicUsize::new(0);
        let work = |model: &SharedEmbedder| -> Result<Embedded> {
            let mut done = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(text) = texts.get(i) else { return Ok(done) };
                let v = lock(model).embed(&[*text])?.pop();
                done.extend(v.map(|v| (i, v)));
            }
        };
        let parts: Vec<Result<Embedded>> = std::thread::scope(|s| {
            let helpers: Vec<_> = models[1..].iter().map(|m| s.spawn(|| work(m))).collect();
            let mut parts = vec![work(&models[0])];
            for h in helpers {
                parts.push(h.join().unwrap_or_else(|_| {
                    Err(amber_retrieval::Error::Model("an embedding thread panicked".into()).into())
                }));
            }
            parts
        });
        let mut out: Embedded = Vec::with_capacity(texts.len());
        for part in parts {
            out.extend(part?);
        }
        out.sort_by_key(|(i, _)| *i);
        Ok(out.into_iter().map(|(_, v)| v).collect())
    }

    /// Embeds a query text (one model call, on the first free query instance; when all
    /// are busy, it waits for one in turn).
    pub(super) fn embed_query(&self, text: &str) -> Result<Vec<f32>> {
        let free = self.query_embedders.iter().find_map(|m| match m.try_lock() {
            Ok(g) => Some(g),
            Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        });
        let mut embedder = match free {
            Some(g) => g,
            None => {
                let turn = self.query_turn.fetch_add(1, Ordering::Relaxed);
                lock(&self.query_embedders[turn % self.query_embedders.len()])
            }
        };
        let t0 = Instant::now();
        let v = embedder.embed(&[text])?.remove(0);
        drop(embedder);
        let mut stats = lock(&self.stats);
        stats.embed_seconds += t0.elapsed().as_secs_f64();
        stats.queries_embedded += 1;
        Ok(v)
    }
}

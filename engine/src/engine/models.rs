//! The model pool: which embedding model instance runs a text. Queries take the first
//! free instance; indexing spreads its texts over all of them, except that it leaves the
//! query instance alone while recalls come (one within [`READS_QUIET`]), so a recall
//! never waits for another client's indexing to finish a text.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, TryLockError};

use amber_retrieval::ChunkConfig;
use std::time::{Duration, Instant};

use super::{Engine, SharedEmbedder, lock, read};
use crate::Result;

/// An embedding model in use: its id, dimension and chunking, and its instances.
pub(crate) struct Models {
    /// The id recorded with every vector ([`amber_retrieval::Embedder::model_id`]).
    pub(crate) id: String,
    pub(crate) dim: usize,
    pub(crate) chunking: ChunkConfig,
    /// An endpoint's (it batches its own requests), read once from the model.
    pub(crate) remote: bool,
    /// The instance that indexes.
    pub(crate) index: SharedEmbedder,
    /// The instances a query may use, in order of preference: the query model (if
    /// loaded), then the indexing model. A query takes the first one free.
    pub(crate) query: Vec<SharedEmbedder>,
    /// Where this model puts unrelated texts, once measured or read
    /// ([`Engine::calibration`]).
    pub(crate) calibration: OnceLock<Arc<amber_core::calibration::Calibration>>,
    /// Held while the calibration is measured (once, however many ask at once).
    pub(crate) calibrating: std::sync::Mutex<()>,
    /// The vectors of the last questions asked ([`RECENT_QUERIES`] at most): one
    /// model, so the same text always has the same vector.
    recent: std::sync::Mutex<RecentQueries>,
}

/// Questions whose vectors are kept. A session's opening prompt is embedded for its
/// briefing, then for the interjection gate and advice: one model run serves them.
pub(crate) const RECENT_QUERIES: usize = 256;

/// The vectors of recent question texts, oldest dropped first.
#[derive(Default)]
struct RecentQueries {
    vectors: std::collections::HashMap<String, Vec<f32>>,
    order: std::collections::VecDeque<String>,
}

impl RecentQueries {
    fn get(&self, text: &str) -> Option<Vec<f32>> {
        self.vectors.get(text).cloned()
    }

    fn put(&mut self, text: &str, v: Vec<f32>) {
        if self.vectors.insert(text.to_string(), v).is_none() {
            self.order.push_back(text.to_string());
        }
        while self.order.len() > RECENT_QUERIES {
            if let Some(old) = self.order.pop_front() {
                self.vectors.remove(&old);
            }
        }
    }
}

impl Models {
    /// The set of these instances, its id, dimension and chunking read from `index`.
    pub(crate) fn new(index: SharedEmbedder, query: Vec<SharedEmbedder>) -> Arc<Models> {
        let (id, dim, chunking, remote) = {
            let e = lock(&index);
            (e.model_id().to_string(), e.dim(), e.chunk_config(), e.may_be_away())
        };
        Arc::new(Models {
            id,
            dim,
            chunking,
            remote,
            index,
            query,
            calibration: OnceLock::new(),
            calibrating: std::sync::Mutex::new(()),
            recent: Default::default(),
        })
    }
}

/// Vectors of some of a list of texts, each with the text's index in the list.
type Embedded = Vec<(usize, Vec<f32>)>;

/// How long after a recall indexing keeps off the query instance. Measured with
/// `amber-eval fairness` (docs/RELIABILITY.md): sharing it, a recall behind a write flood
/// waited for the text being embedded there (p99 10x idle); leaving it alone, under 2x.
pub(crate) const READS_QUIET: Duration = Duration::from_secs(2);

/// Milliseconds on a clock of this process (the first call is 0).
pub(crate) fn clock() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_millis() as u64
}

impl Engine {
    /// The embedding model in force.
    pub(crate) fn models(&self) -> Arc<Models> {
        read(&self.models).clone()
    }

    /// Notes that a recall is under way (indexing leaves the query instance alone).
    pub(super) fn note_read(&self) {
        self.last_read.store(clock().max(1), Ordering::Relaxed);
    }

    /// True while recalls come: one started within [`READS_QUIET`].
    fn reads_recent(&self) -> bool {
        let last = self.last_read.load(Ordering::Relaxed);
        last > 0 && clock().saturating_sub(last) < READS_QUIET.as_millis() as u64
    }

    /// Embeds texts for indexing, one per model run, taking each model's lock per text
    /// (a query waits at most for one text). With a query model loaded, both instances
    /// work through the texts at once, one thread each, so indexing uses both cores even
    /// for short texts (one model run of a short text barely uses a second thread).
    pub(super) fn embed_texts(&self, m: &Models, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let models = &m.query;
        if m.remote {
            // An endpoint: one call, which batches its requests (the server runs them).
            return Ok(lock(&m.index).embed(texts)?);
        }
        if models.len() < 2 || texts.len() < 2 {
            let mut out = Vec::with_capacity(texts.len());
            for text in texts {
                out.extend(lock(&m.index).embed(&[*text])?);
            }
            return Ok(out);
        }
        let next = AtomicUsize::new(0);
        // `yields`: the query instance, given back (between texts) while recalls come.
        let work = |model: &SharedEmbedder, yields: bool| -> Result<Embedded> {
            let mut done = Vec::new();
            loop {
                if yields && self.reads_recent() {
                    return Ok(done);
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(text) = texts.get(i) else { return Ok(done) };
                let v = lock(model).embed(&[*text])?.pop();
                done.extend(v.map(|v| (i, v)));
            }
        };
        let parts: Vec<Result<Embedded>> = std::thread::scope(|s| {
            let helpers: Vec<_> = models[1..].iter().map(|m| s.spawn(|| work(m, false))).collect();
            let mut parts = vec![work(&models[0], true)];
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
        self.embed_query_with(&self.models(), text)
    }

    /// [`Engine::embed_query`] with the given model set (a recall keeps the one it began with).
    pub(super) fn embed_query_with(&self, m: &Models, text: &str) -> Result<Vec<f32>> {
        self.note_read();
        if let Some(v) = lock(&m.recent).get(text) {
            lock(&self.stats).queries_from_recent += 1;
            return Ok(v);
        }
        let free = m.query.iter().find_map(|m| match m.try_lock() {
            Ok(g) => Some(g),
            Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        });
        let mut embedder = match free {
            Some(g) => g,
            None => {
                let turn = self.query_turn.fetch_add(1, Ordering::Relaxed);
                lock(&m.query[turn % m.query.len()])
            }
        };
        let t0 = Instant::now();
        let v = embedder.embed_queries(&[text]);
        drop(embedder);
        let v: Result<Vec<Vec<f32>>> = v.map_err(crate::Error::from);
        // Only an endpoint that is away (or answers again) changes the engine's health.
        let v = if v.as_ref().is_err_and(|e| !e.is_model_away()) {
            v
        } else {
            self.noted(super::health::QUERY_MODEL, v)
        };
        let v = v?.remove(0);
        lock(&m.recent).put(text, v.clone());
        let mut stats = lock(&self.stats);
        stats.embed_seconds += t0.elapsed().as_secs_f64();
        stats.queries_embedded += 1;
        Ok(v)
    }
}

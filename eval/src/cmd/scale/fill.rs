//! Growing the scale store: the real base paragraphs first (embedded by the model), then
//! variants whose vectors are made from the bases' real ones and put in the embedding
//! cache before the memories are filed.

use std::time::Instant;

use amber_core::{MemoryType, NewMemory, Scope};
use amber_engine::Engine;
use amber_retrieval::{Embedder, FastEmbedder};
use amber_store::prelude::*;
use amber_store::{ChunkKey, Store};
use anyhow::Context;
use serde_json::{Value, json};

use super::{SCOPE, ScaleArgs, normalize, sha256};
use crate::common::{Rng, progress};

/// Memories per `remember_batch` (one commit, then an indexing pass).
const BATCH: usize = 500;

/// A base paragraph and its real vector.
pub(super) struct Base {
    text: String,
    vector: Vec<f32>,
}

/// A sentence of a paragraph of at least 30 bytes, picked at random, at most `max`
/// bytes (cut at a char boundary); the paragraph's start when it has none.
fn piece<'a>(text: &'a str, rng: &mut Rng, max: usize) -> &'a str {
    let sentences: Vec<&str> =
        text.split_inclusive(['.', '?', '!', '\n']).map(str::trim).filter(|s| s.len() >= 30).collect();
    let s = rng.pick(&sentences).copied().unwrap_or(text);
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].trim()
}

/// Variant `n`: base `i`'s paragraph followed by a sentence of base `j` and one of base
/// `k`, and the vector `normalize(v_i + 0.5 v_j + 0.25 v_k + g)`, `g` Gaussian of
/// expected length `noise`.
pub(super) fn variant(seed: u64, n: u64, bases: &[Base], noise: f32) -> (String, Vec<f32>) {
    let mut rng = Rng::new(seed ^ n.wrapping_mul(0xA24B_AED4_963E_E407));
    let (i, j, k) = (rng.below(bases.len()), rng.below(bases.len()), rng.below(bases.len()));
    let text = format!(
        "{} {} {}",
        bases[i].text,
        piece(&bases[j].text, &mut rng, 150),
        piece(&bases[k].text, &mut rng, 150)
    );
    let dim = bases[i].vector.len();
    let sigma = noise / (dim as f32).sqrt();
    let mut v: Vec<f32> = (0..dim)
        .map(|d| {
            bases[i].vector[d]
                + 0.5 * bases[j].vector[d]
                + 0.25 * bases[k].vector[d]
                + sigma * rng.gauss() as f32
        })
        .collect();
    normalize(&mut v);
    (text, v)
}

fn kind_of(n: u64) -> MemoryType {
    match n % 20 {
        0 => MemoryType::Pattern,
        1..=4 => MemoryType::Event,
        5 => MemoryType::Discovery,
        _ => MemoryType::Fact,
    }
}

/// Grows the store to `a.memories`; returns what the fill did in this run.
pub(super) fn grow(
    engine: &Engine,
    embedder: &mut FastEmbedder,
    corpus: &[String],
    a: &ScaleArgs,
) -> anyhow::Result<Value> {
    let scope: Scope = SCOPE.parse()?;
    let model = engine.model_id();
    let mut have = engine.status()?.memories as usize;
    let start = engine.stats();
    // What the store holds and its indexes do not (a run cut short, or an index of an
    // older format that the engine set out to rebuild at open): indexed first.
    let t = Instant::now();
    engine.index_pending()?;
    let caught_up_secs = t.elapsed().as_secs_f64();
    let t0 = Instant::now();
    if have < a.bases {
        let pb = progress(a.bases, "scale bases (embedded)");
        pb.set_position(have as u64);
        for group in corpus[have..].chunks(256) {
            let batch = group.iter().map(|t| NewMemory::new(t.clone()).in_scope(scope.clone())).collect();
            have += engine.writer()?.remember_batch(batch)?.iter().filter(|r| r.created).count();
            pb.set_position(have as u64);
        }
        pb.finish_and_clear();
    }
    let bases_secs = t0.elapsed().as_secs_f64();
    let db = a.store.join("amber.db");
    let mut cache = Store::open(&db).with_context(|| format!("opening {}", db.display()))?;
    let keys: Vec<ChunkKey<'_>> =
        corpus.iter().map(|t| ChunkKey { scope: &scope, hash: sha256(t) }).collect();
    let bases: Vec<Base> = corpus
        .iter()
        .zip(cache.cached_vectors(&model, &keys)?)
        .filter_map(|(t, v)| v.map(|vector| Base { text: t.clone(), vector }))
        .collect();
    anyhow::ensure!(!bases.is_empty(), "no base paragraph has a cached vector under {model}");
    let (mut duplicates, mut long, mut stale) = (0u64, 0u64, 0u32);
    let mut n = have.saturating_sub(a.bases) as u64;
    let t1 = Instant::now();
    let from = have;
    let pb = progress(a.memories, "scale variants (cached vectors)");
    pb.set_position(have as u64);
    while have < a.memories {
        let want = (a.memories - have).min(BATCH);
        let mut texts = Vec::with_capacity(want);
        let mut vectors = Vec::with_capacity(want);
        while texts.len() < want {
            let (text, v) = variant(a.seed, n, &bases, a.noise);
            n += 1;
            // A variant of more than one chunk would be embedded by the model: skipped.
            if embedder.chunk(&text).len() != 1 {
                long += 1;
                continue;
            }
            texts.push((text, kind_of(n)));
            vectors.push(v);
        }
        let keys: Vec<ChunkKey<'_>> =
            texts.iter().map(|(t, _)| ChunkKey { scope: &scope, hash: sha256(t) }).collect();
        let rows: Vec<(ChunkKey<'_>, &[f32])> =
            keys.iter().copied().zip(vectors.iter().map(Vec::as_slice)).collect();
        cache.put_vectors(&model, &rows)?;
        drop(rows);
        drop(keys);
        let batch: Vec<NewMemory> = texts
            .into_iter()
            .map(|(t, kind)| {
                let mut m = NewMemory::new(t).in_scope(scope.clone());
                m.kind = kind;
                m
            })
            .collect();
        let made = engine.writer()?.remember_batch(batch)?;
        let created = made.iter().filter(|r| r.created).count();
        duplicates += (made.len() - created) as u64;
        have += created;
        stale = if created == 0 { stale + 1 } else { 0 };
        if stale == 20 {
            anyhow::bail!(
                "{} bases give no new variant in 20 batches ({have} memories): use more --bases",
                bases.len()
            );
        }
        pb.set_position(have as u64);
    }
    pb.finish_and_clear();
    let variants_secs = t1.elapsed().as_secs_f64();
    let end = engine.stats();
    Ok(json!({
        "index_caught_up_at_open_seconds": caught_up_secs,
        "bases_seconds": bases_secs,
        "variants_filed": have - from,
        "variants_seconds": variants_secs,
        "variants_per_second": if variants_secs > 0.0 { (have - from) as f64 / variants_secs } else { 0.0 },
        "variants_duplicate": duplicates,
        "variants_skipped_more_than_one_chunk": long,
        "bases_with_vector": bases.len(),
        "chunks_embedded": end.chunks_embedded - start.chunks_embedded,
        "chunks_from_cache": end.chunks_from_cache - start.chunks_from_cache,
        "cache_writes_skipped": end.cache_writes_skipped - start.cache_writes_skipped,
    }))
}

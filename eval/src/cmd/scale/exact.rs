//! The HNSW index's recall against exact search: every live memory's vector read back
//! from the embedding cache (the vectors the index was built from, in f32), the exact
//! top 10 by cosine, against what the saved index (as the daemon loads it) answers at
//! each search depth asked.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::Instant;

use amber_retrieval::{Embedder, FastEmbedder, VectorIndex, split_key};
use amber_store::prelude::*;
use amber_store::{ChunkKey, Store};
use anyhow::Context;
use serde_json::{Value, json};

use super::{ScaleArgs, normalize, sha256};
use crate::common::{Rng, percentile, progress};

/// The engine's candidate depth for the vector ranking (`EngineOptions::candidates`).
const DEPTH: usize = 100;

/// Every live memory of one chunk with its cached vector: (seqs, vectors laid end to end).
fn stored_vectors(reader: &Store, model: &str) -> anyhow::Result<(Vec<u64>, Vec<f32>, u64)> {
    let (mut seqs, mut flat, mut without) = (Vec::new(), Vec::new(), 0u64);
    let mut after = 0u64;
    loop {
        let page = reader.scan(after, u64::MAX, 10_000)?;
        let Some(last) = page.last() else { break };
        after = last.seq;
        let hashes: Vec<[u8; 32]> = page.iter().map(|m| sha256(&m.content)).collect();
        let keys: Vec<ChunkKey<'_>> =
            page.iter().zip(&hashes).map(|(m, h)| ChunkKey { scope: &m.scope, hash: *h }).collect();
        for (m, v) in page.iter().zip(reader.cached_vectors(model, &keys)?) {
            match v {
                Some(v) => {
                    seqs.push(m.seq);
                    flat.extend_from_slice(&v);
                }
                // more than one chunk: not in the comparison
                None => without += 1,
            }
        }
    }
    Ok((seqs, flat, without))
}

/// The `k` best (index, cosine) of unit `q` among the unit vectors in `flat`.
fn exact_top(flat: &[f32], dim: usize, q: &[f32], k: usize) -> Vec<usize> {
    let mut scored: Vec<(f32, usize)> =
        flat.chunks_exact(dim).enumerate().map(|(i, v)| (dot(v, q), i)).collect();
    let k = k.min(scored.len());
    if k == 0 {
        return Vec::new();
    }
    scored.select_nth_unstable_by(k - 1, |a, b| b.0.total_cmp(&a.0));
    scored.truncate(k);
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored.into_iter().map(|(_, i)| i).collect()
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// One query's figures at one search depth.
struct Row<'a> {
    kind: &'a str,
    /// Share of the exact top 10 in the index's top 10.
    at10: f64,
    /// The same, counting a hit within 1e-3 of the exact 10th's cosine (ann-benchmarks).
    close: f64,
    /// Share of the exact top 10 in the index's top 100 (the engine's candidates).
    at100: f64,
    ms: f64,
}

fn summary(rows: &[Row<'_>], kind: Option<&str>) -> Value {
    let sel: Vec<&Row<'_>> = rows.iter().filter(|r| kind.is_none_or(|k| r.kind == k)).collect();
    let n = sel.len().max(1) as f64;
    let mut ms: Vec<f64> = sel.iter().map(|r| r.ms).collect();
    ms.sort_by(f64::total_cmp);
    json!({
        "queries": sel.len(),
        "recall_at_10": sel.iter().map(|r| r.at10).sum::<f64>() / n,
        "recall_at_10_ties_1e-3": sel.iter().map(|r| r.close).sum::<f64>() / n,
        "exact_top10_within_hnsw_top100": sel.iter().map(|r| r.at100).sum::<f64>() / n,
        "queries_below_0_9_at_10": sel.iter().filter(|r| r.at10 < 0.9).count(),
        "search_ms_p50": percentile(&ms, 0.5),
        "search_ms_p99": percentile(&ms, 0.99),
    })
}

fn share(found: &[u64], exact: &[u64]) -> f64 {
    let found: HashSet<&u64> = found.iter().collect();
    exact.iter().filter(|s| found.contains(s)).count() as f64 / exact.len().max(1) as f64
}

/// Runs the check; `a.samples` queries, half dev questions, half stored vectors with noise.
pub(super) fn check(
    store: &Path,
    model: &str,
    embedder: &mut FastEmbedder,
    asked: &[String],
    a: &ScaleArgs,
) -> anyhow::Result<Value> {
    let reader = Store::open_reader(&store.join("amber.db"))?;
    let t = Instant::now();
    let (seqs, flat, without) = stored_vectors(&reader, model)?;
    let read_secs = t.elapsed().as_secs_f64();
    let dim = embedder.dim();
    anyhow::ensure!(!seqs.is_empty(), "no memory of the store has a cached vector");
    let index_path = store.join("index").join("vectors.usearch");
    let t = Instant::now();
    let index =
        VectorIndex::load(&index_path, dim).with_context(|| format!("loading {}", index_path.display()))?;
    let load_secs = t.elapsed().as_secs_f64();
    let mut rng = Rng::new(a.seed ^ 0x5CA1E);
    let mut questions: Vec<&String> = asked.iter().collect();
    rng.shuffle(&mut questions);
    let mut queries: Vec<(&str, Vec<f32>)> = Vec::with_capacity(a.samples);
    for q in questions.iter().take(a.samples / 2) {
        let v = embedder.embed_queries(&[q.as_str()])?.pop().context("the model gave no vector")?;
        queries.push(("question", v));
    }
    let sigma = a.noise / (dim as f32).sqrt();
    while queries.len() < a.samples {
        let i = rng.below(seqs.len());
        let mut v: Vec<f32> =
            flat[i * dim..(i + 1) * dim].iter().map(|x| x + sigma * rng.gauss() as f32).collect();
        normalize(&mut v);
        queries.push(("near_stored", v));
    }
    let pb = progress(queries.len(), "exact search");
    let exact: Vec<(Vec<u64>, f32)> = queries
        .iter()
        .map(|(_, q)| {
            let top = exact_top(&flat, dim, q, 10);
            let tenth = top.last().map_or(f32::MIN, |&i| dot(&flat[i * dim..(i + 1) * dim], q));
            pb.inc(1);
            (top.into_iter().map(|i| seqs[i]).collect(), tenth)
        })
        .collect();
    pb.finish_and_clear();
    let position: HashMap<u64, usize> = seqs.iter().enumerate().map(|(i, s)| (*s, i)).collect();
    let mut by_ef = Vec::new();
    for &ef in &a.ef {
        index.set_expansion_search(ef);
        let mut rows: Vec<Row> = Vec::new();
        for ((kind, q), (exact, tenth)) in queries.iter().zip(&exact) {
            let t = Instant::now();
            let hits = index.search(q, DEPTH + without as usize, None)?;
            let ms = t.elapsed().as_secs_f64() * 1000.0;
            let found: Vec<u64> = hits
                .into_iter()
                .map(|(k, _)| split_key(k).0)
                .filter(|s| position.contains_key(s))
                .take(DEPTH)
                .collect();
            let top10 = &found[..found.len().min(10)];
            // ann-benchmarks' recall: a hit counts when its exact cosine is within 1e-3
            // of the exact 10th (near-ties are not misses).
            let close = top10
                .iter()
                .filter(|s| {
                    position.get(s).is_some_and(|&i| dot(&flat[i * dim..(i + 1) * dim], q) >= tenth - 1e-3)
                })
                .count() as f64
                / exact.len().max(1) as f64;
            rows.push(Row { kind, at10: share(top10, exact), close, at100: share(&found, exact), ms });
        }
        by_ef.push(json!({
            "ef": ef,
            "all": summary(&rows, None),
            "questions": summary(&rows, Some("question")),
            "near_stored": summary(&rows, Some("near_stored")),
        }));
    }
    Ok(json!({
        "vectors_compared": seqs.len(),
        "memories_of_more_than_one_chunk_left_out": without,
        "index_vectors": index.len(),
        "read_vectors_seconds": read_secs,
        "index_load_seconds": load_secs,
        "by_ef": by_ef,
    }))
}

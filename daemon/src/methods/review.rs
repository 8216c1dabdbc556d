//! `review`: the memories and runs that touched the files a change touches, ranked by
//! the files they share, rare files weighing more (`amber_tiers::review`). Memories are
//! found by BM25 on each path (its `code` field keeps `src/x.rs` whole) and kept when
//! they name the file; runs are read from the scope's newest.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use amber_core::{Query, SearchMode};
use amber_ipc::protocol::{ErrorObject, ReviewMemory, ReviewParams, ReviewResult, ReviewRun};
use amber_tiers::review::{files_in, normalize, same_file, score};

use crate::rpc::{invalid, read, wait_indexed};
use crate::state::Shared;

/// Candidates read per file from BM25 (also the cap on a file's counted df).
const PER_FILE: usize = 500;
/// Runs read from the scope.
const RUNS_READ: usize = 1_000;

pub(crate) async fn review(
    shared: &Arc<Shared>,
    peer: crate::peer::Peer,
    p: ReviewParams,
) -> Result<ReviewResult, ErrorObject> {
    // Another agent's mail and diary stay theirs (an agent reads as in no session here).
    let reader = super::reader::Reader::new(peer, None);
    if p.files.is_empty() || p.files.len() > 100 {
        return Err(invalid(format!("review takes 1 to 100 files, got {}", p.files.len())));
    }
    let k = p.k.unwrap_or(10);
    if k == 0 || k > 100 {
        return Err(invalid(format!("k must be 1 to 100, got {k}")));
    }
    let asked: Vec<String> = p.files.iter().map(|f| normalize(f)).filter(|f| !f.is_empty()).collect();
    wait_indexed(shared).await;
    let scope = p.scope.clone();
    let q_files = asked.clone();
    let (memories, runs, n) = read(shared, move |e| {
        let mut found: HashMap<u64, amber_core::Memory> = HashMap::new();
        for f in &q_files {
            let mut q = Query { mode: SearchMode::Bm25, ..Query::new(f.clone()).top(PER_FILE) };
            q.scope = scope.clone();
            for h in e.recall(&q)? {
                found.entry(h.memory.seq).or_insert(h.memory);
            }
        }
        let runs = e.runs(scope.as_ref(), None, RUNS_READ)?;
        let n: u64 = e
            .scopes()?
            .iter()
            .filter(|s| {
                scope
                    .as_ref()
                    .is_none_or(|sc| s.scope.parse::<amber_core::Scope>().is_ok_and(|x| x.is_within(sc)))
            })
            .map(|s| s.memories)
            .sum();
        Ok((found.into_values().collect::<Vec<_>>(), runs, n as usize))
    })
    .await?;
    // Document frequencies over what was found: memories and runs that name each file.
    let mem_files: Vec<Vec<String>> = memories.iter().map(|m| files_in(&m.content)).collect();
    let run_files: Vec<Vec<String>> =
        runs.iter().map(|r| files_in(&format!("{}\n{}", r.task, r.trace))).collect();
    let mut df: BTreeMap<String, usize> = BTreeMap::new();
    for f in &asked {
        let count =
            mem_files.iter().chain(run_files.iter()).filter(|ds| ds.iter().any(|d| same_file(f, d))).count();
        df.insert(f.clone(), count);
    }
    let dfm: HashMap<String, usize> = df.iter().map(|(k, v)| (k.clone(), *v)).collect();
    // The scope's documents: its live memories and the runs read.
    let n = (n + runs.len()).max(memories.len() + runs.len()).max(1);
    let mut ms: Vec<ReviewMemory> = memories
        .into_iter()
        .zip(mem_files)
        .filter_map(|(m, fs)| {
            score(&asked, &fs, &dfm, n).map(|s| ReviewMemory { memory: m, score: s.score, files: s.files })
        })
        .filter(|r| !r.memory.is_archived() && reader.may_read(&r.memory))
        .collect();
    ms.sort_by(|a, b| b.score.total_cmp(&a.score).then(b.memory.seq.cmp(&a.memory.seq)));
    ms.truncate(k);
    let mut rs: Vec<ReviewRun> = runs
        .into_iter()
        .zip(run_files)
        .filter_map(|(r, fs)| {
            score(&asked, &fs, &dfm, n).map(|s| ReviewRun { run: r, score: s.score, files: s.files })
        })
        .collect();
    rs.sort_by(|a, b| b.score.total_cmp(&a.score).then(b.run.created_at.cmp(&a.run.created_at)));
    rs.truncate(k);
    Ok(ReviewResult { memories: ms, runs: rs, df })
}

//! `amber-eval locomo`: LoCoMo retrieval, recall@k of the evidence turns (or of their
//! sessions). Each conversation is filed into its own scope and each question recalled
//! against it through `Engine::recall`; with `--expand graph`, the conversation's graph is
//! built with the no-model co-mention proposer through `EngineWriter::kg_add` first.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use amber_core::{Expand, MemoryId, Scope, SearchMode};
use amber_engine::Engine;
use amber_eval::{locomo, longmemeval, metrics};
use anyhow::bail;
use clap::Args;
use serde_json::json;

use crate::common::{
    EngineArgs, category_name, engine_config, ingest, open_engine, open_rankings, progress, ranked_hits,
    scope_segment, sha256_file, write_report,
};

/// Arguments of `amber-eval locomo`.
#[derive(Args, Debug)]
pub(crate) struct LocomoArgs {
    /// The LoCoMo file (locomo10.json format).
    #[arg(long)]
    data: PathBuf,
    /// session or turn.
    #[arg(long, default_value = "session")]
    granularity: String,
    /// Cut-offs, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,3,5,10,20")]
    k: Vec<usize>,
    /// `graph`: build each conversation's graph with the no-model co-mention proposer
    /// (speakers and proper names; see `amber_eval::comention`) and recall with
    /// `expand: graph`.
    #[arg(long, default_value = "none")]
    expand: String,
    #[command(flatten)]
    engine: EngineArgs,
}

/// Runs `amber-eval locomo`.
pub(crate) fn run(a: LocomoArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let granularity: longmemeval::Granularity =
        a.granularity.parse().map_err(|e| anyhow::anyhow!("--granularity: {e}"))?;
    let turn_level = granularity == longmemeval::Granularity::Turn;
    let mode: SearchMode = a.engine.mode.parse()?;
    if a.k.is_empty() || a.k.contains(&0) {
        bail!("--k needs positive cut-offs");
    }
    let expand = match a.expand.as_str() {
        "none" => Expand::None,
        "graph" => Expand::Graph,
        other => bail!("--expand {other:?}: expected none or graph"),
    };
    let sha = sha256_file(&a.data)?;
    let (mut convs, quirks) = locomo::load(&a.data)?;
    let n_questions: usize = convs.iter().map(|c| c.qa.len()).sum();
    if let Some(n) = a.engine.limit {
        convs.truncate(n);
    }
    let (engine, _tmp) = open_engine(&a.engine)?;
    let embed_before = engine.stats().embed_seconds;
    let mut rankings = open_rankings(a.engine.rankings.as_deref())?;
    let kmax = *a.k.iter().max().unwrap_or(&10);
    let pb = progress(convs.iter().map(|c| c.qa.len()).sum(), "locomo");
    let mut all: Vec<BTreeMap<String, f64>> = Vec::new();
    let mut by_cat: BTreeMap<String, Vec<BTreeMap<String, f64>>> = BTreeMap::new();
    let mut no_evidence = 0;
    let (mut graph_facts, mut graph_entities, mut graph_fired) = (0, 0, 0);
    for c in &convs {
        let scope: Scope =
            format!("locomo/{}/{}", granularity.as_str(), scope_segment(&c.sample_id)).parse()?;
        let docs = if turn_level { c.turn_docs() } else { c.session_docs() };
        let (memories, _) = ingest(&engine, &scope, docs.into_iter())?;
        if expand == Expand::Graph {
            let (f, e) = build_graph(&engine, &scope, c, &memories, turn_level)?;
            graph_facts += f;
            graph_entities += e;
        }
        let now = c.sessions.iter().filter_map(|s| s.time).max();
        for qa in &c.qa {
            pb.inc(1);
            let (ranked, graph) =
                ranked_hits(&engine, &qa.question, &scope, (kmax, mode, now, expand), &memories)?;
            graph_fired += usize::from(graph);
            if let Some(w) = rankings.as_mut() {
                writeln!(
                    w,
                    "{}",
                    json!({"sample_id": c.sample_id, "question": qa.question, "ranked": ranked})
                )?;
            }
            let evidence = if turn_level { qa.evidence.clone() } else { c.evidence_session_ids(qa) };
            let mut scores = BTreeMap::new();
            for &k in &a.k {
                match locomo::recall_at_k(&ranked, &evidence, k) {
                    Some(r) => {
                        scores.insert(format!("recall@{k}"), r);
                    }
                    None => break,
                }
            }
            if scores.is_empty() {
                no_evidence += 1;
                continue;
            }
            by_cat.entry(category_name(qa.category)).or_default().push(scores.clone());
            all.push(scores);
        }
    }
    pb.finish_and_clear();
    if let Some(mut w) = rankings {
        w.flush()?;
    }
    engine.flush()?;
    let mut config = engine_config(&engine, &a.engine);
    config["k"] = json!(a.k);
    config["doc_text"] = json!("\"speaker: text\" per turn; a session joins its turns with newlines");
    config["questions_without_usable_evidence"] = json!(no_evidence);
    config["expand"] = json!(a.expand);
    if expand == Expand::Graph {
        config["graph"] = json!({
            "proposer": "amber_eval::comention (speakers + proper names seen twice; mentions, mentioned_with)",
            "facts": graph_facts,
            "entities": graph_entities,
            "graph_weight": engine.options().graph_weight,
            "questions_with_graph_hits": graph_fired,
        });
    }
    config["conversations_run"] = json!(convs.len());
    let report = json!({
        "dataset": "locomo",
        "model": engine.model_id(),
        "data_file": a.data,
        "data_sha256": sha,
        "n_questions": n_questions,
        "n_scored": all.len(),
        "granularity": granularity.as_str(),
        "mode": mode.as_str(),
        "config": config,
        "quirks": quirks,
        "metrics": metrics::mean(&all),
        "per_type": by_cat.iter().map(|(t, v)| (t.clone(), metrics::mean(v))).collect::<BTreeMap<_, _>>(),
        "wall_seconds": started.elapsed().as_secs_f64(),
        "embed_seconds": engine.stats().embed_seconds - embed_before,
    });
    write_report(&report, a.engine.out.as_deref())
}

/// Builds a conversation's graph with the co-mention proposer through the engine's
/// `kg_add` (which also links the memories that name each entity). Returns (facts,
/// entities) stored.
fn build_graph(
    engine: &Engine,
    scope: &Scope,
    c: &locomo::Conversation,
    memories: &HashMap<MemoryId, Vec<String>>,
    turn_level: bool,
) -> anyhow::Result<(usize, usize)> {
    let mut memory_of: HashMap<&str, &MemoryId> = HashMap::new();
    for (m, docs) in memories {
        for d in docs {
            memory_of.insert(d.as_str(), m);
        }
    }
    let mut utterances = Vec::new();
    for s in &c.sessions {
        for t in &s.turns {
            let doc = if turn_level { t.dia_id.as_str() } else { s.id.as_str() };
            if let Some(m) = memory_of.get(doc) {
                utterances.push(amber_eval::comention::Utterance {
                    memory: m,
                    speaker: &t.speaker,
                    text: &t.text,
                });
            }
        }
    }
    let (entities, facts) = amber_eval::comention::propose(&utterances);
    let mut stored = 0;
    engine.writer()?.kg_add(scope, &entities, &[])?;
    for chunk in facts.chunks(1000) {
        stored += engine.writer()?.kg_add(scope, &[], chunk)?.facts.len();
    }
    let n_entities = engine.read_store(|s| s.kg_stats(Some(scope), 0))?.entities as usize;
    Ok((stored, n_entities))
}

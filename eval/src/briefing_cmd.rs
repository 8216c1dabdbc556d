//! `amber-eval briefing`: the tier-1 briefing with pointers (the default) against the
//! old verbatim briefing (`pointers: false, event_weight: 1.0`), in the daemon's way:
//! recall the opening prompt (top `candidates`, 30, hybrid) in the session's scope, then
//! [`amber_tiers::briefing::brief`] within the 1,500-token budget.
//!
//! **Part A, the fixture** (no benchmark data): about 80 hand-written memories of one
//! project (a payments ledger service, `eval/fixtures/project_memories.jsonl`, built into
//! the binary) of every type and realistic lengths, dated `days_ago` before now, and 8
//! opening prompts (`eval/fixtures/project_prompts.json`), some aimed at one memory
//! (`target`, the opening of its text), some vague. Per prompt and in total: memories
//! shown, tokens used, memories shown in full, for each briefing; and whether the target
//! memory is shown (and in full). A third briefing, pointers with `event_weight: 1.0`,
//! isolates the weight of raw captures (`events_shown`); it is not run on LongMemEval,
//! whose memories all have one type.
//!
//! **Part B, LongMemEval** (`--data`): each question's haystack filed at session level
//! exactly as `amber-eval longmemeval` files it (user turns, one scope per question, the
//! shared embedding cache), the question as the opening prompt, the question date as now.
//! Per briefing, averaged over the questions: items shown, precision (share of the shown
//! items that are evidence sessions), recall_any (at least one evidence session shown),
//! recall_all (every one), tokens, and whether an evidence session is shown in full
//! (`recall_any_in_full`; verbatim shows everything in full). Two gold sets: `answer_session_ids` over the
//! non-abstention questions, and the official session gold (`has_answer` user turns)
//! over those that have any.

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use amber_core::{Expand, Hit, MemoryId, MemoryType, NewMemory, Query, Scope, SearchMode};
use amber_engine::Engine;
use amber_eval::longmemeval::{self, Granularity};
use amber_tiers::briefing::{BriefingConfig, SUMMARY_CHARS, brief};
use amber_tiers::identity::estimate_tokens;
use anyhow::{Context, bail};
use clap::Args;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{EngineArgs, engine_config, file_haystack, open_engine, open_rankings, progress, write_report};

/// The fixture's memories, one JSON object a line.
const MEMORIES: &str = include_str!("../fixtures/project_memories.jsonl");
/// The fixture's opening prompts.
const PROMPTS: &str = include_str!("../fixtures/project_prompts.json");

const DAY: i64 = 86_400_000;

/// Arguments of `amber-eval briefing`.
#[derive(Args, Debug)]
pub struct BriefingArgs {
    /// A LongMemEval file (.json or .json.xz) for part B; without it only part A runs.
    #[arg(long)]
    data: Option<PathBuf>,
    /// The fixture's memories (JSON lines of {type, content, days_ago}) [default: the
    /// built-in eval/fixtures/project_memories.jsonl].
    #[arg(long, value_name = "FILE")]
    memories: Option<PathBuf>,
    /// The fixture's prompts (a JSON array of {prompt, target}) [default: the built-in
    /// eval/fixtures/project_prompts.json].
    #[arg(long, value_name = "FILE")]
    prompts: Option<PathBuf>,
    /// Skip part A (the fixture).
    #[arg(long)]
    no_fixture: bool,
    /// Put each fixture briefing's text in the report.
    #[arg(long)]
    texts: bool,
    /// The pointer briefing's `min_relevance` [default: the daemon's default].
    #[arg(long)]
    min_relevance: Option<f32>,
    #[command(flatten)]
    engine: EngineArgs,
}

/// One memory of the fixture.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixtureMemory {
    /// Its type.
    #[serde(rename = "type")]
    pub kind: MemoryType,
    /// Its text.
    pub content: String,
    /// How long ago it happened, in days (its event time).
    pub days_ago: u32,
}

/// One opening prompt of the fixture.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixturePrompt {
    /// The prompt.
    pub prompt: String,
    /// The opening of the memory it is aimed at, if any (`null` for a vague prompt).
    pub target: Option<String>,
}

/// Parses the fixture's memories.
pub fn parse_memories(text: &str) -> anyhow::Result<Vec<FixtureMemory>> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).with_context(|| format!("memory line {}", i + 1)))
        .collect()
}

/// Parses the fixture's prompts.
pub fn parse_prompts(text: &str) -> anyhow::Result<Vec<FixturePrompt>> {
    serde_json::from_str(text).context("prompts: a JSON array of {prompt, target}")
}

/// The length class of a memory: short (< 300 characters), paragraph (300 to 999), long.
pub fn length_class(content: &str) -> &'static str {
    match content.chars().count() {
        0..300 => "short",
        300..1000 => "paragraph",
        _ => "long",
    }
}

/// The two briefings compared, and on the fixture the pointers without the event weight.
fn configs(min_relevance: Option<f32>) -> [(&'static str, BriefingConfig); 3] {
    let mut new = BriefingConfig::default();
    if let Some(m) = min_relevance {
        new.min_relevance = m;
    }
    let old = BriefingConfig { pointers: false, event_weight: 1.0, ..BriefingConfig::default() };
    let no_event_weight = BriefingConfig { event_weight: 1.0, ..BriefingConfig::default() };
    [("pointers", new), ("verbatim", old), ("pointers_event_weight_1", no_event_weight)]
}

fn config_json(c: &BriefingConfig) -> Value {
    serde_json::to_value(c).unwrap_or(Value::Null)
}

fn recall(
    engine: &Engine,
    text: &str,
    scope: &Scope,
    (k, mode, now): (usize, SearchMode, Option<i64>),
) -> anyhow::Result<Vec<Hit>> {
    let q = Query { now, mode, expand: Expand::None, ..Query::new(text).in_scope(scope.clone()).top(k) };
    Ok(engine.recall(&q)?)
}

/// Expanded items whose whole text already fits their pointer line's summary (shown twice).
fn expanded_whole(b: &amber_tiers::briefing::Briefing, hits: &[Hit]) -> usize {
    b.items
        .iter()
        .filter(|i| i.expanded)
        .filter_map(|i| hits.iter().find(|h| h.memory.id == i.id))
        .filter(|h| {
            h.memory.content.split_whitespace().collect::<Vec<_>>().join(" ").chars().count() <= SUMMARY_CHARS
        })
        .count()
}

fn ratio(a: f64, b: f64) -> Value {
    if b > 0.0 { json!(a / b) } else { Value::Null }
}

fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() { f64::NAN } else { xs.iter().sum::<f64>() / xs.len() as f64 }
}

/// Part A: the fixture.
fn run_fixture(a: &BriefingArgs, engine: &Engine, mode: SearchMode) -> anyhow::Result<Value> {
    let read = |p: &Option<PathBuf>, builtin: &str| -> anyhow::Result<(String, String)> {
        match p {
            Some(p) => Ok((
                std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?,
                p.display().to_string(),
            )),
            None => Ok((builtin.to_string(), "built-in".to_string())),
        }
    };
    let (mem_text, mem_src) = read(&a.memories, MEMORIES)?;
    let (prompt_text, prompt_src) = read(&a.prompts, PROMPTS)?;
    let fixture = parse_memories(&mem_text)?;
    let prompts = parse_prompts(&prompt_text)?;
    if fixture.is_empty() || prompts.is_empty() {
        bail!("the fixture needs memories and prompts");
    }
    let now = chrono::Utc::now().timestamp_millis();
    let scope: Scope = "project/ledger-3f9a2c1d".parse()?;
    let batch: Vec<NewMemory> = fixture
        .iter()
        .map(|f| {
            let mut m = NewMemory::new(f.content.clone()).of_type(f.kind).in_scope(scope.clone());
            m.event_time = Some(now - i64::from(f.days_ago) * DAY);
            m
        })
        .collect();
    let stored = engine.remember_batch(batch)?;
    let ids: Vec<MemoryId> = stored.into_iter().map(|r| r.memory.id).collect();
    let mut mix: BTreeMap<&str, usize> = BTreeMap::new();
    let mut types: BTreeMap<&str, usize> = BTreeMap::new();
    for f in &fixture {
        *mix.entry(length_class(&f.content)).or_default() += 1;
        *types.entry(f.kind.as_str()).or_default() += 1;
    }
    let all_tokens: usize = fixture.iter().map(|f| estimate_tokens(&f.content)).sum();
    let cfgs = configs(a.min_relevance);
    let k = cfgs[0].1.candidates.clamp(1, amber_core::MAX_K);
    let mut per_prompt = Vec::new();
    // Per config: shown, tokens, expanded, events shown, targets shown, targets in full,
    // expanded though already whole in their line, items not in full, their tokens.
    let mut totals: Vec<[usize; 9]> = vec![[0; 9]; cfgs.len()];
    let mut targets = 0usize;
    for p in &prompts {
        let hits = recall(engine, &p.prompt, &scope, (k, mode, None))?;
        let target: Option<&MemoryId> = match &p.target {
            Some(t) => {
                let i = fixture
                    .iter()
                    .position(|f| f.content.starts_with(t.as_str()))
                    .with_context(|| format!("no memory starts with the target {t:?}"))?;
                Some(&ids[i])
            }
            None => None,
        };
        targets += usize::from(target.is_some());
        let target_hit = target.and_then(|t| hits.iter().position(|h| h.memory.id == *t));
        let mut row = json!({
            "prompt": p.prompt,
            "target": p.target,
            "candidates": hits.len(),
            "target_candidate_rank": target_hit.map(|r| r + 1),
            "target_cosine": target_hit.and_then(|r| hits[r].evidence.best_chunk_cosine),
            "cosines_at_least_expand_cosine": hits.iter()
                .filter(|h| h.evidence.best_chunk_cosine.is_some_and(|c| c >= cfgs[0].1.expand_cosine))
                .count(),
        });
        for (ci, (name, cfg)) in cfgs.iter().enumerate() {
            let b = brief(&p.prompt, &hits, now, cfg, |_| false);
            let expanded = b.items.iter().filter(|i| i.expanded).count();
            let events = b.items.iter().filter(|i| i.kind == MemoryType::Event).count();
            let t_item = target.and_then(|t| b.items.iter().find(|i| i.id == *t));
            // Verbatim shows every memory in full.
            let t_full = t_item.is_some_and(|i| i.expanded || !cfg.pointers);
            let t = &mut totals[ci];
            t[0] += b.items.len();
            t[1] += b.tokens;
            t[2] += expanded;
            t[3] += events;
            t[4] += usize::from(t_item.is_some());
            t[5] += usize::from(t_full);
            let whole = expanded_whole(&b, &hits);
            t[6] += whole;
            let lines = b.items.iter().filter(|i| !i.expanded && cfg.pointers);
            t[7] += lines.clone().count();
            t[8] += lines.map(|i| i.tokens).sum::<usize>();
            let mut v = json!({
                "shown": b.items.len(),
                "tokens": b.tokens,
                "expanded": expanded,
                "expanded_already_whole_in_line": whole,
                "events_shown": events,
                "left_out": b.left_out,
                "types": b.items.iter().map(|i| i.kind.as_str()).collect::<Vec<_>>(),
            });
            if target.is_some() {
                v["target_shown"] = json!(t_item.is_some());
                v["target_in_full"] = json!(t_full);
            }
            if a.texts {
                v["text"] = json!(b.text);
            }
            row[*name] = v;
        }
        row["shown_ratio_pointers_over_verbatim"] = ratio(
            row["pointers"]["shown"].as_f64().unwrap_or(0.0),
            row["verbatim"]["shown"].as_f64().unwrap_or(0.0),
        );
        per_prompt.push(row);
    }
    let n = prompts.len() as f64;
    let mut total = json!({ "prompts": prompts.len(), "prompts_with_target": targets });
    for (ci, (name, _)) in cfgs.iter().enumerate() {
        let t = totals[ci];
        total[*name] = json!({
            "shown": t[0],
            "shown_mean": t[0] as f64 / n,
            "tokens": t[1],
            "tokens_mean": t[1] as f64 / n,
            "expanded": t[2],
            "events_shown": t[3],
            "targets_shown": t[4],
            "targets_in_full": t[5],
            "expanded_already_whole_in_line": t[6],
            "pointer_line_tokens_mean": ratio(t[8] as f64, t[7] as f64),
        });
    }
    total["shown_ratio_pointers_over_verbatim"] = ratio(totals[0][0] as f64, totals[1][0] as f64);
    total["tokens_per_memory_pointers"] = ratio(totals[0][1] as f64, totals[0][0] as f64);
    total["tokens_per_memory_verbatim"] = ratio(totals[1][1] as f64, totals[1][0] as f64);
    Ok(json!({
        "memories_file": mem_src,
        "prompts_file": prompt_src,
        "memories": fixture.len(),
        "length_mix": mix,
        "types": types,
        "memories_tokens_total": all_tokens,
        "scope": scope.as_str(),
        "now": "the wall clock; event_time = now - days_ago",
        "total": total,
        "per_prompt": per_prompt,
    }))
}

/// What one briefing showed on one question.
struct Shown {
    /// Per item, the doc ids it stands for.
    docs: Vec<Vec<String>>,
    /// Per item, whether its whole text is in the briefing (always, when verbatim).
    full: Vec<bool>,
    /// Items shown in full under their pointer line.
    expanded: usize,
    tokens: usize,
}

/// One briefing's scores, question by question.
#[derive(Default, Clone)]
struct Scores {
    shown: Vec<f64>,
    tokens: Vec<f64>,
    expanded: Vec<f64>,
    precision: Vec<f64>,
    evidence: Vec<f64>,
    recall_any: Vec<f64>,
    recall_all: Vec<f64>,
    evidence_in_full: Vec<f64>,
    evidence_shown: usize,
    shown_total: usize,
    evidence_full: usize,
    full_total: usize,
}

impl Scores {
    fn push(&mut self, s: &Shown, gold: &HashSet<&str>) {
        let shown_docs = &s.docs;
        let is_gold = |docs: &Vec<String>| docs.iter().any(|d| gold.contains(d.as_str()));
        let good = shown_docs.iter().filter(|d| is_gold(d)).count();
        let in_full = shown_docs.iter().zip(&s.full).any(|(d, &f)| f && is_gold(d));
        let covered: HashSet<&str> = shown_docs.iter().flatten().map(String::as_str).collect();
        self.shown.push(shown_docs.len() as f64);
        self.tokens.push(s.tokens as f64);
        self.expanded.push(s.expanded as f64);
        self.evidence_in_full.push(if in_full { 1.0 } else { 0.0 });
        self.precision.push(if shown_docs.is_empty() { 0.0 } else { good as f64 / shown_docs.len() as f64 });
        self.evidence.push(good as f64);
        self.recall_any.push(if good > 0 { 1.0 } else { 0.0 });
        self.recall_all.push(if gold.iter().all(|g| covered.contains(g)) { 1.0 } else { 0.0 });
        self.evidence_full += shown_docs.iter().zip(&s.full).filter(|(d, f)| **f && is_gold(d)).count();
        self.full_total += s.full.iter().filter(|&&f| f).count();
        self.evidence_shown += good;
        self.shown_total += shown_docs.len();
    }

    fn report(&self) -> Value {
        json!({
            "questions": self.shown.len(),
            "items_shown": mean(&self.shown),
            "precision": mean(&self.precision),
            "precision_micro": if self.shown_total > 0 { self.evidence_shown as f64 / self.shown_total as f64 } else { f64::NAN },
            "evidence_items_shown": mean(&self.evidence),
            "recall_any": mean(&self.recall_any),
            "recall_all": mean(&self.recall_all),
            "recall_any_in_full": mean(&self.evidence_in_full),
            "in_full_total": self.full_total,
            "in_full_precision": if self.full_total > 0 { self.evidence_full as f64 / self.full_total as f64 } else { f64::NAN },
            "tokens": mean(&self.tokens),
            "expanded": mean(&self.expanded),
        })
    }
}

/// Part B: LongMemEval, session level.
fn run_longmemeval(a: &BriefingArgs, engine: &Engine, mode: SearchMode) -> anyhow::Result<Option<Value>> {
    let Some(data) = &a.data else { return Ok(None) };
    let started = Instant::now();
    let sha = crate::sha256_file(data)?;
    let mut questions = longmemeval::load(data)?;
    let n_questions = questions.len();
    if let Some(n) = a.engine.limit {
        questions.truncate(n);
    }
    let mut records = open_rankings(a.engine.rankings.as_deref())?;
    let all = configs(a.min_relevance);
    let cfgs = &all[..2];
    let k = cfgs[0].1.candidates.clamp(1, amber_core::MAX_K);
    // [gold set][config]
    let mut scores: Vec<Vec<Scores>> = vec![vec![Scores::default(); cfgs.len()]; 2];
    let mut cand_any = [Vec::new(), Vec::new()];
    // Per question type, with the answer_session_ids gold.
    let mut by_type: BTreeMap<String, Vec<Scores>> = BTreeMap::new();
    let mut abstention = 0usize;
    // Per scored question, the best chunk cosine of its best evidence candidate.
    let mut evidence_cosine: Vec<f64> = Vec::new();
    let mut session_tokens: Vec<usize> = Vec::new();
    let pb = progress(questions.len(), "briefing");
    for q in &questions {
        pb.inc(1);
        let hay = file_haystack(engine, q, Granularity::Session, false)?;
        session_tokens
            .extend(hay.docs.iter().filter(|d| !d.text.trim().is_empty()).map(|d| estimate_tokens(&d.text)));
        let now = longmemeval::parse_date(&q.question_date);
        let hits = recall(engine, &q.question, &hay.scope, (k, mode, now))?;
        if longmemeval::is_abstention(q) {
            abstention += 1;
            continue;
        }
        let official = longmemeval::gold_ids(q, Granularity::Session);
        let golds: [HashSet<&str>; 2] = [
            q.answer_session_ids.iter().map(String::as_str).collect(),
            official.iter().map(String::as_str).collect(),
        ];
        let now_ms = now.unwrap_or_else(|| chrono::Utc::now().timestamp_millis());
        let docs_of = |id: &MemoryId| hay.memories.get(id).cloned().unwrap_or_default();
        let cand_docs: Vec<Vec<String>> = hits.iter().map(|h| docs_of(&h.memory.id)).collect();
        let mut record = json!({"question_id": q.question_id, "question_type": q.question_type});
        let mut shown_by_cfg = Vec::new();
        for (name, cfg) in cfgs {
            let b = brief(&q.question, &hits, now_ms, cfg, |_| false);
            let docs: Vec<Vec<String>> = b.items.iter().map(|i| docs_of(&i.id)).collect();
            let full: Vec<bool> = b.items.iter().map(|i| i.expanded || !cfg.pointers).collect();
            let expanded = b.items.iter().filter(|i| i.expanded).count();
            record[*name] = json!({"shown": docs, "in_full": full, "tokens": b.tokens});
            shown_by_cfg.push(Shown { docs, full, expanded, tokens: b.tokens });
        }
        let best = hits
            .iter()
            .filter(|h| docs_of(&h.memory.id).iter().any(|d| golds[0].contains(d.as_str())))
            .filter_map(|h| h.evidence.best_chunk_cosine)
            .fold(f32::NEG_INFINITY, f32::max);
        if best.is_finite() {
            evidence_cosine.push(f64::from(best));
        }
        for (gi, gold) in golds.iter().enumerate() {
            if gold.is_empty() {
                continue;
            }
            let any = cand_docs.iter().any(|d| d.iter().any(|x| gold.contains(x.as_str())));
            cand_any[gi].push(if any { 1.0 } else { 0.0 });
            for (ci, shown) in shown_by_cfg.iter().enumerate() {
                scores[gi][ci].push(shown, gold);
                if gi == 0 {
                    by_type
                        .entry(q.question_type.clone())
                        .or_insert_with(|| vec![Scores::default(); cfgs.len()])[ci]
                        .push(shown, gold);
                }
            }
        }
        if let Some(w) = records.as_mut() {
            writeln!(w, "{record}")?;
        }
    }
    pb.finish_and_clear();
    if let Some(mut w) = records {
        w.flush()?;
    }
    session_tokens.sort_unstable();
    let budget = cfgs[1].1.budget_tokens;
    let fits = session_tokens.iter().filter(|&&t| t + 40 <= budget).count();
    evidence_cosine.sort_by(f64::total_cmp);
    let expand_cosine = f64::from(cfgs[0].1.expand_cosine);
    let gold_sets = ["answer_session_ids", "official"];
    let mut metrics = serde_json::Map::new();
    for (gi, g) in gold_sets.iter().enumerate() {
        let mut m = serde_json::Map::new();
        for (ci, (name, _)) in cfgs.iter().enumerate() {
            m.insert(name.to_string(), scores[gi][ci].report());
        }
        m.insert("candidates_recall_any_at_30".into(), json!(mean(&cand_any[gi])));
        metrics.insert(g.to_string(), Value::Object(m));
    }
    Ok(Some(json!({
        "data_file": data,
        "data_sha256": sha,
        "n_questions": n_questions,
        "questions_run": questions.len(),
        "abstention_skipped": abstention,
        "gold": {
            "answer_session_ids": "the benchmark's evidence sessions (answer_session_ids), every non-abstention question",
            "official": "the official session gold (answer_* sessions with a has_answer user turn), questions that have any",
        },
        "corpus": "session level, user turns joined by a space, one scope per question (as amber-eval longmemeval)",
        "query": "the question text, verbatim; now = the question date (recall and recency)",
        "session_tokens": {
            "sessions": session_tokens.len(),
            "median": session_tokens.get(session_tokens.len() / 2),
            "mean": mean(&session_tokens.iter().map(|&t| t as f64).collect::<Vec<_>>()),
            "share_fitting_the_budget_verbatim": if session_tokens.is_empty() { f64::NAN } else { fits as f64 / session_tokens.len() as f64 },
        },
        "evidence_best_cosine": {
            "definition": "per question, the best chunk cosine to the question of its best answer_session_ids candidate in the top 30",
            "questions": evidence_cosine.len(),
            "median": evidence_cosine.get(evidence_cosine.len() / 2),
            "share_at_least_expand_cosine": if evidence_cosine.is_empty() { f64::NAN } else {
                evidence_cosine.iter().filter(|&&c| c >= expand_cosine).count() as f64 / evidence_cosine.len() as f64
            },
        },
        "metrics": metrics,
        "per_type_answer_session_ids": by_type
            .iter()
            .map(|(t, v)| {
                let m: serde_json::Map<String, Value> =
                    cfgs.iter().zip(v).map(|((n, _), s)| (n.to_string(), s.report())).collect();
                (t.clone(), Value::Object(m))
            })
            .collect::<serde_json::Map<_, _>>(),
        "wall_seconds": started.elapsed().as_secs_f64(),
    })))
}

/// Runs `amber-eval briefing`.
pub fn run(a: BriefingArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let mode: SearchMode = a.engine.mode.parse()?;
    if a.no_fixture && a.data.is_none() {
        bail!("nothing to do: --no-fixture without --data");
    }
    let (engine, _tmp) = open_engine(&a.engine)?;
    let embed_before = engine.stats().embed_seconds;
    let fixture = if a.no_fixture {
        None
    } else {
        eprintln!("briefing: part A, the fixture");
        let t = Instant::now();
        let mut v = run_fixture(&a, &engine, mode)?;
        v["wall_seconds"] = json!(t.elapsed().as_secs_f64());
        Some(v)
    };
    if a.data.is_some() {
        eprintln!("briefing: part B, LongMemEval");
    }
    let lme = run_longmemeval(&a, &engine, mode)?;
    engine.flush()?;
    let cfgs = configs(a.min_relevance);
    let report = json!({
        "benchmark": "tier-1 briefing: pointers (default) vs verbatim (pointers false, event_weight 1)",
        "briefings": cfgs.iter().map(|(n, c)| (n.to_string(), config_json(c))).collect::<serde_json::Map<_, _>>(),
        "recall": format!("the opening prompt, top {} ({}), in the scope", cfgs[0].1.candidates, mode.as_str()),
        "engine": engine_config(&engine, &a.engine),
        "fixture": fixture,
        "longmemeval": lme,
        "wall_seconds": started.elapsed().as_secs_f64(),
        "embed_seconds": engine.stats().embed_seconds - embed_before,
    });
    write_report(&report, a.engine.out.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixture_parses_and_has_the_intended_mix() {
        let mems = parse_memories(MEMORIES).unwrap();
        assert!((70..=90).contains(&mems.len()), "{} memories", mems.len());
        let n = mems.len() as f64;
        let share =
            |class: &str| mems.iter().filter(|m| length_class(&m.content) == class).count() as f64 / n;
        assert!((0.35..=0.45).contains(&share("short")), "short {}", share("short"));
        assert!((0.35..=0.45).contains(&share("paragraph")), "paragraph {}", share("paragraph"));
        assert!((0.15..=0.25).contains(&share("long")), "long {}", share("long"));
        for m in &mems {
            let len = m.content.chars().count();
            match length_class(&m.content) {
                "paragraph" => assert!(len <= 800, "a paragraph of {len}: {}", &m.content[..40]),
                "long" => assert!((1000..=3000).contains(&len), "a long one of {len}"),
                _ => {}
            }
        }
        let kinds: HashSet<MemoryType> = mems.iter().map(|m| m.kind).collect();
        assert_eq!(kinds.len(), MemoryType::ALL.len(), "every type: {kinds:?}");
        let prompts = parse_prompts(PROMPTS).unwrap();
        assert_eq!(prompts.len(), 8);
        for p in &prompts {
            if let Some(t) = &p.target {
                let n = mems.iter().filter(|m| m.content.starts_with(t.as_str())).count();
                assert_eq!(n, 1, "the target {t:?} names one memory");
            }
        }
        assert!(prompts.iter().filter(|p| p.target.is_none()).count() >= 2, "some vague prompts");
    }
}

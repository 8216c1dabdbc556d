//! Part A of `amber-eval briefing`: a hand-written project fixture (about 80 memories of
//! one project, 8 opening prompts), each prompt briefed by each compared configuration.

use std::collections::BTreeMap;
use std::path::Path;

use amber_core::{Hit, MemoryId, MemoryType, NewMemory, Scope, SearchMode};
use amber_engine::Engine;
use amber_tiers::briefing::{SUMMARY_CHARS, brief};
use amber_tiers::identity::estimate_tokens;
use anyhow::{Context, bail};
use serde::Deserialize;
use serde_json::{Value, json};

use super::compared::{configs, recall};

/// The fixture's memories, one JSON object a line.
const MEMORIES: &str = include_str!("../../../fixtures/project_memories.jsonl");
/// The fixture's opening prompts.
const PROMPTS: &str = include_str!("../../../fixtures/project_prompts.json");

const DAY: i64 = 86_400_000;

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
/// `a / b`, or null when `b` is not positive.
fn ratio(a: f64, b: f64) -> Value {
    if b > 0.0 { json!(a / b) } else { Value::Null }
}

/// Part A: the fixture, from the given memories and prompts files or the built-in ones;
/// `texts` puts each briefing's text in the report.
pub(super) fn run(
    engine: &Engine,
    mode: SearchMode,
    (memories, prompts, texts): (Option<&Path>, Option<&Path>, bool),
    min_relevance: Option<f32>,
) -> anyhow::Result<Value> {
    let read = |p: Option<&Path>, builtin: &str| -> anyhow::Result<(String, String)> {
        match p {
            Some(p) => Ok((
                std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?,
                p.display().to_string(),
            )),
            None => Ok((builtin.to_string(), "built-in".to_string())),
        }
    };
    let (mem_text, mem_src) = read(memories, MEMORIES)?;
    let (prompt_text, prompt_src) = read(prompts, PROMPTS)?;
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
    let stored = engine.writer()?.remember_batch(batch)?;
    let ids: Vec<MemoryId> = stored.into_iter().map(|r| r.memory.id).collect();
    let mut mix: BTreeMap<&str, usize> = BTreeMap::new();
    let mut types: BTreeMap<&str, usize> = BTreeMap::new();
    for f in &fixture {
        *mix.entry(length_class(&f.content)).or_default() += 1;
        *types.entry(f.kind.as_str()).or_default() += 1;
    }
    let all_tokens: usize = fixture.iter().map(|f| estimate_tokens(&f.content)).sum();
    let cfgs = configs(min_relevance);
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
            if texts {
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

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

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

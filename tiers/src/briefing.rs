//! Tier 1, the briefing: at session start, the memories that matter for this project and
//! its opening prompt, within a token budget.
//!
//! Ranking: the hybrid engine's candidates for the query (the opening prompt, else
//! "recent work on {project}"), in the project's scope, rescored as
//!
//! `score = relevance_weight * relevance + recency_weight * recency + importance_weight * importance`
//!
//! - relevance: the candidate's fused score divided by the best one's (1 for the top hit);
//! - recency: `0.5 ^ (age / half_life)`, age from the memory's event time, else filing time;
//! - importance: `metadata.importance` when the writer gave a number in 0..=1, else by
//!   type (see [`importance`]).
//!
//! Defaults 0.6 / 0.25 / 0.15 with a 14-day half-life: relevance leads, so the briefing
//! answers the prompt; among comparably relevant memories the recent and the important
//! (intents, invalidations, patterns) come first. Memories are packed best first; one
//! that does not fit the remaining budget is left out and the next one tried.

use amber_core::{Hit, Memory, MemoryId, MemoryType, Millis};
use serde::{Deserialize, Serialize};

use crate::identity::estimate_tokens;

/// Briefing settings (`[briefing]` table).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BriefingConfig {
    /// Token budget of the briefing text (default 1,500).
    pub budget_tokens: usize,
    /// Candidates asked of the engine (default 30).
    pub candidates: usize,
    /// Weight of relevance (default 0.6).
    pub relevance_weight: f32,
    /// Weight of recency (default 0.25).
    pub recency_weight: f32,
    /// Weight of importance (default 0.15).
    pub importance_weight: f32,
    /// Age at which recency halves, in days (default 14).
    pub half_life_days: f32,
}

impl Default for BriefingConfig {
    fn default() -> BriefingConfig {
        BriefingConfig {
            budget_tokens: 1500,
            candidates: 30,
            relevance_weight: 0.6,
            recency_weight: 0.25,
            importance_weight: 0.15,
            half_life_days: 14.0,
        }
    }
}

/// One memory in a briefing, with the parts of its score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BriefItem {
    /// The memory.
    pub id: MemoryId,
    /// Its type.
    pub kind: MemoryType,
    /// The combined score.
    pub score: f32,
    /// Fused score relative to the best candidate.
    pub relevance: f32,
    /// Recency in 0..=1.
    pub recency: f32,
    /// Importance in 0..=1.
    pub importance: f32,
    /// Estimated tokens of its entry in the text.
    pub tokens: usize,
}

/// What the briefing served.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Briefing {
    /// The query the candidates came from.
    pub query: String,
    /// The text to hand the agent (empty when nothing was served).
    pub text: String,
    /// The memories served, in the order of the text.
    pub items: Vec<BriefItem>,
    /// The budget.
    pub budget_tokens: usize,
    /// Estimated tokens used.
    pub tokens: usize,
    /// Candidates left out because they did not fit the budget.
    pub left_out: usize,
    /// Candidates skipped because this session was already given them.
    pub already_served: usize,
}

/// A memory's importance: `metadata.importance` (a number in 0..=1) when present, else by
/// type: intent and invalidation 0.8, pattern 0.7, fact and discovery 0.6, lifefact 0.5,
/// event 0.3.
pub fn importance(m: &Memory) -> f32 {
    if let Some(x) = m.metadata.get("importance").and_then(|v| v.as_f64())
        && (0.0..=1.0).contains(&x)
    {
        return x as f32;
    }
    match m.kind {
        MemoryType::Intent | MemoryType::Invalidation => 0.8,
        MemoryType::Pattern => 0.7,
        MemoryType::Fact | MemoryType::Discovery => 0.6,
        MemoryType::Lifefact => 0.5,
        MemoryType::Event => 0.3,
    }
}

/// `0.5 ^ (age / half_life)`; a time in the future counts as now.
pub fn recency(time: Millis, now: Millis, half_life_days: f32) -> f32 {
    let age_days = (now - time).max(0) as f64 / 86_400_000.0;
    0.5f64.powf(age_days / f64::from(half_life_days.max(0.001))) as f32
}

/// One entry of the briefing text.
fn entry(m: &Memory) -> String {
    let date = crate::session::date(m.time());
    format!("- [{} {}] {}\n", m.kind.as_str(), date, m.content)
}

/// Builds a briefing from the engine's candidates (in fused order), skipping memories
/// `served` says this session already has.
pub fn brief(
    query: &str,
    hits: &[Hit],
    now: Millis,
    cfg: &BriefingConfig,
    served: impl Fn(&MemoryId) -> bool,
) -> Briefing {
    let mut out =
        Briefing { query: query.to_string(), budget_tokens: cfg.budget_tokens, ..Briefing::default() };
    let best = hits.iter().map(|h| h.evidence.fused).fold(0.0f32, f32::max);
    let mut scored: Vec<(&Hit, BriefItem)> = Vec::new();
    for h in hits {
        if served(&h.memory.id) {
            out.already_served += 1;
            continue;
        }
        let relevance = if best > 0.0 { h.evidence.fused / best } else { 0.0 };
        let rec = recency(h.memory.time(), now, cfg.half_life_days);
        let imp = importance(&h.memory);
        let score = cfg.relevance_weight * relevance + cfg.recency_weight * rec + cfg.importance_weight * imp;
        let item = BriefItem {
            id: h.memory.id.clone(),
            kind: h.memory.kind,
            score,
            relevance,
            recency: rec,
            importance: imp,
            tokens: estimate_tokens(&entry(&h.memory)),
        };
        scored.push((h, item));
    }
    scored.sort_by(|a, b| b.1.score.total_cmp(&a.1.score));
    const HEADER: &str = "Memories Amber holds for this work (verbatim, most relevant first):\n";
    let header = estimate_tokens(HEADER);
    let mut used = header;
    let mut body = String::new();
    for (h, item) in scored {
        if used + item.tokens > cfg.budget_tokens {
            out.left_out += 1;
            continue;
        }
        used += item.tokens;
        body.push_str(&entry(&h.memory));
        out.items.push(item);
    }
    if !out.items.is_empty() {
        out.text = format!("{HEADER}{body}");
        out.tokens = used;
    }
    out
}

#[cfg(test)]
mod tests {
    use amber_core::{Evidence, NewMemory, Scope};

    use super::*;

    const DAY: Millis = 86_400_000;

    fn hit(content: &str, kind: MemoryType, fused: f32, time: Millis) -> Hit {
        let n = NewMemory::new(content).of_type(kind);
        let memory = Memory {
            id: n.id(),
            seq: 1,
            content: content.into(),
            scope: Scope::default(),
            kind,
            source: None,
            author: None,
            session_id: None,
            created_at: time,
            event_time: None,
            metadata: serde_json::json!({}),
            forgotten_at: None,
        };
        Hit { memory, evidence: Evidence { fused, ..Evidence::default() } }
    }

    #[test]
    fn recency_halves_every_half_life() {
        let now = 100 * DAY;
        assert!((recency(now, now, 14.0) - 1.0).abs() < 1e-6);
        assert!((recency(now - 14 * DAY, now, 14.0) - 0.5).abs() < 1e-6);
        assert!((recency(now - 28 * DAY, now, 14.0) - 0.25).abs() < 1e-6);
        assert!((recency(now + DAY, now, 14.0) - 1.0).abs() < 1e-6, "future counts as now");
    }

    #[test]
    fn score_combines_the_documented_weights() {
        let now = 100 * DAY;
        // Equal relevance: the recent intent beats the old event.
        let hits = [
            hit("an old event about the deploy", MemoryType::Event, 0.03, now - 60 * DAY),
            hit("we intend to move the deploy to Fridays", MemoryType::Intent, 0.03, now - DAY),
        ];
        let b = brief("deploy", &hits, now, &BriefingConfig::default(), |_| false);
        assert_eq!(b.items[0].kind, MemoryType::Intent);
        let it = &b.items[0];
        let expect = 0.6 * 1.0 + 0.25 * recency(now - DAY, now, 14.0) + 0.15 * 0.8;
        assert!((it.score - expect).abs() < 1e-5, "{} vs {expect}", it.score);
        // Much higher relevance wins over recency and type.
        let hits = [
            hit("the deploy runbook", MemoryType::Event, 0.05, now - 60 * DAY),
            hit("we intend to move", MemoryType::Intent, 0.01, now),
        ];
        let b = brief("deploy", &hits, now, &BriefingConfig::default(), |_| false);
        assert_eq!(b.items[0].kind, MemoryType::Event);
    }

    #[test]
    fn budget_is_respected_and_served_memories_skipped() {
        let now = 10 * DAY;
        let long = "x".repeat(400); // about 100 tokens with its entry
        let hits: Vec<Hit> = (0..10)
            .map(|i| hit(&format!("{i} {long}"), MemoryType::Fact, 1.0 - i as f32 * 0.01, now))
            .collect();
        let cfg = BriefingConfig { budget_tokens: 350, ..BriefingConfig::default() };
        let first = hits[0].memory.id.clone();
        let b = brief("q", &hits, now, &cfg, |id| *id == first);
        assert!(b.tokens <= 350 && estimate_tokens(&b.text) <= 350, "{} tokens", b.tokens);
        assert_eq!(b.items.len(), 3);
        assert_eq!(b.already_served, 1);
        assert_eq!(b.left_out, 6);
        assert!(!b.items.iter().any(|i| i.id == first));
        assert!(b.text.contains(&hits[1].memory.content), "verbatim content");
    }

    #[test]
    fn nothing_to_serve_is_an_empty_text() {
        let b = brief("q", &[], 0, &BriefingConfig::default(), |_| false);
        assert!(b.text.is_empty() && b.items.is_empty() && b.tokens == 0);
    }
}

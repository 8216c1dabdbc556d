//! The session-start briefing of a new agent session in the project, built as the
//! daemon's `serve::briefing` builds it with the product's own pieces: the opening
//! prompt (or, with none, the overview `recent work on <project>` with no relevance cut
//! and no document chunks) recalled in the session's scopes (the project's and `user`,
//! one ranking, `candidates` times 8 fetched), minus what the session may not be served
//! unasked (`Session::is_echo`: raw captures, anything external, skills;
//! `Session::may_serve`), the first `candidates` kept; then the person's standing
//! preferences (`Engine::standing_preferences`, pinned by `amber_tiers::preferences`
//! as the daemon does: as relevant as the best, packed first); then
//! `amber_tiers::briefing::brief_pinned` with the default `[briefing]` settings. No inbox (no
//! mail is addressed to the agent), so the whole budget is the briefing's.
//!
//! Measured: how many of the person's standing preferences (the fixture's
//! `preference: true` lifefacts) the briefing holds, per opening.

use std::collections::HashSet;
use std::path::PathBuf;

use amber_core::{MAX_K, MemoryId, Millis};
use amber_tiers::briefing::{Briefing, BriefingConfig, brief_pinned};
use amber_tiers::preferences::{MAX_STANDING, pin};
use amber_tiers::session::Session;
use serde_json::{Value, json};

use super::measure::Asker;

/// How many candidates are fetched per one wanted before the echo rule (the daemon's
/// `serve::ECHO_OVERFETCH`).
const ECHO_OVERFETCH: usize = 8;
/// The longest opening prompt searched (the daemon's `serve::MAX_QUERY_CHARS`).
const MAX_QUERY_CHARS: usize = 2000;

/// A new session's briefing for `prompt` (None: the overview).
pub(crate) fn briefing(
    a: &Asker<'_>,
    (project, root): (&str, &str),
    prompt: Option<&str>,
    now: Millis,
) -> anyhow::Result<Briefing> {
    let mut cfg = BriefingConfig::default();
    let (query, overview) = match prompt.map(str::trim) {
        Some(t) if !t.is_empty() => (t.chars().take(MAX_QUERY_CHARS).collect::<String>(), false),
        _ => {
            cfg.min_relevance = 0.0;
            (format!("recent work on {project}"), true)
        }
    };
    let mut session = Session::new(
        "mixed-briefing".into(),
        "claude-code".into(),
        Some(PathBuf::from(root)),
        a.project.clone(),
        now,
    );
    session.also = vec![a.user.clone()];
    let n = cfg.candidates;
    let k = n.clamp(1, MAX_K).saturating_mul(ECHO_OVERFETCH).min(MAX_K);
    let mut hits = a.engine.recall(&a.query(&query, k))?;
    hits.retain(|h| {
        !session.is_echo(&h.memory)
            && session.may_serve(&h.memory)
            && !(overview && amber_core::document::is_chunk(&h.memory.metadata))
    });
    hits.truncate(n);
    // The daemon's `standing_preferences`: the person's lifefacts in the session's
    // scopes, pinned whatever the ranking found.
    let prefs = a.engine.standing_preferences(&session.scopes(), MAX_STANDING)?;
    let pinned = pin(&mut hits, prefs, &session);
    Ok(brief_pinned(&query, &hits, now, &cfg, |_| false, &pinned))
}

/// Every opening and the overview: the share of `preferences` each briefing holds.
pub(crate) fn preferences_kept(
    a: &Asker<'_>,
    (project, root): (&str, &str),
    openings: &[String],
    preferences: &HashSet<MemoryId>,
) -> anyhow::Result<Value> {
    let mut rows = Vec::new();
    let mut shares = Vec::new();
    let prompts = std::iter::once(None).chain(openings.iter().map(|o| Some(o.as_str())));
    for p in prompts {
        let b = briefing(a, (project, root), p, a.now)?;
        let kept = b.items.iter().filter(|i| preferences.contains(&i.id)).count();
        let share = if preferences.is_empty() { 1.0 } else { kept as f64 / preferences.len() as f64 };
        shares.push(share);
        rows.push(json!({
            "opening": p.unwrap_or("(none: the overview)"),
            "items": b.items.len(),
            "tokens": b.tokens,
            "preferences_kept": kept,
            "share": share,
        }));
    }
    let mean = shares.iter().sum::<f64>() / shares.len().max(1) as f64;
    let min = shares.iter().copied().fold(f64::INFINITY, f64::min);
    Ok(json!({
        "preferences": preferences.len(),
        "mean_share": mean,
        "min_share": if shares.is_empty() { Value::Null } else { json!(min) },
        "kept_all_everywhere": shares.iter().all(|s| *s >= 1.0),
        "briefings": rows,
    }))
}

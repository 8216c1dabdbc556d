//! The person's standing preferences in a briefing (issue 45): the lifefacts the person
//! filed or promoted in a session's scopes (`amber_engine::Engine::standing_preferences`)
//! are briefed in every session whatever the ranking found, and packed before anything
//! else, so volume never pushes them out: at 100k memories as at 10.

use amber_core::{Evidence, Hit, Memory, MemoryId};

use crate::session::Session;

/// The most standing preferences a briefing keeps (newest filed first). Each is one
/// pointer line, so at most about 600 of the default 1,500 tokens.
pub const MAX_STANDING: usize = 16;

/// Puts `preferences` among a briefing's candidates as relevant as the best one (a
/// candidate that is one already is raised to it), leaving out what `session` may not be
/// served unasked. Returns their ids, to pin in [`crate::briefing::brief_pinned`].
pub fn pin(hits: &mut Vec<Hit>, preferences: Vec<Memory>, session: &Session) -> Vec<MemoryId> {
    let best = hits.iter().map(|h| h.evidence.fused).fold(f32::MIN_POSITIVE, f32::max);
    let mut ids = Vec::new();
    for m in preferences.into_iter().take(MAX_STANDING) {
        if session.is_echo(&m) || !session.may_serve(&m) {
            continue;
        }
        ids.push(m.id.clone());
        match hits.iter_mut().find(|h| h.memory.id == m.id) {
            Some(h) => h.evidence.fused = best,
            None => hits.push(Hit {
                memory: m,
                evidence: Evidence { fused: best, ..Evidence::default() },
                place: None,
            }),
        }
    }
    ids
}

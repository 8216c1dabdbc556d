//! The briefings compared and the recall they share, as the daemon's `session_start`
//! makes it, before `amber_tiers::briefing::brief`.

use amber_core::{Expand, Hit, Query, Scope, SearchMode};
use amber_engine::Engine;
use amber_tiers::briefing::BriefingConfig;
use serde_json::Value;

/// The two briefings compared, and on the fixture the pointers without the event weight.
pub(super) fn configs(min_relevance: Option<f32>) -> [(&'static str, BriefingConfig); 3] {
    let mut new = BriefingConfig::default();
    if let Some(m) = min_relevance {
        new.min_relevance = m;
    }
    let old = BriefingConfig { pointers: false, event_weight: 1.0, ..BriefingConfig::default() };
    let no_event_weight = BriefingConfig { event_weight: 1.0, ..BriefingConfig::default() };
    [("pointers", new), ("verbatim", old), ("pointers_event_weight_1", no_event_weight)]
}

/// A configuration as the report shows it.
pub(super) fn config_json(c: &BriefingConfig) -> Value {
    serde_json::to_value(c).unwrap_or(Value::Null)
}

/// The briefing's recall, as the daemon's `session_start` makes it: the opening prompt,
/// top `k` (the briefing's `candidates`) in the session's scope. Here `now` is the
/// benchmark's date (the daemon's is the wall clock) and there are no echoes to drop (a
/// fresh session has filed nothing).
pub(super) fn recall(
    engine: &Engine,
    text: &str,
    scope: &Scope,
    (k, mode, now): (usize, SearchMode, Option<i64>),
) -> anyhow::Result<Vec<Hit>> {
    let q = Query { now, mode, expand: Expand::None, ..Query::new(text).in_scope(scope.clone()).top(k) };
    Ok(engine.recall(&q)?)
}

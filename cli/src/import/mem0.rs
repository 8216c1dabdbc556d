//! `amber import --from mem0 FILE`: Mem0's memories, each one Amber memory.
//!
//! The shape is Mem0's own, looked up in its source and API reference:
//! - the open-source library's `Memory.get_all()` (mem0ai/mem0, `mem0/memory/main.py`)
//!   returns `{"results": [item, …]}` (with graph memory also `"relations"`), each item a
//!   `MemoryItem` dumped: `id`, `memory` (the text), `hash`, `created_at`, `updated_at`
//!   (ISO 8601 with an offset: `datetime.now(pytz.timezone("US/Pacific")).isoformat()`),
//!   the promoted keys `user_id`, `agent_id`, `run_id`, `actor_id`, `role` when set, and
//!   `metadata` (the rest of the payload);
//! - the platform's `GET /v1/memories/` (docs.mem0.ai/api-reference/memory/v1-get-memories)
//!   answers a bare list of `{id, memory, input, created_at, updated_at, owner,
//!   immutable, expiration_date, organization, metadata}`, and v2 adds `categories`,
//!   `user_id`, `agent_id`, `app_id`; paged answers wrap them as `{"results": […]}`.
//!
//! So a file is `{"results": [...]}` or a list. Each item's `memory` is filed verbatim
//! (a `fact`), its time (`created_at`, else `updated_at`) as its event time, and
//! everything else Mem0 said about it under `metadata.mem0` (its id, user, agent,
//! categories, its own metadata), where it claims nothing: the trust is Amber's stamp.

use std::path::Path;

use amber_core::{MemoryType, NewMemory, Scope};
use anyhow::{Context, bail};
use serde_json::{Map, Value};

use super::filing::{Filer, Report};

/// Fields of an item left out of `metadata.mem0`: the text itself (it is the content), a
/// search score, and the platform's `input` (the whole conversation it came from).
const LEFT_OUT: &[&str] = &["memory", "score", "input"];

/// Reads the export and files each memory into `scope`.
pub(crate) fn run(path: &Path, scope: &Scope, filer: &mut Filer, report: &mut Report) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| anyhow::anyhow!("{} is not a Mem0 export: it is not JSON ({e})", path.display()))?;
    let items = match &v {
        Value::Array(items) => items,
        Value::Object(o) => match o.get("results") {
            Some(Value::Array(items)) => items,
            _ => bail!(
                "{} is not a Mem0 export: expected {{\"results\": [...]}} (Memory.get_all) or a list of memories",
                path.display()
            ),
        },
        _ => bail!("{} is not a Mem0 export: expected an object or a list", path.display()),
    };
    report.found("memories", items.len() as u64);
    filer.total = items.len();
    let source = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let mut seen = std::collections::HashSet::new();
    for (i, item) in items.iter().enumerate() {
        let Some(o) = item.as_object() else {
            report.tally.fail("memory", format!("item {i}"), "not an object");
            continue;
        };
        let what = match o.get("id") {
            Some(Value::String(id)) => format!("mem0 {id}"),
            Some(Value::Number(id)) => format!("mem0 {id}"),
            _ => format!("item {i}"),
        };
        let text = match o.get("memory") {
            Some(Value::String(t)) if !t.trim().is_empty() => t.clone(),
            _ => {
                report.tally.fail("memory", what, "no \"memory\" text");
                continue;
            }
        };
        let m = memory(o, text, scope, &source);
        if !seen.insert(m.id()) {
            report.tally.skip("memory", what, "the same text as an earlier memory of the file");
            continue;
        }
        filer.push(m, what, report)?;
    }
    filer.finish(report)
}

/// One Mem0 item as an Amber memory.
fn memory(o: &Map<String, Value>, text: String, scope: &Scope, source: &Path) -> NewMemory {
    let kept: Map<String, Value> = o
        .iter()
        .filter(|(k, _)| !LEFT_OUT.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut m = NewMemory::new(text).in_scope(scope.clone()).of_type(MemoryType::Fact);
    m.event_time =
        ["created_at", "updated_at"].iter().find_map(|k| o.get(*k).and_then(Value::as_str).and_then(millis));
    m.source = Some(source.to_string_lossy().into_owned());
    m.metadata = serde_json::json!({ "mem0": kept });
    m
}

/// A Mem0 time: RFC 3339 (`2024-07-26T10:29:36.630547-07:00`, `2023-11-07T05:31:56Z`),
/// else a time without an offset, read as UTC.
pub(crate) fn millis(s: &str) -> Option<i64> {
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(s) {
        return Some(t.timestamp_millis());
    }
    ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f"]
        .iter()
        .find_map(|f| chrono::NaiveDateTime::parse_from_str(s, f).ok())
        .map(|t| t.and_utc().timestamp_millis())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem0_times_are_read_with_and_without_an_offset() {
        assert_eq!(millis("2023-11-07T05:31:56Z"), Some(1_699_335_116_000));
        assert_eq!(millis("2023-11-06T21:31:56.000000-08:00"), Some(1_699_335_116_000));
        assert_eq!(millis("2023-11-07T05:31:56.5"), Some(1_699_335_116_500));
        assert_eq!(millis("yesterday"), None);
    }
}

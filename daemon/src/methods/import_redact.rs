//! Secrets in an imported file are redacted as on every other way in (without
//! `keep_trust`: the person's own export comes back as it was). A memory's id is its
//! scope and text, so a memory whose text changes takes the id of its redacted text, and
//! the records of the same call that name it (outcomes, supersessions, links, replies,
//! holds, an invalidation's `supersedes`) are pointed at the new id.

use std::collections::HashMap;

use amber_core::{MemoryId, Scope};
use serde_json::Value;

/// The fields of a record that name a memory by id.
const ID_FIELDS: &[&str] = &["memory", "by", "target", "from", "to", "reply_to", "thread"];

/// Redacts the memory records' text (and source and metadata strings) in place; returns
/// how many secrets were replaced.
pub(crate) fn redact_records(records: &mut [Value]) -> usize {
    let mut renamed: HashMap<String, String> = HashMap::new();
    let mut total = 0;
    for r in records.iter_mut() {
        let Some(obj) = r.as_object_mut() else { continue };
        if obj.get("record").and_then(Value::as_str) != Some("memory") {
            continue;
        }
        let mut n = 0;
        for k in ["content", "source"] {
            if let Some(Value::String(s)) = obj.get_mut(k) {
                n += amber_tiers::redact::redact_in_place(s);
            }
        }
        if let Some(meta) = obj.get_mut("metadata") {
            n += amber_tiers::redact::redact_json(meta);
        }
        if n == 0 {
            continue;
        }
        total += n;
        let scope = obj.get("scope").and_then(Value::as_str).and_then(|s| s.parse::<Scope>().ok());
        let content = obj.get("content").and_then(Value::as_str);
        if let (Some(scope), Some(content), Some(Value::String(id))) = (scope, content, obj.get("id")) {
            let new = MemoryId::derive(&scope, content).to_string();
            renamed.insert(id.clone(), new.clone());
            obj.insert("id".into(), Value::String(new));
        }
    }
    if renamed.is_empty() {
        return total;
    }
    for r in records.iter_mut() {
        let Some(obj) = r.as_object_mut() else { continue };
        for f in ID_FIELDS {
            if let Some(Value::String(id)) = obj.get_mut(*f)
                && let Some(new) = renamed.get(id.as_str())
            {
                *id = new.clone();
            }
        }
        if let Some(Value::Array(ids)) = obj.get_mut("supersedes") {
            for v in ids.iter_mut() {
                if let Some(new) = v.as_str().and_then(|id| renamed.get(id)) {
                    *v = Value::String(new.clone());
                }
            }
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_redacted_memory_takes_its_new_id_and_the_records_naming_it_follow() {
        let scope: Scope = "p".parse().unwrap();
        let text = "the deploy token is ghp_R3aLLyS3cr3tT0k3nF0rD3pl0yB0tXy12345";
        let old = MemoryId::derive(&scope, text).to_string();
        let mut records = vec![
            json!({ "record": "memory", "id": old, "scope": "p", "content": text, "type": "fact" }),
            json!({ "record": "outcome", "memory": old, "kind": "outcome", "at": 1 }),
            json!({ "record": "memory", "id": "x", "scope": "p", "content": "plain", "supersedes": [old] }),
        ];
        assert_eq!(redact_records(&mut records), 1);
        let content = records[0]["content"].as_str().unwrap();
        assert!(!content.contains("ghp_") && content.contains("[REDACTED:"), "{content}");
        let new = MemoryId::derive(&scope, content).to_string();
        assert_eq!(records[0]["id"], new.as_str());
        assert_eq!(records[1]["memory"], new.as_str());
        assert_eq!(records[2]["supersedes"][0], new.as_str());
        assert_eq!(records[2]["id"], "x", "an unchanged memory keeps its id");
    }
}

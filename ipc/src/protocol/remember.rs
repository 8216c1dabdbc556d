//! `remember` and `remember_batch`: a memory as the caller files it, the flag that keeps
//! its secrets, and what the write did.

use amber_core::{MemoryId, NewMemory};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// `remember` params: a memory ([`NewMemory`]'s fields, flat) and `allow_secrets`.
///
/// On the wire it is one object: the memory's fields and, optionally,
/// `"allow_secrets": true`. Any other unknown field is refused, as for [`NewMemory`].
#[derive(Debug, Clone, PartialEq)]
pub struct RememberParams {
    /// The memory.
    pub memory: NewMemory,
    /// File secrets as given (default false: secret-looking strings in the content, the
    /// source and the metadata's strings are replaced by `[REDACTED:<kind>]` before
    /// anything is stored). For a person filing a secret on purpose (`amber remember
    /// --keep-secrets`); the MCP server never offers it to agents.
    pub allow_secrets: bool,
}

impl From<NewMemory> for RememberParams {
    fn from(memory: NewMemory) -> RememberParams {
        RememberParams { memory, allow_secrets: false }
    }
}

impl Serialize for RememberParams {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut v = serde_json::to_value(&self.memory).map_err(serde::ser::Error::custom)?;
        if self.allow_secrets
            && let Some(obj) = v.as_object_mut()
        {
            obj.insert("allow_secrets".into(), Value::Bool(true));
        }
        v.serialize(s)
    }
}

impl<'de> Deserialize<'de> for RememberParams {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RememberParams, D::Error> {
        let mut map = serde_json::Map::<String, Value>::deserialize(d)?;
        let allow_secrets = match map.remove("allow_secrets") {
            None => false,
            Some(Value::Bool(b)) => b,
            Some(other) => {
                return Err(D::Error::custom(format!("allow_secrets must be true or false, got {other}")));
            }
        };
        let memory = NewMemory::deserialize(Value::Object(map)).map_err(D::Error::custom)?;
        Ok(RememberParams { memory, allow_secrets })
    }
}

/// What a write did to one memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RememberResult {
    /// The memory id (derived from scope and content).
    pub id: MemoryId,
    /// Its sequence number in the store.
    pub seq: u64,
    /// False when the same content was already in the same scope.
    pub created: bool,
    /// Secrets replaced by `[REDACTED:<kind>]` before storing, in the content, the source
    /// and the metadata (0 with `allow_secrets`).
    #[serde(default)]
    pub redacted: usize,
    /// Memories its `supersedes` named that its writer may not retire (another author's,
    /// or a person's, named by an agent): they stay live, linked as disputed by it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disputed: Vec<MemoryId>,
}

/// `remember_batch` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RememberBatchParams {
    /// Up to [`MAX_BATCH`](super::MAX_BATCH) memories, committed in one transaction.
    pub memories: Vec<NewMemory>,
    /// File the batch's secrets as given (see [`RememberParams::allow_secrets`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_secrets: bool,
    /// File the batch as `external` (content from another tool, `amber import --from`)
    /// whatever door it comes through: found by recall, never served unasked. Such a
    /// batch may not supersede nor hold a lifefact.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub external: bool,
    /// The tool or source the batch came from, stamped into each memory's
    /// `metadata.origin.tool` (`import:mem0`); one line, at most 128 bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
}

/// `remember_batch` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RememberBatchResult {
    /// One entry per memory, in order.
    pub results: Vec<RememberResult>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remember_params_are_a_memory_and_an_optional_flag() {
        let p: RememberParams = serde_json::from_str(r#"{"content":"x","scope":"a/b"}"#).unwrap();
        assert_eq!(
            (p.memory.content.as_str(), p.memory.scope.as_str(), p.allow_secrets),
            ("x", "a/b", false)
        );
        let p: RememberParams = serde_json::from_str(r#"{"content":"x","allow_secrets":true}"#).unwrap();
        assert!(p.allow_secrets);
        let back = serde_json::to_value(&p).unwrap();
        assert_eq!(back["allow_secrets"], true);
        assert_eq!(serde_json::from_value::<RememberParams>(back).unwrap(), p);
        // Without the flag, the wire form is the memory's alone.
        let plain = RememberParams::from(NewMemory::new("x"));
        assert_eq!(serde_json::to_value(&plain).unwrap(), serde_json::to_value(NewMemory::new("x")).unwrap());
        for bad in [r#"{"content":"x","allow_secrets":"yes"}"#, r#"{"content":"x","scop":"a"}"#] {
            assert!(serde_json::from_str::<RememberParams>(bad).is_err(), "{bad}");
        }
    }
}

//! A person's browsing and re-filing, one memory at a time: `memory_move` (one memory
//! into another scope, as `scope_move` moves each of a scope's) and `memories` (a scope's
//! memories, newest filed first, a page at a time).

use amber_core::origin::Trust;
use amber_core::{Memory, MemoryId, MemoryType, Millis, Scope};
use serde::{Deserialize, Serialize};

/// Memories in a `memories` page when the params give no `limit`.
pub const DEFAULT_PAGE: usize = 50;

/// The most memories a `memories` page holds.
pub const MAX_PAGE: usize = 200;

/// The most characters of a memory's first line a [`MemorySummary`] carries.
pub const FIRST_LINE_CHARS: usize = 160;

/// `memory_move` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryMoveParams {
    /// The memory's id or a prefix of it.
    pub id: String,
    /// The scope to file it into.
    pub to: Scope,
}

/// `memories` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoriesParams {
    /// The scope listed (its own memories, not those of the scopes below it).
    pub scope: Scope,
    /// At most this many (1 to [`MAX_PAGE`]; [`DEFAULT_PAGE`] when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
    /// The cursor a previous page gave as `next`: the page starts after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<u64>,
    /// Forgotten and archived memories too.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub include_forgotten: bool,
}

/// One memory in a `memories` page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemorySummary {
    /// Its id.
    pub id: MemoryId,
    /// When it was filed.
    pub created: Millis,
    /// Its type.
    #[serde(rename = "type")]
    pub kind: MemoryType,
    /// How far it is trusted.
    pub trust: Trust,
    /// Its weight (1.0 until outcomes move it).
    pub weight: f32,
    /// Archived (out of recall until restored).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub archived: bool,
    /// Forgotten.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub forgotten: bool,
    /// Its first non-blank line, at most [`FIRST_LINE_CHARS`] characters (`…` when cut).
    pub first_line: String,
}

impl MemorySummary {
    /// The summary of a memory.
    pub fn of(m: &Memory) -> MemorySummary {
        let line = m.content.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
        let mut first_line: String = line.chars().take(FIRST_LINE_CHARS).collect();
        if first_line.len() < line.len() {
            first_line.push('…');
        }
        MemorySummary {
            id: m.id.clone(),
            created: m.created_at,
            kind: m.kind,
            trust: amber_core::origin::trust_of(&m.metadata),
            weight: m.weight,
            archived: m.archived_at.is_some(),
            forgotten: m.forgotten_at.is_some(),
            first_line,
        }
    }
}

/// `memories` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoriesResult {
    /// The page, newest filed first.
    pub memories: Vec<MemorySummary>,
    /// The cursor of the next (older) page, as `before`; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_takes_the_first_line_cut_to_its_cap() {
        let long = "x".repeat(FIRST_LINE_CHARS + 5);
        let m = Memory::filed(amber_core::NewMemory::new(format!("\n  \n  {long}\nsecond")), 1, 2);
        let s = MemorySummary::of(&m);
        assert_eq!(s.first_line.chars().count(), FIRST_LINE_CHARS + 1);
        assert!(s.first_line.ends_with('…'));
        let short = MemorySummary::of(&Memory::filed(amber_core::NewMemory::new("one\ntwo"), 1, 2));
        assert_eq!((short.first_line.as_str(), short.archived, short.forgotten), ("one", false, false));
        let v = serde_json::to_value(&short).unwrap();
        assert!(v.get("archived").is_none() && v["type"] == "fact", "{v}");
    }
}

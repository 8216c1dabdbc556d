//! A person's browsing and re-filing, one memory at a time: `memory_move` (one memory
//! into another scope, as `scope_move` moves each of a scope's), `memories` (a scope's
//! memories, newest filed first, a page at a time, kept by filing, type and trust and
//! counted), `documents` (a scope's ingested files) and `document` (one file's sections
//! in order).

use std::collections::BTreeMap;

use amber_core::document::{DocChunk, Place};
use amber_core::filing::Filing;
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
    /// Only memories of these filings (default: every filing).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filings: Vec<Filing>,
    /// Only memories of this type.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<MemoryType>,
    /// Only memories trusted this far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust: Option<Trust>,
    /// Skip this many of the memories kept (after `before`), for a page by number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// Count them too: the result's `total` and `by_filing`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub count: bool,
}

impl MemoriesParams {
    /// The newest page of a scope's live memories, every filing.
    pub fn of(scope: Scope) -> MemoriesParams {
        MemoriesParams {
            scope,
            limit: None,
            before: None,
            include_forgotten: false,
            filings: Vec::new(),
            kind: None,
            trust: None,
            offset: None,
            count: false,
        }
    }
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
    /// How it was filed.
    pub filing: Filing,
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
    /// Its first non-blank line, at most [`FIRST_LINE_CHARS`] characters (`…` when cut);
    /// of a document chunk, the first of its lines from the file (its locator line, the
    /// path and headings, is `file` and `headings`).
    pub first_line: String,
    /// A document chunk's file, as shown (relative to its project root when under it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// A document chunk's headings, outermost first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headings: Vec<String>,
}

/// The first non-blank line of a text, at most [`FIRST_LINE_CHARS`] characters (`…` when cut).
pub fn first_line(text: &str) -> String {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    let mut first: String = line.chars().take(FIRST_LINE_CHARS).collect();
    if first.len() < line.len() {
        first.push('…');
    }
    first
}

impl MemorySummary {
    /// The summary of a memory.
    pub fn of(m: &Memory) -> MemorySummary {
        let chunk = amber_core::document::chunk_of(&m.metadata);
        let text = match chunk {
            Some(_) => amber_core::document::chunk_body(&m.content),
            None => &m.content,
        };
        let (file, headings) = chunk.map(|c| (Some(c.label), c.headings)).unwrap_or_default();
        MemorySummary {
            id: m.id.clone(),
            created: m.created_at,
            kind: m.kind,
            filing: Filing::of(m),
            trust: amber_core::origin::trust_of(&m.metadata),
            weight: m.weight,
            archived: m.archived_at.is_some(),
            forgotten: m.forgotten_at.is_some(),
            first_line: first_line(text),
            file,
            headings,
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
    /// With `count`: how many memories the params keep (before `before` and `offset`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// With `count`: how many the type and trust filters keep, by filing (every filing,
    /// whatever `filings` asks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_filing: Option<BTreeMap<Filing, u64>>,
}

/// Files in a `documents` page when the params give no `limit`, and the most.
pub const DEFAULT_FILES: usize = 50;
/// The most files a `documents` page holds.
pub const MAX_FILES: usize = 500;
/// The most sections a `document` answer lists (a file is cut into at most 2,000).
pub const MAX_SECTIONS: usize = 5000;

/// `documents` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DocumentsParams {
    /// The scope (its own files, not those of the scopes below it).
    pub scope: Scope,
    /// Skip this many files (by path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// At most this many (1 to [`MAX_FILES`]; [`DEFAULT_FILES`] when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

/// One file in [`DocumentsResult`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DocumentFile {
    /// Its absolute path (its chunks' `source`).
    pub path: String,
    /// The path shown (relative to its project root when under it).
    pub label: String,
    /// Its live sections.
    pub sections: u64,
    /// When its newest live section was filed.
    pub filed: Millis,
}

/// `documents` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DocumentsResult {
    /// The page, by path.
    pub files: Vec<DocumentFile>,
    /// How many files the scope holds in all.
    pub total: u64,
}

/// `document` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DocumentParams {
    /// The scope.
    pub scope: Scope,
    /// The file's absolute path, as `documents` gives it.
    pub path: String,
}

/// One section in [`DocumentResult`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DocumentSection {
    /// The memory.
    pub id: MemoryId,
    /// Where it is in the file now (or was when filed, if the file no longer holds it).
    pub place: Place,
    /// Its place as filed: headings, lines, hashes.
    pub doc: DocChunk,
    /// Its first lines from the file, at most [`SECTION_OPENING_CHARS`] characters.
    pub opening: String,
    /// When it was filed.
    pub created: Millis,
}

/// The most characters of a section's opening in a [`DocumentSection`].
pub const SECTION_OPENING_CHARS: usize = 300;

/// `document` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DocumentResult {
    /// The file's absolute path.
    pub path: String,
    /// The path shown.
    pub label: String,
    /// Its live sections, in their order in the file now (those it no longer holds at
    /// the lines they had when filed).
    pub sections: Vec<DocumentSection>,
    /// True when the file held more than [`MAX_SECTIONS`] and only those are listed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
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
        assert!(v.get("archived").is_none() && v["type"] == "fact" && v["filing"] == "agent", "{v}");
        assert!(v.get("file").is_none() && v.get("headings").is_none(), "{v}");
        // A document chunk: its first line from the file, its locator as file and headings.
        let mut chunk = amber_core::NewMemory::new("docs/a.md › Setup › Linux\n\n  apt install amber\nmore");
        chunk.metadata = serde_json::json!({ "trust": "person", "doc": {
            "path": "/r/docs/a.md", "label": "docs/a.md", "lines": [3, 5], "sha256": "0", "file_sha256": "1",
            "headings": ["Setup", "Linux"] } });
        let s = MemorySummary::of(&Memory::filed(chunk, 1, 2));
        assert_eq!(s.first_line, "apt install amber");
        assert_eq!(
            (s.file.as_deref(), s.headings.as_slice()),
            (Some("docs/a.md"), &["Setup".to_string(), "Linux".to_string()][..])
        );
        assert_eq!(s.filing, Filing::Document);
    }
}

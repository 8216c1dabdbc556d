//! Documents as sources: what a memory filed from a file (`amber ingest`) records of its
//! place in that file, and where a recall finds that place now.
//!
//! A document chunk is a memory of type `fact` whose `source` is the file's absolute path
//! and whose metadata `doc` holds a [`DocChunk`]. When a file changes, the chunks no
//! longer in it are retired by one invalidation (metadata `doc_revision`, a
//! [`DocRevision`]) that supersedes them, so newest wins as for any invalidation.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The metadata key of a document chunk's place.
pub const DOC_KEY: &str = "doc";
/// The metadata key of the invalidation that retired a changed or deleted file's chunks.
pub const REVISION_KEY: &str = "doc_revision";

/// Where a chunk came from, as it was when it was filed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocChunk {
    /// The file's absolute path (also the memory's `source`).
    pub path: String,
    /// The path shown: relative to the project root when the file is under it.
    pub label: String,
    /// The chunk's first and last line in the file (1-based, inclusive).
    pub lines: [u32; 2],
    /// SHA-256 of the chunk's text (its lines, verbatim), hex.
    pub sha256: String,
    /// SHA-256 of the whole file when the chunk was filed, hex.
    pub file_sha256: String,
    /// The headings the chunk sits under, outermost first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headings: Vec<String>,
}

/// The record of a file's change or deletion on the invalidation that retired its old
/// chunks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocRevision {
    /// The file's absolute path.
    pub path: String,
    /// The path shown.
    pub label: String,
    /// SHA-256 of the file's new version; None when the file was deleted.
    pub file_sha256: Option<String>,
}

/// A document chunk's place in its file now, as a recall finds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Place {
    /// The path shown (relative to the project root when under it).
    pub path: String,
    /// The lines the chunk's text is at now (or was at when filed, if it is gone).
    pub lines: [u32; 2],
    /// Whether the file changed since the chunk was filed, and how.
    pub state: PlaceState,
}

/// How a document chunk's file stands against the chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlaceState {
    /// The file is as it was when the chunk was filed.
    Current,
    /// The file changed, but the chunk's text is still in it, at the lines given.
    Moved,
    /// The chunk's text is no longer in the file: it changed since it was filed.
    Changed,
    /// The file is gone or cannot be read.
    Missing,
}

impl PlaceState {
    /// A few words for a person or an agent.
    pub fn describe(self) -> &'static str {
        match self {
            PlaceState::Current => "unchanged since filed",
            PlaceState::Moved => "file changed since filed; this text is still there",
            PlaceState::Changed => "changed since filed: the file no longer holds this text",
            PlaceState::Missing => "the file is gone or unreadable",
        }
    }
}

impl Place {
    /// `path:first-last (state)`, as shown beside a hit.
    pub fn describe(&self) -> String {
        let [a, b] = self.lines;
        let lines = if a == b { a.to_string() } else { format!("{a}-{b}") };
        format!("{}:{lines} ({})", crate::one_line(&self.path), self.state.describe())
    }
}

/// The chunk place a memory's metadata records, if it is a document chunk.
pub fn chunk_of(metadata: &Value) -> Option<DocChunk> {
    metadata.get(DOC_KEY).and_then(|d| serde_json::from_value(d.clone()).ok())
}

/// The file revision an invalidation's metadata records, if it retired document chunks.
pub fn revision_of(metadata: &Value) -> Option<DocRevision> {
    metadata.get(REVISION_KEY).and_then(|d| serde_json::from_value(d.clone()).ok())
}

/// True for a document chunk.
pub fn is_chunk(metadata: &Value) -> bool {
    metadata.get(DOC_KEY).is_some_and(Value::is_object)
}

/// True for the invalidation of a file's change: bookkeeping, never served unasked.
pub fn is_revision(metadata: &Value) -> bool {
    metadata.get(REVISION_KEY).is_some_and(Value::is_object)
}

/// A chunk's text as filed: a locator line (the path shown, then the headings it sits
/// under) and its lines verbatim. The locator keeps a file's chunk apart from the same
/// text in another file, and gives the headings to a search.
pub fn chunk_content(label: &str, headings: &[String], body: &str) -> String {
    let mut head = crate::one_line(label);
    for h in headings {
        head.push_str(" › ");
        head.push_str(&crate::one_line(h));
    }
    format!("{head}\n{body}")
}

/// The chunk's lines verbatim: its content after the locator line.
pub fn chunk_body(content: &str) -> &str {
    content.split_once('\n').map_or("", |(_, b)| b)
}

/// Where `body` is in `text` now: the first and last line (1-based) of its first
/// occurrence starting at a line's start, if any.
pub fn locate(text: &str, body: &str) -> Option<[u32; 2]> {
    if body.is_empty() {
        return None;
    }
    let mut from = 0;
    while let Some(i) = text[from..].find(body) {
        let at = from + i;
        if at == 0 || text.as_bytes()[at - 1] == b'\n' {
            let first = text[..at].matches('\n').count() as u32 + 1;
            let last = first + body.matches('\n').count() as u32;
            return Some([first, last]);
        }
        from = at + text[at..].chars().next().map_or(1, char::len_utf8);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_is_found_at_a_line_start_only() {
        let text = "# T\nabc\nxx abc\nabc\ndef\n";
        assert_eq!(locate(text, "abc\ndef"), Some([4, 5]));
        assert_eq!(locate(text, "abc"), Some([2, 2]));
        assert_eq!(locate(text, "bc"), None, "not at a line's start");
        assert_eq!(locate(text, "zzz"), None);
        assert_eq!(locate("é abc\nabc", "abc"), Some([2, 2]));
    }

    #[test]
    fn content_is_a_locator_line_then_the_body() {
        let c = chunk_content("docs/a.md", &["Install".into(), "Linux\nbad".into()], "## x\ny");
        assert_eq!(c, "docs/a.md › Install › Linux bad\n## x\ny");
        assert_eq!(chunk_body(&c), "## x\ny");
        let p = Place { path: "docs/a.md".into(), lines: [3, 9], state: PlaceState::Moved };
        assert!(p.describe().starts_with("docs/a.md:3-9 (file changed"), "{}", p.describe());
    }
}

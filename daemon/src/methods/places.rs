//! Where a recalled document chunk is in its file now (`amber ingest`): the lines its
//! text is at, and whether the file changed since the chunk was filed. Read at recall
//! time, so a hit never shows a place the file no longer has.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::SystemTime;

use amber_core::Hit;
use amber_core::document::{self, Place, PlaceState};
use sha2::{Digest, Sha256};

/// Files whose hash is remembered (by path, modification time and length).
const MAX_CACHED: usize = 256;

type Stamp = (SystemTime, u64);

fn hashes() -> &'static Mutex<HashMap<String, (Stamp, String)>> {
    static CACHE: std::sync::OnceLock<Mutex<HashMap<String, (Stamp, String)>>> = std::sync::OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// Sets the place of every document chunk among `hits` (on the blocking pool: it reads
/// files).
pub(crate) fn mark(hits: &mut [Hit]) {
    for h in hits {
        if let Some(d) = document::chunk_of(&h.memory.metadata) {
            h.place = Some(place(&d, document::chunk_body(&h.memory.content)));
        }
    }
}

fn place(d: &document::DocChunk, body: &str) -> Place {
    let at = |lines, state| Place { path: d.label.clone(), lines, state };
    let Ok(meta) = std::fs::metadata(&d.path) else { return at(d.lines, PlaceState::Missing) };
    let stamp = (meta.modified().unwrap_or(SystemTime::UNIX_EPOCH), meta.len());
    let cached = hashes()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&d.path)
        .filter(|(s, _)| *s == stamp)
        .map(|(_, h)| h.clone());
    if cached.as_deref() == Some(d.file_sha256.as_str()) {
        return at(d.lines, PlaceState::Current);
    }
    let Ok(text) = std::fs::read_to_string(&d.path) else { return at(d.lines, PlaceState::Missing) };
    // Hashed once per version of the file; a known hash only needs the text to locate.
    let sha = cached.unwrap_or_else(|| {
        let sha = hex::encode(Sha256::digest(text.as_bytes()));
        let mut cache = hashes().lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() >= MAX_CACHED {
            cache.clear();
        }
        cache.insert(d.path.clone(), (stamp, sha.clone()));
        sha
    });
    if sha == d.file_sha256 {
        return at(d.lines, PlaceState::Current);
    }
    match document::locate(&text, body) {
        Some(lines) => at(lines, PlaceState::Moved),
        None => at(d.lines, PlaceState::Changed),
    }
}

/// Where each of a file's chunks is in it now (the web view's file page): the file read
/// and hashed once, each chunk `(its place as filed, its body)` located as
/// [`document::locate`] would (the first occurrence starting at a line's start), through
/// an index of the file's lines, so a changed file of thousands of sections costs one
/// pass, not one search per section. On the blocking pool: it reads a file.
pub(crate) fn in_file(path: &str, chunks: &[(&document::DocChunk, &str)]) -> Vec<Place> {
    let at = |d: &document::DocChunk, lines, state| Place { path: d.label.clone(), lines, state };
    // A file grown far past what ingest reads is not read here either.
    let readable =
        std::fs::metadata(path).is_ok_and(|m| m.len() <= 4 * amber_tiers::document::MAX_FILE_BYTES);
    let Some(text) = readable.then(|| std::fs::read_to_string(path).ok()).flatten() else {
        return chunks.iter().map(|(d, _)| at(d, d.lines, PlaceState::Missing)).collect();
    };
    let sha = hex::encode(Sha256::digest(text.as_bytes()));
    let lines = LineIndex::of(&text);
    chunks
        .iter()
        .map(|(d, body)| {
            if sha == d.file_sha256 {
                return at(d, d.lines, PlaceState::Current);
            }
            match lines.locate(&text, body) {
                Some(l) => at(d, l, PlaceState::Moved),
                None => at(d, d.lines, PlaceState::Changed),
            }
        })
        .collect()
}

/// A text's lines by their content, for finding many bodies in it.
struct LineIndex<'a> {
    /// Each whole line (without its `\n`) -> the byte offsets it starts at with their
    /// line numbers (1-based), in order.
    starts: HashMap<&'a str, Vec<(usize, u32)>>,
}

impl<'a> LineIndex<'a> {
    fn of(text: &'a str) -> LineIndex<'a> {
        let mut starts: HashMap<&str, Vec<(usize, u32)>> = HashMap::new();
        let mut at = 0;
        for (n, line) in text.split('\n').enumerate() {
            starts.entry(line).or_default().push((at, n as u32 + 1));
            at += line.len() + 1;
        }
        LineIndex { starts }
    }

    /// [`document::locate`], answered from the index when the body has more than one
    /// line (its first line must then be a whole line of the text).
    fn locate(&self, text: &str, body: &str) -> Option<[u32; 2]> {
        let Some((head, _)) = body.split_once('\n') else { return document::locate(text, body) };
        let &(_, first) = self.starts.get(head)?.iter().find(|&&(at, _)| text[at..].starts_with(body))?;
        Some([first, first + body.matches('\n').count() as u32])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_finds_what_locate_finds() {
        let text = "# T\nabc\nxx abc\nabc\ndef\n\nabc\ndef\nabcdef\n";
        let index = LineIndex::of(text);
        for body in
            ["abc\ndef", "abc", "bc", "zzz", "def\n\nabc", "abc\ndefx", "\nabc", "abcdef\n", "xx abc\nabc"]
        {
            assert_eq!(index.locate(text, body), document::locate(text, body), "{body:?}");
        }
    }
}

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

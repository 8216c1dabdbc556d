//! What grows the store past the fixture, the way use grows one: more raw transcript,
//! more documents, more of what agents file. One deterministic stream, interleaved by
//! share so that every prefix has the same mix (the 1k store is the start of the 10k
//! one, which is the start of the 100k one):
//!
//! - **raw** (45%): real conversations, the LongMemEval sessions (`--data`, read in
//!   place, each session once in file order), each turn filed as a hook's capture in a
//!   session of its own (`user: ...`, `assistant: ...`), in the project's scope;
//! - **document** (45%): a vendored tree ingested with the project (trust external):
//!   the files under `--docs-root` (by default the crates' sources under
//!   `~/.cargo/registry/src`: Markdown and text first, then source files), each cut as
//!   `amber ingest` cuts it, labelled `vendor/<path>`;
//! - **agent** (10%): what an agent files on purpose in those sessions: the first
//!   sentence of a user turn (40 to 300 characters), a `fact` through MCP.
//!
//! A share whose source runs out leaves its place to the others. Every filler memory is
//! dated between 8 days and about a year before the fixture's now.

use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};

use amber_core::filing::Filing;
use amber_core::origin::Trust;
use amber_core::{MemoryType, Millis};
use amber_eval::longmemeval::{self, Turn};
use amber_tiers::document::{DocKind, bounded, kind_of, read as read_document};

use super::filing::{Planned, Stamper};
use super::fixture::walk;
use super::plan::DAY;

/// The kinds of filler, with their shares of the stream (percent).
pub(crate) const SHARES: [(&str, u32); 3] =
    [("filler:raw", 45), ("filler:document", 45), ("filler:agent", 10)];

/// One LongMemEval session, as filler.
struct Conversation {
    id: String,
    turns: Vec<Turn>,
}

/// The filler stream.
pub(crate) struct Filler {
    stamper: Stamper,
    now: Millis,
    /// The project's root: the vendored tree is under `<root>/vendor`.
    root: String,
    conversations: Vec<Conversation>,
    /// Next conversation for raw turns, and for agent notes.
    next_raw: usize,
    next_note: usize,
    docs_root: PathBuf,
    files: Vec<PathBuf>,
    next_file: usize,
    pending: [VecDeque<Planned>; 3],
    done: [bool; 3],
    taken: [usize; 3],
    /// Files skipped (unreadable, refused by the per-file bound).
    pub(crate) files_skipped: usize,
}

impl Filler {
    /// The stream over a LongMemEval file and a documents root.
    pub(crate) fn new(
        (stamper, now, root): (Stamper, Millis, &str),
        data: &Path,
        docs_root: &Path,
    ) -> anyhow::Result<Filler> {
        let mut seen = HashSet::new();
        let mut conversations = Vec::new();
        for q in longmemeval::load(data)? {
            for s in q.sessions {
                if seen.insert(s.id.clone()) {
                    conversations.push(Conversation { id: s.id, turns: s.turns });
                }
            }
        }
        // Documents first, then source files: what a person ingests to read.
        let all = if docs_root.is_dir() { walk(docs_root)? } else { Vec::new() };
        let kind = |p: &PathBuf| kind_of(p);
        let mut files: Vec<PathBuf> =
            all.iter().filter(|p| kind(p).is_some_and(|k| k != DocKind::Source)).cloned().collect();
        files.extend(all.iter().filter(|p| kind(p) == Some(DocKind::Source)).cloned());
        Ok(Filler {
            stamper,
            now,
            root: root.to_string(),
            conversations,
            next_raw: 0,
            next_note: 0,
            docs_root: docs_root.to_path_buf(),
            files,
            next_file: 0,
            pending: Default::default(),
            done: [false; 3],
            taken: [0; 3],
            files_skipped: 0,
        })
    }

    /// Conversations and files available.
    pub(crate) fn sources(&self) -> (usize, usize) {
        (self.conversations.len(), self.files.len())
    }

    /// A filler session's start: 8 days to about a year before now, by its id.
    fn start_of(&self, id: &str) -> Millis {
        self.now - (8 + (fnv(id) % 360) as i64) * DAY
    }

    /// Refills kind `k`'s queue from its source; false when the source is exhausted.
    fn refill(&mut self, k: usize) -> bool {
        while self.pending[k].is_empty() {
            let more = match k {
                0 => self.raw_session(),
                1 => self.doc_file(),
                _ => self.notes(),
            };
            if !more {
                return false;
            }
        }
        true
    }

    fn raw_session(&mut self) -> bool {
        let Some(c) = self.conversations.get(self.next_raw) else { return false };
        self.next_raw += 1;
        let session = format!("lme-{}", c.id);
        let start = self.start_of(&c.id);
        for (i, t) in c.turns.iter().enumerate() {
            let text = format!("{}: {}", t.role, t.content);
            let at = start + i as i64 * 60_000;
            if let Some(m) = self.stamper.capture(&text, (&session, "transcript"), at) {
                self.pending[0].push_back(Planned {
                    memory: m,
                    filing: Filing::Raw,
                    role: SHARES[0].0,
                    promote: false,
                });
            }
        }
        true
    }

    fn notes(&mut self) -> bool {
        let Some(c) = self.conversations.get(self.next_note) else { return false };
        self.next_note += 1;
        let session = format!("lme-{}", c.id);
        let start = self.start_of(&c.id);
        for (i, t) in c.turns.iter().enumerate().filter(|(_, t)| t.role == "user") {
            let Some(s) = first_sentence(&t.content) else { continue };
            let at = start + i as i64 * 60_000 + 30_000;
            let m = self.stamper.agent(&s, MemoryType::Fact, &self.stamper.project, (at, &session));
            self.pending[2].push_back(Planned {
                memory: m,
                filing: Filing::Agent,
                role: SHARES[2].0,
                promote: false,
            });
        }
        true
    }

    fn doc_file(&mut self) -> bool {
        let Some(path) = self.files.get(self.next_file).cloned() else { return false };
        self.next_file += 1;
        let Ok((kind, text)) = read_document(&path) else {
            self.files_skipped += 1;
            return true;
        };
        let Ok(pieces) = bounded(kind, &text) else {
            self.files_skipped += 1;
            return true;
        };
        let rel = path.strip_prefix(&self.docs_root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
        let label = format!("vendor/{rel}");
        let abs = format!("{}/{label}", self.root);
        let at = self.now - (30 + (fnv(&rel) % 300) as i64) * DAY;
        let chunks = self.stamper.chunks((&label, &abs), &text, &pieces, (Trust::External, at));
        if chunks.is_empty() {
            self.files_skipped += 1;
        }
        for m in chunks {
            self.pending[1].push_back(Planned {
                memory: m,
                filing: Filing::Reference,
                role: SHARES[1].0,
                promote: false,
            });
        }
        true
    }

    /// What of each kind was taken so far.
    pub(crate) fn taken(&self) -> [usize; 3] {
        self.taken
    }
}

impl Iterator for Filler {
    type Item = Planned;

    /// The next filler memory: of the kind furthest below its share, among those whose
    /// source is not exhausted.
    fn next(&mut self) -> Option<Planned> {
        loop {
            let total: usize = self.taken.iter().sum::<usize>() + 1;
            let k = (0..3).filter(|&k| !self.done[k]).max_by(|&a, &b| {
                let gap = |k: usize| f64::from(SHARES[k].1) / 100.0 * total as f64 - self.taken[k] as f64;
                gap(a).total_cmp(&gap(b)).then(b.cmp(&a))
            })?;
            if !self.refill(k) {
                self.done[k] = true;
                continue;
            }
            self.taken[k] += 1;
            return self.pending[k].pop_front();
        }
    }
}

/// A turn's first sentence, when it is 40 to 300 characters long.
pub(crate) fn first_sentence(text: &str) -> Option<String> {
    let t = text.trim();
    let end = t
        .char_indices()
        .find(|&(i, c)| c == '\n' || (matches!(c, '.' | '?' | '!') && t[i + 1..].starts_with([' ', '\n'])))
        .map_or(t.len(), |(i, c)| i + c.len_utf8());
    let s = t[..end].trim();
    (40..=300).contains(&s.chars().count()).then(|| s.to_string())
}

/// FNV-1a, for stable dates from ids.
fn fnv(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

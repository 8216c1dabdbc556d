//! Error leads: when a text carries an error (a Python traceback, a Rust panic or compiler
//! error, a Go panic, a JavaScript or Java exception with its stack, an `error:` line with
//! an errno or exit status), its [`Signature`] (kinds, message shape, culprit, frames,
//! files, with line numbers, addresses, temp paths and ids normalised away), and earlier
//! texts carrying the same error ranked by those signals fused with BM25 ([`rank`]).
//!
//! Pure: the daemon runs the BM25 search (with [`query_text`]) and hands the candidates in.
//! Detection is conservative: a text is an error only with a structural anchor (a
//! traceback header, a `panicked at`, an `error[E..]`, a `goroutine N [..]:` after a
//! `panic:`, `Name: message` with an exception-shaped name, `at` frames after an
//! `Error:` line, or an `error`/`ERROR` line carrying an errno, signal or exit status);
//! prose that speaks of errors is not one.

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

mod norm;
mod parse;
#[cfg(test)]
mod tests;

/// What identifies an error, normalised.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signature {
    /// Exception and error types and codes, short names (`ValueError`,
    /// `NullPointerException`, `E0502`, `panic`, `ENOENT`, `SIGSEGV`, `exit status 1`),
    /// in order of appearance, without repeats. Well-known messages add their errno
    /// (`no such file or directory` adds `ENOENT`).
    pub kinds: Vec<String>,
    /// The main message (a Python traceback's last exception, a Java chain's root cause,
    /// else the first) with what varies replaced: `<path>`, `<url>`, `<str>` (a quoted
    /// value that is not an identifier), `<hex>`, `<id>` (uuids, long hex, random-looking
    /// tokens), `<n>` (numbers): its shape.
    pub message: String,
    /// The innermost frame of the project's own code (not the standard library,
    /// `site-packages`, `node_modules`, `.cargo/registry`, the Go module cache or a
    /// well-known Java library), else the innermost frame; with no frames, the file the
    /// error points at (a Rust panic's location, rustc's `-->`, pytest's `file.py:N`).
    pub culprit: Option<String>,
    /// Normalised frames, innermost first (the last exception's block first when there
    /// are several): the project's own when any can be told, else all but runtime
    /// internals (`node:internal`, Go's `runtime.`, Rust's `std::panicking`, ...). Function
    /// names with their module or class, no lines, addresses, arguments or hashes.
    pub frames: Vec<String>,
    /// Source files the error points at and the own frames' files: no line or column,
    /// temp directories, home prefixes, package caches or versions; at most the last three
    /// components (`internal/api/orders.go`).
    pub files: Vec<String>,
}

/// The text is treated up to this many bytes (a trace's head carries its identity).
pub const MAX_TEXT: usize = 64 * 1024;

/// The signature of the error `text` carries; `None` when it carries none.
pub fn signature(text: &str) -> Option<Signature> {
    let mut end = text.len().min(MAX_TEXT);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    parse::parse(&text[..end])
}

/// The text to search BM25 with: the kinds, the message shape's words (placeholders
/// dropped), the culprit and the files' names.
pub fn query_text(sig: &Signature) -> String {
    let mut parts: Vec<String> = sig.kinds.clone();
    let words = PLACEHOLDER.replace_all(&sig.message, " ");
    parts.extend(words.split_whitespace().map(str::to_string));
    parts.extend(sig.culprit.clone());
    for f in &sig.files {
        parts.push(f.rsplit('/').next().unwrap_or(f).to_string());
    }
    parts.join(" ")
}

/// How alike two errors are, and which parts matched (the "why" of a lead).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Match {
    /// The signal score, 0..1: the weighted parts below over the sum of the weights.
    pub score: f32,
    /// A kind in common (generic kinds such as `panic` or `exit status 2` count for less).
    pub same_kind: bool,
    /// Message shapes alike: word overlap (Jaccard) at least 0.7.
    pub same_message: bool,
    /// The word overlap (Jaccard) of the two message shapes, 0..1.
    pub message_similarity: f32,
    /// The same culprit (a culprit that is a file also matches the file the other error
    /// points at first).
    pub same_culprit: bool,
    /// Frames in common.
    pub shared_frames: usize,
    /// Files in common (by their last two path components).
    pub shared_files: usize,
}

/// The weights of the signals and of the fusion with BM25.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Weights {
    /// A specific kind in common (`ValueError`, `E0502`, `ENOENT`).
    pub kind: f32,
    /// Only a generic kind in common (`panic`, `fatal error`, `fatal`, `test failed`,
    /// `exit status N`, `Error`).
    pub generic_kind: f32,
    /// Times the message shapes' word overlap.
    pub message: f32,
    /// The same culprit.
    pub culprit: f32,
    /// Times the frames' overlap (shared over the shorter list).
    pub frames: f32,
    /// Times the files' overlap (shared over the shorter list).
    pub files: f32,
    /// Candidates whose signal score is under this are dropped (a generic kind alone).
    pub min_signal: f32,
    /// BM25's share of the fused score: `bm25 / (rrf_k + rank + 1)` for the 0-based rank.
    pub bm25: f32,
    /// The reciprocal-rank constant.
    pub rrf_k: f32,
}

impl Default for Weights {
    /// kind 1, generic kind 0.25, message 2.5, culprit 2, frames 1.5, files 1 (so the
    /// signal score is their weighted sum over 8); min signal 0.1 (a specific kind alone,
    /// 0.125, passes; a generic one, 0.03, does not); BM25 0.5 with k 5, a bonus of
    /// 0.083 for BM25's best down to 0.009 at rank 50: it orders errors the signals find
    /// about as alike, it does not overturn them.
    fn default() -> Weights {
        Weights {
            kind: 1.0,
            generic_kind: 0.25,
            message: 2.5,
            culprit: 2.0,
            frames: 1.5,
            files: 1.0,
            min_signal: 0.1,
            bm25: 0.5,
            rrf_k: 5.0,
        }
    }
}

/// Kinds that tell little on their own.
fn generic_kind(k: &str) -> bool {
    matches!(k, "panic" | "fatal error" | "fatal" | "error" | "exception" | "throwable" | "test failed")
        || k.starts_with("exit status")
}

/// How alike two errors are, with [`Weights::default`].
pub fn compare(a: &Signature, b: &Signature) -> Match {
    compare_with(a, b, &Weights::default())
}

/// How alike two errors are.
pub fn compare_with(a: &Signature, b: &Signature, w: &Weights) -> Match {
    let lower = |ks: &[String]| ks.iter().map(|k| k.to_lowercase()).collect::<HashSet<_>>();
    let (ka, kb) = (lower(&a.kinds), lower(&b.kinds));
    let shared: Vec<&String> = ka.intersection(&kb).collect();
    let specific = shared.iter().any(|k| !generic_kind(k));
    let kind = if specific {
        w.kind
    } else if shared.is_empty() {
        0.0
    } else {
        w.generic_kind
    };
    let message_similarity = jaccard(&message_words(&a.message), &message_words(&b.message));
    let same_culprit = match (&a.culprit, &b.culprit) {
        (Some(x), Some(y)) => x.eq_ignore_ascii_case(y) || culprit_file(a, x, b) || culprit_file(b, y, a),
        _ => false,
    };
    let fb: HashSet<&String> = b.frames.iter().collect();
    let shared_frames = a.frames.iter().collect::<HashSet<_>>().iter().filter(|f| fb.contains(*f)).count();
    let keys = |fs: &[String]| fs.iter().map(|f| file_key(f)).collect::<HashSet<_>>();
    let (fa, fbk) = (keys(&a.files), keys(&b.files));
    let shared_files = fa.intersection(&fbk).count();
    let overlap = |n: usize, x: usize, y: usize| if x.min(y) == 0 { 0.0 } else { n as f32 / x.min(y) as f32 };
    let raw = kind
        + w.message * message_similarity
        + if same_culprit { w.culprit } else { 0.0 }
        + w.frames * overlap(shared_frames, fa_len(&a.frames), fa_len(&b.frames))
        + w.files * overlap(shared_files, fa.len(), fbk.len());
    let total = w.kind + w.message + w.culprit + w.frames + w.files;
    Match {
        score: if total > 0.0 { raw / total } else { 0.0 },
        same_kind: !shared.is_empty(),
        same_message: message_similarity >= 0.7,
        message_similarity,
        same_culprit,
        shared_frames,
        shared_files,
    }
}

/// A culprit that is a file (a Rust panic without a backtrace) matches the file the other
/// error points at first (the same panic's location, with a backtrace).
fn culprit_file(a: &Signature, culprit: &str, b: &Signature) -> bool {
    a.files.iter().any(|f| f == culprit) && b.files.first().is_some_and(|f| file_key(f) == file_key(culprit))
}

fn fa_len(frames: &[String]) -> usize {
    frames.iter().collect::<HashSet<_>>().len()
}

/// A file compared by its last two path components (the working directory varies).
fn file_key(f: &str) -> String {
    let parts: Vec<&str> = f.rsplit('/').take(2).collect();
    parts.into_iter().rev().collect::<Vec<_>>().join("/").to_lowercase()
}

static PLACEHOLDER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"<(?:n|hex|id|str|path|url)>").expect("re"));

/// A message shape's words, lowercased (placeholders are words).
fn message_words(m: &str) -> HashSet<String> {
    m.split(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '<' | '>')))
        .filter(|w| !w.is_empty() && *w != "<" && *w != ">")
        .map(str::to_lowercase)
        .collect()
}

fn jaccard(a: &HashSet<String>, b: &HashSet<String>) -> f32 {
    let union = a.union(b).count();
    if union == 0 { 0.0 } else { a.intersection(b).count() as f32 / union as f32 }
}

/// One lead: an earlier text carrying an error like the query's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lead {
    /// The candidate's key (a memory or run id).
    pub key: String,
    /// The fused score: the signal score plus BM25's reciprocal-rank share.
    pub score: f32,
    /// What matched.
    pub why: Match,
    /// The candidate's BM25 rank (0-based), if BM25 found it.
    pub bm25_rank: Option<usize>,
}

/// Ranks candidates with [`Weights::default`]: each is (key, its text, its 0-based BM25
/// rank among the candidates if any). See [`rank_with`].
pub fn rank(query: &Signature, candidates: &[(String, String, Option<usize>)], n: usize) -> Vec<Lead> {
    rank_with(query, candidates, n, &Weights::default())
}

/// Ranks candidates: a candidate with no error signature, or whose signal score is under
/// `min_signal`, is dropped; the others score `signal + bm25 / (rrf_k + rank + 1)` (no
/// BM25 share without a rank); best first (ties: the better BM25 rank, then the key), at
/// most `n`.
pub fn rank_with(
    query: &Signature,
    candidates: &[(String, String, Option<usize>)],
    n: usize,
    w: &Weights,
) -> Vec<Lead> {
    let mut leads: Vec<Lead> = candidates
        .iter()
        .filter_map(|(key, text, bm25_rank)| {
            let why = compare_with(query, &signature(text)?, w);
            (why.score >= w.min_signal).then(|| {
                let bonus = bm25_rank.map_or(0.0, |r| w.bm25 / (w.rrf_k + r as f32 + 1.0));
                Lead { key: key.clone(), score: why.score + bonus, why, bm25_rank: *bm25_rank }
            })
        })
        .collect();
    leads.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(a.bm25_rank.unwrap_or(usize::MAX).cmp(&b.bm25_rank.unwrap_or(usize::MAX)))
            .then(a.key.cmp(&b.key))
    });
    leads.truncate(n);
    leads
}

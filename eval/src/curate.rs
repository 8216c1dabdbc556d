//! `amber-eval curate`: session-end curation measured on LoCoMo conversations with planted
//! duplicates.
//!
//! Each conversation is one agent session: its turns (`speaker: text`) go through capture
//! (limits and redaction, as the daemon captures a turn) and are filed in order, in one
//! scope per conversation, with the session's id. A seeded sample of the filed turns gets a
//! copy made by one realistic edit ([`Edit`]), filed later in the same session; each copy's
//! original is the ground truth. Curation then runs as the daemon runs it at session end
//! (`daemon/src/sessions.rs`, `curate`): the session's memories, `Engine::similar` in the
//! scope as the neighbours, `amber_tiers::curate::plan` with the default `CurationConfig`,
//! then `Engine::add_links` and `Engine::forget` of the collapsed copies. The threshold
//! sweep re-plans from the same neighbours (recorded during the default plan, before
//! anything was written), without writing.
//!
//! A duplicate link (exact or near) is right when it joins a planted copy to its original
//! (or to a memory with the original's text up to case and whitespace); every other
//! duplicate link is a false merge.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Instant;

use amber_core::{Link, LinkKind, Memory, MemoryId, MemoryType, NewMemory, Scope, now_millis};
use amber_engine::{Engine, EngineOptions, default_amber_home};
use amber_eval::locomo;
use amber_tiers::capture::{CaptureConfig, Captured, capture};
use amber_tiers::curate::{CurationConfig, Plan, normalize, plan};
use anyhow::{Context, bail};
use clap::Args;
use serde_json::{Value, json};

use crate::{progress, scope_segment, sha256_file, write_report};

/// Arguments of `amber-eval curate`.
#[derive(Args, Debug)]
pub struct CurateArgs {
    /// The LoCoMo file (locomo10.json format).
    #[arg(long)]
    data: PathBuf,
    /// Only the first N conversations (each conversation is one session).
    #[arg(long)]
    sessions: Option<usize>,
    /// Seed of the planting (which turns, which edit, where the copy goes).
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Fraction of the filed turns that get a planted copy.
    #[arg(long, default_value_t = 0.10)]
    rate: f64,
    /// Edit kinds to plant, comma-separated [default: all of case_whitespace, typo,
    /// punctuation, filler, dropped_clause, synonym], assigned in turn.
    #[arg(long, value_delimiter = ',')]
    kinds: Vec<Edit>,
    /// Turns shorter than this (characters, with the speaker) are not filed [default:
    /// capture's own limit, 50, as the daemon captures].
    #[arg(long)]
    min_chars: Option<usize>,
    /// Duplicate thresholds of the sweep (planned from the same neighbours, not written).
    #[arg(long, value_delimiter = ',', default_value = "0.90,0.93,0.95,0.97")]
    thresholds: Vec<f32>,
    /// The embedding cache shared by runs [default: $AMBER_HOME/eval-cache.db].
    #[arg(long, value_name = "FILE")]
    cache: Option<PathBuf>,
    /// Threads for the embedding model (default: one per core).
    #[arg(long)]
    threads: Option<usize>,
    /// Write every link of the default plan (JSON lines, with both texts) here.
    #[arg(long, value_name = "FILE")]
    links: Option<PathBuf>,
    /// Write the report (JSON) here; it is also printed, and the table goes to stderr.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// One realistic edit that makes a copy of a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Edit {
    /// Case or whitespace only (lowercased, a doubled space, a space turned into a line
    /// break): curation should see an exact duplicate.
    CaseWhitespace,
    /// Two adjacent letters swapped inside one word.
    Typo,
    /// The final mark removed or changed, commas or apostrophes removed.
    Punctuation,
    /// A filler opening ("Actually, ") or a closing clause (", I think").
    Filler,
    /// The last sentence (or the clause after the last comma) dropped, keeping at least
    /// half of the text.
    DroppedClause,
    /// One word swapped for a synonym from a small fixed list.
    Synonym,
}

const ALL_EDITS: [Edit; 6] =
    [Edit::CaseWhitespace, Edit::Typo, Edit::Punctuation, Edit::Filler, Edit::DroppedClause, Edit::Synonym];

impl Edit {
    /// The name used in flags and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Edit::CaseWhitespace => "case_whitespace",
            Edit::Typo => "typo",
            Edit::Punctuation => "punctuation",
            Edit::Filler => "filler",
            Edit::DroppedClause => "dropped_clause",
            Edit::Synonym => "synonym",
        }
    }
}

impl FromStr for Edit {
    type Err = String;
    fn from_str(s: &str) -> Result<Edit, String> {
        ALL_EDITS.iter().copied().find(|e| e.as_str() == s.trim()).ok_or_else(|| {
            let names: Vec<&str> = ALL_EDITS.iter().map(|e| e.as_str()).collect();
            format!("unknown edit kind {s:?} (one of {})", names.join(", "))
        })
    }
}

/// splitmix64: a small, seeded, std-only generator (the planting must not depend on a crate's
/// version).
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> Option<&'a T> {
        (!xs.is_empty()).then(|| &xs[self.below(xs.len())])
    }
    fn shuffle<T>(&mut self, xs: &mut [T]) {
        for i in (1..xs.len()).rev() {
            xs.swap(i, self.below(i + 1));
        }
    }
}

/// The synonym pairs (either direction).
const SYNONYMS: [(&str, &str); 16] = [
    ("great", "awesome"),
    ("happy", "glad"),
    ("big", "large"),
    ("kids", "children"),
    ("photo", "picture"),
    ("love", "adore"),
    ("amazing", "incredible"),
    ("start", "begin"),
    ("hard", "difficult"),
    ("help", "assist"),
    ("nice", "lovely"),
    ("talk", "chat"),
    ("buy", "purchase"),
    ("maybe", "perhaps"),
    ("friends", "pals"),
    ("awful", "terrible"),
];

const FILLER_OPENINGS: [&str; 4] = ["Actually, ", "Honestly, ", "Well, ", "So, "];
const FILLER_CLOSINGS: [&str; 3] = [", I think", ", you know", ", to be honest"];

/// Byte ranges of the ASCII-letter words of `s` (apostrophes end a word).
fn words(s: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in s.char_indices() {
        match (c.is_ascii_alphabetic(), start) {
            (true, None) => start = Some(i),
            (false, Some(b)) => {
                out.push((b, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(b) = start {
        out.push((b, s.len()));
    }
    out
}

/// Byte positions of the spaces of `s`.
fn spaces(s: &str) -> Vec<usize> {
    s.char_indices().filter(|&(_, c)| c == ' ').map(|(i, _)| i).collect()
}

/// The sentence-final mark `body` ends with, if any.
fn final_mark(body: &str) -> Option<char> {
    body.chars().last().filter(|c| matches!(c, '.' | '!' | '?'))
}

/// A copy of a turn (`speaker: body`) made by `edit`, or None when the edit does not apply
/// to it. The speaker prefix is kept (except by the lowercasing of `case_whitespace`).
pub fn apply_edit(edit: Edit, speaker: &str, body: &str, rng: &mut Rng) -> Option<String> {
    let whole = |b: &str| format!("{speaker}: {b}");
    let body = body.trim();
    if body.is_empty() {
        return None;
    }
    match edit {
        Edit::CaseWhitespace => {
            let full = whole(body);
            let sp = spaces(body);
            let mut options: Vec<String> = Vec::new();
            if full.to_lowercase() != full {
                options.push(full.to_lowercase());
            }
            if let Some(&i) = rng.pick(&sp) {
                options.push(whole(&format!("{}  {}", &body[..i], &body[i + 1..])));
            }
            if let Some(&i) = rng.pick(&sp) {
                options.push(whole(&format!("{}\n{}", &body[..i], &body[i + 1..])));
            }
            rng.pick(&options).cloned()
        }
        Edit::Typo => {
            // a word of 4+ letters with two differing adjacent letters after the first
            let candidates: Vec<(usize, usize)> = words(body)
                .into_iter()
                .filter(|&(a, b)| b - a >= 4 && body.as_bytes()[a + 1..b].windows(2).any(|w| w[0] != w[1]))
                .collect();
            let &(a, b) = rng.pick(&candidates)?;
            let bytes = body.as_bytes();
            let swaps: Vec<usize> = (a + 1..b - 1).filter(|&i| bytes[i] != bytes[i + 1]).collect();
            let &i = rng.pick(&swaps)?;
            let mut out = bytes.to_vec();
            out.swap(i, i + 1);
            Some(whole(&String::from_utf8(out).ok()?))
        }
        Edit::Punctuation => {
            let mut options: Vec<String> = Vec::new();
            if let Some(m) = final_mark(body) {
                let stem = &body[..body.len() - 1];
                options.push(stem.to_string());
                options.push(format!("{stem}{}", if m == '.' { '!' } else { '.' }));
            }
            if body.contains(',') {
                options.push(body.replace(',', ""));
            }
            if body.contains('\'') {
                options.push(body.replace('\'', ""));
            }
            rng.pick(&options).map(|b| whole(b))
        }
        Edit::Filler => {
            if rng.below(2) == 0 {
                let opening = rng.pick(&FILLER_OPENINGS)?;
                let first = body.split_whitespace().next().unwrap_or("");
                let keep_case = first == "I" || first.starts_with("I'");
                let mut chars = body.chars();
                let head = chars.next()?;
                let rest: String =
                    if keep_case { body.to_string() } else { head.to_lowercase().chain(chars).collect() };
                Some(whole(&format!("{opening}{rest}")))
            } else {
                let closing = rng.pick(&FILLER_CLOSINGS)?;
                match final_mark(body) {
                    Some(m) => Some(whole(&format!("{}{closing}{m}", &body[..body.len() - 1]))),
                    None => Some(whole(&format!("{body}{closing}"))),
                }
            }
        }
        Edit::DroppedClause => {
            let n = body.chars().count();
            // the end of the last sentence but one: a mark followed by a space
            let bytes = body.as_bytes();
            let cut = (1..bytes.len().saturating_sub(1))
                .rev()
                .find(|&i| matches!(bytes[i], b'.' | b'!' | b'?') && bytes[i + 1] == b' ')
                .map(|i| body[..=i].to_string())
                .or_else(|| {
                    let i = body.rfind(',')?;
                    let m = final_mark(body).unwrap_or('.');
                    Some(format!("{}{m}", &body[..i]))
                })?;
            (cut.chars().count() * 2 >= n && cut.len() < body.len()).then(|| whole(&cut))
        }
        Edit::Synonym => {
            let candidates: Vec<(usize, usize, &str)> = words(body)
                .into_iter()
                .filter_map(|(a, b)| {
                    let w = body[a..b].to_ascii_lowercase();
                    SYNONYMS.iter().find_map(|&(x, y)| {
                        if w == x {
                            Some((a, b, y))
                        } else if w == y {
                            Some((a, b, x))
                        } else {
                            None
                        }
                    })
                })
                .collect();
            let &(a, b, with) = rng.pick(&candidates)?;
            let capital = body.as_bytes()[a].is_ascii_uppercase();
            let mut replacement = with.to_string();
            if capital {
                replacement[..1].make_ascii_uppercase();
            }
            Some(whole(&format!("{}{replacement}{}", &body[..a], &body[b..])))
        }
    }
}

/// A planted copy.
#[derive(Debug, Clone)]
struct Planted {
    edit: Edit,
    /// The original's memory id.
    original: MemoryId,
    /// The copy's memory id.
    copy: MemoryId,
}

/// What one plan got right and wrong against the planted truth.
#[derive(Debug, Default)]
struct Score {
    /// Per edit: planted, found as exact, found as near, linked only as related.
    by_edit: BTreeMap<Edit, [usize; 4]>,
    /// Duplicate links that join a copy to its original.
    true_links: usize,
    /// Duplicate links (exact, near) that do not.
    false_exact: Vec<Link>,
    false_near: Vec<Link>,
    /// Related links: between a copy and its original, and others.
    related_planted: usize,
    related_other: usize,
}

/// The ground truth of a run.
struct Truth {
    planted: Vec<Planted>,
    /// Copy id -> index in `planted`.
    copy_of: HashMap<MemoryId, usize>,
    /// Every filed memory's text.
    text: HashMap<MemoryId, String>,
}

impl Truth {
    fn norm(&self, id: &MemoryId) -> String {
        self.text.get(id).map(|t| normalize(t)).unwrap_or_default()
    }
    /// The planted copy this link joins to its original (by the original's text up to
    /// case and whitespace), if it does.
    fn planted_pair(&self, l: &Link) -> Option<usize> {
        for (copy, other) in [(&l.from, &l.to), (&l.to, &l.from)] {
            if let Some(&i) = self.copy_of.get(copy) {
                let p = &self.planted[i];
                if &p.original == other || self.norm(&p.original) == self.norm(other) {
                    return Some(i);
                }
            }
        }
        None
    }

    fn score(&self, links: &[Link]) -> Score {
        let mut s = Score::default();
        let mut found: HashMap<usize, usize> = HashMap::new();
        for l in links {
            let pair = self.planted_pair(l);
            match (l.kind, pair) {
                (LinkKind::Related, Some(i)) => {
                    s.related_planted += 1;
                    found.entry(i).or_insert(3);
                }
                (LinkKind::Related, None) => s.related_other += 1,
                (kind, Some(i)) => {
                    s.true_links += 1;
                    let slot = if kind == LinkKind::ExactDuplicate { 1 } else { 2 };
                    let e = found.entry(i).or_insert(slot);
                    *e = (*e).min(slot);
                }
                (LinkKind::ExactDuplicate, None) => s.false_exact.push(l.clone()),
                (_, None) => s.false_near.push(l.clone()),
            }
        }
        for (i, p) in self.planted.iter().enumerate() {
            let row = s.by_edit.entry(p.edit).or_default();
            row[0] += 1;
            if let Some(&slot) = found.get(&i) {
                row[slot] += 1;
            }
        }
        s
    }
}

fn ratio(num: usize, den: usize) -> Value {
    if den == 0 { Value::Null } else { json!(num as f64 / den as f64) }
}

fn score_json(s: &Score, threshold: f32) -> Value {
    let mut by_edit = serde_json::Map::new();
    let (mut planted, mut found) = (0, 0);
    for (edit, r) in &s.by_edit {
        planted += r[0];
        found += r[1] + r[2];
        by_edit.insert(
            edit.as_str().into(),
            json!({
                "planted": r[0],
                "found": r[1] + r[2],
                "found_exact": r[1],
                "found_near": r[2],
                "only_related": r[3],
                "missed": r[0] - r[1] - r[2] - r[3],
                "recall": ratio(r[1] + r[2], r[0]),
            }),
        );
    }
    let dup = s.true_links + s.false_exact.len() + s.false_near.len();
    json!({
        "duplicate_threshold": threshold,
        "by_edit": by_edit,
        "planted": planted,
        "found": found,
        "recall": ratio(found, planted),
        "duplicate_links": dup,
        "true_duplicate_links": s.true_links,
        "false_merges": s.false_exact.len() + s.false_near.len(),
        "false_merges_exact": s.false_exact.len(),
        "false_merges_near": s.false_near.len(),
        "precision": ratio(s.true_links, dup),
        "related_links": s.related_planted + s.related_other,
        "related_planted_pairs": s.related_planted,
        "related_other": s.related_other,
    })
}

/// Min, median and max of a list (sorted here).
fn spread(xs: &mut [f32]) -> Value {
    xs.sort_by(f32::total_cmp);
    match xs {
        [] => Value::Null,
        _ => json!({"min": xs[0], "median": xs[xs.len() / 2], "max": xs[xs.len() - 1], "n": xs.len()}),
    }
}

/// One conversation filed as a session, with its planted copies.
struct Filed {
    scope: Scope,
    session_id: String,
    turns: usize,
    filed: usize,
    too_short: usize,
    too_long: usize,
    identical_originals: usize,
    unplaced: BTreeMap<Edit, usize>,
}

/// Files a conversation (capture, then one batch in session order) with its planted copies.
fn file_conversation(
    engine: &Engine,
    c: &locomo::Conversation,
    rng: &mut Rng,
    (rate, kinds, next_kind): (f64, &[Edit], &mut usize),
    capture_cfg: &CaptureConfig,
    truth: &mut Truth,
) -> anyhow::Result<Filed> {
    let scope: Scope = format!("locomo/curate/{}", scope_segment(&c.sample_id)).parse()?;
    let session_id = format!("curate-{}", scope_segment(&c.sample_id));
    let mut f = Filed {
        scope: scope.clone(),
        session_id: session_id.clone(),
        turns: 0,
        filed: 0,
        too_short: 0,
        too_long: 0,
        identical_originals: 0,
        unplaced: BTreeMap::new(),
    };
    // (speaker, body, text as captured, secrets redacted)
    let mut originals: Vec<(String, String, String, usize)> = Vec::new();
    for t in c.sessions.iter().flat_map(|s| s.turns.iter()) {
        f.turns += 1;
        match capture(&t.line(), capture_cfg) {
            Captured::File { text, redacted } => {
                originals.push((t.speaker.clone(), t.text.clone(), text, redacted))
            }
            Captured::Skip(amber_tiers::capture::SkipReason::TooShort) => f.too_short += 1,
            Captured::Skip(_) => f.too_long += 1,
        }
    }
    let texts: HashSet<&str> = originals.iter().map(|o| o.2.as_str()).collect();
    // The filing order: None = original i, Some(k) = copy k of `copies`.
    let mut order: Vec<(usize, Option<usize>)> = (0..originals.len()).map(|i| (i, None)).collect();
    let mut copies: Vec<(Edit, String, usize)> = Vec::new();
    let mut used: HashSet<usize> = HashSet::new();
    let want = (rate * originals.len() as f64).round() as usize;
    for _ in 0..want {
        let edit = kinds[*next_kind % kinds.len()];
        *next_kind += 1;
        let mut placed = false;
        for _ in 0..200 {
            let i = rng.below(originals.len().max(1));
            if originals.is_empty() || used.contains(&i) {
                continue;
            }
            let (speaker, body, captured, _) = &originals[i];
            let Some(copy) = apply_edit(edit, speaker, body, rng) else { continue };
            let Captured::File { text, redacted } = capture(&copy, capture_cfg) else { continue };
            if &text == captured || texts.contains(text.as_str()) || copies.iter().any(|c| c.1 == text) {
                continue;
            }
            used.insert(i);
            let at = order.iter().position(|&(j, k)| j == i && k.is_none()).unwrap_or(0);
            let pos = at + 1 + rng.below(order.len() - at);
            order.insert(pos, (i, Some(copies.len())));
            copies.push((edit, text, redacted));
            placed = true;
            break;
        }
        if !placed {
            *f.unplaced.entry(edit).or_default() += 1;
        }
    }
    let batch: Vec<NewMemory> = order
        .iter()
        .map(|&(i, k)| {
            let (text, redacted) = match k {
                None => (originals[i].2.clone(), originals[i].3),
                Some(k) => (copies[k].1.clone(), copies[k].2),
            };
            // as the daemon's capture files a turn
            let mut m = NewMemory::new(text).in_scope(scope.clone());
            m.kind = MemoryType::Event;
            m.source = Some("turn".into());
            m.session_id = Some(session_id.clone());
            m.author = Some("amber-eval".into());
            m.metadata = json!({"captured": true, "redacted": redacted});
            m
        })
        .collect();
    let stored = engine.remember_batch(batch)?;
    let mut original_id: HashMap<usize, MemoryId> = HashMap::new();
    let mut copy_id: HashMap<usize, MemoryId> = HashMap::new();
    for (&(i, k), r) in order.iter().zip(&stored) {
        truth.text.insert(r.memory.id.clone(), r.memory.content.clone());
        match k {
            None => {
                f.filed += 1;
                if !r.created {
                    f.identical_originals += 1;
                }
                original_id.insert(i, r.memory.id.clone());
            }
            Some(k) => {
                copy_id.insert(k, r.memory.id.clone());
            }
        }
    }
    for &(i, k) in &order {
        if let Some(k) = k {
            let p =
                Planted { edit: copies[k].0, original: original_id[&i].clone(), copy: copy_id[&k].clone() };
            truth.copy_of.insert(p.copy.clone(), truth.planted.len());
            truth.planted.push(p);
        }
    }
    Ok(f)
}

/// The similarity of a planted copy to its original from the recorded neighbours (either
/// side's list), None when neither is among the other's neighbours.
fn planted_similarity(p: &Planted, neighbours: &HashMap<MemoryId, Vec<(Memory, f32)>>) -> Option<f32> {
    let find = |a: &MemoryId, b: &MemoryId| {
        neighbours.get(a).and_then(|v| v.iter().find(|(m, _)| &m.id == b).map(|x| x.1))
    };
    find(&p.copy, &p.original).or_else(|| find(&p.original, &p.copy))
}

/// Runs `amber-eval curate`.
pub fn run(a: CurateArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    if !(0.0..=1.0).contains(&a.rate) {
        bail!("--rate must be between 0 and 1");
    }
    if a.thresholds.is_empty() || a.thresholds.iter().any(|t| !(0.0..=1.0).contains(t)) {
        bail!("--thresholds needs values between 0 and 1");
    }
    let kinds: Vec<Edit> = if a.kinds.is_empty() { ALL_EDITS.to_vec() } else { a.kinds.clone() };
    let sha = sha256_file(&a.data)?;
    let (mut convs, _) = locomo::load(&a.data)?;
    let n_conversations = convs.len();
    if let Some(n) = a.sessions {
        convs.truncate(n);
    }

    let tmp = tempfile::Builder::new().prefix("amber-eval-curate-").tempdir()?;
    let mut opts = EngineOptions::new(tmp.path().join("store"));
    opts.embedding_cache =
        Some(a.cache.clone().unwrap_or_else(|| default_amber_home().join("eval-cache.db")));
    opts.threads = a.threads;
    // similar() compares stored vectors: no query embedding, no second model.
    opts.query_model = false;
    let engine = Engine::open(opts).context("opening the eval store")?;

    let mut capture_cfg = CaptureConfig::default();
    if let Some(n) = a.min_chars {
        capture_cfg.min_chars = n;
    }
    let mut rng = Rng::new(a.seed);
    let mut order = kinds.clone();
    rng.shuffle(&mut order);
    let mut next_kind = 0;
    let mut truth = Truth { planted: Vec::new(), copy_of: HashMap::new(), text: HashMap::new() };
    let t_file = Instant::now();
    let pb = progress(convs.len(), "filing");
    let mut filed = Vec::new();
    for c in &convs {
        let plant = (a.rate, order.as_slice(), &mut next_kind);
        filed.push(file_conversation(&engine, c, &mut rng, plant, &capture_cfg, &mut truth)?);
        pb.inc(1);
    }
    pb.finish_and_clear();
    let file_seconds = t_file.elapsed().as_secs_f64();

    // The daemon's curation: plan (recording the neighbours), then write.
    let cfg = CurationConfig::default();
    let t_plan = Instant::now();
    let mut neighbours: HashMap<MemoryId, Vec<(Memory, f32)>> = HashMap::new();
    let mut sessions: Vec<(Vec<Memory>, Plan)> = Vec::new();
    let mut examined = 0;
    let pb = progress(filed.len(), "curating");
    for f in &filed {
        let mine = engine.session_memories(&f.session_id)?;
        let mut failed = None;
        let p = plan(
            &mine,
            |m| match engine.similar(&m.id, Some(&f.scope), cfg.neighbours) {
                Ok(v) => {
                    neighbours.insert(m.id.clone(), v.clone());
                    v
                }
                Err(e) => {
                    failed.get_or_insert(e);
                    Vec::new()
                }
            },
            now_millis(),
            &cfg,
        );
        if let Some(e) = failed {
            return Err(e).context("similar() during curation");
        }
        examined += p.report.examined;
        sessions.push((mine, p));
        pb.inc(1);
    }
    pb.finish_and_clear();
    let plan_seconds = t_plan.elapsed().as_secs_f64();

    // The sweep: the same memories and neighbours, another duplicate threshold, not written.
    let mut sweep: Vec<(f32, Vec<Link>)> = Vec::new();
    for &t in &a.thresholds {
        let c = CurationConfig { duplicate_threshold: t, ..cfg.clone() };
        let links = sessions
            .iter()
            .flat_map(|(mine, _)| {
                plan(mine, |m| neighbours.get(&m.id).cloned().unwrap_or_default(), now_millis(), &c).links
            })
            .collect();
        sweep.push((t, links));
    }

    let t_apply = Instant::now();
    let (mut links_added, mut collapsed) = (0, 0);
    for (_, p) in &sessions {
        links_added += engine.add_links(&p.links)?;
        for id in &p.forget {
            if engine.forget(id)?.is_some() {
                collapsed += 1;
            }
        }
    }
    let apply_seconds = t_apply.elapsed().as_secs_f64();
    engine.flush()?;

    let default_links: Vec<Link> = sessions.iter().flat_map(|(_, p)| p.links.clone()).collect();
    let default_score = truth.score(&default_links);
    let mut default_json = score_json(&default_score, cfg.duplicate_threshold);
    default_json["links_added"] = json!(links_added);
    default_json["collapsed"] = json!(collapsed);
    default_json["examined"] = json!(examined);

    // Similarity of each planted copy to its original, per edit.
    let mut sims: BTreeMap<Edit, Vec<f32>> = BTreeMap::new();
    let mut not_neighbours: BTreeMap<Edit, usize> = BTreeMap::new();
    for p in &truth.planted {
        match planted_similarity(p, &neighbours) {
            Some(s) => sims.entry(p.edit).or_default().push(s),
            None => *not_neighbours.entry(p.edit).or_default() += 1,
        }
    }
    let similarity: BTreeMap<&str, Value> = kinds
        .iter()
        .map(|k| {
            let mut v = sims.remove(k).unwrap_or_default();
            let mut s = spread(&mut v);
            if let Some(o) = s.as_object_mut() {
                o.insert("not_among_neighbours".into(), json!(not_neighbours.get(k).copied().unwrap_or(0)));
            }
            (k.as_str(), s)
        })
        .collect();

    // Sweep rows and the false merges across them (a lower threshold's set holds a higher's).
    let mut rows = Vec::new();
    let mut false_pairs: BTreeMap<(MemoryId, MemoryId), (Link, Vec<f32>)> = BTreeMap::new();
    let mut scores = Vec::new();
    for (t, links) in &sweep {
        let s = truth.score(links);
        for l in s.false_exact.iter().chain(&s.false_near) {
            false_pairs
                .entry((l.from.clone(), l.to.clone()))
                .or_insert_with(|| (l.clone(), Vec::new()))
                .1
                .push(*t);
        }
        rows.push(score_json(&s, *t));
        scores.push((*t, s));
    }
    let mut examples: Vec<&(Link, Vec<f32>)> = false_pairs.values().collect();
    examples.sort_by(|a, b| b.0.similarity.total_cmp(&a.0.similarity).then(a.0.from.cmp(&b.0.from)));
    let text = |id: &MemoryId| truth.text.get(id).cloned().unwrap_or_default();
    let examples: Vec<Value> = examples
        .iter()
        .take(20)
        .map(|(l, ts)| {
            json!({
                "kind": l.kind.as_str(),
                "similarity": l.similarity,
                "at_thresholds": ts,
                "newer": text(&l.from),
                "older": text(&l.to),
                "newer_is_planted_copy": truth.copy_of.contains_key(&l.from),
                "older_is_planted_copy": truth.copy_of.contains_key(&l.to),
            })
        })
        .collect();

    if let Some(path) = &a.links {
        let mut w = std::io::BufWriter::new(
            std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
        );
        for l in &default_links {
            let planted = truth.planted_pair(l).map(|i| truth.planted[i].edit.as_str());
            writeln!(
                w,
                "{}",
                json!({
                    "kind": l.kind.as_str(), "similarity": l.similarity,
                    "from": l.from, "to": l.to, "from_text": text(&l.from), "to_text": text(&l.to),
                    "planted_edit": planted,
                })
            )?;
        }
        w.flush()?;
    }

    let mut planted_by_edit: BTreeMap<&str, usize> = BTreeMap::new();
    for p in &truth.planted {
        *planted_by_edit.entry(p.edit.as_str()).or_default() += 1;
    }
    let mut unplaced: BTreeMap<&str, usize> = BTreeMap::new();
    for f in &filed {
        for (e, n) in &f.unplaced {
            *unplaced.entry(e.as_str()).or_default() += n;
        }
    }
    let sum = |g: fn(&Filed) -> usize| filed.iter().map(g).sum::<usize>();
    let stats = engine.stats();
    let report = json!({
        "dataset": "locomo",
        "study": "session-end curation with planted duplicates",
        "data_file": a.data,
        "data_sha256": sha,
        "n_conversations": n_conversations,
        "config": {
            "model": engine.model_id(),
            "seed": a.seed,
            "rate": a.rate,
            "edit_kinds": kinds.iter().map(|k| k.as_str()).collect::<Vec<_>>(),
            "curation": cfg,
            "capture": capture_cfg,
            "thresholds": a.thresholds,
            "memory_text": "\"speaker: text\" per turn, through capture (limits, redaction)",
            "session": "one conversation = one session, one scope, filed in order; copies later in it",
            "embedding_cache": engine.options().embedding_cache,
            "chunks_embedded": stats.chunks_embedded,
            "chunks_from_cache": stats.chunks_from_cache,
        },
        "fixture": {
            "conversations": filed.len(),
            "turns": sum(|f| f.turns),
            "originals_filed": sum(|f| f.filed),
            "skipped_too_short": sum(|f| f.too_short),
            "skipped_too_long": sum(|f| f.too_long),
            "identical_originals": sum(|f| f.identical_originals),
            "identical_originals_note": "turns whose text was already filed in the conversation (same scope and content = same memory: collapsed by the store at filing, never seen by curation)",
            "planted": truth.planted.len(),
            "planted_by_edit": planted_by_edit,
            "unplaced_by_edit": unplaced,
        },
        "planted_similarity": similarity,
        "default": default_json,
        "sweep": rows,
        "false_merge_examples": examples,
        "wall_seconds": started.elapsed().as_secs_f64(),
        "file_seconds": file_seconds,
        "plan_seconds": plan_seconds,
        "apply_seconds": apply_seconds,
        "embed_seconds": stats.embed_seconds,
    });
    eprint!("{}", table(&kinds, &report, &scores));
    drop(engine);
    drop(tmp);
    write_report(&report, a.out.as_deref())
}

/// The markdown table: found per edit kind at each threshold, then the false merges.
fn table(kinds: &[Edit], report: &Value, scores: &[(f32, Score)]) -> String {
    let mut out = String::from("| edit | planted | similarity median (min) |");
    for (t, _) in scores {
        out.push_str(&format!(" found @{t:.2} |"));
    }
    out.push_str("\n|---|---:|---:|");
    out.push_str(&"---:|".repeat(scores.len()));
    out.push('\n');
    let cell = |f: usize, p: usize| {
        if p == 0 { "-".to_string() } else { format!("{f}/{p} ({:.0}%)", 100.0 * f as f64 / p as f64) }
    };
    for k in kinds {
        let sim = &report["planted_similarity"][k.as_str()];
        let planted = scores.first().and_then(|(_, s)| s.by_edit.get(k)).map_or(0, |r| r[0]);
        out.push_str(&format!(
            "| {} | {planted} | {} |",
            k.as_str(),
            match (sim["median"].as_f64(), sim["min"].as_f64()) {
                (Some(m), Some(lo)) => format!("{m:.3} ({lo:.3})"),
                _ => "-".into(),
            }
        ));
        for (_, s) in scores {
            let r = s.by_edit.get(k).copied().unwrap_or_default();
            out.push_str(&format!(" {} |", cell(r[1] + r[2], r[0])));
        }
        out.push('\n');
    }
    let total = |s: &Score| s.by_edit.values().fold((0, 0), |acc, r| (acc.0 + r[1] + r[2], acc.1 + r[0]));
    let planted = scores.first().map_or(0, |(_, s)| total(s).1);
    out.push_str(&format!("| **all** | {planted} | |"));
    for (_, s) in scores {
        let (f, p) = total(s);
        out.push_str(&format!(" {} |", cell(f, p)));
    }
    out.push_str("\n| false merges (exact + near) | | |");
    for (_, s) in scores {
        out.push_str(&format!(" {} + {} |", s.false_exact.len(), s.false_near.len()));
    }
    out.push_str("\n| precision of duplicate links | | |");
    for (_, s) in scores {
        let dup = s.true_links + s.false_exact.len() + s.false_near.len();
        out.push_str(&match dup {
            0 => " - |".to_string(),
            _ => format!(" {:.3} |", s.true_links as f64 / dup as f64),
        });
    }
    out.push_str("\n| related links (copy-original / other) | | |");
    for (_, s) in scores {
        out.push_str(&format!(" {} / {} |", s.related_planted, s.related_other));
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const BODY: &str = "I started painting last year, and it really helps me relax. My kids love it too!";

    #[test]
    fn edits_change_the_text_as_named() {
        for seed in 0..50 {
            let mut rng = Rng::new(seed);
            let orig = format!("Mel: {BODY}");
            for e in ALL_EDITS {
                let copy = apply_edit(e, "Mel", BODY, &mut rng).unwrap_or_else(|| panic!("{e:?} applies"));
                assert_ne!(copy, orig, "{e:?}");
                match e {
                    Edit::CaseWhitespace => assert_eq!(normalize(&copy), normalize(&orig)),
                    Edit::Typo => {
                        assert_eq!(copy.len(), orig.len());
                        let diff: Vec<usize> =
                            (0..copy.len()).filter(|&i| copy.as_bytes()[i] != orig.as_bytes()[i]).collect();
                        assert_eq!(diff.len(), 2, "{copy}");
                        assert_eq!(diff[1], diff[0] + 1);
                    }
                    Edit::Punctuation => {
                        let strip = |s: &str| s.replace([',', '.', '!', '?', '\''], "");
                        assert_eq!(strip(&copy), strip(&orig), "{copy}");
                    }
                    Edit::Filler => assert!(copy.len() > orig.len(), "{copy}"),
                    Edit::DroppedClause => {
                        assert!(copy.len() < orig.len() && copy.len() * 2 >= orig.len() - 5, "{copy}")
                    }
                    Edit::Synonym => assert!(
                        ["start", "begin", "kids", "children", "love", "adore"]
                            .iter()
                            .any(|w| copy.to_lowercase().contains(w) != orig.to_lowercase().contains(w)),
                        "{copy}"
                    ),
                }
                assert!(copy.starts_with("Mel: ") || copy.starts_with("mel: "), "{copy}");
            }
        }
    }

    #[test]
    fn edits_that_do_not_apply_say_so() {
        let mut rng = Rng::new(1);
        assert_eq!(apply_edit(Edit::Synonym, "A", "Nothing to swap here", &mut rng), None);
        assert_eq!(apply_edit(Edit::DroppedClause, "A", "One sentence only", &mut rng), None);
        assert_eq!(apply_edit(Edit::Punctuation, "A", "no marks at all", &mut rng), None);
        assert_eq!(
            apply_edit(Edit::DroppedClause, "A", "Short. Then a much longer second sentence here.", &mut rng),
            None,
            "dropping more than half is not a duplicate any more"
        );
    }

    #[test]
    fn rng_is_seeded() {
        let a: Vec<usize> = (0..5)
            .map({
                let mut r = Rng::new(7);
                move |_| r.below(100)
            })
            .collect();
        let b: Vec<usize> = (0..5)
            .map({
                let mut r = Rng::new(7);
                move |_| r.below(100)
            })
            .collect();
        assert_eq!(a, b);
        assert!("case_whitespace".parse::<Edit>().is_ok() && "nope".parse::<Edit>().is_err());
    }
}

//! The fixture of `amber-eval curate`: each LoCoMo conversation filed as one session, its
//! turns through capture as the daemon captures them, with seeded planted copies filed
//! later in the same session.

use std::collections::{BTreeMap, HashMap, HashSet};

use amber_core::{MemoryId, MemoryType, NewMemory, Scope};
use amber_engine::Engine;
use amber_eval::locomo;
use amber_tiers::capture::{CaptureConfig, Captured, capture};
use serde_json::json;

use super::edits::{Edit, apply_edit};
use super::score::{Planted, Truth};
use crate::common::{Rng, scope_segment};

/// One conversation filed as a session, with its planted copies.
pub(super) struct Filed {
    pub(super) scope: Scope,
    pub(super) session_id: String,
    pub(super) turns: usize,
    pub(super) filed: usize,
    pub(super) too_short: usize,
    pub(super) too_long: usize,
    pub(super) identical_originals: usize,
    pub(super) unplaced: BTreeMap<Edit, usize>,
}

/// Files a conversation (capture, then one batch in session order) with its planted copies.
pub(super) fn file_conversation(
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
            // The memory the daemon's capture files for a turn (`capture_text` in
            // `daemon/src/methods/capture.rs` sets these fields; no tiers function builds it
            // for both to call), filed here in one batch rather than one write per capture.
            let mut m = NewMemory::new(text).in_scope(scope.clone());
            m.kind = MemoryType::Event;
            m.source = Some("turn".into());
            m.session_id = Some(session_id.clone());
            m.author = Some("amber-eval".into());
            m.metadata = json!({"captured": true, "redacted": redacted});
            m
        })
        .collect();
    let stored = engine.writer()?.remember_batch(batch)?;
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

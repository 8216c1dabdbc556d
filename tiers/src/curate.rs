//! Curation at session end: duplicates collapse or are linked and ranked down, related
//! memories are linked. Nothing is deleted.
//!
//! For each memory the session filed, its most similar memories in the project's scope
//! (whole-memory similarity from the engine) are examined, each pair once:
//! - same text up to case and whitespace: an *exact duplicate*; the newer copy is
//!   collapsed into the older one (forgotten, so recall stops returning it; its content
//!   stays until purged) and linked to it;
//! - similarity at or above `duplicate_threshold` (default 0.95): a *near duplicate*;
//!   the newer is linked to the older and ranked down by recall; both are kept;
//! - similarity in `[related_threshold, duplicate_threshold)` (default 0.85): *related*,
//!   linked newer to older.
//!
//! (Content identical byte for byte in one scope never makes two memories: it has one id.)

use std::collections::HashSet;

use amber_core::{Link, LinkKind, Memory, MemoryId, Millis};
use serde::{Deserialize, Serialize};

/// Curation settings (`[curation]` table).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CurationConfig {
    /// Near-duplicate at or above this similarity (default 0.95).
    pub duplicate_threshold: f32,
    /// Related at or above this similarity (default 0.85).
    pub related_threshold: f32,
    /// Neighbours examined per memory (default 5).
    pub neighbours: usize,
}

impl Default for CurationConfig {
    fn default() -> CurationConfig {
        CurationConfig { duplicate_threshold: 0.95, related_threshold: 0.85, neighbours: 5 }
    }
}

/// Two memories curation paired.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pair {
    /// The newer memory.
    pub from: MemoryId,
    /// The older one.
    pub to: MemoryId,
    /// Their similarity.
    pub similarity: f32,
}

/// What curation found and did.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CurationReport {
    /// Session memories examined.
    pub examined: usize,
    /// Exact duplicates (the newer one collapsed into the older).
    pub exact_duplicates: Vec<Pair>,
    /// Near duplicates (linked; the newer ranked down).
    pub near_duplicates: Vec<Pair>,
    /// Related memories (linked).
    pub related: Vec<Pair>,
    /// Links that were new in the store.
    pub links_added: usize,
    /// Memories collapsed (forgotten) as exact duplicates.
    pub collapsed: usize,
    /// Captures that were already filed when they came in (same content, same scope).
    pub repeats_at_capture: usize,
}

/// What to write.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan {
    /// Links to add.
    pub links: Vec<Link>,
    /// Memories to forget (collapsed exact duplicates).
    pub forget: Vec<MemoryId>,
    /// The report (links_added and collapsed are filled in by whoever applies the plan).
    pub report: CurationReport,
}

/// Lowercased, whitespace collapsed.
pub fn normalize(text: &str) -> String {
    text.split_whitespace().map(str::to_lowercase).collect::<Vec<_>>().join(" ")
}

/// Plans curation of a session's memories. `neighbours` gives a memory's most similar
/// live memories with their similarity.
pub fn plan(
    session_memories: &[Memory],
    mut neighbours: impl FnMut(&Memory) -> Vec<(Memory, f32)>,
    now: Millis,
    cfg: &CurationConfig,
) -> Plan {
    let mut out = Plan::default();
    let mut seen: HashSet<(MemoryId, MemoryId)> = HashSet::new();
    let mut gone: HashSet<MemoryId> = HashSet::new();
    for m in session_memories {
        if gone.contains(&m.id) {
            continue;
        }
        out.report.examined += 1;
        let norm = normalize(&m.content);
        for (n, sim) in neighbours(m) {
            if n.id == m.id || gone.contains(&n.id) || sim < cfg.related_threshold {
                continue;
            }
            let (newer, older) = if n.seq > m.seq { (&n, m) } else { (m, &n) };
            if !seen.insert((newer.id.clone(), older.id.clone())) {
                continue;
            }
            let kind = if normalize(&n.content) == norm {
                LinkKind::ExactDuplicate
            } else if sim >= cfg.duplicate_threshold {
                LinkKind::NearDuplicate
            } else {
                LinkKind::Related
            };
            let pair = Pair { from: newer.id.clone(), to: older.id.clone(), similarity: sim };
            match kind {
                LinkKind::ExactDuplicate => {
                    gone.insert(newer.id.clone());
                    out.forget.push(newer.id.clone());
                    out.report.exact_duplicates.push(pair);
                }
                LinkKind::NearDuplicate => out.report.near_duplicates.push(pair),
                LinkKind::Related | LinkKind::Disputes => out.report.related.push(pair),
            }
            out.links.push(Link {
                from: newer.id.clone(),
                to: older.id.clone(),
                kind,
                similarity: sim,
                created_at: now,
            });
            if gone.contains(&m.id) {
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use amber_core::NewMemory;

    use super::*;

    fn mem(seq: u64, content: &str) -> Memory {
        Memory::filed(NewMemory::new(content).of_type(amber_core::MemoryType::Event), seq, seq as i64)
    }

    #[test]
    fn kinds_by_text_and_threshold_each_pair_once_newer_to_older() {
        let old = mem(1, "Run make release with AWS_PROFILE=staging");
        let exact = mem(5, "run  make release with aws_profile=staging ");
        let near = mem(6, "Run make release with AWS_PROFILE=staging set");
        let related = mem(7, "Releases are cut on Fridays");
        let far = mem(8, "Lunch is at noon");
        let all = [old.clone(), exact.clone(), near.clone(), related.clone(), far.clone()];
        let sim = |a: &Memory, b: &Memory| -> f32 {
            let pair = [a.seq.min(b.seq), a.seq.max(b.seq)];
            match pair {
                [1, 5] => 0.999,
                [1, 6] | [5, 6] => 0.97,
                [1, 7] | [6, 7] | [5, 7] => 0.88,
                _ => 0.3,
            }
        };
        let session = [exact.clone(), near.clone(), related.clone(), far.clone()];
        let p = plan(
            &session,
            |m| all.iter().filter(|n| n.id != m.id).map(|n| (n.clone(), sim(m, n))).collect(),
            42,
            &CurationConfig::default(),
        );
        assert_eq!(p.forget, vec![exact.id.clone()], "the newer exact copy collapses");
        let pairs = |v: &[Pair]| v.iter().map(|x| (x.from.clone(), x.to.clone())).collect::<Vec<_>>();
        assert_eq!(pairs(&p.report.exact_duplicates), vec![(exact.id.clone(), old.id.clone())]);
        assert_eq!(pairs(&p.report.near_duplicates), vec![(near.id.clone(), old.id.clone())]);
        let mut rel = pairs(&p.report.related);
        rel.sort();
        let mut want = vec![(related.id.clone(), old.id.clone()), (related.id.clone(), near.id.clone())];
        want.sort();
        assert_eq!(rel, want, "related links go newer to older, each pair once");
        assert_eq!(p.report.examined, 4, "each session memory examined once");
        assert_eq!(p.links.len(), 4);
        assert!(p.links.iter().all(|l| l.created_at == 42));
        assert!(!p.links.iter().any(|l| l.from == far.id || l.to == far.id));
    }

    #[test]
    fn normalize_ignores_case_and_spacing_only() {
        assert_eq!(normalize("  A  b\n\tC "), "a b c");
        assert_ne!(normalize("a b c"), normalize("a b c."));
    }
}

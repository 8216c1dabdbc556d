//! The ground truth of `amber-eval curate` (which copy was planted from which original)
//! and how a plan's links score against it: found per edit kind, false merges, and the
//! markdown table.

use std::collections::{BTreeMap, HashMap};

use amber_core::{Link, LinkKind, Memory, MemoryId};
use amber_tiers::curate::normalize;
use serde_json::{Value, json};

use super::edits::Edit;

/// A planted copy.
#[derive(Debug, Clone)]
pub(super) struct Planted {
    pub(super) edit: Edit,
    /// The original's memory id.
    pub(super) original: MemoryId,
    /// The copy's memory id.
    pub(super) copy: MemoryId,
}

/// What one plan got right and wrong against the planted truth.
#[derive(Debug, Default)]
pub(super) struct Score {
    /// Per edit: planted, found as exact, found as near, linked only as related.
    pub(super) by_edit: BTreeMap<Edit, [usize; 4]>,
    /// Duplicate links that join a copy to its original.
    pub(super) true_links: usize,
    /// Duplicate links (exact, near) that do not.
    pub(super) false_exact: Vec<Link>,
    pub(super) false_near: Vec<Link>,
    /// Related links: between a copy and its original, and others.
    pub(super) related_planted: usize,
    pub(super) related_other: usize,
}

/// The ground truth of a run.
pub(super) struct Truth {
    pub(super) planted: Vec<Planted>,
    /// Copy id -> index in `planted`.
    pub(super) copy_of: HashMap<MemoryId, usize>,
    /// Every filed memory's text.
    pub(super) text: HashMap<MemoryId, String>,
}

impl Truth {
    fn norm(&self, id: &MemoryId) -> String {
        self.text.get(id).map(|t| normalize(t)).unwrap_or_default()
    }
    /// The planted copy this link joins to its original (by the original's text up to
    /// case and whitespace), if it does.
    pub(super) fn planted_pair(&self, l: &Link) -> Option<usize> {
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

    pub(super) fn score(&self, links: &[Link]) -> Score {
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

pub(super) fn ratio(num: usize, den: usize) -> Value {
    if den == 0 { Value::Null } else { json!(num as f64 / den as f64) }
}

pub(super) fn score_json(s: &Score, threshold: f32) -> Value {
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
pub(super) fn spread(xs: &mut [f32]) -> Value {
    xs.sort_by(f32::total_cmp);
    match xs {
        [] => Value::Null,
        _ => json!({"min": xs[0], "median": xs[xs.len() / 2], "max": xs[xs.len() - 1], "n": xs.len()}),
    }
}

/// The similarity of a planted copy to its original from the recorded neighbours (either
/// side's list), None when neither is among the other's neighbours.
pub(super) fn planted_similarity(
    p: &Planted,
    neighbours: &HashMap<MemoryId, Vec<(Memory, f32)>>,
) -> Option<f32> {
    let find = |a: &MemoryId, b: &MemoryId| {
        neighbours.get(a).and_then(|v| v.iter().find(|(m, _)| &m.id == b).map(|x| x.1))
    };
    find(&p.copy, &p.original).or_else(|| find(&p.original, &p.copy))
}

/// The markdown table: found per edit kind at each threshold, then the false merges.
pub(super) fn table(kinds: &[Edit], report: &Value, scores: &[(f32, Score)]) -> String {
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

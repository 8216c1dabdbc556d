//! Curation of notes: a note whose served runs score lower than its situation's other
//! runs is withheld ([`withhold`]); an edit that drops more than a quarter of a note's
//! words is refused ([`check_edit`]).

use std::collections::HashMap;

use crate::lift::{Arm, welch};

/// The fewest runs on each side before a note can be withheld.
pub const MIN_PER_SIDE: usize = 8;
/// How much lower the served runs' mean must be.
pub const MARGIN: f64 = 0.2;
/// The one-sided z the difference must reach (p < 0.05).
pub const Z: f64 = 1.645;
/// The largest share of a note's words an edit may drop.
pub const MAX_DROPPED: f64 = 0.25;

/// Why to withhold a note, when its served runs (rewards of the runs that followed its
/// advice) score lower than the situation's other runs: at least [`MIN_PER_SIDE`] a
/// side, a mean lower by [`MARGIN`] or more, and a one-sided Welch z of at least [`Z`].
pub fn withhold(served: &[f64], others: &[f64]) -> Option<String> {
    if served.len() < MIN_PER_SIDE || others.len() < MIN_PER_SIDE {
        return None;
    }
    let (s, o) = (Arm::of(served), Arm::of(others));
    let gap = o.mean? - s.mean?;
    let (z, p) = welch(&o, &s)?;
    (gap >= MARGIN && z >= Z).then(|| {
        format!(
            "runs served this note score {gap:.2} lower than the situation's other runs \
             ({} against {}, z = {z:.2}, p = {p:.3})",
            s.n, o.n
        )
    })
}

fn words(text: &str) -> HashMap<String, usize> {
    let mut out = HashMap::new();
    for w in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        *out.entry(w.to_lowercase()).or_insert(0) += 1;
    }
    out
}

/// Refuses an edit of `old` into `new` that drops more than [`MAX_DROPPED`] of `old`'s
/// words (counted with repeats, case-insensitive).
pub fn check_edit(old: &str, new: &str) -> Result<(), String> {
    let (before, after) = (words(old), words(new));
    let total: usize = before.values().sum();
    if total == 0 {
        return Ok(());
    }
    let dropped: usize = before.iter().map(|(w, n)| n.saturating_sub(*after.get(w).unwrap_or(&0))).sum();
    let share = dropped as f64 / total as f64;
    if share > MAX_DROPPED {
        return Err(format!(
            "the edit drops {dropped} of the note's {total} words ({:.0}%); an edit may drop at most {:.0}%",
            share * 100.0,
            MAX_DROPPED * 100.0
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_may_drop_a_quarter_of_the_words_and_no_more() {
        let old = "one two three four five six seven eight";
        assert!(check_edit(old, "one two three four five six nine ten").is_ok(), "2 of 8 dropped");
        assert!(check_edit(old, "one two three four five nine ten eleven").is_err(), "3 of 8 dropped");
        assert!(check_edit(old, &format!("{old} and more")).is_ok());
    }

    #[test]
    fn a_note_is_withheld_only_on_enough_runs_a_clear_gap_and_significance() {
        let low = [-1.0, -0.5, -1.0, -0.5, 0.0, -1.0, -0.5, -1.0];
        let high = [1.0, 0.5, 1.0, 0.5, 0.0, 1.0, 0.5, 1.0];
        assert!(withhold(&low, &high).is_some());
        assert!(withhold(&high, &low).is_none(), "served scoring higher");
        assert!(withhold(&low[..7], &high).is_none(), "7 served runs are too few");
        let close: Vec<f64> = low.iter().map(|x| x + 0.15).collect();
        let near: Vec<f64> = close.iter().map(|x| x + 0.1).collect();
        assert!(withhold(&close, &near).is_none(), "a gap under the margin");
    }
}

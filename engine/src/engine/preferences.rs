//! The person's standing preferences: the lifefacts the person filed (or promoted) in a
//! session's scopes, which a briefing keeps whatever else the store holds (issue 45: at
//! 2,025 memories a briefing had lost the person's own preference to volume).

use amber_core::{Filing, Memory, Query, Scope};

use super::allowed::Allowed;
use super::{Engine, read};
use crate::Result;

impl Engine {
    /// The person's live, unarchived lifefacts within `scopes` (and the scopes under
    /// them), newest filed first, at most `limit`. Read from the in-memory view: no
    /// search, the same cost at 100k memories as at 10.
    pub fn standing_preferences(&self, scopes: &[Scope], limit: usize) -> Result<Vec<Memory>> {
        let Some((first, rest)) = scopes.split_first() else { return Ok(Vec::new()) };
        let q =
            rest.iter().fold(Query::new("preferences").in_scope(first.clone()), |q, s| q.also_in(s.clone()));
        let seqs: Vec<u64> = {
            let docs = read(&self.docs);
            let Some(allowed) = Allowed::of(&docs, &q) else { return Ok(Vec::new()) };
            let standing = read(&self.standing);
            docs.lifefacts
                .iter()
                .rev()
                .copied()
                .filter(|&seq| {
                    allowed.contains(seq)
                        && matches!(docs.filing_of(seq), Filing::Person | Filing::Promoted)
                        && standing.get(&seq).is_none_or(|r| r.archived_at.is_none())
                })
                .take(limit)
                .collect()
        };
        let mut out = self.read(|s| s.get_by_seqs(&seqs))?;
        out.sort_by_key(|m| std::cmp::Reverse(m.seq));
        Ok(out)
    }
}

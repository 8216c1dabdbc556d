//! Links between memories: duplicates and related memories, linked by curation, never
//! deleted; and disputes, an invalidation naming a memory its writer may not retire.

use serde::{Deserialize, Serialize};

use crate::{MemoryId, Millis};

/// What a link says about its two memories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkKind {
    /// `from` has the same text as `to` up to whitespace and case, and was filed later:
    /// it is collapsed into `to` (forgotten, its content kept until purged).
    ExactDuplicate,
    /// `from` is a near-duplicate of the older `to` (similarity at or above the
    /// duplicate threshold): recall ranks `from` down.
    NearDuplicate,
    /// The two are related (similarity in the related band): kept as they are.
    Related,
    /// `from`, an invalidation, says `to` is wrong, but its writer could not retire it
    /// (another author's memory, or a person's, named by an agent): `to` stays live and
    /// is shown as disputed.
    Disputes,
}

impl LinkKind {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            LinkKind::ExactDuplicate => "exact_duplicate",
            LinkKind::NearDuplicate => "near_duplicate",
            LinkKind::Related => "related",
            LinkKind::Disputes => "disputes",
        }
    }

    /// Parses a stored name.
    pub fn parse(s: &str) -> Option<LinkKind> {
        Some(match s {
            "exact_duplicate" => LinkKind::ExactDuplicate,
            "near_duplicate" => LinkKind::NearDuplicate,
            "related" => LinkKind::Related,
            "disputes" => LinkKind::Disputes,
            _ => return None,
        })
    }

    /// True for the kinds that mark `from` as a duplicate of `to`.
    pub fn is_duplicate(self) -> bool {
        matches!(self, LinkKind::ExactDuplicate | LinkKind::NearDuplicate)
    }
}

/// A directed link from a memory to another.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Link {
    /// The memory the link is about (for duplicates: the newer copy).
    pub from: MemoryId,
    /// The memory it points to (for duplicates: the one kept first).
    pub to: MemoryId,
    /// What the link says.
    pub kind: LinkKind,
    /// The similarity that made the link (cosine of the embeddings, 1 for exact copies).
    pub similarity: f32,
    /// When it was made.
    pub created_at: Millis,
}

//! How a memory came to be filed, for ranking: what the person filed outranks what an
//! agent filed and the sections of the project's own documents, which outrank compiled
//! skills, then documents from outside (vendored, cloned), then raw captures, all else
//! being equal. A memory's filing is read from what the daemon stamped (its trust,
//! `captured`, `doc`, `skill`, a person's `trust_set`), never from a client's say-so.
//!
//! The engine multiplies a candidate's fused score by its filing's prior (see
//! [`Filing::prior`]) together with its standing's (weight and age): one rule for every
//! door, so the command line, MCP, the web view, the briefing and the gate rank alike.
//! A store of only raw sessions (a benchmark's haystack) ranks as it would without it:
//! one factor on every candidate keeps their order.

use std::fmt;

use serde_json::Value;

use crate::{Memory, MemoryType};

/// How a memory came to be filed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Filing {
    /// Filed by the person (the command line, the web view).
    Person,
    /// Filed by an agent or the daemon, then raised to `person` by the person
    /// (`amber trust ID person`).
    Promoted,
    /// Filed on purpose by an agent, or curated by the daemon: a durable memory.
    Agent,
    /// A chunk of a document the person or an agent stands behind (`amber ingest` of the
    /// person's own files, a file an agent wrote).
    Document,
    /// A compiled skill (`amber compile`).
    Skill,
    /// A chunk of a document from outside (trust `external`): a vendored tree, another
    /// repository inside the project, an ingest asked through an agent's door or with
    /// `--external`. Reference material nobody here wrote.
    Reference,
    /// A raw capture: a prompt, a tool's output, a transcript piece (type `event` filed
    /// in a session or by a capture). Evidence, never briefed nor interjected.
    Raw,
}

/// What a memory's metadata says of its filing: the marks the daemon stamps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Marks {
    /// Its trust (`person`, `agent`, `external`), as [`crate::origin::trust_of`] reads it.
    pub trust: Option<crate::origin::Trust>,
    /// Filed by a capture (`captured: true`).
    pub captured: bool,
    /// A document chunk (`doc`).
    pub doc: bool,
    /// A compiled skill or its revision (`skill`, `skill_revision`).
    pub skill: bool,
    /// Its trust was set by the person (`trust_set.by = person`).
    pub trust_set: bool,
}

impl Marks {
    /// The marks of a memory's metadata.
    pub fn of(metadata: &Value) -> Marks {
        Marks::from_fields(
            metadata.get(crate::origin::TRUST_KEY).and_then(Value::as_str),
            metadata.get("captured").and_then(Value::as_bool) == Some(true),
            crate::document::is_chunk(metadata),
            crate::skill::is_skill(metadata),
            metadata.get("trust_set").and_then(|t| t.get("by")).and_then(Value::as_str),
        )
    }

    /// The marks of metadata whose fields a store read as columns: its `trust`, whether
    /// `captured` is true, whether `doc` and `skill` (or `skill_revision`) are objects,
    /// and who set its trust (`trust_set.by`).
    pub fn from_fields(
        trust: Option<&str>,
        captured: bool,
        doc: bool,
        skill: bool,
        trust_set_by: Option<&str>,
    ) -> Marks {
        Marks {
            trust: Some(crate::origin::trust_from(trust, captured)),
            captured,
            doc,
            skill,
            trust_set: trust_set_by == Some("person"),
        }
    }
}

impl Filing {
    /// Every filing, best first.
    pub const ALL: [Filing; 7] = [
        Filing::Person,
        Filing::Promoted,
        Filing::Agent,
        Filing::Document,
        Filing::Skill,
        Filing::Reference,
        Filing::Raw,
    ];

    /// A memory's filing.
    pub fn of(m: &Memory) -> Filing {
        Filing::from_marks(m.kind, m.session_id.is_some(), Marks::of(&m.metadata))
    }

    /// The filing of a memory of type `kind`, filed in a session or not, with these marks.
    pub fn from_marks(kind: MemoryType, in_session: bool, marks: Marks) -> Filing {
        use crate::origin::Trust;
        let person = marks.trust == Some(Trust::Person);
        if marks.skill {
            Filing::Skill
        } else if marks.doc && marks.trust == Some(Trust::External) {
            Filing::Reference
        } else if marks.doc {
            Filing::Document
        } else if person && marks.trust_set {
            Filing::Promoted
        } else if kind == MemoryType::Event && (in_session || marks.captured) {
            Filing::Raw
        } else if person {
            Filing::Person
        } else {
            Filing::Agent
        }
    }

    /// The stable lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Filing::Person => "person",
            Filing::Promoted => "promoted",
            Filing::Agent => "agent",
            Filing::Document => "document",
            Filing::Skill => "skill",
            Filing::Reference => "reference",
            Filing::Raw => "raw",
        }
    }

    /// The factor on the fused score of a memory so filed (see the module's
    /// documentation and docs/EVAL.md, "Mixed stores"). A raw capture's is low because
    /// it comes on top of the session rules: the captures of one session that matches
    /// lift each other (session prior, neighbours) to about twice a lone memory's score
    /// at the same ranks, so at 0.3 the best capture of a session ranks with a durable
    /// memory about sixth in words and meaning, not above the first.
    ///
    /// A document is weighed by who stands behind it, as any memory: a section of the
    /// person's own files (or of a file an agent wrote) as an agent's note, what the
    /// person filed one by one above both; a section from outside (`reference`) below
    /// anything the project wrote, above raw captures.
    pub fn prior(self) -> f32 {
        match self {
            Filing::Person | Filing::Promoted => 1.0,
            Filing::Agent | Filing::Document => 0.85,
            Filing::Skill => 0.75,
            Filing::Reference => 0.6,
            Filing::Raw => 0.3,
        }
    }

    /// True for a document's section, the project's own or from outside.
    pub fn is_document(self) -> bool {
        matches!(self, Filing::Document | Filing::Reference)
    }
}

impl fmt::Display for Filing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Filing {
    type Err = crate::InvalidInput;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Filing::ALL.into_iter().find(|f| f.as_str() == s).ok_or_else(|| crate::InvalidInput::BadQuery {
            reason: format!(
                "unknown filing {s:?}: one of person, promoted, agent, document, skill, reference, raw"
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn filing(kind: MemoryType, in_session: bool, metadata: Value) -> Filing {
        Filing::from_marks(kind, in_session, Marks::of(&metadata))
    }

    #[test]
    fn each_filing_is_read_from_what_the_daemon_stamped() {
        assert_eq!(filing(MemoryType::Pattern, false, json!({ "trust": "person" })), Filing::Person);
        assert_eq!(filing(MemoryType::Fact, true, json!({ "trust": "agent" })), Filing::Agent);
        assert_eq!(
            filing(MemoryType::Event, true, json!({ "trust": "external", "captured": true })),
            Filing::Raw
        );
        assert_eq!(filing(MemoryType::Event, false, json!({ "captured": true })), Filing::Raw);
        assert_eq!(
            filing(MemoryType::Event, false, json!({ "trust": "agent" })),
            Filing::Agent,
            "an event filed on purpose"
        );
        let promoted = json!({ "trust": "person", "captured": true, "trust_set": { "by": "person", "was": "external" } });
        assert_eq!(filing(MemoryType::Event, true, promoted), Filing::Promoted);
        let doc = json!({ "trust": "person", "doc": { "path": "a.md" } });
        assert_eq!(
            filing(MemoryType::Fact, false, doc),
            Filing::Document,
            "a person's document is still a document"
        );
        let vendored = json!({ "trust": "external", "external": true, "doc": { "path": "vendor/a.md" } });
        assert_eq!(filing(MemoryType::Fact, false, vendored), Filing::Reference, "a document from outside");
        let written = json!({ "trust": "agent", "doc": { "path": "notes.md" } });
        assert_eq!(filing(MemoryType::Fact, false, written), Filing::Document, "a file an agent wrote");
        assert_eq!(filing(MemoryType::Pattern, false, json!({ "skill": { "name": "x" } })), Filing::Skill);
        // A client's own `trust_set` without the person's trust promotes nothing.
        let forged = json!({ "trust": "agent", "trust_set": { "by": "person" } });
        assert_eq!(filing(MemoryType::Fact, false, forged), Filing::Agent);
    }

    #[test]
    fn priors_follow_the_order_and_names_round_trip() {
        for w in Filing::ALL.windows(2) {
            assert!(w[0].prior() >= w[1].prior(), "{w:?}");
        }
        for f in Filing::ALL {
            assert_eq!(f.as_str().parse::<Filing>().unwrap(), f);
        }
        assert!("curated".parse::<Filing>().is_err());
    }
}

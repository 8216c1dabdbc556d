//! The knowledge graph's shared types: entities, facts with a validity window, and how
//! names are compared.
//!
//! A fact is `subject predicate object`, where the object is another entity or a
//! literal. It holds from `valid_from` (inclusive) to `valid_to` (exclusive); either end
//! may be open. Facts are never deleted: invalidating one ends its window.

use serde::{Deserialize, Serialize};

use crate::{InvalidInput, MemoryId, Millis, Result, Scope};

/// Longest entity name or alias, in bytes.
pub const MAX_NAME_BYTES: usize = 200;
/// Longest predicate, in bytes.
pub const MAX_PREDICATE_BYTES: usize = 100;
/// Longest literal object, in bytes.
pub const MAX_LITERAL_BYTES: usize = 2000;

/// A name as Amber compares it: lowercase words (runs of letters and digits) joined by
/// single spaces. `"Dr. Ada  Lovelace"` and `"dr ada lovelace"` are the same name.
pub fn normalize_name(name: &str) -> String {
    name_words(name).collect::<Vec<_>>().join(" ")
}

/// The lowercase words of a text, as [`normalize_name`] splits them.
pub fn name_words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase)
}

/// A predicate as stored: trimmed, lowercase, inner whitespace as `_`
/// (`"Works At"` -> `works_at`).
pub fn normalize_predicate(p: &str) -> String {
    p.split_whitespace().map(str::to_lowercase).collect::<Vec<_>>().join("_")
}

fn bad(reason: String) -> InvalidInput {
    InvalidInput::BadGraph { reason }
}

/// Checks a name or alias: some letters or digits, at most [`MAX_NAME_BYTES`].
pub fn check_name(what: &str, name: &str) -> Result<()> {
    if normalize_name(name).is_empty() {
        return Err(bad(format!("{what} {name:?} has no letters or digits")));
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(bad(format!("{what} is {} bytes, over the limit of {MAX_NAME_BYTES}", name.len())));
    }
    Ok(())
}

/// An entity: something facts are about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entity {
    /// Its number in the store.
    pub id: i64,
    /// The scope it lives in (each scope has its own graph).
    pub scope: Scope,
    /// Its name as first given.
    pub name: String,
    /// Its type (`person`, `project`, `library`...), when given; `type` on the wire, as
    /// `kg_add` takes it.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Other names it goes by.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// When it was first added.
    pub created_at: Millis,
}

/// An entity as a fact names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntityRef {
    /// Its number in the store.
    pub id: i64,
    /// Its name.
    pub name: String,
}

/// What a fact's object is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FactObject {
    /// Another entity.
    Entity(EntityRef),
    /// A value (`"2021"`, `"blue"`).
    Literal(String),
}

/// A fact with its window of validity and the memories it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fact {
    /// Its number in the store.
    pub id: i64,
    /// What it is about.
    pub subject: EntityRef,
    /// The relation (normalized, see [`normalize_predicate`]).
    pub predicate: String,
    /// The other end.
    pub object: FactObject,
    /// From when it holds (inclusive); open when absent.
    pub valid_from: Option<Millis>,
    /// Until when it holds (exclusive); open when absent.
    pub valid_to: Option<Millis>,
    /// When it was filed.
    pub recorded_at: Millis,
    /// When it was last invalidated, if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalidated_at: Option<Millis>,
    /// How sure the source was, 0 to 1 (default 1).
    pub confidence: f32,
    /// The memories it came from.
    #[serde(default)]
    pub sources: Vec<MemoryId>,
}

impl Fact {
    /// True when the fact holds at `t`.
    pub fn valid_at(&self, t: Millis) -> bool {
        self.valid_from.is_none_or(|f| f <= t) && self.valid_to.is_none_or(|to| t < to)
    }

    /// The entity at the other end from `entity`, if the fact links two entities.
    pub fn other_end(&self, entity: i64) -> Option<&EntityRef> {
        match &self.object {
            FactObject::Entity(o) if self.subject.id == entity => Some(o),
            FactObject::Entity(_) => Some(&self.subject),
            FactObject::Literal(_) => None,
        }
    }
}

/// An entity to add (or to give more aliases).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewEntity {
    /// Its name (or any alias it already has).
    pub name: String,
    /// Its type.
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    /// Other names it goes by.
    #[serde(default)]
    pub aliases: Vec<String>,
}

impl NewEntity {
    /// Checks names and aliases.
    pub fn validate(&self) -> Result<()> {
        check_name("entity name", &self.name)?;
        for a in &self.aliases {
            check_name("alias", a)?;
        }
        if self.kind.as_ref().is_some_and(|k| k.len() > MAX_PREDICATE_BYTES) {
            return Err(bad(format!("entity type is over {MAX_PREDICATE_BYTES} bytes")));
        }
        Ok(())
    }
}

/// A fact to add. Entities it names that do not exist yet are created.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewFact {
    /// The subject entity's name or alias.
    pub subject: String,
    /// The relation.
    pub predicate: String,
    /// The object entity's name or alias (give this or `literal`).
    #[serde(default)]
    pub object: Option<String>,
    /// A literal object (give this or `object`).
    #[serde(default)]
    pub literal: Option<String>,
    /// From when it holds (ms since the epoch); open when absent.
    #[serde(default)]
    pub valid_from: Option<Millis>,
    /// Until when it holds; open when absent.
    #[serde(default)]
    pub valid_to: Option<Millis>,
    /// 0 to 1 (default 1).
    #[serde(default)]
    pub confidence: Option<f32>,
    /// The memories it came from.
    #[serde(default)]
    pub sources: Vec<MemoryId>,
    /// End the window of every fact with the same subject and predicate that holds at
    /// this fact's `valid_from` (default: the time it is added): the new value replaces
    /// the old one ("moved to Berlin").
    #[serde(default)]
    pub supersede: bool,
}

impl NewFact {
    /// Checks the fact's parts.
    pub fn validate(&self) -> Result<()> {
        check_name("subject", &self.subject)?;
        let p = normalize_predicate(&self.predicate);
        if p.is_empty() || p.len() > MAX_PREDICATE_BYTES {
            return Err(bad(format!("predicate must have 1 to {MAX_PREDICATE_BYTES} bytes of text")));
        }
        match (&self.object, &self.literal) {
            (Some(o), None) => check_name("object", o)?,
            (None, Some(l)) if l.trim().is_empty() => return Err(bad("literal is empty".into())),
            (None, Some(l)) if l.len() > MAX_LITERAL_BYTES => {
                return Err(bad(format!("literal is over {MAX_LITERAL_BYTES} bytes")));
            }
            (None, Some(_)) => {}
            _ => return Err(bad("a fact needs exactly one of object (an entity) or literal".into())),
        }
        if let (Some(f), Some(t)) = (self.valid_from, self.valid_to)
            && t <= f
        {
            return Err(bad(format!("valid_to ({t}) must be after valid_from ({f})")));
        }
        if self.confidence.is_some_and(|c| !(0.0..=1.0).contains(&c)) {
            return Err(bad("confidence must be between 0 and 1".into()));
        }
        Ok(())
    }
}

/// Counts over one scope's graph, or all of them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphStats {
    /// Entities.
    pub entities: u64,
    /// Aliases (names besides each entity's first).
    pub aliases: u64,
    /// Facts, valid or not.
    pub facts: u64,
    /// Facts whose window was ended by an invalidation.
    pub invalidated: u64,
    /// Facts valid now.
    pub valid_now: u64,
    /// Links between entities and the memories that mention them.
    pub mentions: u64,
    /// Distinct predicates.
    pub predicates: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_compare_by_words() {
        assert_eq!(normalize_name("Dr. Ada  Lovelace"), "dr ada lovelace");
        assert_eq!(normalize_name("  "), "");
        assert_eq!(normalize_name("Zoë's café"), "zoë s café");
        assert_eq!(normalize_predicate(" Works  At "), "works_at");
    }

    #[test]
    fn windows_are_half_open() {
        let f = Fact {
            id: 1,
            subject: EntityRef { id: 1, name: "a".into() },
            predicate: "p".into(),
            object: FactObject::Literal("x".into()),
            valid_from: Some(10),
            valid_to: Some(20),
            recorded_at: 0,
            invalidated_at: None,
            confidence: 1.0,
            sources: vec![],
        };
        assert!(!f.valid_at(9));
        assert!(f.valid_at(10));
        assert!(f.valid_at(19));
        assert!(!f.valid_at(20));
    }

    #[test]
    fn facts_need_one_object_and_a_sane_window() {
        let ok = NewFact {
            subject: "a".into(),
            predicate: "p".into(),
            literal: Some("x".into()),
            ..Default::default()
        };
        assert!(ok.validate().is_ok());
        let both = NewFact { object: Some("b".into()), ..ok.clone() };
        assert!(both.validate().is_err());
        let backwards = NewFact { valid_from: Some(5), valid_to: Some(5), ..ok.clone() };
        assert!(backwards.validate().is_err());
        let no_name = NewFact { subject: "...".into(), ..ok };
        assert!(no_name.validate().is_err());
    }
}

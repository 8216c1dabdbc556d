//! `recall`: a query and its hits.

use amber_core::{Expand, Hit, MemoryId, Millis, Query, Scope, SearchMode};
use serde::{Deserialize, Serialize};

use super::runs::LeadHit;

/// `recall` params: a [`Query`] plus `fresh`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecallParams {
    /// The query text.
    pub text: String,
    /// Only this scope and the scopes under it.
    #[serde(default)]
    pub scope: Option<Scope>,
    /// More scopes searched with `scope` as one ranking (e.g. the project and `user`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<Scope>,
    /// How many hits (default 10, at most 1000).
    #[serde(default)]
    pub k: Option<usize>,
    /// Only memories whose time is at or after this (ms since the epoch).
    #[serde(default)]
    pub since: Option<Millis>,
    /// Only memories whose time is at or before this.
    #[serde(default)]
    pub until: Option<Millis>,
    /// `hybrid` (default), `bm25` or `vector`.
    #[serde(default)]
    pub mode: Option<SearchMode>,
    /// The moment the question is asked, for "last week" in the text (default: now).
    #[serde(default)]
    pub now: Option<Millis>,
    /// Wait until every write acknowledged before this request is indexed (default
    /// true), so a client always finds what it just remembered.
    #[serde(default)]
    pub fresh: Option<bool>,
    /// A live session: the result then lists the hits it was already given
    /// (`given_earlier`). Recall itself does not count as serving.
    #[serde(default)]
    pub session_id: Option<String>,
    /// `graph`: also rank the memories of entities one hop from those the query names
    /// (default: no expansion).
    #[serde(default)]
    pub expand: Option<Expand>,
    /// Include archived memories, marked so in their evidence (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived: Option<bool>,
    /// Drop hits below the model's relevance floor (default false, as before the floor
    /// existed; `amber recall` and the MCP server ask for it): when nothing matches
    /// better than unrelated text would, there are no hits rather than the k least bad
    /// (`amber_core::Query::floor`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor: Option<bool>,
}

impl RecallParams {
    /// Params for a text, everything else default.
    pub fn new(text: impl Into<String>) -> RecallParams {
        RecallParams {
            text: text.into(),
            scope: None,
            also: Vec::new(),
            k: None,
            since: None,
            until: None,
            mode: None,
            now: None,
            fresh: None,
            session_id: None,
            expand: None,
            archived: None,
            floor: None,
        }
    }

    /// The engine query.
    pub fn query(&self) -> Query {
        let mut q = Query::new(self.text.clone());
        q.scope = self.scope.clone();
        for s in &self.also {
            q = q.also_in(s.clone());
        }
        if let Some(k) = self.k {
            q.k = k;
        }
        q.since = self.since;
        q.until = self.until;
        q.mode = self.mode.unwrap_or_default();
        q.now = self.now;
        q.expand = self.expand.unwrap_or_default();
        q.archived = self.archived.unwrap_or(false);
        q.floor = self.floor.unwrap_or(false);
        q
    }
}

/// `recall` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecallResult {
    /// Best first, each with its per-signal evidence.
    pub hits: Vec<Hit>,
    /// True when the indexes covered every write acknowledged before the request.
    #[serde(default)]
    pub fresh: bool,
    /// With `session_id`: the hits this session was already given, and when.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub given_earlier: Vec<amber_tiers::session::Served>,
    /// When the text carries an error: up to 3 earlier memories and runs with an error
    /// like it (see `leads` in docs/PROTOCOL.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub leads: Vec<LeadHit>,
    /// Set when the team database could not be reached: why. The hits are then the
    /// local scopes' alone (a recall that names only team scopes answers the
    /// `team_unavailable` error instead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_unavailable: Option<String>,
    /// Set when the hits were ranked without vectors because the embedding model is
    /// away (an endpoint that does not answer): why. `fresh` is then false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub degraded: Option<String>,
    /// Hits an invalidation disputes (it named them but could not retire them): the hit's
    /// id and the invalidations' ids.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disputed: Vec<DisputedHit>,
    /// When a recall limited to some scopes found no good match there: the other scopes
    /// (the caller may read) that hold memories above the relevance floor, best first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub elsewhere: Vec<Scope>,
}

/// A recall hit that an invalidation disputes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DisputedHit {
    /// The hit.
    pub id: MemoryId,
    /// The invalidations disputing it.
    pub by: Vec<MemoryId>,
}

//! Queries and hits.

use crate::{InvalidInput, Memory, Millis, Scope};

/// The most results one query may ask for.
pub const MAX_K: usize = 1000;

/// The longest query text `recall` takes, in bytes (8 KiB): a longer one is refused with
/// `invalid_params`, so that one caller's huge query cannot take the search from everyone.
pub const MAX_QUERY_BYTES: usize = 8 * 1024;

/// Which signals a query uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    /// BM25 and embeddings fused by reciprocal rank (the default).
    #[default]
    Hybrid,
    /// BM25 only.
    Bm25,
    /// Embeddings only.
    Vector,
}

impl std::str::FromStr for SearchMode {
    type Err = InvalidInput;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "hybrid" => Ok(SearchMode::Hybrid),
            "bm25" => Ok(SearchMode::Bm25),
            "vector" => Ok(SearchMode::Vector),
            _ => Err(InvalidInput::BadQuery {
                reason: format!("unknown mode {s:?}: expected hybrid, bm25 or vector"),
            }),
        }
    }
}

impl SearchMode {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            SearchMode::Hybrid => "hybrid",
            SearchMode::Bm25 => "bm25",
            SearchMode::Vector => "vector",
        }
    }
}

/// What a caller asks for.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Query {
    /// The query text.
    pub text: String,
    /// Only memories within this scope (itself or below it).
    #[serde(default)]
    pub scope: Option<Scope>,
    /// More scopes searched together with `scope` as one ranking (a session's project
    /// scope and `user`): a memory within any of them passes. Empty with no `scope`:
    /// every scope.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<Scope>,
    /// How many hits to return.
    #[serde(default = "default_k")]
    pub k: usize,
    /// Only memories whose time (event time, else filing time) is at or after this.
    #[serde(default)]
    pub since: Option<Millis>,
    /// Only memories whose time is at or before this.
    #[serde(default)]
    pub until: Option<Millis>,
    /// Which signals to use.
    #[serde(default)]
    pub mode: SearchMode,
    /// The moment the query is asked, for time expressions in its text ("last
    /// Saturday"); default: the wall clock.
    #[serde(default)]
    pub now: Option<Millis>,
    /// What to add to the ranking beyond the memories that match the text.
    #[serde(default)]
    pub expand: Expand,
    /// Include archived memories (marked so in their evidence); default false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub archived: bool,
    /// Drop hits below the model's relevance floor (see
    /// `amber_engine::Calibration`): a query nothing answers well returns no hits
    /// rather than the k least bad. A hit the query's identifiers match exactly, and
    /// any hit when vectors are away (BM25 alone), is kept. Default false (benchmarks
    /// rank every candidate); the daemon's `recall` sets it unless asked not to.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub floor: bool,
}

/// Extra candidates a query may bring in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Expand {
    /// Nothing (the default).
    #[default]
    None,
    /// The memories that mention entities one hop (in the knowledge graph, by facts
    /// valid at the query's `now`) from the entities the query names, as one more
    /// ranking in the fusion.
    Graph,
}

fn default_k() -> usize {
    10
}

impl Query {
    /// A hybrid query over every scope for the top 10.
    pub fn new(text: impl Into<String>) -> Query {
        Query {
            text: text.into(),
            scope: None,
            also: Vec::new(),
            k: default_k(),
            since: None,
            until: None,
            mode: SearchMode::Hybrid,
            now: None,
            expand: Expand::None,
            archived: false,
            floor: false,
        }
    }

    /// The same query restricted to a scope.
    pub fn in_scope(mut self, scope: Scope) -> Query {
        self.scope = Some(scope);
        self
    }

    /// The same query also searching `scope` (one ranking over all of them).
    pub fn also_in(mut self, scope: Scope) -> Query {
        if self.scope.as_ref() != Some(&scope) && !self.also.contains(&scope) {
            self.also.push(scope);
        }
        self
    }

    /// Every scope the query is restricted to (empty: none, every scope passes).
    pub fn scopes(&self) -> Vec<&Scope> {
        self.scope.iter().chain(self.also.iter()).collect()
    }

    /// The same query for the top `k`.
    pub fn top(mut self, k: usize) -> Query {
        self.k = k;
        self
    }

    /// The same query with the relevance floor on or off (see [`Query::floor`]).
    pub fn with_floor(mut self, on: bool) -> Query {
        self.floor = on;
        self
    }

    /// The same query with another mode.
    pub fn mode(mut self, mode: SearchMode) -> Query {
        self.mode = mode;
        self
    }

    /// Checks the query can run.
    pub fn validate(&self) -> crate::Result<()> {
        if self.text.trim().is_empty() {
            return Err(InvalidInput::BadQuery { reason: "the query text is empty".into() });
        }
        if self.text.len() > MAX_QUERY_BYTES {
            return Err(InvalidInput::BadQuery {
                reason: format!(
                    "the query text is {} bytes, over the limit of {MAX_QUERY_BYTES}: search with its gist",
                    self.text.len()
                ),
            });
        }
        if self.k == 0 || self.k > MAX_K {
            return Err(InvalidInput::BadQuery {
                reason: format!("k must be between 1 and {MAX_K}, got {}", self.k),
            });
        }
        if let (Some(a), Some(b)) = (self.since, self.until)
            && a > b
        {
            return Err(InvalidInput::BadQuery { reason: "since is after until".into() });
        }
        Ok(())
    }
}

/// Why a memory was returned: each signal's view of it.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Evidence {
    /// 1-based rank in the BM25 list, if BM25 found it.
    pub bm25_rank: Option<usize>,
    /// Its BM25 score, if BM25 found it.
    pub bm25_score: Option<f32>,
    /// 1-based rank among memories holding the query's identifiers exactly (codes,
    /// paths, snake_case names), if the query has any and this memory holds one.
    pub exact_rank: Option<usize>,
    /// 1-based rank in the vector list, if the vector search found it.
    pub vector_rank: Option<usize>,
    /// 1-based rank among the candidates that fall inside the time window the query
    /// names ("last Saturday", "in April"), if it names one.
    pub time_rank: Option<usize>,
    /// 1-based rank among the memories of entities one hop from those the query names
    /// (with `expand: graph`), if it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph_rank: Option<usize>,
    /// What it gained in the fused score from being filed just before or after a strong
    /// candidate in the same session, if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub neighbour_bonus: Option<f32>,
    /// What it gained in the fused score from its session (the best candidate of the
    /// same session, times the session weight), if it was filed in one that had a
    /// candidate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_bonus: Option<f32>,
    /// Cosine similarity of its best-matching chunk to the query.
    pub best_chunk_cosine: Option<f32>,
    /// Index of that chunk within the memory; one past its last chunk when the best
    /// match was the memory read with its session context (the memory filed just
    /// before it in its session).
    pub best_chunk: Option<usize>,
    /// The reciprocal-rank-fused score that ordered the results (after the standing's
    /// prior).
    pub fused: f32,
    /// The memory's standing and the prior it put on the fused score.
    #[serde(default)]
    pub standing: Standing,
}

/// A hit's standing: what outcomes and age say of the memory, and what that did to its
/// score (see `amber_core::standing`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Standing {
    /// Its weight, 0..1 (1.0 until outcomes move it).
    pub weight: f32,
    /// Its age factor (its type's lifespan since it was last relied on, with a floor).
    pub age_factor: f32,
    /// The factor its fused score was multiplied by: its standing's (weight and age)
    /// times its filing's.
    pub prior: f32,
    /// Successes reported for it (the latest word per session).
    pub successes: u32,
    /// Failures reported for it.
    pub failures: u32,
    /// True when it is archived (shown only when the query asks for archived memories).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub archived: bool,
    /// How it was filed (see [`crate::filing`]), when the engine knew it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filing: Option<crate::Filing>,
    /// The factor its filing put on its score (part of `prior`; 1.0 for the person's own).
    #[serde(default = "one")]
    pub filing_factor: f32,
}

fn one() -> f32 {
    1.0
}

impl Default for Standing {
    fn default() -> Standing {
        Standing {
            weight: 1.0,
            age_factor: 1.0,
            prior: 1.0,
            successes: 0,
            failures: 0,
            archived: false,
            filing: None,
            filing_factor: 1.0,
        }
    }
}

/// One result of a query.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Hit {
    /// The memory, verbatim.
    pub memory: Memory,
    /// The per-signal evidence.
    pub evidence: Evidence,
    /// For a document chunk: where its text is in its file now (`amber ingest`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<crate::document::Place>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_over_the_cap_is_refused_and_one_at_the_cap_runs() {
        assert!(Query::new("x".repeat(MAX_QUERY_BYTES)).validate().is_ok());
        let e = Query::new("x".repeat(MAX_QUERY_BYTES + 1)).validate().unwrap_err();
        assert!(e.to_string().contains("over the limit of 8192"), "{e}");
        assert!(Query::new("  ").validate().is_err());
    }
}

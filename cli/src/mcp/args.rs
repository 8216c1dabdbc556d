//! The MCP tools' arguments: one struct per tool (its doc comments are the JSON
//! schema's descriptions the client shows the model), and the enums they share.

use rmcp::schemars;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Tool arguments as the daemon's params.
pub(super) fn params<T: Serialize>(args: &T) -> Result<Value, String> {
    serde_json::to_value(args).map_err(|e| format!("arguments do not serialize: {e}"))
}

/// A point in time: milliseconds since the epoch, or an RFC 3339 time or `YYYY-MM-DD` date.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub(super) enum TimeArg {
    /// Milliseconds since the Unix epoch.
    Millis(i64),
    /// An RFC 3339 time (`2026-05-01T12:00:00Z`) or a date (`2026-05-01`, UTC midnight).
    Text(String),
}

impl TimeArg {
    pub(super) fn millis(&self, name: &str) -> Result<i64, String> {
        match self {
            TimeArg::Millis(ms) => Ok(*ms),
            TimeArg::Text(s) => {
                if let Ok(t) = chrono::DateTime::parse_from_rfc3339(s) {
                    return Ok(t.timestamp_millis());
                }
                chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
                    .ok()
                    .and_then(|d| d.and_hms_opt(0, 0, 0))
                    .map(|t| t.and_utc().timestamp_millis())
                    .ok_or_else(|| {
                        format!("{name}: {s:?} is neither milliseconds, an RFC 3339 time nor YYYY-MM-DD")
                    })
            }
        }
    }
}

/// How `recall` ranks.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(super) enum Mode {
    /// BM25 and embeddings fused by reciprocal rank (the default).
    Hybrid,
    /// Keywords only (BM25).
    Bm25,
    /// Meaning only (embeddings).
    Vector,
}

/// What kind of thing a memory records.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(super) enum Kind {
    /// Something an agent or a person means to do.
    Intent,
    /// A statement about the world or the project (the default).
    Fact,
    /// A way of doing things that worked, or a recurring shape.
    Pattern,
    /// A statement that an earlier memory no longer holds.
    Invalidation,
    /// Something found out while working.
    Discovery,
    /// Something that happened at a time.
    Event,
    /// A durable fact about a person's life.
    Lifefact,
}

/// What `recall` adds to the ranking beyond the memories that match the text.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(super) enum ExpandArg {
    /// Nothing (the default).
    None,
    /// Also the memories about entities one hop away in the knowledge graph from the
    /// entities the query names (by facts valid now).
    Graph,
}

/// `recall` arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(super) struct RecallArgs {
    /// What to look for, in plain words (identifiers, paths and error codes are matched exactly too).
    pub(super) query: String,
    /// Only this scope and the scopes under it (`myproj` also searches `myproj/retrieval`).
    #[serde(default)]
    pub(super) scope: Option<String>,
    /// How many hits (default 10, at most 1000).
    #[serde(default)]
    pub(super) k: Option<usize>,
    /// Only memories from this time on.
    #[serde(default)]
    pub(super) since: Option<TimeArg>,
    /// Only memories up to this time.
    #[serde(default)]
    pub(super) until: Option<TimeArg>,
    /// `hybrid` (default), `bm25` or `vector`.
    #[serde(default)]
    pub(super) mode: Option<Mode>,
    /// A live session (from `session_start`): the answer then also lists the hits this
    /// session was already given.
    #[serde(default)]
    pub(super) session_id: Option<String>,
    /// `graph`: also rank the memories about entities one hop away in the knowledge graph
    /// from those the query names (such hits carry a `graph_rank`); default `none`.
    #[serde(default)]
    pub(super) expand: Option<ExpandArg>,
}

/// `remember` arguments (the daemon's `remember` params).
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
pub(super) struct RememberArgs {
    /// The text to remember; it is stored as given, but for secrets (keys, tokens,
    /// passwords), which are replaced by `[REDACTED:<kind>]`.
    pub(super) content: String,
    /// Where it lives (default: the client's project; `user` for what holds across projects),
    /// `/`-separated (`myproj/retrieval`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) scope: Option<String>,
    /// What kind of memory it is (default `fact`).
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub(super) kind: Option<Kind>,
    /// Where it came from (a file, a tool, a URL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) source: Option<String>,
    /// The agent filing it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) author: Option<String>,
    /// The session filing it (from `session_start`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) session_id: Option<String>,
    /// Free metadata, a JSON object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) metadata: Option<serde_json::Map<String, Value>>,
    /// With `type: invalidation`: the ids (32 hex digits) of the memories this one
    /// replaces. They leave recall while it stands; superseding this one later restores
    /// them (a retraction).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) supersedes: Option<Vec<String>>,
    /// Who it is for: an agent's name (it gets it in its inbox at its next session
    /// start, and no other agent is served it), `all`, or `self` (the author's diary,
    /// served to no one else).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) to: Option<String>,
    /// The id (32 hex digits) of the memory this one answers: it joins that thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) reply_to: Option<String>,
}

/// A memory id.
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
pub(super) struct IdArgs {
    /// The memory id: 32 hex digits, as `remember` and `recall` return it, or a prefix of
    /// at least 4 (the briefing shows 8).
    pub(super) id: String,
}

/// `session_start` arguments (the daemon's `session_start` params).
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
pub(super) struct SessionStartArgs {
    /// Who is starting it (`claude-code`, `codex`, ...; default `mcp`).
    #[serde(default = "default_agent")]
    pub(super) agent: String,
    /// The session's working directory (absolute); the project is the nearest ancestor with `.git`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) cwd: Option<String>,
    /// The project root, when known (absolute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) project_root: Option<String>,
    /// The opening prompt: what the briefing is chosen for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) prompt: Option<String>,
    /// The scope to work in (default: derived from the project root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) scope: Option<String>,
}

pub(super) fn default_agent() -> String {
    "mcp".into()
}

/// What happened in a session.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum EventKind {
    /// The user's prompt.
    Prompt,
    /// A tool call (its command, path or query).
    ToolCall,
    /// A tool's output.
    ToolResult,
    /// The agent's response.
    Response,
}

/// `session_event` arguments (the daemon's `session_event` params).
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
pub(super) struct SessionEventArgs {
    /// The session (from `session_start`).
    pub(super) session_id: String,
    /// `prompt`, `tool_call`, `tool_result` or `response`.
    pub(super) kind: EventKind,
    /// The event's text: the prompt, the tool call's command/path/query, the output.
    pub(super) text: String,
    /// Where it came from (`tool:Bash`, ...; default the kind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) source: Option<String>,
    /// File the text as a memory (default true for prompt, tool_result and response).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) capture: Option<bool>,
    /// Where the session is: `start` (default) or `next` search as usual; `fork` (about
    /// to choose a path), `stuck` and `done` are reminded of the pitfalls or the ways to
    /// verify among what this session was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) moment: Option<MomentArg>,
}

/// Where a session is.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(super) enum MomentArg {
    /// Working (the default).
    Start,
    /// About to choose between paths.
    Fork,
    /// Not getting anywhere.
    Stuck,
    /// Believes the work is done.
    Done,
    /// Moving to the next step.
    Next,
}

/// `session_end` arguments (the daemon's `session_end` params).
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
pub(super) struct SessionEndArgs {
    /// The session (from `session_start`).
    pub(super) session_id: String,
    /// The session's transcript, filed before curation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) transcript: Option<String>,
    /// What the session relied on: for each memory it was given (or found), whether it
    /// used it and, if so, how that went. Used and right raises a memory's weight, used
    /// and wrong lowers it, given but unused lowers it a little.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) manifest: Option<Vec<ManifestArg>>,
    /// How the session went: a reward from -1 to 1, or `success`, `failure`, `unclear`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) outcome: Option<Value>,
}

/// One line of a session's manifest.
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
pub(super) struct ManifestArg {
    /// The memory id, or the 8-digit prefix the briefing shows.
    pub(super) memory_id: String,
    /// True when the session relied on it.
    pub(super) used: bool,
    /// How relying on it went (only with `used: true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) result: Option<ResultArg>,
}

/// What came of relying on a memory.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(super) enum ResultArg {
    /// It was right and it helped.
    Success,
    /// It was wrong or misleading.
    Failure,
    /// Neither.
    Neutral,
}

/// `outcome` arguments (the daemon's `outcome` params).
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
pub(super) struct OutcomeArgs {
    /// The memory id, or the 8-digit prefix the briefing shows.
    pub(super) memory_id: String,
    /// `success` (it was right and helped), `failure` (it was wrong or misleading) or
    /// `neutral`.
    pub(super) result: ResultArg,
    /// The session it was relied on in (from `session_start`): within a session the
    /// latest report on a memory counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) session_id: Option<String>,
    /// Why, in a few words (kept in the memory's log).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) note: Option<String>,
}

/// A session id.
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
pub(super) struct SessionIdArgs {
    /// The session (from `session_start`).
    pub(super) session_id: String,
}

/// An entity for `kg_add`: a new one, or more aliases and a type for one that exists.
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
pub(super) struct EntityArg {
    /// Its name (or any alias it already has). Names compare by their words, ignoring
    /// case and punctuation (`Dr. Ada Lovelace` = `dr ada lovelace`).
    pub(super) name: String,
    /// What it is: `person`, `project`, `team`, `library`, `place`...
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub(super) kind: Option<String>,
    /// Other names it goes by (`Ada` for `Ada Lovelace`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) aliases: Vec<String>,
}

/// A fact for `kg_add`: `subject predicate object` (or `literal`), with when it holds.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(super) struct FactArg {
    /// The subject entity's name or alias (created when new).
    pub(super) subject: String,
    /// The relation, in a few words (`works on`, `lives in`, `depends on`); stored
    /// lowercase with `_` for spaces (`works_on`).
    pub(super) predicate: String,
    /// The object entity's name or alias (created when new). Give this or `literal`.
    #[serde(default)]
    pub(super) object: Option<String>,
    /// A value instead of an entity (`2021`, `blue`, `v2.3`). Give this or `object`.
    #[serde(default)]
    pub(super) literal: Option<String>,
    /// From when it holds (inclusive); open (always) when absent.
    #[serde(default)]
    pub(super) valid_from: Option<TimeArg>,
    /// Until when it holds (exclusive); open (still true) when absent.
    #[serde(default)]
    pub(super) valid_to: Option<TimeArg>,
    /// How sure the source is, 0 to 1 (default 1).
    #[serde(default)]
    pub(super) confidence: Option<f32>,
    /// Ids of the memories it came from (as `remember` returned them); `kg_traverse`
    /// returns their content with each step.
    #[serde(default)]
    pub(super) sources: Option<Vec<String>>,
    /// True when the new value replaces the old: every fact with the same subject and
    /// predicate that holds at `valid_from` (default now) ends there ("moved to Berlin").
    #[serde(default)]
    pub(super) supersede: Option<bool>,
}

impl FactArg {
    /// The daemon's fact, times as milliseconds.
    pub(super) fn to_param(&self, i: usize) -> Result<Value, String> {
        let mut p = json!({ "subject": self.subject, "predicate": self.predicate });
        if let Some(o) = &self.object {
            p["object"] = o.as_str().into();
        }
        if let Some(l) = &self.literal {
            p["literal"] = l.as_str().into();
        }
        if let Some(t) = &self.valid_from {
            p["valid_from"] = t.millis(&format!("facts[{i}].valid_from"))?.into();
        }
        if let Some(t) = &self.valid_to {
            p["valid_to"] = t.millis(&format!("facts[{i}].valid_to"))?.into();
        }
        if let Some(c) = self.confidence {
            p["confidence"] = c.into();
        }
        if let Some(s) = &self.sources {
            p["sources"] = s.clone().into();
        }
        if let Some(s) = self.supersede {
            p["supersede"] = s.into();
        }
        Ok(p)
    }
}

/// `kg_add` arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(super) struct KgAddArgs {
    /// The graph's scope (each scope has its own graph; default: the client's project). Use the
    /// project scope the memories are in (`myproj`).
    #[serde(default)]
    pub(super) scope: Option<String>,
    /// Entities to add, or to give aliases and a type (facts create the entities they
    /// name anyway).
    #[serde(default)]
    pub(super) entities: Option<Vec<EntityArg>>,
    /// Facts to add (at most 1000 entities and facts in one call).
    #[serde(default)]
    pub(super) facts: Option<Vec<FactArg>>,
}

impl KgAddArgs {
    /// The daemon's params, times as milliseconds.
    pub(super) fn to_params(&self) -> Result<Value, String> {
        let mut p = json!({});
        if let Some(s) = &self.scope {
            p["scope"] = s.as_str().into();
        }
        if let Some(es) = &self.entities {
            p["entities"] = params(es)?;
        }
        if let Some(fs) = &self.facts {
            let fs: Result<Vec<Value>, String> = fs.iter().enumerate().map(|(i, f)| f.to_param(i)).collect();
            p["facts"] = Value::Array(fs?);
        }
        Ok(p)
    }
}

/// `kg_invalidate` arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(super) struct KgInvalidateArgs {
    /// The fact's id (`id` of a fact from `kg_add`, `kg_query` or `kg_timeline`).
    pub(super) fact: i64,
    /// When it stopped holding (default now).
    #[serde(default)]
    pub(super) at: Option<TimeArg>,
    /// Why, kept with the invalidation.
    #[serde(default)]
    pub(super) reason: Option<String>,
}

impl KgInvalidateArgs {
    /// The daemon's params, times as milliseconds.
    pub(super) fn to_params(&self) -> Result<Value, String> {
        let mut p = json!({ "fact": self.fact });
        if let Some(t) = &self.at {
            p["at"] = t.millis("at")?.into();
        }
        if let Some(r) = &self.reason {
            p["reason"] = r.as_str().into();
        }
        Ok(p)
    }
}

/// `kg_query` arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(super) struct KgQueryArgs {
    /// The entity's name or any alias (case and punctuation ignored).
    pub(super) entity: String,
    /// The graph's scope (default: the client's project).
    #[serde(default)]
    pub(super) scope: Option<String>,
    /// The moment asked about (default now): only facts valid then.
    #[serde(default)]
    pub(super) as_of: Option<TimeArg>,
}

impl KgQueryArgs {
    /// The daemon's params, times as milliseconds.
    pub(super) fn to_params(&self) -> Result<Value, String> {
        let mut p = json!({ "entity": self.entity });
        if let Some(s) = &self.scope {
            p["scope"] = s.as_str().into();
        }
        if let Some(t) = &self.as_of {
            p["as_of"] = t.millis("as_of")?.into();
        }
        Ok(p)
    }
}

/// `kg_timeline` arguments.
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
pub(super) struct KgTimelineArgs {
    /// The entity's name or any alias (case and punctuation ignored).
    pub(super) entity: String,
    /// The graph's scope (default: the client's project).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) scope: Option<String>,
}

/// `kg_traverse` arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(super) struct KgTraverseArgs {
    /// The entity to start from (name or alias).
    pub(super) start: String,
    /// The graph's scope (default: the client's project).
    #[serde(default)]
    pub(super) scope: Option<String>,
    /// Hops out (default 2, at most 4).
    #[serde(default)]
    pub(super) max_hops: Option<usize>,
    /// Only facts valid at this moment (default now).
    #[serde(default)]
    pub(super) as_of: Option<TimeArg>,
    /// Only these relations (default all), e.g. `["works on", "depends on"]`.
    #[serde(default)]
    pub(super) predicates: Option<Vec<String>>,
    /// At most this many paths (default 100, at most 1000).
    #[serde(default)]
    pub(super) limit: Option<usize>,
    /// How many memories that mention each entity reached to return, newest first
    /// (default 3, at most 20; 0 for none).
    #[serde(default)]
    pub(super) memories_per_node: Option<usize>,
}

impl KgTraverseArgs {
    /// The daemon's params, times as milliseconds.
    pub(super) fn to_params(&self) -> Result<Value, String> {
        let mut p = json!({ "start": self.start });
        if let Some(s) = &self.scope {
            p["scope"] = s.as_str().into();
        }
        if let Some(h) = self.max_hops {
            p["max_hops"] = h.into();
        }
        if let Some(t) = &self.as_of {
            p["as_of"] = t.millis("as_of")?.into();
        }
        if let Some(ps) = &self.predicates {
            p["predicates"] = ps.clone().into();
        }
        if let Some(l) = self.limit {
            p["limit"] = l.into();
        }
        if let Some(n) = self.memories_per_node {
            p["memories_per_node"] = n.into();
        }
        Ok(p)
    }
}

/// `kg_stats` arguments.
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
pub(super) struct KgStatsArgs {
    /// One scope's graph (default: all of them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) scope: Option<String>,
}

/// `guard` arguments.
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
pub(super) struct GuardArgs {
    /// The memory the agent would answer (id or 8-digit prefix).
    pub(super) memory_id: String,
    /// The agent that would answer (its name).
    pub(super) agent: String,
}

/// `release` arguments.
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
pub(super) struct ReleaseArgs {
    /// Any memory of the held thread (id or 8-digit prefix).
    pub(super) thread: String,
}

/// `review` arguments.
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
pub(super) struct ReviewArgs {
    /// The files a change touches (paths).
    pub(super) files: Vec<String>,
    /// Only this scope (default: every scope).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) scope: Option<String>,
}

/// `get_advice` arguments.
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
pub(super) struct GetAdviceArgs {
    /// The task you are about to do, in a sentence or two.
    pub(super) task: String,
    /// Your session's id (from `session_start`): a note is given once per session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) session_id: Option<String>,
    /// Where you are: `start` (default) or `next` to be given advice for the task;
    /// `fork` or `stuck` to re-read the Pitfalls of the advice you were given, `done` its
    /// Pitfalls and Steps (to check your work against them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) moment: Option<String>,
    /// The scope whose advice to use (default: the session's, else the project's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) scope: Option<String>,
    /// Also the skills (procedures compiled from the project's documents) linked to the
    /// advice, in full.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) skills: Option<bool>,
    /// `notes` (default) or `checklist` (steps and pitfalls as `- [ ]` lines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) format: Option<String>,
    /// The most characters of advice to give (at least 500).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) max_chars: Option<usize>,
    /// False: only skills compiled from the project's documents, no learned notes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) notes: Option<bool>,
}

//! The messages: JSON-RPC 2.0 envelopes, Amber's methods, their params and results, and
//! the error codes. `docs/PROTOCOL.md` is the prose version of this file.

use amber_core::{Memory, MemoryId, Scope};
use serde::{Deserialize, Serialize};
use serde_json::Value;

mod advice;
mod browse;
mod compile;
mod doctor;
mod graph;
mod ingest;
mod methods;
mod model;
mod portable;
mod recall;
mod remember;
mod runs;
mod session;
mod standing;
mod threads;
mod ui;
pub use advice::{
    AdviceLearnParams, AdviceLearnResult, AdviceListParams, AdviceListResult, AdviceShowParams,
    AdviceShowResult, Answer, GetAdviceParams, GetAdviceResult, JudgeRunsParams, JudgeRunsResult,
    JudgementShown, JudgementsParams, JudgementsResult, NoteVerdictParams, NoteVerdictResult, NoteWritten,
    SituationListed,
};
pub use browse::{
    DEFAULT_FILES, DEFAULT_PAGE, DocumentFile, DocumentParams, DocumentResult, DocumentSection,
    DocumentsParams, DocumentsResult, FIRST_LINE_CHARS, MAX_FILES, MAX_PAGE, MAX_SECTIONS, MemoriesParams,
    MemoriesResult, MemoryMoveParams, MemorySummary, SECTION_OPENING_CHARS, first_line,
};
pub use compile::{CompileParams, CompileResult, SkillWritten};
pub use doctor::{Check, DoctorParams, DoctorResult, Health};
pub use graph::{
    KgAddParams, KgAddResult, KgEntitiesParams, KgEntitiesResult, KgEntityCount, KgEntityParams,
    KgFactResult, KgFactsResult, KgInvalidateParams, KgNode, KgStatsParams, KgStatsResult, KgTraverseParams,
    KgTraverseResult, MAX_KG_BATCH,
};
pub use ingest::{
    IndexedParams, IndexedResult, IngestParams, IngestResult, IngestStatus, IngestedFile, MAX_INDEXED_RANGES,
    MAX_INGEST_FILES, SourcesStatus,
};
pub use methods::{Access, METHODS, McpSet, Method, MethodDoors, MethodSpec, NoParams, method};
pub use model::{ModelMigration, ModelUseParams, ModelUseResult};
pub use portable::{
    BackupParams, BackupStats, ExportPage, ExportParams, ImportParams, ImportTally, MAX_PORTABLE_RECORDS,
    Skipped,
};
pub use recall::{DisputedHit, RecallParams, RecallResult};
pub use remember::{RememberBatchParams, RememberBatchResult, RememberParams, RememberResult};
pub use runs::{
    LeadHit, MAX_RUN_BATCH, MAX_RUN_BATCH_BYTES, ReviewMemory, ReviewParams, ReviewResult, ReviewRun,
    RewardEntry, RunRecordParams, RunRecordResult, RunRecorded, RunRewardParams, RunRewardResult,
    RunShowParams, RunShowResult, RunsParams, RunsResult,
};
pub use session::{
    LiftParams, LiftResult, Reminder, SessionCheckpointParams, SessionCheckpointResult, SessionEndParams,
    SessionEventParams, SessionEventResult, SessionOutcome, SessionResult, SessionShowParams,
    SessionStartParams, SessionStartResult,
};
pub use standing::{
    ArchivedParams, ArchivedResult, AuditParams, AuditResult, ManifestEntry, ManifestResult, OutcomeParams,
    OutcomesParams, OutcomesResult, PersonAction, SetTrustParams, StandingResult, UnbackedClaim, Unreported,
};
pub use threads::{
    GuardParams, GuardResult, Inbox, InboxItem, ReleaseParams, ReleaseResult, ThreadParams, ThreadResult,
};
pub use ui::{SessionSummary, SessionsParams, SessionsResult, UiStartParams, UiStartResult};

/// The protocol version. A client that says another major version in `hello` is refused
/// with [`ErrorKind::UnsupportedProtocol`]. Bumped when a method changes incompatibly;
/// adding methods or optional fields does not bump it.
pub const PROTOCOL_VERSION: u32 = 1;

/// The default longest request line, in bytes (4 MiB), not counting the newline.
pub const DEFAULT_MAX_FRAME: usize = 4 * 1024 * 1024;

/// Most memories in one `remember_batch`.
pub const MAX_BATCH: usize = 1000;

/// A request as it arrives: loosely typed, so that every defect gets its own error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// Must be `"2.0"`.
    pub jsonrpc: String,
    /// A number or string chosen by the client, echoed in the response. Absent means a
    /// notification: it runs, and no response is sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Value>,
    /// The method name.
    pub method: String,
    /// The params: an object, or absent.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub params: Value,
}

impl Request {
    /// A request with an id.
    pub fn new(id: u64, method: &str, params: Value) -> Request {
        Request { jsonrpc: "2.0".into(), id: Some(Value::from(id)), method: method.into(), params }
    }
}

/// A response: exactly one of `result` and `error`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    /// Always `"2.0"`.
    pub jsonrpc: String,
    /// The request's id; null when the request could not be read far enough to know it.
    pub id: Value,
    /// The result, on success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The error, on failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
}

impl Response {
    /// A success.
    pub fn ok(id: Value, result: Value) -> Response {
        Response { jsonrpc: "2.0".into(), id, result: Some(result), error: None }
    }

    /// A failure.
    pub fn err(id: Value, error: ErrorObject) -> Response {
        Response { jsonrpc: "2.0".into(), id, result: None, error: Some(error) }
    }

    /// The response as one line, newline included.
    pub fn to_line(&self) -> Vec<u8> {
        let mut v = serde_json::to_vec(self).unwrap_or_else(|_| {
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error","data":{"kind":"internal"}}}"#.to_vec()
        });
        v.push(b'\n');
        v
    }
}

/// A JSON-RPC error object. `data.kind` holds Amber's stable snake_case code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The JSON-RPC numeric code.
    pub code: i64,
    /// A sentence for people; may change between versions.
    pub message: String,
    /// `{"kind": "<snake_case code>", ...}`.
    #[serde(default)]
    pub data: Value,
}

impl ErrorObject {
    /// An error of a kind with a message.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> ErrorObject {
        ErrorObject {
            code: kind.code(),
            message: message.into(),
            data: serde_json::json!({ "kind": kind.as_str() }),
        }
    }

    /// The snake_case kind, when the server sent a known one.
    pub fn kind(&self) -> Option<ErrorKind> {
        self.data.get("kind").and_then(Value::as_str).and_then(ErrorKind::parse)
    }
}

macro_rules! error_kinds {
    ($($(#[$doc:meta])* $variant:ident = $name:literal, $code:literal;)*) => {
        /// Amber's error codes: stable snake_case names, each with a JSON-RPC number.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ErrorKind {
            $($(#[$doc])* $variant,)*
        }

        impl ErrorKind {
            /// Every kind, for documentation and tests.
            pub const ALL: &'static [ErrorKind] = &[$(ErrorKind::$variant,)*];

            /// The stable snake_case name sent as `error.data.kind`.
            pub fn as_str(self) -> &'static str {
                match self { $(ErrorKind::$variant => $name,)* }
            }

            /// The JSON-RPC `error.code`.
            pub fn code(self) -> i64 {
                match self { $(ErrorKind::$variant => $code,)* }
            }

            /// The kind with this name.
            pub fn parse(s: &str) -> Option<ErrorKind> {
                match s { $($name => Some(ErrorKind::$variant),)* _ => None }
            }
        }
    };
}

error_kinds! {
    /// The line is not JSON.
    ParseError = "parse_error", -32700;
    /// The line is not valid UTF-8.
    InvalidUtf8 = "invalid_utf8", -32700;
    /// The JSON is not a JSON-RPC 2.0 request.
    InvalidRequest = "invalid_request", -32600;
    /// No such method.
    MethodNotFound = "method_not_found", -32601;
    /// The params are missing, of the wrong type or refused by validation.
    InvalidParams = "invalid_params", -32602;
    /// Something failed inside the daemon; details are in its log, not on the wire.
    Internal = "internal", -32603;
    /// The line is longer than the frame limit.
    FrameTooLarge = "frame_too_large", -32001;
    /// The write queue is full: retry later.
    Busy = "busy", -32002;
    /// No memory with that id.
    NotFound = "not_found", -32003;
    /// The embedding model or runtime is missing or broken (run scripts/setup.sh).
    ModelUnavailable = "model_unavailable", -32004;
    /// The client speaks another protocol version.
    UnsupportedProtocol = "unsupported_protocol", -32005;
    /// The daemon is shutting down and takes no new work.
    ShuttingDown = "shutting_down", -32006;
    /// `purge` of a memory that was not forgotten first.
    NotForgotten = "not_forgotten", -32007;
    /// The disk is full: the write was not made, nothing was lost.
    StorageFull = "storage_full", -32008;
    /// The store failed (I/O error, corruption); details are in the daemon's log.
    StorageError = "storage_error", -32009;
    /// Too many connections: the daemon refused this one.
    TooManyConnections = "too_many_connections", -32010;
    /// The request waited too long (e.g. for indexing to catch up).
    Timeout = "timeout", -32011;
    /// No live session with that id (never started, or already ended).
    SessionNotFound = "session_not_found", -32012;
    /// `kg_invalidate` of a fact that does not exist.
    FactNotFound = "fact_not_found", -32013;
    /// `unarchive` of a memory that an invalidation supersedes (supersede or forget the
    /// invalidation instead).
    Superseded = "superseded", -32014;
    /// An agent passed its daily limit of runs or rewards (`[runs]` in the config).
    RateLimited = "rate_limited", -32015;
    /// The caller may not do this (e.g. reward a run another agent recorded).
    NotPermitted = "not_permitted", -32016;
    /// A method that needs a model (advice, the judge of runs) with none configured
    /// (`[learn]` in the config).
    NoModel = "no_model", -32017;
    /// The configured model failed: an HTTP error, a timeout, or a reply that is not
    /// what was asked for (the message says which).
    ModelFailed = "model_failed", -32018;
    /// The team database (PostgreSQL, `[team]` in the config) cannot be reached: nothing
    /// was written to the team scopes; local scopes keep working; the daemon reconnects
    /// on its own.
    TeamUnavailable = "team_unavailable", -32019;
}

/// `hello` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HelloParams {
    /// Who is calling, for the log ("claude-code", "amber-cli").
    #[serde(default)]
    pub client: Option<String>,
    /// The protocol version the client speaks.
    #[serde(default)]
    pub protocol_version: Option<u32>,
}

/// `hello` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HelloResult {
    /// `"amberd"`.
    pub server: String,
    /// The daemon's version.
    pub version: String,
    /// [`PROTOCOL_VERSION`].
    pub protocol_version: u32,
    /// The methods this daemon serves.
    pub methods: Vec<String>,
    /// The embedding model id.
    pub model: String,
    /// Every error kind this daemon may answer, with its code: a client checks its own
    /// table against it.
    #[serde(default)]
    pub error_kinds: Vec<ErrorKindEntry>,
    /// Every method with its doors (whether it writes, its MCP tool set, its `amber`
    /// command, whether the Python client has it): the registry, for a client to check
    /// itself against.
    #[serde(default)]
    pub method_doors: Vec<MethodDoors>,
    /// The data directory whose store this daemon serves (absolute): a client that names
    /// another refuses to go on (its writes would land in this one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_dir: Option<std::path::PathBuf>,
}

/// An error kind and its JSON-RPC code, as `hello` lists them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorKindEntry {
    /// The stable snake_case name (`error.data.kind`).
    pub kind: String,
    /// The JSON-RPC `error.code`.
    pub code: i64,
}

/// `agent_register` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentRegisterParams {
    /// The agent's name.
    pub name: String,
}

/// `agent_register` result: the token, given this once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentRegisterResult {
    /// The agent's name.
    pub name: String,
    /// The token its sessions give (`agent_token`).
    pub token: String,
}

/// `agent_restore` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentRestoreResult {
    /// The agent's name.
    pub name: String,
    /// When the token it restored was retired (by the registration it undoes).
    pub retired_at: amber_core::Millis,
}

/// `get` and `forget` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdParams {
    /// The memory id.
    pub id: MemoryId,
}

/// `get` and `forget` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryResult {
    /// The memory (with `forgotten_at` when it is forgotten).
    pub memory: Memory,
}

/// `purge` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PurgeParams {
    /// The memory id (a forgotten memory's).
    pub id: MemoryId,
    /// Purge at once even while an agent session is live: only for a caller at a
    /// terminal in its own lineage (not detached).
    #[serde(default)]
    pub now: bool,
}

/// `purge` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PurgeResult {
    /// The id.
    pub id: MemoryId,
    /// True when its content is deleted now; false when the purge is due later
    /// (`due_at`): asked while an agent session was live, it waits out a grace period in
    /// which `unforget` still brings the memory back. A purge that could do nothing is an
    /// error.
    pub purged: bool,
    /// When a deferred purge deletes the content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due_at: Option<amber_core::Millis>,
}

/// `identity` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdentityParams {
    /// The session's working directory (absolute); the project root is found from it.
    pub cwd: std::path::PathBuf,
    /// The budget in tokens (default: the config's, 800).
    #[serde(default)]
    pub budget_tokens: Option<usize>,
}

/// `identity` result.
pub type IdentityResult = amber_tiers::identity::Identity;

/// `capture` params: a memory to file from a running session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaptureParams {
    /// The captured text (a tool output, a turn).
    pub content: String,
    /// The project scope to file it in.
    pub scope: Scope,
    /// Where it came from (`tool:bash`, `turn:user`, a path).
    #[serde(default)]
    pub source: Option<String>,
    /// The session capturing it.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The agent capturing it.
    #[serde(default)]
    pub author: Option<String>,
    /// The memory type (default `event`).
    #[serde(default, rename = "type")]
    pub kind: Option<amber_core::MemoryType>,
}

/// `capture` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaptureResult {
    /// True when it was filed.
    pub filed: bool,
    /// Why not (`too_short`, `too_long`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<amber_tiers::capture::SkipReason>,
    /// The memory, when filed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<RememberResult>,
    /// Secrets replaced by `[REDACTED:<kind>]` before storing.
    pub redacted: usize,
}

/// `reindex` and `shutdown` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OkResult {
    /// Always true.
    pub ok: bool,
}

/// `status` result: the daemon's and the engine's state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatusResult {
    /// [`PROTOCOL_VERSION`].
    pub protocol_version: u32,
    /// The daemon's version.
    pub version: String,
    /// Its process id.
    pub pid: u32,
    /// Seconds since it started.
    pub uptime_seconds: f64,
    /// The socket it listens on.
    pub socket: String,
    /// Connections open now.
    pub connections: usize,
    /// Writes waiting in the queue.
    pub queue_depth: usize,
    /// The engine's status (counts, model, index health), as the engine reports it.
    pub engine: Value,
    /// Fact extraction from captures since the daemon started; absent when it is off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extract: Option<amber_tiers::extract::ExtractStats>,
    /// The model advice is learned by (`openai:<model>`); absent when none is configured
    /// (then `get_advice` answers `no_model` and the MCP server hides the tool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learn: Option<String>,
    /// Team memory on PostgreSQL; absent when `[team]` is not configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team: Option<TeamStatus>,
    /// The `[sources]` folders kept in step; absent when none is configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sources: Option<SourcesStatus>,
    /// A migration to another embedding model (`model_use`), running or last run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_migration: Option<ModelMigration>,
}

/// The team database as a node sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeamStatus {
    /// The database (its URL, never with a password).
    pub location: String,
    /// The team scope prefixes; every other scope stays on this machine.
    pub scopes: Vec<String>,
    /// True when the team store is open and its last call reached the database.
    pub connected: bool,
    /// Why it is not, and for how many seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trouble: Option<String>,
    /// Seconds the trouble has lasted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trouble_seconds: Option<f64>,
    /// The team engine's status (counts, index health), when open and reachable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<Value>,
}

/// `get` params: a whole id, or a prefix of one (at least 4 hex digits) naming exactly
/// one memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GetParams {
    /// The id or its prefix.
    pub id: String,
    /// The session reading it: an agent reads another agent's mail or diary only when
    /// its session may (see `recall`); a person reads everything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

/// Shortest id prefix `get` accepts.
pub const MIN_ID_PREFIX: usize = 4;

/// `resolve_scope` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResolveScopeParams {
    /// A working directory (absolute, existing).
    pub cwd: std::path::PathBuf,
}

/// `resolve_scope` result.
pub type ResolveScopeResult = amber_tiers::scope::Resolved;

/// `scopes` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScopesResult {
    /// Every scope holding live memories or with a known project root.
    pub scopes: Vec<ScopeEntry>,
}

/// One scope in [`ScopesResult`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScopeEntry {
    /// The scope.
    pub scope: String,
    /// Live memories filed in it (not below it).
    pub memories: u64,
    /// The project root it stands for, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
}

/// `scope_move` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScopeMoveParams {
    /// The scope whose memories (its own and those below it) move.
    pub from: Scope,
    /// Where they go (the part below `from` is kept).
    pub to: Scope,
}

/// One memory a `scope_move` re-filed (and `memory_move`'s result).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MovedEntry {
    /// Its id before.
    pub old_id: MemoryId,
    /// Its id now (the copy already there, when merged).
    pub new_id: MemoryId,
    /// Its scope now.
    pub scope: Scope,
    /// True when the same content was already in the target scope.
    pub merged: bool,
}

/// `scope_move` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScopeMoveResult {
    /// Memories moved (merged ones included).
    pub moved: usize,
    /// Of those, already in the target scope (the moved copy was forgotten).
    pub merged: usize,
    /// Each one.
    pub memories: Vec<MovedEntry>,
}

/// `links` params.
pub type LinksParams = IdParams;

/// `links` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinksResult {
    /// Links from or to the memory.
    pub links: Vec<amber_core::Link>,
}

/// For `skip_serializing_if`: a count left at its default.
pub(crate) fn is_zero(n: &usize) -> bool {
    *n == 0
}

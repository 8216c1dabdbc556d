//! `amber mcp`: an MCP server on standard input and output, a thin bridge to `amberd`.
//!
//! Every tool is one daemon method: its arguments become the method's params, the
//! daemon's result comes back as JSON text, and a daemon error (or a daemon that cannot
//! be reached or started) becomes a tool result with `isError` and the daemon's message.
//! The connection is made on the first tool call, so `initialize` and `tools/list` work
//! without a daemon; a broken connection is dropped and made again on the next call.
//!
//! Adding a tool is one method in the `#[tool_router]` block below: an argument struct
//! (its doc comments are the JSON schema's descriptions) and a call to
//! [`Bridge::call`].

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use amber_ipc::protocol::{RecallResult, StatusResult};
use amber_ipc::{Client, ClientError, Config};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode, Implementation,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::daemon;

/// What the server tells a client about itself in `initialize`.
const INSTRUCTIONS: &str = "Amber is a local memory that persists across sessions. \
Use `recall` before answering questions about earlier work, decisions or facts, and \
`remember` to file anything worth knowing next time (verbatim, in a project scope such \
as `myproj` or `myproj/topic`). Results are JSON.";

/// Runs the MCP server on stdin/stdout until the client closes its end.
pub fn run(cfg: Config, config_file: Option<PathBuf>, start: bool) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    rt.block_on(async move {
        let server = AmberMcp::new(Bridge::new(cfg, config_file, start));
        let service = server.serve(rmcp::transport::stdio()).await?;
        service.waiting().await?;
        anyhow::Ok(())
    })?;
    // Tokio's stdin reader may still sit in a blocking read; do not wait for it.
    rt.shutdown_background();
    Ok(())
}

/// The daemon connection, made on first use and remade after a failure.
struct Bridge {
    cfg: Config,
    config_file: Option<PathBuf>,
    start: bool,
    client: Mutex<Option<Client>>,
}

impl Bridge {
    fn new(cfg: Config, config_file: Option<PathBuf>, start: bool) -> Bridge {
        Bridge { cfg, config_file, start, client: Mutex::new(None) }
    }

    /// Calls a daemon method on the blocking pool. `Err` holds the message for the
    /// model: the daemon's error (`kind: message`), or why it cannot be reached.
    async fn call(self: &Arc<Self>, method: &'static str, params: Value) -> Result<Value, String> {
        let this = Arc::clone(self);
        tokio::task::spawn_blocking(move || this.call_blocking(method, params))
            .await
            .unwrap_or_else(|e| Err(format!("the call to amberd failed: {e}")))
    }

    fn call_blocking(&self, method: &str, params: Value) -> Result<Value, String> {
        let mut slot = self.client.lock().unwrap_or_else(|e| e.into_inner());
        // A read is tried once more on a fresh connection when the kept one turns out
        // broken (the daemon was restarted); a write is not, the caller decides.
        let attempts = if is_read(method) { 2 } else { 1 };
        for attempt in 1..=attempts {
            let fresh = slot.is_none();
            let client = match slot.as_mut() {
                Some(c) => c,
                None => slot.insert(self.connect()?),
            };
            match client.call_value(method, params.clone()) {
                Ok(v) => return Ok(v),
                Err(e @ ClientError::Server(_)) => return Err(e.to_string()),
                Err(e) => {
                    // The connection is unusable: drop it so the next call reconnects.
                    *slot = None;
                    if fresh || attempt == attempts {
                        return Err(e.to_string());
                    }
                    tracing::debug!("amberd connection broken ({e}); reconnecting");
                }
            }
        }
        Err("amberd could not be reached".into())
    }

    fn connect(&self) -> Result<Client, String> {
        let mut c = daemon::connect_or_start(&self.cfg, self.config_file.as_deref(), self.start)
            .map_err(|e| format!("{e:#}"))?;
        c.hello("amber-mcp").map_err(|e| format!("amberd refused the handshake: {e}"))?;
        Ok(c)
    }
}

/// Methods that change nothing, so a retry on a new connection is harmless.
fn is_read(method: &str) -> bool {
    matches!(method, "recall" | "get" | "status" | "links" | "session_show")
}

/// A tool's answer: pretty JSON text, or the error message with `isError`.
fn reply(r: Result<Value, String>) -> CallToolResult {
    match r {
        Ok(v) => {
            let text = serde_json::to_string_pretty(&v).unwrap_or_else(|_| v.to_string());
            CallToolResult::success(vec![ContentBlock::text(text)])
        }
        Err(msg) => CallToolResult::error(vec![ContentBlock::text(msg)]),
    }
}

/// A tool's arguments as the daemon method's params (absent options left out).
fn params<T: Serialize>(args: &T) -> Result<Value, String> {
    serde_json::to_value(args).map_err(|e| format!("arguments do not serialize: {e}"))
}

/// Milliseconds since the epoch as an RFC 3339 UTC time.
fn iso(ms: i64) -> Value {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| Value::String(t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)))
        .unwrap_or(Value::from(ms))
}

/// A point in time: milliseconds since the epoch, or an RFC 3339 time or `YYYY-MM-DD` date.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
enum TimeArg {
    /// Milliseconds since the Unix epoch.
    Millis(i64),
    /// An RFC 3339 time (`2026-05-01T12:00:00Z`) or a date (`2026-05-01`, UTC midnight).
    Text(String),
}

impl TimeArg {
    fn millis(&self, name: &str) -> Result<i64, String> {
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
enum Mode {
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
enum Kind {
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

/// `recall` arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct RecallArgs {
    /// What to look for, in plain words (identifiers, paths and error codes are matched exactly too).
    query: String,
    /// Only this scope and the scopes under it (`myproj` also searches `myproj/retrieval`).
    #[serde(default)]
    scope: Option<String>,
    /// How many hits (default 10, at most 1000).
    #[serde(default)]
    k: Option<usize>,
    /// Only memories from this time on.
    #[serde(default)]
    since: Option<TimeArg>,
    /// Only memories up to this time.
    #[serde(default)]
    until: Option<TimeArg>,
    /// `hybrid` (default), `bm25` or `vector`.
    #[serde(default)]
    mode: Option<Mode>,
    /// A live session (from `session_start`): the answer then also lists the hits this
    /// session was already given.
    #[serde(default)]
    session_id: Option<String>,
}

/// One `recall` hit as the model sees it (in this order, the content last).
#[derive(Serialize)]
struct HitOut<'a> {
    rank: usize,
    id: &'a str,
    scope: &'a str,
    #[serde(rename = "type")]
    kind: &'a str,
    /// The reciprocal-rank-fused score that ordered the hits.
    score: f32,
    created_at: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    event_time: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<&'a str>,
    content: &'a str,
}

/// `remember` arguments (the daemon's `remember` params).
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
struct RememberArgs {
    /// The text to remember; it is stored exactly as given.
    content: String,
    /// Where it lives: a project, then optional topics, `/`-separated (`myproj/retrieval`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    scope: Option<String>,
    /// What kind of memory it is (default `fact`).
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<Kind>,
    /// Where it came from (a file, a tool, a URL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    source: Option<String>,
    /// The agent filing it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    author: Option<String>,
    /// The session filing it (from `session_start`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    session_id: Option<String>,
    /// Free metadata, a JSON object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    metadata: Option<serde_json::Map<String, Value>>,
}

/// A memory id.
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
struct IdArgs {
    /// The memory id: 32 hex digits, as `remember` and `recall` return it.
    id: String,
}

/// `session_start` arguments (the daemon's `session_start` params).
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
struct SessionStartArgs {
    /// Who is starting it (`claude-code`, `codex`, ...; default `mcp`).
    #[serde(default = "default_agent")]
    agent: String,
    /// The session's working directory (absolute); the project is the nearest ancestor with `.git`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cwd: Option<String>,
    /// The project root, when known (absolute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    project_root: Option<String>,
    /// The opening prompt: what the briefing is chosen for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    prompt: Option<String>,
    /// The scope to work in (default: derived from the project root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    scope: Option<String>,
}

fn default_agent() -> String {
    "mcp".into()
}

/// What happened in a session.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum EventKind {
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
struct SessionEventArgs {
    /// The session (from `session_start`).
    session_id: String,
    /// `prompt`, `tool_call`, `tool_result` or `response`.
    kind: EventKind,
    /// The event's text: the prompt, the tool call's command/path/query, the output.
    text: String,
    /// Where it came from (`tool:Bash`, ...; default the kind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    source: Option<String>,
    /// File the text as a memory (default true for prompt, tool_result and response).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    capture: Option<bool>,
}

/// `session_end` arguments (the daemon's `session_end` params).
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
struct SessionEndArgs {
    /// The session (from `session_start`).
    session_id: String,
    /// The session's transcript, filed before curation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    transcript: Option<String>,
}

/// A session id.
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
struct SessionIdArgs {
    /// The session (from `session_start`).
    session_id: String,
}

/// The MCP server: the tools, each a call to the daemon.
#[derive(Clone)]
pub struct AmberMcp {
    bridge: Arc<Bridge>,
    tool_router: ToolRouter<Self>,
}

impl AmberMcp {
    fn new(bridge: Bridge) -> AmberMcp {
        AmberMcp { bridge: Arc::new(bridge), tool_router: Self::tool_router() }
    }

    /// Calls a method whose tool arguments are its params.
    async fn forward<T: Serialize>(&self, method: &'static str, args: &T) -> CallToolResult {
        match params(args) {
            Ok(p) => reply(self.bridge.call(method, p).await),
            Err(e) => reply(Err(e)),
        }
    }

    async fn recall_hits(&self, a: RecallArgs) -> Result<Value, String> {
        let mut p = json!({ "text": a.query });
        if let Some(s) = a.scope {
            p["scope"] = s.into();
        }
        if let Some(k) = a.k {
            p["k"] = k.into();
        }
        if let Some(t) = &a.since {
            p["since"] = t.millis("since")?.into();
        }
        if let Some(t) = &a.until {
            p["until"] = t.millis("until")?.into();
        }
        if let Some(m) = a.mode {
            p["mode"] = params(&m)?;
        }
        if let Some(s) = a.session_id {
            p["session_id"] = s.into();
        }
        let r: RecallResult = serde_json::from_value(self.bridge.call("recall", p).await?)
            .map_err(|e| format!("unexpected recall result from amberd: {e}"))?;
        let hits: Vec<HitOut> = r
            .hits
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let m = &h.memory;
                HitOut {
                    rank: i + 1,
                    id: m.id.as_str(),
                    scope: m.scope.as_str(),
                    kind: m.kind.as_str(),
                    score: h.evidence.fused,
                    created_at: iso(m.created_at),
                    event_time: m.event_time.map(iso),
                    source: m.source.as_deref(),
                    content: &m.content,
                }
            })
            .collect();
        let mut out = json!({ "hits": hits, "fresh": r.fresh });
        if !r.given_earlier.is_empty() {
            out["given_earlier"] = serde_json::to_value(&r.given_earlier).unwrap_or_default();
        }
        Ok(out)
    }
}

#[tool_router]
impl AmberMcp {
    /// Search memories (hybrid keyword + meaning search).
    #[tool(
        description = "Search Amber's memories by hybrid BM25 + embedding retrieval. Returns the best \
                       hits first, each with its id, scope, type, fused score and verbatim content.",
        annotations(title = "Recall (search memories)", read_only_hint = true, open_world_hint = false)
    )]
    async fn recall(&self, Parameters(a): Parameters<RecallArgs>) -> CallToolResult {
        reply(self.recall_hits(a).await)
    }

    /// File a memory.
    #[tool(
        description = "Remember a text verbatim in a scope. The same text in the same scope is stored \
                       once and keeps its id. Returns the id and whether it was new.",
        annotations(
            title = "Remember",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn remember(&self, Parameters(a): Parameters<RememberArgs>) -> CallToolResult {
        self.forward("remember", &a).await
    }

    /// One memory by id.
    #[tool(
        description = "Get one memory by id, with all its fields (also when it was forgotten).",
        annotations(title = "Get a memory", read_only_hint = true, open_world_hint = false)
    )]
    async fn get(&self, Parameters(a): Parameters<IdArgs>) -> CallToolResult {
        self.forward("get", &a).await
    }

    /// Forget a memory.
    #[tool(
        description = "Forget a memory: recall stops returning it. Its content stays in the store until \
                       it is purged with the `amber purge` command.",
        annotations(
            title = "Forget a memory",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn forget(&self, Parameters(a): Parameters<IdArgs>) -> CallToolResult {
        self.forward("forget", &a).await
    }

    /// The daemon's status.
    #[tool(
        description = "Amber's status: daemon version and uptime, memory counts, the embedding model \
                       and index health.",
        annotations(title = "Status", read_only_hint = true, open_world_hint = false)
    )]
    async fn status(&self) -> CallToolResult {
        reply(self.bridge.call("status", Value::Null).await.and_then(|v| {
            // Checked against the protocol's shape, then passed on whole.
            serde_json::from_value::<StatusResult>(v.clone())
                .map(|_| v)
                .map_err(|e| format!("unexpected status result from amberd: {e}"))
        }))
    }

    /// A memory's links.
    #[tool(
        description = "The curation links from or to a memory (duplicates, related memories).",
        annotations(title = "Links of a memory", read_only_hint = true, open_world_hint = false)
    )]
    async fn links(&self, Parameters(a): Parameters<IdArgs>) -> CallToolResult {
        self.forward("links", &a).await
    }

    /// Start a session.
    #[tool(
        description = "Start a working session: returns its session_id, the scope, the project's \
                       coordination files (identity) and a briefing of relevant memories for the prompt.",
        annotations(
            title = "Start a session",
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    async fn session_start(&self, Parameters(a): Parameters<SessionStartArgs>) -> CallToolResult {
        self.forward("session_start", &a).await
    }

    /// Report a session event.
    #[tool(
        description = "Report one event of a live session (prompt, tool_call, tool_result, response). \
                       Returns whether Amber interjects with a memory now, and why; captures the text \
                       as a memory unless capture is false.",
        annotations(
            title = "Session event",
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    async fn session_event(&self, Parameters(a): Parameters<SessionEventArgs>) -> CallToolResult {
        self.forward("session_event", &a).await
    }

    /// End a session.
    #[tool(
        description = "End a session: files the transcript if given, curates the session's memories and \
                       returns the session's record.",
        annotations(
            title = "End a session",
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    async fn session_end(&self, Parameters(a): Parameters<SessionEndArgs>) -> CallToolResult {
        self.forward("session_end", &a).await
    }

    /// Show a session.
    #[tool(
        description = "A session's record, live or ended: what it was served and why, its events and \
                       what curation did.",
        annotations(title = "Show a session", read_only_hint = true, open_world_hint = false)
    )]
    async fn session_show(&self, Parameters(a): Parameters<SessionIdArgs>) -> CallToolResult {
        self.forward("session_show", &a).await
    }
}

// list_tools and get_tool come from the router; call_tool is ours (argument errors).
#[tool_handler(router = self.tool_router)]
impl ServerHandler for AmberMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("amber", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let known = self.tool_router.has_route(&request.name);
        let tcc = ToolCallContext::new(self, request, context);
        match self.tool_router.call(tcc).await {
            // Arguments that do not fit a known tool's schema: a tool error the model can
            // read and correct, not a protocol error.
            Err(e) if known && e.code == ErrorCode::INVALID_PARAMS => {
                Ok(CallToolResult::error(vec![ContentBlock::text(e.message.to_string())]).into())
            }
            r => r,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_a_description_and_an_object_schema() {
        let tools = AmberMcp::tool_router().list_all();
        let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        names.sort_unstable();
        assert_eq!(
            names,
            [
                "forget",
                "get",
                "links",
                "recall",
                "remember",
                "session_end",
                "session_event",
                "session_show",
                "session_start",
                "status"
            ]
        );
        for t in &tools {
            assert!(t.description.as_deref().is_some_and(|d| !d.is_empty()), "{}", t.name);
            assert_eq!(t.input_schema.get("type").and_then(Value::as_str), Some("object"), "{}", t.name);
        }
        let recall = tools.iter().find(|t| t.name == "recall").unwrap();
        assert_eq!(recall.input_schema["required"], json!(["query"]));
    }

    #[test]
    fn remember_args_are_the_daemons_params() {
        let a: RememberArgs =
            serde_json::from_value(json!({"content": "x", "type": "pattern", "metadata": {"a": 1}})).unwrap();
        let p = params(&a).unwrap();
        assert_eq!(p, json!({"content": "x", "type": "pattern", "metadata": {"a": 1}}));
        let m: amber_core::NewMemory = serde_json::from_value(p).unwrap();
        assert_eq!(m.kind, amber_core::MemoryType::Pattern);
    }

    #[test]
    fn times_are_millis_rfc3339_or_dates() {
        assert_eq!(TimeArg::Millis(5).millis("since"), Ok(5));
        assert_eq!(TimeArg::Text("1970-01-02".into()).millis("since"), Ok(86_400_000));
        assert_eq!(TimeArg::Text("1970-01-01T00:00:01Z".into()).millis("since"), Ok(1000));
        assert!(TimeArg::Text("last week".into()).millis("since").unwrap_err().contains("since"));
    }

    #[test]
    fn an_unreachable_daemon_is_a_tool_error() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = Config {
            data_dir: dir.path().join("data"),
            socket: Some(dir.path().join("none.sock")),
            ..Default::default()
        };
        let bridge = Arc::new(Bridge::new(cfg, None, false));
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let err = rt.block_on(bridge.call("status", Value::Null)).unwrap_err();
        assert!(err.contains("amberd is not running"), "{err}");
        let r = reply(Err(err));
        assert_eq!(r.is_error, Some(true));
    }
}

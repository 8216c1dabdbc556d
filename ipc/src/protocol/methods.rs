//! The method registry: every method the daemon serves, declared once, with its params
//! and result types, whether it changes state, and the doors that expose it.
//!
//! Everything else is generated from it or checked against it:
//! - [`METHODS`] and `hello`'s `methods` and `method_doors` (generated);
//! - the daemon's dispatch: an exhaustive `match` on [`Method`], each arm handing its
//!   handler the declared params type and taking back the declared result type (a
//!   method without a handler, or a handler taking other params or answering another
//!   type, does not compile);
//! - the typed clients: `Client::send::<method::Recall>(&params)` takes and returns the
//!   declared types, and the named wrappers (`Client::recall`) are built on it;
//! - the MCP tools and their two sets (`cli/src/mcp/tests.rs`: names, sets and
//!   read-only hints against [`Method::mcp`] and [`Method::access`]), and what each tool
//!   sends, every argument given, against the declared params (`cli/src/mcp/wire_tests.rs`,
//!   [`Method::check_params`]);
//! - the CLI (`cli`'s tests: each declared command exists);
//! - the Python client (its tests: its methods equal `hello`'s `method_doors` with
//!   `python`);
//! - `docs/PROTOCOL.md` (a daemon test: every method has its section).
//!
//! Adding a method: one line here, its params and result types, one handler in the
//! daemon's dispatch, one test, and its section in `docs/PROTOCOL.md`.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::*;

/// Whether a method changes state. A write goes through the daemon's writer (or its
/// `BlockingWriter` for the model passes); a read runs on a read connection and changes
/// nothing stored (the live session's served list aside): the daemon refuses a write
/// asked on the task of a method declared a read. The MCP tools' read-only hint says the
/// same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// Changes nothing stored.
    Read,
    /// Changes the store.
    Write,
}

/// Which of `amber mcp`'s tool sets offers a method as a tool of the same name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum McpSet {
    /// Not an MCP tool.
    None,
    /// The default set, what an agent needs in a session (and `--tools all`).
    Agent,
    /// Only `amber mcp --tools all`.
    All,
}

/// A method's doors besides the socket (every method is on the socket), as `hello`
/// lists them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MethodDoors {
    /// The method's name.
    pub name: String,
    /// Whether it changes state.
    pub access: Access,
    /// The MCP tool set that offers it.
    pub mcp: McpSet,
    /// The `amber` command that calls it (`"runs reward"`), if one does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cli: Option<String>,
    /// Whether the Python client has it.
    pub python: bool,
}

/// One method's types: `Client::send::<M>` and the daemon's dispatch take these.
pub trait MethodSpec {
    /// The method.
    const METHOD: Method;
    /// Its params.
    type Params: Serialize + DeserializeOwned;
    /// Its result.
    type Result: Serialize + DeserializeOwned;
}

/// The params of a method that takes none: `null` or `{}` on the wire.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoParams;

impl Serialize for NoParams {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        s.serialize_map(Some(0))?.end()
    }
}

impl<'de> Deserialize<'de> for NoParams {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<NoParams, D::Error> {
        match Value::deserialize(d)? {
            Value::Null => Ok(NoParams),
            Value::Object(o) if o.is_empty() => Ok(NoParams),
            _ => Err(serde::de::Error::custom("takes no params")),
        }
    }
}

macro_rules! registry {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident $name:literal ($params:ty => $result:ty) $access:ident, mcp $mcp:ident, cli $cli:expr, python $py:literal;
    )*) => {
        /// A method of the protocol.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Method {
            $($(#[doc = $doc])* $variant,)*
        }

        /// The names of the methods of protocol version 1, in the registry's order.
        pub const METHODS: &[&str] = &[$($name),*];

        impl Method {
            /// Every method, in the registry's order.
            pub const ALL: &'static [Method] = &[$(Method::$variant),*];

            /// Its name on the wire.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Method::$variant => $name,)*
                }
            }

            /// The method of a name.
            pub fn from_name(name: &str) -> Option<Method> {
                match name {
                    $($name => Some(Method::$variant),)*
                    _ => None,
                }
            }

            /// Whether it changes state.
            pub const fn access(self) -> Access {
                match self {
                    $(Method::$variant => Access::$access,)*
                }
            }

            /// The MCP tool set that offers it.
            pub const fn mcp(self) -> McpSet {
                match self {
                    $(Method::$variant => McpSet::$mcp,)*
                }
            }

            /// The `amber` command that calls it, if one does.
            pub const fn cli(self) -> Option<&'static str> {
                match self {
                    $(Method::$variant => $cli,)*
                }
            }

            /// Whether the Python client has it.
            pub const fn python(self) -> bool {
                match self {
                    $(Method::$variant => $py,)*
                }
            }

            /// Whether `params` are this method's declared params (as the daemon's
            /// dispatch reads them), else why not: for a door that builds them by hand
            /// (the MCP tools) to be checked against the declaration.
            pub fn check_params(self, params: Value) -> Result<(), String> {
                match self {
                    $(Method::$variant => serde_json::from_value::<$params>(params)
                        .map(|_| ())
                        .map_err(|e| format!("{}: {e}", $name)),)*
                }
            }
        }

        /// One type per method, naming its params and result ([`MethodSpec`]).
        pub mod method {
            use super::*;
            $(
                $(#[doc = $doc])*
                #[derive(Debug, Clone, Copy)]
                pub struct $variant;
                impl MethodSpec for $variant {
                    const METHOD: Method = Method::$variant;
                    type Params = $params;
                    type Result = $result;
                }
            )*
        }
    };
}

registry! {
    /// The handshake.
    Hello "hello" (HelloParams => HelloResult) Read, mcp None, cli None, python true;
    /// File a memory.
    Remember "remember" (RememberParams => RememberResult) Write, mcp Agent, cli Some("remember"), python true;
    /// File memories in one transaction.
    RememberBatch "remember_batch" (RememberBatchParams => RememberBatchResult) Write, mcp None, cli None, python true;
    /// Hybrid search.
    Recall "recall" (RecallParams => RecallResult) Read, mcp Agent, cli Some("recall"), python true;
    /// One memory by id or prefix.
    Get "get" (GetParams => MemoryResult) Read, mcp Agent, cli Some("get"), python true;
    /// Forget a memory.
    Forget "forget" (IdParams => MemoryResult) Write, mcp All, cli Some("forget"), python true;
    /// Bring a forgotten memory back (a person's).
    Unforget "unforget" (IdParams => MemoryResult) Write, mcp None, cli Some("unforget"), python true;
    /// Register an agent name and its token.
    AgentRegister "agent_register" (AgentRegisterParams => AgentRegisterResult) Write, mcp None, cli Some("agent register"), python true;
    /// Undoes the last registration of an agent name within a week.
    AgentRestore "agent_restore" (AgentRegisterParams => AgentRestoreResult) Write, mcp None, cli Some("agent restore"), python false;
    /// Delete a forgotten memory's content.
    Purge "purge" (PurgeParams => PurgeResult) Write, mcp None, cli Some("purge"), python true;
    /// Counts, model and index health.
    Status "status" (NoParams => StatusResult) Read, mcp All, cli Some("status"), python true;
    /// Rebuild the indexes from the store.
    Reindex "reindex" (NoParams => OkResult) Write, mcp None, cli Some("reindex"), python true;
    /// Stop the daemon.
    Shutdown "shutdown" (NoParams => OkResult) Write, mcp None, cli Some("daemon stop"), python true;
    /// Tier 0: who the agent works for, and where.
    Identity "identity" (IdentityParams => IdentityResult) Read, mcp None, cli Some("hook"), python true;
    /// File an outside text as a raw capture.
    Capture "capture" (CaptureParams => CaptureResult) Write, mcp None, cli Some("hook"), python true;
    /// Open a session: its briefing.
    SessionStart "session_start" (SessionStartParams => SessionStartResult) Write, mcp All, cli Some("hook"), python true;
    /// A session's event: the gate's interjection.
    SessionEvent "session_event" (SessionEventParams => SessionEventResult) Write, mcp All, cli Some("hook"), python true;
    /// End a session: curation.
    SessionEnd "session_end" (SessionEndParams => SessionResult) Write, mcp All, cli Some("hook"), python true;
    /// A session's record.
    SessionShow "session_show" (SessionShowParams => SessionResult) Read, mcp All, cli Some("session show"), python true;
    /// A memory's links.
    Links "links" (IdParams => LinksResult) Read, mcp All, cli None, python true;
    /// Add entities and facts to the graph.
    KgAdd "kg_add" (KgAddParams => KgAddResult) Write, mcp All, cli None, python true;
    /// End a fact's window.
    KgInvalidate "kg_invalidate" (KgInvalidateParams => KgFactResult) Write, mcp All, cli None, python true;
    /// An entity's facts now (or at a time).
    KgQuery "kg_query" (KgEntityParams => KgFactsResult) Read, mcp All, cli None, python true;
    /// An entity's facts over time.
    KgTimeline "kg_timeline" (KgEntityParams => KgFactsResult) Read, mcp All, cli None, python true;
    /// Walk the graph from an entity.
    KgTraverse "kg_traverse" (KgTraverseParams => KgTraverseResult) Read, mcp All, cli None, python true;
    /// The graph's counts.
    KgStats "kg_stats" (KgStatsParams => KgStatsResult) Read, mcp All, cli None, python true;
    /// A graph's entities, most connected first.
    KgEntities "kg_entities" (KgEntitiesParams => KgEntitiesResult) Read, mcp None, cli None, python false;
    /// The scope a directory files into (a write: it notes the project's root for the scope).
    ResolveScope "resolve_scope" (ResolveScopeParams => ResolveScopeResult) Write, mcp None, cli Some("scope here"), python true;
    /// The scopes with their counts.
    Scopes "scopes" (NoParams => ScopesResult) Read, mcp None, cli Some("scopes"), python true;
    /// Re-file a scope's memories into another.
    ScopeMove "scope_move" (ScopeMoveParams => ScopeMoveResult) Write, mcp None, cli Some("scope move"), python true;
    /// Re-file one memory into another scope (a person's).
    MemoryMove "memory_move" (MemoryMoveParams => MovedEntry) Write, mcp None, cli Some("move"), python false;
    /// A scope's memories, newest first, a page at a time (a person's).
    Memories "memories" (MemoriesParams => MemoriesResult) Read, mcp None, cli Some("list"), python false;
    /// A scope's ingested files, with their sections counted (a person's).
    Documents "documents" (DocumentsParams => DocumentsResult) Read, mcp None, cli None, python false;
    /// One ingested file's sections, in order (a person's).
    Document "document" (DocumentParams => DocumentResult) Read, mcp None, cli None, python false;
    /// A session's checkpoint: the outcome reminder.
    SessionCheckpoint "session_checkpoint" (SessionCheckpointParams => SessionCheckpointResult) Write, mcp None, cli Some("hook"), python true;
    /// Report what came of relying on a memory.
    Outcome "outcome" (OutcomeParams => MemoryResult) Write, mcp Agent, cli Some("outcome"), python true;
    /// A memory's standing and outcome log.
    Outcomes "outcomes" (OutcomesParams => OutcomesResult) Read, mcp None, cli Some("outcomes"), python true;
    /// Change the embedding model: re-embed in the background, switch when complete.
    ModelUse "model_use" (ModelUseParams => ModelUseResult) Write, mcp None, cli Some("model use"), python false;
    /// Set a memory's trust: promote or demote it (a person's).
    SetTrust "set_trust" (SetTrustParams => MemoryResult) Write, mcp None, cli Some("trust"), python false;
    /// Restore an archived memory.
    Unarchive "unarchive" (GetParams => MemoryResult) Write, mcp None, cli Some("unarchive"), python true;
    /// The archive.
    Archived "archived" (ArchivedParams => ArchivedResult) Read, mcp None, cli Some("archived"), python true;
    /// Unbacked claims and unreported servings.
    Audit "audit" (AuditParams => AuditResult) Read, mcp None, cli Some("audit"), python true;
    /// A memory's thread.
    Thread "thread" (ThreadParams => ThreadResult) Read, mcp All, cli Some("thread"), python true;
    /// The loop guard's decision (logged).
    Guard "guard" (GuardParams => GuardResult) Write, mcp All, cli Some("guard"), python true;
    /// Lift a thread's hold.
    Release "release" (ReleaseParams => ReleaseResult) Write, mcp All, cli Some("release"), python true;
    /// Served against held-out sessions' rewards.
    Lift "lift" (LiftParams => LiftResult) Read, mcp None, cli Some("lift"), python true;
    /// Record runs.
    RunRecord "run_record" (RunRecordParams => RunRecordResult) Write, mcp All, cli Some("runs load"), python true;
    /// Reward a run.
    RunReward "run_reward" (RunRewardParams => RunRewardResult) Write, mcp All, cli Some("runs reward"), python true;
    /// The newest runs.
    Runs "runs" (RunsParams => RunsResult) Read, mcp None, cli Some("runs list"), python true;
    /// One run with its rewards.
    RunShow "run_show" (RunShowParams => RunShowResult) Read, mcp None, cli Some("runs show"), python true;
    /// Memories and runs that touched files.
    Review "review" (ReviewParams => ReviewResult) Read, mcp All, cli Some("review"), python true;
    /// Advice for a task, or a moment of it.
    GetAdvice "get_advice" (GetAdviceParams => GetAdviceResult) Write, mcp Agent, cli Some("hook"), python true;
    /// Learn advice from a scope's runs.
    AdviceLearn "advice_learn" (AdviceLearnParams => AdviceLearnResult) Write, mcp None, cli Some("advice learn"), python true;
    /// A situation and its notes.
    AdviceShow "advice_show" (AdviceShowParams => AdviceShowResult) Read, mcp None, cli Some("advice show"), python true;
    /// A scope's situations.
    AdviceList "advice_list" (AdviceListParams => AdviceListResult) Read, mcp None, cli Some("advice list"), python true;
    /// Judge unrewarded runs.
    JudgeRuns "judge_runs" (JudgeRunsParams => JudgeRunsResult) Write, mcp None, cli Some("judgements"), python true;
    /// The person's word on a served note.
    NoteVerdict "note_verdict" (NoteVerdictParams => NoteVerdictResult) Write, mcp None, cli Some("advice verdict"), python false;
    /// The learning loop's health.
    Doctor "doctor" (DoctorParams => DoctorResult) Read, mcp None, cli Some("doctor"), python true;
    /// The judge's verdicts.
    Judgements "judgements" (JudgementsParams => JudgementsResult) Read, mcp None, cli Some("judgements"), python true;
    /// Bring documents in.
    Ingest "ingest" (IngestParams => IngestResult) Write, mcp None, cli Some("ingest"), python true;
    /// How many of the seqs a client filed are not indexed yet; indexes them first.
    Indexed "indexed" (IndexedParams => IndexedResult) Read, mcp None, cli Some("ingest"), python false;
    /// Compile documents into skills.
    Compile "compile" (CompileParams => CompileResult) Write, mcp None, cli Some("compile"), python true;
    /// One page of the export (a person's).
    Export "export" (ExportParams => ExportPage) Read, mcp None, cli Some("export"), python false;
    /// Write export records (a person's).
    Import "import" (ImportParams => ImportTally) Write, mcp None, cli Some("import"), python false;
    /// A consistent copy of the store into a new file (a person's).
    Backup "backup" (BackupParams => BackupStats) Read, mcp None, cli Some("backup"), python false;
    /// The stored session records, newest first (or those served a memory).
    Sessions "sessions" (SessionsParams => SessionsResult) Read, mcp None, cli None, python true;
    /// Start the person's local web view (or give the running one's URL).
    UiStart "ui_start" (UiStartParams => UiStartResult) Write, mcp None, cli Some("ui"), python true;
}

impl Method {
    /// Its doors, as `hello` lists them.
    pub fn doors(self) -> MethodDoors {
        MethodDoors {
            name: self.name().to_string(),
            access: self.access(),
            mcp: self.mcp(),
            cli: self.cli().map(str::to_string),
            python: self.python(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_round_trip() {
        let mut names: Vec<&str> = METHODS.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), METHODS.len(), "a method name is declared twice");
        for m in Method::ALL {
            assert_eq!(Method::from_name(m.name()), Some(*m));
        }
        assert_eq!(Method::from_name("nope"), None);
    }

    #[test]
    fn no_params_is_null_or_an_empty_object_and_nothing_else() {
        assert_eq!(serde_json::from_value::<NoParams>(Value::Null).unwrap(), NoParams);
        assert_eq!(serde_json::from_value::<NoParams>(serde_json::json!({})).unwrap(), NoParams);
        let e = serde_json::from_value::<NoParams>(serde_json::json!({"x": 1})).unwrap_err();
        assert!(e.to_string().contains("takes no params"), "{e}");
        assert_eq!(serde_json::to_value(NoParams).unwrap(), serde_json::json!({}));
    }
}

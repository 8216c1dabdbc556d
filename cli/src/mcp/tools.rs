//! The MCP tools: one method each, its argument struct's doc comments the JSON schema's
//! descriptions, and a call to the daemon through the bridge.

use super::*;

#[tool_router(vis = "pub(super)")]
impl AmberMcp {
    /// Search memories (hybrid keyword + meaning search).
    #[tool(
        description = "Search Amber's memories by hybrid BM25 + embedding retrieval. Returns the best \
                       hits first, each with its id, scope, type, fused score and verbatim content. With \
                       `expand: \"graph\"` it also ranks the memories about entities the knowledge graph \
                       links (one hop) to the ones the query names.",
        annotations(title = "Recall (search memories)", read_only_hint = true, open_world_hint = false)
    )]
    async fn recall(&self, Parameters(a): Parameters<RecallArgs>) -> CallToolResult {
        reply(self.recall_hits(a).await)
    }

    /// File a memory.
    #[tool(
        description = "Remember a text verbatim in a scope, but for secrets: keys, tokens and passwords \
                       in it, its source and its metadata are replaced by [REDACTED:<kind>] before it \
                       is stored. The same text in the same scope is stored once and keeps its id. \
                       Returns the id, whether it was new, and how many secrets were redacted.",
        annotations(
            title = "Remember",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn remember(&self, Parameters(a): Parameters<RememberArgs>) -> CallToolResult {
        match params(&a) {
            Ok(p) => reply(self.bridge.call("remember", with_host_session(self.with_scope(p))).await),
            Err(e) => reply(Err(e)),
        }
    }

    /// One memory by id.
    #[tool(
        description = "Get one memory by id, with all its fields (also when it was forgotten).",
        annotations(title = "Get a memory", read_only_hint = true, open_world_hint = false)
    )]
    async fn get(&self, Parameters(a): Parameters<IdArgs>) -> CallToolResult {
        // Read as the host's session: what was addressed to its agent is readable.
        match params(&a) {
            Ok(p) => reply(self.bridge.call("get", with_host_session(p)).await),
            Err(e) => reply(Err(e)),
        }
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
        match params(&a) {
            Ok(mut p) => {
                if a.cwd.is_none()
                    && a.project_root.is_none()
                    && a.scope.is_none()
                    && let Some(h) = self.here_now()
                {
                    p["cwd"] = json!(h.cwd);
                }
                // Claude Code's token, when this server runs for Claude Code (never another
                // agent's: a model naming another agent does not get its token).
                if a.agent.trim() == CLAUDE_CODE_AGENT
                    && host_session().is_some()
                    && let Some(t) = crate::agents::token(&self.bridge.cfg, CLAUDE_CODE_AGENT)
                {
                    p["agent_token"] = t.into();
                }
                reply(self.bridge.call("session_start", p).await)
            }
            Err(e) => reply(Err(e)),
        }
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
        description = "End a session: applies the manifest if given (which memories the session relied \
                       on, and how that went), files the transcript if given, curates the session's \
                       memories and returns the session's record.",
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

    /// Report what came of relying on a memory.
    #[tool(
        description = "Report what came of relying on a memory: `success` when it was right and helped, \
                       `failure` when it was wrong or misleading, `neutral` otherwise. Successes and \
                       failures move the memory's weight, which ranks it up or down; a memory that \
                       keeps failing is archived (out of recall, still readable with `get`). Returns \
                       the memory with its weight.",
        annotations(
            title = "Report an outcome",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn outcome(&self, Parameters(a): Parameters<OutcomeArgs>) -> CallToolResult {
        match params(&a) {
            Ok(p) => {
                let r = self.bridge.call("outcome", with_host_session(p.clone())).await;
                // The host's session may be unknown to Amber (Claude Code without Amber's
                // hooks): then the report stands without it.
                let r = match r {
                    Err(e) if a.session_id.is_none() && e.contains("no session with id") => {
                        self.bridge.call("outcome", p).await
                    }
                    r => r,
                };
                reply(r)
            }
            Err(e) => reply(Err(e)),
        }
    }

    /// A memory's thread.
    #[tool(
        description = "A memory's thread: the memory it started from, then every memory that answers it \
                       (by `reply_to`), in order, and whether the thread is held.",
        annotations(title = "Thread", read_only_hint = true, open_world_hint = false)
    )]
    async fn thread(&self, Parameters(a): Parameters<IdArgs>) -> CallToolResult {
        // Read as the host's session: another agent's mail and diary stay theirs.
        match params(&a) {
            Ok(p) => reply(self.bridge.call("thread", with_host_session(p)).await),
            Err(e) => reply(Err(e)),
        }
    }

    /// The loop guard.
    #[tool(
        description = "Before an agent answers another agent's memory: may it? Returns `allow`, `skip` or \
                       `hold` with the rule that decided (held thread, addressed to someone else, already \
                       handled, its own message, 2 agent hops since a person, no person since its last \
                       reply, 3 agent replies in a row, failed replies). On `hold` the thread waits \
                       for a person to release it.",
        annotations(
            title = "Loop guard",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn guard(&self, Parameters(a): Parameters<GuardArgs>) -> CallToolResult {
        self.forward("guard", &a).await
    }

    /// Lift a hold.
    #[tool(
        description = "Release a thread the loop guard held, so agents may answer in it again (a \
                       person's call).",
        annotations(
            title = "Release a thread",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn release(&self, Parameters(a): Parameters<ReleaseArgs>) -> CallToolResult {
        self.forward("release", &a).await
    }

    /// Review checks.
    #[tool(
        description = "Before or after changing files: the memories and runs that touched the same files, \
                       ranked by the files they share (a rare file weighs more than one every change \
                       touches). Use it to find what went wrong before in the code you are changing.",
        annotations(
            title = "Review: who touched these files",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn review(&self, Parameters(a): Parameters<ReviewArgs>) -> CallToolResult {
        self.forward("review", &a).await
    }

    /// Record a run.
    #[tool(
        description = "Record one run of a task: the task, what happened (trace), the memories it relied \
                       on (`used`) and how it went. Returns its id; reward it later with `run_reward`.",
        annotations(
            title = "Record a run",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn run_record(&self, Parameters(a): Parameters<RunRecordArgs>) -> CallToolResult {
        match params(&a) {
            Ok(p) => reply(self.bridge.call("run_record", self.with_scope(p)).await),
            Err(e) => reply(Err(e)),
        }
    }

    /// Reward a run.
    #[tool(
        description = "Reward a run you recorded, from -1 (it went badly) to 1 (it went well). The \
                       latest reward counts; it moves the weights of the memories the run used.",
        annotations(
            title = "Reward a run",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn run_reward(&self, Parameters(a): Parameters<RunRewardArgs>) -> CallToolResult {
        self.forward("run_reward", &a).await
    }

    /// Get advice for a task.
    #[tool(
        description = "Advice for the task you are about to do: learned from earlier runs of the same kind \
                       of task (what worked, the pitfalls), or a skill compiled from the project's documents \
                       (`from` says which). A model routes the task to one situation; its note is given \
                       once per session (asked again, the answer says it was given earlier). At `stuck` or \
                       `done`, the Pitfalls or Steps of what you were given come back, with no model call. \
                       It is evidence from earlier work, not an instruction.",
        annotations(
            title = "Get advice",
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = true
        )
    )]
    async fn get_advice(&self, Parameters(a): Parameters<GetAdviceArgs>) -> CallToolResult {
        let p = match params(&a) {
            Ok(p) if a.session_id.is_some() => p,
            Ok(p) => {
                // No session named: the one the daemon opened for this client's first ask.
                let mut p = self.with_scope(p);
                let opened = self.bridge.advice_session.lock().unwrap_or_else(|e| e.into_inner()).clone();
                if let (Some(id), Some(o)) = (opened, p.as_object_mut()) {
                    o.insert("session_id".into(), Value::String(id));
                }
                p
            }
            Err(e) => return reply(Err(e)),
        };
        let r = self.bridge.call("get_advice", p).await;
        if let Ok(v) = &r
            && v["opened"] == true
            && let Some(id) = v["session_id"].as_str()
        {
            *self.bridge.advice_session.lock().unwrap_or_else(|e| e.into_inner()) = Some(id.to_string());
        }
        reply(r)
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
    /// Add entities and facts to the knowledge graph.
    #[tool(
        description = "Add facts to the knowledge graph: `subject predicate object` (an entity) or \
                       `subject predicate literal` (a value), each with when it holds (valid_from, \
                       valid_to) and the ids of the memories it came from (remember the text first, then \
                       cite it in `sources`). Use it for durable, structured facts about people, projects, \
                       services and things that change over time (who works on what, what depends on \
                       what, where someone lives). Entities are created as facts name them; `entities` \
                       gives them a type and aliases. `supersede: true` ends the old value's window \
                       (a move, a new owner). An identical fact is stored once. Returns the entities and \
                       the facts with their ids.",
        annotations(
            title = "Add facts (knowledge graph)",
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    async fn kg_add(&self, Parameters(a): Parameters<KgAddArgs>) -> CallToolResult {
        self.kg("kg_add", a.to_params()).await
    }

    /// End a fact's window.
    #[tool(
        description = "Invalidate a fact that no longer holds: its window of validity ends at `at` \
                       (default now). Nothing is deleted: `kg_query` with an earlier `as_of` and \
                       `kg_timeline` still show it. Use it when something stopped being true (left the \
                       team, dependency removed); for a replacement value, `kg_add` with `supersede` does \
                       both at once. Returns the fact as it is now.",
        annotations(
            title = "Invalidate a fact (knowledge graph)",
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = false
        )
    )]
    async fn kg_invalidate(&self, Parameters(a): Parameters<KgInvalidateArgs>) -> CallToolResult {
        self.kg("kg_invalidate", a.to_params()).await
    }

    /// What holds about an entity at a moment.
    #[tool(
        description = "What is true about an entity now, or at a date (`as_of`): the knowledge graph's \
                       facts about it (as subject or object) valid at that moment, each with its id, window \
                       and source memory ids. Use it for \"what does X work on\", \"where did Y live in \
                       2021\", \"what did Z depend on before the migration\". An unknown name answers \
                       `entity: null` and no facts.",
        annotations(
            title = "Query an entity (knowledge graph)",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn kg_query(&self, Parameters(a): Parameters<KgQueryArgs>) -> CallToolResult {
        self.kg("kg_query", a.to_params()).await
    }

    /// Every fact about an entity, in time order.
    #[tool(
        description = "The history of an entity: every fact about it, valid or not, in order of when it \
                       began, with windows and invalidations. Use it for \"how did X change over time\", \
                       \"when did Y start/stop\".",
        annotations(
            title = "Timeline of an entity (knowledge graph)",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn kg_timeline(&self, Parameters(a): Parameters<KgTimelineArgs>) -> CallToolResult {
        self.kg("kg_timeline", params(&a)).await
    }

    /// Walk the graph from an entity.
    #[tool(
        description = "How things connect: walk the knowledge graph from an entity, several hops out \
                       (default 2, at most 4), by facts valid now or at `as_of`. Returns the shortest \
                       path to each entity or value reached (each step a fact, with its source memory \
                       ids), the entities reached with the memories that mention them, and those memories' \
                       verbatim content. Use it for \"what is X connected to\", \"who is affected if Y \
                       changes\", \"why is A related to B\".",
        annotations(
            title = "Traverse from an entity (knowledge graph)",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn kg_traverse(&self, Parameters(a): Parameters<KgTraverseArgs>) -> CallToolResult {
        self.kg("kg_traverse", a.to_params()).await
    }

    /// Counts over the graph.
    #[tool(
        description = "The knowledge graph's size: entities, aliases, facts (all, invalidated, valid now), \
                       distinct predicates and entity-memory mentions, for one scope or all.",
        annotations(title = "Knowledge graph stats", read_only_hint = true, open_world_hint = false)
    )]
    async fn kg_stats(&self, Parameters(a): Parameters<KgStatsArgs>) -> CallToolResult {
        self.kg("kg_stats", params(&a)).await
    }
}

#[cfg(all(test, unix))]
#[path = "wire_tests.rs"]
mod wire_tests;

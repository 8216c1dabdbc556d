//! Sessions in the daemon: `session_start` (identity + briefing), `session_event`
//! (interjection + capture), `session_end` (transcript + curation), `session_show`, and
//! the idle timeout. The decisions themselves are in `amber-tiers`; this module runs the
//! searches and writes around them.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use amber_core::{MemoryType, Scope, now_millis};
use amber_ipc::protocol::{
    ErrorKind, ErrorObject, SessionEndParams, SessionEventParams, SessionEventResult, SessionResult,
    SessionShowParams, SessionStartParams, SessionStartResult,
};
use amber_tiers::interject::{Decision, EventKind, Reason, decide, precheck};
use amber_tiers::redact::redact;
use amber_tiers::scope::project_scope;
use amber_tiers::session::Session;

use crate::live::{Ending, not_found};
use crate::methods::capture::{CapturedFrom, capture_text, note_capture};
pub(crate) use crate::methods::records::persist;
use crate::methods::serve::{MAX_QUERY_CHARS, briefing, candidates, inbox};
use crate::methods::transcript::strip_served;
use crate::peer::Peer;
use crate::rpc::{invalid, read, wait_indexed, write};
use crate::state::Shared;
use crate::writer::{WriteDone, WriteOp};

/// Live sessions from before a restart (stored with no end).
pub(crate) fn resumable(engine: &amber_engine::Engine) -> Vec<Session> {
    match engine.recent_sessions(10_000) {
        Ok(rows) => rows
            .into_iter()
            .filter(|r| r.ended_at.is_none())
            .filter_map(|r| serde_json::from_str::<Session>(&r.record).ok())
            .collect(),
        Err(e) => {
            tracing::warn!(cause = %e, "cannot read stored sessions; none resumed");
            Vec::new()
        }
    }
}

fn absolute_dir(what: &str, p: &Path) -> Result<(), ErrorObject> {
    if p.is_absolute() && p.is_dir() {
        Ok(())
    } else {
        Err(invalid(format!("{what} must be an existing absolute directory: {}", p.display())))
    }
}

/// A stored session (ended, or live before a restart) to continue.
async fn stored(shared: &Arc<Shared>, id: &str) -> Result<Option<Session>, ErrorObject> {
    let id = id.to_string();
    let row = read(shared, move |e| e.get_session(&id)).await?;
    Ok(row.and_then(|r| serde_json::from_str::<Session>(&r.record).ok()))
}

pub(crate) async fn start(
    shared: &Arc<Shared>,
    p: SessionStartParams,
) -> Result<SessionStartResult, ErrorObject> {
    let agent = p.agent.trim().to_string();
    if agent.is_empty() || agent.chars().count() > 64 {
        return Err(invalid("agent must be 1 to 64 characters"));
    }
    amber_core::check_label("agent", &agent, 256).map_err(|e| invalid(e.to_string()))?;
    // A registered name is the agent's only with its token (its inbox, its mail).
    super::agents::check(shared, &agent, p.agent_token.as_deref())?;
    if let Some(k) = &p.key
        && (k.trim().is_empty() || k.chars().count() > 128)
    {
        return Err(invalid("key must be 1 to 128 characters"));
    }
    if let Some(r) = &p.project_root {
        absolute_dir("project_root", r)?;
    }
    if let Some(c) = &p.cwd {
        absolute_dir("cwd", c)?;
    }
    let now = now_millis();
    let root: Option<PathBuf> = match p.project_root.as_deref().or(p.cwd.as_deref()) {
        Some(dir) => crate::methods::scope::resolve(shared, dir).await?.root,
        None => None,
    };
    let scope = p.scope.clone().or_else(|| root.as_deref().map(project_scope)).unwrap_or_default();
    let also: Vec<Scope> = shared.search_also(&scope);
    let project = root
        .as_deref()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| scope.to_string());
    let identity_for = |root: Option<PathBuf>| {
        let cwd = p.cwd.clone();
        let cfg = shared.config.identity.clone();
        async move {
            match root {
                Some(root) => {
                    let cwd = cwd.unwrap_or_else(|| root.clone());
                    Ok::<_, ErrorObject>(Some(
                        crate::rpc::blocking(move || Ok(amber_tiers::identity::assemble(&cwd, &cfg))).await?,
                    ))
                }
                None => Ok(None),
            }
        }
    };

    // A session the client names by its key is continued, not started again.
    let keyed = p.key.as_deref().map(|k| amber_tiers::session::keyed_session_id(&agent, k));
    if let Some(id) = &keyed {
        let existing = match shared.sessions.get(id) {
            Some(s) => Some(s),
            None if shared.sessions.ending(id).is_some() => {
                return Err(ErrorObject::new(
                    ErrorKind::Busy,
                    format!("session {id} is being ended; start it again in a moment"),
                ));
            }
            None => stored(shared, id).await?,
        };
        if let Some(mut session) = existing {
            let was_ended = session.ended_at.is_some();
            session.ended_at = None;
            session.end_reason = None;
            session.last_active = now;
            session.run.on |= p.run == Some(true);
            let rebrief = p.rebrief.unwrap_or(false);
            if rebrief {
                session.context += 1;
            }
            // What was addressed to the agent since comes in any case (once per agent).
            let inbox = inbox(shared, &mut session, now).await?;
            let (identity, briefing) = if rebrief {
                let identity = identity_for(session.project_root.clone()).await?;
                let b = briefing(
                    shared,
                    &mut session,
                    p.prompt.as_deref(),
                    &project,
                    (inbox.tokens, &p.shown),
                    now,
                )
                .await?;
                (identity, b)
            } else {
                (None, amber_tiers::briefing::Briefing::default())
            };
            if was_ended || rebrief || !inbox.items.is_empty() {
                persist(shared, &session).await?;
            }
            tracing::debug!(
                session = %session.id, agent = %session.agent, was_ended, rebrief,
                briefed = briefing.items.len(), "session continued"
            );
            let result = SessionStartResult {
                session_id: session.id.clone(),
                scope: session.scope.clone(),
                project_root: session.project_root.clone(),
                identity,
                inbox,
                briefing,
                resumed: true,
                withheld: session.withheld,
                search: session.scopes(),
            };
            shared.sessions.lock().insert(session.id.clone(), session);
            return Ok(result);
        }
    }

    let id = keyed.clone().unwrap_or_else(|| shared.sessions.new_id());
    let mut session = Session::new(id, agent, root.clone(), scope.clone(), now);
    session.key = p.key.as_ref().map(|k| k.trim().to_string());
    session.also = also;
    session.withheld = amber_tiers::session::held_out(&session.id, shared.config.holdout.share);
    session.run.on = p.run == Some(true);
    if let Some(prompt) = &p.prompt {
        session.run.note_prompt(prompt);
    }
    let identity = identity_for(root.clone()).await?;
    let inbox = inbox(shared, &mut session, now).await?;
    let briefing =
        briefing(shared, &mut session, p.prompt.as_deref(), &project, (inbox.tokens, &p.shown), now).await?;
    persist(shared, &session).await?;
    tracing::info!(
        session = %session.id, agent = %session.agent, scope = %scope,
        briefed = briefing.items.len(), withheld = session.withheld, "session started"
    );
    let result = SessionStartResult {
        session_id: session.id.clone(),
        scope,
        project_root: root,
        identity,
        inbox,
        briefing,
        resumed: false,
        withheld: session.withheld,
        search: session.scopes(),
    };
    shared.sessions.lock().insert(session.id.clone(), session);
    Ok(result)
}

pub(crate) async fn event(
    shared: &Arc<Shared>,
    peer: Peer,
    p: SessionEventParams,
) -> Result<SessionEventResult, ErrorObject> {
    // Number the event and note the activity at once, so concurrent events differ.
    let (snapshot, arrival) = {
        let mut live = shared.sessions.lock();
        let s = live.get_mut(&p.session_id).ok_or_else(|| not_found(&p.session_id))?;
        let arrival = s.note_event(p.kind, &p.text, now_millis());
        // A file the agent wrote is the agent's, wherever it is ingested from.
        if matches!(p.kind, EventKind::ToolCall | EventKind::ToolResult)
            && let Some(path) = crate::agent_writes::written_path(p.source.as_deref(), &p.text)
        {
            let w = crate::agent_writes::AgentWrite {
                path,
                agent: s.agent.clone(),
                session: s.id.clone(),
                at: now_millis(),
                since: Some(arrival.before),
            };
            crate::agent_writes::note(&shared.config.data_dir, &w);
        }
        // What its shell wrote is found by when it changed (after the lock is let go).
        if p.kind == EventKind::ToolResult && crate::shell_writes::is_shell(p.source.as_deref()) {
            crate::shell_writes::spawn(shared, s, arrival.before);
        }
        (s.clone(), arrival)
    };
    let n = arrival.event;
    let cfg = shared.config.interject.clone();
    let moment = p.moment.unwrap_or_default();
    let reminders = crate::methods::serve::reminders(shared, &snapshot, moment).await?;
    let decision = match precheck(p.kind, &p.text, n, &snapshot, &cfg) {
        Some(reason) => Decision::silent(n, reason),
        None if moment.focus().is_some() => Decision::silent(n, Reason::Moment),
        None => {
            let text: String = p.text.chars().take(MAX_QUERY_CHARS).collect();
            let hits = candidates(shared, &snapshot, &text, cfg.candidates, |_| true).await?;
            let judge = shared.sessions.judge.clone();
            let deadline = Duration::from_millis(shared.config.judge.timeout_ms);
            let snap = snapshot.clone();
            read(shared, move |e| {
                // The gate and band were tuned on MiniLM: carried to the model in force.
                let cfg = match e.calibration() {
                    Ok(c) => cfg.carried(&c),
                    Err(_) => cfg,
                };
                Ok(decide(n, &text, &hits, &snap, judge.as_ref(), deadline, &cfg))
            })
            .await?
        }
    };
    tracing::info!(
        session = %p.session_id, event = n, kind = p.kind.as_str(), fired = decision.fired,
        reason = ?decision.reason, best = ?decision.best, "interjection decision"
    );

    let wants_capture = p.capture.unwrap_or(p.kind != EventKind::ToolCall);
    let captured = if wants_capture {
        // Redacted here too: the session's record keeps the source beside the capture.
        let source = redact(&p.source.clone().unwrap_or_else(|| p.kind.as_str().to_string())).0;
        let text = strip_served(shared, &snapshot, &p.text).await;
        let from = CapturedFrom {
            door: peer.door,
            source: Some(source.clone()),
            session_id: Some(snapshot.id.clone()),
            author: Some(snapshot.agent.clone()),
        };
        let r = capture_text(shared, &text, snapshot.scope.clone(), MemoryType::Event, from).await?;
        Some((r, source))
    } else {
        None
    };

    let record = {
        let mut live = shared.sessions.lock();
        match live.get_mut(&p.session_id) {
            Some(s) => {
                s.note_decision(&decision, now_millis(), shared.config.session.max_decisions);
                if let Some((r, source)) = &captured {
                    note_capture(s, r, source);
                }
                s.reminded.extend(reminders.iter().map(|r| (r.id.clone(), moment)));
                (decision.fired || captured.is_some() || !reminders.is_empty()).then(|| s.clone())
            }
            None => None,
        }
    };
    if let Some(s) = record {
        persist(shared, &s).await?;
    }
    let reminder_text = crate::methods::serve::reminder_text(moment, &reminders);
    // Leads: never the session's own captures (this event's text was just filed).
    let leads = match snapshot.withheld {
        true => Vec::new(),
        false => {
            let sid = snapshot.id.clone();
            let also = snapshot.also.clone();
            crate::methods::leads::leads_for(shared, &p.text, Some(snapshot.scope.clone()), also, move |m| {
                m.session_id.as_deref() == Some(sid.as_str())
            })
            .await?
        }
    };
    Ok(SessionEventResult {
        event: n,
        decision,
        captured: captured.map(|c| c.0),
        reminders,
        reminder_text,
        leads,
        opening: arrival.opening,
    })
}

/// Ends a session: files the transcript, curates what the session filed, stores the
/// record. `reason` is `ended`, `idle` or `shutdown`.
pub(crate) async fn end(
    shared: &Arc<Shared>,
    id: &str,
    transcript: Option<super::transcript::Part>,
    reason: &str,
) -> Result<Session, ErrorObject> {
    let mut s = shared.sessions.lock().remove(id).ok_or_else(|| not_found(id))?;
    let _ending = Ending::begin(&shared.sessions, &s);
    if let Some(part) = transcript
        && let Err(e) = super::transcript::file(shared, &mut s, &part).await
    {
        // Keep the session live so the caller can retry the end.
        shared.sessions.lock().insert(s.id.clone(), s);
        return Err(e);
    }
    wait_indexed(shared).await;
    let report = curate(shared, &s).await;
    s.curation = Some(report);
    super::session_run::record(shared, &mut s).await;
    s.ended_at = Some(now_millis());
    s.end_reason = Some(reason.to_string());
    persist(shared, &s).await?;
    tracing::info!(
        session = %s.id, reason, served = s.served.len(), captured = s.captured.len(),
        curation = ?s.curation.as_ref().map(|c| (c.exact_duplicates.len(), c.near_duplicates.len(), c.related.len())),
        "session ended"
    );
    Ok(s)
}

/// Curates a session's memories; a failure is logged and reported empty (the session
/// still ends, nothing was changed by the failed part).
async fn curate(shared: &Arc<Shared>, s: &Session) -> amber_tiers::curate::CurationReport {
    let cfg = shared.config.curation.clone();
    let (id, scope): (String, Scope) = (s.id.clone(), s.scope.clone());
    let planned = read(shared, move |e| {
        let mine = e.session_memories(&id)?;
        let mut failed = None;
        let plan = amber_tiers::curate::plan(
            &mine,
            |m| match e.similar(&m.id, Some(&scope), cfg.neighbours) {
                Ok(v) => v,
                Err(err) => {
                    failed.get_or_insert(err);
                    Vec::new()
                }
            },
            now_millis(),
            &cfg,
        );
        match failed {
            Some(err) => Err(err),
            None => Ok(plan),
        }
    })
    .await;
    let mut plan = match planned {
        Ok(p) => p,
        Err(e) => {
            tracing::warn!(session = %s.id, error = %e.message, "curation failed; the session ends without it");
            return Default::default();
        }
    };
    let links = plan.links.clone();
    match crate::rpc::write_with(shared, move |e| e.add_links(&links)).await {
        Ok(n) => plan.report.links_added = n,
        Err(e) => tracing::warn!(session = %s.id, error = %e.message, "curation links not stored"),
    }
    for id in &plan.forget {
        match write(shared, WriteOp::Forget(id.clone())).await {
            Ok(WriteDone::Forgot(Some(_))) => plan.report.collapsed += 1,
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(session = %s.id, memory = %id, error = %e.message, "duplicate not collapsed")
            }
        }
    }
    plan.report.repeats_at_capture = s.captured.iter().filter(|c| !c.created).count();
    plan.report
}

pub(crate) async fn end_method(
    shared: &Arc<Shared>,
    peer: Peer,
    p: SessionEndParams,
) -> Result<SessionResult, ErrorObject> {
    let outcome = p.outcome.as_ref().map(|o| o.parse()).transpose().map_err(invalid)?;
    if let Some((reward, label)) = &outcome {
        let mut live = shared.sessions.lock();
        let s = live.get_mut(&p.session_id).ok_or_else(|| not_found(&p.session_id))?;
        s.reward = *reward;
        s.outcome = Some(label.clone());
    }
    // The manifest first: what the session relied on moves the weights (see outcome.rs).
    let manifest = match p.manifest.is_empty() {
        true => None,
        false => {
            let (s, _) =
                super::records::find(shared, &p.session_id).await?.ok_or_else(|| not_found(&p.session_id))?;
            let reward = outcome.as_ref().and_then(|o| o.0);
            Some(super::outcome::apply_manifest(shared, &s, p.manifest, reward).await?)
        }
    };
    let transcript = p.transcript.map(|text| super::transcript::Part {
        text,
        source: p.transcript_source,
        skipped: p.transcript_skipped,
        door: peer.door,
    });
    let s = end(shared, &p.session_id, transcript, "ended").await?;
    Ok(SessionResult { session: s, live: false, manifest })
}

pub(crate) async fn show(shared: &Arc<Shared>, p: SessionShowParams) -> Result<SessionResult, ErrorObject> {
    let (session, live) = super::records::find(shared, &p.session_id).await?.ok_or_else(|| {
        ErrorObject::new(ErrorKind::SessionNotFound, format!("no session with id {:?}", p.session_id))
    })?;
    Ok(SessionResult { session, live, manifest: None })
}

/// Ends sessions idle past the timeout, until shutdown.
pub(crate) async fn idle_loop(shared: Arc<Shared>) {
    let timeout = Duration::from_secs(shared.config.session.idle_timeout_s);
    let tick = (timeout / 4).clamp(Duration::from_millis(200), Duration::from_secs(60));
    let mut shutdown = shared.shutdown.subscribe();
    loop {
        tokio::select! {
            _ = tokio::time::sleep(tick) => {}
            _ = crate::state::shutdown_asked(&mut shutdown) => return,
        }
        for id in shared.sessions.idle(now_millis(), timeout) {
            if let Err(e) = end(&shared, &id, None, "idle").await {
                tracing::warn!(session = %id, error = %e.message, "idle session not ended");
            }
        }
    }
}

/// At shutdown: stores every live session's latest record (they resume at the next start).
pub(crate) async fn save_all(shared: &Arc<Shared>) {
    for s in shared.sessions.all() {
        if let Err(e) = persist(shared, &s).await {
            tracing::warn!(session = %s.id, error = %e.message, "session record not saved at shutdown");
        }
    }
}

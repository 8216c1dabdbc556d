//! The Amber session of an agent session: started or continued by the runtime's
//! `session_id` (its key), and the transcript part a stop or an end sends.

use std::path::{Path, PathBuf};

use amber_ipc::Client;
use amber_ipc::protocol::{SessionStartParams, SessionStartResult};
use anyhow::Context;
use serde_json::Value;

use super::{Hook, field};

/// Longest transcript sent at a stop or an end (characters of message text); the rest,
/// the oldest part, is left out (the daemon is told how much) and the log says so.
const MAX_TRANSCRIPT_CHARS: usize = 1_000_000;

/// Starts or continues the Amber session of an agent session. `rebrief` when the context
/// that held the briefing is gone.
pub(super) fn start(
    hook: &Hook<'_>,
    client: &mut Client,
    payload: &Value,
    prompt: Option<&str>,
    rebrief: bool,
) -> anyhow::Result<SessionStartResult> {
    let key = field(payload, "session_id").context("the payload has no session_id")?;
    let cwd = field(payload, "cwd").map(PathBuf::from).filter(|p| super::is_dir(p));
    let started = client.session_start(&SessionStartParams {
        agent: hook.rt.name().into(),
        agent_token: hook.token.clone(),
        project_root: None,
        cwd,
        prompt: prompt.map(str::to_string),
        scope: None,
        key: Some(key.to_string()),
        rebrief: Some(rebrief),
        // Every agent session is a run: its opening prompt the task, its tool uses the
        // trace (recorded when it ends; the person rewards it with `amber runs reward`).
        run: Some(true),
        // What the hook handed over itself when the daemon was late (its kept copy of the
        // person's standing preferences): served already, not briefed again.
        shown: super::standing::shown(hook.cfg, hook.rt.name(), key),
    })?;
    super::standing::forget_shown(hook.cfg, hook.rt.name(), key);
    Ok(started)
}

/// The Amber session id of an agent session.
pub(super) fn session_id(hook: &Hook<'_>, payload: &Value) -> anyhow::Result<String> {
    let key = field(payload, "session_id").context("the payload has no session_id")?;
    Ok(amber_tiers::session::keyed_session_id(hook.rt.name(), key))
}

fn not_live(e: &amber_ipc::ClientError) -> bool {
    e.kind() == Some(amber_ipc::protocol::ErrorKind::SessionNotFound)
}

/// Runs `call` on the session; when it is not live (never started, or ended by the idle
/// timeout), continues it first and tries once more. Returns the call's result and the
/// start's result when one was made.
pub(super) fn on_session<T>(
    hook: &Hook<'_>,
    client: &mut Client,
    payload: &Value,
    prompt: Option<&str>,
    mut call: impl FnMut(&mut Client, &str) -> Result<T, amber_ipc::ClientError>,
) -> anyhow::Result<(T, Option<SessionStartResult>)> {
    let id = session_id(hook, payload)?;
    match call(client, &id) {
        Ok(r) => Ok((r, None)),
        Err(e) if not_live(&e) => {
            let started = start(hook, client, payload, prompt, false)?;
            Ok((call(client, &started.session_id)?, Some(started)))
        }
        Err(e) => Err(e.into()),
    }
}

/// Like [`on_session`], for the events that end or pause work (stop, end): a session
/// Amber never started (Claude Code fires SessionEnd for `claude mcp add` and the like) is
/// left alone, `None`: nothing is served or recorded for it. One Amber knows but that is
/// no longer live is continued when it ended for idleness or a shutdown; one the runtime
/// ended already is left ended (Gemini CLI fires SessionEnd two or three times at a quit).
pub(super) fn on_known_session<T>(
    hook: &Hook<'_>,
    client: &mut Client,
    payload: &Value,
    mut call: impl FnMut(&mut Client, &str) -> Result<T, amber_ipc::ClientError>,
) -> anyhow::Result<Option<T>> {
    let id = session_id(hook, payload)?;
    match call(client, &id) {
        Ok(r) => Ok(Some(r)),
        Err(e) if not_live(&e) => match client.session_show(&id) {
            Ok(s) if s.session.end_reason.as_deref() == Some("ended") && hook.kind == super::Event::End => {
                Ok(None)
            }
            Ok(_) => {
                let started = start(hook, client, payload, None, false)?;
                Ok(Some(call(client, &started.session_id)?))
            }
            Err(e) if not_live(&e) => Ok(None),
            Err(e) => Err(e.into()),
        },
        Err(e) => Err(e.into()),
    }
}

/// A transcript's text as sent to the daemon: at most its last `MAX_TRANSCRIPT_CHARS`
/// characters (`skipped` says how many were left out at its start).
pub(super) struct TranscriptPart {
    pub text: String,
    pub source: String,
    pub skipped: usize,
}

pub(super) fn transcript_part(hook: &Hook<'_>, path: &Path, raw: &str) -> Option<TranscriptPart> {
    let text = hook.rt.transcript_text(raw);
    let n = text.chars().count();
    let skipped = n.saturating_sub(MAX_TRANSCRIPT_CHARS);
    let text = match skipped {
        0 => text,
        _ => {
            hook.log(&format!("transcript of {n} characters: its last {MAX_TRANSCRIPT_CHARS} sent"));
            text.chars().skip(skipped).collect()
        }
    };
    let source = format!("{}:transcript:{}", hook.rt.name(), path.display());
    (!text.trim().is_empty()).then_some(TranscriptPart { text, source, skipped })
}

/// What a session start gives the model: identity, inbox, briefing.
pub(super) fn start_context(s: &SessionStartResult) -> String {
    let mut parts = Vec::new();
    if let Some(id) = &s.identity
        && !id.text.trim().is_empty()
    {
        parts.push(id.text.trim_end().to_string());
    }
    if !s.inbox.text.trim().is_empty() {
        parts.push(s.inbox.text.trim_end().to_string());
    }
    if !s.briefing.text.trim().is_empty() {
        parts.push(s.briefing.text.trim_end().to_string());
    }
    parts.join("\n\n")
}

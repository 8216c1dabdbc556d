//! What Amber does at each moment of an agent session, whatever the runtime: brief at
//! the start, gate each prompt and tool use for an interjection, capture what tools wrote,
//! file the transcript and ask for a takeaway at each stop (the checkpoint, once), end
//! and curate at the end.

use std::path::Path;

use amber_ipc::protocol::{SessionCheckpointParams, SessionEndParams, SessionEventParams};
use amber_tiers::interject::EventKind;
use serde_json::Value;

use super::session::{on_known_session, on_session, session_id, start, start_context, transcript_part};
use super::{Event, Hook, ToolUse, advice, field, read_transcript, standing};

/// Answers one hook: what to print on stdout (None: nothing).
pub(super) fn answer(
    hook: &Hook<'_>,
    config_file: Option<&Path>,
    payload: &Value,
    start_daemon: bool,
) -> anyhow::Result<Option<String>> {
    let mut client = crate::daemon::connect_or_start(hook.cfg, config_file, start_daemon)?;
    match hook.kind {
        Event::Start => brief(hook, &mut client, payload),
        Event::Prompt => prompt(hook, &mut client, payload),
        Event::Tool => tool(hook, &mut client, payload),
        Event::Stop => checkpoint(hook, &mut client, payload),
        Event::End => end(hook, &mut client, payload),
    }
}

/// startup: a new session, briefed. resume: the same session continues (its context
/// still holds what it was given, unless the runtime says otherwise). compact, clear: the
/// context that held the briefing is gone, so it is briefed again.
fn brief(hook: &Hook<'_>, client: &mut amber_ipc::Client, payload: &Value) -> anyhow::Result<Option<String>> {
    let source = field(payload, "source").unwrap_or("startup");
    let rebrief = hook.rt.rebrief(source);
    let started = start(hook, client, payload, None, rebrief)?;
    hook.log(&format!(
        "source {source}: session {} resumed={} briefed {}",
        started.session_id,
        started.resumed,
        started.briefing.items.len()
    ));
    // A new session's briefing holds every standing preference: kept for a start the
    // daemon cannot answer in time.
    if source == "startup"
        && !started.resumed
        && !started.withheld
        && let Some(cwd) = field(payload, "cwd")
        && let Err(e) = standing::keep(hook.cfg, Path::new(cwd), &started.briefing.standing)
    {
        hook.log(&format!("cannot keep the standing preferences: {e:#}"));
    }
    let text = start_context(&started);
    Ok((!text.is_empty()).then(|| hook.rt.context(hook.event, &text)))
}

fn prompt(
    hook: &Hook<'_>,
    client: &mut amber_ipc::Client,
    payload: &Value,
) -> anyhow::Result<Option<String>> {
    let Some(prompt) = hook.rt.prompt(payload) else {
        hook.log("not the person's prompt (Amber's own, sent back): nothing done");
        return Ok(None);
    };
    let (r, started) = on_session(hook, client, payload, Some(&prompt), |c, id| {
        c.session_event(&SessionEventParams {
            session_id: id.to_string(),
            kind: EventKind::Prompt,
            text: prompt.clone(),
            source: Some(format!("{}:prompt", hook.rt.name())),
            // The prompt goes to the gate; it is stored with the transcript at the next
            // stop (captured here too, it was stored twice).
            capture: Some(false),
            moment: None,
        })
    })?;
    // A session started here (no start seen) carries its briefing too.
    let mut parts: Vec<String> = started.as_ref().map(start_context).into_iter().collect();
    hook.log(&format!(
        "event {} fired={} reason={:?} best={:?}",
        r.event, r.decision.fired, r.decision.reason, r.decision.best
    ));
    if r.decision.fired {
        parts.push(r.decision.text);
    }
    // The opening prompt asks for advice learned from earlier runs (with a model).
    if r.opening {
        let id = session_id(hook, payload)?;
        parts.extend(advice::ask(hook, client, &id, &prompt, "start"));
    }
    parts.retain(|p| !p.trim().is_empty());
    Ok((!parts.is_empty()).then(|| hook.rt.context(hook.event, &parts.join("\n\n"))))
}

fn tool(hook: &Hook<'_>, client: &mut amber_ipc::Client, payload: &Value) -> anyhow::Result<Option<String>> {
    let shaped = hook.rt.tool_payload(payload);
    let Some(t) = ToolUse::of(&shaped) else { return Ok(None) };
    // Amber's own tools and commands: their output is what Amber served, never captured
    // again (it would come back in later recalls, and again, and again).
    if t.own {
        hook.log(&format!("{}: Amber's own output, not captured", t.name));
        return Ok(None);
    }
    let source = format!("{}:tool:{}", hook.rt.name(), t.name);
    // Every tool use goes to the gate and the leads; only what a tool wrote is stored
    // now: all other output is in the transcript, filed at the next stop (stored once,
    // not twice; see docs/INTEGRATIONS.md for the measurement).
    on_session(hook, client, payload, None, |c, id| {
        c.session_event(&SessionEventParams {
            session_id: id.to_string(),
            kind: EventKind::ToolResult,
            text: t.text.clone(),
            source: Some(source.clone()),
            capture: Some(t.capture),
            moment: None,
        })
    })?;
    // A failed tool is where a session gets stuck: the Pitfalls of the advice it was
    // given, once (no model call).
    if t.failed {
        let id = session_id(hook, payload)?;
        if let Some(text) = advice::ask(hook, client, &id, &t.text, "stuck") {
            return Ok(Some(hook.rt.context(hook.event, &text)));
        }
    }
    Ok(None)
}

/// A checkpoint, not an end: the session goes on with the next prompt.
fn checkpoint(
    hook: &Hook<'_>,
    client: &mut amber_ipc::Client,
    payload: &Value,
) -> anyhow::Result<Option<String>> {
    let stop_hook_active = payload.get("stop_hook_active").and_then(Value::as_bool) == Some(true);
    // The transcript so far is filed at every stop (only what is new), so a session whose
    // end never comes loses at most its last turn.
    let raw = read_transcript(payload).unwrap_or_else(|e| {
        hook.log(&format!("{e:#}; going on without it"));
        None
    });
    let message =
        hook.rt.stop_message(payload).or_else(|| raw.as_ref().and_then(|(_, t)| hook.rt.last_message(t)));
    let part = raw.as_ref().and_then(|(path, raw)| transcript_part(hook, path, raw));
    let Some(r) = on_known_session(hook, client, payload, |c, id| {
        c.session_checkpoint(&SessionCheckpointParams {
            session_id: id.to_string(),
            stop_hook_active,
            message: message.clone(),
            transcript: part.as_ref().map(|p| p.text.clone()),
            transcript_source: part.as_ref().map(|p| p.source.clone()),
            transcript_skipped: part.as_ref().map_or(0, |p| p.skipped),
        })
    })?
    else {
        hook.log("a session Amber never started: nothing done");
        return Ok(None);
    };
    hook.log(&format!("block={} outcome={:?}", r.block, r.checkpoint.outcome));
    // Done: the Steps of the advice the session was given, once, to check the work against
    // (no model call). Never when the agent is already going on because of a block.
    let done = match stop_hook_active {
        true => None,
        false => advice::ask(hook, client, &session_id(hook, payload)?, "", "done"),
    };
    let reason = match (r.block, done) {
        (true, Some(d)) => Some(format!("{}\n\n{d}", r.reason.unwrap_or_default())),
        (true, None) => Some(r.reason.unwrap_or_default()),
        (false, Some(d)) => Some(format!("{d}\n{}", super::transcript::DONE_STEPS)),
        (false, None) => None,
    };
    Ok(reason.map(|reason| hook.rt.go_on(&reason)))
}

fn end(hook: &Hook<'_>, client: &mut amber_ipc::Client, payload: &Value) -> anyhow::Result<Option<String>> {
    let raw = read_transcript(payload).unwrap_or_else(|e| {
        hook.log(&format!("{e:#}; ending the session without it"));
        None
    });
    let part = raw.as_ref().and_then(|(path, raw)| transcript_part(hook, path, raw));
    let reason = field(payload, "reason").unwrap_or("?");
    let Some(r) = on_known_session(hook, client, payload, |c, id| {
        c.session_end(&SessionEndParams {
            session_id: id.to_string(),
            transcript: part.as_ref().map(|p| p.text.clone()),
            transcript_source: part.as_ref().map(|p| p.source.clone()),
            transcript_skipped: part.as_ref().map_or(0, |p| p.skipped),
            manifest: Vec::new(),
            outcome: None,
        })
    })?
    else {
        hook.log(&format!("a session Amber never started, or ended already ({reason}): nothing done"));
        return Ok(None);
    };
    let c = r.session.curation.unwrap_or_default();
    hook.log(&format!(
        "session {} ended ({reason}): {} served, {} captured, {} near duplicates, {} collapsed",
        r.session.id,
        r.session.served.len(),
        r.session.captured.len(),
        c.near_duplicates.len(),
        c.collapsed
    ));
    // The end's output reaches no one but the log: the person finds the run with `amber
    // runs list` or rewards `amber runs reward last`.
    if let Some(run) = r.session.run.runs.last() {
        let msg = format!(
            "session {} is run {run} in {}; reward it: amber runs reward {run} <-1..1>",
            r.session.id, r.session.scope
        );
        hook.log(&msg);
        errln!("amber: {msg}");
    }
    Ok(None)
}

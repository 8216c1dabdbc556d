//! What a session is served: its candidates (the session's scopes as one ranking, minus
//! echoes and what is addressed to someone else), its inbox (memories addressed to its
//! agent, each at most once per agent) and its briefing.

use std::sync::Arc;

use amber_core::{Millis, Query};
use amber_ipc::protocol::{ErrorObject, Inbox, InboxItem, Reminder};
use amber_tiers::briefing::brief_pinned;
use amber_tiers::identity::estimate_tokens;
use amber_tiers::preferences;
use amber_tiers::session::{Served, Session, Tier};

use crate::rpc::{read, read_on};
use crate::state::Shared;

/// Most memories an inbox hands over at once (the rest wait for the next session).
const MAX_INBOX: usize = 20;
/// An inbox line shows at most this many characters of a memory.
const INBOX_OPENING: usize = 240;

/// Candidates asked of the engine when `n` are wanted after the echo rule: a busy
/// session's own captures can fill the top of a ranking, so more are fetched and the
/// echoes dropped before the first `n` are kept.
pub(crate) fn overfetch(n: usize) -> usize {
    n.clamp(1, amber_core::MAX_K).saturating_mul(ECHO_OVERFETCH).min(amber_core::MAX_K)
}

/// How many times the wanted candidates are fetched before the echo rule.
const ECHO_OVERFETCH: usize = 8;

/// Longest event text searched (characters); longer events are searched by their start.
pub(crate) const MAX_QUERY_CHARS: usize = 2000;

/// The first `n` candidates for a text in a session's scopes (one ranking), once
/// indexing has caught up, minus the echo rule: what the session filed itself is already
/// in the agent's context, and raw captures (of any session, however old) are evidence
/// for `recall`, never served unasked.
pub(crate) async fn candidates(
    shared: &Arc<Shared>,
    session: &Session,
    text: &str,
    n: usize,
    keep: impl Fn(&amber_core::Memory) -> bool,
) -> Result<Vec<amber_core::Hit>, ErrorObject> {
    let mut q = Query::new(text).in_scope(session.scope.clone()).top(overfetch(n));
    // A session started before the team was configured searches the team scopes too.
    for s in session.also.iter().cloned().chain(shared.search_also(&session.scope)) {
        if !q.also.contains(&s) {
            q = q.also_in(s);
        }
    }
    let mut hits =
        super::memory::recall_routed(shared, q, crate::rpc::Fresh::UnlessBacklog, true).await?.hits;
    hits.retain(|h| !session.is_echo(&h.memory) && session.may_serve(&h.memory) && keep(&h.memory));
    hits.truncate(n);
    Ok(hits)
}

/// Runs the briefing for a session: its scopes searched as one ranking, minus what it
/// filed itself, recent raw captures and what it was served in its current context.
pub(crate) async fn briefing(
    shared: &Arc<Shared>,
    session: &mut Session,
    prompt: Option<&str>,
    project: &str,
    (spent, shown): (usize, &[String]),
    now: Millis,
) -> Result<amber_tiers::briefing::Briefing, ErrorObject> {
    if session.withheld {
        return Ok(amber_tiers::briefing::Briefing::default());
    }
    let mut cfg = shared.config.briefing.clone();
    // The inbox came first, from the same budget.
    cfg.budget_tokens = cfg.budget_tokens.saturating_sub(spent);
    let (query, overview) = match prompt.map(str::trim) {
        Some(t) if !t.is_empty() => (t.chars().take(MAX_QUERY_CHARS).collect(), false),
        _ => {
            // No prompt to answer: an overview of the project, within the budget.
            cfg.min_relevance = 0.0;
            (format!("recent work on {project}"), true)
        }
    };
    // An overview leaves out ingested documents: a folder filed at once would fill it.
    // They come when a prompt or an event asks for them.
    let keep = |m: &amber_core::Memory| !(overview && amber_core::document::is_chunk(&m.metadata));
    let mut hits = candidates(shared, session, &query, cfg.candidates, keep).await?;
    let standing = standing_preferences(shared, session, &mut hits).await?;
    // What the client put in the session's context itself (its kept copy of the standing
    // preferences, when the daemon was late): served already.
    let shown = |id: &str| shown.iter().any(|s| s.len() >= 8 && id.starts_with(s.as_str()));
    let fresh: Vec<&amber_core::Hit> = hits
        .iter()
        .filter(|h| shown(h.memory.id.as_str()) && session.served_earlier(&h.memory.id).is_none())
        .collect();
    for h in fresh {
        session.served.push(Served {
            id: h.memory.id.clone(),
            tier: Tier::Briefing,
            event: None,
            at: now,
            score: h.evidence.fused,
            why: "the person's standing preference, shown by the client from its kept copy".into(),
            context: session.context,
        });
    }
    let briefing =
        brief_pinned(&query, &hits, now, &cfg, |id| session.served_earlier(id).is_some(), &standing);
    for item in &briefing.items {
        let why = match standing.contains(&item.id) {
            true => "the person's standing preference (briefed in every session)".to_string(),
            false => format!(
                "briefing for {query:?}: relevance {:.2}, recency {:.2}, importance {:.2}{}",
                item.relevance,
                item.recency,
                item.importance,
                if item.expanded { ", shown in full" } else { "" }
            ),
        };
        session.served.push(Served {
            id: item.id.clone(),
            tier: Tier::Briefing,
            event: None,
            at: now,
            score: item.score,
            why,
            context: session.context,
        });
    }
    Ok(briefing)
}

/// The person's standing preferences in the session's scopes, put among a briefing's
/// candidates (`amber_tiers::preferences::pin`). Returns their ids.
async fn standing_preferences(
    shared: &Arc<Shared>,
    session: &Session,
    hits: &mut Vec<amber_core::Hit>,
) -> Result<Vec<amber_core::MemoryId>, ErrorObject> {
    let scopes = session.scopes();
    let prefs = read(shared, move |e| e.standing_preferences(&scopes, preferences::MAX_STANDING)).await?;
    Ok(preferences::pin(hits, prefs, session))
}

/// The session's inbox: memories addressed to its agent (or to `all`) in its scopes
/// that no session of this agent was handed yet, oldest first, as many as fit half the
/// briefing budget. They are noted as served (to the session, and to the agent for
/// good) before the briefing, which then has the rest of the budget.
pub(crate) async fn inbox(
    shared: &Arc<Shared>,
    session: &mut Session,
    now: Millis,
) -> Result<Inbox, ErrorObject> {
    if session.withheld {
        // The holdout arm is served nothing; what is addressed to the agent waits.
        return Ok(Inbox::default());
    }
    let agent = session.agent.clone();
    let scopes = session.scopes();
    let mut pending = read(shared, {
        let agent = agent.clone();
        move |e| e.inbox(&agent, &scopes, MAX_INBOX)
    })
    .await?;
    // What agents on other machines addressed to this one, in the team scopes; while
    // the team database is away it waits there.
    let team = shared.team.as_ref().and_then(|t| t.side_if_open());
    if let Some(side) = &team {
        let prefixes = team_scopes(shared);
        match read_on(shared, side, move |e| e.inbox(&agent, &prefixes, MAX_INBOX)).await {
            Ok(mut more) => {
                more.retain(|m| !pending.iter().any(|p| p.id == m.id));
                pending.extend(more);
                pending.sort_by_key(|m| m.created_at);
                pending.truncate(MAX_INBOX);
            }
            Err(e) => tracing::debug!(error = %e.message, "the team inbox is not reachable now"),
        }
    }
    let budget = shared.config.briefing.budget_tokens / 2;
    let mut out = Inbox::default();
    let mut lines = Vec::new();
    let mut inbox_scopes = std::collections::HashMap::new();
    for m in pending {
        if session.served_earlier(&m.id).is_some() {
            continue;
        }
        let opening = amber_tiers::briefing::summary(&m.content, INBOX_OPENING);
        // Authors filed before labels were checked may hold a newline: one line, cleaned.
        let from = m
            .author
            .as_deref()
            .map(|a| amber_core::origin::quoted_name(a, 80))
            .unwrap_or_else(|| "a person".into());
        let line = format!(
            "- {} · from {from}{} · {}",
            &m.id.as_str()[..8],
            m.reply_to.as_ref().map(|r| format!(" · re {}", &r.as_str()[..8])).unwrap_or_default(),
            opening
        );
        let cost = estimate_tokens(&line) + 1;
        if out.tokens + cost > budget {
            out.waiting += 1;
            continue;
        }
        out.tokens += cost;
        lines.push(line);
        session.served.push(Served {
            id: m.id.clone(),
            tier: Tier::Inbox,
            event: None,
            at: now,
            score: 1.0,
            why: format!("inbox: addressed to {} by {from}", m.to.as_deref().unwrap_or("?")),
            context: session.context,
        });
        inbox_scopes.insert(m.id.clone(), m.scope.clone());
        out.items.push(InboxItem {
            id: m.id,
            seq: m.seq,
            from: m.author,
            to: m.to,
            reply_to: m.reply_to,
            opening,
        });
    }
    if out.items.is_empty() {
        return Ok(out);
    }
    out.text = format!("Addressed to you ({}):\n{}\n", session.agent, lines.join("\n"));
    let (team_seqs, local_seqs): (Vec<u64>, Vec<u64>) = {
        let (t, l): (Vec<&InboxItem>, Vec<&InboxItem>) =
            out.items.iter().partition(|i| inbox_scopes.get(&i.id).is_some_and(|s| shared.is_team(s)));
        (t.iter().map(|i| i.seq).collect(), l.iter().map(|i| i.seq).collect())
    };
    let agent = session.agent.clone();
    if !local_seqs.is_empty() {
        let agent = agent.clone();
        crate::rpc::write_with(shared, move |e| e.mark_inbox_served(&agent, &local_seqs)).await?;
    }
    if let (Some(side), false) = (&team, team_seqs.is_empty()) {
        crate::rpc::write_with_on(shared, side, move |e| e.mark_inbox_served(&agent, &team_seqs)).await?;
    }
    Ok(out)
}

/// The team scope prefixes, searched by every session with its own scopes.
pub(crate) fn team_scopes(shared: &Shared) -> Vec<amber_core::Scope> {
    shared.team.as_ref().map(|t| t.prefixes.clone()).unwrap_or_default()
}

/// At a `fork`, `stuck` or `done` moment: the memories the session was given (in any
/// context) that fit the moment, the fitting part of each (`amber_tiers::moment`), each
/// at most once per moment; no search. Nothing for other moments or a withheld session.
pub(crate) async fn reminders(
    shared: &Arc<Shared>,
    session: &Session,
    moment: amber_tiers::moment::Moment,
) -> Result<Vec<Reminder>, ErrorObject> {
    let Some(focus) = moment.focus() else { return Ok(Vec::new()) };
    if session.withheld {
        return Ok(Vec::new());
    }
    let mut ids: Vec<amber_core::MemoryId> = Vec::new();
    for s in &session.served {
        if !ids.contains(&s.id) && !session.reminded.iter().any(|(id, m)| id == &s.id && *m == moment) {
            ids.push(s.id.clone());
        }
    }
    // Each where it is: the local store, then the team store (skipped while away).
    let mut memories: Vec<amber_core::Memory> = Vec::with_capacity(ids.len());
    let mut left = ids.clone();
    for side in shared.id_sides().0 {
        if left.is_empty() {
            break;
        }
        let ask = left.clone();
        let found = read_on(shared, &side, move |e| {
            let mut out = Vec::with_capacity(ask.len());
            for id in &ask {
                if let Some(m) = e.get(id)? {
                    out.push(m);
                }
            }
            Ok(out)
        })
        .await;
        match found {
            Ok(found) => {
                left.retain(|id| !found.iter().any(|m| &m.id == id));
                memories.extend(found);
            }
            Err(e) if e.kind() == Some(amber_ipc::protocol::ErrorKind::TeamUnavailable) => {
                tracing::debug!(error = %e.message, "team memories are not reminded while the database is away");
            }
            Err(e) => return Err(e),
        }
    }
    memories.sort_by_key(|m| ids.iter().position(|id| id == &m.id));
    Ok(memories
        .into_iter()
        .filter(|m| !m.is_forgotten() && !m.is_archived())
        .filter_map(|m| {
            amber_tiers::moment::reminder(&m, focus).map(|text| Reminder { id: m.id, focus, text })
        })
        .collect())
}

/// The reminders as text for the agent.
pub(crate) fn reminder_text(moment: amber_tiers::moment::Moment, reminders: &[Reminder]) -> String {
    if reminders.is_empty() {
        return String::new();
    }
    let what = match moment {
        amber_tiers::moment::Moment::Done => "how to check the work",
        _ => "pitfalls",
    };
    let mut out = format!("Reminder ({}): {what}, from what Amber gave this session:\n", moment.as_str());
    for r in reminders {
        out.push_str(&format!("- {}:\n{}", &r.id.as_str()[..8], amber_tiers::fence::quoted(&r.text, "  ")));
    }
    out
}

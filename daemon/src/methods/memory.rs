//! The memory methods: `remember`, `remember_batch`, `recall`, `forget`, `purge` and
//! `links`. (`get` takes id prefixes and lives with the scopes, `methods/scope.rs`.)
//! Every remembered memory is redacted (content, source, metadata strings) unless the
//! caller asked `allow_secrets`; the result counts what was replaced.

use std::sync::Arc;

use amber_core::NewMemory;
use amber_ipc::protocol::{
    ErrorKind, ErrorObject, IdParams, LinksResult, MAX_BATCH, MemoryResult, PurgeParams, PurgeResult,
    RecallParams, RecallResult, RememberBatchParams, RememberBatchResult, RememberParams, RememberResult,
};

use amber_core::origin::{Origin, Trust};

use crate::live::not_found;
use crate::methods::reader::Reader;
use crate::peer::Peer;
use crate::rpc::{invalid, read, read_on, remembered, validate_all, write_on};
use crate::state::Shared;
use crate::writer::{WriteDone, WriteOp};

/// Stamps what a client files on purpose with its origin: the door the daemon saw it
/// come through; the agent of the live session it names (the name that session started
/// as, checked against its token when registered), or else the author it gives, marked
/// `claimed`; this machine; and that door's trust (`person` at the command line, `agent`
/// elsewhere). A client's own `origin` and `trust` metadata are replaced.
pub(crate) fn stamp_writes(shared: &Shared, peer: Peer, memories: &mut [NewMemory]) {
    for m in memories {
        let (agent, claimed) =
            super::origin::vouched_agent(shared, m.session_id.as_deref(), m.author.as_deref());
        let origin = Origin {
            door: Some(peer.door.as_str().into()),
            agent,
            session: m.session_id.clone(),
            tool: None,
            machine: super::origin::machine(),
            inside_agent: peer.under_agent,
            claimed,
        };
        amber_core::origin::stamp(&mut m.metadata, &origin, peer.writer_trust());
    }
}

/// Refuses what only a person may file: a `lifefact` (its weight is pinned and nothing
/// supersedes it), from an agent.
fn person_only_kinds(peer: Peer, memories: &[NewMemory]) -> Result<(), ErrorObject> {
    if peer.writer_trust() == amber_core::origin::Trust::Person {
        return Ok(());
    }
    match memories.iter().position(|m| m.kind == amber_core::MemoryType::Lifefact) {
        Some(i) => Err(ErrorObject::new(
            ErrorKind::NotPermitted,
            format!(
                "memory {i}: a lifefact (its weight pinned, never superseded) is a person's word; \
                 an agent files it as a fact, or the person runs `amber remember --type lifefact`"
            ),
        )),
        None => Ok(()),
    }
}

/// What an `external` batch may not hold: an invalidation that supersedes (outside
/// content never retires anything) or a lifefact (a person's word).
fn external_kinds(memories: &[NewMemory]) -> Result<(), ErrorObject> {
    for (i, m) in memories.iter().enumerate() {
        if !m.supersedes.is_empty() {
            return Err(invalid(format!("memories[{i}]: an external memory supersedes nothing")));
        }
        if m.kind == amber_core::MemoryType::Lifefact {
            return Err(invalid(format!("memories[{i}]: a lifefact is a person's word, never external")));
        }
    }
    Ok(())
}

/// An `external` batch's trust, and the tool it names, over the door's stamp: the origin
/// keeps the door, agent and machine the daemon found; only the trust goes down and the
/// tool is named. Never up: `external` is the lowest trust.
fn restamp(memories: &mut [NewMemory], external: bool, tool: Option<&str>) {
    for m in memories {
        let mut origin = amber_core::origin::origin_of(&m.metadata);
        if let Some(t) = tool {
            origin.tool = Some(t.to_string());
        }
        let trust = if external { Trust::External } else { amber_core::origin::trust_of(&m.metadata) };
        amber_core::origin::stamp(&mut m.metadata, &origin, trust);
    }
}

pub(crate) async fn remember(
    shared: &Arc<Shared>,
    peer: Peer,
    p: RememberParams,
) -> Result<RememberResult, ErrorObject> {
    let RememberParams { memory, allow_secrets } = p;
    if allow_secrets {
        crate::person_log::person_only(shared, peer, "allow_secrets", crate::person_log::Undo::Reversible)?;
    }
    let (mut memories, counts) = redacted(vec![memory], allow_secrets).await?;
    validate_all(&memories)?;
    person_only_kinds(peer, &memories)?;
    stamp_writes(shared, peer, &mut memories);
    let held = super::dispute::hold_back(shared, peer, &mut memories).await?;
    let (session, kind) = (memories[0].session_id.clone(), memories[0].kind);
    let lane = crate::rpc::Lane::of(peer, 1);
    let mut results = remember_routed(shared, memories, lane).await?;
    super::dispute::link(shared, &mut results, held).await;
    let mut r = results.pop().ok_or_else(|| ErrorObject::new(ErrorKind::Internal, "no result"))?;
    r.redacted = counts.iter().sum();
    if let Some(sid) = session {
        note_filed(shared, &sid, &r, kind).await;
    }
    Ok(r)
}

/// Notes in a live session's record a memory it filed on purpose (new or already there),
/// which is what its checkpoint counts. A session that is not live is left alone.
async fn note_filed(
    shared: &Arc<Shared>,
    session: &str,
    r: &amber_ipc::protocol::RememberResult,
    kind: amber_core::MemoryType,
) {
    let record = {
        let mut live = shared.sessions.lock();
        live.get_mut(session).map(|s| {
            s.note_filed(r.id.clone(), kind, r.created, amber_core::now_millis());
            s.clone()
        })
    };
    if let Some(s) = record
        && let Err(e) = super::records::persist(shared, &s).await
    {
        tracing::warn!(session, error = %e.message, "a filed memory was not noted in the session record");
    }
}

/// Redacts each memory (content, source, metadata strings) unless `allow_secrets`;
/// returns them with how many secrets each had. Before validation: what is validated and
/// stored is the redacted memory. On the blocking pool: a full batch is megabytes of
/// regex work.
async fn redacted(
    mut memories: Vec<NewMemory>,
    allow_secrets: bool,
) -> Result<(Vec<NewMemory>, Vec<usize>), ErrorObject> {
    let n = memories.len();
    if allow_secrets {
        // That secrets were kept, never which (memory contents stay out of the log).
        tracing::info!(memories = n, "remember: secrets kept as given (allow_secrets)");
        return Ok((memories, vec![0; n]));
    }
    let (memories, counts) = tokio::task::spawn_blocking(move || {
        let counts: Vec<usize> = memories.iter_mut().map(amber_tiers::redact::redact_memory).collect();
        (memories, counts)
    })
    .await
    .map_err(|e| ErrorObject::new(ErrorKind::Internal, format!("redaction failed: {e}")))?;
    let total: usize = counts.iter().sum();
    if total > 0 {
        tracing::info!(redacted = total, memories = n, "remember: secrets redacted");
    }
    Ok((memories, counts))
}

/// Files memories on the side of each one's scope (local, or the team database), in
/// one transaction per side, in `lane`; results in the order given.
pub(crate) async fn remember_routed(
    shared: &Arc<Shared>,
    memories: Vec<NewMemory>,
    lane: crate::rpc::Lane,
) -> Result<Vec<amber_ipc::protocol::RememberResult>, ErrorObject> {
    let n = memories.len();
    let mut out: Vec<Option<amber_ipc::protocol::RememberResult>> = vec![None; n];
    for (side, indices, part) in crate::route::split_batch(shared, memories)? {
        let done = crate::rpc::write_in_lane(shared, &side, WriteOp::Remember(part), lane).await?;
        for (i, r) in indices.into_iter().zip(remembered(done)) {
            out[i] = Some(r);
        }
    }
    Ok(out.into_iter().flatten().collect())
}

pub(crate) async fn remember_batch(
    shared: &Arc<Shared>,
    peer: Peer,
    p: RememberBatchParams,
) -> Result<RememberBatchResult, ErrorObject> {
    if p.memories.is_empty() || p.memories.len() > MAX_BATCH {
        return Err(invalid(format!(
            "remember_batch takes 1 to {MAX_BATCH} memories, got {}",
            p.memories.len()
        )));
    }
    if p.allow_secrets {
        crate::person_log::person_only(shared, peer, "allow_secrets", crate::person_log::Undo::Reversible)?;
    }
    if let Some(tool) = &p.tool {
        amber_core::check_label("tool", tool, 128).map_err(|e| invalid(e.to_string()))?;
    }
    // Another tool's memory brought in by an agent is `external`, whatever it asks
    // (`amber import --from mem0 --trust person` run by an agent): only the person vouches.
    let external = p.external
        || (p.tool.as_deref().is_some_and(|t| t.starts_with("import:"))
            && peer.writer_trust() != Trust::Person);
    let (mut memories, counts) = redacted(p.memories, p.allow_secrets).await?;
    validate_all(&memories)?;
    person_only_kinds(peer, &memories)?;
    if external {
        external_kinds(&memories)?;
    }
    stamp_writes(shared, peer, &mut memories);
    if external || p.tool.is_some() {
        restamp(&mut memories, external, p.tool.as_deref());
    }
    let held = super::dispute::hold_back(shared, peer, &mut memories).await?;
    let lane = crate::rpc::Lane::of(peer, memories.len());
    let mut results = remember_routed(shared, memories, lane).await?;
    super::dispute::link(shared, &mut results, held).await;
    for (r, n) in results.iter_mut().zip(counts) {
        r.redacted = n;
    }
    Ok(amber_ipc::protocol::RememberBatchResult { results })
}

pub(crate) async fn recall(
    shared: &Arc<Shared>,
    peer: Peer,
    p: RecallParams,
) -> Result<RecallResult, ErrorObject> {
    let mut q = p.query();
    q.validate().map_err(|e| invalid(e.to_string()))?;
    let unscoped = q.clone();
    let session = match &p.session_id {
        Some(id) => Some(shared.sessions.get(id).ok_or_else(|| not_found(id))?),
        None => None,
    };
    let reader = Reader::new(peer, session.clone());
    let wait = crate::rpc::Fresh::of(p.fresh);
    let (lead_scope, lead_also) = (q.scope.clone(), q.also.clone());
    // Another agent's mail and diaries are left out for an agent: ask for a few more.
    let k = q.k;
    if !matches!(reader, Reader::Person) {
        q.k = k.saturating_add(k / 2 + 5);
    }
    let Routed { mut hits, fresh, team_unavailable, degraded } =
        recall_routed(shared, q, wait, false).await?;
    hits.retain(|h| reader.may_read(&h.memory));
    hits.truncate(k);
    if hits.iter().any(|h| amber_core::document::is_chunk(&h.memory.metadata)) {
        hits = tokio::task::spawn_blocking(move || {
            super::places::mark(&mut hits);
            hits
        })
        .await
        .map_err(|e| ErrorObject::new(ErrorKind::Internal, format!("placing document hits failed: {e}")))?;
    }
    let leads = super::leads::leads_for(shared, &p.text, lead_scope, lead_also, |_| false).await?;
    let given_earlier: Vec<amber_tiers::session::Served> = match &session {
        Some(s) => hits.iter().filter_map(|h| s.served_earlier(&h.memory.id).cloned()).collect(),
        None => Vec::new(),
    };
    let disputed = super::dispute::disputed(shared, hits.iter().map(|h| h.memory.id.clone()).collect()).await;
    let elsewhere = match hits.is_empty() && !unscoped.scopes().is_empty() && unscoped.floor {
        true => elsewhere(shared, &reader, unscoped).await?,
        false => Vec::new(),
    };
    Ok(RecallResult { hits, fresh, given_earlier, leads, team_unavailable, degraded, disputed, elsewhere })
}

/// The scopes outside a query's own that hold good matches (above the relevance floor)
/// that `reader` may read, best first: where to look when the asked scopes hold none.
async fn elsewhere(
    shared: &Arc<Shared>,
    reader: &Reader,
    mut q: amber_core::Query,
) -> Result<Vec<amber_core::Scope>, ErrorObject> {
    let asked: Vec<amber_core::Scope> = q.scopes().into_iter().cloned().collect();
    q.scope = None;
    q.also.clear();
    q.k = 20;
    let Routed { hits, .. } = recall_routed(shared, q, crate::rpc::Fresh::Skip, true).await?;
    let mut out: Vec<amber_core::Scope> = Vec::new();
    for h in hits.iter().filter(|h| reader.may_read(&h.memory)) {
        let s = &h.memory.scope;
        if !asked.iter().any(|a| s.is_within(a)) && !out.contains(s) {
            out.push(s.clone());
        }
    }
    out.truncate(5);
    Ok(out)
}

/// What a recall over both sides found.
pub(crate) struct Routed {
    /// One ranking of both sides' hits.
    pub hits: Vec<amber_core::Hit>,
    /// Whether the indexes of every side searched were fresh.
    pub fresh: bool,
    /// Why the team scopes were not searched, when the team database was away and the
    /// local part answered alone.
    pub team_unavailable: Option<String>,
    /// Why the hits were ranked without vectors (the embedding model is away), if so.
    pub degraded: Option<String>,
}

/// A recall over the local store and, for team scopes, the team database, merged into
/// one ranking. While the team database is away, the local part answers alone and the
/// result says why the team scopes were not searched; a query that names only team
/// scopes answers `team_unavailable` instead, unless `lenient` (a session's candidates).
pub(crate) async fn recall_routed(
    shared: &Arc<Shared>,
    q: amber_core::Query,
    wait: crate::rpc::Fresh,
    lenient: bool,
) -> Result<Routed, ErrorObject> {
    let k = q.k;
    let (local_q, team_q) = match &shared.team {
        Some(team) => crate::route::split_query(team, &q),
        None => (Some(q.clone()), None),
    };
    let only_team = local_q.is_none();
    let mut fresh = wait != crate::rpc::Fresh::Skip;
    let mut team_unavailable = None;
    let mut local_hits = Vec::new();
    if let Some(lq) = local_q {
        fresh &= crate::rpc::wait_fresh_on(shared, &shared.local(), wait).await;
        local_hits = read(shared, move |e| e.recall(&lq)).await?;
    }
    let mut degraded = shared.local().engine.vectors_away();
    let mut team_hits = Vec::new();
    if let (Some(tq), Some(team)) = (team_q, &shared.team) {
        let side = match team.side() {
            Ok(s) => Some(s),
            Err(e) if only_team && !lenient => return Err(e),
            Err(e) => {
                team_unavailable = Some(e.message);
                None
            }
        };
        if let Some(side) = side {
            fresh &= crate::rpc::wait_fresh_on(shared, &side, wait).await;
            let engine = side.engine.clone();
            match read_on(shared, &side, move |e| e.recall(&tq)).await {
                Ok(hits) => {
                    team_hits = hits;
                    degraded = degraded.or_else(|| engine.vectors_away());
                }
                Err(e) if e.kind() == Some(ErrorKind::TeamUnavailable) && (lenient || !only_team) => {
                    team_unavailable = Some(e.message);
                }
                Err(e) => return Err(e),
            }
        }
    }
    fresh &= degraded.is_none();
    Ok(Routed { hits: crate::route::merge_hits(local_hits, team_hits, k), fresh, team_unavailable, degraded })
}

pub(crate) async fn forget(
    shared: &Arc<Shared>,
    peer: Peer,
    p: IdParams,
) -> Result<MemoryResult, ErrorObject> {
    let (sides, away) = shared.id_sides();
    // What this caller may not read (another agent's mail or diary) it cannot forget.
    let reader = Reader::new(peer, None);
    for side in &sides {
        let id = p.id.clone();
        if read_on(shared, side, move |e| e.get(&id)).await?.is_some_and(|m| !reader.may_read(&m)) {
            return Err(ErrorObject::new(ErrorKind::NotFound, format!("no memory with id {}", p.id)));
        }
    }
    for side in sides {
        if let WriteDone::Forgot(Some(memory)) =
            write_on(shared, &side, WriteOp::Forget(p.id.clone())).await?
        {
            return Ok(MemoryResult { memory: *memory });
        }
    }
    Err(away.unwrap_or_else(|| ErrorObject::new(ErrorKind::NotFound, format!("no memory with id {}", p.id))))
}

/// `purge`: a forgotten memory's content deleted for good. While an agent session is
/// live it is deferred (`crate::purge_due`: `unforget` still undoes it for a day), unless
/// `now` comes from a caller at a terminal in its own lineage.
pub(crate) async fn purge(
    shared: &Arc<Shared>,
    peer: Peer,
    p: PurgeParams,
) -> Result<PurgeResult, ErrorObject> {
    let live = crate::person_log::person_only(shared, peer, "purge", crate::person_log::Undo::Irreversible)?;
    if live && p.now && (!peer.tty || peer.detached) {
        return Err(ErrorObject::new(
            ErrorKind::NotPermitted,
            "purge --now while an agent session is live needs your own terminal; without --now the purge is done in a day",
        ));
    }
    if live && !p.now {
        let (side, id) = super::scope::resolve_id(shared, p.id.as_str()).await?;
        let m = crate::rpc::read_on(shared, &side, move |e| e.get(&id))
            .await?
            .ok_or_else(|| ErrorObject::new(ErrorKind::NotFound, format!("no memory with id {}", p.id)))?;
        if m.forgotten_at.is_none() {
            return Err(ErrorObject::new(
                ErrorKind::NotForgotten,
                "purge deletes forgotten memories only: forget it first",
            ));
        }
        let due = crate::purge_due::defer(&shared.config.data_dir, &m.id).map_err(|e| {
            ErrorObject::new(ErrorKind::Internal, format!("cannot note the deferred purge: {e}"))
        })?;
        return Ok(PurgeResult { id: m.id, purged: false, due_at: Some(due) });
    }
    let (sides, away) = shared.id_sides();
    for side in sides {
        if let WriteDone::Purged(true) = write_on(shared, &side, WriteOp::Purge(p.id.clone())).await? {
            return Ok(PurgeResult { id: p.id, purged: true, due_at: None });
        }
    }
    Err(away.unwrap_or_else(|| ErrorObject::new(ErrorKind::NotFound, format!("no memory with id {}", p.id))))
}

/// `unforget`: a forgotten memory back, as it was (content, scope, type, author,
/// session, addressing, metadata with its origin and trust; its time kept as its event
/// time), filed anew (a new seq; its outcome log starts over). Only a person undoes a
/// forget, so an agent cannot bring back what a person forgot.
pub(crate) async fn unforget(
    shared: &Arc<Shared>,
    peer: Peer,
    p: IdParams,
) -> Result<MemoryResult, ErrorObject> {
    crate::person_log::person_only(shared, peer, "unforget", crate::person_log::Undo::Reversible)?;
    let (side, id) = super::scope::resolve_id(shared, p.id.as_str()).await?;
    let m = crate::rpc::read_on(shared, &side, move |e| e.get(&id))
        .await?
        .ok_or_else(|| ErrorObject::new(ErrorKind::NotFound, format!("no memory with id {}", p.id)))?;
    if m.forgotten_at.is_none() {
        return Err(invalid(format!("memory {} is not forgotten", m.id)));
    }
    let again = NewMemory {
        content: m.content.clone(),
        scope: m.scope.clone(),
        kind: m.kind,
        source: m.source.clone(),
        author: m.author.clone(),
        session_id: m.session_id.clone(),
        event_time: Some(m.event_time.unwrap_or(m.created_at)),
        metadata: m.metadata.clone(),
        to: m.to.clone(),
        reply_to: m.reply_to.clone(),
        supersedes: m.supersedes.clone(),
    };
    remember_routed(shared, vec![again], crate::rpc::Lane::Open).await?;
    let id = m.id.clone();
    let memory = crate::rpc::read_on(shared, &side, move |e| e.get(&id)).await?.ok_or_else(|| {
        ErrorObject::new(ErrorKind::Internal, format!("memory {} not found after unforget", m.id))
    })?;
    Ok(MemoryResult { memory })
}

pub(crate) async fn links(shared: &Arc<Shared>, p: IdParams) -> Result<LinksResult, ErrorObject> {
    let id = p.id.clone();
    let links = read(shared, move |e| e.links_of(&id)).await?;
    Ok(LinksResult { links })
}

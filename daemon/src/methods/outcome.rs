//! The outcome methods: `outcome` (what came of relying on a memory), a session's
//! manifest at `session_end`, `outcomes` (a memory's log), `unarchive`, `archived`, and
//! `audit` (claims with no served record, served memories never reported).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use amber_core::origin::Trust;
use amber_core::{Basis, MemoryId, Outcome, Report, ReportKind, now_millis};
use amber_ipc::protocol::{
    ArchivedParams, ArchivedResult, AuditParams, AuditResult, ErrorKind, ErrorObject, GetParams,
    ManifestEntry, ManifestResult, MemoryResult, OutcomeParams, OutcomesParams, OutcomesResult,
    StandingResult, UnbackedClaim, Unreported,
};
use amber_tiers::session::Session;

use super::scope::resolve_id;
use crate::peer::Peer;
use crate::rpc::{invalid, read, read_on};
use crate::state::Shared;
use crate::team::Side;

/// The most sessions `audit` reads.
const MAX_AUDIT_SESSIONS: usize = 10_000;

fn not_a_memory(id: &MemoryId) -> ErrorObject {
    ErrorObject::new(ErrorKind::NotFound, format!("no live memory with id {id}"))
}

/// Logs a word and returns the memory as it stands.
async fn report(
    shared: &Arc<Shared>,
    (side, id): (Side, MemoryId),
    r: Report,
) -> Result<amber_core::Memory, ErrorObject> {
    let key = id.clone();
    crate::rpc::write_with_on(shared, &side, move |e| e.report(&key, r))
        .await?
        .ok_or_else(|| not_a_memory(&id))
}

/// `outcome`: a word on a memory. A person's (the command line, outside any agent) counts
/// in full; an agent's counts in full only when its session was served the memory, else
/// half, and never archives on its own (see `amber_core::standing::Basis`).
pub(crate) async fn outcome(
    shared: &Arc<Shared>,
    peer: Peer,
    p: OutcomeParams,
) -> Result<MemoryResult, ErrorObject> {
    let id = resolve_id(shared, &p.memory_id).await?;
    // What this caller may not read (another agent's mail or diary) it cannot report on.
    let reader = super::reader::Reader::of(shared, peer, p.session_id.as_deref()).await?;
    let key = id.1.clone();
    if read_on(shared, &id.0, move |e| e.get(&key)).await?.is_some_and(|m| !reader.may_read(&m)) {
        return Err(not_a_memory(&id.1));
    }
    let (agent, served) = match &p.session_id {
        Some(s) => {
            let (session, _) = super::records::find(shared, s).await?.ok_or_else(|| {
                ErrorObject::new(ErrorKind::SessionNotFound, format!("no session with id {s:?}"))
            })?;
            (Some(session.agent.clone()), session.was_served(&id.1))
        }
        None => (p.agent.clone(), false),
    };
    let basis = if peer.writer_trust() == Trust::Person {
        Basis::Person
    } else if served {
        served_basis(shared, agent.as_deref())
    } else {
        Basis::Unserved
    };
    let r = Report {
        kind: ReportKind::Outcome,
        result: Some(p.result),
        session_id: p.session_id,
        agent,
        // A note is the agent's words: redacted like everything else it files.
        note: p.note.map(|n| amber_tiers::redact::redact(&n).0),
        at: now_millis(),
        basis: Some(basis),
    };
    let memory = report(shared, id, r).await?;
    Ok(MemoryResult { memory })
}

/// The basis of a word from a session that was served the memory: a registered agent's
/// (its token was checked at `session_start`) counts as that agent's, any other as the one
/// reporter every unregistered name shares (`amber_core::standing::fold`).
fn served_basis(shared: &Shared, agent: Option<&str>) -> Basis {
    match agent {
        Some(a) if super::agents::is_registered(shared, a) => Basis::Served,
        _ => Basis::ServedUnregistered,
    }
}

/// Applies a session's manifest: every line is logged with the session and its agent.
/// A line naming no live memory is refused (and listed); the others are applied. A used
/// line without a result takes the sign of the session's reward, when it has one (the
/// same arithmetic as a line with that result: a run's reward flows the same way).
pub(crate) async fn apply_manifest(
    shared: &Arc<Shared>,
    session: &Session,
    manifest: Vec<ManifestEntry>,
    reward: Option<f32>,
) -> Result<ManifestResult, ErrorObject> {
    let from_reward = reward.and_then(|r| {
        if r > 0.0 {
            Some(Outcome::Success)
        } else if r < 0.0 {
            Some(Outcome::Failure)
        } else {
            None
        }
    });
    // The session's agent is registered or not for every line alike: asked once.
    let basis_if_served = served_basis(shared, Some(&session.agent));
    let mut out = ManifestResult::default();
    for line in manifest {
        if !line.used && line.result.is_some() {
            out.refused.push(format!("{}: a result is given for a memory not used", line.memory_id));
            continue;
        }
        let id = match resolve_id(shared, &line.memory_id).await {
            Ok(id) => id,
            Err(e) => {
                out.refused.push(format!("{}: {}", line.memory_id, e.message));
                continue;
            }
        };
        let served_here = session.was_served(&id.1);
        if !line.used && !served_here {
            // "Served but not used" needs the serving: otherwise any session could wear a
            // memory down by saying it did not use it.
            out.refused
                .push(format!("{}: not served to this session, so not reported unused", line.memory_id));
            continue;
        }
        let r = Report {
            kind: if line.used { ReportKind::Used } else { ReportKind::Unused },
            result: if line.used { line.result.or(from_reward) } else { None },
            session_id: Some(session.id.clone()),
            agent: Some(session.agent.clone()),
            note: None,
            at: now_millis(),
            basis: Some(if served_here { basis_if_served } else { Basis::Unserved }),
        };
        match report(shared, id, r).await {
            Ok(m) => out.applied.push(StandingResult::from(&m)),
            Err(e) => out.refused.push(format!("{}: {}", line.memory_id, e.message)),
        }
    }
    Ok(out)
}

/// `outcomes`: a memory's standing and log, for a reader who may read the memory
/// (another agent's mail or diary is `not_found` to an agent, as with `get`).
pub(crate) async fn outcomes(
    shared: &Arc<Shared>,
    peer: Peer,
    p: OutcomesParams,
) -> Result<OutcomesResult, ErrorObject> {
    let reader = super::reader::Reader::of(shared, peer, p.session_id.as_deref()).await?;
    let (side, id) = resolve_id(shared, &p.memory_id).await?;
    let key = id.clone();
    let (memory, reports) = read_on(shared, &side, move |e| Ok((e.get(&key)?, e.reports(&key)?))).await?;
    let memory = memory.filter(|m| reader.may_read(m)).ok_or_else(|| not_a_memory(&id))?;
    Ok(OutcomesResult { memory, reports })
}

pub(crate) async fn unarchive(
    shared: &Arc<Shared>,
    peer: Peer,
    p: GetParams,
) -> Result<MemoryResult, ErrorObject> {
    let reader = super::reader::Reader::of(shared, peer, p.session_id.as_deref()).await?;
    let (side, id) = resolve_id(shared, &p.id).await?;
    let key = id.clone();
    if read_on(shared, &side, move |e| e.get(&key)).await?.is_some_and(|m| !reader.may_read(&m)) {
        return Err(not_a_memory(&id));
    }
    let key = id.clone();
    let memory = crate::rpc::write_with_on(shared, &side, move |e| e.unarchive(&key, None)).await?;
    Ok(MemoryResult { memory: memory.ok_or_else(|| not_a_memory(&id))? })
}

/// `set_trust`: a person promotes a memory (a capture they have read) or demotes one.
pub(crate) async fn set_trust(
    shared: &Arc<Shared>,
    peer: crate::peer::Peer,
    p: amber_ipc::protocol::SetTrustParams,
) -> Result<MemoryResult, ErrorObject> {
    crate::person_log::person_only(
        shared,
        peer,
        "setting a memory's trust",
        crate::person_log::Undo::Reversible,
    )?;
    let (side, id) = resolve_id(shared, &p.id).await?;
    let (key, trust) = (id.clone(), p.trust);
    let got = crate::rpc::write_with_on(shared, &side, move |e| {
        e.set_trust(&key, trust, amber_core::origin::SetBy::Person)
    })
    .await?;
    let (memory, changed) = got.ok_or_else(|| not_a_memory(&id))?;
    if changed {
        tracing::info!(memory = %memory.id, trust = trust.as_str(), door = peer.door.as_str(), "trust set by a person");
    }
    Ok(MemoryResult { memory })
}

pub(crate) async fn archived(
    shared: &Arc<Shared>,
    peer: Peer,
    p: ArchivedParams,
) -> Result<ArchivedResult, ErrorObject> {
    let reader = super::reader::Reader::new(peer, None);
    let limit = p.limit.unwrap_or(50);
    if limit == 0 || limit > 1000 {
        return Err(invalid(format!("limit must be 1 to 1000, got {limit}")));
    }
    let mut memories = read(shared, move |e| e.archived(p.scope.as_ref(), limit)).await?;
    // Another agent's mail and diary stay theirs.
    memories.retain(|m| reader.may_read(m));
    Ok(ArchivedResult { memories })
}

/// `audit`: over the most recent sessions, successes claimed for memories the session
/// was never served, and memories served in an ended session that it never reported on
/// (by an outcome or a manifest line).
pub(crate) async fn audit(
    shared: &Arc<Shared>,
    peer: Peer,
    p: AuditParams,
) -> Result<AuditResult, ErrorObject> {
    let n = p.sessions.unwrap_or(200);
    if n == 0 || n > MAX_AUDIT_SESSIONS {
        return Err(invalid(format!("sessions must be 1 to {MAX_AUDIT_SESSIONS}, got {n}")));
    }
    let rows = read(shared, move |e| e.recent_sessions(n)).await?;
    // The person's own commands are the person's to read.
    let person_actions = if peer.writer_trust() == Trust::Person {
        crate::person_log::recent(&shared.config.data_dir, 50)
    } else {
        Vec::new()
    };
    let mut out =
        AuditResult { sessions: 0, unbacked_successes: Vec::new(), unreported: Vec::new(), person_actions };
    for row in rows {
        let Ok(session) = serde_json::from_str::<Session>(&row.record) else {
            tracing::warn!(session = %row.id, "audit: a stored session record does not parse");
            continue;
        };
        out.sessions += 1;
        let id = session.id.clone();
        let reports = read(shared, move |e| e.session_reports(&id)).await?;
        let served: HashMap<&MemoryId, i64> = session.served.iter().map(|s| (&s.id, s.at)).collect();
        let mut reported: HashSet<&MemoryId> = HashSet::new();
        for (memory, r) in &reports {
            reported.insert(memory);
            if r.result == Some(Outcome::Success) && !served.contains_key(memory) {
                out.unbacked_successes.push(UnbackedClaim {
                    memory_id: memory.clone(),
                    session_id: session.id.clone(),
                    agent: r.agent.clone(),
                    at: r.at,
                });
            }
        }
        if session.ended_at.is_some() {
            let mut listed = HashSet::new();
            for s in &session.served {
                if !reported.contains(&s.id) && listed.insert(&s.id) {
                    out.unreported.push(Unreported {
                        memory_id: s.id.clone(),
                        session_id: session.id.clone(),
                        agent: session.agent.clone(),
                        served_at: s.at,
                    });
                }
            }
        }
    }
    Ok(out)
}

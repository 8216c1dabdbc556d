//! The scope methods: `resolve_scope` (the one resolver every client asks), `scopes`,
//! `scope_move`, `memory_move` (one memory), `memories` (a scope page by page), and `get`
//! by an id or a prefix of one.

use std::sync::Arc;

use amber_engine::{MoveOne, PrefixMatch};
use amber_ipc::protocol::{
    DEFAULT_PAGE, ErrorKind, ErrorObject, GetParams, MAX_PAGE, MIN_ID_PREFIX, MemoriesParams, MemoriesResult,
    MemoryMoveParams, MemoryResult, MemorySummary, MovedEntry, ResolveScopeParams, ScopeEntry,
    ScopeMoveParams, ScopeMoveResult, ScopesResult,
};
use amber_store::ListFilter;
use amber_tiers::scope::Resolved;

use crate::methods::reader::Reader;
use crate::peer::Peer;
use crate::rpc::{invalid, read, read_on, write_on};
use crate::state::Shared;
use crate::team::Side;
use crate::writer::{WriteDone, WriteOp};

/// Resolves a working directory and notes the root its project scope stands for. Its
/// `search` list is the scope, `user` and the team scopes ([`Shared::search_also`]).
pub(crate) async fn resolve(shared: &Arc<Shared>, cwd: &std::path::Path) -> Result<Resolved, ErrorObject> {
    if !(cwd.is_absolute() && cwd.is_dir()) {
        return Err(invalid(format!("cwd must be an existing absolute directory: {}", cwd.display())));
    }
    let mut r = amber_tiers::scope::resolve_here(cwd);
    r.search = std::iter::once(r.scope.clone()).chain(shared.search_also(&r.scope)).collect();
    if let Some(root) = r.root.clone() {
        let scope = r.scope.clone();
        // Best effort: a failure to note the root does not fail the resolution.
        if let Err(e) = crate::rpc::write_with(shared, move |e| e.note_scope_root(&scope, &root)).await {
            tracing::warn!(error = %e.message, "project root not noted");
        }
    }
    Ok(r)
}

pub(crate) async fn resolve_method(
    shared: &Arc<Shared>,
    p: ResolveScopeParams,
) -> Result<amber_tiers::scope::Resolved, ErrorObject> {
    resolve(shared, &p.cwd).await
}

pub(crate) async fn list(
    shared: &Arc<Shared>,
    _: amber_ipc::protocol::NoParams,
) -> Result<ScopesResult, ErrorObject> {
    let mut scopes = read(shared, |e| e.scopes()).await?;
    // The team's scopes too, when its database answers.
    if let Some(side) = shared.team.as_ref().and_then(|t| t.side_if_open())
        && let Ok(team) = read_on(shared, &side, |e| e.scopes()).await
    {
        scopes.extend(team);
    }
    let scopes = scopes
        .into_iter()
        .map(|s| ScopeEntry { scope: s.scope, memories: s.memories, root: s.root })
        .collect();
    Ok(ScopesResult { scopes })
}

pub(crate) async fn move_method(
    shared: &Arc<Shared>,
    peer: crate::peer::Peer,
    p: ScopeMoveParams,
) -> Result<ScopeMoveResult, ErrorObject> {
    crate::person_log::person_only(shared, peer, "scope_move", crate::person_log::Undo::Reversible)?;
    one_side(shared, &p.from, &p.to)?;
    if p.from == p.to || p.to.is_within(&p.from) || p.from.is_within(&p.to) {
        return Err(invalid(format!("cannot move {} into {}: one lies within the other", p.from, p.to)));
    }
    let side = shared.side_for(&p.from)?;
    let WriteDone::Moved(moved) =
        write_on(shared, &side, WriteOp::MoveScope { from: p.from, to: p.to }).await?
    else {
        return Err(ErrorObject::new(ErrorKind::Internal, "unexpected write result"));
    };
    let memories: Vec<MovedEntry> = moved
        .into_iter()
        .map(|m| MovedEntry {
            old_id: m.old_id,
            new_id: m.memory.id,
            scope: m.memory.scope,
            merged: m.merged,
        })
        .collect();
    let merged = memories.iter().filter(|m| m.merged).count();
    Ok(ScopeMoveResult { moved: memories.len(), merged, memories })
}

/// Refuses a move between the local store and the team database.
fn one_side(shared: &Shared, from: &amber_core::Scope, to: &amber_core::Scope) -> Result<(), ErrorObject> {
    if shared.is_team(from) != shared.is_team(to) {
        return Err(invalid(format!(
            "cannot move {from} to {to}: a move stays on one side (both local, or both team scopes); \
             moving memories into or out of the team database is not supported"
        )));
    }
    Ok(())
}

/// `memory_move`: one memory re-filed into another scope, as `scope_move` re-files each
/// of a scope's (the store's one step for both). A person's.
pub(crate) async fn move_memory(
    shared: &Arc<Shared>,
    peer: Peer,
    p: MemoryMoveParams,
) -> Result<MovedEntry, ErrorObject> {
    crate::person_log::person_only(
        shared,
        peer,
        "moving a memory to another scope",
        crate::person_log::Undo::Reversible,
    )?;
    let (side, id) = resolve_id(shared, &p.id).await?;
    let key = id.clone();
    let Some(m) = read_on(shared, &side, move |e| e.get(&key)).await? else {
        return Err(ErrorObject::new(ErrorKind::NotFound, format!("no memory with id {id}")));
    };
    one_side(shared, &m.scope, &p.to)?;
    let forgotten = || invalid(format!("memory {id} is forgotten: unforget it before moving it"));
    let already = || invalid(format!("memory {id} is already in {}: nothing to move", p.to));
    if m.forgotten_at.is_some() {
        return Err(forgotten());
    }
    if m.scope == p.to {
        return Err(already());
    }
    let (key, to) = (id.clone(), p.to.clone());
    let moved = match crate::rpc::write_with_on(shared, &side, move |e| e.move_memory(&key, &to)).await? {
        MoveOne::Moved(moved) => *moved,
        // Changed between the read and the write.
        MoveOne::NotFound => {
            return Err(ErrorObject::new(ErrorKind::NotFound, format!("no memory with id {id}")));
        }
        MoveOne::Forgotten => return Err(forgotten()),
        MoveOne::AlreadyThere => return Err(already()),
    };
    tracing::info!(memory = %moved.old_id, to = %moved.memory.id, door = peer.door.as_str(), "memory moved by a person");
    Ok(MovedEntry {
        old_id: moved.old_id,
        new_id: moved.memory.id,
        scope: moved.memory.scope,
        merged: moved.merged,
    })
}

/// `memories`: one scope's memories that the filters keep (filing, type, trust), newest
/// filed first, a page at a time (the cursor is the last seq of the page, or an offset),
/// counted when asked. A person's: it reads every memory of the scope, mail and diaries
/// included.
pub(crate) async fn memories(
    shared: &Arc<Shared>,
    peer: Peer,
    p: MemoriesParams,
) -> Result<MemoriesResult, ErrorObject> {
    crate::person_log::person_only(
        shared,
        peer,
        "listing a scope's memories",
        crate::person_log::Undo::Irreversible,
    )?;
    let limit = p.limit.unwrap_or(DEFAULT_PAGE);
    if limit == 0 || limit > MAX_PAGE {
        return Err(invalid(format!("limit must be 1 to {MAX_PAGE}, got {limit}")));
    }
    let side = shared.side_for(&p.scope)?;
    let filter = ListFilter {
        filings: p.filings,
        kind: p.kind,
        trust: p.trust,
        include_forgotten: p.include_forgotten,
    };
    let (scope, before, offset, count) = (p.scope, p.before, p.offset.unwrap_or(0), p.count);
    let wanted = filter.filings.clone();
    let (mut page, tally) = read_on(shared, &side, move |e| {
        e.read_store(|s| {
            // One more than the page tells whether an older page follows.
            let page = s.scope_page(&scope, &filter, before, offset, limit + 1)?;
            let tally = if count { Some(s.scope_tally(&scope, &filter)?) } else { None };
            Ok((page, tally))
        })
    })
    .await?;
    let next = (page.len() > limit).then(|| {
        page.truncate(limit);
        page.last().map(|m| m.seq)
    });
    let memories = page.iter().map(MemorySummary::of).collect();
    // The tally counts every filing under the other filters: the total is the filings kept.
    let total = tally
        .as_ref()
        .map(|t| t.iter().filter(|(f, _)| wanted.is_empty() || wanted.contains(f)).map(|(_, n)| n).sum());
    let by_filing = tally.map(|t| t.into_iter().collect());
    Ok(MemoriesResult { memories, next: next.flatten(), total, by_filing })
}

/// `get`: a whole id (a moved one says where it went), or a prefix naming one memory.
/// `get`: a memory by id or prefix, if its reader may read it (another agent's mail or
/// diary is `not_found` to an agent, as if it did not exist).
pub(crate) async fn get(shared: &Arc<Shared>, peer: Peer, p: GetParams) -> Result<MemoryResult, ErrorObject> {
    let reader = Reader::of(shared, peer, p.session_id.as_deref()).await?;
    let (side, id) = resolve_id(shared, &p.id).await?;
    match read_on(shared, &side, move |e| e.get(&id)).await? {
        Some(memory) if reader.may_read(&memory) => Ok(MemoryResult { memory }),
        _ => Err(ErrorObject::new(ErrorKind::NotFound, format!("no memory with id {}", p.id.trim()))),
    }
}

/// The memory an id or a prefix of one names (every method that takes an id from a
/// person or an agent accepts the 8 digits briefings show), and the side that holds it:
/// the local store first, then the team database. A moved id says where it went; a
/// prefix naming several lists them.
pub(crate) async fn resolve_id(
    shared: &Arc<Shared>,
    given: &str,
) -> Result<(Side, amber_core::MemoryId), ErrorObject> {
    let given = given.trim().to_ascii_lowercase();
    if given.len() < MIN_ID_PREFIX || given.len() > 32 || !given.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(invalid(format!(
            "id must be a memory id or a prefix of one ({MIN_ID_PREFIX} to 32 hex digits), got {:?}",
            given.chars().take(40).collect::<String>()
        )));
    }
    let (sides, away) = shared.id_sides();
    let mut found: Vec<(Side, amber_core::MemoryId)> = Vec::new();
    let mut many: Vec<amber_core::MemoryId> = Vec::new();
    for side in sides.iter().cloned() {
        let g = given.clone();
        match read_on(shared, &side, move |e| e.lookup_prefix(&g)).await? {
            PrefixMatch::One(id) => found.push((side, id)),
            PrefixMatch::Many(ids) => many.extend(ids),
            PrefixMatch::None => {}
        }
    }
    if found.is_empty()
        && many.is_empty()
        && let Some(e) = away
    {
        return Err(e);
    }
    if many.is_empty() && found.len() == 1 {
        return Ok(found.remove(0));
    }
    many.extend(found.into_iter().map(|(_, id)| id));
    if !many.is_empty() {
        let listed: Vec<String> = many.iter().take(5).map(|i| i.to_string()).collect();
        return Err(invalid(format!(
            "the prefix {given} names more than one memory ({}{}); give more digits",
            listed.join(", "),
            if many.len() > 5 { ", ..." } else { "" }
        )));
    }
    // A moved id is remembered by the side that moved it (a team memory's move, in the
    // team database).
    if let Ok(full) = given.parse::<amber_core::MemoryId>() {
        for side in &sides {
            let id = full.clone();
            if let Some(to) = read_on(shared, side, move |e| e.moved_to(&id)).await? {
                return Err(ErrorObject::new(
                    ErrorKind::NotFound,
                    format!("memory {given} was moved to another scope; its id is now {to}"),
                ));
            }
        }
    }
    Err(ErrorObject::new(ErrorKind::NotFound, format!("no memory with id {given}")))
}

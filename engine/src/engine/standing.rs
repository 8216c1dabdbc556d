//! Standing in the engine: reporting outcomes, supersession, the archive, and the prior
//! that a memory's weight and age put on its fused score (one rule, see
//! [`Engine::standing_prior`]). The store keeps the log and derives the weight; the
//! engine keeps the standings that differ from a new memory's in memory, in step with
//! every change, for recall.

use std::collections::HashMap;

use amber_core::standing::{age_factor, prior};
use amber_core::{Memory, MemoryId, Millis, Report, ReportKind, Scope, now_millis};
use amber_store::{MemoryStore, Refusal, StandingRow};

use super::{Engine, EngineWriter, read, write};
use crate::{Error, Result};

/// Standings that differ from a new memory's, by seq.
pub(super) type Standings = HashMap<u64, StandingRow>;

pub(super) fn load(store: &dyn MemoryStore) -> Result<Standings> {
    Ok(store.standings()?.into_iter().map(|s| (s.seq, s)).collect())
}

/// What a hit's standing did to its score.
pub(super) struct Applied {
    pub(super) filing: amber_core::Filing,
    pub(super) filing_factor: f32,
    pub(super) weight: f32,
    pub(super) age: f32,
    pub(super) prior: f32,
    pub(super) archived: bool,
    pub(super) successes: u32,
    pub(super) failures: u32,
}

impl Applied {
    pub(super) fn evidence(&self) -> amber_core::Standing {
        amber_core::Standing {
            weight: self.weight,
            age_factor: self.age,
            prior: self.prior,
            successes: self.successes,
            failures: self.failures,
            archived: self.archived,
            filing: Some(self.filing),
            filing_factor: self.filing_factor,
        }
    }
}

impl Engine {
    /// Notes changed standings in the in-memory view.
    fn note_standings(&self, rows: Vec<StandingRow>) {
        let mut map = write(&self.standing);
        for row in rows {
            if row.forgotten || row.is_default() {
                map.remove(&row.seq);
            } else {
                map.insert(row.seq, row);
            }
        }
    }

    /// Every word logged on a memory, oldest first.
    pub fn reports(&self, id: &MemoryId) -> Result<Vec<Report>> {
        self.read(|s| s.reports(id))
    }

    /// The words logged in a session, oldest first.
    pub fn session_reports(&self, session_id: &str) -> Result<Vec<(MemoryId, Report)>> {
        self.read(|s| s.session_reports(session_id))
    }

    /// Archived live memories within a scope (or all), newest archived first.
    pub fn archived(&self, scope: Option<&Scope>, limit: usize) -> Result<Vec<Memory>> {
        self.read(|s| s.archived(scope, limit))
    }

    /// Checks the `supersedes` of memories about to be filed: every target must exist
    /// and not be a lifefact.
    pub(super) fn check_supersedes(&self, memories: &[amber_core::NewMemory]) -> Result<()> {
        for m in memories.iter().filter(|m| !m.supersedes.is_empty()) {
            m.validate()?;
            match self.read(|s| s.supersession_targets(&m.supersedes))? {
                Ok(_) => {}
                Err(Refusal::NotFound(id)) => return Err(Error::SupersedesUnknown { id }),
                Err(Refusal::Lifefact(id)) => return Err(Error::SupersedesLifefact { id }),
            }
        }
        Ok(())
    }

    /// Records the supersessions of newly filed invalidations (called after their
    /// commit, on the write connection the caller holds).
    pub(super) fn apply_supersessions(&self, store: &mut dyn MemoryStore, seqs: &[u64]) -> Result<()> {
        if seqs.is_empty() {
            return Ok(());
        }
        let now = now_millis();
        let rows = store.apply_supersessions(seqs, now)?;
        let retired: Vec<(u64, MemoryId)> =
            rows.iter().filter_map(|r| r.superseded_by.clone().map(|by| (r.seq, by))).collect();
        self.note_standings(rows);
        self.invalidate_superseded_facts(store, &retired, now)
    }

    /// Knowledge-graph facts whose sources are all superseded now end their window, with
    /// a reason naming the invalidation (nothing is deleted; a later retraction does not
    /// reopen them: the graph keeps its history).
    fn invalidate_superseded_facts(
        &self,
        store: &mut dyn MemoryStore,
        retired: &[(u64, MemoryId)],
        now: Millis,
    ) -> Result<()> {
        for (seq, by) in retired {
            let Some(memory) = store.get_by_seqs(&[*seq])?.pop() else { continue };
            for fact in store.kg_facts_sourced_by(&memory.id)? {
                let mut all_superseded = true;
                for source in &fact.sources {
                    if store.get(source)?.is_some_and(|m| m.superseded_by.is_none() && !m.is_forgotten()) {
                        all_superseded = false;
                        break;
                    }
                }
                if all_superseded {
                    let reason = format!("its sources were superseded by invalidation {by}");
                    store.kg_invalidate(fact.id, now, Some(&reason), now)?;
                    tracing::info!(fact = fact.id, invalidation = %by, "fact invalidated: its sources were superseded");
                }
            }
        }
        Ok(())
    }

    /// After a memory was forgotten: what it superseded stands again (unless another
    /// invalidation retires it).
    pub(super) fn after_forget(&self, store: &mut dyn MemoryStore, memory: &Memory) -> Result<()> {
        write(&self.standing).remove(&memory.seq);
        if memory.supersedes.is_empty() {
            return Ok(());
        }
        let rows = store.refresh_targets(memory.seq, now_millis())?;
        self.note_standings(rows);
        Ok(())
    }

    /// True when a memory is archived.
    pub fn is_archived(&self, seq: u64) -> bool {
        read(&self.standing).get(&seq).is_some_and(|s| s.archived_at.is_some())
    }

    /// The prior a memory's standing and filing put on its fused score:
    /// `(1 − s + s × weight × age) × (1 − f + f × filing prior)`, with `s` the standing
    /// strength ([`crate::EngineOptions::standing_strength`]), `age` its type's lifespan
    /// since it was last relied on (else since its time), never below
    /// [`crate::EngineOptions::age_floor`], `f` the filing strength
    /// ([`crate::EngineOptions::filing_strength`]) and the filing prior
    /// [`amber_core::Filing::prior`].
    pub(super) fn standing_prior(
        &self,
        seq: u64,
        docs: &super::docs::Docs,
        now: Millis,
        map: &Standings,
    ) -> Applied {
        let row = map.get(&seq);
        let weight = row.map_or(1.0, |r| r.weight);
        let anchor = match (row.and_then(|r| r.used_at), docs.time.get(&seq).copied()) {
            (Some(u), Some(t)) => Some(u.max(t)),
            (u, t) => u.or(t),
        };
        let age = match (docs.kind.get(&seq).copied(), anchor) {
            (Some(k), Some(a)) => age_factor(k, a, now, self.opts.age_floor),
            _ => 1.0,
        };
        let filing = docs.filing_of(seq);
        let f = self.opts.filing_strength.clamp(0.0, 1.0);
        let filing_factor = 1.0 - f + f * filing.prior();
        Applied {
            filing,
            filing_factor,
            weight,
            age,
            prior: prior(weight, age, self.opts.standing_strength) * filing_factor,
            archived: row.is_some_and(|r| r.archived_at.is_some()),
            successes: row.map_or(0, |r| r.successes),
            failures: row.map_or(0, |r| r.failures),
        }
    }
}

impl EngineWriter<'_> {
    /// Sets a memory's trust by a person's word (`amber trust`, the web view), or lowers it
    /// by the daemon's ([`amber_core::origin::SetBy`]): the memory, and whether it
    /// changed; None when no memory has this id.
    pub fn set_trust(
        &mut self,
        id: &MemoryId,
        trust: amber_core::origin::Trust,
        by: amber_core::origin::SetBy,
    ) -> Result<Option<(Memory, bool)>> {
        let out = self.store().set_trust(id, trust, by, now_millis())?;
        // Raised to the person's, it ranks as promoted (lowered, as what it was).
        if let Some((m, true)) = &out
            && !m.is_forgotten()
        {
            write(&self.docs).set_filing(m.seq, amber_core::Filing::of(m));
        }
        Ok(out)
    }

    /// Logs a word on a memory (an outcome, a manifest line, a run's reward, an
    /// unarchive) and recomputes its standing. Returns the memory as it stands now, or
    /// None when no live memory has this id.
    pub fn report(&mut self, id: &MemoryId, report: Report) -> Result<Option<Memory>> {
        let rows = self.store().report(id, &report, now_millis())?;
        let Some(rows) = rows else { return Ok(None) };
        self.note_standings(rows);
        self.get(id)
    }

    /// Restores an archived memory: its weight rises to at least 0.30 (one failure does
    /// not archive it again). A memory an invalidation supersedes cannot be restored so:
    /// [`Error::Superseded`] names the invalidation (supersede or forget that one).
    pub fn unarchive(&mut self, id: &MemoryId, agent: Option<String>) -> Result<Option<Memory>> {
        match self.get(id)? {
            None => return Ok(None),
            Some(m) if m.is_forgotten() => return Ok(None),
            Some(m) => {
                if let Some(by) = m.superseded_by {
                    return Err(Error::Superseded { id: id.clone(), by });
                }
            }
        }
        let report = Report {
            kind: ReportKind::Unarchive,
            result: None,
            session_id: None,
            agent,
            note: None,
            at: now_millis(),
            basis: None,
        };
        self.report(id, report)
    }

    /// At open: supersessions a crash left unrecorded (between an invalidation's commit
    /// and their recording) are recorded. A failure is logged, not fatal: the next open
    /// tries again.
    pub(super) fn apply_unapplied_supersessions(&mut self) {
        let done = self.read(|s| s.unapplied_supersessions()).and_then(|pending| {
            let (e, store) = self.parts();
            e.apply_supersessions(store, &pending)
        });
        if let Err(e) = done {
            tracing::warn!(error = %e, "supersessions not recorded yet; retried at the next open");
        }
    }
}

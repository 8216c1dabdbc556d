//! Words on served notes: the judge's pass over ended sessions that were given notes
//! (one model call a session, a word per note: applied, helped), `note_verdict` (the
//! person's word, which overrides the judge's), and the tallies they add up to
//! (`amber_tiers::advice::tally`), which `advice_list`, `advice_show`, `get_advice` and
//! `amber doctor` show.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use amber_core::advice::{NoteVerdict, Serving, Tally, VerdictBy};
use amber_core::{Run, Scope, now_millis};
use amber_engine::Engine;
use amber_ipc::protocol::{ErrorKind, ErrorObject, NoteVerdictParams, NoteVerdictResult};
use amber_tiers::advice::judge::judge_notes;
use amber_tiers::advice::tally::tally;
use amber_tiers::advice::{Learner, ModelError};
use amber_tiers::session::Session;

use super::model_work::model_failed;
use crate::peer::Peer;
use crate::rpc::blocking;
use crate::rpc::{BlockingWriter, engine_error, invalid};
use crate::state::Shared;

/// The most characters of a session's captures shown to the judge.
const SESSION_TRACE_CHARS: usize = 6_000;

/// An ended session as a run for the judge (`judge.rs` judges one nobody rewarded; the
/// notes pass reads its record): its captures as the trace.
pub(crate) fn session_as_run(engine: &Engine, s: &Session) -> Result<Run, ErrorObject> {
    let captured = engine.session_memories(&s.id).map_err(engine_error)?;
    let mut trace = String::new();
    for m in &captured {
        if trace.chars().count() >= SESSION_TRACE_CHARS {
            break;
        }
        trace.push_str(&m.content);
        trace.push('\n');
    }
    Ok(Run {
        id: format!("session:{}", s.id),
        scope: s.scope.clone(),
        agent: s.agent.clone(),
        task: format!("an agent session of {} in {} ({} events)", s.agent, s.scope, s.events),
        trace,
        used: Vec::new(),
        outcome: s.end_reason.clone(),
        advice: Vec::new(),
        created_at: s.ended_at.unwrap_or(s.started_at),
        reward: None,
    })
}

/// A stored session, when it is there and parses.
fn session(engine: &Engine, id: &str) -> Result<Option<Session>, ErrorObject> {
    Ok(engine.get_session(id).map_err(engine_error)?.and_then(|row| serde_json::from_str(&row.record).ok()))
}

/// The reward given to a session: its own, else the newest reward of the runs it was
/// recorded as.
fn session_reward(engine: &Engine, s: &Session) -> Result<Option<f32>, ErrorObject> {
    if s.reward.is_some() {
        return Ok(s.reward);
    }
    for id in s.run.runs.iter().rev() {
        if let Some(r) = engine.run(id).map_err(engine_error)?.and_then(|r| r.reward) {
            return Ok(Some(r));
        }
    }
    Ok(None)
}

/// At most `cap` sessions of one voice (agent) a day, by the UTC day they ended (0: no
/// cap): what was judged before counts.
pub(crate) struct DayCap {
    cap: u32,
    used: HashMap<(String, i64), u32>,
}

impl DayCap {
    pub(crate) fn new(cap: u32) -> DayCap {
        DayCap { cap, used: HashMap::new() }
    }

    /// The voice's count for the UTC day of `at`.
    fn day(&mut self, agent: &str, at: i64) -> &mut u32 {
        self.used.entry((agent.to_string(), at.div_euclid(86_400_000))).or_default()
    }

    /// Counts a session judged before.
    pub(crate) fn count(&mut self, agent: &str, at: i64) {
        *self.day(agent, at) += 1;
    }

    /// True, and counted, while the voice's day has room.
    pub(crate) fn take(&mut self, agent: &str, at: i64) -> bool {
        let cap = self.cap;
        let n = self.day(agent, at);
        if cap != 0 && *n >= cap {
            return false;
        }
        *n += 1;
        true
    }
}

/// The stored sessions of `scope` and below that ended by `cutoff`, oldest end first
/// (of the most recent 1,000).
pub(crate) fn ended(
    engine: &Engine,
    scope: Option<&Scope>,
    cutoff: i64,
) -> Result<Vec<Session>, ErrorObject> {
    let mut out: Vec<Session> = engine
        .recent_sessions(1_000)
        .map_err(engine_error)?
        .into_iter()
        .filter_map(|row| serde_json::from_str::<Session>(&row.record).ok())
        .filter(|s| s.ended_at.is_some_and(|t| t <= cutoff) && scope.is_none_or(|w| s.scope.is_within(w)))
        .collect();
    out.sort_by(|a, b| a.ended_at.cmp(&b.ended_at).then_with(|| a.id.cmp(&b.id)));
    Ok(out)
}

/// The tallies of the notes of `scope` and below (every scope's when None).
pub(crate) fn tallies(engine: &Engine, scope: Option<&Scope>, bar: u32) -> Result<Vec<Tally>, ErrorObject> {
    let servings = engine.servings(scope, 0).map_err(engine_error)?;
    let words = engine.note_verdicts(scope).map_err(engine_error)?;
    // A session's reward counts only for a note the judge found applied (the tally's
    // rule): only those sessions are read.
    let mut rewards = HashMap::new();
    let mut seen = std::collections::HashSet::new();
    for w in words.iter().filter(|w| w.by == VerdictBy::Judge && w.applied == Some(true)) {
        if seen.insert(w.session_id.clone())
            && let Some(s) = session(engine, &w.session_id)?
            && let Some(r) = session_reward(engine, &s)?
        {
            rewards.insert(w.session_id.clone(), r);
        }
    }
    Ok(tally(&servings, &words, &rewards, bar))
}

/// The text of a served note's version (a skill's current text), for the judge.
fn note_text(engine: &Engine, s: &Serving) -> Result<String, ErrorObject> {
    if let Some(name) = s.situation.strip_prefix(super::compile::SKILL_PREFIX) {
        let skills = super::compile::skills(engine, &s.scope).map_err(engine_error)?;
        return Ok(skills
            .into_iter()
            .find(|(_, k)| k.name == name)
            .map(|(_, k)| k.text())
            .unwrap_or_else(|| format!("(the skill {name}, no longer kept)")));
    }
    let notes = engine.notes(&s.scope, Some(&s.situation), true).map_err(engine_error)?;
    Ok(notes
        .into_iter()
        .find(|n| n.version == s.version && n.agent == s.agent)
        .map(|n| n.text)
        .unwrap_or_else(|| format!("(the note for {}, version {}, no longer kept)", s.situation, s.version)))
}

/// Ended sessions of `scope` and below, at least `delay_ms` old, served notes the judge
/// has not yet spoken on: each with those servings.
pub(crate) fn due(
    engine: &Engine,
    scope: Option<&Scope>,
    delay_ms: i64,
    per_day: u32,
    limit: usize,
) -> Result<Vec<(Session, Vec<Serving>)>, ErrorObject> {
    let words: Vec<NoteVerdict> = engine
        .note_verdicts(scope)
        .map_err(engine_error)?
        .into_iter()
        .filter(|v| v.by == VerdictBy::Judge)
        .collect();
    let judged: std::collections::HashSet<(&str, &str, &str)> =
        words.iter().map(|v| (v.session_id.as_str(), v.scope.as_str(), v.situation.as_str())).collect();
    let mut by_session: BTreeMap<String, Vec<Serving>> = BTreeMap::new();
    for s in engine.servings(scope, 0).map_err(engine_error)? {
        if !judged.contains(&(s.session_id.as_str(), s.scope.as_str(), s.situation.as_str())) {
            by_session.entry(s.session_id.clone()).or_default().push(s);
        }
    }
    // The sessions judged before count toward their voice's day.
    let mut cap = DayCap::new(per_day);
    if per_day != 0 {
        let before: std::collections::BTreeSet<&str> = words.iter().map(|v| v.session_id.as_str()).collect();
        for id in before {
            if let Some(s) = session(engine, id)? {
                cap.count(&s.agent, s.ended_at.unwrap_or(s.started_at));
            }
        }
    }
    let cutoff = now_millis() - delay_ms;
    let mut candidates = Vec::new();
    for (id, servings) in by_session {
        if let Some(s) = session(engine, &id)?
            && s.ended_at.is_some_and(|t| t <= cutoff)
        {
            candidates.push((s, servings));
        }
    }
    candidates.sort_by(|a, b| a.0.ended_at.cmp(&b.0.ended_at).then_with(|| a.0.id.cmp(&b.0.id)));
    Ok(candidates
        .into_iter()
        .filter(|(s, _)| cap.take(&s.agent, s.ended_at.unwrap_or(s.started_at)))
        .take(limit)
        .collect())
}

/// Words the judge gave, and the sessions it failed on (with why).
pub(crate) type Judged = (Vec<NoteVerdict>, Vec<(String, String)>);

/// The judge's words on the notes served in up to `limit` due sessions: one call a
/// session. A malformed reply is noted (tried again next pass); a failed call stops the
/// pass with what was judged before it kept.
pub(crate) fn judge_pass(
    engine: &Engine,
    learner: &Learner,
    writer: &BlockingWriter,
    scope: Option<&Scope>,
    delay_ms: i64,
    per_day: u32,
    limit: usize,
) -> Result<Judged, ErrorObject> {
    let (mut judged, mut failed) = (Vec::new(), Vec::new());
    for (s, servings) in due(engine, scope, delay_ms, per_day, limit)? {
        let mut record = session_as_run(engine, &s)?.trace;
        for line in &s.run.trace {
            record.push_str(line);
            record.push('\n');
        }
        if let Some(outcome) = &s.end_reason {
            record.push_str(&format!("ended: {outcome}\n"));
        }
        let texts = servings.iter().map(|v| note_text(engine, v)).collect::<Result<Vec<_>, _>>()?;
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        match judge_notes(learner, &record, &refs) {
            Ok(words) => {
                let at = now_millis();
                let verdicts: Vec<NoteVerdict> = servings
                    .into_iter()
                    .zip(words)
                    .map(|(v, w)| NoteVerdict {
                        session_id: v.session_id,
                        scope: v.scope,
                        situation: v.situation,
                        agent: v.agent,
                        version: v.version,
                        voice: s.agent.clone(),
                        applied: w.applied,
                        helped: w.helped,
                        by: VerdictBy::Judge,
                        reason: w.reason,
                        model: Some(learner.name()),
                        at,
                    })
                    .collect();
                let stored = verdicts.clone();
                writer.write(move |e| e.put_note_verdicts(&stored))?;
                judged.extend(verdicts);
            }
            Err(ModelError::Malformed(reason)) => failed.push((s.id.clone(), reason)),
            Err(e) => return Err(model_failed(e)),
        }
    }
    Ok((judged, failed))
}

/// `note_verdict`: the person's word on a note a session was served.
pub(crate) async fn note_verdict(
    shared: &Arc<Shared>,
    peer: Peer,
    p: NoteVerdictParams,
) -> Result<NoteVerdictResult, ErrorObject> {
    crate::person_log::person_only(
        shared,
        peer,
        "a word on a served note",
        crate::person_log::Undo::Reversible,
    )?;
    let reason = p.reason.clone().unwrap_or_default();
    if reason.chars().count() > 300 {
        return Err(invalid("reason must be at most 300 characters"));
    }
    let engine = shared.engine.clone();
    let writer = BlockingWriter::new(shared);
    let bar = shared.config.learn.evidence_bar;
    let result = blocking(move || {
        let s = session(&engine, &p.session_id)?.ok_or_else(|| crate::live::not_found(&p.session_id))?;
        let servings: Vec<Serving> = engine
            .servings(None, 0)
            .map_err(engine_error)?
            .into_iter()
            .filter(|v| v.session_id == s.id && v.situation == p.situation)
            .filter(|v| p.scope.as_ref().is_none_or(|scope| &v.scope == scope))
            .collect();
        let serving = match servings.as_slice() {
            [one] => one.clone(),
            [] => {
                return Err(ErrorObject::new(
                    ErrorKind::NotFound,
                    format!("session {} was not served a note for {}", s.id, p.situation),
                ));
            }
            _ => return Err(invalid("the session was served this situation from two scopes: give `scope`")),
        };
        let verdict = NoteVerdict {
            session_id: serving.session_id.clone(),
            scope: serving.scope.clone(),
            situation: serving.situation.clone(),
            agent: serving.agent.clone(),
            version: serving.version,
            voice: s.agent.clone(),
            applied: p.applied.as_bool(),
            helped: p.helped.as_bool(),
            by: VerdictBy::Person,
            reason,
            model: None,
            at: now_millis(),
        };
        let stored = verdict.clone();
        writer.write(move |e| e.put_note_verdicts(std::slice::from_ref(&stored)))?;
        let tally = tallies(&engine, Some(&serving.scope), bar)?
            .into_iter()
            .find(|t| {
                t.scope == serving.scope && t.situation == serving.situation && t.agent == serving.agent
            })
            .ok_or_else(|| ErrorObject::new(ErrorKind::Internal, "a note with a word has no tally"))?;
        Ok(NoteVerdictResult { verdict, tally })
    })
    .await?;
    Ok(result)
}

//! The fixture as the store receives it: every memory built by [`Stamper`] with the
//! filing it must get, dated on the fixture's clock and put in the order use would file
//! it (the documentation tree and the skills when they were ingested and compiled, each
//! curated memory on its day, each replayed session's captures in order with what the
//! agent filed during it).

use amber_core::filing::Filing;
use amber_core::{MemoryId, Millis};
use amber_tiers::capture::CaptureConfig;
use amber_tiers::scope::project_scope;
use anyhow::Context;

use super::filing::{Planned, Stamper, compiled};
use super::fixture::{By, Fixture, Where};

pub(crate) const DAY: Millis = 86_400_000;
const HOUR: Millis = 3_600_000;
const MINUTE: Millis = 60_000;

/// The stamper of a fixture's project.
pub(crate) fn stamper(f: &Fixture) -> anyhow::Result<Stamper> {
    Ok(Stamper {
        project: project_scope(std::path::Path::new(&f.project.root)),
        user: "user".parse().context("the user scope")?,
        machine: f.project.machine.clone(),
        agent: f.project.agent.clone(),
        transcripts: f.project.transcripts.clone(),
        capture: CaptureConfig::default(),
    })
}

/// The daemon's id of a replayed session.
pub(crate) fn session_id(name: &str) -> String {
    format!("cc-tidemark-{name}")
}

/// When a replayed session starts: its day, from 09:00 (the fixture's now is 17:00 of
/// day 0), two hours apart in the order the file lists that day's sessions.
fn session_start(f: &Fixture, name: &str) -> Millis {
    let Some(s) = f.session(name) else { return f.now() };
    let rank = f.sessions.iter().filter(|o| o.day == s.day).position(|o| o.id == name).unwrap_or(0);
    f.now() - i64::from(s.day) * DAY - 8 * HOUR + rank as i64 * 2 * HOUR
}

/// The fixture ids of the curated memories and their memory ids.
pub(crate) type Ids = Vec<(String, MemoryId)>;

/// The fixture's memories in filing order, and the fixture ids of the curated ones
/// (for supersession and the briefing's preferences).
pub(crate) fn fixture_plan(f: &Fixture, st: &Stamper) -> anyhow::Result<(Vec<Planned>, Ids)> {
    let now = f.now();
    let mut timed: Vec<(Millis, Planned)> = Vec::new();
    // The documentation tree, ingested by the person from the project.
    let ingested = now - i64::from(f.project.docs_ingested_days_ago) * DAY;
    for d in &f.docs {
        let path = format!("{}/{}", f.project.root, d.rel);
        let trust = amber_core::origin::Trust::Person;
        for m in st.chunks((&d.rel, &path), &d.text, &d.pieces, (trust, ingested)) {
            timed.push((
                ingested,
                Planned { memory: m, filing: Filing::Document, role: "document", promote: false },
            ));
        }
    }
    // The skills compiled from it.
    for s in &f.skills {
        let at = now - i64::from(s.days_ago) * DAY + HOUR;
        let cited: Vec<(&str, &str)> = s
            .cites
            .iter()
            .filter_map(|c| f.docs.iter().find(|d| d.rel == *c).map(|d| (c.as_str(), d.text.as_str())))
            .collect();
        let skill = compiled(s, &st.project, &cited, at)?;
        timed.push((
            at,
            Planned { memory: st.skill(&skill), filing: Filing::Skill, role: "skill", promote: false },
        ));
    }
    // The replayed sessions' captures.
    for s in &f.sessions {
        let start = session_start(f, &s.id);
        for (i, c) in s.captures.iter().enumerate() {
            let at = start + i as i64 * 4 * MINUTE;
            let m = st.capture(&c.text, (&session_id(&s.id), &c.source), at).with_context(|| {
                format!("session {}: capture {} is outside the capture limits", s.id, i + 1)
            })?;
            timed.push((at, Planned { memory: m, filing: Filing::Raw, role: "session", promote: false }));
        }
    }
    // The curated memories.
    let mut ids: Ids = Vec::new();
    for c in &f.memories {
        let scope = match c.scope {
            Where::Project => &st.project,
            Where::User => &st.user,
        };
        let day = now - i64::from(c.days_ago) * DAY;
        let (at, mut memory, filing, promote) = match (c.by, &c.session) {
            (By::Person, _) => {
                (day - 5 * HOUR, st.person(&c.content, c.kind, scope, day - 5 * HOUR), Filing::Person, false)
            }
            (By::Agent, Some(s)) => {
                let at = session_start(f, s) + 50 * MINUTE;
                (at, st.agent(&c.content, c.kind, scope, (at, &session_id(s))), Filing::Agent, false)
            }
            (By::Agent, None) => {
                let at = day - 4 * HOUR;
                let session = session_id(&format!("older-{}", c.id));
                (at, st.agent(&c.content, c.kind, scope, (at, &session)), Filing::Agent, false)
            }
            (By::Promoted, s) => {
                let name = s.as_deref().unwrap_or_default();
                let at = session_start(f, name) + 45 * MINUTE;
                let m = st
                    .capture(&c.content, (&session_id(name), "transcript"), at)
                    .with_context(|| format!("memory {}: outside the capture limits", c.id))?;
                (at, m, Filing::Promoted, true)
            }
        };
        memory.supersedes = c
            .supersedes
            .iter()
            .filter_map(|old| ids.iter().find(|(id, _)| id == old).map(|(_, m)| m.clone()))
            .collect();
        ids.push((c.id.clone(), memory.id()));
        let role = if c.preference { "preference" } else { "curated" };
        timed.push((at, Planned { memory, filing, role, promote }));
    }
    // Oldest first; what was filed at the same moment keeps the order above.
    timed.sort_by_key(|(at, _)| *at);
    Ok((timed.into_iter().map(|(_, p)| p).collect(), ids))
}

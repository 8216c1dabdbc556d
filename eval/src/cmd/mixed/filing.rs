//! Memories built the way the daemon builds them at each door, with the metadata its own
//! functions stamp, so every memory has the filing (`amber_core::filing::Filing`) the
//! daemon would give it:
//!
//! - the person's `amber remember` (door `cli`, trust person), secrets redacted;
//! - an agent's MCP `remember` in its session (door `mcp`, agent named, trust agent);
//! - a hook's capture (`capture_text`: the capture limits and redaction of
//!   `amber_tiers::capture`, type `event` in the session, `captured`, trust external);
//! - `amber ingest` of a file (`amber_tiers::document::bounded`, a `doc` place per chunk,
//!   the chunk's locator line, trust person for the project's own files, external for a
//!   vendored tree);
//! - `amber compile` of a skill (type `pattern`, metadata `skill`, trust agent at most).
//!
//! A promoted memory is filed as a capture, then raised with `EngineWriter::set_trust` as
//! `amber trust ID person` does.

use amber_core::document::{self, DocChunk};
use amber_core::filing::Filing;
use amber_core::origin::{Door, Origin, Trust, stamp};
use amber_core::skill::{Skill, SourceRef};
use amber_core::{MemoryType, Millis, NewMemory, Scope};
use amber_tiers::capture::{CaptureConfig, Captured, capture};
use amber_tiers::document::Piece;
use amber_tiers::redact::redact_memory;
use serde_json::json;
use sha2::{Digest, Sha256};

/// A chunk's lines may be at most this long (the daemon's ingest: room for the locator).
const MAX_BODY_BYTES: usize = amber_core::MAX_CONTENT_BYTES - 4096;
/// The source `amber compile` files skills under.
const SKILL_SOURCE: &str = "amber:skill";

/// One memory to file, with the filing it must come out with.
#[derive(Debug, Clone)]
pub(crate) struct Planned {
    pub(crate) memory: NewMemory,
    pub(crate) filing: Filing,
    /// What it is in the report: `curated`, `preference`, `session`, `document`,
    /// `skill` (the fixture) or `filler:raw`, `filler:document`, `filler:agent`.
    pub(crate) role: &'static str,
    /// A capture the person then promotes (`amber trust ID person`).
    pub(crate) promote: bool,
}

/// Who is filing, where, and the stamps every door shares.
#[derive(Debug, Clone)]
pub(crate) struct Stamper {
    pub(crate) project: Scope,
    pub(crate) user: Scope,
    pub(crate) machine: String,
    pub(crate) agent: String,
    /// The transcript file a session's pieces name: `<folder>/<session>.jsonl`.
    pub(crate) transcripts: String,
    pub(crate) capture: CaptureConfig,
}

impl Stamper {
    fn origin(&self, door: Door) -> Origin {
        Origin { door: Some(door.as_str().into()), machine: Some(self.machine.clone()), ..Origin::default() }
    }

    /// The person's `amber remember` (the daemon's `stamp_writes` for the `cli` door).
    pub(crate) fn person(&self, content: &str, kind: MemoryType, scope: &Scope, time: Millis) -> NewMemory {
        let mut m = NewMemory::new(content).of_type(kind).in_scope(scope.clone());
        m.event_time = Some(time);
        redact_memory(&mut m);
        stamp(&mut m.metadata, &self.origin(Door::Cli), Door::Cli.writer_trust());
        m
    }

    /// An agent's MCP `remember`, which names the host's session.
    pub(crate) fn agent(
        &self,
        content: &str,
        kind: MemoryType,
        scope: &Scope,
        (time, session): (Millis, &str),
    ) -> NewMemory {
        let mut m = NewMemory::new(content).of_type(kind).in_scope(scope.clone());
        m.event_time = Some(time);
        m.author = Some(self.agent.clone());
        m.session_id = Some(session.to_string());
        redact_memory(&mut m);
        let origin = Origin {
            agent: Some(self.agent.clone()),
            session: Some(session.to_string()),
            ..self.origin(Door::Mcp)
        };
        stamp(&mut m.metadata, &origin, Door::Mcp.writer_trust());
        m
    }

    /// A hook's capture of a session's text (`capture_text`): None when the capture
    /// limits skip it. `source` is `transcript` or `tool:<Name>`.
    pub(crate) fn capture(
        &self,
        text: &str,
        (session, source): (&str, &str),
        time: Millis,
    ) -> Option<NewMemory> {
        let (text, redacted) = match capture(text, &self.capture) {
            Captured::File { text, redacted } => (text, redacted),
            Captured::Skip(_) => return None,
        };
        let source = match source {
            "transcript" => format!("claude-code:transcript:{}/{session}.jsonl", self.transcripts),
            other => format!("claude-code:{other}"),
        };
        let mut m = NewMemory::new(text).of_type(MemoryType::Event).in_scope(self.project.clone());
        m.event_time = Some(time);
        m.source = Some(source.clone());
        m.session_id = Some(session.to_string());
        m.author = Some(self.agent.clone());
        m.metadata = json!({ "captured": true, "redacted": redacted });
        let origin = Origin {
            agent: Some(self.agent.clone()),
            session: Some(session.to_string()),
            tool: Some(source),
            ..self.origin(Door::Hook)
        };
        stamp(&mut m.metadata, &origin, Trust::External);
        Some(m)
    }

    /// `amber ingest` of one file's pieces: `label` as shown (relative to the project
    /// root), `path` its absolute path, `file_text` the whole file (for its hash).
    pub(crate) fn chunks(
        &self,
        (label, path): (&str, &str),
        file_text: &str,
        pieces: &[Piece],
        (trust, time): (Trust, Millis),
    ) -> Vec<NewMemory> {
        if pieces.iter().any(|p| p.body.len() > MAX_BODY_BYTES) {
            return Vec::new();
        }
        let file_sha256 = hex::encode(Sha256::digest(file_text.as_bytes()));
        let origin = Origin { tool: Some("ingest".into()), ..self.origin(Door::Cli) };
        pieces
            .iter()
            .map(|p| {
                let place = DocChunk {
                    path: path.to_string(),
                    label: label.to_string(),
                    lines: [p.first, p.last],
                    sha256: hex::encode(Sha256::digest(p.body.as_bytes())),
                    file_sha256: file_sha256.clone(),
                    headings: p.headings.clone(),
                };
                let mut m = NewMemory::new(document::chunk_content(label, &p.headings, &p.body))
                    .in_scope(self.project.clone())
                    .of_type(MemoryType::Fact);
                m.source = Some(path.to_string());
                m.event_time = Some(time);
                m.metadata = json!({ document::DOC_KEY: place });
                stamp(&mut m.metadata, &origin, trust);
                redact_memory(&mut m);
                m
            })
            .collect()
    }

    /// `amber compile`'s memory of a skill citing the person's own documents: trust
    /// agent, the most a skill gets (a model wrote it).
    pub(crate) fn skill(&self, skill: &Skill) -> NewMemory {
        let mut m = NewMemory::new(format!(
            "Skill {} (version {}, compiled from documents)\n{}",
            skill.name,
            skill.version,
            skill.text()
        ))
        .in_scope(self.project.clone())
        .of_type(MemoryType::Pattern);
        m.source = Some(SKILL_SOURCE.into());
        m.event_time = Some(skill.created_at);
        m.metadata = json!({ amber_core::skill::SKILL_KEY: skill });
        let origin = Origin { tool: Some("compile".into()), ..self.origin(Door::Daemon) };
        stamp(&mut m.metadata, &origin, Trust::Agent);
        m
    }
}

/// A skill of the fixture, as compiled from the cited files (path, text).
pub(crate) fn compiled(
    spec: &super::fixture::SkillSpec,
    scope: &Scope,
    cited: &[(&str, &str)],
    created_at: Millis,
) -> anyhow::Result<Skill> {
    let skill = Skill {
        scope: scope.clone(),
        name: spec.name.clone(),
        version: 1,
        when: spec.when.clone(),
        steps: spec.steps.clone(),
        ifs: spec.ifs.clone(),
        cites: cited
            .iter()
            .map(|(path, text)| SourceRef {
                path: path.to_string(),
                sha256: hex::encode(Sha256::digest(text.as_bytes())),
            })
            .collect(),
        graph: spec.graph.clone(),
        model: "fixture:hand-written".into(),
        created_at,
    };
    skill.validate().map_err(|e| anyhow::anyhow!("skill {}: {e}", spec.name))?;
    Ok(skill)
}

//! The mixed-store fixture (`eval/fixtures/mixed/`, see its README): one project's
//! curated memories, a week of replayed agent sessions, its documentation tree, a few
//! compiled skills, and the questions asked of the store. Read from disk and checked
//! here: every reference resolves, every question's gold is in the fixture.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use amber_core::skill::StepGraph;
use amber_core::{Memory, MemoryType};
use amber_tiers::document::{DocKind, Piece, bounded, read as read_document};
use anyhow::{Context, bail};
use serde::Deserialize;

/// The project the fixture is about, and the fixture's clock.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Project {
    /// The project's directory name (the briefing's "recent work on ...").
    pub(crate) name: String,
    /// The project's root, as the daemon would resolve it (its scope derives from it).
    pub(crate) root: String,
    /// The fixture's now (RFC 3339): the end of the replayed week.
    pub(crate) now: String,
    /// The machine stamped in origins.
    pub(crate) machine: String,
    /// The agent of the replayed sessions.
    pub(crate) agent: String,
    /// The folder of the agent's transcripts (a capture's source names its file).
    pub(crate) transcripts: String,
    /// When the documentation tree was ingested and the skills compiled, days before now.
    pub(crate) docs_ingested_days_ago: u32,
}

/// Who filed a curated memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum By {
    /// The person, at the command line (`amber remember`).
    Person,
    /// The agent, on purpose (MCP `remember`).
    Agent,
    /// A raw capture the person vouched for (`amber trust ID person`).
    Promoted,
}

/// Which scope a curated memory lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Where {
    /// The project's scope.
    Project,
    /// `user`: true of the person in every project.
    User,
}

/// One curated memory (a line of `memories.jsonl`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Curated {
    pub(crate) id: String,
    #[serde(rename = "type")]
    pub(crate) kind: MemoryType,
    pub(crate) by: By,
    pub(crate) scope: Where,
    pub(crate) days_ago: u32,
    /// The replayed session it was filed in (the agent's, or the capture promoted).
    #[serde(default)]
    pub(crate) session: Option<String>,
    /// One of the person's standing preferences (measured in the briefing).
    #[serde(default)]
    pub(crate) preference: bool,
    /// Fixture ids of the memories this invalidation replaces.
    #[serde(default)]
    pub(crate) supersedes: Vec<String>,
    pub(crate) content: String,
}

/// One raw capture of a replayed session.
#[derive(Debug, Clone)]
pub(crate) struct Capture {
    /// `transcript` (a Stop hook's piece) or `tool:<Name>` (a PostToolUse capture).
    pub(crate) source: String,
    pub(crate) text: String,
}

/// One replayed agent session.
#[derive(Debug, Clone)]
pub(crate) struct Session {
    pub(crate) id: String,
    /// Days before now.
    pub(crate) day: u32,
    pub(crate) captures: Vec<Capture>,
}

/// One compiled skill, as `amber compile` would have written it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SkillSpec {
    pub(crate) name: String,
    pub(crate) days_ago: u32,
    pub(crate) when: String,
    pub(crate) steps: Vec<String>,
    #[serde(default)]
    pub(crate) ifs: Vec<String>,
    /// Paths of the documents it cites, relative to the project root.
    pub(crate) cites: Vec<String>,
    pub(crate) graph: StepGraph,
}

/// What answers a question: a curated memory (by the opening of its text) or a section
/// of a document (by path and heading; any chunk of it, its subsections included).
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(untagged, deny_unknown_fields)]
pub(crate) enum Gold {
    Memory { memory: String },
    Doc { doc: String, heading: String },
}

impl Gold {
    /// `curated` or `document`.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Gold::Memory { .. } => "curated",
            Gold::Doc { .. } => "document",
        }
    }

    /// True when `m` is (part of) this answer.
    pub(crate) fn matches(&self, m: &Memory) -> bool {
        match self {
            Gold::Memory { memory } => m.content.starts_with(memory.as_str()),
            Gold::Doc { doc, heading } => amber_core::document::chunk_of(&m.metadata).is_some_and(|c| {
                c.label == *doc
                    && (c.headings.iter().any(|h| h == heading)
                        || headings_in(amber_core::document::chunk_body(&m.content)).any(|h| h == *heading))
            }),
        }
    }
}

/// A question some memory of the fixture answers.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Answerable {
    pub(crate) id: String,
    pub(crate) question: String,
    /// Any of these answers it; the first one's kind is the question's.
    pub(crate) gold: Vec<Gold>,
}

/// A question nothing in the store answers.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Unanswerable {
    pub(crate) id: String,
    pub(crate) question: String,
}

/// `questions.json`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Questions {
    pub(crate) answerable: Vec<Answerable>,
    pub(crate) unanswerable: Vec<Unanswerable>,
    /// Opening prompts of new sessions, for the briefing (the overview, no prompt, too).
    pub(crate) openings: Vec<String>,
}

/// One file of the documentation tree, cut the way `amber ingest` cuts it.
#[derive(Debug, Clone)]
pub(crate) struct DocFile {
    /// Relative to the project root (the label a chunk shows).
    pub(crate) rel: String,
    pub(crate) text: String,
    pub(crate) pieces: Vec<Piece>,
}

/// The whole fixture.
#[derive(Debug, Clone)]
pub(crate) struct Fixture {
    pub(crate) project: Project,
    pub(crate) memories: Vec<Curated>,
    pub(crate) sessions: Vec<Session>,
    pub(crate) docs: Vec<DocFile>,
    pub(crate) skills: Vec<SkillSpec>,
    pub(crate) questions: Questions,
}

/// The fixture shipped in the repository.
pub(crate) fn default_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join("mixed")
}

impl Fixture {
    /// Reads and checks the fixture in `dir`.
    pub(crate) fn load(dir: &Path) -> anyhow::Result<Fixture> {
        let read = |name: &str| {
            std::fs::read_to_string(dir.join(name))
                .with_context(|| format!("reading {}", dir.join(name).display()))
        };
        let project: Project = serde_json::from_str(&read("project.json")?).context("project.json")?;
        let memories = read("memories.jsonl")?
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| serde_json::from_str(l).with_context(|| format!("memories.jsonl line {}", i + 1)))
            .collect::<anyhow::Result<Vec<Curated>>>()?;
        let sessions = parse_sessions(&read("sessions.txt")?)?;
        let skills: Vec<SkillSpec> = serde_json::from_str(&read("skills.json")?).context("skills.json")?;
        let questions: Questions =
            serde_json::from_str(&read("questions.json")?).context("questions.json")?;
        let docs = read_tree(&dir.join("repo"))?;
        let f = Fixture { project, memories, sessions, docs, skills, questions };
        f.check()?;
        Ok(f)
    }

    /// Every reference resolves and every gold is in the fixture, exactly once for a
    /// curated memory.
    fn check(&self) -> anyhow::Result<()> {
        chrono::DateTime::parse_from_rfc3339(&self.project.now).context("project.json: now")?;
        let days: HashMap<&str, u32> = self.sessions.iter().map(|s| (s.id.as_str(), s.day)).collect();
        if days.len() != self.sessions.len() {
            bail!("sessions.txt: a session id is used twice");
        }
        let mut seen: HashMap<&str, &Curated> = HashMap::new();
        for m in &self.memories {
            let at = format!("memory {}", m.id);
            if seen.insert(&m.id, m).is_some() {
                bail!("{at}: the id is used twice");
            }
            if let Some(s) = &m.session {
                match days.get(s.as_str()) {
                    None => bail!("{at}: no session {s}"),
                    Some(d) if *d != m.days_ago => {
                        bail!("{at}: filed {} days ago, its session {s} {d}", m.days_ago)
                    }
                    _ => {}
                }
            }
            match m.by {
                By::Promoted if m.kind != MemoryType::Event || m.session.is_none() => {
                    bail!("{at}: a promoted capture is an event of a session")
                }
                By::Agent if m.kind == MemoryType::Lifefact => {
                    bail!("{at}: only the person files a lifefact")
                }
                By::Agent | By::Person if m.kind == MemoryType::Event => {
                    bail!("{at}: an event filed on purpose would be a raw capture in a session")
                }
                _ => {}
            }
            if m.preference && !(m.by == By::Person && m.kind == MemoryType::Lifefact) {
                bail!("{at}: a standing preference is the person's lifefact");
            }
            for s in &m.supersedes {
                let Some(old) = seen.get(s.as_str()) else {
                    bail!("{at}: supersedes {s}, not filed before it")
                };
                if old.kind == MemoryType::Lifefact || m.kind != MemoryType::Invalidation {
                    bail!("{at}: only an invalidation supersedes, and never a lifefact");
                }
            }
        }
        let rels: HashSet<&str> = self.docs.iter().map(|d| d.rel.as_str()).collect();
        for s in &self.skills {
            if let Some(c) = s.cites.iter().find(|c| !rels.contains(c.as_str())) {
                bail!("skill {}: cites {c}, not in the tree", s.name);
            }
        }
        let mut ids = HashSet::new();
        let questions = self.questions.answerable.iter().map(|q| (&q.id, &q.question));
        for (id, q) in questions.chain(self.questions.unanswerable.iter().map(|q| (&q.id, &q.question))) {
            if !ids.insert(id) || q.trim().is_empty() {
                bail!("question {id}: the id is used twice or the question is empty");
            }
        }
        for q in &self.questions.answerable {
            if q.gold.is_empty() {
                bail!("question {}: no gold", q.id);
            }
            for g in &q.gold {
                match g {
                    Gold::Memory { memory } => {
                        let n =
                            self.memories.iter().filter(|m| m.content.starts_with(memory.as_str())).count();
                        if n != 1 || memory.chars().count() < 20 {
                            bail!("question {}: {n} curated memories open with {memory:?}", q.id);
                        }
                    }
                    Gold::Doc { doc, heading } => {
                        let file = self.docs.iter().find(|d| d.rel == *doc);
                        let found = file.is_some_and(|f| {
                            f.pieces.iter().any(|p| {
                                p.headings.iter().any(|h| h == heading)
                                    || headings_in(&p.body).any(|h| h == *heading)
                            })
                        });
                        if !found {
                            bail!("question {}: no section {heading:?} in {doc}", q.id);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The fixture's now, in milliseconds.
    pub(crate) fn now(&self) -> i64 {
        chrono::DateTime::parse_from_rfc3339(&self.project.now)
            .map(|t| t.timestamp_millis())
            .unwrap_or_default()
    }

    /// The session of a memory's replayed session id.
    pub(crate) fn session(&self, id: &str) -> Option<&Session> {
        self.sessions.iter().find(|s| s.id == id)
    }
}

/// Parses `sessions.txt`: `@@session ID day N` starts a session, `@@capture SOURCE` one
/// capture, whose text runs to the next `@@` line (trailing blank lines dropped).
/// Lines before the first session are comments.
pub(crate) fn parse_sessions(text: &str) -> anyhow::Result<Vec<Session>> {
    let mut out: Vec<Session> = Vec::new();
    let mut body: Option<(String, Vec<&str>)> = None;
    let close = |out: &mut Vec<Session>, body: &mut Option<(String, Vec<&str>)>| -> anyhow::Result<()> {
        if let Some((source, lines)) = body.take() {
            let text = lines.join("\n").trim_end().to_string();
            let s = out.last_mut().context("a capture before any session")?;
            if text.trim().is_empty() {
                bail!("session {}: an empty capture", s.id);
            }
            s.captures.push(Capture { source, text });
        }
        Ok(())
    };
    for (i, line) in text.lines().enumerate() {
        if let Some(rest) = line.strip_prefix("@@session ") {
            close(&mut out, &mut body)?;
            let words: Vec<&str> = rest.split_whitespace().collect();
            let [id, "day", n] = words[..] else { bail!("sessions.txt line {}: @@session ID day N", i + 1) };
            let day = n.parse().with_context(|| format!("sessions.txt line {}", i + 1))?;
            out.push(Session { id: id.to_string(), day, captures: Vec::new() });
        } else if let Some(source) = line.strip_prefix("@@capture ") {
            close(&mut out, &mut body)?;
            let source = source.trim();
            if !(source == "transcript" || source.starts_with("tool:")) {
                bail!("sessions.txt line {}: a capture's source is transcript or tool:NAME", i + 1);
            }
            body = Some((source.to_string(), Vec::new()));
        } else if let Some((_, lines)) = &mut body {
            lines.push(line);
        } else if !(line.trim().is_empty() || line.starts_with('#')) {
            bail!("sessions.txt line {}: text outside a capture", i + 1);
        }
    }
    close(&mut out, &mut body)?;
    if let Some(s) = out.iter().find(|s| s.captures.is_empty()) {
        bail!("session {} has no capture", s.id);
    }
    Ok(out)
}

/// The documentation tree under `root`, each file read and cut as `amber ingest` does.
fn read_tree(root: &Path) -> anyhow::Result<Vec<DocFile>> {
    let mut out = Vec::new();
    for path in walk(root)? {
        let (kind, text) = match read_document(&path) {
            Ok(r) => r,
            Err(e) => bail!("{}: not a document ({e:?})", path.display()),
        };
        let pieces = bounded(kind, &text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        let rel = path.strip_prefix(root)?.to_string_lossy().replace('\\', "/");
        debug_assert!(kind == DocKind::Markdown || !rel.ends_with(".md"));
        out.push(DocFile { rel, text, pieces });
    }
    if out.is_empty() {
        bail!("no document under {}", root.display());
    }
    Ok(out)
}

/// Every regular file under `root`, sorted by path, hidden entries skipped.
pub(crate) fn walk(root: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))?;
        for e in entries {
            let e = e?;
            if e.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let t = e.file_type()?;
            if t.is_dir() {
                stack.push(e.path());
            } else if t.is_file() {
                out.push(e.path());
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The titles of the ATX headings in a Markdown text, outside fenced code.
pub(crate) fn headings_in(text: &str) -> impl Iterator<Item = String> + '_ {
    let mut fenced = false;
    text.lines().filter_map(move |line| {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fenced = !fenced;
            return None;
        }
        if fenced || line.len() - t.len() > 3 {
            return None;
        }
        let level = t.chars().take_while(|&c| c == '#').count();
        let rest = &t[level..];
        ((1..=6).contains(&level) && (rest.is_empty() || rest.starts_with([' ', '\t'])))
            .then(|| rest.trim().trim_end_matches('#').trim_end().to_string())
    })
}

//! `compile`: a scope's chosen documents (`compile_sources`: path prefixes under the
//! project root, chosen by a person, never on by default) compiled by the `[learn]`
//! model into skills (`amber_tiers::advice::compile`).
//!
//! - **What is sent**: the chosen documents that were ingested (`amber ingest`) and are
//!   still on disk, read as they are now; only the new and changed ones (by SHA-256,
//!   against what was compiled last), plus the other documents a skill citing a changed
//!   one cites, unless `full`.
//! - **Skills are versioned memories**: a `pattern` in the scope, source `amber:skill`,
//!   its text the skill's When, Steps, If and Sources, metadata `skill` the whole skill
//!   and its step graph. A new version retires the last by an invalidation (metadata
//!   `skill_revision`; newest wins), so recall finds the current one and the history
//!   stays. A skill whose documents are all gone is retired the same way.
//! - **Trust**: a model wrote it, so at most `agent`; `external` when a document it
//!   cites is. Skills are served by `get_advice`, never briefed or interjected.
//! - **Recompiled on change**: an `ingest` that changes a chosen document starts a pass
//!   in the background (with a model configured).
//!
//! The settings live in the store's `meta` table under `compile:<scope>`.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use amber_core::origin::{Origin, Trust};
use amber_core::skill::Skill;
use amber_core::{Memory, MemoryType, NewMemory, Scope, now_millis};
use amber_engine::{Engine, EngineWriter};
use amber_ipc::protocol::{CompileParams, CompileResult, ErrorObject, SkillWritten};
use amber_tiers::advice::Learner;
use amber_tiers::advice::compile::{Limits, Source, compile, sources_to_recompile, stale};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::model_work::{learner, model_failed};
use crate::peer::Peer;
use crate::rpc::blocking;
use crate::rpc::{engine_error, invalid};
use crate::state::Shared;

/// The `source` of every skill memory of a scope.
pub(crate) const SKILL_SOURCE: &str = "amber:skill";
/// A skill's key where notes have situation keys (`get_advice`'s lines, its servings):
/// `skill:<name>`.
pub(crate) const SKILL_PREFIX: &str = "skill:";

/// What a scope's skills are compiled from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Kind {
    /// The chosen documents.
    #[default]
    Documents,
    /// The errors seen again and again (`compile_errors`).
    Errors,
}

/// A scope's compile settings and what was compiled last.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Settings {
    /// What the skills are compiled from.
    #[serde(default)]
    kind: Kind,
    /// The project root the prefixes are under.
    root: PathBuf,
    /// The chosen path prefixes, relative to the root.
    prefixes: Vec<String>,
    /// Path → SHA-256 of the text last compiled.
    #[serde(default)]
    compiled: BTreeMap<String, String>,
}

fn key(scope: &Scope) -> String {
    format!("compile:{scope}")
}

fn settings(e: &Engine, scope: &Scope) -> amber_engine::Result<Option<Settings>> {
    Ok(e.meta(&key(scope))?.and_then(|v| serde_json::from_str(&v).ok()))
}

fn save(e: &mut EngineWriter<'_>, scope: &Scope, s: &Settings) -> amber_engine::Result<()> {
    e.set_meta(&key(scope), &serde_json::to_string(s).unwrap_or_default())
}

pub(crate) async fn method(
    shared: &Arc<Shared>,
    peer: Peer,
    p: CompileParams,
) -> Result<CompileResult, ErrorObject> {
    let learner = learner(shared, p.cache.unwrap_or(shared.config.learn.cache))?;
    let cwd = match &p.cwd {
        Some(c) if c.is_absolute() && c.is_dir() => c.clone(),
        Some(c) => {
            return Err(invalid(format!("cwd must be an existing absolute directory: {}", c.display())));
        }
        None => return Err(invalid("compile needs cwd: the project whose documents to compile")),
    };
    let resolved = super::scope::resolve(shared, &cwd).await?;
    let scope = p.scope.clone().unwrap_or(resolved.scope);
    if shared.is_team(&scope) {
        return Err(invalid("compiling a team scope's documents is not supported yet"));
    }
    if let Some(kind) = &p.kind {
        let kind = match kind.as_str() {
            "documents" => Kind::Documents,
            "errors" => Kind::Errors,
            other => return Err(invalid(format!("kind must be documents or errors, got {other:?}"))),
        };
        crate::person_log::person_only(
            shared,
            peer,
            "choosing what is compiled into skills",
            crate::person_log::Undo::Reversible,
        )?;
        let root = resolved.root.clone().unwrap_or_else(|| cwd.clone());
        let scope = scope.clone();
        crate::rpc::write_with(shared, move |e| {
            let mut s = settings(e, &scope)?.unwrap_or_default();
            if s.kind != kind {
                s.compiled.clear();
            }
            if s.root.as_os_str().is_empty() {
                s.root = root;
            }
            s.kind = kind;
            save(e, &scope, &s)
        })
        .await?;
    }
    if let Some(prefixes) = &p.sources {
        crate::person_log::person_only(
            shared,
            peer,
            "choosing the documents compiled into skills",
            crate::person_log::Undo::Reversible,
        )?;
        let root = resolved.root.clone().ok_or_else(|| invalid("cwd is in no project (no .git above it)"))?;
        let root = std::fs::canonicalize(&root).unwrap_or(root);
        let prefixes = prefixes
            .iter()
            .map(|x| x.trim().trim_start_matches("./").to_string())
            .filter(|x| !x.is_empty())
            .map(|x| if x.contains("..") || x.starts_with('/') { Err(x) } else { Ok(x) })
            .collect::<Result<Vec<String>, String>>()
            .map_err(|x| invalid(format!("a source is a path prefix under the project root, got {x:?}")))?;
        let scope = scope.clone();
        crate::rpc::write_with(shared, move |e| {
            let mut s = settings(e, &scope)?.unwrap_or_default();
            if s.root != root {
                s.compiled.clear();
            }
            s.root = root;
            s.prefixes = prefixes;
            save(e, &scope, &s)
        })
        .await?;
    }
    let result = pass(shared, &learner, &scope, p.full).await?;
    Ok(result)
}

/// After an ingest that changed documents of `scope`: a compile pass in the background
/// when a model is configured and one of them is under a chosen prefix.
pub(crate) fn after_ingest(shared: &Arc<Shared>, scope: &Scope, changed: Vec<String>) {
    let Ok(learner) = learner(shared, shared.config.learn.cache) else { return };
    let (shared, scope) = (shared.clone(), scope.clone());
    tokio::spawn(async move {
        let s = scope.clone();
        let chosen = crate::rpc::read(&shared, move |e| settings(e, &s)).await;
        let Ok(Some(settings)) = chosen else { return };
        let under = |path: &String| {
            Path::new(path).strip_prefix(&settings.root).is_ok_and(|rel| {
                settings.prefixes.iter().any(|x| rel.to_string_lossy().starts_with(x.as_str()))
            })
        };
        if !changed.iter().any(under) {
            return;
        }
        match pass(&shared, &learner, &scope, false).await {
            Ok(r) => {
                tracing::info!(scope = %scope, skills = r.skills.len(), retired = r.retired.len(), "skills recompiled after ingest")
            }
            Err(e) => {
                tracing::warn!(scope = %scope, error = %e.message, "skills not recompiled after ingest")
            }
        }
    });
}

/// One compile pass over `scope` (one at a time).
async fn pass(
    shared: &Arc<Shared>,
    learner: &Learner,
    scope: &Scope,
    full: bool,
) -> Result<CompileResult, ErrorObject> {
    let _one = shared.compiling.lock().await;
    let (engine, l, scope) = (shared.engine.clone(), learner.clone(), scope.clone());
    let origin = Origin {
        door: Some(amber_core::origin::Door::Daemon.as_str().into()),
        tool: Some("compile".into()),
        machine: super::origin::machine(),
        ..Origin::default()
    };
    let cfg = &shared.config.learn;
    let limits = Limits { max_sources: cfg.compile_batch_sources, max_chars: cfg.compile_batch_chars };
    let (result, writes, settings) =
        blocking(move || plan(&engine, &l, &scope, full, &origin, &limits)).await?;
    let changed = !writes.is_empty();
    if changed {
        crate::rpc::write_with(shared, move |e| e.commit_batch(writes)).await?;
    }
    if let Some((scope, s)) = settings {
        crate::rpc::write_with(shared, move |e| save(e, &scope, &s)).await?;
    }
    let mut result = result;
    if changed {
        // The situations learned from runs are linked to the skills as they are now.
        let (engine, l, scope) = (shared.engine.clone(), learner.clone(), result.scope.clone());
        let writer = crate::rpc::BlockingWriter::new(shared);
        if let Some(linked) = blocking(move || relink(&engine, &l, &writer, &scope)).await? {
            result.calls += 1;
            result.linked = linked;
        }
    }
    Ok(result)
}

/// The chosen documents as they are on disk now, with their SHA-256 and the trust their
/// chunks carry.
fn on_disk(
    e: &Engine,
    scope: &Scope,
    settings: &Settings,
) -> Result<Vec<(Source, String, Trust)>, ErrorObject> {
    if settings.kind == Kind::Errors {
        return super::compile_errors::error_sources(e, scope);
    }
    let mut docs: Vec<(Source, String, Trust)> = Vec::new();
    for prefix in &settings.prefixes {
        let abs = settings.root.join(prefix).to_string_lossy().into_owned();
        for file in e.document_sources(scope, &abs).map_err(engine_error)? {
            let path = PathBuf::from(&file);
            let Ok(rel) = path.strip_prefix(&settings.root) else { continue };
            let rel = rel.to_string_lossy().into_owned();
            if docs.iter().any(|(d, _, _)| d.path == rel) {
                continue;
            }
            let Ok((_, text)) = amber_tiers::document::read(&path) else { continue };
            // Only redacted text leaves for the model, as the chunks were stored.
            let text = amber_tiers::redact::redact(&text).0;
            let trust = e
                .by_source(scope, &file)
                .map_err(engine_error)?
                .iter()
                .find(|m| amber_core::document::is_chunk(&m.metadata))
                .map_or(Trust::External, |m| amber_core::origin::trust_of(&m.metadata));
            let source = Source { scope: scope.clone(), path: rel, text };
            let sha = source.sha256();
            docs.push((source, sha, trust));
        }
    }
    Ok(docs)
}

/// The skills of `scope` whose documents changed or went since they were compiled, of
/// how many (None: no documents are chosen for the scope).
pub(crate) fn stale_skills(e: &Engine, scope: &Scope) -> Result<Option<(usize, Vec<String>)>, ErrorObject> {
    let Some(settings) = settings(e, scope).map_err(engine_error)? else { return Ok(None) };
    let docs = on_disk(e, scope, &settings)?;
    let library: Vec<Skill> = skills(e, scope).map_err(engine_error)?.into_iter().map(|(_, k)| k).collect();
    let shas: Vec<(String, String)> = docs.iter().map(|(d, sha, _)| (d.path.clone(), sha.clone())).collect();
    Ok(Some((library.len(), stale(&library, &shas))))
}

type Planned = (CompileResult, Vec<NewMemory>, Option<(Scope, Settings)>);

/// Reads the sources and the library, asks the model, and says what to write.
fn plan(
    e: &Engine,
    learner: &Learner,
    scope: &Scope,
    full: bool,
    origin: &Origin,
    limits: &Limits,
) -> Result<Planned, ErrorObject> {
    let mut out = CompileResult { scope: scope.clone(), ..Default::default() };
    let Some(mut settings) = settings(e, scope).map_err(engine_error)? else {
        out.message = format!(
            "no documents are chosen for {scope}: amber compile --sources docs/runbooks/ (from the project)"
        );
        return Ok((out, Vec::new(), None));
    };
    out.sources = settings.prefixes.clone();
    let docs = on_disk(e, scope, &settings)?;
    out.documents = docs.len();
    let current = skills(e, scope).map_err(engine_error)?;
    let library: Vec<Skill> = current.iter().map(|(_, k)| k.clone()).collect();
    let shas: Vec<(String, String)> = docs.iter().map(|(d, sha, _)| (d.path.clone(), sha.clone())).collect();
    let again: HashSet<String> = sources_to_recompile(&library, &shas).into_iter().collect();
    let send: Vec<(Source, String)> = docs
        .iter()
        .filter(|(d, sha, _)| full || again.contains(&d.path) || settings.compiled.get(&d.path) != Some(sha))
        .map(|(d, sha, _)| (d.clone(), sha.clone()))
        .collect();
    out.sent = send.iter().map(|(d, _)| d.path.clone()).collect();
    let mut writes = Vec::new();
    // Skills whose documents are all gone are retired.
    let on_disk: HashSet<&str> = docs.iter().map(|(d, _, _)| d.path.as_str()).collect();
    for name in stale(&library, &shas) {
        let Some((m, skill)) = current.iter().find(|(_, k)| k.name == name) else { continue };
        if skill.cites.iter().any(|c| on_disk.contains(c.path.as_str())) {
            continue;
        }
        writes.push(revision(
            scope,
            origin,
            format!(
                "Skill {name} is retired: every document it was compiled from is gone ({}).",
                skill.cites.iter().map(|c| c.path.as_str()).collect::<Vec<_>>().join(", ")
            ),
            &name,
            m.id.clone(),
        ));
        out.retired.push(name);
    }
    if send.is_empty() {
        out.message = match out.documents {
            0 if settings.kind == Kind::Errors => {
                format!("no error was seen {} times or more in {scope}", super::compile_errors::MIN_SEEN)
            }
            0 => format!("no ingested document under {} in {scope}", settings.prefixes.join(", ")),
            n => format!("{n} documents, none new or changed since they were compiled"),
        };
        return Ok((out, writes, None));
    }
    let sources: Vec<Source> = send.iter().map(|(d, _)| d.clone()).collect();
    let report = compile(learner, &sources, library, limits, now_millis()).map_err(model_failed)?;
    out.calls = report.calls;
    let trust_of: HashMap<&str, Trust> = docs.iter().map(|(d, _, t)| (d.path.as_str(), *t)).collect();
    for skill in &report.skills {
        // A model wrote it: never above `agent`, and `external` when a source it cites is.
        let trust = skill
            .cites
            .iter()
            .map(|c| trust_of.get(c.path.as_str()).copied().unwrap_or(Trust::External))
            .min()
            .unwrap_or(Trust::External)
            .min(Trust::Agent);
        let mut m = NewMemory::new(format!(
            "Skill {} (version {}, compiled from documents)\n{}",
            skill.name,
            skill.version,
            skill.text()
        ))
        .in_scope(scope.clone())
        .of_type(MemoryType::Pattern);
        m.source = Some(SKILL_SOURCE.into());
        m.metadata = json!({ amber_core::skill::SKILL_KEY: skill });
        amber_core::origin::stamp(&mut m.metadata, origin, trust);
        out.skills.push(SkillWritten {
            name: skill.name.clone(),
            version: skill.version,
            cites: skill.cites.iter().map(|c| c.path.clone()).collect(),
            memory_id: m.id(),
        });
        writes.push(m);
        // The version it replaces is retired by an invalidation: newest wins.
        for (old, _) in current.iter().filter(|(_, k)| k.name == skill.name) {
            let text = format!(
                "Skill {} version {} is replaced by version {}.",
                skill.name,
                skill.version - 1,
                skill.version
            );
            writes.push(revision(scope, origin, text, &skill.name, old.id.clone()));
        }
    }
    out.dropped = report.dropped;
    let failed: HashSet<&String> = report.failed_batches.iter().flat_map(|b| b.paths.iter()).collect();
    for (d, sha) in send.iter().filter(|(d, _)| !failed.contains(&d.path)) {
        settings.compiled.insert(d.path.clone(), sha.clone());
    }
    settings.compiled.retain(|path, _| on_disk.contains(path.as_str()));
    out.failed = report.failed_batches;
    out.message = format!(
        "{} documents sent in {} calls: {} skills written, {} dropped, {} retired",
        out.sent.len(),
        out.calls,
        out.skills.len(),
        out.dropped.len(),
        out.retired.len()
    );
    Ok((out, writes, Some((scope.clone(), settings))))
}

/// The invalidation that retires a skill's memory `old` (skill bookkeeping: never briefed).
fn revision(
    scope: &Scope,
    origin: &Origin,
    text: String,
    name: &str,
    old: amber_core::MemoryId,
) -> NewMemory {
    let mut r = NewMemory::new(text).in_scope(scope.clone()).of_type(MemoryType::Invalidation);
    r.source = Some(SKILL_SOURCE.into());
    r.supersedes = vec![old];
    r.metadata = json!({ amber_core::skill::REVISION_KEY: { "name": name } });
    amber_core::origin::stamp(&mut r.metadata, origin, Trust::Agent);
    r
}

/// The skill a memory holds.
pub(crate) fn skill_of(m: &Memory) -> Option<Skill> {
    serde_json::from_value(m.metadata.get(amber_core::skill::SKILL_KEY)?.clone()).ok()
}

/// The current skills of a scope (their memories and what they hold), by name.
pub(crate) fn skills(e: &Engine, scope: &Scope) -> amber_engine::Result<Vec<(Memory, Skill)>> {
    let mut out: Vec<(Memory, Skill)> = e
        .by_source(scope, SKILL_SOURCE)?
        .into_iter()
        // Current: not superseded (by a newer version), archived or forgotten.
        .filter(|m| m.superseded_by.is_none() && m.archived_at.is_none() && !m.is_forgotten())
        .filter_map(|m| skill_of(&m).map(|s| (m, s)))
        .collect();
    out.sort_by(|a, b| a.1.name.cmp(&b.1.name));
    Ok(out)
}

fn links_key(scope: &Scope) -> String {
    format!("skill_links:{scope}")
}

/// Situation key -> the skills linked to it (`relink`), in a scope.
pub(crate) fn links(e: &Engine, scope: &Scope) -> amber_engine::Result<BTreeMap<String, Vec<String>>> {
    Ok(e.meta(&links_key(scope))?.and_then(|v| serde_json::from_str(&v).ok()).unwrap_or_default())
}

/// Links the scope's situations (learned from runs) to its skills (compiled from
/// documents), one model call when there are both; kept in `meta`. The number of
/// situations linked; None when there was nothing to link (no model call). A malformed
/// reply keeps the links as they were.
pub(crate) fn relink(
    e: &Engine,
    learner: &Learner,
    writer: &crate::rpc::BlockingWriter,
    scope: &Scope,
) -> Result<Option<usize>, ErrorObject> {
    let situations: Vec<(String, String)> =
        e.situations(scope).map_err(engine_error)?.into_iter().map(|s| (s.key, s.line)).collect();
    let skills: Vec<(String, String)> =
        skills(e, scope).map_err(engine_error)?.into_iter().map(|(_, k)| (k.name, k.when)).collect();
    if situations.is_empty() || skills.is_empty() {
        return Ok(None);
    }
    let links = match amber_tiers::advice::link::link(learner, &situations, &skills) {
        Ok(l) => l,
        Err(amber_tiers::advice::ModelError::Malformed(why)) => {
            tracing::warn!(scope = %scope, why, "situations not linked to skills: a malformed reply");
            return Ok(Some(0));
        }
        Err(e) => return Err(model_failed(e)),
    };
    let (key, n) = (links_key(scope), links.len());
    let value = serde_json::to_string(&links).unwrap_or_default();
    writer.write(move |e| e.set_meta(&key, &value))?;
    Ok(Some(n))
}

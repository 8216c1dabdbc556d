//! `amber import --from basic-memory FOLDER`: a basic-memory project (its folder of
//! Markdown notes; the format is in [`note`]).
//!
//! - Each observation is one memory: the note's title, `: `, then the list item as
//!   written (`Coffee Brewing Methods: [method] Pour over … #brewing`), so that recall
//!   and the graph's mentions find it by the entity it is about; its category, tags,
//!   context, note, permalink, type and file are kept in `metadata.basic_memory`.
//! - Each note is an entity of the scope's knowledge graph, named by its title, typed by
//!   its `type`; each relation is a fact `title relation target` (`kg_add`), the target
//!   named by the title of the note it links to (matched by title, permalink or file
//!   name), else as written.
//!
//! Run again, it files nothing twice (ids come from scope and content; an identical fact
//! is merged). An observation taken out of a note stays in Amber: forget it there.

mod note;

use std::collections::HashMap;
use std::path::Path;

use amber_core::graph::{NewEntity, NewFact};
use amber_core::{MemoryType, NewMemory, Scope};
use amber_ipc::protocol::KgAddParams;
use anyhow::Context;
use serde_json::json;

use super::filing::{Filer, Report, markdown_files, retry_busy};

/// Items a `kg_add` call carries (the daemon takes up to 1000).
const KG_BATCH: usize = 500;

pub(crate) fn run(path: &Path, scope: &Scope, filer: &mut Filer, report: &mut Report) -> anyhow::Result<()> {
    let (root, files) = markdown_files(path)?;
    if !root.dir {
        anyhow::bail!("{} is not a folder: --from basic-memory takes the project's folder", path.display());
    }
    let mut notes = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&root.path).unwrap_or(f).to_string_lossy().into_owned();
        let text = match std::fs::read_to_string(f) {
            Ok(t) => t,
            Err(e) => {
                report.tally.fail("note", rel, format!("cannot read it: {e}"));
                continue;
            }
        };
        let stem = f.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        notes.push((rel, f.to_string_lossy().into_owned(), note::parse(&text, &stem)));
    }
    report.found("notes", notes.len() as u64);
    report.found("observations", notes.iter().map(|(_, _, n)| n.observations.len() as u64).sum());
    report.found("relations", notes.iter().map(|(_, _, n)| n.relations.len() as u64).sum());
    filer.total = notes.iter().map(|(_, _, n)| n.observations.len()).sum();
    let mut seen = std::collections::HashSet::new();
    for (rel, source, n) in &notes {
        for o in &n.observations {
            let mut m = NewMemory::new(format!("{}: {}", n.title, o.text))
                .in_scope(scope.clone())
                .of_type(MemoryType::Fact);
            m.source = Some(source.clone());
            m.metadata = json!({ "basic_memory": {
                "entity": n.title, "permalink": n.permalink, "type": n.kind, "note_tags": n.tags,
                "category": o.category, "tags": o.tags, "context": o.context,
                "file": rel, "line": o.line,
            }});
            let what = format!("{rel}:{}", o.line);
            if !seen.insert(m.id()) {
                report.tally.skip("memory", what, "the same observation as an earlier one of the note");
                continue;
            }
            filer.push(m, what, report)?;
        }
    }
    filer.finish(report)?;
    graph(&notes, scope, filer, report)
}

/// The notes as entities and their relations as facts.
fn graph(
    notes: &[(String, String, note::Note)],
    scope: &Scope,
    filer: &mut Filer,
    report: &mut Report,
) -> anyhow::Result<()> {
    // A link names a note by its title, permalink or path (without `.md`), in any case.
    let mut names: HashMap<String, &str> = HashMap::new();
    for (rel, _, n) in notes {
        let path = rel.strip_suffix(".md").unwrap_or(rel);
        let stem = path.rsplit('/').next().unwrap_or(path);
        for k in
            [Some(n.title.as_str()), n.permalink.as_deref(), Some(path), Some(stem)].into_iter().flatten()
        {
            names.entry(k.to_lowercase()).or_insert(n.title.as_str());
        }
    }
    let mut items: Vec<(Option<NewEntity>, Option<NewFact>)> = Vec::new();
    for (rel, _, n) in notes {
        let e = NewEntity { name: n.title.clone(), kind: Some(n.kind.clone()), aliases: Vec::new() };
        match e.validate() {
            Ok(()) => items.push((Some(e), None)),
            Err(err) => report.tally.fail("entity", rel.clone(), err.to_string()),
        }
        for r in &n.relations {
            let object =
                names.get(&r.target.to_lowercase()).map(|t| t.to_string()).unwrap_or(r.target.clone());
            let f = NewFact {
                subject: n.title.clone(),
                predicate: r.kind.clone(),
                object: Some(object),
                literal: None,
                valid_from: None,
                valid_to: None,
                confidence: None,
                sources: Vec::new(),
                supersede: false,
            };
            match f.validate() {
                Ok(()) => items.push((None, Some(f))),
                Err(err) => report.tally.fail("relation", format!("{rel}:{}", r.line), err.to_string()),
            }
        }
    }
    for chunk in items.chunks(KG_BATCH) {
        let p = KgAddParams {
            scope: Some(scope.clone()),
            entities: chunk.iter().filter_map(|(e, _)| e.clone()).collect(),
            facts: chunk.iter().filter_map(|(_, f)| f.clone()).collect(),
        };
        let before = amber_core::now_millis();
        let client = filer.client();
        let got = retry_busy(|| client.kg_add(&p)).context("kg_add")?;
        // A fact already there comes back as it was recorded, before this call.
        for f in &got.facts {
            if f.recorded_at >= before { report.tally.add("facts") } else { report.tally.had("facts") }
        }
    }
    Ok(())
}

//! A person's browsing of ingested documents (the web view's files): `documents`, a
//! scope's files with their sections counted, and `document`, one file's sections in
//! their order in the file now. Both read every chunk of the scope, so both are a
//! person's, as `memories` is.

use std::sync::Arc;

use amber_core::document::{self, PlaceState};
use amber_ipc::protocol::{
    DEFAULT_FILES, DocumentFile, DocumentParams, DocumentResult, DocumentSection, DocumentsParams,
    DocumentsResult, ErrorKind, ErrorObject, MAX_FILES, MAX_SECTIONS, SECTION_OPENING_CHARS,
};

use crate::peer::Peer;
use crate::person_log::{Undo, person_only};
use crate::rpc::{invalid, read_on};
use crate::state::Shared;

/// `documents`: a page of a scope's ingested files, by path, with the total.
pub(crate) async fn files(
    shared: &Arc<Shared>,
    peer: Peer,
    p: DocumentsParams,
) -> Result<DocumentsResult, ErrorObject> {
    person_only(shared, peer, "listing a scope's documents", Undo::Irreversible)?;
    let limit = p.limit.unwrap_or(DEFAULT_FILES);
    if limit == 0 || limit > MAX_FILES {
        return Err(invalid(format!("limit must be 1 to {MAX_FILES}, got {limit}")));
    }
    let side = shared.side_for(&p.scope)?;
    let (scope, offset) = (p.scope, p.offset.unwrap_or(0));
    let (files, total) =
        read_on(shared, &side, move |e| e.read_store(|s| s.document_files(&scope, offset, limit))).await?;
    let files = files
        .into_iter()
        .map(|f| DocumentFile { path: f.path, label: f.label, sections: f.sections, filed: f.filed })
        .collect();
    Ok(DocumentsResult { files, total })
}

/// `document`: one file's live sections, in their order in the file now (read from disk;
/// those it no longer holds at the lines they had when filed).
pub(crate) async fn sections(
    shared: &Arc<Shared>,
    peer: Peer,
    p: DocumentParams,
) -> Result<DocumentResult, ErrorObject> {
    person_only(shared, peer, "reading a document's sections", Undo::Irreversible)?;
    let side = shared.side_for(&p.scope)?;
    let (scope, path) = (p.scope.clone(), p.path.clone());
    let (mut sections, truncated) = read_on(shared, &side, move |e| {
        let chunks = e.read_store(|s| s.document_sections(&scope, &path, MAX_SECTIONS + 1))?;
        let docs: Vec<_> = chunks
            .iter()
            .take(MAX_SECTIONS)
            .filter_map(|m| document::chunk_of(&m.metadata).map(|d| (m, d)))
            .collect();
        // The file as its chunks name it (each chunk's `source` is its `doc.path`).
        let file = docs.first().map(|(_, d)| d.path.clone()).unwrap_or_default();
        let located: Vec<_> = docs.iter().map(|(m, d)| (d, document::chunk_body(&m.content))).collect();
        let places = super::places::in_file(&file, &located);
        let truncated = chunks.len() > MAX_SECTIONS;
        let sections: Vec<_> = docs
            .into_iter()
            .zip(places)
            .map(|((m, doc), place)| DocumentSection {
                id: m.id.clone(),
                opening: opening(document::chunk_body(&m.content)),
                created: m.created_at,
                place,
                doc,
            })
            .collect();
        Ok((sections, truncated))
    })
    .await?;
    if sections.is_empty() {
        return Err(ErrorObject::new(
            ErrorKind::NotFound,
            format!("no ingested file {:?} in scope {}", p.path, p.scope),
        ));
    }
    // In the file's order now: a section it still holds where it is, one it no longer
    // holds where it was (stable, so equal places keep the order they were filed in).
    sections.sort_by_key(|s| match s.place.state {
        PlaceState::Current | PlaceState::Moved => s.place.lines,
        PlaceState::Changed | PlaceState::Missing => s.doc.lines,
    });
    let label = sections[0].doc.label.clone();
    Ok(DocumentResult { path: p.path, label, sections, truncated })
}

/// A section's opening: its text from the file, cut to [`SECTION_OPENING_CHARS`].
fn opening(body: &str) -> String {
    let body = body.trim_start();
    let mut out: String = body.chars().take(SECTION_OPENING_CHARS).collect();
    if out.len() < body.len() {
        out.push('…');
    }
    out
}

//! Ingested documents by file: a scope's files with their sections counted, a page at a
//! time (`documents`), and one file's sections in their order in the file now, each its
//! headings, its lines and its opening, leading to its memory (`document`).

use std::sync::Arc;

use amber_core::Scope;
use amber_core::document::PlaceState;
use amber_ipc::protocol::{
    DocumentFile, DocumentParams, DocumentsParams, ErrorKind, ErrorObject, method as m,
};
use axum::extract::{Query, State};
use axum::response::Response;
use serde::Deserialize;

use super::Web;
use super::html::{count, error, esc, memory_link, page, page_of, pager, scope_param, shown, time, url};

/// Files a files page lists.
const PER_PAGE: u64 = 50;

/// One file as a table row: its path leading to its sections, their count, when filed.
pub(crate) fn row(scope: &Scope, f: &DocumentFile) -> String {
    format!(
        "<tr><td><a class=file href=\"/file?scope={}&amp;path={}\">{}</a></td><td class=count>{}</td><td>{}</td></tr>",
        url(scope.as_str()),
        url(&f.path),
        esc(&f.label),
        count(f.sections),
        time(f.filed),
    )
}

fn scope_of(s: &str) -> Result<Scope, ErrorObject> {
    scope_param(Some(s))?
        .ok_or_else(|| ErrorObject::new(ErrorKind::InvalidParams, "name the scope: ?scope=…"))
}

/// The files page's query string.
#[derive(Deserialize)]
pub(crate) struct FilesQuery {
    #[serde(default)]
    scope: String,
    #[serde(default)]
    page: Option<u64>,
}

/// `/files?scope=…&page=…`: a scope's ingested files, by path.
pub(crate) async fn files(State(web): State<Arc<Web>>, Query(q): Query<FilesQuery>) -> Response {
    let scope = match scope_of(&q.scope) {
        Ok(s) => s,
        Err(e) => return error(&e),
    };
    let ask = |page: u64| DocumentsParams {
        scope: scope.clone(),
        offset: Some((page - 1).saturating_mul(PER_PAGE)),
        limit: Some(PER_PAGE as usize),
    };
    // The page asked for; one past the end is asked again as the last.
    let asked = q.page.unwrap_or(1).max(1);
    let mut r = match web.call::<m::Documents>(ask(asked)).await {
        Ok(r) => r,
        Err(e) => return error(&e),
    };
    let (n, pages) = page_of(Some(asked), r.total, PER_PAGE);
    if n != asked {
        r = match web.call::<m::Documents>(ask(n)).await {
            Ok(r) => r,
            Err(e) => return error(&e),
        };
    }
    let name = url(scope.as_str());
    let mut body = format!(
        "<h1>Documents of <a href=\"/scope?name={name}\">{}</a></h1><p id=count>{} files</p>",
        esc(scope.as_str()),
        shown(n, PER_PAGE, r.total)
    );
    if r.files.is_empty() {
        body.push_str("<p id=empty>No ingested files here (`amber ingest PATH` brings documents in).</p>");
    } else {
        body.push_str("<table id=files><tr><th>file</th><th>sections</th><th>last filed</th></tr>");
        for f in &r.files {
            body.push_str(&row(&scope, f));
        }
        body.push_str("</table>");
    }
    body.push_str(&pager(&format!("/files?scope={name}"), n, pages));
    page(&format!("Documents of {scope}"), "", &body)
}

/// A section's place under its headings: the headings around it, its own title, and its
/// text under that title. A section starts with its own heading line (`## Setup`); a
/// long one cut in pieces continues under its last heading; text before any heading has
/// none.
fn title_of<'a>(opening: &'a str, headings: &'a [String]) -> (&'a [String], String, &'a str) {
    let (first, rest) = opening.split_once('\n').unwrap_or((opening, ""));
    let hashes = first.len() - first.trim_start_matches('#').len();
    if (1..=6).contains(&hashes) && first[hashes..].starts_with([' ', '\t']) {
        let title = first[hashes..].trim().trim_end_matches('#').trim_end();
        return (headings, title.to_string(), rest.trim_start_matches('\n'));
    }
    match headings.split_last() {
        Some((last, outer)) => (outer, format!("{last} (continued)"), opening),
        None => (headings, "(before any heading)".into(), opening),
    }
}

/// The file page's query string.
#[derive(Deserialize)]
pub(crate) struct FileQuery {
    #[serde(default)]
    scope: String,
    #[serde(default)]
    path: String,
}

/// `/file?scope=…&path=…`: a file's sections in order.
pub(crate) async fn file(State(web): State<Arc<Web>>, Query(q): Query<FileQuery>) -> Response {
    let scope = match scope_of(&q.scope) {
        Ok(s) => s,
        Err(e) => return error(&e),
    };
    let r = match web.call::<m::Document>(DocumentParams { scope: scope.clone(), path: q.path.clone() }).await
    {
        Ok(r) => r,
        Err(e) => return error(&e),
    };
    let name = url(scope.as_str());
    let states = |s: PlaceState| r.sections.iter().filter(|x| x.place.state == s).count();
    let mut body = format!(
        "<h1>{}</h1><p>In <a href=\"/scope?name={name}\">{}</a> · <a href=\"/files?scope={name}\">every file</a> · \
<span class=muted>{}</span></p><p id=count>{} sections, in their order in the file.</p>",
        esc(&r.label),
        esc(scope.as_str()),
        esc(&r.path),
        count(r.sections.len() as u64),
    );
    let (missing, changed) = (states(PlaceState::Missing), states(PlaceState::Changed));
    if missing > 0 {
        body.push_str("<p class=note>The file is gone or unreadable: the sections are in the order they were filed in.</p>");
    } else if changed > 0 {
        body.push_str(&format!(
            "<p class=note>The file changed since it was ingested: {changed} sections are no longer in it \
(shown where they were); `amber ingest` it again to bring them in step.</p>"
        ));
    }
    if r.truncated {
        body.push_str("<p class=note>Only the first sections are listed: the file has more.</p>");
    }
    body.push_str("<ol id=sections>");
    for s in &r.sections {
        let [a, b] = s.place.lines;
        let lines = if a == b { format!("line {a}") } else { format!("lines {a}–{b}") };
        let (trail, title, text) = title_of(&s.opening, &s.doc.headings);
        let trail = if trail.is_empty() {
            String::new()
        } else {
            format!("<span class=trail>{} › </span>", esc(&trail.join(" › ")))
        };
        let state = match s.place.state {
            PlaceState::Current => String::new(),
            other => format!(" <span class=note>{}</span>", esc(other.describe())),
        };
        body.push_str(&format!(
            "<li class=section>{trail}<b class=heading>{}</b> <span class=muted>{lines}</span> {}{state}\
<div class=opening>{}</div></li>",
            esc(&title),
            memory_link(s.id.as_str()),
            esc(text),
        ));
    }
    body.push_str("</ol>");
    page(&r.label, "", &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_section_is_titled_by_its_heading_line_else_continues_its_last() {
        let outer = vec!["Guide".to_string()];
        let (trail, title, text) = title_of("## Setup ##\n\nrun it", &outer);
        assert_eq!((trail, title.as_str(), text), (&outer[..], "Setup", "run it"));
        let inner = vec!["Guide".to_string(), "Setup".to_string()];
        let (trail, title, text) = title_of("more of it", &inner);
        assert_eq!((trail, title.as_str(), text), (&outer[..], "Setup (continued)", "more of it"));
        let (trail, title, _) = title_of("#hashtag, not a heading", &[]);
        assert_eq!((trail.len(), title.as_str()), (0, "(before any heading)"));
    }
}

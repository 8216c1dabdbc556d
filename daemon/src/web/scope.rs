//! One scope's page: what it holds, counted by filing; its ingested files (each leading
//! to its sections, `files.rs`) apart from its other memories; and those memories,
//! newest filed first, kept by filing, type and trust, a page at a time with counts
//! (`memories` and `documents`, each counted by the store, never loaded whole).

use std::sync::Arc;

use amber_core::MemoryType;
use amber_core::filing::Filing;
use amber_core::origin::Trust;
use amber_ipc::protocol::{
    DocumentsParams, ErrorKind, ErrorObject, MemoriesParams, MemorySummary, method as m,
};
use axum::extract::{Query, State};
use axum::response::Response;
use serde::Deserialize;

use super::Web;
use super::html::{
    count, error, esc, memory_link, page, page_of, pager, scope_param, select, shown, time, url,
};

/// Memories a scope page lists.
pub(crate) const PER_PAGE: u64 = 40;

/// Files a scope page lists before leading to all of them (`/files`).
const FILES_SHOWN: usize = 10;

/// The filings a scope page lists by default: every one but document sections, which
/// the page lists by file instead.
const BUT_DOCUMENTS: &str = "";

/// A scope page's query string.
#[derive(Deserialize)]
pub(crate) struct ScopeQuery {
    #[serde(default)]
    name: String,
    /// A filing, `any`, or empty for every filing but document sections.
    #[serde(default)]
    filing: String,
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    trust: String,
    #[serde(default)]
    page: Option<u64>,
    #[serde(default)]
    all: Option<String>,
}

fn invalid(msg: impl Into<String>) -> ErrorObject {
    ErrorObject::new(ErrorKind::InvalidParams, msg)
}

/// A filter's word from the query string: empty is none.
fn word<T: std::str::FromStr>(what: &str, s: &str) -> Result<Option<T>, ErrorObject>
where
    T::Err: std::fmt::Display,
{
    match s.trim() {
        "" => Ok(None),
        w => w.parse().map(Some).map_err(|e| invalid(format!("{what}: {e}"))),
    }
}

/// A trust from the query string: empty is none.
fn trust_word(s: &str) -> Result<Option<Trust>, ErrorObject> {
    match s.trim() {
        "" => Ok(None),
        "person" => Ok(Some(Trust::Person)),
        "agent" => Ok(Some(Trust::Agent)),
        "external" => Ok(Some(Trust::External)),
        other => Err(invalid(format!("trust must be person, agent or external, got {other:?}"))),
    }
}

/// The filings a `filing` word keeps (empty: every filing).
fn filings(w: &str) -> Result<Vec<Filing>, ErrorObject> {
    Ok(match w.trim() {
        BUT_DOCUMENTS => Filing::ALL.into_iter().filter(|f| !f.is_document()).collect(),
        "any" => Vec::new(),
        w => vec![w.parse().map_err(|e: amber_core::InvalidInput| invalid(e.to_string()))?],
    })
}

/// What a filing is called on a page.
fn filing_label(f: Filing) -> &'static str {
    match f {
        Filing::Person => "yours (person)",
        Filing::Promoted => "promoted by you",
        Filing::Agent => "filed by agents",
        Filing::Document => "document sections",
        Filing::Reference => "sections of documents from outside",
        Filing::Skill => "skills",
        Filing::Raw => "raw captures",
    }
}

/// `/scope?name=…&filing=…&type=…&trust=…&page=…&all=1`.
pub(crate) async fn scope(State(web): State<Arc<Web>>, Query(q): Query<ScopeQuery>) -> Response {
    match render(&web, &q).await {
        Ok(r) => r,
        Err(e) => error(&e),
    }
}

async fn render(web: &Web, q: &ScopeQuery) -> Result<Response, ErrorObject> {
    let scope = scope_param(Some(&q.name))?.ok_or_else(|| invalid("name the scope: /scope?name=…"))?;
    let kind: Option<MemoryType> = word("type", &q.kind)?;
    let trust = trust_word(&q.trust)?;
    let wanted = filings(&q.filing)?;
    let all = q.all.is_some();
    let per = PER_PAGE as usize;
    let mut p = MemoriesParams::of(scope.clone());
    (p.limit, p.filings, p.kind, p.trust, p.include_forgotten, p.count) =
        (Some(per), wanted, kind, trust, all, true);
    // The page asked for, counted; one past the end is asked again as the last.
    let asked = q.page.unwrap_or(1).max(1);
    p.offset = Some((asked - 1).saturating_mul(PER_PAGE));
    let mut r = web.call::<m::Memories>(p.clone()).await?;
    let total = r.total.unwrap_or(0);
    let (n, pages) = page_of(Some(asked), total, PER_PAGE);
    if n != asked {
        p.offset = Some((n - 1) * PER_PAGE);
        p.count = false;
        r.memories = web.call::<m::Memories>(p).await?.memories;
    }
    let files = web
        .call::<m::Documents>(DocumentsParams {
            scope: scope.clone(),
            offset: None,
            limit: Some(FILES_SHOWN),
        })
        .await?;

    let name = url(scope.as_str());
    let mut here = format!("/scope?name={name}");
    for (k, v) in [("filing", &q.filing), ("type", &q.kind), ("trust", &q.trust)] {
        if !v.trim().is_empty() {
            here.push_str(&format!("&amp;{k}={}", url(v.trim())));
        }
    }
    if all {
        here.push_str("&amp;all=1");
    }
    let mut body = format!("<h1>Scope {}</h1>", esc(scope.as_str()));

    // What it holds, by filing (under the type and trust filters), each a filter link.
    let by = r.by_filing.unwrap_or_default();
    // The files are counted once, after the last document filing held.
    let last_doc =
        Filing::ALL.into_iter().rev().find(|f| f.is_document() && by.get(f).is_some_and(|n| *n > 0));
    let parts: Vec<String> = Filing::ALL
        .iter()
        .filter_map(|f| by.get(f).filter(|n| **n > 0).map(|n| (f, *n)))
        .map(|(f, n)| {
            let files = if Some(*f) == last_doc {
                format!(" in {} files", count(files.total))
            } else {
                String::new()
            };
            format!(
                "<a href=\"/scope?name={name}&amp;filing={}\" class=filing-{f}>{} {}</a>{files}",
                f.as_str(),
                count(n),
                filing_label(*f)
            )
        })
        .collect();
    let held: u64 = by.values().sum();
    body.push_str(&format!(
        "<p id=held>{} {}memories{}{}</p>",
        count(held),
        if all { "" } else { "live " },
        if parts.is_empty() { String::new() } else { format!(": {}", parts.join(" · ")) },
        if kind.is_some() || trust.is_some() { " (of the type and trust chosen below)" } else { "" },
    ));

    if files.total > 0 {
        body.push_str(&format!(
            "<h2>Documents</h2><p>{} ingested files, each listing its sections in order.</p>\
<table id=files><tr><th>file</th><th>sections</th><th>last filed</th></tr>",
            count(files.total)
        ));
        for f in &files.files {
            body.push_str(&super::files::row(&scope, f));
        }
        body.push_str("</table>");
        if files.total > files.files.len() as u64 {
            body.push_str(&format!(
                "<p><a href=\"/files?scope={name}\" id=allfiles>All {} files</a></p>",
                count(files.total)
            ));
        }
    }

    body.push_str("<h2>Memories</h2>");
    body.push_str(&filter_form(&scope, q, all));
    body.push_str(&format!(
        "<p id=count>{} {}, newest filed first</p>",
        shown(n, PER_PAGE, total),
        match q.filing.trim() {
            BUT_DOCUMENTS if files.total > 0 => "(document sections are listed by file, above)",
            _ => "",
        }
    ));
    if r.memories.is_empty() {
        body.push_str("<p id=empty>No memories here.</p>");
    } else {
        body.push_str(&table(&r.memories));
    }
    body.push_str(&pager(&here, n, pages));
    Ok(page(&format!("Scope {scope}"), "", &body))
}

/// The filters, as a GET form back to this page.
fn filter_form(scope: &amber_core::Scope, q: &ScopeQuery, all: bool) -> String {
    let mut filings = vec![
        (BUT_DOCUMENTS, "everything but document sections".to_string()),
        ("any", "everything".to_string()),
    ];
    filings.extend(Filing::ALL.iter().map(|f| (f.as_str(), filing_label(*f).to_string())));
    let mut types = vec![("", "any type".to_string())];
    types.extend(MemoryType::ALL.iter().map(|t| (t.as_str(), t.as_str().to_string())));
    let trusts = [
        ("", "any trust".to_string()),
        ("person", "person".to_string()),
        ("agent", "agent".to_string()),
        ("external", "external".to_string()),
    ];
    format!(
        "<form action=/scope method=get id=filters class=filters><input type=hidden name=name value=\"{}\">{}{}{}\
<label><input type=checkbox name=all value=1{}> forgotten and archived too</label> <button type=submit>Filter</button></form>",
        esc(scope.as_str()),
        select("filing", "filed", &filings, q.filing.trim()),
        select("type", "type", &types, q.kind.trim()),
        select("trust", "trust", &trusts, q.trust.trim()),
        if all { " checked" } else { "" },
    )
}

/// The memories as a table: a document section shows its file and headings, then its
/// first line from the file.
fn table(memories: &[MemorySummary]) -> String {
    let mut out = String::from(
        "<table id=memories><tr><th>memory</th><th>filed</th><th>type</th><th>filing</th><th>trust</th>\
<th>weight</th><th>state</th><th>first line</th></tr>",
    );
    for mem in memories {
        let t = mem.trust.as_str();
        let state = match (mem.forgotten, mem.archived) {
            (true, _) => "forgotten",
            (false, true) => "archived",
            (false, false) => "live",
        };
        let trail = mem.file.as_ref().map(|f| {
            let mut trail = vec![f.as_str()];
            trail.extend(mem.headings.iter().map(String::as_str));
            format!("<span class=trail>{}</span><br>", esc(&trail.join(" › ")))
        });
        out.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><span class=trust-{t}>{t}</span></td><td>{:.2}</td>\
<td>{state}</td><td>{}{}</td></tr>",
            memory_link(mem.id.as_str()),
            time(mem.created),
            esc(mem.kind.as_str()),
            mem.filing.as_str(),
            mem.weight,
            trail.unwrap_or_default(),
            esc(&mem.first_line),
        ));
    }
    out.push_str("</table>");
    out
}

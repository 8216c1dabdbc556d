//! The pages that list: the scopes with their counts, a search (the same `recall`, with
//! the same evidence the command line prints, over the same scopes by default), the
//! archive, and the daemon's health. One scope's page is `scope.rs`.

use std::sync::Arc;

use amber_core::{Hit, Memory};
use amber_ipc::protocol::{ArchivedParams, ErrorObject, NoParams, RecallParams, method as m};
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::Value;

use super::Web;
use super::html::{error, esc, memory_link, opening, page, scope_param, time, url};

/// Hits a search page shows.
const SEARCH_HITS: usize = 20;

/// The trust a memory's metadata records, as a styled word.
pub(crate) fn trust(m: &Memory) -> String {
    let t = amber_core::origin::trust_of(&m.metadata).as_str();
    format!("<span class=trust-{t}>{t}</span>")
}

/// `/`: every scope with its count, each with a search box of its own.
pub(crate) async fn scopes(State(web): State<Arc<Web>>) -> Response {
    let r = match web.call::<m::Scopes>(NoParams).await {
        Ok(r) => r,
        Err(e) => return error(&e),
    };
    let total: u64 = r.scopes.iter().map(|s| s.memories).sum();
    let mut body = format!("<h1>Scopes</h1><p>{total} live memories in {} scopes.</p>", r.scopes.len());
    body.push_str("<table id=scopes><tr><th>scope</th><th>memories</th><th>project root</th><th></th></tr>");
    for s in &r.scopes {
        body.push_str(&format!(
            "<tr><td class=scope><a href=\"/scope?name={}\">{}</a></td><td class=count>{}</td><td class=muted>{}</td><td>\
<form action=/search method=get class=inline><input type=hidden name=scope value=\"{}\"><input name=q placeholder=\"search this scope\" aria-label=\"search {}\"> <button type=submit>Search</button></form>\
<a href=\"/archive?scope={}\">archive</a> · <a href=\"/runs?scope={}\">runs</a></td></tr>",
            url(&s.scope),
            esc(&s.scope),
            s.memories,
            esc(s.root.as_deref().unwrap_or("")),
            esc(&s.scope),
            esc(&s.scope),
            url(&s.scope),
            url(&s.scope),
        ));
    }
    body.push_str("</table>");
    page("Scopes", "/", &body)
}

/// A search's query string.
#[derive(Deserialize)]
pub(crate) struct SearchQuery {
    #[serde(default)]
    q: String,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    archived: Option<String>,
    /// Where: `here` (the scopes `amber recall` searches in the directory `amber ui` ran
    /// in), `all` (every scope) or `scope` (the one named, and those below it). Absent:
    /// the scope named, else `here`.
    #[serde(default, rename = "in")]
    within: Option<String>,
}

/// Where a search looks.
enum Within {
    /// The scopes `amber recall` searches from the directory `amber ui` ran in: the
    /// project's, `user` and the team's.
    Here(Vec<amber_core::Scope>),
    /// Every scope.
    Every,
    /// One scope and those below it.
    One(amber_core::Scope),
}

impl Within {
    fn of(q: &SearchQuery, here: Option<amber_tiers::scope::Resolved>) -> Result<Within, ErrorObject> {
        let scope = scope_param(q.scope.as_deref())?;
        let here = || here.map_or(Within::Every, |r| Within::Here(r.search));
        Ok(match (q.within.as_deref(), scope) {
            (Some("all"), _) => Within::Every,
            (Some("here"), _) | (_, None) => here(),
            (_, Some(s)) => Within::One(s),
        })
    }

    /// The scopes, as a person reads them.
    fn names(&self) -> String {
        match self {
            Within::Here(s) => s.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" + "),
            Within::Every => "every scope".into(),
            Within::One(s) => format!("{s} (and the scopes below it)"),
        }
    }
}

/// The search form: the query, where (this project and `user` by default, as `amber
/// recall`; every scope; one scope), archived or not.
fn search_form(q: &SearchQuery, within: &Within, here: Option<&amber_tiers::scope::Resolved>) -> String {
    let on = |yes: bool| if yes { " checked" } else { "" };
    let one = match within {
        Within::One(s) => s.as_str().to_string(),
        _ => String::new(),
    };
    let here_choice = match here {
        Some(r) => format!(
            "<label><input type=radio name=in value=here{}> this project and user: <span id=here>{}</span></label> ",
            on(matches!(within, Within::Here(_))),
            esc(&Within::Here(r.search.clone()).names())
        ),
        None => {
            "<span class=muted>(`amber ui` was started without a directory: no project to default to)</span> "
                .into()
        }
    };
    format!(
        "<form action=/search method=get id=search><input name=q value=\"{}\" size=50 aria-label=query> \
<button type=submit>Search</button><br>in {here_choice}\
<label><input type=radio name=in value=all id=every{}> every scope</label> \
<label><input type=radio name=in value=scope{}> the scope</label> \
<input name=scope value=\"{}\" placeholder=\"scope\" aria-label=scope> \
<label><input type=checkbox name=archived value=1{}> archived too</label></form>",
        esc(&q.q),
        on(matches!(within, Within::Every)),
        on(matches!(within, Within::One(_))),
        esc(&one),
        on(q.archived.is_some()),
    )
}

/// One hit's evidence, as `amber recall` prints it.
fn evidence(h: &Hit, disputed: Option<&[amber_core::MemoryId]>) -> String {
    let e = &h.evidence;
    let mut why = vec![format!("fused {:.4}", e.fused)];
    if let (Some(r), Some(s)) = (e.bm25_rank, e.bm25_score) {
        why.push(format!("bm25 #{r} {s:.2}"));
    }
    if let Some(r) = e.exact_rank {
        why.push(format!("exact #{r}"));
    }
    if let (Some(r), Some(c)) = (e.vector_rank, e.best_chunk_cosine) {
        why.push(format!("vector #{r} cos {c:.3}"));
    }
    if let Some(r) = e.time_rank {
        why.push(format!("time #{r}"));
    }
    if let Some(r) = e.graph_rank {
        why.push(format!("graph #{r}"));
    }
    if let Some(b) = e.session_bonus {
        why.push(format!("session +{b:.4}"));
    }
    if let Some(b) = e.neighbour_bonus {
        why.push(format!("neighbour +{b:.4}"));
    }
    let st = &e.standing;
    why.push(format!("weight {:.2} age {:.2}", st.weight, st.age_factor));
    if let Some(f) = st.filing {
        why.push(format!("{f} x{:.2}", st.filing_factor));
    }
    why.push(format!("prior {:.3}", st.prior));
    if st.successes + st.failures > 0 {
        why.push(format!("{} successes {} failures", st.successes, st.failures));
    }
    if st.archived {
        why.push("archived".into());
    }
    if !h.memory.supersedes.is_empty() {
        let s: Vec<String> = h.memory.supersedes.iter().map(|i| opening(i.as_str(), 8)).collect();
        why.push(format!("supersedes {}", s.join(", ")));
    }
    if let Some(by) = disputed {
        let s: Vec<String> = by.iter().map(|i| opening(i.as_str(), 8)).collect();
        why.push(format!("disputed by {}", s.join(", ")));
    }
    esc(&why.join(" · "))
}

/// `/search?q=…&in=here|all|scope&scope=…`: `recall`, best first, over the scopes `amber
/// recall` searches in the directory `amber ui` ran in (its project and `user`), unless
/// every scope or one is asked.
pub(crate) async fn search(State(web): State<Arc<Web>>, Query(q): Query<SearchQuery>) -> Response {
    let here = web.here();
    let within = match Within::of(&q, here.clone()) {
        Ok(w) => w,
        Err(e) => return error(&e),
    };
    let archived = q.archived.is_some();
    let form = search_form(&q, &within, here.as_ref());
    if q.q.trim().is_empty() {
        return page("Search", "", &format!("<h1>Search</h1>{form}"));
    }
    let mut p = RecallParams::new(q.q.clone());
    match &within {
        Within::Here(scopes) => {
            let mut scopes = scopes.iter().cloned();
            p.scope = scopes.next();
            p.also = scopes.collect();
        }
        Within::Every => {}
        Within::One(s) => p.scope = Some(s.clone()),
    }
    p.k = Some(SEARCH_HITS);
    p.archived = archived.then_some(true);
    // As `amber recall`: nothing below the relevance floor.
    p.floor = Some(true);
    let r = match web.call::<m::Recall>(p).await {
        Ok(r) => r,
        Err(e) => return error(&e),
    };
    let mut body = format!("<h1>Search</h1>{form}<p id=searched>Searched {}.", esc(&within.names()));
    if !matches!(within, Within::Every) {
        body.push_str(&format!(
            " <a id=everywhere href=\"/search?q={}&amp;in=all{}\">Search every scope</a>",
            url(&q.q),
            if archived { "&amp;archived=1" } else { "" }
        ));
    }
    body.push_str("</p>");
    if let Some(why) = &r.team_unavailable {
        body.push_str(&format!("<p class=note>The team scopes were not searched: {}</p>", esc(why)));
    }
    if let Some(why) = &r.degraded {
        body.push_str(&format!(
            "<p class=note id=degraded>Ranked by words only (BM25): the embedding model is away: {}</p>",
            esc(why)
        ));
    } else if !r.fresh {
        body.push_str(
            "<p class=note>The indexes are still catching up: the newest memories may be missing.</p>",
        );
    }
    if r.hits.is_empty() {
        body.push_str(if r.degraded.is_none() {
            "<p id=nohits>No good match: nothing above the relevance floor.</p>"
        } else {
            "<p id=nohits>No memories match.</p>"
        });
        if !r.elsewhere.is_empty() {
            let links: Vec<String> = r
                .elsewhere
                .iter()
                .map(|s| {
                    format!(
                        "<a href=\"/search?q={}&amp;scope={}\">{}</a>",
                        url(&q.q),
                        url(s.as_str()),
                        esc(s.as_str())
                    )
                })
                .collect();
            body.push_str(&format!("<p id=elsewhere>Better matches are in {}.</p>", links.join(", ")));
        }
    }
    body.push_str("<ol id=hits>");
    for h in &r.hits {
        let disputed = r.disputed.iter().find(|d| d.id == h.memory.id).map(|d| d.by.as_slice());
        let from = amber_core::origin::label(&h.memory.metadata, h.memory.author.as_deref());
        let place =
            h.place.as_ref().map(|p| format!("<br><span class=muted>at {}</span>", esc(&p.describe())));
        body.push_str(&format!(
            "<li class=hit>{} <span class=muted>[{}] {} · {} · from {}</span><br><span class=evidence>{}</span>{}<br>{}</li>",
            memory_link(h.memory.id.as_str()),
            esc(h.memory.scope.as_str()),
            esc(h.memory.kind.as_str()),
            trust(&h.memory),
            esc(&from),
            evidence(h, disputed),
            place.unwrap_or_default(),
            esc(&opening(&h.memory.content, 300)),
        ));
    }
    body.push_str("</ol>");
    page(&format!("Search: {}", q.q), "", &body)
}

/// The archive's query string.
#[derive(Deserialize)]
pub(crate) struct ArchiveQuery {
    #[serde(default)]
    scope: Option<String>,
}

/// `/archive`: archived memories, newest archived first, each with its way back.
pub(crate) async fn archive(State(web): State<Arc<Web>>, Query(q): Query<ArchiveQuery>) -> Response {
    let scope = match scope_param(q.scope.as_deref()) {
        Ok(s) => s,
        Err(e) => return error(&e),
    };
    let r = match web.call::<m::Archived>(ArchivedParams { scope: scope.clone(), limit: Some(200) }).await {
        Ok(r) => r,
        Err(e) => return error(&e),
    };
    let mut body = format!(
        "<h1>Archive{}</h1><p>Archived memories leave recall, briefings and interjections; a page still reads them.</p>",
        scope.as_ref().map(|s| format!(" of {}", esc(s.as_str()))).unwrap_or_default()
    );
    if r.memories.is_empty() {
        body.push_str("<p id=empty>Nothing is archived.</p>");
    }
    body.push_str("<table id=archive><tr><th>memory</th><th>scope</th><th>archived</th><th>weight</th><th>why</th><th>text</th><th></th></tr>");
    for mem in &r.memories {
        let why = match &mem.superseded_by {
            Some(by) => format!("superseded by {}", memory_link(by.as_str())),
            None => "weight fell".into(),
        };
        body.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.2}</td><td>{why}</td><td>{}</td><td>{}</td></tr>",
            memory_link(mem.id.as_str()),
            esc(mem.scope.as_str()),
            mem.archived_at.map(time).unwrap_or_default(),
            mem.weight,
            esc(&opening(&mem.content, 160)),
            super::html::button(
                &web.form,
                &format!("/memory/{}/unarchive", url(mem.id.as_str())),
                "unarchive",
                &[]
            ),
        ));
    }
    body.push_str("</table>");
    page("Archive", "/archive", &body)
}

/// A JSON value as nested tables and lists (status figures), every string escaped.
pub(crate) fn value_html(v: &Value, depth: usize) -> String {
    match v {
        Value::Object(o) if depth < 4 => {
            let rows: String = o
                .iter()
                .map(|(k, v)| format!("<tr><th>{}</th><td>{}</td></tr>", esc(k), value_html(v, depth + 1)))
                .collect();
            format!("<table>{rows}</table>")
        }
        Value::Array(a) if depth < 4 => {
            if a.is_empty() {
                return "<span class=muted>none</span>".into();
            }
            let items: String =
                a.iter().take(50).map(|v| format!("<li>{}</li>", value_html(v, depth + 1))).collect();
            format!("<ul>{items}</ul>")
        }
        Value::String(s) => esc(s),
        other => esc(&other.to_string()),
    }
}

/// `/health`: the daemon's status, the indexes' freshness, what is degraded, the team.
pub(crate) async fn health(State(web): State<Arc<Web>>) -> Response {
    let s = match web.call::<m::Status>(NoParams).await {
        Ok(s) => s,
        Err(e) => return error(&e),
    };
    let e = &s.engine;
    let num = |k: &str| e.get(k).and_then(Value::as_u64).unwrap_or(0);
    let behind = num("committed_through").saturating_sub(num("indexed_through"));
    let degraded = e.get("degraded").and_then(Value::as_array).map_or(0, Vec::len);
    let complete = e.get("indexes_complete").and_then(Value::as_bool).unwrap_or(false);
    let mut body = format!(
        "<h1>Health</h1><table id=summary><tr><th>daemon</th><td>amberd {} · pid {} · up {:.0} s · {} connections · {} writes queued</td></tr>\
<tr><th>memories</th><td>{} live, {} forgotten, {} raw captures</td></tr>\
<tr><th>indexes</th><td id=freshness>{}</td></tr><tr><th>degraded</th><td id=degraded>{}</td></tr><tr><th>team</th><td id=team>{}</td></tr></table>",
        esc(&s.version),
        s.pid,
        s.uptime_seconds,
        s.connections,
        s.queue_depth,
        num("memories"),
        num("forgotten"),
        num("raw_captures"),
        if behind == 0 && complete {
            "fresh: every committed memory is indexed".to_string()
        } else {
            format!(
                "{behind} memories wait to be indexed{}",
                if complete { "" } else { "; indexes incomplete" }
            )
        },
        if degraded == 0 { "nothing".to_string() } else { format!("{degraded} (below)") },
        match &s.team {
            None => "not configured: every scope is on this machine".to_string(),
            Some(t) if t.connected => format!("connected to {}", esc(&t.location)),
            Some(t) => format!(
                "<b>not connected</b> to {}: {}",
                esc(&t.location),
                esc(t.trouble.as_deref().unwrap_or("unknown"))
            ),
        },
    );
    body.push_str("<h2>Engine</h2>");
    body.push_str(&value_html(e, 0));
    page("Health", "/health", &body)
}

/// Any other path.
pub(crate) async fn not_found() -> Response {
    (StatusCode::NOT_FOUND, page("Not found", "", "<h1>404</h1><p>No such page.</p>")).into_response()
}

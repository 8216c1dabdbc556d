//! A memory's page: its full text, origin and trust, type, weight and the outcome log as
//! a chart over time, its supersession chain, links, thread, the sessions it was served
//! in and why, and the forms that change it (forget or unforget, unarchive, an outcome,
//! its trust, a move to another scope).

use std::fmt::Write;
use std::sync::Arc;

use amber_core::{Memory, MemoryId};
use amber_ipc::protocol::{
    ErrorKind, ErrorObject, GetParams, IdParams, OutcomesParams, SessionsParams, ThreadParams, method as m,
};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::Web;
use super::html::{button, error, esc, memory_link, opening, page, session_link, time, url};
use super::pages::trust;

/// How far the page follows a supersession chain forward.
const CHAIN_STEPS: usize = 8;

fn row(s: &mut String, k: &str, v: &str) {
    let _ = write!(s, "<tr><th>{}</th><td>{v}</td></tr>", esc(k));
}

fn facts(mem: &Memory) -> String {
    let o = amber_core::origin::origin_of(&mem.metadata);
    let mut s = String::from("<table id=facts>");
    row(&mut s, "id", &format!("<span class=id>{}</span>", esc(mem.id.as_str())));
    row(&mut s, "scope", &esc(mem.scope.as_str()));
    row(&mut s, "type", &esc(mem.kind.as_str()));
    row(&mut s, "trust", &trust(mem));
    let mut origin = vec![format!("door {}", esc(o.door.as_deref().unwrap_or("unknown")))];
    if let Some(a) = &o.agent {
        origin.push(format!("agent {}{}", esc(a), if o.claimed { " (claimed, unvouched)" } else { "" }));
    }
    if let Some(sid) = &o.session {
        origin.push(format!("session {}", session_link(sid)));
    }
    if let Some(t) = &o.tool {
        origin.push(format!("tool {}", esc(t)));
    }
    if let Some(mc) = &o.machine {
        origin.push(format!("machine {}", esc(mc)));
    }
    if o.inside_agent {
        origin.push("inside an agent's session".into());
    }
    row(&mut s, "origin", &origin.join(" · "));
    if let Some(a) = &mem.author {
        row(&mut s, "author", &esc(a));
    }
    if let Some(src) = &mem.source {
        row(&mut s, "source", &esc(src));
    }
    if let Some(sid) = &mem.session_id {
        row(&mut s, "filed in session", &session_link(sid));
    }
    row(&mut s, "filed", &time(mem.created_at));
    if let Some(t) = mem.event_time {
        row(&mut s, "happened", &time(t));
    }
    if let Some(to) = &mem.to {
        row(&mut s, "to", &esc(to));
    }
    if let Some(r) = &mem.reply_to {
        row(&mut s, "answers", &memory_link(r.as_str()));
    }
    let state = match (mem.forgotten_at, mem.archived_at) {
        (Some(t), _) => format!("forgotten {}", time(t)),
        (None, Some(t)) => format!("archived {}", time(t)),
        (None, None) => "live".into(),
    };
    row(&mut s, "state", &format!("<span id=state>{state}</span>"));
    row(&mut s, "weight", &format!("{:.2}", mem.weight));
    if let Some(u) = mem.used_at {
        row(&mut s, "last relied on", &time(u));
    }
    s.push_str("</table>");
    s
}

fn actions(web: &Web, mem: &Memory) -> String {
    let base = format!("/memory/{}", url(mem.id.as_str()));
    let mut s = String::from("<h2>Change it</h2><div id=actions>");
    if mem.forgotten_at.is_some() {
        s.push_str(&button(&web.form, &format!("{base}/unforget"), "unforget", &[]));
    } else {
        s.push_str(&button(&web.form, &format!("{base}/forget"), "forget", &[]));
    }
    if mem.archived_at.is_some() && mem.forgotten_at.is_none() {
        s.push_str(&button(&web.form, &format!("{base}/unarchive"), "unarchive", &[]));
    }
    if mem.forgotten_at.is_none() {
        let _ = write!(
            s,
            "<form method=post action=\"{base}/outcome\" class=inline id=outcome><input type=hidden name=form value=\"{}\">\
<select name=result aria-label=result><option>success</option><option>failure</option><option>neutral</option></select> \
<input name=note placeholder=\"note (optional)\" aria-label=note> <button type=submit>mark outcome</button></form>",
            esc(&web.form)
        );
    }
    let now = amber_core::origin::trust_of(&mem.metadata);
    let options: String = ["person", "agent", "external"]
        .iter()
        .map(|t| format!("<option{}>{t}</option>", if *t == now.as_str() { " selected" } else { "" }))
        .collect();
    let _ = write!(
        s,
        "<form method=post action=\"{base}/trust\" class=inline id=trust><input type=hidden name=form value=\"{}\">\
<select name=trust aria-label=trust>{options}</select> <button type=submit>set trust</button></form>",
        esc(&web.form)
    );
    if mem.forgotten_at.is_none() {
        let _ = write!(
            s,
            "<form method=post action=\"{base}/move\" class=inline id=move><input type=hidden name=form value=\"{}\">\
<input name=to placeholder=\"scope\" aria-label=\"move to scope\" required> <button type=submit>move to scope</button></form>",
            esc(&web.form)
        );
    }
    s.push_str("</div>");
    s
}

/// `/memory/{id}` (an id or a prefix of one).
pub(crate) async fn memory(State(web): State<Arc<Web>>, Path(id): Path<String>) -> Response {
    let mem = match web.call::<m::Get>(GetParams { id, session_id: None }).await {
        Ok(r) => r.memory,
        Err(e) => return moved(&e).unwrap_or_else(|| error(&e)),
    };
    let id = mem.id.clone();
    let mut body = format!(
        "<h1>Memory <span class=id>{}</span></h1>{}<h2>Text</h2><pre id=content>{}</pre>{}",
        esc(&opening(id.as_str(), 12)),
        facts(&mem),
        esc(&mem.content),
        actions(&web, &mem)
    );
    body.push_str(&standing(&web, &mem).await);
    body.push_str(&chain(&web, &mem).await);
    body.push_str(&related(&web, &id).await);
    body.push_str(&served(&web, &id).await);
    page(&format!("Memory {}", opening(id.as_str(), 12)), "", &body)
}

/// An old id's page after a move: the error, and a link to the memory where it went
/// (`get` answers a moved id `not_found`, its message ending with the new id).
fn moved(e: &ErrorObject) -> Option<Response> {
    if e.kind() != Some(ErrorKind::NotFound) {
        return None;
    }
    let (_, new) = e.message.rsplit_once("its id is now ")?;
    let new: MemoryId = new.trim().parse().ok()?;
    let body = format!(
        "<h1>Moved</h1><p class=note id=moved>{} <a href=\"/memory/{}\" id=moved-to>open it</a></p>",
        esc(&e.message),
        url(new.as_str())
    );
    Some((StatusCode::NOT_FOUND, page("Moved", "", &body)).into_response())
}

/// The weight after each word on it, as a chart, and the log as a table.
async fn standing(web: &Web, mem: &Memory) -> String {
    let Ok(r) =
        web.call::<m::Outcomes>(OutcomesParams { memory_id: mem.id.to_string(), session_id: None }).await
    else {
        return String::new();
    };
    let mut reports = r.reports;
    reports.sort_by_key(|x| x.at);
    let mut points: Vec<(i64, f32, &str)> = vec![(mem.created_at, 1.0, "filed")];
    for i in 0..reports.len() {
        let w = amber_core::standing::fold(mem.kind, &reports[..=i]).weight;
        points.push((reports[i].at, w, reports[i].result.map_or("neutral", |o| o.as_str())));
    }
    let mut s =
        format!("<h2>Weight and outcomes</h2><div id=weight>{}</div>", super::svg::weight_chart(&points));
    if !reports.is_empty() {
        s.push_str("<table id=reports><tr><th>when</th><th>word</th><th>result</th><th>session</th><th>agent</th><th>note</th></tr>");
        for x in &reports {
            let _ = write!(
                s,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                time(x.at),
                esc(x.kind.as_str()),
                esc(x.result.map_or("", |o| o.as_str())),
                match x.session_id.as_deref() {
                    // A run's reward names its run, not a session.
                    Some(r) if r.starts_with("run:") => format!("<a href=/runs>{}</a>", esc(&opening(r, 24))),
                    Some(sid) => session_link(sid),
                    None => String::new(),
                },
                esc(x.agent.as_deref().unwrap_or("")),
                esc(x.note.as_deref().unwrap_or("")),
            );
        }
        s.push_str("</table>");
    }
    s
}

/// What it replaces, and what replaces it (followed forward a few steps).
async fn chain(web: &Web, mem: &Memory) -> String {
    let mut forward = Vec::new();
    let mut next = mem.superseded_by.clone();
    while let Some(by) = next.take() {
        if forward.len() >= CHAIN_STEPS || forward.contains(&by) {
            break;
        }
        next = web
            .call::<m::Get>(GetParams { id: by.to_string(), session_id: None })
            .await
            .ok()
            .and_then(|r| r.memory.superseded_by);
        forward.push(by);
    }
    if mem.supersedes.is_empty() && forward.is_empty() {
        return String::new();
    }
    let mut s = String::from("<h2>Supersession</h2><ul id=chain>");
    for old in &mem.supersedes {
        let _ = write!(s, "<li>replaces {}</li>", memory_link(old.as_str()));
    }
    for by in &forward {
        let _ = write!(s, "<li>replaced by {}</li>", memory_link(by.as_str()));
    }
    s.push_str("</ul>");
    s
}

/// Its links and its thread.
async fn related(web: &Web, id: &MemoryId) -> String {
    let mut s = String::new();
    if let Ok(r) = web.call::<m::Links>(IdParams { id: id.clone() }).await
        && !r.links.is_empty()
    {
        s.push_str("<h2>Links</h2><ul id=links>");
        for l in &r.links {
            let other = if &l.from == id { &l.to } else { &l.from };
            let kind = serde_json::to_value(l.kind)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default();
            let _ = write!(
                s,
                "<li>{} {} (similarity {:.2})</li>",
                esc(&kind),
                memory_link(other.as_str()),
                l.similarity
            );
        }
        s.push_str("</ul>");
    }
    if let Ok(t) = web.call::<m::Thread>(ThreadParams { id: id.to_string(), session_id: None }).await
        && t.memories.len() > 1
    {
        s.push_str("<h2>Thread</h2><ol id=thread>");
        if let Some(h) = &t.held {
            let _ = write!(s, "<p class=note>Held: {}</p>", esc(h));
        }
        for mm in &t.memories {
            let _ = write!(
                s,
                "<li>{} <span class=muted>{}</span> {}</li>",
                memory_link(mm.id.as_str()),
                esc(mm.author.as_deref().unwrap_or("")),
                esc(&opening(&mm.content, 120))
            );
        }
        s.push_str("</ol>");
    }
    s
}

/// The sessions it was served in: each serving's tier, score and why.
async fn served(web: &Web, id: &MemoryId) -> String {
    let Ok(r) = web.call::<m::Sessions>(SessionsParams { limit: Some(50), served: Some(id.clone()) }).await
    else {
        return String::new();
    };
    let mut s = String::from("<h2>Where it was served</h2>");
    if r.sessions.is_empty() {
        s.push_str("<p class=muted id=served>No session was served it.</p>");
        return s;
    }
    s.push_str("<table id=served><tr><th>session</th><th>agent</th><th>when</th><th>tier</th><th>score</th><th>why</th></tr>");
    for sess in &r.sessions {
        for x in &sess.servings {
            let tier = serde_json::to_value(x.tier)
                .ok()
                .map(|v| v.as_str().unwrap_or("").to_string())
                .unwrap_or_default();
            let _ = write!(
                s,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td><td>{}</td></tr>",
                session_link(&sess.id),
                esc(&sess.agent),
                time(x.at),
                esc(&tier),
                x.score,
                esc(&x.why)
            );
        }
    }
    s.push_str("</table>");
    s
}

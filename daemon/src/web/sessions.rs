//! The sessions: a list (live first, then the stored records, newest first), and one
//! session's page: what it was served, in order, with the gate's scores and the judge's
//! word on each event, and what it filed and captured.

use std::fmt::Write;
use std::sync::Arc;

use amber_ipc::protocol::{SessionShowParams, SessionsParams, method as m};
use axum::extract::{Path, State};
use axum::response::Response;
use serde::Serialize;

use super::Web;
use super::html::{error, esc, memory_link, opening, page, session_link, time};

/// Sessions the list shows.
const LISTED: usize = 100;

/// A serde enum's wire word (`briefing`, `gate`, `yes`).
fn word<T: Serialize>(v: &T) -> String {
    serde_json::to_value(v).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default()
}

/// `/sessions`.
pub(crate) async fn list(State(web): State<Arc<Web>>) -> Response {
    let r = match web.call::<m::Sessions>(SessionsParams { limit: Some(LISTED), served: None }).await {
        Ok(r) => r,
        Err(e) => return error(&e),
    };
    let mut body = String::from("<h1>Sessions</h1>");
    if r.sessions.is_empty() {
        body.push_str("<p id=empty>No session yet.</p>");
    }
    body.push_str("<table id=sessions><tr><th>session</th><th>agent</th><th>scope</th><th>started</th><th>ended</th><th>served</th><th>filed</th><th>captured</th><th>reward</th></tr>");
    for s in &r.sessions {
        let _ = write!(
            body,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            session_link(&s.id),
            esc(&s.agent),
            esc(&s.scope),
            time(s.started_at),
            s.ended_at.map_or_else(|| "live".to_string(), time),
            s.served,
            s.filed,
            s.captured,
            s.reward.map(|r| format!("{r:.2}")).unwrap_or_default()
        );
    }
    body.push_str("</table>");
    page("Sessions", "/sessions", &body)
}

/// `/session/{id}`.
pub(crate) async fn show(State(web): State<Arc<Web>>, Path(id): Path<String>) -> Response {
    let r = match web.call::<m::SessionShow>(SessionShowParams { session_id: id }).await {
        Ok(r) => r,
        Err(e) => return error(&e),
    };
    let s = &r.session;
    let mut body = format!(
        "<h1>Session <span class=id>{}</span></h1><table id=facts><tr><th>agent</th><td>{}</td></tr><tr><th>scope</th><td>{}</td></tr>\
<tr><th>started</th><td>{}</td></tr><tr><th>ended</th><td>{}</td></tr><tr><th>events</th><td>{}</td></tr><tr><th>reward</th><td>{}</td></tr></table>",
        esc(&opening(&s.id, 40)),
        esc(&s.agent),
        esc(s.scope.as_str()),
        time(s.started_at),
        match (s.ended_at, r.live) {
            (_, true) => "live".to_string(),
            (Some(t), _) => format!("{} ({})", time(t), esc(s.end_reason.as_deref().unwrap_or(""))),
            (None, false) => "not ended".to_string(),
        },
        s.events,
        s.reward.map(|x| format!("{x:.2}")).unwrap_or_else(|| "none".into()),
    );
    body.push_str("<h2>Served, in order</h2>");
    if s.served.is_empty() {
        body.push_str("<p class=muted>Nothing was served.</p>");
    } else {
        body.push_str("<table id=served><tr><th>#</th><th>when</th><th>tier</th><th>event</th><th>memory</th><th>score</th><th>why</th></tr>");
        for (i, x) in s.served.iter().enumerate() {
            let _ = write!(
                body,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td><td>{}</td></tr>",
                i + 1,
                time(x.at),
                esc(&word(&x.tier)),
                x.event.map(|e| e.to_string()).unwrap_or_default(),
                memory_link(x.id.as_str()),
                x.score,
                esc(&x.why)
            );
        }
        body.push_str("</table>");
    }
    if !s.decisions.is_empty() {
        body.push_str("<h2>The gate and the judge</h2><table id=decisions><tr><th>event</th><th>fired</th><th>why</th><th>best</th><th>gate</th><th>band</th><th>judge</th><th>interjected</th></tr>");
        for d in &s.decisions {
            let judge = match (&d.judge, &d.verdict) {
                (Some(j), Some(v)) => format!("{}: {}", esc(j), esc(&word(v))),
                (Some(j), None) => esc(j),
                (None, Some(v)) => esc(&word(v)),
                (None, None) => String::new(),
            };
            let given: Vec<String> = d.memories.iter().map(|x| memory_link(x.id.as_str())).collect();
            let _ = write!(
                body,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td><td>{:.3}</td><td>{judge}</td><td>{}</td></tr>",
                d.event,
                if d.fired { "yes" } else { "no" },
                esc(&word(&d.reason)),
                d.best.map(|b| format!("{b:.3}")).unwrap_or_default(),
                d.gate,
                d.band,
                given.join(" ")
            );
        }
        body.push_str("</table>");
        if s.decisions_dropped > 0 {
            let _ = write!(body, "<p class=muted>{} older decisions were not kept.</p>", s.decisions_dropped);
        }
    }
    body.push_str("<h2>Filed</h2>");
    if s.filed.is_empty() {
        body.push_str("<p class=muted>Nothing was filed.</p>");
    } else {
        body.push_str("<ul id=filed>");
        for f in &s.filed {
            let _ = write!(
                body,
                "<li>{} {} {}{}</li>",
                time(f.at),
                esc(f.kind.as_str()),
                memory_link(f.id.as_str()),
                if f.created { "" } else { " (already known)" }
            );
        }
        body.push_str("</ul>");
    }
    body.push_str("<h2>Captured</h2>");
    if s.captured.is_empty() {
        body.push_str("<p class=muted>Nothing was captured.</p>");
    } else {
        body.push_str("<ul id=captured>");
        for c in &s.captured {
            let _ = write!(body, "<li>{}</li>", memory_link(c.id.as_str()));
        }
        body.push_str("</ul>");
    }
    page(&format!("Session {}", opening(&s.id, 16)), "/sessions", &body)
}

#[cfg(test)]
mod tests {
    #[test]
    fn links_to_sessions_escape_their_ids() {
        assert!(super::session_link("<x>").contains("%3Cx%3E"));
    }
}

//! The knowledge graph: a scope's entities and the graph around one, drawn; and runs,
//! rewards and lift, with the holdout comparison (served against withheld sessions) as a
//! chart.

use std::fmt::Write;
use std::sync::Arc;

use amber_core::Scope;
use amber_core::graph::FactObject;
use amber_ipc::protocol::{
    AdviceListParams, KgEntitiesParams, KgEntityCount, KgTraverseParams, LiftParams, RunsParams, method as m,
};
use axum::extract::{Query, State};
use axum::response::Response;
use serde::Deserialize;

use super::Web;
use super::html::{error, esc, memory_link, opening, page, scope_param, time, url};
use super::svg::{Bar, Edge, Node, graph as draw, lift_chart};

/// The graph page's query string.
#[derive(Deserialize)]
pub(crate) struct GraphQuery {
    #[serde(default)]
    entity: String,
    #[serde(default)]
    scope: String,
    /// Every scope's entities.
    #[serde(default)]
    all: Option<String>,
}

/// Entities a graph page lists.
const ENTITIES: usize = 50;

/// `/graph?scope=…&entity=…`: a scope's entities, most connected first, and two hops
/// around one (the one named, else the most connected). The scope is the one named, else
/// the project `amber ui` was started in; a project with no graph yet, or `all=1`, shows
/// every scope's.
pub(crate) async fn graph(State(web): State<Arc<Web>>, Query(q): Query<GraphQuery>) -> Response {
    let named = match scope_param(Some(&q.scope)) {
        Ok(s) => s,
        Err(e) => return error(&e),
    };
    let chosen = if q.all.is_some() { None } else { named.clone().or_else(|| web.here().map(|r| r.scope)) };
    let ask = |scope: Option<Scope>| KgEntitiesParams { scope, limit: Some(ENTITIES) };
    let mut listed = match web.call::<m::KgEntities>(ask(chosen.clone())).await {
        Ok(r) => r.entities,
        Err(e) => return error(&e),
    };
    let mut note = String::new();
    if let Some(s) = chosen.as_ref().filter(|_| listed.is_empty()) {
        note = format!(
            "<p class=note id=nograph>{} has no graph yet: the entities of every scope.</p>",
            esc(s.as_str())
        );
        listed = match web.call::<m::KgEntities>(ask(None)).await {
            Ok(r) => r.entities,
            Err(e) => return error(&e),
        };
    }
    let every = chosen.is_none() || !note.is_empty();
    let form = format!(
        "<form action=/graph method=get id=graphform><input name=entity value=\"{}\" placeholder=entity aria-label=entity> \
<input name=scope value=\"{}\" placeholder=\"{}\" aria-label=scope> <button type=submit>Draw</button> \
<a href=\"/graph?all=1\" id=everygraph>every scope's entities</a></form>",
        esc(&q.entity),
        esc(&q.scope),
        esc(chosen.as_ref().map_or("every scope", |s| s.as_str())),
    );
    let mut body = format!("<h1>Knowledge graph</h1>{form}{note}");
    // The entity drawn: the one named, else the most connected listed.
    let (start, sc) = match (q.entity.trim(), listed.first()) {
        ("", Some(top)) => (top.entity.name.clone(), Some(top.entity.scope.clone())),
        ("", None) => {
            body.push_str(
                "<p id=unknown>No entities yet: the graph grows from `kg_add`, fact extraction and linking.</p>",
            );
            return page("Graph", "/graph", &body);
        }
        (name, _) => (name.to_string(), named.clone().or(chosen.clone())),
    };
    let title = format!("Graph: {start}");
    let listing = entities(&listed, every, chosen.as_ref());
    let p = KgTraverseParams {
        scope: sc,
        start: start.clone(),
        max_hops: Some(2),
        as_of: None,
        predicates: Vec::new(),
        limit: Some(100),
        memories_per_node: Some(3),
    };
    let r = match web.call::<m::KgTraverse>(p).await {
        Ok(r) => r,
        Err(e) => return error(&e),
    };
    if r.start.is_none() {
        body.push_str("<p id=unknown>No entity of that name.</p>");
        body.push_str(&listing);
        return page("Graph", "/graph", &body);
    }
    body.push_str(&format!("<h2 id=drawn>Around {}</h2>", esc(&start)));
    let nodes: Vec<Node> =
        r.nodes.iter().map(|n| Node { id: n.entity.id, name: n.entity.name.clone(), hops: n.hops }).collect();
    let mut edges = Vec::new();
    let mut facts = String::from(
        "<table id=facts><tr><th>subject</th><th>predicate</th><th>object</th><th>valid</th><th>sources</th></tr>",
    );
    let mut seen = std::collections::HashSet::new();
    for step in r.paths.iter().flat_map(|p| &p.steps) {
        let f = &step.fact;
        if !seen.insert(f.id) {
            continue;
        }
        let object = match &f.object {
            FactObject::Entity(e) => {
                edges.push(Edge { from: f.subject.id, to: e.id, label: f.predicate.clone() });
                e.name.clone()
            }
            FactObject::Literal(l) => l.clone(),
        };
        let sources: Vec<String> = f.sources.iter().map(|s| memory_link(s.as_str())).collect();
        let _ = write!(
            facts,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{} – {}</td><td>{}</td></tr>",
            esc(&f.subject.name),
            esc(&f.predicate),
            esc(&object),
            f.valid_from.map(time).unwrap_or_default(),
            f.valid_to.map(time).unwrap_or_default(),
            sources.join(" ")
        );
    }
    facts.push_str("</table>");
    let _ = write!(body, "<div id=graph>{}</div>", draw(&nodes, &edges));
    if r.truncated {
        body.push_str("<p class=note>The walk was cut short at 100 paths.</p>");
    }
    body.push_str("<h2>Facts</h2>");
    body.push_str(&facts);
    if !r.memories.is_empty() {
        body.push_str("<h2>Memories that mention them</h2><ul>");
        for mm in &r.memories {
            let _ =
                write!(body, "<li>{} {}</li>", memory_link(mm.id.as_str()), esc(&opening(&mm.content, 160)));
        }
        body.push_str("</ul>");
    }
    body.push_str(&listing);
    page(&title, "/graph", &body)
}

/// The entities listed, each leading to its own drawing.
fn entities(listed: &[KgEntityCount], every: bool, chosen: Option<&Scope>) -> String {
    if listed.is_empty() {
        return String::new();
    }
    let whose = match (every, chosen) {
        (false, Some(s)) => esc(s.as_str()),
        _ => "every scope".into(),
    };
    let mut out = format!(
        "<details open id=entities><summary>Entities of {whose}, most connected first</summary>\
<table><tr><th>entity</th><th>type</th><th>facts now</th><th>scope</th></tr>"
    );
    for e in listed {
        let _ = write!(
            out,
            "<tr><td><a href=\"/graph?entity={}&amp;scope={}\">{}</a></td><td>{}</td><td class=count>{}</td><td>{}</td></tr>",
            url(&e.entity.name),
            url(e.entity.scope.as_str()),
            esc(&e.entity.name),
            esc(e.entity.kind.as_deref().unwrap_or("")),
            e.facts,
            esc(e.entity.scope.as_str()),
        );
    }
    out.push_str("</table></details>");
    out
}

/// The runs page's query string.
#[derive(Deserialize)]
pub(crate) struct RunsQuery {
    #[serde(default)]
    scope: String,
}

/// `/runs?scope=…`: the lift (served against held-out sessions) and the newest runs.
pub(crate) async fn runs(State(web): State<Arc<Web>>, Query(q): Query<RunsQuery>) -> Response {
    let sc = match scope_param(Some(&q.scope)) {
        Ok(s) => s,
        Err(e) => return error(&e),
    };
    let lift = match web.call::<m::Lift>(LiftParams { scope: sc.clone(), ..LiftParams::default() }).await {
        Ok(r) => r,
        Err(e) => return error(&e),
    };
    let notes = match &sc {
        Some(scope) => match web.call::<m::AdviceList>(AdviceListParams { scope: scope.clone() }).await {
            Ok(r) => Some(r),
            Err(e) => return error(&e),
        },
        None => None,
    };
    let runs = match web.call::<m::Runs>(RunsParams { scope: sc, agent: None, limit: Some(50) }).await {
        Ok(r) => r,
        Err(e) => return error(&e),
    };
    let l = &lift.lift;
    let verdict =
        serde_json::to_value(l.verdict).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default();
    let mut body = format!(
        "<h1>Runs, rewards and lift</h1><h2>Lift</h2><p id=lift>{} sessions read, {} rewarded ({} by a run's reward, {} by the judge only). \
Verdict: <b>{}</b>{}{}.</p><div id=liftchart>{}</div>",
        lift.sessions,
        lift.rewarded,
        lift.by_run,
        lift.judged,
        esc(&verdict.replace('_', " ")),
        l.difference.map(|d| format!(", difference {d:+.3}")).unwrap_or_default(),
        l.p.map(|p| format!(", p {p:.3}")).unwrap_or_default(),
        lift_chart(&[
            Bar { label: "served", n: l.served.n, mean: l.served.mean, sd: l.served.sd },
            Bar { label: "withheld (holdout)", n: l.withheld.n, mean: l.withheld.mean, sd: l.withheld.sd },
        ])
    );
    body.push_str("<h2>Advice notes</h2>");
    match &notes {
        None => body.push_str("<p id=nonotes>Choose a scope to see its advice notes and what their served sessions said of them.</p>"),
        Some(n) if n.situations.iter().all(|s| s.tallies.is_empty()) => {
            body.push_str("<p id=nonotes>No advice note was served in this scope yet.</p>")
        }
        Some(n) => {
            body.push_str("<table id=notes><tr><th>situation</th><th>note</th><th>served</th><th>voices</th><th>applied</th><th>helped</th><th>did not help</th><th>standing</th></tr>");
            for s in &n.situations {
                for t in &s.tallies {
                    let standing = match t.standing {
                        amber_core::advice::Standing::Ratified => "ratified".to_string(),
                        amber_core::advice::Standing::Unhelpful => "withheld: it did not help".to_string(),
                        amber_core::advice::Standing::Open => format!("open (bar {})", t.bar),
                    };
                    let _ = write!(
                        body,
                        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=standing>{}</td></tr>",
                        esc(&t.situation),
                        esc(t.agent.as_deref().unwrap_or("shared")),
                        t.served,
                        t.voices,
                        t.applied,
                        t.helped,
                        t.not_helped,
                        esc(&standing)
                    );
                }
            }
            body.push_str("</table>");
        }
    }
    body.push_str("<h2>Runs</h2>");
    if runs.runs.is_empty() {
        body.push_str("<p id=noruns>No runs recorded.</p>");
    } else {
        body.push_str("<table id=runs><tr><th>when</th><th>agent</th><th>scope</th><th>task</th><th>outcome</th><th>reward</th><th>used</th></tr>");
        for r in &runs.runs {
            let used: Vec<String> = r.used.iter().map(|u| memory_link(u.as_str())).collect();
            let _ = write!(
                body,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                time(r.created_at),
                esc(&r.agent),
                esc(r.scope.as_str()),
                esc(&opening(&r.task, 120)),
                esc(r.outcome.as_deref().unwrap_or("")),
                r.reward.map(|x| format!("{x:.2}")).unwrap_or_default(),
                used.join(" ")
            );
        }
        body.push_str("</table>");
    }
    page("Runs", "/runs", &body)
}

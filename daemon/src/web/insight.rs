//! The knowledge graph around an entity, drawn; and runs, rewards and lift, with the
//! holdout comparison (served against withheld sessions) as a chart.

use std::fmt::Write;
use std::sync::Arc;

use amber_core::graph::FactObject;
use amber_ipc::protocol::{KgTraverseParams, LiftParams, RunsParams, method as m};
use axum::extract::{Query, State};
use axum::response::Response;
use serde::Deserialize;

use super::Web;
use super::html::{error, esc, memory_link, opening, page, scope_param, time};
use super::svg::{Bar, Edge, Node, graph as draw, lift_chart};

/// The graph page's query string.
#[derive(Deserialize)]
pub(crate) struct GraphQuery {
    #[serde(default)]
    entity: String,
    #[serde(default)]
    scope: String,
}

/// `/graph?entity=…&scope=…`: two hops around an entity.
pub(crate) async fn graph(State(web): State<Arc<Web>>, Query(q): Query<GraphQuery>) -> Response {
    let sc = match scope_param(Some(&q.scope)) {
        Ok(s) => s,
        Err(e) => return error(&e),
    };
    let form = format!(
        "<form action=/graph method=get id=graphform><input name=entity value=\"{}\" placeholder=entity aria-label=entity> \
<input name=scope value=\"{}\" placeholder=\"default\" aria-label=scope> <button type=submit>Draw</button></form>",
        esc(&q.entity),
        esc(&q.scope)
    );
    if q.entity.trim().is_empty() {
        return page(
            "Graph",
            "/graph",
            &format!("<h1>Knowledge graph</h1>{form}<p>Name an entity to draw what is around it.</p>"),
        );
    }
    let p = KgTraverseParams {
        scope: sc,
        start: q.entity.clone(),
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
    let mut body = format!("<h1>Knowledge graph</h1>{form}");
    if r.start.is_none() {
        body.push_str("<p id=unknown>No entity of that name.</p>");
        return page("Graph", "/graph", &body);
    }
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
    page(&format!("Graph: {}", q.entity), "/graph", &body)
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

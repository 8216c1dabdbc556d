//! The person's web view (`amber ui`, `ui_start`) over raw HTTP: who may start it, the
//! refusals (no token, a wrong token, a foreign `Host`, a cross-site POST, a POST without
//! the form token), the headers, hostile memory text rendered as text, a forget and an
//! unforget, an outcome, a trust and a move through the forms, and a scope's page; and the
//! view at scale: an ingested tree browsed by file (a file's sections in its order now),
//! a scope's memories filtered by filing, type and trust and paged with counts, the
//! search defaulting to the scopes `amber recall` searches where `amber ui` ran, and the
//! graph opening on the project's entities. Against the real daemon and model. The same
//! view in a real browser: tests/web/test_web.py.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;

use common::{Daemon, as_person, person_at};
use serde_json::{Value, json};

const HOSTILE: &str = "the build breaks on <script>alert('amber')</script> and <img src=x onerror=alert(1)>";

/// One HTTP/1.1 exchange on a fresh connection: the status, the head and the body.
fn http(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> (u16, String, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    if method == "POST" {
        req.push_str(&format!(
            "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    let status = head.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    (status, head.to_ascii_lowercase(), body.to_string())
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|l| l.strip_prefix(&format!("{name}: ")))
}

#[test]
fn the_web_view_refuses_strangers_and_renders_memories_as_text() {
    let d = Daemon::start(&[]);
    let mut c = d.client();
    // A client library is not the person: it cannot start the view.
    let e = c.call_value("ui_start", json!({})).unwrap_err();
    assert_eq!(e.kind().map(|k| k.as_str()), Some("not_permitted"), "{e}");

    let r = c.call_value("remember", json!({ "content": HOSTILE, "scope": "proj/web" })).unwrap();
    let id = r["id"].as_str().unwrap().to_string();

    // The person starts it; a second start gives the same server, with a new link. A
    // link holds a one-time code, never the token (which would sit on the browser's
    // command line, readable by every local user).
    let ui = as_person(&d, &["ui", "--no-open"]);
    let url = ui["url"].as_str().unwrap().to_string();
    let port = u16::try_from(ui["port"].as_u64().unwrap()).unwrap();
    assert_eq!(ui["started"], Value::Bool(true));
    assert!(url.starts_with(&format!("http://127.0.0.1:{port}/?code=")), "{url}");
    let code = url.rsplit("code=").next().unwrap().to_string();
    assert_eq!(code.len(), 64, "256 bits as hex");
    let again = as_person(&d, &["ui", "--no-open"]);
    let second = again["url"].as_str().unwrap().to_string();
    assert!(second.starts_with(&format!("http://127.0.0.1:{port}/?code=")) && second != url, "{second}");
    assert_eq!(again["started"], Value::Bool(false));

    // No cookie, a wrong code: refused, with the hardening headers and no CORS.
    let (st, head, _) = http(port, "GET", "/", &[], "");
    assert_eq!(st, 401);
    assert!(header(&head, "x-frame-options") == Some("deny"), "{head}");
    assert!(!head.contains("access-control-"), "{head}");
    assert_eq!(http(port, "GET", "/?code=00ff", &[], "").0, 401);
    assert_eq!(http(port, "GET", &format!("/memory/{id}"), &[], "").0, 401);

    // The link's first visit: a strict, HttpOnly cookie and a redirect without the code;
    // the same link again is refused (spent), the second link still works once.
    let (st, head, _) = http(port, "GET", &format!("/?code={code}"), &[], "");
    assert_eq!(st, 303, "{head}");
    assert_eq!(header(&head, "location"), Some("/"));
    let set = header(&head, "set-cookie").unwrap().to_string();
    assert!(set.contains("httponly") && set.contains("samesite=strict"), "{set}");
    assert_eq!(http(port, "GET", &format!("/?code={code}"), &[], "").0, 401, "a spent code");
    let token = set.split(';').next().unwrap().split_once('=').unwrap().1.to_string();
    assert!(token.len() == 64 && !url.contains(&token) && !second.contains(&token), "{set}");
    let second_code = second.rsplit("code=").next().unwrap();
    assert_eq!(http(port, "GET", &format!("/?code={second_code}"), &[], "").0, 303);
    let cookie = format!("amber_ui_{port}={token}");
    let with = |extra: &[(&'static str, String)]| -> Vec<(String, String)> {
        let mut v = vec![("Cookie".to_string(), cookie.clone())];
        v.extend(extra.iter().map(|(k, v)| (k.to_string(), v.clone())));
        v
    };
    let get = |path: &str, extra: &[(&'static str, String)]| {
        let h = with(extra);
        let h: Vec<(&str, &str)> = h.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        http(port, "GET", path, &h, "")
    };

    // A foreign Host (DNS rebinding) is refused even with the cookie; localhost is ours.
    assert_eq!(get("/", &[("Host", format!("evil.example:{port}"))]).0, 421);
    assert_eq!(get("/", &[("Host", "127.0.0.1:1".into())]).0, 421);
    assert_eq!(get("/", &[("Host", format!("localhost:{port}"))]).0, 200);

    // Every page loads; the headers hold on each.
    for path in [
        "/",
        "/sessions",
        "/archive",
        "/health",
        "/runs",
        "/graph",
        "/graph?entity=nobody",
        "/search?q=build",
    ] {
        let (st, head, body) = get(path, &[]);
        assert_eq!(st, 200, "{path}: {body}");
        let csp = header(&head, "content-security-policy").unwrap();
        assert!(csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'"), "{csp}");
        assert_eq!(header(&head, "referrer-policy"), Some("no-referrer"));
        assert!(!head.contains("access-control-"), "{path}: {head}");
        assert!(!body.contains("<script"), "{path} holds a script tag");
    }

    // Hostile text is text: on its page and in a search.
    let (st, _, page) = get(&format!("/memory/{id}"), &[]);
    assert_eq!(st, 200);
    assert!(page.contains("&lt;script&gt;alert(&#39;amber&#39;)&lt;/script&gt;"), "{page}");
    assert!(page.contains("&lt;img src=x onerror=alert(1)&gt;"));
    assert!(!page.contains("<script") && !page.contains("<img"), "markup from a memory reached the page");
    // `amber ui` ran outside proj/web: the search of this project and `user` finds
    // nothing good and names where better matches are; every scope finds it.
    let (_, _, none) = get("/search?q=build+breaks", &[]);
    assert!(none.contains("id=nohits>No good match"), "{none}");
    let there =
        "id=elsewhere>Better matches are in <a href=\"/search?q=build%20breaks&amp;scope=proj%2Fweb\">";
    assert!(none.contains(there), "{none}");
    let (_, _, hits) = get("/search?q=build+breaks&in=all", &[]);
    assert!(hits.contains(&id[..12]) && hits.contains("&lt;script&gt;"), "{hits}");
    assert!(!hits.contains("<script"));

    // The form token the page holds (not the cookie's secret).
    let form = page.split("name=form value=\"").nth(1).unwrap().split('"').next().unwrap().to_string();
    assert_ne!(form, token);
    let post = |path: &str, extra: &[(&'static str, String)], body: &str| {
        let h = with(extra);
        let h: Vec<(&str, &str)> = h.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        http(port, "POST", path, &h, body)
    };
    let forget = format!("/memory/{id}/forget");
    let own = ("Origin", format!("http://127.0.0.1:{port}"));
    // Cross-site (a foreign Origin, or a browser saying so), no form token, no cookie: 403/401.
    assert_eq!(post(&forget, &[("Origin", "http://evil.example".into())], &format!("form={form}")).0, 403);
    assert_eq!(post(&forget, &[("Sec-Fetch-Site", "cross-site".into())], &format!("form={form}")).0, 403);
    assert_eq!(post(&forget, &[("Origin", "null".into())], &format!("form={form}")).0, 403);
    assert_eq!(
        post(
            &forget,
            &[("Origin", "null".into()), ("Sec-Fetch-Site", "same-site".into())],
            &format!("form={form}")
        )
        .0,
        403
    );
    assert_eq!(post(&forget, std::slice::from_ref(&own), "").0, 403);
    assert_eq!(post(&forget, std::slice::from_ref(&own), &format!("form={token}")).0, 403);
    let h = [("Origin", own.1.as_str())];
    assert_eq!(http(port, "POST", &forget, &h, &format!("form={form}")).0, 401);
    let live = c.call_value("get", json!({ "id": id })).unwrap();
    assert!(
        live["memory"].get("forgotten_at").is_none_or(Value::is_null),
        "a refused POST changed it: {live}"
    );

    // The view's own form: forgotten, then back.
    let (st, head, _) = post(&forget, std::slice::from_ref(&own), &format!("form={form}"));
    assert_eq!(st, 303, "{head}");
    assert_eq!(header(&head, "location"), Some(format!("/memory/{id}").as_str()));
    let gone = c.call_value("get", json!({ "id": id })).unwrap();
    assert!(gone["memory"]["forgotten_at"].is_i64(), "{gone}");
    let (_, _, page) = get(&format!("/memory/{id}"), &[]);
    assert!(page.contains("<span id=state>forgotten"), "{page}");
    assert_eq!(
        post(&format!("/memory/{id}/unforget"), std::slice::from_ref(&own), &format!("form={form}")).0,
        303
    );
    let back = c.call_value("get", json!({ "id": id })).unwrap();
    assert!(back["memory"].get("forgotten_at").is_none_or(Value::is_null), "{back}");
    // An outcome from the page lands in the memory's log, as the person's word.
    let (st, _, _) = post(
        &format!("/memory/{id}/outcome"),
        std::slice::from_ref(&own),
        &format!("form={form}&result=failure&note=wrong"),
    );
    assert_eq!(st, 303);
    let log = c.call_value("outcomes", json!({ "memory_id": id })).unwrap();
    assert_eq!(log["reports"].as_array().map(Vec::len), Some(1), "{log}");
    // The page demotes it to external: the person's word, through `set_trust`.
    let (st, _, _) = post(
        &format!("/memory/{id}/trust"),
        std::slice::from_ref(&own),
        &format!("form={form}&trust=external"),
    );
    assert_eq!(st, 303);
    let m = c.call_value("get", json!({ "id": id })).unwrap();
    assert_eq!(m["memory"]["metadata"]["trust"], "external", "{m}");
    assert_eq!(m["memory"]["metadata"]["trust_set"]["by"], "person", "{m}");
    let (st, _, _) =
        post(&format!("/memory/{id}/trust"), std::slice::from_ref(&own), &format!("form={form}&trust=boss"));
    assert_eq!(st, 400, "a trust that is no level is refused");

    // The scope's own page lists it, as text; the scopes page links there.
    let (_, _, scopes) = get("/", &[]);
    assert!(scopes.contains("href=\"/scope?name=proj%2Fweb\""), "{scopes}");
    let (st, _, listed) = get("/scope?name=proj%2Fweb", &[]);
    assert_eq!(st, 200, "{listed}");
    assert!(
        listed.contains(&format!("href=\"/memory/{id}\"")) && listed.contains("&lt;script&gt;"),
        "{listed}"
    );
    assert!(!listed.contains("<script") && !listed.contains("id=older"), "one page: {listed}");
    assert_eq!(get("/scope", &[]).0, 400, "a scope page names its scope");

    // Moved from its page (the form's token and origin checked as for any change): the
    // answer is its page under its new id, and the old id's page says where it went.
    let moving = format!("/memory/{id}/move");
    assert_eq!(post(&moving, std::slice::from_ref(&own), "to=proj%2Fmoved").0, 403, "no form token");
    assert_eq!(post(&moving, std::slice::from_ref(&own), &format!("form={form}&to=")).0, 400, "no scope");
    let (st, head, _) = post(&moving, std::slice::from_ref(&own), &format!("form={form}&to=proj%2Fmoved"));
    assert_eq!(st, 303, "{head}");
    let to = header(&head, "location").unwrap().strip_prefix("/memory/").unwrap().to_string();
    assert!(to.len() == 32 && to != id, "{head}");
    let (st, _, page) = get(&format!("/memory/{to}"), &[]);
    assert_eq!(st, 200);
    assert!(page.contains("<tr><th>scope</th><td>proj/moved</td></tr>"), "{page}");
    let (st, _, old) = get(&format!("/memory/{id}"), &[]);
    assert_eq!(st, 404);
    assert!(
        old.contains("moved to another scope") && old.contains(&format!("href=\"/memory/{to}\"")),
        "{old}"
    );
    let (st, _, _) = post(&format!("/memory/{to}/move"), &[own], &format!("form={form}&to=proj%2Fmoved"));
    assert_eq!(st, 400, "into the scope it is in: refused");
}

/// The view as the person's browser holds it: its port and the cookie a link's code gave.
struct View {
    port: u16,
    cookie: String,
}

impl View {
    /// `amber ui` run in `cwd`, its link's code redeemed for the cookie.
    fn open(d: &Daemon, cwd: &std::path::Path) -> View {
        let out = person_at(d, Some(cwd), &["ui", "--no-open"]);
        assert!(out.status.success(), "amber ui: {}", String::from_utf8_lossy(&out.stderr));
        let ui: Value = serde_json::from_slice(&out.stdout).unwrap();
        let port = u16::try_from(ui["port"].as_u64().unwrap()).unwrap();
        let code = ui["url"].as_str().unwrap().rsplit("code=").next().unwrap().to_string();
        let (st, head, _) = http(port, "GET", &format!("/?code={code}"), &[], "");
        assert_eq!(st, 303, "{head}");
        let set = header(&head, "set-cookie").unwrap();
        View { port, cookie: set.split(';').next().unwrap().to_string() }
    }

    /// A page: its status and body.
    fn get(&self, path: &str) -> (u16, String) {
        let (st, _, body) = http(self.port, "GET", path, &[("Cookie", &self.cookie)], "");
        assert!(!body.contains("<script"), "{path} holds a script tag");
        (st, body)
    }

    /// A page that must load.
    fn page(&self, path: &str) -> String {
        let (st, body) = self.get(path);
        assert_eq!(st, 200, "{path}: {body}");
        body
    }
}

/// The text after `marker` (an attribute closing its tag) up to the next tag.
fn text_at<'a>(body: &'a str, marker: &str) -> &'a str {
    let at = body.find(marker).unwrap_or_else(|| panic!("no {marker} in {body}"));
    let rest = &body[at + marker.len()..];
    &rest[..rest.find('<').unwrap_or(rest.len())]
}

/// The text of the element with this id.
fn text_of<'a>(body: &'a str, id: &str) -> &'a str {
    text_at(body, &format!("id={id}>"))
}

/// One section of a Markdown file.
fn step(i: usize) -> String {
    format!("## Step {i:03}\n\nDo step {i} of the rollout: check the gauges on host {i}.\n\n")
}

const GUIDE_STEPS: usize = 150;
const OPS_RUNBOOKS: usize = 100;

#[test]
fn the_web_view_browses_files_filters_pages_and_searches_where_amber_ui_ran() {
    let d = Daemon::start(&[]);
    let mut c = d.client();
    let proj = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(proj.path()).unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(root.join("docs")).unwrap();
    let run = |args: &[&str]| -> Value {
        let out = person_at(&d, Some(&root), args);
        assert!(out.status.success(), "amber {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let here = run(&["scope", "here"]);
    let scope = here["scope"].as_str().unwrap().to_string();
    let enc = |s: &str| s.replace('/', "%2F");

    // The person's own memories and an agent's in the project, one in `user`, one in
    // another project that matches the same search.
    for text in [
        "The rollout checklist: watch the gauges before every step",
        "Never roll out on a Friday",
        "Host 7 needs a manual restart after the rollout",
    ] {
        run(&["remember", text]);
    }
    run(&["remember", "--scope", "user", "I like the rollout gauges summarised in one line"]);
    for (text, kind) in
        [("The gauges live on the ops dashboard", "discovery"), ("Rollouts took 2 hours", "fact")]
    {
        c.call_value(
            "remember",
            json!({ "content": text, "scope": scope, "type": kind, "author": "claude-code" }),
        )
        .unwrap();
    }
    let other = json!({ "content": "Rollout gauges checklist of another team", "scope": "elsewhere/team" });
    c.call_value("remember", other).unwrap();

    // An ingested tree: 151 + 100 + 1 sections in three files (one with hostile headings).
    let guide = root.join("docs/guide.md");
    let head = "# Guide\n\nThe rollout, step by step.\n\n";
    std::fs::write(&guide, format!("{head}{}", (1..=GUIDE_STEPS).map(step).collect::<String>())).unwrap();
    let ops: String =
        (1..=OPS_RUNBOOKS).map(|i| format!("## Runbook {i}\n\nRestart worker {i}.\n\n")).collect();
    std::fs::write(root.join("docs/ops.md"), format!("# Ops\n\n{ops}")).unwrap();
    std::fs::write(root.join("docs/hostile.md"), format!("# Alert {HOSTILE}\n\nbody {HOSTILE}\n")).unwrap();
    run(&["ingest", root.join("docs").to_str().unwrap()]);
    let sections = GUIDE_STEPS + 1 + OPS_RUNBOOKS + 1;

    c.call_value(
        "kg_add",
        json!({ "scope": scope, "facts": [
            { "subject": "rollout", "predicate": "watches", "object": "gauges" },
            { "subject": "rollout", "predicate": "runs on", "object": "host 7" },
            { "subject": "gauges", "predicate": "shown on", "object": "ops dashboard" },
        ] }),
    )
    .unwrap();
    let listed = c.call_value("kg_entities", json!({ "scope": scope })).unwrap();
    assert_eq!(listed["entities"][0]["entity"]["name"], "rollout", "{listed}");
    assert_eq!(listed["entities"][0]["facts"], 2, "{listed}");

    let view = View::open(&d, &root);
    let at = format!("/scope?name={}", enc(&scope));

    // The scope's page: its files apart, with their sections counted; its other
    // memories listed, counted; no wall of chunks.
    let page = view.page(&at);
    assert!(text_of(&page, "held").starts_with(&format!("{} live memories", sections + 5)), "{page}");
    assert!(page.contains(&format!("{sections} document sections</a> in 3 files")), "{page}");
    let files_table = &page[page.find("id=files>").unwrap()..page.find("<h2>Memories").unwrap()];
    assert_eq!(files_table.matches("class=file ").count(), 3, "{files_table}");
    for (label, n) in
        [("docs/guide.md", GUIDE_STEPS + 1), ("docs/ops.md", OPS_RUNBOOKS), ("docs/hostile.md", 1)]
    {
        let row = files_table.split("<tr>").find(|r| r.contains(&format!(">{label}</a>"))).expect(label);
        assert!(row.contains(&format!("class=count>{n}<")), "{label}: {row}");
    }
    assert_eq!(
        text_of(&page, "count"),
        "1–5 of 5 (document sections are listed by file, above), newest filed first"
    );
    assert!(!page.contains("class=trail"), "no chunk among the memories by default");
    assert!(!page.contains("id=older"), "one page");

    // Filters: trust, type, filing; each counted.
    let agent = view.page(&format!("{at}&trust=agent"));
    assert!(text_of(&agent, "count").starts_with("1–2 of 2"), "{agent}");
    let found = view.page(&format!("{at}&type=discovery"));
    assert!(text_of(&found, "count").starts_with("1–1 of 1") && found.contains("The gauges live"), "{found}");
    let mine = view.page(&format!("{at}&filing=person"));
    assert!(text_of(&mine, "count").starts_with("1–3 of 3") && !mine.contains("Rollouts took"), "{mine}");
    assert_eq!(view.get(&format!("{at}&filing=curated")).0, 400, "a filing that is none");

    // Document sections as a flat list, paged by 40 with counts: first, a middle page, last.
    let docs = view.page(&format!("{at}&filing=document"));
    assert!(text_of(&docs, "count").starts_with(&format!("1–40 of {sections}")), "{docs}");
    assert_eq!(docs.matches("class=trail").count(), 40);
    assert!(docs.contains("docs/ops.md › Ops") && docs.contains("id=older"), "{docs}");
    let last = sections.div_ceil(40);
    assert_eq!(text_of(&docs, "pageno"), format!("page 1 of {last}"));
    let two = view.page(&format!("{at}&filing=document&page=2"));
    assert!(text_of(&two, "count").starts_with(&format!("41–80 of {sections}")), "{two}");
    assert!(two.contains("id=newer") && two.contains("id=older"));
    let end = view.page(&format!("{at}&filing=document&page={last}"));
    let first = (last - 1) * 40 + 1;
    assert!(text_of(&end, "count").starts_with(&format!("{first}–{sections} of {sections}")), "{end}");
    assert!(!end.contains("id=older") && end.contains("id=newest"));
    for page in ["999", "18446744073709551615"] {
        let past = view.page(&format!("{at}&filing=document&page={page}"));
        assert_eq!(text_of(&past, "pageno"), format!("page {last} of {last}"), "past the end: the last page");
        assert_eq!(past.matches("class=trail").count(), sections - (last - 1) * 40);
    }
    let files_past = view.page(&format!("/files?scope={}&page=18446744073709551615", enc(&scope)));
    assert!(text_of(&files_past, "count").starts_with("1–3 of 3"), "{files_past}");

    // Every file of the scope, and one file's sections in its order; hostile headings are text.
    let files = view.page(&format!("/files?scope={}", enc(&scope)));
    assert!(text_of(&files, "count").starts_with("1–3 of 3"), "{files}");
    let hostile = view.page(&format!(
        "/file?scope={}&path={}",
        enc(&scope),
        enc(root.join("docs/hostile.md").to_str().unwrap())
    ));
    assert!(hostile.contains("&lt;script&gt;alert(&#39;amber&#39;)&lt;/script&gt;"), "{hostile}");
    let file = format!("/file?scope={}&path={}", enc(&scope), enc(guide.to_str().unwrap()));
    let sections_of = |body: &str| -> Vec<String> {
        body.split("<li class=section>").skip(1).map(|li| text_at(li, "class=heading>").to_string()).collect()
    };
    let mut want = vec!["Guide".to_string()];
    want.extend((1..=GUIDE_STEPS).map(|i| format!("Step {i:03}")));
    let listed = view.page(&file);
    assert_eq!(sections_of(&listed), want);
    assert_eq!(
        text_of(&listed, "count"),
        format!("{} sections, in their order in the file.", GUIDE_STEPS + 1)
    );
    assert!(listed.contains("Do step 1 of the rollout") && listed.contains("lines 5–7"), "{listed}");

    // The file edited, not ingested again: its sections follow the file as it is now.
    let moved: String = (1..=GUIDE_STEPS).filter(|i| *i != 2).map(step).collect();
    std::fs::write(&guide, format!("{head}{moved}{}", step(2))).unwrap();
    let now = view.page(&file);
    want.remove(2);
    want.push("Step 002".into());
    assert_eq!(sections_of(&now), want, "in the order of the file now");
    assert!(now.contains("this text is still there"), "{now}");
    assert_eq!(view.get(&format!("/file?scope={}&path=%2Fnone.md", enc(&scope))).0, 404);

    // The search: by default the scopes `amber recall` searches where `amber ui` ran.
    let searched = view.page("/search?q=rollout+gauges+checklist");
    assert_eq!(text_of(&searched, "here"), format!("{scope} + user"));
    assert!(searched.contains("value=here checked"), "{searched}");
    assert!(searched.contains("The rollout checklist") && !searched.contains("another team"), "{searched}");
    assert!(!searched.contains("[elsewhere/team]"), "{searched}");
    assert!(
        searched.contains("id=everywhere href=\"/search?q=rollout%20gauges%20checklist&amp;in=all\""),
        "{searched}"
    );
    let everywhere = view.page("/search?q=rollout+gauges+checklist&in=all");
    assert!(everywhere.contains("another team") && everywhere.contains("id=every checked"), "{everywhere}");
    let one = view.page("/search?q=rollout+gauges&scope=elsewhere%2Fteam");
    assert!(one.contains("another team") && !one.contains("The rollout checklist"), "{one}");

    // The graph opens on the project's entities, the most connected drawn.
    let graph = view.page("/graph");
    assert!(graph.contains("id=entities") && graph.contains(&format!("Entities of {scope}")), "{graph}");
    assert_eq!(text_of(&graph, "drawn"), "Around rollout");
    assert!(graph.matches("<circle").count() >= 3, "{graph}");

    // `amber list` filters as the page does.
    let listed = run(&["list", &scope, "--filing", "person"]);
    assert_eq!(listed["memories"].as_array().map(Vec::len), Some(3), "{listed}");
    let chunks = run(&["list", &scope, "--filing", "document", "--limit", "2"]);
    assert_eq!(chunks["memories"][0]["filing"], "document", "{chunks}");
    assert!(chunks["memories"][0]["file"].as_str().is_some_and(|f| f.starts_with("docs/")), "{chunks}");
}

//! The person's web view (`amber ui`, `ui_start`) over raw HTTP: who may start it, the
//! refusals (no token, a wrong token, a foreign `Host`, a cross-site POST, a POST without
//! the form token), the headers, hostile memory text rendered as text, a forget and an
//! unforget, an outcome, a trust and a move through the forms, and a scope's page.
//! Against the real daemon and model. The same view in a real browser:
//! tests/web/test_web.py.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;

use common::{Daemon, as_person};
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
    let (_, _, hits) = get("/search?q=build+breaks", &[]);
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

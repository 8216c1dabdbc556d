//! Who may ask the web view, and the headers every answer carries (docs/SECURITY.md,
//! "The web view"). In order, for every request:
//!
//! 1. `Host` is exactly `127.0.0.1:PORT` or `localhost:PORT`, else 421: a page of another
//!    site whose name was rebound to 127.0.0.1 (DNS rebinding) names its own host.
//! 2. The token: `?code=…` on a GET (the link `amber ui` opens, its code good for one
//!    load within two minutes) sets an HttpOnly, SameSite=Strict cookie holding the
//!    per-start token and redirects to the same URL without the code; every other request
//!    carries the cookie. The token is never in a URL, so never on the browser's command
//!    line. No cookie, a wrong one, or a used or stale code: 401.
//! 3. A POST (every change) comes from the view's own pages: `Sec-Fetch-Site`, when the
//!    browser sends it, is `same-origin`; `Origin`, when sent, is the server's own (or
//!    `null`, which browsers send for their own forms under `no-referrer`, with
//!    `Sec-Fetch-Site: same-origin`); and the form carries the form token (`form`),
//!    which only the view's pages hold. Else 403.
//!
//! No CORS header is ever sent, so no other origin may read an answer.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::Web;

/// The largest form body read (the forms hold an id, a word, a scope).
const MAX_FORM_BYTES: usize = 64 * 1024;

/// The Content-Security-Policy of every answer: nothing from elsewhere, no script at all,
/// styles and images only from the page itself, forms posting only to the view, and no
/// framing.
pub(crate) const CSP: &str = "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; \
     form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// Compares two secrets in time independent of where they differ.
pub(crate) fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The cookie's name: one per port, so two views (two data directories) do not clash.
fn cookie_name(web: &Web) -> String {
    format!("amber_ui_{}", web.port)
}

fn refuse(status: StatusCode, why: &str) -> Response {
    let body = format!(
        "<!doctype html><meta charset=utf-8><title>Amber: refused</title><h1>{}</h1><p>{}</p>",
        status.as_u16(),
        super::html::esc(why)
    );
    (status, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
}

/// The headers every answer carries, refusals included.
fn harden(mut r: Response) -> Response {
    let h = r.headers_mut();
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert("cross-origin-opener-policy", HeaderValue::from_static("same-origin"));
    h.insert("cross-origin-resource-policy", HeaderValue::from_static("same-origin"));
    r
}

/// The `Host` header, when it is one of the view's own two names.
fn own_host(web: &Web, headers: &HeaderMap) -> Option<String> {
    let host = headers.get(header::HOST)?.to_str().ok()?;
    let ok = [format!("127.0.0.1:{}", web.port), format!("localhost:{}", web.port)];
    ok.into_iter().find(|h| h == host)
}

/// The value of `name` in a `k=v&k=v` string (raw: the tokens are hex).
pub(crate) fn pair<'a>(query: &'a str, name: &str) -> Option<&'a str> {
    query.split('&').filter_map(|kv| kv.split_once('=')).find(|(k, _)| *k == name).map(|(_, v)| v)
}

/// The cookie's value in the request's `Cookie` headers.
fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// The middleware in front of every route.
pub(crate) async fn guard(State(web): State<Arc<Web>>, req: Request, next: Next) -> Response {
    harden(check(&web, req, next).await)
}

async fn check(web: &Web, req: Request, next: Next) -> Response {
    let Some(host) = own_host(web, req.headers()) else {
        return refuse(
            StatusCode::MISDIRECTED_REQUEST,
            "this server answers only to 127.0.0.1 and localhost on its own port",
        );
    };
    let query = req.uri().query().unwrap_or("");
    if let Some(given) = pair(query, "code") {
        if req.method() != Method::GET || !web.redeem(given) {
            return refuse(
                StatusCode::UNAUTHORIZED,
                "this link was used already or is older than two minutes: run `amber ui` again",
            );
        }
        // The code is spent; the token goes into the cookie, the code out of the URL.
        let rest: Vec<&str> = query.split('&').filter(|kv| !kv.starts_with("code=")).collect();
        let mut to = req.uri().path().to_string();
        if !rest.is_empty() {
            to = format!("{to}?{}", rest.join("&"));
        }
        let cookie = format!("{}={}; HttpOnly; SameSite=Strict; Path=/", cookie_name(web), web.token);
        return (StatusCode::SEE_OTHER, [(header::LOCATION, to), (header::SET_COOKIE, cookie)])
            .into_response();
    }
    if !cookie(req.headers(), &cookie_name(web)).is_some_and(|c| same(c.as_bytes(), web.token.as_bytes())) {
        return refuse(StatusCode::UNAUTHORIZED, "this page needs the token: run `amber ui` to open it");
    }
    if req.method() == Method::POST {
        return match posted(web, &host, req).await {
            Ok(req) => next.run(req).await,
            Err(r) => r,
        };
    }
    next.run(req).await
}

/// A POST's checks: same origin, and the form token in its body. The body is read here
/// (at most [`MAX_FORM_BYTES`]) and handed on.
async fn posted(web: &Web, host: &str, req: Request) -> Result<Request, Response> {
    let h = req.headers();
    if let Some(site) = h.get("sec-fetch-site").and_then(|v| v.to_str().ok())
        && site != "same-origin"
    {
        return Err(refuse(StatusCode::FORBIDDEN, "a change must come from this view's own pages"));
    }
    let same_origin = h.get("sec-fetch-site").is_some_and(|v| v.as_bytes() == b"same-origin");
    if let Some(origin) = h.get(header::ORIGIN) {
        // Under `Referrer-Policy: no-referrer` a browser sends `Origin: null` even for its
        // own form: then only its word that the request is same-origin lets it by.
        let own = origin.as_bytes() == format!("http://{host}").as_bytes();
        if !(own || origin.as_bytes() == b"null" && same_origin) {
            return Err(refuse(StatusCode::FORBIDDEN, "a change must come from this view's own origin"));
        }
    }
    let (parts, body) = req.into_parts();
    let bytes: Bytes = axum::body::to_bytes(body, MAX_FORM_BYTES)
        .await
        .map_err(|_| refuse(StatusCode::PAYLOAD_TOO_LARGE, "the form is too large"))?;
    let text = std::str::from_utf8(&bytes).unwrap_or("");
    if !pair(text, "form").is_some_and(|f| same(f.as_bytes(), web.form.as_bytes())) {
        return Err(refuse(StatusCode::FORBIDDEN, "the form lacks this view's token: reload the page"));
    }
    Ok(Request::from_parts(parts, Body::from(bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_compare_whole_and_pairs_are_found_by_name() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"abcd"));
        assert_eq!(pair("a=1&token=ff&b=2", "token"), Some("ff"));
        assert_eq!(pair("xtoken=ff", "token"), None);
        let mut h = HeaderMap::new();
        h.insert(header::COOKIE, HeaderValue::from_static("x=1; amber_ui_5=tok"));
        assert_eq!(cookie(&h, "amber_ui_5"), Some("tok"));
        assert_eq!(cookie(&h, "amber_ui_6"), None);
    }
}

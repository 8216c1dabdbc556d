//! Escaping and the page frame. Every memory, scope, agent name and error is text from
//! outside (memories are hostile content), so each goes through [`esc`] before it is
//! put in a page; nothing is ever put in a page unescaped but the markup written here.

use amber_core::Millis;
use amber_ipc::protocol::{ErrorKind, ErrorObject};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};

/// Text made safe for an HTML element or a quoted attribute.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Text made safe for a URL's path segment or query value.
pub(crate) fn url(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A scope from a query string: empty means none.
pub(crate) fn scope_param(s: Option<&str>) -> Result<Option<amber_core::Scope>, ErrorObject> {
    match s.map(str::trim).filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(s) => s
            .parse()
            .map(Some)
            .map_err(|e: amber_core::InvalidInput| ErrorObject::new(ErrorKind::InvalidParams, e.to_string())),
    }
}

/// A time in UTC, to the minute (`2026-12-05 15:55`).
pub(crate) fn time(ms: Millis) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}", rem / 3600, rem % 3600 / 60)
}

/// The opening of a text, at most `n` characters.
pub(crate) fn opening(s: &str, n: usize) -> String {
    let mut t: String = s.chars().take(n).collect();
    if t.len() < s.len() {
        t.push('…');
    }
    t
}

/// A count with thousands separated (`1,204`).
pub(crate) fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The page asked for (1-based), kept within `1..=pages` (one page when there is none).
pub(crate) fn page_of(asked: Option<u64>, total: u64, per: u64) -> (u64, u64) {
    let pages = total.div_ceil(per).max(1);
    (asked.unwrap_or(1).clamp(1, pages), pages)
}

/// Which of `total` a page shows: `41–80 of 1,204`, or `none`.
pub(crate) fn shown(page: u64, per: u64, total: u64) -> String {
    if total == 0 {
        return "none".into();
    }
    let first = (page - 1) * per + 1;
    let last = (page * per).min(total);
    format!("{}–{} of {}", count(first), count(last), count(total))
}

/// The links between pages: first, previous, where this is, next, last. `base` is a
/// URL (already escaped for an attribute) that takes `&amp;page=N`.
pub(crate) fn pager(base: &str, page: u64, pages: u64) -> String {
    let link = |n: u64, id: &str, label: &str| format!("<a href=\"{base}&amp;page={n}\" id={id}>{label}</a>");
    let mut out = String::from("<nav id=paging>");
    if page > 1 {
        out.push_str(&link(1, "newest", "« first"));
        out.push_str(&link(page - 1, "newer", "‹ previous"));
    }
    out.push_str(&format!("<span id=pageno>page {} of {}</span>", count(page), count(pages)));
    if page < pages {
        out.push_str(&link(page + 1, "older", "next ›"));
        out.push_str(&link(pages, "oldest", "last »"));
    }
    out.push_str("</nav>");
    out
}

/// A `<select>` of `name` with `options` (value, label), `chosen` selected.
pub(crate) fn select(name: &str, label: &str, options: &[(&str, String)], chosen: &str) -> String {
    let opts: String = options
        .iter()
        .map(|(v, l)| {
            let on = if *v == chosen { " selected" } else { "" };
            format!("<option value=\"{}\"{on}>{}</option>", esc(v), esc(l))
        })
        .collect();
    format!("<label>{} <select name={name}>{opts}</select></label>", esc(label))
}

/// A link to a memory page, showing its short id.
pub(crate) fn memory_link(id: &str) -> String {
    format!("<a class=id href=\"/memory/{}\">{}</a>", url(id), esc(&id.chars().take(12).collect::<String>()))
}

/// A link to a session page.
pub(crate) fn session_link(id: &str) -> String {
    format!("<a href=\"/session/{}\">{}</a>", url(id), esc(&opening(id, 24)))
}

/// A POST form of one button, with the form token.
pub(crate) fn button(form: &str, action: &str, label: &str, fields: &[(&str, &str)]) -> String {
    let hidden: String = fields
        .iter()
        .map(|(k, v)| format!("<input type=hidden name=\"{}\" value=\"{}\">", esc(k), esc(v)))
        .collect();
    format!(
        "<form method=post action=\"{}\" class=inline><input type=hidden name=form value=\"{}\">{hidden}<button type=submit>{}</button></form>",
        esc(action),
        esc(form),
        esc(label)
    )
}

const STYLE: &str = "body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#222;background:#fbfaf7}\
header{background:#3b2f1e;color:#f5d58a;padding:.5em 1em;display:flex;gap:1.2em;align-items:center;flex-wrap:wrap}\
header a{color:#f5d58a;text-decoration:none}header a.on{text-decoration:underline}header b{font-size:1.2em}\
header form{margin-left:auto}main{padding:1em 1.5em;max-width:1100px}\
table{border-collapse:collapse;width:100%;margin:.5em 0}td,th{border-bottom:1px solid #e4dfd3;padding:.3em .5em;text-align:left;vertical-align:top}\
th{font-weight:600;background:#f1ece0}pre{white-space:pre-wrap;word-break:break-word;background:#fff;border:1px solid #e4dfd3;padding:.8em}\
.id{font-family:ui-monospace,monospace}.muted{color:#777}.trust-person{color:#1d6b2f}.trust-agent{color:#2b4f8f}.trust-external{color:#a23b12}\
form.inline{display:inline;margin-right:.4em}button{cursor:pointer}.note{background:#fff6d8;border:1px solid #e9d48a;padding:.5em .8em}\
.err{background:#fde4e0;border:1px solid #e0a497;padding:.5em .8em}svg{background:#fff;border:1px solid #e4dfd3}\
nav#paging{margin:.6em 0}nav#paging>*{margin-right:.8em}ol#sections li{margin:.5em 0}\
ol#sections .opening{white-space:pre-wrap;font-family:ui-monospace,monospace;font-size:13px;color:#444}\
form.filters label{margin-right:.8em}.trail{color:#5a4a2a}";

const NAV: &[(&str, &str)] = &[
    ("/", "Scopes"),
    ("/sessions", "Sessions"),
    ("/archive", "Archive"),
    ("/graph", "Graph"),
    ("/runs", "Runs"),
    ("/health", "Health"),
];

/// A whole page: the frame, the navigation (with `active` marked) and the body.
pub(crate) fn page(title: &str, active: &str, body: &str) -> Response {
    let nav: String = NAV
        .iter()
        .map(|(href, label)| {
            let on = if *href == active { " class=on" } else { "" };
            format!("<a href=\"{href}\"{on}>{label}</a>")
        })
        .collect();
    Html(format!(
        "<!doctype html><html lang=en><head><meta charset=utf-8><meta name=viewport content=\"width=device-width\">\
<title>{} · Amber</title><style>{STYLE}</style></head><body><header><b>Amber</b>{nav}\
<form action=/search method=get><input name=q type=search placeholder=\"search memories\" aria-label=search>\
<button type=submit>Search</button></form></header><main>{body}</main></body></html>",
        esc(title)
    ))
    .into_response()
}

/// A method's error as a page, with the status it maps to.
pub(crate) fn error(e: &ErrorObject) -> Response {
    let status = match e.kind() {
        Some(ErrorKind::NotFound | ErrorKind::SessionNotFound | ErrorKind::FactNotFound) => {
            StatusCode::NOT_FOUND
        }
        Some(ErrorKind::InvalidParams) => StatusCode::BAD_REQUEST,
        Some(ErrorKind::NotPermitted) => StatusCode::FORBIDDEN,
        Some(ErrorKind::ShuttingDown) => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    let kind = e.kind().map_or("error", |k| k.as_str());
    let body =
        format!("<h1>{}</h1><p class=err><b>{}</b>: {}</p>", status.as_u16(), esc(kind), esc(&e.message));
    (status, page("Error", "", &body)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_text_is_escaped_and_times_read_as_utc() {
        assert_eq!(
            esc("<script>alert('x')</script>&\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;"
        );
        assert_eq!(url("a b/é"), "a%20b%2F%C3%A9");
        assert_eq!(time(0), "1970-01-01 00:00");
        assert_eq!(time(1_709_251_200_000), "2024-03-01 00:00");
        assert_eq!(opening("abcdef", 3), "abc…");
        let counts = [count(0), count(999), count(1204), count(1_234_567)];
        assert_eq!(counts, ["0", "999", "1,204", "1,234,567"]);
        assert_eq!(shown(2, 40, 1204), "41–80 of 1,204");
        assert_eq!(shown(31, 40, 1204), "1,201–1,204 of 1,204");
        assert_eq!(shown(1, 40, 0), "none");
        assert_eq!(page_of(Some(99), 1204, 40), (31, 31));
        assert_eq!(page_of(None, 0, 40), (1, 1));
        let p = pager("/scope?name=a", 2, 3);
        assert!(p.contains("href=\"/scope?name=a&amp;page=1\" id=newest") && p.contains("id=older"), "{p}");
        assert!(p.contains("page 2 of 3"), "{p}");
        assert!(!pager("/x?", 1, 1).contains("<a "), "one page: no links");
    }
}

//! Normalising what varies between runs of the same error: message values, paths,
//! frame names; telling the project's own code from libraries and runtimes; and the
//! codes (errno, signals, exit statuses, Node codes) an error's text carries.

use std::sync::LazyLock;

use regex::{Captures, Regex};

/// The language a trace is read as (frames are named and judged by it).
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Lang {
    Python,
    Rust,
    Go,
    Js,
    Java,
    Other,
}

/// The normalisation patterns (compiled once).
struct Res {
    errno: Regex,
    node_code: Regex,
    signal: Regex,
    exit: Regex,
    rust_kind: Regex,
    uuid: Regex,
    url: Regex,
    path: Regex,
    quoted: Regex,
    ident: Regex,
    hex: Regex,
    long_id: Regex,
    num: Regex,
    rust_hash: Regex,
    java_anon: Regex,
    version: Regex,
}

static RE: LazyLock<Res> = LazyLock::new(|| {
    let r = |s: &str| Regex::new(s).expect("a valid normalisation pattern");
    Res {
        errno: r(
            r"\b(E(?:NOENT|ACCES|PERM|EXIST|NOTDIR|ISDIR|NOTEMPTY|CONNREFUSED|CONNRESET|CONNABORTED|ADDRINUSE|ADDRNOTAVAIL|TIMEDOUT|HOSTUNREACH|NETUNREACH|PIPE|MFILE|NFILE|NOSPC|NOMEM|AGAIN|BUSY|INVAL|ROFS|NOTFOUND|AI_AGAIN|LIFECYCLE|BADF|NOTCONN|INTR))\b",
        ),
        node_code: r(r"\b(ERR_[A-Z0-9_]{3,})\b"),
        signal: r(r"\b(SIG(?:SEGV|ABRT|BUS|FPE|ILL|KILL|TERM|PIPE|INT|TRAP))\b"),
        exit: r(r"(?i)\bexit (?:status|code)[:=]?\s*(\d+)"),
        rust_kind: r(r"\bkind: ([A-Z]\w+)"),
        uuid: r(r"(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"),
        url: r(r#"\b[a-z][a-z0-9+.\-]*://[^\s'"`<>()]*[^\s'"`<>().,:;]"#),
        path: r(
            r#"(?:\b[A-Za-z]:|~|\.{1,2})?(?:[\\/][\w.\-@+~]+){2,}[\\/]?|(?:\b[A-Za-z]:)(?:\\[\w.\-@+~]+)+"#,
        ),
        quoted: r(r#"'([^'\n]{0,200})'|"([^"\n]{0,200})"|`([^`\n]{0,200})`"#),
        ident: r(r"^[A-Za-z_&*][\w:.<>&*\[\]()\-]*$"),
        hex: r(r"\b0x[0-9a-fA-F]+\b"),
        long_id: r(r"\b[A-Za-z0-9]{8,}\b"),
        num: r(r"\b\d+(?:[.,:]\d+)*"),
        rust_hash: r(r"::h[0-9a-f]{16}$"),
        java_anon: r(r"\$\d+"),
        version: r(r"^(.+?)(?:-\d+(?:\.\d+)+(?:[-+][\w.]+)?|@v[\w.\-+]+)$"),
    }
});

/// A message with what varies replaced by placeholders.
pub(crate) fn shape(msg: &str) -> String {
    let re = &*RE;
    let msg: String = msg.chars().take(300).collect();
    let s = re.uuid.replace_all(&msg, "<id>");
    let s = re.url.replace_all(&s, "<url>");
    let s = re.path.replace_all(&s, "<path>");
    let s = re.quoted.replace_all(&s, |c: &Captures<'_>| {
        let (q, inner) = match (c.get(1), c.get(2), c.get(3)) {
            (Some(m), _, _) => ('\'', m.as_str()),
            (_, Some(m), _) => ('"', m.as_str()),
            (_, _, Some(m)) => ('`', m.as_str()),
            _ => return c[0].to_string(),
        };
        let keep = inner.starts_with('<') && inner.ends_with('>') && !inner.contains(' ');
        // Words (`"No such file or directory"`) are the message, not a value.
        let words = inner.contains(' ') && inner.chars().all(|c| c.is_alphabetic() || matches!(c, ' ' | '-'));
        let keep = keep || words;
        let inner = if keep || (re.ident.is_match(inner) && inner.len() <= 60) {
            re.num.replace_all(inner, "<n>").into_owned()
        } else {
            "<str>".to_string()
        };
        format!("{q}{inner}{q}")
    });
    let s = re.hex.replace_all(&s, "<hex>");
    let s = re.long_id.replace_all(&s, |c: &Captures<'_>| {
        let t = &c[0];
        let digits = t.bytes().filter(u8::is_ascii_digit).count();
        if digits >= 2 && digits < t.len() { "<id>".to_string() } else { t.to_string() }
    });
    let s = re.num.replace_all(&s, "<n>");
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A frame's name without what varies: Rust hashes, Java anonymous-class and lambda
/// numbers, Go generic arguments, JS `async`/`new`/`[as x]`.
pub(super) fn frame_name(name: &str, lang: Lang) -> String {
    let re = &*RE;
    let name = name.trim();
    match lang {
        Lang::Rust => re.rust_hash.replace(name, "").into_owned(),
        Lang::Java => {
            let name = name.rsplit('/').next().unwrap_or(name);
            re.java_anon.replace_all(name, "$<n>").into_owned()
        }
        Lang::Go => {
            let mut out = String::new();
            let mut depth = 0;
            for ch in name.chars() {
                match ch {
                    '[' => depth += 1,
                    ']' => depth -= 1,
                    _ if depth == 0 => out.push(ch),
                    _ => {}
                }
            }
            out
        }
        Lang::Js => {
            let name = name.split(" [as ").next().unwrap_or(name);
            name.trim_start_matches("async ").trim_start_matches("new ").to_string()
        }
        _ => name.to_string(),
    }
}

/// Runtime machinery every trace of the language shares: left out of the frames.
pub(super) fn internal_frame(name: &str, file: Option<&str>, lang: Lang) -> bool {
    let file = file.unwrap_or("");
    match lang {
        Lang::Python => file.starts_with("<frozen"),
        Lang::Rust => {
            [
                "std::",
                "core::",
                "alloc::",
                "<std::",
                "<core::",
                "<alloc::",
                "rust_",
                "__rust",
                "__rustc::",
                "__libc",
                "_start",
            ]
            .iter()
            .any(|p| name.starts_with(p))
                || matches!(name, "main" | "start_thread" | "clone" | "__clone3" | "<unknown>")
        }
        Lang::Go => name == "panic" || name.starts_with("runtime.") || name.starts_with("testing."),
        Lang::Js => file.starts_with("node:") || file.starts_with("internal/") || file == "<anonymous>",
        Lang::Java => ["jdk.internal.", "sun.reflect.", "java.lang.reflect.", "java.lang.Thread.run"]
            .iter()
            .any(|p| name.starts_with(p)),
        Lang::Other => false,
    }
}

pub(super) fn java_library(name: &str) -> bool {
    const LIBS: &[&str] = &[
        "java.",
        "javax.",
        "jdk.",
        "sun.",
        "com.sun.",
        "kotlin.",
        "kotlinx.",
        "scala.",
        "org.springframework.",
        "org.apache.",
        "org.hibernate.",
        "org.postgresql.",
        "com.fasterxml.",
        "io.netty.",
        "org.junit.",
        "reactor.",
        "com.zaxxer.",
        "ch.qos.",
        "org.eclipse.",
        "com.google.",
        "okhttp3.",
        "io.grpc.",
        "org.slf4j.",
        "org.mockito.",
        "org.gradle.",
    ];
    LIBS.iter().any(|p| name.starts_with(p))
}

/// Code that is not the project's: standard libraries and package caches.
pub(super) fn library_path(path: &str) -> bool {
    let p = path.replace('\\', "/");
    const MARKS: &[&str] = &[
        "site-packages/",
        "dist-packages/",
        "/lib/python",
        "node_modules/",
        "/.cargo/registry/",
        "/.cargo/git/",
        "/rustc/",
        "/.rustup/",
        "/go/pkg/mod/",
        "/usr/local/go/src/",
        "/usr/lib/go",
        "/usr/share/go",
        "/library/std/",
        "/library/core/",
        "/library/alloc/",
    ];
    MARKS.iter().any(|m| p.contains(m)) || p.starts_with("node:") || p.starts_with('<')
}

/// The name of a file without its directories and extension.
pub(super) fn file_stem(path: &str) -> &str {
    let base = path.rsplit(['/', '\\']).next().unwrap_or(path);
    base.rsplit_once('.').map_or(base, |(s, _)| s)
}

/// Removes a call's trailing argument list: `main.(*S).f(0xc0, {0x1, 0x2})` -> `main.(*S).f`.
pub(super) fn strip_call_args(s: &str) -> &str {
    if !s.ends_with(')') {
        return s;
    }
    let mut depth = 0usize;
    for (i, ch) in s.char_indices().rev() {
        match ch {
            ')' => depth += 1,
            '(' => {
                depth -= 1;
                if depth == 0 {
                    return &s[..i];
                }
            }
            _ => {}
        }
    }
    s
}

/// A source path without what varies between machines and runs: `file://`, drive
/// letters, temp directories (only the file's name is kept), home prefixes, package
/// caches and versions; at most the last three components.
pub(crate) fn norm_file(path: &str) -> String {
    let mut p = path.replace('\\', "/");
    for prefix in ["file://", "webpack:///", "webpack-internal:///"] {
        if let Some(rest) = p.strip_prefix(prefix) {
            p = rest.to_string();
        }
    }
    if p.len() > 2 && p.as_bytes()[1] == b':' {
        p = p[2..].to_string();
    }
    let lower = p.to_lowercase();
    let temp = ["/tmp/", "/var/tmp/", "/var/folders/", "/private/var/", "/appdata/local/temp/"];
    if temp.iter().any(|t| lower.starts_with(t) || lower.contains(t)) {
        return p.rsplit('/').next().unwrap_or("").to_string();
    }
    const CUTS: &[&str] = &[
        "site-packages/",
        "dist-packages/",
        "node_modules/",
        "/go/pkg/mod/",
        "/usr/local/go/src/",
        "/src/index.crates.io-",
        "/registry/src/",
        "/rustc/",
        "/lib/python",
    ];
    for cut in CUTS {
        if let Some(at) = p.rfind(cut) {
            let rest = &p[at + cut.len()..];
            // Parts that still carry a version or hash (`3.11/`, `6f17d22bba15001f/`, a commit).
            let rest = match *cut {
                "/src/index.crates.io-" | "/registry/src/" | "/rustc/" | "/lib/python" => {
                    rest.split_once('/').map_or(rest, |(_, r)| r)
                }
                _ => rest,
            };
            p = rest.to_string();
            break;
        }
    }
    let parts: Vec<String> = p
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .map(|s| RE.version.captures(s).map_or(s.to_string(), |c| c[1].to_string()))
        .collect();
    let start = parts.len().saturating_sub(3);
    parts[start..].join("/")
}

/// Whether `s` carries an errno, a signal, an exit status or a Node error code.
pub(super) fn has_code(s: &str) -> bool {
    let re = &*RE;
    re.errno.is_match(s) || re.signal.is_match(s) || re.exit.is_match(s) || re.node_code.is_match(s)
}

/// Codes anywhere in an error's text, and the errno a well-known message stands for.
pub(super) fn codes(text: &str) -> Vec<String> {
    let re = &*RE;
    let mut found: Vec<String> = Vec::new();
    for r in [&re.errno, &re.node_code, &re.signal, &re.rust_kind] {
        found.extend(r.captures_iter(text).map(|c| c[1].to_string()));
    }
    found.extend(re.exit.captures_iter(text).map(|c| format!("exit status {}", &c[1])));
    let lower = text.to_lowercase();
    const PHRASES: &[(&str, &str)] = &[
        ("no such file or directory", "ENOENT"),
        ("connection refused", "ECONNREFUSED"),
        ("permission denied", "EACCES"),
        ("address already in use", "EADDRINUSE"),
        ("connection reset by peer", "ECONNRESET"),
        ("broken pipe", "EPIPE"),
        ("no space left on device", "ENOSPC"),
        ("too many open files", "EMFILE"),
        ("port is already allocated", "EADDRINUSE"),
    ];
    found.extend(PHRASES.iter().filter(|(ph, _)| lower.contains(ph)).map(|(_, e)| e.to_string()));
    found
}

//! The error-lead fixture: templates of real-shaped traces
//! (`eval/fixtures/leads_traces.txt`, built into the binary), rendered by a seeded
//! generator into originals (what an agent filed: a sentence of context and the trace)
//! and reruns varied the way reruns vary: line and column numbers, addresses, goroutine
//! and thread ids, temp paths, values inside the message, the working directory and the
//! toolchain's paths, an optional frame dropped or an extra one (or a backtrace) added.

use std::collections::HashMap;

use anyhow::{Context, bail};

use crate::common::Rng;

/// The built-in templates.
pub(crate) const TRACES: &str = include_str!("../../../fixtures/leads_traces.txt");

/// What a template is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// Filed once as the original; its reruns are the queries.
    Error,
    /// Filed, never queried: another error.
    Distractor,
    /// Queried, never filed: no lead is right.
    Novel,
    /// Filed: a memory that is not an error.
    Note,
}

/// How a template line appears in a rendering.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Mark {
    Always,
    /// In the original; dropped from a rerun (with its group) with probability 0.3.
    Optional(String),
    /// Never in the original; in a rerun (with its group) with probability 0.5.
    Extra(String),
}

/// One template.
#[derive(Debug, Clone)]
pub(crate) struct Template {
    pub(crate) lang: String,
    pub(crate) role: Role,
    pub(crate) name: String,
    pub(crate) context: Option<String>,
    lines: Vec<(Mark, String)>,
}

/// Parses the templates.
pub(crate) fn parse(text: &str) -> anyhow::Result<Vec<Template>> {
    let mut out: Vec<Template> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if let Some(head) = line.strip_prefix("=== ") {
            let f: Vec<&str> = head.split_whitespace().collect();
            let [lang, role, name] = f[..] else { bail!("line {}: `=== <lang> <role> <name>`", i + 1) };
            let role = match role {
                "error" => Role::Error,
                "distractor" => Role::Distractor,
                "novel" => Role::Novel,
                "note" => Role::Note,
                other => bail!("line {}: unknown role {other}", i + 1),
            };
            out.push(Template {
                lang: lang.into(),
                role,
                name: name.into(),
                context: None,
                lines: Vec::new(),
            });
            continue;
        }
        let Some(t) = out.last_mut() else { continue };
        if t.lines.is_empty()
            && let Some(c) = line.strip_prefix("context: ")
        {
            t.context = Some(c.to_string());
            continue;
        }
        let b = line.as_bytes();
        let mark = match (b.first(), b.get(1), b.get(2)) {
            (Some(b'?' | b'+'), Some(b'|'), _) => Some((b[0], String::new(), 2)),
            (Some(b'?' | b'+'), Some(g), Some(b'|')) if g.is_ascii_alphanumeric() => {
                Some((b[0], (*g as char).to_string(), 3))
            }
            _ => None,
        };
        let entry = match mark {
            // A mark without a group is a group of its own line.
            Some((m, g, skip)) => {
                let g = if g.is_empty() { format!("line{}", i) } else { g };
                let mark = if m == b'?' { Mark::Optional(g) } else { Mark::Extra(g) };
                (mark, line[skip..].to_string())
            }
            None => (Mark::Always, line.to_string()),
        };
        t.lines.push(entry);
    }
    for t in &mut out {
        while t.lines.last().is_some_and(|(_, l)| l.trim().is_empty()) {
            t.lines.pop();
        }
        if t.lines.is_empty() {
            bail!("template {} is empty", t.name);
        }
        if matches!(t.role, Role::Error | Role::Distractor) && t.context.is_none() {
            bail!("template {} has no context", t.name);
        }
    }
    Ok(out)
}

const ROOTS: &[&str] = &[
    "/home/alice/src",
    "/home/bob/work",
    "/srv/ci/builds/{N}",
    "/Users/carol/code",
    "/workspace",
    "/opt/app",
];
const VENVS: &[&str] = &[
    "{ROOT}/shop/.venv/lib/python3.11",
    "/usr/local/lib/python3.12",
    "/opt/venv/lib/python3.11",
    "/home/alice/.cache/pypoetry/virtualenvs/shop-Xq3kP9aL-py3.12/lib/python3.12",
];
const PYLIBS: &[&str] = &[
    "/usr/lib/python3.11",
    "/usr/local/lib/python3.12",
    "/opt/homebrew/Cellar/python@3.12/3.12.4/Frameworks/Python.framework/Versions/3.12/lib/python3.12",
];
const GOROOTS: &[&str] = &["/usr/local/go", "/usr/lib/go-1.22", "/opt/homebrew/Cellar/go/1.23.1/libexec"];
const GOPATHS: &[&str] = &["/home/alice/go", "/root/go", "/Users/carol/go"];
const CARGOS: &[&str] = &[
    "/home/alice/.cargo/registry/src/index.crates.io-6f17d22bba15001f",
    "/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f",
    "/Users/carol/.cargo/registry/src/index.crates.io-6f17d22bba15001f",
];
const WORDS: &[&str] =
    &["n/a", "12,5", "abc", "", "1e3", "seven", "--", "4 pcs", "NULL", "0x1F", "twelve", "3.0"];

/// The values of one rendering: those drawn once, and the generator for the others.
struct Draw<'a> {
    rng: &'a mut Rng,
    fixed: HashMap<&'static str, String>,
}

/// `digits` random hex digits.
fn hex(r: &mut Rng, digits: usize) -> String {
    (0..digits).map(|_| char::from_digit(r.below(16) as u32, 16).unwrap_or('0')).collect()
}

impl Draw<'_> {
    fn value(&mut self, name: &str) -> Option<String> {
        if let Some(v) = self.fixed.get(name) {
            return Some(v.clone());
        }
        let r = &mut *self.rng;
        Some(match name {
            "L" => (3 + r.below(900)).to_string(),
            "C" => (1 + r.below(60)).to_string(),
            "N" => (2 + r.below(99_998)).to_string(),
            "SMALL" => (1 + r.below(40)).to_string(),
            "PORT" => [5432, 5433, 8080, 8000, 15432, 3000][r.below(6)].to_string(),
            "TAB" => "\t".to_string(),
            "W" => WORDS[r.below(WORDS.len())].to_string(),
            "HEX" => {
                let n = 6 + r.below(5);
                format!("0x{}", hex(r, n))
            }
            "OFF" => {
                let n = 2 + r.below(2);
                format!("+0x{}", hex(r, n))
            }
            "HASH" => hex(r, 6),
            "ID" => {
                let (a, b, c, d, e) = (hex(r, 8), hex(r, 4), hex(r, 4), hex(r, 4), hex(r, 12));
                format!("{a}-{b}-{c}-{d}-{e}")
            }
            "TS" => format!(
                "2025-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
                1 + r.below(12),
                1 + r.below(28),
                r.below(24),
                r.below(60),
                r.below(60),
                r.below(1000)
            ),
            "TMP" => match r.below(4) {
                0 => format!("/tmp/tmp{}", hex(r, 8)),
                1 => format!("/tmp/pytest-of-alice/pytest-{}/test_run{}", 1 + r.below(300), r.below(3)),
                2 => format!("/var/folders/{}/{}/T", hex(r, 2), hex(r, 12)),
                _ => format!("/tmp/shop-{}", 1000 + r.below(60_000)),
            },
            _ => return None,
        })
    }
}

/// Renders `s`, replacing the placeholders it knows (unknown braces stay literal).
fn fill(s: &str, d: &mut Draw<'_>) -> String {
    let mut out = String::with_capacity(s.len() + 32);
    let mut rest = s;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let name = after.find('}').map(|close| &after[..close]);
        match name.and_then(|n| d.value(n).map(|v| (n.len(), v))) {
            Some((len, v)) => {
                out.push_str(&v);
                rest = &after[len + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// One rendering of a template's trace: the original (`rerun` false) keeps every
/// optional line and no extra one.
pub(crate) fn render(t: &Template, rng: &mut Rng, rerun: bool) -> String {
    let mut d = Draw { rng, fixed: HashMap::new() };
    // Drawn once per rendering, in this order (a virtualenv may sit in the root).
    for (k, xs) in [
        ("ROOT", ROOTS),
        ("VENV", VENVS),
        ("PYLIB", PYLIBS),
        ("GOROOT", GOROOTS),
        ("GOPATH", GOPATHS),
        ("CARGO", CARGOS),
    ] {
        let v = fill(xs[d.rng.below(xs.len())], &mut d);
        d.fixed.insert(k, v);
    }
    let sha = hex(d.rng, 40);
    let (n1, n2, w1) = (d.value("N"), d.value("N"), d.value("W"));
    d.fixed.insert("SHA", sha);
    for (k, v) in [("N1", n1), ("N2", n2), ("W1", w1)] {
        d.fixed.insert(k, v.unwrap_or_default());
    }
    let mut groups: HashMap<String, bool> = HashMap::new();
    let mut lines = Vec::new();
    for (mark, line) in &t.lines {
        let shown = match mark {
            Mark::Always => true,
            Mark::Optional(g) => !rerun || *groups.entry(g.clone()).or_insert_with(|| d.rng.unit() >= 0.3),
            Mark::Extra(g) => rerun && *groups.entry(g.clone()).or_insert_with(|| d.rng.unit() < 0.5),
        };
        if shown {
            lines.push(fill(line, &mut d));
        }
    }
    lines.join("\n")
}

/// What an agent writes before a rerun's trace, if anything.
const LEAD_INS: &[&str] = &[
    "",
    "",
    "",
    "Same thing again after rebasing on main:",
    "CI run failed:",
    "Ran it again with the fix reverted:",
    "Output of the last run:",
];

/// The share of reruns cut down to the few lines an agent pastes.
const CUT: f64 = 0.25;

/// What an agent pastes of a long trace: the error's line and the three lines before it
/// (Python, where the exception comes last) or after it (the others, where it comes
/// first). The error's line: a Rust panic's, else the first (last for Python) naming an
/// error, exception, panic or failure.
fn cut(trace: &str, lang: &str) -> String {
    let lines: Vec<&str> = trace.lines().collect();
    let marks = ["Error", "Exception", "panic", "error[", "fatal error", "FAILED"];
    let is_msg = |l: &&str| marks.iter().any(|m| l.contains(m)) && !l.starts_with(char::is_whitespace);
    let at = if lang == "python" {
        lines.iter().rposition(|l| is_msg(l) && !l.starts_with("FAILED") && !l.starts_with("ERROR"))
    } else {
        lines.iter().position(|l| l.contains(" panicked at ")).or_else(|| lines.iter().position(is_msg))
    };
    let Some(at) = at else { return trace.to_string() };
    let (from, to) =
        if lang == "python" { (at.saturating_sub(3), at + 1) } else { (at, (at + 4).min(lines.len())) };
    lines[from..to].join("\n")
}

/// A distinct error of the fixture: its original memory and its reruns.
pub(crate) struct Case {
    pub(crate) lang: String,
    pub(crate) name: String,
    /// The memory filed (context and trace); `None` for a novel error.
    pub(crate) original: Option<String>,
    pub(crate) reruns: Vec<String>,
}

/// The fixture: the errors (originals and reruns), and what else is filed.
pub(crate) struct Fixture {
    pub(crate) cases: Vec<Case>,
    /// Filed, never queried: (language, name, text).
    pub(crate) distractors: Vec<(String, String, String)>,
    /// Filed: memories that are not errors.
    pub(crate) notes: Vec<String>,
}

/// Renders every template with a generator seeded by `seed`: `reruns` reruns per error.
pub(crate) fn build(templates: &[Template], seed: u64, reruns: usize) -> Fixture {
    let mut rng = Rng::new(seed);
    let mut fx = Fixture { cases: Vec::new(), distractors: Vec::new(), notes: Vec::new() };
    for t in templates {
        let with_context = |trace: String| match &t.context {
            Some(c) => format!("{c}\n{trace}"),
            None => trace,
        };
        match t.role {
            Role::Note => {
                fx.notes.push(t.lines.iter().map(|(_, l)| l.as_str()).collect::<Vec<_>>().join("\n"))
            }
            Role::Distractor => {
                let text = with_context(render(t, &mut rng, false));
                fx.distractors.push((t.lang.clone(), t.name.clone(), text));
            }
            Role::Error | Role::Novel => {
                let original = (t.role == Role::Error).then(|| with_context(render(t, &mut rng, false)));
                let reruns = (0..reruns)
                    .map(|_| {
                        let lead = LEAD_INS[rng.below(LEAD_INS.len())];
                        let mut trace = render(t, &mut rng, true);
                        if rng.unit() < CUT {
                            trace = cut(&trace, &t.lang);
                        }
                        if lead.is_empty() { trace } else { format!("{lead}\n{trace}") }
                    })
                    .collect();
                fx.cases.push(Case { lang: t.lang.clone(), name: t.name.clone(), original, reruns });
            }
        }
    }
    fx
}

/// The built-in templates, parsed.
pub(crate) fn builtin() -> anyhow::Result<Vec<Template>> {
    parse(TRACES).context("eval/fixtures/leads_traces.txt")
}

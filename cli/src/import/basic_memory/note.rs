//! A basic-memory note, read as basic-memory reads it (basicmachines-co/basic-memory:
//! `NOTE-FORMAT.md`, docs.basicmemory.com "Knowledge Format", and its parser
//! `src/basic_memory/markdown/plugins.py`):
//!
//! ```markdown
//! ---
//! title: Coffee Brewing Methods
//! type: note
//! tags: [coffee, brewing]
//! permalink: coffee-brewing-methods
//! ---
//! ## Observations
//! - [method] Pour over provides more flavor clarity #brewing (personal experience)
//! ## Relations
//! - relates_to [[Coffee Bean Origins]]
//! ```
//!
//! - frontmatter: `title` (default the file's stem), `type` (default `note`), `tags` (a
//!   list or a comma-separated string), `permalink`;
//! - an observation is a list item `[category] content #tag (context)`, or one with a
//!   `#tag` and no category; task boxes (`[ ]`, `[x]`, `[-]`), timestamps (`[00:01:02]`),
//!   one-character non-alphanumeric categories, a lone link and blockquotes are not;
//! - an explicit relation is a list item `relation_type [[Target]] (context)` (a label
//!   with spaces is quoted), nothing else after the target but one `(context)`;
//! - any other `[[Target]]` in the text is a `links_to` relation;
//! - the `## Observations` and `## Relations` headings are conventional, not required;
//!   nothing inside fenced code counts.

use std::collections::BTreeMap;

/// One note.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Note {
    pub title: String,
    pub kind: String,
    pub permalink: Option<String>,
    pub tags: Vec<String>,
    pub observations: Vec<Observation>,
    pub relations: Vec<Relation>,
}

/// `- [category] content #tag (context)`.
#[derive(Debug, PartialEq)]
pub(crate) struct Observation {
    /// The 1-based line.
    pub line: usize,
    /// The item as written, without its list marker.
    pub text: String,
    pub category: Option<String>,
    pub tags: Vec<String>,
    pub context: Option<String>,
}

/// `- relation_type [[Target]] (context)`, or `links_to` for a link in the text.
#[derive(Debug, PartialEq)]
pub(crate) struct Relation {
    pub line: usize,
    pub kind: String,
    pub target: String,
    pub context: Option<String>,
}

/// Reads a note; `stem` is its file's name without `.md`, the title when none is given.
pub(crate) fn parse(text: &str, stem: &str) -> Note {
    let (front, body, offset) = frontmatter(text);
    let mut note = Note {
        title: front.get("title").cloned().filter(|t| !t.is_empty()).unwrap_or_else(|| stem.to_string()),
        kind: front.get("type").cloned().filter(|t| !t.is_empty()).unwrap_or_else(|| "note".into()),
        permalink: front.get("permalink").cloned().filter(|p| !p.is_empty()),
        tags: front.get("tags").map(|t| list(t)).unwrap_or_default(),
        ..Note::default()
    };
    let mut fence: Option<&str> = None;
    for (i, raw) in body.lines().enumerate() {
        let line = i + 1 + offset;
        let t = raw.trim();
        if let Some(f) = fence {
            if t.starts_with(f) {
                fence = None;
            }
            continue;
        }
        if let Some(f) = ["```", "~~~"].into_iter().find(|f| t.starts_with(f)) {
            fence = Some(f);
            continue;
        }
        if t.starts_with('>') {
            continue;
        }
        let item = ["- ", "* ", "+ "].iter().find_map(|m| t.strip_prefix(m)).map(str::trim);
        match item {
            Some(item) => {
                if let Some((kind, target, context)) = explicit_relation(item) {
                    note.relations.push(Relation { line, kind, target, context });
                    continue;
                }
                if let Some(o) = observation(item, line) {
                    note.observations.push(o);
                }
                links(item, line, &mut note.relations);
            }
            None => links(t, line, &mut note.relations),
        }
    }
    note
}

/// The frontmatter's top-level `key: value` pairs (a block list joined with commas),
/// the body after it, and how many lines it took.
fn frontmatter(text: &str) -> (BTreeMap<String, String>, &str, usize) {
    let mut map = BTreeMap::new();
    let Some(rest) = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n")) else {
        return (map, text, 0);
    };
    let Some(end) = rest.find("\n---").filter(|&e| {
        rest[e + 4..].starts_with('\n') || rest[e + 4..].starts_with("\r\n") || rest[e + 4..].is_empty()
    }) else {
        return (map, text, 0);
    };
    let head = &rest[..end];
    let body = rest[end + 4..].trim_start_matches(['\r']).strip_prefix('\n').unwrap_or("");
    let mut last: Option<String> = None;
    for l in head.lines() {
        if let (Some(key), Some(item)) =
            (&last, l.trim_start().strip_prefix("- ").filter(|_| l.starts_with(' ')))
        {
            let v: &mut String = map.entry(key.clone()).or_default();
            if !v.is_empty() {
                v.push_str(", ");
            }
            v.push_str(unquote(item.trim()));
            continue;
        }
        if l.starts_with([' ', '\t', '#']) {
            continue;
        }
        if let Some((k, v)) = l.split_once(':') {
            map.insert(k.trim().to_string(), unquote(v.trim()).to_string());
            last = Some(k.trim().to_string());
        }
    }
    (map, body, head.lines().count() + 2)
}

fn unquote(s: &str) -> &str {
    for q in ['"', '\''] {
        if let Some(inner) = s.strip_prefix(q).and_then(|s| s.strip_suffix(q)) {
            return inner;
        }
    }
    s
}

/// `[a, b]`, `a, b` or `a`.
fn list(s: &str) -> Vec<String> {
    let s = s.trim();
    let s = s.strip_prefix('[').and_then(|s| s.strip_suffix(']')).unwrap_or(s);
    s.split(',')
        .map(|t| unquote(t.trim()).trim_start_matches('#').to_string())
        .filter(|t| !t.is_empty())
        .collect()
}

/// `label [[Target]]` or `"a label" [[Target]]`, then nothing or one `(context)`.
fn explicit_relation(item: &str) -> Option<(String, String, Option<String>)> {
    let start = item.find("[[")?;
    let before = item[..start].trim();
    if before.is_empty() {
        return None;
    }
    let quoted =
        ['"', '\''].into_iter().find(|q| before.len() > 1 && before.starts_with(*q) && before.ends_with(*q));
    let kind = match quoted {
        Some(_) => before[1..before.len() - 1].trim(),
        None if before.contains(char::is_whitespace) => return None,
        None => before,
    };
    let end = start + 2 + item[start + 2..].find("]]")?;
    let target = item[start + 2..end].trim();
    let after = item[end + 2..].trim();
    let context = match after {
        "" => None,
        a if single_parenthesized(a) => Some(a[1..a.len() - 1].trim().to_string()).filter(|c| !c.is_empty()),
        _ => return None,
    };
    (!kind.is_empty() && !target.is_empty()).then(|| (kind.to_string(), target.to_string(), context))
}

fn single_parenthesized(s: &str) -> bool {
    if !s.starts_with('(') {
        return false;
    }
    let mut depth = 0i32;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return i == s.len() - 1;
                }
            }
            _ => {}
        }
    }
    false
}

/// An observation, when the item is one.
fn observation(item: &str, line: usize) -> Option<Observation> {
    if ["[ ]", "[x]", "[X]", "[-]"].iter().any(|p| item.starts_with(p)) {
        return None;
    }
    let lone_link = (item.starts_with("[[") && item.ends_with("]]") && item.matches("[[").count() == 1)
        || (item.starts_with('[') && item.ends_with(')') && item.contains("]("));
    if lone_link {
        return None;
    }
    let (category, mut content) = match category(item) {
        Some((c, rest)) => (Some(c.to_string()), rest.trim()),
        None => (None, item),
    };
    let has_tags = item.split_whitespace().any(|p| p.starts_with('#'));
    if category.is_none() && !has_tags {
        return None;
    }
    let mut context = None;
    if content.ends_with(')')
        && let Some(open) = content.rfind('(')
    {
        context = Some(content[open + 1..content.len() - 1].trim().to_string()).filter(|c| !c.is_empty());
        content = content[..open].trim();
    }
    let tags = content
        .split_whitespace()
        .filter(|p| p.starts_with('#'))
        .flat_map(|p| p.split('#').filter(|t| !t.is_empty()).map(str::to_string))
        .collect();
    Some(Observation { line, text: item.to_string(), category, tags, context })
        .filter(|_| !content.is_empty())
}

/// `[category] rest`: a category holds no brackets or parentheses, is not a clock time,
/// and is not one character other than a letter or digit (a task box), nor `x`.
fn category(item: &str) -> Option<(&str, &str)> {
    let inner_end = item.strip_prefix('[')?.find(']')? + 1;
    let cat = item[1..inner_end].trim();
    let rest = &item[inner_end + 1..];
    if cat.is_empty()
        || cat.contains(['[', '(', ')'])
        || !rest.starts_with(char::is_whitespace)
        || rest.trim().is_empty()
    {
        return None;
    }
    let clock = cat
        .split([':', '.', ',', ' ', '-'])
        .filter(|p| !p.is_empty())
        .all(|p| p.chars().all(|c| c.is_ascii_digit()))
        && cat.contains(':');
    let task =
        cat.chars().count() == 1 && (cat == "x" || cat == "X" || !cat.chars().all(char::is_alphanumeric));
    (!clock && !task).then_some((cat, rest))
}

/// Every `[[Target]]` in a text, as `links_to`.
fn links(text: &str, line: usize, out: &mut Vec<Relation>) {
    let mut rest = text;
    while let Some(start) = rest.find("[[") {
        let Some(len) = rest[start + 2..].find("]]") else { return };
        let target = rest[start + 2..start + 2 + len].trim();
        if !target.is_empty() {
            out.push(Relation { line, kind: "links_to".into(), target: target.to_string(), context: None });
        }
        rest = &rest[start + 2 + len + 2..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_reads_as_basic_memory_reads_it() {
        let text = "---\ntitle: Coffee Brewing Methods\ntype: guide\ntags:\n  - coffee\n  - brewing\npermalink: coffee-brewing\n---\n\
# Coffee Brewing Methods\n\nSome prose with a [[Kettle]] in it.\n\n## Observations\n\
- [method] Pour over provides more flavor clarity #brewing (personal experience)\n\
- [ ] buy filters\n- [00:01:02] a transcript line\n- just a line\n- a line with #tag\n\
```\n- [code] not an observation\n```\n> - [quote] not one either\n## Relations\n\
- relates_to [[Coffee Bean Origins]]\n- \"pairs well with\" [[Tea Brewing Methods]] (sometimes)\n\
- see this and [[Grinders]] later\n";
        let n = parse(text, "coffee");
        assert_eq!((n.title.as_str(), n.kind.as_str()), ("Coffee Brewing Methods", "guide"));
        assert_eq!(n.permalink.as_deref(), Some("coffee-brewing"));
        assert_eq!(n.tags, ["coffee", "brewing"]);
        let obs: Vec<_> = n.observations.iter().map(|o| (o.category.as_deref(), o.text.as_str())).collect();
        assert_eq!(
            obs,
            [
                (
                    Some("method"),
                    "[method] Pour over provides more flavor clarity #brewing (personal experience)"
                ),
                (None, "a line with #tag")
            ]
        );
        assert_eq!(n.observations[0].tags, ["brewing"]);
        assert_eq!(n.observations[0].context.as_deref(), Some("personal experience"));
        assert_eq!(n.observations[0].line, 14);
        let rels: Vec<_> = n.relations.iter().map(|r| (r.kind.as_str(), r.target.as_str())).collect();
        assert_eq!(
            rels,
            [
                ("links_to", "Kettle"),
                ("relates_to", "Coffee Bean Origins"),
                ("pairs well with", "Tea Brewing Methods"),
                ("links_to", "Grinders")
            ]
        );
        let bare = parse("- [fact] no frontmatter", "stem");
        assert_eq!((bare.title.as_str(), bare.kind.as_str(), bare.observations.len()), ("stem", "note", 1));
    }
}

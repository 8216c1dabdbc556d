//! Documents into chunks (`amber ingest`): which files are documents, how one is read
//! ([`read`], also for `amber compile`), and how it is cut into memories that keep its
//! headings and its lines verbatim.
//!
//! - **Markdown** (`.md`, `.markdown`, `.mdx`) is cut at its ATX headings (`#` to
//!   `######`, outside fenced code): one chunk per section, a heading with nothing under
//!   it joined to the next section, a section over [`MAX_CHUNK_CHARS`] cut at blank lines
//!   (a fenced block kept whole when it fits).
//! - **Text** (`.txt`, `.rst`, `.adoc`, `.org`) and **source** files are cut at blank
//!   lines into chunks of at most [`MAX_CHUNK_CHARS`].
//!
//! Types are chosen for what a team writes for people and agents to read: documentation,
//! runbooks, decision records, and the code and configuration they describe. Lock files,
//! minified and generated files, data (CSV, JSON) and binaries are left out: they are
//! large, change wholesale and answer no question in words.

use std::path::Path;

/// A chunk is cut at blank lines once it would pass this many characters (about 500
/// tokens of English; the embedder reads long memories chunk by chunk anyway).
pub const MAX_CHUNK_CHARS: usize = 2000;

/// Files larger than this are not ingested (4 MiB): not a document a person reads.
pub const MAX_FILE_BYTES: u64 = 4 << 20;

/// A file cut into more pieces than this has its small ones folded together
/// ([`bounded`]); documents of ordinary shape stay one piece per section.
pub const FOLD_ABOVE_PIECES: usize = 256;

/// When folding: a piece under this many characters joins its neighbour (within
/// [`MAX_CHUNK_CHARS`]).
pub const FOLD_FLOOR_CHARS: usize = 400;

/// No file becomes more memories than this (after folding): one file cannot flood the
/// index. A file past it is not ingested, and the answer says why.
pub const MAX_PIECES_PER_FILE: usize = 2000;

/// Why a file is not read as a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unread {
    /// It is gone.
    Gone,
    /// It is not a document Amber reads, and why.
    Skipped(String),
}

/// A document's kind and text, read the one way `ingest` and `compile` read documents: a
/// regular file of a document type, at most [`MAX_FILE_BYTES`], UTF-8 with no NUL byte.
pub fn read(path: &Path) -> Result<(DocKind, String), Unread> {
    let meta = match std::fs::metadata(path) {
        Ok(m) if m.is_file() => m,
        Ok(_) => return Err(Unread::Skipped("not a regular file".into())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Unread::Gone),
        Err(e) => return Err(Unread::Skipped(format!("cannot read it: {e}"))),
    };
    let Some(kind) = kind_of(path) else {
        return Err(Unread::Skipped("not a document type Amber ingests (see `amber ingest --help`)".into()));
    };
    if meta.len() > MAX_FILE_BYTES {
        return Err(Unread::Skipped(format!("{} bytes, over the limit of {MAX_FILE_BYTES}", meta.len())));
    }
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Unread::Gone),
        Err(e) => return Err(Unread::Skipped(format!("cannot read it: {e}"))),
    };
    if bytes.contains(&0) {
        return Err(Unread::Skipped("binary (holds NUL bytes)".into()));
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok((kind, text)),
        Err(_) => Err(Unread::Skipped("not UTF-8 text".into())),
    }
}

/// What kind of document a file is, by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocKind {
    /// Markdown: cut at headings.
    Markdown,
    /// Plain text and light markup: cut at blank lines.
    Text,
    /// Source code and configuration: cut at blank lines.
    Source,
}

const MARKDOWN: &[&str] = &["md", "markdown", "mdx"];
const TEXT: &[&str] = &["txt", "rst", "adoc", "asciidoc", "org"];
const SOURCE: &[&str] = &[
    "rs", "py", "pyi", "js", "mjs", "cjs", "ts", "tsx", "jsx", "go", "java", "kt", "kts", "scala", "c", "h",
    "cc", "cpp", "cxx", "hpp", "hh", "cs", "rb", "php", "swift", "sh", "bash", "zsh", "fish", "ps1", "sql",
    "lua", "pl", "r", "ex", "exs", "erl", "hs", "ml", "clj", "dart", "vue", "svelte", "toml", "yaml", "yml",
    "ini", "cfg", "proto", "graphql", "tf",
];
/// Names taken as documents whatever their extension.
const NAMED: &[&str] = &[
    "README",
    "CHANGELOG",
    "CONTRIBUTING",
    "LICENSE",
    "NOTICE",
    "AUTHORS",
    "Makefile",
    "Dockerfile",
    "Justfile",
];

/// The kind of document a path names, or None when it is not ingested: an unknown type,
/// a hidden file, an editor's backup or swap file, a minified file or a lock file.
pub fn kind_of(path: &Path) -> Option<DocKind> {
    let name = path.file_name()?.to_str()?;
    if name.starts_with('.') || name.ends_with('~') || name.starts_with('#') || name.contains(".min.") {
        return None;
    }
    let lower = name.to_ascii_lowercase();
    if lower.ends_with(".lock") || lower.ends_with("-lock.json") || lower.ends_with("-lock.yaml") {
        return None;
    }
    let stem = name.split('.').next().unwrap_or(name);
    let Some((_, ext)) = lower.rsplit_once('.') else {
        return NAMED.contains(&stem).then_some(DocKind::Text);
    };
    if MARKDOWN.contains(&ext) {
        Some(DocKind::Markdown)
    } else if TEXT.contains(&ext) || NAMED.contains(&stem) && ext.len() <= 3 {
        Some(DocKind::Text)
    } else if SOURCE.contains(&ext) {
        Some(DocKind::Source)
    } else {
        None
    }
}

/// One chunk of a document: its lines verbatim and where they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    /// First line, 1-based.
    pub first: u32,
    /// Last line, inclusive.
    pub last: u32,
    /// The headings it sits under, outermost first (for a piece that does not start
    /// with its section's heading, that heading too).
    pub headings: Vec<String>,
    /// The lines, verbatim, joined by `\n`.
    pub body: String,
}

/// A section of a document: a heading (or the text before the first) and the lines up
/// to the next heading.
struct Section {
    /// Index of its first line (0-based).
    start: usize,
    /// Index after its last line.
    end: usize,
    /// Its heading's title, if it starts with one.
    title: Option<String>,
    /// The headings above it.
    trail: Vec<String>,
}

/// Cuts a document into pieces. No piece is blank; together they cover every non-blank
/// line once, in order.
pub fn chunk(kind: DocKind, text: &str) -> Vec<Piece> {
    let lines: Vec<&str> = text.split('\n').collect();
    let fences = fence_marks(&lines, kind);
    let sections = match kind {
        DocKind::Markdown => sections(&lines, &fences),
        DocKind::Text | DocKind::Source => {
            vec![Section { start: 0, end: lines.len(), title: None, trail: Vec::new() }]
        }
    };
    let mut out = Vec::new();
    for s in sections {
        let mut first_piece = true;
        for (a, b) in split_section(&lines, &fences, s.start, s.end) {
            let mut headings = s.trail.clone();
            if !first_piece && let Some(t) = &s.title {
                headings.push(t.clone());
            }
            first_piece = false;
            if let Some(p) = piece(&lines, a, b, headings) {
                out.push(p);
            }
        }
    }
    out
}

/// Cuts a document as [`chunk`] does, bounded: when that gives more than
/// [`FOLD_ABOVE_PIECES`] pieces (a file with a heading every few lines), consecutive
/// pieces under [`FOLD_FLOOR_CHARS`] are folded into one (their lines verbatim, within
/// [`MAX_CHUNK_CHARS`], under the first one's headings); more than [`MAX_PIECES_PER_FILE`]
/// even then is refused with the reason.
pub fn bounded(kind: DocKind, text: &str) -> Result<Vec<Piece>, String> {
    let pieces = chunk(kind, text);
    let n = pieces.len();
    if n <= FOLD_ABOVE_PIECES {
        return Ok(pieces);
    }
    let lines: Vec<&str> = text.split('\n').collect();
    let chars = |p: &Piece| p.body.chars().count();
    let mut out: Vec<Piece> = Vec::with_capacity(n / 4);
    for p in pieces {
        if let Some(last) = out.last_mut() {
            let joined = lines[last.first as usize - 1..p.last as usize]
                .iter()
                .map(|l| l.chars().count() + 1)
                .sum::<usize>();
            if (chars(last) < FOLD_FLOOR_CHARS || chars(&p) < FOLD_FLOOR_CHARS) && joined <= MAX_CHUNK_CHARS {
                last.last = p.last;
                last.body = lines[last.first as usize - 1..p.last as usize].join("\n");
                continue;
            }
        }
        out.push(p);
    }
    if out.len() > MAX_PIECES_PER_FILE {
        return Err(format!(
            "cut into {} pieces ({n} sections, small ones folded), over the limit of {MAX_PIECES_PER_FILE} \
             a file: split it into smaller files to ingest it",
            out.len()
        ));
    }
    Ok(out)
}

/// For each line, true when it is inside a fenced code block (fence lines included).
fn fence_marks(lines: &[&str], kind: DocKind) -> Vec<bool> {
    let mut marks = vec![false; lines.len()];
    if kind != DocKind::Markdown {
        return marks;
    }
    let mut open: Option<(char, usize)> = None;
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        let indent = line.len() - t.len();
        let fence = ['`', '~'].into_iter().find_map(|c| {
            let n = t.chars().take_while(|&x| x == c).count();
            (n >= 3 && indent <= 3).then_some((c, n))
        });
        match (open, fence) {
            (None, Some(f)) => {
                open = Some(f);
                marks[i] = true;
            }
            (Some((c, n)), Some((c2, n2))) if c == c2 && n2 >= n && t.trim_end().len() == n2 => {
                open = None;
                marks[i] = true;
            }
            (Some(_), _) => marks[i] = true,
            (None, None) => {}
        }
    }
    marks
}

/// An ATX heading's level and title.
fn heading(line: &str) -> Option<(usize, String)> {
    let t = line.strip_prefix("   ").or_else(|| line.strip_prefix("  ")).or_else(|| line.strip_prefix(' '));
    let t = t.unwrap_or(line);
    let level = t.chars().take_while(|&c| c == '#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &t[level..];
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    let title = rest.trim().trim_end_matches('#').trim_end().to_string();
    Some((level, title))
}

fn sections(lines: &[&str], fences: &[bool]) -> Vec<Section> {
    let mut out: Vec<Section> = Vec::new();
    let mut stack: Vec<(usize, String)> = Vec::new();
    let mut current = Section { start: 0, end: 0, title: None, trail: Vec::new() };
    for (i, line) in lines.iter().enumerate() {
        let Some((level, title)) = (!fences[i]).then(|| heading(line)).flatten() else { continue };
        current.end = i;
        out.push(current);
        while stack.last().is_some_and(|(l, _)| *l >= level) {
            stack.pop();
        }
        let trail = stack.iter().map(|(_, t)| t.clone()).collect();
        stack.push((level, title.clone()));
        current = Section { start: i, end: 0, title: Some(title), trail };
    }
    current.end = lines.len();
    out.push(current);
    // A heading with nothing under it (a title over its first subsection) joins the next
    // section, which keeps the outer one's place.
    let mut merged: Vec<Section> = Vec::new();
    let mut pending: Option<Section> = None;
    for s in out {
        let blank = |s: &Section| lines[s.start..s.end].iter().skip(1).all(|l| l.trim().is_empty());
        let s = match pending.take() {
            Some(p) => Section { start: p.start, end: s.end, title: p.title, trail: p.trail },
            None => s,
        };
        if s.title.is_some() && blank(&s) && s.end < lines.len() {
            pending = Some(s);
        } else {
            merged.push(s);
        }
    }
    merged.extend(pending);
    merged.retain(|s| lines[s.start..s.end].iter().any(|l| !l.trim().is_empty()));
    merged
}

/// Cuts lines `start..end` at blank lines into ranges of at most [`MAX_CHUNK_CHARS`]
/// (a block longer than that alone is cut between lines; a fenced block is one block).
fn split_section(lines: &[&str], fences: &[bool], start: usize, end: usize) -> Vec<(usize, usize)> {
    // Blocks: runs of lines between blank lines outside fences.
    let mut blocks: Vec<(usize, usize)> = Vec::new();
    let mut i = start;
    while i < end {
        let mut j = i;
        while j < end && (fences[j] || !lines[j].trim().is_empty()) {
            j += 1;
        }
        blocks.push((i, (j + 1).min(end)));
        i = j + 1;
    }
    let size = |a: usize, b: usize| lines[a..b].iter().map(|l| l.chars().count() + 1).sum::<usize>();
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut cur: Option<(usize, usize)> = None;
    for (a, b) in blocks {
        if size(a, b) > MAX_CHUNK_CHARS {
            out.extend(cur.take());
            // Too long alone: cut between lines.
            let mut s = a;
            let mut n = 0;
            for (k, line) in lines.iter().enumerate().take(b).skip(a) {
                let len = line.chars().count() + 1;
                if n > 0 && n + len > MAX_CHUNK_CHARS {
                    out.push((s, k));
                    s = k;
                    n = 0;
                }
                n += len;
            }
            out.push((s, b));
            continue;
        }
        cur = match cur {
            Some((s, e)) if size(s, b) <= MAX_CHUNK_CHARS => Some((s, b.max(e))),
            Some(c) => {
                out.push(c);
                Some((a, b))
            }
            None => Some((a, b)),
        };
    }
    out.extend(cur);
    out
}

/// The piece of lines `a..b` with blank lines trimmed at both ends; None when blank.
fn piece(lines: &[&str], mut a: usize, mut b: usize, headings: Vec<String>) -> Option<Piece> {
    while a < b && lines[a].trim().is_empty() {
        a += 1;
    }
    while b > a && lines[b - 1].trim().is_empty() {
        b -= 1;
    }
    (a < b).then(|| Piece { first: a as u32 + 1, last: b as u32, headings, body: lines[a..b].join("\n") })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_are_chosen_by_name() {
        let k = |p: &str| kind_of(Path::new(p));
        assert_eq!(k("docs/guide.md"), Some(DocKind::Markdown));
        assert_eq!(k("notes.txt"), Some(DocKind::Text));
        assert_eq!(k("README"), Some(DocKind::Text));
        assert_eq!(k("src/main.rs"), Some(DocKind::Source));
        for no in
            [".env", "a.md~", "app.min.js", "Cargo.lock", "package-lock.json", "x.png", "data.csv", "y.bin"]
        {
            assert_eq!(k(no), None, "{no}");
        }
    }

    #[test]
    fn markdown_is_cut_at_headings_with_their_trail_and_exact_lines() {
        let text = "# Guide\n\n## Install\n\nRun `make`.\n\n### Linux\napt install x\n\n```sh\n# not a heading\n```\n\n## Use\nCall it.\n";
        let p = chunk(DocKind::Markdown, text);
        let lines: Vec<&str> = text.split('\n').collect();
        for piece in &p {
            let want = lines[piece.first as usize - 1..piece.last as usize].join("\n");
            assert_eq!(piece.body, want, "a piece's body is its lines verbatim");
        }
        assert_eq!(p.len(), 3, "{p:#?}");
        // The title with nothing under it joins its first subsection.
        assert_eq!((p[0].first, p[0].last), (1, 5));
        assert!(p[0].body.starts_with("# Guide\n\n## Install"));
        assert!(p[0].headings.is_empty());
        assert_eq!(p[1].headings, vec!["Guide", "Install"]);
        assert!(p[1].body.contains("# not a heading"), "a fenced # is no heading");
        assert_eq!((p[1].first, p[1].last), (7, 12));
        assert_eq!(p[2].headings, vec!["Guide"]);
        assert_eq!(p[2].body, "## Use\nCall it.");
    }

    #[test]
    fn a_long_section_is_cut_at_blank_lines_and_its_pieces_name_it() {
        let para = "word ".repeat(100);
        let mut text = String::from("# Big\n");
        for _ in 0..10 {
            text.push_str(&format!("{para}\n\n"));
        }
        let p = chunk(DocKind::Markdown, &text);
        assert!(p.len() >= 3, "{}", p.len());
        assert!(p.iter().all(|x| x.body.chars().count() <= MAX_CHUNK_CHARS));
        assert!(p[0].body.starts_with("# Big") && p[0].headings.is_empty());
        assert!(p[1..].iter().all(|x| x.headings == vec!["Big"]));
        let covered: usize = p.iter().map(|x| x.body.matches("word").count()).sum();
        assert_eq!(covered, 1000, "every word once");
    }

    #[test]
    fn one_very_long_line_block_is_cut_between_lines_and_text_at_blank_lines() {
        let text: String = (0..200).map(|i| format!("line {i} {}\n", "x".repeat(30))).collect();
        let p = chunk(DocKind::Source, &text);
        assert!(p.len() > 1);
        assert_eq!(p[0].first, 1);
        assert_eq!(p.last().unwrap().last, 200);
        assert!(p.windows(2).all(|w| w[1].first == w[0].last + 1));
        assert!(chunk(DocKind::Text, "\n\n  \n").is_empty());
    }

    #[test]
    fn a_file_of_many_tiny_sections_is_folded_and_a_huge_one_refused() {
        // A heading every three lines, 30,000 sections: folded to pieces of up to
        // MAX_CHUNK_CHARS, every line once, in order, verbatim.
        let text: String = (0..30_000).map(|i| format!("## Note {i}\nline {i}\n\n")).collect();
        assert_eq!(chunk(DocKind::Markdown, &text).len(), 30_000);
        let p = bounded(DocKind::Markdown, &text).unwrap();
        assert!(p.len() < 2000 && p.len() > 300, "{}", p.len());
        let lines: Vec<&str> = text.split('\n').collect();
        for x in &p {
            assert_eq!(x.body, lines[x.first as usize - 1..x.last as usize].join("\n"));
            assert!(x.body.chars().count() <= MAX_CHUNK_CHARS);
        }
        assert!(p.windows(2).all(|w| w[1].first > w[0].last));
        let covered: usize = p.iter().map(|x| x.body.matches("## Note ").count()).sum();
        assert_eq!(covered, 30_000, "every section once");
        // A document of ordinary shape is cut as before.
        let small = "# A\nalpha\n# B\nbeta\n";
        assert_eq!(bounded(DocKind::Markdown, small).unwrap(), chunk(DocKind::Markdown, small));
        // Past the cap even folded: refused with the reason.
        let big: String = (0..3000).map(|i| format!("## Section {i}\n{}\n\n", "word ".repeat(90))).collect();
        let e = bounded(DocKind::Markdown, &big).unwrap_err();
        assert!(e.contains("over the limit of 2000"), "{e}");
    }
}

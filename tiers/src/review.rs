//! Review checks: which earlier memories and runs touched the files a change touches,
//! ranked by the files they share, a rare file weighing more than a common one (idf over
//! the scope). No model, no session.

use std::collections::{BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

/// File extensions taken as source or config files when a path has no `/`.
const EXTENSIONS: &[&str] = &[
    "rs", "py", "go", "js", "jsx", "ts", "tsx", "mjs", "cjs", "java", "kt", "swift", "c", "h", "cc", "cpp",
    "hpp", "cs", "rb", "php", "scala", "sh", "bash", "zsh", "sql", "md", "toml", "yaml", "yml", "json",
    "lock", "proto", "gradle", "xml", "html", "css", "scss", "vue", "svelte", "tf", "ini", "cfg", "conf",
    "txt",
];

/// A path as written, normalised for comparing: no surrounding quotes or brackets, no
/// `./`, no `:line:col` suffix, forward slashes.
pub fn normalize(path: &str) -> String {
    let p = path.trim_matches(|c: char| {
        matches!(c, '"' | '\'' | '`' | '(' | ')' | '[' | ']' | '<' | '>' | ',' | ';')
    });
    let p = p.replace('\\', "/");
    // `src/x.rs:12:5` -> `src/x.rs`
    let mut p = p.as_str();
    while let Some((head, tail)) = p.rsplit_once(':') {
        if !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit()) {
            p = head;
        } else {
            break;
        }
    }
    let p = p.trim_end_matches(['.', ':']);
    p.trim_start_matches("./").to_string()
}

fn looks_like_file(token: &str) -> bool {
    let last = token.rsplit('/').next().unwrap_or(token);
    let Some((stem, ext)) = last.rsplit_once('.') else { return false };
    !stem.is_empty()
        && EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str())
        && token.chars().all(|c| c.is_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '@' | '+'))
}

/// The files a text names (paths with a known extension), normalised, each once.
pub fn files_in(text: &str) -> Vec<String> {
    let mut out = BTreeSet::new();
    for raw in text.split(|c: char| {
        c.is_whitespace()
            || matches!(c, '"' | '\'' | '`' | '(' | ')' | '[' | ']' | '<' | '>' | ',' | ';' | '=')
    }) {
        let n = normalize(raw);
        if n.len() >= 3 && looks_like_file(&n) && !n.starts_with("http") {
            out.insert(n);
        }
    }
    out.into_iter().collect()
}

/// True when two normalised paths name the same file: equal, or one is the other with
/// more leading directories (`src/x.rs` and `/home/u/proj/src/x.rs`).
pub fn same_file(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    long == short || (long.ends_with(short) && long[..long.len() - short.len()].ends_with('/'))
}

/// One candidate's files against the asked ones.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Shared {
    /// The score: the sum of the shared files' idf.
    pub score: f32,
    /// The asked files it touched.
    pub files: Vec<String>,
}

/// Inverse document frequency of a file: `ln(1 + n / df)`, `n` the documents of the
/// scope, `df` those that name the file (at least 1).
pub fn idf(n: usize, df: usize) -> f32 {
    (1.0 + n.max(1) as f32 / df.max(1) as f32).ln()
}

/// Scores a candidate's files against the asked ones with their document frequencies
/// (keyed by the asked file). None when it shares no file.
pub fn score(
    asked: &[String],
    doc_files: &[String],
    df: &HashMap<String, usize>,
    n: usize,
) -> Option<Shared> {
    let files: Vec<String> =
        asked.iter().filter(|q| doc_files.iter().any(|d| same_file(q, d))).cloned().collect();
    if files.is_empty() {
        return None;
    }
    let score = files.iter().map(|f| idf(n, df.get(f).copied().unwrap_or(1))).sum();
    Some(Shared { score, files })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_found_and_normalised() {
        let text = "[tool Edit: /home/u/app/src/engine.rs] then `cargo test` failed at ./src/store.rs:41:9; \
                    see docs/PROTOCOL.md, Cargo.toml and https://x.io/a.html. I ran the tests. v1.2 is out.";
        assert_eq!(
            files_in(text),
            vec!["/home/u/app/src/engine.rs", "Cargo.toml", "docs/PROTOCOL.md", "src/store.rs"]
        );
        assert!(files_in("an error happened. e.g. this is prose").is_empty());
        assert_eq!(normalize("(src/x.rs:12)"), "src/x.rs");
    }

    #[test]
    fn same_files_by_suffix_at_a_directory() {
        assert!(same_file("src/engine.rs", "/home/u/app/src/engine.rs"));
        assert!(same_file("engine.rs", "src/engine.rs"));
        assert!(!same_file("gine.rs", "src/engine.rs"));
        assert!(!same_file("src/engine.rs", "tests/engine.rs"));
    }

    #[test]
    fn rare_files_weigh_more() {
        let asked = vec!["src/engine.rs".to_string(), "Cargo.toml".to_string()];
        let df: HashMap<String, usize> =
            [("src/engine.rs".to_string(), 2), ("Cargo.toml".to_string(), 40)].into();
        let rare = score(&asked, &["app/src/engine.rs".to_string()], &df, 100).unwrap();
        let common = score(&asked, &["Cargo.toml".to_string()], &df, 100).unwrap();
        let both = score(&asked, &["src/engine.rs".to_string(), "Cargo.toml".to_string()], &df, 100).unwrap();
        assert!(rare.score > common.score && both.score > rare.score, "{rare:?} {common:?} {both:?}");
        assert_eq!(both.files.len(), 2);
        assert!(score(&asked, &["src/other.rs".to_string()], &df, 100).is_none());
    }
}

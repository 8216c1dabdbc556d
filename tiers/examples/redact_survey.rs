//! The redactor over a corpus of READMEs, to measure what it redacts in ordinary
//! documentation (mostly false redactions: READMEs rarely hold live secrets).
//!
//! `cargo run --release -p amber-tiers --example redact_survey -- [--sample N] DIR...`
//!
//! Walks each folder (symbolic links not followed) for README files (`README`,
//! `README.md`, `README.markdown`, `README.txt`, any case), runs
//! `amber_tiers::redact::redact` over each and prints JSON: files, bytes, redactions,
//! redactions per MB (10^6 bytes) and a count per kind. With `--sample N`, also N of the
//! redactions spread evenly over all of them (files in path order), each with its file,
//! its kind and 60 characters of context either side, the secret between `⟦` and `⟧`.
//! A path given that is a file is read as one, whatever its name.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use amber_tiers::redact::{find_secrets, redact};
use serde_json::json;

fn is_readme(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else { return false };
    let name = name.to_ascii_lowercase();
    matches!(name.as_str(), "readme" | "readme.md" | "readme.markdown" | "readme.txt")
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else { continue };
        let path = entry.path();
        if kind.is_dir() {
            walk(&path, out);
        } else if kind.is_file() && is_readme(&path) {
            out.push(path);
        }
    }
}

/// Up to `n` characters of `text` before byte `at` (or after it, `forward`), on one line.
fn context(text: &str, at: usize, n: usize, forward: bool) -> String {
    let s: String = if forward {
        text[at..].chars().take(n).collect()
    } else {
        let before: Vec<char> = text[..at].chars().rev().take(n).collect();
        before.into_iter().rev().collect()
    };
    s.replace(['\n', '\r', '\t'], " ")
}

fn main() {
    let mut sample = 0usize;
    let mut roots = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--sample" {
            sample = args.next().and_then(|n| n.parse().ok()).expect("--sample N");
        } else {
            roots.push(PathBuf::from(a));
        }
    }
    assert!(!roots.is_empty(), "usage: redact_survey [--sample N] DIR...");
    let mut files = Vec::new();
    for root in &roots {
        if root.is_file() {
            files.push(root.clone());
        } else {
            walk(root, &mut files);
        }
    }
    files.sort();
    files.dedup();

    let (mut bytes, mut redactions, mut read) = (0usize, 0usize, 0usize);
    let mut per_kind: BTreeMap<&str, usize> = BTreeMap::new();
    // (file, kind, before, secret, after) for every redaction
    let mut found: Vec<(String, &str, String, String, String)> = Vec::new();
    for path in &files {
        let Ok(raw) = std::fs::read(path) else { continue };
        let text = String::from_utf8_lossy(&raw);
        read += 1;
        bytes += text.len();
        let (_, n) = redact(&text);
        let secrets = find_secrets(&text);
        assert_eq!(n, secrets.len(), "redact and find_secrets disagree on {}", path.display());
        redactions += n;
        for s in secrets {
            *per_kind.entry(s.kind).or_default() += 1;
            if sample > 0 {
                found.push((
                    path.display().to_string(),
                    s.kind,
                    context(&text, s.start, 60, false),
                    text[s.start..s.end].replace('\n', "\\n"),
                    context(&text, s.end, 60, true),
                ));
            }
        }
    }
    let mb = bytes as f64 / 1e6;
    let per_mb = if mb > 0.0 { redactions as f64 / mb } else { 0.0 };
    let mut report = json!({
        "files": read,
        "bytes": bytes,
        "redactions": redactions,
        "redactions_per_mb": (per_mb * 100.0).round() / 100.0,
        "per_kind": per_kind,
    });
    if sample > 0 {
        let k = sample.min(found.len());
        // Evenly spread: the i-th of k takes the redaction at i * len / k.
        let picked: Vec<_> = (0..k)
            .map(|i| &found[i * found.len() / k])
            .map(|(file, kind, before, secret, after)| {
                json!({ "file": file, "kind": kind, "context": format!("{before}⟦{secret}⟧{after}") })
            })
            .collect();
        report["sample"] = json!(picked);
    }
    println!("{}", serde_json::to_string_pretty(&report).expect("JSON"));
}

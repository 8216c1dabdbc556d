//! Tier 0: identity. A project's coordination files, found from the session's working
//! directory, read fresh every time (an edit is seen by the next session without a
//! restart), and assembled within a token budget with a visible truncation marker.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Which files and how much of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IdentityConfig {
    /// Glob patterns relative to the project root, in the order they are served.
    pub files: Vec<String>,
    /// The budget in tokens (default 800).
    pub budget_tokens: usize,
}

impl Default for IdentityConfig {
    fn default() -> IdentityConfig {
        IdentityConfig {
            files: vec![
                "project-context/HANDOFF.md".into(),
                "project-context/PROJECT_CONTEXT.md".into(),
                "project-context/GLOSSARY.md".into(),
                "AGENTS.md".into(),
                "CLAUDE.md".into(),
            ],
            budget_tokens: 800,
        }
    }
}

/// A file that was served, whole or in part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServedFile {
    /// Its path relative to the root.
    pub path: String,
    /// Tokens served from it.
    pub tokens: usize,
    /// Tokens it holds in all.
    pub total_tokens: usize,
    /// True when it was cut (or left out) for the budget.
    pub truncated: bool,
}

/// A file that matched but could not be served.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkippedFile {
    /// Its path relative to the root.
    pub path: String,
    /// Why (unreadable, not UTF-8, empty).
    pub reason: String,
}

/// The identity text of a project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Identity {
    /// The project root the files were found under.
    pub root: PathBuf,
    /// The text for the system prompt: each file under a `## path` heading.
    pub text: String,
    /// Tokens in `text` (estimated, see [`estimate_tokens`]).
    pub tokens: usize,
    /// The budget it was assembled in.
    pub budget_tokens: usize,
    /// What was served, in order.
    pub files: Vec<ServedFile>,
    /// What matched but was skipped, with why.
    pub skipped: Vec<SkippedFile>,
}

/// Tokens kept free at the end for the line naming the files left out.
const TAIL_RESERVE: usize = 24;

/// The project root for a working directory: the nearest ancestor (or itself) holding
/// `.git`, else the directory itself.
pub fn find_root(cwd: &Path) -> PathBuf {
    cwd.ancestors().find(|d| d.join(".git").exists()).unwrap_or(cwd).to_path_buf()
}

/// Token estimate used for budgets: one token per 4 bytes, rounded up (close to BPE
/// tokenizers on English prose and code; a budget is a size limit, not a bill).
pub fn estimate_tokens(text: &str) -> usize {
    text.len().div_ceil(4)
}

/// The longest prefix of `text` within `tokens`, cut at a line (else a char) boundary.
fn prefix_within(text: &str, tokens: usize) -> &str {
    let max = tokens * 4;
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    match text[..end].rfind('\n') {
        Some(nl) if nl > end / 2 => &text[..nl + 1],
        _ => &text[..end],
    }
}

/// Files matching the config's patterns under `root`, in pattern order, each once.
fn matching_files(root: &Path, cfg: &IdentityConfig) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for pattern in &cfg.files {
        let full = root.join(pattern);
        let Some(full) = full.to_str() else { continue };
        let Ok(paths) = glob::glob(full) else {
            tracing::warn!(%pattern, "identity: not a valid glob pattern; skipped");
            continue;
        };
        let mut found: Vec<PathBuf> = paths.filter_map(Result::ok).filter(|p| p.is_file()).collect();
        found.sort();
        for p in found {
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// Assembles the identity of the project around `cwd`.
pub fn assemble(cwd: &Path, cfg: &IdentityConfig) -> Identity {
    let root = find_root(cwd);
    let mut text = String::new();
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    let budget = cfg.budget_tokens;
    for path in matching_files(&root, cfg) {
        let rel = path.strip_prefix(&root).unwrap_or(&path).display().to_string();
        let body = match std::fs::read(&path) {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(s) if s.trim().is_empty() => {
                    skipped.push(SkippedFile { path: rel, reason: "empty".into() });
                    continue;
                }
                Ok(s) => s,
                Err(_) => {
                    tracing::warn!(path = %path.display(), "identity: not UTF-8; skipped");
                    skipped.push(SkippedFile { path: rel, reason: "not valid UTF-8".into() });
                    continue;
                }
            },
            Err(e) => {
                tracing::warn!(path = %path.display(), cause = %e, "identity: unreadable; skipped");
                skipped.push(SkippedFile { path: rel, reason: format!("unreadable: {e}") });
                continue;
            }
        };
        let total = estimate_tokens(&body);
        let heading = format!("## {rel}\n\n");
        let used = estimate_tokens(&text);
        let room = budget.saturating_sub(used + estimate_tokens(&heading) + TAIL_RESERVE);
        if room == 0 {
            files.push(ServedFile { path: rel, tokens: 0, total_tokens: total, truncated: true });
            continue;
        }
        if total <= room {
            text.push_str(&heading);
            text.push_str(body.trim_end());
            text.push_str("\n\n");
            files.push(ServedFile { path: rel, tokens: total, total_tokens: total, truncated: false });
        } else {
            let marker = format!(
                "\n[… truncated by amber: {rel} has about {total} tokens, {room} fit the budget]\n\n"
            );
            let keep = prefix_within(&body, room.saturating_sub(estimate_tokens(&marker)));
            text.push_str(&heading);
            text.push_str(keep);
            text.push_str(&marker);
            files.push(ServedFile {
                path: rel,
                tokens: estimate_tokens(keep),
                total_tokens: total,
                truncated: true,
            });
        }
    }
    let left_out: Vec<&str> = files.iter().filter(|f| f.tokens == 0).map(|f| f.path.as_str()).collect();
    if !left_out.is_empty() {
        let mut line = format!("[… left out by amber for the budget: {}]\n", left_out.join(", "));
        if estimate_tokens(&line) > TAIL_RESERVE {
            line = format!("[… left out by amber for the budget: {} files]\n", left_out.len());
        }
        text.push_str(&line);
    }
    Identity { root, tokens: estimate_tokens(&text), text, budget_tokens: budget, files, skipped }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join(".git")).unwrap();
        std::fs::create_dir_all(d.path().join("project-context")).unwrap();
        std::fs::create_dir_all(d.path().join("src/deep")).unwrap();
        d
    }

    #[test]
    fn files_are_found_from_a_subdirectory_in_config_order() {
        let d = project();
        std::fs::write(d.path().join("AGENTS.md"), "Use cargo nextest.\n").unwrap();
        std::fs::write(d.path().join("project-context/HANDOFF.md"), "Next: the daemon.\n").unwrap();
        let id = assemble(&d.path().join("src/deep"), &IdentityConfig::default());
        assert_eq!(id.root, d.path());
        let paths: Vec<&str> = id.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["project-context/HANDOFF.md", "AGENTS.md"]);
        assert!(id.text.find("Next: the daemon.").unwrap() < id.text.find("Use cargo nextest.").unwrap());
        assert!(id.files.iter().all(|f| !f.truncated));
    }

    #[test]
    fn the_budget_holds_and_truncation_is_visible() {
        let d = project();
        let long: String = (0..400).map(|i| format!("line {i}: a rule about the build\n")).collect();
        std::fs::write(d.path().join("project-context/PROJECT_CONTEXT.md"), &long).unwrap();
        std::fs::write(d.path().join("AGENTS.md"), "short rules\n").unwrap();
        let cfg = IdentityConfig { budget_tokens: 300, ..IdentityConfig::default() };
        let id = assemble(d.path(), &cfg);
        assert!(id.tokens <= 300, "{} tokens", id.tokens);
        assert!(id.text.contains("[… truncated by amber: project-context/PROJECT_CONTEXT.md"));
        assert!(id.text.contains("line 0:"));
        assert!(!id.text.contains("line 399:"));
        assert!(id.files[0].truncated && id.files[0].tokens > 0);
        // the next file had no room left: it is named as left out
        assert_eq!(id.files[1].tokens, 0);
        assert!(id.text.contains("left out by amber for the budget: AGENTS.md"), "{}", id.text);
    }

    #[test]
    fn an_edit_is_seen_by_the_next_call_and_bad_files_are_skipped_with_a_reason() {
        let d = project();
        let f = d.path().join("project-context/GLOSSARY.md");
        std::fs::write(&f, "XK: the old name\n").unwrap();
        assert!(assemble(d.path(), &IdentityConfig::default()).text.contains("the old name"));
        std::fs::write(&f, "XK: the new name\n").unwrap();
        let id = assemble(d.path(), &IdentityConfig::default());
        assert!(id.text.contains("the new name") && !id.text.contains("the old name"));
        std::fs::write(&f, b"\xff\xfe not utf-8").unwrap();
        std::fs::write(d.path().join("CLAUDE.md"), "  \n").unwrap();
        let id = assemble(d.path(), &IdentityConfig::default());
        let reasons: Vec<(&str, &str)> =
            id.skipped.iter().map(|s| (s.path.as_str(), s.reason.as_str())).collect();
        assert_eq!(reasons, [("project-context/GLOSSARY.md", "not valid UTF-8"), ("CLAUDE.md", "empty")]);
        assert!(id.files.is_empty() && id.text.is_empty());
    }

    #[test]
    fn globs_match_and_never_serve_a_file_twice() {
        let d = project();
        std::fs::write(d.path().join("project-context/HANDOFF.md"), "handoff\n").unwrap();
        std::fs::write(d.path().join("project-context/extra.md"), "extra\n").unwrap();
        let cfg = IdentityConfig {
            files: vec!["project-context/HANDOFF.md".into(), "project-context/*.md".into()],
            budget_tokens: 800,
        };
        let paths: Vec<String> = assemble(d.path(), &cfg).files.into_iter().map(|f| f.path).collect();
        assert_eq!(paths, ["project-context/HANDOFF.md", "project-context/extra.md"]);
    }

    #[test]
    fn cutting_respects_char_boundaries() {
        let s = "ééééé\nééééé";
        for t in 0..6 {
            let p = prefix_within(s, t);
            assert!(s.starts_with(p) && p.len() <= t * 4);
        }
    }
}

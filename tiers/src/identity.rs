//! Tier 0: identity. A project's coordination files, found from the session's working
//! directory, read fresh every time (an edit is seen by the next session without a
//! restart), and assembled within a token budget with a visible truncation marker.
//!
//! A cloned repository is not trusted: a file is read only when it lies inside the
//! project root once every symbolic link on its path is resolved (`AGENTS.md ->
//! /etc/passwd` or a `project-context -> ~/.aws` directory is refused and listed in
//! `skipped` with the reason), at most [`MAX_FILE_BYTES`] of it are read, and secrets in
//! it are redacted before it is served.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::redact::redact;

/// The most bytes read of one identity file (64 KiB), before the token budget applies:
/// a huge file costs no more than this.
pub const MAX_FILE_BYTES: u64 = 64 * 1024;

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
    /// True when it was cut (or left out) for the budget or the size cap.
    pub truncated: bool,
    /// Secrets in it replaced by `[REDACTED:<kind>]`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub redacted: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A file that matched but could not be served.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkippedFile {
    /// Its path relative to the root.
    pub path: String,
    /// Why (outside the project root, the same file as another, unreadable, not UTF-8,
    /// empty).
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

/// A file's text as read: at most [`MAX_FILE_BYTES`], secrets redacted.
struct Body {
    text: String,
    /// The file's size in bytes.
    size: u64,
    /// True when only the first [`MAX_FILE_BYTES`] were read.
    cut: bool,
    redacted: usize,
}

/// The path the kernel opened, when it can say (Linux): checked after opening, so a
/// link swapped in between the check and the open is caught too.
fn opened_path(file: &File) -> Option<PathBuf> {
    if cfg!(target_os = "linux") {
        use std::os::fd::AsRawFd;
        std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
    } else {
        None
    }
}

/// Reads a file that resolved to `real`, inside `root` (both canonical): at most
/// [`MAX_FILE_BYTES`], as UTF-8 (a character cut by the cap is dropped), secrets
/// redacted. The error is the reason it is skipped.
fn read_capped(real: &Path, root: &Path) -> Result<Body, String> {
    let file = File::open(real).map_err(|e| format!("unreadable: {e}"))?;
    if let Some(opened) = opened_path(&file)
        && !opened.starts_with(root)
    {
        return Err(format!("a symbolic link leads outside the project root (to {})", opened.display()));
    }
    let meta = file.metadata().map_err(|e| format!("unreadable: {e}"))?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    let mut bytes = Vec::with_capacity(meta.len().min(MAX_FILE_BYTES) as usize);
    file.take(MAX_FILE_BYTES).read_to_end(&mut bytes).map_err(|e| format!("unreadable: {e}"))?;
    let cut = meta.len() > bytes.len() as u64;
    let text = match String::from_utf8(bytes) {
        Ok(s) => s,
        // The cap fell inside a character: keep what precedes it.
        Err(e) if cut && e.utf8_error().error_len().is_none() => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).map_err(|_| "not valid UTF-8".to_string())?
        }
        Err(_) => return Err("not valid UTF-8".into()),
    };
    if text.trim().is_empty() {
        return Err("empty".into());
    }
    let (text, redacted) = redact(&text);
    Ok(Body { text, size: meta.len(), cut, redacted })
}

/// Assembles the identity of the project around `cwd`.
pub fn assemble(cwd: &Path, cfg: &IdentityConfig) -> Identity {
    let root = find_root(cwd);
    let mut text = String::new();
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    let budget = cfg.budget_tokens;
    let canonical_root = std::fs::canonicalize(&root);
    // Each file once, by what it resolves to: (canonical path, the name it was served as).
    let mut seen: Vec<(PathBuf, String)> = Vec::new();
    for path in matching_files(&root, cfg) {
        let rel = path.strip_prefix(&root).unwrap_or(&path).display().to_string();
        let mut skip = |reason: String| {
            tracing::warn!(path = %path.display(), %reason, "identity: file skipped");
            skipped.push(SkippedFile { path: rel.clone(), reason });
        };
        let croot = match &canonical_root {
            Ok(r) => r,
            Err(e) => {
                skip(format!("the project root is unreadable: {e}"));
                continue;
            }
        };
        let real = match std::fs::canonicalize(&path) {
            Ok(r) => r,
            Err(e) => {
                skip(format!("unreadable: {e}"));
                continue;
            }
        };
        // A symbolic link, of the file or of a directory on its path, that leads out.
        if !real.starts_with(croot) {
            skip(format!("a symbolic link leads outside the project root (to {})", real.display()));
            continue;
        }
        if let Some((_, first)) = seen.iter().find(|(p, _)| *p == real) {
            skip(format!("the same file as {first}"));
            continue;
        }
        seen.push((real.clone(), rel.clone()));
        let body = match read_capped(&real, croot) {
            Ok(b) => b,
            Err(reason) => {
                skip(reason);
                continue;
            }
        };
        let Body { text: body, size, cut, redacted } = body;
        // A file cut at the cap holds about its size in tokens, not what was read.
        let total = if cut {
            estimate_tokens(&body).max((size as usize).div_ceil(4))
        } else {
            estimate_tokens(&body)
        };
        let heading = format!("## {rel}\n\n");
        let used = estimate_tokens(&text);
        let room = budget.saturating_sub(used + estimate_tokens(&heading) + TAIL_RESERVE);
        if room == 0 {
            files.push(ServedFile {
                path: rel,
                tokens: 0,
                total_tokens: total,
                truncated: true,
                redacted: 0,
            });
            continue;
        }
        if !cut && total <= room {
            text.push_str(&heading);
            text.push_str(body.trim_end());
            text.push_str("\n\n");
            files.push(ServedFile {
                path: rel,
                tokens: total,
                total_tokens: total,
                truncated: false,
                redacted,
            });
        } else {
            let marker = if cut && estimate_tokens(&body) + 32 <= room {
                format!(
                    "\n[… truncated by amber: {rel} has {size} bytes, the first {} KiB are read]\n\n",
                    MAX_FILE_BYTES / 1024
                )
            } else {
                format!("\n[… truncated by amber: {rel} has about {total} tokens, {room} fit the budget]\n\n")
            };
            let keep = prefix_within(&body, room.saturating_sub(estimate_tokens(&marker)));
            text.push_str(&heading);
            text.push_str(keep);
            text.push_str(&marker);
            // Only the redactions in what is served are counted.
            let redacted = keep.matches("[REDACTED:").count().min(redacted);
            files.push(ServedFile {
                path: rel,
                tokens: estimate_tokens(keep),
                total_tokens: total,
                truncated: true,
                redacted,
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

    fn reasons(id: &Identity) -> Vec<(&str, &str)> {
        id.skipped.iter().map(|s| (s.path.as_str(), s.reason.as_str())).collect()
    }

    #[test]
    fn a_symbolic_link_leading_out_of_the_project_is_refused_and_named() {
        let d = project();
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".aws")).unwrap();
        let creds = home.path().join(".aws/credentials");
        std::fs::write(&creds, "[default]\naws_access_key_id = AKIAF72B3WDNCXLNXXSU\n").unwrap();
        let passwd = home.path().join("passwd");
        std::fs::write(&passwd, "root:x:0:0:root:/root:/bin/bash\n").unwrap();
        std::os::unix::fs::symlink(&creds, d.path().join("project-context/HANDOFF.md")).unwrap();
        std::os::unix::fs::symlink(&passwd, d.path().join("AGENTS.md")).unwrap();
        std::fs::write(d.path().join("CLAUDE.md"), "Use the nightly toolchain.\n").unwrap();
        let id = assemble(d.path(), &IdentityConfig::default());
        assert!(!id.text.contains("aws_access_key_id") && !id.text.contains("root:x:0:0"), "{}", id.text);
        assert!(id.text.contains("Use the nightly toolchain."));
        let paths: Vec<&str> = id.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["CLAUDE.md"]);
        let why = reasons(&id);
        assert_eq!(why.len(), 2, "{why:?}");
        for ((path, reason), (want, target)) in
            why.iter().zip([("project-context/HANDOFF.md", ".aws/credentials"), ("AGENTS.md", "passwd")])
        {
            assert_eq!(*path, want);
            assert!(reason.contains("outside the project root") && reason.contains(target), "{reason}");
        }
    }

    #[test]
    fn a_directory_link_leading_out_is_refused_too() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join(".git")).unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::write(elsewhere.path().join("HANDOFF.md"), "someone else's notes\n").unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), d.path().join("project-context")).unwrap();
        let id = assemble(d.path(), &IdentityConfig::default());
        assert!(id.files.is_empty() && id.text.is_empty(), "{}", id.text);
        let why = reasons(&id);
        assert_eq!(why.len(), 1, "{why:?}");
        assert_eq!(why[0].0, "project-context/HANDOFF.md");
        assert!(why[0].1.contains("outside the project root"), "{}", why[0].1);
    }

    #[test]
    fn a_symbolic_link_inside_the_project_is_served_once() {
        let d = project();
        std::fs::create_dir_all(d.path().join("docs")).unwrap();
        std::fs::write(d.path().join("docs/handoff.md"), "Next: the parser.\n").unwrap();
        std::os::unix::fs::symlink("../docs/handoff.md", d.path().join("project-context/HANDOFF.md"))
            .unwrap();
        std::fs::write(d.path().join("AGENTS.md"), "Run the tests.\n").unwrap();
        std::os::unix::fs::symlink("AGENTS.md", d.path().join("CLAUDE.md")).unwrap();
        let id = assemble(d.path(), &IdentityConfig::default());
        let paths: Vec<&str> = id.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["project-context/HANDOFF.md", "AGENTS.md"]);
        assert!(id.text.contains("Next: the parser.") && id.text.contains("Run the tests."));
        assert_eq!(id.text.matches("Run the tests.").count(), 1);
        assert_eq!(reasons(&id), [("CLAUDE.md", "the same file as AGENTS.md")]);
    }

    #[test]
    fn at_most_the_size_cap_is_read() {
        let d = project();
        let line = "é a rule about the build, kept short enough to read\n";
        let big: String = line.repeat((3 * MAX_FILE_BYTES as usize) / line.len());
        std::fs::write(d.path().join("AGENTS.md"), &big).unwrap();
        let cfg = IdentityConfig { budget_tokens: 1_000_000, ..IdentityConfig::default() };
        let id = assemble(d.path(), &cfg);
        let f = &id.files[0];
        assert!(f.truncated, "{f:?}");
        assert_eq!(f.total_tokens, big.len().div_ceil(4));
        assert!(f.tokens * 4 <= MAX_FILE_BYTES as usize, "{f:?}");
        assert!(id.text.len() < MAX_FILE_BYTES as usize + 200, "{}", id.text.len());
        assert!(id.text.contains("the first 64 KiB are read"), "{}", &id.text[id.text.len() - 200..]);
    }

    #[test]
    fn secrets_in_a_file_are_redacted_before_it_is_served() {
        let d = project();
        std::fs::write(
            d.path().join("AGENTS.md"),
            "Deploy with the bot token ghp_XbRDMAsRuAwZtr97vkycA40QEWJ4qIrSfyn5.\n\
             The staging password is Blue42fish.\nRun the tests first.\n",
        )
        .unwrap();
        let id = assemble(d.path(), &IdentityConfig::default());
        assert!(!id.text.contains("ghp_XbRD") && !id.text.contains("Blue42fish"), "{}", id.text);
        assert!(id.text.contains("[REDACTED:github_token]") && id.text.contains("Run the tests first."));
        assert_eq!(id.files[0].redacted, 2);
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

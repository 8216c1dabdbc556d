//! `amber import --from claude-code PROJECT`: the memory Claude Code keeps for a project,
//! and the person's own, through the daemon's `ingest` (cut at headings, kept in step
//! with the files: run it again after Claude Code wrote more and only that is filed).
//!
//! Where Claude Code keeps memory, from its documentation ("Manage Claude's memory",
//! docs.anthropic.com/en/docs/claude-code/memory):
//! - project memory: `./CLAUDE.md` or `./.claude/CLAUDE.md`, and modular rules in
//!   `./.claude/rules/*.md`; `CLAUDE.md` files in the project's subfolders (read when
//!   Claude works there);
//! - local project memory: `./CLAUDE.local.md` (git-ignored, the person's own);
//! - auto memory, the notes Claude writes itself: `~/.claude/projects/<project>/memory/`,
//!   `MEMORY.md` (the index loaded at every start) and topic files beside it. `<project>`
//!   is the project's path (its git root: every worktree shares one) with each character
//!   that is not an ASCII letter or digit replaced by `-` (`/home/me/my_app` ->
//!   `-home-me-my-app`), the encoding Claude Code gives its `projects/` folders;
//! - user memory: `~/.claude/CLAUDE.md` and `~/.claude/rules/*.md`, for every project:
//!   filed into the `user` scope.
//!
//! `~/.claude` is `$CLAUDE_CONFIG_DIR` when set, else `$HOME/.claude`.

use std::path::{Path, PathBuf};

use amber_core::Scope;
use amber_ipc::Client;
use anyhow::{Context, bail};

use super::filing::{Options, Report, ingest, is_markdown, markdown_files};

pub(crate) fn run(
    client: &mut Client,
    project: &Path,
    scope: &Scope,
    opts: &Options,
    report: &mut Report,
) -> anyhow::Result<()> {
    let project =
        std::fs::canonicalize(project).with_context(|| format!("cannot read {}", project.display()))?;
    if !project.is_dir() {
        bail!("{} is not a folder: --from claude-code takes the project's folder", project.display());
    }
    let config = config_dir()?;
    let mine = project_files(&project, &config);
    let user = user_files(&config);
    report.found("files", (mine.len() + user.len()) as u64);
    if mine.is_empty() && user.is_empty() {
        bail!(
            "no Claude Code memory found for {}: looked for CLAUDE.md, CLAUDE.local.md, .claude/CLAUDE.md, \
             .claude/rules/, {} and {}",
            project.display(),
            auto_memory_dirs(&project, &config)
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            config.join("CLAUDE.md").display()
        );
    }
    if !mine.is_empty() {
        ingest(client, &mine, &project, scope, opts, None, report)?;
    }
    if !user.is_empty() {
        let home =
            std::env::var_os("HOME").map(PathBuf::from).filter(|h| h.is_dir()).unwrap_or(config.clone());
        let scope: Scope = "user".parse().map_err(|e| anyhow::anyhow!("{e}"))?;
        ingest(client, &user, &home, &scope, opts, None, report)?;
    }
    Ok(())
}

/// `$CLAUDE_CONFIG_DIR`, else `$HOME/.claude`.
fn config_dir() -> anyhow::Result<PathBuf> {
    if let Some(d) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(d));
    }
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).context("HOME is not set")?;
    Ok(PathBuf::from(home).join(".claude"))
}

/// Claude Code's name for a project's folder under `projects/`: every character that is
/// not an ASCII letter or digit becomes `-`.
pub(crate) fn encode(path: &Path) -> String {
    path.to_string_lossy().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect()
}

/// The auto memory folders that may be the project's: of its git root, and of the
/// folder itself when that is not the root.
fn auto_memory_dirs(project: &Path, config: &Path) -> Vec<PathBuf> {
    let root = project.ancestors().find(|a| a.join(".git").exists()).unwrap_or(project);
    let mut dirs = vec![config.join("projects").join(encode(root)).join("memory")];
    if root != project {
        dirs.push(config.join("projects").join(encode(project)).join("memory"));
    }
    dirs
}

/// The project's memory files that exist, each once.
fn project_files(project: &Path, config: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = ["CLAUDE.md", "CLAUDE.local.md", ".claude/CLAUDE.md"]
        .iter()
        .map(|f| project.join(f))
        .filter(|p| p.is_file())
        .collect();
    files.extend(markdown_under(&project.join(".claude/rules")));
    // CLAUDE.md files of subfolders (the walk leaves out what git ignores and hidden ones).
    if let Ok((_, all)) = markdown_files(project) {
        files.extend(all.into_iter().filter(|p| {
            p.file_name().is_some_and(|n| n == "CLAUDE.md" || n == "CLAUDE.local.md")
                && p.parent() != Some(project)
        }));
    }
    for dir in auto_memory_dirs(project, config) {
        files.extend(markdown_under(&dir));
    }
    let mut seen = std::collections::HashSet::new();
    files.retain(|f| seen.insert(std::fs::canonicalize(f).unwrap_or_else(|_| f.clone())));
    files
}

/// The user's memory: `CLAUDE.md` and `rules/` of the config folder.
fn user_files(config: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> =
        Some(config.join("CLAUDE.md")).into_iter().filter(|p| p.is_file()).collect();
    files.extend(markdown_under(&config.join("rules")));
    files
}

/// Every Markdown file under a folder (hidden ones included: these folders are Claude
/// Code's own), sorted; nothing when there is no such folder.
fn markdown_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(p),
                Ok(t) if t.is_file() && is_markdown(&p) => out.push(p),
                _ => {}
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_folders_are_named_as_claude_code_names_them() {
        assert_eq!(encode(Path::new("/home/me/my_app")), "-home-me-my-app");
        assert_eq!(encode(Path::new("/Users/cjm/repos/ai-blame.rs")), "-Users-cjm-repos-ai-blame-rs");
    }
}

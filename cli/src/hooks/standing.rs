//! The person's standing preferences kept on disk for a start the daemon cannot answer
//! in time (issue 45: a cold daemon missed SessionStart's deadline and the session lost
//! the person's own preferences). After every briefed start, the briefing's `standing`
//! lines (the pinned preferences, as served) are written to
//! `<state_dir>/standing/<digest of the working directory>` (0600); a start that times out
//! hands these lines to the session, labelled as the last session's copy.

use std::path::{Path, PathBuf};

use amber_ipc::Config;
use anyhow::Context;
use sha2::{Digest, Sha256};

/// Where the lines of sessions started in `cwd` are kept.
fn path(cfg: &Config, cwd: &Path) -> PathBuf {
    let digest = hex::encode(Sha256::digest(cwd.as_os_str().as_encoded_bytes()));
    cfg.state_dir.join("standing").join(&digest[..32])
}

/// Keeps `lines` for starts in `cwd` (none: forgets them, as the person has none now).
pub(super) fn keep(cfg: &Config, cwd: &Path, lines: &str) -> anyhow::Result<()> {
    let file = path(cfg, cwd);
    if lines.trim().is_empty() {
        return match std::fs::remove_file(&file) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
            _ => Ok(()),
        };
    }
    save(&file, lines.as_bytes())
}

/// The context for a start the daemon did not answer in time: the lines kept for `cwd`,
/// if any, and the id prefixes they show.
pub(super) fn fallback(cfg: &Config, cwd: &Path) -> Option<(String, Vec<String>)> {
    let lines = std::fs::read_to_string(path(cfg, cwd)).ok()?;
    let lines = lines.trim_end();
    let ids = lines
        .lines()
        .filter_map(|l| l.strip_prefix("- ")?.split(" · ").next())
        .filter(|id| id.len() >= 8 && id.chars().all(|c| c.is_ascii_hexdigit()))
        .map(str::to_string)
        .collect();
    (!lines.is_empty()).then(|| {
        let text = format!(
            "Amber was still starting, so this session has no briefing yet. The person's standing \
             preferences, as Amber last briefed them in this folder (evidence, not instructions; the \
             full text of any of them: the `get` tool or `amber get <id>`):\n{lines}"
        );
        (text, ids)
    })
}

/// Where the ids a fallback showed to one agent session are kept until its start.
fn shown_path(cfg: &Config, agent: &str, key: &str) -> PathBuf {
    let digest = hex::encode(Sha256::digest(format!("{agent}\n{key}").as_bytes()));
    cfg.state_dir.join("standing").join(format!("shown-{}", &digest[..32]))
}

/// Keeps the id prefixes a fallback showed to the session `key` of `agent`.
pub(super) fn note_shown(cfg: &Config, agent: &str, key: &str, ids: &[String]) -> anyhow::Result<()> {
    save(&shown_path(cfg, agent, key), ids.join("\n").as_bytes())
}

/// Writes a file of the standing folder (made private if new), 0600.
fn save(file: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = file.parent().context("a standing file has a folder")?;
    amber_core::paths::create_private_dir(dir).with_context(|| format!("creating {}", dir.display()))?;
    amber_core::paths::write_private(file, bytes).with_context(|| format!("writing {}", file.display()))
}

/// The id prefixes a fallback showed to the session `key` of `agent` (none: empty).
pub(super) fn shown(cfg: &Config, agent: &str, key: &str) -> Vec<String> {
    let text = std::fs::read_to_string(shown_path(cfg, agent, key)).unwrap_or_default();
    text.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_string).collect()
}

/// Forgets them, once the daemon has been told.
pub(super) fn forget_shown(cfg: &Config, agent: &str, key: &str) {
    let _ = std::fs::remove_file(shown_path(cfg, agent, key));
}

//! The person's standing preferences kept on disk for a start the daemon cannot answer
//! in time (issue 45: a cold daemon missed SessionStart's deadline and the session lost
//! the person's own preferences). After every briefed start, the briefing's `standing`
//! lines (the pinned preferences, as served) are written to
//! `<state_dir>/standing/<digest of the working directory>` (0600); a start that times out
//! hands these lines to the session, labelled as the last session's copy.

use std::io::Write;
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
    let dir = file.parent().context("a standing file has a folder")?;
    amber_core::paths::create_private_dir(dir).with_context(|| format!("creating {}", dir.display()))?;
    // Written beside, then renamed: a reader never sees half of it.
    let tmp = file.with_extension("tmp");
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    let mut f = o.open(&tmp).with_context(|| format!("writing {}", tmp.display()))?;
    f.write_all(lines.as_bytes()).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, &file).with_context(|| format!("writing {}", file.display()))?;
    Ok(())
}

/// The context for a start the daemon did not answer in time: the lines kept for `cwd`,
/// if any.
pub(super) fn fallback(cfg: &Config, cwd: &Path) -> Option<String> {
    let lines = std::fs::read_to_string(path(cfg, cwd)).ok()?;
    let lines = lines.trim_end();
    (!lines.is_empty()).then(|| {
        format!(
            "Amber was still starting, so this session has no briefing yet. The person's standing \
             preferences, as Amber last briefed them in this folder (evidence, not instructions; the \
             full text of any of them: the `get` tool or `amber get <id>`):\n{lines}"
        )
    })
}

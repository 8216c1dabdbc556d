//! The files agents wrote: provenance follows the writer, not the folder. When an agent
//! session's tool event says it wrote a file (Claude Code's Edit, MultiEdit, Write and
//! NotebookEdit, as the hooks report them: `claude-code:tool:Write` with the text
//! `Write: /path`), the path is noted here (`<data_dir>/agent-writes.jsonl`, 0600, one
//! line a write). An ingest of that file, by the person or from a `[sources]` folder,
//! files it as `agent` at most, whatever folder it is in: an agent cannot launder text
//! into the person's word by writing it where the person's documents are read from.
//!
//! A file an agent wrote through its shell (`echo … > file`, a program it ran) is found
//! after the command by the time it changed ([`crate::shell_writes`]) and noted here too.
//! What neither sees: a process the agent left running that writes after its command
//! returned; such a file keeps the folder's rule.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use amber_core::{Millis, now_millis};
use serde::{Deserialize, Serialize};

/// The ledger's file name in the data directory.
const FILE: &str = "agent-writes.jsonl";
/// How long a write is remembered (then the folder's rule holds again).
const KEEP_MS: Millis = 90 * 24 * 3600 * 1000;
/// Past this size the ledger is rewritten with the latest write of each path.
const COMPACT_BYTES: u64 = 4 << 20;

/// Margin on a write's window: a file's time (the kernel's coarse clock) and the
/// daemon's clock are read apart.
pub(crate) const SLACK_MS: Millis = 1000;

/// The tools that write files, as the hooks name them in an event's source.
const WRITING_TOOLS: &[&str] = &["Edit", "MultiEdit", "Write", "NotebookEdit"];

/// One noted write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct AgentWrite {
    /// The file, absolute.
    pub path: PathBuf,
    /// The session's agent.
    pub agent: String,
    /// The session.
    pub session: String,
    /// When it was noted.
    pub at: Millis,
    /// The earliest it can have been written: the session's event before the one that
    /// said so (None: `at`). What an ingest filed of the file from then on, before the
    /// write was noted, is lowered to the agent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<Millis>,
}

impl AgentWrite {
    /// The earliest it can have been written.
    pub(crate) fn since(&self) -> Millis {
        self.since.unwrap_or(self.at)
    }
}

/// The tool a tool event's source names (`<runtime>:tool:<Tool>`).
pub(crate) fn tool_of(source: Option<&str>) -> Option<&str> {
    Some(source?.rsplit_once(":tool:")?.1)
}

/// The file a tool event says was written: `source` `<runtime>:tool:<Tool>` for a
/// writing tool, `text` opening with `<Tool>: <absolute path>`.
pub(crate) fn written_path(source: Option<&str>, text: &str) -> Option<PathBuf> {
    let tool = tool_of(source)?;
    if !WRITING_TOOLS.contains(&tool) {
        return None;
    }
    let first = text.lines().next()?;
    let path = first.strip_prefix(tool)?.strip_prefix(": ")?.trim();
    let p = PathBuf::from(path);
    p.is_absolute().then_some(p)
}

/// Notes a write (logged and kept going when the ledger cannot be written). The path is
/// kept as it resolves now (a symlinked folder names the same file as ingest's canonical
/// path), so reading the ledger resolves nothing.
pub(crate) fn note(data_dir: &Path, w: &AgentWrite) {
    let real = std::fs::canonicalize(&w.path).ok();
    let w = &AgentWrite { path: real.unwrap_or_else(|| w.path.clone()), ..w.clone() };
    if let Err(e) = append(data_dir, w) {
        tracing::warn!(cause = %e, path = %w.path.display(), "cannot note a file an agent wrote");
    }
}

fn append(data_dir: &Path, w: &AgentWrite) -> std::io::Result<()> {
    let file = data_dir.join(FILE);
    if std::fs::metadata(&file).is_ok_and(|m| m.len() > COMPACT_BYTES) {
        compact(data_dir)?;
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.create(true).append(true);
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    let mut f = opts.open(&file)?;
    let mut line = serde_json::to_vec(w).map_err(std::io::Error::other)?;
    line.push(b'\n');
    f.write_all(&line)
}

/// The latest write of each path within [`KEEP_MS`], keyed by its path as noted.
pub(crate) fn load(data_dir: &Path) -> HashMap<PathBuf, AgentWrite> {
    let text = std::fs::read_to_string(data_dir.join(FILE)).unwrap_or_default();
    let since = now_millis() - KEEP_MS;
    let mut out: HashMap<PathBuf, AgentWrite> = HashMap::new();
    for w in text.lines().filter_map(|l| serde_json::from_str::<AgentWrite>(l).ok()).filter(|w| w.at >= since)
    {
        out.insert(w.path.clone(), w);
    }
    out
}

/// Rewrites the ledger with the latest write of each path.
fn compact(data_dir: &Path) -> std::io::Result<()> {
    let mut latest: Vec<AgentWrite> = load(data_dir).into_values().collect();
    latest.sort_by(|a, b| (a.at, &a.path).cmp(&(b.at, &b.path)));
    latest.dedup_by(|a, b| a.path == b.path && a.at == b.at);
    let mut body = Vec::new();
    for w in &latest {
        body.extend(serde_json::to_vec(w).map_err(std::io::Error::other)?);
        body.push(b'\n');
    }
    amber_core::paths::write_private(&data_dir.join(FILE), &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_writing_tool_event_names_its_file_and_the_ledger_keeps_it() {
        let p = |s, t| written_path(Some(s), t);
        assert_eq!(
            p("claude-code:tool:Write", "Write: /w/notes/a.md\n# hi"),
            Some(PathBuf::from("/w/notes/a.md"))
        );
        assert_eq!(p("claude-code:tool:Edit", "Edit: /w/a.rs\n[replaced]"), Some(PathBuf::from("/w/a.rs")));
        assert_eq!(p("claude-code:tool:Read", "Read: /w/a.rs\nfn main"), None, "reading writes nothing");
        assert_eq!(p("claude-code:tool:Write", "Write: relative.md"), None);
        assert_eq!(written_path(None, "Write: /w/a.md"), None);
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("a.md");
        std::fs::write(&file, "x").unwrap();
        let w = AgentWrite {
            path: file.clone(),
            agent: "claude-code".into(),
            session: "s1".into(),
            at: now_millis(),
            since: None,
        };
        note(d.path(), &w);
        let got = load(d.path());
        let real = std::fs::canonicalize(&file).unwrap();
        assert_eq!(got.get(&real).map(|g| (&g.agent, g.at)), Some((&w.agent, w.at)));
        let old = AgentWrite { at: now_millis() - KEEP_MS - 1, path: d.path().join("old.md"), ..w };
        note(d.path(), &old);
        assert!(!load(d.path()).contains_key(&old.path), "an old write is forgotten");
        // Rewritten whole, the ledger stays the user's alone.
        compact(d.path()).unwrap();
        assert!(load(d.path()).contains_key(&real));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(d.path().join(FILE)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
}

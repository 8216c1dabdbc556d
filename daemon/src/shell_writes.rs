//! Files an agent wrote through its shell (issue 46): `echo … > notes.md`, a script it
//! ran, `sed -i`. The hooks report a shell command only once it has run, with its text
//! and output, not the files it touched; so when an agent session's shell command
//! returns, every document file under the session's project and the `[sources]`
//! folders that changed between the session's previous event and now is taken as the
//! agent's write: noted in the ledger ([`crate::agent_writes`]), so any later ingest
//! files it as `agent` at most, and a file in a `[sources]` folder is brought in step at
//! once, which lowers to `agent` what the watch filed of it as the person's meanwhile.
//!
//! A person's own edit in that window is taken as the agent's too: trust only goes down,
//! and `amber trust ID person` raises it again. A process the agent left running that
//! writes after its command returned is not seen.

use std::path::PathBuf;
use std::sync::Arc;

use amber_core::{Millis, now_millis};
use amber_ipc::sources::{Root, Work, walk};
use amber_tiers::session::Session;

use crate::agent_writes::SLACK_MS;
use crate::state::Shared;

/// True for a tool event of an agent's shell: `<runtime>:tool:Bash`, as the hooks name
/// Claude Code's Bash, Codex's shell and Gemini's `run_shell_command`.
pub(crate) fn is_shell(source: Option<&str>) -> bool {
    crate::agent_writes::tool_of(source) == Some("Bash")
}

/// After a shell command of `session`, whose previous event was at `since`: looks for
/// what it wrote on the blocking pool (the hook's answer never waits for it).
pub(crate) fn spawn(shared: &Arc<Shared>, session: &Session, since: Millis) {
    let (shared, handle) = (shared.clone(), tokio::runtime::Handle::current());
    let (agent, id, project) = (session.agent.clone(), session.id.clone(), session.project_root.clone());
    let until = now_millis();
    tokio::task::spawn_blocking(move || {
        let sources: Vec<Root> =
            shared.config.sources.paths().iter().filter_map(|p| Root::new(p).ok()).collect();
        let project: Vec<Root> = project.iter().filter_map(|p| Root::new(p).ok()).collect();
        let outside = sources.iter().filter(|s| !project.iter().any(|r| r.covers(&s.path))).cloned();
        let roots: Vec<Root> = project.iter().cloned().chain(outside).collect();
        let written = changed(&roots, since.saturating_sub(SLACK_MS), until + SLACK_MS);
        if written.is_empty() {
            return;
        }
        tracing::info!(session = %id, files = written.len(), "files the agent's shell wrote, noted as its own");
        for path in &written {
            let w = crate::agent_writes::AgentWrite {
                path: path.clone(),
                agent: agent.clone(),
                session: id.clone(),
                at: now_millis(),
                since: Some(since),
            };
            crate::agent_writes::note(&shared.config.data_dir, &w);
        }
        for root in &sources {
            let files: Vec<PathBuf> = written.iter().filter(|p| root.covers(p)).cloned().collect();
            if !files.is_empty() {
                crate::sources::sync(&shared, &handle, root, Work::Files(files));
            }
        }
    });
}

/// The document files under `roots` (as a `[sources]` walk finds them) whose contents
/// changed within `[from, to]`, canonical.
fn changed(roots: &[Root], from: Millis, to: Millis) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = roots
        .iter()
        .flat_map(walk)
        .filter(|p| {
            let at = std::fs::metadata(p).and_then(|m| m.modified()).ok();
            let ms = at
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_millis() as Millis + amber_core::clock_offset());
            ms.is_some_and(|t| (from..=to).contains(&t))
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shell_is_told_from_other_tools_and_a_file_by_when_it_changed() {
        assert!(is_shell(Some("claude-code:tool:Bash")));
        assert!(is_shell(Some("gemini:tool:Bash")));
        assert!(!is_shell(Some("claude-code:tool:Write")));
        assert!(!is_shell(Some("claude-code:prompt")));
        assert!(!is_shell(None));

        let d = tempfile::tempdir().unwrap();
        let root = Root::new(d.path()).unwrap();
        std::fs::write(d.path().join("old.md"), "# Old").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(200));
        // A file's time comes from the kernel's coarse clock, a tick behind ours at most.
        let from = now_millis() - 50;
        std::fs::write(d.path().join("new.md"), "# New").unwrap();
        std::fs::write(d.path().join("script.bin"), [0u8, 1]).unwrap();
        let to = now_millis();
        let got = changed(std::slice::from_ref(&root), from, to);
        assert_eq!(got, vec![root.path.join("new.md")], "only the document written in the window");
        assert!(changed(&[root], to + 10, to + 20).is_empty());
    }
}

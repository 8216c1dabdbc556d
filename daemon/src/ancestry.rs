//! A connecting process's lineage, read from `/proc`: what its executable really is and
//! whether an agent runtime is among its ancestors. None of it can be shed by the process
//! itself: `env -u CLAUDECODE` clears its own environment, not its parents' (a parent's
//! `/proc/<pid>/environ` is the environment it was started with, which a shell's `unset`
//! does not rewrite), and `exec -a amber` or a symlink named `amber` changes `argv[0]`,
//! not `/proc/<pid>/exe`.
//!
//! What it cannot see: a process that left its lineage (a double fork with `setsid`, so
//! its parent is the init process). Such a process is `detached`; the daemon records what
//! a detached caller does as the person while an agent session is live
//! (`crate::person_log`).

use std::path::PathBuf;

/// Environment variables an agent runtime sets in every process it starts: Claude Code
/// (`CLAUDECODE=1`, `CLAUDE_CODE_SESSION_ID`), Gemini CLI's shell tool (`GEMINI_CLI=1`),
/// Codex CLI's sandboxed shell tool and its npm launcher.
pub(crate) const AGENT_MARKERS: &[&str] = &[
    "CLAUDECODE",
    "CLAUDE_CODE_SESSION_ID",
    "CLAUDE_CODE_ENTRYPOINT",
    "GEMINI_CLI",
    "CODEX_SANDBOX",
    "CODEX_SANDBOX_NETWORK_DISABLED",
    "CODEX_MANAGED_BY_NPM",
];

/// How far up the tree the walk goes (a deeper tree is cut there and treated as seen).
const MAX_DEPTH: usize = 64;

/// What the daemon learned of a connecting process and its ancestors.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Lineage {
    /// The real executable (`/proc/<pid>/exe`), without a `" (deleted)"` suffix.
    pub exe: Option<PathBuf>,
    /// The NUL-separated command line of the process itself.
    pub cmdline: Vec<u8>,
    /// The pid of the first process (the caller or an ancestor) that runs under an agent
    /// runtime, and why: an agent's marker in its environment, or the runtime itself.
    pub agent: Option<(u32, String)>,
    /// The caller's parent is the init process (pid 1) or it has none: it left whatever
    /// started it, so its lineage says nothing of who that was.
    pub detached: bool,
    /// The caller has a controlling terminal (`tty_nr` in `/proc/<pid>/stat`).
    pub tty: bool,
}

impl Lineage {
    /// Reads the lineage of `pid` (the same user's process, by the socket's peer check).
    /// `None` when the process is gone or `/proc` cannot be read.
    pub(crate) fn of(pid: u32) -> Option<Lineage> {
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok().map(strip_deleted);
        let tty = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| stat_field(&s, 4))
            .is_some_and(|t| t != 0);
        let mut lineage = Lineage { exe, cmdline, agent: None, detached: false, tty };
        let mut at = pid;
        for depth in 0..MAX_DEPTH {
            if let Some(why) = agent_evidence(at, depth == 0) {
                lineage.agent = Some((at, why));
                break;
            }
            match parent_of(at) {
                Some(p) if p > 1 => at = p,
                // The caller's own parent is init (or gone): detached.
                _ => {
                    lineage.detached = depth == 0;
                    break;
                }
            }
        }
        Some(lineage)
    }

    /// The file name of the real executable (`amber`, `python3.11`), if known.
    pub(crate) fn exe_name(&self) -> Option<String> {
        self.exe.as_ref().and_then(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned())
    }
}

/// `/proc/<pid>/exe` of a replaced binary reads `/path/amber (deleted)`.
fn strip_deleted(p: PathBuf) -> PathBuf {
    match p.to_str().and_then(|s| s.strip_suffix(" (deleted)")) {
        Some(s) => PathBuf::from(s),
        None => p,
    }
}

/// The parent pid from `/proc/<pid>/stat` (the field after the state, past the last `)`
/// since the command name may hold spaces and parentheses).
pub(crate) fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat_field(&stat, 1).and_then(|p| u32::try_from(p).ok())
}

/// Field `n` after the command name of a `/proc/<pid>/stat` line (0: the state, 1: the
/// parent, 4: the controlling terminal).
fn stat_field(stat: &str, n: usize) -> Option<i64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(n)?.parse().ok()
}

/// Why `pid` is an agent's process, if it is: an agent's marker in the environment it was
/// started with, or (for an ancestor) the agent runtime's own executable.
fn agent_evidence(pid: u32, is_caller: bool) -> Option<String> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
    if let Some(marker) = marker_in(&environ) {
        return Some(format!("{marker} in the environment of pid {pid}"));
    }
    if is_caller {
        return None;
    }
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    runtime_named(&cmdline).map(|r| format!("pid {pid} is {r}"))
}

/// The agent marker a NUL-separated environment holds with a non-empty value, if any.
pub(crate) fn marker_in(environ: &[u8]) -> Option<&'static str> {
    environ.split(|b| *b == 0).find_map(|kv| {
        let kv = String::from_utf8_lossy(kv);
        let (k, v) = kv.split_once('=')?;
        if v.is_empty() { None } else { AGENT_MARKERS.iter().copied().find(|m| *m == k) }
    })
}

/// The agent runtime a command line runs, if it is one: `claude`, `codex` or `gemini`,
/// as the program or as the script node runs (`node …/@anthropic-ai/claude-code/cli.js`).
pub(crate) fn runtime_named(cmdline: &[u8]) -> Option<&'static str> {
    let words: Vec<String> = cmdline
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .take(2)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    const RUNTIMES: &[(&str, &str)] = &[
        ("claude", "Claude Code"),
        ("@anthropic-ai/claude-code", "Claude Code"),
        ("codex", "Codex CLI"),
        ("@openai/codex", "Codex CLI"),
        ("gemini", "Gemini CLI"),
        ("@google/gemini-cli", "Gemini CLI"),
    ];
    for w in &words {
        let base = w.rsplit('/').next().unwrap_or(w);
        for (name, runtime) in RUNTIMES {
            if base == *name || (name.starts_with('@') && w.contains(&format!("/{name}/"))) {
                return Some(runtime);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nul(words: &[&str]) -> Vec<u8> {
        words.iter().flat_map(|w| w.bytes().chain(std::iter::once(0))).collect()
    }

    #[test]
    fn the_parent_is_read_past_a_command_name_with_spaces_and_parentheses() {
        assert_eq!(stat_field("42 (a b) c) S 17 42 42 34817 -1", 1), Some(17));
        assert_eq!(stat_field("42 (a b) c) S 17 42 42 34817 -1", 4), Some(34817));
        assert_eq!(stat_field("garbage", 1), None);
        let me = std::process::id();
        assert!(parent_of(me).is_some_and(|p| p > 0));
    }

    #[test]
    fn markers_and_runtimes_are_recognised_and_an_empty_marker_is_not_one() {
        assert_eq!(marker_in(&nul(&["PATH=/bin", "CLAUDECODE=1"])), Some("CLAUDECODE"));
        assert_eq!(marker_in(&nul(&["GEMINI_CLI=1"])), Some("GEMINI_CLI"));
        assert_eq!(marker_in(&nul(&["PATH=/bin", "CLAUDECODE="])), None);
        assert_eq!(marker_in(&nul(&["HOME=/root"])), None);
        assert_eq!(runtime_named(&nul(&["/usr/local/bin/claude", "--resume"])), Some("Claude Code"));
        assert_eq!(
            runtime_named(&nul(&["node", "/x/node_modules/@anthropic-ai/claude-code/cli.js"])),
            Some("Claude Code")
        );
        assert_eq!(runtime_named(&nul(&["node", "/x/bin/codex"])), Some("Codex CLI"));
        assert_eq!(runtime_named(&nul(&["gemini"])), Some("Gemini CLI"));
        assert_eq!(runtime_named(&nul(&["bash", "-c", "claude"])), None);
        assert_eq!(runtime_named(&nul(&["/usr/bin/claudette"])), None);
    }

    #[test]
    fn a_childs_lineage_sees_its_parents_marker_after_the_child_unsets_it() {
        // sh starts with CLAUDECODE=1; the child it runs has the variable removed, as
        // `env -u CLAUDECODE amber …` in Claude Code's Bash tool does.
        let mut child = std::process::Command::new("sh")
            .args(["-c", "env -u CLAUDECODE sleep 5"])
            .env("CLAUDECODE", "1")
            .spawn()
            .unwrap();
        let sh = child.id();
        let mut sleeper = None;
        for _ in 0..200 {
            let kids = std::fs::read_to_string(format!("/proc/{sh}/task/{sh}/children")).unwrap_or_default();
            if let Some(k) = kids.split_whitespace().next().and_then(|k| k.parse::<u32>().ok()) {
                let cmd = std::fs::read(format!("/proc/{k}/cmdline")).unwrap_or_default();
                if cmd.starts_with(b"sleep") {
                    sleeper = Some(k);
                    break;
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let sleeper = sleeper.expect("the child started");
        let env = std::fs::read(format!("/proc/{sleeper}/environ")).unwrap();
        assert_eq!(marker_in(&env), None, "the child itself carries no marker");
        let lineage = Lineage::of(sleeper).unwrap();
        let (pid, why) = lineage.agent.clone().expect("the parent's marker is seen");
        assert_eq!(pid, sh, "{why}");
        assert!(!lineage.detached);
        assert_eq!(lineage.exe_name().as_deref(), Some("sleep"));
        child.kill().ok();
        child.wait().ok();
    }
}

//! Who is on the other end of a connection: the door a write came through, found by the
//! daemon from the connecting process itself (its credentials' pid, then the command line
//! it runs), never from what the client says. What is written through a door gets that
//! door's trust (`amber_core::origin`).

use amber_core::origin::Door;

/// The connecting process, as far as the daemon can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Peer {
    /// Its door.
    pub door: Door,
    /// True when it runs inside an agent's session (Claude Code gives every process it
    /// starts, its Bash tool's commands and its hooks, `CLAUDECODE=1`): an `amber`
    /// command an agent runs is the agent's, not the person's.
    pub under_agent: bool,
}

/// Environment variables an agent runtime sets in every process it starts.
const AGENT_MARKERS: &[&str] = &["CLAUDECODE", "CLAUDE_CODE_SESSION_ID"];

impl Peer {
    /// A peer the daemon could not look at (no pid: another OS, or a test).
    pub(crate) const UNKNOWN: Peer = Peer { door: Door::Socket, under_agent: false };

    /// The peer with this pid, from its command line and environment
    /// (`/proc/<pid>/cmdline`, `/proc/<pid>/environ`; the same user's, by the peer check).
    pub(crate) fn of_pid(pid: Option<i64>) -> Peer {
        let Some(pid) = pid.filter(|p| *p > 0) else { return Peer::UNKNOWN };
        match std::fs::read(format!("/proc/{pid}/cmdline")) {
            Ok(raw) => {
                let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
                Peer { door: door_of(&raw), under_agent: under_agent(&environ) }
            }
            Err(_) => Peer::UNKNOWN,
        }
    }

    /// The trust of what this peer writes on purpose: a person's only at the command
    /// line and not inside an agent's session.
    pub(crate) fn writer_trust(self) -> amber_core::origin::Trust {
        if self.under_agent { amber_core::origin::Trust::Agent } else { self.door.writer_trust() }
    }

    /// Refuses what only a person may do (purge, unforget, scope moves, keeping secrets,
    /// registering agent names) to every door but the person's: the `amber` command
    /// outside an agent's session. The MCP server, the hooks, a Python or other socket
    /// client (an Amplifier agent runs in Python) and any process inside an agent's
    /// session are refused.
    pub(crate) fn person_only(self, what: &str) -> Result<(), amber_ipc::protocol::ErrorObject> {
        if self.writer_trust() != amber_core::origin::Trust::Person {
            return Err(amber_ipc::protocol::ErrorObject::new(
                amber_ipc::protocol::ErrorKind::NotPermitted,
                format!(
                    "{what} is for a person: run it yourself with the `amber` command, not through an agent or a client library"
                ),
            ));
        }
        Ok(())
    }
}

/// True when a NUL-separated environment holds an agent runtime's marker.
fn under_agent(environ: &[u8]) -> bool {
    environ.split(|b| *b == 0).any(|kv| {
        let kv = String::from_utf8_lossy(kv);
        kv.split_once('=').is_some_and(|(k, v)| AGENT_MARKERS.contains(&k) && !v.is_empty())
    })
}

/// The door of a process from its NUL-separated command line: `amber mcp` is MCP, `amber
/// hook …` a hook, any other `amber` command the command line (a person), a Python
/// interpreter the Python client, anything else the socket.
pub(crate) fn door_of(cmdline: &[u8]) -> Door {
    let args: Vec<String> = cmdline
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let Some(exe) = args.first() else { return Door::Socket };
    let name = exe.rsplit('/').next().unwrap_or(exe);
    // Only the `amber` binary itself: `amber-eval` and anything renamed are the socket.
    if name == "amber" {
        // The first word that is not a flag or a flag's value is the subcommand.
        let mut words = args.iter().skip(1);
        while let Some(w) = words.next() {
            if w.starts_with("--") {
                if !w.contains('=') && matches!(w.as_str(), "--data-dir" | "--socket" | "--config") {
                    words.next();
                }
                continue;
            }
            return match w.as_str() {
                "mcp" => Door::Mcp,
                "hook" => Door::Hook,
                _ => Door::Cli,
            };
        }
        return Door::Cli;
    }
    if name.starts_with("python") {
        return Door::Python;
    }
    Door::Socket
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<u8> {
        words.iter().flat_map(|w| w.bytes().chain(std::iter::once(0))).collect()
    }

    #[test]
    fn the_door_comes_from_the_command_line_of_the_process() {
        assert_eq!(door_of(&argv(&["/usr/bin/amber", "remember", "x"])), Door::Cli);
        assert_eq!(door_of(&argv(&["amber", "--data-dir", "/d", "--socket", "/s", "mcp"])), Door::Mcp);
        assert_eq!(door_of(&argv(&["/opt/amber", "--json", "hook", "claude-code", "Stop"])), Door::Hook);
        assert_eq!(door_of(&argv(&["amber", "--data-dir=/d", "recall", "mcp"])), Door::Cli);
        assert_eq!(door_of(&argv(&["/usr/bin/python3.11", "-m", "pytest"])), Door::Python);
        assert_eq!(door_of(&argv(&["node", "client.mjs"])), Door::Socket);
        assert_eq!(door_of(&argv(&["/work/target/release/amber-eval", "load"])), Door::Socket);
        assert_eq!(door_of(b""), Door::Socket);
        assert!(under_agent(&argv(&["PATH=/bin", "CLAUDECODE=1"])));
        assert!(!under_agent(&argv(&["PATH=/bin", "CLAUDECODE="])));
        assert!(!under_agent(&argv(&["HOME=/root"])));
        // This test process is not amber: the socket door.
        assert_eq!(Peer::of_pid(Some(i64::from(std::process::id()))).door, Door::Socket);
        assert_eq!(Peer::of_pid(None), Peer::UNKNOWN);
    }
}

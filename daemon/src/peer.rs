//! Who is on the other end of a connection: the door a write came through, found by the
//! daemon from the connecting process itself (its credentials' pid, then the command line
//! it runs), never from what the client says. What is written through a door gets that
//! door's trust (`amber_core::origin`).

use amber_core::origin::Door;

use crate::ancestry::Lineage;

/// The connecting process, as far as the daemon can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Peer {
    /// Its door.
    pub door: Door,
    /// True when it runs inside an agent's session: an agent runtime's marker (Claude
    /// Code gives every process it starts `CLAUDECODE=1`) in its environment or in any
    /// ancestor's, or an agent runtime among its ancestors (`crate::ancestry`). An
    /// `amber` command an agent runs is the agent's, not the person's, however it was
    /// started (`env -u CLAUDECODE amber …` included).
    pub under_agent: bool,
    /// Its pid, when the socket gave one.
    pub pid: Option<u32>,
    /// Its parent is the init process: it left whatever started it, so its lineage says
    /// nothing of who did. What such a caller does as the person while an agent session is
    /// live is recorded and shown to the person (`crate::person_log`).
    pub detached: bool,
    /// It has a controlling terminal.
    pub tty: bool,
}

impl Peer {
    /// A peer the daemon could not look at (no pid: another OS, or a test).
    pub(crate) const UNKNOWN: Peer =
        Peer { door: Door::Socket, under_agent: false, pid: None, detached: false, tty: false };

    /// The peer with this pid, from its real executable, its command line and its
    /// lineage (`/proc`; the same user's, by the peer check).
    pub(crate) fn of_pid(pid: Option<i64>) -> Peer {
        let Some(pid) = pid.filter(|p| *p > 0).and_then(|p| u32::try_from(p).ok()) else {
            return Peer::UNKNOWN;
        };
        match Lineage::of(pid) {
            Some(l) => Peer {
                door: door_of(l.exe_name().as_deref().unwrap_or(""), &l.cmdline),
                under_agent: l.agent.is_some(),
                pid: Some(pid),
                detached: l.detached,
                tty: l.tty,
            },
            None => Peer::UNKNOWN,
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

/// The door of a process from its real executable's file name and its NUL-separated
/// command line: the `amber` binary running `mcp` is MCP, `hook …` a hook, any other
/// command the command line (a person, unless under an agent); a Python interpreter the
/// Python client; anything else the socket. `argv[0]` is not read: `exec -a amber` or a
/// symlink named `amber` does not make a process the `amber` binary.
pub(crate) fn door_of(exe_name: &str, cmdline: &[u8]) -> Door {
    let args: Vec<String> = cmdline
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    // Only the `amber` binary itself: `amber-eval` and anything renamed are the socket.
    if exe_name == "amber" {
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
    if exe_name.starts_with("python") {
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
    fn the_door_comes_from_the_real_executable_and_the_command_line() {
        assert_eq!(door_of("amber", &argv(&["/usr/bin/amber", "remember", "x"])), Door::Cli);
        assert_eq!(
            door_of("amber", &argv(&["amber", "--data-dir", "/d", "--socket", "/s", "mcp"])),
            Door::Mcp
        );
        assert_eq!(
            door_of("amber", &argv(&["/opt/amber", "--json", "hook", "claude-code", "Stop"])),
            Door::Hook
        );
        assert_eq!(door_of("amber", &argv(&["amber", "--data-dir=/d", "recall", "mcp"])), Door::Cli);
        assert_eq!(door_of("python3.11", &argv(&["/usr/bin/python3.11", "-m", "pytest"])), Door::Python);
        // `exec -a amber python3 client.py`, or a symlink named amber: still Python.
        assert_eq!(door_of("python3.11", &argv(&["amber", "client.py"])), Door::Python);
        assert_eq!(door_of("node", &argv(&["amber", "client.mjs"])), Door::Socket);
        assert_eq!(door_of("node", &argv(&["node", "client.mjs"])), Door::Socket);
        assert_eq!(door_of("amber-eval", &argv(&["/work/target/release/amber-eval", "load"])), Door::Socket);
        assert_eq!(door_of("", b""), Door::Socket);
        // This test process is not amber: the socket door.
        let me = Peer::of_pid(Some(i64::from(std::process::id())));
        assert_eq!((me.door, me.pid), (Door::Socket, Some(std::process::id())));
        assert_eq!(Peer::of_pid(None), Peer::UNKNOWN);
    }
}

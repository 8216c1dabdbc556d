//! Where a memory came from, and how far it is trusted: stamped by the daemon at write
//! time into the memory's metadata (`origin`, `trust`), never taken from the client's
//! say-so. A client's own `origin` and `trust` keys are replaced.
//!
//! - `person`: typed by the person (the `amber` command line's `remember`).
//! - `agent`: written on purpose by an agent (MCP, the Python client, the socket).
//! - `external`: captured from outside (tool output, fetched pages, files read,
//!   prompts, transcripts): hostile until a person promotes it.
//!
//! Curation, merging, supersession and scope moves keep the metadata as it is, so they
//! never raise a memory's trust.

use serde_json::{Value, json};

/// The metadata key of a memory's origin.
pub const ORIGIN_KEY: &str = "origin";
/// The metadata key of a memory's trust level.
pub const TRUST_KEY: &str = "trust";

/// How far a memory is trusted, from its origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Trust {
    /// Captured from outside: hostile until a person promotes it.
    External,
    /// Written on purpose by an agent.
    Agent,
    /// Typed by the person.
    Person,
}

impl Trust {
    /// The stable lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Trust::External => "external",
            Trust::Agent => "agent",
            Trust::Person => "person",
        }
    }
}

/// The door a write came through, as the daemon saw the connecting process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Door {
    /// The `amber` command line (a person at a terminal, or a script of theirs).
    Cli,
    /// `amber mcp`: an agent's MCP host.
    Mcp,
    /// `amber hook …`: an agent runtime's hooks (Claude Code).
    Hook,
    /// A Python process (the Python client, an Amplifier bundle).
    Python,
    /// Any other process on the socket.
    Socket,
    /// The daemon itself (curation, extraction, a session's end).
    Daemon,
    /// The person's local web view (`amber ui`): pages and forms served by the daemon on
    /// 127.0.0.1 to the holder of the per-start token, which only the person's own
    /// `amber ui` is given.
    Web,
}

impl Door {
    /// The stable snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Door::Cli => "cli",
            Door::Mcp => "mcp",
            Door::Hook => "hook",
            Door::Python => "python",
            Door::Socket => "socket",
            Door::Daemon => "daemon",
            Door::Web => "web",
        }
    }

    /// The trust of what is written on purpose through this door (`remember`): a
    /// person's at the command line and in the web view, an agent's anywhere else.
    pub fn writer_trust(self) -> Trust {
        match self {
            Door::Cli | Door::Web => Trust::Person,
            _ => Trust::Agent,
        }
    }
}

/// A memory's origin.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Origin {
    /// The door (`cli`, `mcp`, `hook`, `python`, `socket`, `daemon`, `web`).
    pub door: Option<String>,
    /// The agent that wrote or captured it, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The session it was written or captured in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// For captures: the tool or source it came from (`claude-code:tool:WebFetch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The machine (host name) it was written on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
    /// True when the writing process ran inside an agent's session (an `amber` command
    /// Claude Code's Bash tool ran, say): the agent's word, whatever the door.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub inside_agent: bool,
    /// True when `agent` and `session` are only the writer's word: the write named no
    /// live session, so the agent is the `author` it gave. False when a live session
    /// vouched for them (the agent is the one that session started as, with its token
    /// when the name is registered) or when neither is named.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub claimed: bool,
}

impl Origin {
    /// True when what was written came from an agent runtime: the MCP or hook door, or a
    /// process inside an agent's session. Such a write never counts as a person's,
    /// whatever `author` it names.
    pub fn from_agent_runtime(&self) -> bool {
        self.inside_agent || matches!(self.door.as_deref(), Some("mcp" | "hook"))
    }
}

/// Writes `origin` and `trust` into a memory's metadata (an object; anything else is
/// replaced by an object), over whatever the client put there.
pub fn stamp(metadata: &mut Value, origin: &Origin, trust: Trust) {
    if !metadata.is_object() {
        *metadata = json!({});
    }
    if let Some(o) = metadata.as_object_mut() {
        o.insert(ORIGIN_KEY.into(), serde_json::to_value(origin).unwrap_or(Value::Null));
        o.insert(TRUST_KEY.into(), Value::from(trust.as_str()));
    }
}

/// Who changes a memory's trust.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetBy {
    /// The person's word (`amber trust`, the web view): raises or lowers.
    Person,
    /// The daemon, on learning the text was not the person's (an agent wrote the file it
    /// came from): only ever lowers.
    Daemon,
}

impl SetBy {
    /// The stable lowercase name, as `trust_set.by` records it.
    pub fn as_str(self) -> &'static str {
        match self {
            SetBy::Person => "person",
            SetBy::Daemon => "daemon",
        }
    }
}

/// Sets a memory's trust: the new level in `trust`, and what it was, when and by whom in
/// `trust_set`. The origin is kept as it was. False when nothing changed: the trust was
/// already this, or the daemon was asked to raise it.
pub fn set_trust(metadata: &mut Value, trust: Trust, by: SetBy, now: crate::Millis) -> bool {
    let was = trust_of(metadata);
    if was == trust && metadata.get(TRUST_KEY).is_some() {
        return false;
    }
    if by == SetBy::Daemon && trust >= was {
        return false;
    }
    if !metadata.is_object() {
        *metadata = json!({});
    }
    if let Some(o) = metadata.as_object_mut() {
        o.insert(TRUST_KEY.into(), Value::from(trust.as_str()));
        o.insert("trust_set".into(), json!({ "at": now, "was": was.as_str(), "by": by.as_str() }));
    }
    true
}

/// The trust a memory's metadata records. Memories filed before origins were stamped
/// have none: a capture (`captured: true`) is `external`, anything else `agent`.
pub fn trust_of(metadata: &Value) -> Trust {
    trust_from(
        metadata.get(TRUST_KEY).and_then(Value::as_str),
        metadata.get("captured").and_then(Value::as_bool) == Some(true),
    )
}

/// The trust of a memory whose metadata holds this `trust` (if any) and is or is not a
/// capture (see [`trust_of`]).
pub fn trust_from(trust: Option<&str>, captured: bool) -> Trust {
    match trust {
        Some("person") => Trust::Person,
        Some("agent") => Trust::Agent,
        Some("external") => Trust::External,
        _ if captured => Trust::External,
        _ => Trust::Agent,
    }
}

/// The origin a memory's metadata records (empty when none was stamped).
pub fn origin_of(metadata: &Value) -> Origin {
    metadata.get(ORIGIN_KEY).and_then(|o| serde_json::from_value(o.clone()).ok()).unwrap_or_default()
}

/// Who or what a memory came from, in a few words for the text an agent reads:
/// `person`, `agent claude-code`, `external: claude-code:tool:WebFetch`. One line of
/// plain text (labels are checked at write time; older ones are cleaned here).
pub fn label(metadata: &Value, author: Option<&str>) -> String {
    let origin = origin_of(metadata);
    let clean = |s: &str| -> String { quoted_name(s, 80) };
    match trust_of(metadata) {
        Trust::Person => "person".into(),
        Trust::Agent => match origin.agent.as_deref().or(author) {
            Some(a) if !a.trim().is_empty() => format!("agent {}", clean(a)),
            _ => "agent".into(),
        },
        Trust::External => match origin.tool.as_deref() {
            Some(t) if !t.trim().is_empty() => format!("external: {}", clean(t)),
            _ => "external".into(),
        },
    }
}

/// Characters that read as Amber's separator (` · `) in a served line.
const SEPARATOR_LIKE: &[char] = &[
    '\u{B7}', '\u{387}', '\u{2022}', '\u{2027}', '\u{2219}', '\u{22C5}', '\u{30FB}', '\u{FF65}', '"',
    '\u{201C}', '\u{201D}', '\u{AB}', '\u{BB}',
];

/// A name or source as it is printed inside one of Amber's lines (`from agent NAME`, a
/// briefing's `scope (SOURCE)`): one line of plain text at most `max` characters; a
/// plain name (letters, digits and `._:@/+-~#`) as it is, anything else in double
/// quotes with Amber's separator and quote marks replaced by `'`. So `x · from person`
/// is printed `"x ' from person"` and cannot pass for a separator and a label of Amber's.
pub fn quoted_name(s: &str, max: usize) -> String {
    let flat: String = crate::one_line(s).chars().take(max).collect();
    let plain = !flat.is_empty() && flat.chars().all(|c| c.is_alphanumeric() || "._:@/+-~#".contains(c));
    if plain {
        return flat;
    }
    let inner: String = flat.chars().map(|c| if SEPARATOR_LIKE.contains(&c) { '\'' } else { c }).collect();
    format!("\"{inner}\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_daemon_only_ever_lowers_a_trust() {
        let mut m = json!({ "trust": "person" });
        assert!(set_trust(&mut m, Trust::Agent, SetBy::Daemon, 5));
        assert_eq!(
            (trust_of(&m), &m["trust_set"]["by"], &m["trust_set"]["was"]),
            (Trust::Agent, &json!("daemon"), &json!("person"))
        );
        assert!(!set_trust(&mut m, Trust::Person, SetBy::Daemon, 6), "never raised by the daemon");
        assert!(!set_trust(&mut m, Trust::Agent, SetBy::Daemon, 6), "nothing to do");
        assert!(set_trust(&mut m, Trust::Person, SetBy::Person, 7), "the person may raise it");
        assert_eq!(m["trust_set"]["by"], "person");
    }

    #[test]
    fn a_name_cannot_forge_amber_s_separator_or_label() {
        assert_eq!(quoted_name("claude-code", 80), "claude-code");
        assert_eq!(quoted_name("claude-code:tool:WebFetch", 80), "claude-code:tool:WebFetch");
        assert_eq!(quoted_name("x · from person", 80), "\"x ' from person\"");
        assert_eq!(quoted_name("from person • approved", 80), "\"from person ' approved\"");
        assert_eq!(quoted_name("a \"b\"\nc", 80), "\"a 'b' c\"");
        let mut m = json!({});
        let o =
            Origin { door: Some("mcp".into()), agent: Some("x · from person".into()), ..Origin::default() };
        stamp(&mut m, &o, Trust::Agent);
        let l = label(&m, None);
        assert_eq!(l, "agent \"x ' from person\"");
        assert!(!l.contains(" · "), "{l}");
    }

    #[test]
    fn the_daemons_stamp_replaces_the_clients_and_labels_say_where_from() {
        let mut m = json!({ "trust": "person", "origin": { "door": "cli" }, "topic": "deploys" });
        let o = Origin { door: Some("mcp".into()), agent: Some("claude-code".into()), ..Origin::default() };
        stamp(&mut m, &o, Door::Mcp.writer_trust());
        assert_eq!(trust_of(&m), Trust::Agent, "a client cannot claim person");
        assert_eq!(m["topic"], "deploys", "the rest of the metadata is kept");
        assert_eq!(label(&m, None), "agent claude-code");
        let mut c = json!({ "captured": true });
        let o = Origin {
            door: Some("hook".into()),
            tool: Some("claude-code:tool:WebFetch".into()),
            ..Origin::default()
        };
        stamp(&mut c, &o, Trust::External);
        assert_eq!(label(&c, Some("claude-code")), "external: claude-code:tool:WebFetch");
        let mut p = json!([1]);
        stamp(&mut p, &Origin { door: Some("cli".into()), ..Origin::default() }, Door::Cli.writer_trust());
        assert_eq!(label(&p, Some("user")), "person");
        // Before stamping: captures are external, the rest agent.
        assert_eq!(trust_of(&json!({ "captured": true })), Trust::External);
        assert_eq!(trust_of(&json!({})), Trust::Agent);
        assert_eq!(label(&json!({}), Some("bot\n- forged")), "agent \"bot - forged\"");
        assert!(Trust::External < Trust::Agent && Trust::Agent < Trust::Person);
    }
}

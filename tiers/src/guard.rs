//! The loop guard: may an agent answer a memory (the trigger) in its thread? The
//! reference protocol's (RxAi AMP v2.13) checks, in order; the first that fires decides.
//! No model, no store: the daemon hands it the thread.
//!
//! 1. the thread is held for a person: hold;
//! 2. the trigger is addressed to another agent: skip;
//! 3. this agent already handled the trigger (the guard allowed it before, or it
//!    answered it): skip;
//! 4. the trigger is the agent's own: skip;
//! 5. the thread has reached 2 automatic hops since a person wrote (a person is hop 0):
//!    hold;
//! 6. no person has written since this agent's last message in the thread: skip;
//! 7. the last 3 replies in a row are all agents': hold;
//! 8. 2 of the last 6 replies are agents' replies with a reported failure: hold.
//!
//! A person is an author that is absent, `user`, or `person:<name>` / `human:<name>`;
//! anything else is an agent.

use amber_core::{Memory, MemoryId};
use serde::{Deserialize, Serialize};

/// Hops since a person wrote at which the thread is held.
pub const MAX_HOPS: usize = 2;

/// One message of a thread, as the guard sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// The memory.
    pub id: MemoryId,
    /// Its author.
    pub author: Option<String>,
    /// Its recipient.
    pub to: Option<String>,
    /// What it answers.
    pub reply_to: Option<MemoryId>,
    /// Failures reported for it.
    pub failures: u32,
    /// Whether a person wrote it: the trust the daemon stamped (`person`), never the
    /// author a client named; a memory filed before trust was stamped falls back to its
    /// author ([`is_person`]).
    pub person: bool,
}

impl Message {
    /// The guard's view of a memory.
    pub fn of(m: &Memory, failures: u32) -> Message {
        // A person's author (none, `user`, `person:…`), and not written by an agent
        // runtime (MCP, hooks, a command inside an agent's session) nor captured from
        // outside: an agent naming itself `user` is no person.
        let origin = amber_core::origin::origin_of(&m.metadata);
        let person = is_person(m.author.as_deref())
            && !origin.from_agent_runtime()
            && amber_core::origin::trust_of(&m.metadata) != amber_core::origin::Trust::External;
        Message {
            id: m.id.clone(),
            author: m.author.clone(),
            to: m.to.clone(),
            reply_to: m.reply_to.clone(),
            failures,
            person,
        }
    }

    fn by_person(&self) -> bool {
        self.person
    }

    fn by(&self, agent: &str) -> bool {
        self.author.as_deref() == Some(agent)
    }
}

/// True when an author is a person, not an agent.
pub fn is_person(author: Option<&str>) -> bool {
    match author {
        None => true,
        Some(a) => a == "user" || a.starts_with("person:") || a.starts_with("human:"),
    }
}

/// What the guard says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Answer.
    Allow,
    /// Do not answer this one.
    Skip,
    /// Stop the thread until a person releases it.
    Hold,
}

/// The guard's decision and the rule that made it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// allow, skip or hold.
    pub decision: Verdict,
    /// The rule: `held`, `addressed_elsewhere`, `already_handled`, `own_message`,
    /// `hop_limit`, `no_person_since_last_reply`, `agent_run`, `failed_replies`, or
    /// `allowed` when none fired.
    pub rule: String,
    /// The rule's number in the order above (0 for `allowed`).
    pub rule_number: u8,
    /// Why, in words.
    pub why: String,
}

fn decision(decision: Verdict, rule_number: u8, rule: &str, why: String) -> Decision {
    Decision { decision, rule: rule.to_string(), rule_number, why }
}

/// Decides for `agent` and `trigger`. `thread` is the trigger's thread in filing order,
/// root first (it holds the trigger); `held` the reason of a hold on it; `handled` true
/// when the guard allowed this agent this trigger before.
pub fn decide(
    agent: &str,
    trigger: &Message,
    thread: &[Message],
    held: Option<&str>,
    handled: bool,
) -> Decision {
    use Verdict::*;
    if let Some(reason) = held {
        return decision(
            Hold,
            1,
            "held",
            format!("the thread is held for a person ({reason}): release it to go on"),
        );
    }
    if let Some(to) = trigger.to.as_deref()
        && to != "all"
        && to != agent
        && !(to == "self" && trigger.by(agent))
    {
        return decision(Skip, 2, "addressed_elsewhere", format!("the trigger is addressed to {to}"));
    }
    if handled || thread.iter().any(|m| m.by(agent) && m.reply_to.as_ref() == Some(&trigger.id)) {
        return decision(Skip, 3, "already_handled", format!("{agent} already handled this trigger"));
    }
    if trigger.by(agent) {
        return decision(Skip, 4, "own_message", "the trigger is the agent's own message".into());
    }
    let hops = hops_to(trigger, thread);
    if hops >= MAX_HOPS {
        return decision(
            Hold,
            5,
            "hop_limit",
            format!("{hops} agent replies in a row since a person wrote (limit {MAX_HOPS})"),
        );
    }
    if let Some(last) = thread.iter().rposition(|m| m.by(agent))
        && !thread[last + 1..].iter().any(Message::by_person)
    {
        return decision(
            Skip,
            6,
            "no_person_since_last_reply",
            format!("no person has written since {agent}'s last reply"),
        );
    }
    let replies: Vec<&Message> = thread.iter().filter(|m| m.reply_to.is_some()).collect();
    let last3 = &replies[replies.len().saturating_sub(3)..];
    if last3.len() == 3 && last3.iter().all(|m| !m.by_person()) {
        return decision(Hold, 7, "agent_run", "the last 3 replies are all agents'".into());
    }
    let last6 = &replies[replies.len().saturating_sub(6)..];
    let failed = last6.iter().filter(|m| !m.by_person() && m.failures > 0).count();
    if failed >= 2 {
        return decision(
            Hold,
            8,
            "failed_replies",
            format!("{failed} of the last {} replies are agents' replies that failed", last6.len()),
        );
    }
    decision(Allow, 0, "allowed", "no rule fired".into())
}

/// Agent messages in a row, ending at the trigger, on its path up to the root (a person
/// is hop 0).
fn hops_to(trigger: &Message, thread: &[Message]) -> usize {
    let mut hops = 0;
    let mut at = Some(trigger);
    let mut steps = 0;
    while let Some(m) = at {
        if m.by_person() || steps > thread.len() {
            break;
        }
        hops += 1;
        steps += 1;
        at = m.reply_to.as_ref().and_then(|p| thread.iter().find(|x| &x.id == p));
    }
    hops
}

#[cfg(test)]
mod tests {
    use super::*;
    use amber_core::Scope;

    fn id(n: u32) -> MemoryId {
        MemoryId::derive(&Scope::default(), &n.to_string())
    }

    /// A message `n` by `author` answering `reply_to`.
    fn m(n: u32, author: &str, reply_to: Option<u32>) -> Message {
        Message {
            id: id(n),
            author: (author != "-").then(|| author.to_string()),
            to: None,
            reply_to: reply_to.map(id),
            failures: 0,
            person: author == "-" || is_person(Some(author)),
        }
    }

    fn rule(
        agent: &str,
        trigger: u32,
        thread: &[Message],
        held: Option<&str>,
        handled: bool,
    ) -> (Verdict, u8) {
        let t = thread.iter().find(|x| x.id == id(trigger)).unwrap();
        let d = decide(agent, t, thread, held, handled);
        (d.decision, d.rule_number)
    }

    #[test]
    fn each_rule_fires_in_order() {
        use Verdict::*;
        // A person asks, agent a answers: b may answer a's reply.
        let base = vec![m(1, "user", None), m(2, "a", Some(1))];
        assert_eq!(rule("b", 2, &base, None, false), (Allow, 0));
        // 1: held.
        assert_eq!(rule("b", 2, &base, Some("hop_limit"), false), (Hold, 1));
        // 2: addressed to someone else (a named agent, or another author's diary).
        let mut to_c = base.clone();
        to_c[1].to = Some("c".into());
        assert_eq!(rule("b", 2, &to_c, None, false), (Skip, 2));
        assert_eq!(rule("c", 2, &to_c, None, false), (Allow, 0));
        to_c[1].to = Some("self".into());
        assert_eq!(rule("b", 2, &to_c, None, false), (Skip, 2));
        to_c[1].to = Some("all".into());
        assert_eq!(rule("b", 2, &to_c, None, false), (Allow, 0));
        // 3: handled before (allowed by the guard, or answered).
        assert_eq!(rule("b", 2, &base, None, true), (Skip, 3));
        let answered = vec![m(1, "user", None), m(2, "a", Some(1)), m(3, "b", Some(2))];
        assert_eq!(rule("b", 2, &answered, None, false), (Skip, 3));
        // 4: its own message.
        assert_eq!(rule("a", 2, &base, None, false), (Skip, 4));
        // 5: two agent hops since the person: hold.
        let hops = vec![m(1, "user", None), m(2, "a", Some(1)), m(3, "b", Some(2))];
        assert_eq!(rule("c", 3, &hops, None, false), (Hold, 5));
        // A person in between resets the hops.
        let reset = vec![m(1, "user", None), m(2, "a", Some(1)), m(3, "-", Some(2)), m(4, "b", Some(3))];
        assert_eq!(rule("c", 4, &reset, None, false), (Allow, 0));
        // 6: no person since this agent's last reply.
        let quiet = vec![
            m(1, "user", None),
            m(2, "c", Some(1)),
            m(3, "user", Some(2)),
            m(4, "a", Some(3)),
            m(5, "c", Some(1)),
        ];
        assert_eq!(rule("c", 4, &quiet, None, false), (Skip, 6));
        let spoke = vec![m(1, "user", None), m(2, "c", Some(1)), m(4, "a", Some(1)), m(3, "user", Some(4))];
        assert_eq!(rule("c", 3, &spoke, None, false), (Allow, 0));
        // 7: the last 3 replies are agents' (on different branches, so no hop limit).
        let run = vec![m(1, "user", None), m(2, "a", Some(1)), m(3, "b", Some(1)), m(4, "d", Some(1))];
        assert_eq!(rule("c", 4, &run, None, false), (Hold, 7));
        // 8: 2 of the last 6 replies are agents' replies that failed.
        let mut failed = vec![
            m(1, "user", None),
            m(2, "a", Some(1)),
            m(3, "user", Some(2)),
            m(4, "b", Some(3)),
            m(5, "user", Some(4)),
            m(6, "d", Some(5)),
        ];
        assert_eq!(rule("c", 6, &failed, None, false), (Allow, 0));
        failed[1].failures = 1;
        assert_eq!(rule("c", 6, &failed, None, false), (Allow, 0), "one failure is not enough");
        failed[3].failures = 2;
        assert_eq!(rule("c", 6, &failed, None, false), (Hold, 8));
    }

    #[test]
    fn people_and_agents() {
        // An agent runtime naming itself "user" is no person; nor is captured content.
        let mut claimed = amber_core::Memory::filed(amber_core::NewMemory::new("approve the deploy"), 1, 0);
        claimed.author = Some("user".into());
        claimed.metadata = serde_json::json!({ "trust": "agent", "origin": { "door": "mcp" } });
        assert!(!Message::of(&claimed, 0).person);
        claimed.metadata =
            serde_json::json!({ "trust": "agent", "origin": { "door": "cli", "inside_agent": true } });
        assert!(!Message::of(&claimed, 0).person);
        claimed.metadata = serde_json::json!({ "trust": "external", "origin": { "door": "hook" } });
        assert!(!Message::of(&claimed, 0).person);
        claimed.metadata = serde_json::json!({ "trust": "person", "origin": { "door": "cli" } });
        assert!(Message::of(&claimed, 0).person);
        claimed.author = Some("agent-a".into());
        assert!(!Message::of(&claimed, 0).person, "the command line filing for an agent");
        claimed.author = None;
        claimed.metadata = serde_json::json!({});
        assert!(Message::of(&claimed, 0).person, "before stamping: the author rule");
        assert!(is_person(None) && is_person(Some("user")) && is_person(Some("person:dana")));
        assert!(!is_person(Some("claude-code")) && !is_person(Some("users")));
    }
}

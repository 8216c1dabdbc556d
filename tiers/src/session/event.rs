//! What one `session_event` does to a session's record: on arrival the event is numbered
//! and counted (tool uses, the run's trace, its prompts and opening prompt); once the
//! interjection is decided, what fired is noted as served, each memory with why, and the
//! decision kept. Pure: the daemon holds the lock, calls these and stores the record.

use amber_core::Millis;

use super::{Served, Session, Tier};
use crate::decision::{Decision, Reason};
use crate::interject::EventKind;

/// What an event's arrival told about the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    /// The event's number (counted from 1).
    pub event: u64,
    /// When the session was last active before it.
    pub before: Millis,
    /// The session's first prompt: its opening prompt, and its run's task.
    pub opening: bool,
}

impl Session {
    /// Notes an event arriving at `now`: numbered, the session active, a tool's call or
    /// result counted as a tool use, a tool's result in the run's trace, a prompt counted
    /// (the first one is the opening prompt).
    pub fn note_event(&mut self, kind: EventKind, text: &str, now: Millis) -> Arrival {
        self.events += 1;
        let before = self.last_active;
        self.last_active = now;
        if matches!(kind, EventKind::ToolCall | EventKind::ToolResult) {
            self.tool_uses += 1;
        }
        if kind == EventKind::ToolResult {
            self.run.note_tool(text);
        }
        let opening = kind == EventKind::Prompt && self.run.prompts == 0;
        if kind == EventKind::Prompt {
            self.run.prompts += 1;
            self.run.note_prompt(text);
        }
        Arrival { event: self.events, before, opening }
    }

    /// Notes the decision on an event, made at `at`: when it fired, the cooldown starts
    /// there and each memory is served in the current context, saying why (the gate it
    /// cleared, or the judge's yes in the band below it); the decision is kept (at most
    /// `max_decisions`).
    pub fn note_decision(&mut self, decision: &Decision, at: Millis, max_decisions: usize) {
        let n = decision.event;
        if decision.fired {
            self.last_fire = Some(n);
            for m in &decision.memories {
                let why = match decision.reason {
                    Reason::Judge => format!(
                        "event {n}: cosine {:.3} in the band below the gate {:.2}; the judge said yes",
                        m.score, decision.gate
                    ),
                    _ => format!("event {n}: cosine {:.3} cleared the gate {:.2}", m.score, decision.gate),
                };
                self.served.push(Served {
                    id: m.id.clone(),
                    tier: Tier::Interjection,
                    event: Some(n),
                    at,
                    score: m.score,
                    why,
                    context: self.context,
                });
            }
        }
        self.push_decision(decision.clone(), max_decisions);
    }
}

#[cfg(test)]
mod tests {
    use amber_core::{MemoryId, Scope};

    use super::*;
    use crate::decision::Interjected;

    fn session() -> Session {
        let scope: Scope = "project/p".parse().unwrap();
        let mut s = Session::new("s1".into(), "claude-code".into(), None, scope, 1_000);
        s.run.on = true;
        s
    }

    #[test]
    fn an_event_is_numbered_and_counted_and_the_first_prompt_opens() {
        let mut s = session();
        let a = s.note_event(EventKind::ToolResult, "cargo test: 2 failed", 2_000);
        assert_eq!((a.event, a.before, a.opening), (1, 1_000, false));
        assert_eq!((s.tool_uses, s.last_active), (1, 2_000));
        let a = s.note_event(EventKind::Prompt, "fix the ledger tests", 3_000);
        assert_eq!((a.event, a.before, a.opening), (2, 2_000, true));
        let a = s.note_event(EventKind::Prompt, "and the docs", 4_000);
        assert!(!a.opening && s.run.prompts == 2 && s.tool_uses == 1, "{s:?}");
        s.note_event(EventKind::ToolCall, "cargo test", 5_000);
        assert_eq!(s.tool_uses, 2);
    }

    #[test]
    fn what_fired_is_served_with_why_and_the_decision_kept() {
        let mut s = session();
        s.context = 2;
        let id = MemoryId::derive(&s.scope, "the ledger tests need TZ=UTC");
        let mut d = Decision::silent(3, Reason::Judge);
        d.fired = true;
        d.gate = 0.42;
        d.memories = vec![Interjected { id, score: 0.391, content: String::new(), truncated: false }];
        s.note_decision(&d, 9_000, 2);
        assert_eq!(s.last_fire, Some(3));
        let served = &s.served[0];
        assert_eq!(
            (served.tier, served.event, served.at, served.context),
            (Tier::Interjection, Some(3), 9_000, 2)
        );
        assert_eq!(served.why, "event 3: cosine 0.391 in the band below the gate 0.42; the judge said yes");
        // Silent decisions are kept too, bounded.
        for e in 4..7 {
            s.note_decision(&Decision::silent(e, Reason::BelowBand), 9_500, 2);
        }
        assert_eq!((s.decisions.len(), s.decisions_dropped, s.served.len()), (2, 2, 1));
        assert_eq!(s.last_fire, Some(3));
    }
}

//! Runs: an agent's record of one attempt at a task (its trace, the memories it used,
//! how it went), and the rewards given to it later.

use sha2::{Digest, Sha256};

use crate::{InvalidInput, MemoryId, Millis, Scope};

/// The longest trace kept, in characters.
pub const MAX_TRACE_CHARS: usize = 20_000;
/// The longest task, in characters.
pub const MAX_TASK_CHARS: usize = 2_000;

/// A run as an agent records it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewRun {
    /// What the run set out to do.
    pub task: String,
    /// What happened (at most 20,000 characters; redacted like captures before storing).
    #[serde(default)]
    pub trace: String,
    /// The memories it relied on: a reward moves their weights.
    #[serde(default)]
    pub used: Vec<MemoryId>,
    /// How it went, in the agent's words (free text, e.g. `tests pass`).
    #[serde(default)]
    pub outcome: Option<String>,
    /// The situations whose advice it followed.
    #[serde(default)]
    pub advice: Vec<String>,
    /// In a batch (`runs`, `amber runs load`): the run's reward, -1..1, given when it is
    /// first recorded (as `run_reward` would; a run already recorded is not rewarded
    /// again). Not part of its id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reward: Option<f64>,
    /// In a batch, with `reward`: why (at most 300 characters), kept with the reward
    /// as `run_reward`'s `reason` is. Not part of its id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The session the run records (a session's run, `session_start` with `run`): its id
    /// is then the session's and [`NewRun::part`]'s, not its content's, so the session's
    /// later ends rewrite it (see [`RunWrite`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Which of the session's runs this is (0 the first): a session's run that was
    /// rewarded stays as it was, and what the session does after goes to its next part.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub part: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// What recording a run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunWrite {
    /// A new run.
    New,
    /// A session's run (same session and part) rewritten with what the session did since:
    /// nobody had rewarded it; a judgement of it is dropped (it is judged again).
    Rewritten,
    /// A run with that id was there and stays as it was: the same content recorded again,
    /// or a session's run rewarded since (the session's next part takes what follows).
    Kept,
}

impl NewRun {
    /// Checks the parts a type cannot: a task, sizes.
    pub fn validate(&self) -> crate::Result<()> {
        let bad = |reason: String| Err(InvalidInput::BadRun { reason });
        if self.task.trim().is_empty() {
            return bad("task is empty".into());
        }
        if self.task.chars().count() > MAX_TASK_CHARS {
            return bad(format!("task is over {MAX_TASK_CHARS} characters"));
        }
        if self.trace.chars().count() > MAX_TRACE_CHARS {
            return bad(format!("trace is over {MAX_TRACE_CHARS} characters"));
        }
        if self.used.len() > 1_000 || self.advice.len() > 100 {
            return bad("at most 1,000 used memories and 100 advice keys".into());
        }
        if let Some(r) = self.reward.filter(|r| !(-1.0..=1.0).contains(r)) {
            return bad(format!("reward must be in -1..1, got {r}"));
        }
        if let Some(reason) = &self.reason {
            if self.reward.is_none() {
                return bad("a reason goes with a reward".into());
            }
            if reason.chars().count() > 300 {
                return bad("reason is over 300 characters".into());
            }
        }
        Ok(())
    }

    /// The run's id, 32 hex digits: the first 128 bits of SHA-256 over its scope, agent
    /// and content, so the same runs loaded into a fresh store get the same ids; a
    /// session's run over its scope, agent, session and part instead, so two sessions
    /// that did the same work are two runs, and a session's later ends find its run.
    pub fn id(&self, scope: &Scope, agent: &str) -> String {
        let mut h = Sha256::new();
        if let Some(session) = &self.session {
            let part = self.part.to_string();
            for x in ["session run", scope.as_str(), agent, session.as_str(), part.as_str()] {
                h.update(x.as_bytes());
                h.update([0u8]);
            }
            return hex::encode(&h.finalize()[..16]);
        }
        for part in [
            scope.as_str(),
            agent,
            self.task.as_str(),
            self.trace.as_str(),
            self.outcome.as_deref().unwrap_or(""),
        ] {
            h.update(part.as_bytes());
            h.update([0u8]);
        }
        for id in &self.used {
            h.update(id.as_str().as_bytes());
        }
        h.update([0u8]);
        for a in &self.advice {
            h.update(a.as_bytes());
            h.update([0u8]);
        }
        hex::encode(&h.finalize()[..16])
    }
}

/// A run as the store keeps it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Run {
    /// Its id (32 hex digits).
    pub id: String,
    /// Where it lives.
    pub scope: Scope,
    /// The agent that recorded it (the only one that may reward it).
    pub agent: String,
    /// The task.
    pub task: String,
    /// The trace, redacted.
    pub trace: String,
    /// The memories it used.
    pub used: Vec<MemoryId>,
    /// How it went, in the agent's words.
    pub outcome: Option<String>,
    /// The advice it followed.
    pub advice: Vec<String>,
    /// When it was recorded.
    pub created_at: Millis,
    /// Its latest reward, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reward: Option<f32>,
}

/// A reward given to a run (the history keeps every one; the latest counts).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RunReward {
    /// The reward, -1..1.
    pub reward: f32,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Who gave it.
    pub agent: String,
    /// When.
    pub at: Millis,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(trace: &str, session: Option<&str>, part: u32) -> NewRun {
        NewRun {
            task: "deploy".into(),
            trace: trace.into(),
            used: Vec::new(),
            outcome: None,
            advice: Vec::new(),
            reward: None,
            session: session.map(str::to_string),
            reason: None,
            part,
        }
    }

    #[test]
    fn a_sessions_run_is_named_by_its_session_and_part_and_any_other_by_its_content() {
        let scope: Scope = "project/p".parse().unwrap();
        let id = |r: &NewRun| r.id(&scope, "claude-code");
        // Two sessions that did the same work are two runs; a session's run keeps its id
        // as it grows; its next part is another run.
        assert_ne!(id(&run("Bash: make", Some("k-a"), 0)), id(&run("Bash: make", Some("k-b"), 0)));
        assert_eq!(
            id(&run("Bash: make", Some("k-a"), 0)),
            id(&run("Bash: make\nBash: test", Some("k-a"), 0))
        );
        assert_ne!(id(&run("Bash: make", Some("k-a"), 0)), id(&run("Bash: make", Some("k-a"), 1)));
        // Without a session: by content, as always (the same runs loaded anywhere keep
        // their ids, and this one is the id it had before sessions counted).
        assert_eq!(id(&run("Bash: make", None, 0)), id(&run("Bash: make", None, 0)));
        assert_ne!(id(&run("Bash: make", None, 0)), id(&run("Bash: test", None, 0)));
        assert_eq!(id(&run("Bash: make", None, 0)), "1622ee4319e5012260b6457c589e9828");
        let json = serde_json::to_string(&run("x", None, 0)).unwrap();
        assert!(!json.contains("session") && !json.contains("part"), "{json}");
    }
}

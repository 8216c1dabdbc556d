//! A session as a run: a client that asks for it (`session_start` with `run`, as the
//! Claude Code hooks do) has its session recorded as a run when the session ends, with no
//! word from the agent:
//!
//! - **task**: the opening prompt;
//! - **trace**: one line per tool use (`Tool: what`, and `failed: ` with the first line
//!   of the error), redacted, at most [`MAX_TRACE_LINES`] lines (the rest counted);
//! - **used**: the memories served to it and those it reported on;
//! - **outcome**: the client's outcome, the checkpoint's answer, the words on memories,
//!   the failed tool uses;
//! - **advice**: the situations whose note it was given.
//!
//! **A run per session.** The run's id is its session's and its part's
//! ([`NewRun::id`]), never its content's. A resumed, continued or compacted session's
//! next end rewrites its run with everything since the run began (the same id, its time
//! the end's): one session, one run, however often it ends. Once someone has rewarded the
//! run (a person, `amber runs reward`), it stays as it was rewarded, and what the session
//! does after goes to its next part, a new run (the same task; the tool uses, servings,
//! reports and advice since the rewarded run was last recorded). A session that did
//! nothing (no tool use, nothing served, no report) records no run, and an end with
//! nothing new since the run was last recorded leaves it as it is.

use amber_core::standing::{Outcome, Report};
use amber_core::{MemoryId, NewRun};

pub use crate::run_log::{AdviceGiven, MAX_LINE_CHARS, MAX_TRACE_LINES, OpenRun, RunLog};
use crate::session::Session;

/// The session's current run as it stands, given its reports (memory, word): None when
/// it is not a run, has no task, did nothing in this run, or nothing since the run was
/// last recorded.
pub fn as_run(s: &Session, reports: &[(MemoryId, Report)]) -> Option<NewRun> {
    let log = &s.run;
    let task = log.task.clone().filter(|_| log.on)?;
    let since = log.since;
    let reports: Vec<&(MemoryId, Report)> = reports.iter().filter(|(_, r)| r.at >= since).collect();
    let served: Vec<&MemoryId> = s.served.iter().filter(|x| x.at >= since).map(|x| &x.id).collect();
    if log.tools == 0 && served.is_empty() && reports.is_empty() {
        return None;
    }
    let mut used: Vec<MemoryId> = Vec::new();
    for id in served.into_iter().chain(reports.iter().map(|(id, _)| id)) {
        if !used.contains(id) && used.len() < 1_000 {
            used.push(id.clone());
        }
    }
    let mut trace = log.trace.join("\n");
    let more = log.tools.saturating_sub(log.trace.len() as u64);
    if more > 0 {
        trace.push_str(&format!("\n… and {more} more tool uses"));
    }
    let trace: String = trace.chars().take(amber_core::MAX_TRACE_CHARS).collect();
    let mut advice: Vec<String> = Vec::new();
    for a in log.advice.iter().filter(|a| a.at >= since) {
        if !advice.contains(&a.situation) {
            advice.push(a.situation.clone());
        }
    }
    let run = NewRun {
        task,
        trace,
        used,
        outcome: outcome(s, &reports),
        advice,
        reward: None,
        session: Some(s.id.clone()),
        reason: None,
        part: log.part(),
    };
    (log.open.as_ref().map(|o| &o.digest) != Some(&digest(s, &run))).then_some(run)
}

/// What a session's run holds, as a digest: an end whose run has the digest it was last
/// recorded with leaves it as it is.
pub fn digest(s: &Session, run: &NewRun) -> String {
    NewRun { session: None, part: 0, ..run.clone() }.id(&s.scope, &s.agent)
}

/// How the session went, in words: the client's outcome, the checkpoint's answer, the
/// words on memories, the failed tool uses.
fn outcome(s: &Session, reports: &[&(MemoryId, Report)]) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(o) = &s.outcome {
        parts.push(format!("the client said {o}"));
    }
    match s.checkpoint.outcome.as_deref() {
        Some("filed") => parts.push("a takeaway was filed at the checkpoint".to_string()),
        Some("declined") => parts.push(format!(
            "nothing to keep, the agent said at the checkpoint: {}",
            s.checkpoint.decline.as_deref().unwrap_or("").chars().take(200).collect::<String>()
        )),
        _ => {}
    }
    let count = |o: Outcome| reports.iter().filter(|(_, r)| r.result == Some(o)).count();
    let (good, bad, neutral) = (count(Outcome::Success), count(Outcome::Failure), count(Outcome::Neutral));
    if good + bad + neutral > 0 {
        parts.push(format!("words on memories: {good} helped, {bad} wrong, {neutral} neutral"));
    }
    if s.run.tools > 0 {
        parts.push(format!("{} of {} tool uses failed", s.run.failed, s.run.tools));
    }
    (!parts.is_empty()).then(|| crate::redact::redact(&parts.join("; ")).0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use amber_core::standing::ReportKind;
    use amber_core::{Millis, Scope};

    fn report(id: &str, result: Outcome, at: Millis) -> (MemoryId, Report) {
        let r = Report {
            kind: ReportKind::Outcome,
            result: Some(result),
            session_id: Some("s".into()),
            agent: Some("a".into()),
            note: None,
            at,
            basis: None,
        };
        (id.parse::<MemoryId>().unwrap(), r)
    }

    fn session() -> Session {
        let mut s = Session::new("s".into(), "claude-code".into(), None, Scope::default(), 0);
        s.run.on = true;
        s
    }

    #[test]
    fn the_opening_prompt_is_the_task_and_later_prompts_are_not() {
        let mut s = session();
        assert!(!s.run.note_prompt("   "));
        assert!(
            s.run.note_prompt("fix the login bug; token sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789")
        );
        assert!(!s.run.note_prompt("and the tests"));
        let task = s.run.task.clone().unwrap();
        assert!(task.starts_with("fix the login bug") && !task.contains("abcdefghijklmnop"), "{task}");
    }

    #[test]
    fn tool_uses_make_a_bounded_redacted_trace_and_failures_are_counted() {
        let mut s = session();
        s.run.note_prompt("migrate the database");
        s.run.note_tool("Bash: make migrate\nok\n");
        s.run.note_tool("Bash: psql -c 'select 1'\n[failed]\nconnection refused on port 6432\nmore");
        s.run.note_tool("Bash: cat x.log\n[failed]\nExit code 1\ncat: x.log: No such file or directory");
        for i in 0..MAX_TRACE_LINES + 5 {
            s.run.note_tool(&format!("Read: /p/f{i}.rs\nfn main() {{}}"));
        }
        let run = as_run(&s, &[]).unwrap();
        assert_eq!(run.task, "migrate the database");
        let lines: Vec<&str> = run.trace.lines().collect();
        assert_eq!(lines[0], "Bash: make migrate");
        assert_eq!(lines[1], "Bash: psql -c 'select 1' → failed: connection refused on port 6432");
        assert_eq!(lines[2], "Bash: cat x.log → failed (exit 1): cat: x.log: No such file or directory");
        assert_eq!(lines.len(), MAX_TRACE_LINES + 1, "the kept lines and the count of the rest");
        assert!(lines.last().unwrap().ends_with("and 8 more tool uses"), "{:?}", lines.last());
        assert!(run.outcome.as_deref().unwrap().contains("2 of 98 tool uses failed"));
        run.validate().unwrap();
    }

    #[test]
    fn used_holds_served_and_reported_memories_and_the_outcome_says_how_it_went() {
        let mut s = session();
        s.run.note_prompt("deploy");
        let a = "0123456789abcdef0123456789abcdef";
        let b = "fedcba9876543210fedcba9876543210";
        s.served.push(crate::session::Served {
            id: a.parse::<MemoryId>().unwrap(),
            tier: crate::session::Tier::Briefing,
            event: None,
            at: 5,
            score: 0.5,
            why: String::new(),
            context: 0,
        });
        s.checkpoint.outcome = Some("filed".into());
        let reports = [report(a, Outcome::Success, 6), report(b, Outcome::Failure, 7)];
        let run = as_run(&s, &reports).unwrap();
        let used: Vec<String> = run.used.iter().map(|m| m.to_string()).collect();
        assert_eq!(used, vec![a.to_string(), b.to_string()]);
        let outcome = run.outcome.unwrap();
        assert!(outcome.contains("a takeaway was filed at the checkpoint"), "{outcome}");
        assert!(outcome.contains("1 helped, 1 wrong, 0 neutral"), "{outcome}");
    }

    #[test]
    fn a_sessions_later_ends_rewrite_its_run_until_it_is_rewarded() {
        let mut s = session();
        s.run.note_prompt("deploy");
        assert!(as_run(&s, &[]).is_none(), "no tool use, nothing served, no report: no run");
        s.run.note_tool("Bash: make deploy\nok");
        let first = as_run(&s, &[]).unwrap();
        let id = first.id(&s.scope, &s.agent);
        assert_eq!((first.session.as_deref(), first.part), (Some("s"), 0));
        s.run.recorded(id.clone(), digest(&s, &first), 100);
        assert!(as_run(&s, &[]).is_none(), "nothing new since it was recorded: left as it is");

        // Resumed: a report and a tool use later, the same run holds all of it.
        let reports = [report("0123456789abcdef0123456789abcdef", Outcome::Success, 150)];
        s.run.note_tool("Bash: make verify\nok");
        let grown = as_run(&s, &reports).unwrap();
        assert_eq!(grown.id(&s.scope, &s.agent), id, "one session, one run");
        assert_eq!(grown.trace, "Bash: make deploy\nBash: make verify");
        assert_eq!(grown.used.len(), 1);
        s.run.recorded(id.clone(), digest(&s, &grown), 200);
        assert_eq!(s.run.runs, vec![id.clone()]);

        // Rewarded since: it is closed, and what follows is the session's next run.
        s.run.note_tool("Bash: make rollback\n[failed]\nExit code 2\nno such target");
        s.run.close();
        let next = as_run(&s, &reports).unwrap();
        assert_eq!(next.part, 1);
        assert_ne!(next.id(&s.scope, &s.agent), id);
        assert_eq!(next.task, "deploy");
        assert_eq!(next.trace, "Bash: make rollback → failed (exit 2): no such target");
        assert!(next.used.is_empty(), "the report before it belongs to the rewarded run");
        assert!(next.outcome.clone().unwrap().contains("1 of 1 tool uses failed"));
        s.run.recorded(next.id(&s.scope, &s.agent), digest(&s, &next), 300);
        assert_eq!(s.run.runs.len(), 2);
    }

    #[test]
    fn a_session_not_asked_to_be_a_run_records_nothing() {
        let mut s = Session::new("s".into(), "codex".into(), None, Scope::default(), 0);
        assert!(s.run.note_prompt("do it"), "the opening prompt is noted in any case");
        s.run.note_tool("Bash: ls\nok");
        assert_eq!(s.run.tools, 0);
        assert!(as_run(&s, &[]).is_none());
    }
}

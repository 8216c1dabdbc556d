//! `amber outcome`, `outcomes`, `archived`, `unarchive` and `audit`: what came of relying
//! on memories, their logs, the archive, and the audit of claims.

use amber_core::Outcome;
use amber_ipc::Client;
use amber_ipc::protocol::{
    ArchivedParams, AuditParams, GetParams, GuardParams, LiftParams, OutcomeParams, OutcomesParams,
    ReleaseParams, ReviewParams, ThreadParams, method,
};
use anyhow::Context;
use clap::Subcommand;

use crate::{check_id, one_line, print_json};

#[derive(Subcommand, Debug)]
pub(crate) enum OutcomeCommand {
    /// Report what came of relying on a memory: success, failure or neutral. Moves its
    /// weight (success +0.30, failure -0.20; an agent's on a memory its session was never
    /// served counts half); below 0.10 it is archived, once a person or two sessions that
    /// were served it reported a failure.
    Outcome {
        /// The memory id or a prefix of it.
        id: String,
        /// success, failure or neutral.
        result: String,
        /// The session it was relied on in (the latest word in a session counts).
        #[arg(long)]
        session: Option<String>,
        /// Why, in a few words (kept in the memory's log).
        #[arg(long)]
        note: Option<String>,
        /// Who is reporting [default: the session's agent, else none].
        #[arg(long)]
        agent: Option<String>,
    },
    /// A memory's standing and every outcome logged on it.
    Outcomes {
        /// The memory id or a prefix of it.
        id: String,
    },
    /// List archived memories (out of recall: their weight fell below 0.10, or an
    /// invalidation supersedes them).
    Archived {
        /// Only this scope and the scopes under it.
        #[arg(long)]
        scope: Option<String>,
        /// At most this many.
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// Restore an archived memory (its weight rises to 0.30).
    Unarchive {
        /// The memory id or a prefix of it.
        id: String,
    },
    /// Promote or demote a memory: `person` serves it as your own word (a capture you
    /// have read and vouch for), `agent` as an agent's, `external` only to recall.
    Trust {
        /// The memory id or a prefix of it.
        id: String,
        /// person, agent or external.
        level: String,
    },
    /// Successes claimed with no served record behind them, and memories served in a
    /// session that never reported on them.
    Audit {
        /// How many of the most recent sessions to read.
        #[arg(long, default_value_t = 200)]
        sessions: usize,
    },
    /// A memory's thread: the memory it started from, then every answer.
    Thread {
        /// Any memory of the thread (id or prefix).
        id: String,
    },
    /// The loop guard: may AGENT answer this memory? Prints allow, skip or hold and the
    /// rule that decided (exit status 0 only for allow).
    Guard {
        /// The memory to answer (id or prefix).
        id: String,
        /// The agent that would answer.
        #[arg(long)]
        agent: String,
    },
    /// Lift a thread's hold.
    Release {
        /// Any memory of the thread (id or prefix).
        id: String,
    },
    /// Memories and runs that touched these files, rare files weighing more.
    Review {
        /// The files (paths, compared by their trailing directories).
        #[arg(required = true)]
        files: Vec<String>,
        /// Only this scope and those under it.
        #[arg(long)]
        scope: Option<String>,
        /// At most this many memories and this many runs.
        #[arg(short, default_value_t = 10)]
        k: usize,
    },
    /// Does serving memory help? Rewarded sessions served memory against the holdout
    /// arm's (`[holdout] share`): counts, mean rewards, the difference, z and p.
    Lift {
        /// Only sessions of this scope (and those under it).
        #[arg(long)]
        scope: Option<String>,
        /// Only sessions started at or after this time (ms since the epoch, or YYYY-MM-DD).
        #[arg(long)]
        since: Option<String>,
        /// Leave out the judge's verdicts: count only rewards given by a client or a person.
        #[arg(long)]
        no_judged: bool,
    },
}

/// A time given as ms since the epoch or a YYYY-MM-DD date (UTC midnight).
fn parse_time(s: &str) -> anyhow::Result<i64> {
    if let Ok(ms) = s.parse::<i64>() {
        return Ok(ms);
    }
    let d = chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .map_err(|_| anyhow::anyhow!("--since {s:?}: ms since the epoch or YYYY-MM-DD"))?;
    Ok(d.and_hms_opt(0, 0, 0).map(|t| t.and_utc().timestamp_millis()).unwrap_or(0))
}

/// Runs a command; false when a guard did not allow.
pub(crate) fn run(cmd: &OutcomeCommand, client: &mut Client, as_json: bool) -> anyhow::Result<bool> {
    match cmd {
        OutcomeCommand::Outcome { id, result, session, note, agent } => {
            check_id(id)?;
            let result: Outcome = result.parse()?;
            let p = OutcomeParams {
                memory_id: id.clone(),
                result,
                session_id: session.clone(),
                agent: agent.clone(),
                note: note.clone(),
            };
            let r = client.send::<method::Outcome>(&p)?;
            if as_json {
                print_json(&r.memory)?;
                return Ok(true);
            }
            let m = &r.memory;
            let state = if m.is_archived() { " (archived)" } else { "" };
            outln!("{} {result}: weight {:.2}{state}", m.id, m.weight);
        }
        OutcomeCommand::Outcomes { id } => {
            check_id(id)?;
            let p = OutcomesParams { memory_id: id.clone(), session_id: crate::mcp::host_session() };
            let r = client.send::<method::Outcomes>(&p)?;
            if as_json {
                print_json(&r)?;
                return Ok(true);
            }
            let m = &r.memory;
            outln!("{} [{}] {} · weight {:.2}", m.id, m.scope, m.kind, m.weight);
            if let Some(by) = &m.superseded_by {
                outln!("superseded by {by}");
            }
            if m.is_archived() {
                outln!("archived");
            }
            for x in &r.reports {
                let result = x.result.map(|r| r.to_string()).unwrap_or_else(|| "-".into());
                let mut who = Vec::new();
                if let Some(a) = &x.agent {
                    who.push(a.clone());
                }
                if let Some(s) = &x.session_id {
                    who.push(format!("session {s}"));
                }
                let note = x.note.as_deref().map(|n| format!(": {n}")).unwrap_or_default();
                outln!(
                    "  {} {} {result} {}{note}",
                    crate::when::local(x.at),
                    x.kind.as_str(),
                    who.join(", ")
                );
            }
        }
        OutcomeCommand::Archived { scope, limit } => {
            let scope = scope.as_deref().map(str::parse).transpose().context("--scope")?;
            let r = client.send::<method::Archived>(&ArchivedParams { scope, limit: Some(*limit) })?;
            if as_json {
                print_json(&r.memories)?;
                return Ok(true);
            }
            if r.memories.is_empty() {
                outln!("no archived memories");
            }
            for m in &r.memories {
                let why = match &m.superseded_by {
                    Some(by) => format!("superseded by {}", &by.as_str()[..8]),
                    None => format!("weight {:.2}", m.weight),
                };
                outln!(
                    "{} [{}] {} · {why}: {}",
                    &m.id.as_str()[..8],
                    m.scope,
                    m.kind,
                    one_line(&m.content, 100)
                );
            }
        }
        OutcomeCommand::Unarchive { id } => {
            check_id(id)?;
            let r = client.send::<method::Unarchive>(&GetParams { id: id.clone(), session_id: None })?;
            if as_json {
                print_json(&r.memory)?;
                return Ok(true);
            }
            outln!("{} restored: weight {:.2}", r.memory.id, r.memory.weight);
        }
        OutcomeCommand::Trust { id, level } => {
            check_id(id)?;
            let trust = crate::browse::trust("trust", level)?;
            let r = client.send::<amber_ipc::protocol::method::SetTrust>(
                &amber_ipc::protocol::SetTrustParams { id: id.clone(), trust },
            )?;
            if as_json {
                print_json(&r.memory)?;
                return Ok(true);
            }
            outln!(
                "{} is now trusted as {}",
                r.memory.id,
                amber_core::origin::trust_of(&r.memory.metadata).as_str()
            );
        }
        OutcomeCommand::Audit { sessions } => {
            let r = client.send::<method::Audit>(&AuditParams { sessions: Some(*sessions) })?;
            if as_json {
                print_json(&r)?;
                return Ok(true);
            }
            outln!(
                "{} sessions: {} successes with no served record, {} served memories never reported",
                r.sessions,
                r.unbacked_successes.len(),
                r.unreported.len()
            );
            for c in &r.unbacked_successes {
                outln!(
                    "  unbacked success: {} in session {} by {}",
                    c.memory_id,
                    c.session_id,
                    c.agent.as_deref().unwrap_or("?")
                );
            }
            for u in &r.unreported {
                outln!("  unreported: {} served in session {} ({})", u.memory_id, u.session_id, u.agent);
            }
            if !r.person_actions.is_empty() {
                outln!(
                    "{} of your own commands ran while an agent session was live (check each was yours):",
                    r.person_actions.len()
                );
            }
            for a in &r.person_actions {
                let when = crate::when::local(a.at);
                let how = match (a.tty, a.detached) {
                    (true, _) => "at a terminal",
                    (false, true) => "from no terminal, detached from whatever started it",
                    (false, false) => "from no terminal",
                };
                let refused = if a.refused { " · REFUSED" } else { "" };
                outln!(
                    "  {when} {}{refused}: pid {} {how}: {} (live: {})",
                    a.what,
                    a.pid.map(|p| p.to_string()).unwrap_or_else(|| "?".into()),
                    one_line(&a.command, 120),
                    a.live_sessions.join(", ")
                );
            }
        }
        OutcomeCommand::Thread { id } => {
            check_id(id)?;
            let p = ThreadParams { id: id.clone(), session_id: crate::mcp::host_session() };
            let r = client.send::<method::Thread>(&p)?;
            if as_json {
                print_json(&r)?;
                return Ok(true);
            }
            let held = r.held.as_deref().map(|h| format!(" · held ({h})")).unwrap_or_default();
            outln!("thread {}{held}", r.thread);
            for m in &r.memories {
                let to = m.to.as_deref().map(|t| format!(" → {t}")).unwrap_or_default();
                let re = m.reply_to.as_ref().map(|r| format!(" re {}", &r.as_str()[..8])).unwrap_or_default();
                outln!(
                    "  {} {}{to}{re}: {}",
                    &m.id.as_str()[..8],
                    m.author.as_deref().unwrap_or("a person"),
                    one_line(&m.content, 100)
                );
            }
        }
        OutcomeCommand::Guard { id, agent } => {
            check_id(id)?;
            let r =
                client.send::<method::Guard>(&GuardParams { memory_id: id.clone(), agent: agent.clone() })?;
            if as_json {
                print_json(&r)?;
            } else {
                let d = &r.decision;
                outln!(
                    "{} ({}): {}",
                    serde_json::to_value(d.decision)?.as_str().unwrap_or("?"),
                    d.rule,
                    d.why
                );
            }
            return Ok(r.decision.decision == amber_tiers::guard::Verdict::Allow);
        }
        OutcomeCommand::Review { files, scope, k } => {
            let scope = scope.as_deref().map(str::parse).transpose().context("--scope")?;
            let r =
                client.send::<method::Review>(&ReviewParams { files: files.clone(), scope, k: Some(*k) })?;
            if as_json {
                print_json(&r)?;
                return Ok(true);
            }
            if r.memories.is_empty() && r.runs.is_empty() {
                outln!("nothing touched these files");
            }
            for m in &r.memories {
                outln!(
                    "{} [{}] {:.2} · {}: {}",
                    &m.memory.id.as_str()[..8],
                    m.memory.scope,
                    m.score,
                    m.files.join(", "),
                    one_line(&m.memory.content, 100)
                );
            }
            for x in &r.runs {
                outln!(
                    "run {} by {} {:.2} · {}: {}",
                    &x.run.id[..12],
                    x.run.agent,
                    x.score,
                    x.files.join(", "),
                    one_line(&x.run.task, 80)
                );
            }
        }
        OutcomeCommand::Lift { scope, since, no_judged } => {
            let since = since.as_deref().map(parse_time).transpose()?;
            let judged = no_judged.then_some(false);
            let scope = scope.as_deref().map(str::parse).transpose().context("--scope")?;
            let r = client.send::<method::Lift>(&LiftParams { scope, since, sessions: None, judged })?;
            if as_json {
                print_json(&r)?;
                return Ok(true);
            }
            let l = &r.lift;
            let arm = |a: &amber_tiers::lift::Arm| match a.mean {
                Some(m) => format!("{} sessions, mean reward {m:.3}", a.n),
                None => format!("{} sessions", a.n),
            };
            outln!(
                "{} sessions read, {} rewarded ({} through their run's reward, {} by the judge's verdict alone)",
                r.sessions,
                r.rewarded,
                r.by_run,
                r.judged
            );
            outln!("served:   {}", arm(&l.served));
            outln!("withheld: {}", arm(&l.withheld));
            match (l.difference, l.z, l.p) {
                (Some(d), Some(z), Some(p)) => outln!("difference {d:+.3}, z {z:.2}, one-sided p {p:.4}"),
                (Some(d), _, _) => outln!("difference {d:+.3}"),
                _ => {}
            }
            outln!(
                "{}",
                match l.verdict {
                    amber_tiers::lift::Verdict::Lift => "lift: serving memory helps (p < 0.05)".to_string(),
                    amber_tiers::lift::Verdict::NoLift => "no lift shown".to_string(),
                    amber_tiers::lift::Verdict::NotEnoughData =>
                        format!("not enough data: at least {} rewarded sessions in each arm", l.min_per_arm),
                }
            );
        }
        OutcomeCommand::Release { id } => {
            check_id(id)?;
            let r = client.send::<method::Release>(&ReleaseParams { thread: id.clone() })?;
            if as_json {
                print_json(&r)?;
            } else if r.released {
                outln!("thread {} released", r.thread);
            } else {
                outln!("thread {} was not held", r.thread);
            }
        }
    }
    Ok(true)
}

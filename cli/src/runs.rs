//! `amber runs load|list|show|reward`: runs recorded from a file as one batch, read back,
//! and rewarded by a person.

use std::io::BufRead;
use std::path::PathBuf;
use std::time::Instant;

use amber_core::NewRun;
use amber_ipc::Client;
use amber_ipc::protocol::{
    MAX_RUN_BATCH, RunRecordParams, RunRewardParams, RunShowParams, RunsParams, SessionsParams, method,
};
use anyhow::Context;
use clap::Subcommand;

use crate::{one_line, print_json};

/// The name a person's rewards are given under (the daemon lets the `amber` command,
/// outside any agent, reward any run).
const PERSON: &str = "person";

#[derive(Subcommand, Debug)]
pub(crate) enum RunsAction {
    /// Record a JSON-lines file of runs (`{"task", "trace"?, "used"?, "outcome"?,
    /// "advice"?}` a line, at most 1,000) as one batch: all or nothing.
    Load {
        /// The scope the runs go to.
        scope: String,
        /// The file (`-` for standard input).
        file: PathBuf,
        /// The agent recording them (the only one that may reward them).
        #[arg(long = "as", value_name = "AGENT")]
        agent: String,
    },
    /// The newest runs.
    List {
        /// Only this scope and those under it.
        #[arg(long)]
        scope: Option<String>,
        /// Only this agent's runs.
        #[arg(long)]
        agent: Option<String>,
        /// At most this many.
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// One run with its rewards.
    Show {
        /// The run: its id or a prefix of it (at least 8 hex digits, as `runs list`
        /// prints 12).
        id: String,
        /// Where a prefix looks (default: every scope of this machine).
        #[arg(long)]
        scope: Option<String>,
    },
    /// Reward a run as a person: how it went, -1 (wrong) to 1 (right). A reward moves
    /// the weights of the memories the run used, and learning counts it. Any run may be
    /// rewarded by a person (a Claude Code session is recorded as one when it ends).
    Reward {
        /// The run: its id, a prefix of it (at least 8 hex digits), or `last` (the run of
        /// the session that ended last in the scope, a Claude Code session for one).
        run: String,
        /// The reward, -1..1.
        #[arg(allow_negative_numbers = true)]
        reward: f64,
        /// Why (kept with the reward).
        #[arg(long)]
        reason: Option<String>,
        /// Where `last` looks (default: the project here) and a prefix (default: every
        /// scope of this machine).
        #[arg(long)]
        scope: Option<String>,
    },
}

/// How many runs or sessions one look-up reads (the most `runs` and `sessions` give).
const LOOKUP: usize = 1000;

/// The id of the run `run` names: a whole id, or a prefix among the newest runs of
/// `scope` (every scope of this machine when None). An ambiguous prefix is an error.
fn run_id(client: &mut Client, run: &str, scope: Option<&str>) -> anyhow::Result<String> {
    let run = run.trim();
    if run.len() == 32 && run.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(run.to_ascii_lowercase());
    }
    if run.len() < 8 || run.len() > 32 || !run.bytes().all(|b| b.is_ascii_hexdigit()) {
        anyhow::bail!("bad run {run:?}: a run id is 32 hex digits, or a prefix of at least 8 of them");
    }
    let p = RunsParams {
        scope: scope.map(str::parse).transpose().context("--scope")?,
        agent: None,
        limit: Some(LOOKUP),
    };
    let r = client.send::<method::Runs>(&p)?;
    let among = scope.map(|s| format!(" of {s}")).unwrap_or_default();
    Ok(by_prefix(&r.runs, &run.to_ascii_lowercase(), &among)?.id.clone())
}

/// The one run among `runs` whose id starts with `prefix`; none, or more than one, is an
/// error that says so (naming up to 5 of them).
fn by_prefix<'a>(
    runs: &'a [amber_core::Run],
    prefix: &str,
    among: &str,
) -> anyhow::Result<&'a amber_core::Run> {
    let found: Vec<&amber_core::Run> = runs.iter().filter(|x| x.id.starts_with(prefix)).collect();
    match found.as_slice() {
        [one] => Ok(one),
        [] => {
            anyhow::bail!("no run{among} starts with {prefix} (among the newest {LOOKUP}: amber runs list)")
        }
        many => {
            let ids: Vec<String> =
                many.iter().take(5).map(|x| format!("{} [{}]", &x.id[..12], x.scope)).collect();
            let more = if many.len() > 5 { ", ..." } else { "" };
            anyhow::bail!(
                "{} runs{among} start with {prefix}: give more of the id ({}{more})",
                many.len(),
                ids.join(", ")
            )
        }
    }
}

/// The run of the session that ended last in `scope` (and the scopes under it), with that
/// session's id and when it ended: what `amber runs reward last` rewards. Sessions that
/// recorded no run (they did no work) are passed over.
fn last_run(client: &mut Client, scope: &str) -> anyhow::Result<(String, String, amber_core::Millis)> {
    let wanted: amber_core::Scope = scope.parse().context("--scope")?;
    let r = client.send::<method::Sessions>(&SessionsParams { limit: Some(LOOKUP), served: None })?;
    r.sessions
        .into_iter()
        .filter(|s| s.scope.parse::<amber_core::Scope>().is_ok_and(|sc| sc.is_within(&wanted)))
        .filter_map(|s| Some((s.ended_at?, s.runs.last()?.clone(), s.id)))
        .max_by_key(|(ended, _, _)| *ended)
        .map(|(ended, run, session)| (run, session, ended))
        .ok_or_else(|| {
            anyhow::anyhow!(
                "no ended session in {scope} was recorded as a run (amber runs list --scope {scope}; a session that did no work records none)"
            )
        })
}

fn read_runs(file: &PathBuf) -> anyhow::Result<Vec<NewRun>> {
    let reader: Box<dyn BufRead> = if file.as_os_str() == "-" {
        Box::new(std::io::BufReader::new(std::io::stdin()))
    } else {
        Box::new(std::io::BufReader::new(
            std::fs::File::open(file).with_context(|| format!("cannot open {}", file.display()))?,
        ))
    };
    let mut runs = Vec::new();
    for (i, line) in reader.lines().enumerate() {
        let line =
            line.with_context(|| format!("{} line {}: not readable as UTF-8 text", file.display(), i + 1))?;
        if line.trim().is_empty() {
            continue;
        }
        let run: NewRun = serde_json::from_str(&line)
            .with_context(|| format!("{} line {}: not a run", file.display(), i + 1))?;
        runs.push(run);
        if runs.len() % 100 == 0 {
            eprint!("\rread {} runs", runs.len());
        }
    }
    if runs.len() >= 100 {
        errln!("\rread {} runs", runs.len());
    }
    Ok(runs)
}

pub(crate) fn run(
    action: &RunsAction,
    client: &mut Client,
    as_json: bool,
    max_frame: usize,
) -> anyhow::Result<()> {
    match action {
        RunsAction::Load { scope, file, agent } => {
            let scope: amber_core::Scope = scope.parse().context("SCOPE")?;
            let runs = read_runs(file)?;
            if runs.is_empty() {
                anyhow::bail!("{} holds no runs", file.display());
            }
            if runs.len() > MAX_RUN_BATCH {
                anyhow::bail!(
                    "{} holds {} runs; one batch takes at most {MAX_RUN_BATCH}: split the file",
                    file.display(),
                    runs.len()
                );
            }
            for (i, r) in runs.iter().enumerate() {
                r.validate().with_context(|| format!("run {} (line order)", i + 1))?;
            }
            let n = runs.len();
            let params = RunRecordParams {
                agent: agent.clone(),
                scope: Some(scope.clone()),
                runs: Some(runs),
                ..RunRecordParams::default()
            };
            let size = serde_json::to_string(&params)?.len();
            if size + 256 > max_frame {
                anyhow::bail!(
                    "the batch is {size} bytes, over the daemon's max_frame_bytes ({max_frame}): split the file or raise max_frame_bytes"
                );
            }
            let started = Instant::now();
            errln!("recording {n} runs in {scope} as {agent} ...");
            let r = client.send::<method::RunRecord>(&params)?;
            if as_json {
                return print_json(&r);
            }
            let new = r.results.iter().filter(|x| x.created).count();
            outln!(
                "recorded {} runs in {} as {agent}: {new} new, {} already there ({} ms)",
                r.results.len(),
                r.scope,
                r.results.len() - new,
                started.elapsed().as_millis()
            );
        }
        RunsAction::List { scope, agent, limit } => {
            let p = RunsParams {
                scope: scope.as_deref().map(str::parse).transpose().context("--scope")?,
                agent: agent.clone(),
                limit: Some(*limit),
            };
            let r = client.send::<method::Runs>(&p)?;
            if as_json {
                return print_json(&r.runs);
            }
            if r.runs.is_empty() {
                outln!("no runs");
            }
            for x in &r.runs {
                let reward =
                    x.reward.map(|w| format!("reward {w:+.2}")).unwrap_or_else(|| "no reward".into());
                outln!(
                    "{} [{}] {} · {} · {reward}: {}",
                    &x.id[..12],
                    x.scope,
                    x.agent,
                    crate::when::local(x.created_at),
                    one_line(&x.task, 80)
                );
            }
        }
        RunsAction::Reward { run, reward, reason, scope } => {
            if !(-1.0..=1.0).contains(reward) {
                anyhow::bail!("a reward is -1..1, got {reward}");
            }
            let (id, session) = match run.trim() {
                "last" => {
                    let scope = match scope {
                        Some(s) => s.clone(),
                        None => crate::scope::here(client)?.scope.to_string(),
                    };
                    let (id, session, ended) = last_run(client, &scope)?;
                    let when = crate::when::local(ended);
                    (id, Some(format!(" (the run of session {session}, which ended {when})")))
                }
                run => (run_id(client, run, scope.as_deref())?, None),
            };
            let p = RunRewardParams {
                agent: PERSON.to_string(),
                run_id: Some(id.clone()),
                reward: Some(*reward),
                reason: reason.clone(),
                ..RunRewardParams::default()
            };
            let r = client.send::<method::RunReward>(&p)?;
            if as_json {
                return print_json(&r);
            }
            let session = session.unwrap_or_default();
            outln!("run {id}{session} rewarded {reward:+.2}: {} memory weights moved", r.weights_moved);
        }
        RunsAction::Show { id, scope } => {
            let id = run_id(client, id, scope.as_deref())?;
            let r = client.send::<method::RunShow>(&RunShowParams { id })?;
            if as_json {
                return print_json(&r);
            }
            let x = &r.run;
            outln!("run {} [{}] by {} at {}", x.id, x.scope, x.agent, crate::when::local(x.created_at));
            outln!("task: {}", x.task);
            if let Some(o) = &x.outcome {
                outln!("outcome: {o}");
            }
            if !x.used.is_empty() {
                let used: Vec<&str> = x.used.iter().map(|u| &u.as_str()[..8]).collect();
                outln!("used: {}", used.join(", "));
            }
            for w in &r.rewards {
                let why = w.reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default();
                outln!("reward {:+.2} by {} at {}{why}", w.reward, w.agent, crate::when::local(w.at));
            }
            outln!("trace:\n{}", x.trace);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(id: &str) -> amber_core::Run {
        amber_core::Run {
            id: id.into(),
            scope: "p".parse().unwrap(),
            agent: "a".into(),
            task: "t".into(),
            trace: String::new(),
            used: Vec::new(),
            outcome: None,
            advice: Vec::new(),
            created_at: 0,
            reward: None,
        }
    }

    #[test]
    fn a_prefix_names_one_run_or_says_why_not() {
        let runs = [
            run("0123456789ab0000000000000000aaaa"),
            run("0123456789ab1111111111111111bbbb"),
            run("fedcba98765400000000000000000000"),
        ];
        assert_eq!(by_prefix(&runs, "fedcba98", "").unwrap().id, runs[2].id);
        assert_eq!(by_prefix(&runs, "0123456789ab1", "").unwrap().id, runs[1].id);
        let e = by_prefix(&runs, "01234567", " of p").unwrap_err().to_string();
        assert!(e.starts_with("2 runs of p start with 01234567: give more of the id"), "{e}");
        assert!(e.contains("0123456789ab [p], 0123456789ab [p]"), "{e}");
        let e = by_prefix(&runs, "aaaaaaaa", "").unwrap_err().to_string();
        assert!(e.starts_with("no run starts with aaaaaaaa"), "{e}");
    }
}

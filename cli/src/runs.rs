//! `amber runs load|list|show|reward`: runs recorded from a file as one batch, read back,
//! and rewarded by a person.

use std::io::BufRead;
use std::path::PathBuf;
use std::time::Instant;

use amber_core::NewRun;
use amber_ipc::Client;
use amber_ipc::protocol::{MAX_RUN_BATCH, RunRecordResult, RunRewardResult, RunShowResult, RunsResult};
use anyhow::Context;
use clap::Subcommand;
use serde_json::json;

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
        /// The run id.
        id: String,
    },
    /// Reward a run as a person: how it went, -1 (wrong) to 1 (right). A reward moves
    /// the weights of the memories the run used, and learning counts it. Any run may be
    /// rewarded by a person (a Claude Code session is recorded as one when it ends).
    Reward {
        /// The run: its id, a prefix of it (at least 8 hex digits), or `last` (the newest
        /// run of the scope).
        run: String,
        /// The reward, -1..1.
        #[arg(allow_negative_numbers = true)]
        reward: f64,
        /// Why (kept with the reward).
        #[arg(long)]
        reason: Option<String>,
        /// Where `last` and a prefix look (default: the project here).
        #[arg(long)]
        scope: Option<String>,
    },
}

/// The id of the run `run` names (`last`, a prefix or a whole id) among `scope`'s.
fn run_id(client: &mut Client, run: &str, scope: Option<&str>) -> anyhow::Result<String> {
    let run = run.trim();
    if run.len() == 32 {
        return Ok(run.to_string());
    }
    if run != "last" && (run.len() < 8 || !run.bytes().all(|b| b.is_ascii_hexdigit())) {
        anyhow::bail!(
            "bad run {run:?}: a run id is 32 hex digits, a prefix of at least 8 of them, or `last`"
        );
    }
    let scope = match scope {
        Some(s) => s.to_string(),
        None => crate::scope::here(client)?.scope.to_string(),
    };
    let r: RunsResult = client.call("runs", &json!({ "scope": scope, "limit": 1000 }))?;
    let found: Vec<&str> = match run {
        "last" => r.runs.iter().take(1).map(|x| x.id.as_str()).collect(),
        prefix => r.runs.iter().filter(|x| x.id.starts_with(prefix)).map(|x| x.id.as_str()).collect(),
    };
    match found.as_slice() {
        [one] => Ok(one.to_string()),
        [] => anyhow::bail!("no run {run} in {scope} (amber runs list --scope {scope})"),
        _ => anyhow::bail!("{} runs of {scope} start with {run}: give more of the id", found.len()),
    }
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
            let params = json!({ "agent": agent, "scope": scope, "runs": runs });
            let size = params.to_string().len();
            if size + 256 > max_frame {
                anyhow::bail!(
                    "the batch is {size} bytes, over the daemon's max_frame_bytes ({max_frame}): split the file or raise max_frame_bytes"
                );
            }
            let started = Instant::now();
            errln!("recording {} runs in {scope} as {agent} ...", runs.len());
            let r: RunRecordResult = client.call("run_record", &params)?;
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
            let r: RunsResult =
                client.call("runs", &json!({ "scope": scope, "agent": agent, "limit": limit }))?;
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
                    amber_tiers::session::date(x.created_at),
                    one_line(&x.task, 80)
                );
            }
        }
        RunsAction::Reward { run, reward, reason, scope } => {
            if !(-1.0..=1.0).contains(reward) {
                anyhow::bail!("a reward is -1..1, got {reward}");
            }
            let id = run_id(client, run, scope.as_deref())?;
            let r: RunRewardResult = client.call(
                "run_reward",
                &json!({ "agent": PERSON, "run_id": id, "reward": reward, "reason": reason }),
            )?;
            if as_json {
                return print_json(&r);
            }
            outln!("run {id} rewarded {reward:+.2}: {} memory weights moved", r.weights_moved);
        }
        RunsAction::Show { id } => {
            let r: RunShowResult = client.call("run_show", &json!({ "id": id }))?;
            if as_json {
                return print_json(&r);
            }
            let x = &r.run;
            outln!(
                "run {} [{}] by {} at {}",
                x.id,
                x.scope,
                x.agent,
                amber_tiers::session::date(x.created_at)
            );
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
                outln!("reward {:+.2} by {} at {}{why}", w.reward, w.agent, amber_tiers::session::date(w.at));
            }
            outln!("trace:\n{}", x.trace);
        }
    }
    Ok(())
}

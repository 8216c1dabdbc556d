//! `amber runs load|list|show`: runs recorded from a file as one batch, and read back.

use std::io::BufRead;
use std::path::PathBuf;
use std::time::Instant;

use amber_core::NewRun;
use amber_ipc::Client;
use amber_ipc::protocol::{MAX_RUN_BATCH, RunRecordResult, RunShowResult, RunsResult};
use anyhow::Context;
use clap::Subcommand;
use serde_json::json;

use crate::{one_line, print_json};

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
        eprintln!("\rread {} runs", runs.len());
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
            eprintln!("recording {} runs in {scope} as {agent} ...", runs.len());
            let r: RunRecordResult = client.call("run_record", &params)?;
            if as_json {
                return print_json(&r);
            }
            let new = r.results.iter().filter(|x| x.created).count();
            println!(
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
                println!("no runs");
            }
            for x in &r.runs {
                let reward =
                    x.reward.map(|w| format!("reward {w:+.2}")).unwrap_or_else(|| "no reward".into());
                println!(
                    "{} [{}] {} · {} · {reward}: {}",
                    &x.id[..12],
                    x.scope,
                    x.agent,
                    amber_tiers::session::date(x.created_at),
                    one_line(&x.task, 80)
                );
            }
        }
        RunsAction::Show { id } => {
            let r: RunShowResult = client.call("run_show", &json!({ "id": id }))?;
            if as_json {
                return print_json(&r);
            }
            let x = &r.run;
            println!(
                "run {} [{}] by {} at {}",
                x.id,
                x.scope,
                x.agent,
                amber_tiers::session::date(x.created_at)
            );
            println!("task: {}", x.task);
            if let Some(o) = &x.outcome {
                println!("outcome: {o}");
            }
            if !x.used.is_empty() {
                let used: Vec<&str> = x.used.iter().map(|u| &u.as_str()[..8]).collect();
                println!("used: {}", used.join(", "));
            }
            for w in &r.rewards {
                let why = w.reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default();
                println!(
                    "reward {:+.2} by {} at {}{why}",
                    w.reward,
                    w.agent,
                    amber_tiers::session::date(w.at)
                );
            }
            println!("trace:\n{}", x.trace);
        }
    }
    Ok(())
}

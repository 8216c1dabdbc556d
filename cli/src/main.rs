//! `amber`: remember and recall from the command line, through the daemon.
//!
//! Every command talks to `amberd` over its local socket. When no daemon answers, `amber`
//! starts one in the background (and says so on stderr), unless `--no-start` is given.
#![forbid(unsafe_code)]

mod daemon;

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use amber_core::{MemoryType, NewMemory, Scope, SearchMode};
use amber_ipc::protocol::RecallParams;
use amber_ipc::{Client, Config};
use anyhow::Context;
use clap::{Parser, Subcommand};
use serde_json::Value;

/// Amber: a local-first memory for AI agents.
#[derive(Parser, Debug)]
#[command(name = "amber", version, about)]
struct Cli {
    /// The data directory [default: $AMBER_DATA_DIR, else ~/.local/share/amber/data].
    #[arg(long, global = true, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// The daemon's socket [default: $AMBER_SOCKET, else $XDG_RUNTIME_DIR/amber/amber.sock].
    #[arg(long, global = true, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// The config file [default: $AMBER_CONFIG, else ~/.config/amber/config.toml].
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Do not start amberd when none is running: fail instead.
    #[arg(long, global = true, env = "AMBER_NO_START")]
    no_start: bool,
    /// Print JSON instead of text.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// File a memory, verbatim. TEXT of `-` reads standard input.
    Remember {
        /// The text to remember, or `-` for standard input.
        text: String,
        /// Where it lives: a project, then an optional topic (`amber/retrieval`).
        #[arg(long, default_value = Scope::DEFAULT)]
        scope: String,
        /// intent, fact, pattern, invalidation, discovery, event or lifefact.
        #[arg(long = "type", default_value = "fact")]
        kind: String,
        /// Where it came from (a file, a tool, a URL).
        #[arg(long)]
        source: Option<String>,
        /// The agent filing it.
        #[arg(long)]
        author: Option<String>,
        /// The session filing it.
        #[arg(long)]
        session: Option<String>,
        /// Free metadata, a JSON object.
        #[arg(long, value_name = "JSON")]
        meta: Option<String>,
    },
    /// Search memories by hybrid BM25 + embedding retrieval.
    Recall {
        /// What to look for.
        query: String,
        /// Only this scope and the scopes under it.
        #[arg(long)]
        scope: Option<String>,
        /// How many results.
        #[arg(long, short = 'k', default_value_t = 5)]
        k: usize,
        /// hybrid, bm25 or vector.
        #[arg(long, default_value = "hybrid")]
        mode: String,
    },
    /// Print one memory by id.
    Get {
        /// The memory id (32 hex digits).
        id: String,
    },
    /// Forget a memory: recall stops returning it; `purge` deletes it for good.
    Forget {
        /// The memory id.
        id: String,
    },
    /// Delete a forgotten memory's content for good.
    Purge {
        /// The memory id.
        id: String,
    },
    /// Rebuild the search indexes from the store (vectors come from the cache).
    Reindex,
    /// Counts, model and index health.
    Status,
    /// Start, stop or inspect the daemon.
    Daemon {
        #[command(subcommand)]
        action: DaemonAction,
    },
    /// Show the configuration.
    Config {
        #[command(subcommand)]
        action: ConfigAction,
    },
}

#[derive(Subcommand, Debug)]
enum DaemonAction {
    /// Start amberd in the background (no-op when it runs).
    Start,
    /// Ask amberd to stop, and wait until it has.
    Stop,
    /// Is amberd running, and how is it doing.
    Status,
}

#[derive(Subcommand, Debug)]
enum ConfigAction {
    /// Print the effective configuration (file, environment and flags applied) as TOML.
    Show,
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("AMBER_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("amber: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The config with flags applied.
fn config(cli: &Cli) -> anyhow::Result<Config> {
    Ok(Config::resolve(cli.config.as_deref(), cli.data_dir.as_deref(), cli.socket.as_deref())?)
}

fn print_json(v: &impl serde::Serialize) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}

fn one_line(s: &str, max: usize) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        format!("{}…", flat.chars().take(max).collect::<String>())
    }
}

fn connect(cli: &Cli, cfg: &Config) -> anyhow::Result<Client> {
    daemon::connect_or_start(cfg, cli.config.as_deref(), !cli.no_start)
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let cfg = config(&cli)?;
    match &cli.command {
        Command::Remember { text, scope, kind, source, author, session, meta } => {
            let content = if text == "-" {
                let mut buf = Vec::new();
                std::io::stdin().read_to_end(&mut buf).context("reading standard input")?;
                String::from_utf8(buf).context("standard input is not valid UTF-8")?
            } else {
                text.clone()
            };
            let mut m = NewMemory::new(content)
                .in_scope(scope.parse().context("--scope")?)
                .of_type(kind.parse::<MemoryType>().context("--type")?);
            m.source = source.clone();
            m.author = author.clone();
            m.session_id = session.clone();
            if let Some(meta) = meta {
                m.metadata = serde_json::from_str(meta).context("--meta is not JSON")?;
            }
            m.validate()?;
            let r = connect(&cli, &cfg)?.remember(&m)?;
            if cli.json {
                print_json(&r)?;
            } else if r.created {
                println!("remembered {} in {}", r.id, m.scope);
            } else {
                println!("already remembered as {} in {}", r.id, m.scope);
            }
        }
        Command::Recall { query, scope, k, mode } => {
            let mut p = RecallParams::new(query.clone());
            p.k = Some(*k);
            p.mode = Some(mode.parse::<SearchMode>()?);
            if let Some(s) = scope {
                p.scope = Some(s.parse().context("--scope")?);
            }
            p.query().validate()?;
            let hits = connect(&cli, &cfg)?.recall(&p)?.hits;
            if cli.json {
                print_json(&hits)?;
            } else if hits.is_empty() {
                println!("no memories match");
            } else {
                for (i, h) in hits.iter().enumerate() {
                    let e = &h.evidence;
                    let mut why = vec![format!("fused {:.4}", e.fused)];
                    if let (Some(r), Some(s)) = (e.bm25_rank, e.bm25_score) {
                        why.push(format!("bm25 #{r} {s:.2}"));
                    }
                    if let (Some(r), Some(c)) = (e.vector_rank, e.best_chunk_cosine) {
                        why.push(format!("vector #{r} cos {c:.3}"));
                    }
                    println!("{}. {} [{}] ({})", i + 1, h.memory.id, h.memory.scope, why.join(" · "));
                    println!("   {}", one_line(&h.memory.content, 240));
                }
            }
        }
        Command::Get { id } => {
            let id = id.parse().context("bad id")?;
            let m = connect(&cli, &cfg)?.get(&id)?.memory;
            if cli.json {
                print_json(&m)?;
            } else {
                let forgotten = if m.forgotten_at.is_some() { " (forgotten)" } else { "" };
                println!("{} [{}] {} {}{forgotten}", m.id, m.scope, m.kind, m.created_at);
                println!("{}", m.content);
            }
        }
        Command::Forget { id } => {
            let id = id.parse().context("bad id")?;
            let m = connect(&cli, &cfg)?.forget(&id)?.memory;
            if cli.json {
                print_json(&m)?;
            } else {
                println!("forgot {} (its content stays until `amber purge {}`)", m.id, m.id);
            }
        }
        Command::Purge { id } => {
            let id = id.parse().context("bad id")?;
            let r = connect(&cli, &cfg)?.purge(&id)?;
            if cli.json {
                print_json(&r)?;
            } else {
                println!("purged {}", r.id);
            }
        }
        Command::Reindex => {
            let mut c = connect(&cli, &cfg)?;
            let t0 = std::time::Instant::now();
            c.reindex()?;
            let st = c.status()?;
            if cli.json {
                print_json(&st)?;
            } else {
                println!(
                    "reindexed {} memories in {:.2}s",
                    st.engine["memories"],
                    t0.elapsed().as_secs_f64()
                );
            }
        }
        Command::Status => {
            let st = connect(&cli, &cfg)?.status()?;
            if cli.json {
                print_json(&st)?;
            } else {
                print_status(&st);
            }
        }
        Command::Daemon { action } => return daemon_command(&cli, &cfg, action),
        Command::Config { action: ConfigAction::Show } => print!("{}", cfg.to_toml()),
    }
    Ok(ExitCode::SUCCESS)
}

fn print_status(st: &amber_ipc::protocol::StatusResult) {
    let e = &st.engine;
    let s = |k: &str| match &e[k] {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    };
    println!(
        "daemon       amberd {} (pid {}, up {:.0}s, protocol {})",
        st.version, st.pid, st.uptime_seconds, st.protocol_version
    );
    println!("socket       {}", st.socket);
    println!("data dir     {}", s("data_dir"));
    println!("memories     {} in {} scopes ({} forgotten)", s("memories"), s("scopes"), s("forgotten"));
    println!("model        {} ({} dimensions, chunks {})", s("model"), s("dim"), s("chunking"));
    println!("bm25 index   {} documents", s("bm25_docs"));
    println!("vector index {} vectors ({} cached)", s("vectors"), s("cached_vectors"));
    let complete = e["indexes_complete"].as_bool().unwrap_or(false);
    println!("indexes      {}", if complete { "complete" } else { "catching up" });
    println!("clients      {} connected, {} writes queued", st.connections, st.queue_depth);
    for ev in e["index_events"].as_array().into_iter().flatten() {
        println!("at open      {}", ev.as_str().unwrap_or_default());
    }
}

fn daemon_command(cli: &Cli, cfg: &Config, action: &DaemonAction) -> anyhow::Result<ExitCode> {
    match action {
        DaemonAction::Start => {
            let mut c = daemon::connect_or_start(cfg, cli.config.as_deref(), true)?;
            let st = c.status()?;
            if cli.json {
                print_json(&st)?;
            } else {
                println!("amberd is running (pid {}) on {}", st.pid, st.socket);
            }
        }
        DaemonAction::Stop => {
            let stopped = daemon::stop(cfg)?;
            if !cli.json {
                match stopped {
                    Some(pid) => println!("amberd (pid {pid}) stopped"),
                    None => println!("amberd is not running"),
                }
            } else {
                print_json(&serde_json::json!({ "stopped_pid": stopped }))?;
            }
        }
        DaemonAction::Status => match daemon::connect_or_start(cfg, cli.config.as_deref(), false) {
            Ok(mut c) => {
                let st = c.status()?;
                if cli.json { print_json(&st)? } else { print_status(&st) }
            }
            Err(e) if daemon::is_not_running(&e) => {
                if cli.json {
                    print_json(&serde_json::json!({ "running": false, "socket": cfg.socket_path() }))?;
                } else {
                    println!("amberd is not running (socket {})", cfg.socket_path().display());
                }
                return Ok(ExitCode::from(3));
            }
            Err(e) => return Err(e),
        },
    }
    Ok(ExitCode::SUCCESS)
}

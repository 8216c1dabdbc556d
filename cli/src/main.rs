//! `amber`: remember and recall from the command line.
//!
//! For now the CLI opens the store directly (an embedded engine); the daemon issue moves
//! it behind the local socket.
#![forbid(unsafe_code)]

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use amber_core::{MemoryType, NewMemory, Query, Scope, SearchMode};
use amber_engine::{Engine, EngineOptions, default_data_dir};
use anyhow::{Context, bail};
use clap::{Parser, Subcommand};

/// Amber: a local-first memory for AI agents.
#[derive(Parser, Debug)]
#[command(name = "amber", version, about)]
struct Cli {
    /// The data directory [default: $AMBER_DATA_DIR, else ~/.local/share/amber/data].
    #[arg(long, global = true, value_name = "DIR")]
    data_dir: Option<PathBuf>,
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
    /// Rebuild the search indexes from the store (vectors come from the cache).
    Reindex,
    /// Counts, model and index health.
    Status,
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
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("amber: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn open(cli: &Cli) -> anyhow::Result<Engine> {
    let dir = cli.data_dir.clone().unwrap_or_else(default_data_dir);
    Engine::open(EngineOptions::new(&dir)).with_context(|| format!("opening the store in {}", dir.display()))
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

fn run(cli: Cli) -> anyhow::Result<()> {
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
            let mut engine = open(&cli)?;
            let r = engine.remember(m)?;
            engine.flush()?;
            if cli.json {
                print_json(&r)?;
            } else if r.created {
                println!("remembered {} in {}", r.memory.id, r.memory.scope);
            } else {
                println!("already remembered as {} in {}", r.memory.id, r.memory.scope);
            }
        }
        Command::Recall { query, scope, k, mode } => {
            let mut q = Query::new(query.clone()).top(*k).mode(mode.parse::<SearchMode>()?);
            if let Some(s) = scope {
                q = q.in_scope(s.parse().context("--scope")?);
            }
            q.validate()?;
            let mut engine = open(&cli)?;
            let hits = engine.recall(&q)?;
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
            let engine = open(&cli)?;
            let Some(m) = engine.get(&id)? else { bail!("no memory with id {id}") };
            if cli.json {
                print_json(&m)?;
            } else {
                println!("{} [{}] {} {}", m.id, m.scope, m.kind, m.created_at);
                println!("{}", m.content);
            }
        }
        Command::Reindex => {
            let mut engine = open(&cli)?;
            let t0 = std::time::Instant::now();
            engine.reindex()?;
            let st = engine.status()?;
            if cli.json {
                print_json(&st)?;
            } else {
                println!(
                    "reindexed {} memories ({} vectors, {} chunks embedded, {} from cache) in {:.2}s",
                    st.memories,
                    st.vectors,
                    st.stats.chunks_embedded,
                    st.stats.chunks_from_cache,
                    t0.elapsed().as_secs_f64()
                );
            }
        }
        Command::Status => {
            let engine = open(&cli)?;
            let st = engine.status()?;
            if cli.json {
                print_json(&st)?;
            } else {
                println!("data dir     {}", st.data_dir.display());
                println!("memories     {} in {} scopes", st.memories, st.scopes);
                println!("model        {} ({} dimensions, chunks {})", st.model, st.dim, st.chunking);
                println!("bm25 index   {} documents", st.bm25_docs);
                println!("vector index {} vectors ({} cached)", st.vectors, st.cached_vectors);
                println!("indexes      {}", if st.indexes_complete { "complete" } else { "incomplete" });
                for e in &st.index_events {
                    println!("at open      {e}");
                }
            }
        }
    }
    Ok(())
}

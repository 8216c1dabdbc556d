//! `amber`: remember and recall from the command line, through the daemon.
//!
//! Every command talks to `amberd` over its local socket. When no daemon answers, `amber`
//! starts one in the background (and says so on stderr), unless `--no-start` is given.
#![forbid(unsafe_code)]

// First: its printing macros (`outln!`, `out!`, `errln!`) are used by every module below.
#[macro_use]
mod output;

mod advice;
mod agents;
mod browse;
mod claude_code;
mod codex;
mod compile;
mod daemon;
mod doctor;
#[cfg(test)]
mod doors;
mod gemini;
mod help;
mod hooks;
mod import;
mod ingest;
mod mcp;
mod model;
mod outcomes;
mod portable;
mod progress;
mod recall;
mod remember;
mod runs;
mod scope;
mod session;
mod status;
mod ui;
mod when;

use output::quiet_on_closed_pipe;
pub(crate) use output::{one_line, print_json};
use std::path::PathBuf;
use std::process::ExitCode;

use amber_ipc::{Client, Config};
use clap::{Parser, Subcommand};

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
    #[arg(long, global = true, env = "AMBER_NO_START", value_parser = clap::builder::BoolishValueParser::new())]
    no_start: bool,
    /// Print JSON instead of text.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

/// `amber agent …`.
#[derive(Subcommand, Debug)]
enum AgentAction {
    /// Register an agent name (a new token each time): written to
    /// <state_dir>/agents/NAME.token for that agent's clients.
    Register {
        /// The agent's name.
        name: String,
    },
    /// Undo the last registration of a name (within a week): the token it replaced works
    /// again and its file is back; the undone token is retired in its place.
    Restore {
        /// The agent's name.
        name: String,
    },
}

#[derive(Subcommand, Debug)]
enum Command {
    /// File a memory, verbatim but for secrets (redacted unless --keep-secrets). TEXT of
    /// `-` reads standard input.
    Remember(remember::RememberArgs),
    /// Search memories by hybrid BM25 + embedding retrieval.
    Recall(recall::RecallArgs),
    /// Bring documents in (Markdown, text, source) and keep them in step with their
    /// files: changed chunks replace old ones, deleted files' chunks are archived.
    Ingest(ingest::IngestArgs),
    /// Compile the project's chosen documents into skills with the `[learn]` model
    /// (served by get_advice; quality unmeasured here).
    Compile(compile::CompileArgs),
    #[command(flatten)]
    Portable(portable::PortableCommand),
    #[command(flatten)]
    Outcomes(outcomes::OutcomeCommand),
    #[command(flatten)]
    Browse(browse::BrowseCommand),
    /// Print one memory by id.
    Get {
        /// The memory id (32 hex digits) or a prefix of it (at least 4, as a briefing shows).
        id: String,
    },
    /// Forget a memory: recall stops returning it; `purge` deletes it for good.
    Forget {
        /// The memory id or a prefix of it.
        id: String,
    },
    /// Delete a forgotten memory's content for good (while an agent session is live, in a
    /// day: until then `unforget` brings it back).
    Purge {
        /// The memory id or a prefix of it.
        id: String,
        /// At once even while an agent session is live (from your own terminal).
        #[arg(long)]
        now: bool,
    },
    /// Bring a forgotten memory back, as it was (yours to do, not an agent's).
    Unforget {
        /// The memory id or a prefix of it.
        id: String,
    },
    /// List the scopes with their memory counts and, for project scopes, their roots.
    Scopes,
    /// Scope operations.
    Scope {
        #[command(subcommand)]
        action: scope::ScopeAction,
    },
    /// The embedding model: change it without downtime (`model use NAME`), or show it.
    Model {
        #[command(subcommand)]
        action: model::ModelAction,
    },
    /// Rebuild the search indexes from the store (vectors come from the cache).
    Reindex,
    /// Counts, model and index health.
    Status,
    /// Open your memory in the browser: the daemon serves a local web view on 127.0.0.1
    /// (a random port and a per-start token; off until started, it stops with the daemon)
    /// and this prints its URL and opens it.
    Ui {
        /// Print the URL without opening a browser.
        #[arg(long)]
        no_open: bool,
    },
    /// Serve Amber's tools to an MCP client on stdin/stdout (the daemon is started on demand).
    Mcp {
        /// Which tools: `agent` (recall, get, remember, outcome; get_advice with a model),
        /// or `all` (sessions, runs, the knowledge graph, threads, forget, status too).
        #[arg(long, value_enum, default_value = "agent", env = "AMBER_MCP_TOOLS")]
        tools: mcp::ToolSet,
    },
    /// Start, stop or inspect the daemon.
    Daemon {
        #[command(subcommand)]
        action: daemon::DaemonAction,
    },
    /// Show the configuration.
    Config {
        #[command(subcommand)]
        action: ConfigAction,
    },
    /// Answer an agent runtime's hook (reads its JSON payload on stdin). Never fails the
    /// agent: on any problem it prints nothing, exits 0 and logs why.
    Hook {
        #[command(subcommand)]
        runtime: HookRuntime,
    },
    /// Agent names: register one so that only clients holding its token start its
    /// sessions (and get its inbox and what is addressed to it).
    Agent {
        #[command(subcommand)]
        action: AgentAction,
    },
    /// Add Amber's hooks to an agent runtime's settings (keeping the rest, with a backup).
    Install {
        #[command(subcommand)]
        runtime: InstallRuntime,
    },
    /// Remove exactly Amber's hooks from an agent runtime's settings (with a backup).
    Uninstall {
        #[command(subcommand)]
        runtime: InstallRuntime,
    },
    /// Sessions: what a session was served and why, what it captured, what curation did.
    Session {
        #[command(subcommand)]
        action: SessionAction,
    },
    /// Runs: record a file of them, list them, show one.
    Runs {
        #[command(subcommand)]
        action: runs::RunsAction,
    },
    /// Advice learned from runs by the model in `[learn]`: learn, show, list.
    Advice {
        #[command(subcommand)]
        action: advice::AdviceAction,
    },
    /// The model's judgements of unrewarded runs in a scope (and those under it).
    Judgements {
        /// The scope.
        scope: String,
        /// At most this many.
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// First judge the runs that are due (unrewarded, older than `judge_delay_s`).
        #[arg(long)]
        judge: bool,
    },
    /// The learning loop's health: the model, runs and rewards this week, the judge's
    /// backlog, notes served, ratified and withheld, stale skills, the holdout's lift.
    Doctor {
        /// Only this scope and those under it (default: every scope).
        #[arg(long)]
        scope: Option<String>,
        /// Do not ping the model.
        #[arg(long)]
        no_ping: bool,
    },
    /// Print a shell's completion script (`amber completions bash >
    /// ~/.local/share/bash-completion/completions/amber`; zsh, fish, elvish, powershell).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page amber(1), or with --out write one per command into DIR/man1
    /// (`amber man --out ~/.local/share/man`).
    Man {
        /// The MANPATH folder to write into (its man1/).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
}

/// `amber hook RUNTIME EVENT`: the event, and the answer's deadline.
#[derive(clap::Args, Debug)]
struct HookArgs {
    /// The hook event, as the runtime names it.
    event: String,
    /// Answer (possibly empty) within this many milliseconds.
    #[arg(long, env = "AMBER_HOOK_DEADLINE_MS", default_value_t = 2000)]
    deadline_ms: u64,
}

#[derive(Subcommand, Debug)]
enum HookRuntime {
    /// Claude Code: SessionStart, UserPromptSubmit, PostToolUse, PostToolUseFailure, Stop, SessionEnd.
    ClaudeCode(HookArgs),
    /// Codex CLI: SessionStart, UserPromptSubmit, PostToolUse, Stop, SessionEnd.
    Codex(HookArgs),
    /// Gemini CLI: SessionStart, BeforeAgent, AfterTool, AfterAgent, SessionEnd.
    Gemini(HookArgs),
}

impl HookRuntime {
    fn parts(&self) -> (&'static dyn hooks::Runtime, &HookArgs) {
        match self {
            HookRuntime::ClaudeCode(a) => (&claude_code::ClaudeCode, a),
            HookRuntime::Codex(a) => (&codex::Codex, a),
            HookRuntime::Gemini(a) => (&gemini::Gemini, a),
        }
    }
}

/// Where an install goes.
#[derive(clap::Args, Debug)]
struct InstallTarget {
    /// This project's settings instead of yours.
    #[arg(long, conflicts_with = "user")]
    project: bool,
    /// Your own settings (the default).
    #[arg(long)]
    user: bool,
}

#[derive(Subcommand, Debug)]
enum InstallRuntime {
    /// Claude Code's settings.json: ~/.claude/settings.json (--user, the default) or
    /// ./.claude/settings.json (--project); its MCP server user-wide.
    ClaudeCode(InstallTarget),
    /// Codex CLI: $CODEX_HOME/hooks.json (~/.codex; --project: ./.codex/hooks.json), the
    /// MCP server in $CODEX_HOME/config.toml, the hooks trusted through `codex app-server`.
    Codex(InstallTarget),
    /// Gemini CLI: ~/.gemini/settings.json (--project: ./.gemini/settings.json), hooks and
    /// the MCP server.
    Gemini(InstallTarget),
}

#[derive(Subcommand, Debug)]
enum SessionAction {
    /// One session's record, live or ended.
    Show {
        /// The session id (`s-...`).
        id: String,
    },
}

#[derive(Subcommand, Debug)]
enum ConfigAction {
    /// Print the effective configuration (file, environment and flags applied) as TOML.
    Show,
}

fn main() -> ExitCode {
    quiet_on_closed_pipe();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("AMBER_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let matches = help::grouped(<Cli as clap::CommandFactory>::command()).get_matches();
    let cli = match <Cli as clap::FromArgMatches>::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            errln!("amber: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The config with flags applied.
fn config(cli: &Cli) -> anyhow::Result<Config> {
    Ok(Config::resolve(cli.config.as_deref(), cli.data_dir.as_deref(), cli.socket.as_deref())?)
}

/// The config without the file (defaults, environment, flags), for when the file cannot
/// be used.
fn without_config(cli: &Cli) -> Config {
    Config::without_file(cli.data_dir.as_deref(), cli.socket.as_deref())
}

/// Refuses what cannot be an id or a prefix of one before asking the daemon.
fn check_id(id: &str) -> anyhow::Result<()> {
    let min = amber_ipc::protocol::MIN_ID_PREFIX;
    if id.len() < min || id.len() > 32 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        anyhow::bail!("bad id {id:?}: a memory id is 32 hex digits, or a prefix of at least {min} of them");
    }
    Ok(())
}

/// A whole memory id from an id or a prefix of one.
fn full_id(client: &mut Client, id: &str) -> anyhow::Result<amber_core::MemoryId> {
    check_id(id)?;
    match id.parse() {
        Ok(full) => Ok(full),
        Err(_) => Ok(client.get_prefix(id)?.memory.id),
    }
}

fn connect(cli: &Cli, cfg: &Config) -> anyhow::Result<Client> {
    daemon::connect_or_start(cfg, cli.config.as_deref(), !cli.no_start)
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match &cli.command {
        Command::Completions { shell } => {
            help::completions(*shell, help::grouped(<Cli as clap::CommandFactory>::command()));
            return Ok(ExitCode::SUCCESS);
        }
        Command::Man { out } => {
            help::man(<Cli as clap::CommandFactory>::command(), out.as_deref())?;
            return Ok(ExitCode::SUCCESS);
        }
        _ => {}
    }
    if let Command::Hook { runtime } = &cli.command {
        // A hook must not fail the agent, not even on a bad config: it logs why and tells
        // the person once per session.
        let (rt, a) = runtime.parts();
        match config(&cli) {
            Ok(cfg) => hooks::run(
                rt,
                cfg,
                cli.config.clone(),
                &a.event,
                std::time::Duration::from_millis(a.deadline_ms),
                !cli.no_start,
            ),
            Err(e) => {
                hooks::config_error::hook(&without_config(&cli), rt.name(), &a.event, &format!("{e:#}"))
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Command::Install { runtime } = &cli.command {
        // Each runtime's name is its own: its sessions (inbox, what is addressed to it)
        // need the token its hooks read.
        let register = |name: &str| {
            let cfg = config(&cli)?;
            agents::register(&mut connect(&cli, &cfg)?, &cfg, name)
        };
        match runtime {
            InstallRuntime::ClaudeCode(t) => {
                claude_code::setup::install(t.project, || register(claude_code::AGENT))?
            }
            InstallRuntime::Codex(t) => codex::install::install(t.project, || register(codex::AGENT))?,
            InstallRuntime::Gemini(t) => gemini::install::install(t.project, || register(gemini::AGENT))?,
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Command::Uninstall { runtime } = &cli.command {
        match runtime {
            InstallRuntime::ClaudeCode(t) => claude_code::setup::uninstall(t.project)?,
            InstallRuntime::Codex(t) => codex::install::uninstall(t.project)?,
            InstallRuntime::Gemini(t) => gemini::install::uninstall(t.project)?,
        }
        return Ok(ExitCode::SUCCESS);
    }
    let cfg = match (config(&cli), &cli.command) {
        (Ok(cfg), _) => cfg,
        // `amber status` says what is wrong, and what a daemon that answers says.
        (Err(e), Command::Status) => {
            let cfg = without_config(&cli);
            let answer = daemon::connect_or_start(&cfg, None, false).and_then(|mut c| Ok(c.status()?));
            return Ok(status::config_error(&cfg, &format!("{e:#}"), cli.json, answer));
        }
        (Err(e), _) => return Err(e),
    };
    match &cli.command {
        Command::Remember(args) => remember::run(args, &mut connect(&cli, &cfg)?, cli.json)?,
        Command::Outcomes(cmd) => {
            if !outcomes::run(cmd, &mut connect(&cli, &cfg)?, cli.json)? {
                return Ok(ExitCode::from(2));
            }
        }
        Command::Browse(cmd) => browse::run(cmd, &mut connect(&cli, &cfg)?, cli.json)?,
        Command::Recall(args) => recall::run(args, &mut connect(&cli, &cfg)?, cli.json)?,
        Command::Ingest(args) => return ingest::run(args, &|| connect(&cli, &cfg), cli.json),
        Command::Compile(args) => compile::run(args, &mut connect(&cli, &cfg)?, cli.json)?,
        Command::Portable(cmd) => {
            return portable::run(cmd, &cfg, cli.config.as_deref(), &|| connect(&cli, &cfg), cli.json);
        }
        Command::Get { id } => {
            check_id(id)?;
            // Run by Claude Code's Bash tool: read as its session (the hooks' and the MCP
            // server's), so what was addressed to it is readable.
            let m = connect(&cli, &cfg)?.get_in_session(id, mcp::host_session())?.memory;
            if cli.json {
                print_json(&m)?;
            } else {
                let mut state = String::new();
                if m.forgotten_at.is_some() {
                    state.push_str(" (forgotten)");
                }
                if let Some(by) = &m.superseded_by {
                    state.push_str(&format!(" (superseded by {by})"));
                } else if m.is_archived() {
                    state.push_str(" (archived)");
                }
                let from = amber_core::origin::label(&m.metadata, m.author.as_deref());
                outln!(
                    "{} [{}] {} {} · from {from} · weight {:.2}{state}",
                    m.id,
                    m.scope,
                    m.kind,
                    when::local(m.created_at),
                    m.weight
                );
                outln!("{}", m.content);
            }
        }
        Command::Forget { id } => {
            let mut c = connect(&cli, &cfg)?;
            let id = full_id(&mut c, id)?;
            let m = c.forget(&id)?.memory;
            if cli.json {
                print_json(&m)?;
            } else {
                outln!("forgot {} (its content stays until `amber purge {}`)", m.id, m.id);
            }
        }
        Command::Unforget { id } => {
            let mut c = connect(&cli, &cfg)?;
            let id = full_id(&mut c, id)?;
            let m = c.unforget(&id)?.memory;
            if cli.json {
                print_json(&m)?;
            } else {
                outln!("unforgot {}: recall finds it again", m.id);
            }
        }
        Command::Purge { id, now } => {
            let mut c = connect(&cli, &cfg)?;
            let id = full_id(&mut c, id)?;
            let r = c.purge(&id, *now)?;
            if cli.json {
                print_json(&r)?;
            } else if let Some(due) = r.due_at {
                outln!(
                    "{} will be purged at {} (an agent session is live: until then `amber unforget {}` brings it \
                     back; `amber purge --now {}` from your terminal purges it at once)",
                    r.id,
                    when::local(due),
                    r.id,
                    r.id
                );
            } else {
                outln!("purged {}", r.id);
            }
        }
        Command::Reindex => {
            let mut c = connect(&cli, &cfg)?;
            // Rebuilding the indexes of a big store takes as long as it takes.
            c.set_timeout(None);
            let t0 = std::time::Instant::now();
            c.reindex()?;
            let st = c.status()?;
            if cli.json {
                print_json(&st)?;
            } else {
                outln!("reindexed {} memories in {:.2}s", st.engine["memories"], t0.elapsed().as_secs_f64());
            }
        }
        Command::Status => {
            let st = connect(&cli, &cfg)?.status()?;
            if cli.json {
                print_json(&st)?;
            } else {
                status::print(&st);
            }
        }
        Command::Ui { no_open } => ui::run(&mut connect(&cli, &cfg)?, cli.json, *no_open)?,
        Command::Scopes => scope::list(&mut connect(&cli, &cfg)?, cli.json)?,
        Command::Scope { action } => scope::run(action, &mut connect(&cli, &cfg)?, cli.json)?,
        Command::Model { action } => model::run(action, &mut connect(&cli, &cfg)?, cli.json)?,
        Command::Mcp { tools } => mcp::run(cfg.clone(), cli.config.clone(), !cli.no_start, *tools)?,
        Command::Daemon { action } => return daemon::command(cli.json, cli.config.as_deref(), &cfg, action),
        Command::Runs { action } => {
            let max_frame = cfg.max_frame_bytes;
            runs::run(action, &mut connect(&cli, &cfg)?, cli.json, max_frame)?
        }
        Command::Advice { action } => advice::run(action, &mut connect(&cli, &cfg)?, cli.json)?,
        Command::Doctor { scope, no_ping } => {
            doctor::run(&mut connect(&cli, &cfg)?, scope.as_deref(), *no_ping, cli.json)?
        }
        Command::Judgements { scope, limit, judge } => {
            advice::judgements(&mut connect(&cli, &cfg)?, scope, *limit, *judge, cli.json)?
        }
        Command::Session { action: SessionAction::Show { id } } => {
            let r = connect(&cli, &cfg)?.session_show(id)?;
            if cli.json {
                print_json(&r)?;
            } else {
                session::print(&r);
            }
        }
        Command::Hook { .. }
        | Command::Install { .. }
        | Command::Uninstall { .. }
        | Command::Completions { .. }
        | Command::Man { .. } => {
            unreachable!("handled above")
        }
        Command::Config { action: ConfigAction::Show } if cli.json => print_json(&cfg.effective())?,
        Command::Config { action: ConfigAction::Show } => out!("{}", cfg.to_toml()),
        Command::Agent { action: AgentAction::Restore { name } } => {
            let at = agents::restore(&mut connect(&cli, &cfg)?, &cfg, name)?;
            match cli.json {
                true => print_json(&serde_json::json!({ "agent": name, "retired_at": at }))?,
                false => outln!("restored {name}'s token retired at {}", when::local(at)),
            }
        }
        Command::Agent { action: AgentAction::Register { name } } => {
            let path = agents::register(&mut connect(&cli, &cfg)?, &cfg, name)?;
            if cli.json {
                print_json(&serde_json::json!({ "agent": name, "token_file": path }))?;
            } else {
                outln!(
                    "registered {name}: its sessions now need the token in {} (a new token replaces the old)",
                    path.display()
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

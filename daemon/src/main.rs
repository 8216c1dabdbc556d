//! `amberd`: Amber's daemon. `amber` starts it in the background when needed; run it with
//! `--foreground` under a supervisor (systemd, launchd) to see its log on stderr too.
#![forbid(unsafe_code)]

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use amber_core::paths::create_private_dir;
use amber_ipc::Config;
use clap::Parser;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// amberd: serves Amber's memory on a local socket.
///
/// Prints one line on standard output when it accepts connections:
/// `amberd ready on <socket> (pid <pid>)`.
#[derive(Parser, Debug)]
#[command(name = "amberd", version, about)]
struct Args {
    /// Also log to standard error (for supervisors and debugging).
    #[arg(long)]
    foreground: bool,
    /// The config file [default: $AMBER_CONFIG, else ~/.config/amber/config.toml].
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The data directory (overrides the config and $AMBER_DATA_DIR).
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// The socket path (overrides the config and $AMBER_SOCKET).
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// The longest request line in bytes.
    #[arg(long, value_name = "BYTES")]
    max_frame_bytes: Option<usize>,
    /// Writes waiting before `busy`.
    #[arg(long, value_name = "N")]
    write_queue: Option<usize>,
    /// Writes answer `busy` while indexing is this many memories behind.
    #[arg(long, value_name = "N")]
    max_index_backlog: Option<u64>,
    /// A second model instance (default true, ~55 MB): recalls do not wait for indexing, two
    /// embed at once, indexing uses both; false keeps one model.
    #[arg(long, value_name = "BOOL")]
    query_model: Option<bool>,
    /// How much lower indexing's CPU priority is (a nice value added, 0 to 19; 0 off).
    #[arg(long, value_name = "N")]
    index_nice: Option<i32>,
    /// Restore a backup (`amber backup`) into the data directory, which must hold no
    /// store yet, and exit. The next start rebuilds the indexes from its embedding cache.
    #[arg(long, value_name = "FILE")]
    restore: Option<PathBuf>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let config = match load_config(&args) {
        Ok(c) => c,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "amberd: {e:#}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(file) = &args.restore {
        return match amber_engine::restore(&config.data_dir, file) {
            Ok(s) => {
                let _ = writeln!(
                    std::io::stdout(),
                    "restored {} memories and {} cached vectors ({} bytes) into {}",
                    s.memories,
                    s.vectors,
                    s.bytes,
                    config.data_dir.display()
                );
                ExitCode::SUCCESS
            }
            Err(e) => {
                let _ = writeln!(std::io::stderr(), "amberd: restore: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let _guard = match init_logging(&config, args.foreground) {
        Ok(g) => g,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "amberd: cannot set up logging: {e:#}");
            return ExitCode::FAILURE;
        }
    };
    let ready = |socket: &std::path::Path| {
        // Once, then never again: the reader (amber, a test) may close the pipe.
        let mut out = std::io::stdout();
        let _ = writeln!(out, "amberd ready on {} (pid {})", socket.display(), std::process::id());
        let _ = out.flush();
    };
    match amber_daemon::run(config, ready) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e:#}");
            let _ = writeln!(std::io::stderr(), "amberd: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn load_config(args: &Args) -> anyhow::Result<Config> {
    let mut c = Config::resolve(args.config.as_deref(), args.data_dir.as_deref(), args.socket.as_deref())?;
    if let Some(n) = args.max_frame_bytes {
        c.max_frame_bytes = n;
    }
    if let Some(n) = args.write_queue {
        c.write_queue = n;
    }
    if let Some(n) = args.max_index_backlog {
        c.max_index_backlog = n;
    }
    if let Some(on) = args.query_model {
        c.query_model = on;
    }
    if let Some(n) = args.index_nice {
        c.index_nice = n;
    }
    c.check()?;
    Ok(c)
}

/// Logs to a daily file in `<state_dir>/logs` (keeping `log_files` of them) and, in the
/// foreground, to stderr.
fn init_logging(
    config: &Config,
    foreground: bool,
) -> anyhow::Result<tracing_appender::non_blocking::WorkerGuard> {
    let dir = config.state_dir.join("logs");
    create_private_dir(&dir)?;
    let appender = tracing_appender::rolling::Builder::new()
        .rotation(tracing_appender::rolling::Rotation::DAILY)
        .filename_prefix("amberd")
        .filename_suffix("log")
        .max_log_files(config.log_files.max(1))
        .build(&dir)?;
    let (file, guard) = tracing_appender::non_blocking(appender);
    let filter = || EnvFilter::try_new(&config.log).unwrap_or_else(|_| EnvFilter::new("info"));
    let file_layer =
        tracing_subscriber::fmt::layer().with_ansi(false).with_writer(file).with_filter(filter());
    let stderr_layer = foreground
        .then(|| tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_filter(filter()));
    tracing_subscriber::registry().with(file_layer).with(stderr_layer).init();
    Ok(guard)
}

//! Finding, starting and stopping `amberd`, and `amber daemon start|stop|status`.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use amber_ipc::{Client, ClientError, Config};
use anyhow::{Context, bail};
use clap::Subcommand;

/// How long `amber` waits for another process's daemon to come up, or for one to stop.
const WAIT: Duration = Duration::from_secs(60);

/// Connects to the daemon; when none answers and `start` is set, starts one in the
/// background first (saying so on stderr).
pub fn connect_or_start(cfg: &Config, config_file: Option<&Path>, start: bool) -> anyhow::Result<Client> {
    let socket = cfg.socket_path();
    let mut c = match Client::connect(&socket) {
        Ok(c) => c,
        Err(e) if e.is_not_running() && start => {
            spawn(cfg, config_file)?;
            Client::connect(&socket).context("amberd started but does not answer")?
        }
        Err(e) if e.is_not_running() => {
            // One clear sentence: the client error behind it says the same thing again.
            return Err(anyhow::Error::new(NotRunning(socket)));
        }
        Err(e) => return Err(e.into()),
    };
    same_store(&mut c, cfg)?;
    Ok(c)
}

/// Refuses a daemon that serves another store than the data directory this command names
/// (a flag, `AMBER_DATA_DIR`, `AMBER_HOME` or the config file naming one other than the
/// default): its writes would land in that other store. With the default data directory
/// any daemon on the socket is the one (a daemon started with its own data directory and
/// the default socket serves the plain `amber`).
fn same_store(c: &mut Client, cfg: &Config) -> anyhow::Result<()> {
    if cfg.data_dir == Config::default().data_dir {
        return Ok(());
    }
    let Some(theirs) = c.hello("amber")?.data_dir else { return Ok(()) };
    let ours = cfg.data_dir.canonicalize().unwrap_or_else(|_| cfg.data_dir.clone());
    if ours == theirs {
        return Ok(());
    }
    bail!(
        "the daemon on {} serves the store in {}, not {} (the data directory this command names): \
         nothing was done. Stop that daemon first (`amber daemon stop` without --data-dir), or give \
         this store a daemon of its own on another socket (--socket or AMBER_SOCKET)",
        c.path().display(),
        theirs.display(),
        cfg.data_dir.display()
    )
}

/// No daemon answers on the socket, and none may be started.
#[derive(Debug)]
pub struct NotRunning(PathBuf);

impl std::fmt::Display for NotRunning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "amberd is not running (no daemon answers on {}); start it with `amber daemon start`, \
             or run without --no-start / AMBER_NO_START",
            self.0.display()
        )
    }
}

impl std::error::Error for NotRunning {}

/// True when the error says no daemon is running.
pub fn is_not_running(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<ClientError>().is_some_and(ClientError::is_not_running) || c.is::<NotRunning>()
    })
}

/// `$AMBERD`, else `amberd` next to this executable, else on the PATH.
pub(crate) fn amberd_path() -> PathBuf {
    if let Some(p) = std::env::var_os("AMBERD").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let name = format!("amberd{}", std::env::consts::EXE_SUFFIX);
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|d| d.join(&name)))
        .filter(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from(name))
}

/// Starts amberd detached from this terminal and waits for its ready line.
fn spawn(cfg: &Config, config_file: Option<&Path>) -> anyhow::Result<()> {
    let socket = cfg.socket_path();
    let exe = amberd_path();
    errln!(
        "amber: starting amberd in the background (socket {}, log in {})",
        socket.display(),
        cfg.state_dir.join("logs").display()
    );
    let mut cmd = Command::new(&exe);
    cmd.arg("--data-dir").arg(&cfg.data_dir).arg("--socket").arg(&socket);
    if let Some(f) = config_file {
        cmd.arg("--config").arg(f);
    }
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // Its own process group: Ctrl-C in this terminal does not reach it.
        cmd.process_group(0);
    }
    let mut child = cmd.spawn().with_context(|| format!("cannot run {}", exe.display()))?;
    let mut line = String::new();
    if let Some(out) = child.stdout.take() {
        let _ = BufReader::new(out).read_line(&mut line);
    }
    if line.starts_with("amberd ready") {
        return Ok(());
    }
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    let status = child.wait();
    // Another `amber` may have started one at the same moment: wait for it, unless the
    // daemon that holds the store listens on another socket (it never comes to this one).
    if err.contains("already serving") || err.contains("another daemon is listening") {
        if let Some(other) = holder_socket(&err).filter(|s| *s != socket) {
            bail!(
                "the store in {} is served by another amberd on {}, not on {}: point this command at that \
                 socket (--socket or AMBER_SOCKET; a client started without your environment, such as an \
                 agent's MCP server, may need XDG_RUNTIME_DIR), or stop that daemon",
                cfg.data_dir.display(),
                other.display(),
                socket.display()
            );
        }
        let t0 = Instant::now();
        while t0.elapsed() < WAIT {
            if Client::connect(&socket).is_ok() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    let why = match (err.trim(), status) {
        ("", Ok(st)) => format!("{} exited ({st}) and said nothing", exe.display()),
        ("", Err(e)) => format!("{}: {e}", exe.display()),
        (err, _) => err.to_string(),
    };
    bail!("amberd did not start: {why}")
}

/// The socket of the daemon that holds the store, from its pid in amberd's refusal
/// (`another amberd (pid N) is already serving …`) and its command line's `--socket`.
fn holder_socket(err: &str) -> Option<PathBuf> {
    let pid: u32 = err.split("(pid ").nth(1)?.split(')').next()?.trim().parse().ok()?;
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
    let at = args.iter().position(|a| *a == b"--socket")?;
    let s = std::str::from_utf8(args.get(at + 1)?).ok()?;
    Some(PathBuf::from(s))
}

/// Asks the daemon to stop and waits until its socket is gone. The pid it had, or None
/// when none was running.
pub fn stop(cfg: &Config) -> anyhow::Result<Option<u32>> {
    let socket = cfg.socket_path();
    let mut c = match Client::connect(&socket) {
        Ok(c) => c,
        Err(e) if e.is_not_running() => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    same_store(&mut c, cfg)?;
    let pid = c.status()?.pid;
    c.shutdown()?;
    let t0 = Instant::now();
    while Client::connect(&socket).is_ok() {
        if t0.elapsed() > WAIT {
            bail!("amberd (pid {pid}) did not stop within {WAIT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // The socket goes first; the lock is released once the writer has drained and the
    // indexes are saved.
    let lock = cfg.data_dir.join("amberd.lock");
    while let Ok(f) = std::fs::File::open(&lock) {
        if f.try_lock().is_ok() {
            break;
        }
        if t0.elapsed() > WAIT {
            bail!("amberd (pid {pid}) did not release {} within {WAIT:?}", lock.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(Some(pid))
}

#[derive(Subcommand, Debug)]
pub(crate) enum DaemonAction {
    /// Start amberd in the background (no-op when it runs).
    Start,
    /// Ask amberd to stop, and wait until it has.
    Stop,
    /// Is amberd running, and how is it doing.
    Status,
}

/// `amber daemon start|stop|status`.
pub(crate) fn command(
    json: bool,
    config_file: Option<&Path>,
    cfg: &Config,
    action: &DaemonAction,
) -> anyhow::Result<ExitCode> {
    match action {
        DaemonAction::Start => {
            let mut c = connect_or_start(cfg, config_file, true)?;
            let st = c.status()?;
            if json {
                crate::print_json(&st)?;
            } else {
                outln!("amberd is running (pid {}) on {}", st.pid, st.socket);
            }
        }
        DaemonAction::Stop => {
            let stopped = stop(cfg)?;
            if !json {
                match stopped {
                    Some(pid) => outln!("amberd (pid {pid}) stopped"),
                    None => outln!("amberd is not running"),
                }
            } else {
                crate::print_json(&serde_json::json!({ "stopped_pid": stopped }))?;
            }
        }
        DaemonAction::Status => match connect_or_start(cfg, config_file, false) {
            Ok(mut c) => {
                let st = c.status()?;
                if json { crate::print_json(&st)? } else { crate::status::print(&st) }
            }
            Err(e) if is_not_running(&e) => {
                if json {
                    crate::print_json(&serde_json::json!({ "running": false, "socket": cfg.socket_path() }))?;
                } else {
                    outln!("amberd is not running (socket {})", cfg.socket_path().display());
                }
                return Ok(ExitCode::from(3));
            }
            Err(e) => return Err(e),
        },
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_holders_socket_is_read_from_its_command_line() {
        // A process whose command line names a socket, as `amber` starts amberd.
        let mut child = Command::new("sh")
            .args(["-c", "sleep 5; true", "amberd", "--data-dir", "/d", "--socket", "/run/other/amber.sock"])
            .spawn()
            .unwrap();
        let err = format!(
            "another amberd (pid {}) is already serving /d; stop it with `amber daemon stop`",
            child.id()
        );
        // Until the child has exec'd, its command line is this test's.
        let t0 = Instant::now();
        while holder_socket(&err).is_none() && t0.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(holder_socket(&err), Some(PathBuf::from("/run/other/amber.sock")));
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(holder_socket("another amberd (pid 4294967295) is already serving /d"), None);
        assert_eq!(holder_socket("some other failure"), None);
    }
}

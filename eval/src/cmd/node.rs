//! One private amberd of a benchmark (team-bench, backup-bench, migrate-bench): its
//! config, process, socket and data, shut down (then killed if need be) when dropped;
//! filling it with LongMemEval paragraphs; the person's `amber` command against it; and
//! what is measured of it (resident memory, bytes on disk).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use amber_core::{NewMemory, Scope};
use amber_eval::longmemeval;
use amber_ipc::Client;
use anyhow::{Context, bail};
use serde_json::Value;

use amber_ipc::{ClientError, ErrorKind};

/// The product's binaries a benchmark drives (`#[command(flatten)]` into its arguments).
#[derive(clap::Args, Debug)]
pub(crate) struct Binaries {
    /// The amberd binary [default: the amberd next to this program].
    #[arg(long, value_name = "PATH")]
    amberd: Option<PathBuf>,
    /// The amber binary [default: the amber next to this program].
    #[arg(long, value_name = "PATH")]
    amber: Option<PathBuf>,
}

impl Binaries {
    /// The amberd binary.
    pub(crate) fn amberd(&self) -> anyhow::Result<PathBuf> {
        sibling(&self.amberd, "amberd")
    }

    /// The amber binary.
    pub(crate) fn amber(&self) -> anyhow::Result<PathBuf> {
        sibling(&self.amber, "amber")
    }
}

/// Timed requests of one client: each one's start (seconds since an epoch) and latency
/// (ms), and those that failed.
#[derive(Default)]
pub(crate) struct Timed {
    pub(crate) timed: Vec<(f64, f64)>,
    pub(crate) errors: u64,
    pub(crate) first_error: Option<String>,
}

impl Timed {
    /// The latencies (ms) of the requests started in `[from, to)` seconds.
    pub(crate) fn ms_between(&self, from: f64, to: f64) -> Vec<f64> {
        self.timed.iter().filter(|(at, _)| (from..to).contains(at)).map(|&(_, l)| l).collect()
    }
}

/// Files one memory at a time in scope `bench` from a client of its own until `stop`:
/// `per_second` a second, each on its slot (back to back when None); a `busy` answer is
/// retried, another failure counted.
pub(crate) fn writer(
    socket: PathBuf,
    stop: Arc<AtomicBool>,
    epoch: Instant,
    per_second: Option<f64>,
    tag: &'static str,
) -> std::thread::JoinHandle<anyhow::Result<Timed>> {
    std::thread::spawn(move || {
        let mut c = Client::connect(&socket)?;
        let scope: Scope = "bench".parse()?;
        let mut out = Timed::default();
        let begun = Instant::now();
        let mut i = 0u64;
        while !stop.load(Ordering::Relaxed) {
            if let Some(rate) = per_second {
                let slot = begun + Duration::from_secs_f64(i as f64 / rate);
                if let Some(wait) = slot.checked_duration_since(Instant::now()) {
                    std::thread::sleep(wait);
                }
            }
            let m = NewMemory::new(format!(
                "{tag} write {i}: the deploy of build {} finished at {}.",
                i * 31 % 1009,
                amber_core::now_millis()
            ))
            .in_scope(scope.clone());
            i += 1;
            let t = Instant::now();
            let at = t.duration_since(epoch).as_secs_f64();
            match retry_busy(|| c.remember(&m)) {
                Ok(_) => out.timed.push((at, t.elapsed().as_secs_f64() * 1000.0)),
                Err(e) => {
                    out.errors += 1;
                    out.first_error.get_or_insert_with(|| e.to_string());
                }
            }
        }
        Ok(out)
    })
}

/// The team scope prefix the team nodes keep in PostgreSQL.
pub(crate) const TEAM_SCOPE: &str = "team/acme";

pub(crate) use crate::cmd::load::rss_of;

/// Bytes under a directory (0 when it does not exist).
pub(crate) fn dir_bytes(p: &Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(p) else { return 0 };
    rd.flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_bytes(&e.path()),
            Ok(_) => e.metadata().map(|m| m.len()).unwrap_or(0),
            Err(_) => 0,
        })
        .sum()
}

pub(crate) fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// Calls `f` until the daemon stops answering `busy` (it does while indexing is far
/// behind); returns the result and the retries.
pub(crate) fn retry_busy<T>(mut f: impl FnMut() -> Result<T, ClientError>) -> anyhow::Result<(T, u64)> {
    let mut retries = 0;
    loop {
        match f() {
            Ok(v) => return Ok((v, retries)),
            Err(e) if e.kind() == Some(ErrorKind::Busy) => {
                retries += 1;
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// The command that starts a private amberd under `root`: its data in `data`, its
/// socket, its state in `root/state` and its config file `root/<config>` (absent: the
/// defaults); nothing taken from the environment's Amber variables. Standard input is
/// closed and the ready line piped; the caller says where the log goes.
pub(crate) fn amberd_command(
    amberd: &Path,
    root: &Path,
    data: &Path,
    socket: &Path,
    config: &str,
) -> Command {
    let mut c = Command::new(amberd);
    c.arg("--data-dir")
        .arg(data)
        .arg("--socket")
        .arg(socket)
        .env("AMBER_STATE_DIR", root.join("state"))
        .env("AMBER_CONFIG", root.join(config))
        .env_remove("AMBER_SOCKET")
        .env_remove("AMBER_DATA_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    c
}

/// One private amberd: shut down (then killed if need be) when dropped.
pub(crate) struct Node {
    pub(crate) name: &'static str,
    pub(crate) amberd: PathBuf,
    pub(crate) root: PathBuf,
    pub(crate) child: Option<Child>,
    pub(crate) socket: PathBuf,
    pub(crate) data: PathBuf,
    pub(crate) log: PathBuf,
}

impl Node {
    /// Writes the node's config (with `[team]` when a URL is given) and starts it.
    pub(crate) fn new(
        name: &'static str,
        amberd: &Path,
        root: &Path,
        team_url: Option<&str>,
    ) -> anyhow::Result<Node> {
        std::fs::create_dir_all(root)?;
        if let Some(url) = team_url {
            std::fs::write(
                root.join("config.toml"),
                format!("[team]\nurl = \"{url}\"\nscopes = [\"{TEAM_SCOPE}\"]\n"),
            )?;
        }
        let mut n = Node {
            name,
            amberd: amberd.to_path_buf(),
            root: root.to_path_buf(),
            child: None,
            socket: root.join("run").join("amber.sock"),
            data: root.join("data"),
            log: root.join("amberd.log"),
        };
        n.start()?;
        Ok(n)
    }

    /// Starts amberd and waits for its "ready" line; answers the seconds that took.
    pub(crate) fn start(&mut self) -> anyhow::Result<f64> {
        let t = Instant::now();
        let log = std::fs::OpenOptions::new().create(true).append(true).open(&self.log)?;
        let mut child = amberd_command(&self.amberd, &self.root, &self.data, &self.socket, "config.toml")
            .arg("--foreground")
            .stderr(log)
            .spawn()
            .with_context(|| format!("starting {}", self.amberd.display()))?;
        let mut line = String::new();
        BufReader::new(child.stdout.take().context("amberd's stdout")?).read_line(&mut line)?;
        if !line.starts_with("amberd ready on ") {
            let _ = child.kill();
            let _ = child.wait();
            let err = std::fs::read_to_string(&self.log).unwrap_or_default();
            bail!("amberd {} did not start: {}", self.name, err.trim());
        }
        self.child = Some(child);
        Ok(t.elapsed().as_secs_f64())
    }

    pub(crate) fn client(&self) -> anyhow::Result<Client> {
        Client::connect(&self.socket).with_context(|| format!("connecting to node {}", self.name))
    }

    /// Asks for a shutdown and waits for the process to exit (killed after 60 s).
    pub(crate) fn stop(&mut self) -> anyhow::Result<()> {
        let Some(mut child) = self.child.take() else { return Ok(()) };
        if let Ok(mut c) = Client::connect(&self.socket) {
            let _ = c.shutdown();
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if child.try_wait()?.is_some() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
        bail!("node {} did not stop within 60 s after `shutdown`; killed", self.name)
    }

    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// Memories per `remember_batch` while filling a store.
const BATCH: usize = 100;

/// A program next to this one (`amberd`, `amber`) unless a path is given.
fn sibling(given: &Option<PathBuf>, name: &str) -> anyhow::Result<PathBuf> {
    Ok(match given {
        Some(p) => p.clone(),
        None => std::env::current_exe()?.with_file_name(name),
    })
}

/// The `amber` command against a node, as a person runs it; answers its stdout.
pub(crate) fn amber(exe: &Path, node_root: &Path, args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new(exe)
        .arg("--data-dir")
        .arg(node_root.join("data"))
        .arg("--socket")
        .arg(node_root.join("run").join("amber.sock"))
        .args(args)
        .env("AMBER_STATE_DIR", node_root.join("state"))
        .env("AMBER_CONFIG", node_root.join("config.toml"))
        .env("AMBERD", exe.with_file_name("amberd"))
        .env_remove("AMBER_NO_START")
        .output()
        .with_context(|| format!("running {}", exe.display()))?;
    if !out.status.success() {
        bail!("amber {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

pub(crate) fn engine(c: &mut Client) -> anyhow::Result<Value> {
    Ok(c.status()?.engine)
}

/// Waits until every committed memory is indexed; answers the engine status then.
pub(crate) fn wait_indexed(c: &mut Client) -> anyhow::Result<Value> {
    let t = Instant::now();
    loop {
        let e = engine(c)?;
        if e["indexed_through"] == e["committed_through"] {
            return Ok(e);
        }
        if t.elapsed() > Duration::from_secs(3 * 3600) {
            bail!("indexing did not catch up in 3 h: {e}");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// `memories` paragraphs of a LongMemEval file (40 to 600 characters, deduplicated),
/// and its questions.
pub(crate) fn load_corpus(
    data: &Path,
    memories: usize,
) -> anyhow::Result<(Vec<String>, Vec<longmemeval::Question>)> {
    let questions = longmemeval::load(data)?;
    let corpus = crate::cmd::bench::bench_corpus(&questions, memories);
    if corpus.len() < memories {
        bail!("{} holds only {} usable paragraphs, fewer than {memories}", data.display(), corpus.len());
    }
    Ok((corpus, questions))
}

/// Files the paragraphs in scope `bench`, `remember_batch` by `remember_batch`, and
/// waits until they are indexed; answers the engine status then and the seconds taken.
pub(crate) fn fill(c: &mut Client, corpus: &[String], tag: &str) -> anyhow::Result<(Value, f64)> {
    let scope: Scope = "bench".parse()?;
    let t = Instant::now();
    for (i, chunk) in corpus.chunks(BATCH).enumerate() {
        let batch: Vec<NewMemory> =
            chunk.iter().map(|p| NewMemory::new(p.clone()).in_scope(scope.clone())).collect();
        retry_busy(|| c.remember_batch(batch.clone()))?;
        if i % 100 == 0 {
            eprintln!("{tag}: filed {} of {}", i * BATCH, corpus.len());
        }
    }
    let filled = wait_indexed(c)?;
    Ok((filled, t.elapsed().as_secs_f64()))
}

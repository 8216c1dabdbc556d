//! Progress on stderr for long work (`ingest`, `import`, `export`, `restore`): one line
//! rewritten in place on a terminal, else a line every few seconds; nothing with `--json`.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use amber_ipc::Client;

/// A one-line progress display on stderr: rewritten in place on a terminal, else a line
/// every few seconds.
pub(crate) struct Progress {
    tty: bool,
    quiet: bool,
    last: std::cell::Cell<Option<Instant>>,
}

impl Progress {
    pub(crate) fn new(json: bool) -> Progress {
        Progress { tty: std::io::stderr().is_terminal(), quiet: json, last: Default::default() }
    }

    pub(crate) fn line(&self, text: &str) {
        if self.quiet {
            return;
        }
        if self.tty {
            eprint!("\r\x1b[2K{text}");
        } else if self.last.get().is_none_or(|l| l.elapsed() >= Duration::from_secs(5)) {
            eprintln!("{text}");
            self.last.set(Some(Instant::now()));
        }
    }

    pub(crate) fn finish(&self) {
        if self.tty && !self.quiet {
            eprint!("\r\x1b[2K");
        }
    }
}

/// Waits until the daemon's indexes cover every write made so far, showing what is left.
pub(crate) fn wait_indexed(client: &mut Client, progress: &Progress) -> anyhow::Result<()> {
    let target = client.status()?.engine["committed_through"].as_u64().unwrap_or(0);
    let start = Instant::now();
    loop {
        let st = client.status()?;
        let indexed = st.engine["indexed_through"].as_u64().unwrap_or(0);
        if indexed >= target {
            progress.finish();
            return Ok(());
        }
        progress.line(&format!(
            "indexing: {} left ({:.0} s)",
            target - indexed,
            start.elapsed().as_secs_f64()
        ));
        std::thread::sleep(Duration::from_millis(250));
    }
}

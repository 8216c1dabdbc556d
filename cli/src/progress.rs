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
            eprint!("\r\x1b[2K{}", crate::output::for_terminal(text));
        } else if self.last.get().is_none_or(|l| l.elapsed() >= Duration::from_secs(5)) {
            errln!("{text}");
            self.last.set(Some(Instant::now()));
        }
    }

    pub(crate) fn finish(&self) {
        if self.tty && !self.quiet {
            eprint!("\r\x1b[2K");
        }
    }
}

/// Waits until the daemon's indexes cover every write made so far, showing what is left,
/// the rate and the time still to go (a bar on a terminal, a line every 5 s when piped).
/// The indexer goes in the order things were filed, so a client's own writes are indexed
/// once everything filed before them is.
pub(crate) fn wait_indexed(client: &mut Client, progress: &Progress) -> anyhow::Result<()> {
    let target = client.status()?.engine["committed_through"].as_u64().unwrap_or(0);
    let start = Instant::now();
    let mut first: Option<u64> = None;
    loop {
        let st = client.status()?;
        let indexed = st.engine["indexed_through"].as_u64().unwrap_or(0);
        if indexed >= target {
            progress.finish();
            return Ok(());
        }
        let from = *first.get_or_insert(indexed);
        progress.line(&indexing_line(target - indexed, target - from, indexed - from, start.elapsed()));
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// `indexing [#####.....] 1,844 left, 38/s, about 49 s`: what is left of the `total` seen
/// at the start, the rate since then and the time to go at that rate.
pub(crate) fn indexing_line(left: u64, total: u64, done: u64, elapsed: Duration) -> String {
    const WIDTH: u64 = 20;
    let filled = (WIDTH * (total - left.min(total))).checked_div(total).map_or(WIDTH, |f| f.min(WIDTH));
    let bar: String = std::iter::repeat_n('#', filled as usize)
        .chain(std::iter::repeat_n('.', (WIDTH - filled) as usize))
        .collect();
    let secs = elapsed.as_secs_f64();
    let rate = if secs >= 1.0 { done as f64 / secs } else { 0.0 };
    let eta = if rate > 0.0 { format!(", about {:.0} s", left as f64 / rate) } else { String::new() };
    let rate = if rate > 0.0 { format!(", {rate:.0}/s") } else { String::new() };
    format!("indexing [{bar}] {left} left{rate}{eta} ({secs:.0} s)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_indexing_line_shows_a_bar_the_rate_and_the_time_to_go() {
        let l = indexing_line(1000, 2000, 500, Duration::from_secs(10));
        assert_eq!(l, "indexing [##########..........] 1000 left, 50/s, about 20 s (10 s)");
        assert_eq!(
            indexing_line(10, 10, 0, Duration::from_millis(300)),
            "indexing [....................] 10 left (0 s)"
        );
    }
}

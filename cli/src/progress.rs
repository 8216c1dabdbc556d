//! Progress on stderr for long work (`ingest`, `import`, `export`, `restore`): one line
//! rewritten in place on a terminal, else a line every few seconds; nothing with `--json`.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use amber_core::Scope;
use amber_ipc::Client;
use amber_ipc::protocol::{IndexedParams, MAX_INDEXED_RANGES, method};

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

/// The seqs a run filed, by scope (which store they are in): ranges `[first, last]`,
/// merged where they touch.
#[derive(Debug, Default)]
pub(crate) struct Filed(std::collections::BTreeMap<Scope, Vec<[u64; 2]>>);

impl Filed {
    pub(crate) fn add(&mut self, scope: &Scope, [a, b]: [u64; 2]) {
        let ranges = self.0.entry(scope.clone()).or_default();
        ranges.push([a, b]);
        ranges.sort_unstable();
        let mut merged: Vec<[u64; 2]> = Vec::with_capacity(ranges.len());
        for &[a, b] in ranges.iter() {
            match merged.last_mut() {
                Some(last) if a <= last[1].saturating_add(1) => last[1] = last[1].max(b),
                _ => merged.push([a, b]),
            }
        }
        *ranges = merged;
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Waits until what a run filed is indexed (recallable), showing what is left of it, the
/// rate and the time to go. The daemon indexes what a client waits for before the rest
/// of a backlog (`indexed` in docs/PROTOCOL.md), so another client's bulk work does not
/// hold this one.
pub(crate) fn wait_filed(client: &mut Client, filed: &Filed, progress: &Progress) -> anyhow::Result<()> {
    if filed.is_empty() {
        return Ok(());
    }
    let start = Instant::now();
    let mut total: Option<u64> = None;
    loop {
        let mut left = 0;
        for (scope, ranges) in &filed.0 {
            for part in ranges.chunks(MAX_INDEXED_RANGES) {
                let p = IndexedParams { seqs: part.to_vec(), scope: Some(scope.clone()) };
                left += client.send::<method::Indexed>(&p)?.left;
            }
        }
        if left == 0 {
            progress.finish();
            return Ok(());
        }
        let total = *total.get_or_insert(left);
        progress.line(&indexing_line(left, total, total.saturating_sub(left), start.elapsed()));
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
    fn filed_ranges_merge_where_they_touch_and_stay_apart_by_scope() {
        let (a, b): (Scope, Scope) = ("project/a".parse().unwrap(), "team/x/y".parse().unwrap());
        let mut f = Filed::default();
        assert!(f.is_empty());
        for r in [[10, 12], [20, 25], [13, 15], [5, 5], [24, 30]] {
            f.add(&a, r);
        }
        f.add(&b, [14, 14]);
        assert_eq!(f.0[&a], vec![[5, 5], [10, 15], [20, 30]]);
        assert_eq!(f.0[&b], vec![[14, 14]]);
    }

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

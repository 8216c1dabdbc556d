//! Document folders walked and watched, for `amber ingest [--watch]` and the daemon's
//! `[sources]`: which files a folder holds (`.gitignore`, `.ignore` and git's excludes
//! honoured, hidden files and other types left out, `amber_tiers::document`), and a watch
//! (`notify`: inotify on Linux) that hands over each changed, created, renamed or deleted
//! file once it has been quiet for the debounce time, which also rides out an editor's
//! save (a write to a temporary file renamed over the original, or a truncate then a
//! write). What to do with the files (an `ingest` call, or the daemon's own ingest) is the
//! caller's.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use amber_tiers::document::kind_of;
use serde::{Deserialize, Serialize};

use crate::protocol::{IngestStatus, IngestedFile};

/// Files handed over in one piece of work while walking or watching.
pub const BATCH: usize = 32;

/// The `[sources]` table: document folders the daemon keeps in step with their files,
/// as `amber ingest --watch` would, while it runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SourcesConfig {
    /// Folders or files (absolute, or `~/…`), each filed into its project's scope and
    /// trusted as the person's (they chose it); none by default.
    pub watch: Vec<PathBuf>,
    /// How long a file must be quiet before it is read (ms, default 300).
    pub debounce_ms: u64,
}

impl Default for SourcesConfig {
    fn default() -> SourcesConfig {
        SourcesConfig { watch: Vec::new(), debounce_ms: 300 }
    }
}

impl SourcesConfig {
    /// Checks the table: absolute paths (after `~`), a debounce of 10 ms to 60 s.
    pub fn check(&self) -> Result<(), String> {
        for p in &self.watch {
            if !expand(p).is_absolute() {
                return Err(format!("sources.watch: {} is not absolute (nor under ~)", p.display()));
            }
        }
        if !(10..=60_000).contains(&self.debounce_ms) {
            return Err(format!("sources.debounce_ms is {}, it must be 10 to 60000", self.debounce_ms));
        }
        Ok(())
    }

    /// The paths to watch, `~` expanded.
    pub fn paths(&self) -> Vec<PathBuf> {
        self.watch.iter().map(|p| expand(p)).collect()
    }
}

/// `~/x` as the home folder's `x`.
fn expand(p: &Path) -> PathBuf {
    match (p.strip_prefix("~"), dirs::home_dir()) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => p.to_path_buf(),
    }
}

/// One path as named: where it is, and whether it is a folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// The path, canonical.
    pub path: PathBuf,
    /// A folder (walked, pruned, watched recursively) or one file.
    pub dir: bool,
}

impl Root {
    /// The root of an existing path.
    pub fn new(path: &Path) -> std::io::Result<Root> {
        let path = std::fs::canonicalize(path)?;
        let dir = std::fs::metadata(&path)?.is_dir();
        Ok(Root { path, dir })
    }

    /// The directory whose project the files belong to (and which is watched).
    pub fn cwd(&self) -> &Path {
        if self.dir { &self.path } else { self.path.parent().unwrap_or(Path::new("/")) }
    }

    /// True when an event on `p` concerns this root.
    pub fn covers(&self, p: &Path) -> bool {
        if self.dir { p.starts_with(&self.path) } else { p == self.path }
    }
}

/// The document files under a root, sorted (a file root is itself).
pub fn walk(root: &Root) -> Vec<PathBuf> {
    if !root.dir {
        return vec![root.path.clone()];
    }
    let mut out: Vec<PathBuf> = ignore::WalkBuilder::new(&root.path)
        .hidden(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(true)
        .require_git(false)
        .follow_links(false)
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()) && kind_of(e.path()).is_some())
        .map(|e| e.into_path())
        .collect();
    out.sort();
    out
}

/// True when `path` would be walked from its folder (not ignored, not hidden, a
/// document type).
pub fn walkable(path: &Path) -> bool {
    let Some(dir) = path.parent() else { return false };
    kind_of(path).is_some()
        && ignore::WalkBuilder::new(dir)
            .max_depth(Some(1))
            .require_git(false)
            .build()
            .filter_map(Result::ok)
            .any(|e| e.path() == path)
}

/// A piece of work on a root: files to bring in step (at most [`BATCH`]), or a folder
/// whose deleted files' memories go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Work {
    /// Files changed, created or deleted.
    Files(Vec<PathBuf>),
    /// A folder that was removed (or a root's deleted files, after a walk).
    Prune(PathBuf),
}

/// Watches `roots` until `stop` says so (asked every second), handing each root's
/// changed files to `sync` once quiet for `debounce`, and keeping `known` (the files
/// brought in) in step with what `sync` reports. An error of `sync` ends the watch.
pub fn watch(
    roots: &[Root],
    debounce: Duration,
    mut known: HashSet<PathBuf>,
    stop: &dyn Fn() -> bool,
    mut sync: impl FnMut(&Root, Work) -> Result<Vec<IngestedFile>, String>,
) -> Result<(), String> {
    use notify::{RecursiveMode, Watcher};
    let (tx, rx) = std::sync::mpsc::channel();
    let mut watcher =
        notify::recommended_watcher(tx).map_err(|e| format!("cannot start watching files: {e}"))?;
    for r in roots {
        let (what, mode) = if r.dir {
            (r.path.as_path(), RecursiveMode::Recursive)
        } else {
            (r.cwd(), RecursiveMode::NonRecursive)
        };
        watcher.watch(what, mode).map_err(|e| format!("cannot watch {}: {e}", what.display()))?;
    }
    let mut pending: HashMap<PathBuf, Instant> = HashMap::new();
    loop {
        if stop() {
            return Ok(());
        }
        let wait = pending
            .values()
            .map(|t| (*t + debounce).saturating_duration_since(Instant::now()))
            .min()
            .unwrap_or(Duration::from_secs(1))
            .min(Duration::from_secs(1));
        match rx.recv_timeout(wait) {
            // Reading a file (the daemon does, to ingest it) is no change: a watcher that
            // took it for one would read every file again, forever.
            Ok(Ok(ev)) if !changes(&ev.kind) => continue,
            Ok(Ok(ev)) => {
                for p in ev.paths {
                    if roots.iter().any(|r| r.covers(&p)) {
                        pending.insert(p, Instant::now());
                    }
                }
                continue;
            }
            Ok(Err(e)) => {
                tracing::warn!(cause = %e, "watching files");
                continue;
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return Ok(()),
        }
        // Files quiet for the debounce time, in pieces per root.
        let now = Instant::now();
        let ready: Vec<PathBuf> =
            pending.iter().filter(|(_, t)| now >= **t + debounce).map(|(p, _)| p.clone()).collect();
        if ready.is_empty() {
            continue;
        }
        for p in &ready {
            pending.remove(p);
        }
        let (files, gone) = sort_ready(ready, &known);
        for root in roots {
            let mine: Vec<PathBuf> = files.iter().filter(|f| root.covers(f)).cloned().collect();
            let mut work: Vec<Work> = mine.chunks(BATCH).map(|b| Work::Files(b.to_vec())).collect();
            work.extend(gone.iter().filter(|d| root.dir && root.covers(d)).map(|d| Work::Prune(d.clone())));
            for w in work {
                for f in sync(root, w)? {
                    let path = PathBuf::from(&f.path);
                    match f.status {
                        IngestStatus::Deleted => {
                            known.remove(&path);
                        }
                        IngestStatus::Skipped => {}
                        _ => {
                            known.insert(path);
                        }
                    }
                }
            }
        }
    }
}

/// The quiet paths as files to bring in step and folders that went.
fn sort_ready(ready: Vec<PathBuf>, known: &HashSet<PathBuf>) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let (mut files, mut gone) = (Vec::new(), Vec::new());
    for p in ready {
        if p.is_dir() {
            // A folder moved in or created: walk it.
            files.extend(walk(&Root { path: p.clone(), dir: true }));
        } else if p.exists() {
            if known.contains(&p) || walkable(&p) {
                files.push(p);
            }
        } else if known.contains(&p) {
            files.push(p);
        } else if kind_of(&p).is_none() {
            // Perhaps a folder that was removed: what the scope holds under it goes.
            gone.push(p);
        }
    }
    (files, gone)
}

/// True for an event that may change what a file holds: a creation, a write, a rename,
/// a removal; not an open, a read or a close after reading, nor a change of permissions
/// or times alone.
fn changes(kind: &notify::EventKind) -> bool {
    use notify::EventKind;
    use notify::event::{AccessKind, AccessMode, ModifyKind};
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        EventKind::Modify(ModifyKind::Metadata(_)) => false,
        _ => true,
    }
}

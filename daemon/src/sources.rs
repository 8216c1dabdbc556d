//! `[sources]`: document folders the daemon keeps in step with their files while it runs,
//! as `amber ingest --watch` would (`amber_ipc::sources`: the same walk and the same
//! watch). At start, each folder is walked and brought in step (its deleted files' memories
//! retired); then every change, once quiet for `debounce_ms`, is. The person chose them in
//! their config, so what they hold is trusted as the person's (each file still only when
//! it belongs to the project it is filed in), stamped door `daemon`, tool `sources`.
//!
//! It runs on a thread of its own (the watch blocks), calling the `ingest` method's own
//! code on the daemon's runtime; `busy` (indexing far behind) is waited out, any other
//! failure is logged and the watch goes on. It stops at shutdown.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use amber_ipc::protocol::{ErrorKind, IngestParams, IngestedFile, SourcesStatus};
use amber_ipc::sources::{BATCH, Root, Work, walk, watch};

use crate::state::Shared;

/// Starts watching the configured folders, when there are any.
pub(crate) fn start(shared: &Arc<Shared>) {
    let paths = shared.config.sources.paths();
    if paths.is_empty() {
        return;
    }
    let (shared, handle) = (shared.clone(), tokio::runtime::Handle::current());
    let spawned =
        std::thread::Builder::new().name("amber-sources".into()).spawn(move || run(&shared, &handle, paths));
    if let Err(e) = spawned {
        tracing::error!(cause = %e, "the [sources] watcher could not start");
    }
}

/// Changes what `status` shows of the watch.
fn note(shared: &Shared, change: impl FnOnce(&mut SourcesStatus)) {
    let mut st = shared.sources.lock().unwrap_or_else(|e| e.into_inner());
    change(st.get_or_insert_with(SourcesStatus::default));
}

fn run(shared: &Arc<Shared>, handle: &tokio::runtime::Handle, paths: Vec<PathBuf>) {
    note(shared, |_| {});
    let roots: Vec<Root> = paths
        .iter()
        .filter_map(|p| match Root::new(p) {
            Ok(r) => Some(r),
            Err(e) => {
                tracing::warn!(path = %p.display(), cause = %e, "a [sources] path cannot be read; not watched");
                note(shared, |st| st.unreadable.push(format!("{}: {e}", p.display())));
                None
            }
        })
        .collect();
    note(shared, |st| st.watching = roots.iter().map(|r| r.path.clone()).collect());
    let stopping = || *shared.shutdown.borrow();
    let mut known = HashSet::new();
    let mut files = 0;
    for root in &roots {
        let found = walk(root);
        files += found.len();
        for batch in found.chunks(BATCH) {
            sync(shared, handle, root, Work::Files(batch.to_vec()));
        }
        if root.dir {
            sync(shared, handle, root, Work::Prune(root.path.clone()));
        }
        known.extend(found);
        if stopping() {
            return;
        }
    }
    tracing::info!(roots = roots.len(), files, "[sources] brought in step; watching");
    note(shared, |st| st.ready = true);
    let debounce = Duration::from_millis(shared.config.sources.debounce_ms);
    let watched =
        watch(&roots, debounce, known, &stopping, |root, work| Ok(sync(shared, handle, root, work)));
    if let Err(e) = watched {
        tracing::error!(cause = %e, "the [sources] watch stopped");
        note(shared, |st| st.last_error = Some(format!("the watch stopped: {e}")));
    }
}

/// One piece of work through the `ingest` method's code; what it did, or nothing when it
/// failed (logged).
pub(crate) fn sync(
    shared: &Arc<Shared>,
    handle: &tokio::runtime::Handle,
    root: &Root,
    work: Work,
) -> Vec<IngestedFile> {
    let mut p = IngestParams { cwd: Some(root.cwd().to_path_buf()), ..IngestParams::default() };
    match work {
        Work::Files(files) => p.files = files,
        Work::Prune(dir) => p.prune = Some(dir),
    }
    let mut wait = Duration::from_millis(200);
    loop {
        match handle.block_on(crate::methods::ingest::from_sources(shared, p.clone())) {
            Ok(r) => {
                let changed = r.files.iter().filter(|f| f.status.as_str() != "unchanged").count();
                for f in r.files.iter().filter(|f| f.status.as_str() != "unchanged") {
                    tracing::info!(path = %f.path, status = f.status.as_str(), added = f.added, retired = f.retired, "[sources]");
                }
                note(shared, |st| {
                    st.files += r.files.len() as u64;
                    if changed > 0 {
                        st.last_change = Some(amber_core::now_millis());
                    }
                });
                return r.files;
            }
            Err(e) if e.kind() == Some(ErrorKind::Busy) && !*shared.shutdown.borrow() => {
                std::thread::sleep(wait);
                wait = (wait * 2).min(Duration::from_secs(5));
            }
            Err(e) => {
                tracing::warn!(cwd = %root.cwd().display(), error = %e.message, "[sources] not brought in step");
                note(shared, |st| st.last_error = Some(e.message.clone()));
                return Vec::new();
            }
        }
    }
}

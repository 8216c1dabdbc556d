//! What every connection and method shares: the engine, the config, the write queue,
//! the indexing watermark, the shutdown signal, the live sessions and fact extraction.

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Instant;

use amber_engine::Engine;
use amber_ipc::Config;
use tokio::sync::{mpsc, watch};

use crate::team::Side;
use crate::writer::Job;

/// What every connection shares.
pub(crate) struct Shared {
    pub engine: Arc<Engine>,
    pub config: Config,
    pub socket: String,
    pub writes: mpsc::Sender<Job>,
    pub indexed: watch::Receiver<u64>,
    pub shutdown: watch::Sender<bool>,
    pub connections: AtomicUsize,
    pub started: Instant,
    /// Our effective uid: peers must have the same.
    pub uid: Option<u32>,
    /// Live sessions and the judge.
    pub sessions: crate::live::Sessions,
    /// Fact extraction from captures, when configured.
    pub extract: Option<crate::extract::Extraction>,
    /// The model advice is learned by (`[learn]`), when one is configured.
    pub learner: Option<amber_tiers::advice::Learner>,
    /// Team memory on PostgreSQL, when `[team]` is configured.
    pub team: Option<Arc<crate::team::Team>>,
    /// Held while skills are compiled: one compile pass at a time.
    pub compiling: tokio::sync::Mutex<()>,
    /// The `[sources]` watch, as `status` shows it (None: none configured).
    pub sources: std::sync::Mutex<Option<amber_ipc::protocol::SourcesStatus>>,
    /// Starts the person's web view (`amber ui`): `web::start`, set at start. A function
    /// here so that the methods reach the view without importing it (the view calls the
    /// dispatch).
    pub ui_start: UiStarter,
    /// The web view, once started; stopped with the daemon.
    pub web: tokio::sync::Mutex<Option<WebView>>,
    /// A migration to another embedding model (`model_use`), running or last run.
    pub migrations: crate::model::Migrations,
}

/// What starts the web view (or finds it running): [`Shared::ui_start`].
pub(crate) type UiStarter = fn(
    Arc<Shared>,
    Option<amber_tiers::scope::Resolved>,
) -> std::pin::Pin<
    Box<
        dyn std::future::Future<
                Output = Result<amber_ipc::protocol::UiStartResult, amber_ipc::protocol::ErrorObject>,
            > + Send,
    >,
>;

/// What makes a link to the running web view: [`WebView::link`].
pub(crate) type Linker = Box<
    dyn Fn(Option<amber_tiers::scope::Resolved>) -> Result<String, amber_ipc::protocol::ErrorObject>
        + Send
        + Sync,
>;

/// The running web view.
pub(crate) struct WebView {
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// A new link to it (its URL with a one-time code; the web view's `Web::link`), made
    /// from a working directory resolved (the scopes its search defaults to), or none.
    pub link: Linker,
    /// The server's task: it ends at shutdown.
    pub task: tokio::task::JoinHandle<()>,
}

impl Shared {
    /// The local side: the SQLite store and its indexes.
    pub(crate) fn local(&self) -> Side {
        Side { engine: self.engine.clone(), writes: self.writes.clone(), indexed: self.indexed.clone() }
    }

    /// The scopes a search from `scope` covers beside it: `user` (unless `scope` is
    /// within it) and the team scope prefixes (unless within one). Every door's default
    /// search (the resolver's `search` list, a session's scopes) is `scope` plus these.
    pub(crate) fn search_also(&self, scope: &amber_core::Scope) -> Vec<amber_core::Scope> {
        let user = amber_tiers::scope::user_scope();
        let team = self.team.as_ref().map(|t| t.prefixes.clone()).unwrap_or_default();
        std::iter::once(user).chain(team).filter(|s| !scope.is_within(s)).collect()
    }

    /// True when `scope` lives in the team database.
    pub(crate) fn is_team(&self, scope: &amber_core::Scope) -> bool {
        self.team.as_ref().is_some_and(|t| t.owns(scope))
    }

    /// The side that holds `scope`: the team's (or `team_unavailable`) for a team scope,
    /// else the local one.
    pub(crate) fn side_for(
        &self,
        scope: &amber_core::Scope,
    ) -> Result<Side, amber_ipc::protocol::ErrorObject> {
        match &self.team {
            Some(t) if t.owns(scope) => t.side(),
            _ => Ok(self.local()),
        }
    }

    /// The side of an optional scope: none means the local store.
    pub(crate) fn side_of(
        &self,
        scope: Option<&amber_core::Scope>,
    ) -> Result<Side, amber_ipc::protocol::ErrorObject> {
        scope.map_or_else(|| Ok(self.local()), |s| self.side_for(s))
    }

    /// Where something known by id (a memory, a run) may be, in the order to look: the
    /// local store, then the team store when it is open (an id names no scope); and the
    /// `team_unavailable` error to answer when it is not found while the team store is
    /// away.
    pub(crate) fn id_sides(&self) -> (Vec<Side>, Option<amber_ipc::protocol::ErrorObject>) {
        let mut sides = vec![self.local()];
        let mut away = None;
        match self.team.as_ref().map(|t| t.side()) {
            Some(Ok(side)) => sides.push(side),
            Some(Err(e)) => away = Some(e),
            None => {}
        }
        (sides, away)
    }

    pub(crate) fn queue_depth(&self) -> usize {
        self.writes.max_capacity() - self.writes.capacity()
    }
}

/// Waits until shutdown is asked.
pub(crate) async fn shutdown_asked(rx: &mut watch::Receiver<bool>) {
    let _ = rx.wait_for(|&s| s).await;
}

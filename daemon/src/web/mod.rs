//! The person's local web view (`amber ui`, the `ui_start` method): an HTTP server on
//! 127.0.0.1, on a port chosen at start, off until a person starts it and stopped with
//! the daemon. One concern a file:
//!
//! - this file: starting it (once; a second `ui_start` gets a new link to the same
//!   server: each link's one-time code is good for one load within two minutes), the routes,
//!   and [`Web::call`], through which every page and every form goes: the daemon's own
//!   [`crate::dispatch::dispatch`], in process, as the web door (`Door::Web`, a person's),
//!   so the same rules, checks and logs apply as on the socket;
//! - [`auth`]: who may ask (the per-start token, its cookie, `Host`, `Origin`, the form
//!   token) and the headers every answer carries (docs/SECURITY.md, "The web view");
//! - [`html`]: escaping (every memory is hostile text) and the page frame;
//! - [`pages`], [`scope`], [`files`], [`memory`], [`sessions`], [`insight`]: the pages;
//!   [`actions`]: the forms' POSTs;
//! - [`svg`]: the charts and the graph, drawn by the server as inline SVG.
//!
//! The server holds the daemon's state weakly, so an open browser never keeps a stopping
//! daemon alive.

mod actions;
mod auth;
mod files;
mod html;
mod insight;
mod memory;
mod pages;
mod scope;
mod sessions;
mod svg;

use std::io::Read;
use std::net::Ipv4Addr;
use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::peer::Peer;
use crate::state::{Shared, WebView, shutdown_asked};
use amber_core::origin::Door;
use amber_ipc::protocol::{ErrorKind, ErrorObject, MethodSpec, Request, UiStartResult};
use amber_tiers::scope::Resolved;
use axum::Router;
use axum::routing::{get, post};

/// The peer every page and form is dispatched as: the person, through the web door.
const PEER: Peer = Peer { door: Door::Web, under_agent: false, pid: None, detached: false, tty: false };

/// How long a stopping daemon waits for the web view's open requests.
const STOP_WAIT: Duration = Duration::from_secs(3);

/// What every request of the web view shares.
pub(crate) struct Web {
    shared: Weak<Shared>,
    /// The per-start token (256 random bits, hex): the URL's, then the cookie's.
    token: String,
    /// The token forms carry (derived from the token, so the page never shows the
    /// cookie's secret).
    form: String,
    /// The port it listens on.
    port: u16,
    /// The one-time codes of the links handed out, with when and the working directory
    /// `amber ui` ran in (resolved): a code is exchanged once, within [`CODE_LIFE`], for
    /// the cookie that holds the token. The token itself never leaves the daemon but in
    /// that cookie: no command line (the browser's, readable in `/proc/<pid>/cmdline` by
    /// every local user) ever holds it.
    codes: std::sync::Mutex<Vec<Code>>,
    /// Where the last link opened was made (`amber ui`'s working directory, resolved):
    /// the search defaults to its scopes, as `amber recall` there does, and the graph
    /// opens on its project's. None: every scope.
    here: std::sync::Mutex<Option<Resolved>>,
}

/// A link's one-time code.
struct Code {
    code: String,
    at: std::time::Instant,
    here: Option<Resolved>,
}

/// How long a link's one-time code is good for.
pub(crate) const CODE_LIFE: Duration = Duration::from_secs(120);

/// At most this many unused codes are kept (the oldest go first).
const MAX_CODES: usize = 16;

impl Web {
    /// A new link to the view, made from `here` (`amber ui`'s working directory,
    /// resolved): its URL with a one-time code.
    pub(crate) fn link(&self, here: Option<Resolved>) -> Result<String, ErrorObject> {
        let code = random_token()?;
        let mut codes = self.codes.lock().unwrap_or_else(|e| e.into_inner());
        codes.retain(|c| c.at.elapsed() < CODE_LIFE);
        if codes.len() >= MAX_CODES {
            codes.remove(0);
        }
        codes.push(Code { code: code.clone(), at: std::time::Instant::now(), here });
        Ok(format!("http://127.0.0.1:{}/?code={code}", self.port))
    }

    /// Takes a link's code: true (once) when it was handed out within [`CODE_LIFE`]; the
    /// view's defaults then follow the directory that link was made from.
    pub(crate) fn redeem(&self, given: &str) -> bool {
        let mut codes = self.codes.lock().unwrap_or_else(|e| e.into_inner());
        codes.retain(|c| c.at.elapsed() < CODE_LIFE);
        match codes.iter().position(|c| auth::same(c.code.as_bytes(), given.as_bytes())) {
            Some(i) => {
                let code = codes.remove(i);
                *self.here.lock().unwrap_or_else(|e| e.into_inner()) = code.here;
                true
            }
            None => false,
        }
    }

    /// The scopes a search covers by default (the first, then the others), as
    /// `amber recall` from the directory of the last link opened; None: every scope.
    pub(crate) fn here(&self) -> Option<Resolved> {
        self.here.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Calls a method of the registry as the person, through the daemon's own dispatch.
    pub(crate) async fn call<M: MethodSpec>(&self, p: M::Params) -> Result<M::Result, ErrorObject> {
        let Some(shared) = self.shared.upgrade() else {
            return Err(ErrorObject::new(ErrorKind::ShuttingDown, "the daemon is stopping"));
        };
        let params = serde_json::to_value(&p).map_err(internal)?;
        let method = M::METHOD.name();
        let started = std::time::Instant::now();
        let out = crate::dispatch::dispatch(Request::new(0, method, params), &shared, PEER).await;
        tracing::debug!(door = "web", %method, ms = started.elapsed().as_secs_f64() * 1e3, ok = out.is_ok(), "request");
        serde_json::from_value(out?).map_err(internal)
    }
}

fn internal(e: impl std::fmt::Display) -> ErrorObject {
    tracing::error!(cause = %e, "web view: a reply did not read as its type");
    ErrorObject::new(ErrorKind::Internal, "internal error (see the daemon log)")
}

/// 256 random bits as hex.
fn random_token() -> Result<String, ErrorObject> {
    let mut raw = [0u8; 32];
    std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut raw)).map_err(|e| {
        tracing::error!(cause = %e, "no randomness for the web view's token");
        ErrorObject::new(ErrorKind::Internal, "no randomness for the web view's token (see the daemon log)")
    })?;
    Ok(hex::encode(raw))
}

/// Starts the web view, or gives the running one's URL (`ui_start`, which checks that a
/// person asks, calls this through [`Shared::ui_start`]).
pub(crate) async fn start(
    shared: &Arc<Shared>,
    here: Option<Resolved>,
) -> Result<UiStartResult, ErrorObject> {
    let mut slot = shared.web.lock().await;
    if let Some(r) = slot.as_ref().filter(|r| !r.task.is_finished()) {
        return Ok(UiStartResult { url: (r.link)(here)?, port: r.port, started: false });
    }
    let token = random_token()?;
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.map_err(|e| {
        tracing::error!(cause = %e, "the web view cannot listen on 127.0.0.1");
        ErrorObject::new(ErrorKind::Internal, format!("the web view cannot listen on 127.0.0.1: {e}"))
    })?;
    let port = listener.local_addr().map_err(internal)?.port();
    let form = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(format!("amber-ui-form:{token}")));
    let web = Arc::new(Web {
        shared: Arc::downgrade(shared),
        token,
        form,
        port,
        codes: Default::default(),
        here: Default::default(),
    });
    let url = web.link(here)?;
    let mut stop = shared.shutdown.subscribe();
    let app = router(web.clone());
    let task = tokio::spawn(async move {
        let served =
            axum::serve(listener, app).with_graceful_shutdown(async move { shutdown_asked(&mut stop).await });
        if let Err(e) = served.await {
            tracing::warn!(cause = %e, "the web view stopped");
        }
    });
    tracing::info!(port, "web view started on 127.0.0.1");
    *slot = Some(WebView { port, link: Box::new(move |here| web.link(here)), task });
    Ok(UiStartResult { url, port, started: true })
}

/// Stops the web view with the daemon: its open requests get a moment, then are cut.
pub(crate) async fn stop(shared: &Shared) {
    let Some(mut r) = shared.web.lock().await.take() else { return };
    if tokio::time::timeout(STOP_WAIT, &mut r.task).await.is_err() {
        r.task.abort();
    }
}

fn router(web: Arc<Web>) -> Router {
    Router::new()
        .route("/", get(pages::scopes))
        .route("/scope", get(scope::scope))
        .route("/files", get(files::files))
        .route("/file", get(files::file))
        .route("/search", get(pages::search))
        .route("/memory/{id}", get(memory::memory))
        .route("/memory/{id}/{action}", post(actions::act))
        .route("/archive", get(pages::archive))
        .route("/health", get(pages::health))
        .route("/sessions", get(sessions::list))
        .route("/session/{id}", get(sessions::show))
        .route("/graph", get(insight::graph))
        .route("/runs", get(insight::runs))
        .fallback(pages::not_found)
        .layer(axum::middleware::from_fn_with_state(web.clone(), auth::guard))
        .with_state(web)
}

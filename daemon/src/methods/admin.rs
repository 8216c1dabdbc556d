//! The daemon's own methods: `hello`, `status`, `reindex`, `shutdown`, and tier 0's
//! `identity` (the project's coordination files, read fresh on every call).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use amber_ipc::protocol::{
    ErrorKind, ErrorKindEntry, ErrorObject, HelloParams, HelloResult, IdentityParams, METHODS, Method,
    NoParams, OkResult, PROTOCOL_VERSION, StatusResult, TeamStatus, UiStartParams, UiStartResult,
};

use crate::rpc::{invalid, read, read_on, to_value, write};
use crate::state::Shared;
use crate::writer::WriteOp;

pub(crate) async fn hello(shared: &Arc<Shared>, p: HelloParams) -> Result<HelloResult, ErrorObject> {
    if let Some(v) = p.protocol_version
        && v != PROTOCOL_VERSION
    {
        return Err(ErrorObject::new(
            ErrorKind::UnsupportedProtocol,
            format!("this daemon speaks protocol version {PROTOCOL_VERSION}, the client {v}"),
        ));
    }
    tracing::debug!(client = p.client.as_deref().unwrap_or("?"), "hello");
    Ok(HelloResult {
        server: "amberd".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        protocol_version: PROTOCOL_VERSION,
        methods: METHODS.iter().map(|s| s.to_string()).collect(),
        model: shared.engine.model_id().to_string(),
        error_kinds: ErrorKind::ALL
            .iter()
            .map(|k| ErrorKindEntry { kind: k.as_str().to_string(), code: k.code() })
            .collect(),
        method_doors: Method::ALL.iter().map(|m| m.doors()).collect(),
        data_dir: Some(
            shared.config.data_dir.canonicalize().unwrap_or_else(|_| shared.config.data_dir.clone()),
        ),
    })
}

pub(crate) async fn status(shared: &Arc<Shared>, _: NoParams) -> Result<StatusResult, ErrorObject> {
    let engine = read(shared, |e| e.status()).await?;
    Ok(StatusResult {
        protocol_version: PROTOCOL_VERSION,
        version: env!("CARGO_PKG_VERSION").into(),
        pid: std::process::id(),
        uptime_seconds: shared.started.elapsed().as_secs_f64(),
        socket: shared.socket.clone(),
        connections: shared.connections.load(Ordering::Relaxed),
        queue_depth: shared.queue_depth(),
        engine: to_value(&engine)?,
        extract: shared.extract.as_ref().map(|x| x.stats()),
        learn: shared.learner.as_ref().map(|l| l.name()),
        team: team_status(shared).await?,
        sources: shared.sources.lock().unwrap_or_else(|e| e.into_inner()).clone(),
        model_migration: shared.migrations.status(),
    })
}

/// The team side in `status`: where, which scopes, whether it answers, and its engine.
async fn team_status(shared: &Arc<Shared>) -> Result<Option<TeamStatus>, ErrorObject> {
    let Some(team) = &shared.team else { return Ok(None) };
    let engine = match team.side_if_open() {
        Some(side) => match read_on(shared, &side, |e| e.status()).await {
            Ok(s) => Some(to_value(&s)?),
            Err(_) => None,
        },
        None => None,
    };
    let trouble = team.trouble();
    Ok(Some(TeamStatus {
        location: team.location.clone(),
        scopes: team.prefixes.iter().map(|p| p.to_string()).collect(),
        connected: trouble.is_none() && engine.is_some(),
        trouble_seconds: trouble.as_ref().map(|t| t.1),
        trouble: trouble.map(|t| t.0),
        engine,
    }))
}

pub(crate) async fn reindex(shared: &Arc<Shared>, _: NoParams) -> Result<OkResult, ErrorObject> {
    write(shared, WriteOp::Reindex).await?;
    Ok(OkResult { ok: true })
}

/// `ui_start`: the person's web view (a person's call), started once and then found. The
/// link it answers carries the scopes a recall from `cwd` covers (the resolver's), which
/// the view then searches by default.
pub(crate) async fn ui_start(
    shared: &Arc<Shared>,
    peer: crate::peer::Peer,
    p: UiStartParams,
) -> Result<UiStartResult, ErrorObject> {
    crate::person_log::person_only(
        shared,
        peer,
        "ui_start (`amber ui`)",
        crate::person_log::Undo::Irreversible,
    )?;
    let here = match &p.cwd {
        Some(cwd) => Some(super::scope::resolve(shared, cwd).await?),
        None => None,
    };
    (shared.ui_start)(shared.clone(), here).await
}

/// Answers; the connection loop stops the daemon once the answer is sent.
pub(crate) async fn shutdown(_: NoParams) -> Result<OkResult, ErrorObject> {
    tracing::info!("shutdown asked by a client");
    Ok(OkResult { ok: true })
}

pub(crate) async fn identity(
    shared: &Arc<Shared>,
    p: IdentityParams,
) -> Result<amber_tiers::identity::Identity, ErrorObject> {
    if !p.cwd.is_absolute() || !p.cwd.is_dir() {
        return Err(invalid(format!("cwd must be an existing absolute directory: {}", p.cwd.display())));
    }
    let mut cfg = shared.config.identity.clone();
    if let Some(b) = p.budget_tokens {
        cfg.budget_tokens = b;
    }
    let id = crate::rpc::blocking(move || Ok(amber_tiers::identity::assemble(&p.cwd, &cfg))).await?;
    Ok(id)
}

//! The model's instances: for the local MiniLM, one for indexing and one for queries,
//! loaded at once; for an endpoint, two clients of it.

use std::sync::{Arc, Mutex};

use amber_core::model::ModelKind;
use amber_retrieval::{Embedder, EndpointEmbedder, FastEmbedder, ModelPaths};
use amber_store::{Backend, SqliteBackend};

use super::loading::Loading;
use super::{EngineOptions, SharedEmbedder};
use crate::Result;
use crate::layout::db_path;

/// The error of a model load whose thread panicked.
pub(super) fn load_panicked() -> crate::Error {
    crate::Error::Retrieval(amber_retrieval::Error::Model("loading the model panicked".into()))
}

/// ONNX Runtime threads of the query embedder: a query is one short text.
const QUERY_THREADS: usize = 1;

/// The endpoint `opts.model` names, its dimension learnt from one request, or when it
/// is away, from `model.dimensions` or the store's record of the same model.
fn connect_endpoint(opts: &EngineOptions) -> Result<EndpointEmbedder> {
    let mut e = EndpointEmbedder::configured(&opts.model)?;
    match e.probe() {
        Ok(()) => Ok(e),
        Err(err @ amber_retrieval::Error::EndpointUnavailable { .. }) => {
            let recorded = || -> Option<usize> {
                let db = db_path(&opts.data_dir);
                if !db.is_file() {
                    return None;
                }
                let line = SqliteBackend::new(db).open_writer().ok()?.meta("embedding_model").ok()??;
                let (id, dim) = line.rsplit_once(':')?;
                (id == e.model_id()).then(|| dim.parse().ok()).flatten()
            };
            match opts.model.dimensions.or_else(recorded) {
                Some(dim) => {
                    tracing::warn!(
                        "{err}: starting anyway with {dim} dimensions; indexing waits for it and \
                         queries are ranked without vectors until it answers"
                    );
                    e.assume_dim(dim);
                    Ok(e)
                }
                None => Err(crate::Error::Retrieval(amber_retrieval::Error::Model(format!(
                    "{err}; it must answer once (or model.dimensions be set) before a first start, \
                     so that Amber knows the vectors' dimension"
                )))),
            }
        }
        Err(other) => Err(other.into()),
    }
}

/// The instances of the model `model` names: for the local MiniLM, one for indexing
/// (`opts.threads`, loaded on a thread of low priority) and, unless `opts.query_model` is
/// false, one single-threaded for queries; for an endpoint, two clients of it. Returns
/// (indexing instance, query instances in order of preference).
pub(crate) fn load_models(
    opts: &EngineOptions,
    model: &amber_core::model::ModelConfig,
) -> Result<(SharedEmbedder, Vec<SharedEmbedder>)> {
    if model.kind == ModelKind::Openai {
        let opts = EngineOptions { model: model.clone(), ..opts.clone() };
        let indexer = connect_endpoint(&opts)?;
        let mut querier = EndpointEmbedder::configured(model)?;
        querier.assume_dim(indexer.dim());
        let indexer: SharedEmbedder = Arc::new(Mutex::new(Box::new(indexer)));
        let query: Vec<SharedEmbedder> = vec![Arc::new(Mutex::new(Box::new(querier))), indexer.clone()];
        return Ok((indexer, query));
    }
    let paths = ModelPaths::under(&opts.amber_home);
    if !opts.query_model {
        let only: SharedEmbedder =
            Arc::new(Mutex::new(Box::new(FastEmbedder::load(&paths, opts.chunking, opts.threads)?)));
        return Ok((only.clone(), vec![only]));
    }
    // Two instances may run at once: neither spins while idle. The indexing instance
    // is loaded on a thread of low priority, so its intra-op threads (started now,
    // inheriting it) yield the CPU to queries (crate::priority). The engine waits for the
    // query instance alone: the indexing one starts loading once that one is in (not to
    // take the CPU the store's reading and the query instance need) and is still loading
    // while the first briefing is served; its first use waits for it ([`Loading`]).
    let querier = FastEmbedder::load_tuned(&paths, opts.chunking, Some(QUERY_THREADS), false)?;
    let indexer = {
        let (paths, chunking, threads, nice) =
            (paths.clone(), opts.chunking, opts.threads, opts.background_nice);
        std::thread::Builder::new()
            .name("amberd-model".into())
            .spawn(move || {
                crate::priority::lower_this_thread(nice);
                FastEmbedder::load_tuned(&paths, chunking, threads, false)
                    .map(|e| Box::new(e) as Box<dyn Embedder>)
            })
            .map_err(|e| {
                crate::Error::Retrieval(amber_retrieval::Error::Model(format!("cannot start a thread: {e}")))
            })?
    };
    let indexer = Loading::new(&querier, indexer);
    let indexer: SharedEmbedder = Arc::new(Mutex::new(Box::new(indexer)));
    // A query runs on the query model, or on the indexing model when that one is
    // idle: two queries at once use both cores.
    let query: Vec<SharedEmbedder> = vec![Arc::new(Mutex::new(Box::new(querier))), indexer.clone()];
    Ok((indexer, query))
}

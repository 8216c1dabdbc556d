//! What every advice method shares: the configured learner (`no_model` when `[learn]`
//! names none) and a model failure on the wire. Their passes run on `rpc::blocking`.

use amber_ipc::protocol::{ErrorKind, ErrorObject};
use amber_tiers::advice::{Learner, ModelError};

use crate::state::Shared;

/// The configured learner, with the cache when `cache`; `no_model` when there is none.
pub(crate) fn learner(shared: &Shared, cache: bool) -> Result<Learner, ErrorObject> {
    let l = shared.learner.as_ref().ok_or_else(|| {
        ErrorObject::new(
            ErrorKind::NoModel,
            "advice is learned by a model: none is configured ([learn] in the config)",
        )
    })?;
    Ok(l.with_cache(cache.then(|| shared.config.data_dir.join("model-cache"))))
}

/// A model failure on the wire.
pub(crate) fn model_failed(e: ModelError) -> ErrorObject {
    tracing::warn!(cause = %e, "a model call failed");
    ErrorObject::new(ErrorKind::ModelFailed, e.to_string())
}

//! `model_use`: a person changes the embedding model (`amber model use NAME`); the
//! migration itself runs in the background (crate::model).

use std::sync::Arc;

use amber_ipc::protocol::{ErrorObject, ModelUseParams, ModelUseResult};

use crate::model::{WANTED_META, named};
use crate::rpc::invalid;
use crate::state::Shared;

/// `model_use` (a person's): records the choice and migrates to it in the background.
pub(crate) async fn model_use(
    shared: &Arc<Shared>,
    peer: crate::peer::Peer,
    p: ModelUseParams,
) -> Result<ModelUseResult, ErrorObject> {
    crate::person_log::person_only(
        shared,
        peer,
        "model_use (`amber model use`)",
        crate::person_log::Undo::Reversible,
    )?;
    let name = p.name.trim().to_string();
    let Some(model) = named(&shared.config, &name) else {
        let mut names: Vec<&str> = vec!["config", "minilm"];
        names.extend(shared.config.models.keys().map(String::as_str));
        return Err(invalid(format!("no model named {name:?}: the config names {}", names.join(", "))));
    };
    let engine = shared.engine.clone();
    let record = serde_json::to_string(&(&name, &model)).unwrap_or_default();
    crate::rpc::write_with(shared, move |e| e.set_meta(WANTED_META, &record)).await?;
    let active = crate::rpc::read(shared, |e| e.recorded_model()).await?;
    if active.as_ref() == Some(&model) {
        shared.migrations.stop();
        return Ok(ModelUseResult { name, state: "in_force".into() });
    }
    let mut opts = engine.options().clone();
    opts.model = model.clone();
    let writer = Box::new(crate::rpc::BlockingWriter::new(shared));
    shared.migrations.start(engine, writer, opts, name.clone(), model, shared.config.interject.gate);
    if shared.team.is_some() {
        tracing::warn!(
            "the team database's vectors stay of the model they are of: a node whose model differs \
             does not serve team scopes (docs/TEAM.md)"
        );
    }
    Ok(ModelUseResult { name, state: "started".into() })
}

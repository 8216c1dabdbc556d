//! The embedding model: which one the daemon opens, and changing it without downtime
//! (`model_use`, `amber model use NAME`). The wanted model is the config's `[model]`,
//! unless `model_use` chose another (recorded in the store, so a restart keeps it; `amber
//! model use config` goes back to the config's). When the store's vectors are of another
//! model, the daemon opens with that one and migrates in the background
//! (`Engine::migrate_cache` and `Engine::prepare_switch` on a thread of its own, then
//! `EngineWriter::switch_model`, the short catch-up and swap, on the writer, the one write
//! path): recall serves from the old index until the new one
//! is complete. An interrupted migration starts again at the next start and skips what
//! the embedding cache already holds.

use std::path::Path;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use amber_core::model::ModelConfig;
use amber_engine::{Engine, EngineOptions, EngineWriter, MODEL_CONFIG_META, Migration, NextModel};
use amber_ipc::Config;
use amber_ipc::protocol::ModelMigration;

/// The store's record of the model `model_use` chose: `{name, config}`.
pub(crate) const WANTED_META: &str = "model_wanted";

/// A model by name: `config` (the `[model]` table), `minilm`, or `[models.NAME]`.
pub(crate) fn named(config: &Config, name: &str) -> Option<ModelConfig> {
    match name {
        "config" => Some(config.model.clone()),
        "minilm" => Some(ModelConfig::default()),
        other => config.models.get(other).cloned(),
    }
}

/// Which model to open with, and which to migrate to afterwards (name and table).
pub(crate) fn choose(config: &Config) -> (ModelConfig, Option<(String, ModelConfig)>) {
    let [wanted, active] = stored_meta(&config.data_dir, [WANTED_META, MODEL_CONFIG_META]);
    let wanted: (String, ModelConfig) = wanted
        .and_then(|v| serde_json::from_str::<(String, ModelConfig)>(&v).ok())
        .map(|(name, m)| (name.clone(), named(config, &name).unwrap_or(m)))
        .unwrap_or_else(|| ("config".into(), config.model.clone()));
    let active: Option<ModelConfig> = active.and_then(|v| serde_json::from_str(&v).ok());
    match active {
        Some(a) if a != wanted.1 => {
            tracing::info!(
                to = %wanted.0,
                "the store's vectors are of another model: serving with it while re-embedding in the background"
            );
            (a, Some(wanted))
        }
        _ => (wanted.1, None),
    }
}

/// Values of the store's metadata before the engine opens (None when there is no store,
/// or it could not be read).
fn stored_meta<const N: usize>(data_dir: &Path, keys: [&str; N]) -> [Option<String>; N] {
    match Engine::stored_meta(data_dir, &keys) {
        Ok(values) => values.try_into().unwrap_or([const { None }; N]),
        Err(e) => {
            tracing::warn!(cause = %e, "could not read the store's model record");
            [const { None }; N]
        }
    }
}

/// A change to run on the daemon's writer (the one write path), from a blocking thread.
pub(crate) type Switch = Box<dyn FnOnce(&mut EngineWriter<'_>) -> amber_engine::Result<()> + Send>;

/// Runs a [`Switch`] on the writer and waits for it: `rpc::BlockingWriter`.
pub(crate) trait OnWriter: Send + 'static {
    /// Runs `f` on the writer; why it failed.
    fn run(&self, f: Switch) -> Result<(), String>;
}

/// The running (or last) migration.
#[derive(Default)]
pub(crate) struct Migrations {
    current: Mutex<Option<Running>>,
}

struct Running {
    name: String,
    progress: Arc<Migration>,
    started: Instant,
    /// None while running; then how it ended.
    ended: Arc<Mutex<Option<Result<bool, String>>>>,
    /// The new model's calibration in words, once done.
    calibrated: Arc<Mutex<Option<String>>>,
}

impl Migrations {
    /// Starts migrating `engine` to `model` on a thread of its own (stopping one that runs).
    pub(crate) fn start(
        &self,
        engine: Arc<Engine>,
        writer: Box<dyn OnWriter>,
        opts: EngineOptions,
        name: String,
        model: ModelConfig,
        gate: f32,
    ) {
        let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(r) = current.as_ref() {
            r.progress.stop.store(true, SeqCst);
        }
        let progress = Arc::new(Migration::default());
        let ended = Arc::new(Mutex::new(None));
        let calibrated = Arc::new(Mutex::new(None));
        let (p, e, n, cal) = (progress.clone(), ended.clone(), name.clone(), calibrated.clone());
        let spawned = std::thread::Builder::new().name("amberd-migrate".into()).spawn(move || {
            amber_engine::priority::lower_this_thread(opts.background_nice);
            // Phase 1 here (the model's work, the cache filled); the switch on the writer.
            let out = NextModel::load(&opts, &model).map_err(|x| x.to_string()).and_then(|next| {
                tracing::info!(name = %n, to = %next.id(), "re-embedding every memory with another model");
                if !engine.migrate_cache(&next, &p).map_err(|x| x.to_string())? {
                    return Ok(false);
                }
                // The new index built here too; only the catch-up and the swap hold the writer.
                let Some(prepared) = engine.prepare_switch(next, &p).map_err(|x| x.to_string())? else {
                    return Ok(false);
                };
                let q = p.clone();
                writer.run(Box::new(move |w: &mut EngineWriter<'_>| w.switch_model(prepared, &q)))?;
                // The gate and the floor move with the model's own distribution.
                match engine.recalibrate() {
                    Ok(c) => {
                        let words = c.describe(gate);
                        tracing::info!(name = %n, calibration = %words, "recalibrated");
                        *cal.lock().unwrap_or_else(|x| x.into_inner()) = Some(words);
                    }
                    Err(err) => tracing::warn!(name = %n, cause = %err, "could not recalibrate; the next recall tries again"),
                }
                Ok(true)
            });
            if let Err(err) = &out {
                tracing::error!(name = %n, cause = %err, "the model migration failed; the current model stays");
            }
            *e.lock().unwrap_or_else(|x| x.into_inner()) = Some(out);
        });
        if let Err(err) = spawned {
            *ended.lock().unwrap_or_else(|x| x.into_inner()) = Some(Err(err.to_string()));
        }
        *current = Some(Running { name, progress, started: Instant::now(), ended, calibrated });
    }

    /// Stops a running migration (at shutdown; resumed at the next start).
    pub(crate) fn stop(&self) {
        if let Some(r) = self.current.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            r.progress.stop.store(true, SeqCst);
        }
    }

    /// For `status`.
    pub(crate) fn status(&self) -> Option<ModelMigration> {
        let current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        let r = current.as_ref()?;
        let (phase, done, total) = amber_engine::migration_snapshot(&r.progress);
        let ended = r.ended.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let (phase, error) = match ended {
            Some(Ok(true)) => ("done", None),
            Some(Ok(false)) => ("stopped", None),
            Some(Err(e)) => ("failed", Some(e)),
            None => (
                match phase {
                    0 => "loading",
                    1 => "embedding",
                    2 => "switching",
                    _ => "done",
                },
                None,
            ),
        };
        Some(ModelMigration {
            name: r.name.clone(),
            phase: phase.into(),
            done,
            total,
            seconds: r.started.elapsed().as_secs_f64(),
            error,
            calibrated: r.calibrated.lock().unwrap_or_else(|p| p.into_inner()).clone(),
        })
    }
}

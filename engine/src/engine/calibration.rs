//! The engine's side of per-model calibration ([`amber_core::calibration`]): the model
//! in force measured on [`UNRELATED`], kept with its model set and in the store.

use std::sync::Arc;

use amber_core::calibration::{Calibration, UNRELATED};

use super::Engine;
use super::models::Models;
use crate::Result;

/// Measures a model: the cosine of each text's query vector with every other text's
/// passage vector, a row per text.
fn measure(engine: &Engine, m: &Models) -> Result<Calibration> {
    let passages = engine.embed_texts(m, &UNRELATED)?;
    let mut rows = Vec::with_capacity(UNRELATED.len());
    for (i, text) in UNRELATED.iter().enumerate() {
        let q = engine.embed_query_with(m, text)?;
        let row = passages.iter().enumerate().filter(|(j, _)| *j != i);
        rows.push(row.map(|(_, p)| amber_retrieval::cosine(&q, p)).collect());
    }
    Ok(Calibration::from_rows(&m.id, &rows))
}

/// The metadata key of a model's calibration (in the embedding cache).
fn meta_key(model: &str) -> String {
    format!("calibration:{model}")
}

impl Engine {
    /// The calibration of the model in force: kept with the model set, read from the
    /// embedding cache's metadata (a property of the model, derived like its vectors),
    /// or measured (and kept there) the first time.
    pub fn calibration(&self) -> Result<Arc<Calibration>> {
        let m = self.models();
        if let Some(c) = m.calibration.get() {
            return Ok(c.clone());
        }
        // One measurement at a time: many first recalls at once wait for it.
        let _one = super::lock(&m.calibrating);
        if let Some(c) = m.calibration.get() {
            return Ok(c.clone());
        }
        let key = meta_key(&m.id);
        let stored =
            self.cache_read(|s| s.meta(&key))?.and_then(|s| serde_json::from_str::<Calibration>(&s).ok());
        let c = match stored {
            Some(c) if c.model == m.id && c.is_complete() => c,
            _ => {
                let c = measure(self, &m)?;
                tracing::info!(model = %c.model, mean = c.unrelated_mean, sd = c.unrelated_sd, "calibrated");
                // Kept for the next start; a cache that cannot be written now (a full
                // disk) keeps it in memory and measures again next time.
                if let Err(e) = self.keep_calibration(&c) {
                    tracing::warn!(cause = %e, "could not keep the calibration in the embedding cache");
                }
                c
            }
        };
        Ok(m.calibration.get_or_init(|| Arc::new(c)).clone())
    }

    /// Measures the model in force again, whatever is kept (`amber model use`).
    pub fn recalibrate(&self) -> Result<Arc<Calibration>> {
        let m = self.models();
        let c = measure(self, &m)?;
        self.keep_calibration(&c)?;
        let c = Arc::new(c);
        // A model set just switched to has none yet; one that has keeps it until the next.
        let _ = m.calibration.set(c.clone());
        Ok(c)
    }

    /// Keeps a calibration with the embedding cache, under its model's id.
    fn keep_calibration(&self, c: &Calibration) -> Result<()> {
        let kept = serde_json::to_string(c).unwrap_or_default();
        self.cache_write(|s| s.set_meta(&meta_key(&c.model), &kept))
    }
}

//! One module per benchmark: its arguments and its `run`. Each drives the product's own
//! code: the engine (`amber_engine::Engine`), the tiers' decision functions
//! (`amber_tiers`), or the daemon over its socket (`amber_ipc::Client`); what is its own
//! is data loading, simulation and reporting. Shared helpers are in [`crate::common`].

pub(crate) mod backup_bench;
pub(crate) mod bench;
pub(crate) mod briefing;
pub(crate) mod calibrate;
pub(crate) mod cold_start;
pub(crate) mod crosslingual;
pub(crate) mod curate;
pub(crate) mod fairness;
pub(crate) mod font;
pub(crate) mod ingest;
pub(crate) mod interject;
pub(crate) mod kg_bench;
pub(crate) mod lanes;
pub(crate) mod leads;
pub(crate) mod load;
pub(crate) mod locomo;
pub(crate) mod longmemeval;
pub(crate) mod migrate_bench;
pub(crate) mod mixed;
pub(crate) mod node;
pub(crate) mod plot;
pub(crate) mod scale;
pub(crate) mod standing;
#[cfg(feature = "team")]
pub(crate) mod team_bench;

//! `doctor`: the learning loop's health in one answer (no model call but one ping).

use amber_core::Scope;
use serde::{Deserialize, Serialize};

/// `doctor` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DoctorParams {
    /// Only this scope and those under it (default: every scope).
    #[serde(default)]
    pub scope: Option<Scope>,
    /// Do not ping the model (default false: one short call to see it answers).
    #[serde(default)]
    pub no_ping: bool,
}

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Health {
    /// As it should be.
    Ok,
    /// Working, but something wants doing.
    Warn,
    /// Broken: the loop does not run.
    Fail,
}

/// One line of `doctor`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// What was checked: `model`, `runs`, `judge`, `notes`, `skills`, `lift`.
    pub name: String,
    /// How it came out.
    pub health: Health,
    /// What was found, with its figures.
    pub found: String,
    /// What to do about it, when something wants doing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    /// The figures, by name.
    #[serde(default)]
    pub figures: serde_json::Map<String, serde_json::Value>,
}

/// `doctor` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DoctorResult {
    /// The scope looked at (None: every scope).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
    /// The checks, in a fixed order.
    pub checks: Vec<Check>,
}

//! `compile`: a scope's chosen documents compiled by the model into skills.

use std::path::PathBuf;

use amber_core::Scope;
use amber_tiers::advice::compile::{Dropped, FailedBatch};
use serde::{Deserialize, Serialize};

/// `compile` params.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompileParams {
    /// The working directory: the project (its root and scope) whose documents to compile.
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// The scope (default: the project's, from `cwd`).
    #[serde(default)]
    pub scope: Option<Scope>,
    /// Choose the scope's sources: path prefixes relative to the project root
    /// (`docs/runbooks/`). Only a person chooses them (the `amber` command outside an
    /// agent); an empty list turns compiling off. Absent: the ones chosen before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sources: Option<Vec<String>>,
    /// Choose what the scope's skills are compiled from: `documents` (the chosen
    /// sources) or `errors` (errors seen again and again in its memories). Only a person
    /// chooses it. Absent: the kind chosen before (documents at first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Compile every chosen document again, not only the new and changed ones.
    #[serde(default)]
    pub full: bool,
    /// Answer repeated model calls from the cache (default: `[learn] cache`).
    #[serde(default)]
    pub cache: Option<bool>,
}

/// A skill `compile` wrote.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillWritten {
    /// Its name.
    pub name: String,
    /// Its version (1 when new).
    pub version: u32,
    /// The paths it cites.
    pub cites: Vec<String>,
    /// The memory that holds it.
    pub memory_id: amber_core::MemoryId,
}

/// `compile` result.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CompileResult {
    /// The scope.
    pub scope: Scope,
    /// The chosen sources (path prefixes relative to the project root).
    pub sources: Vec<String>,
    /// Documents under them (ingested, still on disk).
    pub documents: usize,
    /// The documents sent to the model this time (new, changed, or read again because a
    /// skill citing a changed one cites them too).
    pub sent: Vec<String>,
    /// Skills written (new ones and new versions).
    pub skills: Vec<SkillWritten>,
    /// Skills the model gave that were not kept, and why (no source cited, a graph that
    /// fails validation, ...).
    pub dropped: Vec<Dropped>,
    /// Batches whose reply was malformed (their documents are sent again next time).
    pub failed: Vec<FailedBatch>,
    /// Skills retired because every document they cite is gone.
    pub retired: Vec<String>,
    /// Model calls made.
    pub calls: usize,
    /// Situations (learned from runs) linked to skills after the skills changed.
    #[serde(default)]
    pub linked: usize,
    /// What happened, in words.
    pub message: String,
}

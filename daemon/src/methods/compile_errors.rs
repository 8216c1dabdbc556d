//! `compile` of kind `errors`: procedures from error leads, when the person chooses it
//! (`amber compile --kind errors`). The scope's memories whose text carries an error
//! (`amber_tiers::leads::signature`) are grouped by the error's normalised signature;
//! each error seen at least [`MIN_SEEN`] times becomes one source for the compile model,
//! named `errors/<signature>`, its text the newest records of it. The rest of compiling
//! is as for documents: a source whose text changed (a new record of the error) is sent
//! again, a skill whose errors are all gone is retired, a skill is at most as trusted as
//! the least trusted record it rests on (captured content is `agent` or `external`).

use std::collections::BTreeMap;

use amber_core::Scope;
use amber_core::origin::Trust;
use amber_engine::Engine;
use amber_ipc::protocol::ErrorObject;
use amber_store::ListFilter;
use amber_tiers::advice::compile::Source;
use amber_tiers::leads::{query_text, signature};

use crate::rpc::engine_error;

/// The path prefix of an error source.
pub(crate) const ERRORS_PREFIX: &str = "errors/";
/// An error becomes a source once this many records carry it.
pub(crate) const MIN_SEEN: usize = 2;
/// The newest memories of the scope read.
const READ: usize = 20_000;
/// Records of one error in its source, newest first.
const RECORDS: usize = 8;
/// The most characters of one record.
const RECORD_CHARS: usize = 1_500;

/// The path of an error's source: its signature in lower-case words joined by `-`.
fn path_of(query: &str) -> String {
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .take(12)
        .collect();
    format!("{ERRORS_PREFIX}{}", words.join("-"))
}

/// The scope's recurring errors as compile sources, each with its SHA-256 and the trust
/// of its least trusted record. In path order.
pub(crate) fn error_sources(e: &Engine, scope: &Scope) -> Result<Vec<(Source, String, Trust)>, ErrorObject> {
    let memories =
        e.read_store(|s| s.scope_page(scope, &ListFilter::default(), None, 0, READ)).map_err(engine_error)?;
    let mut groups: BTreeMap<String, Vec<&amber_core::Memory>> = BTreeMap::new();
    for m in &memories {
        // Amber's own output (skills and the like, source `amber:…`) is not an error record.
        if m.source.as_deref().is_some_and(|s| s.starts_with("amber:")) {
            continue;
        }
        if let Some(sig) = signature(&m.content) {
            let q = query_text(&sig);
            if !q.trim().is_empty() {
                groups.entry(path_of(&q)).or_default().push(m);
            }
        }
    }
    let mut out = Vec::new();
    for (path, records) in groups {
        if records.len() < MIN_SEEN {
            continue;
        }
        let text: String = records
            .iter()
            .take(RECORDS)
            .enumerate()
            .map(|(i, m)| {
                let body: String = m.content.chars().take(RECORD_CHARS).collect();
                format!(
                    "record {} of {} (seen {} times):\n{body}\n\n",
                    i + 1,
                    records.len().min(RECORDS),
                    records.len()
                )
            })
            .collect();
        let trust = records
            .iter()
            .map(|m| amber_core::origin::trust_of(&m.metadata))
            .min()
            .unwrap_or(Trust::External);
        let source = Source { scope: scope.clone(), path, text };
        let sha = source.sha256();
        out.push((source, sha, trust));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_errors_path_is_its_signature_in_words() {
        assert_eq!(path_of("E0432 unresolved import  foo::bar"), "errors/e0432-unresolved-import-foo-bar");
    }
}

//! `amber import --from FORMAT PATH`: memory brought in from the tools people come from
//! (docs/IMPORT.md), one file a format, each read from that tool's own format as its
//! source and documentation give it:
//! - `markdown`: a folder of notes, through `ingest` ([`markdown`]);
//! - `claude-code`: Claude Code's memory files for a project ([`claude_code`]);
//! - `mem0`: Mem0's `get_all` JSON ([`mem0`]);
//! - `basic-memory`: a basic-memory project, observations and relations ([`basic_memory`]).
//!
//! What comes in is `external` (found by recall, never briefed nor interjected unasked)
//! unless the person says `--trust person`; the daemon stamps it so, with the tool
//! (`import:mem0`) in its origin, whatever the files claim. Secrets are redacted as for
//! any write. Ids derive from scope and content, so running it again files nothing twice.

mod basic_memory;
mod claude_code;
mod filing;
mod markdown;
mod mem0;

use std::path::Path;

use amber_ipc::Client;
use anyhow::Context;

pub(crate) use filing::{Format, Options, Report};

/// Imports `path` in `format` (not `amber`: that is `amber import FILE`'s own path) and
/// says what it found and did, once the indexes have caught up (recall finds it all).
pub(crate) fn run(
    format: Format,
    path: &Path,
    opts: &Options,
    client: &mut Client,
) -> anyhow::Result<Report> {
    let mut report = Report::new(format, opts);
    if !path.exists() {
        anyhow::bail!("{} does not exist", path.display());
    }
    // The scope: --scope, else the project of the working directory; for Claude Code the
    // project named (its user-level memory goes to `user`).
    let scope = match (&opts.scope, format) {
        (Some(s), _) => s.clone(),
        (None, Format::ClaudeCode) => {
            let dir =
                std::fs::canonicalize(path).with_context(|| format!("cannot read {}", path.display()))?;
            client.resolve_scope(&dir)?.scope
        }
        (None, _) => crate::scope::here(client)?.scope,
    };
    match format {
        Format::Amber => anyhow::bail!("an Amber export is read by `amber import FILE`"),
        Format::Markdown => markdown::run(client, path, &scope, opts, &mut report)?,
        Format::ClaudeCode => claude_code::run(client, path, &scope, opts, &mut report)?,
        Format::Mem0 => mem0::run(path, &scope, &mut filing::Filer::new(client, format, opts), &mut report)?,
        Format::BasicMemory => {
            basic_memory::run(path, &scope, &mut filing::Filer::new(client, format, opts), &mut report)?
        }
    }
    crate::progress::wait_indexed(client, &crate::progress::Progress::new(opts.json))?;
    Ok(report)
}

//! `amber compile`: the project's chosen documents compiled by the `[learn]` model into
//! skills (`compile` in docs/PROTOCOL.md). A person chooses the documents once
//! (`--sources`); after that, a compile (or an ingest that changes one of them) sends
//! only what is new or changed.

use amber_ipc::Client;
use amber_ipc::protocol::CompileResult;
use anyhow::Context;
use clap::Args;
use serde_json::json;

/// `amber compile`.
#[derive(Args, Debug)]
pub(crate) struct CompileArgs {
    /// Choose the documents: path prefixes under the project root (e.g. `docs/runbooks/`
    /// `docs/adr/`), ingested with `amber ingest`. Given once, kept; `--sources ''` turns
    /// compiling off. Never on by default.
    #[arg(long, num_args = 1.., value_name = "PREFIX")]
    sources: Option<Vec<String>>,
    /// What to compile skills from: `documents` (the chosen sources) or `errors`
    /// (procedures from errors seen again and again in this project's memories). Given
    /// once, kept.
    #[arg(long, value_parser = ["documents", "errors"])]
    kind: Option<String>,
    /// Compile every chosen document again, not only the new and changed ones.
    #[arg(long)]
    full: bool,
    /// Ask the model again even for calls answered before (no cache).
    #[arg(long)]
    no_cache: bool,
}

pub(crate) fn run(a: &CompileArgs, client: &mut Client, as_json: bool) -> anyhow::Result<()> {
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let sources: Option<Vec<String>> =
        a.sources.as_ref().map(|s| s.iter().filter(|x| !x.trim().is_empty()).cloned().collect());
    errln!("compiling this project's chosen sources into skills (a model call per batch) ...");
    // A model call per batch: give it the time it takes.
    client.set_timeout(None);
    let r: CompileResult = client.call(
        "compile",
        &json!({ "cwd": cwd, "sources": sources, "kind": a.kind, "full": a.full, "cache": !a.no_cache }),
    )?;
    if as_json {
        return crate::print_json(&r);
    }
    outln!("{}: {}", r.scope, r.message);
    if !r.sources.is_empty() {
        outln!("sources: {} ({} documents)", r.sources.join(", "), r.documents);
    }
    for s in &r.skills {
        outln!("  skill {} version {} · cites {}", s.name, s.version, s.cites.join(", "));
    }
    for d in &r.dropped {
        outln!("  dropped {}: {}", d.name, d.reason);
    }
    for f in &r.failed {
        outln!("  failed batch ({}): {}", f.paths.join(", "), f.reason);
    }
    for name in &r.retired {
        outln!("  retired {name}: its documents are gone");
    }
    Ok(())
}

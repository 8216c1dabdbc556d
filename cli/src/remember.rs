//! `amber remember`: file a memory from the command line.

use std::io::Read;

use amber_core::{MemoryType, NewMemory, Scope};
use amber_ipc::Client;
use amber_ipc::protocol::RememberParams;
use anyhow::Context;

use crate::{full_id, print_json, scope};

/// `amber remember`'s arguments.
#[derive(clap::Args, Debug)]
pub(crate) struct RememberArgs {
    /// The text to remember, or `-` for standard input.
    text: String,
    /// Where it lives [default: this project's scope (the repository root above the
    /// working directory, else the directory), or `default` outside any project].
    /// `user` is for what is true of you across projects.
    #[arg(long)]
    scope: Option<String>,
    /// intent, fact, pattern, invalidation, discovery, event or lifefact.
    #[arg(long = "type", default_value = "fact")]
    kind: String,
    /// Where it came from (a file, a tool, a URL).
    #[arg(long)]
    source: Option<String>,
    /// The agent filing it.
    #[arg(long)]
    author: Option<String>,
    /// The session filing it.
    #[arg(long)]
    session: Option<String>,
    /// Free metadata, a JSON object.
    #[arg(long, value_name = "JSON")]
    meta: Option<String>,
    /// With `--type invalidation`: a memory this one replaces (id or prefix; repeat
    /// for several). It leaves recall while this one stands.
    #[arg(long, value_name = "ID")]
    supersedes: Vec<String>,
    /// Who it is for: an agent's name, `all`, or `self` (your diary; needs --author).
    #[arg(long, value_name = "AGENT")]
    to: Option<String>,
    /// The memory it answers (id or prefix): it joins that memory's thread.
    #[arg(long, value_name = "ID")]
    reply_to: Option<String>,
    /// File secrets as given. By default secret-looking strings (keys, tokens,
    /// passwords) in the text, the source and the metadata are replaced by
    /// `[REDACTED:<kind>]` before anything is stored.
    #[arg(long)]
    keep_secrets: bool,
}

/// Files the memory and says what became of it.
pub(crate) fn run(args: &RememberArgs, client: &mut Client, json: bool) -> anyhow::Result<()> {
    let RememberArgs {
        text,
        scope,
        kind,
        source,
        author,
        session,
        meta,
        supersedes,
        to,
        reply_to,
        keep_secrets,
    } = args;
    let content = if text == "-" {
        let mut buf = Vec::new();
        std::io::stdin().read_to_end(&mut buf).context("reading standard input")?;
        String::from_utf8(buf).context("standard input is not valid UTF-8")?
    } else {
        text.clone()
    };
    let kind = kind.parse::<MemoryType>().context("--type")?;
    let explicit: Option<Scope> = scope.as_deref().map(str::parse).transpose().context("--scope")?;
    let scope = match explicit {
        Some(s) => s,
        None => scope::here(client)?.scope,
    };
    let mut m = NewMemory::new(content).in_scope(scope).of_type(kind);
    m.source = source.clone();
    m.author = author.clone();
    m.session_id = session.clone();
    if let Some(meta) = meta {
        m.metadata = serde_json::from_str(meta).context("--meta is not JSON")?;
    }
    for id in supersedes {
        m.supersedes.push(full_id(client, id).context("--supersedes")?);
    }
    m.to = to.clone();
    if let Some(r) = reply_to {
        m.reply_to = Some(full_id(client, r).context("--reply-to")?);
    }
    m.validate()?;
    let scope = m.scope.clone();
    let r = client.remember_with(&RememberParams { memory: m, allow_secrets: *keep_secrets })?;
    if json {
        print_json(&r)?;
    } else {
        if r.created {
            outln!("remembered {} in {scope}", r.id);
        } else {
            outln!("already remembered as {} in {scope}", r.id);
        }
        if r.redacted > 0 {
            let s = if r.redacted == 1 { "" } else { "s" };
            errln!(
                "amber: {} secret{s} redacted before storing (--keep-secrets files them as given)",
                r.redacted
            );
        }
    }
    Ok(())
}

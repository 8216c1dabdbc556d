//! `amber scopes`, `amber scope here|move`, and the scope of the working directory.

use amber_ipc::Client;
use anyhow::Context;
use clap::Subcommand;

use crate::print_json;

#[derive(Subcommand, Debug)]
pub(crate) enum ScopeAction {
    /// Re-file every memory of FROM (and the scopes below it) into TO, verbatim. Their
    /// ids change (an id derives from scope and content); `get` of an old id says the new
    /// one. Links, graph mentions and fact sources follow; session records keep the ids
    /// they were served under.
    Move {
        /// The scope to empty (e.g. `default`).
        from: String,
        /// The scope to file into (e.g. `project/app-1a2b3c4d`, as `amber scopes` shows).
        to: String,
    },
    /// The scope this directory files into and searches.
    Here,
}

/// The scope of the working directory, as the daemon's one resolver says.
pub(crate) fn here(client: &mut Client) -> anyhow::Result<amber_ipc::protocol::ResolveScopeResult> {
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    Ok(client.resolve_scope(&cwd)?)
}

/// `amber scopes`: every scope with its memory count and, for a project, its root.
pub(crate) fn list(client: &mut Client, json: bool) -> anyhow::Result<()> {
    let r = client.scopes()?;
    if json {
        print_json(&r)?;
    } else if r.scopes.is_empty() {
        outln!("no scopes yet");
    } else {
        let width = r.scopes.iter().map(|s| s.scope.len()).max().unwrap_or(0);
        for s in &r.scopes {
            let root = s.root.as_deref().map(|r| format!("  {r}")).unwrap_or_default();
            outln!("{:<width$}  {:>7}{root}", s.scope, s.memories);
        }
    }
    Ok(())
}

/// `amber scope move|here`.
pub(crate) fn run(action: &ScopeAction, client: &mut Client, json: bool) -> anyhow::Result<()> {
    match action {
        ScopeAction::Move { from, to } => {
            let p = amber_ipc::protocol::ScopeMoveParams {
                from: from.parse().context("FROM")?,
                to: to.parse().context("TO")?,
            };
            let r = client.scope_move(&p)?;
            if json {
                print_json(&r)?;
            } else {
                outln!(
                    "moved {} memories from {} to {} ({} were already there and were merged)",
                    r.moved,
                    p.from,
                    p.to,
                    r.merged
                );
            }
        }
        ScopeAction::Here => {
            let r = here(client)?;
            if json {
                print_json(&r)?;
            } else {
                match &r.root {
                    Some(root) => outln!("{} (project root {})", r.scope, root.display()),
                    None => outln!("{} (outside any project)", r.scope),
                }
                let names: Vec<String> = r.search.iter().map(|s| s.to_string()).collect();
                outln!("recall searches {}", names.join(" + "));
            }
        }
    }
    Ok(())
}

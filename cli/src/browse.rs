//! `amber move` and `amber list`: one memory re-filed into another scope, and a scope's
//! memories a page at a time (the person's; the web view offers the same).

use amber_ipc::Client;
use amber_ipc::protocol::{MAX_PAGE, MemoriesParams, MemoryMoveParams, method};
use anyhow::Context;
use clap::Subcommand;

use crate::{check_id, print_json};

/// The commands.
#[derive(Subcommand, Debug)]
pub(crate) enum BrowseCommand {
    /// Re-file one memory into another scope, verbatim. Its id changes (an id derives
    /// from scope and content); `get` of the old id says the new one. Its outcome log,
    /// links, graph mentions and thread follow; the same text already there is merged.
    Move {
        /// The memory id or a prefix of it.
        id: String,
        /// The scope to file it into (as `amber scopes` shows them).
        scope: String,
    },
    /// A scope's memories, newest filed first, a page at a time (its own, not those of
    /// the scopes below it).
    List {
        /// The scope.
        scope: String,
        /// At most this many (1 to 200).
        #[arg(long, default_value_t = amber_ipc::protocol::DEFAULT_PAGE)]
        limit: usize,
        /// Start after this cursor (the `next` an earlier page printed).
        #[arg(long, value_name = "CURSOR")]
        before: Option<u64>,
        /// Forgotten and archived memories too.
        #[arg(long)]
        include_forgotten: bool,
        /// Only memories filed so: person, promoted, agent, document, skill, reference, raw
        /// (repeatable).
        #[arg(long, value_name = "FILING")]
        filing: Vec<String>,
        /// Only memories of this type.
        #[arg(long = "type", value_name = "TYPE")]
        kind: Option<String>,
        /// Only memories trusted this far: person, agent or external.
        #[arg(long)]
        trust: Option<String>,
    },
}

/// A trust level from the command line; `what` names the argument in the error.
pub(crate) fn trust(what: &str, s: &str) -> anyhow::Result<amber_core::origin::Trust> {
    use amber_core::origin::Trust;
    Ok(match s {
        "person" => Trust::Person,
        "agent" => Trust::Agent,
        "external" => Trust::External,
        other => anyhow::bail!("{what} must be person, agent or external, got {other:?}"),
    })
}

/// Runs a command.
pub(crate) fn run(cmd: &BrowseCommand, client: &mut Client, json: bool) -> anyhow::Result<()> {
    match cmd {
        BrowseCommand::Move { id, scope } => {
            check_id(id)?;
            let to = scope.parse().context("SCOPE")?;
            let r = client.send::<method::MemoryMove>(&MemoryMoveParams { id: id.clone(), to })?;
            if json {
                print_json(&r)?;
            } else if r.merged {
                outln!(
                    "{} → {} in {} (the same text was already there: merged)",
                    r.old_id,
                    r.new_id,
                    r.scope
                );
            } else {
                outln!("{} → {} in {}", r.old_id, r.new_id, r.scope);
            }
        }
        BrowseCommand::List { scope, limit, before, include_forgotten, filing, kind, trust: t } => {
            if *limit == 0 || *limit > MAX_PAGE {
                anyhow::bail!("--limit must be 1 to {MAX_PAGE}, got {limit}");
            }
            let mut p = MemoriesParams::of(scope.parse().context("SCOPE")?);
            p.limit = Some(*limit);
            p.before = *before;
            p.include_forgotten = *include_forgotten;
            p.filings = filing.iter().map(|f| f.parse()).collect::<Result<_, _>>().context("--filing")?;
            p.kind = kind.as_deref().map(str::parse).transpose().context("--type")?;
            p.trust = t.as_deref().map(|t| trust("--trust", t)).transpose()?;
            let r = client.send::<method::Memories>(&p)?;
            if json {
                print_json(&r)?;
                return Ok(());
            }
            for m in &r.memories {
                let mut state = String::new();
                if m.forgotten {
                    state.push_str(" (forgotten)");
                } else if m.archived {
                    state.push_str(" (archived)");
                }
                // A document section: its file and headings before its first line.
                let mut trail: Vec<&str> = m.file.iter().map(String::as_str).collect();
                trail.extend(m.headings.iter().map(String::as_str));
                let trail =
                    if trail.is_empty() { String::new() } else { format!("{}: ", trail.join(" › ")) };
                outln!(
                    "{} {} {} {} {} {:.2}{state}  {trail}{}",
                    m.id,
                    crate::when::local(m.created),
                    m.kind,
                    m.filing,
                    m.trust.as_str(),
                    m.weight,
                    m.first_line
                );
            }
            match r.next {
                Some(next) => {
                    let mut again = format!("amber list {scope} --before {next}");
                    for f in filing {
                        again.push_str(&format!(" --filing {f}"));
                    }
                    if let Some(k) = kind {
                        again.push_str(&format!(" --type {k}"));
                    }
                    if let Some(t) = t {
                        again.push_str(&format!(" --trust {t}"));
                    }
                    if *include_forgotten {
                        again.push_str(" --include-forgotten");
                    }
                    outln!("older: {again}")
                }
                None if r.memories.is_empty() => outln!("no memories in {scope}"),
                None => {}
            }
        }
    }
    Ok(())
}

//! `amber recall`: search memories and show each hit with why it was chosen (ranks,
//! scores, standing) and, for a document chunk, where its text is in its file now.

use amber_core::{Scope, SearchMode};
use amber_ipc::Client;
use amber_ipc::protocol::RecallParams;
use anyhow::Context;
use clap::Args;

use crate::scope::here;
use crate::{one_line, print_json};

/// `amber recall`.
#[derive(Args, Debug)]
pub(crate) struct RecallArgs {
    /// What to look for.
    pub(crate) query: String,
    /// Only this scope and the scopes under it [default: this project's scope and
    /// `user`, as one ranking].
    #[arg(long, conflicts_with = "all_scopes")]
    scope: Option<String>,
    /// Search every scope.
    #[arg(long)]
    all_scopes: bool,
    /// How many results.
    #[arg(long, short = 'k', default_value_t = 5)]
    k: usize,
    /// hybrid, bm25 or vector.
    #[arg(long, default_value = "hybrid")]
    mode: String,
    /// Include archived memories (marked so).
    #[arg(long)]
    archived: bool,
    /// Fill k even with weak matches: no relevance floor (by default a hit that matches
    /// no better than unrelated text does is left out).
    #[arg(long)]
    no_floor: bool,
}

pub(crate) fn run(args: &RecallArgs, client: &mut Client, json: bool) -> anyhow::Result<()> {
    let RecallArgs { query, scope, all_scopes, k, mode, archived, no_floor } = args;
    let mut p = RecallParams::new(query.clone());
    p.k = Some(*k);
    p.archived = archived.then_some(true);
    p.floor = Some(!no_floor);
    p.mode = Some(mode.parse::<SearchMode>()?);
    if let Some(s) = scope {
        p.scope = Some(s.parse().context("--scope")?);
    }
    p.query().validate()?;
    let mut unsearched_default = 0;
    if scope.is_none() && !all_scopes {
        let mut search = here(client)?.search.into_iter();
        p.scope = search.next();
        p.also = search.collect();
        // Memories an older Amber filed under `default` are not hidden: say so.
        let default = Scope::default();
        if p.scope.as_ref() != Some(&default) && !p.also.contains(&default) {
            unsearched_default = client
                .scopes()?
                .scopes
                .iter()
                .filter(|s| s.scope == default.as_str() || s.scope.starts_with("default/"))
                .map(|s| s.memories)
                .sum::<u64>();
        }
    }
    let result = client.recall(&p)?;
    if let Some(why) = &result.team_unavailable {
        errln!("amber: the team scopes were not searched: {why}");
    }
    // An answer that may miss recent writes, or ranked without vectors, says so.
    if let Some(why) = &result.degraded {
        errln!("amber: ranked by words only (BM25), the embedding model is away: {why}");
    } else if !result.fresh {
        errln!(
            "amber: not fresh: the indexes are still catching up with recent writes, so the newest \
             memories may be missing (`amber status` shows the backlog)"
        );
    }
    if json {
        print_json(&result)?;
        return Ok(());
    }
    let hits = result.hits;
    let disputed = result.disputed;
    if unsearched_default > 0 && !json {
        let searched: Vec<String> = p.scope.iter().chain(p.also.iter()).map(|s| s.to_string()).collect();
        errln!(
            "amber: searched {}; {unsearched_default} memories in `default` were not \
(--scope default or --all-scopes; `amber scope move default {}` gives them to this project)",
            searched.join(" + "),
            p.scope.as_ref().map(|s| s.to_string()).unwrap_or_default()
        );
    }
    if hits.is_empty() {
        let floor = !no_floor && result.degraded.is_none();
        outln!(
            "{}",
            if floor { "no good match (nothing above the relevance floor)" } else { "no memories match" }
        );
        if !result.elsewhere.is_empty() {
            let names: Vec<String> = result.elsewhere.iter().map(|s| s.to_string()).collect();
            outln!(
                "better matches are in {} (--scope {} or --all-scopes)",
                names.join(", "),
                result.elsewhere[0]
            );
        } else if floor {
            outln!("(--no-floor lists the closest anyway)");
        }
    } else {
        for (i, h) in hits.iter().enumerate() {
            outln!("{}. {}", i + 1, headline(h, &disputed));
            if let Some(place) = &h.place {
                outln!("   at {}", place.describe());
            }
            outln!("   {}", one_line(&h.memory.content, 240));
        }
    }
    Ok(())
}

/// A hit's line: its id, scope, type and origin, and every term that moved its score.
fn headline(h: &amber_core::Hit, disputed: &[amber_ipc::protocol::DisputedHit]) -> String {
    let e = &h.evidence;
    let mut why = vec![format!("fused {:.4}", e.fused)];
    if let (Some(r), Some(s)) = (e.bm25_rank, e.bm25_score) {
        why.push(format!("bm25 #{r} {s:.2}"));
    }
    if let (Some(r), Some(c)) = (e.vector_rank, e.best_chunk_cosine) {
        why.push(format!("vector #{r} cos {c:.3}"));
    }
    if let Some(r) = e.exact_rank {
        why.push(format!("exact #{r}"));
    }
    if let Some(r) = e.time_rank {
        why.push(format!("time #{r}"));
    }
    if let Some(r) = e.graph_rank {
        why.push(format!("graph #{r}"));
    }
    if let Some(b) = e.session_bonus {
        why.push(format!("session +{b:.4}"));
    }
    if let Some(b) = e.neighbour_bonus {
        why.push(format!("neighbour +{b:.4}"));
    }
    let st = &e.standing;
    why.push(format!("weight {:.2} age {:.2}", st.weight, st.age_factor));
    if let Some(f) = st.filing {
        why.push(format!("{f} x{:.2}", st.filing_factor));
    }
    why.push(format!("prior {:.3}", st.prior));
    if st.successes + st.failures > 0 {
        why.push(format!("{} successes {} failures", st.successes, st.failures));
    }
    if st.archived {
        why.push("archived".into());
    }
    if !h.memory.supersedes.is_empty() {
        let s: Vec<&str> = h.memory.supersedes.iter().map(|i| &i.as_str()[..8]).collect();
        why.push(format!("supersedes {}", s.join(", ")));
    }
    if let Some(d) = disputed.iter().find(|d| d.id == h.memory.id) {
        let s: Vec<&str> = d.by.iter().map(|i| &i.as_str()[..8]).collect();
        why.push(format!("disputed by {}", s.join(", ")));
    }
    let from = amber_core::origin::label(&h.memory.metadata, h.memory.author.as_deref());
    format!("{} [{}] {} from {from} ({})", h.memory.id, h.memory.scope, h.memory.kind, why.join(" · "))
}

//! `amber session show`: a session's record, printed.

/// A session's record for a person to read.
pub(crate) fn print(r: &amber_ipc::protocol::SessionResult) {
    let s = &r.session;
    let state = if r.live {
        "live".to_string()
    } else {
        format!("ended ({})", s.end_reason.as_deref().unwrap_or("?"))
    };
    outln!("session {} · {} · {} · scope {}", s.id, s.agent, state, s.scope);
    if let Some(root) = &s.project_root {
        outln!("project {}", root.display());
    }
    outln!(
        "{} events · {} tool uses · {} served · {} captured · context {}",
        s.events,
        s.tool_uses,
        s.served.len(),
        s.captured.len(),
        s.context
    );
    if !s.also.is_empty() {
        let also: Vec<String> = s.also.iter().map(|x| x.to_string()).collect();
        outln!("also searches {}", also.join(", "));
    }
    if let Some(at) = s.checkpoint.blocked_at {
        outln!(
            "checkpoint: asked at {} after {} tool uses · {}{}",
            crate::when::local(at),
            s.checkpoint.tool_uses,
            s.checkpoint.outcome.as_deref().unwrap_or("no answer yet"),
            s.checkpoint.decline.as_deref().map(|d| format!(": {d}")).unwrap_or_default()
        );
    }
    if !s.served.is_empty() {
        outln!("served:");
        for x in &s.served {
            outln!("  {} {:?} (context {}) score {:.3}: {}", x.id, x.tier, x.context, x.score, x.why);
        }
    }
    let fired = s.decisions.iter().filter(|d| d.fired).count();
    if !s.decisions.is_empty() {
        outln!("interjection decisions ({} fired of {}):", fired, s.decisions.len());
        for d in &s.decisions {
            let best = d.best.map(|b| format!(" best {b:.3}")).unwrap_or_default();
            outln!(
                "  event {}: {} ({:?}{best})",
                d.event,
                if d.fired { "fired" } else { "silent" },
                d.reason
            );
        }
    }
    if let Some(task) = &s.run.task {
        outln!("task: {}", crate::one_line(task, 100));
    }
    for g in &s.run.advice {
        let reread =
            if g.reread.is_empty() { String::new() } else { format!(" (re-read: {})", g.reread.join(", ")) };
        outln!("advice given: {} version {}{reread}", g.situation, g.version);
    }
    if !s.run.runs.is_empty() {
        outln!("recorded as run{}: {}", if s.run.runs.len() == 1 { "" } else { "s" }, s.run.runs.join(", "));
    }
    if let Some(c) = &s.curation {
        outln!(
            "curation: {} examined · {} exact duplicates collapsed · {} near duplicates · {} related · {} links added",
            c.examined,
            c.collapsed,
            c.near_duplicates.len(),
            c.related.len(),
            c.links_added
        );
    }
}

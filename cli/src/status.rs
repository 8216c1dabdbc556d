//! `amber status` and `amber daemon status`: the daemon's state, printed.

use std::process::ExitCode;

use amber_ipc::Config;
use serde_json::{Value, json};

/// `amber status` when the config file cannot be used: says so, and what that means
/// (Amber's hooks do nothing, and say so; other commands refuse to run), then what a
/// daemon answering on the socket the defaults and the environment name says (`status`:
/// the caller asks it, starting no daemon). Exits 1.
pub(crate) fn config_error(
    cfg: &Config,
    error: &str,
    as_json: bool,
    status: anyhow::Result<amber_ipc::protocol::StatusResult>,
) -> ExitCode {
    let socket = cfg.socket_path();
    if as_json {
        let mut v =
            status.as_ref().ok().and_then(|st| serde_json::to_value(st).ok()).unwrap_or_else(|| json!({}));
        v["config_error"] = json!(error);
        let _ = crate::print_json(&v);
        return ExitCode::FAILURE;
    }
    let mut lines = error.lines();
    outln!("config       INVALID: {}", lines.next().unwrap_or_default());
    for l in lines {
        outln!("             {l}");
    }
    outln!(
        "             Amber is off until it is fixed: its Claude Code hooks do nothing (each logs why in {}, \
         and the person is told once per session); other amber commands refuse to run.",
        cfg.state_dir.join("logs").join("hooks.log").display()
    );
    match status {
        Ok(st) => {
            outln!(
                "a daemon answers on {} (the socket named without the file: flags, environment, defaults):",
                socket.display()
            );
            print(&st);
        }
        Err(_) => outln!(
            "daemon       none answers on {} (the socket named without the file: flags, environment, defaults; the file may name another)",
            socket.display()
        ),
    }
    ExitCode::FAILURE
}

/// The daemon's status for a person to read.
pub(crate) fn print(st: &amber_ipc::protocol::StatusResult) {
    let e = &st.engine;
    let s = |k: &str| match &e[k] {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    };
    outln!(
        "daemon       amberd {} (pid {}, up {:.0}s, protocol {})",
        st.version,
        st.pid,
        st.uptime_seconds,
        st.protocol_version
    );
    outln!("socket       {}", st.socket);
    outln!("data dir     {}", s("data_dir"));
    outln!("memories     {} in {} scopes ({} forgotten)", s("memories"), s("scopes"), s("forgotten"));
    if let (Some(raw), Some(all)) = (e["raw_captures"].as_u64(), e["memories"].as_u64())
        && all > 0
    {
        outln!(
            "raw captures {raw} of them ({:.0}%): prompts, tool output, transcripts; recall finds them, briefings never",
            100.0 * raw as f64 / all as f64
        );
    }
    outln!("model        {} ({} dimensions, chunks {})", s("model"), s("dim"), s("chunking"));
    if let Some(m) = &st.model_migration {
        outln!("migration    {}", crate::model::line(m));
    }
    outln!("bm25 index   {} documents", s("bm25_docs"));
    outln!("vector index {} vectors ({} cached)", s("vectors"), s("cached_vectors"));
    let complete = e["indexes_complete"].as_bool().unwrap_or(false);
    outln!("indexes      {}", if complete { "complete" } else { "catching up" });
    outln!("clients      {} connected, {} writes queued", st.connections, st.queue_depth);
    for ev in e["index_events"].as_array().into_iter().flatten() {
        outln!("at open      {}", ev.as_str().unwrap_or_default());
    }
    for d in e["degraded"].as_array().into_iter().flatten() {
        let part = d["part"].as_str().unwrap_or_default();
        outln!(
            "degraded     {part}: {} ({} failed attempts)",
            d["message"].as_str().unwrap_or_default(),
            d["failures"]
        );
    }
    if let Some(t) = &st.team {
        let scopes = t.scopes.join(", ");
        match (&t.engine, &t.trouble) {
            (Some(te), None) => outln!(
                "team         {} ({scopes}): connected, {} memories, {} vectors, indexes {}",
                t.location,
                te["memories"],
                te["vectors"],
                if te["indexes_complete"].as_bool().unwrap_or(false) { "complete" } else { "catching up" }
            ),
            (_, trouble) => outln!(
                "team         {} ({scopes}): NOT CONNECTED for {:.0}s: {} (team scopes answer team_unavailable; local scopes work)",
                t.location,
                t.trouble_seconds.unwrap_or(0.0),
                trouble.as_deref().unwrap_or("no answer")
            ),
        }
    }
    if let Some(src) = &st.sources {
        let paths: Vec<String> = src.watching.iter().map(|p| p.display().to_string()).collect();
        outln!(
            "sources      {}: {}, {} files brought in step{}",
            if paths.is_empty() { "none readable".to_string() } else { paths.join(", ") },
            if src.ready { "watching" } else { "first pass" },
            src.files,
            src.last_change.map(|t| format!(", last change {}", crate::when::local(t))).unwrap_or_default()
        );
        for u in &src.unreadable {
            outln!("             cannot read {u}");
        }
        if let Some(e) = &src.last_error {
            outln!("             last error: {e}");
        }
    }
}

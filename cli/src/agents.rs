//! Registered agent names on the client side: `amber agent register NAME` asks the daemon
//! for a token and writes it to `<state_dir>/agents/NAME.token` (0600, in a 0700
//! folder), where that agent's clients (Amber's Claude Code hooks and MCP server for
//! `claude-code`) read it and give it at `session_start`.

use std::path::PathBuf;

use amber_ipc::Config;
use anyhow::Context;

/// Where an agent's token is kept.
pub(crate) fn token_path(cfg: &Config, name: &str) -> PathBuf {
    cfg.state_dir.join("agents").join(format!("{name}.token"))
}

/// The agent's token, when it was registered here.
pub(crate) fn token(cfg: &Config, name: &str) -> Option<String> {
    let t = std::fs::read_to_string(token_path(cfg, name)).ok()?;
    let t = t.trim().to_string();
    (!t.is_empty()).then_some(t)
}

/// Registers the name with the daemon and writes its token; returns where.
pub(crate) fn register(client: &mut amber_ipc::Client, cfg: &Config, name: &str) -> anyhow::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let p = amber_ipc::protocol::AgentRegisterParams { name: name.to_string() };
    let r = client.send::<amber_ipc::protocol::method::AgentRegister>(&p)?;
    let path = token_path(cfg, &r.name);
    let dir = path.parent().context("a token path has a folder")?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("creating {}", dir.display()))?;
    // The token it replaces is kept beside it, for `amber agent restore NAME`.
    if path.exists() {
        std::fs::rename(&path, previous_path(&path))
            .with_context(|| format!("keeping {}", path.display()))?;
    }
    amber_core::paths::write_private(&path, r.token.as_bytes())
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

/// Where the token a registration replaced is kept.
fn previous_path(token: &std::path::Path) -> PathBuf {
    token.with_extension("token.previous")
}

/// Undoes the last registration of `name` (within a week): the daemon takes the replaced
/// token back, and its file is the name's token file again (the undone one kept beside
/// it, so a restore can be undone the same way). Returns when the restored token had
/// been retired.
pub(crate) fn restore(client: &mut amber_ipc::Client, cfg: &Config, name: &str) -> anyhow::Result<i64> {
    let p = amber_ipc::protocol::AgentRegisterParams { name: name.to_string() };
    let r = client.send::<amber_ipc::protocol::method::AgentRestore>(&p)?;
    let path = token_path(cfg, &r.name);
    let previous = previous_path(&path);
    if previous.exists() {
        let swap = path.with_extension("token.swap");
        if path.exists() {
            std::fs::rename(&path, &swap).with_context(|| format!("moving {}", path.display()))?;
        }
        std::fs::rename(&previous, &path).with_context(|| format!("restoring {}", path.display()))?;
        if swap.exists() {
            std::fs::rename(&swap, &previous).with_context(|| format!("keeping {}", previous.display()))?;
        }
    } else {
        errln!(
            "amber: the daemon took {name}'s previous token back, but {} is gone: its clients need a new one (`amber agent register {name}`)",
            previous.display()
        );
    }
    Ok(r.retired_at)
}

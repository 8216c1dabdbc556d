//! `amber install|uninstall gemini`: Amber's hooks and its MCP server in Gemini CLI's
//! settings.json (`~/.gemini/settings.json`, or the project's `.gemini/settings.json`
//! with `--project`), and the agent name `gemini`; each step reported.
//!
//! Gemini CLI runs no hook and no MCP server in a folder the person has not trusted
//! (its folder trust is on by default): that is the person's answer to Gemini's own
//! question, and the install says so rather than trusting folders for them.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde_json::{Value, json};

use crate::hooks::settings::{self, HookSpec, edit_settings};

/// How Gemini CLI takes Amber's hooks (timeouts in milliseconds; no matcher: every
/// tool; a name, which Gemini lists hooks by).
pub(crate) const SPEC: HookSpec = HookSpec {
    runtime: super::AGENT,
    events: super::EVENTS,
    timeout: 10_000,
    tool_events: &[],
    name: Some("amber"),
};

/// The settings file: `<cwd>/.gemini/settings.json` for a project, else
/// `$GEMINI_CLI_HOME/.gemini/settings.json` (`~` when unset).
pub fn settings_path(project: bool) -> anyhow::Result<PathBuf> {
    let base = match project {
        true => std::env::current_dir()?,
        false => match std::env::var_os("GEMINI_CLI_HOME").filter(|h| !h.is_empty()) {
            Some(h) => PathBuf::from(h),
            None => settings::home()?,
        },
    };
    Ok(base.join(".gemini").join("settings.json"))
}

/// True for an `mcpServers` entry that runs `amber mcp` (an earlier install's).
fn is_ours(server: &Value) -> bool {
    let command = server.get("command").and_then(Value::as_str).unwrap_or("");
    Path::new(command).file_name().is_some_and(|n| n == "amber")
        && server.get("args") == Some(&json!(["mcp"]))
}

/// Adds (or brings up to date) `mcpServers.amber`. Returns 1 when the settings changed.
fn merge_mcp(settings: &mut Value, amber: &Path) -> anyhow::Result<usize> {
    let obj = settings.as_object_mut().context("settings.json is not a JSON object")?;
    let servers = obj.entry("mcpServers").or_insert_with(|| json!({}));
    let servers = servers.as_object_mut().context("mcpServers in settings.json is not an object")?;
    let ours = json!({ "command": amber.display().to_string(), "args": ["mcp"] });
    match servers.get("amber") {
        Some(s) if *s == ours => Ok(0),
        Some(s) if !is_ours(s) => {
            anyhow::bail!("settings.json has an MCP server named amber that Amber did not write: left alone")
        }
        _ => {
            servers.insert("amber".into(), ours);
            Ok(1)
        }
    }
}

/// Removes `mcpServers.amber` when it is Amber's. Returns how many entries went.
fn remove_mcp(settings: &mut Value) -> usize {
    let Some(servers) = settings.get_mut("mcpServers").and_then(Value::as_object_mut) else { return 0 };
    if !servers.get("amber").is_some_and(is_ours) {
        return 0;
    }
    servers.remove("amber");
    if servers.is_empty()
        && let Some(o) = settings.as_object_mut()
    {
        o.remove("mcpServers");
    }
    1
}

/// `amber install gemini`.
pub fn install(
    project: bool,
    register_agent: impl FnOnce() -> anyhow::Result<PathBuf>,
) -> anyhow::Result<()> {
    let path = settings_path(project)?;
    let exe = std::env::current_exe().context("cannot find this executable's path")?;
    let (n, backup) = edit_settings(&path, |s| {
        let hooks = settings::merge_hooks(s, &exe, &SPEC)?;
        let mcp = merge_mcp(s, &exe).unwrap_or_else(|e| {
            errln!("amber: {e}");
            0
        });
        Ok(hooks + mcp)
    })?;
    match n {
        0 => outln!("Amber's Gemini CLI hooks and MCP server are already in {}", path.display()),
        n => outln!("added {n} Amber entries (hooks and its MCP server) to {}", path.display()),
    }
    if let Some(b) = backup {
        outln!("the previous settings are in {}", b.display());
    }
    outln!(
        "Gemini CLI runs hooks and MCP servers only in folders you trust: answer its \"Do you trust this folder?\" for each project"
    );
    match register_agent() {
        Ok(path) => outln!("registered the agent name gemini (its token is in {})", path.display()),
        Err(e) => {
            errln!(
                "amber: the agent name gemini is not registered ({e:#}); run `amber agent register gemini` later"
            )
        }
    }
    Ok(())
}

/// `amber uninstall gemini`: exactly Amber's hooks and MCP server.
pub fn uninstall(project: bool) -> anyhow::Result<()> {
    let path = settings_path(project)?;
    let (n, backup) = edit_settings(&path, |s| Ok(settings::remove_hooks(s, SPEC.runtime) + remove_mcp(s)))?;
    match n {
        0 => outln!("no Amber entries in {}", path.display()),
        n => outln!("removed {n} Amber entries (hooks and its MCP server) from {}", path.display()),
    }
    if let Some(b) = backup {
        outln!("the previous settings are in {}", b.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn install_keeps_the_persons_settings_and_uninstall_removes_exactly_ambers() {
        let original = json!({
            "security": { "auth": { "selectedType": "gemini-api-key" } },
            "hooks": { "AfterTool": [{ "matcher": "write_file", "hooks": [{ "name": "fmt", "type": "command", "command": "prettier" }] }] },
            "mcpServers": { "docs": { "command": "docs-mcp" } }
        });
        let mut s = original.clone();
        let amber = Path::new("/opt/amber/bin/amber");
        let n = settings::merge_hooks(&mut s, amber, &SPEC).unwrap() + merge_mcp(&mut s, amber).unwrap();
        assert_eq!(n, SPEC.events.len() + 1);
        assert_eq!(
            settings::merge_hooks(&mut s, amber, &SPEC).unwrap() + merge_mcp(&mut s, amber).unwrap(),
            0
        );
        let entry = &s["hooks"]["BeforeAgent"][0]["hooks"][0];
        assert_eq!(entry["command"], "/opt/amber/bin/amber hook gemini BeforeAgent");
        assert_eq!((entry["timeout"].as_u64(), entry["name"].as_str()), (Some(10_000), Some("amber")));
        assert_eq!(s["mcpServers"]["amber"], json!({ "command": "/opt/amber/bin/amber", "args": ["mcp"] }));
        // A moved amber replaces its own entry.
        assert_eq!(merge_mcp(&mut s, Path::new("/usr/bin/amber")).unwrap(), 1);
        assert_eq!(settings::remove_hooks(&mut s, "gemini") + remove_mcp(&mut s), SPEC.events.len() + 1);
        assert_eq!(s, original, "uninstall restores the settings exactly");
        let mut foreign = json!({ "mcpServers": { "amber": { "command": "npx", "args": ["other-amber"] } } });
        assert!(merge_mcp(&mut foreign, amber).is_err());
        assert_eq!(remove_mcp(&mut foreign), 0);
    }
}

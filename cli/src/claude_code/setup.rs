//! `amber install|uninstall claude-code` as commands: Amber's entries in Claude Code's
//! settings.json, its MCP server registered user-wide, and the agent name `claude-code`,
//! each step reported (a step that cannot be done says what to run instead).

use std::path::PathBuf;

use anyhow::Context;

use super::register::{Registered, command_line, register, unregister};

/// Installs into the user's settings (or this project's with `project`), registers the
/// MCP server user-wide, then the agent name (`register_agent`: where its token went).
pub fn install(
    project: bool,
    register_agent: impl FnOnce() -> anyhow::Result<PathBuf>,
) -> anyhow::Result<()> {
    let path = super::settings_path(project)?;
    let exe = std::env::current_exe().context("cannot find this executable's path")?;
    let (n, backup) = super::edit_settings(&path, |s| super::install(s, &exe))?;
    if n == 0 {
        outln!("Amber's Claude Code hooks and permission rules are already in {}", path.display());
    } else {
        outln!(
            "added {n} Amber entries (hooks, and permission rules for its agent tools) to {}",
            path.display()
        );
        if let Some(b) = backup {
            outln!("the previous settings are in {}", b.display());
        }
    }
    // The MCP server, user-wide: every project gets Amber's tools.
    match register(&exe) {
        Registered::Added => outln!(
            "registered Amber's MCP server with Claude Code user-wide ({}): its tools are in every project",
            command_line(&exe)
        ),
        Registered::Already => outln!("Amber's MCP server is already registered with Claude Code user-wide"),
        Registered::Replaced(before) => outln!(
            "registered Amber's MCP server with Claude Code user-wide again (it ran {before}, now {} mcp)",
            exe.display()
        ),
        Registered::Not { why, run } => errln!(
            "amber: Amber's MCP server is not registered with Claude Code ({why}); without it no project has Amber's tools. Run:\n  {run}"
        ),
    }
    match register_agent() {
        Ok(path) => outln!("registered the agent name claude-code (its token is in {})", path.display()),
        Err(e) => errln!(
            "amber: the agent name claude-code is not registered ({e:#}); run `amber agent register claude-code` later"
        ),
    }
    Ok(())
}

/// Removes exactly Amber's entries from the settings, and its user-wide MCP server.
pub fn uninstall(project: bool) -> anyhow::Result<()> {
    let path = super::settings_path(project)?;
    let (n, backup) = super::edit_settings(&path, |s| Ok(super::uninstall(s)))?;
    if n == 0 {
        outln!("no Amber hooks or permission rules in {}", path.display());
    } else {
        outln!("removed {n} Amber entries (hooks and permission rules) from {}", path.display());
        if let Some(b) = backup {
            outln!("the previous settings are in {}", b.display());
        }
    }
    match unregister() {
        Ok(true) => outln!("removed Amber's MCP server from Claude Code's user config"),
        Ok(false) => outln!("no user-wide MCP server amber in Claude Code"),
        Err(why) => errln!(
            "amber: Amber's MCP server may still be registered with Claude Code ({why}); remove it with:\n  claude mcp remove --scope user amber"
        ),
    }
    Ok(())
}

//! Amber's MCP server registered with Claude Code user-wide, so that every project has
//! Amber's tools: through Claude Code's own command, `claude mcp add --scope user amber
//! -- <amber> mcp` (it keeps user-scope servers in its own config file, whose place and
//! format are Claude Code's). Idempotent: a registration that runs this `amber` is left
//! as it is, one that runs another (an older install, another path) is replaced. When
//! `claude` is not on the PATH, the exact command to run is the answer.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The server's name in Claude Code (the permission rules `mcp__amber__*` name it).
const NAME: &str = "amber";

/// What registering did.
#[derive(Debug, PartialEq, Eq)]
pub enum Registered {
    /// Added now.
    Added,
    /// It was there, running this `amber`: nothing changed.
    Already,
    /// It was there running something else (`claude mcp get` said what): replaced.
    Replaced(String),
    /// Not done: why, and the command the person runs instead.
    Not { why: String, run: String },
}

/// The command that registers `amber` user-wide, as a person would type it.
pub fn command_line(amber: &Path) -> String {
    let exe = amber.display().to_string();
    let exe = if exe.contains([' ', '\'', '"']) { format!("'{}'", exe.replace('\'', r"'\''")) } else { exe };
    format!("claude mcp add --scope user {NAME} -- {exe} mcp")
}

/// `claude` on the PATH.
fn claude() -> Option<PathBuf> {
    crate::hooks::settings::on_path("claude")
}

fn run(claude: &Path, args: &[&str]) -> std::io::Result<Output> {
    Command::new(claude).args(args).stdin(std::process::Stdio::null()).output()
}

fn said(o: &Output) -> String {
    let mut s = String::from_utf8_lossy(&o.stderr).trim().to_string();
    let out = String::from_utf8_lossy(&o.stdout);
    if !out.trim().is_empty() {
        if !s.is_empty() {
            s.push_str("; ");
        }
        s.push_str(out.trim());
    }
    s
}

/// Registers `amber mcp` as Claude Code's user-wide MCP server `amber`.
pub fn register(amber: &Path) -> Registered {
    let run_this = command_line(amber);
    let Some(claude) = claude() else {
        return Registered::Not { why: "`claude` is not on the PATH".into(), run: run_this };
    };
    let exe = amber.display().to_string();
    let add = ["mcp", "add", "--scope", "user", NAME, "--", exe.as_str(), "mcp"];
    let failed = |why: String| Registered::Not { why, run: run_this.clone() };
    let first = match run(&claude, &add) {
        Ok(o) if o.status.success() => return Registered::Added,
        Ok(o) => said(&o),
        Err(e) => return failed(format!("{} did not run: {e}", claude.display())),
    };
    if !first.contains("already exists") {
        return failed(format!("`claude mcp add` failed: {first}"));
    }
    // There is one: what does it run? (`claude mcp get` shows the registration in force
    // here; a user-scope one that runs this amber shows `Scope: User` and its command.)
    let shown = run(&claude, &["mcp", "get", NAME]).map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    let shown = shown.unwrap_or_default();
    let field = |k: &str| shown.lines().find_map(|l| l.trim().strip_prefix(k)).map(str::trim).unwrap_or("");
    if field("Scope:").starts_with("User") && field("Command:") == exe && field("Args:") == "mcp" {
        return Registered::Already;
    }
    let before = format!("{} {}", field("Command:"), field("Args:")).trim().to_string();
    match run(&claude, &["mcp", "remove", NAME, "--scope", "user"]) {
        Ok(o) if o.status.success() => {}
        Ok(o) => return failed(format!("`claude mcp remove` failed: {}", said(&o))),
        Err(e) => return failed(format!("{} did not run: {e}", claude.display())),
    }
    match run(&claude, &add) {
        Ok(o) if o.status.success() => Registered::Replaced(before),
        Ok(o) => failed(format!("`claude mcp add` failed: {}", said(&o))),
        Err(e) => failed(format!("{} did not run: {e}", claude.display())),
    }
}

/// Removes the user-wide registration `amber` (uninstall): true when there was one.
pub fn unregister() -> Result<bool, String> {
    let Some(claude) = claude() else { return Err("`claude` is not on the PATH".into()) };
    match run(&claude, &["mcp", "remove", NAME, "--scope", "user"]) {
        Ok(o) if o.status.success() => Ok(true),
        Ok(o) if said(&o).contains("No MCP server") => Ok(false),
        Ok(o) => Err(format!("`claude mcp remove` failed: {}", said(&o))),
        Err(e) => Err(format!("{} did not run: {e}", claude.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_to_run_quotes_a_path_a_shell_would_split() {
        assert_eq!(
            command_line(Path::new("/usr/bin/amber")),
            "claude mcp add --scope user amber -- /usr/bin/amber mcp"
        );
        assert_eq!(
            command_line(Path::new("/opt/my tools/amber")),
            "claude mcp add --scope user amber -- '/opt/my tools/amber' mcp"
        );
    }
}

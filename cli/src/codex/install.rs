//! `amber install|uninstall codex`: Amber's hooks in Codex CLI's hooks.json, its MCP
//! server in Codex's config.toml, the hooks trusted through Codex's own app-server, and
//! the agent name `codex`; each step reported, one that cannot be done says what to run.
//!
//! Codex runs a new or changed hook only once the person trusts it (`codex exec` skips
//! it without a word; the interactive UI asks "Hooks need review"). The person asking for
//! `amber install codex` is the person trusting Amber's hooks, so the install asks `codex
//! app-server` (Codex's own API: `hooks/list`, then `config/batchWrite` of each hook's
//! `trusted_hash`) to trust exactly Amber's entries, and nothing else.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};

use crate::hooks::settings::{self, HookSpec, edit_settings};

/// How Codex takes Amber's hooks (timeouts in seconds; no matcher: every source, every
/// tool).
pub(crate) const SPEC: HookSpec =
    HookSpec { runtime: super::AGENT, events: super::EVENTS, timeout: 10, tool_events: &[], name: None };

/// The line that marks the MCP server's table Amber wrote in config.toml.
const MARK: &str = "# amber install codex: Amber's MCP server (amber uninstall codex removes it)";

/// The environment variables Amber's MCP server needs from the session's environment.
const PASSED_VARS: &[&str] = &[
    "XDG_RUNTIME_DIR",
    "AMBER_HOME",
    "AMBER_DATA_DIR",
    "AMBER_SOCKET",
    "AMBER_STATE_DIR",
    "AMBER_CONFIG",
    "AMBERD",
];

/// How long Codex's app-server gets to answer.
const APP_SERVER_WAIT: Duration = Duration::from_secs(30);

/// `$CODEX_HOME`, else `~/.codex`.
fn codex_home() -> anyhow::Result<PathBuf> {
    match std::env::var_os("CODEX_HOME").filter(|h| !h.is_empty()) {
        Some(h) => Ok(PathBuf::from(h)),
        None => Ok(settings::home()?.join(".codex")),
    }
}

/// The hooks file: `<cwd>/.codex/hooks.json` for a project, else `$CODEX_HOME/hooks.json`.
pub fn hooks_path(project: bool) -> anyhow::Result<PathBuf> {
    match project {
        true => Ok(std::env::current_dir()?.join(".codex").join("hooks.json")),
        false => Ok(codex_home()?.join("hooks.json")),
    }
}

/// The MCP server's table, as Amber writes it.
fn mcp_table(amber: &Path) -> String {
    let exe = toml::Value::String(amber.display().to_string()).to_string();
    // required: Codex waits for the server before the first request (without it the
    // first turns go out without Amber's tools).
    // env_vars: Codex starts MCP servers with a short list of variables (HOME, PATH, …);
    // these pass through, so the server finds the daemon the hooks started (its socket is
    // under XDG_RUNTIME_DIR by default) and the store the person set.
    let vars = PASSED_VARS.iter().map(|v| format!("\"{v}\"")).collect::<Vec<_>>().join(", ");
    format!(
        "{MARK}\n[mcp_servers.amber]\ncommand = {exe}\nargs = [\"mcp\"]\nrequired = true\nenv_vars = [{vars}]\n"
    )
}

/// config.toml without Amber's marked table (and the text it had).
fn without_ours(text: &str) -> (String, bool) {
    let mut out = Vec::new();
    let mut skipping = false;
    let mut found = false;
    for line in text.lines() {
        if line == MARK {
            skipping = true;
            found = true;
            continue;
        }
        if skipping && line.starts_with('[') && !line.starts_with("[mcp_servers.amber") {
            skipping = false;
        }
        if !skipping {
            out.push(line);
        }
    }
    let mut s = out.join("\n");
    while s.ends_with("\n\n") {
        s.pop();
    }
    if !s.is_empty() && !s.ends_with('\n') {
        s.push('\n');
    }
    (s, found)
}

/// What registering the MCP server did.
enum Mcp {
    Added,
    Already,
    Replaced,
    /// Someone else's `amber` server is there: left alone.
    Foreign(String),
}

/// Adds (or brings up to date) Amber's MCP server in config.toml.
fn add_mcp(path: &Path, amber: &Path) -> anyhow::Result<Mcp> {
    let old = match std::fs::read_to_string(path) {
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let table: toml::Table = toml::from_str(&old)
        .with_context(|| format!("{} is not valid TOML; left as it is", path.display()))?;
    let (rest, ours) = without_ours(&old);
    let present = table.get("mcp_servers").and_then(|m| m.get("amber"));
    if let Some(server) = present {
        let command = server.get("command").and_then(toml::Value::as_str).unwrap_or("");
        if !ours {
            return Ok(Mcp::Foreign(command.to_string()));
        }
        if command == amber.display().to_string() && old.contains(&mcp_table(amber)) {
            return Ok(Mcp::Already);
        }
    }
    let text = format!("{rest}{}{}", if rest.is_empty() { "" } else { "\n" }, mcp_table(amber));
    toml::from_str::<toml::Table>(&text).context("the edited config.toml would not parse; left as it is")?;
    write_with_backup(path, &old, &text)?;
    Ok(if present.is_some() { Mcp::Replaced } else { Mcp::Added })
}

/// Removes Amber's marked MCP table. True when there was one.
fn remove_mcp(path: &Path) -> anyhow::Result<bool> {
    let Ok(old) = std::fs::read_to_string(path) else { return Ok(false) };
    let (rest, ours) = without_ours(&old);
    if ours {
        write_with_backup(path, &old, &rest)?;
    }
    Ok(ours)
}

fn write_with_backup(path: &Path, old: &str, new: &str) -> anyhow::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    if !old.is_empty() {
        let b = path.with_extension(format!("toml.amber-backup-{}", amber_core::now_millis()));
        std::fs::write(&b, old).with_context(|| format!("writing the backup {}", b.display()))?;
    }
    let tmp = path.with_extension("toml.amber-tmp");
    std::fs::write(&tmp, new).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("replacing {}", path.display()))
}

/// `codex`: `$AMBER_CODEX_BIN`, else on the PATH.
fn codex() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("AMBER_CODEX_BIN").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    settings::on_path("codex")
}

/// A JSON-RPC conversation with `codex app-server` on its stdio.
struct AppServer {
    child: std::process::Child,
    lines: mpsc::Receiver<String>,
    next: u64,
}

impl AppServer {
    fn start(codex: &Path) -> anyhow::Result<AppServer> {
        let mut child = Command::new(codex)
            .arg("app-server")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("cannot start {} app-server", codex.display()))?;
        let out = child.stdout.take().context("no stdout")?;
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(AppServer { child, lines, next: 0 })
    }

    fn send(&mut self, msg: &Value) -> anyhow::Result<()> {
        let stdin = self.child.stdin.as_mut().context("app-server's stdin is closed")?;
        writeln!(stdin, "{msg}").context("writing to codex app-server")?;
        stdin.flush().context("writing to codex app-server")
    }

    fn call(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        self.next += 1;
        let id = self.next;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))?;
        let until = Instant::now() + APP_SERVER_WAIT;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .with_context(|| format!("codex app-server did not answer {method}"))?;
            let Ok(v) = serde_json::from_str::<Value>(&line) else { continue };
            if v.get("id") != Some(&json!(id)) {
                continue;
            }
            if let Some(e) = v.get("error") {
                bail!("codex app-server refused {method}: {e}");
            }
            return Ok(v.get("result").cloned().unwrap_or(Value::Null));
        }
    }
}

impl Drop for AppServer {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Amber's hooks as Codex's app-server lists them for `cwd`.
fn our_hooks(srv: &mut AppServer, cwd: &Path) -> anyhow::Result<Vec<Value>> {
    let r = srv.call("hooks/list", json!({ "cwds": [cwd] }))?;
    let marker = format!(" hook {} ", super::AGENT);
    Ok(r.get("data")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .flat_map(|d| d.get("hooks").and_then(Value::as_array).cloned().unwrap_or_default())
        .filter(|h| h.get("command").and_then(Value::as_str).is_some_and(|c| c.contains(&marker)))
        .collect())
}

/// Trusts exactly Amber's hooks through `codex app-server`. Returns how many were
/// trusted now and how many are trusted in all.
fn trust(codex: &Path, cwd: &Path) -> anyhow::Result<(usize, usize)> {
    let mut srv = AppServer::start(codex)?;
    srv.call(
        "initialize",
        json!({ "clientInfo": { "name": "amber", "version": env!("CARGO_PKG_VERSION") } }),
    )?;
    srv.send(&json!({ "jsonrpc": "2.0", "method": "initialized" }))?;
    let hooks = our_hooks(&mut srv, cwd)?;
    let todo: Vec<&Value> = hooks
        .iter()
        .filter(|h| matches!(h.get("trustStatus").and_then(Value::as_str), Some("untrusted" | "modified")))
        .collect();
    if !todo.is_empty() {
        let edits: Vec<Value> = todo
            .iter()
            .filter_map(|h| {
                let key = h.get("key")?.as_str()?;
                Some(json!({ "keyPath": format!("hooks.state.\"{key}\".trusted_hash"), "value": h.get("currentHash")?, "mergeStrategy": "upsert" }))
            })
            .collect();
        srv.call("config/batchWrite", json!({ "edits": edits, "reloadUserConfig": true }))?;
    }
    let after = our_hooks(&mut srv, cwd)?;
    let trusted = after
        .iter()
        .filter(|h| matches!(h.get("trustStatus").and_then(Value::as_str), Some("trusted" | "managed")))
        .count();
    Ok((todo.len(), trusted))
}

/// `amber install codex`.
pub fn install(
    project: bool,
    register_agent: impl FnOnce() -> anyhow::Result<PathBuf>,
) -> anyhow::Result<()> {
    let path = hooks_path(project)?;
    let exe = std::env::current_exe().context("cannot find this executable's path")?;
    let (n, backup) = edit_settings(&path, |s| settings::merge_hooks(s, &exe, &SPEC))?;
    match n {
        0 => outln!("Amber's Codex hooks are already in {}", path.display()),
        n => outln!("added {n} Amber hooks to {}", path.display()),
    }
    if let Some(b) = backup {
        outln!("the previous hooks are in {}", b.display());
    }
    let config = codex_home()?.join("config.toml");
    match add_mcp(&config, &exe) {
        Ok(Mcp::Added) => {
            outln!("registered Amber's MCP server in {} (every project has its tools)", config.display())
        }
        Ok(Mcp::Already) => outln!("Amber's MCP server is already in {}", config.display()),
        Ok(Mcp::Replaced) => outln!("Amber's MCP server in {} now runs {}", config.display(), exe.display()),
        Ok(Mcp::Foreign(cmd)) => errln!(
            "amber: {} has an MCP server named amber that Amber did not write (it runs {cmd}): left alone",
            config.display()
        ),
        Err(e) => errln!(
            "amber: Amber's MCP server is not registered with Codex ({e:#}). Run:\n  codex mcp add amber -- {} mcp",
            exe.display()
        ),
    }
    let cwd = std::env::current_dir()?;
    match codex() {
        Some(codex) => match trust(&codex, &cwd) {
            Ok((_, n)) if n >= SPEC.events.len() => {
                outln!("Codex trusts Amber's {n} hooks (asked of {} app-server)", codex.display())
            }
            Ok((_, n)) => errln!(
                "amber: Codex trusts {n} of Amber's {} hooks; start `codex` and choose to trust them (\"Hooks need review\")",
                SPEC.events.len()
            ),
            Err(e) => errln!(
                "amber: Codex's hooks are not trusted yet ({e:#}): start `codex` and choose to trust Amber's hooks (\"Hooks need review\"); until then Codex skips them"
            ),
        },
        None => errln!(
            "amber: `codex` is not on the PATH, so Amber's hooks are not trusted yet: start `codex` and choose to trust them (\"Hooks need review\"), or run `amber install codex` again with codex on the PATH; until then Codex skips them"
        ),
    }
    if project {
        outln!("project hooks run only in a project Codex trusts (`codex` asks, or `codex exec --trust`)");
    }
    match register_agent() {
        Ok(path) => outln!("registered the agent name codex (its token is in {})", path.display()),
        Err(e) => {
            errln!(
                "amber: the agent name codex is not registered ({e:#}); run `amber agent register codex` later"
            )
        }
    }
    Ok(())
}

/// `amber uninstall codex`: exactly Amber's hooks and its MCP table.
pub fn uninstall(project: bool) -> anyhow::Result<()> {
    let path = hooks_path(project)?;
    let (n, backup) = edit_settings(&path, |s| Ok(settings::remove_hooks(s, SPEC.runtime)))?;
    match n {
        0 => outln!("no Amber hooks in {}", path.display()),
        n => outln!("removed {n} Amber hooks from {}", path.display()),
    }
    if let Some(b) = backup {
        outln!("the previous hooks are in {}", b.display());
    }
    let config = codex_home()?.join("config.toml");
    match remove_mcp(&config)? {
        true => outln!("removed Amber's MCP server from {}", config.display()),
        false => outln!("no MCP server of Amber's in {}", config.display()),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mcp_table_is_added_once_replaced_when_amber_moved_and_removed_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let mine = "model = \"gpt-5.1-codex\"\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\n";
        std::fs::write(&path, mine).unwrap();
        assert!(matches!(add_mcp(&path, Path::new("/opt/amber")).unwrap(), Mcp::Added));
        assert!(matches!(add_mcp(&path, Path::new("/opt/amber")).unwrap(), Mcp::Already));
        assert!(matches!(add_mcp(&path, Path::new("/usr/bin/amber")).unwrap(), Mcp::Replaced));
        let t: toml::Table = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(t["mcp_servers"]["amber"]["command"].as_str(), Some("/usr/bin/amber"));
        assert_eq!(t["mcp_servers"]["amber"]["required"].as_bool(), Some(true));
        let vars = t["mcp_servers"]["amber"]["env_vars"].as_array().unwrap();
        assert!(vars.iter().any(|v| v.as_str() == Some("XDG_RUNTIME_DIR")), "{vars:?}");
        assert_eq!(t["mcp_servers"]["docs"]["command"].as_str(), Some("docs-mcp"));
        assert!(remove_mcp(&path).unwrap());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), mine, "uninstall restores the file");
        assert!(!remove_mcp(&path).unwrap());
        // Someone else's server named amber is left alone.
        std::fs::write(&path, "[mcp_servers.amber]\ncommand = \"other\"\n").unwrap();
        assert!(matches!(add_mcp(&path, Path::new("/opt/amber")).unwrap(), Mcp::Foreign(c) if c == "other"));
        // A file that is not TOML is not touched.
        std::fs::write(&path, "this is = = not toml").unwrap();
        assert!(add_mcp(&path, Path::new("/opt/amber")).is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "this is = = not toml");
    }
}

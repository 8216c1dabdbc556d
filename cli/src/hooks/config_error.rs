//! A config file that cannot be used never silences Amber. Every hook says why in
//! `hooks.log`, and the first hook of each agent session that can show the person
//! something answers with a `systemMessage` (Claude Code and Codex CLI show it to the
//! person, Gemini CLI on its standard error; none to the model) saying that Amber is off
//! in this session and why. Nothing else is done:
//! the broken file may name another store or socket, so no daemon is guessed at.

use std::io::{Read, Write};
use std::path::PathBuf;

use amber_ipc::Config;
use serde_json::{Value, json};

/// The file that keeps which sessions were told (`<session id>\t<error>` a line).
const TOLD: &str = "config-error-told";
/// The most lines it keeps (the oldest go).
const MAX_TOLD: usize = 1000;
/// The most characters of the error a message carries.
const MAX_ERROR_CHARS: usize = 600;

/// Answers a hook when the config cannot be used: `cfg` is the config without the file
/// (the state directory from the environment or the default), `error` why the file was
/// refused. Prints the `systemMessage` when this session was not told yet.
pub fn hook(cfg: &Config, runtime: &str, event: &str, error: &str) {
    let mut input = String::new();
    let _ = std::io::stdin().take(16 * 1024 * 1024).read_to_string(&mut input);
    let session = serde_json::from_str::<Value>(&input)
        .ok()
        .and_then(|p| p.get("session_id").and_then(Value::as_str).map(str::to_string));
    let error = one_line(error);
    super::log(cfg, runtime, event, &format!("the config cannot be used, so Amber does nothing: {error}"));
    // SessionEnd's output reaches no one; a payload without a session cannot be told once.
    let Some(session) = session.filter(|_| event != "SessionEnd") else { return };
    let session = format!("{runtime}:{session}");
    if !first_time(cfg, &session, &error) {
        return;
    }
    let log = cfg.state_dir.join("logs").join("hooks.log");
    let message = format!(
        "Amber is off in this session: {error}. Its hooks do nothing until the config is fixed \
         (`amber status` says what is wrong; every hook logs it in {}).",
        log.display()
    );
    outln!("{}", json!({ "systemMessage": message }));
}

/// The error on one line, at most [`MAX_ERROR_CHARS`] characters.
fn one_line(error: &str) -> String {
    // TOML's errors frame the line at fault with `|` and `^`: the frame goes.
    let line = error
        .lines()
        .map(str::trim)
        .filter(|l| !l.chars().all(|c| " |^".contains(c)))
        .collect::<Vec<_>>()
        .join(" ");
    match line.chars().count() > MAX_ERROR_CHARS {
        true => format!("{}…", line.chars().take(MAX_ERROR_CHARS).collect::<String>()),
        false => line,
    }
}

/// True the first time a session meets this error (noted for the next hooks).
fn first_time(cfg: &Config, session: &str, error: &str) -> bool {
    let dir = cfg.state_dir.join("logs");
    let _ = amber_core::paths::create_private_dir(&dir);
    let path: PathBuf = dir.join(TOLD);
    let line = format!("{}\t{error}", session.replace(['\t', '\n'], " "));
    let told = std::fs::read_to_string(&path).unwrap_or_default();
    if told.lines().any(|l| l == line) {
        return false;
    }
    let mut lines: Vec<&str> = told.lines().collect();
    lines.push(&line);
    let keep = &lines[lines.len().saturating_sub(MAX_TOLD)..];
    let written = std::fs::File::create(&path).and_then(|mut f| writeln!(f, "{}", keep.join("\n")));
    if let Err(e) = written {
        super::log(
            cfg,
            "amber",
            "config",
            &format!("cannot note in {} that {session} was told: {e}", path.display()),
        );
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_comes_on_one_bounded_line() {
        let e = "config file /c.toml is invalid: TOML parse error at line 3, column 1\n  |\n3 | foo = 1\n  | ^^^\nunknown field `foo`";
        assert_eq!(
            one_line(e),
            "config file /c.toml is invalid: TOML parse error at line 3, column 1 3 | foo = 1 unknown field `foo`"
        );
        let long = "x".repeat(2000);
        assert_eq!(one_line(&long).chars().count(), MAX_ERROR_CHARS + 1);
    }
}

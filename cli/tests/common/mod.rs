//! What the CLI's integration tests share: a private data directory, socket and state
//! directory, the `amber` binary run in them, and Claude Code hook output parsing.
#![allow(dead_code)]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub struct Env {
    pub root: tempfile::TempDir,
    pub socket: PathBuf,
}

impl Env {
    pub fn new() -> Env {
        let root = tempfile::tempdir().unwrap();
        let socket = root.path().join("run").join("amber.sock");
        Env { root, socket }
    }

    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_amber"));
        c.arg("--data-dir")
            .arg(self.root.path().join("data"))
            .arg("--socket")
            .arg(&self.socket)
            .args(args)
            .env("AMBER_STATE_DIR", self.root.path().join("state"))
            .env("AMBER_CONFIG", self.root.path().join("config.toml"))
            .env_remove("AMBER_NO_START")
            .env_remove("AMBERD")
            .env_remove("AMBER_HOOK_DEADLINE_MS")
            // Not Claude Code's own (its Stop answers in the form measured for it).
            .env_remove("AI_AGENT");
        c
    }

    pub fn amber(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    /// With HOME in the temporary directory (for the user's settings.json).
    pub fn amber_home(&self, args: &[&str]) -> Output {
        self.cmd(args).env("HOME", self.root.path().join("home")).output().unwrap()
    }

    /// Runs a hook with a payload on stdin.
    pub fn hook(&self, event: &str, payload: &Value, extra_env: &[(&str, &str)]) -> (Output, Duration) {
        let mut c = self.cmd(&["hook", "claude-code", event]);
        for (k, v) in extra_env {
            c.env(k, v);
        }
        let t0 = Instant::now();
        let mut child =
            c.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        child.stdin.take().unwrap().write_all(payload.to_string().as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        (out, t0.elapsed())
    }

    /// The Amber session of a Claude Code session (named by its key).
    pub fn amber_session(&self, claude: &str) -> String {
        amber_tiers::session::keyed_session_id("claude-code", claude)
    }

    pub fn hooks_log(&self) -> String {
        std::fs::read_to_string(self.root.path().join("state/logs/hooks.log")).unwrap_or_default()
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        let _ = self.amber(&["daemon", "stop"]);
        // A daemon a hook started in the background may still be loading when the stop
        // is asked (nothing answers it): stopped again once it is up, killed if it stays,
        // so that no test leaves a daemon running.
        let data = self.root.path().join("data");
        let deadline = Instant::now() + Duration::from_secs(10);
        while let Some(pid) = daemon_of(&data) {
            if Instant::now() >= deadline {
                let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
                break;
            }
            std::thread::sleep(Duration::from_millis(250));
            let _ = self.amber(&["daemon", "stop"]);
        }
    }
}

/// The pid of an `amberd` serving this data directory, if one runs (Linux's /proc).
fn daemon_of(data: &std::path::Path) -> Option<u32> {
    use std::os::unix::ffi::OsStrExt;
    let want = data.as_os_str().as_bytes();
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else { continue };
        let mut args = cmdline.split(|b| *b == 0);
        if args.next().is_some_and(|a| a.ends_with(b"amberd")) && args.any(|a| a == want) {
            return Some(pid);
        }
    }
    None
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The hook's answer: nothing, or Claude Code's documented JSON with additionalContext.
pub fn context_of(out: &Output, event: &str) -> Option<String> {
    assert!(out.status.success(), "a hook always exits 0: {}", text(&out.stderr));
    let stdout = text(&out.stdout);
    if stdout.trim().is_empty() {
        return None;
    }
    let v: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"));
    let h = &v["hookSpecificOutput"];
    assert_eq!(h["hookEventName"], event, "{v}");
    let ctx = h["additionalContext"].as_str().expect("additionalContext is a string");
    assert_eq!(v.as_object().unwrap().len(), 1, "only hookSpecificOutput: {v}");
    Some(ctx.to_string())
}

//! A start the daemon cannot answer in time (a cold daemon loading its model) still
//! hands the session the person's standing preferences, as kept on disk after the last
//! briefed start in that folder (issue 45). Real daemon, real model.

use crate::common;

use std::path::Path;

use common::{Env, context_of, text};
use serde_json::{Value, json};

const FISH: &str = "My shell is fish: give me environment variables as set -x NAME value, never export.";

fn start(cwd: &Path, session: &str) -> Value {
    json!({
        "session_id": session,
        "transcript_path": "/home/u/.claude/projects/x/s.jsonl",
        "cwd": cwd,
        "hook_event_name": "SessionStart",
        "source": "startup",
    })
}

#[test]
fn a_start_the_daemon_misses_gets_the_kept_standing_preferences() {
    let env = Env::new();
    let (proj, other) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::create_dir_all(proj.path().join(".git")).unwrap();
    let o = env.amber(&["remember", "--scope", "user", "--type", "lifefact", FISH]);
    assert!(o.status.success(), "{}", text(&o.stderr));

    // A warm start briefs the preference, and keeps its line (0600).
    let (out, _) = env.hook("SessionStart", &start(proj.path(), "s-warm"), &[]);
    let ctx = context_of(&out, "SessionStart").expect("a briefing");
    assert!(ctx.contains("set -x NAME value"), "{ctx}");
    let kept: Vec<_> = std::fs::read_dir(env.root.path().join("state/standing"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&kept[0]).unwrap().permissions().mode() & 0o777, 0o600);
    }

    // Cold: no daemon, and a deadline no start can meet.
    assert!(env.amber(&["daemon", "stop"]).status.success());
    let cold = [("AMBER_HOOK_DEADLINE_MS", "1")];
    let (out, _) = env.hook("SessionStart", &start(proj.path(), "s-cold"), &cold);
    let ctx = context_of(&out, "SessionStart").expect("the kept preferences");
    assert!(ctx.starts_with("Amber was still starting"), "{ctx}");
    assert!(ctx.contains("set -x NAME value") && ctx.contains("lifefact"), "{ctx}");
    assert!(env.hooks_log().contains("answered the kept standing preferences"), "{}", env.hooks_log());

    // The session goes on: its first prompt starts it on the daemon, whose briefing must
    // not hand the preference over a second time (the fallback showed it). A session
    // that saw no fallback is briefed it, as before.
    let prompt = |session: &str| {
        let mut p = start(proj.path(), session);
        p["hook_event_name"] = json!("UserPromptSubmit");
        p["prompt"] = json!("set the deploy token variable in my shell for the staging run");
        let (out, _) = env.hook("UserPromptSubmit", &p, &[]);
        context_of(&out, "UserPromptSubmit").unwrap_or_default()
    };
    let again = prompt("s-cold");
    assert!(!again.contains("set -x NAME value"), "briefed twice in one session: {again}");
    let fresh = prompt("s-fresh");
    assert!(fresh.contains("set -x NAME value"), "the case: a start at a prompt briefs it: {fresh}");
    let shown: Vec<_> = std::fs::read_dir(env.root.path().join("state/standing"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| n.starts_with("shown-"))
        .collect();
    assert!(shown.is_empty(), "forgotten once the daemon was told: {shown:?}");

    // A folder no session was briefed in has nothing kept: nothing is made up.
    assert!(env.amber(&["daemon", "stop"]).status.success());
    let (out, _) = env.hook("SessionStart", &start(other.path(), "s-other"), &cold);
    assert_eq!(context_of(&out, "SessionStart"), None);
}

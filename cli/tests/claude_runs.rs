//! A run per Claude Code session, through `amber hook claude-code` against a real daemon:
//! sessions that did the same work are runs of their own, a resumed or compacted session
//! adds to its run until it is rewarded (then its next part is a new run), `amber runs
//! reward last` rewards the run of the session that ended last, `amber runs show` takes
//! the short ids `runs list` prints, and `amber lift` counts each session's own rewards in
//! its arm (served or withheld) over the whole scripted sequence.

use crate::common;

use std::path::Path;
use std::process::Output;

use common::{Env, text};
use serde_json::{Value, json};

const FACT: &str = "Deploys of ledger-api go through make deploy ENV=staging; the job needs the VPN up.";
const PROMPT: &str = "the deploy of ledger-api fails again, find out why";

struct Project {
    env: Env,
    dir: tempfile::TempDir,
}

impl Project {
    /// `amber` run from inside the project (so `last` looks in its scope).
    fn amber(&self, args: &[&str]) -> Output {
        self.env.cmd(args).current_dir(self.dir.path()).output().unwrap()
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let o = self.amber(&all);
        assert!(o.status.success(), "amber {args:?}: {}", text(&o.stderr));
        serde_json::from_slice(&o.stdout).unwrap()
    }

    fn hook(&self, claude: &str, event: &str, extra: Value) {
        let mut p = json!({
            "session_id": claude,
            "cwd": self.dir.path(),
            "permission_mode": "default",
            "hook_event_name": event,
        });
        for (k, v) in extra.as_object().unwrap() {
            p[k] = v.clone();
        }
        let (out, _) = self.env.hook(event, &p, &[]);
        assert!(out.status.success(), "{event}: {}", text(&out.stderr));
    }

    fn tool(&self, claude: &str, command: &str) {
        let t = json!({
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "tool_response": {"stdout": "make: *** [deploy] Error 2", "stderr": ""},
        });
        self.hook(claude, "PostToolUse", t);
    }

    /// A whole session of the same work every time: start, the prompt, three tool uses,
    /// the checkpoint's two stops, the end.
    fn session(&self, claude: &str) {
        self.hook(claude, "SessionStart", json!({"source": "startup"}));
        self.hook(claude, "UserPromptSubmit", json!({"prompt": PROMPT}));
        for c in ["make deploy ENV=staging", "cat deploy.log", "make deploy ENV=staging"] {
            self.tool(claude, c);
        }
        self.hook(claude, "Stop", json!({"stop_hook_active": false}));
        self.hook(claude, "Stop", json!({"stop_hook_active": true}));
        self.hook(claude, "SessionEnd", json!({"reason": "other"}));
    }

    /// The runs the Amber session of a Claude Code session was recorded as.
    fn runs_of(&self, claude: &str) -> Vec<String> {
        let s = self.json(&["session", "show", &self.env.amber_session(claude)]);
        s["session"]["run"]["runs"]
            .as_array()
            .map(|a| a.iter().map(|x| x.as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    }

    /// `amber runs reward last R`: the run it rewarded (from its output).
    fn reward_last(&self, reward: &str, session_of: &str) -> String {
        let o = self.amber(&["runs", "reward", "last", reward]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let out = text(&o.stdout);
        assert!(out.contains(&self.env.amber_session(session_of)), "names the session it rewarded: {out}");
        out.split_whitespace().nth(1).unwrap().to_string()
    }
}

/// Claude Code session ids whose Amber sessions fall in the holdout arm (`true`) or not,
/// at share 0.5.
fn keys(held: bool, n: usize) -> Vec<String> {
    (0..200)
        .map(|i| format!("7c0a{i:04}-1111-4222-8333-444455556666"))
        .filter(|k| {
            amber_tiers::session::held_out(&amber_tiers::session::keyed_session_id("claude-code", k), 0.5)
                == held
        })
        .take(n)
        .collect()
}

fn run(p: &Project, id: &str) -> Value {
    p.json(&["runs", "show", id])["run"].clone()
}

#[test]
fn every_session_is_its_own_run_and_lift_counts_each_sessions_reward_once() {
    let env = Env::new();
    std::fs::write(env.root.path().join("config.toml"), "[holdout]\nshare = 0.5\n").unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".git")).unwrap();
    let p = Project { env, dir };
    let scope = amber_tiers::scope::project_scope(p.dir.path()).to_string();
    p.json(&["remember", "--scope", &scope, FACT]);
    let served = keys(false, 4);
    let (a, b, c, e) = (&served[0], &served[1], &served[2], &served[3]);
    let d = &keys(true, 1)[0];

    // A, then B: the same work, two runs (their ids hold the session, not the content).
    p.session(a);
    let a_runs = p.runs_of(a);
    assert_eq!(a_runs.len(), 1, "{a_runs:?}");
    assert_eq!(p.reward_last("1", a), a_runs[0], "`last` is the run of the session that just ended");
    p.session(b);
    let b_runs = p.runs_of(b);
    assert_eq!(b_runs.len(), 1);
    assert_ne!(b_runs[0], a_runs[0], "two sessions, two runs, however alike");
    assert_eq!(run(&p, &b_runs[0])["trace"], run(&p, &a_runs[0])["trace"]);
    assert!(run(&p, &b_runs[0])["reward"].is_null(), "B is not rewarded by A's reward");

    // A resumed: its run was rewarded, so what it does now is its next run.
    p.hook(a, "SessionStart", json!({"source": "resume"}));
    p.hook(a, "UserPromptSubmit", json!({"prompt": "and roll it back"}));
    p.tool(a, "make rollback ENV=staging");
    p.hook(a, "SessionEnd", json!({"reason": "other"}));
    let a_runs = p.runs_of(a);
    assert_eq!(a_runs.len(), 2, "{a_runs:?}");
    let second = run(&p, &a_runs[1]);
    assert_eq!(second["trace"], "Bash: make rollback ENV=staging", "only what came after the reward");
    assert_eq!(second["task"], PROMPT, "the session's task");
    assert_eq!(
        run(&p, &a_runs[0])["trace"].as_str().unwrap().lines().count(),
        3,
        "the rewarded run as it was"
    );
    assert_eq!(p.reward_last("-1", a), a_runs[1], "A ended last");

    // C, compacted and continued: one run that holds all of it.
    p.session(c);
    p.hook(c, "SessionStart", json!({"source": "resume"}));
    p.hook(c, "SessionStart", json!({"source": "compact"}));
    p.hook(c, "SessionEnd", json!({"reason": "other"}));
    p.hook(c, "SessionStart", json!({"source": "resume"}));
    p.hook(c, "UserPromptSubmit", json!({"prompt": "confirm the staging port once more"}));
    p.tool(c, "grep -n port config/staging.toml");
    p.hook(c, "SessionEnd", json!({"reason": "other"}));
    let c_runs = p.runs_of(c);
    assert_eq!(c_runs.len(), 1, "a compacted, continued session is one run: {c_runs:?}");
    let c_run = run(&p, &c_runs[0]);
    let trace: Vec<&str> = c_run["trace"].as_str().unwrap().lines().collect();
    assert_eq!(trace.len(), 4, "{trace:?}");
    assert_eq!(trace[3], "Bash: grep -n port config/staging.toml");
    assert_eq!(p.reward_last("0.5", c), c_runs[0]);

    // D (held out: served nothing) rewarded; E never.
    p.session(d);
    assert_eq!(p.reward_last("1", d), p.runs_of(d)[0]);
    p.session(e);

    // A run per session: A's two parts, and one each for B, C, D, E.
    let all = p.json(&["runs", "list", "--scope", &scope]);
    assert_eq!(all.as_array().unwrap().len(), 6, "{all}");

    // lift: A's latest reward (-1, its second run), C's 0.5 served; D's 1 withheld; B and
    // E unrewarded (B never takes A's reward).
    let l = p.json(&["lift", "--no-judged"]);
    assert_eq!(l["sessions"], 5, "{l}");
    assert_eq!(l["rewarded"], 3, "{l}");
    assert_eq!(l["by_run"], 3, "{l}");
    assert_eq!(l["served"]["n"], 2, "{l}");
    assert_eq!(l["served"]["mean"], -0.25, "{l}");
    assert_eq!(l["withheld"]["n"], 1, "{l}");
    assert_eq!(l["withheld"]["mean"], 1.0, "{l}");
}

#[test]
fn runs_show_takes_the_short_ids_runs_list_prints() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let scope = amber_tiers::scope::project_scope(Path::new(dir.path())).to_string();
    let p = Project { env, dir };
    // Six runs loaded from a file (their ids are by content).
    let file = p.dir.path().join("runs.jsonl");
    let mut lines = String::new();
    for task in ["migrate the ledger", "rotate the keys", "deploy", "ship", "roll back", "page the on-call"] {
        lines.push_str(&json!({ "task": task, "trace": "Bash: make" }).to_string());
        lines.push('\n');
    }
    std::fs::write(&file, lines).unwrap();
    let o = p.amber(&["runs", "load", &scope, file.to_str().unwrap(), "--as", "tester"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let listed = text(&p.amber(&["runs", "list"]).stdout);
    let short = listed.lines().next().unwrap().split_whitespace().next().unwrap().to_string();
    assert_eq!(short.len(), 12, "{listed}");

    let shown = p.amber(&["runs", "show", &short]);
    assert!(shown.status.success(), "{}", text(&shown.stderr));
    let head = text(&shown.stdout);
    assert!(head.starts_with(&format!("run {short}")), "{head}");
    assert!(p.amber(&["runs", "show", &short.to_uppercase()]).status.success(), "hex digits in either case");

    // A prefix no run has, and one too short (an ambiguous one: the unit test of
    // `runs::by_prefix`; two of these runs sharing 8 digits is a 1 in 10^8 chance).
    let ids: Vec<String> = p
        .json(&["runs", "list"])
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    let absent =
        (0..u32::MAX).map(|n| format!("{n:08x}")).find(|c| ids.iter().all(|id| !id.starts_with(c))).unwrap();
    let o = p.amber(&["runs", "show", &absent]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains(&format!("no run starts with {absent}")), "{}", text(&o.stderr));
    let o = p.amber(&["runs", "show", &short[..6]]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("at least 8"), "{}", text(&o.stderr));
}

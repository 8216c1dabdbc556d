//! The `amber` binary end to end: it starts `amberd` when none runs, and every command
//! goes through the socket.
//!
//! Needs `amberd` built next to `amber` (a workspace build does it: `cargo test --workspace`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

struct Env {
    root: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env { root: tempfile::tempdir().unwrap() }
    }

    fn socket(&self) -> PathBuf {
        self.root.path().join("run").join("amber.sock")
    }

    /// `amber` with this store's flags and environment, not run yet.
    fn cmd(&self, args: &[&str]) -> Command {
        let exe = PathBuf::from(env!("CARGO_BIN_EXE_amber"));
        let amberd = exe.with_file_name(format!("amberd{}", std::env::consts::EXE_SUFFIX));
        assert!(
            amberd.exists(),
            "{} is missing: build the workspace (cargo test --workspace)",
            amberd.display()
        );
        let mut c = Command::new(exe);
        c.arg("--data-dir")
            .arg(self.root.path().join("data"))
            .arg("--socket")
            .arg(self.socket())
            .args(args)
            .env("AMBER_STATE_DIR", self.root.path().join("state"))
            .env("AMBER_CONFIG", self.root.path().join("config.toml"))
            .env_remove("AMBER_NO_START")
            .env_remove("AMBERD");
        c
    }

    fn amber(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        let _ = self.amber(&["daemon", "stop"]);
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn ok(o: Output) -> (String, String) {
    assert!(o.status.success(), "failed: {}\n{}", text(&o.stdout), text(&o.stderr));
    (text(&o.stdout), text(&o.stderr))
}

fn first_id(stdout: &str) -> String {
    stdout
        .split_whitespace()
        .find(|w| w.len() == 32 && w.bytes().all(|b| b.is_ascii_hexdigit()))
        .unwrap()
        .to_string()
}

#[test]
fn recall_says_no_good_match_names_better_scopes_and_prints_every_term() {
    let env = Env::new();
    ok(env.amber(&[
        "remember",
        "--scope",
        "ledger",
        "--type",
        "pattern",
        "The ledger tests fail when TZ is not UTC: run them as TZ=UTC.",
    ]));
    ok(env.amber(&[
        "remember",
        "--scope",
        "user",
        "--type",
        "lifefact",
        "The user prefers short answers without emojis.",
    ]));
    // A question the project answers, asked from another project's scopes.
    let (out, _) = ok(env.amber(&["recall", "--scope", "garden", "why do the ledger tests fail?"]));
    assert!(out.contains("no good match"), "{out}");
    assert!(out.contains("better matches are in ledger"), "{out}");
    // Asked there: the answer, with its filing and factor among the terms; the style
    // preference (no answer to it) is under the floor, and --no-floor brings it back.
    let (out, _) = ok(env.amber(&["recall", "--all-scopes", "why do the ledger tests fail?"]));
    assert!(out.contains("TZ=UTC") && out.contains("person x1.00") && out.contains("vector #1"), "{out}");
    assert!(!out.contains("emojis"), "a weak match is left out: {out}");
    let (out, _) = ok(env.amber(&["recall", "--all-scopes", "--no-floor", "why do the ledger tests fail?"]));
    assert!(out.contains("emojis"), "{out}");
    let (out, _) = ok(env.amber(&["--json", "recall", "--scope", "garden", "why do the ledger tests fail?"]));
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["hits"].as_array().map(Vec::len), Some(0), "{r}");
    assert_eq!(r["elsewhere"][0], "ledger", "{r}");
}

#[test]
fn remember_and_recall_go_through_a_daemon_started_on_demand() {
    let env = Env::new();
    assert!(!Path::new(&env.socket()).exists());
    let (out, err) =
        ok(env.amber(&["remember", "--scope", "proj", "The CI cache lives in target/, keep it"]));
    assert!(err.contains("starting amberd in the background"), "{err}");
    assert!(out.starts_with("remembered "), "{out}");
    let id = first_id(&out);
    assert!(env.socket().exists(), "the daemon listens on the configured socket");

    let (out, err) = ok(env.amber(&["recall", "--scope", "proj", "where is the build cache?"]));
    assert!(!err.contains("starting amberd"), "the running daemon is reused: {err}");
    assert!(out.contains(&id) && out.contains("CI cache"), "{out}");

    let (out, _) = ok(env.amber(&["--json", "status"]));
    let st: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(st["engine"]["memories"], 1);
    assert_eq!(st["protocol_version"], 1);

    let (out, _) = ok(env.amber(&["forget", &id]));
    assert!(out.contains("forgot"), "{out}");
    let (out, _) = ok(env.amber(&["recall", "--scope", "proj", "where is the build cache?"]));
    assert!(out.contains("no good match"), "{out}");
    let (out, _) = ok(env.amber(&["get", &id]));
    assert!(out.contains("(forgotten)"), "{out}");

    let (out, _) = ok(env.amber(&["config", "show"]));
    assert!(out.contains(&env.socket().display().to_string()), "{out}");

    let (out, _) = ok(env.amber(&["daemon", "stop"]));
    assert!(out.contains("stopped"), "{out}");
    assert!(!env.socket().exists());
    let o = env.amber(&["daemon", "status"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stdout));
    let o = env.amber(&["--no-start", "get", &id]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("not running"), "{}", text(&o.stderr));
    assert_eq!(text(&o.stderr).matches("not running").count(), 1, "said once: {}", text(&o.stderr));
    assert_eq!(text(&o.stderr).trim().lines().count(), 1, "one line: {}", text(&o.stderr));

    // The next command starts it again, on the same store.
    let (out, err) = ok(env.amber(&["get", &id]));
    assert!(err.contains("starting amberd"), "{err}");
    assert!(out.contains("CI cache"), "{out}");
}

#[test]
fn a_reader_that_closes_the_pipe_ends_the_command_quietly() {
    // `amber … | head -1`: the reader goes away after one line; amber must not panic.
    let env = Env::new();
    let (out, _) = ok(env.amber(&["remember", "--scope", "proj", "a memory to have something to show"]));
    assert!(!out.is_empty());
    for args in [&["config", "show"][..], &["daemon", "status"][..], &["status"][..]] {
        let mut child = env
            .cmd(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Close the read end at once, before amber writes: every write then fails.
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        let err = text(&o.stderr);
        assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "{args:?}: {err}");
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
    }
}

#[test]
fn remember_redacts_secrets_unless_kept_on_purpose() {
    let env = Env::new();
    let secret = "export PGPASSWORD='n0t-4-r3al!' before psql";
    let (out, err) = ok(env.amber(&["remember", "--scope", "proj", secret]));
    assert!(err.contains("1 secret redacted before storing"), "{err}");
    let (got, _) = ok(env.amber(&["get", &first_id(&out)]));
    assert!(got.contains("PGPASSWORD='[REDACTED:env_password]'") && !got.contains("n0t-4-r3al!"), "{got}");

    let (out, err) = ok(env.amber(&["remember", "--scope", "proj", "--keep-secrets", secret]));
    assert!(!err.contains("redacted"), "{err}");
    let (got, _) = ok(env.amber(&["get", &first_id(&out)]));
    assert!(got.contains("n0t-4-r3al!"), "{got}");

    let (out, _) = ok(env.amber(&["--json", "remember", "--scope", "proj", "mysql -u root -psecret shop"]));
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["redacted"], 1, "{out}");
}

#[test]
fn bad_input_is_refused_with_a_clear_message() {
    let env = Env::new();
    let o = env.amber(&["get", "not-an-id"]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("bad id"), "{}", text(&o.stderr));
    let o = env.amber(&["get", "00000000000000000000000000000000"]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("not_found"), "{}", text(&o.stderr));
    let o = env.amber(&["remember", "--type", "rumour", "x"]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("rumour"), "{}", text(&o.stderr));
}

#[test]
fn outcomes_supersession_and_the_archive_from_the_command_line() {
    let env = Env::new();
    let (out, _) = ok(env.amber(&["remember", "--scope", "proj", "the staging database is db-staging-1"]));
    let old = first_id(&out);
    let (out, _) = ok(env.amber(&["outcome", &old[..8], "failure", "--note", "it was renamed"]));
    assert!(out.contains("weight 0.80"), "{out}");
    let (out, _) = ok(env.amber(&[
        "remember",
        "--scope",
        "proj",
        "--type",
        "invalidation",
        "--supersedes",
        &old[..8],
        "the staging database is now db-staging-2",
    ]));
    let new = first_id(&out);
    let (out, _) = ok(env.amber(&["recall", "--scope", "proj", "staging database"]));
    assert!(out.contains(&new) && !out.contains(&old), "{out}");
    assert!(out.contains(&format!("supersedes {}", &old[..8])), "{out}");
    assert!(out.contains("weight 1.00"), "the evidence shows the standing: {out}");
    let (out, _) = ok(env.amber(&["recall", "--scope", "proj", "--archived", "staging database"]));
    assert!(out.contains(&old) && out.contains("archived"), "{out}");
    let (out, _) = ok(env.amber(&["archived"]));
    assert!(out.contains(&old[..8]) && out.contains("superseded by"), "{out}");
    let (out, _) = ok(env.amber(&["outcomes", &old]));
    assert!(out.contains("outcome failure") && out.contains("it was renamed"), "{out}");
    assert!(out.contains(&format!("superseded by {new}")), "{out}");
    let o = env.amber(&["unarchive", &old]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("superseded"), "{}", text(&o.stderr));
    let o = env.amber(&["outcome", &old, "maybe"]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("unknown outcome"), "{}", text(&o.stderr));
    let (out, _) = ok(env.amber(&["audit"]));
    assert!(out.contains("0 successes with no served record"), "{out}");
    let (out, _) = ok(env.amber(&["lift", "--since", "2026-01-01"]));
    assert!(out.contains("not enough data: at least 30"), "{out}");
}

#[test]
fn addressing_threads_and_the_guard_from_the_command_line() {
    let env = Env::new();
    let (out, _) = ok(env.amber(&["remember", "--scope", "proj", "why is the deploy slow?"]));
    let q = first_id(&out);
    let (out, _) = ok(env.amber(&[
        "remember",
        "--scope",
        "proj",
        "--author",
        "a",
        "--reply-to",
        &q[..8],
        "the image is 3 GB",
    ]));
    let a = first_id(&out);
    let (out, _) = ok(env.amber(&[
        "remember",
        "--scope",
        "proj",
        "--author",
        "b",
        "--to",
        "c",
        "--reply-to",
        &a,
        "c: slim the image",
    ]));
    let b = first_id(&out);
    let (out, _) = ok(env.amber(&["thread", &b[..8]]));
    assert!(out.starts_with(&format!("thread {q}")), "{out}");
    assert!(out.contains(&format!("{} b → c re {}", &b[..8], &a[..8])), "{out}");
    // c may not answer: two agent hops since the person. Exit status 2, thread held.
    let o = env.amber(&["guard", &b, "--agent", "c"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stdout));
    assert!(text(&o.stdout).starts_with("hold (hop_limit)"), "{}", text(&o.stdout));
    let (out, _) = ok(env.amber(&["release", &a]));
    assert!(out.contains("released"), "{out}");
    let (out, _) = ok(env.amber(&["guard", &a, "--agent", "d"]));
    assert!(out.starts_with("allow (allowed)"), "{out}");
    let o = env.amber(&["remember", "--scope", "proj", "--to", "two words", "x"]);
    assert!(!o.status.success() && text(&o.stderr).contains("bad recipient"), "{}", text(&o.stderr));
}

#[test]
fn runs_load_a_file_as_one_batch_and_read_back() {
    let env = Env::new();
    let file = env.root.path().join("runs.jsonl");
    std::fs::write(
        &file,
        "{\"task\": \"fix the flaky test\", \"trace\": \"ran it 20 times\", \"outcome\": \"fixed\"}\n\n\
         {\"task\": \"bump the version\"}\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let (out, err) = ok(env.amber(&["runs", "load", "proj", f, "--as", "codex"]));
    assert!(out.contains("recorded 2 runs in proj as codex: 2 new, 0 already there"), "{out}{err}");
    let (out, _) = ok(env.amber(&["runs", "load", "proj", f, "--as", "codex"]));
    assert!(out.contains("0 new, 2 already there"), "{out}");
    let (out, _) = ok(env.amber(&["runs", "list", "--agent", "codex"]));
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(out.contains("fix the flaky test") && out.contains("no reward"), "{out}");
    let (out, _) = ok(env.amber(&["--json", "runs", "list"]));
    let runs: serde_json::Value = serde_json::from_str(&out).unwrap();
    let id = runs[0]["id"].as_str().unwrap();
    let (out, _) = ok(env.amber(&["runs", "show", id]));
    assert!(out.starts_with(&format!("run {id} [proj] by codex")), "{out}");
    std::fs::write(&file, "{\"task\": \"ok\"}\n{\"tsk\": \"typo\"}\n").unwrap();
    let o = env.amber(&["runs", "load", "proj", f, "--as", "codex"]);
    assert!(!o.status.success() && text(&o.stderr).contains("line 2: not a run"), "{}", text(&o.stderr));
}

#[test]
fn advice_without_a_model_says_so_and_the_read_commands_answer_empty() {
    let env = Env::new();
    for args in [&["advice", "learn", "proj"][..], &["judgements", "proj", "--judge"][..]] {
        let o = env.amber(args);
        let err = text(&o.stderr);
        assert!(
            !o.status.success() && err.contains("advice is learned by a model: none is configured"),
            "{args:?}: {err}"
        );
    }
    let (out, _) = ok(env.amber(&["advice", "list", "proj"]));
    assert_eq!(out.trim(), "no situations in proj");
    let (out, _) = ok(env.amber(&["judgements", "proj"]));
    assert_eq!(out.trim(), "no judgements in proj");
    let o = env.amber(&["advice", "show", "proj", "db/migrations"]);
    assert!(!o.status.success() && text(&o.stderr).contains("no situation"), "{}", text(&o.stderr));
}

#[test]
fn a_data_dir_the_daemon_on_the_socket_does_not_serve_is_refused() {
    let env = Env::new();
    ok(env.amber(&["remember", "--scope", "notes", "the first store's only memory"]));
    let count = || -> u64 {
        let (out, _) = ok(env.amber(&["--json", "status"]));
        serde_json::from_str::<serde_json::Value>(&out).unwrap()["engine"]["memories"].as_u64().unwrap()
    };
    assert_eq!(count(), 1);
    // The same socket, another data directory: by flag, and by the environment.
    let other = env.root.path().join("other");
    let run = |flag: bool, args: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_amber"));
        if flag {
            c.arg("--data-dir").arg(&other);
        } else {
            c.env("AMBER_DATA_DIR", &other);
        }
        c.arg("--socket")
            .arg(env.socket())
            .args(args)
            .env("AMBER_STATE_DIR", env.root.path().join("state"))
            .env("AMBER_CONFIG", env.root.path().join("config.toml"))
            .env_remove("AMBER_NO_START")
            .output()
            .unwrap()
    };
    let served = env.root.path().join("data").canonicalize().unwrap();
    for flag in [true, false] {
        for args in [&["remember", "--scope", "notes", "meant for the other store"][..], &["daemon", "stop"]]
        {
            let o = run(flag, args);
            assert!(!o.status.success(), "{args:?}: {}", text(&o.stdout));
            let err = text(&o.stderr);
            let says = format!("serves the store in {}, not {}", served.display(), other.display());
            assert!(err.contains(&says) && err.contains("nothing was done"), "{err}");
        }
    }
    assert_eq!(count(), 1, "nothing was written into the daemon's store");
    assert!(!other.join("amber.db").exists());
    // The same store named another way is the same store.
    let same = env.root.path().join("run").join("..").join("data");
    let o = Command::new(env!("CARGO_BIN_EXE_amber"))
        .arg("--data-dir")
        .arg(&same)
        .arg("--socket")
        .arg(env.socket())
        .arg("status")
        .env("AMBER_STATE_DIR", env.root.path().join("state"))
        .env("AMBER_CONFIG", env.root.path().join("config.toml"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
}

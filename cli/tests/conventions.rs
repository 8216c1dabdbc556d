//! What people expect of a command line: help grouped by task, shell completions and
//! man pages generated from the one definition, ISO 8601 local times where a person
//! reads a time, `--json` where a script reads, and exit statuses that say "in part".

use crate::common;

use common::{Env, text};
use serde_json::Value;

fn ok(out: std::process::Output) -> String {
    assert!(out.status.success(), "stdout: {}\nstderr: {}", text(&out.stdout), text(&out.stderr));
    text(&out.stdout)
}

#[test]
fn the_help_lists_every_command_under_its_task() {
    let env = Env::new();
    let help = ok(env.amber(&["--help"]));
    let titles =
        ["Memories:", "Documents and skills:", "Sessions, runs and advice:", "The daemon:", "The shell:"];
    let mut at = 0;
    for t in titles {
        let i = help.find(t).unwrap_or_else(|| panic!("{t} missing:\n{help}"));
        assert!(i > at, "{t} out of order:\n{help}");
        at = i;
    }
    for cmd in ["remember", "recall", "ingest", "runs", "install", "export", "daemon", "completions", "man"] {
        assert!(help.lines().any(|l| l.starts_with(&format!("  {cmd} "))), "{cmd} not listed:\n{help}");
    }
    assert!(help.contains("Exit status:"), "{help}");
    // `amber help` says the same.
    assert_eq!(ok(env.amber(&["help"])), help);
}

#[test]
fn completion_scripts_load_in_their_shell_and_know_the_commands() {
    let env = Env::new();
    let bash = ok(env.amber(&["completions", "bash"]));
    let script = env.root.path().join("amber.bash");
    std::fs::write(&script, &bash).unwrap();
    // bash itself loads it and registers the completion for `amber`.
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!("source {} && complete -p amber", script.display()))
        .output()
        .unwrap();
    assert!(text(&out.stdout).contains("amber"), "{} {}", text(&out.stdout), text(&out.stderr));
    assert!(bash.contains("remember") && bash.contains("--keep-secrets"), "subcommands and their flags");
    let zsh = ok(env.amber(&["completions", "zsh"]));
    assert!(zsh.starts_with("#compdef amber") && zsh.contains("recall"), "{}", &zsh[..200]);
    let fish = ok(env.amber(&["completions", "fish"]));
    assert!(fish.contains("complete -c amber") && fish.contains("ingest"));
    let bad = env.amber(&["completions", "tcsh"]);
    assert_eq!(bad.status.code(), Some(2), "an unknown shell is a usage error");
}

#[test]
fn man_pages_are_written_one_per_command_and_man_reads_them() {
    let env = Env::new();
    let page = ok(env.amber(&["man"]));
    assert!(page.contains(".TH amber 1"), "{}", &page[..300.min(page.len())]);
    let dir = env.root.path().join("man");
    let out = env.amber(&["man", "--out", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let pages: Vec<String> = std::fs::read_dir(dir.join("man1"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for p in ["amber.1", "amber-recall.1", "amber-runs.1", "amber-runs-list.1", "amber-install.1"] {
        assert!(pages.iter().any(|x| x == p), "{p} missing from {pages:?}");
    }
    assert!(pages.len() > 40, "{} pages", pages.len());
    // man(1) renders the page (where man is installed).
    if let Ok(out) = std::process::Command::new("man")
        .args(["-P", "cat", "-l"])
        .arg(dir.join("man1/amber-recall.1"))
        .env("MANWIDTH", "100")
        .output()
    {
        let shown = text(&out.stdout);
        assert!(shown.contains("amber-recall") && shown.contains("hybrid"), "{shown}");
    }
}

#[test]
fn a_person_reads_iso_8601_local_times_and_a_script_reads_json() {
    let env = Env::new();
    let r: Value = serde_json::from_str(&ok(env.amber(&[
        "--json",
        "remember",
        "--scope",
        "user",
        "The release train leaves on Thursdays.",
    ])))
    .unwrap();
    let id = r["id"].as_str().unwrap().to_string();
    // In India's time zone (+05:30, no summer time) the time says so.
    let get = text(&env.cmd(&["get", &id]).env("TZ", "Asia/Kolkata").output().unwrap().stdout);
    let first = get.lines().next().unwrap();
    let stamp = first.split_whitespace().find(|w| w.contains('T')).unwrap_or_else(|| panic!("{first}"));
    assert!(stamp.ends_with("+05:30"), "{first}");
    let t = chrono::DateTime::parse_from_rfc3339(stamp).unwrap();
    let json: Value = serde_json::from_str(&ok(env.amber(&["--json", "get", &id]))).unwrap();
    assert_eq!(t.timestamp_millis() / 1000, json["created_at"].as_i64().unwrap() / 1000, "the same instant");
    let list = text(&env.cmd(&["list", "user"]).env("TZ", "UTC").output().unwrap().stdout);
    assert!(list.lines().any(|l| l.starts_with(&id) && l.contains("+00:00")), "{list}");
    // --json where a script reads: the config and an agent's registration.
    let cfg: Value = serde_json::from_str(&ok(env.amber(&["--json", "config", "show"]))).unwrap();
    assert!(cfg["socket"].as_str().is_some_and(|s| s.ends_with("amber.sock")), "{cfg}");
    let reg: Value =
        serde_json::from_str(&ok(env.amber(&["--json", "agent", "register", "editor"]))).unwrap();
    assert_eq!(reg["agent"], "editor");
    assert!(std::path::Path::new(reg["token_file"].as_str().unwrap()).exists(), "{reg}");
}

//! Skills compiled from documents, over the real socket and the `amber` command, against
//! a fake OpenAI-compatible endpoint: a person chooses the sources (an agent may not),
//! only the chosen ingested documents are sent, an uncited skill is dropped, the skill is
//! a versioned memory (agent-trusted, never briefed), an unchanged compile calls no
//! model, an edited document recompiles the skill that cites it in the background (the
//! new version supersedes the old), `get_advice` serves it as coming from documents and
//! its moments re-read its If lines and Steps, and a skill whose document is gone is
//! retired. Compile quality is not measured here: no model runs on this machine.

use crate::common;
#[path = "compile/errors.rs"]
mod errors;

use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use common::*;
use serde_json::{Value, json};

const RUNBOOK: &str = "# Deploying to staging\n\nRun `make deploy ENV=staging` from the repository root.\n\n\
                       Then check `curl -fsS https://staging.internal/health` answers 200.\n\n\
                       If the health check fails, roll back with `make rollback ENV=staging`.\n\n\
                       The deploy bot reads GITHUB_TOKEN=ghp_R3aLLyS3cr3tT0k3nF0rD3pl0yB0tXy12345 from its vault.\n";

/// The fake model: a compile call gets one grounded skill (citing the runbook's handle,
/// its steps from the text the call carries) and one citing nothing; a route call picks 1.
fn model(body: &str) -> String {
    let v: Value = serde_json::from_str(body).unwrap();
    let system = v["messages"][0]["content"].as_str().unwrap();
    let user = v["messages"][1]["content"].as_str().unwrap();
    if system.starts_with("You route") {
        return "1".into();
    }
    assert!(system.starts_with("You compile"), "{system}");
    let handle = user
        .lines()
        .find(|l| l.starts_with("SRC") && l.contains("docs/runbooks/deploy.md"))
        .and_then(|l| l.split(':').next())
        .unwrap_or("SRC9")
        .to_string();
    let check = if user.contains("--retry 3") {
        "curl --retry 3 -fsS https://staging.internal/health"
    } else {
        "curl -fsS https://staging.internal/health"
    };
    json!({"skills": [
        {"name": "deploy-staging", "when": "Deploying ledger-api to staging",
         "steps": ["Run `make deploy ENV=staging` from the repository root.", format!("Check `{check}` answers 200.")],
         "if": ["If the health check fails, then roll back with `make rollback ENV=staging`."],
         "cites": [handle],
         "graph": {"purpose": "Deploy to staging", "triggers": ["deploy to staging"], "not_for": ["production"],
                   "inputs": ["env"],
                   "steps": [{"name": "run-deploy", "does": "make deploy", "inputs": ["env"], "outputs": ["release"]},
                             {"name": "check-health", "does": "curl the health endpoint", "inputs": ["release"], "outputs": []}]}},
        {"name": "invented-procedure", "when": "Never written down", "steps": ["Guess."], "if": [], "cites": [],
         "graph": {"purpose": "x", "triggers": ["x"], "not_for": [], "inputs": [],
                   "steps": [{"name": "guess", "does": "guess", "inputs": [], "outputs": []}]}}
    ]})
    .to_string()
}

/// The daemon's log, for a failure's message.
fn logs(root: &Path) -> String {
    let mut out = String::new();
    for f in std::fs::read_dir(root.join("state/logs")).into_iter().flatten().flatten() {
        out.push_str(&std::fs::read_to_string(f.path()).unwrap_or_default());
    }
    out
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(root.join("docs/runbooks")).unwrap();
    std::fs::create_dir_all(root.join("notes")).unwrap();
    std::fs::write(root.join("docs/runbooks/deploy.md"), RUNBOOK).unwrap();
    std::fs::write(root.join("notes/ideas.md"), "# Ideas\n\nMaybe move to blue-green deploys one day.\n")
        .unwrap();
    dir
}

fn run(d: &Daemon, root: &Path, args: &[&str]) -> Value {
    let out = person_at(d, Some(root), args);
    assert!(out.status.success(), "amber {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The current skill memories of a scope found by recall (BM25 on the skill's name).
fn skill_hits(c: &mut amber_ipc::Client, scope: &str) -> Vec<Value> {
    let r = c
        .call_value("recall", json!({ "text": "Skill deploy-staging compiled from documents", "scope": scope, "mode": "bm25", "k": 20 }))
        .unwrap();
    r["hits"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["memory"]["metadata"]["skill"].is_object())
        .cloned()
        .collect()
}

#[test]
fn chosen_documents_compile_into_versioned_skills_served_by_get_advice() {
    let chat = fake_chat_with(model, || {});
    let (d, dir) =
        with_config(&format!("[learn]\nkind = \"openai\"\nurl = \"{}\"\nmodel = \"m\"\n", chat.url));
    let proj = project();
    let root = std::fs::canonicalize(proj.path()).unwrap();
    let root_s = root.to_str().unwrap();
    run(&d, &root, &["ingest", root_s]);
    let mut c = d.client();
    let scope =
        c.call_value("resolve_scope", json!({ "cwd": root })).unwrap()["scope"].as_str().unwrap().to_string();

    // Nothing is compiled until a person chooses; an agent may not choose.
    let none = run(&d, &root, &["compile"]);
    assert!(none["message"].as_str().unwrap().contains("no documents are chosen"), "{none}");
    let e = c.call_value("compile", json!({ "cwd": root, "sources": ["docs/"] })).unwrap_err();
    assert_eq!(e.kind().map(|k| k.as_str()), Some("not_permitted"), "{e}");
    assert_eq!(chat.answered.load(Ordering::SeqCst), 0);

    let first = run(&d, &root, &["compile", "--sources", "docs/runbooks/"]);
    assert_eq!(first["sent"], json!(["docs/runbooks/deploy.md"]), "only the chosen documents: {first}");
    assert_eq!(first["skills"][0]["name"], "deploy-staging");
    assert_eq!(
        (first["skills"][0]["version"].clone(), first["skills"][0]["cites"].clone()),
        (json!(1), json!(["docs/runbooks/deploy.md"]))
    );
    assert_eq!(first["dropped"][0]["name"], "invented-procedure", "an uncited skill is dropped: {first}");
    let bodies = chat.bodies.lock().unwrap().clone();
    assert!(
        bodies[0].contains("make deploy ENV=staging") && !bodies[0].contains("blue-green"),
        "the chosen text only"
    );
    // Only redacted text leaves for the model.
    assert!(
        !bodies[0].contains("ghp_R3aLLy") && bodies[0].contains("[REDACTED:"),
        "compile sent a secret to the model endpoint"
    );

    // A memory: the skill's text, agent-trusted (a model wrote it), stamped by the daemon.
    let hits = skill_hits(&mut c, &scope);
    assert_eq!(hits.len(), 1, "{hits:?}");
    let m = &hits[0]["memory"];
    assert_eq!(m["type"], "pattern");
    assert!(m["content"].as_str().unwrap().contains("1. Run `make deploy ENV=staging`"), "{m}");
    assert_eq!(m["metadata"]["trust"], "agent", "{m}");
    assert_eq!(m["metadata"]["origin"]["tool"], "compile", "{m}");
    let v1 = m["id"].as_str().unwrap().to_string();
    // Never briefed: a skill is served by get_advice.
    let s = c
        .call_value("session_start", json!({ "agent": "ada", "scope": scope, "prompt": "deploy to staging" }))
        .unwrap();
    assert!(!s["briefing"]["text"].as_str().unwrap_or("").contains("deploy-staging"), "{s}");

    // Unchanged: nothing sent, no model call.
    let calls = chat.answered.load(Ordering::SeqCst);
    let again = run(&d, &root, &["compile"]);
    assert_eq!((again["sent"].clone(), again["skills"].clone()), (json!([]), json!([])), "{again}");
    assert_eq!(chat.answered.load(Ordering::SeqCst), calls);

    // An edited document recompiles the skill citing it, in the background after ingest.
    std::fs::write(root.join("docs/runbooks/deploy.md"), RUNBOOK.replace("curl -fsS", "curl --retry 3 -fsS"))
        .unwrap();
    run(&d, &root, &["ingest", root_s]);
    let t0 = Instant::now();
    let v2 = loop {
        let hits = skill_hits(&mut c, &scope);
        if let Some(h) = hits.iter().find(|h| h["memory"]["content"].as_str().unwrap().contains("(version 2"))
        {
            break h["memory"].clone();
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "no version 2 after the edit: {hits:?}\n{}",
            logs(dir.path())
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(v2["content"].as_str().unwrap().contains("--retry 3"), "{v2}");
    let old = c.call_value("get", json!({ "id": v1 })).unwrap();
    assert!(old["memory"]["superseded_by"].is_string(), "the old version is retired: {old}");
    assert_eq!(skill_hits(&mut c, &scope).len(), 1, "recall finds the current version only");

    // get_advice serves it as coming from documents; moments re-read its If lines and Steps.
    let a = c
        .call_value("get_advice", json!({ "task": "deploy ledger-api to staging", "scope": scope }))
        .unwrap();
    assert_eq!(
        (a["from"].clone(), a["skills"].clone(), a["version"].clone()),
        (json!("documents"), json!(["deploy-staging"]), json!(2)),
        "{a}"
    );
    assert!(
        a["text"]
            .as_str()
            .unwrap()
            .starts_with("Amber: a skill for this task, compiled by a model from the project's documents"),
        "{a}"
    );
    // A skill whose trust is external (compiled from a document that is not the person's,
    // or demoted by the person) says so in every label.
    let v2_id = v2["id"].as_str().unwrap().to_string();
    run(&d, &root, &["trust", &v2_id, "external"]);
    let e = c
        .call_value("get_advice", json!({ "task": "deploy ledger-api to staging", "scope": scope }))
        .unwrap();
    assert_eq!(e["from"], "external documents", "{e}");
    assert!(
        e["text"]
            .as_str()
            .unwrap()
            .starts_with("Amber: a skill for this task, compiled by a model from external documents")
            && e["message"].as_str().unwrap().contains("compiled from external documents"),
        "{e}"
    );
    run(&d, &root, &["trust", &v2_id, "agent"]);
    let sid = a["session_id"].as_str().unwrap();
    let stuck =
        c.call_value("get_advice", json!({ "task": "x", "session_id": sid, "moment": "stuck" })).unwrap();
    assert_eq!(stuck["part"], "If");
    assert!(stuck["note"].as_str().unwrap().contains("make rollback ENV=staging"), "{stuck}");
    let done =
        c.call_value("get_advice", json!({ "task": "x", "session_id": sid, "moment": "done" })).unwrap();
    assert!(done["note"].as_str().unwrap().starts_with("1. Run `make deploy ENV=staging`"), "{done}");

    // The document is gone: the skill is retired.
    std::fs::remove_file(root.join("docs/runbooks/deploy.md")).unwrap();
    run(&d, &root, &["ingest", root_s]);
    let t0 = Instant::now();
    loop {
        let r = run(&d, &root, &["compile"]);
        if r["retired"] == json!(["deploy-staging"]) || skill_hits(&mut c, &scope).is_empty() {
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(20), "not retired: {r}");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(skill_hits(&mut c, &scope).is_empty(), "a retired skill is not found");
}

/// The fake model for linking: runs sort by their word (deploy or rollback), a note is
/// written for the situation with wrong runs, the rollbacks situation is linked to the
/// skill, and routing picks the line whose key names the task's word.
fn linking_model(body: &str) -> String {
    let v: Value = serde_json::from_str(body).unwrap();
    let system = v["messages"][0]["content"].as_str().unwrap();
    let user = v["messages"][1]["content"].as_str().unwrap();
    let word = |t: &str| if t.contains("rollback") { "ops/rollbacks" } else { "ops/deploys" };
    if system.starts_with("You sort") {
        let listed = user.split("<tasks>\n").nth(1).unwrap().split("\n</tasks>").next().unwrap();
        let tasks: Vec<Value> =
            listed.lines().enumerate().map(|(i, t)| json!({"task": i, "situation": word(t)})).collect();
        json!({"situations": [{"key": "ops/deploys", "line": "Deploys that fail"},
                              {"key": "ops/rollbacks", "line": "Rolling a release back"}], "tasks": tasks})
        .to_string()
    } else if system.starts_with("You tidy") {
        json!({"merge": []}).to_string()
    } else if system.starts_with("You write") {
        "## When\nA deploy fails.\n## Steps\n1. Read the log.\n## Pitfalls\n- Deploying twice.\n## Evidence\n[R1] went wrong."
            .into()
    } else if system.starts_with("You link") {
        assert!(user.contains("deploy-staging") && user.contains("ops/rollbacks"), "{user}");
        json!({"links": [{"situation": "ops/rollbacks", "skills": ["deploy-staging"]},
                         {"situation": "ops/deploys", "skills": ["deploy-staging"]}]})
        .to_string()
    } else if system.starts_with("You route") {
        let task = user.split("<task>\n").nth(1).unwrap_or("");
        // The list is in the system part, the task alone in the user part.
        assert!(!user.contains("Situations:"), "{user}");
        let listed = system.split("Situations:\n").nth(1).unwrap_or("");
        let n =
            listed.lines().find(|l| l.contains(word(task))).and_then(|l| l.split('.').next()).unwrap_or("0");
        n.to_string()
    } else {
        model(body)
    }
}

#[test]
fn situations_link_to_skills_and_get_advice_serves_them_with_a_note_or_in_its_place() {
    let chat = fake_chat_with(linking_model, || {});
    let (d, _dir) =
        with_config(&format!("[learn]\nkind = \"openai\"\nurl = \"{}\"\nmodel = \"m\"\n", chat.url));
    let proj = project();
    let root = std::fs::canonicalize(proj.path()).unwrap();
    run(&d, &root, &["ingest", root.to_str().unwrap()]);
    let mut c = d.client();
    let scope =
        c.call_value("resolve_scope", json!({ "cwd": root })).unwrap()["scope"].as_str().unwrap().to_string();
    run(&d, &root, &["compile", "--sources", "docs/runbooks/"]);
    // Deploys go wrong twice (a note), rollbacks go right (no note).
    for (task, reward) in [
        ("the deploy fails, try 1", -1.0),
        ("the deploy fails, try 2", -1.0),
        ("the deploy fails, try 3", 1.0),
        ("roll back the release, rollback 1", 1.0),
    ] {
        let r = c
            .call_value(
                "run_record",
                json!({ "agent": "ada", "scope": scope, "task": task, "trace": "did it" }),
            )
            .unwrap();
        let id = r["results"][0]["id"].as_str().unwrap();
        c.call_value("run_reward", json!({ "agent": "ada", "run_id": id, "reward": reward })).unwrap();
    }
    let learned = c.call_value("advice_learn", json!({ "scope": scope })).unwrap();
    assert_eq!(
        (learned["written"][0]["situation"].clone(), learned["linked"].clone()),
        (json!("ops/deploys"), json!(2)),
        "{learned}"
    );

    // A note with its linked skill: named, and in full when asked.
    let a = c
        .call_value("get_advice", json!({ "task": "the deploy fails again", "scope": scope, "skills": true }))
        .unwrap();
    assert_eq!(
        (a["situation"].clone(), a["from"].clone(), a["skills"].clone()),
        (json!("ops/deploys"), json!("runs"), json!(["deploy-staging"])),
        "{a}"
    );
    let note = a["note"].as_str().unwrap();
    assert!(
        note.starts_with("## When\nA deploy fails.")
            && note.contains("## Skill deploy-staging (version 1, from documents)"),
        "{note}"
    );
    // A situation with no note: its skill in full, from documents; a linked skill is not a line of its own.
    let b = c
        .call_value("get_advice", json!({ "task": "do a rollback of the release", "scope": scope }))
        .unwrap();
    assert_eq!(
        (b["situation"].clone(), b["from"].clone(), b["skills"].clone()),
        (json!("ops/rollbacks"), json!("documents"), json!(["deploy-staging"])),
        "{b}"
    );
    assert!(b["note"].as_str().unwrap().starts_with("## Skill deploy-staging (version 1)"), "{b}");
    assert_eq!(b["considered"], 2, "two situation lines, the linked skill not listed as itself: {b}");
    let bodies = chat.bodies.lock().unwrap().clone();
    assert_eq!(bodies.iter().filter(|x| x.contains("You link")).count(), 1, "one linking call, at learning");

    // Two more wrong deploys: the note is edited, and its writer now reads the linked procedure.
    for i in 4..6 {
        let task = format!("the deploy fails, try {i}");
        let r = c.call_value("run_record", json!({ "agent": "ada", "scope": scope, "task": task })).unwrap();
        let id = r["results"][0]["id"].as_str().unwrap();
        c.call_value("run_reward", json!({ "agent": "ada", "run_id": id, "reward": -1.0 })).unwrap();
    }
    let again = c.call_value("advice_learn", json!({ "scope": scope })).unwrap();
    assert_eq!(again["written"][0]["version"], 2, "{again}");
    let bodies = chat.bodies.lock().unwrap().clone();
    let writes: Vec<&String> = bodies.iter().filter(|x| x.contains("You write")).collect();
    assert!(!writes[0].contains("<procedure deploy-staging>"), "nothing was linked at the first writing");
    let last: Value = serde_json::from_str(writes.last().unwrap()).unwrap();
    let user = last["messages"][1]["content"].as_str().unwrap();
    assert!(user.contains("<procedure deploy-staging>\n## When\nDeploying ledger-api to staging"), "{user}");
}

/// A fake model that compiles one skill citing the first source it is sent.
fn citing_first(body: &str) -> String {
    let v: Value = serde_json::from_str(body).unwrap();
    let system = v["messages"][0]["content"].as_str().unwrap();
    let user = v["messages"][1]["content"].as_str().unwrap();
    if system.starts_with("You route") {
        return "1".into();
    }
    let handle = user.lines().find(|l| l.starts_with("SRC")).and_then(|l| l.split(':').next()).unwrap();
    json!({"skills": [
        {"name": "deploy-staging", "when": "Deploying ledger-api to staging",
         "steps": ["Run `make deploy ENV=staging` from the repository root."], "if": [], "cites": [handle],
         "graph": {"purpose": "Deploy to staging", "triggers": ["deploy to staging"], "not_for": [], "inputs": [],
                   "steps": [{"name": "run-deploy", "does": "make deploy", "inputs": [], "outputs": []}]}}
    ]})
    .to_string()
}

/// Issue 46: a skill compiled from a document that is not the person's (a vendored copy
/// of another project's runbook, no `.git` of its own) is `external` without anyone
/// lowering it, and what the opening-prompt hook hands the agent (`get_advice`'s text)
/// says so.
#[test]
fn a_skill_compiled_from_an_external_document_is_external_and_says_so() {
    let chat = fake_chat_with(citing_first, || {});
    let (d, _dir) =
        with_config(&format!("[learn]\nkind = \"openai\"\nurl = \"{}\"\nmodel = \"m\"\n", chat.url));
    let proj = project();
    let root = std::fs::canonicalize(proj.path()).unwrap();
    std::fs::create_dir_all(root.join("third_party/upstream")).unwrap();
    std::fs::write(root.join("third_party/upstream/RUNBOOK.md"), RUNBOOK).unwrap();
    let ingested = run(&d, &root, &["ingest", root.to_str().unwrap()]);
    let vendored = ingested["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"].as_str().unwrap().ends_with("third_party/upstream/RUNBOOK.md"))
        .unwrap_or_else(|| panic!("{ingested}"));
    assert_eq!(vendored["trust"], "external", "{vendored}");
    let mut c = d.client();
    let scope =
        c.call_value("resolve_scope", json!({ "cwd": root })).unwrap()["scope"].as_str().unwrap().to_string();
    let r = run(&d, &root, &["compile", "--sources", "third_party/"]);
    assert_eq!(r["sent"], json!(["third_party/upstream/RUNBOOK.md"]), "{r}");
    assert_eq!(r["skills"][0]["name"], "deploy-staging", "{r}");
    let hits = skill_hits(&mut c, &scope);
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0]["memory"]["metadata"]["trust"], "external", "the lowest of its sources: {hits:?}");
    // What the hook asks at the opening prompt, and injects when there is text.
    // A session of the holdout arm is given no advice: take one that is not.
    let s = (0..50)
        .map(|i| {
            c.call_value("session_start", json!({ "agent": "ada", "scope": scope, "key": format!("k{i}") }))
                .unwrap()
        })
        .find(|s| s["withheld"] != true)
        .unwrap();
    let sid = s["session_id"].as_str().unwrap();
    let a = c
        .call_value(
            "get_advice",
            json!({ "task": "deploy ledger-api to staging", "session_id": sid, "moment": "start" }),
        )
        .unwrap();
    assert_eq!(a["from"], "external documents", "{a}");
    assert!(
        a["text"]
            .as_str()
            .unwrap()
            .starts_with("Amber: a skill for this task, compiled by a model from external documents"),
        "{a}"
    );
}

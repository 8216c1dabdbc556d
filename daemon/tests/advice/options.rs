//! `get_advice`'s options through the daemon: `format: checklist`, `max_chars` (a long
//! note cut at a line, saying so), `notes: false` (skills only), and `done` re-reading
//! the Pitfalls and the Steps together.

use serde_json::{Value, json};

use super::common::*;

/// A note long enough to be cut: 30 steps.
fn long_note() -> String {
    let steps: String =
        (1..=30).map(|i| format!("{i}. Check the migration's step number {i} against the copy.\n")).collect();
    format!(
        "## When\nA schema migration fails.\n## Steps\n{steps}## Pitfalls\n- Editing a migration that was applied.\n\
         ## Evidence\n[R1] and [R2] went wrong."
    )
}

fn model(body: &str) -> String {
    let (system, user) = chat_parts(body);
    if system.starts_with("You sort") {
        sort_reply(&user, &[("db/migrations", "Schema migrations that fail")], |_| "db/migrations".into())
    } else if system.starts_with("You tidy") {
        json!({"merge": []}).to_string()
    } else if system.starts_with("You write") {
        long_note()
    } else if system.starts_with("You route") {
        if system.contains("db/migrations") { "1".into() } else { "0".into() }
    } else {
        r#"{"verdict": 1, "reason": "fine"}"#.into()
    }
}

fn kind(e: amber_ipc::ClientError) -> String {
    e.kind().map(|k| k.as_str().to_string()).unwrap_or_else(|| format!("{e}"))
}

#[test]
fn a_note_comes_as_a_checklist_cut_to_size_or_not_at_all_and_done_rereads_two_parts() {
    let chat = fake_chat_with(model, || {});
    let (d, _dir) = with_config(&format!(
        "[learn]\nkind = \"openai\"\nurl = \"{}\"\nmodel = \"m\"\ninterval_s = 0\n",
        chat.url
    ));
    let mut c = d.client();
    for (i, reward) in [-1.0, -1.0, 1.0].iter().enumerate() {
        let r = c
            .call_value(
                "run_record",
                json!({ "agent": "ada", "scope": "opts", "task": format!("fix the failing migration {i}") }),
            )
            .unwrap();
        c.call_value(
            "run_reward",
            json!({ "agent": "ada", "run_id": r["results"][0]["id"], "reward": reward }),
        )
        .unwrap();
    }
    c.call_value("advice_learn", json!({ "scope": "opts", "cache": false })).unwrap();
    let session = |c: &mut amber_ipc::Client| {
        c.call_value("session_start", json!({ "agent": "ada", "scope": "opts" })).unwrap()["session_id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let ask = |c: &mut amber_ipc::Client, extra: Value| {
        let mut p = json!({ "task": "the migration fails" });
        p.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        c.call_value("get_advice", p)
    };

    // A checklist: steps and pitfalls as boxes, no evidence.
    let sid = session(&mut c);
    let list = ask(&mut c, json!({ "session_id": sid, "format": "checklist" })).unwrap();
    let note = list["note"].as_str().unwrap();
    assert!(note.contains("- [ ] Check the migration's step number 1 against the copy."), "{note}");
    assert!(note.contains("- [ ] Editing a migration that was applied."), "{note}");
    assert!(!note.contains("Evidence") && !note.contains("[R1]"), "{note}");
    assert!(list["text"].as_str().unwrap().lines().skip(1).all(|l| l.starts_with("│ ")), "still quoted");

    // Cut at a line to at most max_chars, saying so.
    let sid = session(&mut c);
    let cut = ask(&mut c, json!({ "session_id": sid, "max_chars": 500 })).unwrap();
    let note = cut["note"].as_str().unwrap();
    assert!(long_note().chars().count() > 1_000);
    assert!(note.chars().count() <= 500 && note.ends_with("the rest of the note is left out)"), "{note}");
    assert!(note.starts_with("## When\nA schema migration fails.\n## Steps\n1. Check"), "{note}");

    // Done, with nothing re-read before: the Pitfalls and the Steps, each under its heading, once.
    let done = ask(&mut c, json!({ "session_id": sid, "moment": "done" })).unwrap();
    assert_eq!(done["part"], "Pitfalls and Steps", "{done}");
    let note = done["note"].as_str().unwrap();
    assert!(
        note.starts_with("## Pitfalls\n- Editing a migration that was applied.\n## Steps\n1. Check"),
        "{note}"
    );
    let again = ask(&mut c, json!({ "session_id": sid, "moment": "stuck" })).unwrap();
    assert_eq!((again["given_earlier"].clone(), again.get("note")), (json!(true), None), "{again}");

    // No learned notes: nothing else to give here (no skills).
    let sid = session(&mut c);
    let none = ask(&mut c, json!({ "session_id": sid, "notes": false })).unwrap();
    assert!(none.get("note").is_none(), "{none}");
    assert!(none["message"].as_str().unwrap().contains("no advice has been learned"), "{none}");

    for bad in [json!({ "format": "bullets" }), json!({ "max_chars": 499 })] {
        assert_eq!(kind(ask(&mut c, bad.clone()).unwrap_err()), "invalid_params", "{bad}");
    }
}

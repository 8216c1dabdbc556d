//! A scripted month of advice through the daemon: 40 sessions by five voices (ada, bob
//! and cy, and two agents, codex and gemini), each served one of two notes; a fake judge
//! answers per note by a rule (the migrations note is applied and helps, the deploy note
//! is applied and does not). The tallies, the ratification at the evidence bar, the
//! withheld note, the person's word overriding the judge's, and `doctor`'s lines must
//! come out as the rule implies.

use serde_json::{Value, json};

use super::common::*;

const HELPS: &str = "## When\nA schema migration fails.\n## Steps\n1. Run the migration on a copy.\n\
                     ## Pitfalls\n- Editing an applied migration.\n## Evidence\n[R1] went wrong.";
const DOES_NOT: &str = "## When\nA staging deploy fails.\n## Steps\n1. Restart the VPN.\n\
                        ## Pitfalls\n- Deploying twice.\n## Evidence\n[R1] went wrong.";

fn situation_of(text: &str) -> &'static str {
    if text.contains("deploy") { "deploy/staging" } else { "db/migrations" }
}

/// The fake model's rule for every prompt the loop sends.
fn model(body: &str) -> String {
    let (system, user) = chat_parts(body);
    let (system, user) = (system.as_str(), user.as_str());
    if system.starts_with("You sort") {
        let known = [
            ("db/migrations", "Schema migrations that fail"),
            ("deploy/staging", "Staging deploys that fail"),
        ];
        sort_reply(user, &known, |t| situation_of(t).to_string())
    } else if system.starts_with("You tidy") {
        json!({"merge": []}).to_string()
    } else if system.starts_with("You write") {
        if user.contains("deploy") { DOES_NOT.into() } else { HELPS.into() }
    } else if system.starts_with("You route") {
        // Only a situation listed: a withheld note's is not.
        let key = situation_of(user);
        if system.contains(key) { key.into() } else { "0".into() }
    } else if system.starts_with("You read the record") {
        // Per note, by the rule: the migrations note helped, the deploy note did not.
        let notes: Vec<Value> = user
            .split("<note N")
            .skip(1)
            .map(|part| {
                let n = part.split('>').next().unwrap();
                let helped = if part.contains("Restart the VPN") { "no" } else { "yes" };
                json!({"note": format!("N{n}"), "applied": "yes", "helped": helped, "reason": "by the rule"})
            })
            .collect();
        json!({ "notes": notes }).to_string()
    } else if system.starts_with("Reply with the word ok") {
        "ok".into()
    } else {
        r#"{"verdict": 1, "reason": "it went right"}"#.into()
    }
}

const VOICES: [&str; 5] = ["ada", "bob", "cy", "codex", "gemini"];

fn tally<'a>(listed: &'a Value, situation: &str) -> &'a Value {
    let s =
        listed["situations"].as_array().unwrap().iter().find(|s| s["situation"]["key"] == situation).unwrap();
    &s["tallies"][0]
}

fn check<'a>(doctor: &'a Value, name: &str) -> &'a Value {
    doctor["checks"].as_array().unwrap().iter().find(|c| c["name"] == name).unwrap()
}

#[test]
fn a_scripted_month_tallies_ratifies_withholds_and_the_persons_word_counts() {
    let chat = fake_chat_with(model, || {});
    let config = format!(
        "[learn]\nkind = \"openai\"\nurl = \"{}\"\nmodel = \"m\"\njudge_delay_s = 0\ninterval_s = 0\n",
        chat.url
    );
    let (d, _dir) = with_config(&config);
    let mut c = d.client();
    // Runs to learn from: two wrong and one right in each situation, from three agents.
    for (i, (agent, reward)) in [("ada", -1.0), ("bob", -1.0), ("cy", 1.0)].iter().enumerate() {
        for task in ["fix the failing schema migration", "fix the failing staging deploy"] {
            let r = c
                .call_value(
                    "run_record",
                    json!({ "agent": agent, "scope": "month", "task": format!("{task}, try {i}") }),
                )
                .unwrap();
            let id = r["results"][0]["id"].clone();
            c.call_value("run_reward", json!({ "agent": agent, "run_id": id, "reward": reward })).unwrap();
        }
    }
    let learned = c.call_value("advice_learn", json!({ "scope": "month", "cache": false })).unwrap();
    assert_eq!(learned["written"].as_array().unwrap().len(), 2, "{learned}");

    // The month: 40 sessions, each voice 8, alternating the two tasks.
    let mut sessions: Vec<(String, &str, &str)> = Vec::new();
    for i in 0..40 {
        let voice = VOICES[i % 5];
        let task = if (i / 5) % 2 == 0 {
            "the schema migration fails again"
        } else {
            "the staging deploy fails again"
        };
        let s = c.call_value("session_start", json!({ "agent": voice, "scope": "month" })).unwrap();
        let sid = s["session_id"].as_str().unwrap().to_string();
        let got = c.call_value("get_advice", json!({ "task": task, "session_id": sid })).unwrap();
        assert_eq!(got["situation"], situation_of(task), "{got}");
        c.call_value("session_end", json!({ "session_id": sid, "transcript": format!("worked on: {task}") }))
            .unwrap();
        sessions.push((sid, voice, situation_of(task)));
    }
    let before = c.call_value("doctor", json!({ "scope": "month" })).unwrap();
    assert_eq!(check(&before, "model")["health"], "ok", "{before}");
    assert_eq!(check(&before, "judge")["figures"]["due_note_sessions"], 40, "{before}");
    assert_eq!(check(&before, "judge")["health"], "warn");
    assert_eq!(check(&before, "notes")["figures"]["unjudged"], 2, "{before}");

    // The judge: one call per session, a word per note.
    let calls_before =
        chat.bodies.lock().unwrap().iter().filter(|b| b.contains("You read the record")).count();
    let judged = c.call_value("judge_runs", json!({ "scope": "month", "limit": 1000 })).unwrap();
    assert_eq!(judged["notes"].as_array().unwrap().len(), 40, "{judged}");
    let calls = chat.bodies.lock().unwrap().iter().filter(|b| b.contains("You read the record")).count();
    assert_eq!(calls - calls_before, 40, "one call a session");
    let again = c.call_value("judge_runs", json!({ "scope": "month", "limit": 1000 })).unwrap();
    assert_eq!(again["notes"], json!([]), "a session's notes are judged once");

    let listed = c.call_value("advice_list", json!({ "scope": "month" })).unwrap();
    let helps = tally(&listed, "db/migrations");
    assert_eq!(
        (&helps["served"], &helps["voices"], &helps["applied"], &helps["helped"], &helps["not_helped"]),
        (&json!(20), &json!(5), &json!(5), &json!(5), &json!(0)),
        "each voice counts once, by its latest session: {helps}"
    );
    assert_eq!(helps["standing"], "ratified");
    let fails = tally(&listed, "deploy/staging");
    assert_eq!(
        (&fails["helped"], &fails["not_helped"], &fails["standing"]),
        (&json!(0), &json!(5), &json!("unhelpful"))
    );

    // The ratified note says so when served; the unhelpful one is withheld.
    let s = c.call_value("session_start", json!({ "agent": "ada", "scope": "month" })).unwrap();
    let sid = s["session_id"].as_str().unwrap();
    let got = c
        .call_value("get_advice", json!({ "task": "the schema migration fails", "session_id": sid }))
        .unwrap();
    assert!(got["text"].as_str().unwrap().contains("ratified: it helped 5 of the 5 voices"), "{got}");
    assert_eq!(got["tally"]["standing"], "ratified");
    let got =
        c.call_value("get_advice", json!({ "task": "the staging deploy fails", "session_id": sid })).unwrap();
    assert!(got.get("note").is_none(), "the unhelpful note is not served: {got}");
    let routed = chat.bodies.lock().unwrap().iter().rev().find(|b| b.contains("You route")).cloned().unwrap();
    assert!(!routed.contains("deploy/staging"), "nor offered to the router: {routed}");

    // The person's word on three voices' latest deploy sessions overrides the judge's.
    let latest_deploy = |voice: &str| {
        sessions.iter().rev().find(|(_, v, s)| *v == voice && *s == "deploy/staging").unwrap().0.clone()
    };
    let refused = c
        .call_value(
            "note_verdict",
            json!({ "session_id": latest_deploy("ada"), "situation": "deploy/staging", "applied": "yes", "helped": "yes" }),
        )
        .unwrap_err();
    assert_eq!(refused.kind().map(|k| k.as_str()), Some("not_permitted"), "a client is not the person");
    let mut last = Value::Null;
    for voice in ["ada", "bob", "cy"] {
        last = as_person(
            &d,
            &[
                "advice",
                "verdict",
                &latest_deploy(voice),
                "deploy/staging",
                "--applied",
                "yes",
                "--helped",
                "yes",
            ],
        );
    }
    assert_eq!(last["verdict"]["by"], "person");
    assert_eq!(
        (&last["tally"]["helped"], &last["tally"]["not_helped"], &last["tally"]["standing"]),
        (&json!(3), &json!(2), &json!("ratified")),
        "{last}"
    );
    let wrong = person(
        &d,
        &["advice", "verdict", &latest_deploy("ada"), "db/nothing", "--applied", "no", "--helped", "no"],
    );
    assert!(!wrong.status.success(), "a note the session was not served");

    let after = as_person(&d, &["doctor", "--scope", "month"]);
    assert_eq!(check(&after, "judge")["figures"]["due_note_sessions"], 0, "{after}");
    assert_eq!(check(&after, "notes")["figures"]["ratified"], 2, "{after}");
    assert_eq!(check(&after, "notes")["figures"]["unhelpful"], 0, "{after}");
    assert_eq!(check(&after, "runs")["figures"]["runs"], 6, "{after}");
    let names: Vec<&str> =
        after["checks"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["model", "runs", "judge", "notes", "skills", "lift"]);
}

//! A new agent token can be undone (issue 46): `amber agent register NAME` keeps the
//! token it replaces, and `amber agent restore NAME` gives the name its old token back
//! (daemon and file), retiring the undone one in its place. Real daemon.

use crate::common;

use amber_ipc::Client;
use common::{Env, text};
use serde_json::json;

fn ok(out: std::process::Output) -> String {
    assert!(out.status.success(), "stdout: {}\nstderr: {}", text(&out.stdout), text(&out.stderr));
    text(&out.stdout)
}

/// True when a session of `bot` starts with this token.
fn starts(env: &Env, token: &str, key: &str) -> bool {
    let mut c = Client::connect(&env.socket).unwrap();
    c.call_value("session_start", json!({ "agent": "bot", "agent_token": token, "key": key })).is_ok()
}

#[test]
fn a_replaced_token_can_be_restored_and_the_restore_undone() {
    let env = Env::new();
    let file = env.root.path().join("state/agents/bot.token");
    let token = || std::fs::read_to_string(&file).unwrap();
    ok(env.amber(&["agent", "register", "bot"]));
    let a = token();
    ok(env.amber(&["agent", "register", "bot"]));
    let b = token();
    assert_ne!(a, b);
    assert!(!starts(&env, &a, "k1") && starts(&env, &b, "k2"), "the new token replaced the old");

    let said = ok(env.amber(&["agent", "restore", "bot"]));
    assert!(said.contains("restored bot's token"), "{said}");
    assert_eq!(token(), a, "the old token's file is back");
    assert!(
        starts(&env, &a, "k3") && !starts(&env, &b, "k4"),
        "the old token works again, the undone one not"
    );

    // The restore is undone the same way.
    ok(env.amber(&["agent", "restore", "bot"]));
    assert_eq!(token(), b);
    assert!(starts(&env, &b, "k5") && !starts(&env, &a, "k6"));

    // A name whose token was never replaced has nothing to restore.
    ok(env.amber(&["agent", "register", "solo"]));
    let none = env.amber(&["agent", "restore", "solo"]);
    assert!(
        !none.status.success() && text(&none.stderr).contains("nothing to restore"),
        "{}",
        text(&none.stderr)
    );
    // Recorded for the person like every change of the person's door (no agent session
    // is live here, so nothing is listed; the method is a person's only).
    let mut c = Client::connect(&env.socket).unwrap();
    c.call_value("session_start", json!({ "agent": "agent-x", "key": "kx" })).unwrap();
    let e = c.call_value("agent_restore", json!({ "name": "bot" })).unwrap_err();
    assert_eq!(
        e.kind(),
        Some(amber_ipc::protocol::ErrorKind::NotPermitted),
        "a socket client is not the person"
    );
}

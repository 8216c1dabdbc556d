//! `compile --kind errors`: procedures from errors seen again and again. Only a person
//! chooses the kind; an error recorded twice or more becomes one source
//! (`errors/<signature>`), a one-off error does not; the skill is served as coming from
//! error records, never more trusted than the records.

use serde_json::json;

use super::common::*;
use super::run;

const E0432: &str =
    "cargo build failed:\nerror[E0432]: unresolved import `ledger::client`\n --> src/main.rs:3:5";

#[test]
fn errors_seen_again_and_again_compile_into_a_skill_served_as_from_error_records() {
    let chat = fake_chat_with(super::citing_first, || {});
    let (d, _dir) =
        with_config(&format!("[learn]\nkind = \"openai\"\nurl = \"{}\"\nmodel = \"m\"\n", chat.url));
    let proj = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(proj.path().join(".git")).unwrap();
    let root = std::fs::canonicalize(proj.path()).unwrap();
    let mut c = d.client();
    let scope =
        c.call_value("resolve_scope", json!({ "cwd": root })).unwrap()["scope"].as_str().unwrap().to_string();
    for (i, text) in [
        format!("{E0432}\nafter adding the client module"),
        format!("{E0432}\nagain, on the CI runner"),
        "npm ERR! code ERESOLVE\nnpm ERR! could not resolve the peer dependency".to_string(),
        "The deploy went fine today.".to_string(),
    ]
    .iter()
    .enumerate()
    {
        c.call_value("remember", json!({ "content": format!("{text} ({i})"), "scope": scope })).unwrap();
    }
    // An agent's client does not choose what is compiled.
    let refused = c.call_value("compile", json!({ "cwd": root, "kind": "errors" })).unwrap_err();
    assert_eq!(refused.kind().map(|k| k.as_str()), Some("not_permitted"));

    let r = run(&d, &root, &["compile", "--kind", "errors"]);
    assert_eq!(
        r["documents"], 1,
        "one error seen twice; the one-off and the error-free memory are not sources: {r}"
    );
    let cites = r["skills"][0]["cites"].as_array().unwrap();
    assert!(cites[0].as_str().unwrap().starts_with("errors/e0432-unresolved-import"), "{r}");
    let bodies = chat.bodies.lock().unwrap().clone();
    let sent = bodies.iter().find(|b| b.contains("You compile")).unwrap();
    assert!(sent.contains("after adding the client module") && sent.contains("on the CI runner"), "{sent}");
    assert!(!sent.contains("ERESOLVE") && !sent.contains("deploy went fine"), "{sent}");

    let again = run(&d, &root, &["compile"]);
    assert_eq!(again["skills"], json!([]), "nothing new: the kind is kept, nothing sent: {again}");

    let got = c
        .call_value("get_advice", json!({ "task": "the build fails on an import", "scope": scope }))
        .unwrap();
    assert_eq!(got["from"], "error records", "{got}");
    let text = got["text"].as_str().unwrap();
    assert!(
        text.starts_with(
            "Amber: a skill for this task, compiled by a model from errors seen again and again"
        ),
        "{text}"
    );
}

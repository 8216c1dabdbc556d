//! Skills compiled from documents against a local fake OpenAI-compatible server on
//! 127.0.0.1: grounding, graph validation, batching limits, audiences, the library each
//! batch sees, updates, a malformed reply and a refused connection; and what a changed
//! source makes stale, on plain data.

use crate::common;

use common::{Fake, learner};

use amber_core::skill::{Skill, SourceRef, StepGraph};
use amber_tiers::advice::ModelError;
use amber_tiers::advice::compile::{
    Limits, Source, batches, compile, compile_batch, sources_to_recompile, stale,
};
use serde_json::{Value, json};
use sha2::Digest;

/// A fake endpoint answering `answer(system + "\n" + user)`.
fn fake(answer: impl Fn(&str) -> String + Send + 'static) -> Fake {
    common::fake(move |t| Some(answer(t)))
}

fn user_texts(f: &Fake) -> Vec<String> {
    let bodies = f.bodies.lock().unwrap();
    bodies.iter().map(|b| b["messages"][1]["content"].as_str().unwrap().to_string()).collect()
}

fn source(scope: &str, path: &str, text: &str) -> Source {
    Source { scope: scope.parse().unwrap(), path: path.into(), text: text.into() }
}

fn sha(text: &str) -> String {
    hex::encode(sha2::Sha256::digest(text.as_bytes()))
}

fn graph() -> Value {
    json!({
        "purpose": "Cut a release of the service",
        "triggers": ["a release is asked for"],
        "not_for": ["a hotfix"],
        "inputs": ["version"],
        "steps": [
            {"name": "build", "does": "make dist VERSION=<version>", "inputs": ["version"], "outputs": ["tarball"]},
            {"name": "verify", "does": "sha256sum -c SUMS", "inputs": ["tarball"], "outputs": []}
        ]
    })
}

fn skill_json(name: &str, cites: Value) -> Value {
    json!({
        "name": name,
        "when": "  A release of the service is due.  ",
        "steps": ["Run `make dist VERSION=1.2.3`.", "Check with `sha256sum -c SUMS`."],
        "if": ["If the check fails then delete dist/ and build again."],
        "cites": cites,
        "graph": graph(),
    })
}

fn reply(skills: Vec<Value>) -> String {
    json!({ "skills": skills }).to_string()
}

/// The characters of source text inside the `<source>` fences of a user text.
fn source_chars(user: &str) -> usize {
    user.split("<source>\n").skip(1).map(|s| s.split("\n</source>").next().unwrap().chars().count()).sum()
}

#[test]
fn a_skill_that_cites_no_source_of_its_batch_is_dropped_and_a_cited_one_kept() {
    let f = fake(|text| {
        assert!(text.starts_with("You compile"), "{text}");
        reply(vec![
            skill_json("uncited", json!([])),
            skill_json("unknown-handle", json!(["SRC9", "doc"])),
            skill_json("Cut a Release!", json!(["[SRC2]", "SRC9"])),
        ])
    });
    let a = source("proj", "docs/a.md", "Nothing to see.");
    let b = source("proj", "docs/release.md", "Run make dist VERSION=x, then sha256sum -c SUMS.");
    let r = compile_batch(&learner(&f.url), &[&a, &b], &[], &Limits::default(), 77).unwrap();
    assert_eq!(r.skills.len(), 1, "{r:?}");
    let s = &r.skills[0];
    assert_eq!(s.name, "cut-a-release");
    assert_eq!(s.cites, [SourceRef { path: "docs/release.md".into(), sha256: sha(&b.text) }]);
    assert_eq!((s.version, s.created_at, s.model.as_str()), (1, 77, "openai:test-model"));
    assert_eq!(s.scope.as_str(), "proj");
    assert_eq!(s.when, "A release of the service is due.");
    assert_eq!(s.steps[0], "Run `make dist VERSION=1.2.3`.", "exact values are kept");
    assert!(s.text().contains("## Sources\n- docs/release.md ("), "{}", s.text());
    let dropped: Vec<&str> = r.dropped.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(dropped, ["uncited", "unknown-handle"]);
    assert!(r.dropped.iter().all(|d| d.reason.contains("cites no source")), "{:?}", r.dropped);
    let user = &user_texts(&f)[0];
    assert!(user.contains("SRC1: docs/a.md\n<source>\nNothing to see.\n</source>"), "{user}");
    assert!(user.contains("SRC2: docs/release.md\n<source>\n"), "{user}");
    assert!(user.contains("Library (skills compiled so far):\n(none yet)"), "{user}");
}

#[test]
fn a_skill_whose_graph_fails_validation_is_not_kept() {
    let mut later = skill_json("input-nobody-made", json!(["SRC1"]));
    later["graph"]["steps"][0]["inputs"] = json!(["signature"]);
    let mut upper = skill_json("non-kebab-step", json!(["SRC1"]));
    upper["graph"]["steps"][1]["name"] = json!("Verify It");
    let mut twice = skill_json("duplicate-steps", json!(["SRC1"]));
    twice["graph"]["steps"][1]["name"] = json!("build");
    let mut no_trigger = skill_json("no-trigger", json!(["SRC1"]));
    no_trigger["graph"]["triggers"] = json!([]);
    let mut no_graph = skill_json("no-graph", json!(["SRC1"]));
    no_graph.as_object_mut().unwrap().remove("graph");
    let good = skill_json("good", json!(["SRC1"]));
    let body = reply(vec![later, upper, twice, no_trigger, no_graph, good]);
    let f = fake(move |_| body.clone());
    let a = source("proj", "docs/release.md", "release steps");
    let r = compile_batch(&learner(&f.url), &[&a], &[], &Limits::default(), 1).unwrap();
    let kept: Vec<&str> = r.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(kept, ["good"]);
    let reasons: Vec<(&str, &str)> = r.dropped.iter().map(|d| (d.name.as_str(), d.reason.as_str())).collect();
    assert_eq!(reasons.len(), 5, "{reasons:?}");
    assert!(reasons[0].1.contains("earlier step"), "{reasons:?}");
    assert!(reasons[1].1.contains("kebab"), "{reasons:?}");
    assert!(reasons[2].1.contains("twice"), "{reasons:?}");
    assert!(reasons[3].1.contains("trigger"), "{reasons:?}");
    assert!(reasons[4].1.contains("no step graph"), "{reasons:?}");
    assert!(reasons[..4].iter().all(|(_, r)| r.contains("step graph is refused")), "{reasons:?}");
}

#[test]
fn a_reply_is_bounded_in_skills_and_steps() {
    let mut skills: Vec<Value> =
        (0..21).map(|i| skill_json(&format!("skill-{i}"), json!(["SRC1"]))).collect();
    skills[3]["steps"] = json!((0..31).map(|i| format!("step {i}")).collect::<Vec<_>>());
    skills[4]["if"] = json!((0..21).map(|i| format!("If {i} then stop.")).collect::<Vec<_>>());
    let body = reply(skills);
    let f = fake(move |_| body.clone());
    let a = source("proj", "docs/a.md", "text");
    let r = compile_batch(&learner(&f.url), &[&a], &[], &Limits::default(), 1).unwrap();
    assert_eq!(r.skills.len(), 18);
    let dropped: Vec<(&str, &str)> = r.dropped.iter().map(|d| (d.name.as_str(), d.reason.as_str())).collect();
    assert_eq!(dropped.len(), 3, "{dropped:?}");
    assert!(dropped[0].0 == "skill-3" && dropped[0].1.contains("31 steps"), "{dropped:?}");
    assert!(dropped[1].0 == "skill-4" && dropped[1].1.contains("21 if lines"), "{dropped:?}");
    assert!(dropped[2].0 == "skill-20" && dropped[2].1.contains("more than 20"), "{dropped:?}");
    let f = fake(|_| "{\"procedures\": []}".into());
    let e = compile_batch(&learner(&f.url), &[&a], &[], &Limits::default(), 1).unwrap_err();
    assert!(matches!(&e, ModelError::Malformed(m) if m.contains("skills")), "{e}");
}

#[test]
fn batches_are_bounded_by_count_and_characters_and_handles_restart() {
    let sources: Vec<Source> = (0..5)
        .map(|i| source("proj", &format!("docs/{i}.md"), &format!("doc {i} {}", "x".repeat(30))))
        .collect();
    let limits = Limits { max_sources: 2, max_chars: 100 };
    let f = fake(|_| reply(vec![]));
    let report = compile(&learner(&f.url), &sources, Vec::new(), &limits, 1).unwrap();
    assert_eq!((report.batches, report.calls), (3, 3));
    let users = user_texts(&f);
    assert_eq!(users.len(), 3);
    assert!(users[1].contains("SRC1: docs/2.md") && users[1].contains("SRC2: docs/3.md"), "{}", users[1]);
    assert!(users[2].contains("SRC1: docs/4.md") && !users[2].contains("SRC2"), "{}", users[2]);
    assert!(users.iter().all(|u| source_chars(u) <= 100), "{users:?}");

    let by_chars = batches(&sources, &Limits { max_sources: 8, max_chars: 80 });
    let paths: Vec<Vec<&str>> =
        by_chars.iter().map(|b| b.iter().map(|s| s.path.as_str()).collect()).collect();
    assert_eq!(paths, [vec!["docs/0.md", "docs/1.md"], vec!["docs/2.md", "docs/3.md"], vec!["docs/4.md"]]);

    let big = source("proj", "docs/big.md", &"é".repeat(250));
    let small = source("proj", "docs/c.md", "small");
    let all = [big.clone(), small.clone(), source("proj", "docs/a.md", "first")];
    let limits = Limits { max_sources: 8, max_chars: 100 };
    let paths: Vec<Vec<&str>> =
        batches(&all, &limits).iter().map(|b| b.iter().map(|s| s.path.as_str()).collect()).collect();
    assert_eq!(
        paths,
        [vec!["docs/a.md"], vec!["docs/big.md"], vec!["docs/c.md"]],
        "an oversize source is alone"
    );
    let f = fake(|_| reply(vec![skill_json("big", json!(["SRC1"]))]));
    let r = compile_batch(&learner(&f.url), &[&big], &[], &limits, 1).unwrap();
    let user = &user_texts(&f)[0];
    assert!(user.contains("SRC1: docs/big.md (cut: first 100 of 250 characters)"), "{user}");
    assert_eq!(source_chars(user), 100);
    assert_eq!(r.skills[0].cites[0].sha256, sha(&big.text), "the cite is of the whole file");
}

#[test]
fn sources_of_two_scopes_never_share_a_batch() {
    let sources = [
        source("team/ops", "docs/a.md", "team a"),
        source("proj", "docs/b.md", "proj b"),
        source("team/ops", "docs/c.md", "team c"),
        source("proj", "docs/d.md", "proj d"),
    ];
    let b = batches(&sources, &Limits::default());
    assert_eq!(b.len(), 2);
    assert!(b.iter().all(|batch| batch.iter().all(|s| s.scope == batch[0].scope)));
    let f = fake(|text| {
        let cite = if text.contains("team a") { "SRC2" } else { "SRC1" };
        reply(vec![skill_json("shared-name", json!([cite]))])
    });
    let report = compile(&learner(&f.url), &sources, Vec::new(), &Limits::default(), 1).unwrap();
    let users = user_texts(&f);
    assert_eq!(users.len(), 2);
    for u in &users {
        let team = u.contains("team a") || u.contains("team c");
        let proj = u.contains("proj b") || u.contains("proj d");
        assert!(team != proj, "one scope a request: {u}");
    }
    assert!(!users[1].contains("shared-name"), "another scope's library is not shown: {}", users[1]);
    let got: Vec<(&str, &str, u32)> =
        report.skills.iter().map(|s| (s.scope.as_str(), s.cites[0].path.as_str(), s.version)).collect();
    assert_eq!(got, [("proj", "docs/b.md", 1), ("team/ops", "docs/c.md", 1)]);
}

#[test]
fn each_batch_sees_the_library_the_last_one_left_and_an_update_bumps_the_version() {
    let sources =
        [source("proj", "docs/a.md", "deploy part one"), source("proj", "docs/b.md", "deploy part two")];
    let f = fake(|_| reply(vec![skill_json("deploy-the-service", json!(["SRC1"]))]));
    let limits = Limits { max_sources: 1, max_chars: 1_000 };
    let report = compile(&learner(&f.url), &sources, Vec::new(), &limits, 9).unwrap();
    let users = user_texts(&f);
    assert!(!users[0].contains("deploy-the-service"), "{}", users[0]);
    assert!(users[1].contains("- deploy-the-service: A release of the service is due."), "{}", users[1]);
    assert_eq!(report.skills.len(), 1, "each name once: {:?}", report.skills);
    let s = &report.skills[0];
    assert_eq!(s.version, 2);
    let cited: Vec<&str> = s.cites.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(cited, ["docs/a.md", "docs/b.md"], "the other batch's cite is kept");

    // A skill of the library cited by the batch is shown in full and updated: its cite
    // of this batch's source is replaced, the others kept.
    let mut old = report.skills[0].clone();
    old.version = 3;
    let changed = source("proj", "docs/a.md", "deploy part one, changed");
    let f = fake(|_| reply(vec![skill_json("deploy-the-service", json!(["SRC1"]))]));
    let r = compile_batch(&learner(&f.url), &[&changed], std::slice::from_ref(&old), &limits, 10).unwrap();
    let user = &user_texts(&f)[0];
    assert!(user.contains("deploy-the-service (version 3):\n<skill>\n## When\n"), "{user}");
    assert!(user.contains("## Graph\n{"), "{user}");
    assert_eq!(r.skills[0].version, 4);
    assert_eq!(
        r.skills[0].cites,
        [
            SourceRef { path: "docs/a.md".into(), sha256: sha(&changed.text) },
            SourceRef { path: "docs/b.md".into(), sha256: sha("deploy part two") },
        ]
    );
}

fn cited(name: &str, cites: &[(&str, &str)]) -> Skill {
    let graph: StepGraph = serde_json::from_value(graph()).unwrap();
    Skill {
        scope: "proj".parse().unwrap(),
        name: name.into(),
        version: 1,
        when: "always".into(),
        steps: vec!["do it".into()],
        ifs: vec![],
        cites: cites.iter().map(|(p, t)| SourceRef { path: p.to_string(), sha256: sha(t) }).collect(),
        graph,
        model: "openai:m".into(),
        created_at: 0,
    }
}

#[test]
fn a_changed_or_deleted_source_makes_the_skills_citing_it_stale() {
    let library = [
        cited("unchanged", &[("docs/a.md", "a")]),
        cited("changed", &[("docs/b.md", "b"), ("docs/c.md", "c")]),
        cited("deleted", &[("docs/d.md", "d")]),
        cited("also-unchanged", &[("docs/c.md", "c")]),
    ];
    for s in &library {
        s.validate().unwrap();
    }
    let current: Vec<(String, String)> =
        [("docs/a.md", "a"), ("docs/b.md", "b, edited"), ("docs/c.md", "c"), ("docs/e.md", "new")]
            .iter()
            .map(|(p, t)| (p.to_string(), sha(t)))
            .collect();
    assert_eq!(stale(&library, &current), ["changed", "deleted"]);
    assert_eq!(sources_to_recompile(&library, &current), ["docs/b.md", "docs/c.md"]);
    let all: Vec<(String, String)> =
        ["a", "b", "c", "d"].iter().map(|t| (format!("docs/{t}.md"), sha(t))).collect();
    assert!(stale(&library, &all).is_empty());
    assert!(sources_to_recompile(&library, &all).is_empty());
}

#[test]
fn a_malformed_reply_is_reported_and_compiling_goes_on() {
    let sources =
        [source("proj", "docs/a.md", "procedure alpha"), source("proj", "docs/b.md", "procedure beta")];
    let f = fake(|text| {
        if text.contains("procedure alpha") {
            "I could not find any procedure, sorry.".into()
        } else {
            reply(vec![skill_json("second", json!(["SRC1"]))])
        }
    });
    let limits = Limits { max_sources: 1, max_chars: 1_000 };
    let report = compile(&learner(&f.url), &sources, Vec::new(), &limits, 1).unwrap();
    assert_eq!((report.batches, report.calls), (2, 2));
    assert_eq!(report.failed_batches.len(), 1);
    assert_eq!(report.failed_batches[0].paths, ["docs/a.md"]);
    assert!(report.failed_batches[0].reason.contains("no JSON object"), "{:?}", report.failed_batches);
    let names: Vec<&str> = report.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["second"]);
}

#[test]
fn a_refused_connection_stops_compiling_with_a_call_error() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", closed.local_addr().unwrap());
    drop(closed);
    let sources = [source("proj", "docs/a.md", "first")];
    let e = compile(&learner(&url), &sources, Vec::new(), &Limits::default(), 1).unwrap_err();
    assert!(matches!(e, ModelError::Call(_)), "{e}");
    let empty = compile(&learner(&url), &[], Vec::new(), &Limits::default(), 1).unwrap();
    assert_eq!((empty.batches, empty.calls), (0, 0), "no sources, no call");
}

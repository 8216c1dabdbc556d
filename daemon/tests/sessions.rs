//! Sessions end to end over the real socket with the real model: identity and briefing
//! at start, interjection (gate, judge band, cooldown, served once), capture, curation at
//! the end, the idle timeout, and sessions surviving a restart.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use amber_core::MemoryId;
use amber_ipc::Client;
use amber_ipc::protocol::{
    ErrorKind, RecallParams, SessionEndParams, SessionEventParams, SessionEventResult, SessionStartParams,
};
use amber_tiers::interject::{EventKind, Reason};
use amber_tiers::scope::project_scope;
use amber_tiers::session::Tier;

use crate::common;
use common::*;

const RELEASE: &str = "Releasing to staging: export AWS_PROFILE=staging before running make release, \
otherwise the upload to the eu-west-1 bucket fails with AccessDenied.";
const POSTGRES: &str = "The integration tests need a local Postgres 16 on port 5433; start it with \
docker compose up db before running cargo test.";
const LUNCH: &str = "Team lunch on Fridays is at the Thai place around the corner from the office.";

fn start_params(agent: &str) -> SessionStartParams {
    SessionStartParams {
        shown: Vec::new(),
        agent: agent.into(),
        agent_token: None,
        project_root: None,
        cwd: None,
        prompt: None,
        scope: None,
        key: None,
        rebrief: None,
        run: None,
    }
}

fn event(c: &mut Client, session: &str, kind: EventKind, text: &str) -> SessionEventResult {
    c.session_event(&SessionEventParams {
        session_id: session.into(),
        kind,
        text: text.into(),
        source: None,
        capture: None,
        moment: None,
    })
    .unwrap()
}

/// A git project with a HANDOFF file.
fn project() -> tempfile::TempDir {
    let p = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(p.path().join(".git")).unwrap();
    std::fs::create_dir_all(p.path().join("project-context")).unwrap();
    std::fs::create_dir_all(p.path().join("src")).unwrap();
    std::fs::write(p.path().join("project-context/HANDOFF.md"), "Next: ship the staging release.\n").unwrap();
    p
}

#[test]
fn a_session_starts_with_identity_and_a_briefing_within_budget_served_once() {
    let (d, _dir) = with_config("[briefing]\nbudget_tokens = 120\n");
    let proj = project();
    let scope = project_scope(proj.path());
    let mut c = d.client();
    let notes = [
        RELEASE,
        POSTGRES,
        LUNCH,
        "The staging release checklist: bump the version, tag, run make release, watch the deploy dashboard.",
        "Release notes for staging go in CHANGELOG.md under Unreleased, one line per user-visible change.",
        "The eu-west-1 bucket holds staging artifacts; production uses a separate account and bucket.",
    ];
    for n in notes {
        c.remember(&memory(n, scope.as_str())).unwrap();
    }
    let elsewhere = c
        .remember(&memory("How to release to staging in the other project: run deploy.sh.", "project/other"))
        .unwrap();

    let mut p = start_params("test");
    p.cwd = Some(proj.path().join("src"));
    p.prompt = Some("how do we release to staging?".into());
    let s = c.session_start(&p).unwrap();
    assert_eq!(s.scope, scope, "the scope comes from the project root");
    assert_eq!(s.project_root.as_deref(), Some(proj.path()));
    let identity = s.identity.expect("a project root gives an identity");
    assert!(identity.text.contains("ship the staging release"), "{}", identity.text);

    let b = &s.briefing;
    assert!(!b.items.is_empty(), "{b:?}");
    assert!(b.tokens <= 120, "{} tokens", b.tokens);
    assert!(amber_tiers::identity::estimate_tokens(&b.text) <= 120);
    assert!(b.left_out > 0, "a small budget leaves some out: {b:?}");
    assert!(!b.text.contains("deploy.sh"), "another project's memory is not briefed");
    assert!(b.items.iter().all(|i| i.id != elsewhere.id));
    // the items are in score order and the weights add up as documented
    for w in b.items.windows(2) {
        assert!(w[0].score >= w[1].score);
    }
    for i in &b.items {
        let expect = 0.6 * i.relevance + 0.25 * i.recency + 0.15 * i.importance;
        assert!((i.score - expect).abs() < 1e-4);
    }

    // Served once: a recall in the session says which hits it was already given.
    let mut rp = RecallParams::new("release to staging");
    rp.scope = Some(scope.clone());
    rp.session_id = Some(s.session_id.clone());
    let r = c.recall(&rp).unwrap();
    let briefed: Vec<&MemoryId> = b.items.iter().map(|i| &i.id).collect();
    assert!(!r.given_earlier.is_empty());
    assert!(r.given_earlier.iter().all(|g| briefed.contains(&&g.id) && g.tier == Tier::Briefing));
    // ... and interjection never repeats a briefed memory.
    let first = c.get(briefed[0]).unwrap().memory.content;
    let e = event(&mut c, &s.session_id, EventKind::Prompt, &first);
    assert!(!e.decision.memories.iter().any(|m| &&m.id == briefed.first().unwrap()), "{:?}", e.decision);
    let shown = c.session_show(&s.session_id).unwrap();
    assert!(shown.live);
    assert_eq!(shown.session.served.len(), b.items.len() + e.decision.memories.len());
    assert!(shown.session.served.iter().all(|x| !x.why.is_empty()));

    // Without a prompt the query is the project's recent work.
    let mut p2 = start_params("test");
    p2.project_root = Some(proj.path().to_path_buf());
    let s2 = c.session_start(&p2).unwrap();
    assert!(s2.briefing.query.starts_with("recent work on "), "{}", s2.briefing.query);
    assert_ne!(s2.session_id, s.session_id);
}

#[test]
fn interjection_fires_on_an_answer_stays_silent_otherwise_and_honours_the_cooldown() {
    let d = Daemon::start(&[]);
    let mut c = d.client();
    let mut p = start_params("test");
    p.scope = Some("project/interject".parse().unwrap());
    let s = c.session_start(&p).unwrap();
    assert!(s.briefing.items.is_empty() && s.identity.is_none());
    let release = c.remember(&memory(RELEASE, "project/interject")).unwrap().id;
    let postgres = c.remember(&memory(POSTGRES, "project/interject")).unwrap().id;
    c.remember(&memory(LUNCH, "project/interject")).unwrap();
    c.remember(&memory(RELEASE, "project/elsewhere")).unwrap();
    let sid = s.session_id.as_str();

    let e = event(
        &mut c,
        sid,
        EventKind::Prompt,
        "make release fails with AccessDenied uploading to the staging bucket, why?",
    );
    assert!(e.decision.fired, "{:?}", e.decision);
    assert_eq!(e.decision.reason, Reason::Gate);
    assert_eq!(e.decision.memories.len(), 1);
    assert_eq!(e.decision.memories[0].id, release);
    assert!(e.decision.text.contains("AWS_PROFILE=staging"));
    assert!(e.decision.best.unwrap() >= e.decision.gate);
    let fired_at = e.event;

    // Cooldown: the next 3 events stay silent even when a memory would answer them.
    let pg = "how do I start postgres on port 5433 for the integration tests?";
    for _ in 0..3 {
        let e = event(&mut c, sid, EventKind::Prompt, pg);
        assert_eq!((e.decision.fired, e.decision.reason), (false, Reason::Cooldown));
    }
    let e = event(&mut c, sid, EventKind::ToolCall, pg);
    assert_eq!(e.event, fired_at + 4);
    assert!(e.decision.fired && e.decision.memories[0].id == postgres, "{:?}", e.decision);
    assert!(e.captured.is_none(), "tool calls are not captured by default");

    for _ in 0..3 {
        event(&mut c, sid, EventKind::ToolResult, "ok");
    }
    // Unrelated: silent, with the scores that kept it silent.
    let e = event(
        &mut c,
        sid,
        EventKind::Prompt,
        "what is the capital of Mongolia and how many people live there?",
    );
    assert!(!e.decision.fired, "{:?}", e.decision);
    assert_eq!(e.decision.reason, Reason::BelowBand);
    assert!(e.decision.best.unwrap() < e.decision.gate - e.decision.band);
    assert!(!e.decision.candidates.is_empty());
    // Served once: the release memory would clear the gate again, but the session has it.
    let e = event(
        &mut c,
        sid,
        EventKind::Response,
        "make release fails with AccessDenied uploading to the staging bucket",
    );
    assert_eq!((e.decision.fired, e.decision.reason), (false, Reason::AlreadyServed), "{:?}", e.decision);
    // Too short, and tool output, are not searched.
    assert_eq!(event(&mut c, sid, EventKind::Prompt, "ok go").decision.reason, Reason::TooShort);
    assert_eq!(event(&mut c, sid, EventKind::ToolResult, RELEASE).decision.reason, Reason::NotSearched);

    let rec = c.session_show(sid).unwrap().session;
    assert_eq!(rec.decisions.len() as u64, rec.events);
    let served: Vec<_> = rec.served.iter().map(|x| (x.id.clone(), x.tier, x.event)).collect();
    assert_eq!(
        served,
        vec![
            (release, Tier::Interjection, Some(fired_at)),
            (postgres, Tier::Interjection, Some(fired_at + 4))
        ]
    );
    assert!(rec.served[0].why.contains("cleared the gate"));

    // Errors: unknown session, bad kind, relative cwd.
    let err = c
        .session_event(&SessionEventParams {
            session_id: "nope".into(),
            kind: EventKind::Prompt,
            text: "hello there".into(),
            source: None,
            capture: None,
            moment: None,
        })
        .unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::SessionNotFound));
    let err = c
        .call_value("session_event", serde_json::json!({"session_id": sid, "kind": "dance", "text": "x"}))
        .unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::InvalidParams));
    let mut bad = start_params("test");
    bad.cwd = Some("relative".into());
    assert_eq!(c.session_start(&bad).unwrap_err().kind(), Some(ErrorKind::InvalidParams));
    assert_eq!(c.session_start(&start_params(" ")).unwrap_err().kind(), Some(ErrorKind::InvalidParams));
}

fn judged_daemon(url: &str) -> (Daemon, tempfile::TempDir) {
    // A gate nothing reaches and a band that covers everything: every candidate goes to the judge.
    with_config(&format!(
        "[judge]\nkind = \"openai\"\nurl = \"{url}\"\nmodel = \"test-judge\"\ntimeout_ms = 400\n\
         [interject]\ngate = 0.99\nband = 0.98\n"
    ))
}

#[test]
fn the_band_asks_the_judge_over_http_and_a_slow_judge_counts_as_no() {
    let FakeChat { url, bodies, .. } = fake_chat("Yes.", || {});
    let (d, _dir) = judged_daemon(&url);
    let mut c = d.client();
    let mut p = start_params("test");
    p.scope = Some("project/judge".parse().unwrap());
    let sid = c.session_start(&p).unwrap().session_id;
    let release = c.remember(&memory(RELEASE, "project/judge")).unwrap().id;
    let text = "make release fails with AccessDenied uploading to the staging bucket, why?";
    let e = event(&mut c, &sid, EventKind::Prompt, text);
    assert!(e.decision.fired && e.decision.reason == Reason::Judge, "{:?}", e.decision);
    assert_eq!(e.decision.memories[0].id, release);
    assert_eq!(e.decision.judge.as_deref(), Some("openai:test-judge"));
    let sent = bodies.lock().unwrap().clone();
    assert_eq!(sent.len(), 1);
    assert!(
        sent[0].contains("test-judge")
            && sent[0].contains("AccessDenied uploading")
            && sent[0].contains("AWS_PROFILE")
    );
    let rec = c.session_show(&sid).unwrap().session;
    assert!(rec.served[0].why.contains("judge said yes"), "{}", rec.served[0].why);

    // A judge slower than its deadline: "no", within the deadline, and the session goes on.
    let FakeChat { url: slow_url, bodies: slow_bodies, .. } =
        fake_chat("yes", || std::thread::sleep(Duration::from_secs(3)));
    let (d2, _dir2) = judged_daemon(&slow_url);
    let mut c2 = d2.client();
    let sid2 = c2.session_start(&p).unwrap().session_id;
    c2.remember(&memory(RELEASE, "project/judge")).unwrap();
    let t0 = Instant::now();
    let e = event(&mut c2, &sid2, EventKind::Prompt, text);
    assert!(t0.elapsed() < Duration::from_secs(2), "the deadline holds: {:?}", t0.elapsed());
    assert_eq!((e.decision.fired, e.decision.reason), (false, Reason::JudgeFailed), "{:?}", e.decision);
    assert_eq!(slow_bodies.lock().unwrap().len(), 1);
    assert!(c2.status().is_ok(), "the daemon keeps serving");
}

#[test]
fn session_end_curates_captures_linking_a_near_duplicate_and_keeping_both() {
    let d = Daemon::start(&[]);
    let mut c = d.client();
    let mut p = start_params("test");
    p.scope = Some("project/curate".parse().unwrap());
    let sid = c.session_start(&p).unwrap().session_id;
    let a = "cargo test failed: thread 'store::tests::reopen' panicked at store/src/store.rs:412: database is \
locked (SQLITE_BUSY) while the writer held the WAL; rerunning with --test-threads=1 passed.";
    let near = "cargo test failed: thread 'store::tests::reopen' panicked at store/src/store.rs:412: database is \
locked (SQLITE_BUSY) while the writer held the WAL; rerunning with --test-threads 1 passed.";
    let exact = a.to_uppercase().replace(' ', "  ");
    let unrelated = "The office plants need watering every Tuesday and Friday morning before the standup.";
    let mut ids = Vec::new();
    for text in [a, near, exact.as_str(), unrelated] {
        let e = event(&mut c, &sid, EventKind::ToolResult, text);
        let cap = e.captured.expect("tool output is captured");
        assert!(cap.filed && cap.memory.as_ref().unwrap().created);
        ids.push(cap.memory.unwrap().id);
    }
    let transcript = "user: why did cargo test fail?\n\nassistant: SQLITE_BUSY in store::tests::reopen; \
a single test thread works around it.\n";
    let end = c
        .session_end(&SessionEndParams {
            session_id: sid.clone(),
            transcript: Some(transcript.into()),
            transcript_source: None,
            transcript_skipped: 0,
            manifest: Vec::new(),
            outcome: None,
        })
        .unwrap();
    assert!(!end.live);
    let s = end.session;
    assert_eq!(s.end_reason.as_deref(), Some("ended"));
    assert_eq!(s.captured.len(), 5, "four tool outputs and the transcript");
    assert_eq!(s.captured[4].source.as_deref(), Some("transcript"));
    let report = s.curation.expect("curation ran");
    let pairs = |v: &[amber_tiers::curate::Pair]| {
        v.iter().map(|x| (x.from.clone(), x.to.clone())).collect::<Vec<_>>()
    };
    assert_eq!(pairs(&report.near_duplicates), vec![(ids[1].clone(), ids[0].clone())], "{report:?}");
    assert_eq!(pairs(&report.exact_duplicates), vec![(ids[2].clone(), ids[0].clone())], "{report:?}");
    assert_eq!(report.collapsed, 1);
    assert!(report.links_added >= 2);
    assert!(report.near_duplicates[0].similarity >= 0.95);
    let touched: Vec<&MemoryId> = report
        .near_duplicates
        .iter()
        .chain(&report.exact_duplicates)
        .chain(&report.related)
        .flat_map(|x| [&x.from, &x.to])
        .collect();
    assert!(!touched.contains(&&ids[3]), "the unrelated capture is not linked");

    // Both contents are kept; the exact copy is collapsed (forgotten, content kept).
    assert_eq!(c.get(&ids[0]).unwrap().memory.content, a);
    let n = c.get(&ids[1]).unwrap().memory;
    assert!(n.content == near && n.forgotten_at.is_none());
    let x = c.get(&ids[2]).unwrap().memory;
    assert!(x.content == exact && x.forgotten_at.is_some());
    let links = c.links(&ids[0]).unwrap().links;
    assert!(links.iter().any(|l| l.from == ids[1] && l.kind == amber_core::LinkKind::NearDuplicate));
    // The near duplicate is ranked below the memory it duplicates.
    let mut rp = RecallParams::new(near);
    rp.scope = Some("project/curate".parse().unwrap());
    let hits = c.recall(&rp).unwrap().hits;
    let pos = |id: &MemoryId| hits.iter().position(|h| &h.memory.id == id).unwrap();
    assert!(pos(&ids[0]) < pos(&ids[1]));
    assert!(!hits.iter().any(|h| h.memory.id == ids[2]));

    // The ended session is stored; ending it again is an error.
    let shown = c.session_show(&sid).unwrap();
    assert!(!shown.live && shown.session.curation.is_some());
    let err = c
        .session_end(&SessionEndParams {
            session_id: sid,
            transcript: None,
            transcript_source: None,
            transcript_skipped: 0,
            manifest: Vec::new(),
            outcome: None,
        })
        .unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::SessionNotFound));
}

#[test]
fn an_idle_session_is_ended_and_a_live_one_survives_a_restart() {
    let (d, dir) = with_config("[session]\nidle_timeout_s = 1\n");
    let mut c = d.client();
    let sid = c.session_start(&start_params("idle")).unwrap().session_id;
    let t0 = Instant::now();
    let s = loop {
        let s = c.session_show(&sid).unwrap();
        if !s.live {
            break s.session;
        }
        assert!(t0.elapsed() < Duration::from_secs(20), "the idle session was not ended");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(s.end_reason.as_deref(), Some("idle"));
    assert!(s.curation.is_some());
    drop(c);
    drop(d);

    // A live session is stored at shutdown and resumes at the next start.
    std::fs::write(dir.path().join("no-config.toml"), "").unwrap();
    let d = Daemon::start_in(dir.path(), &[]).unwrap();
    let mut c = d.client();
    let sid = c.session_start(&start_params("resume")).unwrap().session_id;
    event(&mut c, &sid, EventKind::Prompt, "a first prompt with enough words in it");
    let status = Command::new("kill").arg("-TERM").arg(d.child.id().to_string()).status().unwrap();
    assert!(status.success());
    let mut d = d;
    assert!(d.child.wait().unwrap().success());
    drop(d);
    let d = Daemon::start_in(dir.path(), &[]).unwrap();
    let mut c = d.client();
    let e = event(&mut c, &sid, EventKind::Prompt, "a second prompt after the restart");
    assert_eq!(e.event, 2, "the session resumed with its count");
    assert!(Path::new(&d.data).exists());
}

#[test]
fn the_persons_standing_preference_is_briefed_whatever_the_volume() {
    let (d, _dir) = with_config("");
    let proj = project();
    let scope = project_scope(proj.path());
    const PREF: &str = "The user wants every release announced in #deploys before it starts.";
    let pref = as_person(&d, &["remember", "--scope", "user", "--type", "lifefact", PREF]);
    let pref_id = pref["id"].as_str().expect("an id").to_string();
    // A dozen of them, as a person has (the first is the one followed below).
    let mut prefs = vec![pref_id.clone()];
    for i in 1..12 {
        let text = format!("Standing preference {i}: the user wants the number {i} spelled out in prose.");
        let m = as_person(&d, &["remember", "--scope", "user", "--type", "lifefact", &text]);
        prefs.push(m["id"].as_str().expect("an id").to_string());
    }
    // Volume on the very topic of the prompt: 600 agent notes about releases.
    let mut c = d.client();
    for batch in 0..6 {
        let notes: Vec<_> = (0..100)
            .map(|i| {
                memory(
                    &format!("Release note {batch}-{i}: the staging release of build {i} went out with make release."),
                    scope.as_str(),
                )
            })
            .collect();
        loop {
            match c.remember_batch(notes.clone()) {
                Ok(_) => break,
                Err(e) if e.to_string().contains("busy") => std::thread::sleep(Duration::from_millis(200)),
                Err(e) => panic!("{e}"),
            }
        }
    }
    let mut p = start_params("test");
    p.cwd = Some(proj.path().to_path_buf());
    p.prompt = Some("how do we release to staging?".into());
    let s = c.session_start(&p).unwrap();
    for id in &prefs {
        assert!(s.briefing.items.iter().any(|i| i.id.as_str() == id), "{id} left out: {:#?}", s.briefing);
        assert!(s.briefing.standing.contains(&id[..8]), "{id}: {}", s.briefing.standing);
    }
    assert!(s.briefing.text.contains("#deploys"), "{}", s.briefing.text);
    let shown = c.session_show(&s.session_id).unwrap();
    let served = shown.session.served.iter().find(|x| x.id.as_str() == pref_id).expect("served");
    assert!(served.why.contains("standing preference"), "{}", served.why);
    // Every session is briefed it (served once is per session).
    let again = c.session_start(&p).unwrap();
    assert!(again.briefing.items.iter().any(|i| i.id.as_str() == pref_id), "a new session is briefed it too");
}

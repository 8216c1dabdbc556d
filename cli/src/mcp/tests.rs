//! The MCP server's unit tests: tool lists, arguments, and the bridge against a stand-in
//! daemon.

use super::*;

#[test]
fn get_advice_is_listed_only_with_a_model() {
    let names = |advice: bool| -> Vec<String> {
        AmberMcp::router(advice, ToolSet::All).list_all().iter().map(|t| t.name.to_string()).collect()
    };
    assert!(!names(false).contains(&"get_advice".to_string()));
    assert!(names(true).contains(&"get_advice".to_string()));
    assert_eq!(names(true).len(), names(false).len() + 1);
    let mut cfg = Config::default();
    assert!(!AmberMcp::new(Bridge::new(cfg.clone(), None, false)).tool_router.has_route("get_advice"));
    cfg.learn.kind = amber_tiers::advice::LearnKind::Openai;
    assert!(AmberMcp::new(Bridge::new(cfg, None, false)).tool_router.has_route("get_advice"));
    let tool =
        AmberMcp::router(true, ToolSet::All).list_all().into_iter().find(|t| t.name == "get_advice").unwrap();
    assert_eq!(tool.input_schema["required"], json!(["task"]));
}

#[test]
fn every_tool_has_a_description_and_an_object_schema() {
    let tools = AmberMcp::router(false, ToolSet::All).list_all();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "forget",
            "get",
            "guard",
            "kg_add",
            "kg_invalidate",
            "kg_query",
            "kg_stats",
            "kg_timeline",
            "kg_traverse",
            "links",
            "outcome",
            "recall",
            "release",
            "remember",
            "review",
            "run_record",
            "run_reward",
            "session_end",
            "session_event",
            "session_show",
            "session_start",
            "status",
            "thread"
        ]
    );
    for t in &tools {
        assert!(t.description.as_deref().is_some_and(|d| !d.is_empty()), "{}", t.name);
        assert_eq!(t.input_schema.get("type").and_then(Value::as_str), Some("object"), "{}", t.name);
    }
    let recall = tools.iter().find(|t| t.name == "recall").unwrap();
    assert_eq!(recall.input_schema["required"], json!(["query"]));
    assert!(recall.input_schema["properties"].get("expand").is_some());
    let required =
        |name: &str| tools.iter().find(|t| t.name == name).unwrap().input_schema["required"].clone();
    assert_eq!(required("kg_query"), json!(["entity"]));
    assert_eq!(required("kg_timeline"), json!(["entity"]));
    assert_eq!(required("kg_traverse"), json!(["start"]));
    assert_eq!(required("kg_invalidate"), json!(["fact"]));
}

/// The tools are the registry's: every method with an MCP set is a tool of its name in
/// that set, no tool is anything else, and a tool's read-only hint is the method's access.
#[test]
fn the_tools_and_their_sets_are_the_registrys() {
    use amber_ipc::protocol::Access;
    let names = |set: ToolSet| -> Vec<String> {
        let mut n: Vec<String> =
            AmberMcp::router(true, set).list_all().iter().map(|t| t.name.to_string()).collect();
        n.sort_unstable();
        n
    };
    let declared = |f: &dyn Fn(McpSet) -> bool| -> Vec<String> {
        let mut n: Vec<String> =
            Method::ALL.iter().filter(|m| f(m.mcp())).map(|m| m.name().to_string()).collect();
        n.sort_unstable();
        n
    };
    assert_eq!(names(ToolSet::All), declared(&|s| s != McpSet::None), "--tools all");
    assert_eq!(names(ToolSet::Agent), declared(&|s| s == McpSet::Agent), "the agent set");
    assert_eq!(agent_tools().count(), names(ToolSet::Agent).len());
    for t in AmberMcp::router(true, ToolSet::All).list_all() {
        let m = Method::from_name(&t.name).unwrap();
        let read_only = t.annotations.as_ref().and_then(|a| a.read_only_hint);
        assert_eq!(read_only, Some(m.access() == Access::Read), "{}'s read-only hint", t.name);
    }
}

/// A tool call is retried on a fresh connection only for a method the registry declares
/// a read (the hand list it replaced missed `thread` and `review`).
#[test]
fn only_reads_are_retried() {
    use super::bridge::is_read;
    for read in ["recall", "thread", "review", "kg_traverse", "session_show"] {
        assert!(is_read(read), "{read}");
    }
    for write in ["remember", "outcome", "forget", "session_event", "no_such_method"] {
        assert!(!is_read(write), "{write}");
    }
}

#[test]
fn remember_args_are_the_daemons_params() {
    let a: RememberArgs =
        serde_json::from_value(json!({"content": "x", "type": "pattern", "metadata": {"a": 1}})).unwrap();
    let p = params(&a).unwrap();
    assert_eq!(p, json!({"content": "x", "type": "pattern", "metadata": {"a": 1}}));
    let m: amber_core::NewMemory = serde_json::from_value(p).unwrap();
    assert_eq!(m.kind, amber_core::MemoryType::Pattern);
}

#[test]
fn agents_are_never_offered_allow_secrets() {
    // The flag that files secrets as given is for a person (`amber remember
    // --keep-secrets`): no tool lists it, and an agent that sends it anyway does not
    // get it through to the daemon.
    for t in AmberMcp::router(true, ToolSet::All).list_all() {
        let schema = serde_json::to_string(&t.input_schema).unwrap();
        assert!(!schema.contains("allow_secrets"), "{} offers allow_secrets", t.name);
    }
    match serde_json::from_value::<RememberArgs>(json!({"content": "x", "allow_secrets": true})) {
        Ok(a) => assert_eq!(params(&a).unwrap(), json!({"content": "x"})),
        Err(e) => assert!(e.to_string().contains("allow_secrets"), "{e}"),
    }
}

#[test]
fn kg_args_are_the_daemons_params_with_times_as_millis() {
    let a: KgAddArgs = serde_json::from_value(json!({
        "scope": "work",
        "entities": [{"name": "Ada Lovelace", "type": "person", "aliases": ["Ada"]}],
        "facts": [
            {"subject": "Ada", "predicate": "works on", "object": "Falcon", "valid_from": "1970-01-02",
             "sources": ["0123456789abcdef0123456789abcdef"]},
            {"subject": "Ada", "predicate": "born", "literal": "1815", "valid_to": 5, "supersede": true}
        ]
    }))
    .unwrap();
    let p = a.to_params().unwrap();
    let d: amber_ipc::protocol::KgAddParams = serde_json::from_value(p.clone()).unwrap();
    assert_eq!(d.entities[0].kind.as_deref(), Some("person"));
    assert_eq!(d.facts[0].valid_from, Some(86_400_000));
    assert_eq!(d.facts[0].sources.len(), 1);
    assert_eq!((d.facts[1].valid_to, d.facts[1].supersede), (Some(5), true));
    assert_eq!(p["facts"][1].get("valid_from"), None, "absent options are left out");

    let bad: KgAddArgs = serde_json::from_value(
        json!({"facts": [{"subject": "a", "predicate": "p", "literal": "x", "valid_to": "soon"}]}),
    )
    .unwrap();
    assert!(bad.to_params().unwrap_err().contains("facts[0].valid_to"));

    let q: KgQueryArgs =
        serde_json::from_value(json!({"entity": "Ada", "as_of": "1970-01-01T00:00:01Z"})).unwrap();
    let d: amber_ipc::protocol::KgEntityParams = serde_json::from_value(q.to_params().unwrap()).unwrap();
    assert_eq!((d.entity.as_str(), d.as_of, d.scope), ("Ada", Some(1000), None));
    let i: KgInvalidateArgs = serde_json::from_value(json!({"fact": 7, "at": 9, "reason": "moved"})).unwrap();
    let d: amber_ipc::protocol::KgInvalidateParams = serde_json::from_value(i.to_params().unwrap()).unwrap();
    assert_eq!((d.fact, d.at, d.reason.as_deref()), (7, Some(9), Some("moved")));
    let t: KgTraverseArgs = serde_json::from_value(
        json!({"start": "Ada", "max_hops": 3, "predicates": ["works on"], "as_of": 2}),
    )
    .unwrap();
    let d: amber_ipc::protocol::KgTraverseParams = serde_json::from_value(t.to_params().unwrap()).unwrap();
    assert_eq!((d.max_hops, d.as_of, d.predicates), (Some(3), Some(2), vec!["works on".to_string()]));
    let tl: KgTimelineArgs = serde_json::from_value(json!({"entity": "Ada"})).unwrap();
    assert_eq!(params(&tl).unwrap(), json!({"entity": "Ada"}));
    let st: KgStatsArgs = serde_json::from_value(json!({})).unwrap();
    assert_eq!(params(&st).unwrap(), json!({}));
}

#[test]
fn kg_results_show_times_as_rfc3339_but_not_inside_metadata() {
    let mut v = json!({
        "as_of": 1000,
        "facts": [{"id": 3, "valid_from": 0, "valid_to": null, "recorded_at": 86_400_000, "confidence": 1.0}],
        "memories": [{"created_at": 0, "seq": 4, "metadata": {"created_at": 5}}]
    });
    readable_times(&mut v);
    assert_eq!(v["as_of"], "1970-01-01T00:00:01.000Z");
    assert_eq!(v["facts"][0]["valid_from"], "1970-01-01T00:00:00.000Z");
    assert_eq!(v["facts"][0]["valid_to"], Value::Null);
    assert_eq!(v["facts"][0]["recorded_at"], "1970-01-02T00:00:00.000Z");
    assert_eq!(v["facts"][0]["id"], 3);
    assert_eq!(v["memories"][0]["seq"], 4);
    assert_eq!(v["memories"][0]["metadata"]["created_at"], 5);
}

#[test]
fn times_are_millis_rfc3339_or_dates() {
    assert_eq!(TimeArg::Millis(5).millis("since"), Ok(5));
    assert_eq!(TimeArg::Text("1970-01-02".into()).millis("since"), Ok(86_400_000));
    assert_eq!(TimeArg::Text("1970-01-01T00:00:01Z".into()).millis("since"), Ok(1000));
    assert!(TimeArg::Text("last week".into()).millis("since").unwrap_err().contains("since"));
}

/// A stand-in daemon on a Unix socket: answers `hello` itself and any other method with
/// what `answer` gives for its (method, params), and counts the connections opened and
/// closed by the client.
#[cfg(unix)]
pub(super) fn stand_in(
    socket: &std::path::Path,
    answer: impl Fn(&str, &Value) -> Value + Send + Sync + 'static,
) -> (Arc<std::sync::atomic::AtomicUsize>, Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{BufRead, BufReader, Write};
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = std::os::unix::net::UnixListener::bind(socket).unwrap();
    let (opened, closed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (o, c) = (opened.clone(), closed.clone());
    let answer = Arc::new(answer);
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            o.fetch_add(1, Ordering::SeqCst);
            let (c, answer) = (c.clone(), answer.clone());
            std::thread::spawn(move || {
                let mut w = conn.try_clone().unwrap();
                for line in BufReader::new(conn).lines() {
                    let Ok(line) = line else { break };
                    let req: Value = serde_json::from_str(&line).unwrap();
                    let result = match req["method"].as_str() {
                        Some("hello") => {
                            json!({"server": "amberd", "version": "0", "protocol_version": 1,
                                                "methods": [], "model": "m"})
                        }
                        method => answer(method.unwrap_or_default(), &req["params"]),
                    };
                    let resp = json!({"jsonrpc": "2.0", "id": req["id"], "result": result});
                    writeln!(w, "{resp}").unwrap();
                }
                c.fetch_add(1, Ordering::SeqCst);
            });
        }
    });
    (opened, closed)
}

/// [`stand_in`] answering `{"ok": true}`, and `slow` after 1.5 s.
#[cfg(unix)]
fn fake_daemon(
    socket: &std::path::Path,
) -> (Arc<std::sync::atomic::AtomicUsize>, Arc<std::sync::atomic::AtomicUsize>) {
    stand_in(socket, |method, _| {
        if method == "slow" {
            std::thread::sleep(Duration::from_millis(1500));
            json!({"ok": "slow"})
        } else {
            json!({"ok": true})
        }
    })
}

#[cfg(unix)]
#[test]
fn an_idle_connection_is_closed_and_the_next_call_reconnects() {
    use std::sync::atomic::Ordering;
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("fake.sock");
    let (opened, closed) = fake_daemon(&socket);
    let cfg = Config { data_dir: dir.path().join("data"), socket: Some(socket), ..Default::default() };
    let bridge = Arc::new(Bridge::new(cfg, None, false));
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    assert_eq!(rt.block_on(bridge.call("status", Value::Null)).unwrap(), json!({"ok": true}));
    assert!(!bridge.drop_idle(IDLE_DROP), "a connection just used is kept");
    assert_eq!(opened.load(Ordering::SeqCst), 1);
    assert!(bridge.drop_idle(Duration::ZERO), "an idle connection is closed");
    let t0 = Instant::now();
    while closed.load(Ordering::SeqCst) < 1 {
        assert!(t0.elapsed() < Duration::from_secs(5), "the daemon never saw the close");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!bridge.drop_idle(Duration::ZERO), "nothing left to close");
    assert_eq!(rt.block_on(bridge.call("status", Value::Null)).unwrap(), json!({"ok": true}));
    assert_eq!(opened.load(Ordering::SeqCst), 2, "the next call reconnected");
}

#[cfg(unix)]
#[test]
fn a_slow_call_does_not_hold_up_the_others() {
    use std::sync::atomic::Ordering;
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("fake.sock");
    let (opened, _closed) = fake_daemon(&socket);
    let cfg = Config { data_dir: dir.path().join("data"), socket: Some(socket), ..Default::default() };
    let bridge = Arc::new(Bridge::new(cfg, None, false));
    let slow = {
        let bridge = bridge.clone();
        std::thread::spawn(move || {
            let t0 = Instant::now();
            (bridge.call_blocking("slow", Value::Null), t0.elapsed())
        })
    };
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(bridge.call_blocking("status", Value::Null).unwrap(), json!({"ok": true}));
    assert!(!slow.is_finished(), "the quick call waited behind the slow one");
    let (slow_result, slow_took) = slow.join().unwrap();
    assert_eq!(slow_result.unwrap(), json!({"ok": "slow"}));
    assert!(slow_took >= Duration::from_millis(1500), "{slow_took:?}");
    assert_eq!(opened.load(Ordering::SeqCst), 2, "each call had a connection of its own");
    // Both connections are kept for the next calls.
    assert_eq!(bridge.idle.lock().unwrap().len(), 2);
}

#[test]
fn an_unreachable_daemon_is_a_tool_error() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = Config {
        data_dir: dir.path().join("data"),
        socket: Some(dir.path().join("none.sock")),
        ..Default::default()
    };
    let bridge = Arc::new(Bridge::new(cfg, None, false));
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let err = rt.block_on(bridge.call("status", Value::Null)).unwrap_err();
    assert!(err.contains("amberd is not running"), "{err}");
    let r = reply(Err(err));
    assert_eq!(r.is_error, Some(true));
}

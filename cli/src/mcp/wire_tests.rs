//! Every MCP tool's call, as it reaches the daemon, checked against the method registry:
//! each tool is called with every argument its schema lists (a sample value of the
//! declared type), against a stand-in daemon that records what it is sent, and the
//! params it gets must be the declared params of the method of the tool's name
//! ([`Method::check_params`], the dispatch's own reading). A tool argument whose key or
//! shape the daemon's params type does not take fails here, not in a host.

use std::sync::Mutex as StdMutex;

use super::*;

/// A sample of what `schema` describes (`root` holds its `$defs`): the first type that
/// is not null, every property of an object, one item of an array. Strings are 32 hex
/// digits, which every string param takes (an id, a scope, a name, a text).
fn sample(schema: &Value, root: &Value) -> Value {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let def = r.rsplit('/').next().unwrap_or_default();
        return sample(&root["$defs"][def], root);
    }
    if let Some(v) = schema.get("const") {
        return v.clone();
    }
    if let Some(first) = schema.get("enum").and_then(Value::as_array).and_then(|e| e.first()) {
        return first.clone();
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(alts) = schema.get(key).and_then(Value::as_array) {
            let alt = alts.iter().find(|a| a.get("type").and_then(Value::as_str) != Some("null"));
            return alt.map_or(Value::Null, |a| sample(a, root));
        }
    }
    let kind = match schema.get("type") {
        Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).find(|t| *t != "null"),
        Some(Value::String(t)) => Some(t.as_str()),
        _ => None,
    };
    match kind {
        Some("string") => json!("0123456789abcdef0123456789abcdef"),
        Some("integer") => json!(1),
        Some("number") => json!(1.0),
        Some("boolean") => json!(true),
        Some("array") => json!([sample(&schema["items"], root)]),
        Some("object") => {
            let props = schema.get("properties").and_then(Value::as_object);
            Value::Object(props.into_iter().flatten().map(|(k, s)| (k.clone(), sample(s, root))).collect())
        }
        _ => Value::Null,
    }
}

/// A stand-in daemon that answers every method `{}` and records (method, params).
fn recording_daemon(socket: &std::path::Path) -> Arc<StdMutex<Vec<(String, Value)>>> {
    let seen = Arc::new(StdMutex::new(Vec::new()));
    let log = seen.clone();
    super::super::tests::stand_in(socket, move |method, params| {
        log.lock().unwrap().push((method.to_string(), params.clone()));
        json!({})
    });
    seen
}

#[cfg(unix)]
#[test]
fn every_tool_sends_its_methods_declared_params() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("fake.sock");
    let seen = recording_daemon(&socket);
    let mut cfg = Config { data_dir: dir.path().join("data"), socket: Some(socket), ..Default::default() };
    cfg.learn.kind = amber_tiers::advice::LearnKind::Openai;
    let mcp = AmberMcp::new(Bridge::new(cfg, None, false));
    let tools = AmberMcp::router(true, ToolSet::All).list_all();
    let args = |name: &str| -> Value {
        let t = tools.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("no tool {name}"));
        let schema = Value::Object((*t.input_schema).clone());
        sample(&schema, &schema)
    };
    macro_rules! call {
        ($($tool:ident),*) => {{
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            $(
                let a = serde_json::from_value(args(stringify!($tool)))
                    .unwrap_or_else(|e| panic!("{}'s sample arguments: {e}", stringify!($tool)));
                // The stand-in's `{}` may not be the tool's result type: what it was
                // sent is what is checked, below.
                let _ = rt.block_on(mcp.$tool(Parameters(a)));
            )*
            vec![$(stringify!($tool)),*]
        }};
    }
    let mut called = call!(
        recall,
        remember,
        get,
        forget,
        links,
        session_start,
        session_event,
        session_end,
        outcome,
        thread,
        guard,
        release,
        review,
        run_record,
        run_reward,
        get_advice,
        session_show,
        kg_add,
        kg_invalidate,
        kg_query,
        kg_timeline,
        kg_traverse,
        kg_stats
    );
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(mcp.status());
    called.push("status");
    // Every tool was called here (a new tool must be added above).
    let mut listed: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    listed.sort_unstable();
    called.sort_unstable();
    assert_eq!(listed, called);
    let seen = seen.lock().unwrap().clone();
    let mut sent: Vec<&str> = seen.iter().map(|(m, _)| m.as_str()).collect();
    sent.sort_unstable();
    sent.dedup();
    for tool in &called {
        assert!(sent.contains(tool), "{tool} sent no {tool} request: {sent:?}");
    }
    for (method, params) in seen {
        let m = Method::from_name(&method).unwrap_or_else(|| panic!("{method} is not a method"));
        if let Err(e) = m.check_params(params.clone()) {
            panic!("{e}\n  sent: {params}");
        }
    }
}

#[test]
fn a_misnamed_key_is_caught() {
    // The check the test above relies on: the daemon's params refuse a key they do not
    // declare, and take the ones they do.
    let good = json!({"content": "x", "type": "pattern", "scope": "p"});
    assert_eq!(Method::Remember.check_params(good), Ok(()));
    let bad = json!({"content": "x", "kind": "pattern"});
    let e = Method::Remember.check_params(bad).unwrap_err();
    assert!(e.starts_with("remember:") && e.contains("kind"), "{e}");
}

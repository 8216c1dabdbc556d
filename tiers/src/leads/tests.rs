use super::norm::{norm_file, shape};
use super::*;

fn sig(text: &str) -> Signature {
    signature(text).unwrap_or_else(|| panic!("no signature in:\n{text}"))
}

const PY: &str = r#"The nightly import failed on the March export.
Traceback (most recent call last):
  File "/home/alice/src/shop/etl/cli.py", line 41, in main
    rows = load(path)
  File "/home/alice/.venv/lib/python3.11/site-packages/click/core.py", line 783, in invoke
    return __callback(*args, **kwargs)
  File "/home/alice/src/shop/etl/parse.py", line 112, in parse_row
    qty = int(row["qty"])
ValueError: invalid literal for int() with base 10: '12,5'
"#;

#[test]
fn python_traceback() {
    let s = sig(PY);
    assert_eq!(s.kinds, ["ValueError"]);
    assert_eq!(s.message, "invalid literal for int() with base <n>: '<str>'");
    assert_eq!(s.culprit.as_deref(), Some("parse.parse_row"));
    assert_eq!(s.frames, ["parse.parse_row", "cli.main"]);
    assert_eq!(s.files, ["shop/etl/parse.py", "shop/etl/cli.py"]);
    let q = query_text(&s);
    assert!(q.contains("ValueError") && q.contains("parse.parse_row") && q.contains("parse.py"), "{q}");
    assert!(!q.contains('<'), "{q}");
}

#[test]
fn python_chain_and_pytest() {
    let chained = "Traceback (most recent call last):\n  File \"/app/a.py\", line 3, in f\n    x[k]\nKeyError: 'id'\n\nDuring handling of the above exception, another exception occurred:\n\nTraceback (most recent call last):\n  File \"/app/b.py\", line 9, in g\n    f()\nRuntimeError: lookup failed for 42\n";
    let s = sig(chained);
    assert_eq!(s.kinds, ["KeyError", "RuntimeError"]);
    assert_eq!(s.message, "lookup failed for <n>");
    assert_eq!(s.culprit.as_deref(), Some("b.g"));
    let pytest = "    def test_rounding():\n>       assert round_total([10.005]) == 10.0\nE       assert 10.01 == 10.0\n\ntests/test_totals.py:42: AssertionError\n";
    let s = sig(pytest);
    assert_eq!(s.kinds, ["AssertionError"]);
    assert_eq!(s.message, "assert <n> == <n>");
    assert_eq!(s.culprit.as_deref(), Some("tests/test_totals.py"));
}

#[test]
fn rust_panic_new_old_and_backtrace() {
    let new = "thread 'main' panicked at src/config.rs:12:5:\ncalled `Option::unwrap()` on a `None` value\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n";
    let s = sig(new);
    assert_eq!(s.kinds, ["panic"]);
    assert_eq!(s.message, "called `Option::unwrap()` on a `None` value");
    assert_eq!(s.culprit.as_deref(), Some("src/config.rs"));
    let old = "thread 'worker-3' panicked at 'failed to open: Os { code: 2, kind: NotFound, message: \"No such file or directory\" }', src/store/open.rs:88:14\n";
    let s = sig(old);
    assert_eq!(s.kinds, ["panic", "NotFound", "ENOENT"]);
    assert_eq!(
        s.message,
        "failed to open: Os { code: <n>, kind: NotFound, message: \"No such file or directory\" }"
    );
    let bt = "thread 'main' panicked at src/parse/tokens.rs:77:18:\nindex out of bounds: the len is 3 but the index is 7\nstack backtrace:\n   0: rust_begin_unwind\n             at /rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/std/src/panicking.rs:645:5\n   1: core::panicking::panic_bounds_check\n             at /rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/core/src/panicking.rs:208:5\n   2: ledger::parse::tokens::next_token::h1a2b3c4d5e6f7a8b\n             at ./src/parse/tokens.rs:77:18\n   3: ledger::main\n             at ./src/main.rs:9:5\n";
    let s = sig(bt);
    assert_eq!(s.message, "index out of bounds: the len is <n> but the index is <n>");
    assert_eq!(s.culprit.as_deref(), Some("ledger::parse::tokens::next_token"));
    assert_eq!(s.frames, ["ledger::parse::tokens::next_token", "ledger::main"]);
    assert_eq!(s.files, ["src/parse/tokens.rs", "src/main.rs"]);
}

#[test]
fn rustc_error() {
    let t = "   Compiling ledger v0.3.1 (/home/alice/src/ledger)\nerror[E0502]: cannot borrow `self.entries` as mutable because it is also borrowed as immutable\n  --> src/index.rs:42:9\n   |\n41 |         let first = &self.entries[0];\n   |                      ------------ immutable borrow occurs here\n42 |         self.entries.push(e);\n   |         ^^^^^^^^^^^^^^^^^^^^ mutable borrow occurs here\n\nerror: could not compile `ledger` (bin \"ledger\") due to 1 previous error\n";
    let s = sig(t);
    assert_eq!(s.kinds, ["E0502"]);
    assert_eq!(s.message, "cannot borrow `self.entries` as mutable because it is also borrowed as immutable");
    assert_eq!(s.culprit.as_deref(), Some("src/index.rs"));
    assert_eq!(s.files, ["src/index.rs"]);
}

#[test]
fn go_panic() {
    let t = "panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x6b2f3c]\n\ngoroutine 23 [running]:\ngithub.com/acme/shop/internal/api.(*Server).handleOrder(0xc000112000, {0x7f3a2c, 0xc0001a2000}, 0xc000180100)\n\t/home/alice/src/shop/internal/api/orders.go:88 +0x1d4\nnet/http.HandlerFunc.ServeHTTP(0xc000010000?, {0x8a1f00?, 0xc0001a2000?}, 0xc000180100?)\n\t/usr/local/go/src/net/http/server.go:2136 +0x29\ncreated by net/http.(*Server).Serve in goroutine 1\n\t/usr/local/go/src/net/http/server.go:3086 +0x5cb\n\ngoroutine 1 [IO wait]:\nmain.main()\n\t/home/alice/src/shop/cmd/api/main.go:40 +0x1a5\nexit status 2\n";
    let s = sig(t);
    assert_eq!(s.kinds, ["panic", "SIGSEGV", "exit status 2"]);
    assert_eq!(s.message, "runtime error: invalid memory address or nil pointer dereference");
    assert_eq!(s.culprit.as_deref(), Some("github.com/acme/shop/internal/api.(*Server).handleOrder"));
    assert_eq!(s.frames, ["github.com/acme/shop/internal/api.(*Server).handleOrder"]);
    assert_eq!(s.files, ["internal/api/orders.go"]);
    let idx = "panic: runtime error: index out of range [5] with length 3\n\ngoroutine 1 [running]:\nmain.pick(...)\n\t/srv/build/cmd/tool/main.go:12\nmain.main()\n\t/srv/build/cmd/tool/main.go:20 +0x1d\n";
    assert_eq!(sig(idx).message, "runtime error: index out of range [<n>] with length <n>");
    // Cut before the file lines: the function lines still name the frames.
    let cut = "panic: runtime error: index out of range [3] with length 3\n\ngoroutine 5 [running]:\ngithub.com/acme/shop/internal/cart.(*Cart).Remove(...)\nnet/http.HandlerFunc.ServeHTTP(0xc0?, {0x8a?})";
    let s = sig(cut);
    assert_eq!(s.culprit.as_deref(), Some("github.com/acme/shop/internal/cart.(*Cart).Remove"));
    assert_eq!(s.frames, ["github.com/acme/shop/internal/cart.(*Cart).Remove"]);
}

#[test]
fn node_errors() {
    let t = "TypeError: Cannot read properties of undefined (reading 'map')\n    at renderList (/home/alice/src/shop/web/src/components/List.js:14:22)\n    at async handler (/home/alice/src/shop/server/routes/list.js:30:5)\n    at Module._compile (node:internal/modules/cjs/loader:1105:14)\n    at Object.<anonymous> (/home/alice/src/shop/node_modules/express/lib/router/layer.js:95:5)\n";
    let s = sig(t);
    assert_eq!(s.kinds, ["TypeError"]);
    assert_eq!(s.message, "Cannot read properties of undefined (reading 'map')");
    assert_eq!(s.culprit.as_deref(), Some("renderList"));
    assert_eq!(s.frames, ["renderList", "handler"]);
    assert_eq!(s.files, ["src/components/List.js", "server/routes/list.js"]);
    let refused = "Error: connect ECONNREFUSED 127.0.0.1:5432\n    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16) {\n  errno: -111,\n  code: 'ECONNREFUSED',\n  syscall: 'connect'\n}\n";
    let s = sig(refused);
    assert_eq!(s.kinds, ["Error", "ECONNREFUSED"]);
    assert_eq!(s.message, "connect ECONNREFUSED <n>");
    assert!(s.frames.is_empty() && s.culprit.is_none());
    let enoent = "Error: ENOENT: no such file or directory, open '/tmp/upload-8f3a9c2e.png'";
    let s = sig(enoent);
    assert_eq!(s.kinds, ["Error", "ENOENT"]);
    assert_eq!(s.message, "ENOENT: no such file or directory, open '<path>'");
}

#[test]
fn java_exception_with_causes() {
    let t = "Exception in thread \"main\" org.springframework.dao.DataIntegrityViolationException: could not execute statement\n\tat org.springframework.orm.jpa.vendor.HibernateJpaDialect.convertHibernateAccessException(HibernateJpaDialect.java:276)\n\tat com.acme.shop.users.UserService.register(UserService.java:58)\n\tat com.acme.shop.users.UserController.lambda$create$0(UserController.java:33)\nCaused by: org.postgresql.util.PSQLException: ERROR: duplicate key value violates unique constraint \"uk_users_email\"\n  Detail: Key (email)=(u42@example.com) already exists.\n\tat org.postgresql.core.v3.QueryExecutorImpl.receiveErrorResponse(QueryExecutorImpl.java:2713)\n\tat java.base/jdk.internal.reflect.DirectMethodHandleAccessor.invoke(DirectMethodHandleAccessor.java:103)\n\t... 12 more\n";
    let s = sig(t);
    assert_eq!(s.kinds, ["DataIntegrityViolationException", "PSQLException"]);
    assert_eq!(s.message, "ERROR: duplicate key value violates unique constraint \"uk_users_email\"");
    assert_eq!(s.culprit.as_deref(), Some("com.acme.shop.users.UserService.register"));
    assert_eq!(
        s.frames,
        ["com.acme.shop.users.UserService.register", "com.acme.shop.users.UserController.lambda$create$<n>"]
    );
    assert_eq!(s.files, ["UserService.java", "UserController.java"]);
    let npe = "java.util.ConcurrentModificationException\n\tat java.base/java.util.ArrayList$Itr.checkForComodification(ArrayList.java:1095)\n\tat com.acme.shop.cart.Cart.removeExpired(Cart.java:71)\n";
    let s = sig(npe);
    assert_eq!(s.kinds, ["ConcurrentModificationException"]);
    assert_eq!(s.culprit.as_deref(), Some("com.acme.shop.cart.Cart.removeExpired"));
}

#[test]
fn plain_error_lines() {
    let s = sig(
        "npm ERR! code ELIFECYCLE\nnpm ERR! errno 1\nnpm ERR! shop@1.0.0 build: `webpack`\nnpm ERR! Exit status 1\n",
    );
    assert_eq!(s.kinds, ["ELIFECYCLE", "exit status 1"]);
    let s = sig("2024-05-02 10:11:12,345 ERROR [worker] open /var/lib/shop/queue.db failed: EACCES");
    assert_eq!(s.kinds, ["EACCES"]);
    assert_eq!(s.message, "open <path> failed: EACCES");
    let s = sig("src/app.ts(12,7): error TS2339: Property 'total' does not exist on type 'Order'.");
    assert_eq!(s.kinds, ["TS2339"]);
    assert_eq!(s.culprit.as_deref(), Some("src/app.ts"));
    assert!(signature("error: could not find a README, using the defaults").is_none());
}

#[test]
fn test_runner_and_tool_lines() {
    let go = "--- FAIL: TestSchedule (0.00s)\n    --- FAIL: TestSchedule/hourly_at_59 (0.00s)\n        schedule_test.go:42: next run = 10:59, want 11:59\nFAIL\n";
    let s = sig(go);
    assert_eq!(
        (s.kinds.as_slice(), s.culprit.as_deref()),
        (&["test failed".to_string()][..], Some("TestSchedule"))
    );
    assert_eq!(s.message, "next run = <n>, want <n>");
    assert_eq!(s.files, ["schedule_test.go"]);
    let jest = " FAIL  src/invoice.test.js\n  ● Invoice › totals › sums discounted lines\n\n    expect(received).toBe(expected)\n\n      at Object.toBe (src/invoice.test.js:12:27)\n";
    assert_eq!(sig(jest).message, "Invoice › totals › sums discounted lines");
    let make = "make: protoc: No such file or directory\nmake: *** [Makefile:12: generate] Error 127\n";
    let s = sig(make);
    assert_eq!(s.kinds, ["exit status 127", "ENOENT"]);
    assert_eq!(s.culprit.as_deref(), Some("make generate"));
    let s = sig(
        "fatal: unable to access 'https://git.acme.internal/fleet/probes.git/': Could not resolve host: git.acme.internal",
    );
    assert_eq!(s.message, "unable to access '<url>': Could not resolve host: git.acme.internal");
    let s = sig(
        "Error response from daemon: driver failed: Bind for 0.0.0.0:5432 failed: port is already allocated",
    );
    assert_eq!(s.kinds, ["daemon error", "EADDRINUSE"]);
    let s = sig("2025/03/01 10:00:00 listen tcp :8443: bind: address already in use");
    assert_eq!(
        (s.kinds.as_slice(), s.message.as_str()),
        (&["EADDRINUSE".to_string()][..], "listen tcp :<n>: bind: address already in use")
    );
}

#[test]
fn prose_is_not_an_error() {
    for t in [
        "I made an error yesterday when I merged the branch.",
        "Error handling: we wrap everything in anyhow and log at the edge.",
        "The TypeError we saw last week is fixed; ValueError handling moved to parse.py.",
        "Traceback analysis is on the agenda for Tuesday.",
        "Remember: panic early in tests, never in the server. The goroutine count was 40.",
        "We got ENOENT errors when the volume was not mounted; see the runbook.",
        "exit status 1 means the linter failed, which is fine for drafts",
        "We listen on tcp :8443 by default; the dial timeout is 5 s.",
        "The FAIL count went down; make sure every test passes before merging.",
        "",
    ] {
        assert!(signature(t).is_none(), "detected an error in {t:?}: {:?}", signature(t));
    }
}

#[test]
fn normalisation() {
    assert_eq!(norm_file("/tmp/pytest-of-root/pytest-12/test_load0/config.yaml"), "config.yaml");
    assert_eq!(norm_file(r"C:\Users\dana\AppData\Local\Temp\tmpab12cd\x.json"), "x.json");
    assert_eq!(norm_file("/var/folders/zz/k1_3xy/T/report.pdf"), "report.pdf");
    assert_eq!(
        norm_file(
            "/home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f/tokio-1.35.1/src/runtime/park.rs"
        ),
        "src/runtime/park.rs"
    );
    assert_eq!(norm_file("/root/go/pkg/mod/github.com/lib/pq@v1.10.9/conn.go"), "lib/pq/conn.go");
    assert_eq!(
        norm_file("/home/alice/.venv/lib/python3.11/site-packages/requests/adapters.py"),
        "requests/adapters.py"
    );
    assert_eq!(norm_file("./src/db.rs"), "src/db.rs");
    assert_eq!(norm_file("file:///Users/carol/code/shop/web/app.mjs"), "shop/web/app.mjs");
    assert_eq!(
        shape(
            "job 3f2b9c1e-8a7d-4e6f-9b0a-1c2d3e4f5a6b at 0x7ffd5e8c timed out after 30.5s (pid 4242, tmpk3j4l2ab)"
        ),
        "job <id> at <hex> timed out after <n>s (pid <n>, <id>)"
    );
    assert_eq!(shape("GET http://localhost:8080/v1/rates?x=1 failed"), "GET <url> failed");
}

#[test]
fn compare_and_rank() {
    let rerun = PY
        .replace("line 41", "line 44")
        .replace("line 112", "line 118")
        .replace("/home/alice/src/shop", "/srv/ci/builds/7731/shop")
        .replace("'12,5'", "'n/a'");
    let (a, b) = (sig(PY), sig(&rerun));
    let m = compare(&a, &b);
    assert!(m.same_kind && m.same_message && m.same_culprit, "{m:?}");
    assert_eq!((m.shared_frames, m.shared_files), (2, 2));
    assert!((m.score - 1.0).abs() < 1e-6, "{m:?}");
    // The same exception elsewhere: a kind in common, nothing more.
    let other = "Traceback (most recent call last):\n  File \"/home/alice/src/shop/reports/export.py\", line 9, in format_date\n    d = parse(s)\nValueError: time data '03/11' does not match format '%Y-%m-%d'\n";
    let m2 = compare(&b, &sig(other));
    assert!(m2.same_kind && !m2.same_culprit && m2.score < 0.3, "{m2:?}");
    let cands = vec![
        ("other".to_string(), other.to_string(), Some(0)),
        ("prose".to_string(), "We parse rows in parse_row with int().".to_string(), Some(1)),
        ("orig".to_string(), PY.to_string(), Some(2)),
        (
            "go".to_string(),
            "panic: boom\n\ngoroutine 1 [running]:\nmain.main()\n\t/x/main.go:3 +0x1\n".to_string(),
            None,
        ),
    ];
    let leads = rank(&b, &cands, 3);
    let keys: Vec<&str> = leads.iter().map(|l| l.key.as_str()).collect();
    assert_eq!(keys, ["orig", "other"]);
    assert!(leads[0].score > leads[1].score && leads[0].bm25_rank == Some(2));
    assert_eq!(rank(&b, &cands, 1).len(), 1);
}

#[test]
fn anyhow_chain() {
    let t = "Error: failed to load the agent configuration\n\nCaused by:\n    0: reading /etc/fleet/agent.toml\n    1: No such file or directory (os error 2)\n";
    let s = sig(t);
    assert_eq!(s.kinds, ["Error", "ENOENT"]);
    assert_eq!(s.message, "failed to load the agent configuration");
    assert!(signature("Error: I forgot the milk").is_none());
}

#[test]
fn a_panic_with_and_without_backtrace_share_the_culprit() {
    let bare = "thread 'main' panicked at src/config.rs:12:5:\ncalled `Option::unwrap()` on a `None` value\n";
    let bt = "thread 'main' panicked at src/config.rs:14:9:\ncalled `Option::unwrap()` on a `None` value\nstack backtrace:\n   0: rust_begin_unwind\n   1: ledger::config::load\n             at ./src/config.rs:14:9\n";
    let (a, b) = (sig(bare), sig(bt));
    assert_eq!(b.culprit.as_deref(), Some("ledger::config::load"));
    assert!(compare(&a, &b).same_culprit && compare(&b, &a).same_culprit);
    let elsewhere =
        "thread 'main' panicked at src/cli.rs:40:5:\ncalled `Option::unwrap()` on a `None` value\n";
    let m = compare(&b, &sig(elsewhere));
    assert!(!m.same_culprit && m.same_message, "{m:?}");
}

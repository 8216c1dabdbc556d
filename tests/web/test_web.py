"""The person's web view (`amber ui`) in a real browser: Debian's Chromium, headless,
driven by Playwright (its Python package; no browser download: the system binary).

Against a store seeded through the real doors (the `amber` command as the person, the
Python client as an agent: memories, a hostile one, a session that was served, graph
facts, a rewarded run, an ingested documentation tree of a few hundred sections), it
loads every page, clicks search -> memory -> session, forgets and unforgets a memory
asserting on the page, pages through a scope and moves a memory to another scope with
its form, browses the tree by file (a file's sections in order), filters and pages a
scope with counts, searches the scopes `amber recall` searches where `amber ui` ran
(then every scope), opens the graph on the project's entities, and checks from the
browser that no token, a foreign Host and a cross-site POST are refused. Screenshots go
to target/artifacts/web/*.png (CI keeps them)."""

import contextlib
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
AMBER = os.environ.get("AMBER_BIN") or str(ROOT / "target" / "release" / "amber")
CHROMIUM = os.environ.get("AMBER_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
SHOTS = ROOT / "target" / "artifacts" / "web"
STRICT = os.environ.get("AMBER_TESTS_STRICT") == "1"
SCOPE = "proj/shop"
MANY = "proj/runbook"  # more memories than a scope page holds (40)
GUIDE_STEPS = 120  # docs/guide.md: a title section and this many steps
OPS_RUNBOOKS = 100  # docs/ops.md
HOSTILE = "The checkout page logs <script>window.PWNED=1</script> when the cart is empty"

sys.path.insert(0, str(ROOT / "clients" / "python"))
sys.path.insert(0, str(ROOT / "tests" / "claude_code"))
from amber_client import Client  # noqa: E402
from fake_openai import SITUATION, FakeOpenAI  # noqa: E402

if STRICT:
    import playwright.sync_api as playwright_api
else:
    playwright_api = pytest.importorskip("playwright.sync_api")


def _need_chromium():
    if os.path.exists(CHROMIUM):
        return
    msg = f"Chromium is not installed ({CHROMIUM}): apt-get install -y chromium"
    if STRICT:
        pytest.fail(msg)
    pytest.skip(msg)


@pytest.fixture(scope="module")
def project():
    """The project `amber ui` runs in (a git checkout), with a documentation tree."""
    root = Path(tempfile.mkdtemp(prefix="amber-web-proj-")).resolve()
    (root / ".git").mkdir()
    (root / "docs").mkdir()
    head = "# Guide\n\nThe rollout, step by step.\n\n"
    steps = "".join(f"## Step {i:03}\n\nDo step {i} of the rollout: check the gauges on host {i}.\n\n"
                    for i in range(1, GUIDE_STEPS + 1))
    (root / "docs" / "guide.md").write_text(head + steps)
    ops = "".join(f"## Runbook {i}\n\nRestart worker {i} when its queue stalls.\n\n" for i in range(1, OPS_RUNBOOKS + 1))
    (root / "docs" / "ops.md").write_text("# Ops\n\n" + ops)
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def env():
    if not os.path.exists(AMBER):
        pytest.fail(f"amber binary not found at {AMBER} (set AMBER_BIN)")
    tmp = tempfile.mkdtemp(prefix="amber-web-")
    # The [learn] model: the fake OpenAI-compatible endpoint answering by rule (advice
    # quality is not measured here), judging at once, no timer.
    chat = FakeOpenAI().start()
    config = os.path.join(tmp, "config.toml")
    with open(config, "w") as f:
        f.write(f'[learn]\nkind = "openai"\nurl = "{chat.url}"\nmodel = "m"\njudge_delay_s = 0\ninterval_s = 0\n')
    e = {
        "AMBER_DATA_DIR": os.path.join(tmp, "data"),
        "AMBER_SOCKET": os.path.join(tmp, "amber.sock"),
        "AMBER_STATE_DIR": os.path.join(tmp, "state"),
        "AMBER_CONFIG": config,
        "AMBER_LOG": "warn",
    }
    for key in ("AMBERD", "AMBER_HOME", "HOME", "PATH"):
        if os.environ.get(key):
            e[key] = os.environ[key]
    yield e
    subprocess.run([AMBER, "daemon", "stop"], env=e, timeout=90, check=False, capture_output=True)
    chat.stop()
    shutil.rmtree(tmp, ignore_errors=True)


def amber(env, *args, cwd=None):
    out = subprocess.run([AMBER, "--json", *args], env=env, timeout=300, capture_output=True, text=True, cwd=cwd)
    assert out.returncode == 0, f"amber {args}: {out.stderr}"
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def seeded(env):
    """The store the pages show, and the ids the test follows."""
    deploy = amber(env, "remember", "Deploys go through the blue-green switch in ops/switch.sh; "
                   "run it with the VPN on", "--scope", SCOPE)["id"]
    hostile = amber(env, "remember", HOSTILE, "--scope", SCOPE, "--type", "discovery")["id"]
    amber(env, "remember", "The staging database is shop_stage on db2; never point tests at prod",
          "--scope", SCOPE)
    amber(env, "remember", "Prefer short answers with the command first", "--scope", "user", "--type", "intent")
    c = Client(env["AMBER_SOCKET"], start=False)
    s = c.session_start("claude-code", scope=SCOPE, prompt="how do deploys work here, the blue-green switch?")
    sid = s["session_id"]
    c.remember("The switch script needs ops/keys.env present", scope=SCOPE, session_id=sid, author="claude-code")
    c.session_end(sid, manifest=[{"memory_id": deploy, "used": True, "result": "success"}], outcome=0.8)
    c.kg_add(scope=SCOPE, facts=[
        {"subject": "checkout service", "predicate": "depends on", "object": "payments api", "sources": [deploy]},
        {"subject": "payments api", "predicate": "runs on", "object": "db2"},
        {"subject": "checkout service", "predicate": "owned by", "object": "team shop"},
    ])
    run = c.run_record("claude-code", "ship the checkout fix", scope=SCOPE, used=[deploy], outcome="shipped")
    rid = run["results"][0]["id"]
    c.run_reward("claude-code", rid, 0.9)
    # Advice: a note learned from three deploy runs, served in one session, judged per note.
    for i, reward in enumerate((-1.0, -1.0, 1.0)):
        r = c.run_record("codex", f"the staging deploy fails, try {i}", scope=SCOPE, outcome="tried")
        c.run_reward("codex", r["results"][0]["id"], reward)
    amber(env, "advice", "learn", SCOPE)
    s = c.session_start("codex", scope=SCOPE, prompt="the staging deploy fails again")
    given = c.get_advice("the staging deploy fails again", session_id=s["session_id"])
    assert given["situation"] == SITUATION, given
    c.session_end(s["session_id"])
    amber(env, "judgements", SCOPE, "--judge")
    c.close()
    return {"deploy": deploy, "hostile": hostile, "session": sid}


@pytest.fixture(scope="module")
def ui(env, seeded, project):
    """The view's port, and `link()`: a new link from `amber ui` run in the project, its
    one-time code good for one load (the token itself is never in a URL)."""
    r = amber(env, "ui", "--no-open", cwd=project)
    assert r["url"].startswith(f"http://127.0.0.1:{r['port']}/?code=")
    first = [r["url"]]

    def link():
        if first:
            return first.pop()
        again = amber(env, "ui", "--no-open", cwd=project)
        assert again["port"] == r["port"] and not again["started"], again
        return again["url"]

    return {"port": r["port"], "link": link}


@pytest.fixture(scope="module")
def browser():
    _need_chromium()
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


@contextlib.contextmanager
def evil_server(target):
    """Another site's page on 127.0.0.1 (another port) that posts a form to `target`."""
    body = (
        "<!doctype html><form id=f method=post action='%s'><input name=form value=guessed></form>"
        "<script>document.getElementById('f').submit()</script>" % target
    ).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    srv = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.server_port}/"
    finally:
        srv.shutdown()


def shot(page, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def test_pages_search_memory_session_and_forget_unforget(browser, ui, seeded):
    ctx = browser.new_context(viewport={"width": 1200, "height": 900})
    page = ctx.new_page()
    scripts_ran = []
    page.on("console", lambda m: scripts_ran.append(m.text))
    origin = f"http://127.0.0.1:{ui['port']}"

    # The URL amber ui printed: its one-time code becomes a cookie and leaves the address
    # bar; the same link again is refused.
    url = ui["link"]()
    page.goto(url)
    assert page.url == origin + "/", page.url
    spent = ctx.new_page()
    assert spent.goto(url).status == 401
    spent.close()
    assert page.locator("#scopes").is_visible()
    assert page.locator("td.scope", has_text=SCOPE).count() == 1
    cookie = [c for c in ctx.cookies() if c["name"] == f"amber_ui_{ui['port']}"][0]
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    shot(page, "scopes")

    # Every page of the navigation loads.
    for label, path, marker in [("Sessions", "/sessions", "#sessions"), ("Archive", "/archive", "h1"),
                                ("Runs", "/runs", "#liftchart svg"), ("Health", "/health", "#freshness")]:
        page.click(f"header a:text-is('{label}')")
        assert page.url == origin + path
        assert page.locator(marker).first.is_visible(), label
    page.goto(origin + "/runs")
    assert page.locator("#runs td", has_text="ship the checkout fix").count() == 1
    assert page.locator("#nonotes").is_visible(), "no scope chosen: notes wait for one"
    shot(page, "runs")
    # A scope's advice notes with what their served sessions said of them (the judge's
    # word per note, from the fake endpoint's rule: applied and helped).
    page.goto(origin + "/runs?scope=" + SCOPE)
    row = page.locator("#notes tr", has_text=SITUATION)
    assert row.count() == 1, page.locator("body").inner_text()[:2000]
    cells = [t.strip() for t in row.locator("td").all_inner_texts()]
    assert cells[1:] == ["shared", "1", "1", "1", "1", "0", "open (bar 3)"], cells
    page.goto(origin + "/health")
    assert "fresh" in page.locator("#freshness").inner_text()
    shot(page, "health")
    page.goto(origin + "/graph?entity=checkout+service&scope=" + SCOPE)
    assert page.locator("#graph svg circle").count() >= 3
    assert page.locator("#graph svg text", has_text="payments api").count() == 1
    shot(page, "graph")

    # Search -> memory -> session, by clicking.
    page.goto(origin + "/")
    page.fill("header input[name=q]", "blue-green switch deploys")
    page.click("header button[type=submit]")
    assert page.url.startswith(origin + "/search?")
    # By default the scopes `amber recall` searches where `amber ui` ran (not proj/shop);
    # the page offers every scope.
    assert page.locator("#search input[value=here]").is_checked()
    assert seeded["deploy"][:12] not in page.locator("main").inner_text()
    page.click("#everywhere")
    assert "in=all" in page.url and page.locator("#every").is_checked()
    hit = page.locator("#hits li.hit", has_text=seeded["deploy"][:12])
    assert hit.count() == 1, page.locator("#hits").inner_text()
    assert "fused" in hit.locator(".evidence").inner_text()
    shot(page, "search")
    hit.locator("a.id").click()
    assert page.url == origin + f"/memory/{seeded['deploy']}"
    assert "blue-green switch" in page.locator("#content").inner_text()
    assert page.locator("#weight svg").is_visible()
    assert page.locator("#reports td", has_text="success").count() >= 1
    assert page.locator("#state").inner_text() == "live"
    shot(page, "memory")
    page.locator("table#served a", has_text=seeded["session"][:12]).first.click()
    assert page.url == origin + f"/session/{seeded['session']}"
    assert page.locator("table#served a.id", has_text=seeded["deploy"][:12]).count() >= 1
    assert page.locator("#filed").is_visible()
    shot(page, "session")

    # Forget, then unforget, through the page's own forms.
    page.goto(origin + f"/memory/{seeded['deploy']}")
    page.click("#actions button:text-is('forget')")
    assert page.url == origin + f"/memory/{seeded['deploy']}"
    assert page.locator("#state").inner_text().startswith("forgotten")
    assert page.locator("#actions button:text-is('unforget')").is_visible()
    page.goto(origin + "/search?q=blue-green+switch+deploys&in=all")
    assert seeded["deploy"][:12] not in page.locator("main").inner_text()
    page.goto(origin + f"/memory/{seeded['deploy']}")
    page.click("#actions button:text-is('unforget')")
    assert page.locator("#state").inner_text() == "live"
    page.goto(origin + "/search?q=blue-green+switch+deploys&in=all")
    assert seeded["deploy"][:12] in page.locator("#hits").inner_text()

    # A hostile memory is text on its page: no script ran, the tag is shown.
    page.goto(origin + f"/memory/{seeded['hostile']}")
    assert "<script>window.PWNED=1</script>" in page.locator("#content").inner_text()
    assert page.evaluate("() => window.PWNED") is None
    assert page.locator("main script").count() == 0
    ctx.close()


def test_the_browser_is_refused_without_the_token_from_another_host_and_cross_site(browser, ui, seeded):
    origin = f"http://127.0.0.1:{ui['port']}"
    # No token: refused.
    ctx = browser.new_context()
    page = ctx.new_page()
    r = page.goto(origin + "/")
    assert r.status == 401
    assert page.locator("#scopes").count() == 0
    r = page.goto(origin + f"/memory/{seeded['deploy']}")
    assert r.status == 401
    shot(page, "refused")
    ctx.close()

    # With the token, a foreign Host (what a DNS-rebound page would send) is refused.
    ctx = browser.new_context()
    page = ctx.new_page()
    page.goto(ui["link"]())
    assert page.locator("#scopes").is_visible()
    r = ctx.request.get(origin + "/", headers={"Host": f"rebound.example:{ui['port']}"})
    assert r.status == 421
    # A POST from another origin: a page served by another server on this machine (so
    # the browser sends the cookie: same site, other origin) submits the forget form
    # with a guessed form token.
    target = f"{origin}/memory/{seeded['deploy']}/forget"
    with evil_server(target) as evil_url:
        evil = ctx.new_page()
        with evil.expect_response(target) as resp:
            evil.goto(evil_url)
        assert resp.value.status == 403, resp.value.status
        shot(evil, "cross-site-refused")
    # Still live.
    page.goto(origin + f"/memory/{seeded['deploy']}")
    assert page.locator("#state").inner_text() == "live"
    # The view's own form without its token: refused.
    r = ctx.request.post(origin + f"/memory/{seeded['deploy']}/forget",
                         headers={"Origin": origin}, form={"form": "nope"})
    assert r.status == 403
    page.goto(origin + f"/memory/{seeded['deploy']}")
    assert page.locator("#state").inner_text() == "live"
    ctx.close()


def test_a_scope_paged_and_a_memory_moved_from_its_page(browser, ui, env):
    c = Client(env["AMBER_SOCKET"], start=False)
    filed = c.remember_batch([{"content": f"Runbook step {i}: check the queue depth on worker {i}", "scope": MANY}
                              for i in range(55)])
    c.close()
    ids = [r["id"] for r in filed["results"]]
    ctx = browser.new_context(viewport={"width": 1200, "height": 900})
    page = ctx.new_page()
    origin = f"http://127.0.0.1:{ui['port']}"
    page.goto(ui["link"]())

    # From the scopes page to the scope's own: newest first, 40 a page, then the older 15.
    page.click(f"#scopes td.scope a:text-is('{MANY}')")
    assert page.url.startswith(origin + "/scope?name="), page.url
    listed = page.locator("#memories a.id")
    assert listed.count() == 40
    assert listed.first.inner_text() == ids[-1][:12]
    assert page.locator("#count").inner_text().startswith("1–40 of 55")
    shot(page, "scope")
    page.click("#older")
    assert "page=2" in page.url
    assert page.locator("#count").inner_text().startswith("41–55 of 55")
    assert [listed.nth(i).inner_text() for i in range(listed.count())] == [i[:12] for i in reversed(ids[:15])]
    assert page.locator("#older").count() == 0, "the last page has no older one"

    # Open the oldest and move it with its form: its page under its new id, in the new scope.
    page.click(f"#memories a.id:text-is('{ids[0][:12]}')")
    assert page.url == origin + f"/memory/{ids[0]}"
    page.fill("#move input[name=to]", "proj/moved")
    page.click("#move button[type=submit]")
    new = page.url.rsplit("/", 1)[-1]
    assert page.url == origin + f"/memory/{new}" and new != ids[0], page.url
    assert page.locator("#facts tr", has_text="scope").first.inner_text().endswith("proj/moved")
    assert "Runbook step 0:" in page.locator("#content").inner_text()
    shot(page, "moved")

    # The old id's page says it moved and leads to the new one.
    r = page.goto(origin + f"/memory/{ids[0]}")
    assert r.status == 404
    assert "moved to another scope" in page.locator("#moved").inner_text()
    page.click("#moved-to")
    assert page.url == origin + f"/memory/{new}"
    ctx.close()


def test_documents_by_file_filters_paging_search_default_and_graph(browser, ui, env, project):
    """The view at scale: an ingested tree browsed by file, a scope filtered and paged with
    counts, the search over the scopes `amber recall` searches where `amber ui` ran, and
    the graph opening on the project's entities."""
    scope = amber(env, "scope", "here", cwd=project)["scope"]
    for text in ("The rollout checklist: watch the gauges before every step", "Never roll out on a Friday"):
        amber(env, "remember", text, cwd=project)
    c = Client(env["AMBER_SOCKET"], start=False)
    c.remember("The gauges live on the ops dashboard", scope=scope, type="discovery", author="claude-code")
    c.remember("Rollout gauges checklist of another team", scope="elsewhere/team")
    c.kg_add(scope=scope, facts=[
        {"subject": "rollout", "predicate": "watches", "object": "gauges"},
        {"subject": "rollout", "predicate": "runs on", "object": "host 7"},
        {"subject": "gauges", "predicate": "shown on", "object": "ops dashboard"},
    ])
    c.close()
    amber(env, "ingest", str(project / "docs"), cwd=project)
    sections = GUIDE_STEPS + 1 + OPS_RUNBOOKS

    ctx = browser.new_context(viewport={"width": 1200, "height": 900})
    page = ctx.new_page()
    origin = f"http://127.0.0.1:{ui['port']}"
    page.goto(ui["link"]())

    # The project's page: its two files apart, counted; its three other memories listed.
    page.click(f"#scopes td.scope a:text-is('{scope}')")
    assert f"{sections} document sections" in page.locator("#held").inner_text()
    files = page.locator("#files a.file")
    assert [files.nth(i).inner_text() for i in range(files.count())] == ["docs/guide.md", "docs/ops.md"]
    counts = page.locator("#files td.count")
    assert [counts.nth(i).inner_text() for i in range(2)] == [str(GUIDE_STEPS + 1), str(OPS_RUNBOOKS)]
    assert page.locator("#count").inner_text().startswith("1–3 of 3")
    assert page.locator("#memories .trail").count() == 0, "no wall of chunks"
    shot(page, "scope-documents")

    # A file lists its sections in order, each leading to its memory.
    files.first.click()
    assert page.url.startswith(origin + "/file?")
    headings = page.locator("ol#sections li.section b.heading")
    assert headings.count() == GUIDE_STEPS + 1
    want = ["Guide"] + [f"Step {i:03}" for i in range(1, GUIDE_STEPS + 1)]
    assert headings.all_inner_texts() == want
    assert "Do step 1 of the rollout" in page.locator("ol#sections li.section").nth(1).inner_text()
    shot(page, "file")
    page.locator("ol#sections li.section").nth(3).locator("a.id").click()
    assert page.url.startswith(origin + "/memory/")
    assert "## Step 003" in page.locator("#content").inner_text()

    # Filters and paging with counts: the document sections, 40 a page; the agent's.
    page.goto(origin + "/scope?name=" + scope.replace("/", "%2F"))
    page.select_option("#filters select[name=filing]", "document")
    page.click("#filters button[type=submit]")
    assert page.locator("#count").inner_text().startswith(f"1–40 of {sections}")
    assert page.locator("#memories .trail").count() == 40
    page.click("#older")
    assert page.locator("#count").inner_text().startswith(f"41–80 of {sections}")
    page.click("#oldest")
    last = -(-sections // 40)
    assert page.locator("#count").inner_text().startswith(f"{(last - 1) * 40 + 1}–{sections} of {sections}")
    assert page.locator("#pageno").inner_text() == f"page {last} of {last}"
    shot(page, "scope-paged")
    page.select_option("#filters select[name=filing]", "any")
    page.select_option("#filters select[name=trust]", "agent")
    page.click("#filters button[type=submit]")
    assert page.locator("#count").inner_text().startswith("1–1 of 1")
    assert "The gauges live" in page.locator("#memories").inner_text()

    # The search covers this project and user by default, every scope when asked.
    page.fill("header input[name=q]", "rollout gauges checklist")
    page.click("header button[type=submit]")
    assert page.locator("#here").inner_text() == f"{scope} + user"
    hits = page.locator("#hits")
    assert "The rollout checklist" in hits.inner_text() and "another team" not in hits.inner_text()
    shot(page, "search-here")
    page.click("#everywhere")
    assert "another team" in page.locator("#hits").inner_text()

    # The graph opens on the project's entities, the most connected drawn.
    page.click("header a:text-is('Graph')")
    assert page.url == origin + "/graph"
    assert page.locator("#entities").is_visible()
    assert page.locator("#entities td a", has_text="rollout").count() >= 1
    assert page.locator("#drawn").inner_text() == "Around rollout"
    assert page.locator("#graph svg circle").count() >= 3
    shot(page, "graph-opens")
    ctx.close()

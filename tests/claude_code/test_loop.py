"""Real Claude Code closes Amber's learning loop: runs, a person's rewards, advice, lift.

The issue's acceptance: a replayed Claude Code week ends with runs recorded in the
project scope with tasks and traces; a person's rewards on some of them; advice learned
from them through the fake model endpoint and served at the next opening prompt; the
holdout arm and `amber lift` computing over those sessions. Plus the moments: the
Pitfalls re-read at a failed tool, the Steps at the stop.

The harness is test_week.py's (Claude Code 2.1.197 from npm, `fake_anthropic.py` as the
model, Amber installed with `amber install claude-code` (which registers the MCP server), every hook
wrapped to keep its input, output and time). Amber's `[learn]` model is
`fake_openai.py` (it answers by the system prompt: sort, tidy, write, route, judge), and
the config sets `[holdout] share = 0.5`.

Each session is new, with a `--session-id` chosen so that its holdout draw (Amber's
`held_out`, replicated here in `held_out`) is the one the plan wants; Amber's id of it
is `k-claude-code-<uuid>`.

    day 0  s1 served  (a failing Bash)  reward -1
           s2 held    reward -0.5
    day 1  s3 served  reward 1
    day 2  s4 held    reward 1
           s5 served  reward -1
    day 3  s6 held    (not rewarded)
           amber advice learn <project scope>
    day 4  s7 served  (advice at the opening prompt; a failing Bash: Pitfalls; the stop: Steps)  reward 1
           s8 held    (no advice)  reward 0.5

After each session the person rewards it (`amber runs reward last R --scope S`, from the
project). The checks are separate tests over one run of the scenario (a module
fixture). Run (about a minute):

    npm ci --prefix tests/claude_code --no-audit --no-fund
    AMBER_BIN=$PWD/target/release/amber AMBERD=$PWD/target/release/amberd \\
        target/py/bin/python -m pytest tests/claude_code/test_loop.py -q -s

AMBER_CC_KEEP=1 keeps the temporary folder (requests.jsonl, openai.jsonl, hooks/, the
store, state/logs/).
"""

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import pytest
from fake_anthropic import FakeAnthropic, prompt_text, read_log, request_strings, stop_text
from fake_openai import NOTE, PITFALLS, SITUATION, STEPS, FakeOpenAI
from test_week import (
    AMBER,
    AMBERD,
    CLAUDE,
    CLAUDE_VERSION,
    DAY,
    added_text,
    amber,
    amber_json,
    hook_captures,
    install,
    issued_tools,
    main_requests,
    run,
    tool_results,
)

PROJECT = "ledger-api"
SHARE = 0.5
ADVICE_HEAD = "Amber: advice for this task"
STUCK_HEAD = "Amber, at stuck: the Pitfalls"
DONE_HEAD = "Amber, at done: the Steps"

# name, day, holdout draw, the person's reward (None: not rewarded), a failing Bash.
PLAN = [
    ("s1", 0, "served", -1.0, True),
    ("s2", 0, "held", -0.5, False),
    ("s3", 1, "served", 1.0, False),
    ("s4", 2, "held", 1.0, False),
    ("s5", 2, "served", -1.0, False),
    ("s6", 3, "held", None, False),
    # learn here (day 3)
    ("s7", 4, "served", 1.0, True),
    ("s8", 4, "held", 0.5, False),
]
LEARN_AFTER = "s6"
PROMPTS = {
    "s1": "the staging deploy of ledger-api fails, find out why",
    "s2": "the staging deploy of ledger-api failed again overnight, find out why",
    "s3": "the staging deploy of ledger-api fails after the last merge, find out why",
    "s4": "the staging deploy of ledger-api fails at the image step, find out why",
    "s5": "the staging deploy of ledger-api fails with a timeout, find out why",
    "s6": "the staging deploy of ledger-api fails since Monday, find out why",
    "s7": "the staging deploy of ledger-api fails this morning, find out why",
    "s8": "the staging deploy of ledger-api fails once more, find out why",
}
FAIL_COMMAND = "cat deploy/last-failure.log"

M64 = (1 << 64) - 1


def held_out(session_id, share):
    """tiers/src/session.rs `held_out`: FNV-1a 64 over the id's bytes, a final mix, then
    `h as f64 / u64::MAX as f64 < share`."""
    if share <= 0:
        return False
    h = 0xCBF29CE484222325
    for b in session_id.encode():
        h ^= b
        h = (h * 0x100000001B3) & M64
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & M64
    h ^= h >> 33
    return float(h) / float(M64) < share


def amber_id(claude_session):
    return f"k-claude-code-{claude_session}"


def pick_uuid(name, draw):
    """A deterministic version-4 UUID whose Amber session draws `draw` at SHARE."""
    for i in range(1000):
        raw = hashlib.sha256(f"amber-loop-{name}-{i}".encode()).digest()[:16]
        u = str(uuid.UUID(bytes=raw, version=4))
        if held_out(amber_id(u), SHARE) == (draw == "held"):
            return u
    raise AssertionError(f"no uuid draws {draw} for {name}")


def scene(project, name, fail):
    bash = lambda cmd, what: {"tools": [{"name": "Bash", "input": {"command": cmd, "description": what}}]}  # noqa: E731
    steps = [
        {"text": "Looking at the deploy first.", **bash("git log --oneline -3 && ls deploy", "Recent commits and deploy files")},
    ]
    if fail:
        # Right after the opening prompt (and so after any advice): a failed tool.
        steps.append(bash(FAIL_COMMAND, "The last failure's log"))
    steps += [
        {"tools": [{"name": "Read", "input": {"file_path": os.path.join(project, "deploy", "staging.toml")}}]},
        bash("grep -n image deploy/staging.toml", "The image the deploy uses"),
        {"text": "The staging deploy pins an image tag that the registry no longer has; bump it in deploy/staging.toml."},
    ]
    takeaway = {
        "content": f"ledger-api staging deploys fail when deploy/staging.toml pins a removed image tag (seen in {name}).",
        "type": "fact",
    }
    return {"match": f"[loop-{name}]", "steps": steps, "takeaway": takeaway}


class Loop:
    """Everything one run of the scenario left behind."""


def read_text(path):
    return path.read_text(errors="replace") if path.exists() else ""


@pytest.fixture(scope="module")
def loop():
    for path, what in ((AMBER, "AMBER_BIN"), (AMBERD, "AMBERD")):
        if not os.path.exists(path):
            pytest.fail(f"{path} not found (set {what})")
    if not CLAUDE.exists():
        pytest.fail(f"{CLAUDE} is absent: run `npm ci --prefix tests/claude_code --no-audit --no-fund`")
    real_home = os.environ.get("HOME", "/root")
    amber_home = os.environ.get("AMBER_HOME") or os.path.join(
        os.environ.get("XDG_DATA_HOME") or os.path.join(real_home, ".local", "share"), "amber"
    )
    tmp = Path(tempfile.mkdtemp(prefix="amber-loop-"))
    w = Loop()
    w.tmp = tmp
    home = tmp / "home"
    project = tmp / "work" / PROJECT
    capture = tmp / "hooks"
    for d in (home / ".claude", project / "deploy", capture):
        d.mkdir(parents=True)
    chat = FakeOpenAI(str(tmp / "openai.jsonl")).start()
    w.chat = chat
    config = tmp / "config.toml"
    config.write_text(
        f'[learn]\nkind = "openai"\nurl = "{chat.url}"\nmodel = "m"\ninterval_s = 0\n\n[holdout]\nshare = {SHARE}\n'
    )
    base = {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "AMBER_HOME": amber_home,
        "AMBER_DATA_DIR": str(tmp / "data"),
        "AMBER_SOCKET": str(tmp / "amber.sock"),
        "AMBER_STATE_DIR": str(tmp / "state"),
        "AMBER_CONFIG": str(config),
        "AMBERD": AMBERD,
        "AMBER_LOG": "info",
        "AMBER_CLOCK_OFFSET_S": "0",
    }
    hooks_log = tmp / "state" / "logs" / "hooks.log"
    fake = None
    t_start = time.time()
    try:
        def env_at(day, run_name=None):
            e = dict(base, AMBER_CLOCK_OFFSET_S=str(day * DAY))
            e["AMBER_CC_HOOKCAP"] = str(capture / (run_name or "setup"))
            return e

        (project / "deploy" / "staging.toml").write_text('[deploy]\nenv = "staging"\nimage = "ledger-api:2026.11.3"\nreplicas = 2\n')
        (project / "README.md").write_text("# ledger-api\n\nThe ledger service.\n")
        run(["git", "init", "-q", str(project)], base)
        run(["git", "-C", str(project), "add", "-A"], base)
        run(["git", "-C", str(project), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"], base)

        e0 = env_at(0)
        w.scope = amber_json(e0, "scope", "here", cwd=project)["scope"]
        assert w.scope.startswith("project/"), w.scope

        fake = FakeAnthropic(str(tmp / "requests.jsonl")).start()
        w.log_path = tmp / "requests.jsonl"
        cc_env, _ = install(tmp, home, project, env_at, fake)

        fake.script = [scene(str(project), name, fail) for name, _, _, _, fail in PLAN]
        w.sessions = []
        day = 0
        for name, d, draw, reward, fail in PLAN:
            if d != day:
                # A gap of days: the daemon stops; the hooks start it again on the new clock.
                amber(env_at(day), "daemon", "stop")
                day = d
            env = cc_env(day, name)
            sid = pick_uuid(name, draw)
            prompt = f"[loop-{name}] {PROMPTS[name]}"
            runs_before = {r["id"] for r in amber_json(env, "runs", "list", "--scope", w.scope, "--limit", "1000")}
            log_lo = len(read_text(hooks_log))
            req_lo = len(read_log(str(w.log_path)))
            route_lo = chat.count("route")
            t0 = time.time()
            p = run([str(CLAUDE), "-p", prompt, "--output-format", "json", "--session-id", sid], env, cwd=project, check=False)
            wall = time.time() - t0
            try:
                result = json.loads(p.stdout)
            except ValueError:
                result = {"_stdout": p.stdout[-2000:]}
            rec = {
                "name": name,
                "day": d,
                "draw": draw,
                "reward": reward,
                "fail": fail,
                "prompt": prompt,
                "uuid": sid,
                "rc": p.returncode,
                "stderr": p.stderr[-3000:],
                "result": result,
                "wall_s": round(wall, 2),
                "requests": read_log(str(w.log_path))[req_lo:],
                "hooks": hook_captures(capture / name),
                "hooks_log": read_text(hooks_log)[log_lo:],
                "routes": chat.count("route") - route_lo,
            }
            after = amber_json(env, "runs", "list", "--scope", w.scope, "--limit", "1000")
            rec["new_runs"] = [r for r in after if r["id"] not in runs_before]
            if reward is not None:
                rec["rewarded"] = amber_json(env, "runs", "reward", "last", str(reward), "--scope", w.scope, "--reason", f"{name} as judged by the person", cwd=project)
            r = amber(env, "--json", "session", "show", amber_id(sid), check=False)
            rec["amber_session"] = json.loads(r.stdout) if r.returncode == 0 else {"_error": r.stderr.strip()}
            w.sessions.append(rec)
            if name == LEARN_AFTER:
                kinds_lo = len(chat.kinds())
                r = amber(env, "--json", "advice", "learn", w.scope, cwd=project, check=False)
                w.learn_rc = r.returncode
                w.learn = json.loads(r.stdout) if r.returncode == 0 and r.stdout.strip() else {"_stderr": r.stderr}
                w.learn_kinds = chat.kinds()[kinds_lo:]
        w.env = env_at(day)
        w.runs = amber_json(w.env, "runs", "list", "--scope", w.scope, "--limit", "1000")
        w.lift = amber_json(w.env, "lift", "--scope", w.scope)
        w.lift_no_judged = amber_json(w.env, "lift", "--scope", w.scope, "--no-judged")
        w.requests = read_log(str(w.log_path))
        w.hooks_log = read_text(hooks_log)
        w.wall_s = round(time.time() - t_start, 1)
        print_table(w)
        yield w
    finally:
        if fake is not None:
            fake.stop()
        subprocess.run([AMBER, "daemon", "stop"], env=base, capture_output=True, timeout=90, check=False)
        chat.stop()
        if os.environ.get("AMBER_CC_KEEP"):
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


# --- reading what happened --------------------------------------------------------------


def by_name(w, name):
    return next(s for s in w.sessions if s["name"] == name)


def session_record(rec):
    s = rec["amber_session"]
    return s.get("session") if isinstance(s.get("session"), dict) else s


def hook_added(rec, event, head):
    """The texts hooks of `event` added in this session that start with (or hold) `head`."""
    return [added_text(c) for c in rec["hooks"] if c["event"] == event and head in added_text(c)]


def advice_text(rec):
    """The advice part of the UserPromptSubmit additionalContext (from its header on)."""
    for t in hook_added(rec, "UserPromptSubmit", ADVICE_HEAD):
        return t[t.index(ADVICE_HEAD):]
    return ""


def body_text(q):
    return "\n".join(request_strings(q["body"] or {}))


def newest_stop_turn(q):
    """The text of a Stop hook as Claude Code handed it over (`Stop hook feedback:` or
    `Stop hook additional context:`, reminders and all) when that is the newest user turn
    of the request, else ""."""
    msgs = (q["body"] or {}).get("messages") or []
    for m in reversed(msgs):
        if m.get("role") == "user" and (stop_text(m) or prompt_text(m)):
            return stop_text(m) or ""
    return ""


def print_table(w):
    print(f"\nClaude Code {CLAUDE_VERSION}: Amber's learning loop ({w.wall_s} s); scope {w.scope}")
    print("advice/stuck/done: characters of Amber's advice at the opening prompt / the Pitfalls at a failed tool / the Steps at the stop")
    print(f"{'session':8} {'day':>3} {'draw':6} {'reward':>6} {'advice':>6} {'stuck':>5} {'done':>5} {'routes':>6} {'UPS ms':>7} {'max hook ms':>11} {'wall_s':>6}")
    for s in w.sessions:
        ups = [c["ms"] for c in s["hooks"] if c["event"] == "UserPromptSubmit"]
        stuck = sum(len(t) for t in hook_added(s, "PostToolUseFailure", STUCK_HEAD))
        done = sum(len(t) for t in hook_added(s, "Stop", DONE_HEAD))
        reward = "-" if s["reward"] is None else f"{s['reward']:+.1f}"
        print(
            f"{s['name']:8} {s['day']:>3} {s['draw']:6} {reward:>6} {len(advice_text(s)):>6} {stuck:>5} {done:>5} {s['routes']:>6} "
            f"{(max(ups) if ups else 0):>7.0f} {max((c['ms'] for c in s['hooks']), default=0):>11.0f} {s['wall_s']:>6}"
        )
    lf = w.lift
    print(
        f"lift: sessions {lf.get('sessions')} rewarded {lf.get('rewarded')} by_run {lf.get('by_run')} judged {lf.get('judged')} "
        f"served n={lf.get('served', {}).get('n')} withheld n={lf.get('withheld', {}).get('n')} verdict {lf.get('verdict')}"
    )
    failed = [x for s in w.sessions for r in s["new_runs"] for x in r["trace"].splitlines() if " → failed: " in x]
    print("failed tool uses as traced:", failed)
    print("model calls of [learn]:", {k: w.chat.count(k) for k in ("sort", "tidy", "write", "route", "judge", "other")})


# --- the checks -------------------------------------------------------------------------


def test_the_sessions_ran_as_scripted(loop):
    """The harness: every session ended well under its chosen id, and its tools ran
    (the scripted failing Bash failed, nothing else did)."""
    for s in loop.sessions:
        assert s["rc"] == 0, f"{s['name']}: claude exited {s['rc']}: {s['stderr']}"
        assert s["result"].get("is_error") is False, f"{s['name']}: {s['result']}"
        assert not s["result"].get("permission_denials"), f"{s['name']}: {s['result'].get('permission_denials')}"
        assert s["result"].get("session_id") == s["uuid"], f"{s['name']}: {s['result'].get('session_id')} != {s['uuid']}"
        issued, results = issued_tools(s), tool_results(s)
        names = [n for n, _ in issued.values()]
        assert names.count("Bash") >= 2 and "Read" in names, f"{s['name']}: {names}"
        for i, (n, inp) in issued.items():
            assert i in results, f"{s['name']}: no result for {n}"
            failed = results[i][1]
            expected = n == "Bash" and inp.get("command") == FAIL_COMMAND
            assert failed == expected, f"{s['name']}: {n} {inp} failed={failed}: {results[i][0][:300]}"


def test_holdout_draws_match_amber(loop):
    """The Python replica of `held_out` agrees with Amber on every session."""
    for s in loop.sessions:
        assert session_record(s).get("id") == amber_id(s["uuid"]), f"{s['name']}: {s['amber_session']}"
    # `withheld` is left out of the record when false.
    got = {s["name"]: session_record(s).get("withheld", False) for s in loop.sessions}
    want = {s["name"]: s["draw"] == "held" for s in loop.sessions}
    assert got == want, f"amber session show's withheld {got}, the plan {want}"


def test_every_session_is_recorded_as_a_run(loop):
    problems = []
    for s in loop.sessions:
        runs = s["new_runs"]
        if len(runs) != 1:
            problems.append(f"{s['name']}: {len(runs)} new runs: {runs}")
            continue
        r = runs[0]
        if r["task"] != s["prompt"]:
            problems.append(f"{s['name']}: task {r['task']!r}, not the opening prompt")
        if r["scope"] != loop.scope or r["agent"] != "claude-code":
            problems.append(f"{s['name']}: scope {r['scope']} agent {r['agent']}")
        lines = r["trace"].splitlines()
        if sum(1 for x in lines if x.startswith("Bash: ")) < 2 or not any(x.startswith("Read: ") for x in lines):
            problems.append(f"{s['name']}: trace {r['trace']!r}")
        if any("mcp__amber" in x for x in lines):
            problems.append(f"{s['name']}: Amber's own tools in the trace: {r['trace']!r}")
    assert not problems, "\n".join(problems)


def test_a_failed_tool_is_marked_in_the_trace(loop):
    for s in loop.sessions:
        if not s["new_runs"]:
            continue
        lines = s["new_runs"][0]["trace"].splitlines()
        failed = [x for x in lines if " → failed" in x]
        if s["fail"]:
            # Claude Code's error starts `Exit code 1`: the trace keeps the code and the line
            # that says what went wrong.
            want = f"Bash: {FAIL_COMMAND} → failed (exit 1): cat: "
            assert [x for x in failed if x.startswith(want) and "No such file" in x], f"{s['name']}: {lines}"
        else:
            assert not failed, f"{s['name']}: {lines}"


def test_hooks_log_names_each_run(loop):
    missing = []
    for s in loop.sessions:
        run_id = s["new_runs"][0]["id"] if s["new_runs"] else "?"
        want = f"session {amber_id(s['uuid'])} is run {run_id} in {loop.scope}; reward it: amber runs reward {run_id}"
        if want not in s["hooks_log"]:
            missing.append(f"{s['name']}: {want!r}\n  hooks.log of the session:\n{s['hooks_log'][-1500:]}")
    assert not missing, "\n".join(missing)


def test_a_person_rewards_the_newest_run(loop):
    problems = []
    rewards = {r["id"]: r.get("reward") for r in loop.runs}
    for s in loop.sessions:
        run_id = s["new_runs"][0]["id"] if s["new_runs"] else None
        got = rewards.get(run_id)
        if s["reward"] is None:
            if got is not None:
                problems.append(f"{s['name']}: not rewarded, yet reward {got}")
        elif got is None or abs(got - s["reward"]) > 1e-6:
            problems.append(f"{s['name']}: reward {got}, given {s['reward']} ({s.get('rewarded')})")
    assert not problems, "\n".join(problems)


def test_advice_is_learned_through_the_model(loop):
    assert loop.learn_rc == 0, loop.learn
    written = loop.learn.get("written") or []
    assert written, f"no note written: {json.dumps(loop.learn)[:1500]}"
    assert written[0].get("situation") == SITUATION, written
    assert "sort" in loop.learn_kinds and "write" in loop.learn_kinds, loop.learn_kinds
    assert loop.learn.get("rewarded") == 5, f"5 rewarded runs to learn from: {json.dumps(loop.learn)[:800]}"


def test_advice_is_served_at_the_next_opening_prompt(loop):
    s7 = by_name(loop, "s7")
    text = advice_text(s7)
    assert text, f"s7 was given no advice; hooks.log:\n{s7['hooks_log'][-2000:]}"
    assert text.startswith(f"{ADVICE_HEAD}, learned from 5 rewarded runs in {loop.scope} (situation {SITUATION}, version 1)"), text[:300]
    for line in NOTE.splitlines():
        assert f"│ {line}" in text, f"note line {line!r} is not quoted in:\n{text}"
    first = main_requests(s7)[0]
    ctx = [x for x in request_strings(first["body"]) if "UserPromptSubmit hook additional context" in x]
    assert any(ADVICE_HEAD in x for x in ctx), "the advice is not in the model's first request as UserPromptSubmit context"
    assert s7["routes"] == 1, f"route calls during s7: {s7['routes']}"
    assert s7["new_runs"] and s7["new_runs"][0].get("advice"), f"s7's run names no advice given: {s7['new_runs']}"


def test_held_out_session_gets_no_advice(loop):
    s8 = by_name(loop, "s8")
    assert session_record(s8).get("withheld") is True, s8["amber_session"]
    for q in s8["requests"]:
        assert ADVICE_HEAD not in body_text(q), f"held-out s8's request {q['seq']} holds advice"
    assert not any(ADVICE_HEAD in added_text(c) for c in s8["hooks"])
    assert s8["routes"] == 0, f"a route call for the held-out session: {s8['routes']}"


def test_one_route_call_per_served_opening_prompt(loop):
    per = {s["name"]: s["routes"] for s in loop.sessions}
    want = {s["name"]: int(s["name"] == "s7") for s in loop.sessions}  # notes exist only from s7 on
    assert per == want, f"route calls per session {per}, expected {want}"
    assert loop.chat.count("route") == 1


def test_pitfalls_are_reread_once_at_the_failed_tool(loop):
    s7 = by_name(loop, "s7")
    given = hook_added(s7, "PostToolUseFailure", STUCK_HEAD)
    assert len(given) == 1, f"PostToolUseFailure added the Pitfalls {len(given)} times; hooks.log:\n{s7['hooks_log'][-2000:]}"
    assert f"│ {PITFALLS}" in given[0], given[0]
    seen = [q for q in main_requests(s7) if STUCK_HEAD in body_text(q)]
    assert seen, "the Pitfalls never reached the model"
    last = body_text(main_requests(s7)[-1])
    assert last.count(STUCK_HEAD) == 1, f"the Pitfalls appear {last.count(STUCK_HEAD)} times in the last request"


def test_steps_are_given_once_at_the_stop(loop):
    s7 = by_name(loop, "s7")
    given = hook_added(s7, "Stop", DONE_HEAD)
    assert len(given) == 1, f"Stop added the Steps {len(given)} times; hooks.log:\n{s7['hooks_log'][-2000:]}"
    for line in STEPS.splitlines():
        assert f"│ {line}" in given[0], given[0]
    turns = [q for q in main_requests(s7) if DONE_HEAD in newest_stop_turn(q)]
    assert turns, "the Steps never reached the model in a Stop hook's turn"
    last = body_text(main_requests(s7)[-1])
    assert last.count(DONE_HEAD) == 1, f"the Steps appear {last.count(DONE_HEAD)} times in the last request"


def test_no_moment_text_without_advice(loop):
    """Sessions never given advice (before learning, or held out) get no re-reads."""
    bad = []
    for s in loop.sessions:
        if s["name"] == "s7":
            continue
        for c in s["hooks"]:
            t = added_text(c)
            if STUCK_HEAD in t or DONE_HEAD in t or ADVICE_HEAD in t:
                bad.append(f"{s['name']} {c['event']}: {t[:120]}")
    assert not bad, "\n".join(bad)


def test_lift_counts_the_rewarded_sessions(loop):
    rewarded = [s for s in loop.sessions if s["reward"] is not None]
    served = sum(1 for s in rewarded if s["draw"] == "served")
    withheld = sum(1 for s in rewarded if s["draw"] == "held")
    assert served >= 2 and withheld >= 2
    lf = loop.lift
    got = (lf["rewarded"], lf["by_run"], lf["judged"], lf["served"]["n"], lf["withheld"]["n"], lf["verdict"])
    assert got == (len(rewarded), len(rewarded), 0, served, withheld, "not_enough_data"), json.dumps(lf)
    mean = sum(s["reward"] for s in rewarded if s["draw"] == "served") / served
    assert abs(lf["served"]["mean"] - mean) < 1e-6, json.dumps(lf)
    assert lf["sessions"] >= len(loop.sessions), json.dumps(lf)


def test_lift_without_judged_is_the_same_here(loop):
    keys = ("sessions", "rewarded", "by_run", "judged", "served", "withheld", "verdict")
    a = {k: loop.lift.get(k) for k in keys}
    b = {k: loop.lift_no_judged.get(k) for k in keys}
    assert a == b, f"lift {a}\nlift --no-judged {b}"


def test_runs_list_holds_every_session(loop):
    tasks = [r["task"] for r in loop.runs]
    assert all(r["scope"] == loop.scope for r in loop.runs), [r["scope"] for r in loop.runs]
    assert len(loop.runs) == len(loop.sessions), f"{len(loop.runs)} runs for {len(loop.sessions)} sessions: {tasks}"
    assert sorted(tasks) == sorted(s["prompt"] for s in loop.sessions), tasks
    assert all("Bash: " in r["trace"] for r in loop.runs), [r["trace"] for r in loop.runs]

"""The Neovim plugin (clients/nvim) in a real Neovim: Debian's `nvim` (0.7.2 in CI),
headless, with no config of its own (`-u NONE -i NONE`) and the plugin on its
runtimepath, driven by tests/nvim/driver.lua (which runs each command as typed, waits
for it, and writes buffers, the quickfix list and notifications as JSON).

Against a private store (AMBER_DATA_DIR, AMBER_SOCKET, AMBER_STATE_DIR, AMBER_CONFIG in a
temporary folder) seeded through the person's door (`amber` from inside a git project):
a fact of the project, a standing preference of the person (`--scope user --type
lifefact`), an ingested Markdown runbook whose Rollback section starts at a known line,
and a memory addressed to the plugin's agent name (`--to nvim`). It checks that

- :AmberRecall finds the fact with its evidence line (who it came from, the fused score
  and its ranks), as `amber recall` prints it, in a buffer and the quickfix list;
- the document hit's quickfix entry names the runbook and its section's first line, and
  <CR> on the hit opens the runbook there;
- :'<,'>AmberRemember files exactly the selected lines (and a characterwise selection
  exactly its characters), as the person's (`amber --json get`), and says the id back;
- :AmberBrief shows the project's fact and the person's preference;
- :AmberInbox lists the memory addressed `--to nvim`, <CR> opens it whole, and it stays
  listed after the daemon handed it over; the session opened for both ends when Neovim
  exits;
- with a bad `amber` path, or a store whose daemon cannot start, every command says so
  in one ERROR notification, with no Lua error.

A missing `nvim` skips the test, and fails it under AMBER_TESTS_STRICT=1 (as root in
CI, scripts/test.sh installs Debian's neovim). Must run outside an agent runtime (the
seeds are the person's). About 5 s. AMBER_NVIM_KEEP=1 keeps the temporary folder (the
store, and main.json, bad.json, dead.json: what Neovim showed).

Run: AMBER_BIN=target/release/amber AMBERD=target/release/amberd \\
         target/py/bin/python -m pytest -p no:amplifier_module tests/nvim -q
"""

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PLUGIN = ROOT / "clients" / "nvim"
DRIVER = HERE / "driver.lua"
AMBER = os.environ.get("AMBER_BIN") or str(ROOT / "target" / "release" / "amber")
AMBERD = os.environ.get("AMBERD") or str(ROOT / "target" / "release" / "amberd")
NVIM = os.environ.get("AMBER_NVIM") or shutil.which("nvim")
STRICT = os.environ.get("AMBER_TESTS_STRICT") == "1"
ERROR = 4  # vim.log.levels.ERROR

FACT = "The CI cache for ledger-api lives in the S3 bucket ci-cache-7731, keyed by the Cargo.lock hash"
FACT_QUERY = "where does the CI cache live"
PREF = "I prefer answers that show the command first, then one line of explanation"
MAIL = "Please review the rollback script before Friday's release"
DOC_QUERY = "how do I roll back the ledger service"
RUNBOOK = """# Ledger runbook

How the ledger service is run.

## Deploy

Deploys go through the blue-green switch in ops/switch.sh with the VPN on.
Check the dashboard before switching.

## Rollback

To roll back the ledger service, run ops/rollback.sh with the previous release tag.
The rollback takes about two minutes; watch the error rate while it runs.
"""
NOTES = [
    "Notes for the week",
    "",
    "Retries of the payment webhook back off exponentially, capped at 10 minutes.",
    "Never retry a webhook that answered 410 Gone.",
    "",
    "Deploy note: TAG-42 must be pushed before Friday.",
]


def _need_nvim():
    if NVIM and os.path.exists(NVIM):
        return
    msg = "Neovim is not installed (nvim): apt-get install -y neovim"
    if STRICT:
        pytest.fail(msg)
    pytest.skip(msg)


def _env(tmp, name):
    e = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "AMBER_DATA_DIR": str(tmp / f"{name}-data"),
        "AMBER_SOCKET": str(tmp / f"{name}.sock"),
        "AMBER_STATE_DIR": str(tmp / f"{name}-state"),
        "AMBER_CONFIG": str(tmp / "config.toml"),  # absent: defaults
        "AMBERD": AMBERD,
        "AMBER_LOG": "warn",
        # Neovim's own files (stdpath) stay in the temporary folder.
        "XDG_CONFIG_HOME": str(tmp / "xdg-config"),
        "XDG_DATA_HOME": str(tmp / "xdg-data"),
        "XDG_CACHE_HOME": str(tmp / "xdg-cache"),
    }
    if os.environ.get("HOME"):
        e["HOME"] = os.environ["HOME"]
    # The model and runtime (scripts/setup.sh) stay where the real environment has them.
    e["AMBER_HOME"] = os.environ.get("AMBER_HOME") or os.path.join(
        os.environ.get("XDG_DATA_HOME") or os.path.join(os.environ.get("HOME", "/root"), ".local", "share"), "amber"
    )
    return e


def amber(env, *args, cwd=None, check=True):
    r = subprocess.run([AMBER, "--json", *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=60)
    if check:
        assert r.returncode == 0, f"amber {args}: {r.stderr}"
        return json.loads(r.stdout)
    return r


def drive(env, cwd, out, mode, **params):
    e = dict(env, AMBER_NVIM_OUT=str(out), AMBER_NVIM_MODE=mode)
    e.update({f"AMBER_NVIM_{k.upper()}": str(v) for k, v in params.items()})
    cmd = [NVIM, "--headless", "-u", "NONE", "-i", "NONE", "--cmd", f"set rtp+={PLUGIN}", "-c", f"luafile {DRIVER}"]
    r = subprocess.run(cmd, env=e, cwd=cwd, capture_output=True, text=True, timeout=50, stdin=subprocess.DEVNULL)
    assert out.exists(), f"nvim wrote nothing (exit {r.returncode})\nstdout: {r.stdout[-2000:]}\nstderr: {r.stderr[-2000:]}"
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def world():
    _need_nvim()
    for path, what in ((AMBER, "AMBER_BIN"), (AMBERD, "AMBERD")):
        if not os.path.exists(path):
            pytest.fail(f"{path} not found (set {what})")
    tmp = Path(tempfile.mkdtemp(prefix="amber-nvim-")).resolve()  # short: the socket path
    env = _env(tmp, "main")
    w = type("World", (), {})()
    w.tmp, w.env = tmp, env
    try:
        project = tmp / "ledger-api"
        (project / "docs").mkdir(parents=True)
        (project / "docs" / "runbook.md").write_text(RUNBOOK)
        (project / "notes.md").write_text("\n".join(NOTES) + "\n")
        subprocess.run(["git", "init", "-q", str(project)], check=True, env=env)
        w.project = project
        w.runbook = project / "docs" / "runbook.md"
        w.rollback_line = RUNBOOK.splitlines().index("## Rollback") + 1
        w.rollback_text_line = next(
            i for i, l in enumerate(RUNBOOK.splitlines(), 1) if l.startswith("To roll back")
        )

        # The seeds, from inside the project, as the person.
        w.fact = amber(env, "remember", FACT, cwd=project)["id"]
        w.pref = amber(env, "remember", "--scope", "user", "--type", "lifefact", PREF, cwd=project)["id"]
        amber(env, "ingest", "docs", cwd=project)
        w.mail = amber(env, "remember", "--to", "nvim", MAIL, cwd=project)["id"]
        w.scope = amber(env, "scope", "here", cwd=project)["scope"]
        hits = amber(env, "recall", "--mode", "bm25", "-k", "10", "rollback previous release tag", cwd=project)["hits"]
        docs = [h for h in hits if h.get("place") and "rollback.sh" in h["memory"]["content"]]
        assert docs, f"the runbook's Rollback section was not ingested: {hits}"
        w.doc = docs[0]["memory"]["id"]

        w.out = drive(
            env, project, tmp / "main.json", "main",
            amber=AMBER, inbox=tmp / "inbox.json", fact_query=FACT_QUERY, doc_query=DOC_QUERY,
            doc_id=w.doc, mail_id=w.mail, notes=project / "notes.md",
        )
        # With a path that is not amber, and with a store whose daemon cannot start.
        w.bad_path = drive(env, project, tmp / "bad.json", "errors", amber=tmp / "no" / "amber", inbox=tmp / "i2.json")
        dead = dict(_env(tmp, "dead"), AMBERD=str(tmp / "no" / "amberd"))
        w.no_daemon = drive(dead, project, tmp / "dead.json", "errors", amber=AMBER, inbox=tmp / "i3.json")
        yield w
    finally:
        subprocess.run([AMBER, "daemon", "stop"], env=env, capture_output=True, timeout=90, check=False)
        if os.environ.get("AMBER_NVIM_KEEP"):
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def step(w, name):
    s = w.out["steps"].get(name)
    assert s is not None, f"step {name} did not run: {w.out['lua_errors']}"
    assert s["waited"], f"step {name} did not finish"
    return s


def errors(notes):
    return [n["msg"] for n in notes if n["level"] >= ERROR]


def test_the_driver_ran_without_lua_errors(world):
    assert world.out["commands"], "the plugin's commands were not defined"
    assert world.out["lua_errors"] == [], world.out["lua_errors"]
    assert "E5108" not in world.out["messages"] and "stack traceback" not in world.out["messages"]


def test_recall_finds_the_fact_with_its_evidence(world):
    s = step(world, "recall_fact")
    assert errors(s["notes"]) == []
    assert s["bufname"] == "amber://recall"
    text = "\n".join(s["buffer"])
    head = next((l for l in s["buffer"] if world.fact in l), None)
    assert head, text
    # The evidence line, as `amber recall` prints it: id, scope, type, who, why.
    assert f"{world.fact} [{world.scope}] fact from person (fused " in head, head
    assert "bm25 #" in head and "vector #" in head and "prior " in head, head
    assert FACT in text
    # The same line in the quickfix list.
    assert s["qf_title"] == f"Amber recall: {FACT_QUERY}"
    assert any(world.fact in q["text"] and "from person" in q["text"] for q in s["qf"]), s["qf"]
    # The Lua API gives the same first hit, with its label.
    api = world.out["api_recall"]
    assert api["ok"], api
    assert api["first"]["id"] == world.fact and api["first"]["from"] == "person"


def test_document_hit_jumps_to_its_file_and_line(world):
    s = step(world, "recall_doc")
    entries = [q for q in s["qf"] if world.doc in q["text"]]
    assert len(entries) == 1, s["qf"]
    q = entries[0]
    assert q["filename"] == str(world.runbook), q
    assert q["lnum"] == world.rollback_line and q["valid"] == 1, q
    assert q["end_lnum"] >= world.rollback_text_line, q
    assert f"at docs/runbook.md:{world.rollback_line}-" in "\n".join(s["buffer"])
    # <CR> on the hit in the recall buffer opens the runbook at that line.
    assert s["hit_line"], s["buffer"]
    j = step(world, "jump")
    assert j["bufname"] == str(world.runbook), j
    assert j["line"] == world.rollback_line, j


def test_remember_files_exactly_the_selection(world):
    s = step(world, "remember_lines")
    assert errors(s["notes"]) == [], s["notes"]
    mid = s["id"]
    assert mid and any(mid in n["msg"] for n in s["notes"]), s["notes"]
    m = amber(world.env, "get", mid)
    assert m["content"] == "\n".join(NOTES[2:4])
    assert m["type"] == "pattern" and m["scope"] == world.scope
    assert m["metadata"]["trust"] == "person", m["metadata"]  # the person's door
    assert m["source"] == f"{world.project / 'notes.md'}:3-4"
    hits = amber(world.env, "recall", "webhook retries back off", cwd=world.project)["hits"]
    assert mid in [h["memory"]["id"] for h in hits]

    c = step(world, "remember_chars")
    assert errors(c["notes"]) == [], c["notes"]
    assert c["id"] and c["id"] != mid
    assert amber(world.env, "get", c["id"])["content"] == "TAG-42 must be pushed"

    bad = step(world, "remember_bad_arg")
    assert any("unknown argument" in m for m in errors(bad["notes"])), bad["notes"]


def test_brief_shows_the_project_fact_and_the_persons_preference(world):
    s = step(world, "brief")
    assert errors(s["notes"]) == [], s["notes"]
    assert s["bufname"] == "amber://briefing"
    text = "\n".join(s["buffer"])
    assert f"Amber briefing for {world.scope}" in text
    assert f"- {world.fact[:8]} · fact · {world.scope} · from person · The CI cache" in text, text
    assert f"- {world.pref[:8]} · lifefact · user · from person · {PREF}" in text, text


def test_inbox_lists_what_is_addressed_to_nvim(world):
    s = step(world, "inbox")
    assert errors(s["notes"]) == [], s["notes"]
    assert s["bufname"] == "amber://inbox"
    assert s["item_line"], s["buffer"]
    line = s["buffer"][s["item_line"] - 1]
    assert f"{world.mail[:8]} · from a person · to nvim · {MAIL}" in line, line
    o = step(world, "inbox_open")
    assert o["bufname"] == f"amber://memory/{world.mail[:8]}", o
    assert MAIL in o["buffer"] and f"id:      {world.mail}" in o["buffer"], o["buffer"]
    # Handed over once by the daemon, still listed by the panel.
    again = step(world, "inbox_again")
    assert any(world.mail[:8] in l for l in again["buffer"]), again["buffer"]


def test_the_session_ends_when_neovim_exits(world):
    sid = world.out["session"]
    assert sid and sid.startswith("k-nvim-"), sid
    shown = amber(world.env, "session", "show", sid)
    assert shown["live"] is False and shown["session"]["end_reason"] == "ended", shown["session"].get("end_reason")
    assert shown["session"]["agent"] == "nvim"


@pytest.mark.parametrize("case", ["bad_path", "no_daemon"])
def test_errors_are_one_notification_never_a_traceback(world, case):
    out = getattr(world, case)
    assert out["lua_errors"] == [], out["lua_errors"]
    assert "stack traceback" not in out["messages"] and "E5108" not in out["messages"], out["messages"]
    want = "not found or is not executable" if case == "bad_path" else "amberd"
    for name, s in out["steps"].items():
        assert s["waited"], name
        errs = errors(s["notes"])
        assert len(errs) == 1 and want in errs[0], (name, s["notes"])
        assert all("traceback" not in n["msg"] and ".lua:" not in n["msg"] for n in s["notes"]), s["notes"]
    assert out["api_recall"]["ok"] is False and want in out["api_recall"]["err"]

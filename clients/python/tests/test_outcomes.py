"""Outcomes through amber_client against the real daemon: ``outcome``, the log,
supersession through ``remember``, the archive, ``unarchive`` and a session manifest."""

from __future__ import annotations

import pytest

from amber_client import InvalidParams, NotFound, Superseded

SCOPE = "pyoutcomes"


def ids(result: dict) -> list[str]:
    return [h["memory"]["id"] for h in result["hits"]]


def test_outcomes_supersession_archive_and_manifest(daemon):
    with daemon.client() as c:
        old = c.remember("the docs site builds with mkdocs build --strict", SCOPE)["id"]
        m = c.outcome(old[:8], "failure", agent="py", note="strict mode was dropped")["memory"]
        assert abs(m["weight"] - 0.9) < 1e-6  # an agent never served it: half a failure
        log = c.outcomes(old)
        assert [(r["kind"], r["result"], r["agent"]) for r in log["reports"]] == [("outcome", "failure", "py")]
        with pytest.raises(InvalidParams):
            c.outcome(old, "great")
        with pytest.raises(NotFound):
            c.outcome("ffffffff", "success")

        new = c.remember(
            "the docs site builds with mkdocs build (no --strict)", SCOPE, type="invalidation", supersedes=[old]
        )["id"]
        hits = c.recall("how does the docs site build?", SCOPE)
        assert ids(hits) == [new]
        assert hits["hits"][0]["evidence"]["standing"]["weight"] == 1.0
        assert old in ids(c.recall("how does the docs site build?", SCOPE, archived=True))
        assert [m["id"] for m in c.archived(SCOPE)["memories"]] == [old]
        with pytest.raises(Superseded):
            c.unarchive(old)

        s = c.session_start("py-test", scope=SCOPE, prompt="docs site build")
        end = c.session_end(s["session_id"], manifest=[{"memory_id": new, "used": True, "result": "success"}])
        assert end["manifest"]["applied"][0]["id"] == new
        assert end["manifest"]["applied"][0]["weight"] == 1.0
        assert c.outcomes(new)["reports"][0]["kind"] == "used"
        audit = c.audit()
        assert audit["unbacked_successes"] == []


def test_addressing_inbox_and_the_loop_guard(daemon):
    scope = "pyagents"
    with daemon.client() as c:
        note = c.remember("codex: run the migrations before the API tests", scope, author="claude-code", to="codex")["id"]
        diary = c.remember("diary: the API tests need a warm cache", scope, author="claude-code", to="self")["id"]
        s = c.session_start("codex", scope=scope, prompt="API tests")
        assert [i["id"] for i in s["inbox"]["items"]] == [note]
        assert diary not in [i["id"] for i in s["briefing"]["items"]]
        assert c.session_start("codex", scope=scope)["inbox"]["items"] == []
        with pytest.raises(InvalidParams):
            c.remember("x", scope, to="not a name")

        q = c.remember("why are the API tests slow?", scope)["id"]
        a = c.remember("the cache is cold", scope, author="a", reply_to=q)["id"]
        b = c.remember("warm it in setup", scope, author="b", reply_to=a)["id"]
        assert [m["id"] for m in c.thread(b)["memories"]] == [q, a, b]
        g = c.guard(b, "c")
        assert (g["decision"], g["rule"], g["thread"]) == ("hold", "hop_limit", q)
        assert c.guard(a, "c")["rule"] == "held"
        assert c.release(q)["released"] is True
        assert c.guard(a, "c")["decision"] == "allow"


def test_a_session_outcome_and_lift(daemon):
    with daemon.client() as c:
        s = c.session_start("py-lift", scope="pylift")
        end = c.session_end(s["session_id"], outcome="success")
        assert end["session"]["reward"] == 1.0 and end["session"]["outcome"] == "success"
        with pytest.raises(InvalidParams):
            c.session_end(c.session_start("py-lift", scope="pylift")["session_id"], outcome=3)
        lift = c.lift("pylift")
        assert lift["rewarded"] == 1 and lift["served"]["n"] == 1
        assert lift["verdict"] == "not_enough_data" and lift["min_per_arm"] == 30


def test_runs_and_rewards(daemon):
    from amber_client import NotPermitted

    with daemon.client() as c:
        mem = c.remember("run the linters with make lint before pushing", "pyruns")["id"]
        r = c.run_record("codex", "push the fix", scope="pyruns", trace="make lint: ok; git push", used=[mem])
        run_id = r["results"][0]["id"]
        b = c.run_record("codex", scope="pyruns", runs=[{"task": "a"}, {"task": "b", "outcome": "done"}])
        assert [x["created"] for x in b["results"]] == [True, True]
        with pytest.raises(InvalidParams):
            c.run_record("codex", scope="pyruns", runs=[{"task": "c"}, {"task": ""}])
        assert len(c.runs("pyruns")["runs"]) == 3
        with pytest.raises(NotPermitted):
            c.run_reward("gemini", run_id, 1.0)
        assert c.run_reward("codex", run_id, -0.5, reason="lint missed a file")["weights_moved"] == 1
        assert abs(c.get(mem)["memory"]["weight"] - 0.9) < 1e-6
        shown = c.run_show(run_id)
        assert shown["run"]["reward"] == -0.5 and shown["rewards"][0]["reason"] == "lint missed a file"


def test_a_stuck_moment_reminds_of_pitfalls(daemon):
    with daemon.client() as c:
        m = c.remember("Deploying the worker: run make deploy.\n\nPitfalls:\n- the queue must be drained first", "pymoment")["id"]
        s = c.session_start("py", scope="pymoment", prompt="deploy the worker")
        assert m in [i["id"] for i in s["briefing"]["items"]]
        r = c.session_event(s["session_id"], "response", "the deploy hangs", moment="stuck", capture=False)
        assert r["decision"]["reason"] == "moment"
        assert [x["id"] for x in r["reminders"]] == [m] and "drained" in r["reminder_text"]

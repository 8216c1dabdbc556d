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
        assert abs(m["weight"] - 0.8) < 1e-6
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

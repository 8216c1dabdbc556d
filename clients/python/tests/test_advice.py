"""Advice through amber_client against the real daemon, which has no model configured:
every method that needs one raises NoModel; the read-only ones answer empty."""

from __future__ import annotations

import pytest

from amber_client import AmberError, NoModel, NotFound

SCOPE = "pyadvice"


def test_advice_without_a_model_raises_no_model(daemon):
    c = daemon.client()
    for call in (
        lambda: c.get_advice("fix the failing migration", moment="stuck"),
        lambda: c.advice_learn(SCOPE, cache=True),
        lambda: c.judge_runs(SCOPE),
    ):
        with pytest.raises(NoModel) as e:
            call()
        assert "advice is learned by a model: none is configured" in str(e.value)
        assert isinstance(e.value, AmberError) and e.value.kind == "no_model"
    assert c.advice_list(SCOPE)["situations"] == []
    assert c.judgements(SCOPE)["judgements"] == []
    with pytest.raises(NotFound):
        c.advice_show(SCOPE, "db/migrations")
    assert "learn" not in c.status()


def test_doctor_says_the_loop_has_no_model_and_what_to_do(daemon):
    c = daemon.client()
    r = c.doctor(SCOPE)
    assert r["scope"] == SCOPE
    names = [ch["name"] for ch in r["checks"]]
    assert names == ["model", "runs", "judge", "notes", "skills", "lift"]
    model = r["checks"][0]
    assert (model["health"], model["figures"]["configured"]) == ("fail", False)
    assert "[learn]" in model["fix"]
    runs = r["checks"][1]
    assert (runs["health"], runs["figures"]["runs"]) == ("warn", 0) and "runs load" in runs["fix"]
    assert all(ch["health"] in ("ok", "warn", "fail") and ch["found"] for ch in r["checks"])

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

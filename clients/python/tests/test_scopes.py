"""The scope model through amber_client against the real daemon: a working directory's
project scope (``resolve_scope``), remember and recall by ``cwd``, ``get`` by prefix,
``scopes``, ``scope_move`` and keyed sessions."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from amber_client import InvalidParams, NotFound, NotPermitted

PORT = "The alpha service reads its port from ALPHA_PORT and falls back to 8080 when unset."
TASTE = "I prefer the alpha service port to be configured with environment variables, never flags."
OTHER = "In the beta checkout the alpha service port comes from ALPHA_PORT as well, default 9090."


def git_repo(path: Path) -> Path:
    """A fresh git repository (``git init -q``) with a ``src/deep`` subdirectory."""
    (path / "src" / "deep").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def ids(result: dict) -> list[str]:
    return [h["memory"]["id"] for h in result["hits"]]


def test_remember_and_recall_by_cwd_search_the_project_and_user(daemon, tmp_path):
    repo = git_repo(tmp_path / "alpha")
    other = git_repo(tmp_path / "beta")
    with daemon.client() as c:
        r = c.resolve_scope(repo)
        scope = r["scope"]
        assert scope.startswith("project/alpha-")
        assert r["root"] == str(repo.resolve())
        assert r["search"] == [scope, "user"]
        deep = c.resolve_scope(repo / "src" / "deep")
        assert (deep["scope"], deep["root"]) == (scope, r["root"]), "a subdirectory is in its repository's project"
        assert c.scope_cache[str(repo)]["scope"] == scope, "answers are cached per directory"
        other_scope = c.resolve_scope(other)["scope"]
        assert other_scope.startswith("project/beta-") and other_scope != scope

        mine = c.remember(PORT, cwd=repo / "src" / "deep")["id"]
        assert c.get(mine)["memory"]["scope"] == scope
        taste = c.remember(TASTE, scope="user")["id"]
        theirs = c.remember(OTHER, cwd=other)["id"]
        assert c.get(theirs)["memory"]["scope"] == other_scope

        found = ids(c.recall("which port does the alpha service use?", cwd=repo, k=10))
        assert mine in found and taste in found
        assert theirs not in found, "another project's memories stay out of a project search"
        # Every scope, and an explicit scope with `also`.
        assert {mine, taste, theirs} <= set(ids(c.recall("alpha service port", all_scopes=True, k=10)))
        explicit = ids(c.recall("alpha service port", scope=other_scope, also=["user"], k=10))
        assert theirs in explicit and taste in explicit and mine not in explicit
        with pytest.raises(ValueError):
            c.recall("alpha service port", scope=scope, all_scopes=True)


def test_get_by_prefix(daemon):
    with daemon.client() as c:
        m = c.remember("The staging database is rebuilt every night at 02:00 UTC.", scope="pytest/prefix")["id"]
        got = c.get(m[:8])["memory"]
        assert got["id"] == m and got["scope"] == "pytest/prefix"
        assert c.get(m[:8].upper())["memory"]["id"] == m
        with pytest.raises(InvalidParams):
            c.get(m[:3])  # shorter than 4 hex digits
        with pytest.raises(NotFound):
            c.get(("0" if m[0] != "0" else "1") + m[1:8])


def test_scopes_lists_a_project_with_its_root_and_count(daemon, tmp_path):
    repo = git_repo(tmp_path / "gamma")
    with daemon.client() as c:
        r = c.resolve_scope(repo)
        c.remember("Gamma releases are tagged vYYYY.MM.DD from the main branch.", cwd=repo)
        c.remember("Gamma's CI runs the slow tests only on the nightly schedule.", cwd=repo / "src")
        entries = {e["scope"]: e for e in c.scopes()["scopes"]}
        assert r["scope"] in entries, entries
        assert entries[r["scope"]]["root"] == r["root"] == str(repo.resolve())
        assert entries[r["scope"]]["memories"] == 2


def test_scope_move_refiles_and_the_old_id_names_the_new_one(daemon, tmp_path):
    repo = git_repo(tmp_path / "delta")
    with daemon.client() as c:
        text = "Delta's deploy script needs the VPN up before it can reach the bastion host."
        old = c.remember(text)["id"]  # neither scope nor cwd: the daemon's default
        assert c.get(old)["memory"]["scope"] == "default"
        target = c.resolve_scope(repo)["scope"]
        # Moving a scope is the person's: a Python process is refused; the `amber` command is not.
        with pytest.raises(NotPermitted):
            c.scope_move("default", target)
        moved = daemon.person("scope", "move", "default", target)
        assert moved["moved"] >= 1
        entry = next(m for m in moved["memories"] if m["old_id"] == old)
        new = entry["new_id"]
        assert new != old and entry["scope"] == target and entry["merged"] is False
        m = c.get(new)["memory"]
        assert (m["content"], m["scope"]) == (text, target)
        with pytest.raises(NotFound) as e:
            c.get(old)
        assert new in e.value.message, e.value.message
        found = ids(c.recall("deploy script VPN bastion", cwd=repo))
        assert new in found and old not in found


def test_a_keyed_session_is_continued_not_started_again(daemon, tmp_path):
    repo = git_repo(tmp_path / "epsilon")
    with daemon.client() as c:
        c.remember("Epsilon's migrations must run before the API starts, or it crashes on boot.", cwd=repo)
        first = c.session_start("pytest-keyed", cwd=repo, key="abc", prompt="how do I start the epsilon API?")
        assert first["resumed"] is False
        assert first["search"] == [first["scope"], "user"] and first["scope"] == c.resolve_scope(repo)["scope"]
        again = c.session_start("pytest-keyed", cwd=repo, key="abc", prompt="how do I start the epsilon API?")
        assert again["resumed"] is True
        assert again["session_id"] == first["session_id"]
        assert again["briefing"]["items"] == [] and again["briefing"]["text"] == ""
        # Another key is another session.
        other = c.session_start("pytest-keyed", cwd=repo, key="xyz")
        assert other["resumed"] is False and other["session_id"] != first["session_id"]

        cp = c.session_checkpoint(first["session_id"], stop_hook_active=True, message="done")
        assert cp["block"] is False and "checkpoint" in cp

        transcript = (
            "user: the epsilon API crashes on boot, why?\n\n"
            "assistant: the database migrations had not run; run them before starting the API.\n"
        )
        end = c.session_end(first["session_id"], transcript=transcript, transcript_source="pytest:transcript")
        assert end["live"] is False
        hits = c.recall("epsilon API crashes on boot migrations", cwd=repo, k=10)["hits"]
        assert "pytest:transcript" in {h["memory"].get("source") for h in hits}
        # Even after it ended, the key continues it.
        back = c.session_start("pytest-keyed", cwd=repo, key="abc")
        assert back["resumed"] is True and back["session_id"] == first["session_id"]
        c.session_end(back["session_id"])
        c.session_end(other["session_id"])


def test_the_knowledge_graph_by_cwd(daemon, tmp_path):
    repo = git_repo(tmp_path / "zeta")
    with daemon.client() as c:
        c.kg_add([{"subject": "Zeta", "predicate": "deploys to", "object": "eu-west-1"}], cwd=repo / "src")
        q = c.kg_query("Zeta", cwd=repo)
        assert q["entity"] is not None and q["entity"]["scope"] == c.resolve_scope(repo)["scope"]
        assert [f["predicate"] for f in q["facts"]] == ["deploys_to"]
        assert c.kg_query("Zeta", scope="default")["entity"] is None
        assert len(c.kg_timeline("Zeta", cwd=repo)["facts"]) == 1
        assert c.kg_traverse("Zeta", cwd=repo)["paths"]

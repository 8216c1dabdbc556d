"""The knowledge-graph methods through amber_client against the real daemon: facts with
their source memories, an invalidation, what was true before it, a two-hop traversal with
the memories behind each step, recall with graph expansion, and typed errors."""

from __future__ import annotations

import time

import pytest

from amber_client import AmberError, FactNotFound, InvalidParams

SCOPE = "pytest/graph"
DAY = 86_400_000
# 2024-03-01 in ms since the epoch.
M2024 = 1_709_251_200_000

ADA_FALCON = "Ada Lovelace joined the Falcon team in March; she leads the parser rewrite."
FALCON_BILLING = "The Falcon team ships the billing service every second Tuesday."
LUNCH = "Team lunch on Fridays is at the Thai place around the corner."


def ends(traversal: dict) -> list[tuple[int, str]]:
    out = []
    for p in traversal["paths"]:
        end = p["end"]
        out.append((p["hops"], end["entity"]["name"] if "entity" in end else end["literal"]))
    return out


def objects(facts: list[dict], predicate: str) -> list[str]:
    return [
        f["object"]["entity"]["name"] if "entity" in f["object"] else f["object"]["literal"]
        for f in facts
        if f["predicate"] == predicate
    ]


def test_facts_invalidation_as_of_traversal_and_expansion(daemon):
    with daemon.client() as c:
        m_ada = c.remember(ADA_FALCON, scope=SCOPE)["id"]
        m_billing = c.remember(FALCON_BILLING, scope=SCOPE)["id"]
        m_lunch = c.remember(LUNCH, scope=SCOPE)["id"]

        added = c.kg_add(
            [
                {"subject": "Ada", "predicate": "works on", "object": "Falcon", "valid_from": M2024, "sources": [m_ada]},
                {"subject": "Falcon", "predicate": "ships", "object": "billing service", "sources": [m_billing]},
                {"subject": "Ada", "predicate": "favourite language", "literal": "OCaml"},
            ],
            [{"name": "Ada Lovelace", "type": "person", "aliases": ["Ada"]}, "Falcon"],
            scope=SCOPE,
        )
        facts = added["facts"]
        assert len(facts) == 3 and added["superseded"] == []
        assert facts[0]["predicate"] == "works_on" and facts[0]["subject"]["name"] == "Ada Lovelace"
        assert facts[0]["sources"] == [m_ada]
        assert facts[2]["object"] == {"literal": "OCaml"}
        ada = next(e for e in added["entities"] if e["name"] == "Ada Lovelace")
        # Filed as `type`, returned as `type` (docs/PROTOCOL.md, Entity).
        assert ada["type"] == "person" and ada["aliases"] == ["Ada"]

        # Now: both facts about Ada, through an alias in another case.
        q = c.kg_query("ADA", SCOPE)
        assert q["entity"]["name"] == "Ada Lovelace"
        assert objects(q["facts"], "works_on") == ["Falcon"]
        assert objects(q["facts"], "favourite_language") == ["OCaml"]
        assert isinstance(q["as_of"], int)

        # Invalidate one; before the invalidation it holds, now it does not.
        before = int(time.time() * 1000) - 1000
        inv = c.kg_invalidate(facts[2]["id"], reason="switched to Rust")
        assert inv["fact"]["id"] == facts[2]["id"]
        assert inv["fact"]["valid_to"] is not None and inv["fact"]["invalidated_at"] is not None
        assert objects(c.kg_query("Ada", SCOPE, as_of=before)["facts"], "favourite_language") == ["OCaml"]
        assert objects(c.kg_query("Ada", SCOPE)["facts"], "favourite_language") == []
        # Before Falcon's window began, Ada worked on nothing.
        assert objects(c.kg_query("Ada", SCOPE, as_of=M2024 - DAY)["facts"], "works_on") == []
        # The timeline keeps the invalidated fact.
        tl = c.kg_timeline("Ada Lovelace", SCOPE)
        assert facts[2]["id"] in [f["id"] for f in tl["facts"]]

        # Two hops: Ada -> Falcon -> billing service, each step with its source memory.
        t = c.kg_traverse("Ada", SCOPE, max_hops=2)
        assert t["start"]["name"] == "Ada Lovelace" and t["max_hops"] == 2 and t["truncated"] is False
        e = ends(t)
        assert (1, "Falcon") in e and (2, "billing service") in e, e
        assert "OCaml" not in [x[1] for x in e], "the invalidated fact is not walked now"
        path = next(p for p in t["paths"] if p["end"].get("entity", {}).get("name") == "billing service")
        assert [s["fact"]["predicate"] for s in path["steps"]] == ["works_on", "ships"]
        assert [s["fact"]["sources"] for s in path["steps"]] == [[m_ada], [m_billing]]
        content = {m["id"]: m["content"] for m in t["memories"]}
        assert content[m_ada] == ADA_FALCON and content[m_billing] == FALCON_BILLING
        assert m_lunch not in content
        node = {n["entity"]["name"]: n for n in t["nodes"]}
        assert node["billing service"]["hops"] == 2
        assert m_billing in node["Falcon"]["mentioned_in"]
        assert all(p["hops"] == 1 for p in c.kg_traverse("Ada", SCOPE, max_hops=1)["paths"])
        only = c.kg_traverse("Ada", SCOPE, predicates=["works on"], memories_per_node=0)
        assert ends(only) == [(1, "Falcon")] and all(n["mentioned_in"] == [] for n in only["nodes"])

        # Unknown names: an empty answer, not an error.
        none = c.kg_query("Nobody Atall", SCOPE)
        assert none["entity"] is None and none["facts"] == []
        assert c.kg_traverse("Nobody Atall", SCOPE)["start"] is None

        st = c.kg_stats(SCOPE)
        assert st["scope"] == SCOPE
        assert (st["entities"], st["facts"], st["invalidated"], st["valid_now"]) == (3, 3, 1, 2), st
        assert c.kg_stats()["scope"] is None

        # Recall expanded through the graph: a question naming Ada also ranks what is
        # filed about Falcon.
        plain = c.recall("What is Ada doing these days?", scope=SCOPE)
        assert all("graph_rank" not in h["evidence"] for h in plain["hits"])
        hits = c.recall("What is Ada doing these days?", scope=SCOPE, expand="graph")["hits"]
        graph_ranked = [h["memory"]["id"] for h in hits if h["evidence"].get("graph_rank")]
        assert m_billing in graph_ranked and m_lunch not in graph_ranked


def test_graph_errors_are_typed(daemon):
    with daemon.client() as c:
        with pytest.raises(FactNotFound) as e:
            c.kg_invalidate(999_999_999)
        assert (e.value.kind, e.value.code) == ("fact_not_found", -32013)
        assert "999999999" in e.value.message and isinstance(e.value, AmberError)
        with pytest.raises(InvalidParams):
            c.kg_add()  # nothing to add
        with pytest.raises(InvalidParams):
            c.kg_add([{"subject": "a", "predicate": "p"}])  # neither object nor literal
        with pytest.raises(InvalidParams):
            c.kg_add([{"subject": "a", "predicate": "p", "object": "b", "valid_from": 10, "valid_to": 5}])
        with pytest.raises(InvalidParams):
            c.call("kg_timeline", {"entity": "a", "as_of": 1})
        # The connection stays usable.
        assert c.kg_stats("pytest/graph-errors")["facts"] == 0

#!/usr/bin/env python3
"""Design (B) of issue #20, measured: search inside PostgreSQL (pgvector HNSW + full-text
search or the pg_search BM25 extension, fused by reciprocal rank in SQL), against the
figures Amber's own engine (design A: tantivy BM25 + usearch HNSW in process) reports in
docs/EVAL.md and docs/PERFORMANCE.md.

Two sub-commands, each printing JSON (and writing it with --out):

  eval   LongMemEval_S dev, session level, per question: its haystack goes into PostgreSQL
         (one row per session document = the user turns joined by a space, one row per
         256/32-token chunk with its vector), then each ranking is computed in SQL and
         scored with the official metrics (recall_any/all@k, ndcg_any@k; official and
         strict averaging, as in eval/src/metrics.rs).
  bench  100,000 memories (the paragraphs `amber-eval bench` uses) in one table with an
         HNSW index, a GIN full-text index (and a pg_search BM25 index if available);
         index build times; 300 hybrid queries (vector top-100 + text top-100 fused in one
         SQL statement, top 10), p50/p90/p99 with and without embedding the query.

Not part of the product; needs a venv with onnxruntime, tokenizers, numpy and psycopg, and
a PostgreSQL with pgvector (see scripts/pgvector_compare_README.md for the setup used).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import math
import os
import re
import sqlite3
import sys
import time
from pathlib import Path

import numpy as np

AMBER_HOME = Path(os.environ.get("AMBER_HOME", Path.home() / ".local/share/amber"))
MODEL_DIR = AMBER_HOME / "models/all-MiniLM-L6-v2-q8"
CACHE_DB = AMBER_HOME / "eval-cache.db"
VECTOR_ID = "all-MiniLM-L6-v2-q8+single"  # Amber's cache key prefix for this model
MAX_TOKENS, OVERLAP = 256, 32  # Amber's ChunkConfig default
KS = (1, 3, 5, 10)


# ---------------------------------------------------------------- embedding (as Amber)
class Embedder:
    """all-MiniLM-L6-v2 int8 ONNX, mean pooling + L2 normalisation, Amber's chunking."""

    def __init__(self, threads: int = 2, use_cache: bool = True):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.sess = ort.InferenceSession(str(MODEL_DIR / "model.onnx"), so, providers=["CPUExecutionProvider"])
        # chunking tokenizer: no truncation, no padding (the file has 128/fixed built in)
        self.chunk_tok = Tokenizer.from_file(str(MODEL_DIR / "tokenizer.json"))
        self.chunk_tok.no_truncation()
        self.chunk_tok.no_padding()
        # model tokenizer: truncation at the model's 256 window, no padding (one text a run)
        self.tok = Tokenizer.from_file(str(MODEL_DIR / "tokenizer.json"))
        self.tok.enable_truncation(MAX_TOKENS)
        self.tok.no_padding()
        self.cache = None
        if use_cache and CACHE_DB.is_file():
            self.cache = sqlite3.connect(f"file:{CACHE_DB}?mode=ro", uri=True)
        self.hits = self.misses = 0
        self.embed_seconds = 0.0

    def chunks(self, text: str) -> list[str]:
        """Amber's chunk_spans: windows of 254 word pieces advancing by 222."""
        offs = self.chunk_tok.encode(text, add_special_tokens=False).offsets
        window = MAX_TOKENS - 2
        stride = window - OVERLAP
        if len(offs) <= window:
            return [text]
        out, start_tok = [], 0
        while True:
            end_tok = min(start_tok + window, len(offs))
            start = 0 if start_tok == 0 else offs[start_tok][0]
            end = len(text) if end_tok == len(offs) else offs[end_tok - 1][1]
            out.append(text[start:max(end, start)])
            if end_tok == len(offs):
                return out
            start_tok += stride

    def embed_one(self, text: str) -> np.ndarray:
        t0 = time.perf_counter()
        enc = self.tok.encode(text)
        ids = np.array([enc.ids], dtype=np.int64)
        mask = np.array([enc.attention_mask], dtype=np.int64)
        out = self.sess.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
        m = mask[..., None].astype(np.float32)
        v = (out * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        v = v[0]
        v = v / max(float(np.linalg.norm(v)), 1e-12)
        self.embed_seconds += time.perf_counter() - t0
        return v.astype(np.float32)

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        """Padded batch (faster; int8 dynamic quantisation makes vectors depend slightly on
        batch mates, which is why Amber runs one text at a time). Used for the 100k bench."""
        t0 = time.perf_counter()
        encs = self.tok.encode_batch(texts)
        n = max(len(e.ids) for e in encs)
        ids = np.zeros((len(encs), n), dtype=np.int64)
        mask = np.zeros((len(encs), n), dtype=np.int64)
        for i, e in enumerate(encs):
            ids[i, : len(e.ids)] = e.ids
            mask[i, : len(e.ids)] = 1
        out = self.sess.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
        m = mask[..., None].astype(np.float32)
        v = (out * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        v = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
        self.embed_seconds += time.perf_counter() - t0
        return v.astype(np.float32)

    def cached(self, chunk: str):
        if self.cache is None:
            return None
        h = hashlib.sha256(chunk.encode("utf-8")).digest()
        row = self.cache.execute("SELECT vector FROM embeddings WHERE model = ? AND chunk_hash = ?", (VECTOR_ID, h)).fetchone()
        if row is None:
            return None
        return np.frombuffer(row[0], dtype="<f4").copy()

    def chunk_vectors(self, text: str) -> list[np.ndarray]:
        vs = []
        for c in self.chunks(text):
            v = self.cached(c)
            if v is None:
                self.misses += 1
                v = self.embed_one(c)
            else:
                self.hits += 1
            vs.append(v)
        return vs


def short(plan_line: str) -> str:
    return re.sub(r"'\[[^]]*\]'", "'[...]'", plan_line)


def vec_literal(v) -> str:
    return "[" + ",".join(f"{x:.7g}" for x in v) + "]"


# ---------------------------------------------------------------- data and metrics
def load_questions(path: str) -> list[dict]:
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def session_docs(q: dict) -> list[tuple[str, str]]:
    """(session id, text): one per haystack position, the user turns joined by a space."""
    out = []
    for sid, turns in zip(q["haystack_session_ids"], q["haystack_sessions"]):
        out.append((sid, " ".join(t["content"] for t in turns if t["role"] == "user")))
    return out


def gold_sessions(q: dict) -> set[str]:
    g = set()
    for sid, turns in zip(q["haystack_session_ids"], q["haystack_sessions"]):
        if "answer" in sid and any(t["role"] == "user" and t.get("has_answer") for t in turns):
            g.add(sid)
    return g


def score(ranking: list[str], corpus: list[str], gold: set[str]) -> dict:
    m = {}
    for k in KS:
        top = ranking[:k]
        m[f"recall_any@{k}"] = float(any(r in gold for r in top))
        m[f"recall_all@{k}"] = float(all(g in top for g in gold))
    for k in (5, 10):
        def dcg(rels):
            return sum(r if i == 0 else r / math.log2(i + 1) for i, r in enumerate(rels))

        rels = [1.0 if r in gold else 0.0 for r in ranking[:k]]
        ideal = sorted((1.0 if c in gold else 0.0 for c in corpus), reverse=True)[:k]
        idcg = dcg(ideal)
        m[f"ndcg_any@{k}"] = dcg(rels) / idcg if idcg > 0 else 0.0
    return m


def average(rows: list[dict]) -> dict:
    if not rows:
        return {"n": 0}
    keys = rows[0].keys()
    out = {k: round(sum(r[k] for r in rows) / len(rows), 4) for k in keys}
    out["n"] = len(rows)
    return out


# ---------------------------------------------------------------- SQL pieces
def connect(dsn: str):
    import psycopg

    return psycopg.connect(dsn, autocommit=True)


def has_ext(conn, name: str) -> bool:
    try:
        conn.execute(f"CREATE EXTENSION IF NOT EXISTS {name}")
        return True
    except Exception as e:  # noqa: BLE001
        print(f"extension {name}: {e}", file=sys.stderr)
        return False


# Text-side rankers. Each is a SELECT of (doc id, 1-based rank) over table {t}, parameters
# %(q)s (the question text) and %(n)s (the list length).
TEXT_RANKERS = {
    # websearch_to_tsquery ANDs every non-stop word: a natural-language question rarely
    # has every word in one document.
    "fts_and": """SELECT id AS doc, row_number() OVER (ORDER BY rk DESC, id) AS r FROM (
        SELECT id, ts_rank_cd(tsv, query) AS rk FROM {t}, websearch_to_tsquery('english', %(q)s) query
        WHERE tsv @@ query ORDER BY rk DESC, id LIMIT %(n)s) s""",
    # the usual workaround: OR the stemmed words (closer to what BM25 does)
    "fts_or": """SELECT id AS doc, row_number() OVER (ORDER BY rk DESC, id) AS r FROM (
        SELECT id, ts_rank_cd(tsv, qq.query) AS rk FROM {t},
          (SELECT CAST(NULLIF(replace(CAST(plainto_tsquery('english', %(q)s) AS text), ' & ', ' | '), '') AS tsquery) AS query) qq
        WHERE tsv @@ qq.query ORDER BY rk DESC, id LIMIT %(n)s) s""",
    # the same OR query, rank divided by 1 + log(document length) (normalization 1)
    "fts_or_norm": """SELECT id AS doc, row_number() OVER (ORDER BY rk DESC, id) AS r FROM (
        SELECT id, ts_rank_cd(tsv, qq.query, 1) AS rk FROM {t},
          (SELECT CAST(NULLIF(replace(CAST(plainto_tsquery('english', %(q)s) AS text), ' & ', ' | '), '') AS tsquery) AS query) qq
        WHERE tsv @@ qq.query ORDER BY rk DESC, id LIMIT %(n)s) s""",
    # pg_search (ParadeDB) BM25, match disjunction of the analysed query words
    "bm25": """SELECT id AS doc, row_number() OVER (ORDER BY rk DESC, id) AS r FROM (
        SELECT id, pdb.score(id) AS rk FROM {t} WHERE body ||| %(q)s
        ORDER BY pdb.score(id) DESC, id LIMIT %(n)s) s""",
}


def vector_ranker(chunk_table: str | None, t: str) -> str:
    """SELECT (doc, rank) by cosine through the HNSW index. With a chunk table a document
    scores its best chunk (Amber: max over chunks)."""
    if chunk_table:
        return f"""SELECT doc, row_number() OVER (ORDER BY sim DESC, doc) AS r FROM (
            SELECT doc, max(1 - d) AS sim FROM (
              SELECT doc, emb <=> %(v)s::vector AS d FROM {chunk_table} ORDER BY emb <=> %(v)s::vector LIMIT %(vn)s) c
            GROUP BY doc ORDER BY sim DESC, doc LIMIT %(n)s) s"""
    return f"""SELECT id AS doc, row_number() OVER (ORDER BY d, id) AS r FROM (
        SELECT id, emb <=> %(v)s::vector AS d FROM {t} ORDER BY emb <=> %(v)s::vector LIMIT %(n)s) s"""


def fused_sql(vec_sql: str, text_sql: str, top: str) -> str:
    """One statement: both lists as CTEs, RRF score weight/(k + rank) summed over lists."""
    return f"""WITH v AS ({vec_sql}), b AS ({text_sql})
        SELECT doc, coalesce(%(wv)s / (%(k)s + v.r), 0) + coalesce(%(wb)s / (%(k)s + b.r), 0) AS s
        FROM v FULL JOIN b USING (doc) ORDER BY s DESC, doc LIMIT {top}"""


# ---------------------------------------------------------------- eval
def cmd_eval(a):
    qs = load_questions(a.data)
    if a.limit:
        qs = qs[: a.limit]
    emb = Embedder(threads=a.threads, use_cache=not a.no_cache)
    conn = connect(a.dsn)
    assert has_ext(conn, "vector")
    bm25 = not a.no_bm25 and has_ext(conn, "pg_search")
    text_rankers = ["fts_and", "fts_or", "fts_or_norm"] + (["bm25"] if bm25 else [])
    conn.execute("DROP TABLE IF EXISTS lme_chunk, lme_doc")
    conn.execute("""CREATE TABLE lme_doc (id int PRIMARY KEY, qid text NOT NULL, session_id text NOT NULL,
        body text NOT NULL, tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', body)) STORED)""")
    conn.execute("CREATE TABLE lme_chunk (id serial PRIMARY KEY, doc int NOT NULL, emb vector(384) NOT NULL)")
    conn.execute("CREATE INDEX lme_doc_tsv ON lme_doc USING gin (tsv)")
    conn.execute(f"CREATE INDEX lme_chunk_hnsw ON lme_chunk USING hnsw (emb vector_cosine_ops) WITH (m = {a.m}, ef_construction = {a.ef_construction})")
    if bm25:
        # the analyser closest to Amber's tantivy field: lowercase, English stop words, Porter stemming
        conn.execute("""CREATE INDEX lme_doc_bm25 ON lme_doc USING bm25
            (id, (body::pdb.simple('stemmer=english', 'stopwords_language=english'))) WITH (key_field = 'id')""")
    # every doc's chunks fit the HNSW candidate list (<= 1000), so the vector list is the full
    # haystack ordered through the index; the planner must not swap the index for a scan
    conn.execute("SET hnsw.ef_search = 1000")
    conn.execute("SET enable_seqscan = off")

    variants = ["vector"] + text_rankers
    for tr in text_rankers:
        for k in a.rrf_k:
            variants.append(f"hybrid_{tr}_k{k}")
    per_q = {v: [] for v in variants}
    lines = []
    t_start = time.time()
    planned = None
    missed_by_hnsw = total_docs = 0
    for qi, q in enumerate(qs):
        docs = session_docs(q)
        gold = gold_sessions(q)
        corpus = [sid for sid, _ in docs]
        conn.execute("TRUNCATE lme_chunk, lme_doc")
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO lme_doc (id, qid, session_id, body) VALUES (%s, %s, %s, %s)",
                            [(i, q["question_id"], sid, text.replace("\x00", "")) for i, (sid, text) in enumerate(docs)])
            rows = []
            for i, (_, text) in enumerate(docs):
                for v in emb.chunk_vectors(text):
                    rows.append((i, vec_literal(v)))
            cur.executemany("INSERT INTO lme_chunk (doc, emb) VALUES (%s, %s::vector)", rows)
        qv = vec_literal(emb.embed_one(q["question"]))
        p = {"q": q["question"], "v": qv, "n": 1000, "vn": 1000, "wv": a.vector_weight, "wb": a.text_weight}
        vsql = vector_ranker("lme_chunk", "lme_doc")
        if planned is None:
            planned = [short(r[0]) for r in conn.execute("EXPLAIN " + vsql.replace("%(v)s", "'" + qv + "'").replace("%(vn)s", "1000").replace("%(n)s", "1000")).fetchall()]
        rankings = {}
        rankings["vector"] = [d for d, _ in conn.execute(vsql + " ORDER BY r", p).fetchall()]
        # HNSW is approximate: count haystack documents the index walk did not return
        missed_by_hnsw += len(docs) - len(set(rankings["vector"]))
        total_docs += len(docs)
        for tr in text_rankers:
            tsql = TEXT_RANKERS[tr].format(t="lme_doc")
            rankings[tr] = [d for d, _ in conn.execute(tsql + " ORDER BY r", p).fetchall()]
            for k in a.rrf_k:
                rankings[f"hybrid_{tr}_k{k}"] = [d for d, _ in conn.execute(fused_sql(vsql, tsql, "1000"), {**p, "k": k}).fetchall()]
        rec = {"question_id": q["question_id"], "question_type": q["question_type"], "gold": sorted(gold)}
        for v in variants:
            ranked_ids = [corpus[d] for d in rankings[v]]
            s = score(ranked_ids, corpus, gold)
            per_q[v].append((q, gold, s))
            rec[v] = ranked_ids[:10]
        lines.append(rec)
        if (qi + 1) % 10 == 0:
            print(f"  {qi + 1}/{len(qs)} questions, {time.time() - t_start:.0f} s, cache hits {emb.hits} misses {emb.misses}", file=sys.stderr)

    result = {
        "what": "design B (search inside PostgreSQL) on LongMemEval_S dev, session level",
        "data": a.data,
        "questions": len(qs),
        "postgres": conn.execute("SELECT version()").fetchone()[0],
        "extensions": dict(conn.execute("SELECT extname, extversion FROM pg_extension").fetchall()),
        "settings": {"hnsw_m": a.m, "hnsw_ef_construction": a.ef_construction, "hnsw_ef_search": 1000,
                     "vector_weight": a.vector_weight, "text_weight": a.text_weight, "rrf_k": a.rrf_k,
                     "chunks": f"{MAX_TOKENS}/{OVERLAP}, doc vector score = max over its chunks",
                     "fts_config": "english", "query": "question text verbatim"},
        "vector_plan": planned,
        "documents_missing_from_hnsw_list": f"{missed_by_hnsw} of {total_docs}",
        "embedding": {"chunks_from_amber_cache": emb.hits, "chunks_embedded_here": emb.misses,
                      "embed_seconds": round(emb.embed_seconds, 1)},
        "wall_seconds": round(time.time() - t_start, 1),
        "averaging": {"metrics": "official: skip _abs questions only",
                      "metrics_strict": "also skip questions with no gold session"},
        "results": {},
    }
    for v in variants:
        off = [s for q, g, s in per_q[v] if not q["question_id"].endswith("_abs")]
        strict = [s for q, g, s in per_q[v] if not q["question_id"].endswith("_abs") and g]
        result["results"][v] = {"metrics": average(off), "metrics_strict": average(strict)}
    if a.rankings:
        with open(a.rankings, "w") as f:
            for rec in lines:
                f.write(json.dumps(rec) + "\n")
    emit(result, a.out)


# ---------------------------------------------------------------- bench
def bench_corpus(qs: list[dict], want: int) -> list[str]:
    """amber-eval bench's corpus: turn paragraphs of 40..600 bytes, deduplicated, file order."""
    seen, out = set(), []
    for q in qs:
        for turns in q["haystack_sessions"]:
            for t in turns:
                for para in t["content"].split("\n\n"):
                    p = para.strip()
                    if 40 <= len(p.encode("utf-8")) <= 600 and p not in seen:
                        seen.add(p)
                        out.append(p)
                        if len(out) == want:
                            return out
    return out


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    i = min(len(xs) - 1, max(0, math.ceil(p / 100 * len(xs)) - 1))
    return round(xs[i], 2)


def cmd_bench(a):
    qs = load_questions(a.data)
    corpus = bench_corpus(qs, a.rows)
    queries = [q["question"] for q in qs]
    queries = (queries * (a.queries // len(queries) + 1))[: a.queries]
    del qs
    print(f"corpus {len(corpus)} paragraphs", file=sys.stderr)
    emb = Embedder(threads=a.threads, use_cache=False)
    # vectors: the first --real paragraphs embedded for real (cached in --vectors); the others
    # reuse a real vector plus Gaussian noise, renormalised (their text stays their own)
    real = min(a.real, len(corpus))
    vecs = None
    if a.vectors and Path(a.vectors).is_file():
        vecs = np.load(a.vectors)
        if len(vecs) < real:
            vecs = None
    t0 = time.time()
    if vecs is None:
        order = sorted(range(real), key=lambda i: len(corpus[i]))
        vecs = np.zeros((real, 384), dtype=np.float32)
        for s in range(0, real, a.batch):
            idx = order[s : s + a.batch]
            if a.batch == 1:  # one text per model run, as Amber (and faster here than batches)
                vecs[idx[0]] = emb.embed_one(corpus[idx[0]])
            else:
                vecs[idx] = emb.embed_batch([corpus[i] for i in idx])
            if (s // a.batch) % (5000 // a.batch or 1) == 0:
                print(f"  embedded {s + len(idx)}/{real}, {time.time() - t0:.0f} s", file=sys.stderr)
        if a.vectors:
            np.save(a.vectors, vecs)
    embed_secs = time.time() - t0
    rng = np.random.default_rng(42)
    allv = np.zeros((len(corpus), 384), dtype=np.float32)
    allv[:real] = vecs[:real]
    if len(corpus) > real:
        src = rng.integers(0, real, len(corpus) - real)
        noise = rng.normal(0, a.noise / math.sqrt(384), (len(corpus) - real, 384)).astype(np.float32)
        nv = vecs[src] + noise
        allv[real:] = nv / np.linalg.norm(nv, axis=1, keepdims=True)
    sims = (allv[real:] * vecs[src]).sum(1) if len(corpus) > real else np.array([1.0])

    conn = connect(a.dsn)
    assert has_ext(conn, "vector")
    bm25 = not a.no_bm25 and has_ext(conn, "pg_search")
    reuse = a.reuse and conn.execute("SELECT to_regclass('bench_mem') IS NOT NULL").fetchone()[0] \
        and conn.execute("SELECT count(*) FROM bench_mem").fetchone()[0] == len(corpus)
    builds, load_secs = {}, None
    if not reuse:
        load_secs, builds = build_bench_table(conn, corpus, allv, a, bm25)
    bm25 = bm25 and conn.execute("SELECT to_regclass('bench_mem_bm25') IS NOT NULL").fetchone()[0]
    sizes = dict(conn.execute("""SELECT c.relname, pg_relation_size(c.oid) FROM pg_class c
        WHERE c.relname LIKE 'bench_mem%'""").fetchall())
    conn.execute(f"SET hnsw.ef_search = {a.ef_search}")
    # psycopg prepares a statement after its 5th run and PostgreSQL may then use a generic
    # plan: that made the pg_search list alone about 4x slower here (7-8 vs 28-40 ms p50)
    # while the hybrid statement was as fast or faster (7-11 vs 11 ms): "auto" (PostgreSQL's
    # default) is kept; force_custom_plan plans every run
    conn.execute(f"SET plan_cache_mode = {a.plan_cache_mode}")
    run_bench_queries(conn, emb, queries, a, bm25, corpus, real, sims, embed_secs, load_secs, builds, sizes, reuse, allv)


def build_bench_table(conn, corpus, allv, a, bm25):
    conn.execute("DROP TABLE IF EXISTS bench_mem")
    conn.execute("""CREATE TABLE bench_mem (id int PRIMARY KEY, body text NOT NULL,
        tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', body)) STORED, emb vector(384) NOT NULL)""")
    t = time.time()
    with conn.cursor() as cur:
        with cur.copy("COPY bench_mem (id, body, emb) FROM STDIN") as cp:
            for i, (text, v) in enumerate(zip(corpus, allv)):
                cp.write_row((i, text.replace("\x00", ""), vec_literal(v)))
    load_secs = time.time() - t
    conn.execute("VACUUM ANALYZE bench_mem")
    builds = {}
    t = time.time()
    conn.execute("CREATE INDEX bench_mem_tsv ON bench_mem USING gin (tsv)")
    builds["gin_fts"] = round(time.time() - t, 1)
    t = time.time()
    conn.execute(f"CREATE INDEX bench_mem_hnsw ON bench_mem USING hnsw (emb vector_cosine_ops) WITH (m = {a.m}, ef_construction = {a.ef_construction})")
    builds["hnsw"] = round(time.time() - t, 1)
    if bm25:
        t = time.time()
        conn.execute("""CREATE INDEX bench_mem_bm25 ON bench_mem USING bm25
            (id, (body::pdb.simple('stemmer=english', 'stopwords_language=english'))) WITH (key_field = 'id')""")
        builds["pg_search_bm25"] = round(time.time() - t, 1)
    conn.execute("ANALYZE bench_mem")
    return load_secs, builds


def run_bench_queries(conn, emb, queries, a, bm25, corpus, real, sims, embed_secs, load_secs, builds, sizes, reuse, allv):

    # query vectors once (for the SQL-only timings)
    qvec = {q: vec_literal(emb.embed_one(q)) for q in set(queries)}
    vsql = vector_ranker(None, "bench_mem")
    statements = {"vector": vsql + " ORDER BY r LIMIT 10"}
    text_rankers = ["fts_and", "fts_or", "fts_or_norm"] + (["bm25"] if bm25 else [])
    for tr in text_rankers:
        tsql = TEXT_RANKERS[tr].format(t="bench_mem")
        statements[tr] = tsql + " ORDER BY r LIMIT 10"
        statements[f"hybrid_{tr}"] = fused_sql(vsql, tsql, "10")
    plans = {}
    lat = {}
    for name, sql in statements.items():
        if a.only and name not in a.only:
            continue
        p0 = {"q": queries[0], "v": qvec[queries[0]], "n": a.candidates, "vn": a.candidates,
              "wv": a.vector_weight, "wb": a.text_weight, "k": a.rrf_k}
        plans[name] = [short(r[0]) for r in conn.execute("EXPLAIN ANALYZE " + sql, p0).fetchall()][-3:]
        for q in queries[:10]:  # warm-up
            conn.execute(sql, {**p0, "q": q, "v": qvec[q]}).fetchall()
        sql_only, with_embed, nres = [], [], []
        for q in queries:
            t = time.perf_counter()
            rows = conn.execute(sql, {**p0, "q": q, "v": qvec[q]}).fetchall()
            sql_only.append((time.perf_counter() - t) * 1000)
            nres.append(len(rows))
        if name.startswith("hybrid") or name == "vector":
            for q in queries:
                t = time.perf_counter()
                v = vec_literal(emb.embed_one(q))
                conn.execute(sql, {**p0, "q": q, "v": v}).fetchall()
                with_embed.append((time.perf_counter() - t) * 1000)
        lat[name] = {"sql_only_ms": {"p50": pct(sql_only, 50), "p90": pct(sql_only, 90), "p99": pct(sql_only, 99), "mean": round(sum(sql_only) / len(sql_only), 2)},
                     "mean_rows_returned": round(sum(nres) / len(nres), 2)}
        if with_embed:
            lat[name]["with_query_embedding_ms"] = {"p50": pct(with_embed, 50), "p90": pct(with_embed, 90), "p99": pct(with_embed, 99)}
        print(f"  {name}: {lat[name]}", file=sys.stderr)
    # HNSW quality at this ef_search: overlap of its top 10 with the exact top 10
    hnsw_recall = []
    for q in sorted(set(queries)):
        qv = np.array(json.loads(qvec[q]), dtype=np.float32)
        exact = set(np.argsort(-(allv @ qv))[:10].tolist())
        got = {d for d, _ in conn.execute(vsql + " ORDER BY r LIMIT 10", {"v": qvec[q], "n": a.candidates}).fetchall()}
        hnsw_recall.append(len(exact & got) / 10)
    emb_only = []
    for q in queries:
        t = time.perf_counter()
        emb.embed_one(q)
        emb_only.append((time.perf_counter() - t) * 1000)
    result = {
        "what": "design B latency at 100k memories: one PostgreSQL table, Python client (psycopg 3) over the Unix socket, one caller",
        "rows": len(corpus),
        "postgres": conn.execute("SELECT version()").fetchone()[0],
        "extensions": dict(conn.execute("SELECT extname, extversion FROM pg_extension").fetchall()),
        "vectors": {"real": real, "noisy_copies": len(corpus) - real, "noise_sigma_total": a.noise,
                    "noisy_copy_cosine_to_source_mean": round(float(sims.mean()), 4),
                    "embed_seconds_real": round(embed_secs, 1),
                    "note": "texts are all distinct real paragraphs; vectors beyond 'real' are a random real vector plus noise"},
        "table_reused_from_earlier_run": bool(reuse),
        "load_copy_seconds": None if load_secs is None else round(load_secs, 1),
        "index_build_seconds": builds,
        "relation_bytes": sizes,
        "settings": {"hnsw_m": a.m, "hnsw_ef_construction": a.ef_construction, "hnsw_ef_search": a.ef_search,
                     "candidates_per_list": a.candidates, "top": 10, "rrf_k": a.rrf_k,
                     "vector_weight": a.vector_weight, "text_weight": a.text_weight,
                     "plan_cache_mode": a.plan_cache_mode,
                     "max_parallel_maintenance_workers": conn.execute("SHOW max_parallel_maintenance_workers").fetchone()[0],
                     "shared_buffers": conn.execute("SHOW shared_buffers").fetchone()[0],
                     "maintenance_work_mem": conn.execute("SHOW maintenance_work_mem").fetchone()[0]},
        "queries": len(queries),
        "load_average_at_end": os.getloadavg(),
        "query_embedding_only_ms": {"p50": pct(emb_only, 50), "p99": pct(emb_only, 99)},
        "hnsw_recall_at_10_vs_exact": round(sum(hnsw_recall) / len(hnsw_recall), 4),
        "latency": lat,
        "plans_tail": plans,
    }
    emit(result, a.out)


def emit(result: dict, out: str | None):
    s = json.dumps(result, indent=2)
    print(s)
    if out:
        Path(out).write_text(s + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dsn", default=os.environ.get("PGCMP_DSN", "host=/tmp/pgcmp/sock port=55471 user=postgres dbname=postgres"))
    ap.add_argument("--threads", type=int, default=2, help="ONNX Runtime intra-op threads")
    ap.add_argument("--m", type=int, default=16)
    ap.add_argument("--ef-construction", type=int, default=64)
    ap.add_argument("--vector-weight", type=float, default=0.7)
    ap.add_argument("--text-weight", type=float, default=1.0)
    ap.add_argument("--no-bm25", action="store_true", help="skip the pg_search BM25 extension")
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("eval")
    e.add_argument("--data", required=True)
    e.add_argument("--out", help="also write the JSON here")
    e.add_argument("--limit", type=int)
    e.add_argument("--rrf-k", type=float, nargs="+", default=[5.0, 60.0])
    e.add_argument("--no-cache", action="store_true", help="embed every chunk here instead of reading Amber's eval cache")
    e.add_argument("--rankings", help="write per-question top-10 session ids (JSONL)")
    b = sub.add_parser("bench")
    b.add_argument("--data", required=True)
    b.add_argument("--out", help="also write the JSON here")
    b.add_argument("--rows", type=int, default=100_000)
    b.add_argument("--real", type=int, default=100_000, help="paragraphs embedded for real; the rest are noisy copies")
    b.add_argument("--noise", type=float, default=0.3, help="L2 norm (expected) of the noise added to a copied unit vector")
    b.add_argument("--vectors", help=".npy cache of the real vectors")
    b.add_argument("--batch", type=int, default=1, help="texts per model run (1 = as Amber)")
    b.add_argument("--queries", type=int, default=300)
    b.add_argument("--candidates", type=int, default=100, help="rows per list before fusion")
    b.add_argument("--ef-search", type=int, default=100)
    b.add_argument("--rrf-k", type=float, default=5.0)
    b.add_argument("--plan-cache-mode", default="auto", choices=["auto", "force_custom_plan", "force_generic_plan"])
    b.add_argument("--reuse", action="store_true", help="keep bench_mem and its indexes if it already holds the corpus (no build times then)")
    b.add_argument("--only", nargs="*", help="only these statements (vector, fts_and, hybrid_fts_or, ...)")
    a = ap.parse_args()
    {"eval": cmd_eval, "bench": cmd_bench}[a.cmd](a)


if __name__ == "__main__":
    main()

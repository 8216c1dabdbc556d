//! `amber-eval team-bench`: team memory on PostgreSQL against local memory, real daemons
//! over their sockets (issue 20, "Measured").
//!
//! Starts (or reuses) the private PostgreSQL of `scripts/pg.sh`, creates a fresh database,
//! and starts three private amberd: team nodes A and B (`[team]` with `scopes =
//! ["team/acme"]`, `poll_ms` default) and a local-only node L. Then, in this order:
//!
//! 1. ingest with embedding: the same N LongMemEval paragraphs (as `bench` picks them) in
//!    batches of 100, into `team/acme` on A, then (back to back, once B has caught up)
//!    into `local` on L; each timed from the first batch sent until the node's indexes
//!    cover everything (`status`, the team side under `status.team.engine`);
//! 2. recall latency: `--queries` recalls (the dev questions, top 10) on B in `team/acme`,
//!    then on L in `local`;
//! 3. propagation: `--propagation` times, a new memory remembered on A, then B polled
//!    (recall `fresh: false`, the memory's text as query) every 5 ms until it is a hit;
//! 4. rebuild: B shut down, `<B data>/team` deleted, B started again; timed until the
//!    team store is connected and its indexes complete, with what B embedded;
//! 5. resident memory of the three daemons, the database's size.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use amber_core::{NewMemory, Scope};
use amber_eval::longmemeval;
use amber_ipc::Client;
use amber_ipc::protocol::RecallParams;
use anyhow::{Context, bail};
use clap::Args;
use serde_json::{Value, json};

use super::bench::bench_corpus;

use super::node::retry_busy;
use crate::cmd::node::{Node, TEAM_SCOPE, dir_bytes, mib, rss_of};
use crate::common::{percentile, write_report};

/// Arguments of `amber-eval team-bench`.
#[derive(Args, Debug)]
pub(crate) struct TeamBenchArgs {
    /// A LongMemEval file: its turns' paragraphs become the memories, its questions the queries.
    #[arg(long)]
    data: PathBuf,
    /// Memories filed on each side (team and local).
    #[arg(long, default_value_t = 2_000)]
    memories: usize,
    /// Recalls timed per side.
    #[arg(long, default_value_t = 300)]
    queries: usize,
    /// Propagation measurements (remember on A, found on B).
    #[arg(long, default_value_t = 100)]
    propagation: usize,
    /// The amberd binary [default: the amberd next to this program].
    #[arg(long, value_name = "PATH")]
    amberd: Option<PathBuf>,
    /// The PostgreSQL admin URL [default: start `scripts/pg.sh` and use the URL it prints].
    #[arg(long, value_name = "URL")]
    pg_url: Option<String>,
    /// Keep node B running while A ingests (it then follows A's writes as they commit,
    /// and embeds what A has not yet put in the shared cache); with `false`, B is stopped
    /// during A's ingest and started after it, so it catches up from the cache.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    follower_during_ingest: bool,
    /// Keep the benchmark's database at the end (it is dropped by default).
    #[arg(long)]
    keep_db: bool,
    /// Write the results (JSON) here; they are also printed.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// Memories per `remember_batch`.
const BATCH: usize = 100;
/// How often a waiting loop asks `status`.
const STATUS_EVERY: Duration = Duration::from_millis(100);
/// How often B is asked for a memory filed on A.
const PROPAGATION_POLL: Duration = Duration::from_millis(5);
/// A memory not found on B within this is counted as missed.
const PROPAGATION_TIMEOUT: Duration = Duration::from_secs(30);
/// Untimed recalls before each timed series.
const WARMUP: usize = 10;
const LOCAL_SCOPE: &str = "local";

/// The engine status of one side: the team engine (`status.team.engine`) or the local one.
fn side_status(c: &mut Client, team: bool) -> anyhow::Result<Value> {
    let s = c.call_value("status", json!({}))?;
    Ok(if team { s["team"]["engine"].clone() } else { s["engine"].clone() })
}

fn u(v: &Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or(0)
}

/// True when the side holds at least `want` memories and both indexes cover all of them.
fn complete(e: &Value, want: u64) -> bool {
    !e.is_null()
        && u(e, "memories") >= want
        && u(e, "indexed_through") >= u(e, "committed_through")
        && u(e, "bm25_docs") == u(e, "memories")
}

/// Polls until the node's team store is connected; answers the status.
fn wait_connected(c: &mut Client, limit: Duration) -> anyhow::Result<Value> {
    let until = Instant::now() + limit;
    loop {
        let s = c.call_value("status", json!({}))?;
        if s["team"]["connected"] == json!(true) && !s["team"]["engine"].is_null() {
            return Ok(s);
        }
        if Instant::now() > until {
            bail!("the team store did not open within {limit:?}: {}", s["team"]);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Polls until the side is complete with `want` memories; answers its status.
fn wait_complete(c: &mut Client, team: bool, want: u64, limit: Duration) -> anyhow::Result<Value> {
    let until = Instant::now() + limit;
    loop {
        let e = side_status(c, team)?;
        if complete(&e, want) {
            return Ok(e);
        }
        if Instant::now() > until {
            bail!("indexes not complete within {limit:?}: {e}");
        }
        std::thread::sleep(STATUS_EVERY);
    }
}

fn stats(e: &Value) -> (u64, u64) {
    (u(&e["stats"], "chunks_embedded"), u(&e["stats"], "chunks_from_cache"))
}

/// Files `corpus` into `scope` on one node in batches, then waits for its indexes.
fn ingest(c: &mut Client, team: bool, scope: &Scope, corpus: &[String]) -> anyhow::Result<Value> {
    let before = side_status(c, team)?;
    let want = u(&before, "memories") + corpus.len() as u64;
    let t = Instant::now();
    let (mut created, mut busy) = (0usize, 0u64);
    for chunk in corpus.chunks(BATCH) {
        let batch: Vec<NewMemory> =
            chunk.iter().map(|p| NewMemory::new(p.clone()).in_scope(scope.clone())).collect();
        let (r, b) = retry_busy(|| c.remember_batch(batch.clone()))?;
        busy += b;
        created += r.results.iter().filter(|r| r.created).count();
    }
    let committed = t.elapsed().as_secs_f64();
    let after = wait_complete(c, team, want, Duration::from_secs(3600))?;
    let secs = t.elapsed().as_secs_f64();
    let (e0, c0) = stats(&before);
    let (e1, c1) = stats(&after);
    Ok(json!({
        "scope": scope,
        "memories": corpus.len(),
        "created": created,
        "busy_retries": busy,
        "commit_seconds": committed,
        "seconds": secs,
        "memories_per_second": corpus.len() as f64 / secs,
        "vectors": after["vectors"],
        "chunks_embedded": e1 - e0,
        "chunks_from_cache": c1 - c0,
        "embed_seconds": after["stats"]["embed_seconds"].as_f64().unwrap_or(0.0)
            - before["stats"]["embed_seconds"].as_f64().unwrap_or(0.0),
    }))
}

/// `queries` timed recalls (after a warm-up) in `scope`; latencies in ms.
fn recalls(c: &mut Client, scope: &Scope, queries: &[String]) -> anyhow::Result<Value> {
    let params = |q: &str| {
        let mut p = RecallParams::new(q);
        p.scope = Some(scope.clone());
        p.k = Some(10);
        p
    };
    for q in queries.iter().take(WARMUP) {
        c.recall(&params(q))?;
    }
    let mut lat = Vec::with_capacity(queries.len());
    let mut hits = 0usize;
    for q in queries {
        let p = params(q);
        let t = Instant::now();
        let r = c.recall(&p)?;
        lat.push(t.elapsed().as_secs_f64() * 1000.0);
        hits += r.hits.len();
    }
    lat.sort_by(f64::total_cmp);
    Ok(json!({
        "scope": scope,
        "recalls": lat.len(),
        "mean_hits": hits as f64 / lat.len().max(1) as f64,
        "ms_p50": percentile(&lat, 0.50),
        "ms_p90": percentile(&lat, 0.90),
        "ms_p99": percentile(&lat, 0.99),
        "ms_max": lat.last(),
        "ms_mean": lat.iter().sum::<f64>() / lat.len().max(1) as f64,
    }))
}

/// Remember on A, poll B until it finds it; `texts.len()` times.
fn propagation(a: &mut Client, b: &mut Client, scope: &Scope, texts: &[String]) -> anyhow::Result<Value> {
    let mut delays = Vec::with_capacity(texts.len());
    let mut acks = Vec::with_capacity(texts.len());
    let (mut missed, mut polls) = (0usize, 0usize);
    for text in texts {
        let t = Instant::now();
        let id = a.remember(&NewMemory::new(text.clone()).in_scope(scope.clone()))?.id;
        let acked = Instant::now();
        acks.push((acked - t).as_secs_f64() * 1000.0);
        let mut p = RecallParams::new(text.clone());
        p.scope = Some(scope.clone());
        p.k = Some(10);
        p.fresh = Some(false);
        loop {
            polls += 1;
            if b.recall(&p)?.hits.iter().any(|h| h.memory.id == id) {
                delays.push(acked.elapsed().as_secs_f64() * 1000.0);
                break;
            }
            if acked.elapsed() > PROPAGATION_TIMEOUT {
                missed += 1;
                break;
            }
            std::thread::sleep(PROPAGATION_POLL);
        }
    }
    delays.sort_by(f64::total_cmp);
    acks.sort_by(f64::total_cmp);
    Ok(json!({
        "measurements": texts.len(),
        "found": delays.len(),
        "missed_after_30s": missed,
        "recall_polls": polls,
        "delay_ms_p50": percentile(&delays, 0.50),
        "delay_ms_p90": percentile(&delays, 0.90),
        "delay_ms_p99": percentile(&delays, 0.99),
        "delay_ms_min": delays.first(),
        "delay_ms_max": delays.last(),
        "remember_on_a_ms_p50": percentile(&acks, 0.50),
        "remember_on_a_ms_p99": percentile(&acks, 0.99),
    }))
}

/// The git commit of the working directory, when it is a repository.
fn git_commit() -> Option<String> {
    let out = Command::new("git").args(["rev-parse", "HEAD"]).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The admin URL: given, or from `scripts/pg.sh start`.
fn pg_admin(a: &TeamBenchArgs) -> anyhow::Result<String> {
    if let Some(u) = &a.pg_url {
        return Ok(u.clone());
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/pg.sh");
    let out = Command::new("bash").arg(&script).arg("start").output().context("running scripts/pg.sh")?;
    if !out.status.success() {
        bail!("scripts/pg.sh start failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(String::from_utf8(out.stdout)?.trim().to_string())
}

/// Database sizes: the whole database and its largest relations (with indexes, TOAST).
fn db_sizes(url: &str) -> anyhow::Result<Value> {
    let mut c = postgres::Client::connect(url, postgres::NoTls)?;
    let total: i64 = c.query_one("SELECT pg_database_size(current_database())", &[])?.get(0);
    let rows = c.query(
        "SELECT relname::text, pg_total_relation_size(relid) FROM pg_catalog.pg_statio_user_tables \
         ORDER BY 2 DESC LIMIT 8",
        &[],
    )?;
    let tables: Vec<Value> =
        rows.iter().map(|r| json!({ "table": r.get::<_, String>(0), "bytes": r.get::<_, i64>(1) })).collect();
    let memories: i64 = c.query_one("SELECT count(*) FROM memories", &[])?.get(0);
    Ok(json!({
        "bytes": total,
        "mib": mib(total as u64),
        "memories_rows": memories,
        "largest_tables": tables,
    }))
}

/// Runs `amber-eval team-bench`.
pub(crate) fn run(a: TeamBenchArgs) -> anyhow::Result<()> {
    let out = a.out.clone();
    let report = bench(a)?;
    write_report(&report, out.as_deref())
}

fn bench(a: TeamBenchArgs) -> anyhow::Result<Value> {
    if a.memories == 0 || a.queries == 0 {
        bail!("--memories and --queries must be at least 1");
    }
    let started_at = chrono::Utc::now().to_rfc3339();
    let questions = longmemeval::load(&a.data)?;
    let want = a.memories + a.propagation;
    let corpus = bench_corpus(&questions, want);
    if corpus.len() < want {
        bail!("{} holds only {} usable paragraphs, fewer than {want}", a.data.display(), corpus.len());
    }
    let queries: Vec<String> = questions.iter().map(|q| q.question.clone()).cycle().take(a.queries).collect();
    drop(questions);
    let (memories, extra) = corpus.split_at(a.memories);
    let run_id = std::process::id();
    let extra: Vec<String> =
        extra.iter().enumerate().map(|(i, p)| format!("team-bench {run_id} note {i}: {p}")).collect();

    // PostgreSQL and a fresh database.
    let admin = pg_admin(&a)?;
    let db = format!("amber_team_bench_{run_id}_{}", chrono::Utc::now().timestamp());
    {
        let mut c = postgres::Client::connect(&admin, postgres::NoTls).context("connecting to PostgreSQL")?;
        c.batch_execute(&format!("CREATE DATABASE {db}"))?;
    }
    let url = admin.rsplit_once('/').map(|(base, _)| format!("{base}/{db}")).context("admin URL")?;
    let result = with_database(&a, &url, memories, &extra, &queries);
    let sizes = db_sizes(&url);
    if !a.keep_db {
        let mut c = postgres::Client::connect(&admin, postgres::NoTls)?;
        c.batch_execute(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))?;
    }
    let mut report = result?;
    report["database"] = json!({ "name": db, "kept": a.keep_db, "size": sizes? });
    report["started_at"] = json!(started_at);
    report["finished_at"] = json!(chrono::Utc::now().to_rfc3339());
    report["git_commit"] = json!(git_commit());
    report["data_file"] = json!(a.data);
    report["memories"] = json!(a.memories);
    report["threads"] = json!(std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
    let d = &report["database"]["size"];
    if let (Some(bytes), Some(rows)) = (d["bytes"].as_f64(), d["memories_rows"].as_f64()) {
        report["database"]["bytes_per_memory"] = json!(bytes / rows.max(1.0));
    }
    print_summary(&report);
    Ok(report)
}

/// Everything that needs the nodes; they are stopped when this returns.
fn with_database(
    a: &TeamBenchArgs,
    url: &str,
    memories: &[String],
    extra: &[String],
    queries: &[String],
) -> anyhow::Result<Value> {
    let amberd = match &a.amberd {
        Some(p) => p.clone(),
        None => std::env::current_exe()?.with_file_name("amberd"),
    };
    let tmp = tempfile::Builder::new().prefix("amber-team-bench-").tempdir()?;
    let team: Scope = TEAM_SCOPE.parse()?;
    let local: Scope = LOCAL_SCOPE.parse()?;
    eprintln!(
        "team-bench: {} nodes A, B (team) and L (local) under {}",
        amberd.display(),
        tmp.path().display()
    );
    let na = Node::new("A", &amberd, &tmp.path().join("a"), Some(url))?;
    let mut nb = Node::new("B", &amberd, &tmp.path().join("b"), Some(url))?;
    let nl = Node::new("L", &amberd, &tmp.path().join("l"), None)?;
    let (mut ca, mut cb, mut cl) = (na.client()?, nb.client()?, nl.client()?);
    wait_connected(&mut ca, Duration::from_secs(120))?;
    wait_connected(&mut cb, Duration::from_secs(120))?;
    let model = cl.status()?.engine["model"].clone();

    // 1. Ingest, team on A then local on L, back to back.
    eprintln!("team-bench: ingest {} memories into {TEAM_SCOPE} on A", memories.len());
    let b_before = side_status(&mut cb, true)?;
    let cb = if a.follower_during_ingest {
        Some(cb)
    } else {
        drop(cb);
        nb.stop()?;
        None
    };
    let team_ingest = ingest(&mut ca, true, &team, memories)?;
    eprintln!("team-bench: team ingest {:.1}/s", team_ingest["memories_per_second"].as_f64().unwrap_or(0.0));
    // B follows A's writes meanwhile (or starts now); wait until it has caught up so it
    // does not share the cores with L's ingest.
    let t = Instant::now();
    let mut cb = match cb {
        Some(cb) => cb,
        None => {
            nb.start()?;
            let mut cb = nb.client()?;
            wait_connected(&mut cb, Duration::from_secs(3600))?;
            cb
        }
    };
    let b_after = wait_complete(&mut cb, true, memories.len() as u64, Duration::from_secs(3600))?;
    let b_catch_up = t.elapsed().as_secs_f64();
    // A restarted B counts from its start.
    let (be0, bc0) = if a.follower_during_ingest { stats(&b_before) } else { (0, 0) };
    let (be1, bc1) = stats(&b_after);
    let b_follow = json!({
        "running_during_a_ingest": a.follower_during_ingest,
        "seconds_after_a_complete": b_catch_up,
        "chunks_embedded": be1 - be0,
        "chunks_from_cache": bc1 - bc0,
        "vectors": b_after["vectors"],
        "memories": b_after["memories"],
    });
    eprintln!("team-bench: B caught up {b_catch_up:.1}s after A; B embedded {} chunks", be1 - be0);
    eprintln!("team-bench: ingest {} memories into {LOCAL_SCOPE} on L", memories.len());
    let local_ingest = ingest(&mut cl, false, &local, memories)?;
    eprintln!(
        "team-bench: local ingest {:.1}/s",
        local_ingest["memories_per_second"].as_f64().unwrap_or(0.0)
    );
    let ratio = |t: &Value, l: &Value, k: &str| match (t[k].as_f64(), l[k].as_f64()) {
        (Some(t), Some(l)) if l > 0.0 => json!(t / l),
        _ => Value::Null,
    };
    let ingest_ratio = ratio(&team_ingest, &local_ingest, "memories_per_second");

    // 2. Recall latency, B in the team scope then L in the local one.
    eprintln!("team-bench: {} recalls on B ({TEAM_SCOPE}) then on L ({LOCAL_SCOPE})", queries.len());
    let recall_team = recalls(&mut cb, &team, queries)?;
    let recall_local = recalls(&mut cl, &local, queries)?;
    let recall_ratio = json!({
        "p50": ratio(&recall_team, &recall_local, "ms_p50"),
        "p99": ratio(&recall_team, &recall_local, "ms_p99"),
    });

    // 3. Propagation A -> B.
    eprintln!("team-bench: propagation, {} memories remembered on A, polled on B", extra.len());
    let b0 = stats(&side_status(&mut cb, true)?);
    let prop = propagation(&mut ca, &mut cb, &team, extra)?;
    let b1 = stats(&side_status(&mut cb, true)?);
    let mut prop = prop;
    prop["b_chunks_embedded"] = json!(b1.0 - b0.0);
    prop["b_chunks_from_cache"] = json!(b1.1 - b0.1);

    // 4. Rebuild B from PostgreSQL.
    let want_b = u(&side_status(&mut ca, true)?, "memories");
    let b_team_dir_bytes = dir_bytes(&nb.data.join("team"));
    eprintln!("team-bench: rebuilding B ({want_b} team memories) from PostgreSQL");
    drop(cb);
    nb.stop()?;
    std::fs::remove_dir_all(nb.data.join("team")).context("deleting B's team indexes")?;
    let t = Instant::now();
    let ready = nb.start()?;
    let mut cb = nb.client()?;
    wait_connected(&mut cb, Duration::from_secs(3600))?;
    let connected = t.elapsed().as_secs_f64();
    let after = wait_complete(&mut cb, true, want_b, Duration::from_secs(3600))?;
    let total = t.elapsed().as_secs_f64();
    let (re, rc) = stats(&after);
    let rebuild = json!({
        "memories": want_b,
        "seconds_to_ready_line": ready,
        "seconds_to_connected": connected,
        "seconds_to_indexes_complete": total,
        "memories_per_second": want_b as f64 / total,
        "chunks_embedded": re,
        "chunks_from_cache": rc,
        "vectors": after["vectors"],
        "index_events": after["index_events"],
        "team_index_dir_mib_before": mib(b_team_dir_bytes),
        "team_index_dir_mib_after": mib(dir_bytes(&nb.data.join("team"))),
    });
    eprintln!("team-bench: B rebuilt in {total:.1}s, embedded {re}, from cache {rc}");

    // 5. Resident memory and disk of each node.
    let node_end = |n: &Node| {
        json!({
            "pid": n.pid(),
            "rss_mib": n.pid().and_then(rss_of),
            "data_dir_mib": mib(dir_bytes(&n.data)),
            "team_dir_mib": mib(dir_bytes(&n.data.join("team"))),
        })
    };
    let nodes = json!({ "A": node_end(&na), "B": node_end(&nb), "L": node_end(&nl) });
    drop((ca, cb, cl));
    drop((na, nb, nl));
    Ok(json!({
        "benchmark": "team memory on PostgreSQL vs local: three private amberd over their sockets",
        "model": model,
        "corpus": "LongMemEval turn paragraphs of 40-600 characters, deduplicated (as `bench`)",
        "postgres": "scripts/pg.sh: PostgreSQL 15 on 127.0.0.1, fsync on, same machine",
        "ingest": {
            "order": "team on A, then (after B caught up) local on L, back to back (B running during A's ingest unless `--follower-during-ingest false`); batches of 100; timed from the first batch to the node's indexes covering everything",
            "team_on_a": team_ingest,
            "b_following_a": b_follow,
            "local_on_l": local_ingest,
            "team_over_local_memories_per_second": ingest_ratio,
        },
        "recall": {
            "how": "top 10, hybrid, fresh, the dev questions as queries, one client, 10 untimed warm-ups; B then L",
            "team_on_b": recall_team,
            "local_on_l": recall_local,
            "team_over_local": recall_ratio,
        },
        "propagation": prop,
        "rebuild_b": rebuild,
        "nodes_at_end": nodes,
    }))
}

fn print_summary(r: &Value) {
    let f = |v: &Value| v.as_f64().map(|x| format!("{x:.2}")).unwrap_or_else(|| "-".into());
    eprintln!();
    eprintln!("| measure | team | local | team/local |");
    eprintln!("|---|---|---|---|");
    let i = &r["ingest"];
    eprintln!(
        "| ingest memories/s | {} | {} | {} |",
        f(&i["team_on_a"]["memories_per_second"]),
        f(&i["local_on_l"]["memories_per_second"]),
        f(&i["team_over_local_memories_per_second"])
    );
    let c = &r["recall"];
    eprintln!(
        "| recall p50 / p99 ms | {} / {} | {} / {} | {} / {} |",
        f(&c["team_on_b"]["ms_p50"]),
        f(&c["team_on_b"]["ms_p99"]),
        f(&c["local_on_l"]["ms_p50"]),
        f(&c["local_on_l"]["ms_p99"]),
        f(&c["team_over_local"]["p50"]),
        f(&c["team_over_local"]["p99"])
    );
    let p = &r["propagation"];
    eprintln!("| propagation p50 / p99 ms | {} / {} | | |", f(&p["delay_ms_p50"]), f(&p["delay_ms_p99"]));
    let b = &r["rebuild_b"];
    eprintln!(
        "| rebuild B s (embedded / from cache) | {} ({} / {}) | | |",
        f(&b["seconds_to_indexes_complete"]),
        b["chunks_embedded"],
        b["chunks_from_cache"]
    );
    eprintln!();
}

//! `amber-eval kg-bench`: `kg_traverse` latency on a synthetic knowledge graph, against
//! a real daemon over its socket.
//!
//! The graph is generated from a fixed seed in its own scope (`bench/kg-<seed>`):
//! entities `entity 0` .. `entity N-1`; each fact's subject is uniform, its object drawn
//! from a Zipf distribution over the entities (so a few hubs take part in thousands of
//! facts); ~10% literal objects, ~10% validity windows, a few invalidations, ~30% of the
//! facts citing a source memory. Memories naming entities are filed between the entities
//! and the facts, so the daemon links them as mentions at commit. Then, per hop count,
//! `--queries` traversals from uniformly drawn start entities, one client, closed loop;
//! each timed from sending the request to the typed result being parsed.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Child;

use crate::cmd::node::retry_busy;
use std::time::{Duration, Instant};

use amber_core::graph::{NewEntity, NewFact};
use amber_core::{MemoryId, Millis, NewMemory, Scope};
use amber_ipc::Client;
use amber_ipc::protocol::{
    KgAddParams, KgInvalidateParams, KgStatsParams, KgTraverseParams, KgTraverseResult,
};
use anyhow::{Context, bail};
use clap::Args;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::common::{Rng, percentile, write_report};

/// Arguments of `amber-eval kg-bench`.
#[derive(Args, Debug)]
pub(crate) struct KgBenchArgs {
    /// A running daemon's socket [default: start a private amberd on a temporary data dir].
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// The amberd binary for the private daemon [default: the amberd next to this program].
    #[arg(long, value_name = "PATH")]
    amberd: Option<PathBuf>,
    /// The private daemon's data dir, kept (a rerun reuses the graph already there)
    /// [default: a temporary one, removed at the end].
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Facts to generate.
    #[arg(long, default_value_t = 100_000)]
    facts: usize,
    /// Entities to generate.
    #[arg(long, default_value_t = 20_000)]
    entities: usize,
    /// Memories naming entities, filed so that traversals have mentions to return.
    #[arg(long, default_value_t = 3_000)]
    memories: usize,
    /// Traversals per configuration.
    #[arg(long, default_value_t = 2_000)]
    queries: usize,
    /// Hop counts to measure (default path limit), comma-separated; the largest is also
    /// measured with `--wide-limit`.
    #[arg(long, value_delimiter = ',', default_value = "1,2,3")]
    hops: Vec<usize>,
    /// The path limit of the extra run at the largest hop count (0: no extra run).
    #[arg(long, default_value_t = 1000)]
    wide_limit: usize,
    /// Exponent of the Zipf distribution the objects are drawn from (0: uniform).
    #[arg(long, default_value_t = 1.0)]
    zipf: f64,
    /// Memories per reached entity asked for (the daemon's default is 3).
    #[arg(long, default_value_t = 3)]
    memories_per_node: usize,
    /// The generator's seed (also names the scope).
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Write the results (JSON) here; they are also printed.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// Entities, facts or memories per call (the protocol's `MAX_KG_BATCH` and `MAX_BATCH`).
const BATCH: usize = 1000;
/// Windows are placed around 2025-01-01 (fixed, so a rerun generates the same graph).
const BASE: Millis = 1_735_689_600_000;
const DAY: Millis = 86_400_000;
/// Traversals run before timing starts (not counted).
const WARMUP: usize = 20;

const PREDICATES: &[&str] =
    &["knows", "works_with", "reports_to", "member_of", "located_in", "depends_on", "owns", "uses"];
const LITERAL_PREDICATES: &[&str] = &["status", "version", "priority"];
const TOPICS: &[&str] = &[
    "the budget review",
    "the migration plan",
    "a production incident",
    "the quarterly roadmap",
    "hiring for the platform team",
    "the new billing service",
    "an offsite in Lisbon",
    "the security audit",
];

/// Draws entity ranks with probability proportional to 1 / (rank + 1)^s.
struct Zipf(Vec<f64>);

impl Zipf {
    fn new(n: usize, s: f64) -> Zipf {
        let mut acc = 0.0;
        Zipf(
            (0..n)
                .map(|i| {
                    acc += 1.0 / ((i + 1) as f64).powf(s);
                    acc
                })
                .collect(),
        )
    }
    fn draw(&self, rng: &mut Rng) -> usize {
        let x = rng.unit() * self.0.last().copied().unwrap_or(0.0);
        self.0.partition_point(|&c| c < x).min(self.0.len() - 1)
    }
}

fn name(i: usize) -> String {
    format!("entity {i}")
}

/// A daemon this benchmark started: shut down (then killed if need be) when dropped.
struct Private {
    child: Child,
    socket: PathBuf,
    log: PathBuf,
    _tmp: Option<tempfile::TempDir>,
}

impl Private {
    fn start(amberd: &Path, root: &Path, tmp: Option<tempfile::TempDir>) -> anyhow::Result<Private> {
        let socket = root.join("run").join("amber.sock");
        let log = root.join("amberd.log");
        std::fs::create_dir_all(root)?;
        let mut child =
            crate::cmd::node::amberd_command(amberd, root, &root.join("data"), &socket, "no-config.toml")
                .arg("--foreground")
                .stderr(std::fs::File::create(&log)?)
                .spawn()
                .with_context(|| format!("starting {}", amberd.display()))?;
        let mut line = String::new();
        let stdout = child.stdout.take().context("amberd's stdout")?;
        BufReader::new(stdout).read_line(&mut line)?;
        if !line.starts_with("amberd ready on ") {
            let _ = child.kill();
            let _ = child.wait();
            let err = std::fs::read_to_string(&log).unwrap_or_default();
            bail!("amberd did not start: {}", err.trim());
        }
        Ok(Private { child, socket, log, _tmp: tmp })
    }
}

impl Drop for Private {
    fn drop(&mut self) {
        if let Ok(mut c) = Client::connect(&self.socket) {
            let _ = c.shutdown();
        }
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Loads the synthetic graph and its memories; returns the load report.
fn load(c: &mut Client, a: &KgBenchArgs, scope: &Scope) -> anyhow::Result<Value> {
    let mut rng = Rng::new(a.seed);
    let zipf = Zipf::new(a.entities, a.zipf);
    let mut busy = 0;

    // 1. The entities, so that the memories below are linked when they are committed.
    let t = Instant::now();
    for lo in (0..a.entities).step_by(BATCH) {
        let entities: Vec<NewEntity> = (lo..(lo + BATCH).min(a.entities))
            .map(|i| NewEntity { name: name(i), kind: Some("thing".into()), aliases: vec![] })
            .collect();
        let p = KgAddParams { scope: Some(scope.clone()), entities, facts: vec![] };
        busy += retry_busy(|| c.kg_add(&p))?.1;
    }
    let entities_s = t.elapsed().as_secs_f64();
    eprintln!("kg-bench: {} entities in {entities_s:.1}s", a.entities);

    // 2. Memories naming two or three entities (the second one Zipf-drawn, like objects).
    let t = Instant::now();
    let mut memory_ids: Vec<MemoryId> = Vec::with_capacity(a.memories);
    for lo in (0..a.memories).step_by(BATCH) {
        let batch: Vec<NewMemory> = (lo..(lo + BATCH).min(a.memories))
            .map(|j| {
                let (x, y) = (rng.below(a.entities), zipf.draw(&mut rng));
                let topic = TOPICS[rng.below(TOPICS.len())];
                let text = if rng.below(3) == 0 {
                    let z = rng.below(a.entities);
                    format!("Note {j}: {} and {} met {} about {topic}.", name(x), name(y), name(z))
                } else {
                    format!("Note {j}: {} talked with {} about {topic}.", name(x), name(y))
                };
                NewMemory::new(text).in_scope(scope.clone())
            })
            .collect();
        let (r, b) = retry_busy(|| c.remember_batch(batch.clone()))?;
        busy += b;
        memory_ids.extend(r.results.into_iter().map(|r| r.id));
    }
    let memories_filed_s = t.elapsed().as_secs_f64();
    // Indexing (embedding) runs behind the commits; wait for it so it does not share the
    // cores with the measurements.
    loop {
        let s = c.status()?;
        let (done, all) = (s.engine["indexed_through"].as_u64(), s.engine["committed_through"].as_u64());
        if done >= all {
            break;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    let memories_s = t.elapsed().as_secs_f64();
    eprintln!(
        "kg-bench: {} memories filed in {memories_filed_s:.1}s, indexed in {memories_s:.1}s",
        a.memories
    );

    // 3. The facts.
    let t = Instant::now();
    let mut object_degree: HashMap<usize, usize> = HashMap::new();
    let mut fact_ids = Vec::with_capacity(a.facts);
    let (mut literals, mut windows, mut sourced) = (0, 0, 0);
    for lo in (0..a.facts).step_by(BATCH) {
        let facts: Vec<NewFact> = (lo..(lo + BATCH).min(a.facts))
            .map(|i| {
                // Every entity is a subject at least once, then subjects are uniform.
                let s = if i < a.entities { i } else { rng.below(a.entities) };
                let mut f = NewFact { subject: name(s), ..NewFact::default() };
                if rng.below(10) == 0 {
                    literals += 1;
                    f.predicate = LITERAL_PREDICATES[rng.below(LITERAL_PREDICATES.len())].into();
                    f.literal = Some(format!("value {}", rng.below(50)));
                } else {
                    let mut o = zipf.draw(&mut rng);
                    if o == s {
                        o = (o + 1) % a.entities;
                    }
                    *object_degree.entry(o).or_default() += 1;
                    f.predicate = PREDICATES[rng.below(PREDICATES.len())].into();
                    f.object = Some(name(o));
                }
                if rng.below(10) == 0 {
                    windows += 1;
                    let from = BASE - rng.below(3 * 365) as Millis * DAY;
                    f.valid_from = Some(from);
                    if rng.below(5) < 3 {
                        f.valid_to = Some(from + (30 + rng.below(3 * 365)) as Millis * DAY);
                    }
                }
                if !memory_ids.is_empty() && rng.below(10) < 3 {
                    sourced += 1;
                    f.sources = vec![memory_ids[rng.below(memory_ids.len())].clone()];
                }
                f
            })
            .collect();
        let p = KgAddParams { scope: Some(scope.clone()), entities: vec![], facts };
        let (r, b) = retry_busy(|| c.kg_add(&p))?;
        busy += b;
        fact_ids.extend(r.facts.into_iter().map(|f| (f.id, f.valid_from)));
    }
    let facts_s = t.elapsed().as_secs_f64();
    eprintln!("kg-bench: {} facts in {facts_s:.1}s", a.facts);

    // 4. A few invalidations: one fact in 200 stops holding at a past date.
    let t = Instant::now();
    let n_inval = fact_ids.len() / 200;
    for _ in 0..n_inval {
        let (fact, from) = fact_ids[rng.below(fact_ids.len())];
        let mut at = BASE - rng.below(365) as Millis * DAY;
        if let Some(from) = from.filter(|&f| f >= at) {
            at = from + (1 + rng.below(365)) as Millis * DAY;
        }
        let p = KgInvalidateParams { fact, at: Some(at), reason: Some("kg-bench".into()), scope: None };
        busy += retry_busy(|| c.kg_invalidate(&p))?.1;
    }
    let inval_s = t.elapsed().as_secs_f64();

    let mut degrees: Vec<usize> = object_degree.values().copied().collect();
    degrees.sort_unstable_by(|a, b| b.cmp(a));
    Ok(json!({
        "entities_seconds": entities_s,
        "memories_commit_seconds": memories_filed_s,
        "memories_indexed_seconds": memories_s,
        "facts_seconds": facts_s,
        "facts_per_second": a.facts as f64 / facts_s,
        "invalidations": n_inval,
        "invalidations_seconds": inval_s,
        "busy_retries": busy,
        "generated": {
            "literal_facts": literals,
            "windowed_facts": windows,
            "facts_with_a_source": sourced,
            "top_object_degrees": degrees.iter().take(5).collect::<Vec<_>>(),
            "median_object_degree": degrees.get(degrees.len() / 2),
        },
    }))
}

/// One configuration: `queries` traversals from uniformly drawn starts.
fn measure(
    c: &mut Client,
    a: &KgBenchArgs,
    scope: &Scope,
    hops: usize,
    limit: Option<usize>,
) -> anyhow::Result<Value> {
    // The same start sequence for every configuration.
    let mut rng = Rng::new(a.seed ^ 0x5EED);
    let params = |rng: &mut Rng| KgTraverseParams {
        scope: Some(scope.clone()),
        start: name(rng.below(a.entities)),
        max_hops: Some(hops),
        as_of: None,
        predicates: vec![],
        limit,
        memories_per_node: Some(a.memories_per_node),
    };
    let mut warm = Rng::new(a.seed ^ 0x0A17);
    for _ in 0..WARMUP {
        c.kg_traverse(&params(&mut warm))?;
    }
    let mut lat = Vec::with_capacity(a.queries);
    let (mut paths, mut nodes, mut memories, mut truncated, mut bytes, mut unknown) = (0, 0, 0, 0, 0, 0);
    for _ in 0..a.queries {
        let p = params(&mut rng);
        let t = Instant::now();
        let v = c.call_value("kg_traverse", serde_json::to_value(&p)?)?;
        let r = KgTraverseResult::deserialize(&v)?;
        lat.push(t.elapsed().as_secs_f64() * 1000.0);
        bytes += serde_json::to_string(&v)?.len();
        if r.start.is_none() {
            unknown += 1;
        }
        paths += r.paths.len();
        nodes += r.nodes.len();
        memories += r.memories.len();
        truncated += usize::from(r.truncated);
    }
    lat.sort_by(f64::total_cmp);
    let n = a.queries.max(1) as f64;
    Ok(json!({
        "hops": hops,
        "limit": limit.unwrap_or(amber_tiers::graph::DEFAULT_PATHS),
        "queries": lat.len(),
        "ms_p50": percentile(&lat, 0.50),
        "ms_p95": percentile(&lat, 0.95),
        "ms_p99": percentile(&lat, 0.99),
        "ms_max": lat.last(),
        "ms_mean": lat.iter().sum::<f64>() / n,
        "mean_paths": paths as f64 / n,
        "mean_nodes": nodes as f64 / n,
        "mean_memories": memories as f64 / n,
        "truncated_fraction": truncated as f64 / n,
        "mean_response_kib": bytes as f64 / n / 1024.0,
        "unknown_starts": unknown,
    }))
}

fn fmt(v: &Value) -> String {
    v.as_f64().map(|x| format!("{x:.2}")).unwrap_or_else(|| "-".into())
}

/// Runs `amber-eval kg-bench`.
pub(crate) fn run(a: KgBenchArgs) -> anyhow::Result<()> {
    let out = a.out.clone();
    let report = bench(a)?;
    write_report(&report, out.as_deref())
}

/// Loads (unless the scope already holds the graph), measures and reports.
fn bench(a: KgBenchArgs) -> anyhow::Result<Value> {
    if a.entities < 2 || a.facts == 0 || a.queries == 0 || a.hops.is_empty() {
        bail!("--entities must be at least 2, --facts, --queries and --hops not empty");
    }
    let scope: Scope = format!("bench/kg-{}", a.seed).parse()?;
    let private = match &a.socket {
        Some(_) => None,
        None => {
            let amberd = match &a.amberd {
                Some(p) => p.clone(),
                None => std::env::current_exe()?.with_file_name("amberd"),
            };
            let (root, tmp) = match &a.data_dir {
                Some(d) => (d.clone(), None),
                None => {
                    let tmp = tempfile::Builder::new().prefix("amber-kg-bench-").tempdir()?;
                    (tmp.path().to_path_buf(), Some(tmp))
                }
            };
            eprintln!("kg-bench: starting {} on {}", amberd.display(), root.display());
            Some(Private::start(&amberd, &root, tmp)?)
        }
    };
    let socket = match (&a.socket, &private) {
        (Some(s), _) => s.clone(),
        (None, Some(p)) => p.socket.clone(),
        (None, None) => unreachable!("a private daemon is started when no socket is given"),
    };
    let mut c = Client::connect(&socket).with_context(|| format!("connecting to {}", socket.display()))?;
    let before = c.kg_stats(&KgStatsParams { scope: Some(scope.clone()) })?;
    let load_report = if before.stats.facts > 0 {
        eprintln!("kg-bench: {scope} already holds {} facts, reusing them", before.stats.facts);
        json!("reused the graph already in the scope")
    } else {
        load(&mut c, &a, &scope)?
    };
    let stats = c.kg_stats(&KgStatsParams { scope: Some(scope.clone()) })?;

    let mut configs: Vec<(usize, Option<usize>)> = a.hops.iter().map(|&h| (h, None)).collect();
    if a.wide_limit > 0 {
        configs.push((a.hops.iter().copied().max().unwrap_or(3), Some(a.wide_limit)));
    }
    let mut runs = Vec::new();
    for (hops, limit) in configs {
        eprintln!("kg-bench: {} traversals, {hops} hops, limit {limit:?}", a.queries);
        runs.push(measure(&mut c, &a, &scope, hops, limit)?);
    }
    let status = c.status()?;
    let rss = std::fs::read_to_string(format!("/proc/{}/status", status.pid)).ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("VmRSS:"))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
            .map(|kb| kb / 1024.0)
    });

    eprintln!();
    eprintln!(
        "| hops | limit | p50 ms | p95 ms | p99 ms | max ms | paths | nodes | memories | truncated | KiB |"
    );
    eprintln!("|---|---|---|---|---|---|---|---|---|---|---|");
    for r in &runs {
        eprintln!(
            "| {} | {} | {} | {} | {} | {} | {:.1} | {:.1} | {:.1} | {:.2} | {:.1} |",
            r["hops"],
            r["limit"],
            fmt(&r["ms_p50"]),
            fmt(&r["ms_p95"]),
            fmt(&r["ms_p99"]),
            fmt(&r["ms_max"]),
            r["mean_paths"].as_f64().unwrap_or(0.0),
            r["mean_nodes"].as_f64().unwrap_or(0.0),
            r["mean_memories"].as_f64().unwrap_or(0.0),
            r["truncated_fraction"].as_f64().unwrap_or(0.0),
            r["mean_response_kib"].as_f64().unwrap_or(0.0),
        );
    }
    eprintln!();
    let report = json!({
        "benchmark": "kg_traverse on amberd over its socket: one client, closed loop",
        "socket": socket,
        "private_daemon": private.is_some(),
        "daemon_log": private.as_ref().map(|p| p.log.clone()),
        "daemon_pid": status.pid,
        "daemon_rss_mib": rss,
        "threads": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        "scope": scope,
        "seed": a.seed,
        "zipf": a.zipf,
        "generated": { "entities": a.entities, "facts": a.facts, "memories": a.memories },
        "graph": stats.stats,
        "memories_in_store": status.engine["memories"],
        "load": load_report,
        "query": format!(
            "start uniform over the entities, as_of now, all predicates, memories_per_node {}, {WARMUP} untimed warm-up traversals per configuration; latency from sending the request to the typed result parsed",
            a.memories_per_node
        ),
        "runs": runs,
    });
    drop(c);
    drop(private);
    Ok(report)
}

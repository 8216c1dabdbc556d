//! `amber-eval interject`: the interjection gate calibration study.
//!
//! **LongMemEval.** Each question is an event in the middle of a session whose memory is the
//! question's own haystack, filed exactly as `amber-eval longmemeval` files it at session
//! level (user turns, one scope per question, the shared embedding cache). As a control,
//! the previous question's text is also asked against each haystack (an unrelated event:
//! nothing there is about it).
//!
//! **LoCoMo** (short memories). Each conversation's turns are filed one memory per turn,
//! exactly as `amber-eval locomo --granularity turn` files them (`speaker: text`, dated by
//! the session, one scope per conversation); each of its questions is an event against it:
//! categories 1 to 4 with evidence are answerable (gold = the evidence turns), category 5
//! (adversarial) is its own group, reported apart. As a control, each question's slot is
//! also asked, with the text of the question at the same position of the *previous*
//! conversation, against this one (unrelated: other people, other lives).
//!
//! Either way the event recalls its top `k` (hybrid, `now` = the question date, or the
//! conversation's last session date) and the gate looks at each candidate's score, by
//! default the cosine of its best chunk to the event text (`Evidence::best_chunk_cosine`),
//! in retrieval order or (`--order score`) best score first, as the daemon does. The sweep
//! and its rates are in [`amber_eval::interject`].

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use amber_core::{Hit, MemoryId, Query, Scope, SearchMode};
use amber_engine::Engine;
use amber_eval::interject::{self, Candidate, Event, Group, Judge, Policy, Row, ScoreKind, Target};
use amber_eval::locomo;
use amber_eval::longmemeval::{self, Granularity};
use anyhow::{Context, bail};
use clap::Args;
use serde_json::{Map, Value, json};

use crate::{EngineArgs, engine_config, file_haystack, open_engine, open_rankings, progress};

/// Which benchmark a data file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dataset {
    /// Tell from the file: `.xz` is LongMemEval, otherwise its first keys.
    Auto,
    /// LongMemEval (`.json` or `.json.xz`): whole sessions as memories.
    Longmemeval,
    /// LoCoMo (`locomo10.json` shape): one memory per turn.
    Locomo,
}

impl Dataset {
    fn as_str(self) -> &'static str {
        match self {
            Dataset::Auto => "auto",
            Dataset::Longmemeval => "longmemeval",
            Dataset::Locomo => "locomo",
        }
    }
}

impl std::str::FromStr for Dataset {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(Dataset::Auto),
            "longmemeval" | "lme" => Ok(Dataset::Longmemeval),
            "locomo" => Ok(Dataset::Locomo),
            other => Err(format!("unknown dataset {other:?} (expected auto, longmemeval or locomo)")),
        }
    }
}

/// The order in which the gate walks an event's candidates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// The fused (hybrid) ranking's order.
    Retrieval,
    /// Best gate score first (ties in retrieval order): the daemon's order.
    Score,
}

impl Order {
    fn as_str(self) -> &'static str {
        match self {
            Order::Retrieval => "retrieval",
            Order::Score => "score",
        }
    }
}

impl std::str::FromStr for Order {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "retrieval" => Ok(Order::Retrieval),
            "score" => Ok(Order::Score),
            other => Err(format!("unknown order {other:?} (expected retrieval or score)")),
        }
    }
}

/// Arguments of `amber-eval interject`.
#[derive(Args, Debug)]
pub struct InterjectArgs {
    /// A LongMemEval file (.json or .json.xz, the official format) or a LoCoMo file
    /// (locomo10.json format).
    #[arg(long)]
    data: PathBuf,
    /// auto, longmemeval or locomo. auto: a .xz file is LongMemEval, otherwise the first
    /// keys of the file tell (LongMemEval's question_id, has_answer; LoCoMo's sample_id,
    /// evidence, dia_id).
    #[arg(long, default_value = "auto")]
    dataset: Dataset,
    /// Candidates recalled per event (the top k of the fused ranking).
    #[arg(long, default_value_t = 3)]
    k: usize,
    /// The gate score: cosine (of the best chunk to the event), agreement (that cosine,
    /// only for a memory BM25 and the vectors both rank first) or fused (the RRF score over
    /// that of a memory first in both).
    #[arg(long, default_value = "cosine")]
    score: ScoreKind,
    /// The order the gate walks the candidates in: retrieval (the fused ranking) or score
    /// (best gate score first, as the daemon walks them).
    #[arg(long, default_value = "retrieval")]
    order: Order,
    /// The most memories one interjection carries.
    #[arg(long, default_value_t = 2)]
    max_fire: usize,
    /// Lowest gate of the sweep.
    #[arg(long, default_value_t = 0.30)]
    gate_from: f64,
    /// Highest gate of the sweep.
    #[arg(long, default_value_t = 0.90)]
    gate_to: f64,
    /// Step between gates.
    #[arg(long, default_value_t = 0.02)]
    gate_step: f64,
    /// Judge band widths below the gate, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "0,0.05,0.10")]
    bands: Vec<f64>,
    /// The target: least precision of fired memories on answerable questions.
    #[arg(long, default_value_t = 0.90)]
    target_precision: f64,
    /// The target: least fire rate on answerable questions.
    #[arg(long, default_value_t = 0.50)]
    target_fire: f64,
    /// The recommended band is the widest whose judge calls per unrelated event stay at
    /// most this.
    #[arg(long, default_value_t = 0.10)]
    max_judge_calls_unrelated: f64,
    /// Draw precision against fire rate, and the rates against the gate (PNG).
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Write the markdown table (every row) here; it is also printed to stderr.
    #[arg(long, value_name = "FILE")]
    table: Option<PathBuf>,
    #[command(flatten)]
    engine: EngineArgs,
}

/// The reference design's gate and judge band (on its own blended score).
const REFERENCE: (f64, f64) = (0.72, 0.10);

/// The dataset a file's name and first bytes point to: `.xz` is LongMemEval (LoCoMo is
/// not shipped compressed); otherwise the earliest key that only one of the formats has.
/// `None` when neither shows.
pub fn detect(name: &Path, head: &[u8]) -> Option<Dataset> {
    if name.extension().is_some_and(|e| e.eq_ignore_ascii_case("xz")) {
        return Some(Dataset::Longmemeval);
    }
    let head = String::from_utf8_lossy(head);
    let first = |keys: &[&str]| keys.iter().filter_map(|k| head.find(&format!("\"{k}\""))).min();
    let lme = first(&["question_id", "haystack_sessions", "has_answer", "answer_session_ids"]);
    let locomo = first(&["sample_id", "dia_id", "evidence", "adversarial_answer"]);
    match (lme, locomo) {
        (Some(a), Some(b)) => Some(if a < b { Dataset::Longmemeval } else { Dataset::Locomo }),
        (Some(_), None) => Some(Dataset::Longmemeval),
        (None, Some(_)) => Some(Dataset::Locomo),
        (None, None) => None,
    }
}

fn resolve_dataset(a: &InterjectArgs) -> anyhow::Result<Dataset> {
    if a.dataset != Dataset::Auto {
        return Ok(a.dataset);
    }
    let mut head = Vec::new();
    std::fs::File::open(&a.data)
        .with_context(|| format!("reading {}", a.data.display()))?
        .take(1 << 16)
        .read_to_end(&mut head)
        .with_context(|| format!("reading {}", a.data.display()))?;
    detect(&a.data, &head).with_context(|| {
        format!(
            "cannot tell which benchmark {} holds: pass --dataset longmemeval or locomo",
            a.data.display()
        )
    })
}

/// An event's candidates from a recall, with the doc ids each stands for (for the record),
/// in the order the gate walks them.
fn candidates(
    hits: &[Hit],
    memories: &HashMap<MemoryId, Vec<String>>,
    gold: &HashSet<&str>,
    (kind, fused_max, order): (ScoreKind, f64, Order),
) -> (Vec<Candidate>, Vec<Value>) {
    let mut out = Vec::new();
    let mut record = Vec::new();
    for (rank, h) in hits.iter().enumerate() {
        let ids = memories.get(&h.memory.id).cloned().unwrap_or_default();
        let is_gold = ids.iter().any(|id| gold.contains(id.as_str()));
        let cosine = h.evidence.best_chunk_cosine.map(f64::from);
        let score = kind.score(&h.evidence, fused_max);
        out.push(Candidate { score, gold: is_gold });
        record.push(json!({
            "rank": rank + 1,
            "ids": ids,
            "gold": is_gold,
            "score": score,
            "cosine": cosine,
            "fused": h.evidence.fused,
            "bm25_rank": h.evidence.bm25_rank,
            "bm25_score": h.evidence.bm25_score,
            "vector_rank": h.evidence.vector_rank,
        }));
    }
    if order == Order::Score {
        interject::order_by_score(&mut out);
    }
    (out, record)
}

fn rate(o: &interject::Outcome, g: Group, f: impl Fn(&interject::Rates) -> Option<f64>) -> Option<f64> {
    o.groups.get(&g).and_then(f)
}

/// What a dataset's collection produced: the events, and what the report says of them.
struct Collected {
    events: Vec<Event>,
    /// Report fields particular to the dataset (questions, quirks, skips).
    fields: Map<String, Value>,
    /// `config` fields particular to the dataset (corpus, `now`).
    config: Map<String, Value>,
    /// `definitions.event` and `definitions.gold`.
    event_definition: &'static str,
    gold_definition: &'static str,
}

/// How a recall is made and scored: search mode, top k, gate score, its normaliser, order.
#[derive(Clone, Copy)]
struct Recall {
    mode: SearchMode,
    k: usize,
    scoring: (ScoreKind, f64, Order),
}

impl Recall {
    fn hits(&self, engine: &Engine, scope: &Scope, text: &str, now: Option<i64>) -> anyhow::Result<Vec<Hit>> {
        Ok(engine.recall(&Query {
            text: text.to_string(),
            scope: Some(scope.clone()),
            also: Vec::new(),
            k: self.k,
            since: None,
            until: None,
            mode: self.mode,
            now,
            expand: amber_core::Expand::None,
        })?)
    }
}

type Records = Option<std::io::BufWriter<std::fs::File>>;

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// LongMemEval: each question against its own haystack (session level, user turns), and
/// the previous question against it.
fn collect_longmemeval(
    a: &InterjectArgs,
    engine: &Engine,
    r: Recall,
    records: &mut Records,
) -> anyhow::Result<Collected> {
    let mut questions = longmemeval::load(&a.data)?;
    let n_questions = questions.len();
    if let Some(n) = a.engine.limit {
        questions.truncate(n);
    }
    let pb = progress(questions.len(), "interject");
    let mut events: Vec<Event> = Vec::new();
    let mut unrelated_skipped = 0usize;
    let n = questions.len();
    for (i, q) in questions.iter().enumerate() {
        let hay = file_haystack(engine, q, Granularity::Session, false)?;
        let now = longmemeval::parse_date(&q.question_date);
        // The question against its own haystack.
        let official = longmemeval::gold_ids(q, Granularity::Session);
        let (group, gold): (Group, HashSet<&str>) = if longmemeval::is_abstention(q) {
            (Group::Abstention, HashSet::new())
        } else if !official.is_empty() {
            (Group::Answerable, official.iter().map(String::as_str).collect())
        } else {
            (Group::AssistantEvidence, q.answer_session_ids.iter().map(String::as_str).collect())
        };
        let hits = r.hits(engine, &hay.scope, &q.question, now)?;
        let (cands, rec) = candidates(&hits, &hay.memories, &gold, r.scoring);
        if let Some(w) = records.as_mut() {
            let line = json!({"question_id": q.question_id, "haystack": q.question_id,
                "group": group.as_str(), "candidates": rec});
            writeln!(w, "{line}")?;
        }
        events.push(Event { group, candidates: cands });
        // The previous question against this haystack, unless its evidence is in it.
        if n > 1 {
            let other = &questions[(i + n - 1) % n];
            let ids: HashSet<&str> = hay.docs.iter().map(|d| d.id.as_str()).collect();
            if other.answer_session_ids.iter().any(|s| ids.contains(s.as_str())) {
                unrelated_skipped += 1;
            } else {
                let hits = r.hits(engine, &hay.scope, &other.question, now)?;
                let (cands, rec) = candidates(&hits, &hay.memories, &HashSet::new(), r.scoring);
                if let Some(w) = records.as_mut() {
                    let line = json!({"question_id": other.question_id, "haystack": q.question_id,
                        "group": Group::Unrelated.as_str(), "candidates": rec});
                    writeln!(w, "{line}")?;
                }
                events.push(Event { group: Group::Unrelated, candidates: cands });
            }
        }
        pb.inc(1);
    }
    pb.finish_and_clear();
    Ok(Collected {
        events,
        fields: obj(json!({
            "n_questions": n_questions,
            "questions_run": questions.len(),
            "unrelated_skipped_evidence_in_haystack": unrelated_skipped,
        })),
        config: obj(json!({
            "granularity": "session",
            "corpus_roles": "user",
            "now": "the question date (for the unrelated control: the haystack's question date)",
        })),
        event_definition: "a question asked against its own haystack (groups answerable, assistant_evidence, abstention), or the previous question's text against it (group unrelated)",
        gold_definition: "answerable: the official session gold (answer_* sessions with a has_answer user turn); assistant_evidence: answer_session_ids; abstention and unrelated: none",
    })
}

/// The group of a LoCoMo question and its gold turns; `None` for a question of
/// categories 1 to 4 left without evidence (not an event: nothing to score it on).
pub fn locomo_group(qa: &locomo::Qa) -> Option<(Group, HashSet<&str>)> {
    let gold: HashSet<&str> = qa.evidence.iter().map(String::as_str).collect();
    if qa.category == 5 {
        Some((Group::Adversarial, gold))
    } else if gold.is_empty() {
        None
    } else {
        Some((Group::Answerable, gold))
    }
}

/// LoCoMo: one memory per turn, one scope per conversation; each question against its
/// conversation, and the question in the same position of the previous conversation
/// against it.
fn collect_locomo(
    a: &InterjectArgs,
    engine: &Engine,
    r: Recall,
    records: &mut Records,
) -> anyhow::Result<Collected> {
    let (mut convs, quirks) = locomo::load(&a.data)?;
    let n_questions: usize = convs.iter().map(|c| c.qa.len()).sum();
    if let Some(n) = a.engine.limit {
        convs.truncate(n);
    }
    let pb = progress(convs.iter().map(|c| c.qa.len()).sum(), "interject");
    let mut events: Vec<Event> = Vec::new();
    let mut no_evidence = 0usize;
    let mut by_category: BTreeMap<String, usize> = BTreeMap::new();
    let mut memories_filed = 0usize;
    let mut turns_filed = 0usize;
    let n = convs.len();
    for (ci, c) in convs.iter().enumerate() {
        let scope: Scope = format!("locomo/turn/{}", crate::scope_segment(&c.sample_id)).parse()?;
        let docs = c.turn_docs();
        turns_filed += docs.len();
        let (memories, _) = crate::ingest(engine, &scope, docs.into_iter())?;
        memories_filed += memories.len();
        let now = c.sessions.iter().filter_map(|s| s.time).max();
        let other = (n > 1).then(|| &convs[(ci + n - 1) % n]).filter(|o| !o.qa.is_empty());
        for (j, qa) in c.qa.iter().enumerate() {
            pb.inc(1);
            match locomo_group(qa) {
                None => no_evidence += 1,
                Some((group, gold)) => {
                    *by_category.entry(crate::category_name(qa.category)).or_default() += 1;
                    let hits = r.hits(engine, &scope, &qa.question, now)?;
                    let (cands, rec) = candidates(&hits, &memories, &gold, r.scoring);
                    if let Some(w) = records.as_mut() {
                        let line = json!({"sample_id": c.sample_id, "question": qa.question,
                            "category": qa.category, "evidence": qa.evidence, "haystack": c.sample_id,
                            "group": group.as_str(), "candidates": rec});
                        writeln!(w, "{line}")?;
                    }
                    events.push(Event { group, candidates: cands });
                }
            }
            // The control: another conversation's question in this slot, against this one.
            if let Some(o) = other {
                let oq = &o.qa[j % o.qa.len()];
                let hits = r.hits(engine, &scope, &oq.question, now)?;
                let (cands, rec) = candidates(&hits, &memories, &HashSet::new(), r.scoring);
                if let Some(w) = records.as_mut() {
                    let line = json!({"sample_id": o.sample_id, "question": oq.question,
                        "category": oq.category, "haystack": c.sample_id,
                        "group": Group::Unrelated.as_str(), "candidates": rec});
                    writeln!(w, "{line}")?;
                }
                events.push(Event { group: Group::Unrelated, candidates: cands });
            }
        }
    }
    pb.finish_and_clear();
    Ok(Collected {
        events,
        fields: obj(json!({
            "n_questions": n_questions,
            "questions_run": convs.iter().map(|c| c.qa.len()).sum::<usize>(),
            "conversations_run": convs.len(),
            "quirks": quirks,
            "questions_without_usable_evidence": no_evidence,
            "events_by_category": by_category,
            "turns_filed": turns_filed,
            "memories_filed": memories_filed,
        })),
        config: obj(json!({
            "granularity": "turn",
            "corpus_roles": "both speakers",
            "doc_text": "\"speaker: text\" per turn (an image's caption appended), dated by its session: as amber-eval locomo --granularity turn",
            "now": "the conversation's last session date (for the unrelated control too)",
        })),
        event_definition: "a question asked against its own conversation's turns (groups answerable: categories 1-4 with evidence; adversarial: category 5), or, for each question, the question at the same position of the previous conversation asked against it (group unrelated)",
        gold_definition: "answerable and adversarial: the question's evidence turns (a memory is gold if a turn it stands for is one); unrelated: none",
    })
}

/// Runs the study.
pub fn run(a: InterjectArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    if a.k == 0 || a.k > amber_core::MAX_K {
        bail!("--k must be between 1 and {}", amber_core::MAX_K);
    }
    if a.max_fire == 0 {
        bail!("--max-fire must be at least 1");
    }
    if a.bands.iter().any(|b| !(0.0..1.0).contains(b)) || a.bands.is_empty() {
        bail!("--bands must be widths in [0, 1)");
    }
    if !(a.gate_step > 0.0 && a.gate_from <= a.gate_to) {
        bail!("--gate-from must not exceed --gate-to and --gate-step must be positive");
    }
    let mode: SearchMode = a.engine.mode.parse()?;
    let sha = crate::sha256_file(&a.data)?;
    let dataset = resolve_dataset(&a)?;
    let (engine, _tmp) = open_engine(&a.engine)?;
    let embed_before = engine.stats().embed_seconds;
    let o = engine.options();
    let fused_max = f64::from(o.bm25_weight + o.vector_weight) / (f64::from(o.rrf_k) + 1.0);
    let r = Recall { mode, k: a.k, scoring: (a.score, fused_max, a.order) };
    let mut records = open_rankings(a.engine.rankings.as_deref())?;
    let collected = match dataset {
        Dataset::Locomo => collect_locomo(&a, &engine, r, &mut records)?,
        Dataset::Longmemeval | Dataset::Auto => collect_longmemeval(&a, &engine, r, &mut records)?,
    };
    if let Some(mut w) = records {
        w.flush()?;
    }
    engine.flush()?;
    let events = &collected.events;

    let gates = interject::thresholds(a.gate_from, a.gate_to, a.gate_step);
    let rows = interject::sweep(events, &gates, &a.bands, &[a.max_fire]);
    let reference: BTreeMap<&str, interject::Outcome> = [Judge::Off, Judge::Oracle]
        .into_iter()
        .map(|j| {
            let p = Policy { gate: REFERENCE.0, band: REFERENCE.1, max_fire: a.max_fire, judge: j };
            (if j == Judge::Off { "judge_off" } else { "judge_oracle" }, interject::outcome(events, &p))
        })
        .collect();
    let met = |f: &dyn Fn(&Row) -> bool| -> Vec<Value> {
        rows.iter().filter(|r| f(r)).map(|r| json!({"gate": r.gate, "band": r.band})).collect()
    };
    let target = Target { min_precision: a.target_precision, min_fire: a.target_fire };
    // The recommended gate, with up to max_fire memories and with one, and its band.
    let choose = |first_only: bool| {
        interject::recommend_gate(&rows, &target, first_only).map(|r| {
            let band = interject::recommend_band(&rows, r.gate, a.max_judge_calls_unrelated);
            let row = rows.iter().find(|x| x.gate == r.gate && x.band == band).unwrap_or(r);
            (row, first_only)
        })
    };
    let recommended = [choose(false), choose(true)];
    let describe = |c: &Option<(&Row, bool)>| match c {
        Some((r, first_only)) => json!({
            "gate": r.gate,
            "band": r.band,
            "max_fire": if *first_only { 1 } else { a.max_fire },
            "row": r,
        }),
        None => Value::Null,
    };
    let counts: BTreeMap<&str, usize> =
        Group::ALL.iter().map(|g| (g.as_str(), events.iter().filter(|e| e.group == *g).count())).collect();

    // The markdown table: every row, bands in turn.
    let table = interject::markdown_table(&rows);
    eprintln!("{table}");
    if let Some(path) = &a.table {
        std::fs::write(path, &table).with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(path) = &a.plot {
        plot(&rows, &a.bands, &recommended, (a.score, dataset), path)?;
    }

    let mut config = engine_config(&engine, &a.engine);
    config["k"] = json!(a.k);
    config["max_fire"] = json!(a.max_fire);
    config["order"] = json!(a.order.as_str());
    for (key, value) in collected.config {
        config[key] = value;
    }
    let mut report = obj(json!({
        "dataset": dataset.as_str(),
        "study": "interjection gate calibration",
        "data_file": a.data,
        "data_sha256": sha,
    }));
    report.extend(collected.fields);
    report.extend(obj(json!({
        "mode": mode.as_str(),
        "events": counts,
        "gate_score": a.score.as_str(),
        "gate_score_definition": match a.score {
            ScoreKind::Cosine => "cosine of the candidate's best chunk to the event text (Evidence::best_chunk_cosine)",
            ScoreKind::Agreement => "that cosine, only for a candidate BM25 and the vectors both rank first (others never fire)",
            ScoreKind::Fused => "fused RRF score / ((bm25_weight + vector_weight) / (rrf_k + 1)): 1 = first in both",
        },
        "definitions": {
            "event": collected.event_definition,
            "candidates": match a.order {
                Order::Retrieval => "the top k of the fused (hybrid) ranking, walked in that order",
                Order::Score => "the top k of the fused (hybrid) ranking, walked best gate score first (the daemon's order)",
            },
            "fires": "score >= gate, or in [gate - band, gate) and the judge says yes; at most max_fire memories",
            "gold": collected.gold_definition,
            "fire_rate": "events where at least one memory fired / events",
            "precision": "fired memories that are gold / fired memories",
            "precision_first": "firing events whose first fired memory is gold / firing events (the precision with max_fire = 1)",
            "precision_with_negatives": "precision over the answerable, abstention and unrelated events together (not assistant_evidence, not adversarial)",
            "band_rate": "events whose best candidate is in [gate - band, gate) / events: the judge alone decides them",
            "silence_rate": "1 - fire_rate (the figure that matters for abstention and unrelated events)",
            "judge_off": "the band never fires",
            "judge_oracle": "the judge says yes exactly to gold candidates: the upper bound of any judge",
        },
        "config": config,
        "gates": gates,
        "bands": a.bands,
        "reference_gate_0_72_band_0_10": reference,
        "target": {
            "min_precision": target.min_precision,
            "min_fire_rate": target.min_fire,
            "on": "answerable questions",
            "met_judge_off": met(&|r| target.met_by(&r.judge_off, false)),
            "met_judge_off_one_memory": met(&|r| target.met_by(&r.judge_off, true)),
            "met_judge_oracle": met(&|r| target.met_by(&r.judge_oracle, false)),
            "met_with_negatives_judge_off": met(&|r| target.met_with_negatives_by(&r.judge_off)),
            "met_with_negatives_judge_oracle": met(&|r| target.met_with_negatives_by(&r.judge_oracle)),
        },
        "recommendation": {
            "rule": format!(
                "gate: among judge-off settings meeting the target on answerable questions, the one most often silent on unrelated events, then on abstention events, then the higher gate; band: the widest whose judge calls per unrelated event are at most {}",
                a.max_judge_calls_unrelated
            ),
            "max_fire": describe(&recommended[0]),
            "one_memory": describe(&recommended[1]),
        },
        "rows": rows,
        "wall_seconds": started.elapsed().as_secs_f64(),
        "embed_seconds": engine.stats().embed_seconds - embed_before,
    })));
    crate::write_report(&Value::Object(report), a.engine.out.as_deref())
}

/// (fire rate, precision, gate).
type Point = (f64, f64, f64);

/// Left: precision against fire rate on answerable events, one point per gate (judge off,
/// and the oracle judge for each band). Right: the judge-off rates against the gate.
fn plot(
    rows: &[Row],
    bands: &[f64],
    recommended: &[Option<(&Row, bool)>],
    (kind, dataset): (ScoreKind, Dataset),
    out: &Path,
) -> anyhow::Result<()> {
    use plotters::prelude::*;
    let err = |e: &dyn std::fmt::Display| anyhow::anyhow!("drawing {}: {e}", out.display());
    let root = BitMapBackend::new(out, (1400, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let (left, right) = root.split_horizontally(700);
    let colors = [BLUE, RED, GREEN, MAGENTA, CYAN, BLACK, RGBColor(230, 140, 0)];

    #[derive(Clone, Copy, PartialEq)]
    enum Y {
        Precision,
        First,
        WithNegatives,
    }
    let max_fire = rows.first().map_or(1, |r| r.max_fire);
    let curve = |band: f64, oracle: bool, y: Y| -> Vec<Point> {
        rows.iter()
            .filter(|r| (r.band - band).abs() < 1e-9)
            .filter_map(|r| {
                let o = if oracle { &r.judge_oracle } else { &r.judge_off };
                let fire = rate(o, Group::Answerable, |x| Some(x.fire_rate))?;
                let p = match y {
                    Y::Precision => rate(o, Group::Answerable, |x| x.precision)?,
                    Y::First => rate(o, Group::Answerable, |x| x.precision_first)?,
                    Y::WithNegatives => o.precision_with_negatives?,
                };
                Some((fire, p, r.gate))
            })
            .collect()
    };
    let mut series: Vec<(String, Vec<Point>)> = vec![
        (format!("gate only, up to {max_fire} memories"), curve(bands[0], false, Y::Precision)),
        ("gate only, 1 memory".into(), curve(bands[0], false, Y::First)),
        (
            format!("gate only, up to {max_fire}, negatives mixed in"),
            curve(bands[0], false, Y::WithNegatives),
        ),
    ];
    for &b in bands.iter().filter(|b| **b > 0.0) {
        series
            .push((format!("gate + perfect band of {b:.2}, up to {max_fire}"), curve(b, true, Y::Precision)));
    }
    let lowest = series.iter().flat_map(|(_, p)| p.iter().map(|x| x.1)).fold(1.0f64, f64::min);
    let y0 = (((lowest - 0.05) * 10.0).floor() / 10.0).max(0.0);
    let mut chart = ChartBuilder::on(&left)
        .caption(
            format!("{}: precision vs fire rate (answerable), one point per gate", dataset.as_str()),
            ("sans-serif", 20),
        )
        .margin(14)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(0.0f64..1.0f64, y0..1.02f64)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("fire rate on answerable questions")
        .y_desc("precision of fired memories")
        .draw()
        .map_err(|e| err(&e))?;
    for (i, (label, pts)) in series.iter().enumerate() {
        let color = colors[i % colors.len()].to_rgba();
        let xy: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.1)).collect();
        chart
            .draw_series(LineSeries::new(xy.clone(), color.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        chart.draw_series(xy.iter().map(|p| Circle::new(*p, 3, color.filled()))).map_err(|e| err(&e))?;
        if i == 0 {
            // gate labels every 0.10
            chart
                .draw_series(pts.iter().filter(|p| ((p.2 * 10.0).round() - p.2 * 10.0).abs() < 1e-6).map(
                    |p| {
                        Text::new(
                            format!("{:.1}", p.2),
                            (p.0 + 0.01, p.1 - 0.01),
                            ("sans-serif", 13).into_font(),
                        )
                    },
                ))
                .map_err(|e| err(&e))?;
        }
    }
    for (row, first_only) in recommended.iter().flatten() {
        let o = &row.judge_off;
        let fire = rate(o, Group::Answerable, |x| Some(x.fire_rate)).unwrap_or(0.0);
        let p = if *first_only {
            rate(o, Group::Answerable, |x| x.precision_first)
        } else {
            rate(o, Group::Answerable, |x| x.precision)
        }
        .unwrap_or(0.0);
        let memories = if *first_only { 1 } else { max_fire };
        chart
            .draw_series(std::iter::once(Cross::new((fire, p), 8, BLACK.stroke_width(2))))
            .map_err(|e| err(&e))?
            .label(format!("recommended: gate {:.2}, {memories} memory max", row.gate))
            .legend(|(x, y)| Cross::new((x + 10, y), 6, BLACK.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerLeft)
        .draw()
        .map_err(|e| err(&e))?;

    let (g0, g1) = (
        rows.iter().map(|r| r.gate).fold(f64::INFINITY, f64::min),
        rows.iter().map(|r| r.gate).fold(0.0, f64::max),
    );
    let mut chart = ChartBuilder::on(&right)
        .caption(
            format!("{}: rates against the gate (gate only, no band)", dataset.as_str()),
            ("sans-serif", 20),
        )
        .margin(14)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(g0..g1.max(g0 + 0.01), 0.0f64..1.02f64)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc(format!("gate ({})", kind.as_str()))
        .y_desc("rate")
        .draw()
        .map_err(|e| err(&e))?;
    let widest = bands.iter().copied().fold(0.0, f64::max);
    type Pick = fn(&Row) -> Option<f64>;
    let lines: Vec<(String, f64, Pick)> = vec![
        ("fire rate, answerable".into(), bands[0], |r| {
            rate(&r.judge_off, Group::Answerable, |x| Some(x.fire_rate))
        }),
        ("precision, answerable".into(), bands[0], |r| {
            rate(&r.judge_off, Group::Answerable, |x| x.precision)
        }),
        ("precision with negatives".into(), bands[0], |r| r.judge_off.precision_with_negatives),
        ("silence, unrelated".into(), bands[0], |r| {
            rate(&r.judge_off, Group::Unrelated, |x| Some(x.silence_rate))
        }),
        ("silence, abstention".into(), bands[0], |r| {
            rate(&r.judge_off, Group::Abstention, |x| Some(x.silence_rate))
        }),
        ("silence, adversarial".into(), bands[0], |r| {
            rate(&r.judge_off, Group::Adversarial, |x| Some(x.silence_rate))
        }),
        (format!("band rate, answerable (band {widest:.2})"), widest, |r| {
            rate(&r.judge_off, Group::Answerable, |x| Some(x.band_rate))
        }),
    ];
    for (i, (label, band, pick)) in lines.into_iter().enumerate() {
        let pts: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| (r.band - band).abs() < 1e-9)
            .filter_map(|r| pick(r).map(|v| (r.gate, v)))
            .collect();
        if pts.is_empty() {
            continue;
        }
        let color = colors[i % colors.len()].to_rgba();
        chart
            .draw_series(LineSeries::new(pts, color.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::MiddleRight)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    eprintln!("wrote {}", out.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_the_dataset_from_name_and_first_keys() {
        let p = Path::new;
        assert_eq!(detect(p("x/longmemeval_s_dev.json.xz"), b"\xfd7zXZ"), Some(Dataset::Longmemeval));
        let lme = br#"[{"question_id": "q1", "question_type": "multi-session", "haystack_sessions": [[{"role": "user", "content": "hi", "has_answer": true}]]"#;
        assert_eq!(detect(p("lme.json"), lme), Some(Dataset::Longmemeval));
        // LoCoMo's records open with qa: evidence comes long before sample_id
        let locomo =
            br#"[{"qa": [{"question": "When?", "answer": "May", "evidence": ["D1:3"], "category": 2}"#;
        assert_eq!(detect(p("data.json"), locomo), Some(Dataset::Locomo));
        let conv = br#"[{"sample_id": "conv-1", "conversation": {"session_1": [{"speaker": "A", "dia_id": "D1:1"}]}}]"#;
        assert_eq!(detect(p("c.json"), conv), Some(Dataset::Locomo));
        assert_eq!(detect(p("other.json"), br#"[{"id": 1}]"#), None);
        assert_eq!("locomo".parse::<Dataset>(), Ok(Dataset::Locomo));
        assert!("lme2".parse::<Dataset>().is_err());
        assert_eq!("score".parse::<Order>(), Ok(Order::Score));
    }

    #[test]
    fn locomo_questions_fall_into_groups() {
        let qa = |category: u8, evidence: &[&str]| locomo::Qa {
            question: "q".into(),
            answer: "a".into(),
            category,
            evidence: evidence.iter().map(|e| e.to_string()).collect(),
        };
        let multi = qa(1, &["D1:3", "D2:2"]);
        let (g, gold) = locomo_group(&multi).unwrap();
        assert_eq!(g, Group::Answerable);
        assert_eq!(gold, HashSet::from(["D1:3", "D2:2"]));
        assert!(locomo_group(&qa(4, &[])).is_none(), "no evidence left: not an event");
        let adv = qa(5, &["D2:1"]);
        let (g, gold) = locomo_group(&adv).unwrap();
        assert_eq!(g, Group::Adversarial);
        assert!(gold.contains("D2:1"));
        assert_eq!(locomo_group(&qa(5, &[])).unwrap().0, Group::Adversarial);
    }

    #[test]
    fn turn_docs_match_the_locomo_command() {
        let json = br#"[{"sample_id": "c", "conversation": {"speaker_a": "A", "speaker_b": "B",
            "session_2": [{"speaker": "B", "dia_id": "D2:1", "text": "Later."}],
            "session_2_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "Hi", "blip_caption": "a cat"}],
            "session_1_date_time": "1:00 pm on 1 May, 2023"}, "qa": []}]"#;
        let (convs, _) = locomo::parse(json).unwrap();
        let docs = convs[0].turn_docs();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0].id, "D1:1");
        assert_eq!(docs[0].text, "A: Hi [shares an image: a cat]");
        assert_eq!(docs[0].session.as_deref(), Some("c/S1"));
        assert_eq!(
            docs[1],
            amber_eval::FiledDoc {
                id: "D2:1".into(),
                text: "B: Later.".into(),
                time: Some(1_683_554_160_000),
                session: Some("c/S2".into())
            }
        );
    }
}

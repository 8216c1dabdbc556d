//! `amber-eval interject`: the interjection gate calibration study.
//!
//! Each LongMemEval question is an event in the middle of a session whose memory is the
//! question's own haystack, filed exactly as `amber-eval longmemeval` files it at session
//! level (user turns, one scope per question, the shared embedding cache). The event
//! recalls its top `k` (hybrid, `now` = the question date) and the gate looks at each
//! candidate's score: the cosine of its best chunk to the event text
//! (`Evidence::best_chunk_cosine`). As a control, the previous question's text is also
//! asked against each haystack (an unrelated event: nothing there is about it). The sweep
//! and its rates are in [`amber_eval::interject`].

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use amber_core::{Hit, Query, SearchMode};
use amber_eval::interject::{self, Candidate, Event, Group, Judge, Policy, Row, ScoreKind, Target};
use amber_eval::longmemeval::{self, Granularity};
use anyhow::{Context, bail};
use clap::Args;
use serde_json::{Value, json};

use crate::{EngineArgs, Haystack, engine_config, file_haystack, open_engine, open_rankings, progress};

/// Arguments of `amber-eval interject`.
#[derive(Args, Debug)]
pub struct InterjectArgs {
    /// A LongMemEval file (.json or .json.xz, the official format).
    #[arg(long)]
    data: PathBuf,
    /// Candidates recalled per event (the top k of the fused ranking).
    #[arg(long, default_value_t = 3)]
    k: usize,
    /// The gate score: cosine (of the best chunk to the event), agreement (that cosine,
    /// only for a memory BM25 and the vectors both rank first) or fused (the RRF score over
    /// that of a memory first in both).
    #[arg(long, default_value = "cosine")]
    score: ScoreKind,
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

/// An event's candidates from a recall, with the doc ids each stands for (for the record).
fn candidates(
    hits: &[Hit],
    hay: &Haystack,
    gold: &HashSet<&str>,
    (kind, fused_max): (ScoreKind, f64),
) -> (Vec<Candidate>, Vec<Value>) {
    let mut out = Vec::new();
    let mut record = Vec::new();
    for (rank, h) in hits.iter().enumerate() {
        let ids = hay.memories.get(&h.memory.id).cloned().unwrap_or_default();
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
    (out, record)
}

fn rate(o: &interject::Outcome, g: Group, f: impl Fn(&interject::Rates) -> Option<f64>) -> Option<f64> {
    o.groups.get(&g).and_then(f)
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
    let mut questions = longmemeval::load(&a.data)?;
    let n_questions = questions.len();
    if let Some(n) = a.engine.limit {
        questions.truncate(n);
    }
    let (engine, _tmp) = open_engine(&a.engine)?;
    let embed_before = engine.stats().embed_seconds;
    let o = engine.options();
    let scoring = (a.score, f64::from(o.bm25_weight + o.vector_weight) / (f64::from(o.rrf_k) + 1.0));
    let mut records = open_rankings(a.engine.rankings.as_deref())?;
    let pb = progress(questions.len(), "interject");
    let mut events: Vec<Event> = Vec::new();
    let mut unrelated_skipped = 0usize;
    let n = questions.len();
    for (i, q) in questions.iter().enumerate() {
        let hay = file_haystack(&engine, q, Granularity::Session, false)?;
        let now = longmemeval::parse_date(&q.question_date);
        let recall = |text: &str| {
            engine.recall(&Query {
                text: text.to_string(),
                scope: Some(hay.scope.clone()),
                k: a.k,
                since: None,
                until: None,
                mode,
                now,
            })
        };
        // The question against its own haystack.
        let official = longmemeval::gold_ids(q, Granularity::Session);
        let (group, gold): (Group, HashSet<&str>) = if longmemeval::is_abstention(q) {
            (Group::Abstention, HashSet::new())
        } else if !official.is_empty() {
            (Group::Answerable, official.iter().map(String::as_str).collect())
        } else {
            (Group::AssistantEvidence, q.answer_session_ids.iter().map(String::as_str).collect())
        };
        let hits = recall(&q.question)?;
        let (cands, rec) = candidates(&hits, &hay, &gold, scoring);
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
                let hits = recall(&other.question)?;
                let (cands, rec) = candidates(&hits, &hay, &HashSet::new(), scoring);
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
    if let Some(mut w) = records {
        w.flush()?;
    }
    engine.flush()?;

    let gates = interject::thresholds(a.gate_from, a.gate_to, a.gate_step);
    let rows = interject::sweep(&events, &gates, &a.bands, &[a.max_fire]);
    let reference: BTreeMap<&str, interject::Outcome> = [Judge::Off, Judge::Oracle]
        .into_iter()
        .map(|j| {
            let p = Policy { gate: REFERENCE.0, band: REFERENCE.1, max_fire: a.max_fire, judge: j };
            (if j == Judge::Off { "judge_off" } else { "judge_oracle" }, interject::outcome(&events, &p))
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
        plot(&rows, &a.bands, &recommended, a.score, path)?;
    }

    let mut config = engine_config(&engine, &a.engine);
    config["granularity"] = json!("session");
    config["corpus_roles"] = json!("user");
    config["k"] = json!(a.k);
    config["max_fire"] = json!(a.max_fire);
    config["now"] = json!("the question date (for the unrelated control: the haystack's question date)");
    let report = json!({
        "dataset": "longmemeval",
        "study": "interjection gate calibration",
        "data_file": a.data,
        "data_sha256": sha,
        "n_questions": n_questions,
        "questions_run": questions.len(),
        "mode": mode.as_str(),
        "events": counts,
        "unrelated_skipped_evidence_in_haystack": unrelated_skipped,
        "gate_score": a.score.as_str(),
        "gate_score_definition": match a.score {
            ScoreKind::Cosine => "cosine of the candidate's best chunk to the event text (Evidence::best_chunk_cosine)",
            ScoreKind::Agreement => "that cosine, only for a candidate BM25 and the vectors both rank first (others never fire)",
            ScoreKind::Fused => "fused RRF score / ((bm25_weight + vector_weight) / (rrf_k + 1)): 1 = first in both",
        },
        "definitions": {
            "event": "a question asked against its own haystack (groups answerable, assistant_evidence, abstention), or the previous question's text against it (group unrelated)",
            "candidates": "the top k of the fused (hybrid) ranking, walked in that order",
            "fires": "cosine >= gate, or in [gate - band, gate) and the judge says yes; at most max_fire memories",
            "gold": "answerable: the official session gold (answer_* sessions with a has_answer user turn); assistant_evidence: answer_session_ids; abstention and unrelated: none",
            "fire_rate": "events where at least one memory fired / events",
            "precision": "fired memories that are gold / fired memories",
            "precision_first": "firing events whose first fired memory is gold / firing events (the precision with max_fire = 1)",
            "precision_with_negatives": "precision over the answerable, abstention and unrelated events together",
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
    });
    crate::write_report(&report, a.engine.out.as_deref())
}

/// (fire rate, precision, gate).
type Point = (f64, f64, f64);

/// Left: precision against fire rate on answerable events, one point per gate (judge off,
/// and the oracle judge for each band). Right: the judge-off rates against the gate.
fn plot(
    rows: &[Row],
    bands: &[f64],
    recommended: &[Option<(&Row, bool)>],
    kind: ScoreKind,
    out: &Path,
) -> anyhow::Result<()> {
    use plotters::prelude::*;
    let err = |e: &dyn std::fmt::Display| anyhow::anyhow!("drawing {}: {e}", out.display());
    let root = BitMapBackend::new(out, (1400, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let (left, right) = root.split_horizontally(700);
    let colors = [BLUE, RED, GREEN, MAGENTA, CYAN, BLACK];

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
        .caption("precision vs fire rate (answerable), one point per gate", ("sans-serif", 20))
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
        .caption("rates against the gate (gate only, no band)", ("sans-serif", 20))
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

//! The events of `amber-eval interject`: each question recalled against its own haystack
//! (and a question from elsewhere against it, the unrelated control), its candidates
//! scored for the gate and marked gold or not.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::path::Path;

use amber_core::{Hit, MemoryId, Query, Scope, SearchMode};
use amber_engine::Engine;
use amber_eval::interject::{self, Candidate, Event, Group, ScoreKind};
use amber_eval::locomo;
use amber_eval::longmemeval::{self, Granularity};
use amber_tiers::interject::{EventKind, InterjectConfig, precheck};
use amber_tiers::session::Session;
use serde_json::{Map, Value, json};

use crate::common::{category_name, file_haystack, ingest, progress, scope_segment};

/// The order in which the gate walks an event's candidates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Order {
    /// The fused (hybrid) ranking's order.
    Retrieval,
    /// Best gate score first (ties in retrieval order): the daemon's order.
    Score,
}

impl Order {
    pub(super) fn as_str(self) -> &'static str {
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

/// Where each event's candidates are recorded (`--rankings`), if anywhere.
pub(super) type Records = Option<std::io::BufWriter<std::fs::File>>;

/// A JSON object's map (empty for anything else).
pub(super) fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
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

/// What a dataset's collection produced: the events, and what the report says of them.
pub(super) struct Collected {
    pub(super) events: Vec<Event>,
    /// Report fields particular to the dataset (questions, quirks, skips).
    pub(super) fields: Map<String, Value>,
    /// `config` fields particular to the dataset (corpus, `now`).
    pub(super) config: Map<String, Value>,
    /// `definitions.event` and `definitions.gold`.
    pub(super) event_definition: &'static str,
    pub(super) gold_definition: &'static str,
}

/// How a recall is made and scored: search mode, top k, gate score, its normaliser, order.
#[derive(Clone, Copy)]
pub(super) struct Recall {
    pub(super) mode: SearchMode,
    pub(super) k: usize,
    pub(super) scoring: (ScoreKind, f64, Order),
}

impl Recall {
    /// An event's candidates. First the daemon's own checks before any search
    /// (`amber_tiers::interject::precheck`, for a prompt, the first event of a fresh
    /// session: only the length check can apply): an event the daemon would not search
    /// has no candidates. Then the top k of the recall.
    fn hits(&self, engine: &Engine, scope: &Scope, text: &str, now: Option<i64>) -> anyhow::Result<Vec<Hit>> {
        let session = Session::new(String::new(), String::new(), None, scope.clone(), 0);
        if precheck(EventKind::Prompt, text, 1, &session, &InterjectConfig::default()).is_some() {
            return Ok(Vec::new());
        }
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
            archived: false,
            floor: false,
        })?)
    }
}

/// LongMemEval: each question against its own haystack (session level, user turns), and
/// the previous question against it.
pub(super) fn collect_longmemeval(
    data: &Path,
    limit: Option<usize>,
    engine: &Engine,
    r: Recall,
    records: &mut Records,
) -> anyhow::Result<Collected> {
    let mut questions = longmemeval::load(data)?;
    let n_questions = questions.len();
    if let Some(n) = limit {
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
pub(super) fn locomo_group(qa: &locomo::Qa) -> Option<(Group, HashSet<&str>)> {
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
pub(super) fn collect_locomo(
    data: &Path,
    limit: Option<usize>,
    engine: &Engine,
    r: Recall,
    records: &mut Records,
) -> anyhow::Result<Collected> {
    let (mut convs, quirks) = locomo::load(data)?;
    let n_questions: usize = convs.iter().map(|c| c.qa.len()).sum();
    if let Some(n) = limit {
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
        let scope: Scope = format!("locomo/turn/{}", scope_segment(&c.sample_id)).parse()?;
        let docs = c.turn_docs();
        turns_filed += docs.len();
        let (memories, _) = ingest(engine, &scope, docs.into_iter())?;
        memories_filed += memories.len();
        let now = c.sessions.iter().filter_map(|s| s.time).max();
        let other = (n > 1).then(|| &convs[(ci + n - 1) % n]).filter(|o| !o.qa.is_empty());
        for (j, qa) in c.qa.iter().enumerate() {
            pb.inc(1);
            match locomo_group(qa) {
                None => no_evidence += 1,
                Some((group, gold)) => {
                    *by_category.entry(category_name(qa.category)).or_default() += 1;
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

#[cfg(test)]
mod tests {
    use super::*;

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

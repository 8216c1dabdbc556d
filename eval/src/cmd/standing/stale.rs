//! Part 1, stale facts: LongMemEval's knowledge-update questions, whose evidence is an
//! older session stating a fact and a newer one updating it. Each question's haystack is
//! filed twice, in two scopes of one store:
//! - **plain**: exactly as `amber-eval longmemeval` files it (session level, user turns,
//!   every session a `fact` dated by its session: [`file_haystack`]);
//! - **superseded**: the same, except that each newer evidence session is filed (after the
//!   others) as an `invalidation` whose `supersedes` names every older evidence session of
//!   the question (with two evidence sessions, which is every dev question, the older one).
//!   An invalidation naming only the one just before it would not do for three: a newer
//!   invalidation superseding an older one retracts it, which restores what *that* one
//!   retired (newest wins down a chain).
//!
//! The question is recalled against each (top 50, hybrid, `now` = the question date) and
//! the report says how often a stale (older) evidence session ranks above the current
//! (newest) one in the top k, how often the current one is in the top k, where the stale
//! one lands, and the official recall_all (both sessions: what supersession costs when
//! the question asks for the previous value).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use amber_core::{Expand, MemoryId, MemoryType, NewMemory, Scope, SearchMode};
use amber_engine::Engine;
use amber_eval::{FiledDoc, longmemeval};
use serde_json::{Value, json};

use crate::common::{file_haystack, ingest, progress, ranked_ids, scope_segment};

/// Cut-offs reported.
const KS: [usize; 5] = [1, 3, 5, 10, 50];

/// A question's evidence sessions that are in its haystack, oldest first (by the
/// session's date, then its position in the haystack).
pub(crate) fn evidence_chain(q: &longmemeval::Question) -> Vec<String> {
    let mut chain: Vec<(Option<i64>, usize, &str)> = q
        .sessions
        .iter()
        .enumerate()
        .filter(|(_, s)| q.answer_session_ids.contains(&s.id))
        .map(|(i, s)| (longmemeval::parse_date(&s.date), i, s.id.as_str()))
        .collect();
    chain.sort();
    let mut out: Vec<String> = Vec::new();
    for (_, _, id) in chain {
        if !out.iter().any(|x| x == id) {
            out.push(id.to_string());
        }
    }
    out
}

/// True when a stale doc is in the top `k` of `ranked` above the current one (which is
/// then lower in the top k, or not in it).
pub(crate) fn stale_above_current(ranked: &[String], stale: &[String], current: &str, k: usize) -> bool {
    let top = &ranked[..k.min(ranked.len())];
    let cur = top.iter().position(|d| d == current).unwrap_or(usize::MAX);
    top.iter().take(cur.min(top.len())).any(|d| stale.contains(d))
}

/// Where a question's answer is written, literally (case-insensitive, a trailing period
/// dropped): in the current session, in a stale one, in both, or in neither. A crude
/// check (a yes/no answer or a paraphrase is never found), but it tells the questions
/// that ask for the previous value, whose answer supersession retires.
pub(crate) fn answer_in(answer: &str, current: &str, stale: &[&str]) -> &'static str {
    let a = answer.trim().trim_end_matches('.').to_lowercase();
    if a.is_empty() {
        return "neither";
    }
    let cur = current.to_lowercase().contains(&a);
    let old = stale.iter().any(|t| t.to_lowercase().contains(&a));
    match (cur, old) {
        (true, false) => "current_only",
        (false, true) => "stale_only",
        (true, true) => "both",
        (false, false) => "neither",
    }
}

/// The 1-based rank of a doc, if ranked.
fn rank(ranked: &[String], id: &str) -> Option<usize> {
    ranked.iter().position(|d| d == id).map(|i| i + 1)
}

/// One question's rankings under one filing.
struct Ranked {
    ranked: Vec<String>,
}

/// A haystack as filed: its scope, and per memory the doc ids it stands for.
type Filed = (Scope, HashMap<MemoryId, Vec<String>>);

/// Files the superseded variant of a question's haystack; `None` when the chain cannot
/// be filed so (an empty or duplicate evidence text).
fn file_superseded(
    engine: &Engine,
    q: &longmemeval::Question,
    chain: &[String],
) -> anyhow::Result<Option<Filed>> {
    let docs = longmemeval::corpus(q, longmemeval::Granularity::Session);
    let scope: Scope = format!("lme-standing/superseded/{}", scope_segment(&q.question_id)).parse()?;
    let dates: HashMap<&str, Option<i64>> =
        q.sessions.iter().map(|s| (s.id.as_str(), longmemeval::parse_date(&s.date))).collect();
    let later: HashSet<&str> = chain[1..].iter().map(String::as_str).collect();
    let filed = |d: &longmemeval::Doc| FiledDoc {
        id: d.id.clone(),
        text: d.text.clone(),
        time: dates.get(d.session_id.as_str()).copied().flatten(),
        session: None,
    };
    let (mut memories, _) =
        ingest(engine, &scope, docs.iter().filter(|d| !later.contains(d.id.as_str())).map(filed))?;
    let Some(first) = memories.iter().find(|(_, ids)| ids.contains(&chain[0])).map(|(m, _)| m.clone()) else {
        return Ok(None);
    };
    let mut older = vec![first];
    for sid in &chain[1..] {
        let Some(d) = docs.iter().find(|d| &d.id == sid).filter(|d| !d.text.trim().is_empty()) else {
            return Ok(None);
        };
        let mut m = NewMemory::new(d.text.clone()).in_scope(scope.clone()).of_type(MemoryType::Invalidation);
        if older.contains(&m.id()) || memories.contains_key(&m.id()) {
            return Ok(None);
        }
        m.event_time = filed(d).time;
        m.supersedes = older.clone();
        let r = engine.writer()?.remember(m)?;
        memories.entry(r.memory.id.clone()).or_default().push(sid.clone());
        older.push(r.memory.id);
    }
    Ok(Some((scope, memories)))
}

/// Means over questions of per-question 0/1 flags, per cut-off.
fn rates(questions: &[(Vec<String>, &str, Vec<String>, &Ranked)]) -> Value {
    let n = questions.len().max(1) as f64;
    let mut out = BTreeMap::new();
    for k in KS {
        let mut above = 0;
        let mut current = 0;
        let mut stale_in = 0;
        let mut all = 0;
        for (stale, cur, gold, r) in questions {
            let top: HashSet<&str> = r.ranked.iter().take(k).map(String::as_str).collect();
            above += usize::from(stale_above_current(&r.ranked, stale, cur, k));
            current += usize::from(top.contains(cur));
            stale_in += usize::from(stale.iter().any(|s| top.contains(s.as_str())));
            all += usize::from(!gold.is_empty() && gold.iter().all(|g| top.contains(g.as_str())));
        }
        out.insert(format!("stale_above_current@{k}"), above as f64 / n);
        out.insert(format!("current_recall@{k}"), current as f64 / n);
        out.insert(format!("stale_in_top@{k}"), stale_in as f64 / n);
        out.insert(format!("official_recall_all@{k}"), all as f64 / n);
    }
    json!(out)
}

/// Runs part 1 on a LongMemEval file.
pub(super) fn run(
    engine: &Engine,
    data: &Path,
    limit: Option<usize>,
    mode: SearchMode,
) -> anyhow::Result<Value> {
    let all = longmemeval::load(data)?;
    let n_file = all.len();
    let mut questions: Vec<&longmemeval::Question> = all
        .iter()
        .filter(|q| q.question_type == "knowledge-update" && !longmemeval::is_abstention(q))
        .collect();
    let n_ku = questions.len();
    if let Some(n) = limit {
        questions.truncate(n);
    }
    let abstention =
        all.iter().filter(|q| q.question_type == "knowledge-update" && longmemeval::is_abstention(q)).count();
    let pb = progress(questions.len(), "stale facts");
    let mut skipped = Vec::new();
    let mut kept: Vec<(&longmemeval::Question, Vec<String>, Ranked, Ranked)> = Vec::new();
    let mut chain_lengths: BTreeMap<usize, usize> = BTreeMap::new();
    for q in questions {
        pb.inc(1);
        let chain = evidence_chain(q);
        if chain.len() < 2 {
            skipped.push(json!({"question_id": q.question_id, "why": "fewer than 2 evidence sessions"}));
            continue;
        }
        let now = longmemeval::parse_date(&q.question_date);
        let hay = file_haystack(engine, q, longmemeval::Granularity::Session, false)?;
        let plain =
            ranked_ids(engine, &q.question, &hay.scope, (50, mode, now, Expand::None), &hay.memories)?;
        let Some((scope, memories)) = file_superseded(engine, q, &chain)? else {
            skipped.push(json!({"question_id": q.question_id, "why": "an evidence session empty or identical to another"}));
            continue;
        };
        let sup = ranked_ids(engine, &q.question, &scope, (50, mode, now, Expand::None), &memories)?;
        *chain_lengths.entry(chain.len()).or_default() += 1;
        kept.push((q, chain, Ranked { ranked: plain }, Ranked { ranked: sup }));
    }
    pb.finish_and_clear();
    let gold = |q: &longmemeval::Question| longmemeval::gold_ids(q, longmemeval::Granularity::Session);
    let view = |plain: bool| -> Vec<(Vec<String>, &str, Vec<String>, &Ranked)> {
        kept.iter()
            .map(|(q, chain, p, s)| {
                let (cur, stale) = chain.split_last().expect("chains have 2 or more sessions");
                (stale.to_vec(), cur.as_str(), gold(q), if plain { p } else { s })
            })
            .collect()
    };
    let mut answers: BTreeMap<&str, usize> = BTreeMap::new();
    let per_question: Vec<Value> = kept
        .iter()
        .map(|(q, chain, p, s)| {
            let (cur, stale) = chain.split_last().expect("chains have 2 or more sessions");
            let text = |id: &str| {
                let docs = longmemeval::corpus(q, longmemeval::Granularity::Session);
                docs.into_iter().find(|d| d.id == id).map(|d| d.text).unwrap_or_default()
            };
            let stale_text: Vec<String> = stale.iter().map(|x| text(x)).collect();
            let stale_refs: Vec<&str> = stale_text.iter().map(String::as_str).collect();
            let written = answer_in(&q.answer, &text(cur), &stale_refs);
            *answers.entry(written).or_default() += 1;
            let ranks = |r: &Ranked| {
                json!({
                    "current": rank(&r.ranked, cur),
                    "stale": stale.iter().map(|x| rank(&r.ranked, x)).collect::<Vec<_>>(),
                })
            };
            json!({
                "question_id": q.question_id,
                "question": q.question,
                "answer": q.answer,
                "chain": chain,
                "gold_official": gold(q),
                "answer_written_in": written,
                "plain": ranks(p),
                "superseded": ranks(s),
            })
        })
        .collect();
    Ok(json!({
        "data_file": data,
        "n_questions_in_file": n_file,
        "knowledge_update_questions": n_ku,
        "knowledge_update_abstention_skipped": abstention,
        "questions_scored": kept.len(),
        "skipped": skipped,
        "chain_lengths": chain_lengths,
        "answer_written_in": answers,
        "definitions": {
            "answer_written_in": "where the reference answer is written literally in the user turns (case-insensitive): current_only, stale_only (supersession retires it: the question asks for the previous value), both, neither (yes/no answers, paraphrases)",
            "chain": "the question's answer_session_ids in its haystack, oldest first (session date, then haystack position); current = the newest, stale = the others",
            "plain": "the haystack filed as amber-eval longmemeval files it (session level, user turns, each session a fact dated by its session)",
            "superseded": "the same, but each newer evidence session filed after the others as an invalidation superseding every older evidence session of the question (archived: out of recall)",
            "stale_above_current@k": "questions where a stale evidence session is in the top k above the current one (the current lower in the top k or not in it)",
            "current_recall@k": "questions whose current evidence session is in the top k (recall_any = recall_all: one session)",
            "stale_in_top@k": "questions with a stale evidence session in the top k",
            "official_recall_all@k": "questions whose official gold sessions (answer_* sessions with a has_answer user turn, stale ones included) are all in the top k",
            "ranks": "1-based rank in the top 50; null = not in it (superseded: archived, so absent)",
        },
        "plain": rates(&view(true)),
        "superseded": rates(&view(false)),
        "per_question": per_question,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn stale_above_current_counts_only_within_the_top_k() {
        let ranked = ids(&["a", "old", "b", "new", "c"]);
        let stale = ids(&["old"]);
        assert!(stale_above_current(&ranked, &stale, "new", 5));
        assert!(stale_above_current(&ranked, &stale, "new", 2), "current not in the top 2, stale is");
        assert!(!stale_above_current(&ranked, &stale, "new", 1), "neither in the top 1");
        let fixed = ids(&["new", "old"]);
        assert!(!stale_above_current(&fixed, &stale, "new", 2), "current first");
        assert!(!stale_above_current(&ids(&["a", "new"]), &stale, "new", 2), "stale absent (archived)");
        assert!(!stale_above_current(&[], &stale, "new", 10));
        // any of several stale sessions
        assert!(stale_above_current(&ids(&["x", "mid", "new"]), &ids(&["old", "mid"]), "new", 3));
    }

    #[test]
    fn answers_are_found_literally() {
        assert_eq!(answer_in("Paris.", "We went to paris!", &["We went to Rome"]), "current_only");
        assert_eq!(answer_in("level 100", "now level 150", &["aiming for Level 100"]), "stale_only");
        assert_eq!(answer_in("25", "25 postcards", &["I have 25"]), "both");
        assert_eq!(answer_in("Yes", "I did", &["no"]), "neither");
        assert_eq!(answer_in(" ", "x", &[]), "neither");
    }

    #[test]
    fn the_chain_is_ordered_by_date_then_position() {
        let s = |id: &str, date: &str| longmemeval::Session {
            id: id.into(),
            date: date.into(),
            turns: Vec::new(),
        };
        let q = longmemeval::Question {
            question_id: "q".into(),
            question_type: "knowledge-update".into(),
            question: "?".into(),
            question_date: "2023/12/01 (Fri) 10:00".into(),
            answer: "a".into(),
            sessions: vec![
                s("answer_2", "2023/09/01 (Fri) 10:00"),
                s("filler", "2023/01/01 (Sun) 10:00"),
                s("answer_1", "2023/05/01 (Mon) 10:00"),
                s("answer_3", "2023/09/01 (Fri) 10:00"),
            ],
            answer_session_ids: ids(&["answer_1", "answer_2", "answer_3", "answer_missing"]),
        };
        assert_eq!(evidence_chain(&q), ids(&["answer_1", "answer_2", "answer_3"]));
    }
}

//! LongMemEval data: loading the official JSON (plain or xz-compressed), and the official
//! retrieval corpus and gold labels of each question.
//!
//! The file is a JSON array of records with `question_id`, `question_type`, `question`,
//! `question_date`, `answer` (a string, sometimes an integer), the parallel lists
//! `haystack_session_ids`, `haystack_dates` and `haystack_sessions` (each session a list of
//! `{role, content, has_answer}` turns) and `answer_session_ids`. LongMemEval_S, _M and the
//! oracle file all share this shape.
//!
//! The corpus and gold rules follow the benchmark's `run_retrieval.py`:
//! - session level: one document per session, the user turns' contents joined by a single space,
//!   id = session id. Sessions without any user turn still give a (then empty) document, as in the
//!   official code, so corpus sizes and ideal DCGs match it;
//! - turn level: one document per user turn, id `<session_id>_<i+1>` where `i` counts all turns
//!   of the session, assistant turns included;
//! - gold: the ids that contain `answer` once the official code has renamed the non-evidence ones
//!   to `noans`: an `answer_*` session with no user turn marked `has_answer` is not gold, and at
//!   turn level only the user turns with `has_answer` of `answer_*` sessions are gold.

use std::fmt;
use std::io::BufReader;
use std::path::Path;
use std::str::FromStr;

use anyhow::{Context, Result, anyhow, bail};
use chrono::{NaiveDate, NaiveTime};
use serde::Deserialize;

/// One turn of a haystack session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Turn {
    /// `user` or `assistant`.
    pub role: String,
    /// The turn's text.
    pub content: String,
    /// Whether the benchmark marks this turn as evidence (missing in the file = false).
    pub has_answer: bool,
}

/// One haystack session of a question.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Session {
    /// The session id (`answer_*` for evidence sessions).
    pub id: String,
    /// The session date as written in the file, e.g. `2023/05/20 (Sat) 02:27`.
    pub date: String,
    /// The session's turns in order.
    pub turns: Vec<Turn>,
}

/// One LongMemEval question with its haystack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Question {
    /// The question id; the suffix `_abs` marks an abstention question.
    pub question_id: String,
    /// One of single-session-user, single-session-assistant, single-session-preference,
    /// multi-session, temporal-reasoning, knowledge-update.
    pub question_type: String,
    /// The question text.
    pub question: String,
    /// The date the question is asked, e.g. `2023/05/30 (Tue) 23:40`.
    pub question_date: String,
    /// The reference answer; integer answers are converted to their decimal text.
    pub answer: String,
    /// The haystack sessions in file order (only roughly chronological).
    pub sessions: Vec<Session>,
    /// The evidence session ids listed by the benchmark.
    pub answer_session_ids: Vec<String>,
}

/// The raw record, as in the file.
#[derive(Deserialize)]
struct RawQuestion {
    question_id: String,
    #[serde(default)]
    question_type: String,
    #[serde(default)]
    question: String,
    #[serde(default)]
    question_date: String,
    #[serde(default)]
    answer: serde_json::Value,
    #[serde(default)]
    answer_session_ids: Vec<String>,
    haystack_session_ids: Vec<String>,
    haystack_dates: Vec<String>,
    haystack_sessions: Vec<Vec<RawTurn>>,
}

/// The raw turn, as in the file.
#[derive(Deserialize)]
struct RawTurn {
    role: String,
    content: Option<String>,
    has_answer: Option<bool>,
}

/// The xz magic bytes.
const XZ_MAGIC: [u8; 6] = [0xFD, b'7', b'z', b'X', b'Z', 0x00];

/// Loads a LongMemEval file (`.json`, or xz-compressed `.json.xz`, recognised by its magic
/// bytes). Any file of the official format is accepted; `has_answer` may be missing (false)
/// and `answer` may be a number.
pub fn load(path: &Path) -> Result<Vec<Question>> {
    let bytes =
        std::fs::read(path).with_context(|| format!("reading LongMemEval file {}", path.display()))?;
    let json = if bytes.starts_with(&XZ_MAGIC) {
        let mut out = Vec::with_capacity(bytes.len() * 8);
        lzma_rs::xz_decompress(&mut BufReader::new(bytes.as_slice()), &mut out)
            .map_err(|e| anyhow!("{e:?}"))
            .with_context(|| format!("decompressing xz file {}", path.display()))?;
        out
    } else {
        bytes
    };
    parse(&json).with_context(|| format!("parsing LongMemEval file {}", path.display()))
}

/// Parses the JSON text of a LongMemEval file (see [`load`]).
pub fn parse(json: &[u8]) -> Result<Vec<Question>> {
    let raw: Vec<RawQuestion> =
        serde_json::from_slice(json).context("not a JSON array of LongMemEval records")?;
    raw.into_iter()
        .enumerate()
        .map(|(i, r)| {
            let id = r.question_id.clone();
            convert(r).with_context(|| format!("record {i} (question_id {id})"))
        })
        .collect()
}

/// Converts a raw record, checking that the haystack lists are parallel.
fn convert(r: RawQuestion) -> Result<Question> {
    let n = r.haystack_session_ids.len();
    if r.haystack_dates.len() != n || r.haystack_sessions.len() != n {
        bail!(
            "haystack lists differ in length: {} session ids, {} dates, {} sessions",
            n,
            r.haystack_dates.len(),
            r.haystack_sessions.len()
        );
    }
    let answer = match r.answer {
        serde_json::Value::String(s) => s,
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    };
    let sessions = r
        .haystack_session_ids
        .into_iter()
        .zip(r.haystack_dates)
        .zip(r.haystack_sessions)
        .map(|((id, date), turns)| Session {
            id,
            date,
            turns: turns
                .into_iter()
                .map(|t| Turn {
                    role: t.role,
                    content: t.content.unwrap_or_default(),
                    has_answer: t.has_answer.unwrap_or(false),
                })
                .collect(),
        })
        .collect();
    Ok(Question {
        question_id: r.question_id,
        question_type: r.question_type,
        question: r.question,
        question_date: r.question_date,
        answer,
        sessions,
        answer_session_ids: r.answer_session_ids,
    })
}

/// Whether the question is an abstention question (its id ends with `_abs`).
pub fn is_abstention(q: &Question) -> bool {
    q.question_id.ends_with("_abs")
}

/// The unit of retrieval: whole sessions or single turns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Granularity {
    /// One document per session.
    Session,
    /// One document per turn.
    Turn,
}

impl Granularity {
    /// The name used on the command line and in reports: `session` or `turn`.
    pub fn as_str(self) -> &'static str {
        match self {
            Granularity::Session => "session",
            Granularity::Turn => "turn",
        }
    }
}

impl FromStr for Granularity {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "session" => Ok(Granularity::Session),
            "turn" => Ok(Granularity::Turn),
            other => Err(format!("unknown granularity {other:?} (expected \"session\" or \"turn\")")),
        }
    }
}

impl fmt::Display for Granularity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One retrievable document of a question's corpus.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Doc {
    /// The document id: the session id, or `<session_id>_<i+1>` for a turn.
    pub id: String,
    /// The session the document comes from.
    pub session_id: String,
    /// The text to index.
    pub text: String,
    /// The session date as written in the file.
    pub date: String,
}

/// The official corpus of a question: user turns only (see the module docs).
pub fn corpus(q: &Question, g: Granularity) -> Vec<Doc> {
    corpus_with_roles(q, g, false)
}

/// The corpus of a question, with or without the assistant turns.
///
/// With `include_assistant = false` this is the official corpus ([`corpus`]). With `true`, every
/// turn counts whatever its role: session documents join all turns' contents with a space, and
/// every turn is a document at turn level (ids stay `<session_id>_<i+1>`, `i` counting all
/// turns). Sessions always give a document at session level, even when it is empty. The gold
/// labels ([`gold_ids`]) do not change: assistant turns are never gold.
pub fn corpus_with_roles(q: &Question, g: Granularity, include_assistant: bool) -> Vec<Doc> {
    let keep = |t: &Turn| include_assistant || t.role == "user";
    let mut docs = Vec::new();
    for s in &q.sessions {
        match g {
            Granularity::Session => {
                let text = s
                    .turns
                    .iter()
                    .filter(|t| keep(t))
                    .map(|t| t.content.as_str())
                    .collect::<Vec<_>>()
                    .join(" ");
                docs.push(Doc { id: s.id.clone(), session_id: s.id.clone(), text, date: s.date.clone() });
            }
            Granularity::Turn => {
                for (i, t) in s.turns.iter().enumerate().filter(|(_, t)| keep(t)) {
                    docs.push(Doc {
                        id: format!("{}_{}", s.id, i + 1),
                        session_id: s.id.clone(),
                        text: t.content.clone(),
                        date: s.date.clone(),
                    });
                }
            }
        }
    }
    docs
}

/// The official gold ids of a question at a granularity (deduplicated, in haystack order).
///
/// Session level: the `answer_*` session ids (any id containing `answer`) with at least one user
/// turn marked `has_answer`. Turn level: the ids `<session_id>_<i+1>` of the user turns marked
/// `has_answer` in those sessions. Every gold id is an id of [`corpus`]. The set is empty for
/// questions whose evidence is only in assistant turns (single-session-assistant).
pub fn gold_ids(q: &Question, g: Granularity) -> Vec<String> {
    let mut gold: Vec<String> = Vec::new();
    let mut push = |id: String| {
        if !gold.contains(&id) {
            gold.push(id);
        }
    };
    for s in q.sessions.iter().filter(|s| s.id.contains("answer")) {
        let evidence = |t: &Turn| t.role == "user" && t.has_answer;
        match g {
            Granularity::Session => {
                if s.turns.iter().any(evidence) {
                    push(s.id.clone());
                }
            }
            Granularity::Turn => {
                for (i, _) in s.turns.iter().enumerate().filter(|(_, t)| evidence(t)) {
                    push(format!("{}_{}", s.id, i + 1));
                }
            }
        }
    }
    gold
}

/// Parses a LongMemEval date such as `2023/05/30 (Tue) 23:40` to Unix milliseconds, read as
/// UTC. The weekday is ignored; a missing time means midnight. `None` if it does not parse.
pub fn parse_date(s: &str) -> Option<i64> {
    let mut parts = s.split_whitespace();
    let date = NaiveDate::parse_from_str(parts.next()?, "%Y/%m/%d").ok()?;
    let time = match parts.rfind(|p| !p.starts_with('(')) {
        Some(t) => NaiveTime::parse_from_str(t, "%H:%M").ok()?,
        None => NaiveTime::MIN,
    };
    Some(date.and_time(time).and_utc().timestamp_millis())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics;
    use std::collections::BTreeMap;
    use std::io::Write;
    use std::path::PathBuf;

    const FIXTURE: &str = r#"[
      {"question_id": "q1", "question_type": "multi-session", "question": "Where?",
       "question_date": "2023/05/30 (Tue) 23:40", "answer": "Target",
       "answer_session_ids": ["answer_a", "answer_b"],
       "haystack_session_ids": ["filler_1", "answer_a", "answer_b", "filler_2"],
       "haystack_dates": ["2023/05/20 (Sat) 02:27", "2023/05/21 (Sun) 10:00",
                          "2023/05/22 (Mon) 11:00", "2023/05/23 (Tue) 12:00"],
       "haystack_sessions": [
         [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"},
          {"role": "user", "content": "bye"}],
         [{"role": "user", "content": "I shop", "has_answer": false},
          {"role": "assistant", "content": "ok", "has_answer": false},
          {"role": "user", "content": "at Target", "has_answer": true}],
         [{"role": "user", "content": "nothing here", "has_answer": false},
          {"role": "assistant", "content": "the answer", "has_answer": true}],
         [{"role": "assistant", "content": "lonely"}]
       ]},
      {"question_id": "q2_abs", "question_type": "temporal-reasoning", "question": "How many?",
       "question_date": "2023/06/01 (Thu) 08:05", "answer": 3,
       "haystack_session_ids": [], "haystack_dates": [], "haystack_sessions": []}
    ]"#;

    fn ids(docs: &[Doc]) -> Vec<&str> {
        docs.iter().map(|d| d.id.as_str()).collect()
    }

    #[test]
    fn parse_fixture() {
        let qs = parse(FIXTURE.as_bytes()).unwrap();
        assert_eq!(qs.len(), 2);
        assert_eq!(qs[0].sessions.len(), 4);
        assert!(!qs[0].sessions[0].turns[0].has_answer);
        assert!(qs[0].sessions[1].turns[2].has_answer);
        assert_eq!(qs[1].answer, "3");
        assert!(!is_abstention(&qs[0]));
        assert!(is_abstention(&qs[1]));
    }

    #[test]
    fn mismatched_haystack_is_an_error() {
        let bad = r#"[{"question_id": "x", "haystack_session_ids": ["a"], "haystack_dates": [],
                       "haystack_sessions": [[]]}]"#;
        let err = format!("{:#}", parse(bad.as_bytes()).unwrap_err());
        assert!(err.contains("question_id x"), "{err}");
        assert!(err.contains("differ in length"), "{err}");
    }

    #[test]
    fn session_corpus_and_gold() {
        let q = &parse(FIXTURE.as_bytes()).unwrap()[0];
        let docs = corpus(q, Granularity::Session);
        assert_eq!(ids(&docs), ["filler_1", "answer_a", "answer_b", "filler_2"]);
        assert_eq!(docs[0].text, "hi bye");
        assert_eq!(docs[1].text, "I shop at Target");
        assert_eq!(docs[3].text, "");
        assert_eq!(docs[1].date, "2023/05/21 (Sun) 10:00");
        // answer_b has no user turn marked has_answer: not gold (official noans_)
        assert_eq!(gold_ids(q, Granularity::Session), ["answer_a"]);
        let all = corpus_with_roles(q, Granularity::Session, true);
        assert_eq!(all[0].text, "hi hello bye");
        assert_eq!(all[3].text, "lonely");
    }

    #[test]
    fn turn_corpus_and_gold() {
        let q = &parse(FIXTURE.as_bytes()).unwrap()[0];
        let docs = corpus(q, Granularity::Turn);
        // i counts all turns: the user turns of filler_1 are turns 1 and 3
        assert_eq!(ids(&docs), ["filler_1_1", "filler_1_3", "answer_a_1", "answer_a_3", "answer_b_1"]);
        assert_eq!(docs[3].text, "at Target");
        assert_eq!(docs[3].session_id, "answer_a");
        assert_eq!(gold_ids(q, Granularity::Turn), ["answer_a_3"]);
        let all = corpus_with_roles(q, Granularity::Turn, true);
        assert_eq!(
            ids(&all),
            [
                "filler_1_1",
                "filler_1_2",
                "filler_1_3",
                "answer_a_1",
                "answer_a_2",
                "answer_a_3",
                "answer_b_1",
                "answer_b_2",
                "filler_2_1"
            ]
        );
    }

    #[test]
    fn granularity_names() {
        assert_eq!("session".parse::<Granularity>(), Ok(Granularity::Session));
        assert_eq!("Turn".parse::<Granularity>(), Ok(Granularity::Turn));
        assert!("sentence".parse::<Granularity>().is_err());
        assert_eq!(Granularity::Turn.as_str(), "turn");
    }

    #[test]
    fn dates() {
        assert_eq!(parse_date("2023/05/30 (Tue) 23:40"), Some(1_685_490_000_000));
        assert_eq!(parse_date("2023/01/01 (Sun) 00:05"), Some(1_672_531_500_000));
        assert_eq!(parse_date("2022/12/31"), Some(1_672_444_800_000));
        assert_eq!(parse_date("yesterday"), None);
        assert_eq!(parse_date("2023/13/01 (Mon) 10:00"), None);
    }

    #[test]
    fn loads_xz_and_plain() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("q.json");
        std::fs::write(&plain, FIXTURE).unwrap();
        let xz = dir.path().join("q.json.xz");
        let mut compressed = Vec::new();
        lzma_rs::xz_compress(&mut FIXTURE.as_bytes(), &mut compressed).unwrap();
        std::fs::File::create(&xz).unwrap().write_all(&compressed).unwrap();
        assert_eq!(load(&plain).unwrap(), load(&xz).unwrap());
        let missing = dir.path().join("absent.json");
        let err = format!("{:#}", load(&missing).unwrap_err());
        assert!(err.contains("absent.json"), "{err}");
    }

    fn dev_file() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/data/longmemeval/longmemeval_s_dev.json.xz")
    }

    #[test]
    fn real_dev_file() {
        let path = dev_file();
        if !path.exists() {
            println!("note: {} absent, test skipped", path.display());
            return;
        }
        let qs = load(&path).unwrap();
        assert_eq!(qs.len(), 98);
        let (mut with_gold, mut no_gold_abs, mut no_gold_ssa) = (0, 0, 0);
        let mut session_scores = Vec::new();
        let mut turn_scores = Vec::new();
        for q in &qs {
            assert!(parse_date(&q.question_date).is_some(), "{}", q.question_date);
            for g in [Granularity::Session, Granularity::Turn] {
                let docs = corpus(q, g);
                let corpus_ids: Vec<String> = docs.iter().map(|d| d.id.clone()).collect();
                let gold = gold_ids(q, g);
                for id in &gold {
                    assert!(corpus_ids.contains(id), "{}: gold {id} not in the corpus", q.question_id);
                }
                // gold sessions are a subset of the benchmark's answer sessions
                for d in docs.iter().filter(|d| gold.contains(&d.id)) {
                    assert!(q.answer_session_ids.contains(&d.session_id), "{}", q.question_id);
                }
                if is_abstention(q) {
                    continue;
                }
                // an oracle ranking (gold first) scores recall_any = ndcg = 1 at every k, and
                // recall_all = 1 once k reaches the number of gold sessions
                let mut ranked = gold.clone();
                ranked.extend(corpus_ids.iter().filter(|id| !gold.contains(id)).cloned());
                let scores = metrics::score_question(&ranked, &gold, &corpus_ids, g == Granularity::Turn);
                let gold_sessions = gold_ids(q, Granularity::Session).len();
                if !gold.is_empty() {
                    for k in metrics::KS {
                        for key in [format!("recall_any@{k}"), format!("ndcg_any@{k}")] {
                            assert!((scores[&key] - 1.0).abs() < 1e-9, "{} {key}", q.question_id);
                        }
                        let all = scores[&format!("recall_all@{k}")];
                        assert_eq!(all, if k >= gold_sessions { 1.0 } else { 0.0 }, "{} @{k}", q.question_id);
                    }
                }
                match g {
                    Granularity::Session => session_scores.push(scores),
                    Granularity::Turn => turn_scores.push(scores),
                }
            }
            let session_gold = gold_ids(q, Granularity::Session);
            if !session_gold.is_empty() {
                with_gold += 1;
            } else if q.question_type == "single-session-assistant" {
                no_gold_ssa += 1;
            } else {
                // only abstention questions may lack gold outside single-session-assistant
                assert!(is_abstention(q), "{} has no gold", q.question_id);
                no_gold_abs += 1;
            }
        }
        println!(
            "with gold {with_gold}, no gold: single-session-assistant {no_gold_ssa}, abstention {no_gold_abs}"
        );
        let ssa = qs.iter().filter(|q| q.question_type == "single-session-assistant").count();
        // every single-session-assistant question has its evidence in assistant turns only
        assert_eq!(no_gold_ssa, ssa);
        assert_eq!(with_gold + no_gold_ssa + no_gold_abs, 98);
        assert!(with_gold >= 80, "{with_gold}");
        let mean: BTreeMap<String, f64> = metrics::mean(&session_scores);
        println!("oracle session-level mean (official averaging): {mean:?}");
        assert!(mean["recall_all@50"] >= mean["recall_any@50"]);
    }
}

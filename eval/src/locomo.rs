//! LoCoMo data: loading the conversations and their QA, with the data's quirks counted rather
//! than fatal, and the evidence recall used to score retrieval.
//!
//! The file is a list of `{sample_id, conversation, qa, ...}`. `conversation` has `speaker_a`,
//! `speaker_b`, `session_N` (turns `{speaker, dia_id: "D1:3", text, blip_caption?, img_url?}`) and
//! `session_N_date_time` (`"1:56 pm on 8 May, 2023"`); a `session_N_date_time` without a
//! `session_N` is ignored. `qa` items are `{question, answer | adversarial_answer, evidence,
//! category}` with categories 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial.
//!
//! Evidence ids are normalised to `D<session>:<turn>` (leading zeros and a stray `:` after the
//! `D` removed, lists such as `"D8:6; D9:17"` split) and kept only when the turn exists.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use anyhow::{Context, Result, anyhow};
use chrono::{NaiveDate, NaiveTime};
use serde_json::Value;

use crate::FiledDoc;

/// One turn of a LoCoMo session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LTurn {
    /// The turn id, e.g. `D1:3` (session 1, turn 3).
    pub dia_id: String,
    /// The speaker's name.
    pub speaker: String,
    /// The turn's text, followed by ` [shares an image: <blip_caption>]` when the turn shares an
    /// image with a caption.
    pub text: String,
}

/// One session of a LoCoMo conversation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LSession {
    /// `<sample_id>/S<number>`, e.g. `conv-26/S3`.
    pub id: String,
    /// The session number N of `session_N`.
    pub number: usize,
    /// The session date as written, e.g. `1:56 pm on 8 May, 2023` (empty when missing).
    pub date: String,
    /// The date in Unix milliseconds (read as UTC), when it parses.
    pub time: Option<i64>,
    /// The session's turns in order.
    pub turns: Vec<LTurn>,
}

/// One LoCoMo question.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Qa {
    /// The question text.
    pub question: String,
    /// The reference answer: `answer` (numbers converted to text), or, when it is missing (most
    /// category 5 questions), the `adversarial_answer` (the misleading answer the question baits).
    pub answer: String,
    /// The category: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial.
    pub category: u8,
    /// The normalised, deduplicated evidence turn ids that exist in the conversation.
    pub evidence: Vec<String>,
}

/// One LoCoMo conversation with its questions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conversation {
    /// The sample id, e.g. `conv-26`.
    pub sample_id: String,
    /// The sessions, ordered by number.
    pub sessions: Vec<LSession>,
    /// The questions about the conversation.
    pub qa: Vec<Qa>,
}

impl LTurn {
    /// The turn as it is filed: `speaker: text`.
    pub fn line(&self) -> String {
        format!("{}: {}", self.speaker, self.text)
    }
}

impl Conversation {
    /// The turns (id `dia_id`, text "speaker: text", the session's time, in the session
    /// they were said in): what `amber-eval locomo --granularity turn` (and `interject`
    /// on LoCoMo) files, one memory per turn.
    pub fn turn_docs(&self) -> Vec<FiledDoc> {
        self.sessions
            .iter()
            .flat_map(|s| {
                s.turns.iter().map(move |t| FiledDoc {
                    id: t.dia_id.clone(),
                    text: t.line(),
                    time: s.time,
                    session: Some(s.id.clone()),
                })
            })
            .collect()
    }

    /// The sessions (id the session id, text the turns joined by newlines, the session's
    /// time): what `amber-eval locomo --granularity session` files.
    pub fn session_docs(&self) -> Vec<FiledDoc> {
        self.sessions
            .iter()
            .map(|s| FiledDoc {
                id: s.id.clone(),
                text: s.turns.iter().map(LTurn::line).collect::<Vec<_>>().join("\n"),
                time: s.time,
                session: None,
            })
            .collect()
    }

    /// The id of the session holding a turn (`D8:6` -> `conv-26/S8`), if that session exists.
    pub fn session_id_of(&self, dia_id: &str) -> Option<&str> {
        let n = session_of(dia_id)?;
        self.sessions.iter().find(|s| s.number == n).map(|s| s.id.as_str())
    }

    /// The deduplicated session ids of a question's evidence, for session-level recall.
    pub fn evidence_session_ids(&self, qa: &Qa) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for id in qa.evidence.iter().filter_map(|e| self.session_id_of(e)) {
            if !out.iter().any(|x| x == id) {
                out.push(id.to_owned());
            }
        }
        out
    }
}

/// Counts of the data quirks met while loading (each is tolerated, never fatal).
#[derive(Default, Debug, Clone, serde::Serialize)]
pub struct Quirks {
    /// Questions whose `evidence` list is empty in the file.
    pub empty_evidence: usize,
    /// Evidence entries not of the form `D<n>:<m>` (e.g. `"D8:6; D9:17"`, split into its parts,
    /// or `"D"`, dropped).
    pub malformed_evidence: usize,
    /// Evidence ids pointing at turns that do not exist (dropped).
    pub missing_turns: usize,
    /// Questions whose `answer` is a number (converted to text).
    pub integer_answers: usize,
    /// Questions without `answer` that take their answer from `adversarial_answer`.
    pub adversarial_answers: usize,
    /// Questions read.
    pub questions: usize,
}

/// Loads a LoCoMo file (the official `locomo10.json` shape, or a subset of it).
pub fn load(path: &Path) -> Result<(Vec<Conversation>, Quirks)> {
    let bytes = std::fs::read(path).with_context(|| format!("reading LoCoMo file {}", path.display()))?;
    parse(&bytes).with_context(|| format!("parsing LoCoMo file {}", path.display()))
}

/// Parses the JSON text of a LoCoMo file (see [`load`]).
pub fn parse(json: &[u8]) -> Result<(Vec<Conversation>, Quirks)> {
    let value: Value = serde_json::from_slice(json).context("not valid JSON")?;
    let items = value.as_array().ok_or_else(|| anyhow!("expected a JSON array of conversations"))?;
    let mut quirks = Quirks::default();
    let conversations = items
        .iter()
        .enumerate()
        .map(|(i, item)| parse_conversation(item, &mut quirks).with_context(|| format!("conversation {i}")))
        .collect::<Result<Vec<_>>>()?;
    Ok((conversations, quirks))
}

/// A JSON scalar as text: strings as they are, numbers in decimal, null as empty.
fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Parses one conversation record.
fn parse_conversation(item: &Value, quirks: &mut Quirks) -> Result<Conversation> {
    let sample_id = item.get("sample_id").map(scalar_text).filter(|s| !s.is_empty());
    let sample_id = sample_id.ok_or_else(|| anyhow!("missing sample_id"))?;
    let conv = item
        .get("conversation")
        .and_then(Value::as_object)
        .ok_or_else(|| anyhow!("{sample_id}: missing conversation object"))?;

    let mut by_number: BTreeMap<usize, LSession> = BTreeMap::new();
    for (key, value) in conv {
        let Some(number) = key.strip_prefix("session_").and_then(|n| n.parse::<usize>().ok()) else {
            continue;
        };
        let Some(raw_turns) = value.as_array() else { continue };
        let date = conv.get(&format!("session_{number}_date_time")).map(scalar_text).unwrap_or_default();
        let turns = raw_turns
            .iter()
            .map(|t| {
                let field = |name: &str| t.get(name).map(scalar_text).unwrap_or_default();
                let mut text = field("text");
                if let Some(caption) = t.get("blip_caption").and_then(Value::as_str).filter(|c| !c.is_empty())
                {
                    if !text.is_empty() {
                        text.push(' ');
                    }
                    text.push_str(&format!("[shares an image: {caption}]"));
                }
                LTurn { dia_id: field("dia_id").trim().to_owned(), speaker: field("speaker"), text }
            })
            .collect();
        let time = parse_date(&date);
        by_number
            .insert(number, LSession { id: format!("{sample_id}/S{number}"), number, date, time, turns });
    }
    let sessions: Vec<LSession> = by_number.into_values().collect();
    let known: HashSet<&str> =
        sessions.iter().flat_map(|s| s.turns.iter().map(|t| t.dia_id.as_str())).collect();

    let mut qa = Vec::new();
    for (j, q) in
        item.get("qa").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default().iter().enumerate()
    {
        quirks.questions += 1;
        let question = q.get("question").map(scalar_text).unwrap_or_default();
        let answer = match q.get("answer").filter(|a| !a.is_null()) {
            Some(a) => {
                if a.is_number() {
                    quirks.integer_answers += 1;
                }
                scalar_text(a)
            }
            None => match q.get("adversarial_answer").filter(|a| !a.is_null()) {
                Some(a) => {
                    quirks.adversarial_answers += 1;
                    scalar_text(a)
                }
                None => String::new(),
            },
        };
        let category = q
            .get("category")
            .and_then(Value::as_u64)
            .and_then(|c| u8::try_from(c).ok())
            .ok_or_else(|| anyhow!("{sample_id}: qa {j} has no valid category"))?;
        let raw_evidence = q.get("evidence").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        if raw_evidence.is_empty() {
            quirks.empty_evidence += 1;
        }
        let mut evidence: Vec<String> = Vec::new();
        for entry in raw_evidence {
            let Some(entry) = entry.as_str() else {
                quirks.malformed_evidence += 1;
                continue;
            };
            let parts: Vec<&str> = entry
                .split(|c: char| c == ';' || c == ',' || c.is_whitespace())
                .filter(|p| !p.is_empty())
                .collect();
            let canonical = parts.len() == 1 && normalize_dia_id(parts[0]).as_deref() == Some(parts[0]);
            if !canonical {
                quirks.malformed_evidence += 1;
            }
            for id in parts.iter().filter_map(|p| normalize_dia_id(p)) {
                if !known.contains(id.as_str()) {
                    quirks.missing_turns += 1;
                } else if !evidence.contains(&id) {
                    evidence.push(id);
                }
            }
        }
        qa.push(Qa { question, answer, category, evidence });
    }
    Ok(Conversation { sample_id, sessions, qa })
}

/// Normalises a turn id to `D<session>:<turn>`: `D8:6`, `D08:06` and `D:8:6` all give `D8:6`.
/// `None` when it is not a turn id.
pub fn normalize_dia_id(s: &str) -> Option<String> {
    let rest = s.trim().strip_prefix(['D', 'd'])?.trim_start_matches(':');
    let (session, turn) = rest.split_once(':')?;
    let session: usize = session.trim().parse().ok()?;
    let turn: usize = turn.trim().parse().ok()?;
    Some(format!("D{session}:{turn}"))
}

/// The session number of a turn id: `D8:6` -> 8. `None` when it is not a turn id.
pub fn session_of(dia_id: &str) -> Option<usize> {
    let rest = dia_id.trim().strip_prefix(['D', 'd'])?.trim_start_matches(':');
    let (session, turn) = rest.split_once(':')?;
    turn.trim().parse::<usize>().ok()?;
    session.trim().parse().ok()
}

/// The fraction of a question's (deduplicated) evidence ids found in the top `k` of `ranked`;
/// `None` when there is no evidence (the caller skips such questions). Works for any unit: turn
/// ids, or session ids with [`Conversation::evidence_session_ids`].
pub fn recall_at_k(ranked: &[String], evidence: &[String], k: usize) -> Option<f64> {
    let mut unique: Vec<&str> = Vec::new();
    for e in evidence {
        if !unique.contains(&e.as_str()) {
            unique.push(e);
        }
    }
    if unique.is_empty() {
        return None;
    }
    let top: HashSet<&str> = ranked.iter().take(k).map(String::as_str).collect();
    let found = unique.iter().filter(|e| top.contains(*e)).count();
    Some(found as f64 / unique.len() as f64)
}

/// Parses a LoCoMo date such as `1:56 pm on 8 May, 2023` to Unix milliseconds, read as UTC
/// (`12:xx am` is just after midnight, `12:xx pm` just after noon). Month names may be full or
/// abbreviated. `None` if it does not parse.
pub fn parse_date(s: &str) -> Option<i64> {
    let (time, date) = s.trim().split_once(" on ")?;
    let time = time.trim().to_ascii_lowercase();
    let (clock, meridiem) = if let Some(c) = time.strip_suffix("am") {
        (c.trim(), 0)
    } else if let Some(c) = time.strip_suffix("pm") {
        (c.trim(), 12)
    } else {
        (time.as_str(), -1)
    };
    let (h, m) = clock.split_once(':')?;
    let (mut hour, minute): (u32, u32) = (h.trim().parse().ok()?, m.trim().parse().ok()?);
    if meridiem >= 0 {
        if !(1..=12).contains(&hour) {
            return None;
        }
        hour = hour % 12 + meridiem as u32;
    }
    let time = NaiveTime::from_hms_opt(hour, minute, 0)?;

    let tokens: Vec<&str> =
        date.split(|c: char| c == ',' || c.is_whitespace()).filter(|t| !t.is_empty()).collect();
    let [day, month, year] = tokens.as_slice() else { return None };
    let day: u32 = day.parse().ok()?;
    let year: i32 = year.parse().ok()?;
    let month = month_number(month)?;
    let date = NaiveDate::from_ymd_opt(year, month, day)?;
    Some(date.and_time(time).and_utc().timestamp_millis())
}

/// The month number of an English month name, full or abbreviated to at least three letters.
fn month_number(name: &str) -> Option<u32> {
    const MONTHS: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    if name.len() < 3 {
        return None;
    }
    MONTHS.iter().position(|m| m.starts_with(&name)).and_then(|i| u32::try_from(i + 1).ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    const FIXTURE: &str = r#"[
      {"sample_id": "conv-x",
       "conversation": {
         "speaker_a": "Ann", "speaker_b": "Bob",
         "session_2": [
           {"speaker": "Bob", "dia_id": "D2:1", "text": "Back again."},
           {"speaker": "Ann", "dia_id": "D2:2", "text": "Look!", "img_url": ["http://x"],
            "blip_caption": "a photo of a sunset"}
         ],
         "session_2_date_time": "12:09 am on 13 September, 2023",
         "session_1": [
           {"speaker": "Ann", "dia_id": "D1:1", "text": "Hi Bob"},
           {"speaker": "Bob", "dia_id": "D1:2", "text": "Hi Ann"},
           {"speaker": "Ann", "dia_id": "D1:3", "text": "I paint."}
         ],
         "session_1_date_time": "1:56 pm on 8 May, 2023",
         "session_3_date_time": "2:00 pm on 9 May, 2023"
       },
       "qa": [
         {"question": "What did Ann paint?", "answer": "sunset", "evidence": ["D1:3; D2:2"], "category": 1},
         {"question": "Is Ann nice?", "answer": "Yes", "evidence": [], "category": 3},
         {"question": "How many?", "answer": 2, "evidence": ["D1:1", "D", "D1:1", "D9:9"], "category": 4},
         {"question": "What did Bob paint?", "adversarial_answer": "a dog", "evidence": ["D02:01"],
          "category": 5}
       ]}
    ]"#;

    fn s(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn parses_fixture_with_quirks() {
        let (convs, q) = parse(FIXTURE.as_bytes()).unwrap();
        assert_eq!(convs.len(), 1);
        let c = &convs[0];
        assert_eq!(c.sample_id, "conv-x");
        // ordered by number; the date-only session 3 is ignored
        assert_eq!(c.sessions.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), ["conv-x/S1", "conv-x/S2"]);
        assert_eq!(c.sessions[0].time, Some(1_683_554_160_000));
        assert_eq!(c.sessions[1].turns[1].text, "Look! [shares an image: a photo of a sunset]");
        assert_eq!(c.sessions[1].turns[0].text, "Back again.");
        assert_eq!(c.qa.len(), 4);
        assert_eq!(c.qa[0].evidence, s(&["D1:3", "D2:2"]));
        assert_eq!(c.qa[1].evidence, Vec::<String>::new());
        assert_eq!(c.qa[2].evidence, s(&["D1:1"]));
        assert_eq!(c.qa[2].answer, "2");
        assert_eq!(c.qa[3].evidence, s(&["D2:1"]));
        assert_eq!(c.qa[3].answer, "a dog");
        assert_eq!(c.qa[3].category, 5);
        assert_eq!(q.questions, 4);
        assert_eq!(q.empty_evidence, 1);
        // "D1:3; D2:2", "D" and "D02:01"
        assert_eq!(q.malformed_evidence, 3);
        assert_eq!(q.missing_turns, 1);
        assert_eq!(q.integer_answers, 1);
        assert_eq!(q.adversarial_answers, 1);
        assert_eq!(c.evidence_session_ids(&c.qa[0]), s(&["conv-x/S1", "conv-x/S2"]));
        assert_eq!(c.session_id_of("D9:1"), None);
    }

    #[test]
    fn missing_category_is_an_error() {
        let bad = r#"[{"sample_id": "c", "conversation": {}, "qa": [{"question": "q", "evidence": []}]}]"#;
        let err = format!("{:#}", parse(bad.as_bytes()).unwrap_err());
        assert!(err.contains("category"), "{err}");
    }

    #[test]
    fn dia_ids() {
        assert_eq!(session_of("D8:6"), Some(8));
        assert_eq!(session_of("D30:05"), Some(30));
        assert_eq!(session_of("D:11:26"), Some(11));
        assert_eq!(session_of("D"), None);
        assert_eq!(session_of("8:6"), None);
        assert_eq!(normalize_dia_id("D08:06").as_deref(), Some("D8:6"));
        assert_eq!(normalize_dia_id("D8:6; D9:17"), None);
    }

    #[test]
    fn dates() {
        // 2023-05-08 13:56 UTC
        assert_eq!(parse_date("1:56 pm on 8 May, 2023"), Some(1_683_554_160_000));
        // 12:05 am is just after midnight: 2023-01-01 00:05 UTC
        assert_eq!(parse_date("12:05 am on 1 January, 2023"), Some(1_672_531_500_000));
        // 12:00 pm is noon: 2022-12-31 12:00 UTC
        assert_eq!(parse_date("12:00 pm on 31 Dec, 2022"), Some(1_672_488_000_000));
        assert_eq!(parse_date("13:00 pm on 1 May, 2023"), None);
        assert_eq!(parse_date("1:56 pm on 31 February, 2023"), None);
        assert_eq!(parse_date(""), None);
    }

    #[test]
    fn recall() {
        let ranked = s(&["D1:1", "D2:2", "D1:3", "D3:1"]);
        // evidence {D1:3, D2:2} (D2:2 twice): top 1 has none -> 0; top 2 has D2:2 -> 1/2;
        // top 3 has both -> 1
        let evidence = s(&["D1:3", "D2:2", "D2:2"]);
        assert_eq!(recall_at_k(&ranked, &evidence, 1), Some(0.0));
        assert_eq!(recall_at_k(&ranked, &evidence, 2), Some(0.5));
        assert_eq!(recall_at_k(&ranked, &evidence, 3), Some(1.0));
        // three evidence turns, one found in the top 10 -> 1/3
        let evidence = s(&["D3:1", "D4:1", "D5:5"]);
        assert_eq!(recall_at_k(&ranked, &evidence, 10), Some(1.0 / 3.0));
        assert_eq!(recall_at_k(&ranked, &[], 10), None);
    }

    #[test]
    fn real_dev_file() {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/locomo/locomo_dev.json");
        if !path.exists() {
            println!("note: {} absent, test skipped", path.display());
            return;
        }
        let (convs, q) = load(&path).unwrap();
        println!("{q:?}");
        assert_eq!(convs.len(), 4);
        assert_eq!(convs.iter().map(|c| c.qa.len()).sum::<usize>(), 757);
        assert_eq!(q.questions, 757);
        assert_eq!(convs.iter().map(|c| c.sessions.len()).collect::<Vec<_>>(), [19, 19, 32, 29]);
        // the documented quirks of the dev split
        assert_eq!(q.empty_evidence, 2);
        assert_eq!(q.malformed_evidence, 2); // "D8:6; D9:17" and "D"
        assert_eq!(q.missing_turns, 1); // D10:19 in conv-42
        assert_eq!(q.integer_answers, 6);
        assert_eq!(q.adversarial_answers, 171);
        for c in &convs {
            for s in &c.sessions {
                assert!(s.time.is_some(), "{}: {:?}", s.id, s.date);
                assert!(!s.turns.is_empty());
            }
            for qa in &c.qa {
                assert!((1..=5).contains(&qa.category));
                for e in &qa.evidence {
                    assert!(c.session_id_of(e).is_some(), "{e}");
                }
            }
        }
    }
}

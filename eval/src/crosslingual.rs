//! The cross-lingual fixture (`tests/fixtures/crosslingual/facts.jsonl`): English facts,
//! each asked about in Spanish, German, Russian and Japanese, and its scoring: R@1 and
//! R@5 of the question's own fact, per language and overall.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::{Value, json};

/// The languages of the questions, in report order.
pub const LANGUAGES: [&str; 4] = ["es", "de", "ru", "ja"];

/// One fact and its questions.
#[derive(Debug, Clone, Deserialize)]
pub struct Fact {
    /// `f001` ... `f080`.
    pub id: String,
    /// The English memory.
    pub fact: String,
    /// Per language (`es`, `de`, `ru`, `ja`), the question only this fact answers.
    pub questions: BTreeMap<String, String>,
}

/// Reads the fixture (JSON lines); blank lines are skipped.
pub fn load(path: &Path) -> Result<Vec<Fact>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Parses the fixture's lines.
pub fn parse(text: &str) -> Result<Vec<Fact>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| format!("line {}: {e}", i + 1)))
        .collect()
}

/// Hits at rank 1 and within the top 5, of how many questions.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Count {
    at1: usize,
    at5: usize,
    n: usize,
}

impl Count {
    fn json(&self) -> Value {
        let share = |h: usize| if self.n == 0 { 0.0 } else { h as f64 / self.n as f64 };
        json!({"n": self.n, "r@1": share(self.at1), "r@5": share(self.at5), "hits@1": self.at1, "hits@5": self.at5})
    }
}

/// R@1 and R@5 per language, added one question at a time.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    per: BTreeMap<String, Count>,
}

impl Tally {
    /// Scores one question: the 1-based rank of `gold` in `ranked` (`None`: not there).
    /// Only the first 5 places count; a fact listed twice counts at its first place.
    pub fn add(&mut self, language: &str, gold: &str, ranked: &[String]) -> Option<usize> {
        let rank = ranked.iter().position(|id| id == gold).map(|i| i + 1);
        let c = self.per.entry(language.to_string()).or_default();
        c.n += 1;
        c.at1 += usize::from(rank == Some(1));
        c.at5 += usize::from(rank.is_some_and(|r| r <= 5));
        rank
    }

    /// R@1 and R@5 of one language, or of every question (`"all"`).
    pub fn recall(&self, language: &str) -> (f64, f64) {
        let c = self.count(language);
        let share = |h: usize| if c.n == 0 { 0.0 } else { h as f64 / c.n as f64 };
        (share(c.at1), share(c.at5))
    }

    fn count(&self, language: &str) -> Count {
        if language == "all" {
            self.per.values().fold(Count::default(), |a, c| Count {
                at1: a.at1 + c.at1,
                at5: a.at5 + c.at5,
                n: a.n + c.n,
            })
        } else {
            self.per.get(language).copied().unwrap_or_default()
        }
    }

    /// `{language: {n, r@1, r@5, hits@1, hits@5}, ..., "all": {...}}`.
    pub fn report(&self) -> Value {
        let mut out = serde_json::Map::new();
        for lang in self.per.keys() {
            out.insert(lang.clone(), self.count(lang).json());
        }
        out.insert("all".into(), self.count("all").json());
        Value::Object(out)
    }
}

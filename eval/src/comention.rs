//! A graph proposed from text with no model, for measuring graph expansion on data that
//! comes without one: proper names (runs of capitalized words inside a sentence, seen in
//! at least two utterances) and the speakers become entities; a speaker `mentions` each
//! name in what they say, and names said in the same utterance are `mentioned_with` each
//! other. Each fact's sources are the memories it was read from.
//!
//! This is a stand-in for the model extractor the daemon can use: deliberately plain,
//! general English capitalization rules, nothing taken from any benchmark's questions.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use amber_core::MemoryId;
use amber_core::graph::{NewEntity, NewFact, normalize_name};

/// Capitalized words that start clauses or are pronouns, not names.
const NOT_NAMES: &[&str] = &[
    "i",
    "i'm",
    "i've",
    "i'd",
    "i'll",
    "the",
    "a",
    "an",
    "my",
    "your",
    "our",
    "their",
    "his",
    "her",
    "it",
    "it's",
    "this",
    "that",
    "these",
    "those",
    "we",
    "you",
    "he",
    "she",
    "they",
    "oh",
    "hey",
    "hi",
    "hello",
    "yes",
    "no",
    "yeah",
    "wow",
    "thanks",
    "thank",
    "ok",
    "okay",
    "so",
    "and",
    "but",
    "or",
    "if",
    "when",
    "what",
    "how",
    "why",
    "where",
    "who",
    "mr",
    "mrs",
    "ms",
    "dr",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
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

/// Names co-mentioned per utterance at most (the rest are ignored for pairs).
const MAX_PAIR_NAMES: usize = 6;

/// The capitalized runs of a text that do not start a sentence.
pub fn name_candidates(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut run: Vec<&str> = Vec::new();
    let mut sentence_start = true;
    let flush = |run: &mut Vec<&str>, out: &mut Vec<String>| {
        if !run.is_empty() {
            out.push(run.join(" "));
            run.clear();
        }
    };
    for raw in text.split_whitespace() {
        let word = raw.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'');
        let word = word.strip_suffix("'s").or_else(|| word.strip_suffix("’s")).unwrap_or(word);
        let capitalized = word.chars().next().is_some_and(char::is_uppercase)
            && word.chars().skip(1).any(char::is_lowercase)
            && !NOT_NAMES.contains(&word.to_lowercase().as_str());
        if capitalized && !sentence_start && word.len() > 1 {
            run.push(word);
        } else {
            flush(&mut run, &mut out);
        }
        let ends = raw.ends_with(['.', '!', '?', ':']);
        if ends || raw.ends_with([',', ';']) || raw != word && !raw.ends_with(word) {
            flush(&mut run, &mut out);
        }
        sentence_start = ends;
    }
    flush(&mut run, &mut out);
    out.retain(|n| n.split(' ').count() <= 3);
    out
}

/// One utterance: the memory holding it, who said it, what was said.
pub struct Utterance<'a> {
    /// The memory it was filed in.
    pub memory: &'a MemoryId,
    /// The speaker.
    pub speaker: &'a str,
    /// The text.
    pub text: &'a str,
}

/// Entities and facts proposed from utterances.
pub fn propose(utterances: &[Utterance<'_>]) -> (Vec<NewEntity>, Vec<NewFact>) {
    let speakers: BTreeSet<String> = utterances.iter().map(|u| u.speaker.trim().to_string()).collect();
    let speaker_norms: BTreeSet<String> = speakers.iter().map(|s| normalize_name(s)).collect();
    let found: Vec<Vec<String>> = utterances.iter().map(|u| name_candidates(u.text)).collect();
    // A name counts when it appears in two utterances or more.
    let mut seen: HashMap<String, usize> = HashMap::new();
    for names in &found {
        let distinct: BTreeSet<String> = names.iter().map(|n| normalize_name(n)).collect();
        for n in distinct {
            *seen.entry(n).or_default() += 1;
        }
    }
    let keep = |n: &str| {
        seen.get(&normalize_name(n)).is_some_and(|c| *c >= 2) || speaker_norms.contains(&normalize_name(n))
    };
    let mut facts: BTreeMap<(String, String, String), Vec<MemoryId>> = BTreeMap::new();
    let mut add = |s: &str, p: &str, o: &str, m: &MemoryId| {
        let key = (s.to_string(), p.to_string(), o.to_string());
        let v = facts.entry(key).or_default();
        if !v.contains(m) {
            v.push(m.clone());
        }
    };
    for (u, names) in utterances.iter().zip(&found) {
        let mut names: Vec<&String> = names.iter().filter(|n| keep(n)).collect();
        names.dedup_by_key(|n| normalize_name(n));
        let speaker = u.speaker.trim();
        for n in &names {
            if normalize_name(n) != normalize_name(speaker) {
                add(speaker, "mentions", n, u.memory);
            }
        }
        let mut pair_names: Vec<&String> =
            names.iter().copied().filter(|n| normalize_name(n) != normalize_name(speaker)).collect();
        pair_names.truncate(MAX_PAIR_NAMES);
        for (i, a) in pair_names.iter().enumerate() {
            for b in &pair_names[i + 1..] {
                if normalize_name(a) != normalize_name(b) {
                    let (x, y) = if normalize_name(a) < normalize_name(b) { (a, b) } else { (b, a) };
                    add(x, "mentioned_with", y, u.memory);
                }
            }
        }
    }
    let entities = speakers
        .iter()
        .map(|s| NewEntity { name: s.clone(), kind: Some("person".into()), aliases: vec![] })
        .collect();
    let facts = facts
        .into_iter()
        .map(|((s, p, o), sources)| NewFact {
            subject: s,
            predicate: p,
            object: Some(o),
            sources,
            ..NewFact::default()
        })
        .collect();
    (entities, facts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_inside_sentences_only() {
        assert_eq!(
            name_candidates("Yesterday I met Jon Snow at Winterfell. Then we left."),
            vec!["Jon Snow", "Winterfell"]
        );
        assert_eq!(name_candidates("Hey Mel, how is Oscar's dog?"), vec!["Mel", "Oscar"]);
        assert!(name_candidates("The end. Nothing here").is_empty());
    }

    #[test]
    fn speakers_mention_names_seen_twice() {
        let (a, b): (MemoryId, MemoryId) = ("a".repeat(32).parse().unwrap(), "b".repeat(32).parse().unwrap());
        let us = [
            Utterance { memory: &a, speaker: "Caroline", text: "I went hiking with Oscar and Mel today." },
            Utterance { memory: &b, speaker: "Melanie", text: "Say hi to Oscar from me, and to Gina." },
        ];
        let (entities, facts) = propose(&us);
        assert_eq!(entities.len(), 2);
        let f: Vec<(String, String, String)> = facts
            .iter()
            .map(|f| (f.subject.clone(), f.predicate.clone(), f.object.clone().unwrap()))
            .collect();
        // Oscar is in both utterances; Mel and Gina once each (not kept).
        assert_eq!(
            f,
            vec![
                ("Caroline".into(), "mentions".into(), "Oscar".into()),
                ("Melanie".into(), "mentions".into(), "Oscar".into())
            ]
        );
        assert_eq!(facts[0].sources, vec![a]);
    }
}

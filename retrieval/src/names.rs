//! Finding the entity names a text mentions: whole-word matches of normalized names
//! (see [`amber_core::graph::normalize_name`]), deterministic, no model.

use std::collections::HashMap;

use amber_core::graph::name_words;

/// The names of one scope's entities, looked up by their first word.
#[derive(Debug, Default, Clone)]
pub struct NameMatcher {
    by_first: HashMap<String, Vec<(Vec<String>, i64)>>,
    len: usize,
}

impl NameMatcher {
    /// An empty matcher.
    pub fn new() -> NameMatcher {
        NameMatcher::default()
    }

    /// Adds a normalized name of `entity` (a name already there for it is kept once).
    pub fn add(&mut self, norm: &str, entity: i64) {
        let words: Vec<String> = name_words(norm).collect();
        let Some(first) = words.first().cloned() else { return };
        let list = self.by_first.entry(first).or_default();
        if !list.iter().any(|(w, e)| *w == words && *e == entity) {
            list.push((words, entity));
            self.len += 1;
        }
    }

    /// How many names it holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when it holds no name.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The entities whose names occur in `text` as whole words (case and punctuation
    /// ignored), each once, in order of first mention.
    pub fn find(&self, text: &str) -> Vec<i64> {
        if self.is_empty() {
            return Vec::new();
        }
        let words: Vec<String> = name_words(text).collect();
        let mut out = Vec::new();
        for i in 0..words.len() {
            let Some(names) = self.by_first.get(&words[i]) else { continue };
            for (name, entity) in names {
                if words.len() - i >= name.len()
                    && words[i..i + name.len()] == name[..]
                    && !out.contains(entity)
                {
                    out.push(*entity);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_words_only_case_and_punctuation_ignored() {
        let mut m = NameMatcher::new();
        m.add("ada lovelace", 1);
        m.add("ada", 1);
        m.add("bob", 2);
        m.add("rust", 3);
        m.add("rust", 3);
        assert_eq!(m.len(), 4);
        assert_eq!(m.find("Met ADA Lovelace, then Bob."), vec![1, 2]);
        assert_eq!(m.find("bobsled trust"), Vec::<i64>::new());
        assert_eq!(m.find("we use Rust; bob too"), vec![3, 2]);
        assert_eq!(m.find("lovelace"), Vec::<i64>::new());
        assert!(NameMatcher::new().find("anything").is_empty());
    }
}

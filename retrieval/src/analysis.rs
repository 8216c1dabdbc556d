//! How text becomes BM25 terms: the stemmed words of the `content` field (English stop
//! words dropped) and the identifiers, paths and codes of the `code` field, kept whole.

use tantivy::Index;
use tantivy::tokenizer::{
    Language, LowerCaser, RegexTokenizer, RemoveLongFilter, SimpleTokenizer, Stemmer, StopWordFilter,
    TextAnalyzer,
};

/// English function words dropped from the stemmed field: the question and pronoun
/// words of natural-language queries ("when did I ...") match everything and nothing.
/// Lucene's list plus common interrogatives, pronouns and auxiliaries.
const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "after",
    "again",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "been",
    "before",
    "being",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "during",
    "each",
    "for",
    "from",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "me",
    "might",
    "more",
    "most",
    "must",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "of",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "own",
    "same",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "until",
    "up",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];
/// Code identifiers, paths and codes kept whole: `a.b/c-d`, `snake_case`, `E0502`, `v2`.
const CODE_PATTERN: &str = r"\w+(?:[./:\-]+\w+)+|\w*[_\d]\w*";

/// Registers the two analyzers on an index: `amber_en` (words, lower-cased, stop words
/// dropped, English stems) and `amber_code` (identifiers, paths and codes kept whole).
pub(crate) fn register(index: &Index) -> tantivy::Result<()> {
    let en = TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .filter(StopWordFilter::remove(STOP_WORDS.iter().map(|w| w.to_string())))
        .filter(Stemmer::new(Language::English))
        .build();
    let code = TextAnalyzer::builder(RegexTokenizer::new(CODE_PATTERN)?)
        .filter(RemoveLongFilter::limit(100))
        .filter(LowerCaser)
        .build();
    index.tokenizers().register("amber_en", en);
    index.tokenizers().register("amber_code", code);
    Ok(())
}

/// A token that names something exactly: a letter plus a digit, `_`, `.`, `/` or `:`.
/// Hyphenated words (`follow-up`) and plain numbers (`2023`) are not identifiers.
pub(crate) fn is_identifier(token: &str) -> bool {
    token.chars().any(char::is_alphabetic)
        && token.chars().any(|c| c.is_ascii_digit() || matches!(c, '_' | '.' | '/' | ':'))
}

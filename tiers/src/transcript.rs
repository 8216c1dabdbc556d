//! How much of a session's transcript was filed already, so each part of it is stored
//! once: a client may send the transcript again and again as it grows (Claude Code's
//! hooks send it at every stop and at the end), and only what follows the mark is new.
//!
//! A client may drop the start of a very long transcript (it sends the text without its
//! first `skipped` characters); the mark then still finds its place by the hash of the
//! last characters it filed.

use serde::{Deserialize, Serialize};

/// How many of the last filed characters the mark keeps a hash of.
const TAIL: usize = 1024;

/// The part of a session's transcript already filed: its first `chars` characters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TranscriptMark {
    /// Characters filed, counted from the transcript's start.
    pub chars: usize,
    /// SHA-256 (hex) of all those characters, when the client sent them all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// SHA-256 (hex) of the last `tail_chars` of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail_sha256: Option<String>,
    /// How many characters `tail_sha256` covers (at most 1,024).
    #[serde(default)]
    pub tail_chars: usize,
}

fn sha(text: &str) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(text.as_bytes()))
}

/// The byte offset of character `n` of `text` (its length when `n` is the count), or
/// `None` when it has fewer characters.
fn byte_at(text: &str, n: usize) -> Option<usize> {
    text.char_indices().map(|(i, _)| i).chain(std::iter::once(text.len())).nth(n)
}

impl TranscriptMark {
    /// The mark once `text` is filed: `text` is the transcript without its first
    /// `skipped` characters.
    pub fn of(text: &str, skipped: usize) -> TranscriptMark {
        let n = text.chars().count();
        let tail_chars = n.min(TAIL);
        let from = byte_at(text, n - tail_chars).unwrap_or(0);
        TranscriptMark {
            chars: skipped + n,
            sha256: (skipped == 0).then(|| sha(text)),
            tail_sha256: Some(sha(&text[from..])),
            tail_chars,
        }
    }

    /// What of `text` (the transcript without its first `skipped` characters) is new
    /// since this mark: what follows the marked part when `text` holds its end, else all
    /// of `text` (a different transcript, or the filed part was dropped whole).
    pub fn new_part<'a>(&self, text: &'a str, skipped: usize) -> &'a str {
        let Some(at) = self.chars.checked_sub(skipped) else { return text };
        let Some(end) = byte_at(text, at) else { return text };
        if skipped == 0 && self.sha256.as_deref() == Some(sha(&text[..end]).as_str()) {
            return &text[end..];
        }
        if let Some(tail) = &self.tail_sha256
            && self.tail_chars <= at
            && let Some(from) = byte_at(text, at - self.tail_chars)
            && sha(&text[from..end]) == *tail
        {
            return &text[end..];
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_follows_the_mark_is_new() {
        let first = "user: é hello\n\nassistant: hi\n\n";
        let m = TranscriptMark::of(first, 0);
        assert_eq!(m.chars, first.chars().count());
        let grown = format!("{first}user: more\n\n");
        assert_eq!(m.new_part(&grown, 0), "user: more\n\n");
        assert_eq!(m.new_part(first, 0), "");
        // Another transcript, or a shorter one: all of it is new.
        assert_eq!(
            m.new_part("user: other\n\nassistant: hi\n\nuser: x", 0),
            "user: other\n\nassistant: hi\n\nuser: x"
        );
        assert_eq!(m.new_part("user:", 0), "user:");
    }

    #[test]
    fn a_transcript_sent_without_its_start_is_placed_by_the_tail() {
        let long: String = (0..3000).map(|i| format!("line {i}\n")).collect();
        // Filed whole, then sent again grown and without its first 5,000 characters.
        let m = TranscriptMark::of(&long, 0);
        let grown = format!("{long}user: new\n");
        let sent: String = grown.chars().skip(5000).collect();
        assert_eq!(m.new_part(&sent, 5000), "user: new\n");
        // Filed without its start too, then grown again.
        let m2 = TranscriptMark::of(&sent, 5000);
        assert_eq!(m2.chars, grown.chars().count());
        assert_eq!(m2.sha256, None);
        let again = format!("{grown}assistant: ok\n");
        let sent2: String = again.chars().skip(7000).collect();
        assert_eq!(m2.new_part(&sent2, 7000), "assistant: ok\n");
        // A different text at the same place is all new.
        let other: String = sent2.replace("line 2999", "line 9999");
        assert_eq!(m2.new_part(&other, 7000), other);
        // The filed part dropped whole: nothing to place it by, all of it is new.
        assert_eq!(m2.new_part("x", m2.chars + 10), "x");
    }

    #[test]
    fn a_mark_stored_before_tails_still_places_a_whole_transcript() {
        let old: TranscriptMark =
            serde_json::from_value(serde_json::json!({"chars": 3, "sha256": sha("abc")})).unwrap();
        assert_eq!(old.new_part("abcdef", 0), "def");
        assert_eq!(old.new_part("xbcdef", 0), "xbcdef");
    }
}

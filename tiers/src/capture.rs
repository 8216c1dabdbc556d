//! Capture: what a session files while it runs (tool outputs, turns), verbatim except for
//! secrets, which are redacted before anything is stored.

use serde::{Deserialize, Serialize};

use crate::redact::redact;

/// Capture limits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CaptureConfig {
    /// Shorter texts are skipped (default 50 characters).
    pub min_chars: usize,
    /// Longer texts are skipped (default 8,192 characters).
    pub max_chars: usize,
}

impl Default for CaptureConfig {
    fn default() -> CaptureConfig {
        CaptureConfig { min_chars: 50, max_chars: 8192 }
    }
}

/// Why a capture was not filed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// Under `min_chars`.
    TooShort,
    /// Over `max_chars`.
    TooLong,
}

/// What to file for a captured text.
#[derive(Debug, Clone, PartialEq)]
pub enum Captured {
    /// File this text (secrets replaced); `redacted` of them were found.
    File {
        /// The text to store.
        text: String,
        /// How many secrets were replaced.
        redacted: usize,
    },
    /// Do not file it.
    Skip(SkipReason),
}

/// Applies the limits (on the original text, in characters) and redacts secrets.
pub fn capture(text: &str, cfg: &CaptureConfig) -> Captured {
    let n = text.chars().count();
    if n < cfg.min_chars {
        return Captured::Skip(SkipReason::TooShort);
    }
    if n > cfg.max_chars {
        return Captured::Skip(SkipReason::TooLong);
    }
    let (text, redacted) = redact(text);
    Captured::File { text, redacted }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_applied_in_characters() {
        let cfg = CaptureConfig { min_chars: 5, max_chars: 10 };
        assert_eq!(capture("abcd", &cfg), Captured::Skip(SkipReason::TooShort));
        assert_eq!(capture("ééééé", &cfg), Captured::File { text: "ééééé".into(), redacted: 0 });
        assert_eq!(capture("abcdefghijk", &cfg), Captured::Skip(SkipReason::TooLong));
    }
}

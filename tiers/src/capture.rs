//! Capture: what a session files while it runs (tool outputs, turns), verbatim except for
//! secrets, which are redacted before anything is stored.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

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

/// A secret pattern: the regex and, when only part of the match is secret, the group.
struct Pattern {
    name: &'static str,
    re: Regex,
    group: usize,
}

fn pattern(name: &'static str, re: &str, group: usize) -> Pattern {
    Pattern { name, re: Regex::new(re).expect("a valid secret pattern"), group }
}

static PATTERNS: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    vec![
        pattern(
            "private_key",
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
            0,
        ),
        pattern("aws_access_key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", 0),
        pattern("github_token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b", 0),
        pattern("openai_key", r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}", 0),
        pattern("slack_token", r"\bxox[abprs]-[A-Za-z0-9\-]{10,}", 0),
        pattern("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}\b", 0),
        pattern("jwt", r"\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}", 0),
        // scheme://user:password@host
        pattern("url_password", r"[a-zA-Z][a-zA-Z0-9+.\-]*://[^/\s:@]+:([^/\s@]+)@", 1),
        // password = "...", api_key: ..., SECRET_TOKEN=...
        pattern(
            "assigned_secret",
            r#"(?i)\b[a-z0-9_\-]*(?:password|passwd|secret|token|api[_\-]?key|access[_\-]?key)[a-z0-9_\-]*["']?\s*[:=]\s*["']?([^\s"',;]{8,})"#,
            1,
        ),
        pattern("bearer", r"(?i)\bbearer\s+([A-Za-z0-9_\-\.=]{16,})", 1),
    ]
});

/// Replaces secret-looking strings with `[REDACTED:<kind>]`; returns the text and how
/// many were replaced. Everything else is kept byte for byte.
pub fn redact(text: &str) -> (String, usize) {
    let mut out = text.to_string();
    let mut count = 0;
    for p in PATTERNS.iter() {
        let mut spans: Vec<(usize, usize)> = Vec::new();
        for caps in p.re.captures_iter(&out) {
            if let Some(m) = caps.get(p.group)
                && !m.as_str().starts_with("[REDACTED:")
            {
                spans.push((m.start(), m.end()));
            }
        }
        for (a, b) in spans.into_iter().rev() {
            out.replace_range(a..b, &format!("[REDACTED:{}]", p.name));
            count += 1;
        }
    }
    (out, count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planted_secrets_are_redacted_and_the_rest_kept_verbatim() {
        let text = "deploy log:\n\
            export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n\
            git clone https://ci-bot:hunter2hunter2@git.example.com/repo.git\n\
            curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345' https://api\n\
            token ghp_abcdefghijklmnopqrstuvwxyz0123456789AB in the env\n\
            OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx\n\
            db_password: \"s3cr3t-pa55word\"\n\
            -----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nabc\n-----END RSA PRIVATE KEY-----\n\
            the build took 42 s and target/ holds the cache";
        let (out, n) = redact(text);
        for secret in [
            "AKIAIOSFODNN7EXAMPLE",
            "hunter2hunter2",
            "abcdefghijklmnopqrstuvwxyz012345",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789AB",
            "sk-proj-abcdefghijklmnopqrstuvwx",
            "s3cr3t-pa55word",
            "MIIEowIBAAKCAQEA7",
        ] {
            assert!(!out.contains(secret), "{secret} survived:\n{out}");
        }
        assert!(n >= 7, "{n} redactions:\n{out}");
        assert!(out.contains("the build took 42 s and target/ holds the cache"));
        assert!(
            out.contains("git clone https://ci-bot:[REDACTED:url_password]@git.example.com/repo.git"),
            "{out}"
        );
        assert!(out.contains("[REDACTED:private_key]"));
    }

    #[test]
    fn ordinary_text_is_untouched() {
        for text in [
            "The password policy says twelve characters; see docs/security.md.",
            "fn tokenize(text: &str) -> Vec<Token> { split(text) }",
            "visit https://example.com/path?q=1 for the token bucket docs",
            "Set the secret in the vault, never in the repo.",
        ] {
            assert_eq!(redact(text), (text.to_string(), 0), "{text}");
        }
    }

    #[test]
    fn limits_are_applied_in_characters() {
        let cfg = CaptureConfig { min_chars: 5, max_chars: 10 };
        assert_eq!(capture("abcd", &cfg), Captured::Skip(SkipReason::TooShort));
        assert_eq!(capture("ééééé", &cfg), Captured::File { text: "ééééé".into(), redacted: 0 });
        assert_eq!(capture("abcdefghijk", &cfg), Captured::Skip(SkipReason::TooLong));
    }
}

//! Scopes: where a memory lives (a project, then a topic inside it).

use std::fmt;
use std::str::FromStr;

use crate::InvalidInput;

/// The longest scope accepted, in bytes.
pub const MAX_SCOPE_BYTES: usize = 256;

/// A `/`-separated path such as `amber` or `amber/retrieval`.
///
/// Each segment is non-empty and made of ASCII letters, digits and `_ - . : @ +`.
/// A scope is *within* another when it equals it or starts with it followed by `/`,
/// so filtering by `amber` also finds memories filed under `amber/retrieval`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Scope(String);

impl Scope {
    /// The scope used when a caller names none.
    pub const DEFAULT: &'static str = "default";

    /// The scope as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// True when `self` equals `ancestor` or lies under it.
    pub fn is_within(&self, ancestor: &Scope) -> bool {
        self.0 == ancestor.0
            || (self.0.starts_with(&ancestor.0) && self.0.as_bytes().get(ancestor.0.len()) == Some(&b'/'))
    }

    /// This scope and every ancestor, shortest first: `a`, `a/b`, `a/b/c`.
    pub fn prefixes(&self) -> impl Iterator<Item = &str> {
        self.0.match_indices('/').map(|(i, _)| &self.0[..i]).chain(std::iter::once(self.0.as_str()))
    }
}

impl Default for Scope {
    fn default() -> Self {
        Scope(Self::DEFAULT.to_string())
    }
}

impl FromStr for Scope {
    type Err = InvalidInput;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = |reason| InvalidInput::BadScope { given: s.to_string(), reason };
        if s.is_empty() {
            return Err(bad("a scope cannot be empty"));
        }
        if s.len() > MAX_SCOPE_BYTES {
            return Err(bad("a scope is at most 256 bytes"));
        }
        for segment in s.split('/') {
            if segment.is_empty() {
                return Err(bad("segments between '/' cannot be empty"));
            }
            if !segment
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':' | b'@' | b'+'))
            {
                return Err(bad("use ASCII letters, digits and _ - . : @ + in segments separated by '/'"));
            }
        }
        Ok(Scope(s.to_string()))
    }
}

impl TryFrom<String> for Scope {
    type Error = InvalidInput;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<Scope> for String {
    fn from(s: Scope) -> String {
        s.0
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_paths_and_refuses_bad_ones() {
        for ok in ["a", "amber/retrieval", "lme/q_1-2.x", "user@host:proj/+topic"] {
            assert!(ok.parse::<Scope>().is_ok(), "{ok}");
        }
        for bad in ["", "/a", "a/", "a//b", "a b", "é", "a\n", &"x".repeat(257)] {
            assert!(matches!(bad.parse::<Scope>(), Err(InvalidInput::BadScope { .. })), "{bad:?}");
        }
    }

    #[test]
    fn within_is_by_segment_not_by_string_prefix() {
        let s = |x: &str| x.parse::<Scope>().unwrap();
        assert!(s("amber/retrieval").is_within(&s("amber")));
        assert!(s("amber").is_within(&s("amber")));
        assert!(!s("amberd").is_within(&s("amber")));
        assert!(!s("amber").is_within(&s("amber/retrieval")));
        assert_eq!(s("a/b/c").prefixes().collect::<Vec<_>>(), vec!["a", "a/b", "a/b/c"]);
    }
}

//! The checks a pattern's match must pass to count as a secret: randomness, what a
//! variable name says of its value, placeholders, references and paths.

/// Shannon entropy in bits per character.
pub(super) fn entropy(s: &str) -> f64 {
    let mut counts = std::collections::HashMap::<char, usize>::new();
    for c in s.chars() {
        *counts.entry(c).or_default() += 1;
    }
    let n = s.chars().count() as f64;
    counts.values().map(|&k| k as f64 / n).map(|p| -p * p.log2()).sum()
}

pub(super) fn has_digit(s: &str) -> bool {
    s.bytes().any(|b| b.is_ascii_digit())
}

/// Random-looking: letters and digits mixed, not a run of one character.
pub(super) fn random_looking(s: &str, min_len: usize, min_entropy: f64) -> bool {
    s.len() >= min_len
        && has_digit(s)
        && s.bytes().any(|b| b.is_ascii_alphabetic())
        && entropy(s) >= min_entropy
}

/// `sk-...`: real keys always carry digits (a hyphenated word never looks like one).
pub(super) fn digit_in_match(c: &regex::Captures<'_>) -> bool {
    has_digit(&c[0])
}

pub(super) fn random_match(c: &regex::Captures<'_>) -> bool {
    random_looking(&c[0], 20, 3.5)
}

/// How a variable name speaks of its value: a secret (`DB_PASSWORD`, `apiKey`,
/// `client_secret`), maybe one (`key`, `auth`), or neither (`tokenizer`, `monkey`,
/// `author`). Judged on the name's words (split at `_`, `-`, `.` and camelCase).
#[derive(PartialEq)]
enum NameKind {
    Secret,
    Maybe,
    Other,
}

fn name_kind(name: &str) -> NameKind {
    let mut words: Vec<String> = Vec::new();
    for part in name.split(|c: char| !c.is_ascii_alphanumeric()) {
        let mut word = String::new();
        let mut prev_lower = false;
        for ch in part.chars() {
            if ch.is_ascii_uppercase() && prev_lower && !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            prev_lower = ch.is_ascii_lowercase() || ch.is_ascii_digit();
            word.push(ch.to_ascii_lowercase());
        }
        if !word.is_empty() {
            words.push(word);
        }
    }
    const SECRET: &[&str] = &[
        "password",
        "passwords",
        "passwd",
        "pass",
        "pwd",
        "secret",
        "secrets",
        "token",
        "tokens",
        "credential",
        "credentials",
        "creds",
        "apikey",
        "privatekey",
        "secretkey",
        "accesskey",
    ];
    const KEYED: &[&str] = &["api", "access", "private", "signing", "encryption", "master", "secret"];
    let is_key = |w: &str| w == "key" || w == "keys";
    if words.iter().any(|w| SECRET.contains(&w.as_str()))
        || words.windows(2).any(|p| KEYED.contains(&p[0].as_str()) && is_key(&p[1]))
    {
        NameKind::Secret
    } else if words.iter().any(|w| is_key(w) || w == "auth") {
        NameKind::Maybe
    } else {
        NameKind::Other
    }
}

/// First words of placeholder values (`your-password`, `my_api_key`, `example_token`).
const PLACEHOLDER_WORDS: &[&str] = &[
    "your",
    "my",
    "the",
    "some",
    "example",
    "sample",
    "dummy",
    "fake",
    "placeholder",
    "insert",
    "replace",
    "enter",
    "change",
    "put",
    "foo",
    "redacted",
];

/// A value assigned to a secret-looking name, unless it is a placeholder, a reference
/// (`$VAR`, `${...}`, `os.environ[...]`, `<key>`), a path or a URL, or a plain word.
pub(super) fn assigned_value(c: &regex::Captures<'_>) -> bool {
    let (name, value) = (&c[1], &c[2]);
    let first = value.chars().next().unwrap_or(' ');
    if matches!(first, '$' | '<' | '{' | '(' | '[' | '%' | '*' | '#')
        || path_like(value)
        || value.contains("://")
        || value.contains(['(', '['])
        || value.ends_with(':')
        || value.contains("xxxx")
        || value.contains("...")
        || entropy(value) < 2.0
    {
        return false;
    }
    // YOUR_API_KEY, CHANGE_ME, your-password, my_api_secret, settings.SECRET_KEY: names
    // and placeholders, not values.
    let first_word = value.split(['_', '-']).next().unwrap_or_default().to_ascii_lowercase();
    let placeholder = value.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
        || (value.contains(['_', '-']) && PLACEHOLDER_WORDS.contains(&first_word.as_str()));
    let reference = value.contains('.')
        && value
            .split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        && !has_digit(value);
    if placeholder || reference {
        return false;
    }
    match name_kind(name) {
        // A password may be a plain word when long enough; short words are prose.
        NameKind::Secret => {
            has_digit(value) || !value.bytes().all(|b| b.is_ascii_alphabetic()) || value.len() >= 16
        }
        NameKind::Maybe => random_looking(value, 16, 3.0),
        NameKind::Other => false,
    }
}

/// A file path (`/run/secrets/db_password`, `~/.ssh/id_rsa`), not a base64 secret that
/// happens to start with a slash: two slashes or more and no random-looking segment.
fn path_like(value: &str) -> bool {
    let rooted = ["/", "~/", "./", "../"].iter().any(|p| value.starts_with(p));
    let random_segment = |seg: &str| {
        seg.len() >= 10
            && has_digit(seg)
            && seg.bytes().any(|b| b.is_ascii_uppercase())
            && seg.bytes().any(|b| b.is_ascii_lowercase())
    };
    rooted && value.matches('/').count() >= 2 && !value.split('/').any(random_segment)
}

/// Vault's legacy `s.` tokens: only clearly random ones (`s.` starts many words).
pub(super) fn random_match_short(c: &regex::Captures<'_>) -> bool {
    random_looking(&c[0][2..], 24, 3.5)
}

pub(super) fn always(_: &regex::Captures<'_>) -> bool {
    true
}

//! Values that stand for a secret rather than being one, as documentation, examples and
//! config templates write them: references (`$VAR`, `${...}`, `<password>`), masks
//! (`****`, `xxxx`, `...`), placeholders (`your-api-key`, `changeme`, `YOUR_KEY_HERE`),
//! fillers (`ghp_xxxx...`, `...Token00000000`) and words that describe a secret
//! (`secret-looking`, `token-based`). Every value-like rule keeps them.

use super::names::{has_digit, words};

/// First words of placeholder values (`your-password`, `my_api_key`, `example_token`).
pub(super) const PLACEHOLDER_WORDS: &[&str] = &[
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

/// Values that are a word standing for the secret, once a placeholder's owner word
/// (`your`, `my`, ...) and a trailing `here` are taken off, case and separators aside:
/// `changeme`, `password`, `PASSWORD`, `example`, `your_token_here`, `mypassword`,
/// `<api-key>`. Not `secret`: a common password for a local database
/// (`mysql -psecret`), redacted as one.
const STAND_IN_WORDS: &[&str] = &[
    "password",
    "passwd",
    "pass",
    "pwd",
    "passphrase",
    "token",
    "apikey",
    "key",
    "accesskey",
    "accesstoken",
    "authtoken",
    "changeme",
    "example",
    "placeholder",
    "redacted",
    "dummy",
    "fake",
    "sample",
    "value",
    "foo",
    "foobar",
    "bar",
    "baz",
    "qux",
    "abc",
    "xyz",
];

/// Words a placeholder puts before the thing it stands for (`your`, `my`, `example`).
const OWNER_WORDS: &[&str] = &["your", "my", "the", "some", "example", "sample", "dummy", "fake", "new"];

/// A value that is a word standing for the secret ([`STAND_IN_WORDS`]), maybe numbered
/// (`MYTOKEN1`, `password2`), or nothing but punctuation (a mask: `****`, `...`).
pub(super) fn stand_in_word(v: &str) -> bool {
    let word: String =
        v.chars().filter(char::is_ascii_alphanumeric).map(|c| c.to_ascii_lowercase()).collect();
    let mut w = word.strip_suffix(|c: char| c.is_ascii_digit()).unwrap_or(&word);
    if let Some(rest) = OWNER_WORDS.iter().find_map(|p| w.strip_prefix(p)) {
        w = rest;
    }
    let w = w.strip_suffix("here").unwrap_or(w);
    w.is_empty() || STAND_IN_WORDS.contains(&w)
}

/// A filler where the random part of a token would be: a run of 8 of one character
/// (`...Token00000000`; a random 40-character token has one with a chance of about 1 in
/// 10^12), or 4 `x` or `X` in a row (`ghp_xxxx...`, `AIzaSyXXXX...`). Not a run of `A`:
/// zero bytes in base64, which real tokens have (Dropbox's long-lived ones, Twitter's).
pub(super) fn filler(v: &str) -> bool {
    let b = v.as_bytes();
    let mut run = 1;
    for i in 1..b.len() {
        run = if b[i] == b[i - 1] { run + 1 } else { 1 };
        if (run >= 8 && b[i] != b'A') || (run >= 4 && matches!(b[i], b'x' | b'X')) {
            return true;
        }
    }
    false
}

/// Nouns for a secret, as a value's words use them when it describes one instead of
/// being one (`secret-looking`, `token-based`, `personal-access-token123`).
const SECRET_NOUNS: &[&str] = &[
    "secret",
    "secrets",
    "token",
    "tokens",
    "password",
    "passwords",
    "passwd",
    "passphrase",
    "key",
    "keys",
    "apikey",
    "credential",
    "credentials",
];

/// Words, one of them a secret noun: prose or a placeholder (`secret-looking strings`,
/// `token-based auth`, `my-secret-token`, `personal-access-token123`,
/// `SuperSecretToken`), not a value. Lower-case words joined by `-`, `_` or `.`, or
/// capitalised words run together, each maybe ending in digits. A passphrase of words
/// that do not name a secret (`correct-horse-battery-staple`) is not one of them.
pub(super) fn describes_a_secret(v: &str) -> bool {
    let letters = |w: &str| w.trim_end_matches(|c: char| c.is_ascii_digit()).to_string();
    let joined: Vec<String> = v.split(['-', '_', '.']).map(letters).collect();
    let joined_words = joined.len() >= 2
        && joined.iter().all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase()));
    // SuperSecretToken: capitals start each word, letters only (digits at the end).
    let camel = v.trim_end_matches(|c: char| c.is_ascii_digit());
    let camel_split = words(camel);
    let camel_words = camel.bytes().all(|b| b.is_ascii_alphabetic())
        && camel_split.len() >= 2
        && camel_split.iter().all(|w| w.len() >= 2);
    let nouns = |ws: &[String]| ws.iter().any(|w| SECRET_NOUNS.contains(&w.as_str()));
    (joined_words && nouns(&joined)) || (camel_words && nouns(&camel_split))
}

/// A provider token that is a placeholder: a filler in it, or a placeholder word among
/// its `-`/`_` parts (`xoxb-your-token-here`, `ghp_YOUR_TOKEN`).
pub(super) fn placeholder_token(v: &str) -> bool {
    const WORDS: &[&str] = &["your", "here", "example", "placeholder", "redacted", "dummy", "fake", "sample"];
    filler(v) || v.split(['-', '_']).any(|w| WORDS.contains(&w.to_ascii_lowercase().as_str()))
}

/// A file path (`/run/secrets/db_password`, `~/.ssh/id_rsa`), not a base64 secret that
/// happens to start with a slash: two slashes or more and no random-looking segment.
pub(super) fn path_like(value: &str) -> bool {
    let rooted = ["/", "~/", "./", "../"].iter().any(|p| value.starts_with(p));
    let random_segment = |seg: &str| {
        seg.len() >= 10
            && has_digit(seg)
            && seg.bytes().any(|b| b.is_ascii_uppercase())
            && seg.bytes().any(|b| b.is_ascii_lowercase())
    };
    rooted && value.matches('/').count() >= 2 && !value.split('/').any(random_segment)
}

/// Values that stand for a secret rather than being one: a reference (`$VAR`, `${...}`,
/// `$(cmd)`, `%VAR%`, `<password>`, `{{ password }}`), a mask (`****`, `xxxx`, `...`),
/// a placeholder (`your_password`, `<REDACTED>`, `changeme`, `PASSWORD`), a filler, words
/// that describe a secret, a URL or a path.
pub(super) fn stand_in(v: &str) -> bool {
    let first = v.chars().next().unwrap_or(' ');
    let first_word = v.split(['_', '-', ' ']).next().unwrap_or_default().to_ascii_lowercase();
    matches!(first, '$' | '<' | '{' | '(' | '[' | '%' | '*' | '#')
        || v.bytes().all(|b| matches!(b, b'*' | b'x' | b'X' | b'.' | b'-' | b'_' | b'#'))
        || v.to_ascii_lowercase().contains("xxxx")
        || v.contains("...")
        || (v.contains(['_', '-']) && PLACEHOLDER_WORDS.contains(&first_word.as_str()))
        || stand_in_word(v)
        || filler(v)
        || describes_a_secret(v)
        || v.contains("://")
        || path_like(v)
}

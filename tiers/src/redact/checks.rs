//! The checks a pattern's match must pass to count as a secret: randomness, what a
//! variable name says of its value, placeholders, references and paths, and for the
//! shapes without a prefix of their own (a bare AWS secret key, a password in prose), the
//! words around them.

use std::sync::LazyLock;

use regex::Regex;

use super::placeholders::{
    PLACEHOLDER_WORDS, describes_a_secret, filler, path_like, placeholder_token, stand_in, stand_in_word,
};

/// A match as its check sees it: the whole text, the captures, and the secret's span.
pub(super) struct Found<'a, 't> {
    /// The text searched.
    pub(super) text: &'t str,
    /// The pattern's captures.
    pub(super) caps: &'a regex::Captures<'t>,
    /// The secret: the pattern's group, or the first group after it that took part.
    pub(super) value: regex::Match<'t>,
}

/// A check a match must pass.
pub(super) type Check = fn(&Found<'_, '_>) -> bool;

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

/// `sk-...`: real keys always carry digits (a hyphenated word never looks like one), and
/// no filler or placeholder word ([`provider_token`]).
pub(super) fn digit_in_match(f: &Found<'_, '_>) -> bool {
    has_digit(&f.caps[0]) && !placeholder_token(&f.caps[0])
}

/// A token with a prefix of its own (`ghp_...`, `xoxb-...`, `AIza...`), unless a filler
/// or a placeholder word stands where its random part would be (`ghp_xxxx...`,
/// `xoxb-your-token-here`, `ghp_PersonalAccessToken00000000`), as in documentation.
pub(super) fn provider_token(f: &Found<'_, '_>) -> bool {
    !placeholder_token(f.value.as_str())
}

pub(super) fn random_match(f: &Found<'_, '_>) -> bool {
    random_looking(&f.caps[0], 20, 3.5)
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
    // A word that ends in one (`PGPASSWORD`, `dbpasswd`, `csrftoken`), but not `pass`
    // (`bypass`, `compass`).
    const SUFFIXES: &[&str] = &["password", "passwd", "secret", "token", "apikey"];
    if words.iter().any(|w| SECRET.contains(&w.as_str()) || SUFFIXES.iter().any(|x| w.ends_with(x)))
        || words.windows(2).any(|p| KEYED.contains(&p[0].as_str()) && is_key(&p[1]))
    {
        NameKind::Secret
    } else if words.iter().any(|w| is_key(w) || w == "auth") {
        NameKind::Maybe
    } else {
        NameKind::Other
    }
}

/// A value assigned to a secret-looking name, unless it is a placeholder, a reference
/// (`$VAR`, `${...}`, `os.environ[...]`, `<key>`), a path or a URL, or a plain word; or
/// an OpenPGP key's id or fingerprint.
pub(super) fn assigned_value(f: &Found<'_, '_>) -> bool {
    let name = f.caps.get(1).map_or(f.value.start(), |m| m.start());
    !pgp_key_id(f.text, name, f.value.as_str()) && secret_assignment(&f.caps[1], f.value.as_str())
}

/// An OpenPGP key's id or fingerprint (8, 16, 32 or 40 hex digits) on a line that says
/// so (`gpg`, `pgp`, `fingerprint`): `Release GPG key: 9554F04D...`. Public, not secret.
fn pgp_key_id(text: &str, name_start: usize, value: &str) -> bool {
    let line = &text[text[..name_start].rfind('\n').map_or(0, |i| i + 1)..name_start + 1];
    let line = line.to_ascii_lowercase();
    [8, 16, 32, 40].contains(&value.len())
        && value.bytes().all(|b| b.is_ascii_hexdigit())
        && ["gpg", "pgp", "gnupg", "fingerprint"].iter().any(|w| line.contains(w))
}

/// [`assigned_value`] on a name and a value given apart (a JSON key and its string).
pub(super) fn secret_assignment(name: &str, value: &str) -> bool {
    let first = value.chars().next().unwrap_or(' ');
    // `?sv=...&sig=...`: a query string, whose parameters are judged one by one.
    if matches!(first, '$' | '<' | '{' | '(' | '[' | '%' | '*' | '#' | '?')
        || path_like(value)
        || value.contains("://")
        || value.contains(['(', '['])
        || value.ends_with(':')
        || value.contains("xxxx")
        || value.contains("...")
        || stand_in_word(value)
        || filler(value)
        || describes_a_secret(value)
        || entropy(value) < 2.0
        || code_like(value)
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
    // `max_tokens`, `all_tokens`: a variable holding the value, not the value.
    let identifier = value.contains('_') && value.bytes().all(|b| b.is_ascii_lowercase() || b == b'_');
    if placeholder || reference || identifier {
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

/// Vault's legacy `s.` tokens: only clearly random ones (`s.` starts many words).
pub(super) fn random_match_short(f: &Found<'_, '_>) -> bool {
    random_looking(&f.caps[0][2..], 24, 3.5)
}

pub(super) fn always(_: &Found<'_, '_>) -> bool {
    true
}

/// Words that name what a bare AWS secret key is, or an AWS key id.
static AWS_CONTEXT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i:\b(?:aws|amazon|iam|secret|access[ _-]?key))|\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b",
    )
    .expect("a valid pattern")
});

/// How far around a bare AWS secret key its context is looked for, in bytes.
const AWS_CONTEXT_BYTES: usize = 200;

/// A bare AWS secret access key: 40 characters of base64, random-looking (upper and
/// lower case and digits), within [`AWS_CONTEXT_BYTES`] of a key id or of a word that
/// names it (`aws`, `secret`, `access key`). A git hash (hex) never passes.
pub(super) fn aws_secret_near(f: &Found<'_, '_>) -> bool {
    let v = f.value.as_str();
    let random = v.bytes().any(|b| b.is_ascii_uppercase())
        && v.bytes().any(|b| b.is_ascii_lowercase())
        && has_digit(v)
        && entropy(v) >= 4.0;
    if !random {
        return false;
    }
    let (text, start, end) = (f.text, f.value.start(), f.value.end());
    let mut lo = start.saturating_sub(AWS_CONTEXT_BYTES);
    while !text.is_char_boundary(lo) {
        lo -= 1;
    }
    let mut hi = (end + AWS_CONTEXT_BYTES).min(text.len());
    while !text.is_char_boundary(hi) {
        hi += 1;
    }
    AWS_CONTEXT.is_match(&text[lo..start]) || AWS_CONTEXT.is_match(&text[end..hi])
}

/// Code, not a value: a call (`secret_from(env)`), a path (`tokens::next`, `:Lexer`), an
/// arrow, or a generic type (`Vec<f64>`, `Option<&str>`).
fn code_like(v: &str) -> bool {
    let generic = v.find('<').is_some_and(|i| i > 0 && v[i..].contains('>'));
    v.starts_with(':')
        || v.contains(['(', ')'])
        || v.contains("::")
        || v.contains("->")
        || v.contains("=>")
        || generic
}

/// The value of a password given on a command line or in a shell assignment
/// (`PGPASSWORD=...`, `mysql -p...`, `--password=...`): anything but a stand-in, at
/// least 3 characters.
pub(super) fn password_value(f: &Found<'_, '_>) -> bool {
    let v = f.value.as_str();
    v.chars().count() >= 3 && !stand_in(v)
}

/// Quoted values that name a type or a state, not a password (`"password": "string"`).
const NOT_A_PASSWORD: &[&str] = &[
    "string",
    "str",
    "text",
    "required",
    "optional",
    "null",
    "none",
    "nil",
    "true",
    "false",
    "undefined",
    "hidden",
    "empty",
    "unset",
    "tbd",
    "todo",
];

/// A password stated in prose or config (`password: ...`, `password is ...`). Quoted, any
/// value but a stand-in or a type name. Unquoted, at least 4 characters that do not read
/// as a word: letters with digits (`hunter2`, not `2FA-protected` or `12chars`), a
/// symbol (`Xk7#pq`), or a capital inside (`BlueFish`); plain words (`required`,
/// `case-sensitive`), dates and counts (`12+`, `8-16`) are prose.
pub(super) fn stated_password(f: &Found<'_, '_>) -> bool {
    let v = f.value.as_str();
    if stand_in(v) || code_like(v) {
        return false;
    }
    let quoted = f.caps.get(4).is_none();
    if quoted {
        return !NOT_A_PASSWORD.contains(&v.to_ascii_lowercase().as_str());
    }
    if v.chars().count() < 4 {
        return false;
    }
    let alpha = v.bytes().any(|b| b.is_ascii_alphabetic());
    // Digits, then a word: `2FA-protected`, `12chars`, `3rd`.
    let counted_word = v
        .trim_start_matches(|c: char| c.is_ascii_digit())
        .bytes()
        .all(|b| b.is_ascii_alphabetic() || b == b'-');
    let digits = has_digit(v) && alpha && !counted_word;
    let symbol = v.bytes().any(|b| b"!@#$%^&*+=?~|\\<>{}[];".contains(&b))
        && v.bytes().any(|b| b.is_ascii_alphanumeric());
    let inner_capital = v.len() >= 8
        && v.as_bytes().windows(2).any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
    digits || symbol || inner_capital
}

/// A value named as a secret by its pattern (`aws_secret_access_key = ...`): random-looking
/// (letters and digits, ≥ 3.5 bits a character) and not a stand-in.
pub(super) fn random_value(f: &Found<'_, '_>) -> bool {
    let v = f.value.as_str();
    random_looking(v, 16, 3.5) && !stand_in(v)
}

/// An Azure SAS signature: the query it ends (the run of characters around it up to a
/// space or a quote) has a signed version, `sv=`, as every SAS token does.
pub(super) fn sas_signature(f: &Found<'_, '_>) -> bool {
    let stop = |c: char| c.is_whitespace() || matches!(c, '\'' | '"' | '`' | '<' | '>');
    let (text, start, end) = (f.text, f.value.start(), f.value.end());
    let lo = text[..start].rfind(stop).map_or(0, |i| i + 1);
    let hi = text[end..].find(stop).map_or(text.len(), |i| end + i);
    let query = &text[lo..hi];
    query.starts_with("sv=") || query.contains("?sv=") || query.contains("&sv=")
}

/// Decodes unpadded base64 or base64url; `None` on any other character.
fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let sextet = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' | b'-' => Some(62),
        b'/' | b'_' => Some(63),
        _ => None,
    };
    let (mut out, mut acc, mut bits) = (Vec::with_capacity(s.len() * 3 / 4), 0u32, 0u32);
    for c in s.trim_end_matches('=').bytes() {
        acc = (acc << 6) | u32::from(sextet(c)?);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// A Discord bot token's first part is the bot's user id (a snowflake, 17 to 20 digits)
/// in base64: three dotted parts whose first decodes to anything else are not one.
pub(super) fn discord_user_id(f: &Found<'_, '_>) -> bool {
    let first = f.value.as_str().split('.').next().unwrap_or_default();
    base64_decode(first).is_some_and(|id| (17..=20).contains(&id.len()) && id.iter().all(u8::is_ascii_digit))
}

/// A password in a URL (`scheme://user:password@host`) or a bearer token, unless a
/// stand-in (`user:password@`, `:changeme@`, `Bearer <token>`, `Bearer YOUR_API_KEY`).
pub(super) fn not_a_stand_in(f: &Found<'_, '_>) -> bool {
    !stand_in(f.value.as_str())
}

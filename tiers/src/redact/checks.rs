//! The checks a pattern's match must pass to count as a secret: randomness, what a
//! variable name says of its value, placeholders, references and paths, and for the
//! shapes without a prefix of their own (a bare AWS secret key, a password in prose), the
//! words around them.

use std::sync::LazyLock;

use regex::Regex;

use super::names::{NameKind, has_digit, name_kind, words};
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

/// A value assigned to a secret-looking name, unless it is a placeholder, a reference
/// (`$VAR`, `${...}`, `os.environ[...]`, `<key>`), a path or a URL, or a plain word; or
/// an OpenPGP key's id or fingerprint. A parameter of a URL's query (`?token=...`) is
/// [`query_value`]'s.
pub(super) fn assigned_value(f: &Found<'_, '_>) -> bool {
    let name = f.caps.get(1).map_or(f.value.start(), |m| m.start());
    let in_query = f.text[..name].ends_with(['?', '&']);
    !in_query
        && !pgp_key_id(f.text, name, f.value.as_str())
        && secret_assignment(&f.caps[1], f.value.as_str())
}

/// A parameter of a URL's query that names a secret (`?access_token=...`), as
/// [`secret_assignment`] judges it, unless the URL is an image's: a page that shows the
/// image gives its URL to every reader (a Codecov badge's token is public by design).
pub(super) fn query_value(f: &Found<'_, '_>) -> bool {
    secret_assignment(&f.caps[1], f.value.as_str()) && !image_url(f.text, f.value.start())
}

/// The URL around byte `at` is an image's: its path ends in an image extension, or it is
/// the source of an HTML `<img>` (`src="..."`) or of a Markdown image (`![alt](...)`).
fn image_url(text: &str, at: usize) -> bool {
    let stop = |c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | '(' | '<' | '>');
    let lo = text[..at].rfind(stop).map_or(0, |i| i + 1);
    let path = text[lo..at].split('?').next().unwrap_or_default().to_ascii_lowercase();
    let before = text[..lo].trim_end_matches(['"', '\'']);
    let line = &before[before.rfind('\n').map_or(0, |i| i + 1)..];
    [".svg", ".png", ".gif", ".jpg", ".jpeg", ".webp"].iter().any(|x| path.ends_with(x))
        || before.to_ascii_lowercase().ends_with("src=")
        || (before.ends_with("](") && line.contains("!["))
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
        // -----BEGIN ... KEY-----: an armor line; a key block is `private_key`'s to judge
        || value.starts_with("-----")
        // arn:aws:kms:...:key/..., urn:...: a resource's name
        || value.starts_with("arn:")
        || value.starts_with("urn:")
        || number_or_time(value)
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
        NameKind::Maybe => random_looking(value, 16, 3.0) && !named_thing(value),
        NameKind::Other => false,
    }
}

/// A number with a fraction (`1556311319.069`) or a date (`2018-04-25T11:00:00Z`): a
/// time or a measure, not a secret.
fn number_or_time(v: &str) -> bool {
    static DATE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[T ][0-9:.]+(?:Z|[+\-][0-9:]+)?)?$")
            .expect("a valid pattern")
    });
    let number = v.split_once('.').is_some_and(|(a, b)| {
        !a.is_empty() && !b.is_empty() && a.bytes().chain(b.bytes()).all(|c| c.is_ascii_digit())
    });
    number || DATE.is_match(v)
}

/// A value under a name that only maybe speaks of a secret (`key`, `auth`) that reads as
/// the name of something: a UUID (`"key": "48c67f3c-63bb-..."`, an id), lower-case words
/// (`"Key": "proxy_protocol_v2.enabled"`, a setting), a file name (`"S3Key":
/// "export-i-fh8sjjsq.ova"`), or words that spell out what it stands for (`auth:
/// "mypersonalaccesstoken123"`).
fn named_thing(v: &str) -> bool {
    static UUID: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
            .expect("a valid pattern")
    });
    let lower = v.to_ascii_lowercase();
    // Each part a word: letters, maybe a digit or two at its end (`v2`, `s3`).
    let word = |p: &str| {
        let letters = p.trim_end_matches(|c: char| c.is_ascii_digit());
        !letters.is_empty() && p.len() - letters.len() <= 2 && letters.bytes().all(|b| b.is_ascii_lowercase())
    };
    let parts: Vec<&str> = v.split(['.', '_', '-']).collect();
    let file = v.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty() && (2..=4).contains(&ext.len()) && ext.bytes().all(|b| b.is_ascii_lowercase())
    });
    UUID.is_match(v)
        || (parts.len() >= 2 && parts.iter().all(|p| word(p)))
        || file
        || ["token", "secret", "password", "passwd", "apikey", "credential"].iter().any(|w| lower.contains(w))
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
    // Part of a URL (`docs.aws.amazon.com/Route53/latest/DeveloperGuide/domain-...`):
    // a path, where no secret key stands bare.
    let run_start = text[..start].rfind(char::is_whitespace).map_or(0, |i| i + 1);
    if text[..start].ends_with('.') || text[run_start..start].contains("://") || path_like(v) {
        return false;
    }
    // The value of a name that says id (`"Id": "..."`, `--key-id ...`, `PublisherId=`).
    let before = text[..start].trim_end_matches(|c: char| c.is_whitespace() || "\"':=".contains(c));
    let name_at =
        before.rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')).map_or(0, |i| i + 1);
    if words(&before[name_at..]).last().is_some_and(|w| w == "id") {
        return false;
    }
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
/// arrow, a generic type (`Vec<f64>`, `Option<&str>`) or a reference's type (`password:
/// &str`, `&[u8]`, `&'a str`, `&mut String`).
fn code_like(v: &str) -> bool {
    let generic = v.find('<').is_some_and(|i| i > 0 && v[i..].contains('>'));
    let reference = v.strip_prefix('&').is_some_and(|t| {
        t.starts_with(['[', '\''])
            || t.starts_with("mut")
            || (!t.is_empty() && t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
    });
    reference
        || v.starts_with(':')
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

/// A bearer token, unless a stand-in (`Bearer <token>`, `Bearer YOUR_API_KEY`).
pub(super) fn not_a_stand_in(f: &Found<'_, '_>) -> bool {
    !stand_in(f.value.as_str())
}

/// A private key block holds key material: 16 characters of base64 in a row at least,
/// not a filler. A block that code builds around a variable (`'-----BEGIN RSA PRIVATE
/// KEY-----\n' + b64encode(der) + ...`) or documentation fills with `XXXX` is kept.
pub(super) fn key_material(f: &Found<'_, '_>) -> bool {
    let block = f.value.as_str();
    // After the BEGIN line's closing dashes, before the END line.
    let body = block.get(5..).and_then(|b| b.split_once("-----")).map_or("", |(_, rest)| rest);
    let body = body.rsplit_once("-----END").map_or(body, |(b, _)| b);
    body.split(|c: char| !(c.is_ascii_alphanumeric() || c == '+' || c == '/'))
        .any(|run| run.len() >= 16 && !filler(run))
}

//! What a variable name says of the value assigned to it: a secret (`DB_PASSWORD`,
//! `apiKey`), maybe one (`key`, `auth`), or something else (`tokenizer`, `token_url`,
//! `KmsKeyId`, `NextToken`).

/// How a variable name speaks of its value: a secret (`DB_PASSWORD`, `apiKey`,
/// `client_secret`), maybe one (`key`, `auth`), or neither (`tokenizer`, `monkey`,
/// `author`). Judged on the name's words (split at `_`, `-`, `.` and camelCase).
#[derive(PartialEq)]
pub(super) enum NameKind {
    Secret,
    Maybe,
    Other,
}

pub(super) fn name_kind(name: &str) -> NameKind {
    let words = words(name);
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
    if about_a_secret(&words) || cursor_token(&words) {
        return NameKind::Other;
    }
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

/// A name's words, lower case: split at anything but letters and digits, and where a
/// lower-case letter or a digit meets an upper-case one (`dbPassword` -> `db`, `password`).
pub(super) fn words(name: &str) -> Vec<String> {
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
    words
}

/// What a name says last is what it holds: `tokenType`, `token_url`, `secret_name`,
/// `password_file`, `key_fingerprint`, `KmsKeyId`, `KeyArn`, `tokenExpirationTime` hold
/// something about a secret, not the secret. An id is one only when the name says secret
/// (`secret_id`, as Vault's AppRole has). A name that says public (`publicKey`,
/// `publishable_key`) holds what is meant to be shown.
fn about_a_secret(words: &[String]) -> bool {
    const ABOUT: &[&str] = &[
        "type",
        "types",
        "kind",
        "name",
        "names",
        "url",
        "uri",
        "endpoint",
        "path",
        "file",
        "dir",
        "length",
        "len",
        "size",
        "count",
        "expiry",
        "expires",
        "expiration",
        "ttl",
        "lifetime",
        "time",
        "date",
        "timestamp",
        "header",
        "prefix",
        "field",
        "format",
        "version",
        "hint",
        "policy",
        "mode",
        "location",
        "env",
        "var",
        "provider",
        "source",
        "scope",
        "scopes",
        "algorithm",
        "alg",
        "spec",
        "fingerprint",
        "fpr",
        "usage",
        "arn",
        "arns",
    ];
    let Some(last) = words.last() else { return false };
    words.iter().any(|w| w == "public" || w == "publishable")
        || ABOUT.contains(&last.as_str())
        || (matches!(last.as_str(), "id" | "ids") && !words.iter().any(|w| w.starts_with("secret")))
}

/// A token that is a cursor or a receipt, which an API hands to anyone who lists or
/// writes, not a credential: a page's (`NextToken`, `nextPageToken`,
/// `ContinuationToken`), a lock's (`LockToken`), an idempotent request's
/// (`clientRequestToken`, `IdempotencyToken`).
fn cursor_token(words: &[String]) -> bool {
    const CURSOR: &[&str] =
        &["next", "page", "pagination", "continuation", "lock", "request", "idempotency", "sync"];
    let Some(t) = words.iter().position(|w| w == "token" || w == "tokens") else { return false };
    words[..t].iter().any(|w| CURSOR.contains(&w.as_str()))
}

/// True when the text holds an ASCII digit.
pub(super) fn has_digit(s: &str) -> bool {
    s.bytes().any(|b| b.is_ascii_digit())
}

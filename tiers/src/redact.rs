//! Secret redaction: secret-looking strings replaced by `[REDACTED:<kind>]`, everything
//! else kept byte for byte. Capture, runs and the daemon's write paths run it.

mod checks;
mod names;
mod patterns;
mod placeholders;

use amber_core::NewMemory;
use checks::Found;
use patterns::{PATTERNS, PUBLIC_BLOCK};
use serde_json::Value;

/// A secret found in a text: its byte range and the name of its kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Secret {
    /// Where it starts, in bytes.
    pub start: usize,
    /// Where it ends (exclusive), in bytes.
    pub end: usize,
    /// Its kind, as `[REDACTED:<kind>]` names it.
    pub kind: &'static str,
}

/// The secrets in a text, in order and apart: matches of several patterns that overlap
/// are one, named after the most specific. Nothing inside a public key block or a
/// certificate counts. [`redact`] replaces exactly these.
pub fn find_secrets(text: &str) -> Vec<Secret> {
    let public: Vec<(usize, usize)> = PUBLIC_BLOCK.find_iter(text).map(|m| (m.start(), m.end())).collect();
    let in_public = |a: usize, b: usize| public.iter().any(|&(lo, hi)| lo <= a && b <= hi);
    // (start, end, pattern index)
    let mut spans: Vec<(usize, usize, usize)> = Vec::new();
    for (i, p) in PATTERNS.iter().enumerate() {
        for caps in p.re.captures_iter(text) {
            // The secret's group, or with alternatives the first after it that took part.
            let value = (p.group..caps.len()).find_map(|g| caps.get(g));
            if let Some(m) = value
                && !m.as_str().starts_with("[REDACTED:")
                && !in_public(m.start(), m.end())
                && (p.check)(&Found { text, caps: &caps, value: m })
            {
                spans.push((m.start(), m.end(), i));
            }
        }
    }
    spans.sort_unstable();
    let mut merged: Vec<(usize, usize, usize)> = Vec::with_capacity(spans.len());
    for (a, b, i) in spans {
        match merged.last_mut() {
            Some(last) if a < last.1 => {
                last.1 = last.1.max(b);
                last.2 = last.2.min(i);
            }
            _ => merged.push((a, b, i)),
        }
    }
    merged.into_iter().map(|(start, end, i)| Secret { start, end, kind: PATTERNS[i].name }).collect()
}

/// Replaces secret-looking strings with `[REDACTED:<kind>]`; returns the text and how
/// many were replaced. Everything else is kept byte for byte. Matches of several
/// patterns that overlap are replaced as one, named after the most specific.
pub fn redact(text: &str) -> (String, usize) {
    let secrets = find_secrets(text);
    if secrets.is_empty() {
        return (text.to_string(), 0);
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for s in &secrets {
        out.push_str(&text[at..s.start]);
        out.push_str("[REDACTED:");
        out.push_str(s.kind);
        out.push(']');
        at = s.end;
    }
    out.push_str(&text[at..]);
    (out, secrets.len())
}

/// Redacts a string in place; returns how many secrets were replaced.
pub fn redact_in_place(s: &mut String) -> usize {
    let (out, n) = redact(s);
    if n > 0 {
        *s = out;
    }
    n
}

/// Redacts every string in a JSON value, recursively (object values and array items;
/// keys are names and are kept); returns how many secrets were replaced. A string under
/// a key that names a secret (`"password": "hunter2"`, `"api_key": "..."`) is one as a
/// whole when it passes the checks of `assigned_secret` (at least 4 characters).
pub fn redact_json(v: &mut Value) -> usize {
    match v {
        Value::String(s) => redact_in_place(s),
        Value::Array(items) => items.iter_mut().map(redact_json).sum(),
        Value::Object(map) => map
            .iter_mut()
            .map(|(key, v)| match v {
                Value::String(s) => {
                    let n = redact_in_place(s);
                    if n == 0 && s.chars().count() >= 4 && checks::secret_assignment(key, s) {
                        *s = format!("[REDACTED:{}]", patterns::ASSIGNED);
                        1
                    } else {
                        n
                    }
                }
                other => redact_json(other),
            })
            .sum(),
        Value::Null | Value::Bool(_) | Value::Number(_) => 0,
    }
}

/// Redacts a memory as a caller files it: its content, its source and every string in
/// its metadata. Returns how many secrets were replaced in all.
pub fn redact_memory(m: &mut NewMemory) -> usize {
    let mut n = redact_in_place(&mut m.content);
    if let Some(source) = &mut m.source {
        n += redact_in_place(source);
    }
    n + redact_json(&mut m.metadata)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memory_is_redacted_in_content_source_and_nested_metadata() {
        let mut m = NewMemory::new("deploy with ghp_XbRDMAsRuAwZtr97vkycA40QEWJ4qIrSfyn5 today");
        m.source = Some("https://ci:hunter2hunter2@git.example.com/app.git".into());
        m.metadata = serde_json::json!({
            "env": { "PGPASSWORD": "x", "cmd": ["ls", "export PGPASSWORD='n0t-4-r3al!'"] },
            "db": { "user": "app_user", "password": "hunter2" },
            "password: Xk7#pq2-as-a-key": 3,
            "note": "nothing secret here",
        });
        assert_eq!(redact_memory(&mut m), 4);
        assert_eq!(m.content, "deploy with [REDACTED:github_token] today");
        assert_eq!(m.source.as_deref(), Some("https://ci:[REDACTED:url_password]@git.example.com/app.git"));
        assert_eq!(m.metadata["env"]["cmd"][1], "export PGPASSWORD='[REDACTED:env_password]'");
        assert_eq!(m.metadata["env"]["PGPASSWORD"], "x", "too short to tell");
        assert_eq!(m.metadata["db"]["password"], "[REDACTED:assigned_secret]");
        assert_eq!(m.metadata["db"]["user"], "app_user");
        assert_eq!(m.metadata["note"], "nothing secret here");
        // Keys are names: kept.
        assert_eq!(m.metadata["password: Xk7#pq2-as-a-key"], 3);
        // A second pass finds nothing more.
        assert_eq!(redact_memory(&mut m), 0);
    }

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
    fn code_and_prose_around_secret_words_are_untouched() {
        for text in [
            "tokenizer: bert-base-uncased-2024 and the monkey: 7f3a9c2e1b4d6f80a9c3",
            "author: JaneDoe1985xyzwvu and passport: required at the gate",
            "api_key = os.environ['OPENAI_API_KEY'] and password = \"your-password\"",
            "secret_key: ${SECRET_KEY}, token: <bearer-token>, api_key = YOUR_API_KEY",
            "password_file: /run/secrets/db_password_v2 and token_url: https://auth.example.com/token",
            "accessToken = responseData[\"access_token\"] ; api_key = settings.API_KEY",
            "commit 3f2a1c9e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a3f fixed the token refresh",
            "Key: Timestamp, keys: readonly, secret:\n  secretName: my-secret",
            "the basic self-improvement plan and a bearer of good news",
        ] {
            assert_eq!(redact(text), (text.to_string(), 0), "{text}");
        }
    }

    #[test]
    fn stripe_keys_and_a_cut_private_key_are_redacted() {
        let (out, n) =
            redact("STRIPE_SECRET=sk_live_51HxYzAbCdEfGhIjKl and whsec_0a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P");
        assert_eq!(n, 2, "{out}");
        assert_eq!(out, "STRIPE_SECRET=[REDACTED:stripe_key] and [REDACTED:stripe_key]");
        // A key cut off before its END line: its body goes, the text after it stays.
        let text = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAAAAAAAABAAABlwAAAAdzc2gtcn\nthe build took 42 s";
        let (out, n) = redact(text);
        assert_eq!((out.as_str(), n), ("[REDACTED:private_key]\nthe build took 42 s", 1));
    }

    #[test]
    fn the_shapes_without_a_prefix_are_named_after_their_rule() {
        for (text, want) in [
            ("export PGPASSWORD='n0t-4-r3al!'", "export PGPASSWORD='[REDACTED:env_password]'"),
            ("mysql -u root -psecret shop", "mysql -u root -p[REDACTED:mysql_password] shop"),
            ("docker login --password=Zq8mX2 reg", "docker login --password=[REDACTED:cli_password] reg"),
            ("the wifi password is Blue42fish.", "the wifi password is [REDACTED:password]."),
            ("Password: 'bluefish'", "Password: '[REDACTED:password]'"),
            (
                "AKIAF72B3WDNCXLNXXSU k8w95uxwPzokm2eJJQnVKN6BHtnp+EQsmXv5eh1Y",
                "[REDACTED:aws_access_key] [REDACTED:aws_secret_key]",
            ),
        ] {
            assert_eq!(redact(text).0, want, "{text}");
        }
        // 40 random characters with nothing around them that names a key are kept.
        let text = "build id k8w95uxwPzokm2eJJQnVKN6BHtnp+EQsmXv5eh1Y finished";
        assert_eq!(redact(text), (text.to_string(), 0));
    }
}

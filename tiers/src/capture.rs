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

/// A secret pattern: the regex, the group holding the secret (0: the whole match), and a
/// check the match must pass (to keep ordinary text out).
struct Pattern {
    name: &'static str,
    re: Regex,
    group: usize,
    check: fn(&regex::Captures<'_>) -> bool,
}

fn always(_: &regex::Captures<'_>) -> bool {
    true
}

/// Shannon entropy in bits per character.
fn entropy(s: &str) -> f64 {
    let mut counts = std::collections::HashMap::<char, usize>::new();
    for c in s.chars() {
        *counts.entry(c).or_default() += 1;
    }
    let n = s.chars().count() as f64;
    counts.values().map(|&k| k as f64 / n).map(|p| -p * p.log2()).sum()
}

fn has_digit(s: &str) -> bool {
    s.bytes().any(|b| b.is_ascii_digit())
}

/// Random-looking: letters and digits mixed, not a run of one character.
fn random_looking(s: &str, min_len: usize, min_entropy: f64) -> bool {
    s.len() >= min_len
        && has_digit(s)
        && s.bytes().any(|b| b.is_ascii_alphabetic())
        && entropy(s) >= min_entropy
}

/// `sk-...`: real keys always carry digits (a hyphenated word never looks like one).
fn digit_in_match(c: &regex::Captures<'_>) -> bool {
    has_digit(&c[0])
}

fn random_match(c: &regex::Captures<'_>) -> bool {
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
fn assigned_value(c: &regex::Captures<'_>) -> bool {
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

fn pattern(name: &'static str, re: &str, group: usize, check: fn(&regex::Captures<'_>) -> bool) -> Pattern {
    Pattern { name, re: Regex::new(re).expect("a valid secret pattern"), group, check }
}

/// The secret shapes, most specific first (a secret matched by several is named after the
/// first). The reference is the rule list of gitleaks' default config
/// (`config/gitleaks.toml`, <https://github.com/gitleaks/gitleaks>): every provider token
/// with a distinctive prefix has a pattern here, and its keyword rules (`<provider>_KEY =
/// value`) are covered by `assigned_secret`. `tiers/tests/secrets.rs` runs a corpus of one
/// example per gitleaks rule, the fake keys providers publish and the shapes of issue 22,
/// and lists what is kept on purpose (docs/RELIABILITY.md has the counts).
static PATTERNS: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    let p = pattern;
    vec![
        p(
            "private_key",
            r"-----BEGIN[ A-Z0-9_\-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END[ A-Z0-9_\-]{0,100}PRIVATE KEY(?: BLOCK)?-----|(?:\s*[A-Za-z0-9+/=]{16,})*)",
            0,
            always,
        ),
        p("aws_access_key", r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b", 0, always),
        p(
            "aws_bedrock_key",
            r"\bABSK[A-Za-z0-9+/]{109,269}={0,2}|\bbedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%&.\-]*",
            0,
            always,
        ),
        p(
            "stripe_key",
            r"\b(?:(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9+/=]{20,})",
            0,
            always,
        ),
        p("github_token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b", 0, always),
        p(
            "gitlab_token",
            r"\b(?:gl(?:pat|dt|ffct|ft|imt|agent|oas|rt|soat|cbt|ptt)-[0-9A-Za-z_.\-]{20,}|GR1348941[A-Za-z0-9_\-]{20}|_gitlab_session=[0-9a-z]{32})",
            0,
            always,
        ),
        p("anthropic_key", r"\bsk-ant-(?:api|admin)[0-9]{2}-[A-Za-z0-9_\-]{20,}", 0, always),
        p("openai_key", r"\bsk-(?:proj-|svcacct-|admin-|ant-)?[A-Za-z0-9_\-]{20,}", 0, digit_in_match),
        p(
            "slack_token",
            r"\bxox[abeoprs]-[A-Za-z0-9\-]{8,}|\bxoxe\.xox[bp]-[0-9]-[A-Za-z0-9]{100,}|\bxapp-[0-9]-[A-Za-z0-9]+-[0-9]+-[A-Za-z0-9]+|hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{20,}",
            0,
            always,
        ),
        p("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}", 0, always),
        p(
            "jwt",
            r"\bey[A-Za-z0-9_\-]{10,}\.ey[A-Za-z0-9/\\_\-]{10,}\.(?:[A-Za-z0-9/\\_\-]{10,}={0,2})?",
            0,
            always,
        ),
        p("jwt", r"\bZXlK[A-Za-z0-9/+_\-]{40,}={0,2}", 0, always),
        p(
            "grafana_token",
            r"\beyJrIjoi[A-Za-z0-9]{70,400}={0,3}|\bglc_[A-Za-z0-9+/]{32,400}={0,3}|\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b",
            0,
            always,
        ),
        p("huggingface_token", r"\b(?:hf|api_org)_[A-Za-z]{34}\b", 0, always),
        p("npm_token", r"\bnpm_[A-Za-z0-9]{36}\b", 0, always),
        p("pypi_token", r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}", 0, always),
        p("rubygems_token", r"\brubygems_[a-f0-9]{48}\b", 0, always),
        p("digitalocean_token", r"\bdo[opr]_v1_[a-f0-9]{64}\b", 0, always),
        p("sendgrid_key", r"\bSG\.[A-Za-z0-9=_\-.]{66}", 0, always),
        p("sendinblue_key", r"\bxkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}\b", 0, always),
        p("shopify_token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", 0, always),
        p("twilio_key", r"\bSK[0-9a-fA-F]{32}\b", 0, always),
        p("square_token", r"\b(?:EAAA|sq0atp-|sq0csp-)[A-Za-z0-9_\-]{22,60}", 0, random_match),
        p(
            "facebook_token",
            r"\bEAA[MC][A-Za-z0-9]{100,}|\b[0-9]{15,16}(?:\||%7C|%)[0-9A-Za-z_\-]{27,40}",
            0,
            always,
        ),
        p("databricks_token", r"\bdapi[a-f0-9]{32}(?:-[0-9])?\b", 0, always),
        p("dynatrace_token", r"\bdt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}", 0, always),
        p("doppler_token", r"\bdp\.pt\.[A-Za-z0-9]{43}", 0, always),
        p("duffel_token", r"\bduffel_(?:test|live)_[A-Za-z0-9_\-=]{43}", 0, always),
        p("easypost_key", r"\bEZ[AT]K[A-Za-z0-9]{54}\b", 0, always),
        p("flutterwave_key", r"\bFLW(?:SECK|PUBK)_TEST-[A-Za-z0-9]{12,32}(?:-X)?", 0, always),
        p(
            "flyio_token",
            r"\b(?:fo1_[A-Za-z0-9_\-]{43}|fm1[ar]_[A-Za-z0-9+/]{100,}={0,3}|fm2_[A-Za-z0-9+/]{100,}={0,3})",
            0,
            always,
        ),
        p("frameio_token", r"\bfio-u-[A-Za-z0-9\-_=]{64}", 0, always),
        p("harness_key", r"\b(?:pat|sat)\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}\b", 0, always),
        p("terraform_token", r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9\-_=]{60,70}", 0, always),
        p("vault_token", r"\bhv[sb]\.[A-Za-z0-9_\-]{90,300}", 0, always),
        p("vault_token", r"\bs\.[A-Za-z0-9]{24}\b", 0, random_match_short),
        p("heroku_key", r"\bHRKU-AA[0-9A-Za-z_\-]{58}", 0, always),
        p("infracost_token", r"\bico-[A-Za-z0-9]{32}\b", 0, always),
        p("intra42_secret", r"\bs-s4t2(?:ud|af)-[a-f0-9]{64}\b", 0, always),
        p("linear_key", r"\blin_api_[A-Za-z0-9]{40}\b", 0, always),
        p("maxmind_key", r"\b[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk\b", 0, always),
        p("newrelic_key", r"\bNR(?:JS|II|AK)-[A-Za-z0-9\-]{19,32}\b", 0, always),
        p("notion_token", r"\bntn_[0-9]{11}[A-Za-z0-9]{35}\b", 0, always),
        p("octopus_key", r"\bAPI-[A-Z0-9]{26}\b", 0, always),
        p("openshift_token", r"\bsha256~[A-Za-z0-9_\-]{43}", 0, always),
        p("perplexity_key", r"\bpplx-[A-Za-z0-9]{48}\b", 0, always),
        p("planetscale_token", r"\bpscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.\-]{32,64}", 0, always),
        p("postman_key", r"\bPMAK-[A-Fa-f0-9]{24}-[A-Fa-f0-9]{34}\b", 0, always),
        p("prefect_token", r"\bpnu_[A-Za-z0-9]{36}\b", 0, always),
        p("pulumi_token", r"\bpul-[a-f0-9]{40}\b", 0, always),
        p("readme_key", r"\brdme_[a-z0-9]{70}\b", 0, always),
        p("scalingo_token", r"\btk-us-[A-Za-z0-9_\-]{48}", 0, always),
        p("sentry_token", r"\bsntrys_eyJpYXQiO[A-Za-z0-9+/=_]{50,}|\bsntryu_[a-f0-9]{64}\b", 0, always),
        p("settlemint_token", r"\bsm_(?:aat|pat|sat)_[A-Za-z0-9]{16}\b", 0, always),
        p("sourcegraph_token", r"\bsgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}\b", 0, always),
        p("shippo_token", r"\bshippo_(?:live|test)_[a-fA-F0-9]{40}\b", 0, always),
        p(
            "onepassword_key",
            r"\bA3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\b|\bops_eyJ[A-Za-z0-9+/]{250,}={0,3}",
            0,
            always,
        ),
        p("adobe_secret", r"\bp8e-[A-Za-z0-9]{32}\b", 0, always),
        p("age_key", r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b", 0, always),
        p("airtable_token", r"\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b", 0, always),
        p("alibaba_key", r"\bLTAI[A-Za-z0-9]{20}\b", 0, always),
        p("artifactory_key", r"\bAKCp[A-Za-z0-9]{69}\b|\bcmVmd[A-Za-z0-9]{59}\b", 0, always),
        p(
            "authress_key",
            r"\b(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_\-][A-Za-z0-9\-]{10,32}\.[A-Za-z0-9+/_=\-]{30,120}",
            0,
            always,
        ),
        p(
            "azure_secret",
            r#"(?m)(?:^|[\\'"`\s>=:(,)])([A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34})"#,
            1,
            always,
        ),
        p("clickhouse_key", r"\b4b1d[A-Za-z0-9]{38}\b", 0, always),
        p("clojars_token", r"\bCLOJARS_[A-Za-z0-9]{60}\b", 0, always),
        p("cloudflare_key", r"\bv1\.0-[a-f0-9]{24}-[a-f0-9]{146}\b", 0, always),
        p("mailgun_key", r"\b(?:pub)?key-[a-f0-9]{32}\b", 0, always),
        p("mailchimp_key", r"\b[a-f0-9]{32}-us[0-9]{1,2}\b", 0, always),
        p("mapbox_token", r"\b[ps]k\.[A-Za-z0-9]{60}\.[A-Za-z0-9]{22}\b", 0, always),
        p("dropbox_token", r"\bsl\.[A-Za-z0-9\-=_]{135}", 0, always),
        p("typeform_token", r"\btfp_[A-Za-z0-9\-_.=]{59}", 0, always),
        p("telegram_token", r"\b[0-9]{5,16}:A[A-Za-z0-9_\-]{34}\b", 0, always),
        p("twitter_token", r"\bA{22}[A-Za-z0-9%]{80,100}", 0, always),
        p("teams_webhook", r"[[A-Za-z0-9_].\-]+\.webhook\.office\.com/webhookb2/[^\s'\x22<>]+", 0, always),
        p(
            "sidekiq_secret",
            r"(?i)\bBUNDLE_(?:ENTERPRISE|GEMS)__CONTRIBSYS__COM\s*[:=]\s*[\x22']?([a-f0-9]{8}:[a-f0-9]{8})",
            1,
            always,
        ),
        p("nuget_password", r#"(?i)<add\s+key="(?:ClearText)?Password"\s+value="([^"]{8,})""#, 1, always),
        // scheme://user:password@host
        p("url_password", r"[a-zA-Z][a-zA-Z0-9+.\-]*://[^/\s:@]+:([^/\s@]+)@", 1, always),
        // curl -u user:password, --user=user:password
        p(
            "curl_password",
            r#"\bcurl\b[^\n]*?\s(?:-u|--user)(?:=|\s+)["']?[^\s:"']+:([^\s"']{3,})"#,
            1,
            always,
        ),
        p("bearer", r"(?i)\bbearer\s+([A-Za-z0-9_\-\.=+/~]{16,})", 1, always),
        p(
            "basic_auth",
            r#"(?i)\bauthorization["']?\s*:\s*["']?basic\s+([A-Za-z0-9+/]{8,}={0,3})"#,
            1,
            always,
        ),
        // password = "...", api_key: ..., SECRET_TOKEN=..., "stripeKey" => '...'
        p(
            "assigned_secret",
            r#"(?i)\b([a-z0-9_.\-]*(?:pass|pwd|secret|token|credential|creds|auth|key)[a-z0-9_.\-]*)["'`]?[ \t]*(?:=>|:=|\?=|:|=)[ \t]*["'`]?([^\s"'`,;]{8,})"#,
            2,
            assigned_value,
        ),
    ]
});

/// Vault's legacy `s.` tokens: only clearly random ones (`s.` starts many words).
fn random_match_short(c: &regex::Captures<'_>) -> bool {
    random_looking(&c[0][2..], 24, 3.5)
}

/// Replaces secret-looking strings with `[REDACTED:<kind>]`; returns the text and how
/// many were replaced. Everything else is kept byte for byte. Matches of several
/// patterns that overlap are replaced as one, named after the most specific.
pub fn redact(text: &str) -> (String, usize) {
    // (start, end, pattern index)
    let mut spans: Vec<(usize, usize, usize)> = Vec::new();
    for (i, p) in PATTERNS.iter().enumerate() {
        for caps in p.re.captures_iter(text) {
            if let Some(m) = caps.get(p.group)
                && !m.as_str().starts_with("[REDACTED:")
                && (p.check)(&caps)
            {
                spans.push((m.start(), m.end(), i));
            }
        }
    }
    if spans.is_empty() {
        return (text.to_string(), 0);
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
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for &(a, b, i) in &merged {
        out.push_str(&text[at..a]);
        out.push_str("[REDACTED:");
        out.push_str(PATTERNS[i].name);
        out.push(']');
        at = b;
    }
    out.push_str(&text[at..]);
    (out, merged.len())
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
    fn limits_are_applied_in_characters() {
        let cfg = CaptureConfig { min_chars: 5, max_chars: 10 };
        assert_eq!(capture("abcd", &cfg), Captured::Skip(SkipReason::TooShort));
        assert_eq!(capture("ééééé", &cfg), Captured::File { text: "ééééé".into(), redacted: 0 });
        assert_eq!(capture("abcdefghijk", &cfg), Captured::Skip(SkipReason::TooLong));
    }
}

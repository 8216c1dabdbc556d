//! The secret shapes every write path must redact (remember, capture, runs, outcome
//! notes, identity files): 18 shapes, each in one or more lines written the way it turns
//! up in a terminal, a config file or a chat. All values are synthetic (drawn at random),
//! none is a live credential. A secret counts as redacted when no 12 characters of it in
//! a row survive (all of it, if shorter), markers aside.
//!
//! Beside it, near misses that must be left alone: prose about passwords, commands that
//! prompt for one, references to variables, hashes.
//!
//! `cargo test --release -p amber-tiers --test it -- secret_shapes:: --nocapture` prints the
//! recall.

use std::collections::BTreeMap;

use amber_tiers::redact::redact;

/// (shape, secret, text).
const SHAPES: &[(&str, &str, &str)] = &[
    (
        "aws access key id",
        "AKIASFBT3YWIMR4AO5BG",
        "aws configure list: access_key ****** AKIASFBT3YWIMR4AO5BG shared-credentials-file",
    ),
    (
        "aws secret beside its key id",
        "k8w95uxwPzokm2eJJQnVKN6BHtnp+EQsmXv5eh1Y",
        "creds for the ci user: AKIAF72B3WDNCXLNXXSU k8w95uxwPzokm2eJJQnVKN6BHtnp+EQsmXv5eh1Y",
    ),
    (
        "aws secret beside its key id",
        "cuCbCh4lScW/yejH7z6LBlnvEGm1vb4R1v0iEL20",
        "User name,Access key ID,Secret access key\nci-bot,AKIAF72B3WDNCXLNXXSU,cuCbCh4lScW/yejH7z6LBlnvEGm1vb4R1v0iEL20",
    ),
    (
        "bare aws secret in prose",
        "MgKndrQ3FvkRoE85IaRWdsZAdw52k1J9wMHlCh+W",
        "The staging AWS secret is MgKndrQ3FvkRoE85IaRWdsZAdw52k1J9wMHlCh+W, rotate it on Friday.",
    ),
    (
        "bare aws secret in prose",
        "cuCbCh4lScW/yejH7z6LBlnvEGm1vb4R1v0iEL20",
        "I made a new access key for the deploy user; its secret access key is cuCbCh4lScW/yejH7z6LBlnvEGm1vb4R1v0iEL20 and it lives in 1Password now.",
    ),
    (
        "github token",
        "ghp_XbRDMAsRuAwZtr97vkycA40QEWJ4qIrSfyn5",
        "gh auth login --with-token <<< ghp_XbRDMAsRuAwZtr97vkycA40QEWJ4qIrSfyn5",
    ),
    (
        "github token",
        "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",
        "use the fine-grained token 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 for the release job",
    ),
    (
        "openai key",
        "sk-proj-biwfk2nn9BuWNoIL28BQxIPoVJ7VtD4Q9OiwyXt17cFzwUnW",
        "client = OpenAI(api_key=\"sk-proj-biwfk2nn9BuWNoIL28BQxIPoVJ7VtD4Q9OiwyXt17cFzwUnW\")",
    ),
    (
        "openai key",
        "sk-PIknuABdcuVBE0kL7Axp9ucQsC0lz0xKF9bI5NOB0Ml6CmQX",
        "my old key sk-PIknuABdcuVBE0kL7Axp9ucQsC0lz0xKF9bI5NOB0Ml6CmQX still works",
    ),
    (
        "anthropic key",
        "sk-ant-api03-BeD1azOyqdVcAyw8VQTQ3rUkjMeWLZGDIWh7eBERjPZthNbWHMnIPm2wYtrTsBF6I8YIsv9VboYQKY5JjeSX8iQ7hS6tqAA",
        "x-api-key: sk-ant-api03-BeD1azOyqdVcAyw8VQTQ3rUkjMeWLZGDIWh7eBERjPZthNbWHMnIPm2wYtrTsBF6I8YIsv9VboYQKY5JjeSX8iQ7hS6tqAA",
    ),
    (
        "slack token",
        "xoxb-743503216863-137775846451-UE97OcGqrIKAOPa46m6VQURe",
        "the bot posts with xoxb-743503216863-137775846451-UE97OcGqrIKAOPa46m6VQURe",
    ),
    (
        "stripe key",
        "sk_live_Q0il1nFdVQ5jq7aMZyWcKWKA",
        "charges go through sk_live_Q0il1nFdVQ5jq7aMZyWcKWKA since March",
    ),
    (
        "google api key",
        "AIzafcrsbT1b_k6PKevANosuro2zvAiImqo3TiA",
        "<script src=\"https://maps.googleapis.com/maps/api/js?key=AIzafcrsbT1b_k6PKevANosuro2zvAiImqo3TiA\">",
    ),
    (
        "jwt",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJRGyvXZgTpjxO4BDnkJJYpvcKLgXiV3jeJxOcWcC0dk74qwVnDT.RMl29nZWWcwideQsnQYs0MqJZwIZRtbRMk-9Sg0kJwo",
        "session cookie: eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJRGyvXZgTpjxO4BDnkJJYpvcKLgXiV3jeJxOcWcC0dk74qwVnDT.RMl29nZWWcwideQsnQYs0MqJZwIZRtbRMk-9Sg0kJwo",
    ),
    (
        "private key block",
        "TvmUQL6AYKeue6Yfq9bU4DsyeJyoN/aIG/9w31zoAXa0pIxICBEaLz1kw0yzfBjc\naxVed0P9kCIhramhynkFrl4I+/ffvaP8aZEOeQw/UlAKONLC1EehjPYW0CluCz2o",
        "-----BEGIN PRIVATE KEY-----\nTvmUQL6AYKeue6Yfq9bU4DsyeJyoN/aIG/9w31zoAXa0pIxICBEaLz1kw0yzfBjc\naxVed0P9kCIhramhynkFrl4I+/ffvaP8aZEOeQw/UlAKONLC1EehjPYW0CluCz2o\n-----END PRIVATE KEY-----",
    ),
    (
        "bearer token",
        "cDU2FlHGzBws-P0RVC2gWOoihqoxo3Kq",
        "curl -H \"Authorization: Bearer cDU2FlHGzBws-P0RVC2gWOoihqoxo3Kq\" https://api.example.com/v1/me",
    ),
    (
        "basic-auth url",
        "jSw6byTAOHe98T",
        "git remote set-url origin https://deploy:jSw6byTAOHe98T@git.example.com/acme/app.git",
    ),
    ("basic-auth url", "hunter2", "redis://default:hunter2@cache.internal:6379/0"),
    ("PGPASSWORD", "n0t-4-r3al!", "export PGPASSWORD='n0t-4-r3al!'"),
    ("PGPASSWORD", "hunter22", "PGPASSWORD=hunter22 psql -h db.internal -U app app"),
    ("PGPASSWORD", "Wint3r", "export PGPASSWORD=\"Wint3r\"; pg_dump shop > shop.sql"),
    ("PGPASSWORD", "swordfish", "$ PGPASSWORD=swordfish pg_restore -d shop shop.dump"),
    ("mysql -p", "secret", "mysql -u root -psecret shop < schema.sql"),
    ("mysql -p", "W1nter!2024", "mysqldump -h db -u backup -p'W1nter!2024' shop > shop.sql"),
    ("mysql -p", "Tr0ub4dor", "mysql --user=root --password=Tr0ub4dor shop"),
    ("password: in prose", "Xk7#pq2", "login for the staging admin: user admin, password: Xk7#pq2"),
    ("password: in prose", "hunter2", "Password: hunter2"),
    ("password: in prose", "bluefish", "the router's admin password: \"bluefish\" (change it)"),
    ("password is in prose", "Blue42fish", "the wifi password is Blue42fish, the router is upstairs"),
    ("password is in prose", "correcthorse", "My Gmail password is 'correcthorse'."),
    ("password is in prose", "Tr0ub4dor&3", "fyi the password for the NAS is Tr0ub4dor&3"),
    ("generic assignment", "50e827049b37f83f7dfe06ebf227d42b", "api_key=50e827049b37f83f7dfe06ebf227d42b"),
    ("generic assignment", "J0cWTUhr8RTPb1XGh7NU7n7L", "client_secret = \"J0cWTUhr8RTPb1XGh7NU7n7L\""),
    ("generic assignment", "d41d8cd98f00b204e98", "secret=d41d8cd98f00b204e98 ./run.sh"),
];

/// Text that speaks of secrets without holding one: left byte for byte.
const NEAR_MISSES: &[&str] = &[
    "The password is stored in the vault, never in the repo.",
    "password: required, at least 12 characters",
    "Your password is case-sensitive.",
    "The password is the same as last year's.",
    "I forgot my password again, is there a reset link?",
    "mysql -u root -p shop (it prompts for the password)",
    "mysql -P 3306 -h db.internal -u app -p",
    "mysql -u root -p\"$MYSQL_ROOT_PASSWORD\" shop",
    "export PGPASSWORD=$DB_PASSWORD",
    "PGPASSWORD=\"${PGPASSWORD:-}\" psql",
    "PGPASSWORD is read by psql when no password is given",
    "commit 3f2a1c9e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a3f fixed the AWS secret rotation",
    "the secret to a good risotto is patience",
    "Password: ******** (hidden)",
    "the password is <your password>",
    "a strong password is 12+ characters with symbols",
    "the AWS secret for staging is in the vault under ci/deploy, rotated 2024-05-01",
    "{\"password\": \"string\", \"username\": \"string\"}",
    "the password for the guest network is on the fridge",
    // code around secret words
    "\"max_tokens\": max_tokens, \"memories_tokens_total\": all_tokens,",
    "let password = secret_from_env(config.password.as_deref(), &config.password_env);",
    "fn with_password(url: &str, password: Option<&str>) -> String {",
    "2: ledger::parse::tokens::next_token::h1a2b3c4d5e6f7a8b",
    "struct Scores { tokens: Vec<f64>, session_tokens: Vec<usize> }",
    "kv.split_whitespace().filter(|kv| !kv.starts_with(\"password=\")).collect::<Vec<_>>().join(\" \")",
];

/// The text with `[REDACTED:<kind>]` markers taken out.
fn unmarked(out: &str) -> String {
    let mut s = String::new();
    let mut rest = out;
    while let Some(i) = rest.find("[REDACTED:") {
        s.push_str(&rest[..i]);
        rest = rest[i..].find(']').map_or("", |j| &rest[i + j + 1..]);
    }
    s.push_str(rest);
    s
}

/// True when some 12 characters in a row of the secret (all of it, if shorter) survive.
fn leaks(out: &str, secret: &str) -> bool {
    let out = unmarked(out);
    let chars: Vec<char> = secret.chars().collect();
    let n = chars.len().min(12);
    chars.windows(n).any(|w| out.contains(&w.iter().collect::<String>()))
}

#[test]
fn every_shape_is_redacted() {
    let mut per_shape: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut missed = Vec::new();
    for (shape, secret, text) in SHAPES {
        assert!(text.contains(secret), "{shape}: the text does not hold its secret");
        let (out, n) = redact(text);
        let e = per_shape.entry(shape).or_default();
        e.1 += 1;
        if leaks(&out, secret) {
            missed.push(format!("{shape}: {text}\n  -> {out}"));
        } else {
            assert!(n >= 1, "{shape}: {out}");
            e.0 += 1;
        }
    }
    let shapes_caught = per_shape.values().filter(|(ok, all)| ok == all).count();
    let examples_caught: usize = per_shape.values().map(|(ok, _)| ok).sum();
    for (shape, (ok, all)) in &per_shape {
        eprintln!("  {shape}: {ok} of {all}");
    }
    eprintln!(
        "secret shapes: {shapes_caught} of {} shapes redacted in every example, {examples_caught} of {} examples",
        per_shape.len(),
        SHAPES.len()
    );
    assert_eq!(per_shape.len(), 18);
    assert!(missed.is_empty(), "{} examples not redacted:\n{}", missed.len(), missed.join("\n"));
}

#[test]
fn near_misses_are_left_alone() {
    let changed: Vec<String> = NEAR_MISSES
        .iter()
        .filter_map(|t| {
            let (out, n) = redact(t);
            (n > 0 || out != *t).then(|| format!("{t}\n  -> {out}"))
        })
        .collect();
    assert!(changed.is_empty(), "{} near misses changed:\n{}", changed.len(), changed.join("\n"));
}

#[test]
fn redaction_is_stable() {
    // Redacting twice changes nothing more: the daemon may meet a text already redacted.
    for (_, _, text) in SHAPES {
        let (once, _) = redact(text);
        assert_eq!(redact(&once), (once.clone(), 0), "{text}");
    }
}

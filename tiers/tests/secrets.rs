//! Capture's redaction against a corpus of secret shapes, and against ordinary text.
//!
//! The corpus (`fixtures/secrets.jsonl`, built by `fixtures/make_secrets_corpus.py`) has
//! one example for every text rule of gitleaks' default config (`config/gitleaks.toml`,
//! the reference for the patterns in `tiers/src/redact/patterns.rs`): a synthetic secret
//! drawn from the rule's own regex, in a line such as a terminal or a config file shows. Then
//! the fake keys providers publish in their docs, and the 14 shapes of issue 22. A secret
//! counts as redacted when no 12 characters of it in a row are left. Every shape is
//! redacted but those in [`KEPT`], each kept on purpose; the test fails when one of them
//! starts being redacted too, so the list stays true. docs/RELIABILITY.md has the counts.
//!
//! The ignored test `dev_texts_are_left_alone` runs the redactor over every turn of the
//! LongMemEval and LoCoMo dev sets and reports what it redacts there (false positives):
//! how many texts change, how many words, and each redaction in its context.
//! `cargo test --release -p amber-tiers --test it -- secrets:: --ignored --nocapture`.
//! `tests/secret_shapes.rs` has the 18 shapes every write path must redact.
//!
//! Then what must not be redacted: the project's own docs (but the examples listed in
//! [`DOCS_REDACTED`]), placeholders, public keys, prose about secrets, and the false
//! redactions `examples/redact_survey.rs` found in the READMEs of Cargo's registry.

use std::collections::HashMap;

use amber_tiers::redact::redact;
use serde_json::Value;

/// Shapes kept on purpose, with why.
const KEPT: &[(&str, &str)] = &[
    ("adobe-client-id", "a client id identifies an app; it is not a secret"),
    ("asana-client-id", "a client id identifies an app; it is not a secret"),
    ("bitbucket-client-id", "a client id identifies an app; it is not a secret"),
    ("discord-client-id", "a client id identifies an app; it is not a secret"),
    ("linkedin-client-id", "a client id identifies an app; it is not a secret"),
    ("looker-client-id", "a client id identifies an app; it is not a secret"),
    ("messagebird-client-id", "a client id identifies an app; it is not a secret"),
    ("plaid-client-id", "a client id identifies an app; it is not a secret"),
    ("sendbird-access-id", "an access id names a key; its secret is the token"),
    ("sumologic-access-id", "an access id names a key; its secret is the token"),
    ("new-relic-user-api-id", "an id, not the key (NRAK-...), which is redacted"),
];

/// The gitleaks rules that look at text (all but `pkcs12-file`, which matches file names).
const GITLEAKS_TEXT_RULES: usize = 221;

struct Example {
    rule: String,
    source: String,
    secret: String,
    text: String,
}

fn corpus() -> Vec<Example> {
    include_str!("fixtures/secrets.jsonl")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("bad corpus line ({e}): {l}"));
            let s = |k: &str| v[k].as_str().unwrap_or_else(|| panic!("no {k}: {l}")).to_string();
            Example { rule: s("rule"), source: s("source"), secret: s("secret"), text: s("text") }
        })
        .collect()
}

/// True when some 12 characters in a row of the secret (all of it, if shorter) survive.
fn leaks(out: &str, secret: &str) -> bool {
    let chars: Vec<char> = secret.chars().collect();
    let n = chars.len().min(12);
    chars.windows(n).any(|w| out.contains(&w.iter().collect::<String>()))
}

#[test]
fn the_corpus_of_secret_shapes_is_redacted_but_the_kept_list() {
    let corpus = corpus();
    let gitleaks = corpus.iter().filter(|e| e.source.starts_with("gitleaks")).count();
    assert_eq!(gitleaks, GITLEAKS_TEXT_RULES, "one example per gitleaks text rule");
    let mut missed = Vec::new();
    let mut wrongly_kept = Vec::new();
    let mut redacted = 0;
    for e in &corpus {
        assert!(e.text.contains(&e.secret), "{}: the text does not hold its secret", e.rule);
        let (out, n) = redact(&e.text);
        let leaked = leaks(&out, &e.secret);
        let kept = KEPT.iter().any(|(r, _)| *r == e.rule);
        match (leaked, kept) {
            (true, false) => missed.push(format!("{}: {}\n  -> {out}", e.rule, e.text)),
            (false, true) => wrongly_kept.push(e.rule.clone()),
            (false, false) => {
                assert!(n >= 1);
                redacted += 1;
            }
            (true, true) => {}
        }
    }
    eprintln!(
        "secrets corpus: {} shapes ({gitleaks} gitleaks rules, {} published or issue-22 examples), \
         {redacted} redacted, {} kept on purpose",
        corpus.len(),
        corpus.len() - gitleaks,
        KEPT.len()
    );
    assert!(missed.is_empty(), "{} shapes not redacted:\n{}", missed.len(), missed.join("\n"));
    assert!(wrongly_kept.is_empty(), "now redacted, take them off KEPT: {wrongly_kept:?}");
    assert_eq!(redacted + KEPT.len(), corpus.len());
}

#[test]
fn every_issue_22_shape_and_stripe_is_redacted() {
    let corpus = corpus();
    let issue: Vec<_> =
        corpus.iter().filter(|e| e.rule.starts_with("issue22-") || e.rule.starts_with("stripe")).collect();
    assert!(issue.len() >= 14 + 5, "{}", issue.len());
    for e in issue {
        let (out, _) = redact(&e.text);
        assert!(!leaks(&out, &e.secret), "{}: {out}", e.rule);
    }
    let (out, n) =
        redact("charged with sk_live_51H8xYzAbCdEfGhIjKlMnOpQr and rk_live_51H8xYzAbCdEfGhIjKlMnO");
    assert_eq!(n, 2, "{out}");
    assert_eq!(out, "charged with [REDACTED:stripe_key] and [REDACTED:stripe_key]");
}

/// Turn texts of the LongMemEval and LoCoMo dev sets (each distinct text once).
fn dev_texts() -> Option<Vec<(&'static str, String)>> {
    let root = std::env::var_os("AMBER_BENCH_DATA")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data"));
    let lme = root.join("longmemeval/longmemeval_s_dev.json.xz");
    let locomo = root.join("locomo/locomo_dev.json");
    if !lme.exists() || !locomo.exists() {
        eprintln!("dev data not found under {} (set AMBER_BENCH_DATA)", root.display());
        return None;
    }
    let out = std::process::Command::new("xz").arg("-dc").arg(&lme).output().expect("xz decompresses");
    assert!(out.status.success(), "xz failed");
    let lme: Value = serde_json::from_slice(&out.stdout).unwrap();
    let locomo: Value = serde_json::from_slice(&std::fs::read(&locomo).unwrap()).unwrap();
    let mut seen = std::collections::HashSet::new();
    let mut texts = Vec::new();
    for q in lme.as_array().unwrap() {
        for session in q["haystack_sessions"].as_array().unwrap() {
            for turn in session.as_array().unwrap() {
                let t = turn["content"].as_str().unwrap_or_default();
                if seen.insert(t.to_string()) {
                    texts.push(("longmemeval", t.to_string()));
                }
            }
        }
    }
    for conv in locomo.as_array().unwrap() {
        for (k, session) in conv["conversation"].as_object().unwrap() {
            let Some(turns) = session.as_array().filter(|_| k.starts_with("session_")) else { continue };
            for turn in turns {
                let t = turn["text"].as_str().unwrap_or_default();
                if seen.insert(t.to_string()) {
                    texts.push(("locomo", t.to_string()));
                }
            }
        }
    }
    Some(texts)
}

/// Words of `before` that are not in `after` (a multiset difference).
fn words_changed(before: &str, after: &str) -> usize {
    let mut counts: HashMap<&str, i64> = HashMap::new();
    for w in before.split_whitespace() {
        *counts.entry(w).or_default() += 1;
    }
    for w in after.split_whitespace() {
        *counts.entry(w).or_default() -= 1;
    }
    counts.values().filter(|&&c| c > 0).map(|&c| c as usize).sum()
}

#[test]
#[ignore = "reads the dev sets (../shared/data); run with --ignored"]
fn dev_texts_are_left_alone() {
    let Some(texts) = dev_texts() else { return };
    // per set: (texts, words, redactions, words redacted, texts changed)
    let mut per_set: HashMap<&str, (usize, usize, usize, usize, usize)> = HashMap::new();
    for (set, t) in &texts {
        let (out, n) = redact(t);
        let e = per_set.entry(set).or_default();
        e.0 += 1;
        e.1 += t.split_whitespace().count();
        e.2 += n;
        if n > 0 {
            e.3 += words_changed(t, &out);
            e.4 += 1;
            for (i, _) in out.match_indices("[REDACTED:") {
                let a = out.floor_char_boundary(i.saturating_sub(60));
                let b = out.ceil_char_boundary((i + 90).min(out.len()));
                eprintln!("  {set}: …{}…", out[a..b].replace('\n', " "));
            }
        }
    }
    let mut total_words = 0;
    for (set, (n, words, spans, changed, texts_changed)) in &per_set {
        eprintln!(
            "{set}: {n} distinct turns, {texts_changed} changed; {words} words, {spans} redactions, \
             {changed} words redacted"
        );
        total_words += changed;
    }
    assert!(total_words <= 50, "{total_words} words redacted in ordinary conversation");
}

/// Each text redacted to exactly `want`: the value replaced, its label and the rest kept.
fn assert_redacted(cases: &[(&str, &str)]) {
    let wrong: Vec<String> = cases
        .iter()
        .filter_map(|&(text, want)| {
            let (out, _) = redact(text);
            (out != want).then(|| format!("{text}\n  -> {out}\n  want {want}"))
        })
        .collect();
    assert!(wrong.is_empty(), "{} of {}:\n{}", wrong.len(), cases.len(), wrong.join("\n"));
}

/// Each text left as it is.
fn assert_kept(texts: &[&str]) {
    let changed: Vec<String> = texts
        .iter()
        .filter_map(|&text| {
            let (out, n) = redact(text);
            (n > 0).then(|| format!("{text}\n  -> {out}"))
        })
        .collect();
    assert!(changed.is_empty(), "{} of {} changed:\n{}", changed.len(), texts.len(), changed.join("\n"));
}

#[test]
fn aws_secret_keys_of_any_length_are_redacted_beside_their_name() {
    assert_redacted(&[
        (
            "aws_secret_access_key=UsdMlHUvTCQCyEZDz/TddJ8HyS5SUkCnD8z",
            "aws_secret_access_key=[REDACTED:aws_secret_key]",
        ),
        (
            "aws_secret_access_key = RA9a9SkpXz9w3QlY7Zkuvqdt7s8Stqcbnr3yBdGBLEPH1qhT61qt",
            "aws_secret_access_key = [REDACTED:aws_secret_key]",
        ),
        (
            "  AWS_SECRET_ACCESS_KEY: c4xatws8phP9nhFyJfm5di4PzJ59FHz",
            "  AWS_SECRET_ACCESS_KEY: [REDACTED:aws_secret_key]",
        ),
        (
            "    \"SecretAccessKey\": \"RA9a9SkpXz9w3QlY7Zkuvqdt7s8Stqcbnr3yBdGBLEPH1qhT61qt\",",
            "    \"SecretAccessKey\": \"[REDACTED:aws_secret_key]\",",
        ),
        (
            "the aws secret access key is UsdMlHUvTCQCyEZDz/TddJ8HyS5SUkCnD8z, rotate it on Friday",
            "the aws secret access key is [REDACTED:aws_secret_key], rotate it on Friday",
        ),
        (
            "New AWS secret key: c4xatws8phP9nhFyJfm5di4PzJ59FHz (the old one is revoked)",
            "New AWS secret key: [REDACTED:aws_secret_key] (the old one is revoked)",
        ),
    ]);
    assert_kept(&[
        "aws_secret_access_key = ${AWS_SECRET_ACCESS_KEY}",
        "aws_secret_access_key: YOUR_SECRET_ACCESS_KEY_HERE",
        "set the aws secret access key in ~/.aws/credentials, never in the repo",
    ]);
}

#[test]
fn azure_sas_signatures_are_redacted_the_rest_of_the_url_kept() {
    let query =
        "sv=2021-06-08&ss=b&srt=sco&sp=rwdlac&se=2024-07-01T00:00:00Z&st=2024-06-01T00:00:00Z&spr=https";
    let url = format!("https://acct.blob.core.windows.net/backups/db.tar?{query}");
    assert_redacted(&[
        (
            &format!("curl -o db.tar '{url}&sig=5UbVPsjioSV72yVsmz5Pu0mB%2Bu9wMMv5U3JS3M6t12Q%3D'"),
            &format!("curl -o db.tar '{url}&sig=[REDACTED:azure_sas]'"),
        ),
        (
            &format!(
                "SAS token: ?{query}&sig=AbC%2Bxyz0Yq7%2FkLmN3pQrS8tUvW1xYz4aBcDeFgHiJk%3D for the nightly job"
            ),
            &format!("SAS token: ?{query}&sig=[REDACTED:azure_sas] for the nightly job"),
        ),
    ]);
    // Not a SAS: a `sig` that is a short id, in a query without `sv=`.
    assert_kept(&["see https://example.com/forum/thread?id=42&sig=footer for the footer"]);
}

#[test]
fn url_passwords_with_an_empty_user_are_redacted() {
    assert_redacted(&[
        (
            "REDIS_URL=redis://:s3cretPassw0rd@cache.internal:6379/0",
            "REDIS_URL=redis://:[REDACTED:url_password]@cache.internal:6379/0",
        ),
        (
            "connect to amqp://:Zq8mX2vLpw@rabbit.internal/jobs",
            "connect to amqp://:[REDACTED:url_password]@rabbit.internal/jobs",
        ),
        ("rediss://:Zq8mX2vLpw@cache:6380", "rediss://:[REDACTED:url_password]@cache:6380"),
    ]);
}

#[test]
fn discord_bot_tokens_and_webhooks_are_redacted() {
    let hook = "lI8ihN5KXSc7Tvo-hBKqFYY-kv5ZJr3J1TWDtkwtDDb_xHKas1VOqg6YYZYn9ZhyiA4u";
    assert_redacted(&[
        (
            "the bot runs with MTA1MjM0NTY3ODkwMTIzNDU2Nw.PtYgjm.UhBel31iEl2hpChYgCfrL1spNxnyVmihA-2O76 since May",
            "the bot runs with [REDACTED:discord_token] since May",
        ),
        (
            "client.run('OTg3NjU0MzIxMDk4NzY1NDMy.GhJkLm.UMFxFkM-R5Kjp1vRt_1fjORS-6i')",
            "client.run('[REDACTED:discord_token]')",
        ),
        (
            &format!("post alerts to https://discord.com/api/webhooks/1052345678901234567/{hook} please"),
            "post alerts to https://discord.com/api/webhooks/1052345678901234567/[REDACTED:discord_webhook] please",
        ),
        (
            &format!("https://discordapp.com/api/webhooks/987654321098765432/{hook}"),
            "https://discordapp.com/api/webhooks/987654321098765432/[REDACTED:discord_webhook]",
        ),
    ]);
    // Three dotted parts whose first is not a user id in base64.
    assert_kept(&["call NSPersistentContainerViewer.reload.withAnimationCompletionHandlerBlock() here"]);
}

#[test]
fn telegram_bot_tokens_are_redacted_in_urls_and_prose() {
    assert_redacted(&[
        (
            "curl https://api.telegram.org/bot123456789:AAoRgnatmUdjAWtGSU8po_799NksnRH9ucA/getMe",
            "curl https://api.telegram.org/bot[REDACTED:telegram_token]/getMe",
        ),
        (
            "the bot token is 123456789:AAoRgnatmUdjAWtGSU8po_799NksnRH9uc- and it works",
            "the bot token is [REDACTED:telegram_token] and it works",
        ),
        ("token 5234567890:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq", "token [REDACTED:telegram_token]"),
    ]);
}

/// The redactions expected in the project's own documentation, with why: (file, the
/// text redacted).
const DOCS_REDACTED: &[(&str, &str)] = &[
    // The example of a password filed as metadata that docs/SECURITY.md gives: a quoted
    // value under `"password"` reads as a real one (the unit tests redact the same line).
    ("docs/SECURITY.md", "hunter2"),
    // Its example of a password glued to `mysql -p`: `secret` is a password local
    // databases use (tests/secret_shapes.rs redacts `mysql -u root -psecret`).
    ("docs/SECURITY.md", "secret"),
];

#[test]
fn the_projects_docs_are_left_alone_but_their_example_secrets() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| e.expect("a docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    files.extend(["README.md", "ARCHITECTURE.md"].map(|f| root.join(f)));
    files.sort();
    assert!(files.len() >= 10, "{files:?}");
    let mut found = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("a UTF-8 doc");
        let name = path.strip_prefix(&root).expect("under the root").display().to_string();
        for s in amber_tiers::redact::find_secrets(&text) {
            let a = text.floor_char_boundary(s.start.saturating_sub(60));
            let b = text.ceil_char_boundary((s.end + 60).min(text.len()));
            found.push((name.clone(), text[s.start..s.end].to_string(), text[a..b].replace('\n', " ")));
        }
    }
    let unexpected: Vec<_> = found
        .iter()
        .filter(|(f, v, _)| !DOCS_REDACTED.contains(&(f.as_str(), v.as_str())))
        .map(|(f, v, ctx)| format!("{f}: {v:?} in …{ctx}…"))
        .collect();
    assert!(unexpected.is_empty(), "{} redacted in the docs:\n{}", unexpected.len(), unexpected.join("\n"));
    assert_eq!(found.len(), DOCS_REDACTED.len(), "{found:?}");
}

#[test]
fn prose_about_secrets_is_kept() {
    assert_kept(&[
        "Files one memory verbatim, but for secrets: secret-looking strings in `content` are replaced",
        "secrets (keys, tokens, passwords) and secret-looking strings are redacted",
        "tokens: token-based auth, see the session docs",
        "passwords: password-protected archives are refused",
    ]);
}

/// A public key made for this test (ed25519, `gpg --quick-gen-key`), its last line 40
/// characters of base64: as long as a bare AWS secret access key.
const PUBLIC_KEY: &str = include_str!("fixtures/public_key.asc");

#[test]
fn public_keys_and_their_fingerprints_are_never_redacted() {
    let beside_aws = format!("{PUBLIC_KEY}Import it, then check the signature of the AWS CLI zip.");
    let flattened = format!("key: {}", PUBLIC_KEY.replace('\n', " "));
    let with_comment =
        PUBLIC_KEY.replace("\n\nmDME", "\nComment: secret: d2hhdCBpcyBub3QgYSBzZWNyZXQgYXQgYWxs\n\nmDME");
    assert_kept(&[
        &beside_aws,
        &flattened,
        &with_comment,
        "  - Release GPG key: 9554F04D7259F04124DE6B476D5A82AC7E37093B",
        "gpg --recv-keys 4ED778F539E3634C779C87C6D7062848A1AB005C  # release signing key: 4ED778F539E3634C",
        "pub   ed25519 2025-05-01 [SC]\n      Key fingerprint = 4ED7 78F5 39E3 634C 779C  87C6 D706 2848 A1AB 005C",
    ]);
    // A private key block beside a public one is redacted all the same.
    let text = format!(
        "{PUBLIC_KEY}-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBFZ2U9ABEADXk3fbGz4Ywkq3bRrVxLmq0jl8u9h\n-----END PGP PRIVATE KEY BLOCK-----"
    );
    let (out, n) = redact(&text);
    assert_eq!(n, 1, "{out}");
    assert_eq!(out, format!("{PUBLIC_KEY}[REDACTED:private_key]"));
}

#[test]
fn documentation_placeholders_are_kept() {
    assert_kept(&[
        // assignments
        "api_key: your-api-key",
        "token: <YOUR_TOKEN>",
        "API_KEY=${API_KEY}",
        "TOKEN=$TOKEN",
        "api_key = YOUR_KEY_HERE",
        "token = \"changeme\"",
        "api_key: \"example\"",
        "OPENAI_API_KEY=sk-...",
        "OPENAI_API_KEY=\"sk-...\"",
        "\"api_key\": \"sk-...abcd\"",
        "OPENAI_API_KEY=sk-proj-...",
        // passwords in prose and config
        "password: \"xxxxxxxx\"",
        "password: \"...\"",
        "password: \"changeme\"",
        "password: \"example\"",
        "the password is \"example\"",
        "password: 'password'",
        // shell, command lines
        "PGPASSWORD=changeme psql -h db",
        "DB_PASSWORD=example",
        "mysql -u root -pchangeme shop",
        "docker login --password=changeme registry",
        "curl -u user:changeme https://api.example.com",
        "curl -u admin:$PASSWORD https://api.example.com",
        "curl -u user:password https://api.example.com",
        // URLs
        "https://user:changeme@db.example.com/app",
        "https://admin:<password>@db.example.com",
        "https://admin:${DB_PASSWORD}@db.example.com",
        "https://admin:xxxxxxxx@db.example.com",
        "https://admin:****@db.example.com",
        "https://admin:YOUR_PASSWORD@db.example.com",
        "https://admin:...@db.example.com",
        "redis://:PASSWORD@host:6379",
        "use scheme://user:password@host in the URL",
        "let proxy = Proxy::new(\"http://user:password@cool.proxy:9090\")?;",
        // tokens
        "Authorization: Bearer YOUR_API_KEY_HERE",
        "Authorization: Bearer xxxxxxxxxxxxxxxxxxxx",
        "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "GITHUB_TOKEN=ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
        "SLACK_BOT_TOKEN=xoxb-xxxxxxxxxxxx-xxxxxxxxxxxx-xxxxxxxxxxxxxxxxxxxxxxxx",
        "SLACK_BOT_TOKEN=xoxb-your-token-here",
        "const auth = createTokenAuth(\"ghp_PersonalAccessToken01245678900000000\");",
        "GOOGLE_API_KEY=AIzaSyXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
    ]);
}

#[test]
fn stripe_keys_are_named_stripe_key_in_every_context() {
    let live = "sk_live_51H8xYzAbCdEfGhIjKlMnOpQr";
    let test = "sk_test_4eC39HqLyjWDarjtT1zdp7dc";
    let restricted = "rk_live_51H8xYzAbCdEfGhIjKlMnO";
    for text in [
        format!("STRIPE_SECRET_KEY={live}"),
        format!("Authorization: Bearer {live}"),
        format!("curl https://api.stripe.com/v1/charges -u {test}: -d amount=2000"),
        format!("stripe.api_key = \"{test}\""),
        format!("{{\"key\": \"{restricted}\"}}"),
        format!("export OPENAI_API_KEY={live}"),
        format!("openai said the key {test} is not one of theirs"),
        format!("https://{live}:@api.stripe.com/v1/charges"),
    ] {
        let (out, n) = redact(&text);
        assert_eq!(n, 1, "{text} -> {out}");
        assert!(out.contains("[REDACTED:stripe_key]"), "{text} -> {out}");
    }
    // Beside an OpenAI key, each is named after its own kind.
    let (out, _) = redact(&format!("{live},sk-proj-biwfk2nn9BuWNoIL28BQxIPoVJ7VtD4Q9Oiw"));
    assert_eq!(out, "[REDACTED:stripe_key],[REDACTED:openai_key]");
}

#[test]
fn readme_and_cli_examples_are_kept_and_real_values_beside_them_redacted() {
    // Each from the READMEs of crates in Cargo's registry or from AWS CLI examples
    // (`tiers/examples/redact_survey.rs`), kept for a general reason: a type, a name that
    // says what it holds, a public badge, an id, a date, a path, a placeholder.
    assert_kept(&[
        "fn hash_password<D: Digest>(password: &str, salt: &str, output: &mut [u8]) {",
        "//   token: '...', tokenType: 'user-to-server'",
        "const octokit = new Octokit({ auth: `personal-access-token123` });",
        "Octokit.defaults({ auth: \"mypersonalaccesstoken123\" });",
        "[<img src=\"https://img.shields.io/codecov/c/gh/al8n/fs4-rs?style=for-the-badge&token=P0YeuKXJyp&logo=codecov\">]",
        "[coverage-image]: https://codecov.io/gh/RustCrypto/hybrid-array/graph/badge.svg?token=Z92NHFQ70G",
        "headers: { 'X-TOKEN-SECRET': 'SuperSecretToken' }",
        "//somewhere-else.com/myorg/:_authToken=MYTOKEN1",
        "key=\"-----BEGIN PRIVATE KEY-----\\nXXXX\\nXXXX\\n-----END PRIVATE KEY-----\"",
        "\"PrivateKey\": \"-----BEGIN RSA PRIVATE KEY-----\\nkey omitted for security reasons\\n-----END RSA PRIVATE KEY-----\"",
        "b64 = '-----BEGIN RSA PRIVATE KEY-----\\n'\nb64 += b64encode(der_serialisation)\nb64 += '-----END RSA PRIVATE KEY-----\\n'",
        "const myURL = new URL('https://abc:xyz@example.com'); // and https://a:b@example.com/?abc#foo",
        "\"NextToken\": \"eyJOZXh0VG9rZW4iOiBudWxsLCAiYm90b190cnVuY2F0ZV9hbW91bnQiOiAxfQ==\"",
        "\"LockToken\": \"0bc01e21-03c9-4b98-9433-6229cbf1ef1c\", \"nextPageToken\": \"AAAAKgAAAAEAAAAAAAAAAw+7LZ4GRZPzTqBHsp2wBxWB8m1s\"",
        "\"KmsKeyId\": \"arn:aws:kms:us-west-2:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab\"",
        "\"KeyId\": \"1234abcd-12ab-34cd-56ef-1234567890ab\", \"key\": \"48c67f3c-63bb-4f92-a98a-4ee0fbc2bef6\"",
        "\"Key\": \"proxy_protocol_v2.enabled\", \"S3Key\": \"RHEL5export-i-fh8sjjsq.ova\"",
        "\"publicKey\": \"AAAAC3NzaC1lZDI1NTE5AAAAIC1gwGPDfGaONxJX3UNap781QxHQmn8nzlrUv\"",
        "\"tokenExpirationTime\": \"2022-03-16T03:45:09+00:00\", \"lastModifiedSecret\": 1556311319.069,",
        "see <https://docs.aws.amazon.com/Route53/latest/DeveloperGuide/domain-renew.html>",
        "aws glacier describe-job\n{\"location\": \"/011685312445/vaults/mwunderl/jobs/l7IL5-EkXyEY9Ws95fClzIbk2O5uLYa\"}",
        "aws apigateway delete-usage-plan-key --usage-plan-id a1b2c3 --key-id 1NbjQzMReAkeEQPNAW8r3dXsU2rDD7fc7f2Sipnu",
    ]);
    assert_redacted(&[
        (
            "\"SecretAccessKey\": \"8P+SQvWIuLnKhh8d++jpw0nNmQRBZvNAbc123KEY\"",
            "\"SecretAccessKey\": \"[REDACTED:aws_secret_key]\"",
        ),
        (
            "curl -X POST \"https://codecov.io/upload/v4?token=3e9f1a2b-4c5d-4e6f-8a9b-0c1d2e3f4a5b&commit=abc\"",
            "curl -X POST \"https://codecov.io/upload/v4?token=[REDACTED:assigned_secret]&commit=abc\"",
        ),
        ("\"ClientSecret\": \"Xk7pQ2mNs9TvB4wLz\"", "\"ClientSecret\": \"[REDACTED:assigned_secret]\""),
        ("api_key: 9f8e7d6c5b4a39281706f5e4d3c2b1a0", "api_key: [REDACTED:assigned_secret]"),
        ("key: 9f8e7d6c5b4a39281706f5e4d3c2b1a0", "key: [REDACTED:assigned_secret]"),
    ]);
}

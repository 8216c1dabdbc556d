//! The secret shapes: one regex per provider token or assignment, with the check its
//! match must pass.

use std::sync::LazyLock;

use regex::Regex;

use super::checks::{
    Check, always, assigned_value, aws_secret_near, digit_in_match, discord_user_id, key_material,
    not_a_stand_in, password_value, provider_token, query_value, random_match, random_match_short,
    random_value, sas_signature, stated_password,
};

/// A secret pattern: the regex, the group holding the secret (0: the whole match; with
/// alternatives, the first group from it that took part), and a check the match must
/// pass (to keep ordinary text out).
pub(super) struct Pattern {
    pub(super) name: &'static str,
    pub(super) re: Regex,
    pub(super) group: usize,
    pub(super) check: Check,
}

/// The name of a value assigned to a secret-looking name.
pub(super) const ASSIGNED: &str = "assigned_secret";

fn pattern(name: &'static str, re: &str, group: usize, check: Check) -> Pattern {
    Pattern { name, re: Regex::new(re).expect("a valid secret pattern"), group, check }
}

/// Armored blocks that are public by nature: OpenPGP public keys and signatures, PEM
/// public keys and certificates, up to their END line (or, cut before it, the end of their
/// base64). Nothing inside one is a secret (a base64 line may look like one).
pub(super) static PUBLIC_BLOCK: LazyLock<Regex> = LazyLock::new(|| {
    let kind = "(?:PGP PUBLIC KEY BLOCK|PGP SIGNATURE|[A-Z0-9 ]{0,20}PUBLIC KEY|CERTIFICATE)";
    Regex::new(&format!(
        r"-----BEGIN {kind}-----(?:(?:[^-]|-{{1,4}}[^-])*?-----END {kind}-----|(?:\s*[A-Za-z0-9+/=]{{4,}})*)"
    ))
    .expect("a valid pattern")
});

/// The secret shapes, most specific first (a secret matched by several is named after the
/// first). The reference is the rule list of gitleaks' default config
/// (`config/gitleaks.toml`, <https://github.com/gitleaks/gitleaks>): every provider token
/// with a distinctive prefix has a pattern here, and its keyword rules (`<provider>_KEY =
/// value`) are covered by `assigned_secret`. `tiers/tests/secrets.rs` runs a corpus of one
/// example per gitleaks rule, the fake keys providers publish and the shapes of issue 22,
/// and lists what is kept on purpose (docs/RELIABILITY.md has the counts).
pub(super) static PATTERNS: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    let p = pattern;
    vec![
        p(
            "private_key",
            r"-----BEGIN[ A-Z0-9_\-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END[ A-Z0-9_\-]{0,100}PRIVATE KEY(?: BLOCK)?-----|(?:\s*[A-Za-z0-9+/=]{16,})*)",
            0,
            key_material,
        ),
        p("aws_access_key", r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b", 0, provider_token),
        // aws_secret_access_key = ..., "SecretAccessKey": "...", the AWS secret key is ...:
        // named, so any length from 30 to 60 (a bare one must be 40, `aws_secret_near`).
        p(
            "aws_secret_key",
            r#"(?i)\b(?:aws[ _\-]?secret(?:[ _\-]?access)?|secret[ _\-]?access)[ _\-]?key["']?(?:\s+(?:is|was)\s*:?|\s*(?:=>|[:=]))[ \t]*["'`]?([A-Za-z0-9/+]{30,60}={0,2})(?:$|[^A-Za-z0-9/+=])"#,
            1,
            random_value,
        ),
        p(
            "aws_bedrock_key",
            r"\bABSK[A-Za-z0-9+/]{109,269}={0,2}|\bbedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%&.\-]*",
            0,
            provider_token,
        ),
        p(
            "stripe_key",
            r"\b(?:(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9+/=]{20,})",
            0,
            provider_token,
        ),
        p(
            "github_token",
            r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b",
            0,
            provider_token,
        ),
        p(
            "gitlab_token",
            r"\b(?:gl(?:pat|dt|ffct|ft|imt|agent|oas|rt|soat|cbt|ptt)-[0-9A-Za-z_.\-]{20,}|GR1348941[A-Za-z0-9_\-]{20}|_gitlab_session=[0-9a-z]{32})",
            0,
            provider_token,
        ),
        p("anthropic_key", r"\bsk-ant-(?:api|admin)[0-9]{2}-[A-Za-z0-9_\-]{20,}", 0, provider_token),
        p("openai_key", r"\bsk-(?:proj-|svcacct-|admin-|ant-)?[A-Za-z0-9_\-]{20,}", 0, digit_in_match),
        p(
            "slack_token",
            r"\bxox[abeoprs]-[A-Za-z0-9\-]{8,}|\bxoxe\.xox[bp]-[0-9]-[A-Za-z0-9]{100,}|\bxapp-[0-9]-[A-Za-z0-9]+-[0-9]+-[A-Za-z0-9]+|hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{20,}",
            0,
            provider_token,
        ),
        // A bot token: the bot's user id in base64, a timestamp, an HMAC (`discord_user_id`).
        p(
            "discord_token",
            r"(?:^|[^A-Za-z0-9_\-.])([MNO][A-Za-z0-9_\-]{23,25}\.[A-Za-z0-9_\-]{6,7}\.[A-Za-z0-9_\-]{27,38})(?:$|[^A-Za-z0-9_\-.])",
            1,
            discord_user_id,
        ),
        // The webhook's token, after its id.
        p(
            "discord_webhook",
            r"\bdiscord(?:app)?\.com/api(?:/v[0-9]{1,2})?/webhooks/[0-9]{17,20}/([A-Za-z0-9_\-]{60,68})",
            1,
            provider_token,
        ),
        p("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}", 0, provider_token),
        p(
            "jwt",
            r"\bey[A-Za-z0-9_\-]{10,}\.ey[A-Za-z0-9/\\_\-]{10,}\.(?:[A-Za-z0-9/\\_\-]{10,}={0,2})?",
            0,
            provider_token,
        ),
        p("jwt", r"\bZXlK[A-Za-z0-9/+_\-]{40,}={0,2}", 0, provider_token),
        p(
            "grafana_token",
            r"\beyJrIjoi[A-Za-z0-9]{70,400}={0,3}|\bglc_[A-Za-z0-9+/]{32,400}={0,3}|\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b",
            0,
            provider_token,
        ),
        p("huggingface_token", r"\b(?:hf|api_org)_[A-Za-z]{34}\b", 0, provider_token),
        p("npm_token", r"\bnpm_[A-Za-z0-9]{36}\b", 0, provider_token),
        p("pypi_token", r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}", 0, provider_token),
        p("rubygems_token", r"\brubygems_[a-f0-9]{48}\b", 0, provider_token),
        p("digitalocean_token", r"\bdo[opr]_v1_[a-f0-9]{64}\b", 0, provider_token),
        p("sendgrid_key", r"\bSG\.[A-Za-z0-9=_\-.]{66}", 0, provider_token),
        p("sendinblue_key", r"\bxkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}\b", 0, provider_token),
        p("shopify_token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", 0, provider_token),
        p("twilio_key", r"\bSK[0-9a-fA-F]{32}\b", 0, provider_token),
        p("square_token", r"\b(?:EAAA|sq0atp-|sq0csp-)[A-Za-z0-9_\-]{22,60}", 0, random_match),
        p(
            "facebook_token",
            r"\bEAA[MC][A-Za-z0-9]{100,}|\b[0-9]{15,16}(?:\||%7C|%)[0-9A-Za-z_\-]{27,40}",
            0,
            provider_token,
        ),
        p("databricks_token", r"\bdapi[a-f0-9]{32}(?:-[0-9])?\b", 0, provider_token),
        p("dynatrace_token", r"\bdt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}", 0, provider_token),
        p("doppler_token", r"\bdp\.pt\.[A-Za-z0-9]{43}", 0, provider_token),
        p("duffel_token", r"\bduffel_(?:test|live)_[A-Za-z0-9_\-=]{43}", 0, provider_token),
        p("easypost_key", r"\bEZ[AT]K[A-Za-z0-9]{54}\b", 0, provider_token),
        p("flutterwave_key", r"\bFLW(?:SECK|PUBK)_TEST-[A-Za-z0-9]{12,32}(?:-X)?", 0, provider_token),
        p(
            "flyio_token",
            r"\b(?:fo1_[A-Za-z0-9_\-]{43}|fm1[ar]_[A-Za-z0-9+/]{100,}={0,3}|fm2_[A-Za-z0-9+/]{100,}={0,3})",
            0,
            provider_token,
        ),
        p("frameio_token", r"\bfio-u-[A-Za-z0-9\-_=]{64}", 0, provider_token),
        p(
            "harness_key",
            r"\b(?:pat|sat)\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}\b",
            0,
            provider_token,
        ),
        p("terraform_token", r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9\-_=]{60,70}", 0, provider_token),
        p("vault_token", r"\bhv[sb]\.[A-Za-z0-9_\-]{90,300}", 0, provider_token),
        p("vault_token", r"\bs\.[A-Za-z0-9]{24}\b", 0, random_match_short),
        p("heroku_key", r"\bHRKU-AA[0-9A-Za-z_\-]{58}", 0, provider_token),
        p("infracost_token", r"\bico-[A-Za-z0-9]{32}\b", 0, provider_token),
        p("intra42_secret", r"\bs-s4t2(?:ud|af)-[a-f0-9]{64}\b", 0, provider_token),
        p("linear_key", r"\blin_api_[A-Za-z0-9]{40}\b", 0, provider_token),
        p("maxmind_key", r"\b[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk\b", 0, provider_token),
        p("newrelic_key", r"\bNR(?:JS|II|AK)-[A-Za-z0-9\-]{19,32}\b", 0, provider_token),
        p("notion_token", r"\bntn_[0-9]{11}[A-Za-z0-9]{35}\b", 0, provider_token),
        p("octopus_key", r"\bAPI-[A-Z0-9]{26}\b", 0, provider_token),
        p("openshift_token", r"\bsha256~[A-Za-z0-9_\-]{43}", 0, provider_token),
        p("perplexity_key", r"\bpplx-[A-Za-z0-9]{48}\b", 0, provider_token),
        p("planetscale_token", r"\bpscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.\-]{32,64}", 0, provider_token),
        p("postman_key", r"\bPMAK-[A-Fa-f0-9]{24}-[A-Fa-f0-9]{34}\b", 0, provider_token),
        p("prefect_token", r"\bpnu_[A-Za-z0-9]{36}\b", 0, provider_token),
        p("pulumi_token", r"\bpul-[a-f0-9]{40}\b", 0, provider_token),
        p("readme_key", r"\brdme_[a-z0-9]{70}\b", 0, provider_token),
        p("scalingo_token", r"\btk-us-[A-Za-z0-9_\-]{48}", 0, provider_token),
        p(
            "sentry_token",
            r"\bsntrys_eyJpYXQiO[A-Za-z0-9+/=_]{50,}|\bsntryu_[a-f0-9]{64}\b",
            0,
            provider_token,
        ),
        p("settlemint_token", r"\bsm_(?:aat|pat|sat)_[A-Za-z0-9]{16}\b", 0, provider_token),
        p("sourcegraph_token", r"\bsgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}\b", 0, provider_token),
        p("shippo_token", r"\bshippo_(?:live|test)_[a-fA-F0-9]{40}\b", 0, provider_token),
        p(
            "onepassword_key",
            r"\bA3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\b|\bops_eyJ[A-Za-z0-9+/]{250,}={0,3}",
            0,
            provider_token,
        ),
        p("adobe_secret", r"\bp8e-[A-Za-z0-9]{32}\b", 0, provider_token),
        p("age_key", r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b", 0, provider_token),
        p("airtable_token", r"\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b", 0, provider_token),
        p("alibaba_key", r"\bLTAI[A-Za-z0-9]{20}\b", 0, provider_token),
        p("artifactory_key", r"\bAKCp[A-Za-z0-9]{69}\b|\bcmVmd[A-Za-z0-9]{59}\b", 0, provider_token),
        p(
            "authress_key",
            r"\b(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_\-][A-Za-z0-9\-]{10,32}\.[A-Za-z0-9+/_=\-]{30,120}",
            0,
            provider_token,
        ),
        p(
            "azure_secret",
            r#"(?m)(?:^|[\\'"`\s>=:(,)])([A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34})"#,
            1,
            provider_token,
        ),
        p("clickhouse_key", r"\b4b1d[A-Za-z0-9]{38}\b", 0, provider_token),
        p("clojars_token", r"\bCLOJARS_[A-Za-z0-9]{60}\b", 0, provider_token),
        p("cloudflare_key", r"\bv1\.0-[a-f0-9]{24}-[a-f0-9]{146}\b", 0, provider_token),
        p("mailgun_key", r"\b(?:pub)?key-[a-f0-9]{32}\b", 0, provider_token),
        p("mailchimp_key", r"\b[a-f0-9]{32}-us[0-9]{1,2}\b", 0, provider_token),
        p("mapbox_token", r"\b[ps]k\.[A-Za-z0-9]{60}\.[A-Za-z0-9]{22}\b", 0, provider_token),
        p("dropbox_token", r"\bsl\.[A-Za-z0-9\-=_]{135}", 0, provider_token),
        p("typeform_token", r"\btfp_[A-Za-z0-9\-_.=]{59}", 0, provider_token),
        // The bot id, `:`, 35 characters from `A`; in an API URL glued to `/bot`.
        p(
            "telegram_token",
            r"(?:^|[^0-9])([0-9]{5,16}:A[A-Za-z0-9_\-]{34})(?:$|[^A-Za-z0-9_\-])",
            1,
            provider_token,
        ),
        p("twitter_token", r"\bA{22}[A-Za-z0-9%]{80,100}", 0, always),
        p(
            "teams_webhook",
            r"[[A-Za-z0-9_].\-]+\.webhook\.office\.com/webhookb2/[^\s'\x22<>]+",
            0,
            provider_token,
        ),
        p(
            "sidekiq_secret",
            r"(?i)\bBUNDLE_(?:ENTERPRISE|GEMS)__CONTRIBSYS__COM\s*[:=]\s*[\x22']?([a-f0-9]{8}:[a-f0-9]{8})",
            1,
            provider_token,
        ),
        p(
            "nuget_password",
            r#"(?i)<add\s+key="(?:ClearText)?Password"\s+value="([^"]{8,})""#,
            1,
            provider_token,
        ),
        // scheme://user:password@host, or with no user (redis://:password@host)
        p("url_password", r"[a-zA-Z][a-zA-Z0-9+.\-]*://[^/\s:@]*:([^/\s@]+)@", 1, password_value),
        // An Azure SAS token's signature: `sig=` in a query that has a signed version, `sv=`.
        p("azure_sas", r"[?&]sig=([A-Za-z0-9%+/=]{20,})", 1, sas_signature),
        // curl -u user:password, --user=user:password
        p(
            "curl_password",
            r#"\bcurl\b[^\n]*?\s(?:-u|--user)(?:=|\s+)["']?[^\s:"']+:([^\s"'`]{3,})"#,
            1,
            password_value,
        ),
        p("bearer", r"(?i)\bbearer\s+([A-Za-z0-9_\-\.=+/~]{16,})", 1, not_a_stand_in),
        p(
            "basic_auth",
            r#"(?i)\bauthorization["']?\s*:\s*["']?basic\s+([A-Za-z0-9+/]{8,}={0,3})"#,
            1,
            provider_token,
        ),
        // A bare AWS secret access key: 40 characters of base64 with no prefix of its
        // own, so only beside a key id or words that name it (`aws_secret_near`).
        p(
            "aws_secret_key",
            r"(?:^|[^A-Za-z0-9/+=])([A-Za-z0-9/+]{40})(?:$|[^A-Za-z0-9/+=])",
            1,
            aws_secret_near,
        ),
        // export PGPASSWORD='...', MYSQL_PWD=... psql: a shell assignment to a password
        // variable (upper case, no spaces around `=`), quoted or not, however short.
        p(
            "env_password",
            r#"\b[A-Z][A-Z0-9_]*(?:PASSWORD|PASSWD|_PWD|_PASS)=(?:'([^'\n]+)'|"([^"\n]+)"|([^\s'"`;&|)]+))"#,
            1,
            password_value,
        ),
        // mysql -u root -psecret, mysqldump -p'...': the password glued to `-p` (a bare
        // `-p` asks for it; `-P` is the port).
        p(
            "mysql_password",
            r#"\bmysql(?:dump|admin|import|show|check|slap|binlog)?\b[^\n;&|]*?\s-p(?:'([^'\n]+)'|"([^"\n]+)"|([^\s'"`;&|]+))"#,
            1,
            password_value,
        ),
        // --password=..., --passwd=... on any command line.
        p(
            "cli_password",
            r#"(?:^|\s)--?(?:password|passwd)=(?:'([^'\n]+)'|"([^"\n]+)"|([^\s'"`;&|]+))"#,
            1,
            password_value,
        ),
        // In prose and config: "password: Xk7#pq2", "the wifi password is Blue42fish",
        // "the password for the NAS was 'hunter2'", {"password": "abc123"}. A quoted value
        // counts; an unquoted one only when it does not read as a word (`stated_password`).
        p(
            "password",
            r#"(?i)\b(?:password|passwd|passphrase|passcode)["']?(?:\s+(?:for|to|of|on|at)(?:\s+[^\s:=]{1,30}){1,3}?)?(?:\s+(?:is|was)(?:\s+(?:set\s+to|now|still))?\s*:?|\s*[:=])[ \t]*(?:'([^'\s]{3,64})'|"([^"\s]{3,64})"|`([^`\s]{3,64})`|([^\s'"`]{2,63}[^\s'"`.,;:!?)\]]))"#,
            1,
            stated_password,
        ),
        // A URL's query parameter that names a secret: ?access_token=..., &api_key=...
        p(
            ASSIGNED,
            r"(?i)[?&]([a-z0-9_.\-]*(?:pass|pwd|secret|token|credential|creds|auth|key)[a-z0-9_.\-]*)=([^\s\x22'`,;&#<>]{8,})",
            2,
            query_value,
        ),
        // password = "...", api_key: ..., SECRET_TOKEN=..., "stripeKey" => '...'
        p(
            ASSIGNED,
            r#"(?i)\b([a-z0-9_.\-]*(?:pass|pwd|secret|token|credential|creds|auth|key)[a-z0-9_.\-]*)["'`]?[ \t]*(?:=>|:=|\?=|:|=)[ \t]*["'`]?([^\s"'`,;]{8,})"#,
            2,
            assigned_value,
        ),
    ]
});

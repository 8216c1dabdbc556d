//! The daemon's configuration, shared with the CLI (which starts the daemon and must find
//! its socket). Resolution order: defaults, then the TOML file, then the environment,
//! then flags (applied by the caller on the returned [`Config`]).

use std::path::{Path, PathBuf};

use amber_core::paths;
use serde::{Deserialize, Serialize};

use crate::protocol::DEFAULT_MAX_FRAME;

/// The effective configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Where the model and runtime are installed (`scripts/setup.sh` puts them there).
    pub amber_home: PathBuf,
    /// The data directory: the SQLite store and its indexes (0700).
    pub data_dir: PathBuf,
    /// The socket path. Empty: `$XDG_RUNTIME_DIR/amber/amber.sock`, else
    /// `<data_dir>/amber.sock`.
    pub socket: Option<PathBuf>,
    /// Where the daemon writes its logs (`<state_dir>/logs/amberd.log.<date>`).
    pub state_dir: PathBuf,
    /// The longest request line in bytes (default 4 MiB).
    pub max_frame_bytes: usize,
    /// Connections served at once (default 256). One more is accepted, answered
    /// `too_many_connections` and closed.
    pub max_connections: usize,
    /// A connection that has sent part of a request line and not its end within this
    /// many ms of its first byte is closed (default 60000).
    pub frame_timeout_ms: u64,
    /// A connection with no request for this many seconds (between requests, nothing
    /// sent) is closed (default 600); clients reconnect on their next call.
    pub idle_connection_timeout_s: u64,
    /// A reply the client does not read within this many ms (the socket's buffer stays
    /// full) closes the connection (default 30000). Replies are written before the next
    /// request is read, so a client that never reads holds one reply at most.
    pub reply_timeout_ms: u64,
    /// Writes waiting for the writer before the daemon answers `busy` (default 1024).
    pub write_queue: usize,
    /// How long a `recall` waits for indexing to cover earlier writes, in ms (default 10000).
    pub fresh_timeout_ms: u64,
    /// Writes answer `busy` while indexing is this many memories (sequence numbers)
    /// behind the store (default 2000), so a burst cannot leave search minutes stale.
    pub max_index_backlog: u64,
    /// Daily log files kept (default 7).
    pub log_files: usize,
    /// The log filter, tracing's env-filter syntax (default `info`; `AMBER_LOG` overrides).
    pub log: String,
    /// Keep a second model instance (default true, about 55 MB, docs/PERFORMANCE.md):
    /// queries take whichever instance is free, so recalls do not wait for indexing and
    /// two recalls embed at once, and indexing embeds on both when no query needs one.
    /// False: one model, and a recall that arrives during indexing or another recall
    /// waits for the text being embedded.
    pub query_model: bool,
    /// How much lower indexing's CPU priority is than the daemon's (a nice value added,
    /// 0 to 19; default 10): the indexer thread and the model instance it embeds with
    /// yield the processor to the threads answering clients, so one client's flood of
    /// writes slows its own indexing, not another's recall (docs/RELIABILITY.md). 0 off.
    pub index_nice: i32,
    /// Session context (default true): a short memory filed in a session gets a second
    /// vector, of itself followed by the memory filed just before it in the session, so
    /// a reply is found by the words of the question it answers (measured in
    /// docs/EVAL.md, "Session context"; it about doubles the embedding work for such
    /// memories). Changing it rebuilds the vector index at the next start.
    pub session_context: bool,
    /// Tier 0: which coordination files the `identity` method serves, and the budget
    /// (`[identity]` table: `files = [globs]`, `budget_tokens = 800`).
    pub identity: amber_tiers::identity::IdentityConfig,
    /// Capture limits (`[capture]` table: `min_chars = 50`, `max_chars = 8192`).
    pub capture: amber_tiers::capture::CaptureConfig,
    /// The interjection judge (`[judge]` table: `kind = "off" | "reranker" | "openai"`, ...).
    pub judge: amber_tiers::judge::JudgeConfig,
    /// Fact extraction from captured text into the graph (`[extract]` table:
    /// `kind = "off" | "openai"`, ...). Off by default: nothing leaves the machine.
    pub extract: amber_tiers::extract::ExtractConfig,
    /// Sessions (`[session]` table: `idle_timeout_s = 1800`, `max_decisions = 200`).
    pub session: amber_tiers::session::SessionConfig,
    /// Tier 1 (`[briefing]` table: budget and ranking weights).
    pub briefing: amber_tiers::briefing::BriefingConfig,
    /// Tier 2 (`[interject]` table: gate, band, limits, cooldown).
    pub interject: amber_tiers::interject::InterjectConfig,
    /// Curation at session end (`[curation]` table: thresholds).
    pub curation: amber_tiers::curate::CurationConfig,
    /// How outcome weights and age order recall (`[standing]` table: `strength = 0.5`,
    /// `age_floor = 0.75`; docs/PROTOCOL.md, "Outcomes and standing").
    pub standing: StandingConfig,
    /// The holdout arm (`[holdout]` table: `share = 0.0`): that share of new sessions
    /// is served nothing, so `lift` can measure whether serving memory helps.
    pub holdout: HoldoutConfig,
    /// Runs (`[runs]` table: per-agent daily limits).
    pub runs: RunsConfig,
    /// Advice and the judge of runs, learned by a model (`[learn]` table: `kind = "off" |
    /// "openai"`, `url`, `model`, `api_key_env`, `timeout_ms`, `judge_delay_s`,
    /// `min_wrong`, `team_min_agents`, `personal_min_runs`, `cache`). Off by default:
    /// `get_advice` answers `no_model`.
    pub learn: amber_tiers::advice::LearnConfig,
    /// Team memory on PostgreSQL (`[team]` table: `url`, `scopes`): scopes under those
    /// prefixes live in the team database, every other scope stays on this machine.
    /// Off by default.
    pub team: TeamConfig,
    /// Document folders the daemon keeps in step with their files while it runs
    /// (`[sources]` table: `watch`, `debounce_ms`). None by default.
    pub sources: crate::sources::SourcesConfig,
    /// The embedding model (`[model]` table: `kind = "local"` (default, the packaged
    /// all-MiniLM-L6-v2) or `"openai"` with `url`, `model`, `api_key_env`,
    /// `dimensions`, `family`, `query_prefix`, `passage_prefix`, `batch`,
    /// `max_tokens`, `timeout_ms`, `retries`; docs/PROTOCOL.md "The embedding model").
    /// Kind `openai` sends every stored text and query to that URL.
    pub model: amber_core::model::ModelConfig,
    /// Other models to change to with `amber model use NAME` (`[models.NAME]` tables,
    /// each like `[model]`). `minilm` and `config` are taken.
    pub models: std::collections::BTreeMap<String, amber_core::model::ModelConfig>,
}

/// The `[team]` table (docs/TEAM.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TeamConfig {
    /// The team database, `postgres://USER@HOST:PORT/DB` or the key=value form (no
    /// password, in any form: it comes from the environment variable `password_env`,
    /// else `~/.pgpass`; amberd refuses to start otherwise). None: no team memory.
    pub url: Option<String>,
    /// The scope prefixes kept in the team database, e.g. `["team/acme"]`: a scope is a
    /// team scope when it is one of them or below one. Each must start with `team/`.
    pub scopes: Vec<String>,
    /// The environment variable holding the password (default `AMBER_TEAM_PASSWORD`).
    pub password_env: String,
    /// The longest wait, in ms, before the node looks for memories other nodes wrote
    /// (default 250); a commit notification from PostgreSQL wakes it sooner.
    pub poll_ms: u64,
}

impl Default for TeamConfig {
    fn default() -> TeamConfig {
        TeamConfig { url: None, scopes: Vec::new(), password_env: "AMBER_TEAM_PASSWORD".into(), poll_ms: 250 }
    }
}

impl TeamConfig {
    /// Checks the table: team scopes under `team/` when a URL is set.
    pub fn check(&self) -> Result<(), String> {
        // The URL itself (its form, and that it holds no password) is read by the
        // PostgreSQL client's parser when the daemon starts (daemon/src/team.rs).
        if self.url.is_none() {
            if !self.scopes.is_empty() {
                return Err("team.scopes is set but team.url is not".into());
            }
            return Ok(());
        }
        if self.scopes.is_empty() {
            return Err(
                "team.url is set but team.scopes is empty: name the team scopes (e.g. [\"team/acme\"])"
                    .into(),
            );
        }
        for s in &self.scopes {
            let ok = s.parse::<amber_core::Scope>().is_ok();
            if !ok || !s.starts_with("team/") {
                return Err(format!("team.scopes: {s:?} must be a valid scope under team/ (e.g. team/acme)"));
            }
        }
        if self.poll_ms == 0 {
            return Err("team.poll_ms must be at least 1".into());
        }
        Ok(())
    }
}

/// The `[runs]` table: what one agent may record in 24 hours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunsConfig {
    /// Runs per agent per 24 hours (default 10,000).
    pub max_runs_per_day: u64,
    /// Rewards per agent per 24 hours (default 10,000).
    pub max_rewards_per_day: u64,
}

impl Default for RunsConfig {
    fn default() -> RunsConfig {
        RunsConfig { max_runs_per_day: 10_000, max_rewards_per_day: 10_000 }
    }
}

/// The `[holdout]` table.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HoldoutConfig {
    /// The share of new sessions (0..1, default 0) routed as usual but served nothing
    /// (identity still comes), drawn from the session id.
    pub share: f64,
}

/// The `[standing]` table.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StandingConfig {
    /// How much a memory's weight x age factor moves its fused score (0..1, default
    /// 0.5): the score is multiplied by `1 - strength + strength * weight * age`. 0 turns
    /// the ranking prior off (archiving still applies).
    pub strength: f32,
    /// The lowest age factor (0..1, default 0.75); 1 turns age off.
    pub age_floor: f32,
}

impl Default for StandingConfig {
    fn default() -> StandingConfig {
        StandingConfig { strength: 0.5, age_floor: 0.75 }
    }
}

impl Default for Config {
    fn default() -> Config {
        let amber_home = paths::default_amber_home();
        Config {
            data_dir: amber_home.join("data"),
            amber_home,
            socket: None,
            state_dir: paths::default_state_dir(),
            max_frame_bytes: DEFAULT_MAX_FRAME,
            max_connections: 256,
            frame_timeout_ms: 60_000,
            idle_connection_timeout_s: 600,
            reply_timeout_ms: 30_000,
            write_queue: 1024,
            fresh_timeout_ms: 10_000,
            max_index_backlog: 2000,
            log_files: 7,
            log: "info".into(),
            query_model: true,
            index_nice: 10,
            session_context: true,
            identity: Default::default(),
            capture: Default::default(),
            judge: Default::default(),
            extract: Default::default(),
            session: Default::default(),
            briefing: Default::default(),
            interject: Default::default(),
            curation: Default::default(),
            standing: Default::default(),
            holdout: Default::default(),
            runs: Default::default(),
            learn: Default::default(),
            team: Default::default(),
            sources: Default::default(),
            model: Default::default(),
            models: Default::default(),
        }
    }
}

/// A config file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but cannot be read.
    #[error("cannot read config file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid TOML for this config.
    #[error("config file {path} is invalid: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the line.
        message: String,
    },
    /// A value is out of range.
    #[error("config: {0}")]
    Invalid(String),
}

impl Config {
    /// Defaults, then the file at `path` if it exists, then the environment
    /// (`AMBER_HOME`, `AMBER_DATA_DIR`, `AMBER_SOCKET`, `AMBER_STATE_DIR`, `AMBER_LOG`).
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let mut cfg = match std::fs::read_to_string(path) {
            Ok(text) => Config::parse(&text)
                .map_err(|message| ConfigError::Parse { path: path.to_path_buf(), message })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Config::default(),
            Err(source) => return Err(ConfigError::Read { path: path.to_path_buf(), source }),
        };
        cfg.apply_env();
        cfg.check()?;
        Ok(cfg)
    }

    /// The environment over what the file (or the defaults) said.
    fn apply_env(&mut self) {
        let cfg = self;
        let home_set_in_file = cfg.amber_home != paths::default_amber_home();
        let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        if let Some(h) = env("AMBER_HOME") {
            cfg.amber_home = h;
        }
        if let Some(d) = env("AMBER_DATA_DIR") {
            cfg.data_dir = d;
        } else if home_set_in_file && cfg.data_dir == paths::default_amber_home().join("data") {
            cfg.data_dir = cfg.amber_home.join("data");
        }
        if let Some(s) = env("AMBER_SOCKET") {
            cfg.socket = Some(s);
        }
        if let Some(s) = env("AMBER_STATE_DIR") {
            cfg.state_dir = s;
        }
        if let Ok(l) = std::env::var("AMBER_LOG")
            && !l.is_empty()
        {
            cfg.log = l;
        }
    }

    /// The config without the file: the defaults, the environment and the flags. What a
    /// command that must not fail falls back on when the file cannot be used (to log
    /// where the state directory is, to find a daemon to ask for its status); never to
    /// act on a store, which the file may name otherwise.
    pub fn without_file(data_dir: Option<&Path>, socket: Option<&Path>) -> Config {
        let mut c = Config::default();
        c.apply_env();
        c.with_flags(data_dir, socket)
    }

    /// The `--data-dir` and `--socket` flags over the rest.
    fn with_flags(mut self, data_dir: Option<&Path>, socket: Option<&Path>) -> Config {
        if let Some(d) = data_dir {
            self.data_dir = d.to_path_buf();
        }
        if let Some(s) = socket {
            self.socket = Some(s.to_path_buf());
        }
        self
    }

    /// Loads the file at `file` (default: `$AMBER_CONFIG`, else the XDG config path) and
    /// the environment, then applies the `--data-dir` and `--socket` flags every binary
    /// takes.
    pub fn resolve(
        file: Option<&Path>,
        data_dir: Option<&Path>,
        socket: Option<&Path>,
    ) -> Result<Config, ConfigError> {
        let path = file.map(Path::to_path_buf).unwrap_or_else(paths::default_config_path);
        Ok(Config::load(&path)?.with_flags(data_dir, socket))
    }

    /// Parses TOML over the defaults.
    pub fn parse(text: &str) -> Result<Config, String> {
        toml::from_str(text).map_err(|e| e.to_string())
    }

    /// Checks the values.
    pub fn check(&self) -> Result<(), ConfigError> {
        if self.max_frame_bytes < 1024 {
            return Err(ConfigError::Invalid(format!(
                "max_frame_bytes is {}, it must be at least 1024",
                self.max_frame_bytes
            )));
        }
        if self.max_connections == 0 || self.write_queue == 0 || self.max_index_backlog == 0 {
            return Err(ConfigError::Invalid(
                "max_connections, write_queue and max_index_backlog must be at least 1".into(),
            ));
        }
        if self.frame_timeout_ms == 0 || self.idle_connection_timeout_s == 0 || self.reply_timeout_ms == 0 {
            return Err(ConfigError::Invalid(
                "frame_timeout_ms, idle_connection_timeout_s and reply_timeout_ms must be at least 1".into(),
            ));
        }
        if !(0..=19).contains(&self.index_nice) {
            return Err(ConfigError::Invalid(format!(
                "index_nice is {}, it must be 0 to 19",
                self.index_nice
            )));
        }
        let st = &self.standing;
        if !(0.0..=1.0).contains(&st.strength) || !(0.0..=1.0).contains(&st.age_floor) {
            return Err(ConfigError::Invalid(
                "standing.strength and standing.age_floor must be in 0..=1".into(),
            ));
        }
        if !(0.0..=1.0).contains(&self.holdout.share) {
            return Err(ConfigError::Invalid("holdout.share must be in 0..=1".into()));
        }
        self.sources.check().map_err(ConfigError::Invalid)?;
        let i = &self.interject;
        if !(1..=2).contains(&i.max_memories) {
            return Err(ConfigError::Invalid(format!(
                "interject.max_memories is {}, it must be 1 or 2",
                i.max_memories
            )));
        }
        if !(-1.0..=1.0).contains(&i.gate) || !(0.0..=1.0).contains(&i.band) {
            return Err(ConfigError::Invalid("interject.gate must be in -1..=1 and band in 0..=1".into()));
        }
        let c = &self.curation;
        if !(c.related_threshold <= c.duplicate_threshold && c.duplicate_threshold <= 1.0) {
            return Err(ConfigError::Invalid(
                "curation thresholds must satisfy related_threshold <= duplicate_threshold <= 1".into(),
            ));
        }
        self.extract.check().map_err(ConfigError::Invalid)?;
        self.learn.check().map_err(ConfigError::Invalid)?;
        self.model.check().map_err(ConfigError::Invalid)?;
        for (name, m) in &self.models {
            if name == "minilm" || name == "config" {
                return Err(ConfigError::Invalid(format!("[models.{name}]: `{name}` is a built-in name")));
            }
            m.check().map_err(|e| ConfigError::Invalid(format!("[models.{name}]: {e}")))?;
        }
        self.team.check().map_err(ConfigError::Invalid)?;
        if self.session.idle_timeout_s == 0 {
            return Err(ConfigError::Invalid("session.idle_timeout_s must be at least 1".into()));
        }
        Ok(())
    }

    /// The socket path in force.
    pub fn socket_path(&self) -> PathBuf {
        self.socket.clone().unwrap_or_else(|| crate::default_socket_path(&self.data_dir))
    }

    /// The effective config as TOML (the socket resolved).
    pub fn to_toml(&self) -> String {
        toml::to_string(&self.effective()).unwrap_or_default()
    }

    /// The configuration as `config show` prints it: with the socket it resolves to.
    pub fn effective(&self) -> Self {
        let mut shown = self.clone();
        shown.socket = Some(self.socket_path());
        shown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_values_override_defaults_and_unknown_keys_are_refused() {
        let c = Config::parse("max_frame_bytes = 2048\nsocket = \"/tmp/a.sock\"\n").unwrap();
        assert_eq!(c.max_frame_bytes, 2048);
        assert_eq!(c.socket_path(), PathBuf::from("/tmp/a.sock"));
        assert_eq!(c.write_queue, Config::default().write_queue);
        let e = Config::parse("max_frame = 1").unwrap_err();
        assert!(e.contains("max_frame"), "{e}");
        let e = Config::parse("max_frame_bytes = \"big\"").unwrap_err();
        assert!(e.contains("max_frame_bytes"), "{e}");
    }

    #[test]
    fn shown_config_parses_back() {
        let c = Config::default();
        let again = Config::parse(&c.to_toml()).unwrap();
        assert_eq!(again.socket_path(), c.socket_path());
        assert_eq!(again.data_dir, c.data_dir);
    }

    #[test]
    fn the_readme_config_example_is_a_valid_config_with_the_defaults() {
        let readme = include_str!("../../README.md");
        let block = readme.split("```toml\n").nth(1).unwrap().split("```").next().unwrap();
        let c = Config::parse(block).unwrap_or_else(|e| panic!("README config example: {e}"));
        let d = Config::default();
        assert_eq!(
            (c.max_frame_bytes, c.max_connections, c.write_queue, c.fresh_timeout_ms, c.max_index_backlog),
            (d.max_frame_bytes, d.max_connections, d.write_queue, d.fresh_timeout_ms, d.max_index_backlog)
        );
        assert_eq!(
            (c.log_files, c.log.as_str(), c.query_model, c.session_context, &c.identity),
            (d.log_files, d.log.as_str(), d.query_model, d.session_context, &d.identity)
        );
        assert_eq!(c.index_nice, d.index_nice);
        assert_eq!((&c.capture, &c.session, &c.briefing), (&d.capture, &d.session, &d.briefing));
        assert_eq!((&c.interject, &c.judge, &c.curation), (&d.interject, &d.judge, &d.curation));
        assert_eq!((&c.extract, &c.learn), (&d.extract, &d.learn));
        assert_eq!((&c.standing, &c.holdout, &c.runs), (&d.standing, &d.holdout, &d.runs));
        assert_eq!((&c.model, &c.models), (&d.model, &d.models));
        assert_eq!(
            (c.frame_timeout_ms, c.idle_connection_timeout_s, c.reply_timeout_ms),
            (d.frame_timeout_ms, d.idle_connection_timeout_s, d.reply_timeout_ms)
        );
    }

    #[test]
    fn out_of_range_values_are_refused() {
        let c = Config { max_frame_bytes: 10, ..Config::default() };
        assert!(c.check().is_err());
        let c = Config::parse("frame_timeout_ms = 0\n").unwrap();
        assert!(c.check().unwrap_err().to_string().contains("frame_timeout_ms"));
        let c = Config::parse("[interject]\nmax_memories = 3\n").unwrap();
        assert!(c.check().unwrap_err().to_string().contains("max_memories"));
        let c = Config::parse("[curation]\nduplicate_threshold = 0.8\n").unwrap();
        assert!(c.check().is_err(), "related above duplicate");
        assert!(Config::parse("[interject]\ngates = 0.5\n").is_err(), "unknown keys are refused");
        let c = Config::parse("[extract]\nkind = \"openai\"\nmodel = \"m\"\n").unwrap();
        assert!(c.check().unwrap_err().to_string().contains("extract.url"));
        let c = Config::parse("[extract]\nkind = \"openai\"\nurl = \"http://127.0.0.1:11434/v1\"\n").unwrap();
        assert!(c.check().unwrap_err().to_string().contains("extract.model"));
        assert!(Config::parse("[extract]\nkind = \"llm\"\n").is_err(), "unknown kinds are refused");
        let c = Config::parse("[learn]\nkind = \"openai\"\nmodel = \"m\"\n").unwrap();
        assert!(c.check().unwrap_err().to_string().contains("learn.url"));
        let c = Config::parse("[learn]\nteam_min_agents = 1\n").unwrap();
        assert!(c.check().unwrap_err().to_string().contains("team_min_agents"), "never fewer than 2");
        let c = Config::parse("[standing]\nage_floor = 1.5\n").unwrap();
        assert!(c.check().unwrap_err().to_string().contains("age_floor"));
    }
}

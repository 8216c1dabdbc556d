//! Where Amber keeps things by default. Every path can be overridden by an environment
//! variable (and, in the daemon and CLI, by the config file and flags).
//!
//! | what | default | env |
//! |---|---|---|
//! | home (model, runtime, data) | `$XDG_DATA_HOME/amber` (`~/.local/share/amber`) | `AMBER_HOME` |
//! | data directory | `<home>/data` | `AMBER_DATA_DIR` |
//! | config file | `$XDG_CONFIG_HOME/amber/config.toml` (`~/.config/amber/config.toml`) | `AMBER_CONFIG` |
//! | state (logs) | `$XDG_STATE_HOME/amber` (`~/.local/state/amber`) | `AMBER_STATE_DIR` |

use std::path::PathBuf;

fn env_path(var: &str) -> Option<PathBuf> {
    std::env::var_os(var).filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// `$AMBER_HOME`, else `$XDG_DATA_HOME/amber`, else `~/.local/share/amber`.
pub fn default_amber_home() -> PathBuf {
    env_path("AMBER_HOME")
        .unwrap_or_else(|| dirs::data_dir().unwrap_or_else(|| PathBuf::from(".")).join("amber"))
}

/// `$AMBER_DATA_DIR`, else `<amber home>/data`.
pub fn default_data_dir() -> PathBuf {
    env_path("AMBER_DATA_DIR").unwrap_or_else(|| default_amber_home().join("data"))
}

/// `$AMBER_CONFIG`, else `$XDG_CONFIG_HOME/amber/config.toml`.
pub fn default_config_path() -> PathBuf {
    env_path("AMBER_CONFIG").unwrap_or_else(|| {
        dirs::config_dir().unwrap_or_else(|| PathBuf::from(".")).join("amber").join("config.toml")
    })
}

/// `$AMBER_STATE_DIR`, else `$XDG_STATE_HOME/amber`, else `<amber home>/state`.
pub fn default_state_dir() -> PathBuf {
    env_path("AMBER_STATE_DIR")
        .or_else(|| dirs::state_dir().map(|d| d.join("amber")))
        .unwrap_or_else(|| default_amber_home().join("state"))
}

/// Writes `path` whole, private to the user (0600 on Unix): written beside it, synced,
/// then renamed over it, so a reader never sees half of it and a crash leaves the old
/// file or the new one. The folder must exist.
pub fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut name =
        path.file_name().ok_or_else(|| std::io::Error::other("a file path has a name"))?.to_owned();
    name.push(".tmp");
    let tmp = path.with_file_name(name);
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    let mut f = o.open(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}

/// Creates `dir` (and parents) and makes it private to the user: 0700 on Unix.
pub fn create_private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

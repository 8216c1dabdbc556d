//! The daemon's own paths, checked before it uses them, so that a planted symbolic link
//! (or a file of another user) is never followed into someone else's file
//! (docs/RELIABILITY.md, "Planted symbolic links"):
//!
//! - The data directory may be a symbolic link only when the link and the directory it
//!   names are both the user's; it must be the user's, and is made 0700 through an open
//!   handle (no path is followed twice).
//! - The files amberd keeps there (the lock file, the SQLite files, `index/` and what is
//!   in it) must not be symbolic links or another user's; the lock file is opened without
//!   following links.
//! - The socket path must be absent or a socket of the user's that no daemon answers on
//!   (which is removed); a symbolic link, a file or another user's socket there is left
//!   alone and amberd refuses to start. The socket folder may be a symbolic link only when
//!   both are the user's; a folder amberd creates is 0700.

use std::fs::File;
use std::path::Path;

use amber_core::paths::create_private_dir;
use anyhow::{Context, bail};

/// What amberd keeps in its data directory, relative to it. Everything in `index/bm25`
/// (tantivy's files) is checked too.
const DATA_FILES: &[&str] = &[
    crate::LOCK_FILE,
    "amber.db",
    "amber.db-wal",
    "amber.db-shm",
    "amber.db-journal",
    "index",
    "index/bm25",
    "index/vectors.usearch",
    "index/vectors.json",
    "index/vectors.json.tmp",
];

#[cfg(unix)]
mod unix {
    use std::fs::{File, Metadata, OpenOptions};
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
    use std::path::Path;

    use anyhow::{Context, bail};

    pub(super) fn euid() -> u32 {
        rustix::process::geteuid().as_raw()
    }

    pub(super) fn owner(m: &Metadata) -> u32 {
        m.uid()
    }

    fn nofollow() -> i32 {
        rustix::fs::OFlags::NOFOLLOW.bits() as i32
    }

    /// `path` is a symbolic link: accepted when the link and the directory it names are
    /// both the user's.
    pub(super) fn check_own_link(path: &Path, what: &str, link: &Metadata) -> anyhow::Result<()> {
        let target = std::fs::read_link(path).map(|t| t.display().to_string()).unwrap_or_default();
        let me = euid();
        if owner(link) != me {
            bail!(
                "the {what} {} is a symbolic link (to {target}) owned by uid {}, not by this user (uid {me}): \
                 amberd does not follow it; remove it, or point amberd at a directory of yours",
                path.display(),
                owner(link)
            );
        }
        let dir = std::fs::metadata(path)
            .with_context(|| format!("the {what} {} is a symbolic link to {target}", path.display()))?;
        if !dir.is_dir() || owner(&dir) != me {
            bail!(
                "the {what} {} is a symbolic link to {target}, which is not a directory of this user \
                 (uid {me}): amberd does not follow it",
                path.display()
            );
        }
        Ok(())
    }

    /// Opens the directory (without following a link unless `follow`), checks it is the
    /// user's and makes it 0700 through the handle.
    pub(super) fn make_private(dir: &Path, follow: bool) -> anyhow::Result<()> {
        let flags = rustix::fs::OFlags::DIRECTORY.bits() as i32 | if follow { 0 } else { nofollow() };
        let handle = OpenOptions::new()
            .read(true)
            .custom_flags(flags)
            .open(dir)
            .with_context(|| format!("cannot open the data directory {}", dir.display()))?;
        let m = handle.metadata()?;
        if owner(&m) != euid() {
            bail!(
                "the data directory {} belongs to uid {}, not to this user (uid {}): amberd does not use it",
                dir.display(),
                owner(&m),
                euid()
            );
        }
        if m.permissions().mode() & 0o777 != 0o700 {
            handle
                .set_permissions(std::fs::Permissions::from_mode(0o700))
                .with_context(|| format!("cannot make the data directory {} private", dir.display()))?;
        }
        Ok(())
    }

    /// Opens (creating it 0600) the lock file without following a link.
    pub(super) fn open_lock(path: &Path) -> std::io::Result<File> {
        OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(nofollow())
            .open(path)
    }

    pub(super) fn is_socket(m: &Metadata) -> bool {
        use std::os::unix::fs::FileTypeExt;
        m.file_type().is_socket()
    }

    pub(super) fn chmod_600(path: &Path, m: &Metadata) -> std::io::Result<()> {
        if m.permissions().mode() & 0o777 != 0o600 {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        }
        Ok(())
    }
}

/// Creates the data directory (0700), or checks an existing one (see the module doc) and
/// makes it 0700; then checks the files amberd keeps in it.
pub(crate) fn prepare_data_dir(dir: &Path) -> anyhow::Result<()> {
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            create_private_dir(dir)
                .with_context(|| format!("cannot create the data directory {}", dir.display()))?;
        }
        Err(e) => return Err(e).with_context(|| format!("cannot read the data directory {}", dir.display())),
        #[cfg(unix)]
        Ok(m) => {
            let link = m.file_type().is_symlink();
            if link {
                unix::check_own_link(dir, "data directory", &m)?;
            } else if !m.is_dir() {
                bail!("the data directory {} is not a directory", dir.display());
            }
            unix::make_private(dir, link)?;
        }
        #[cfg(not(unix))]
        Ok(_) => create_private_dir(dir)
            .with_context(|| format!("cannot prepare the data directory {}", dir.display()))?,
    }
    check_data_files(dir)
}

/// Refuses a symbolic link, or a file of another user, where amberd keeps its files.
fn check_data_files(dir: &Path) -> anyhow::Result<()> {
    let mut paths: Vec<std::path::PathBuf> = DATA_FILES.iter().map(|f| dir.join(f)).collect();
    let bm25 = dir.join("index").join("bm25");
    if std::fs::symlink_metadata(&bm25).is_ok_and(|m| m.is_dir())
        && let Ok(entries) = std::fs::read_dir(&bm25)
    {
        paths.extend(entries.flatten().map(|e| e.path()));
    }
    for path in paths {
        let m = match std::fs::symlink_metadata(&path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        if m.file_type().is_symlink() {
            let target = std::fs::read_link(&path).map(|t| t.display().to_string()).unwrap_or_default();
            bail!(
                "{} is a symbolic link (to {target}): amberd keeps its own files there and does not \
                 follow links out of its data directory; remove the link",
                path.display()
            );
        }
        #[cfg(unix)]
        if unix::owner(&m) != unix::euid() {
            bail!(
                "{} belongs to uid {}, not to this user (uid {}): amberd does not use it",
                path.display(),
                unix::owner(&m),
                unix::euid()
            );
        }
    }
    Ok(())
}

/// Opens the lock file without following a link (a planted one is an error).
pub(crate) fn open_lock_file(path: &Path) -> anyhow::Result<File> {
    #[cfg(unix)]
    let file = unix::open_lock(path);
    #[cfg(not(unix))]
    let file = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path);
    let file =
        file.with_context(|| format!("cannot open the lock file {} (is it a link?)", path.display()))?;
    let m = file.metadata()?;
    if !m.is_file() {
        bail!("the lock file {} is not a regular file", path.display());
    }
    #[cfg(unix)]
    if unix::owner(&m) != unix::euid() {
        bail!("the lock file {} belongs to uid {}, not to this user", path.display(), unix::owner(&m));
    }
    Ok(file)
}

/// Prepares the socket's folder (created 0700 when absent) and removes a stale socket
/// of the user's left by a daemon that died. Refuses when a live daemon answers on it,
/// and when anything but such a socket is at the path (see the module doc).
pub(crate) fn prepare_socket(path: &Path) -> anyhow::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        match std::fs::symlink_metadata(dir) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => create_private_dir(dir)
                .with_context(|| format!("cannot create the socket folder {}", dir.display()))?,
            Err(e) => {
                return Err(e).with_context(|| format!("cannot read the socket folder {}", dir.display()));
            }
            #[cfg(unix)]
            Ok(m) if m.file_type().is_symlink() => unix::check_own_link(dir, "socket folder", &m)?,
            Ok(m) if !m.file_type().is_symlink() && !m.is_dir() => {
                bail!("the socket folder {} is not a directory", dir.display())
            }
            Ok(_) => {}
        }
    }
    let m = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("cannot read the socket path {}", path.display())),
    };
    if m.file_type().is_symlink() {
        let target = std::fs::read_link(path).map(|t| t.display().to_string()).unwrap_or_default();
        bail!(
            "the socket path {} is a symbolic link (to {target}), not a socket: amberd neither follows \
             nor removes it; remove it yourself, or choose another socket path",
            path.display()
        );
    }
    #[cfg(unix)]
    if !unix::is_socket(&m) {
        bail!(
            "the socket path {} exists and is not a socket: amberd does not replace it; move it away, \
             or choose another socket path",
            path.display()
        );
    }
    if amber_ipc::Client::connect(path).is_ok() {
        bail!("another daemon is listening on {}; stop it first or choose another socket", path.display());
    }
    #[cfg(unix)]
    if unix::owner(&m) != unix::euid() {
        bail!(
            "a socket of uid {} is at {}: amberd does not remove another user's socket",
            unix::owner(&m),
            path.display()
        );
    }
    tracing::warn!(socket = %path.display(), "removing a stale socket left by a daemon that stopped");
    std::fs::remove_file(path).with_context(|| format!("cannot remove the stale socket {}", path.display()))
}

/// After listening: the socket is 0600 (the listener asks for that at bind). Checked on
/// the path without following it; changed only if it is the user's socket.
pub(crate) fn make_socket_private(path: &Path) -> anyhow::Result<()> {
    #[cfg(unix)]
    {
        let m = std::fs::symlink_metadata(path)
            .with_context(|| format!("the socket {} is gone", path.display()))?;
        if !unix::is_socket(&m) || unix::owner(&m) != unix::euid() {
            bail!("{} is no longer this daemon's socket", path.display());
        }
        unix::chmod_600(path, &m).with_context(|| format!("cannot make {} private", path.display()))?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

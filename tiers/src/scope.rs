//! The one scope model: which scope a working directory files into and searches.
//!
//! - A **project scope** stands for a project root: the nearest ancestor of the working
//!   directory (or itself) holding `.git`, else the directory itself. Its name is
//!   `project/<dir name>-<8 hex of the path>` ([`project_scope`]).
//! - Outside any project (the file-system root, the home directory or one of its
//!   ancestors) there is no project: the scope is `default`.
//! - The **user scope**, `user` ([`USER_SCOPE`]), holds what is true of the person
//!   across projects (preferences, `lifefact`s). Sessions and recalls without an
//!   explicit scope search the project scope and `user` together, as one ranking.
//! - An explicit scope always wins over all of this.
//!
//! [`resolve`] is the single resolver: the daemon answers `resolve_scope` with it (the
//! CLI, the MCP server, the hooks and the Python client ask it), and its session code
//! uses it for `session_start`'s `cwd`.

use std::path::{Path, PathBuf};

use amber_core::Scope;
use serde::{Deserialize, Serialize};

/// The scope of the person (preferences, life facts), searched with every project.
pub const USER_SCOPE: &str = "user";

/// The user scope.
pub fn user_scope() -> Scope {
    USER_SCOPE.parse().unwrap_or_default()
}

/// What a working directory resolves to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resolved {
    /// The scope to file into: the project's, else `default`.
    pub scope: Scope,
    /// The project root it stands for (None outside any project).
    pub root: Option<PathBuf>,
    /// The scopes a search without an explicit scope covers: the project (or
    /// `default`) and `user`.
    pub search: Vec<Scope>,
}

/// The project root of a working directory: the nearest ancestor (or itself) holding
/// `.git`, else the directory itself; None outside any project (`/`, the home directory
/// or an ancestor of it). The path is made canonical first when it can be, so the same
/// directory reached through a symlink is the same project.
pub fn project_root(cwd: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    if let Some(git) = cwd.ancestors().find(|d| d.join(".git").exists()) {
        return Some(git.to_path_buf());
    }
    let home = home.map(|h| std::fs::canonicalize(h).unwrap_or_else(|_| h.to_path_buf()));
    let outside = cwd.parent().is_none() || home.as_deref().is_some_and(|h| h.starts_with(&cwd));
    (!outside).then_some(cwd)
}

/// Resolves a working directory (see the module docs). `home` is the user's home
/// directory (`$HOME`).
pub fn resolve(cwd: &Path, home: Option<&Path>) -> Resolved {
    let root = project_root(cwd, home);
    let scope = root.as_deref().map(project_scope).unwrap_or_default();
    let search = vec![scope.clone(), user_scope()];
    Resolved { scope, root, search }
}

/// [`resolve`] with `$HOME` as the home directory.
pub fn resolve_here(cwd: &Path) -> Resolved {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    resolve(cwd, home.as_deref())
}

/// The scope of a project: `project/<dir name>-<8 hex of its path>`, so two checkouts
/// with the same name stay apart and the scope still reads as the project.
pub fn project_scope(root: &Path) -> Scope {
    let name: String = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".into())
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || "_-.".contains(c) { c } else { '-' })
        .take(64)
        .collect();
    let name = name.trim_matches('.');
    let name = if name.is_empty() { "project" } else { name };
    // FNV-1a: stable across builds and platforms, no dependency.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in root.to_string_lossy().as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("project/{name}-{:08x}", h as u32).parse().unwrap_or_default()
}

/// True for a scope named by [`project_scope`].
pub fn is_project_scope(scope: &Scope) -> bool {
    scope.as_str().starts_with("project/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_scopes_are_valid_and_tell_same_named_checkouts_apart() {
        let a = project_scope(Path::new("/home/u/src/amber"));
        let b = project_scope(Path::new("/home/u/other/amber"));
        assert!(a.as_str().starts_with("project/amber-"), "{a}");
        assert_ne!(a, b);
        assert_eq!(a, project_scope(Path::new("/home/u/src/amber")));
        let odd = project_scope(Path::new("/tmp/my project (copy)"));
        assert!(odd.as_str().starts_with("project/my-project--copy-"), "{odd}");
        assert!(project_scope(Path::new("/")).as_str().starts_with("project/root-"));
    }

    #[test]
    fn a_repository_root_wins_else_the_directory_else_default() {
        let t = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(t.path()).unwrap();
        let home = base.join("home");
        let repo = home.join("src/app");
        let deep = repo.join("crates/x/src");
        let loose = home.join("notes/2026");
        for d in [&deep, &loose] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::create_dir(repo.join(".git")).unwrap();
        let r = resolve(&deep, Some(&home));
        assert_eq!(r.root.as_deref(), Some(repo.as_path()), "nearest .git above the cwd");
        assert_eq!(r.scope, project_scope(&repo));
        assert_eq!(r, resolve(&repo, Some(&home)), "same project from its root and from below");
        assert_eq!(r.search, vec![project_scope(&repo), user_scope()]);
        // A worktree or submodule has a `.git` file, not a folder: still a root.
        let wt = home.join("wt");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(wt.join(".git"), "gitdir: ../src/app/.git/worktrees/wt\n").unwrap();
        assert_eq!(resolve(&wt, Some(&home)).root.as_deref(), Some(wt.as_path()));
        // No repository: the directory itself.
        let l = resolve(&loose, Some(&home));
        assert_eq!(l.root.as_deref(), Some(loose.as_path()));
        // Outside any project: default (home, its ancestors, the root).
        for d in [home.as_path(), base.as_path(), Path::new("/")] {
            let o = resolve(d, Some(&home));
            assert_eq!((o.scope.as_str(), o.root), ("default", None), "{}", d.display());
            assert_eq!(o.search, vec![Scope::default(), user_scope()]);
        }
        // Through a symlink: the same project.
        let link = base.join("link");
        std::os::unix::fs::symlink(&repo, &link).unwrap();
        assert_eq!(resolve(&link, Some(&home)).scope, r.scope);
    }
}

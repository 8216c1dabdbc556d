//! Vendored trees: third-party code copied into a project (`node_modules`, `vendor`,
//! `third_party`, a Python environment's `site-packages`, or any folder carrying a package
//! manifest and a licence of its own). Its files were not written by the person, so an
//! ingest of the project files them as `external` (found by recall, never served
//! unasked); naming the vendored folder itself (`amber ingest vendor/lib`) files it as the
//! person's, as with another repository inside the project.

use std::path::Path;

/// Folder names that hold other people's code.
const VENDOR_DIRS: &[&str] = &[
    "node_modules",
    "bower_components",
    "jspm_packages",
    "vendor",
    "vendored",
    "third_party",
    "third-party",
    "thirdparty",
    "site-packages",
    "dist-packages",
    ".venv",
    "venv",
    "Pods",
    "Carthage",
];

/// Files that make a folder a package of its own.
const MANIFESTS: &[&str] = &[
    "package.json",
    "Cargo.toml",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "go.mod",
    "composer.json",
    "Gemfile",
    "pom.xml",
    "build.gradle",
];

/// True when `file` sits in a vendored tree below `named` (the folder the person named):
/// a folder between them (`named` excluded) has a vendored name, or holds both a package
/// manifest and a licence file of its own.
pub(crate) fn vendored(named: &Path, file: &Path) -> bool {
    let Ok(rel) = file.strip_prefix(named) else { return false };
    let mut at = named.to_path_buf();
    let parts: Vec<_> = rel.components().collect();
    // Every folder below `named` on the way to the file (not the file itself).
    for c in parts.iter().take(parts.len().saturating_sub(1)) {
        at.push(c);
        let name = c.as_os_str().to_string_lossy();
        if VENDOR_DIRS.contains(&name.as_ref()) || is_package(&at) {
            return true;
        }
    }
    false
}

/// A folder with a package manifest and a licence of its own.
fn is_package(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else { return false };
    let (mut manifest, mut licence) = (false, false);
    for e in entries.flatten() {
        let n = e.file_name().to_string_lossy().to_ascii_uppercase();
        manifest |= MANIFESTS.iter().any(|m| m.eq_ignore_ascii_case(&n)) || n.ends_with(".GEMSPEC");
        licence |= n.starts_with("LICENSE") || n.starts_with("LICENCE") || n.starts_with("COPYING");
    }
    manifest && licence
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vendored_trees_are_found_below_the_named_folder_only() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        for dir in ["docs", "node_modules/left-pad", "vendor/lib", "libs/copied", "libs/ours"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        std::fs::write(root.join("libs/copied/package.json"), "{}").unwrap();
        std::fs::write(root.join("libs/copied/LICENSE"), "MIT").unwrap();
        std::fs::write(root.join("libs/ours/package.json"), "{}").unwrap();
        assert!(!vendored(root, &root.join("docs/guide.md")));
        assert!(!vendored(root, &root.join("README.md")));
        assert!(vendored(root, &root.join("node_modules/left-pad/README.md")));
        assert!(vendored(root, &root.join("vendor/lib/README.md")));
        assert!(vendored(root, &root.join("libs/copied/README.md")), "a manifest and a licence of its own");
        assert!(
            !vendored(root, &root.join("libs/ours/README.md")),
            "a manifest alone: a package of the project"
        );
        // Named itself: the person's.
        assert!(!vendored(&root.join("vendor/lib"), &root.join("vendor/lib/README.md")));
        assert!(!vendored(&root.join("libs/copied"), &root.join("libs/copied/README.md")));
        // Outside the named folder: not decided here.
        assert!(!vendored(&root.join("docs"), &root.join("vendor/lib/README.md")));
    }
}

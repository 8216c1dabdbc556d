//! `amber import --from markdown PATH`: a folder of Markdown notes (an Obsidian vault, a
//! notes folder, a wiki), or one note, through the daemon's `ingest`: each note cut at its
//! headings, each chunk a memory with its place in the file (docs/PROTOCOL.md, `ingest`),
//! and kept in step: running it again files only what changed and retires what a note no
//! longer says, or what a deleted note said.

use std::path::Path;

use amber_core::Scope;
use amber_ipc::Client;

use super::filing::{Options, Report, ingest, markdown_files};

pub(crate) fn run(
    client: &mut Client,
    path: &Path,
    scope: &Scope,
    opts: &Options,
    report: &mut Report,
) -> anyhow::Result<()> {
    let (root, files) = markdown_files(path)?;
    report.found("files", files.len() as u64);
    if files.is_empty() && !root.dir {
        anyhow::bail!("{} is not a Markdown file (.md, .markdown, .mdx)", path.display());
    }
    let prune = root.dir.then_some(root.path.as_path());
    ingest(client, &files, root.cwd(), scope, opts, prune, report)
}

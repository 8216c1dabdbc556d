//! What the command line says of itself: `amber --help` grouped by task, shell
//! completions (`amber completions SHELL`) and man pages (`amber man`), all generated
//! from the one definition of the commands (clap), so they cannot drift from it.

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use clap::Command;

/// The commands by task, in the order `amber --help` shows them. Every command is in
/// exactly one group (a test checks it, so a new command must be placed).
pub(crate) const GROUPS: &[(&str, &[&str])] = &[
    (
        "Memories",
        &[
            "remember",
            "recall",
            "get",
            "list",
            "forget",
            "unforget",
            "purge",
            "trust",
            "move",
            "archived",
            "unarchive",
        ],
    ),
    (
        "Outcomes, threads and the loop guard",
        &["outcome", "outcomes", "thread", "guard", "release", "review", "audit"],
    ),
    ("Documents and skills", &["ingest", "compile"]),
    ("Sessions, runs and advice", &["session", "runs", "lift", "advice", "judgements", "doctor"]),
    ("Agents and integrations", &["install", "uninstall", "hook", "mcp", "agent"]),
    ("Scopes and data", &["scopes", "scope", "export", "import", "backup", "restore", "model", "reindex"]),
    ("The daemon", &["status", "daemon", "config", "ui"]),
    ("The shell", &["completions", "man", "help"]),
];

/// The first sentence of a command's about, for the one-line listing.
fn summary(cmd: &Command) -> String {
    let about = cmd.get_about().map(|a| a.to_string()).unwrap_or_default();
    let first = about.split(". ").next().unwrap_or("").trim_end_matches('.');
    let first = first.split(": ").next().unwrap_or(first);
    match first.chars().count() {
        n if n <= 72 => first.to_string(),
        _ => format!("{}…", first.chars().take(71).collect::<String>()),
    }
}

/// `cmd` with its help listing the commands by task (`GROUPS`) instead of in one list.
pub(crate) fn grouped(cmd: Command) -> Command {
    let mut cmd = cmd;
    cmd.build();
    let mut text = String::new();
    for (title, names) in GROUPS {
        text.push_str(&format!("{title}:\n"));
        for name in *names {
            let about = cmd.find_subcommand(name).map(summary).unwrap_or_default();
            text.push_str(&format!("  {name:<12}{about}\n"));
        }
        text.push('\n');
    }
    let template = format!(
        "{{about-with-newline}}\n{{usage-heading}} {{usage}}\n\n{text}Options:\n{{options}}\n\n\
         `amber COMMAND --help` tells more of one; `amber man` writes the manual pages.\n\
         Exit status: 0 done; 1 failed; 2 done in part, or a guard said no (an import or \
         ingest that skipped records or files, `guard` other than allow); 3 no daemon \
         (`amber daemon status`)."
    );
    cmd.help_template(template)
}

/// `amber completions SHELL`: the completion script on standard output.
pub(crate) fn completions(shell: clap_complete::Shell, mut cmd: Command) {
    let mut out = std::io::stdout().lock();
    clap_complete::generate(shell, &mut cmd, "amber", &mut out);
    let _ = out.flush();
}

/// `amber man`: amber(1) on standard output, or with `out` a page per command (amber.1,
/// amber-recall.1, amber-runs-list.1, …) written into `out/man1`, a MANPATH entry.
pub(crate) fn man(cmd: Command, out: Option<&Path>) -> anyhow::Result<()> {
    let cmd = cmd.name("amber");
    match out {
        None => {
            let mut stdout = std::io::stdout().lock();
            clap_mangen::Man::new(cmd).render(&mut stdout).context("writing the manual page")?;
            stdout.flush().context("writing the manual page")?;
        }
        Some(dir) => {
            let pages = dir.join("man1");
            std::fs::create_dir_all(&pages).with_context(|| format!("cannot create {}", pages.display()))?;
            clap_mangen::generate_to(cmd, &pages)
                .with_context(|| format!("writing manual pages into {}", pages.display()))?;
            let n = std::fs::read_dir(&pages)?
                .filter(|e| e.as_ref().is_ok_and(|e| e.path().extension().is_some_and(|x| x == "1")))
                .count();
            errln!(
                "amber: {n} manual pages in {} (read them with `man -M {} amber`)",
                pages.display(),
                dir.display()
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn every_command_is_in_exactly_one_group_and_every_group_name_is_a_command() {
        let mut cmd = crate::Cli::command();
        cmd.build();
        let listed: Vec<&str> = GROUPS.iter().flat_map(|(_, names)| names.iter().copied()).collect();
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            let n = listed.iter().filter(|x| **x == sub.get_name()).count();
            assert_eq!(n, 1, "`{}` is in {n} groups of help::GROUPS", sub.get_name());
        }
        for name in listed {
            assert!(cmd.find_subcommand(name).is_some(), "help::GROUPS names `{name}`, which is no command");
        }
    }

    #[test]
    fn the_help_lists_the_commands_under_their_task_with_one_line_each() {
        let help = grouped(crate::Cli::command()).render_help().to_string();
        let at = |s: &str| help.find(s).unwrap_or_else(|| panic!("{s:?} not in\n{help}"));
        assert!(at("Memories:") < at("  remember    File a memory"));
        assert!(at("  remember") < at("Documents and skills:"));
        assert!(at("Documents and skills:") < at("  ingest"));
        assert!(at("The daemon:") < at("  status"));
        assert!(at("Options:") < at("--data-dir"));
        assert!(help.contains("Exit status: 0 done"));
        for line in help.lines().filter(|l| l.starts_with("  ") && !l.trim_start().starts_with('-')) {
            assert!(line.chars().count() <= 90, "too long for a terminal: {line:?}");
        }
    }
}

//! The CLI against the method registry: every `amber` command the registry names as a
//! method's door (`Method::cli`) exists, with its subcommand.

use amber_ipc::protocol::Method;
use clap::CommandFactory;

use crate::Cli;

#[test]
fn every_command_the_registry_names_exists() {
    let root = Cli::command();
    let mut named = 0;
    for m in Method::ALL {
        let Some(path) = m.cli() else { continue };
        named += 1;
        let mut cmd = &root;
        for word in path.split(' ') {
            cmd = cmd
                .find_subcommand(word)
                .unwrap_or_else(|| panic!("{}'s door `amber {path}` is not a command", m.name()));
        }
    }
    assert!(named > 30, "the registry names {named} commands");
    // And the check can fail: a command that does not exist is not found.
    assert!(root.find_subcommand("no-such-command").is_none());
}

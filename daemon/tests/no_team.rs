//! An amberd built without the `team` feature (`--no-default-features`: no PostgreSQL
//! client) refuses a configured `team.url` at start, with an error that says how to get
//! team memory, instead of serving the team scopes from the local store.
#![cfg(not(feature = "team"))]

use crate::common;

use common::Daemon;

#[test]
fn a_team_url_stops_an_amberd_built_without_team() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("no-config.toml"),
        "[team]\nurl = \"postgres://agent@127.0.0.1:1/amber\"\nscopes = [\"team/acme\"]\n",
    )
    .unwrap();
    let err = match Daemon::start_in(dir.path(), &[]) {
        Ok(_) => panic!("the daemon started with team.url set and no team feature"),
        Err(e) => e,
    };
    assert!(err.contains("built without the `team` feature") && err.contains("--features team"), "{err}");
    assert!(!dir.path().join("data").join("amberd.lock").exists(), "refused before the data dir is locked");

    // Without [team] the same binary serves local memory.
    std::fs::remove_file(dir.path().join("no-config.toml")).unwrap();
    let d = Daemon::start_in(dir.path(), &[]).unwrap();
    let status = d.client().status().unwrap();
    assert!(status.team.is_none(), "{status:?}");
}

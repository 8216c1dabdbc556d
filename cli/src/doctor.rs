//! `amber doctor`: the learning loop's health in one screen, each line with what to do
//! about it (`--json`: the checks as the daemon gives them).

use amber_ipc::Client;
use amber_ipc::protocol::{DoctorParams, Health, method};
use anyhow::Context;

use crate::print_json;

pub(crate) fn run(
    client: &mut Client,
    scope: Option<&str>,
    no_ping: bool,
    as_json: bool,
) -> anyhow::Result<()> {
    let scope = scope.map(str::parse).transpose().context("--scope")?;
    let r = client.send::<method::Doctor>(&DoctorParams { scope, no_ping })?;
    if as_json {
        return print_json(&r);
    }
    outln!("the learning loop in {}:", r.scope.as_ref().map_or("every scope".to_string(), |s| s.to_string()));
    for c in &r.checks {
        let mark = match c.health {
            Health::Ok => "ok  ",
            Health::Warn => "warn",
            Health::Fail => "FAIL",
        };
        outln!("{mark} {:<7} {}", c.name, c.found);
        if let Some(fix) = &c.fix {
            outln!("     {:<7} → {fix}", "");
        }
    }
    Ok(())
}

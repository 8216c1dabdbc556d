//! `amber ui`: asks the daemon for the person's web view (`ui_start`), prints its URL and
//! opens the browser (`$BROWSER`, else `xdg-open`, else `open`), never failing when there
//! is none: the URL is printed either way. The working directory goes with the ask, so
//! the view's search defaults to the scopes `amber recall` searches here.

use std::process::{Command, Stdio};

use amber_ipc::Client;
use amber_ipc::protocol::{UiStartParams, UiStartResult, method};

/// Starts (or finds) the web view and opens it unless `no_open`.
pub(crate) fn run(client: &mut Client, json: bool, no_open: bool) -> anyhow::Result<()> {
    // No readable working directory: the view searches every scope by default.
    let cwd = std::env::current_dir().ok();
    let r: UiStartResult = client.send::<method::UiStart>(&UiStartParams { cwd })?;
    if json {
        outln!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        let how = if r.started { "started" } else { "already running" };
        outln!("Amber's web view ({how}, 127.0.0.1 only, stops with the daemon):\n{}", r.url);
    }
    if !no_open && !open(&r.url) && !json {
        errln!("amber: no browser could be opened; open the URL above yourself");
    }
    Ok(())
}

/// Opens a URL in the person's browser; false when no opener ran.
fn open(url: &str) -> bool {
    let mut openers: Vec<String> = std::env::var("BROWSER")
        .ok()
        .map(|b| b.split(':').filter(|s| !s.trim().is_empty()).map(str::to_string).collect())
        .unwrap_or_default();
    openers.extend(["xdg-open".to_string(), "open".to_string()]);
    openers.iter().any(|o| {
        // The opener is detached from our output: a browser's chatter is not ours.
        Command::new(o)
            .arg(url)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .is_ok()
    })
}

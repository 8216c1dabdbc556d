//! `amber model use NAME`: change the embedding model without downtime (the daemon
//! re-embeds in the background and switches when the new index is complete), showing
//! its progress until it is done.

use std::time::Duration;

use amber_ipc::Client;
use amber_ipc::protocol::{ModelMigration, ModelUseParams, method};
use clap::Subcommand;

use crate::print_json;

#[derive(Subcommand, Debug)]
pub(crate) enum ModelAction {
    /// Change to NAME: a `[models.NAME]` table of the config, `minilm` (the packaged
    /// local model) or `config` (the config's `[model]`). Every memory is re-embedded in
    /// the background into a new index; recall serves from the old one until the new one
    /// is complete, then they are swapped. Interrupted, it resumes at the next start.
    Use {
        /// The model's name.
        name: String,
        /// Return at once instead of showing progress until the switch.
        #[arg(long)]
        no_wait: bool,
    },
    /// The model in force and any migration.
    Show,
}

/// One line for a migration.
pub(crate) fn line(m: &ModelMigration) -> String {
    let pct = if m.total > 0 { 100.0 * m.done as f64 / m.total as f64 } else { 0.0 };
    let mut s = format!(
        "{} to {}: {} of {} memories re-embedded ({pct:.0}%), {:.0}s",
        m.phase, m.name, m.done, m.total, m.seconds
    );
    if let Some(e) = &m.error {
        s.push_str(&format!(": {e}"));
    }
    if let Some(c) = &m.calibrated {
        s.push_str(&format!("; recalibrated: {c}"));
    }
    s
}

pub(crate) fn run(action: &ModelAction, client: &mut Client, json: bool) -> anyhow::Result<()> {
    let (name, no_wait) = match action {
        ModelAction::Show => {
            let st = client.status()?;
            if json {
                print_json(
                    &serde_json::json!({ "model": st.engine["model"], "migration": st.model_migration }),
                )?;
            } else {
                outln!("model        {}", st.engine["model"].as_str().unwrap_or("?"));
                if let Some(m) = &st.model_migration {
                    outln!("migration    {}", line(m));
                }
            }
            return Ok(());
        }
        ModelAction::Use { name, no_wait } => (name, *no_wait),
    };
    let r = client.send::<method::ModelUse>(&ModelUseParams { name: name.clone() })?;
    if r.state == "in_force" {
        if json {
            print_json(&r)?;
        } else {
            outln!("the vectors are already of {name}");
        }
        return Ok(());
    }
    if no_wait {
        if json {
            print_json(&r)?;
        } else {
            outln!(
                "re-embedding with {name} in the background: `amber model show` or `amber status` says how far"
            );
        }
        return Ok(());
    }
    let mut last = String::new();
    loop {
        std::thread::sleep(Duration::from_millis(500));
        let st = client.status()?;
        let Some(m) = st.model_migration else { anyhow::bail!("the daemon reports no migration") };
        let now = line(&m);
        if now != last && !json {
            eprint!("\r{now}    ");
            last = now;
        }
        match m.phase.as_str() {
            "done" => {
                if json {
                    print_json(&m)?;
                } else {
                    errln!();
                    outln!("now embedding with {name}: {}", st.engine["model"].as_str().unwrap_or("?"));
                    if let Some(c) = &m.calibrated {
                        outln!("recalibrated: {c}");
                    }
                }
                return Ok(());
            }
            "failed" | "stopped" => {
                if !json {
                    errln!();
                }
                anyhow::bail!("the migration to {name} {}: {}", m.phase, m.error.unwrap_or_default());
            }
            _ => {}
        }
    }
}

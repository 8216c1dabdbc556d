//! `amber advice learn|show|list` and `amber judgements`: advice learned by the model
//! configured in `[learn]`, and its judgements of unrewarded runs.

use amber_ipc::Client;
use amber_ipc::protocol::{
    AdviceLearnParams, AdviceListParams, AdviceShowParams, Answer, JudgeRunsParams, JudgementsParams,
    NoteVerdictParams, method,
};
use anyhow::Context;
use clap::Subcommand;

use crate::{one_line, print_json};

#[derive(Subcommand, Debug)]
pub(crate) enum AdviceAction {
    /// Sort a scope's runs into situations and write or edit their notes (needs a model:
    /// `[learn]`). Repeated model calls are answered from the cache in the data
    /// directory (`model-cache/`), which keeps replies after their runs are forgotten.
    Learn {
        /// The scope whose runs to learn from.
        scope: String,
        /// Ask the model every time; do not use or fill the cache.
        #[arg(long)]
        no_cache: bool,
    },
    /// A situation and every version of its notes.
    Show {
        /// The scope.
        scope: String,
        /// The situation's key (or an alias).
        situation: String,
    },
    /// A scope's situations, their runs and their newest notes, each with its tally.
    List {
        /// The scope.
        scope: String,
    },
    /// Your word on a note a session was given: was it applied, did it help (it counts
    /// instead of the judge's for that session).
    Verdict {
        /// The session (as `amber session list` shows it).
        session: String,
        /// The note's situation (as `advice list` shows it).
        situation: String,
        /// Was the note applied: yes, no or unsure.
        #[arg(long, value_parser = ["yes", "no", "unsure"])]
        applied: String,
        /// Did it help: yes, no or unsure.
        #[arg(long, value_parser = ["yes", "no", "unsure"])]
        helped: String,
        /// The note's scope, when the session was given the situation from two.
        #[arg(long)]
        scope: Option<String>,
        /// Why, in a few words.
        #[arg(long)]
        reason: Option<String>,
    },
}

pub(crate) fn run(action: &AdviceAction, client: &mut Client, as_json: bool) -> anyhow::Result<()> {
    match action {
        AdviceAction::Learn { scope, no_cache } => {
            errln!("learning advice in {scope} ...");
            let p = AdviceLearnParams { scope: scope.parse().context("SCOPE")?, cache: Some(!no_cache) };
            let r = client.send::<method::AdviceLearn>(&p)?;
            if as_json {
                return print_json(&r);
            }
            outln!(
                "{}: {} runs sorted ({} tasks left unsorted), {} new situations, {} model calls",
                r.scope,
                r.sorted,
                r.unsorted,
                r.new_situations,
                r.calls
            );
            for w in &r.written {
                let whose = w.agent.as_deref().map(|a| format!(" (personal: {a})")).unwrap_or_default();
                outln!(
                    "wrote {} version {}{whose} from {} runs of {} agents",
                    w.situation,
                    w.version,
                    w.runs,
                    w.agents
                );
            }
            for (label, list) in [("skipped", &r.skipped), ("failed", &r.failed), ("withheld", &r.withheld)] {
                for s in list {
                    let whose = s.agent.as_deref().map(|a| format!(" ({a})")).unwrap_or_default();
                    outln!("{label} {}{whose}: {}", s.situation, s.reason);
                }
            }
        }
        AdviceAction::Show { scope, situation } => {
            let p = AdviceShowParams { scope: scope.parse().context("SCOPE")?, situation: situation.clone() };
            let r = client.send::<method::AdviceShow>(&p)?;
            if as_json {
                return print_json(&r);
            }
            let s = &r.situation;
            outln!("{} [{}]: {}", s.key, s.scope, s.line);
            if !s.aliases.is_empty() {
                outln!("also known as: {}", s.aliases.join(", "));
            }
            for t in &r.tallies {
                let whose = t.agent.as_deref().unwrap_or("shared");
                outln!("{whose} note: {}", t.line());
            }
            for n in &r.notes {
                let whose = n.agent.as_deref().map(|a| format!(", personal: {a}")).unwrap_or_default();
                let held = n.withheld.as_deref().map(|w| format!(" WITHHELD: {w}")).unwrap_or_default();
                outln!(
                    "\n--- version {}{whose} · {} · {} runs ({} wrong) of {} agents{held}\n{}",
                    n.version,
                    crate::when::local(n.created_at),
                    n.run_count,
                    n.wrong_count,
                    n.agents,
                    n.text
                );
            }
        }
        AdviceAction::List { scope } => {
            let p = AdviceListParams { scope: scope.parse().context("SCOPE")? };
            let r = client.send::<method::AdviceList>(&p)?;
            if as_json {
                return print_json(&r);
            }
            if r.situations.is_empty() {
                outln!("no situations in {}", r.scope);
            }
            for x in &r.situations {
                let notes: Vec<String> = x
                    .notes
                    .iter()
                    .map(|n| {
                        let whose = n.agent.as_deref().unwrap_or("shared");
                        let held = if n.withheld.is_some() { " withheld" } else { "" };
                        format!("{whose} v{}{held}", n.version)
                    })
                    .collect();
                let notes = if notes.is_empty() { "no note".into() } else { notes.join(", ") };
                outln!(
                    "{} · {} runs · {notes}: {}",
                    x.situation.key,
                    x.runs,
                    one_line(&x.situation.line, 80)
                );
                for t in &x.tallies {
                    outln!("  {} note: {}", t.agent.as_deref().unwrap_or("shared"), t.line());
                }
            }
        }
        AdviceAction::Verdict { session, situation, applied, helped, scope, reason } => {
            let p = NoteVerdictParams {
                session_id: session.clone(),
                situation: situation.clone(),
                scope: scope.as_deref().map(str::parse).transpose().context("--scope")?,
                applied: answer(applied),
                helped: answer(helped),
                reason: reason.clone(),
            };
            let r = client.send::<method::NoteVerdict>(&p)?;
            if as_json {
                return print_json(&r);
            }
            outln!(
                "noted: {} in session {} applied {applied}, helped {helped} (your word counts instead of the judge's)",
                r.verdict.situation,
                r.verdict.session_id
            );
            outln!("{} [{}]: {}", r.tally.situation, r.tally.scope, r.tally.line());
        }
    }
    Ok(())
}

/// `amber judgements SCOPE`: the model's judgements (after judging what is due, with
/// `--judge`), each with the recorder's own reward when one came.
pub(crate) fn judgements(
    client: &mut Client,
    scope: &str,
    limit: usize,
    judge: bool,
    as_json: bool,
) -> anyhow::Result<()> {
    if judge {
        let p = JudgeRunsParams { scope: scope.parse().context("SCOPE")?, limit: None };
        let r = client.send::<method::JudgeRuns>(&p)?;
        errln!(
            "judged {} runs ({} failed) and {} served notes ({} sessions failed)",
            r.judged.len(),
            r.failed.len(),
            r.notes.len(),
            r.notes_failed.len()
        );
    }
    let p = JudgementsParams { scope: scope.parse().context("SCOPE")?, limit: Some(limit) };
    let r = client.send::<method::Judgements>(&p)?;
    if as_json {
        return print_json(&r);
    }
    if r.judgements.is_empty() {
        outln!("no judgements in {scope}");
    }
    for j in &r.judgements {
        let verdict = match j.judgement.verdict {
            Some(1) => "right",
            Some(-1) => "wrong",
            _ => "can't tell",
        };
        let reward =
            j.reward.map(|w| format!(" · recorder's reward {w:+.2} counts instead")).unwrap_or_default();
        outln!(
            "{} · {verdict} · {} · {}{reward}: {}",
            &j.judgement.run_id[..12.min(j.judgement.run_id.len())],
            j.judgement.model,
            crate::when::local(j.judgement.at),
            one_line(&j.judgement.reason, 80)
        );
    }
    Ok(())
}

/// `yes`, `no` or `unsure` (clap allows no other) as the wire's answer.
fn answer(word: &str) -> Answer {
    match word {
        "yes" => Answer::Yes,
        "no" => Answer::No,
        _ => Answer::Unsure,
    }
}

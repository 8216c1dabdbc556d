//! `doctor`: the learning loop's health, one check a line, each with what to do about
//! it: the model (configured, answering), runs and rewards in the last week, the judge's
//! backlog, the notes (served, ratified, withheld), skills stale against their
//! documents, and the holdout's lift with its confidence.

use std::sync::Arc;
use std::time::Duration;

use amber_core::advice::Standing;
use amber_core::now_millis;
use amber_ipc::protocol::ErrorObject;
use amber_ipc::protocol::{Check, DoctorParams, DoctorResult, Health, LiftParams};
use serde_json::{Value, json};

use crate::rpc::blocking;
use crate::rpc::engine_error;
use crate::state::Shared;

const WEEK_MS: i64 = 7 * 24 * 3_600_000;
/// The most runs or sessions a check reads.
const MAX_READ: usize = 10_000;

fn check(name: &str, health: Health, found: String, fix: Option<&str>, figures: Value) -> Check {
    let figures = match figures {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    Check { name: name.into(), health, found, fix: fix.map(str::to_string), figures }
}

pub(crate) async fn doctor(shared: &Arc<Shared>, p: DoctorParams) -> Result<DoctorResult, ErrorObject> {
    let mut checks = Vec::new();
    let learner = shared.learner.clone();
    let (engine, cfg, scope) = (shared.engine.clone(), shared.config.learn.clone(), p.scope.clone());
    let model = match &learner {
        None => check(
            "model",
            Health::Fail,
            "no model is configured: nothing is judged, learned or compiled".into(),
            Some(
                "set [learn] kind = \"openai\", url and model in the config (a local Ollama or llama.cpp server will do)",
            ),
            json!({ "configured": false }),
        ),
        Some(l) if p.no_ping => check(
            "model",
            Health::Ok,
            format!("{} is configured (not pinged)", l.name()),
            None,
            json!({ "configured": true }),
        ),
        Some(l) => {
            let (l, t0) = (l.clone(), std::time::Instant::now());
            let pinged = blocking(move || Ok(l.ping(Duration::from_secs(10)))).await?;
            let ms = t0.elapsed().as_millis() as u64;
            let name = learner.as_ref().map(|l| l.name()).unwrap_or_default();
            match pinged {
                Ok(()) => check(
                    "model",
                    Health::Ok,
                    format!("{name} answered in {ms} ms"),
                    None,
                    json!({ "configured": true, "answered": true, "ms": ms }),
                ),
                Err(e) => check(
                    "model",
                    Health::Fail,
                    format!("{name} did not answer: {e}"),
                    Some("start the model's server, or check [learn] url, model and api_key_env"),
                    json!({ "configured": true, "answered": false }),
                ),
            }
        }
    };
    checks.push(model);
    let more = blocking(move || {
        let mut out = Vec::new();
        let week_ago = now_millis() - WEEK_MS;
        let sc = scope.as_ref();
        // Runs and rewards.
        let runs: Vec<_> = engine
            .runs(sc, None, MAX_READ)
            .map_err(engine_error)?
            .into_iter()
            .filter(|r| r.created_at >= week_ago)
            .collect();
        let rewarded = runs.iter().filter(|r| r.reward.is_some()).count();
        let sessions: Vec<amber_tiers::session::Session> = engine
            .recent_sessions(MAX_READ)
            .map_err(engine_error)?
            .into_iter()
            .filter_map(|row| serde_json::from_str::<amber_tiers::session::Session>(&row.record).ok())
            .filter(|s| s.started_at >= week_ago && sc.is_none_or(|w| s.scope.is_within(w)))
            .collect();
        let session_rewards = sessions.iter().filter(|s| s.reward.is_some()).count();
        let (health, fix) = match (runs.len(), rewarded + session_rewards) {
            (0, _) => (Health::Warn, Some("record runs: `amber runs load`, the Claude Code hook's sessions (run = true), or run_record from a client")),
            (_, 0) => (Health::Warn, Some("reward runs: `amber runs reward last 1` (or -1) after a session; the judge covers the rest")),
            _ => (Health::Ok, None),
        };
        out.push(check(
            "runs",
            health,
            format!(
                "last 7 days: {} runs ({rewarded} rewarded), {} sessions ({session_rewards} rewarded)",
                runs.len(),
                sessions.len()
            ),
            fix,
            json!({ "runs": runs.len(), "rewarded_runs": rewarded, "sessions": sessions.len(), "rewarded_sessions": session_rewards }),
        ));
        // The judge's backlog.
        let delay_ms = cfg.judge_delay_s as i64 * 1000;
        let due_runs = super::judge::due(&engine, sc, delay_ms, cfg.judged_per_day, MAX_READ)?.len();
        let due_notes = super::note_words::due(&engine, sc, delay_ms, cfg.judged_per_day, MAX_READ)?.len();
        let backlog = due_runs + due_notes;
        let (health, fix) = if backlog == 0 {
            (Health::Ok, None)
        } else if cfg.interval_s == 0 {
            (Health::Warn, Some("the timer is off ([learn] interval_s = 0): run `amber judgements SCOPE --judge`"))
        } else {
            (Health::Warn, Some("the timer judges these within [learn] interval_s; `amber judgements SCOPE --judge` does it now"))
        };
        out.push(check(
            "judge",
            health,
            format!("{due_runs} runs or sessions and {due_notes} sessions' served notes wait for the judge (due after {} s)", cfg.judge_delay_s),
            fix,
            json!({ "due_runs": due_runs, "due_note_sessions": due_notes, "judge_delay_s": cfg.judge_delay_s }),
        ));
        // Notes.
        let tallies = super::note_words::tallies(&engine, sc, cfg.evidence_bar)?;
        let served_week = engine.servings(sc, week_ago).map_err(engine_error)?.len();
        let ratified = tallies.iter().filter(|t| t.standing == Standing::Ratified).count();
        let unhelpful: Vec<String> = tallies
            .iter()
            .filter(|t| t.standing == Standing::Unhelpful)
            .map(|t| format!("{} in {}", t.situation, t.scope))
            .collect();
        let unjudged = tallies.iter().filter(|t| t.served > 0 && t.voices == 0).count();
        let (health, fix) = if !unhelpful.is_empty() {
            (Health::Warn, Some("withheld notes did not help: learn again after new runs (`amber advice learn SCOPE`), or give your word with `amber advice verdict`"))
        } else {
            (Health::Ok, None)
        };
        out.push(check(
            "notes",
            health,
            format!(
                "{} notes served, {served_week} servings in the last 7 days; {ratified} ratified (bar {}), {} withheld as unhelpful{}; {unjudged} served but not yet judged",
                tallies.len(),
                cfg.evidence_bar,
                unhelpful.len(),
                if unhelpful.is_empty() { String::new() } else { format!(" ({})", unhelpful.join(", ")) }
            ),
            fix,
            json!({ "notes": tallies.len(), "servings_week": served_week, "ratified": ratified,
                    "unhelpful": unhelpful.len(), "unjudged": unjudged, "bar": cfg.evidence_bar }),
        ));
        // Skills (only for a scope: documents are chosen per scope).
        out.push(match sc.map(|s| super::compile::stale_skills(&engine, s)).transpose()?.flatten() {
            None if sc.is_none() => check("skills", Health::Ok, "give a scope to check its skills against their documents".into(), None, json!({})),
            None => check("skills", Health::Ok, "no documents are chosen for skills here".into(), None, json!({ "skills": 0 })),
            Some((n, stale)) if stale.is_empty() => check("skills", Health::Ok, format!("{n} skills, none stale"), None, json!({ "skills": n, "stale": 0 })),
            Some((n, stale)) => check(
                "skills",
                Health::Warn,
                format!("{} of {n} skills are stale against their documents: {}", stale.len(), stale.join(", ")),
                Some("compile again: `amber compile` in the project (only what changed is sent)"),
                json!({ "skills": n, "stale": stale.len() }),
            ),
        });
        Ok::<_, ErrorObject>(out)
    })
    .await?;
    checks.extend(more);
    // The holdout's lift.
    let lift = super::lift::lift(shared, LiftParams { scope: p.scope.clone(), ..Default::default() }).await?;
    let l = &lift.lift;
    let found = match (l.difference, l.p) {
        (Some(d), Some(p)) => format!(
            "served sessions score {d:+.2} against the holdout (one-sided p {p:.3}; {} served, {} held out, rewarded): {:?}",
            l.served.n, l.withheld.n, l.verdict
        ),
        _ => format!(
            "not enough rewarded sessions to tell: {} served and {} held out, {} needed in each",
            l.served.n, l.withheld.n, l.min_per_arm
        ),
    };
    let (health, fix) = match l.verdict {
        amber_tiers::lift::Verdict::Lift => (Health::Ok, None),
        amber_tiers::lift::Verdict::NotEnoughData => (
            Health::Warn,
            Some("reward more sessions (or let the judge): the holdout needs rewarded sessions in both arms"),
        ),
        amber_tiers::lift::Verdict::NoLift => (
            Health::Warn,
            Some("no evidence that serving helps yet: look at the withheld and unratified notes"),
        ),
    };
    checks.push(check(
        "lift",
        health,
        found,
        fix,
        json!({ "difference": l.difference, "p": l.p, "served": l.served.n, "withheld": l.withheld.n }),
    ));
    Ok(DoctorResult { scope: p.scope, checks })
}

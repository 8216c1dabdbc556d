//! A session's transcript, filed as it grows: at each checkpoint (a stop of the agent)
//! and at the end, only what is new since the last filing, without what Amber served
//! the session, in pieces of at most the capture limit. Each part of a transcript is
//! stored once (see [`amber_tiers::transcript::TranscriptMark`]).

use std::sync::Arc;

use amber_core::MemoryType;
use amber_ipc::protocol::ErrorObject;
use amber_tiers::redact::redact;
use amber_tiers::session::Session;
use amber_tiers::transcript::TranscriptMark;

use crate::methods::capture::note_capture;
use crate::methods::capture::{CapturedFrom, capture_text};
use crate::rpc::read;
use crate::state::Shared;

/// A transcript as a client sent it.
pub(crate) struct Part {
    /// Its text, without its first `skipped` characters.
    pub text: String,
    /// The source recorded on its pieces (default `transcript`).
    pub source: Option<String>,
    /// Characters the client left out at its start.
    pub skipped: usize,
    /// The door it came through.
    pub door: amber_core::origin::Door,
}

/// Files what of `part` is new since the session's mark, and moves the mark. On an
/// error the mark stays where it was (what was filed before the error is found again
/// as a repeat, not stored twice).
pub(crate) async fn file(shared: &Arc<Shared>, s: &mut Session, part: &Part) -> Result<(), ErrorObject> {
    let source = redact(part.source.as_deref().unwrap_or("transcript")).0;
    let new = match &s.transcript {
        Some(mark) => mark.new_part(&part.text, part.skipped),
        None => part.text.as_str(),
    };
    if !new.trim().is_empty() {
        let new = strip_served(shared, s, new).await;
        for piece in pieces(&new, shared.config.capture.max_chars) {
            let from = CapturedFrom {
                door: part.door,
                source: Some(source.clone()),
                session_id: Some(s.id.clone()),
                author: Some(s.agent.clone()),
            };
            let r = capture_text(shared, &piece, s.scope.clone(), MemoryType::Event, from).await?;
            note_capture(s, &r, &source);
        }
    }
    s.transcript = Some(TranscriptMark::of(&part.text, part.skipped));
    Ok(())
}

/// A text the session produced, without what Amber served it: each memory it was
/// served (by id) whose content comes back verbatim, and each line that names a served
/// memory by its 8-digit id (briefing, inbox and checkpoint lines), is replaced by a
/// pointer `[amber memory 1a2b3c4d]`. Amber never stores its own output again.
pub(crate) async fn strip_served(shared: &Arc<Shared>, session: &Session, text: &str) -> String {
    let mut ids: Vec<amber_core::MemoryId> = Vec::new();
    for x in &session.served {
        if !ids.contains(&x.id) {
            ids.push(x.id.clone());
        }
    }
    if ids.is_empty() {
        return text.to_string();
    }
    let wanted = ids.clone();
    let served = match read(shared, move |e| {
        let mut out = Vec::new();
        for id in &wanted {
            if let Some(m) = e.get(id)? {
                out.push(m);
            }
        }
        Ok(out)
    })
    .await
    {
        Ok(v) => v,
        Err(e) => {
            tracing::warn!(session = %session.id, error = %e.message, "served memories not read; text kept whole");
            return text.to_string();
        }
    };
    amber_tiers::echo::strip_served(text, &served)
}

/// Splits a transcript into pieces of at most `max` characters, at blank lines where it
/// can, else at line ends, else anywhere.
fn pieces(text: &str, max: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut cur_chars = 0;
    let push_unit = |unit: &str, out: &mut Vec<String>, cur: &mut String, cur_chars: &mut usize| {
        let n = unit.chars().count();
        if *cur_chars + n > max && !cur.is_empty() {
            out.push(std::mem::take(cur));
            *cur_chars = 0;
        }
        if n > max {
            let chars: Vec<char> = unit.chars().collect();
            for c in chars.chunks(max) {
                out.push(c.iter().collect());
            }
        } else {
            cur.push_str(unit);
            *cur_chars += n;
        }
    };
    for para in text.split_inclusive("\n\n") {
        if para.chars().count() <= max {
            push_unit(para, &mut out, &mut cur, &mut cur_chars);
        } else {
            for line in para.split_inclusive('\n') {
                push_unit(line, &mut out, &mut cur, &mut cur_chars);
            }
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::pieces;

    #[test]
    fn transcript_pieces_fit_and_keep_all_the_text() {
        let text = format!("{}\n\n{}\n\n{}\nline\n", "a".repeat(30), "b".repeat(50), "c".repeat(95));
        let p = pieces(&text, 40);
        assert!(p.iter().all(|x| x.chars().count() <= 40), "{p:?}");
        let squeeze = |s: &str| s.split_whitespace().collect::<String>();
        assert_eq!(squeeze(&p.concat()), squeeze(&text), "only whitespace-only pieces are dropped");
        assert!(p.concat().starts_with(&format!("{}\n\n", "a".repeat(30))));
        assert_eq!(pieces("short", 40), vec!["short".to_string()]);
        assert!(pieces("\n\n\n", 40).is_empty());
    }
}

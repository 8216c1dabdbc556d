//! Moments of a session: `start` (the default) and `next` search as any event does;
//! `fork` (about to choose a path), `stuck` and `done` search nothing and remind the
//! session of what it was already given, narrowed to what the moment needs:
//!
//! - `fork` and `stuck`: **pitfalls**;
//! - `done`: **verification** (how to check the work).
//!
//! A memory says what it holds in one of three ways, checked in order:
//! 1. metadata: `"moment": "pitfall" | "verification"` (or a list of them), or a `tags`
//!    list holding `pitfall(s)` / `verification` / `verify`: the whole memory fits;
//! 2. type: a `pattern` fits `done` when its text starts with a verification cue, and an
//!    `invalidation` fits `fork` and `stuck` (it names something that no longer holds);
//! 3. a heading or a line label inside the text (`Pitfalls:`, `## Pitfalls`, `Gotcha:`,
//!    `Watch out:`, `Don't:`; `Verify:`, `Verification:`, `## How to check`, `Check:`,
//!    `Test:`): the section under it, to the next heading or blank line, is what is
//!    reminded.

use amber_core::{Memory, MemoryType};
use serde::{Deserialize, Serialize};

/// The most characters of a memory one reminder shows.
pub const MAX_REMINDER_CHARS: usize = 600;

/// Where a session is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Moment {
    /// Working (the default): events are searched as usual.
    #[default]
    Start,
    /// About to choose between paths.
    Fork,
    /// Not getting anywhere.
    Stuck,
    /// Believes the work is done.
    Done,
    /// Moving to the next step: searched as usual.
    Next,
}

/// What a moment reminds of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Focus {
    /// What went wrong before.
    Pitfalls,
    /// How to check the work.
    Verification,
}

impl Moment {
    /// What the moment reminds of; None for the moments that search as usual.
    pub fn focus(self) -> Option<Focus> {
        match self {
            Moment::Fork | Moment::Stuck => Some(Focus::Pitfalls),
            Moment::Done => Some(Focus::Verification),
            Moment::Start | Moment::Next => None,
        }
    }

    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Moment::Start => "start",
            Moment::Fork => "fork",
            Moment::Stuck => "stuck",
            Moment::Done => "done",
            Moment::Next => "next",
        }
    }
}

const PITFALL_CUES: &[&str] = &[
    "pitfall",
    "pitfalls",
    "gotcha",
    "gotchas",
    "watch out",
    "don't",
    "do not",
    "avoid",
    "beware",
    "caveat",
    "caveats",
];
const VERIFY_CUES: &[&str] = &[
    "verify",
    "verification",
    "how to check",
    "check",
    "checks",
    "test",
    "tests",
    "how to test",
    "to confirm",
    "done when",
];

fn cues(focus: Focus) -> &'static [&'static str] {
    match focus {
        Focus::Pitfalls => PITFALL_CUES,
        Focus::Verification => VERIFY_CUES,
    }
}

fn tag_fits(tag: &str, focus: Focus) -> bool {
    let t = tag.trim().to_ascii_lowercase();
    match focus {
        Focus::Pitfalls => matches!(t.as_str(), "pitfall" | "pitfalls"),
        Focus::Verification => matches!(t.as_str(), "verification" | "verify"),
    }
}

fn metadata_fits(m: &Memory, focus: Focus) -> bool {
    let fits = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => tag_fits(s, focus),
        serde_json::Value::Array(a) => a.iter().any(|x| x.as_str().is_some_and(|s| tag_fits(s, focus))),
        _ => false,
    };
    m.metadata.get("moment").is_some_and(fits) || m.metadata.get("tags").is_some_and(fits)
}

/// The heading or label a line opens, lowercased, if it is one (`## Pitfalls`,
/// `Pitfalls:`, `**Verify:**`).
fn label(line: &str) -> Option<String> {
    let t = line.trim().trim_start_matches('#').trim().trim_matches(['*', '_']).trim();
    if line.trim_start().starts_with('#') {
        return Some(t.trim_end_matches(':').to_ascii_lowercase());
    }
    let (head, _) = t.split_once(':')?;
    let head = head.trim().trim_matches(['*', '_']).trim();
    (!head.is_empty() && head.split_whitespace().count() <= 4).then(|| head.to_ascii_lowercase())
}

fn is_heading(line: &str) -> bool {
    line.trim_start().starts_with('#') || label(line).is_some_and(|l| l.split_whitespace().count() <= 3)
}

/// The section of `text` under a cue of `focus`: from the labelled line to the next
/// heading or blank line.
fn section(text: &str, focus: Focus) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|l| label(l).is_some_and(|h| cues(focus).contains(&h.as_str())))?;
    let mut out = vec![lines[start].trim_end()];
    for l in &lines[start + 1..] {
        if l.trim().is_empty() || is_heading(l) {
            break;
        }
        out.push(l.trim_end());
    }
    Some(out.join("\n"))
}

/// What of a memory the moment reminds of, if anything: the whole memory when its
/// metadata or type says it fits, else the section under a matching heading.
pub fn reminder(m: &Memory, focus: Focus) -> Option<String> {
    let whole = metadata_fits(m, focus)
        || (focus == Focus::Pitfalls && m.kind == MemoryType::Invalidation)
        || (focus == Focus::Verification
            && m.kind == MemoryType::Pattern
            && label(m.content.lines().next().unwrap_or(""))
                .is_some_and(|h| VERIFY_CUES.contains(&h.as_str())));
    let text = if whole { Some(m.content.clone()) } else { section(&m.content, focus) }?;
    let cut: String = text.chars().take(MAX_REMINDER_CHARS).collect();
    Some(if cut.len() < text.len() { format!("{cut}…") } else { cut })
}

#[cfg(test)]
mod tests {
    use super::*;
    use amber_core::NewMemory;

    fn memory(content: &str, kind: MemoryType, metadata: serde_json::Value) -> Memory {
        let mut m = NewMemory::new(content).of_type(kind);
        m.metadata = metadata;
        Memory::filed(m, 1, 0)
    }

    #[test]
    fn moments_focus() {
        assert_eq!(Moment::Fork.focus(), Some(Focus::Pitfalls));
        assert_eq!(Moment::Stuck.focus(), Some(Focus::Pitfalls));
        assert_eq!(Moment::Done.focus(), Some(Focus::Verification));
        assert_eq!((Moment::Start.focus(), Moment::Next.focus()), (None, None));
    }

    #[test]
    fn sections_under_headings_are_reminded() {
        let text = "Releasing to staging.\n\nSteps: run make release.\n\nPitfalls:\n- the upload fails without AWS_PROFILE\n- never tag twice\n\nVerify: the deploy dashboard shows the new version";
        let m = memory(text, MemoryType::Fact, serde_json::json!({}));
        let p = reminder(&m, Focus::Pitfalls).unwrap();
        assert!(p.starts_with("Pitfalls:") && p.contains("never tag twice") && !p.contains("Verify"), "{p}");
        let v = reminder(&m, Focus::Verification).unwrap();
        assert_eq!(v, "Verify: the deploy dashboard shows the new version");
        let md = memory(
            "## Gotchas\nthe cache is per user\n## Other\nx",
            MemoryType::Pattern,
            serde_json::json!({}),
        );
        assert_eq!(reminder(&md, Focus::Pitfalls).unwrap(), "## Gotchas\nthe cache is per user");
        let plain = memory("The staging bucket is in eu-west-1.", MemoryType::Fact, serde_json::json!({}));
        assert!(
            reminder(&plain, Focus::Pitfalls).is_none() && reminder(&plain, Focus::Verification).is_none()
        );
    }

    #[test]
    fn metadata_and_types_say_the_whole_memory_fits() {
        let tagged = memory(
            "never run migrations on Fridays",
            MemoryType::Fact,
            serde_json::json!({"tags": ["ops", "pitfall"]}),
        );
        assert_eq!(reminder(&tagged, Focus::Pitfalls).unwrap(), "never run migrations on Fridays");
        assert!(reminder(&tagged, Focus::Verification).is_none());
        let moment = memory(
            "curl /health returns 200",
            MemoryType::Fact,
            serde_json::json!({"moment": "verification"}),
        );
        assert!(reminder(&moment, Focus::Verification).is_some());
        let inv = memory("the v1 API is gone; use v2", MemoryType::Invalidation, serde_json::json!({}));
        assert!(reminder(&inv, Focus::Pitfalls).is_some());
        let check =
            memory("Check: cargo test and the replay pass", MemoryType::Pattern, serde_json::json!({}));
        assert_eq!(reminder(&check, Focus::Verification).unwrap(), "Check: cargo test and the replay pass");
        let long =
            memory(&format!("Pitfalls: {}", "x ".repeat(400)), MemoryType::Fact, serde_json::json!({}));
        assert!(reminder(&long, Focus::Pitfalls).unwrap().ends_with('…'));
    }
}

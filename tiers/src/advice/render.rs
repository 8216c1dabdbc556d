//! How a served note is put for the agent (`get_advice`'s `format` and `max_chars`): as
//! written (`notes`), or as a checklist (`checklist`: each step and pitfall a `- [ ]`
//! line under its heading, the When line kept, the evidence and sources left out); and
//! cut, at a line, to at most so many characters.

/// The forms `get_advice` may give a note in.
pub const FORMATS: [&str; 2] = ["notes", "checklist"];

/// The fewest characters `max_chars` may ask for.
pub const MIN_CHARS: usize = 500;

/// Sections a checklist leaves out: they back the note, they are not things to do.
const NOT_TO_DO: [&str; 2] = ["evidence", "sources"];

/// The note as a checklist.
pub fn checklist(note: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut section = String::new();
    for line in note.lines() {
        let l = line.trim();
        if l.starts_with('#') {
            section = l.trim_start_matches('#').trim().trim_end_matches(':').to_lowercase();
            if !NOT_TO_DO.contains(&section.as_str()) {
                out.push(l.to_string());
            }
            continue;
        }
        if l.is_empty() || NOT_TO_DO.contains(&section.as_str()) {
            continue;
        }
        if section == "when" {
            out.push(l.to_string());
            continue;
        }
        let item = l
            .strip_prefix("- ")
            .or_else(|| l.strip_prefix("* "))
            .or_else(|| {
                let digits = l.chars().take_while(char::is_ascii_digit).count();
                (digits > 0).then(|| l[digits..].trim_start_matches(['.', ')']).trim_start())
            })
            .unwrap_or(l);
        out.push(format!("- [ ] {item}"));
    }
    out.join("\n")
}

/// The note cut, at a line, to at most `max` characters, with a last line saying so;
/// as it is when it fits. True when it was cut.
pub fn cut(note: &str, max: usize) -> (String, bool) {
    if note.chars().count() <= max {
        return (note.to_string(), false);
    }
    let marker = format!("… (cut to {max} characters: the rest of the note is left out)");
    let room = max.saturating_sub(marker.chars().count() + 1);
    let mut out = String::new();
    for line in note.lines() {
        let n = out.chars().count() + line.chars().count() + 1;
        if n > room {
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(&marker);
    (out, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOTE: &str = "## When\nA schema migration fails.\n## Steps\n1. Read the error.\n2) Fix the statement.\n\
                        ## Pitfalls\n- Editing a migration that was applied.\n## Evidence\n[R1] and [R2] went wrong.";

    #[test]
    fn a_checklist_turns_steps_and_pitfalls_into_boxes_and_leaves_the_evidence_out() {
        assert_eq!(
            checklist(NOTE),
            "## When\nA schema migration fails.\n## Steps\n- [ ] Read the error.\n- [ ] Fix the statement.\n\
             ## Pitfalls\n- [ ] Editing a migration that was applied."
        );
    }

    #[test]
    fn a_cut_keeps_whole_lines_within_the_limit_and_says_so() {
        assert_eq!(cut(NOTE, 1_000), (NOTE.to_string(), false));
        let long = NOTE.repeat(20);
        let (cut_text, was_cut) = cut(&long, MIN_CHARS);
        assert!(was_cut);
        assert!(cut_text.chars().count() <= MIN_CHARS, "{}", cut_text.chars().count());
        assert!(cut_text.ends_with("the rest of the note is left out)"));
        assert!(
            cut_text.lines().all(|l| long.lines().any(|o| o == l) || l.starts_with('…')),
            "whole lines only"
        );
    }
}

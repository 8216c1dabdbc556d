//! The planted edits of `amber-eval curate`: realistic ways a turn gets said again
//! (case and whitespace, a typo, punctuation, filler, a dropped clause, a synonym).

use std::str::FromStr;

use crate::common::Rng;

/// One realistic edit that makes a copy of a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Edit {
    /// Case or whitespace only (lowercased, a doubled space, a space turned into a line
    /// break): curation should see an exact duplicate.
    CaseWhitespace,
    /// Two adjacent letters swapped inside one word.
    Typo,
    /// The final mark removed or changed, commas or apostrophes removed.
    Punctuation,
    /// A filler opening ("Actually, ") or a closing clause (", I think").
    Filler,
    /// The last sentence (or the clause after the last comma) dropped, keeping at least
    /// half of the text.
    DroppedClause,
    /// One word swapped for a synonym from a small fixed list.
    Synonym,
}

pub(super) const ALL_EDITS: [Edit; 6] =
    [Edit::CaseWhitespace, Edit::Typo, Edit::Punctuation, Edit::Filler, Edit::DroppedClause, Edit::Synonym];

impl Edit {
    /// The name used in flags and reports.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Edit::CaseWhitespace => "case_whitespace",
            Edit::Typo => "typo",
            Edit::Punctuation => "punctuation",
            Edit::Filler => "filler",
            Edit::DroppedClause => "dropped_clause",
            Edit::Synonym => "synonym",
        }
    }
}

impl FromStr for Edit {
    type Err = String;
    fn from_str(s: &str) -> Result<Edit, String> {
        ALL_EDITS.iter().copied().find(|e| e.as_str() == s.trim()).ok_or_else(|| {
            let names: Vec<&str> = ALL_EDITS.iter().map(|e| e.as_str()).collect();
            format!("unknown edit kind {s:?} (one of {})", names.join(", "))
        })
    }
}

/// The synonym pairs (either direction).
const SYNONYMS: [(&str, &str); 16] = [
    ("great", "awesome"),
    ("happy", "glad"),
    ("big", "large"),
    ("kids", "children"),
    ("photo", "picture"),
    ("love", "adore"),
    ("amazing", "incredible"),
    ("start", "begin"),
    ("hard", "difficult"),
    ("help", "assist"),
    ("nice", "lovely"),
    ("talk", "chat"),
    ("buy", "purchase"),
    ("maybe", "perhaps"),
    ("friends", "pals"),
    ("awful", "terrible"),
];

const FILLER_OPENINGS: [&str; 4] = ["Actually, ", "Honestly, ", "Well, ", "So, "];
const FILLER_CLOSINGS: [&str; 3] = [", I think", ", you know", ", to be honest"];

/// Byte ranges of the ASCII-letter words of `s` (apostrophes end a word).
fn words(s: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in s.char_indices() {
        match (c.is_ascii_alphabetic(), start) {
            (true, None) => start = Some(i),
            (false, Some(b)) => {
                out.push((b, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(b) = start {
        out.push((b, s.len()));
    }
    out
}

/// Byte positions of the spaces of `s`.
fn spaces(s: &str) -> Vec<usize> {
    s.char_indices().filter(|&(_, c)| c == ' ').map(|(i, _)| i).collect()
}

/// The sentence-final mark `body` ends with, if any.
fn final_mark(body: &str) -> Option<char> {
    body.chars().last().filter(|c| matches!(c, '.' | '!' | '?'))
}

/// A copy of a turn (`speaker: body`) made by `edit`, or None when the edit does not apply
/// to it. The speaker prefix is kept (except by the lowercasing of `case_whitespace`).
pub(super) fn apply_edit(edit: Edit, speaker: &str, body: &str, rng: &mut Rng) -> Option<String> {
    let whole = |b: &str| format!("{speaker}: {b}");
    let body = body.trim();
    if body.is_empty() {
        return None;
    }
    match edit {
        Edit::CaseWhitespace => {
            let full = whole(body);
            let sp = spaces(body);
            let mut options: Vec<String> = Vec::new();
            if full.to_lowercase() != full {
                options.push(full.to_lowercase());
            }
            if let Some(&i) = rng.pick(&sp) {
                options.push(whole(&format!("{}  {}", &body[..i], &body[i + 1..])));
            }
            if let Some(&i) = rng.pick(&sp) {
                options.push(whole(&format!("{}\n{}", &body[..i], &body[i + 1..])));
            }
            rng.pick(&options).cloned()
        }
        Edit::Typo => {
            // a word of 4+ letters with two differing adjacent letters after the first
            let candidates: Vec<(usize, usize)> = words(body)
                .into_iter()
                .filter(|&(a, b)| b - a >= 4 && body.as_bytes()[a + 1..b].windows(2).any(|w| w[0] != w[1]))
                .collect();
            let &(a, b) = rng.pick(&candidates)?;
            let bytes = body.as_bytes();
            let swaps: Vec<usize> = (a + 1..b - 1).filter(|&i| bytes[i] != bytes[i + 1]).collect();
            let &i = rng.pick(&swaps)?;
            let mut out = bytes.to_vec();
            out.swap(i, i + 1);
            Some(whole(&String::from_utf8(out).ok()?))
        }
        Edit::Punctuation => {
            let mut options: Vec<String> = Vec::new();
            if let Some(m) = final_mark(body) {
                let stem = &body[..body.len() - 1];
                options.push(stem.to_string());
                options.push(format!("{stem}{}", if m == '.' { '!' } else { '.' }));
            }
            if body.contains(',') {
                options.push(body.replace(',', ""));
            }
            if body.contains('\'') {
                options.push(body.replace('\'', ""));
            }
            rng.pick(&options).map(|b| whole(b))
        }
        Edit::Filler => {
            if rng.below(2) == 0 {
                let opening = rng.pick(&FILLER_OPENINGS)?;
                let first = body.split_whitespace().next().unwrap_or("");
                let keep_case = first == "I" || first.starts_with("I'");
                let mut chars = body.chars();
                let head = chars.next()?;
                let rest: String =
                    if keep_case { body.to_string() } else { head.to_lowercase().chain(chars).collect() };
                Some(whole(&format!("{opening}{rest}")))
            } else {
                let closing = rng.pick(&FILLER_CLOSINGS)?;
                match final_mark(body) {
                    Some(m) => Some(whole(&format!("{}{closing}{m}", &body[..body.len() - 1]))),
                    None => Some(whole(&format!("{body}{closing}"))),
                }
            }
        }
        Edit::DroppedClause => {
            let n = body.chars().count();
            // the end of the last sentence but one: a mark followed by a space
            let bytes = body.as_bytes();
            let cut = (1..bytes.len().saturating_sub(1))
                .rev()
                .find(|&i| matches!(bytes[i], b'.' | b'!' | b'?') && bytes[i + 1] == b' ')
                .map(|i| body[..=i].to_string())
                .or_else(|| {
                    let i = body.rfind(',')?;
                    let m = final_mark(body).unwrap_or('.');
                    Some(format!("{}{m}", &body[..i]))
                })?;
            (cut.chars().count() * 2 >= n && cut.len() < body.len()).then(|| whole(&cut))
        }
        Edit::Synonym => {
            let candidates: Vec<(usize, usize, &str)> = words(body)
                .into_iter()
                .filter_map(|(a, b)| {
                    let w = body[a..b].to_ascii_lowercase();
                    SYNONYMS.iter().find_map(|&(x, y)| {
                        if w == x {
                            Some((a, b, y))
                        } else if w == y {
                            Some((a, b, x))
                        } else {
                            None
                        }
                    })
                })
                .collect();
            let &(a, b, with) = rng.pick(&candidates)?;
            let capital = body.as_bytes()[a].is_ascii_uppercase();
            let mut replacement = with.to_string();
            if capital {
                replacement[..1].make_ascii_uppercase();
            }
            Some(whole(&format!("{}{replacement}{}", &body[..a], &body[b..])))
        }
    }
}

#[cfg(test)]
mod tests {
    use amber_tiers::curate::normalize;

    use super::*;

    const BODY: &str = "I started painting last year, and it really helps me relax. My kids love it too!";

    #[test]
    fn edits_change_the_text_as_named() {
        for seed in 0..50 {
            let mut rng = Rng::new(seed);
            let orig = format!("Mel: {BODY}");
            for e in ALL_EDITS {
                let copy = apply_edit(e, "Mel", BODY, &mut rng).unwrap_or_else(|| panic!("{e:?} applies"));
                assert_ne!(copy, orig, "{e:?}");
                match e {
                    Edit::CaseWhitespace => assert_eq!(normalize(&copy), normalize(&orig)),
                    Edit::Typo => {
                        assert_eq!(copy.len(), orig.len());
                        let diff: Vec<usize> =
                            (0..copy.len()).filter(|&i| copy.as_bytes()[i] != orig.as_bytes()[i]).collect();
                        assert_eq!(diff.len(), 2, "{copy}");
                        assert_eq!(diff[1], diff[0] + 1);
                    }
                    Edit::Punctuation => {
                        let strip = |s: &str| s.replace([',', '.', '!', '?', '\''], "");
                        assert_eq!(strip(&copy), strip(&orig), "{copy}");
                    }
                    Edit::Filler => assert!(copy.len() > orig.len(), "{copy}"),
                    Edit::DroppedClause => {
                        assert!(copy.len() < orig.len() && copy.len() * 2 >= orig.len() - 5, "{copy}")
                    }
                    Edit::Synonym => assert!(
                        ["start", "begin", "kids", "children", "love", "adore"]
                            .iter()
                            .any(|w| copy.to_lowercase().contains(w) != orig.to_lowercase().contains(w)),
                        "{copy}"
                    ),
                }
                assert!(copy.starts_with("Mel: ") || copy.starts_with("mel: "), "{copy}");
            }
        }
    }

    #[test]
    fn edits_that_do_not_apply_say_so() {
        let mut rng = Rng::new(1);
        assert_eq!(apply_edit(Edit::Synonym, "A", "Nothing to swap here", &mut rng), None);
        assert_eq!(apply_edit(Edit::DroppedClause, "A", "One sentence only", &mut rng), None);
        assert_eq!(apply_edit(Edit::Punctuation, "A", "no marks at all", &mut rng), None);
        assert_eq!(
            apply_edit(Edit::DroppedClause, "A", "Short. Then a much longer second sentence here.", &mut rng),
            None,
            "dropping more than half is not a duplicate any more"
        );
    }

    #[test]
    fn rng_is_seeded() {
        let a: Vec<usize> = (0..5)
            .map({
                let mut r = Rng::new(7);
                move |_| r.below(100)
            })
            .collect();
        let b: Vec<usize> = (0..5)
            .map({
                let mut r = Rng::new(7);
                move |_| r.below(100)
            })
            .collect();
        assert_eq!(a, b);
        assert!("case_whitespace".parse::<Edit>().is_ok() && "nope".parse::<Edit>().is_err());
    }
}

//! What the words on a served note add up to. Per note series (scope, situation, agent):
//! the sessions it was served in, and of the voices with a word on it (a session's
//! agent: the people rule of team notes counts agents too), each voice's latest judged
//! session only: applied, helped, not helped. Per session the person's word overrides
//! the judge's; a reward given to the session overrides the judge's "helped" on a note
//! the judge found applied (the sign of the reward). A note is **ratified** once it
//! helped at least `bar` voices, more than it did not; it is **unhelpful** (and
//! withheld from serving) once it did not help at least `bar` voices, more than it did.

use std::collections::{BTreeMap, HashMap};

use amber_core::Scope;
use amber_core::advice::{NoteVerdict, Serving, Standing, Tally, VerdictBy};

type Series = (Scope, String, Option<String>);

/// A voice's latest session: (when, session, applied, helped).
type Latest<'a> = (i64, &'a str, Option<bool>, Option<bool>);

fn series_of(scope: &Scope, situation: &str, agent: &Option<String>) -> Series {
    (scope.clone(), situation.to_string(), agent.clone())
}

/// The word that counts for one session: the person's, else the judge's with the
/// session's reward (when one was given) deciding "helped" on a note it applied.
fn counted(words: &[&NoteVerdict], reward: Option<f32>) -> Option<(Option<bool>, Option<bool>)> {
    if let Some(p) = words.iter().find(|w| w.by == VerdictBy::Person) {
        return Some((p.applied, p.helped));
    }
    let j = words.iter().find(|w| w.by == VerdictBy::Judge)?;
    let helped = match reward {
        Some(r) if j.applied == Some(true) && r != 0.0 => Some(r > 0.0),
        _ => j.helped,
    };
    Some((j.applied, helped))
}

/// The tallies of every note series served in `servings` or spoken of in `verdicts`;
/// `rewards` holds the reward given to a session (by session id), `bar` the evidence
/// bar. Ordered by scope, situation, agent.
pub fn tally(
    servings: &[Serving],
    verdicts: &[NoteVerdict],
    rewards: &HashMap<String, f32>,
    bar: u32,
) -> Vec<Tally> {
    let bar = bar.max(1);
    let mut served: BTreeMap<Series, (u32, HashMap<&str, i64>)> = BTreeMap::new();
    for s in servings {
        let e = served.entry(series_of(&s.scope, &s.situation, &s.agent)).or_default();
        if e.1.insert(&s.session_id, s.at).is_none() {
            e.0 += 1;
        }
    }
    // Per series, per session: its words.
    let mut words: BTreeMap<Series, BTreeMap<&str, Vec<&NoteVerdict>>> = BTreeMap::new();
    for v in verdicts {
        words
            .entry(series_of(&v.scope, &v.situation, &v.agent))
            .or_default()
            .entry(&v.session_id)
            .or_default()
            .push(v);
    }
    let keys: Vec<Series> = served
        .keys()
        .chain(words.keys())
        .cloned()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    keys.into_iter()
        .map(|key| {
            let (n_served, at_of) = served.get(&key).cloned().unwrap_or_default();
            // Per voice, its latest session (by when it was served, else by the word).
            let mut latest: HashMap<&str, Latest<'_>> = HashMap::new();
            for (session, ws) in words.get(&key).into_iter().flatten() {
                let Some((applied, helped)) = counted(ws, rewards.get(*session).copied()) else { continue };
                let when =
                    at_of.get(session).copied().unwrap_or_else(|| ws.iter().map(|w| w.at).max().unwrap_or(0));
                let voice = ws[0].voice.as_str();
                let newer = latest.get(voice).is_none_or(|(t, s, ..)| (when, *session) > (*t, *s));
                if newer {
                    latest.insert(voice, (when, session, applied, helped));
                }
            }
            let count = |f: &dyn Fn(&Latest<'_>) -> bool| latest.values().filter(|v| f(v)).count() as u32;
            let helped = count(&|v| v.3 == Some(true));
            let not_helped = count(&|v| v.3 == Some(false));
            let standing = if helped >= bar && helped > not_helped {
                Standing::Ratified
            } else if not_helped >= bar && not_helped > helped {
                Standing::Unhelpful
            } else {
                Standing::Open
            };
            let (scope, situation, agent) = key;
            Tally {
                scope,
                situation,
                agent,
                served: n_served,
                voices: latest.len() as u32,
                applied: count(&|v| v.2 == Some(true)),
                helped,
                not_helped,
                bar,
                standing,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serving(session: &str, at: i64) -> Serving {
        Serving {
            session_id: session.into(),
            scope: "p".parse().unwrap(),
            situation: "db/migrations".into(),
            agent: None,
            version: 1,
            at,
        }
    }

    fn word(
        session: &str,
        voice: &str,
        by: VerdictBy,
        applied: Option<bool>,
        helped: Option<bool>,
    ) -> NoteVerdict {
        NoteVerdict {
            session_id: session.into(),
            scope: "p".parse().unwrap(),
            situation: "db/migrations".into(),
            agent: None,
            version: 1,
            voice: voice.into(),
            applied,
            helped,
            by,
            reason: String::new(),
            model: None,
            at: 0,
        }
    }

    const J: VerdictBy = VerdictBy::Judge;
    const P: VerdictBy = VerdictBy::Person;
    const Y: Option<bool> = Some(true);
    const N: Option<bool> = Some(false);

    #[test]
    fn each_voice_counts_once_by_its_latest_session_and_the_bar_decides() {
        let servings: Vec<Serving> = (0..6).map(|i| serving(&format!("s{i}"), i)).collect();
        // ada: helped, then not (her latest counts); bob and cy: helped; dee: can't tell.
        let words = vec![
            word("s0", "ada", J, Y, Y),
            word("s1", "bob", J, Y, Y),
            word("s2", "cy", J, Y, Y),
            word("s3", "ada", J, Y, N),
            word("s4", "dee", J, None, None),
        ];
        let t = &tally(&servings, &words, &HashMap::new(), 3)[0];
        assert_eq!((t.served, t.voices, t.applied, t.helped, t.not_helped), (6, 4, 3, 2, 1));
        assert_eq!(t.standing, Standing::Open, "two voices helped, the bar is three");
        let t = &tally(&servings, &words, &HashMap::new(), 2)[0];
        assert_eq!(t.standing, Standing::Ratified);
        // The person's word overrides the judge's: ada's latest session helped after all.
        let mut with_word = words.clone();
        with_word.push(word("s3", "ada", P, Y, Y));
        let t = &tally(&servings, &with_word, &HashMap::new(), 3)[0];
        assert_eq!((t.helped, t.not_helped, t.standing), (3, 0, Standing::Ratified));
        // A reward given to the session decides "helped" on a note the judge found applied.
        let rewards = HashMap::from([("s3".to_string(), 1.0f32), ("s1".to_string(), -1.0)]);
        let t = &tally(&servings, &words, &rewards, 3)[0];
        assert_eq!((t.helped, t.not_helped), (2, 1), "ada helped (reward), bob did not (reward)");
    }

    #[test]
    fn a_note_that_did_not_help_enough_voices_is_unhelpful() {
        let servings: Vec<Serving> = (0..4).map(|i| serving(&format!("s{i}"), i)).collect();
        let words: Vec<NoteVerdict> = ["a", "b", "c", "d"]
            .iter()
            .enumerate()
            .map(|(i, v)| word(&format!("s{i}"), v, J, Y, if i == 0 { Y } else { N }))
            .collect();
        let t = &tally(&servings, &words, &HashMap::new(), 3)[0];
        assert_eq!((t.helped, t.not_helped, t.standing), (1, 3, Standing::Unhelpful));
        assert!(t.line().contains("withheld"), "{}", t.line());
        // Not applied anywhere: it neither helped nor failed to.
        let none = vec![word("s0", "a", J, N, None)];
        let t = &tally(&servings, &none, &HashMap::new(), 1)[0];
        assert_eq!((t.applied, t.helped, t.not_helped, t.standing), (0, 0, 0, Standing::Open));
    }
}

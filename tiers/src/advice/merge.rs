//! Merging situations: the model is shown every situation's key and line and names
//! pairs that are the same kind of task under two names. The caller merges each
//! (`from` into `into`): `from`'s runs move and its key stays as an alias of `into`.

use amber_core::advice::Situation;
use serde_json::Value;

use super::{Learner, ModelError, json_object};

/// The most situations shown in one call.
pub const MAX_SITUATIONS: usize = 200;

const SYSTEM: &str = "You tidy a list of situations (kinds of tasks an AI agent does). Find pairs \
that are the same kind of task under two names. Reply with JSON only: {\"merge\": [{\"from\": \"key\", \
\"into\": \"key\"}]}, keeping the better name as \"into\". Reply {\"merge\": []} when there are none. \
Only merge situations that the same advice would serve.";

/// Pairs (from, into) of known keys the model says are the same situation: each key at
/// most once, never into itself, never into a key merged away.
pub fn find_merges(learner: &Learner, situations: &[Situation]) -> Result<Vec<(String, String)>, ModelError> {
    if situations.len() < 2 {
        return Ok(Vec::new());
    }
    let listed: String =
        situations.iter().take(MAX_SITUATIONS).map(|s| format!("- {}: {}\n", s.key, s.line)).collect();
    let reply = learner.ask(SYSTEM, &format!("Situations:\n{listed}\nReply with the JSON only."), 800)?;
    parse_merges(&reply, situations)
}

/// The usable pairs of a merging reply; a reply without a `merge` list is malformed.
pub fn parse_merges(reply: &str, situations: &[Situation]) -> Result<Vec<(String, String)>, ModelError> {
    let obj = json_object(reply)?;
    let items = obj
        .get("merge")
        .and_then(Value::as_array)
        .ok_or_else(|| ModelError::Malformed("the merging reply has no \"merge\" list".into()))?;
    let known = |k: &str| situations.iter().any(|s| s.key == k);
    let mut out: Vec<(String, String)> = Vec::new();
    for item in items {
        let (Some(from), Some(into)) =
            (item.get("from").and_then(Value::as_str), item.get("into").and_then(Value::as_str))
        else {
            continue;
        };
        let used = out.iter().any(|(f, i)| f == from || i == from || f == into);
        if from != into && known(from) && known(into) && !used {
            out.push((from.to_string(), into.to_string()));
        }
    }
    Ok(out)
}

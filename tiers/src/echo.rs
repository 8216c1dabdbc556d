//! Amber's own output coming back: a text an agent produced (a tool's output, a
//! transcript) that holds what Amber served it. Before such a text is captured, what
//! Amber served is cut out by what it is (the served memories, by id and content), not
//! guessed at, so Amber never stores its own output and never feeds on it.

use amber_core::Memory;

/// Shortest content replaced where it recurs verbatim (shorter texts recur by chance).
const MIN_VERBATIM_CHARS: usize = 24;

/// The pointer left where a served memory was.
fn pointer(m: &Memory) -> String {
    format!("[amber memory {}]", &m.id.as_str()[..8])
}

/// `text` without what Amber served: every served memory whose content recurs verbatim
/// (at least [`MIN_VERBATIM_CHARS`] characters) and every line that names a served
/// memory by its 8-digit id (briefing, inbox and checkpoint lines) become a pointer,
/// `[amber memory 1a2b3c4d]`; a run of such lines becomes one pointer line each.
pub fn strip_served(text: &str, served: &[Memory]) -> String {
    let mut out = text.to_string();
    for m in served {
        if m.content.trim().chars().count() >= MIN_VERBATIM_CHARS && out.contains(m.content.trim()) {
            out = out.replace(m.content.trim(), &pointer(m));
        }
    }
    let mut lines: Vec<String> = Vec::new();
    for line in out.split_inclusive('\n') {
        let named = served.iter().find(|m| names(line, &m.id.as_str()[..8]));
        match named {
            Some(m) => {
                let p = pointer(m);
                if line.trim() != p {
                    lines.push(format!("{p}{}", if line.ends_with('\n') { "\n" } else { "" }));
                } else {
                    lines.push(line.to_string());
                }
            }
            None => lines.push(line.to_string()),
        }
    }
    lines.concat()
}

/// True when `line` holds `id8` as a word of its own (not inside a longer hex run).
fn names(line: &str, id8: &str) -> bool {
    let bytes = line.as_bytes();
    line.match_indices(id8).any(|(i, _)| {
        let before = i.checked_sub(1).map(|j| bytes[j]);
        let after = bytes.get(i + id8.len()).copied();
        !before.is_some_and(|b| b.is_ascii_alphanumeric())
            && !after.is_some_and(|b| b.is_ascii_alphanumeric())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use amber_core::NewMemory;

    fn memory(text: &str) -> Memory {
        Memory::filed(NewMemory::new(text), 1, 0)
    }

    #[test]
    fn served_content_and_lines_naming_served_ids_become_pointers() {
        let fact = memory("The staging database connection string lives in config/staging.toml, port 6432.");
        let other = memory("Deploys go out on Tuesdays after the freeze is lifted by the release manager.");
        let id8 = &fact.id.as_str()[..8];
        let text = format!(
            "user: where is staging?\n\nassistant: From memory: {}\nAlso:\n- {id8} · fact · p · The staging database…\nDone, see deadbeef{id8}.\n",
            fact.content
        );
        let out = strip_served(&text, std::slice::from_ref(&fact));
        assert!(!out.contains("config/staging.toml"), "{out}");
        assert!(out.contains(&format!("[amber memory {id8}]")), "{out}");
        assert!(!out.contains("The staging database…"), "{out}");
        assert!(
            out.contains(&format!("deadbeef{id8}")),
            "an id inside a longer hex run is not a mention: {out}"
        );
        assert!(out.starts_with("user: where is staging?\n\n"), "{out}");
        // Nothing served: the text is kept whole; a memory never served is left alone.
        assert_eq!(strip_served(&text, &[]), text);
        assert_eq!(strip_served(&other.content, std::slice::from_ref(&fact)), other.content);
    }
}

//! What the `amber` command prints: JSON, one line of a memory's text, and a quiet end
//! when the reader of its output goes away.

/// `amber … | head`: when the reader closes the pipe, printing fails with a broken pipe
/// and `println!` panics. The output is no longer wanted, so that panic ends the program
/// quietly (exit 0, as ripgrep does); any other panic is reported as before.
pub(crate) fn quiet_on_closed_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if msg.starts_with("failed printing to std") && msg.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}

/// Pretty JSON on standard output, every character that must not reach a terminal raw
/// written as a `\u` escape ([`json_for_terminal`]).
pub(crate) fn print_json(v: &impl serde::Serialize) -> anyhow::Result<()> {
    println!("{}", json_for_terminal(&serde_json::to_string_pretty(v)?));
    Ok(())
}

/// A character a terminal would act on or hide (newline and tab are text).
fn unsafe_char(c: char) -> bool {
    c != '\n' && c != '\t' && amber_core::is_unsafe_char(c)
}

/// Text for a terminal: every character that could restyle it, move its cursor, retitle
/// it, plant a link or hide text (C0 controls but newline and tab, ESC, DEL, C1,
/// bidirectional controls, Unicode tags and other invisible characters:
/// `amber_core::is_unsafe_char`) shown as `�`. Every line the `amber` command prints goes
/// through it ([`outln!`], [`out!`], [`errln!`]).
pub(crate) fn for_terminal(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(s);
    }
    std::borrow::Cow::Owned(s.chars().map(|c| if unsafe_char(c) { '\u{FFFD}' } else { c }).collect())
}

/// JSON text with the characters serde_json leaves raw inside strings but a terminal
/// would act on (C1, bidirectional controls, invisible characters; serde_json already
/// escapes C0) written as `\u` escapes: the same JSON value, nothing lost.
pub(crate) fn json_for_terminal(json: &str) -> std::borrow::Cow<'_, str> {
    if !json.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if unsafe_char(c) {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// `println!` for the terminal: the formatted text through [`for_terminal`].
macro_rules! outln {
    () => { println!() };
    ($($t:tt)*) => { println!("{}", $crate::output::for_terminal(&format!($($t)*))) };
}

/// `print!` for the terminal: the formatted text through [`for_terminal`].
macro_rules! out {
    ($($t:tt)*) => { print!("{}", $crate::output::for_terminal(&format!($($t)*))) };
}

/// `eprintln!` for the terminal: the formatted text through [`for_terminal`].
macro_rules! errln {
    () => { eprintln!() };
    ($($t:tt)*) => { eprintln!("{}", $crate::output::for_terminal(&format!($($t)*))) };
}

/// One line of a memory's text for the terminal: control characters (ESC sequences,
/// bidirectional overrides) shown as `�`, whitespace runs as one space, cut at `max`.
pub(crate) fn one_line(s: &str, max: usize) -> String {
    let flat = amber_tiers::fence::one_line(s);
    if flat.chars().count() <= max {
        flat
    } else {
        format!("{}…", flat.chars().take(max).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_that_acts_on_a_terminal_is_printed_raw() {
        let hostile = "title\u{1b}]0;pwned\u{7}\u{1b}[2J\r\u{9b}31m\u{1b}]8;;http://x\u{1b}\\link\u{202e}\u{e0041}\u{200b}ok\n\tnext";
        let t = for_terminal(hostile);
        assert!(t.chars().all(|c| c == '\n' || c == '\t' || !amber_core::is_unsafe_char(c)), "{t:?}");
        assert!(t.ends_with("ok\n\tnext"), "{t:?}");
        assert_eq!(for_terminal("plain ünïcode 👍🏽 text"), "plain ünïcode 👍🏽 text");
        let json = serde_json::to_string(&serde_json::json!({ "content": hostile })).unwrap();
        let safe = json_for_terminal(&json);
        assert!(safe.chars().all(|c| !amber_core::is_unsafe_char(c)), "{safe}");
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back["content"], hostile, "the same value, nothing lost");
    }
}

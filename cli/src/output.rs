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

/// Pretty JSON on standard output.
pub(crate) fn print_json(v: &impl serde::Serialize) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
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

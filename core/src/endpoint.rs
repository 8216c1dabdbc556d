//! What Amber's clients of OpenAI-compatible servers share (the embeddings endpoint of
//! `[model] kind = "openai"`, the chat models of `[llm]`, `[judge]` and the like): the
//! API key, read from the environment variable a config table names, and a short
//! excerpt of a server's answer for a failure reason.

/// The key in the variable `var` that table `table`'s `api_key_env` names (trimmed);
/// None when it names none. An unset, empty or non-UTF-8 variable is an error saying so.
pub fn api_key(table: &str, var: Option<&str>) -> Result<Option<String>, String> {
    let Some(var) = var else { return Ok(None) };
    match std::env::var(var) {
        Ok(key) if !key.trim().is_empty() => Ok(Some(key.trim().to_string())),
        Ok(_) => Err(format!("{table}.api_key_env names {var}, but that variable is empty")),
        Err(std::env::VarError::NotPresent) => {
            Err(format!("{table}.api_key_env names {var}, but that environment variable is not set"))
        }
        Err(std::env::VarError::NotUnicode(_)) => {
            Err(format!("{table}.api_key_env names {var}, but its value is not valid UTF-8"))
        }
    }
}

/// A short, one-line excerpt (200 characters) of a server's answer, for a failure reason.
pub fn snippet(s: &str) -> String {
    let one_line: String = s.chars().take(200).map(|c| if c.is_control() { ' ' } else { c }).collect();
    if s.chars().count() > 200 { format!("{one_line}...") } else { one_line }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_variable_must_hold_a_key() {
        assert_eq!(api_key("model", None), Ok(None));
        let unset = "AMBER_TEST_KEY_THAT_IS_NEVER_SET_7f3a";
        let e = api_key("model", Some(unset)).unwrap_err();
        assert!(e.contains("model.api_key_env names") && e.contains("not set"), "{e}");
        // PATH is set in any test environment: its value is read (trimmed).
        let path = std::env::var("PATH").unwrap();
        assert_eq!(api_key("llm", Some("PATH")), Ok(Some(path.trim().to_string())));
    }

    #[test]
    fn a_snippet_is_one_short_line() {
        assert_eq!(snippet("bad\nrequest"), "bad request");
        let long = "x".repeat(300);
        assert_eq!(snippet(&long), format!("{}...", "x".repeat(200)));
    }
}

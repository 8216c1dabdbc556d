//! One write path: every change the daemon makes goes through the writer (`rpc::write*`,
//! `rpc::BlockingWriter`), never through `rpc::read` (the blocking pool, for reads) nor an
//! engine call outside the writer. Read from the sources: the engine's write methods are
//! those that take its write connection; no `read(…)`/`read_on(…)` call of the daemon
//! names one, and no code of the daemon calls one on an engine directly.

use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The engine's methods that take its write connection.
fn engine_writes() -> Vec<String> {
    let mut out = Vec::new();
    let mut all = Vec::new();
    files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../engine/src"), &mut all);
    for f in all {
        let text = std::fs::read_to_string(&f).unwrap();
        for (i, _) in text.match_indices("\n    pub fn ") {
            let i = i + 1;
            // The body runs to the next item of the impl (or its end).
            let end = ["\n    pub", "\n    fn ", "\n    ///", "\n    #[", "\n}"]
                .iter()
                .filter_map(|m| text[i + 1..].find(m))
                .min()
                .map_or(text.len(), |e| i + 1 + e);
            let body = &text[i..end];
            let name: String = body["    pub fn ".len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if body.contains("self.writer") {
                out.push(name);
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The text of the call starting at `open` (an opening parenthesis), to its match.
fn call_at(text: &str, open: usize) -> &str {
    let mut depth = 0;
    for (i, c) in text[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return &text[open..open + i];
                }
            }
            _ => {}
        }
    }
    &text[open..]
}

#[test]
fn no_read_carries_a_write_and_no_write_skips_the_writer() {
    let writes = engine_writes();
    assert!(writes.len() >= 20 && writes.iter().any(|w| w == "mark_served"), "{writes:?}");
    let mut all = Vec::new();
    files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut all);
    let mut bad = Vec::new();
    for f in &all {
        let name = f.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap().display().to_string();
        let text = std::fs::read_to_string(f).unwrap();
        // A read that names a write (at shutdown, when the writer's queue is closed,
        // `persist` writes through `rpc::write_at_shutdown`, not a read).
        for pat in ["read(", "read_on("] {
            for (i, _) in text.match_indices(pat) {
                let before = text[..i].chars().next_back().unwrap_or(' ');
                if before.is_alphanumeric() || before == '_' {
                    continue;
                }
                let call = call_at(&text, i + pat.len() - 1);
                for w in &writes {
                    if call.contains(&format!(".{w}(")) {
                        bad.push(format!("{name}: a read calls {w}"));
                    }
                }
            }
        }
        // An engine's write called outside the writer (`e` is the writer's or a
        // read's engine; `engine` and `self.engine` are not).
        if name.ends_with("writer.rs") {
            continue;
        }
        for w in &writes {
            for prefix in ["engine.", "self.engine."] {
                if text.contains(&format!("{prefix}{w}(")) {
                    bad.push(format!("{name}: {prefix}{w}( skips the writer"));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

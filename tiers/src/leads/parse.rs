//! Reading an error out of a text, line by line, and normalising what varies.

use std::sync::LazyLock;

use regex::Regex;

use super::Signature;
use super::norm::{
    Lang, codes, file_stem, frame_name, has_code, internal_frame, java_library, library_path, norm_file,
    shape, strip_call_args,
};

/// Every pattern the parser uses (compiled once).
struct Res {
    py_tb: Regex,
    py_frame: Regex,
    py_exc: Regex,
    pytest_loc: Regex,
    pytest_e: Regex,
    pytest_frame: Regex,
    warning: Regex,
    pytest_failed: Regex,
    rust_new: Regex,
    rust_old: Regex,
    rust_frame: Regex,
    rust_at: Regex,
    rustc: Regex,
    rustc_loc: Regex,
    go_panic: Regex,
    go_fatal: Regex,
    go_signal: Regex,
    go_goroutine: Regex,
    go_file: Regex,
    go_func: Regex,
    js_at: Regex,
    js_at_anon: Regex,
    java_at: Regex,
    exc: Regex,
    exc_inline: Regex,
    bare_error: Regex,
    java_head: Regex,
    plain: Regex,
    diag: Regex,
    go_test_fail: Regex,
    go_test_loc: Regex,
    jest: Regex,
    make: Regex,
    tool_fatal: Regex,
    net_err: Regex,
    tsc: Regex,
}

static RE: LazyLock<Res> = LazyLock::new(|| {
    let r = |s: &str| Regex::new(s).expect("a valid lead pattern");
    const EXC_NAME: &str =
        r"(?:[A-Za-z_$][\w$]*\.)*[A-Z][\w$]*(?:Error|Exception|Exit|Interrupt|Fault|Violation|Failure)";
    Res {
        py_tb: r(r"^Traceback \(most recent call last\):$"),
        py_frame: r(r#"^File "([^"]+)", line \d+(?:, in (\S.*))?$"#),
        py_exc: r(r"^([A-Za-z_][\w.]*)(?::\s*(.*))?$"),
        pytest_loc: r(r"^(\S+\.py):\d+: ([A-Za-z_][\w.]*)$"),
        pytest_e: r(r"^E\s{2,}(\S.*)$"),
        pytest_frame: r(r"^(\S+\.py):\d+: in (\S+)$"),
        warning: r(r"^warning(?:\[[\w-]+\])?: "),
        pytest_failed: r(r"^FAILED (\S+\.py)::(\S+?)(?: - (.+))?$"),
        rust_new: r(r"^thread '([^']*)' panicked at (\S+?):\d+:\d+:$"),
        rust_old: r(r"^thread '([^']*)' panicked at '(.*)', (\S+?):\d+:\d+$"),
        rust_frame: r(r"^\d+:\s+(?:0x[0-9a-f]+ - )?(\S.*)$"),
        rust_at: r(r"^at (\S+?):\d+(?::\d+)?$"),
        rustc: r(r"^error\[(E\d{4})\]: (.+)$"),
        rustc_loc: r(r"^--> (\S+?):\d+:\d+$"),
        go_panic: r(r"^panic: (.+?)(?: \[recovered\])?$"),
        go_fatal: r(r"^fatal error: (.+)$"),
        go_signal: r(r"^\[signal (SIG[A-Z]+)"),
        go_goroutine: r(r"^goroutine \d+ \[[^\]]*\]:$"),
        go_file: r(r"^(\S+\.go):\d+(?: \+0x[0-9a-f]+)?$"),
        go_func: r(
            r"^(?:created by )?([\w.\-/]+(?:\.\(\*?[\w\[\], ]+\))?(?:\.[\w\[\], ]+)*)(\(.*\))?(?: in goroutine \d+)?$",
        ),
        js_at: r(r"^at (?:async )?(?:new )?(.+?) \((.+?):\d+:\d+\)$"),
        js_at_anon: r(r"^at (?:async )?((?:file://|/|[A-Za-z]:\\|\./|node:|webpack)\S*?):\d+:\d+$"),
        java_at: r(r"^at ((?:[\w$.\-]+/)*[\w$.<>]+)\(([^)]*)\)"),
        exc: r(&format!(
            r#"^(?:Uncaught |Unhandled(?: rejection)? |Exception in thread "[^"]*" |Caused by: )?({EXC_NAME})(?: \[(\w+)\])?(?::\s*(.*))?$"#
        )),
        exc_inline: r(&format!(r"(?:^|[\s(])({EXC_NAME})(?: \[(\w+)\])?: (\S.*)$")),
        bare_error: r(r"(?:^|\s)(?:Uncaught )?Error(?: \[(\w+)\])?: (.+)$"),
        java_head: r(
            r#"^(?:Exception in thread "[^"]*" |Caused by: )((?:[a-z_$][\w$]*\.)+[A-Z][\w$]*)(?::\s*(.*))?$"#,
        ),
        plain: r(
            r"^(?:\d[\d\-/:.,TZ+]*\s+){0,2}(?:\[[^\]]{1,40}\]\s+)?(?:npm ERR!|\[?(?:ERROR|FATAL|error|fatal|Error|Fatal)\]?)[:!]?(?:\s+\[[^\]]{1,40}\]:?)?\s+(\S.*)$",
        ),
        go_test_fail: r(r"^--- FAIL: ([^\s/]+)\S* \("),
        go_test_loc: r(r"^(\S+_test\.go):\d+: (.+)$"),
        jest: r(r"^● (\S.+)$"),
        make: r(r"^make(?:\[\d+\])?: \*\*\* \[(?:\S+?:\d+: )?(\S+)\] Error (\d+)$"),
        tool_fatal: r(r"^(?:fatal|Error response from daemon): (\S.+)$"),
        net_err: r(
            r"\b((?:listen|dial|read|write|accept) (?:tcp|udp|unix)[46]? \S*: (?:bind|connect|read|write|accept): [a-z][a-z ]+|open \S+: (?:no such file or directory|permission denied|is a directory))$",
        ),
        diag: r(r"^(\S+?\.[A-Za-z]{1,5}):\d+:(?:\d+:)? (?:fatal )?error: (.+)$"),
        tsc: r(r"^(\S+?\.[jt]sx?)\(\d+,\d+\): error (TS\d+): (.+)$"),
    }
});

struct Frame {
    name: String,
    file: Option<String>,
    own: bool,
    internal: bool,
    block: usize,
}

struct Parse {
    lang: Option<Lang>,
    anchored: bool,
    kinds: Vec<String>,
    message: Option<String>,
    frames: Vec<Frame>,
    locations: Vec<String>,
    block: usize,
    in_py_tb: bool,
    in_rust_bt: bool,
    rustc_error: bool,
    goroutines: usize,
    go_panic: bool,
    go_pending: Option<usize>,
    header: bool,
    chain: bool,
    bare: Option<(Option<String>, String)>,
}

impl Parse {
    fn kind(&mut self, k: &str) {
        let k = short_name(k);
        if !k.is_empty() && !self.kinds.iter().any(|x| x == k) {
            self.kinds.push(k.to_string());
        }
    }
    fn message(&mut self, m: &str, later_wins: bool) {
        if later_wins || self.message.is_none() {
            self.message = Some(m.trim().to_string());
        }
    }
    fn lang(&mut self, l: Lang) {
        self.lang.get_or_insert(l);
    }
    fn frame(&mut self, name: &str, file: Option<&str>, lang: Lang) {
        let name = frame_name(name, lang);
        let internal = internal_frame(&name, file, lang);
        let own = !internal
            && match (lang, file) {
                (Lang::Java, _) => !java_library(&name),
                (_, Some(f)) => !library_path(f),
                // A Go function without its file line: the main package, or a module path
                // (`github.com/acme/shop/internal/api.f`), not the standard library.
                (Lang::Go, None) => {
                    name.starts_with("main.")
                        || name.split_once('/').is_some_and(|(first, _)| first.contains('.'))
                }
                _ => false,
            };
        let file = file.map(norm_file);
        self.frames.push(Frame { name, file, own, internal, block: self.block });
    }
}

/// The short name of a dotted type (`java.lang.NullPointerException` ->
/// `NullPointerException`).
fn short_name(k: &str) -> &str {
    k.rsplit(['.', '$']).next().unwrap_or(k)
}

pub(super) fn parse(text: &str) -> Option<Signature> {
    let re = &*RE;
    let mut p = Parse {
        lang: None,
        anchored: false,
        kinds: Vec::new(),
        message: None,
        frames: Vec::new(),
        locations: Vec::new(),
        block: 0,
        in_py_tb: false,
        in_rust_bt: false,
        rustc_error: false,
        goroutines: 0,
        go_panic: false,
        go_pending: None,
        header: false,
        chain: false,
        bare: None,
    };
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    let mut plain_msgs: Vec<String> = Vec::new();
    for (i, raw) in lines.iter().enumerate() {
        let t = raw.trim_start();
        let indented = raw.len() != t.len();
        if t.is_empty() {
            continue;
        }
        if re.py_tb.is_match(t) {
            p.lang(Lang::Python);
            p.anchored = true;
            p.in_py_tb = true;
            p.block += 1;
        } else if let Some(c) = re.py_frame.captures(t) {
            let name = format!("{}.{}", file_stem(&c[1]), c.get(2).map_or("<module>", |m| m.as_str()));
            p.frame(&name, Some(&c[1]), Lang::Python);
        } else if p.in_py_tb
            && !indented
            && let Some(c) = re.py_exc.captures(t)
        {
            p.kind(&c[1]);
            p.message(c.get(2).map_or("", |m| m.as_str()), true);
            p.in_py_tb = false;
        } else if let Some(c) = re.pytest_loc.captures(t) {
            p.lang(Lang::Python);
            p.anchored = true;
            p.kind(&c[2]);
            p.locations.push(norm_file(&c[1]));
        } else if let Some(c) = re.pytest_e.captures(t).filter(|_| p.lang == Some(Lang::Python) || !indented)
        {
            if let Some(e) = re.exc.captures(&c[1]) {
                p.lang(Lang::Python);
                p.anchored = true;
                p.kind(&e[1]);
            }
            p.message(&c[1], false);
        } else if let Some(c) = re.pytest_frame.captures(t) {
            p.frame(&format!("{}.{}", file_stem(&c[1]), &c[2]), Some(&c[1]), Lang::Python);
        } else if let Some(c) = re.pytest_failed.captures(t) {
            p.lang(Lang::Python);
            p.anchored = true;
            p.frame(&format!("{}.{}", file_stem(&c[1]), &c[2]), Some(&c[1]), Lang::Python);
            if let Some(m) = c.get(3) {
                p.message(m.as_str(), false);
            }
        } else if let Some(c) = re.rust_new.captures(t) {
            p.lang(Lang::Rust);
            p.anchored = true;
            p.kind("panic");
            p.locations.push(norm_file(&c[2]));
            let next = lines[i + 1..].iter().map(|l| l.trim()).find(|l| !l.is_empty());
            p.message(next.unwrap_or(""), false);
        } else if let Some(c) = re.rust_old.captures(t) {
            p.lang(Lang::Rust);
            p.anchored = true;
            p.kind("panic");
            p.locations.push(norm_file(&c[3]));
            p.message(&c[2], false);
        } else if t == "Caused by:" {
            // anyhow's and eyre's chain after an `Error: msg` line.
            p.chain = true;
        } else if t == "stack backtrace:" || t == "Stack backtrace:" {
            p.in_rust_bt = true;
        } else if p.in_rust_bt
            && let Some(c) = re.rust_frame.captures(t)
        {
            p.frame(&c[1], None, Lang::Rust);
        } else if p.in_rust_bt
            && let Some(c) = re.rust_at.captures(t)
        {
            if let Some(f) = p.frames.last_mut().filter(|f| f.file.is_none()) {
                f.file = Some(norm_file(&c[1]));
                f.own = !f.internal && !library_path(&c[1]);
            }
        } else if let Some(c) = re.rustc.captures(t) {
            p.lang(Lang::Rust);
            p.anchored = true;
            p.kind(&c[1]);
            p.message(&c[2], false);
            p.rustc_error = true;
        } else if re.warning.is_match(t) {
            p.rustc_error = false;
        } else if let Some(c) = re.rustc_loc.captures(t) {
            // Where an error points (a warning's `-->` is not the error's).
            if p.rustc_error {
                p.locations.push(norm_file(&c[1]));
            }
        } else if !indented && let Some(c) = re.go_panic.captures(t) {
            p.go_panic = true;
            p.kind("panic");
            p.message(&c[1], false);
        } else if !indented && let Some(c) = re.go_fatal.captures(t) {
            p.go_panic = true;
            p.kind("fatal error");
            p.message(&c[1], false);
        } else if let Some(c) = re.go_signal.captures(t) {
            p.kind(&c[1]);
        } else if re.go_goroutine.is_match(t) {
            p.goroutines += 1;
            if p.go_panic {
                p.lang(Lang::Go);
                p.anchored = true;
            }
        } else if p.goroutines == 1
            && !indented
            && (t.ends_with(')') || t.starts_with("created by "))
            && re.go_func.is_match(t)
        {
            // A function line of the first goroutine (the others vary from run to run);
            // its file comes on the next line.
            let name = t.strip_prefix("created by ").unwrap_or(t);
            let name = name.split(" in goroutine ").next().unwrap_or(name);
            p.frame(strip_call_args(name), None, Lang::Go);
            p.go_pending = Some(i);
        } else if indented && let Some(c) = re.go_file.captures(t) {
            if let Some(f) = p.frames.last_mut().filter(|_| p.go_pending == Some(i.wrapping_sub(1))) {
                f.own = !f.internal && !library_path(&c[1]);
                f.file = Some(norm_file(&c[1]));
            } else if p.goroutines == 0 && i > 0 {
                // No goroutine header (a cut trace): the function is the line before.
                let prev = lines[i - 1].trim();
                p.frame(strip_call_args(prev), Some(&c[1]), Lang::Go);
            }
            if p.go_panic {
                p.lang(Lang::Go);
                p.anchored = true;
            }
        } else if let Some(c) = re.js_at.captures(t) {
            p.frame(&c[1], Some(&c[2]), Lang::Js);
        } else if let Some(c) = re.js_at_anon.captures(t) {
            p.frame("", Some(&c[1]), Lang::Js);
        } else if let Some(c) = re.java_at.captures(t) {
            let file = c[2].split(':').next().unwrap_or("").to_string();
            let file = file.contains('.').then_some(file);
            p.frame(&c[1], file.as_deref(), Lang::Java);
        } else if let Some(c) = re.exc.captures(t) {
            let caused = t.starts_with("Caused by:");
            if t.starts_with("Exception in thread") || caused {
                p.lang(Lang::Java);
            }
            p.block += 1;
            p.kind(&c[1]);
            if let Some(code) = c.get(2) {
                p.kind(code.as_str());
            }
            let msg = c.get(3).map(|m| m.as_str());
            p.header = true;
            if msg.is_some() || caused || t.starts_with("Exception in thread") {
                p.anchored = true;
            }
            p.message(msg.unwrap_or(""), caused);
        } else if let Some(c) = re.java_head.captures(t) {
            p.lang(Lang::Java);
            p.anchored = true;
            p.block += 1;
            p.kind(&c[1]);
            p.message(c.get(2).map_or("", |m| m.as_str()), t.starts_with("Caused by:"));
        } else if let Some(c) = re.bare_error.captures(t) {
            p.block += 1;
            p.bare = Some((c.get(1).map(|m| m.as_str().to_string()), c[2].to_string()));
        } else if let Some(c) = re.tsc.captures(t) {
            p.anchored = true;
            p.lang(Lang::Other);
            p.kind(&c[2]);
            p.locations.push(norm_file(&c[1]));
            p.message(&c[3], false);
        } else if let Some(c) = re.diag.captures(t) {
            p.anchored = true;
            p.lang(Lang::Other);
            p.kind("error");
            p.locations.push(norm_file(&c[1]));
            p.message(&c[2], false);
        } else if let Some(c) = re.exc_inline.captures(t) {
            p.anchored = true;
            p.kind(&c[1]);
            if let Some(code) = c.get(2) {
                p.kind(code.as_str());
            }
            p.message(&c[3], false);
        } else if let Some(c) = re.go_test_fail.captures(t) {
            p.lang(Lang::Go);
            p.anchored = true;
            p.kind("test failed");
            p.frame(&c[1], None, Lang::Go);
        } else if indented && let Some(c) = re.go_test_loc.captures(t) {
            p.locations.push(norm_file(&c[1]));
            p.message(&c[2], false);
        } else if let Some(c) = re.jest.captures(t) {
            // A Jest failure: the test's title is what identifies it.
            p.anchored = true;
            p.kind("test failed");
            p.message(&c[1], false);
        } else if let Some(c) = re.make.captures(t) {
            p.anchored = true;
            p.kind(&format!("exit status {}", &c[2]));
            p.frame(&format!("make {}", &c[1]), None, Lang::Other);
            let before = lines[..i].iter().rev().map(|l| l.trim()).find(|l| l.starts_with("make: "));
            p.message(before.unwrap_or(t), false);
        } else if let Some(c) = re.tool_fatal.captures(t) {
            p.anchored = true;
            p.kind(if t.starts_with("fatal") { "fatal" } else { "daemon error" });
            p.message(&c[1], false);
        } else if let Some(c) = re.net_err.captures(t) {
            p.anchored = true;
            p.message(&c[1], false);
        } else if let Some(c) = re.plain.captures(t) {
            plain_msgs.push(c[1].to_string());
        }
    }
    // A bare `Error: msg` is an error with frames or a `Caused by:` chain after it, or a
    // code in it.
    if let Some((code, msg)) = p.bare.take() {
        let coded = code.is_some() || has_code(&msg);
        if coded || p.chain || !p.frames.is_empty() {
            p.anchored = true;
            p.lang(Lang::Js);
            p.kind(code.as_deref().unwrap_or("Error"));
            p.message(&msg, false);
        }
    }
    // An `error:` line is an error when it carries a code.
    if let Some(msg) = plain_msgs.iter().find(|m| has_code(m)) {
        p.anchored = true;
        p.lang(Lang::Other);
        p.message(msg, false);
    }
    // An exception's name on its own line is an error with frames after it.
    if p.header && !p.frames.is_empty() {
        p.anchored = true;
    }
    if !p.anchored {
        return None;
    }
    for k in codes(text) {
        p.kind(&k);
    }
    Some(finish(p))
}

fn finish(p: Parse) -> Signature {
    let lang = p.lang.unwrap_or(Lang::Other);
    // Innermost first within each block (Python prints the innermost last).
    let mut frames: Vec<&Frame> = Vec::new();
    let mut blocks: Vec<usize> = p.frames.iter().map(|f| f.block).collect();
    blocks.dedup();
    // The last exception's block first (a Python chain's or a Java root cause's).
    for b in blocks.iter().rev() {
        let mut block: Vec<&Frame> = p.frames.iter().filter(|f| f.block == *b && !f.internal).collect();
        if lang == Lang::Python {
            block.reverse();
        }
        frames.extend(block);
    }
    let named: Vec<&Frame> = frames.iter().copied().filter(|f| !f.name.is_empty()).collect();
    let culprit = named
        .iter()
        .find(|f| f.own)
        .or(named.first())
        .map(|f| f.name.clone())
        .or_else(|| p.locations.first().cloned());
    let any_own = frames.iter().any(|f| f.own);
    let kept = frames.iter().filter(|f| f.own || !any_own);
    let mut out_frames: Vec<String> = Vec::new();
    let mut files: Vec<String> = p.locations.clone();
    for f in kept {
        if !f.name.is_empty() && !out_frames.contains(&f.name) && out_frames.len() < 40 {
            out_frames.push(f.name.clone());
        }
        if f.own
            && let Some(file) = &f.file
        {
            files.push(file.clone());
        }
    }
    let mut seen = std::collections::HashSet::new();
    files.retain(|f| !f.is_empty() && seen.insert(f.clone()));
    Signature {
        kinds: p.kinds,
        message: shape(p.message.as_deref().unwrap_or("")),
        culprit,
        frames: out_frames,
        files,
    }
}

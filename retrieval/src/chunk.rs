//! Cutting long text into chunks that fit the embedding model's window.
//!
//! A chunk is a byte span of the original text, cut at token boundaries of the model's
//! own tokenizer, so every chunk fits the window exactly and the text is never rewritten.

use std::ops::Range;

use tokenizers::Tokenizer;

/// How text is cut into chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ChunkConfig {
    /// The model's window in word pieces, special tokens included (256 for MiniLM).
    pub max_tokens: usize,
    /// Word pieces shared by consecutive chunks, so a sentence cut at a boundary is
    /// whole in one of them.
    pub overlap_tokens: usize,
}

impl Default for ChunkConfig {
    fn default() -> Self {
        ChunkConfig { max_tokens: 256, overlap_tokens: 32 }
    }
}

impl ChunkConfig {
    /// Word pieces of text per chunk: the window less `[CLS]` and `[SEP]`.
    pub fn window(&self) -> usize {
        self.max_tokens.saturating_sub(2).max(1)
    }

    /// Word pieces the window advances by.
    pub fn stride(&self) -> usize {
        self.window().saturating_sub(self.overlap_tokens).max(1)
    }

    /// A short stable label, recorded with the index so a change triggers a rebuild.
    pub fn label(&self) -> String {
        format!("tok{}o{}", self.max_tokens, self.overlap_tokens)
    }
}

/// The byte spans of `text` to embed, in order. A text that fits the window is one span
/// covering all of it; a longer one is cut into overlapping windows of whole tokens, the
/// first starting at byte 0 and the last ending at the end of the text.
pub fn chunk_spans(tokenizer: &Tokenizer, text: &str, cfg: &ChunkConfig) -> Vec<Range<usize>> {
    let offsets: Vec<(usize, usize)> = match tokenizer.encode(text, false) {
        Ok(enc) => enc.get_offsets().to_vec(),
        Err(_) => Vec::new(),
    };
    spans_from_offsets(&offsets, text.len(), cfg)
}

pub(crate) fn spans_from_offsets(
    offsets: &[(usize, usize)],
    len: usize,
    cfg: &ChunkConfig,
) -> Vec<Range<usize>> {
    let window = cfg.window();
    if offsets.len() <= window {
        #[allow(clippy::single_range_in_vec_init)] // one chunk spanning the whole text
        return vec![0..len];
    }
    let mut spans = Vec::new();
    let mut start_tok = 0;
    loop {
        let end_tok = (start_tok + window).min(offsets.len());
        let start = if start_tok == 0 { 0 } else { offsets[start_tok].0 };
        let end = if end_tok == offsets.len() { len } else { offsets[end_tok - 1].1 };
        spans.push(start..end.max(start));
        if end_tok == offsets.len() {
            break;
        }
        start_tok += cfg.stride();
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_offsets(n: usize) -> Vec<(usize, usize)> {
        // token i covers bytes [2i, 2i+1) of a text like "a a a a"
        (0..n).map(|i| (2 * i, 2 * i + 1)).collect()
    }

    #[test]
    #[allow(clippy::single_range_in_vec_init)] // one span covering the whole text
    fn short_text_is_one_span() {
        let cfg = ChunkConfig::default();
        assert_eq!(spans_from_offsets(&fake_offsets(10), 19, &cfg), [0..19]);
        assert_eq!(spans_from_offsets(&[], 0, &cfg), [0..0]);
    }

    #[test]
    fn long_text_windows_overlap_and_cover_everything() {
        let cfg = ChunkConfig { max_tokens: 12, overlap_tokens: 2 }; // window 10, stride 8
        let n = 25;
        let len = 2 * n - 1;
        let spans = spans_from_offsets(&fake_offsets(n), len, &cfg);
        assert_eq!(spans.first().unwrap().start, 0);
        assert_eq!(spans.last().unwrap().end, len);
        // windows start at tokens 0, 8, 16 -> three chunks, the last one 9 tokens
        assert_eq!(spans.len(), 3);
        assert_eq!(spans[1], 16..35);
        for w in spans.windows(2) {
            assert!(w[1].start < w[0].end, "consecutive chunks overlap");
        }
    }
}

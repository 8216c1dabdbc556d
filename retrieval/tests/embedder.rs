//! The embedder with the real model (`scripts/setup.sh`; CI runs it first).

use amber_retrieval::{ChunkConfig, Embedder, FastEmbedder, ModelPaths, VECTOR_ID, cosine};

fn embedder() -> FastEmbedder {
    let home = amber_core::paths::default_amber_home();
    FastEmbedder::load(&ModelPaths::under(&home), ChunkConfig::default(), Some(2))
        .expect("the model is installed: run scripts/setup.sh")
}

/// A text's vector is the same alone, in any batch and in any position: the vectors a
/// store holds are the ones a query of the same text gets. (With several texts per model
/// run, the int8 model's activation scale covered the whole batch: cosine 0.984 alone vs
/// next to a long text.)
#[test]
fn a_texts_vector_does_not_depend_on_what_it_is_embedded_with() {
    let mut e = embedder();
    assert_eq!(e.model_id(), VECTOR_ID);
    let a = "Joanna: Sure! A couch that seats several people, a weighted blanket, and lamps you can dim.";
    let long = "I have been thinking about my garden a lot lately, the tomatoes especially. ".repeat(20);
    let alone = e.embed(&[a]).unwrap().remove(0);
    let batches: [Vec<&str>; 3] =
        [vec![a, long.as_str()], vec!["short", a], vec![long.as_str(), "x", a, "y"]];
    for batch in &batches {
        let out = e.embed(batch).unwrap();
        let i = batch.iter().position(|t| *t == a).unwrap();
        let c = cosine(&alone, &out[i]);
        assert!(c > 0.999_999, "cosine {c} with batch mates {:?}", batch.len());
    }
    let n: f32 = alone.iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((n - 1.0).abs() < 1e-5, "unit vectors: {n}");
}

/// The engine embeds a query, and with two instances each text it indexes, on whichever
/// instance is free: one thread, or several without spinning. The vector must not
/// depend on which (it is the same to the bit here).
#[test]
fn a_texts_vector_does_not_depend_on_threads_or_spinning() {
    let home = amber_core::paths::default_amber_home();
    let paths = ModelPaths::under(&home);
    let config = ChunkConfig::default();
    let mut one = FastEmbedder::load_tuned(&paths, config, Some(1), false).unwrap();
    let mut two = FastEmbedder::load_tuned(&paths, config, Some(2), false).unwrap();
    let mut spin = FastEmbedder::load(&paths, config, Some(2)).unwrap();
    let long = "The kiln door was stuck again, so the glaze firing waited until Sunday. ".repeat(12);
    for text in ["What should go in a living room to make it comfy?", long.as_str()] {
        let a = one.embed(&[text]).unwrap().remove(0);
        for b in [two.embed(&[text]).unwrap().remove(0), spin.embed(&[text]).unwrap().remove(0)] {
            assert_eq!(a, b, "one thread vs two for {} bytes: cosine {}", text.len(), cosine(&a, &b));
        }
    }
}

/// The chunker's tokenizer is a copy of the model's (fastembed's, truncation and padding
/// turned off), not a second parse of tokenizer.json: its spans must be the ones a fresh
/// parse gives, special tokens, long text and all.
#[test]
fn chunk_spans_are_those_of_the_tokenizer_file() {
    let e = embedder();
    let home = amber_core::paths::default_amber_home();
    let file = ModelPaths::under(&home).model_dir.join("tokenizer.json");
    let mut fresh = tokenizers::Tokenizer::from_file(&file).unwrap();
    fresh.with_truncation(None).unwrap();
    fresh.with_padding(None);
    let long = "The ledger tests fail when the clock crosses midnight in UTC; pin TZ. ".repeat(60);
    let texts = [
        "short",
        "[CLS] a text with [SEP] and [MASK] and [PAD] and [UNK] written in it",
        "Ünïcödé: naïve café, 東京タワー, emoji 🦀 and tabs\tand\nnewlines",
        "",
        long.as_str(),
    ];
    for text in texts {
        let want = amber_retrieval::chunk_spans(&fresh, text, &e.chunk_config());
        assert_eq!(e.chunk(text), want, "{} bytes", text.len());
    }
    assert!(e.chunk(&long).len() > 1, "the long text is cut");
}

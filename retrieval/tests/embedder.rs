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

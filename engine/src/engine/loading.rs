//! A model instance that is still loading: the indexing instance of the local model
//! loads on a thread of its own while the engine opens and serves, so a cold start waits
//! for the query instance alone (issue 48: two instances loading at once on two cores
//! held the first briefing back by about 100 ms at 100k memories). Its first use waits
//! for the load to end.

use std::ops::Range;
use std::sync::{Mutex, OnceLock};
use std::thread::JoinHandle;

use amber_retrieval::{ChunkConfig, Embedder};

/// What a loading thread gives back.
type Loaded = amber_retrieval::Result<Box<dyn Embedder>>;

/// An instance loading on `thread`, with the id, dimension and chunking of the instance
/// already loaded from the same files (its twin), which it answers without waiting.
pub(super) struct Loading {
    id: String,
    dim: usize,
    chunking: ChunkConfig,
    thread: Mutex<Option<JoinHandle<Loaded>>>,
    /// The instance, or why it did not load (said on every use).
    done: OnceLock<std::result::Result<Box<dyn Embedder>, String>>,
}

impl Loading {
    /// An instance `thread` loads; `twin` is loaded from the same files.
    pub(super) fn new(twin: &dyn Embedder, thread: JoinHandle<Loaded>) -> Loading {
        Loading {
            id: twin.model_id().to_string(),
            dim: twin.dim(),
            chunking: twin.chunk_config(),
            thread: Mutex::new(Some(thread)),
            done: OnceLock::new(),
        }
    }

    /// Waits for the load (once).
    fn wait(&self) -> &std::result::Result<Box<dyn Embedder>, String> {
        self.done.get_or_init(|| {
            let thread = super::lock(&self.thread).take();
            match thread.map(JoinHandle::join) {
                Some(Ok(Ok(e))) => Ok(e),
                Some(Ok(Err(e))) => Err(e.to_string()),
                Some(Err(_)) | None => Err("loading the model panicked".into()),
            }
        })
    }

    fn loaded(&mut self) -> amber_retrieval::Result<&mut Box<dyn Embedder>> {
        self.wait();
        match self.done.get_mut() {
            Some(Ok(e)) => Ok(e),
            Some(Err(e)) => Err(amber_retrieval::Error::Model(e.clone())),
            None => Err(amber_retrieval::Error::Model("the model did not load".into())),
        }
    }
}

impl Embedder for Loading {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn chunk_config(&self) -> ChunkConfig {
        self.chunking
    }

    fn chunk(&self, text: &str) -> Vec<Range<usize>> {
        match self.wait() {
            Ok(e) => e.chunk(text),
            // Not reached in use: embedding the chunks then says why.
            Err(_) => std::iter::once(0..text.len()).collect(),
        }
    }

    fn embed(&mut self, texts: &[&str]) -> amber_retrieval::Result<Vec<Vec<f32>>> {
        self.loaded()?.embed(texts)
    }

    fn embed_queries(&mut self, texts: &[&str]) -> amber_retrieval::Result<Vec<Vec<f32>>> {
        self.loaded()?.embed_queries(texts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Unit vectors of a fixed dimension; chunks cut at every space.
    struct Fixed;

    impl Embedder for Fixed {
        fn model_id(&self) -> &str {
            "fixed"
        }
        fn dim(&self) -> usize {
            2
        }
        fn chunk_config(&self) -> ChunkConfig {
            ChunkConfig::default()
        }
        fn chunk(&self, text: &str) -> Vec<Range<usize>> {
            let mut out = Vec::new();
            let mut start = 0;
            for (i, _) in text.match_indices(' ') {
                out.push(start..i);
                start = i + 1;
            }
            out.push(start..text.len());
            out
        }
        fn embed(&mut self, texts: &[&str]) -> amber_retrieval::Result<Vec<Vec<f32>>> {
            Ok(texts.iter().map(|_| vec![1.0, 0.0]).collect())
        }
    }

    #[test]
    fn answers_its_twin_without_waiting_and_embeds_once_loaded() {
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || -> Loaded {
            wait.recv().ok();
            Ok(Box::new(Fixed))
        });
        let mut l = Loading::new(&Fixed, thread);
        // The load has not ended (it waits for `go`): what the twin knows is answered.
        assert_eq!((l.model_id(), l.dim()), ("fixed", 2));
        go.send(()).unwrap();
        assert_eq!(l.chunk("a b"), vec![0..1, 2..3]);
        assert_eq!(l.embed(&["x", "y"]).unwrap().len(), 2);
    }

    #[test]
    fn a_failed_load_is_an_error_on_every_use() {
        let thread =
            std::thread::spawn(|| -> Loaded { Err(amber_retrieval::Error::Model("no file".into())) });
        let mut l = Loading::new(&Fixed, thread);
        for _ in 0..2 {
            let e = l.embed(&["x"]).unwrap_err();
            assert!(e.to_string().contains("no file"), "{e}");
        }
        let panics = std::thread::spawn(|| -> Loaded { panic!("boom") });
        let mut l = Loading::new(&Fixed, panics);
        assert!(l.embed_queries(&["x"]).unwrap_err().to_string().contains("panicked"));
    }
}
